/* bench-roof.h: the machine's roof for bench-train (not part of the
 * library), measured in the same run as the iterations it judges:
 *   - OpenBLAS's SGEMM on one large square product (N = BENCH_ROOF_N), the
 *     rate a tuned GEMM reaches here at this thread count (it can fall far
 *     below the CPU's: a CPU newer than OpenBLAS knows, or the kernel set
 *     OPENBLAS_CORETYPE forces);
 *   - the CPU's FMA throughput on registers, which no GEMM can pass.
 * bench-train's peak is the larger of the two (results/performance-log.md,
 * "Against oneDNN", its columns). */
#ifndef BPTT_BENCH_ROOF_H
#define BPTT_BENCH_ROOF_H

#define BENCH_ROOF_N 2048

/* The operands of the square product. */
typedef struct {
    float *a, *b, *c;
} bench_square;

/* Allocates and fills the operands and runs the product once (OpenBLAS's
 * threads start); 0, or -1 out of memory (then nothing is held).  Closing
 * a zeroed or closed one does nothing. */
int bench_square_open(bench_square *s);
void bench_square_close(bench_square *s);
/* The seconds of one product, and its GFLOP/s at those seconds. */
double bench_square_seconds(const bench_square *s);
double bench_square_gflops(double seconds);

/* The FMA throughput of threads threads, GFLOP/s, best of 3; 0 where the
 * CPU has neither AVX-512 nor AVX2 with FMA (or off x86-64). */
double bench_fma_peak(int threads);
/* The same on vectors of lanes floats (8: AVX2, 16: AVX-512; 0 or more
 * than the CPU has: the widest it has). */
double bench_fma_peak_lanes(int threads, int lanes);
/* The vectors bench_fma_peak runs on, for a header line. */
const char *bench_fma_name(void);

#endif
