/* closed.c: the planner's closed forms (doc/design.md 3): binomial
 * checkpointing's cost, Chen's segment, cost and peak, full BPTT's peak,
 * and bytes to planner units.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "bptt.h"

/* ---- closed forms ------------------------------------------------------ */

int64_t bptt_hsm_closed_cost(int64_t t, int64_t m)
{
    if (t < 0 || m < 1)
        return -1;
    if (t == 0)
        return 0;
    /* b = binom(m + r, m), grown in r until b >= t; b < t * (m + 1)
     * throughout, so __int128 holds every product. */
    __int128 b = 1;
    int64_t r = 0;
    while (b < t) {
        r++;
        b = b * (m + r) / r;
    }
    const __int128 b1 = b * r / (m + 1); /* binom(m + r, m + 1) */
    const __int128 c = (__int128)(r + 1) * t - b1;
    return c > INT64_MAX ? -1 : (int64_t)c;
}

size_t bptt_chen_default_segment(size_t t)
{
    size_t k = (size_t)ceil(sqrt((double)t));
    while (k > 1 && (k - 1) * (k - 1) >= t)
        k--;
    while (k * k < t)
        k++;
    return k < 1 ? 1 : k;
}

int64_t bptt_chen_cost(size_t t, size_t k)
{
    (void)k;
    return 2 * (int64_t)t; /* first sweep, then every segment once more */
}

int64_t bptt_chen_peak(size_t t, size_t k, int64_t h, int64_t s)
{
    if (t == 0)
        return h;
    if (k < 1)
        k = 1;
    if (k > t)
        k = t;
    const size_t n = (t + k - 1) / k;    /* segments */
    const size_t last = t - (n - 1) * k; /* length of the last segment */
    /* While segment j (0-based) runs, starts 0..j and its len_j - 1
     * internal states are stored. */
    int64_t peak = (int64_t)n * h + (int64_t)(last - 1) * s;
    if (n >= 2) {
        const int64_t other = (int64_t)(n - 1) * h + (int64_t)(k - 1) * s;
        if (other > peak)
            peak = other;
    }
    return peak;
}

int64_t bptt_full_peak(size_t t, int64_t h, int64_t s)
{
    const int64_t all = (int64_t)(t - (t > 0)) * s; /* s(1..t-1) */
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
    if (hidden_bytes < 1 || internal_bytes < hidden_bytes)
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
    if (!p || *p < '0' || *p > '9')
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
