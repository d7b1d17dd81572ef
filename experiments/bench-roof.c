/* bench-roof.c: the machine's roof for bench-train (see bench-roof.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "bench-roof.h"
#include "expt.h"
#include "real_impl.h"

int bench_square_open(bench_square *s)
{
    const size_t nn = (size_t)BENCH_ROOF_N * BENCH_ROOF_N;
    s->a = malloc(nn * sizeof(float));
    s->b = malloc(nn * sizeof(float));
    s->c = malloc(nn * sizeof(float));
    if (!s->a || !s->b || !s->c) {
        bench_square_close(s);
        return -1;
    }
    for (size_t k = 0; k < nn; k++) {
        s->a[k] = 0.001f * (float)(k % 13);
        s->b[k] = 0.001f * (float)(k % 7);
    }
    bench_square_seconds(s); /* warm-up: OpenBLAS's threads start */
    return 0;
}

void bench_square_close(bench_square *s)
{
    free(s->a);
    free(s->b);
    free(s->c);
    s->a = s->b = s->c = NULL;
}

double bench_square_seconds(const bench_square *s)
{
    const int n = BENCH_ROOF_N;
    const double t0 = expt_now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, s->a,
                n, s->b, n, 0, s->c, n);
    return expt_now() - t0;
}

double bench_square_gflops(double seconds)
{
    const double n = BENCH_ROOF_N;
    return 2.0 * n * n * n / seconds / 1e9;
}

/* The FMA roof: every thread of a parallel region runs independent chains
 * of fused multiply-adds on registers (12 vectors, more than the FMA units'
 * latency times their count), on the widest vectors the CPU has, FMA_ROUNDS
 * rounds each; the flops per second of all threads together.  No memory is
 * touched. */
#define FMA_ROUNDS 20000000L
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FMA_CHAINS 12
/* fma_chains_NNN(rounds): twelve named chains from twelve values (an
 * array may be left in memory, and equal chains be merged into one), their
 * lanes' sum at the end so that nothing is dropped */
#define FMA_CHAINS_FN(name, tgt, vec, lanes, set1, fmadd, add, storeu)       \
    __attribute__((target(tgt))) static float name(long rounds)              \
    {                                                                        \
        const vec a = set1(0.999f), b = set1(1e-3f);                         \
        vec c0 = set1(0), c1 = set1(1), c2 = set1(2), c3 = set1(3),          \
            c4 = set1(4), c5 = set1(5), c6 = set1(6), c7 = set1(7),          \
            c8 = set1(8), c9 = set1(9), c10 = set1(10), c11 = set1(11);      \
        for (long r = 0; r < rounds; r++) {                                  \
            c0 = fmadd(c0, a, b), c1 = fmadd(c1, a, b);                      \
            c2 = fmadd(c2, a, b), c3 = fmadd(c3, a, b);                      \
            c4 = fmadd(c4, a, b), c5 = fmadd(c5, a, b);                      \
            c6 = fmadd(c6, a, b), c7 = fmadd(c7, a, b);                      \
            c8 = fmadd(c8, a, b), c9 = fmadd(c9, a, b);                      \
            c10 = fmadd(c10, a, b), c11 = fmadd(c11, a, b);                  \
        }                                                                    \
        const vec sum = add(add(add(add(c0, c1), add(c2, c3)),               \
                                add(add(c4, c5), add(c6, c7))),              \
                            add(add(c8, c9), add(c10, c11)));                \
        float out[lanes], total = 0;                                         \
        storeu(out, sum);                                                    \
        for (int k = 0; k < (lanes); k++)                                    \
            total += out[k];                                                 \
        return total;                                                        \
    }
FMA_CHAINS_FN(fma_chains_512, "avx512f", __m512, 16, _mm512_set1_ps,
              _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps)
FMA_CHAINS_FN(fma_chains_256, "avx2,fma", __m256, 8, _mm256_set1_ps,
              _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps)
/* the lanes of the widest FMA this CPU has: 16, 8, or 0 */
static int fma_lanes(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f")                       ? 16
           : __builtin_cpu_supports("avx2") &&
                   __builtin_cpu_supports("fma")                   ? 8
                                                                   : 0;
}
static double fma_once(int threads, int lanes)
{
    const int has = fma_lanes();
    if (!lanes || lanes > has)
        lanes = has;
    if (!lanes)
        return 0;
    volatile float sink = 0;
    const double t0 = expt_now();
    _Pragma("omp parallel num_threads(threads)")
    {
        const float v = lanes == 16 ? fma_chains_512(FMA_ROUNDS)
                                    : fma_chains_256(FMA_ROUNDS);
        _Pragma("omp atomic")
        sink += v;
    }
    const double sec = expt_now() - t0;
    (void)sink;
    return 2.0 * lanes * FMA_CHAINS * (double)FMA_ROUNDS * threads / sec /
           1e9;
}
#else
static double fma_once(int threads, int lanes)
{
    (void)threads, (void)lanes;
    return 0;
}
#endif


double bench_fma_peak_lanes(int threads, int lanes)
{
    double best = 0;
    for (int k = 0; k < 3; k++) {
        const double f = fma_once(threads, lanes);
        best = f > best ? f : best;
    }
    return best;
}

double bench_fma_peak(int threads) { return bench_fma_peak_lanes(threads, 0); }

const char *bench_fma_name(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    const int lanes = fma_lanes();
    return lanes == 16 ? "AVX-512" : lanes == 8 ? "AVX2" : "none: peak = sgemm";
#else
    return "none: peak = sgemm";
#endif
}
