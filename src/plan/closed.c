/* closed.c: the planner's closed forms (doc/design.md 3): binomial
 * checkpointing's cost, Chen's segment, cost and peak, full BPTT's peak,
 * and bytes to planner units.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "bptt.h"
#include "costs.h"

/* ---- closed forms ------------------------------------------------------ */

/* binom(n, k), or cap when it is at least cap (cap <= INT64_MAX,
 * n < 2^64).  Runs min(k, n - k) steps, and fewer: binom(n, j) >= 2^j for
 * j <= n / 2, so it stops within 64 steps once it reaches cap. */
__int128 planner_binom_capped(__int128 n, __int128 k, __int128 cap)
{
    if (k < 0 || k > n)
        return 0;
    if (n - k < k)
        k = n - k;
    __int128 b = 1;
    for (__int128 j = 1; j <= k; j++) {
        b = b * (n - k + j) / j; /* b < cap <= 2^63, n - k + j < 2^64 */
        if (b >= cap)
            return cap;
    }
    return b;
}

int64_t bptt_hsm_closed_cost(int64_t t, int64_t m)
{
    if (t < 0 || m < 1)
        return -1;
    if (t == 0)
        return 0;
    /* r least with binom(m + r, m) >= t: binom(m + r, m) >= r + 1, so
     * r < t; bisect (binom rises with r) rather than step r by 1. */
    int64_t lo = 0, hi = t;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (planner_binom_capped((__int128)m + mid, m, t) >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    const int64_t r = lo;
    /* b = binom(m + r, m) = binom(m + r - 1, m) (m + r) / r, the first
     * factor below t: b < t (m + 1) < 2^126 */
    __int128 b = 1;
    if (r > 0)
        b = planner_binom_capped((__int128)m + r - 1, m, t) * ((__int128)m + r) / r;
    const __int128 b1 = b * r / ((__int128)m + 1); /* binom(m + r, m + 1) */
    const __int128 c = (__int128)(r + 1) * t - b1;
    return c > INT64_MAX || c < 0 ? -1 : (int64_t)c;
}

size_t bptt_chen_default_segment(size_t t)
{
    /* the least k with k^2 >= t; k^2 past SIZE_MAX counts as >= t */
    size_t k = (size_t)ceil(sqrt((double)t)), sq;
    if (k < 1)
        k = 1;
    while (k > 1 && !__builtin_mul_overflow(k - 1, k - 1, &sq) && sq >= t)
        k--;
    while (!__builtin_mul_overflow(k, k, &sq) && sq < t)
        k++;
    return k;
}

int64_t bptt_chen_cost(size_t t, size_t k)
{
    (void)k;
    /* first sweep, then every segment once more */
    int64_t c;
    if (t > INT64_MAX || __builtin_mul_overflow((int64_t)t, 2, &c))
        return -1;
    return c;
}

/* a h + b s, or -1 when it does not fit an int64_t */
static int64_t units_sum(size_t a, int64_t h, size_t b, int64_t s)
{
    int64_t x, y;
    if (a > INT64_MAX || b > INT64_MAX ||
        __builtin_mul_overflow((int64_t)a, h, &x) ||
        __builtin_mul_overflow((int64_t)b, s, &y) ||
        __builtin_add_overflow(x, y, &x))
        return -1;
    return x;
}

int64_t bptt_chen_peak(size_t t, size_t k, int64_t h, int64_t s)
{
    if (h < 0 || s < 0)
        return -1;
    if (t == 0)
        return h;
    if (k < 1)
        k = 1;
    if (k > t)
        k = t;
    const size_t n = (t - 1) / k + 1;    /* segments */
    const size_t last = t - (n - 1) * k; /* length of the last segment */
    /* While segment j (0-based) runs, starts 0..j and its len_j - 1
     * internal states are stored. */
    int64_t peak = units_sum(n, h, last - 1, s);
    if (peak < 0)
        return -1;
    if (n >= 2) {
        const int64_t other = units_sum(n - 1, h, k - 1, s);
        if (other < 0)
            return -1;
        if (other > peak)
            peak = other;
    }
    return peak;
}

int64_t bptt_full_peak(size_t t, int64_t h, int64_t s)
{
    if (h < 0 || s < 0)
        return -1;
    const int64_t all = units_sum(0, h, t - (t > 0), s); /* s(1..t-1) */
    if (all < 0)
        return -1;
    return all > h ? all : h;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

int bptt_units_from_bytes(bptt_units *u, int64_t hidden_bytes,
                          int64_t internal_bytes)
{
    if (!u || hidden_bytes < 1 || internal_bytes < hidden_bytes)
        return BPTT_EINVAL;
    u->quantum = gcd64(hidden_bytes, internal_bytes);
    u->hidden_units = hidden_bytes / u->quantum;
    u->internal_units = internal_bytes / u->quantum;
    return BPTT_OK;
}

int bptt_units_from_alpha(const char *alpha, bptt_units *u)
{
    int64_t whole = 0, frac = 0, scale = 1;
    const char *p = alpha;
    if (!u || !p || *p < '0' || *p > '9')
        return BPTT_EINVAL;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (*p - '0');
        if (whole > BPTT_ALPHA_MAX)
            return BPTT_EINVAL;
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return BPTT_EINVAL;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (scale == 1000000)
                return BPTT_EINVAL; /* more than 6 decimals */
            frac = frac * 10 + (*p - '0');
            scale *= 10;
        }
    }
    if (*p != '\0' || whole < 1 || (whole == BPTT_ALPHA_MAX && frac))
        return BPTT_EINVAL;
    return bptt_units_from_bytes(u, scale, whole * scale + frac);
}
