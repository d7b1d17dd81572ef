/* gemm.h: inside src/train only (not installed): the per-step products
 * that the cells of cell.c share, from gemm.c.  The public side of the
 * same machinery (bptt_cell_gemm, bptt_cell_weight_grads, the packing and
 * the kernel choice) is declared in include/bptt/cell.h.
 *
 * Legend as in cell.h: B batch, X input width, H hidden width, G gates. */
#ifndef BPTT_TRAIN_GEMM_H
#define BPTT_TRAIN_GEMM_H

#include <stddef.h>

#include "real_impl.h"
#include "cell.h"
#include "real.h"

/* Defined where gemm.c can build its kernels (x86-64, gcc or clang); the
 * cells then also build AVX-512 and AVX2 copies of their elementwise rows
 * (cell.c). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define BPTT_GEMM_HAVE_KERNEL 1
#endif

/* A team of threads inside a parallel region: this thread's number and
 * the team's size (0 and 1 in a build without OpenMP), and thread q's even
 * share [*lo, *hi) of n things among P. */
#ifdef _OPENMP
#include <omp.h>
static inline int bptt_team_id(void) { return omp_get_thread_num(); }
static inline int bptt_team_size(void) { return omp_get_num_threads(); }
#else
static inline int bptt_team_id(void) { return 0; }
static inline int bptt_team_size(void) { return 1; }
#endif
static inline void bptt_share(size_t n, int q, int P, size_t *lo, size_t *hi)
{
    *lo = n * (size_t)q / (size_t)P;
    *hi = n * (size_t)(q + 1) / (size_t)P;
}

/* Rows [r0, r1) of bptt_cell_state_from_internal (cell.h): h (L8), then
 * the hidden state's other blocks as stored at rest_at (L4); the whole op
 * and the team path's restore (model_step.c) both run it. */
void bptt_cell_state_rows(const bptt_cell_type *c, const bptt_cell_ws *ws,
                          const real *s, real *state, size_t r0, size_t r1);

/* The kernels the products can run on (bptt_cell_ws.kernel), narrowest
 * first: cblas (OpenBLAS), and ours on AVX2 + FMA or on AVX-512. */
enum { BPTT_GEMM_CBLAS = 0, BPTT_GEMM_AVX2 = 1, BPTT_GEMM_AVX512 = 2 };

/* The kernel chosen for this process (bptt_cell_kernel_select, _use, the
 * environment, else the widest the CPU has): a model made now keeps it. */
int bptt_gemm_kernel(void);
/* 1 when that is one of ours, not cblas */
int bptt_gemm_kernel_on(void);
/* a kernel's panel width NR and tile height MR (1 for cblas) */
size_t bptt_gemm_nr(int kernel);
size_t bptt_gemm_mr(int kernel);
/* a core's L2 in bytes (1 MiB where the system does not say) */
size_t bptt_gemm_l2_bytes(void);

/* The weight gradient (a product with atrans) takes its k in chunks of
 * bptt_gemm_wgrad_k_rows(N) rows, N Bm's columns: those rows fill a
 * quarter of the core's L2 (a larger chunk no longer stays in L2 beside
 * the rest, a smaller one stores and reloads dW more often;
 * results/performance-log.md, "Asking for the next panel"), 8 to
 * BPTT_GEMM_KC_MAX (which sizes the kernel's
 * copy of A).  Each tile goes on from the C it stored, so the chunks do
 * not change a bit of the result. */
#define BPTT_GEMM_KC_MAX 256
size_t bptt_gemm_wgrad_k_rows(size_t N);

/* 1 when a product of M N K multiply-adds is worth more than one thread
 * (below, the threads' start and wait cost more than they save). */
int bptt_gemm_worth_threads(size_t M, size_t N, size_t K);

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

/* ---- products for the kernel, described, and run in parts -----------------
 * One product: C (M, N) = start + [A1 A2] (M, K) Bm (K, N), where A1 holds
 * A's columns [0, K1) (row stride lda1) and A2 the rest (lda2), so that
 * the forward op reads [x, h_prev] without joining them; with atrans, A1
 * is stored as A^T (A (i, k) at A1[k * lda1 + i]; K1 = K, no A2).  start
 * is the row bias (N) repeated, else C if beta, else 0.  Bm is in column
 * panels of the kernel's width NR: element (k, j) at
 * Bm[(j / NR) * pstride + k * ldb + j % NR] (a row-major matrix: ldb its
 * row stride, pstride = NR; packed panels: ldb = NR, pstride = K * NR).
 * Every element is a sum over k in increasing order with one fused
 * multiply-add per term, computed by one thread, so a product's result
 * does not depend on how it is cut into parts (doc/design.md 8.1). */
typedef struct {
    size_t M, N, K, K1;
    const real *A1, *A2;
    size_t lda1, lda2;
    int atrans;
    const real *Bm;
    size_t ldb, pstride;
    real *C;
    size_t ldc;
    const real *bias;
    int beta;
    int kernel; /* the kernel that runs it (BPTT_GEMM_AVX2 or _AVX512):
                   NR is its panel width */
} bptt_gemm_prod;

/* C (M, N) = [C +] A Bm [+ bias], A row-major (or A^T row-major with
 * atrans), Bm row-major, on kernel. */
bptt_gemm_prod bptt_gemm_plain_prod(int kernel, size_t M, size_t N, size_t K,
                                    const real *A, size_t lda, int atrans,
                                    const real *Bm, size_t ldb, real *C,
                                    size_t ldc, const real *bias, int beta);
/* out (B, G*H) := [x, h] W^T + b on the packed weights (ws->wpack) */
bptt_gemm_prod bptt_gemm_gates_prod(const bptt_cell_ws *ws, size_t G,
                                    const real *bias, const real *x,
                                    const real *h, real *out);
/* dh_prev (B, H) := dgates W_h on W's packed h columns */
bptt_gemm_prod bptt_gemm_dh_prod(const bptt_cell_ws *ws, size_t G,
                                 const real *dgates, real *dh_prev);
/* ws->dxh (B, X+H) := dgates W */
bptt_gemm_prod bptt_gemm_dxh_prod(const bptt_cell_ws *ws, size_t G,
                                  const real *W, const real *dgates);
/* rows [r0, r1) of g (not atrans): a product of its own with the same
 * elements, whose sums are the same bits */
bptt_gemm_prod bptt_gemm_rows(bptt_gemm_prod g, size_t r0, size_t r1);
/* dW (GH, XH) += dgates^T xh over rows rows (bptt_cell_weight_grads) */
bptt_gemm_prod bptt_gemm_wgrad_prod(int kernel, size_t GH, size_t XH,
                                    size_t rows, const real *dgates,
                                    const real *xh, real *dW);
/* the same, run whole on kernel (cblas for BPTT_GEMM_CBLAS): a model's
 * weight gradient on the kernel it was made with */
void bptt_gemm_weight_grads(int kernel, size_t GH, size_t XH, size_t rows,
                            const real *dgates, const real *xh, real *dW);
/* both with xh's rows ldx >= XH reals apart (XH columns of wider rows:
 * the output layer's h inside the top layer's [x, h_prev] rows) */
bptt_gemm_prod bptt_gemm_wgrad_prod_ld(int kernel, size_t GH, size_t XH,
                                       size_t rows, const real *dgates,
                                       const real *xh, size_t ldx, real *dW);
void bptt_gemm_weight_grads_ld(int kernel, size_t GH, size_t XH,
                               size_t rows, const real *dgates,
                               const real *xh, size_t ldx, real *dW);

/* Thread q's share of P of a product on the kernel, called by each of P
 * threads inside one parallel region (no region of its own): the tiles
 * (MR rows by NR columns), numbered panel by panel, are cut into P
 * contiguous runs, so a thread takes the same panels of the weights at
 * every step.  Only for a product on one of our kernels (g->kernel). */
void bptt_gemm_part(const bptt_gemm_prod *g, int q, int P);

#endif
