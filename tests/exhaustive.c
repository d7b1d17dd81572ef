/* exhaustive.c: shortest path over every schedule of the cost model.
 *
 * Promises: exhaustive_cost (exhaustive.h) is the exact optimum for
 * t <= EXHAUSTIVE_MAX_T; written from doc/design.md 1 and 2 and the validator's
 * model, independently of src/plan/table.c.  Memory grows as 4^t: about
 * 2.4 MB at t = 7, 58 MB at t = 9, 280 MB at t = 10.
 *
 * A state of a schedule is
 *   b  the backward op due next (t down to 1; 0: all done, the goal),
 *   p  the position of the running state h(p), or none,
 *   w  whether s(p) is the working internal state (p reached by an advance),
 *   H  the stored hidden states h(j), S the stored internal states s(j).
 * Moves (cost in forward ops): advance p -> p+1 (1, w := 1); save h(p)
 * (0); save s(p) if w (0); restore from a stored h(j) or s(j) (0, p := j,
 * w := 0); free a stored state (0); backward b if s(b) is stored or w and
 * p == b (0, b := b-1, running state consumed).  Saves keep the stored
 * units <= m.  Free moves cost nothing, so each state is replaced by its
 * canonical form, which drops what can never be used again: h(j) with
 * j >= b, s(j) with j > b, and a running state past b or at b without
 * its working s(b).  The goal is then the single state b = 0.
 *
 * Search: Dial's algorithm (buckets by cost) over a directly indexed
 * array of uint8 distances; it stops when the goal leaves its bucket.
 * Costs never exceed t(t+1)/2 (recompute from h(0) before each backward).
 */
#include <stdlib.h>
#include <string.h>

#include "exhaustive.h"

typedef struct {
    int b;       /* next backward op, 0..t */
    int p;       /* running position, -1: none */
    int w;       /* working internal state s(p) */
    unsigned H;  /* bit j: h(j) stored, j = 0..t-1 */
    unsigned S;  /* bit j-1: s(j) stored, j = 1..t */
} state;

typedef struct {
    uint32_t *v;
    size_t n, cap;
} bucket;

typedef struct {
    int t;
    int64_t h, s, m;
    int allow_hidden, allow_internal;
    uint8_t *dist; /* (n_states), 0xff: not reached */
    bucket *q;     /* (n_levels) */
    int n_levels;
    int oom;
} search;

static void canonical(state *x)
{
    const unsigned keep = (1u << x->b) - 1u;
    x->H &= keep; /* h(j), j < b */
    x->S &= keep; /* s(j), j <= b */
    if (x->p < 0 || x->p > x->b || (x->p == x->b && !x->w)) {
        x->p = -1;
        x->w = 0;
    }
}

static uint32_t encode(const search *se, const state *x)
{
    const int t = se->t;
    const uint32_t top =
        ((uint32_t)x->b * (uint32_t)(t + 2) + (uint32_t)(x->p + 1)) * 2u +
        (uint32_t)x->w;
    return (top << (2 * t)) | ((uint32_t)x->H << t) | (uint32_t)x->S;
}

static state decode(const search *se, uint32_t i)
{
    const int t = se->t;
    const unsigned mask = (1u << t) - 1u;
    state x;
    x.S = i & mask;
    x.H = (i >> t) & mask;
    uint32_t top = i >> (2 * t);
    x.w = (int)(top % 2u);
    top /= 2u;
    x.p = (int)(top % (uint32_t)(t + 2)) - 1;
    x.b = (int)(top / (uint32_t)(t + 2));
    return x;
}

static int64_t units(const search *se, const state *x)
{
    return (int64_t)__builtin_popcount(x->H) * se->h +
           (int64_t)__builtin_popcount(x->S) * se->s;
}

static void relax(search *se, state x, int d)
{
    canonical(&x);
    if (d >= se->n_levels)
        return; /* dearer than recomputing everything: never optimal */
    const uint32_t i = encode(se, &x);
    if (se->dist[i] <= d)
        return;
    se->dist[i] = (uint8_t)d;
    bucket *bk = &se->q[d];
    if (bk->n == bk->cap) {
        size_t cap = bk->cap ? 2 * bk->cap : 1024;
        uint32_t *v = realloc(bk->v, cap * sizeof *v);
        if (!v) {
            se->oom = 1;
            return;
        }
        bk->v = v;
        bk->cap = cap;
    }
    bk->v[bk->n++] = i;
}

/* Every move out of x (canonical, b >= 1), x reached at cost d. */
static void expand(search *se, const state *x, int d)
{
    const int t = se->t;
    const int64_t used = units(se, x);
    state y;

    if (x->p >= 0 && x->p < x->b && x->p < t) { /* advance */
        y = *x;
        y.p = x->p + 1;
        y.w = 1;
        relax(se, y, d + 1);
    }
    if (se->allow_hidden && x->p >= 0 && x->p < x->b &&
        !(x->H >> x->p & 1u) && used + se->h <= se->m) { /* save h(p) */
        y = *x;
        y.H |= 1u << x->p;
        relax(se, y, d);
    }
    if (se->allow_internal && x->w && x->p >= 1 &&
        !(x->S >> (x->p - 1) & 1u) && used + se->s <= se->m) { /* save s(p) */
        y = *x;
        y.S |= 1u << (x->p - 1);
        relax(se, y, d);
    }
    for (int j = 0; j < t; j++) {
        if (x->H >> j & 1u) {
            y = *x; /* restore h(j) */
            y.p = j;
            y.w = 0;
            relax(se, y, d);
            y = *x; /* free h(j) */
            y.H &= ~(1u << j);
            relax(se, y, d);
        }
        if (x->S >> j & 1u) {
            y = *x; /* restore from s(j+1) */
            y.p = j + 1;
            y.w = 0;
            relax(se, y, d);
            y = *x; /* free s(j+1) */
            y.S &= ~(1u << j);
            relax(se, y, d);
        }
    }
    if ((x->S >> (x->b - 1) & 1u) || (x->w && x->p == x->b)) {
        y = *x; /* backward b */
        y.b = x->b - 1;
        y.p = -1;
        y.w = 0;
        relax(se, y, d);
    }
}

int64_t exhaustive_cost(int t, int64_t h, int64_t s, int64_t m,
                        int allow_hidden, int allow_internal)
{
    if (t < 1 || t > EXHAUSTIVE_MAX_T || h < 1 || s < 1 || m < 0)
        return -2;
    if (h > m)
        return -1; /* h(0) alone exceeds the budget */

    search se = {.t = t,
                 .h = h,
                 .s = s,
                 .m = m,
                 .allow_hidden = allow_hidden,
                 .allow_internal = allow_internal};
    const size_t n_states = ((size_t)(t + 1) * (size_t)(t + 2) * 2u)
                            << (2 * t);
    se.n_levels = t * (t + 1) / 2 + 1;
    se.dist = malloc(n_states);
    se.q = calloc((size_t)se.n_levels, sizeof *se.q);
    int64_t result = -2;
    if (!se.dist || !se.q)
        goto done;
    memset(se.dist, 0xff, n_states);

    const state start = {.b = t, .p = 0, .w = 0, .H = 1u, .S = 0u};
    const state goal = {.b = 0, .p = -1, .w = 0, .H = 0u, .S = 0u};
    const uint32_t goal_i = encode(&se, &goal);
    relax(&se, start, 0);
    result = -1;
    for (int d = 0; d < se.n_levels && result == -1 && !se.oom; d++) {
        /* The bucket grows while it is scanned (moves of cost 0). */
        for (size_t k = 0; k < se.q[d].n && !se.oom; k++) {
            const uint32_t i = se.q[d].v[k];
            if (se.dist[i] != d)
                continue; /* reached more cheaply later */
            if (i == goal_i) {
                result = d;
                break;
            }
            const state x = decode(&se, i);
            expand(&se, &x, d);
        }
    }
    if (se.oom)
        result = -2;
done:
    if (se.q)
        for (int d = 0; d < se.n_levels; d++)
            free(se.q[d].v);
    free(se.q);
    free(se.dist);
    return result;
}
