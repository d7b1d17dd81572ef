/* gemm_isa.h: the vector macros that gemm_kernel.h is written on, for
 * one instruction set: included right before it, with KSUF (the
 * instance's suffix) and one of KISA_AVX512 or KISA_AVX2 defined.
 * gemm_kernel.h undefines every macro this defines (and KSUF); this
 * undefines KISA_*.  gemm.c includes the pair once per instruction set;
 * experiments/kernel_ab.c includes it twice more per set, to compare two
 * versions of gemm_kernel.h in one process. */

#if defined(KISA_AVX512)
#define KTARGET __attribute__((target("avx512f")))
#ifdef BPTT_DOUBLE
#define vreal __m512d
#define vmask __mmask8
#define VL 8
#define V_LOAD(p) _mm512_loadu_pd(p)
#define V_MLOAD(m, p) _mm512_maskz_loadu_pd(m, p)
#define V_STORE(p, v) _mm512_storeu_pd(p, v)
#define V_MSTORE(p, m, v) _mm512_mask_storeu_pd(p, m, v)
#define V_SET1(x) _mm512_set1_pd(x)
#define V_FMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define V_ZERO() _mm512_setzero_pd()
#define V_MASK(n) ((__mmask8)((1u << (n)) - 1u))
#else
#define vreal __m512
#define vmask __mmask16
#define VL 16
#define V_LOAD(p) _mm512_loadu_ps(p)
#define V_MLOAD(m, p) _mm512_maskz_loadu_ps(m, p)
#define V_STORE(p, v) _mm512_storeu_ps(p, v)
#define V_MSTORE(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define V_SET1(x) _mm512_set1_ps(x)
#define V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_ZERO() _mm512_setzero_ps()
#define V_MASK(n) ((__mmask16)((1u << (n)) - 1u))
#endif
#define MR 8
#define NV 2
/* four k a pass: counting the rows due for the next panel once a k (a
 * counter, a compare and a branch for every 16 multiply-adds) held back
 * dh_prev above all (results/performance-log.md, "Four k a pass, and exp
 * on fused multiply-adds") */
#define KU 4

#elif defined(KISA_AVX2)
/* masks are vectors of lanes, all ones where a lane is in */
#define KTARGET __attribute__((target("avx2,fma")))
#ifdef BPTT_DOUBLE
#define vreal __m256d
#define VL 4
#define V_LOAD(p) _mm256_loadu_pd(p)
#define V_MLOAD(m, p) _mm256_maskload_pd(p, m)
#define V_STORE(p, v) _mm256_storeu_pd(p, v)
#define V_MSTORE(p, m, v) _mm256_maskstore_pd(p, m, v)
#define V_SET1(x) _mm256_set1_pd(x)
#define V_FMA(a, b, c) _mm256_fmadd_pd(a, b, c)
#define V_ZERO() _mm256_setzero_pd()
#define V_MASK(n)                                                            \
    _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3))
#else
#define vreal __m256
#define VL 8
#define V_LOAD(p) _mm256_loadu_ps(p)
#define V_MLOAD(m, p) _mm256_maskload_ps(p, m)
#define V_STORE(p, v) _mm256_storeu_ps(p, v)
#define V_MSTORE(p, m, v) _mm256_maskstore_ps(p, m, v)
#define V_SET1(x) _mm256_set1_ps(x)
#define V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define V_ZERO() _mm256_setzero_ps()
#define V_MASK(n)                                                            \
    _mm256_cmpgt_epi32(_mm256_set1_epi32(n),                                 \
                       _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#endif
#define vmask __m256i
#define MR 6
#define NV 2
/* one: the 12 accumulators, the 2 B vectors and the broadcast take 15 of
 * the 16 registers, and with two k a pass (or four) GCC kept one
 * accumulator on the stack and copied registers between the passes: a
 * store and a load in that sum's chain every pass, which slowed the step
 * products (results/performance-log.md, "Masks and registers, on a Zen 5
 * core") */
#define KU 1

#else
#error "gemm_isa.h: define KISA_AVX512 or KISA_AVX2"
#endif

#undef KISA_AVX512
#undef KISA_AVX2
