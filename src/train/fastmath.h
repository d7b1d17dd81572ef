/* fastmath.h: exp, sigmoid and tanh for the cells' elementwise loops.
 *
 * In float the C library's expf and tanhf are scalar calls that cost more
 * than the GEMMs of a step at H = 256 (about 50,000 calls a step), so float
 * builds use the inline versions below, which the compiler vectorizes:
 * exp by range reduction (x = n ln2 + r, |r| <= ln2/2) and a degree-7
 * Taylor polynomial (relative error below 1e-7, close to float's epsilon),
 * sigmoid and tanh from it.  The polynomial and r are fused multiply-adds
 * (__builtin_fmaf, one rounding each: an instruction wherever the cells'
 * rows are compiled for AVX2 or AVX-512, the C library's fmaf, still
 * exact, for a target without FMA), so every width gives the same bits,
 * and the rows run fewer instructions than with a multiply and an add
 * apart (results/performance-log.md, "Four k a pass, and exp on fused
 * multiply-adds").  Every function is deterministic, and forward
 * ops and recomputations call the same code, so recomputed states stay
 * bit-identical.  The double build (finite-difference tests) uses the C
 * library, so the derivatives it checks are those of the exact functions.
 * The loops vectorize only with -fno-trapping-math (Makefile.am): without
 * it GCC will not turn the clamps below into min/max, since a comparison
 * may raise a floating-point exception; nothing here reads those flags.
 */
#ifndef BPTT_FASTMATH_H
#define BPTT_FASTMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "real_impl.h"

#ifdef BPTT_DOUBLE

static inline real fm_exp(real x) { return exp(x); }
static inline real fm_tanh(real x) { return tanh(x); }

#else

static inline float fm_exp(float x)
{
    /* below -87 exp would fall under the smallest normal float, above 87
     * 1 / (1 + exp) would (so that sigmoid and tanh never make a
     * subnormal, which costs Intel cores a microcode assist; no caller
     * needs exp beyond 87, where it stays exp(87)); NaN, for which every
     * comparison is false, becomes -87 here, so that the conversion of n
     * to an integer below stays defined, and comes back as NaN at the
     * end */
    float c = x > -87.0f ? x : -87.0f;
    c = c < 87.0f ? c : 87.0f;
    /* n = round(c / ln2), by the 1.5 * 2^23 trick (no libm call) */
    const float shifter = 12582912.0f;
    const float n = (c * 1.44269504088896341f + shifter) - shifter;
    /* r = c - n ln2, ln2 in two parts: n times the first is exact */
    const float r = __builtin_fmaf(n, 2.12194440e-4f, c - n * 0.693359375f);
    float p = 1.0f / 5040.0f;
    p = __builtin_fmaf(p, r, 1.0f / 720.0f);
    p = __builtin_fmaf(p, r, 1.0f / 120.0f);
    p = __builtin_fmaf(p, r, 1.0f / 24.0f);
    p = __builtin_fmaf(p, r, 1.0f / 6.0f);
    p = __builtin_fmaf(p, r, 0.5f);
    p = __builtin_fmaf(p, r, 1.0f);
    p = __builtin_fmaf(p, r, 1.0f);
    /* times 2^n: add n to the exponent field */
    int32_t bits;
    memcpy(&bits, &p, sizeof bits);
    bits += (int32_t)n * (1 << 23);
    memcpy(&p, &bits, sizeof p);
    return x == x ? p : x;
}

static inline float fm_tanh(float x)
{
    /* tanh(x) = 1 - 2 / (exp(2x) + 1): absolute error about 1e-7 */
    return 1.0f - 2.0f / (fm_exp(2.0f * x) + 1.0f);
}

#endif

static inline real fm_sigmoid(real x) { return 1 / (1 + fm_exp(-x)); }

#endif
