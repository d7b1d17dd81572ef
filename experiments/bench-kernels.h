/* bench-kernels.h: bench-train -m kernels (bench-kernels.c): full BPTT
 * on each path of the cells' per-step GEMMs this CPU has, side by side in
 * one process. */
#ifndef BPTT_BENCH_KERNELS_H
#define BPTT_BENCH_KERNELS_H

#include <stddef.h>

#include "cell.h"

/* The table's header lines (blas: OpenBLAS's kernels, in words),
 * then one row per path for a size of L layers (only: cblas and that
 * kernel alone; NULL or "cblas": every path): then one row per path for a size: 0, or 1
 * with a line on stderr (the process's kernel choice is put back). */
void bench_kernels_header(int iters, const char *blas);
int bench_kernels(const bptt_cell_type *cell, size_t L, size_t H,
                  int threads, int iters, size_t T, size_t B, size_t X,
                  const char *only);

#endif
