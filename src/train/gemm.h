/* gemm.h: inside src/train only (not installed): the per-step products
 * that the cells of cell.c share, from gemm.c.  The public side of the
 * same machinery (bptt_cell_gemm, bptt_cell_weight_grads, the packing and
 * the kernel choice) is declared in include/bptt/cell.h.
 *
 * Legend as in cell.h: B batch, X input width, H hidden width, G gates. */
#ifndef BPTT_TRAIN_GEMM_H
#define BPTT_TRAIN_GEMM_H

#include <stddef.h>

#include "cell.h"
#include "real.h"

/* Defined where gemm.c can build its AVX-512 kernel (x86-64, gcc or
 * clang); the cells then also build AVX-512 copies of their elementwise
 * rows (cell.c). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BPTT_GEMM_HAVE_KERNEL 1
#endif

/* 1 when this process runs its products on the kernel (the CPU has it
 * and no one chose cblas), else 0: the cells pick their wide rows by it. */
int bptt_gemm_kernel_on(void);

/* xh := [x, h] (B, X+H), row by row. */
void bptt_gemm_concat(const bptt_cell_ws *ws, real *xh, const real *x,
                      const real *h);

/* out (B, G*H) := [x, h] W^T + b: the gates of one step, one product
 * (packed weights and the kernel where ws->wpack is set, else cblas on W
 * with ws->xh as scratch). */
void bptt_gemm_gates(const bptt_cell_ws *ws, size_t G, const real *W,
                     const real *bias, const real *x, const real *h,
                     real *out);

/* The backward op's share of the products: db += dgates' rows, one after
 * the other (in double); then dx (if wanted) and dh_prev from dxh =
 * dgates W (dh_prev is overwritten, not added to).  The weight gradient
 * is the caller's (bptt_cell_weight_grads). */
void bptt_gemm_gates_backward(const bptt_cell_ws *ws, size_t G,
                              const real *W, const real *dgates, double *db,
                              real *dh_prev, real *dx);

#endif
