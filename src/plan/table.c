/* table.c: cost tables and plan emitters for every strategy.
 *
 * A table holds, for one strategy and one (t, h, s), the optimal cost of
 * every length 0..t at every budget 0..max_m, and whatever the emitter needs
 * to unroll a plan at any of those budgets.  It is built once and serves
 * every budget (plan once, execute many).
 *
 * The dynamic programme (doc/design.md 3.2; how it departs from the
 * paper's recursions: 3.3): a subproblem is a segment of `len` steps
 * whose start state is either
 *   H  a stored hidden state owned by the subproblem: it counts h units of
 *      the subproblem's budget m and is freed once no longer needed, or
 *   S  the hidden part of an internal state a parent keeps: free here,
 *      and kept after the subproblem ends.
 * The first state stored beyond the start splits the segment at y:
 *   H, hidden y:     y + H(len-y, m-h) + H(y, m)
 *   H, internal y=1: 1 + S(len-1, m-s)              (start freed at once)
 *   H, internal y:   y + S(len-y, m-h-s) + H(y-1, m)
 *   S, hidden y:     y + H(len-y, m)   + S(y, m)
 *   S, internal y:   y + S(len-y, m-s) + S(y-1, m)
 *   any, y = len:    len + X(len-1, m)             (nothing stored: the
 *                                                   working s(len) is used)
 * The paper's literal recursions (the -paper strategies) use one kind P,
 * which keeps its start to the end and charges an internal split's right
 * part for a hidden start it does not store:
 *   P, hidden y:     y + P(len-y, m-h) + P(y, m)
 *   P, internal y:   y + P(len-y, m-s) + P(y-1, m)
 */
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "table_impl.h"

#define INF (INT64_MAX / 4)

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

/* ---- the DP ------------------------------------------------------------ */

static inline int64_t at(const bptt_table *tb, int kind, int64_t m,
                         size_t len)
{
    if (m < 0)
        return INF;
    return tb->cost[kind][(size_t)m * (tb->t + 1) + len];
}

/* The cheap options of cell (kind, len >= 1, m), first, in the order that
 * settles ties: internal y = 1, hidden y = 1, nothing stored (y = len); the
 * later ones only while the best is above lb.  Shared by the plain scan and
 * the fast planner, so that both break ties alike. */
static void cheap_options(const bptt_table *tb, int kind, size_t len,
                          int64_t m, int64_t lb, int64_t *best,
                          int32_t *choice)
{
    const unsigned rules = tb->rules;
    const int paper = (rules & RULE_PAPER) != 0;
    int64_t v;
    *best = INF;
    *choice = 0;
    if ((rules & RULE_INTERNAL) && len >= 2) {
        /* y = 1: the paper keeps its start (left part P(0, m) = 0);
         * ours frees an H start, so H and S both give S(len-1, m-s). */
        *best = 1 + at(tb, paper ? KIND_H : KIND_S, m - tb->s, len - 1);
        *choice = 1;
    }
    if ((rules & RULE_HIDDEN) && len >= 2 && *best > lb) {
        const int64_t mr = (kind == KIND_S) ? m : m - tb->h;
        v = 1 + at(tb, KIND_H, mr, len - 1) + at(tb, kind, m, 1);
        if (v < *best) {
            *best = v;
            *choice = -1;
        }
    }
    if (*best > lb) {
        v = (int64_t)len + at(tb, kind, m, len - 1);
        if (v < *best) {
            *best = v;
            *choice = (int32_t)len;
        }
    }
}

/* One cell: kind at (len, m).  Writes cost and choice. */
static void dp_cell(bptt_table *tb, int kind, size_t len, int64_t m)
{
    const unsigned rules = tb->rules;
    const int paper = (rules & RULE_PAPER) != 0;
    const int64_t h = tb->h, s = tb->s;
    const size_t T1 = tb->t + 1;
    const size_t idx = (size_t)m * T1 + len;
    int64_t best = INF;
    int32_t choice = 0;

    if (len == 0) {
        tb->cost[kind][idx] = (kind == KIND_H && m < h) ? INF : 0;
        tb->choice[kind][idx] = 0;
        return;
    }
    if (kind == KIND_H && m < h) {
        tb->cost[kind][idx] = INF;
        tb->choice[kind][idx] = 0;
        return;
    }
    const int64_t L = (int64_t)len;
    const int64_t lb = (rules & RULE_INTERNAL) ? L : 2 * L - 1;

    /* Cheap options first: at generous budgets they reach the bound. */
    cheap_options(tb, kind, len, m, lb, &best, &choice);

    if (best > lb && len >= 3 && (rules & RULE_INTERNAL)) {
        /* internal y = 2 .. len-1 */
        int rk;
        int64_t mr;
        if (paper) {
            rk = KIND_H;
            mr = m - s;
        } else if (kind == KIND_H) {
            rk = KIND_S;
            mr = m - h - s;
        } else {
            rk = KIND_S;
            mr = m - s;
        }
        if (mr >= 0) {
            const int64_t *right = tb->cost[rk] + (size_t)mr * T1;
            const int64_t *left = tb->cost[kind] + (size_t)m * T1;
            for (size_t y = 2; y < len; y++) {
                const int64_t v = (int64_t)y + right[len - y] + left[y - 1];
                if (v < best) {
                    best = v;
                    choice = (int32_t)y;
                }
            }
        }
    }
    if (best > lb && len >= 3 && (rules & RULE_HIDDEN)) {
        /* hidden y = 2 .. len-1 */
        const int64_t mr = (kind == KIND_S) ? m : m - h;
        if (mr >= 0) {
            const int64_t *right = tb->cost[KIND_H] + (size_t)mr * T1;
            const int64_t *left = tb->cost[kind] + (size_t)m * T1;
            for (size_t y = 2; y < len; y++) {
                const int64_t v = (int64_t)y + right[len - y] + left[y];
                if (v < best) {
                    best = v;
                    choice = -(int32_t)y;
                }
            }
        }
    }
    if (best >= INF) {
        best = INF;
        choice = 0;
    }
    tb->cost[kind][idx] = best;
    tb->choice[kind][idx] = choice;
}

/* ---- the fast DP ----------------------------------------------------------
 *
 * Exact shortcuts over dp_cell's plain scan (doc/design.md 4
 * gives the proofs; tests/test_planner.c compares every cell with the plain
 * DP up to t = 2000):
 *
 * 1. A lower bound.  For ism and msm every cost is at least
 *    LB(l, m) = max(l, 2l - 1 - floor(m / s)), by induction over the
 *    recursion: each part of a split meets its own bound, and the right
 *    part of an internal split has floor((m - s) / s) = floor(m / s) - 1.
 *    A cell whose best option reaches LB scans no further.
 * 2. A closed form.  S(l, m) = LB(l, m) for every l <= Tc(m), where
 *    Tc(m) = 1 for m < s and max(2F, F + 1 + Tc(m - s)) otherwise
 *    (F = floor(m / s) + 1: the split y = min(F + 1, l - F + 1) reaches LB
 *    given the column m - s); H(l, m) = LB(l, m) for l <= 1 + Tc(m - s),
 *    by the split y = 1.  Tc grows with m, so from the first budget whose
 *    H bound reaches t on, no column is tabulated.
 * 3. Split groups by pieces.  A group of splits (internal: y + R(l - y) +
 *    L(y - 1); hidden: y + R(l - y) + L(y)) is a sum of two functions of y,
 *    each linear between the vertices of its column (where its slope
 *    changes), so its minimum and its smallest minimiser lie at a vertex or
 *    an end of the range: the group costs its vertices, not l.  Before
 *    that: the splits whose left part is stored whole (L(i) = i up to the
 *    column's F) are a sliding-window minimum over the right column, O(1)
 *    per cell; the others are bounded below by
 *        a l + (1 - a) sh + min_j (R(j) - a j) + min_i (L(i) + (1 - a) i)
 *    (a = 2, 3, 4; j and i over the ranges those splits use), and when the
 *    window's minimum is within the bound the group needs no scan.
 * Ties go to the same option as in dp_cell, so the plans are the same too.
 */

#define NSLOPES 3
static const int64_t slopes[NSLOPES] = {2, 3, 4};

typedef struct {
    int32_t *q;      /* ring of right-column positions j, R(j) - 2j rising */
    size_t cap, head, n;
    int ready;       /* the window is filled (the column's F is final) */
    int64_t jnext;   /* next position the prefix minima take in */
    int64_t pmin[NSLOPES]; /* min over 1 <= j < jnext of R(j) - a j */
} group_state;

/* Vertices live in blocks that never move, so that other threads can read
 * the published ones while the owner appends. */
#define VTX_BLOCK 256

typedef struct {
    int32_t **vtx;   /* blocks of positions p where cost(p+1) - cost(p)
                        changes, rising */
    size_t nv;       /* vertices so far (the owner's count) */
    _Atomic uint64_t published; /* lengths done << 32 | vertices then */
    int64_t full;    /* F: cost(i) = i for every i <= F */
    int64_t g[NSLOPES]; /* min over computed i > F of cost(i) + (1 - a) i */
    group_state grp[2]; /* [0]: internal splits, [1]: hidden splits */
} col_state;

static inline int32_t vtx_at(const col_state *c, size_t i)
{
    return c->vtx[i / VTX_BLOCK][i % VTX_BLOCK];
}

typedef struct {
    int ok;          /* the group exists at this cell */
    int rk;          /* right part: kind and budget */
    int64_t rm;
    int64_t sh;      /* left part's length is y - sh */
    int32_t sign;    /* choice = sign * y */
} split_group;

typedef struct {
    bptt_table *tb;
    col_state *cs;   /* [kind * ncols + m] */
    int64_t ncols;
} fast_dp;

static inline col_state *col(const fast_dp *d, int kind, int64_t m)
{
    return &d->cs[(size_t)kind * (size_t)d->ncols + (size_t)m];
}

/* The two groups of splits y = 2 .. len-1 of cell (kind, len, m). */
static void split_groups(const bptt_table *tb, int kind, size_t len,
                         int64_t m, split_group g[2])
{
    const int paper = (tb->rules & RULE_PAPER) != 0;
    g[0].rk = paper ? KIND_H : KIND_S;
    g[0].rm = paper || kind == KIND_S ? m - tb->s : m - tb->h - tb->s;
    g[0].sh = 1;
    g[0].sign = 1;
    g[0].ok = (tb->rules & RULE_INTERNAL) && len >= 3 && g[0].rm >= 0;
    g[1].rk = KIND_H;
    g[1].rm = kind == KIND_S ? m : m - tb->h;
    g[1].sh = 0;
    g[1].sign = -1;
    g[1].ok = (tb->rules & RULE_HIDDEN) && len >= 3 && g[1].rm >= 0;
    for (int i = 0; i < 2; i++) /* a right column with no feasible cell */
        if (g[i].ok && at(tb, g[i].rk, g[i].rm, 0) >= INF)
            g[i].ok = 0;
}

/* Smallest value and smallest y attaining it over y = 2 .. len-1, from the
 * vertices of both columns. */
static void scan_group(const fast_dp *d, int kind, int64_t m,
                       const split_group *gp, int64_t len, int64_t *bv,
                       int64_t *by)
{
    const bptt_table *tb = d->tb;
    const size_t T1 = tb->t + 1;
    const int64_t *R = tb->cost[gp->rk] + (size_t)gp->rm * T1;
    const int64_t *L = tb->cost[kind] + (size_t)m * T1;
    const int64_t sh = gp->sh, ylo = 2, yhi = len - 1;
    int64_t best = INF, besty = 0;
#define EVAL(yy)                                                             \
    do {                                                                     \
        const int64_t y_ = (yy);                                             \
        const int64_t v_ = y_ + R[len - y_] + L[y_ - sh];                    \
        if (v_ < best || (v_ == best && y_ < besty)) {                       \
            best = v_;                                                       \
            besty = y_;                                                      \
        }                                                                    \
    } while (0)
    EVAL(ylo);
    EVAL(yhi);
    const col_state *lc = col(d, kind, m);
    for (size_t i = 0; i < lc->nv; i++) {
        const int64_t y = vtx_at(lc, i) + sh;
        if (y >= yhi)
            break;
        if (y > ylo)
            EVAL(y);
    }
    /* another column's vertices: only those it has published (all that
     * matter here: positions up to len - 2) */
    const col_state *rc = col(d, gp->rk, gp->rm);
    const size_t rnv =
        gp->rm == m ? rc->nv
                    : (size_t)(atomic_load_explicit(&rc->published,
                                                    memory_order_acquire) &
                               0xffffffffu);
    for (size_t i = 0; i < rnv; i++) {
        const int64_t y = len - vtx_at(rc, i);
        if (y <= ylo)
            break;
        if (y < yhi)
            EVAL(y);
    }
#undef EVAL
    *bv = best;
    *by = besty;
}

/* Keeps the group's sliding window (splits with a whole left part,
 * y = 2 .. F + sh, i.e. j = len - y in [len - F - sh, len - 2]) and prefix
 * minima (the other splits, j in [1, len - F - sh - 1]) up to date at len.
 * Called at every length from F + 2 on.  0, or -1 when out of memory. */
static int group_advance(const fast_dp *d, col_state *c, group_state *w,
                         const split_group *gp, int64_t len)
{
    const bptt_table *tb = d->tb;
    const int64_t *R = tb->cost[gp->rk] + (size_t)gp->rm * (tb->t + 1);
    const int64_t F = c->full, jlo = len - F - gp->sh, jhi = len - 2;
    if (!w->ready) {
        w->cap = (size_t)F + 2;
        w->q = planner_malloc(w->cap * sizeof *w->q);
        if (!w->q)
            return -1;
        w->head = w->n = 0;
        w->ready = 1;
        w->jnext = 1;
        for (int a = 0; a < NSLOPES; a++)
            w->pmin[a] = INF;
    }
    for (int64_t j = w->n ? jhi : jlo; j <= jhi; j++) {
        if (j < 1)
            continue;
        const int64_t v = R[j] - 2 * j;
        while (w->n > 0) {
            const int32_t b = w->q[(w->head + w->n - 1) % w->cap];
            if (R[b] - 2 * (int64_t)b < v)
                break;
            w->n--;
        }
        w->q[(w->head + w->n) % w->cap] = (int32_t)j;
        w->n++;
    }
    while (w->n > 0 && w->q[w->head] < jlo) {
        w->head = (w->head + 1) % w->cap;
        w->n--;
    }
    for (; w->jnext <= jlo - 1; w->jnext++) {
        const int64_t j = w->jnext;
        for (int a = 0; a < NSLOPES; a++)
            if (R[j] - slopes[a] * j < w->pmin[a])
                w->pmin[a] = R[j] - slopes[a] * j;
    }
    return 0;
}

/* The group's minimum (value and smallest y) at (kind, len, m), or INF when
 * it cannot beat `best`. */
static void group_min(const fast_dp *d, int kind, int64_t m,
                      const split_group *gp, int gi, int64_t len,
                      int64_t best, int64_t *bv, int64_t *by)
{
    col_state *c = col(d, kind, m);
    const group_state *w = &c->grp[gi];
    if (w->ready) {
        const bptt_table *tb = d->tb;
        const int64_t *R = tb->cost[gp->rk] + (size_t)gp->rm * (tb->t + 1);
        int64_t wv = INF, wy = 0;
        if (w->n > 0) {
            const int64_t j = w->q[w->head];
            wv = 2 * len - gp->sh + R[j] - 2 * j;
            wy = len - j;
        }
        int64_t bound = INF;
        if (len - c->full - gp->sh - 1 >= 1) {
            bound = -INF;
            for (int a = 0; a < NSLOPES; a++) {
                const int64_t v = slopes[a] * len + (1 - slopes[a]) * gp->sh +
                                  w->pmin[a] + c->g[a];
                if (v > bound)
                    bound = v;
            }
        }
        if (wv <= bound) {
            *bv = wv;
            *by = wy;
            return;
        }
        if (bound >= best) {
            *bv = INF;
            *by = 0;
            return;
        }
    }
    scan_group(d, kind, m, gp, len, bv, by);
}

/* One cell by the shortcuts; the same cost and choice as dp_cell. */
static int fast_cell(const fast_dp *d, int kind, size_t len, int64_t m)
{
    bptt_table *tb = d->tb;
    const unsigned rules = tb->rules;
    const int paper = (rules & RULE_PAPER) != 0;
    const int64_t h = tb->h, s = tb->s;
    const size_t idx = (size_t)m * (tb->t + 1) + len;
    col_state *c = col(d, kind, m);
    int64_t best = INF;
    int32_t choice = 0;

    if (len == 0 || (kind == KIND_H && m < h)) {
        tb->cost[kind][idx] = (kind == KIND_H && m < h) ? INF : 0;
        tb->choice[kind][idx] = 0;
        if (len == 0)
            for (int a = 0; a < NSLOPES; a++)
                c->g[a] = INF;
        return 0;
    }
    const int64_t L = (int64_t)len;
    int64_t lb = (rules & RULE_INTERNAL) ? L : 2 * L - 1;
    if ((rules & RULE_INTERNAL) && !paper && 2 * L - 1 - m / s > lb)
        lb = 2 * L - 1 - m / s;

    split_group g[2];
    split_groups(tb, kind, len, m, g);
    if (L >= c->full + 2)
        for (int i = 0; i < 2; i++)
            if (g[i].ok && group_advance(d, c, &c->grp[i], &g[i], L) != 0)
                return -1;

    cheap_options(tb, kind, len, m, lb, &best, &choice);
    for (int i = 0; i < 2; i++) {
        if (best <= lb || !g[i].ok)
            continue;
        int64_t v, y;
        group_min(d, kind, m, &g[i], i, L, best, &v, &y);
        if (v < best) {
            best = v;
            choice = g[i].sign * (int32_t)y;
        }
    }
    if (best >= INF) {
        best = INF;
        choice = 0;
    }
    tb->cost[kind][idx] = best;
    tb->choice[kind][idx] = choice;
    if (best == L && c->full == L - 1)
        c->full = L;
    else if (best < INF)
        for (int a = 0; a < NSLOPES; a++)
            if (best + (1 - slopes[a]) * L < c->g[a])
                c->g[a] = best + (1 - slopes[a]) * L;
    return 0;
}

/* After the cells of length len: record position len - 1 of the column
 * (kind, m) if its slope changes there.  0, or -1 when out of memory. */
static int note_vertex(const fast_dp *d, int kind, int64_t m, size_t len)
{
    const bptt_table *tb = d->tb;
    const int64_t *C = tb->cost[kind] + (size_t)m * (tb->t + 1);
    if (len < 2 || C[0] >= INF ||
        C[len] - C[len - 1] == C[len - 1] - C[len - 2])
        return 0;
    col_state *c = col(d, kind, m);
    if (c->nv % VTX_BLOCK == 0 &&
        !(c->vtx[c->nv / VTX_BLOCK] =
              planner_malloc(VTX_BLOCK * sizeof **c->vtx)))
        return -1;
    c->vtx[c->nv / VTX_BLOCK][c->nv % VTX_BLOCK] = (int32_t)(len - 1);
    c->nv++;
    return 0;
}

/* Lengths done by column m (all kinds), as published. */
static inline int64_t col_done(const fast_dp *d, int64_t m)
{
    return (int64_t)(atomic_load_explicit(&col(d, 0, m)->published,
                                          memory_order_acquire) >>
                     32);
}

/* Waits until every column that cells (len, m) read has done the lengths
 * below len.  0, or -1 if the build failed meanwhile. */
static int wait_for(const fast_dp *d, int64_t m, size_t len,
                    _Atomic int *failed)
{
    const bptt_table *tb = d->tb;
    const int64_t deps[3] = {m - tb->h, m - tb->s, m - tb->h - tb->s};
    for (int i = 0; i < 3; i++) {
        if (deps[i] < 0)
            continue;
        for (unsigned spin = 0; col_done(d, deps[i]) < (int64_t)len; spin++) {
            if (atomic_load_explicit(failed, memory_order_relaxed))
                return -1;
            if (spin > 4096)
                sched_yield(); /* the column's owner may be descheduled */
#if defined(__x86_64__) || defined(__i386__)
            else
                __builtin_ia32_pause();
#endif
        }
    }
    return 0;
}

/* Publishes that column m has done lengths 0..len (each kind's vertex
 * count rides along). */
static void publish(const fast_dp *d, int64_t m, size_t len)
{
    for (int k = 0; k < d->tb->kinds; k++) {
        col_state *c = col(d, k, m);
        atomic_store_explicit(&c->published,
                              (uint64_t)(len + 1) << 32 | (uint64_t)c->nv,
                              memory_order_release);
    }
}

/* Columns are handed out in rising order; a column runs through every
 * length, waiting where a column it reads is behind (a wavefront: no
 * barrier per length). */
static int fast_build(bptt_table *tb, int64_t ncols, int nt)
{
    fast_dp d = {tb, NULL, ncols};
    const size_t ncs = (size_t)tb->kinds * (size_t)ncols;
    const size_t nblocks = tb->t / VTX_BLOCK + 1;
    d.cs = planner_calloc(ncs, sizeof *d.cs);
    if (!d.cs)
        return BPTT_ENOMEM;
    _Atomic int failed = 0;
    _Atomic int64_t next = 0;
    for (size_t i = 0; i < ncs; i++) {
        atomic_init(&d.cs[i].published, 0);
        if (!(d.cs[i].vtx = planner_calloc(nblocks, sizeof *d.cs[i].vtx)))
            atomic_store(&failed, 1);
    }
    const int kinds = tb->kinds;
    const size_t t = tb->t;
    if (ncols < 2 || t < 64)
        nt = 1;
    (void)nt;
#pragma omp parallel num_threads(nt)
    for (;;) {
        const int64_t m = atomic_fetch_add(&next, 1);
        if (m >= ncols || atomic_load(&failed))
            break;
        for (size_t len = 0; len <= t; len++) {
            int bad = wait_for(&d, m, len, &failed);
            for (int k = 0; k < kinds && !bad; k++)
                bad = fast_cell(&d, k, len, m);
            for (int k = 0; k < kinds && !bad; k++)
                bad = note_vertex(&d, k, m, len);
            if (bad) {
                atomic_store(&failed, 1);
                publish(&d, m, t); /* let no one wait on this column */
                break;
            }
            publish(&d, m, len);
        }
    }
    for (size_t i = 0; i < ncs; i++) {
        for (size_t b = 0; d.cs[i].vtx && b < nblocks; b++)
            free(d.cs[i].vtx[b]);
        free(d.cs[i].vtx);
        for (int g = 0; g < 2; g++)
            free(d.cs[i].grp[g].q);
    }
    free(d.cs);
    return atomic_load(&failed) ? BPTT_ENOMEM : BPTT_OK;
}

/* ---- the closed form ----------------------------------------------------- */

static int64_t closed_form(size_t len, int64_t m, int64_t s)
{
    const int64_t l = (int64_t)len, two = 2 * l - 1 - m / s;
    return two > l ? two : l;
}

/* Tc(m) of the comment above, capped at cap. */
static int64_t closed_form_reach_s(int64_t m, int64_t s, int64_t cap)
{
    int64_t r = 1; /* the bottom of m's chain, m mod s < s */
    for (int64_t mm = m % s + s; mm <= m && r < cap; mm += s) {
        const int64_t F = mm / s + 1, a = 2 * F, b = F + 1 + r;
        r = a > b ? a : b;
    }
    return r < cap ? r : cap;
}

/* The first budget from which both kinds follow the closed form at every
 * length up to t (INT64_MAX if none up to top). */
static int64_t closed_form_from(size_t t, int64_t s, int64_t top)
{
    const int64_t need = (int64_t)t;
    /* H column m reaches 1 + Tc(m - s); rising in m: bisect */
    if (top < s || 1 + closed_form_reach_s(top - s, s, need) < need)
        return INT64_MAX;
    int64_t lo = s, hi = top;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (1 + closed_form_reach_s(mid - s, s, need) >= need)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The split the closed form's proof uses at a cell it covers. */
static int32_t closed_form_choice(int kind, size_t len, int64_t m, int64_t s)
{
    const int64_t l = (int64_t)len, F = m / s + 1;
    if (l <= 1 || kind == KIND_H || l <= F)
        return 1; /* l = 1: nothing stored; else internal y = 1 */
    return (int32_t)(F + 1 < l - F + 1 ? F + 1 : l - F + 1);
}

/* What a DP table over lengths 0..t and budgets up to max_m holds: the
 * stored width, the DP columns, the closed-form budget, the served range
 * and the number of start kinds (set in tb from its strategy's rules). */
static void dp_layout(bptt_table *tb)
{
    /* Beyond max(t h, (t-1) s + h) every state that can ever be useful
     * fits at once, so no budget above it changes any cost. */
    const int64_t sat = (int64_t)tb->t * tb->h > (int64_t)(tb->t - 1) * tb->s + tb->h
                            ? (int64_t)tb->t * tb->h
                            : (int64_t)(tb->t - 1) * tb->s + tb->h;
    tb->width = tb->max_m < sat ? tb->max_m : sat;
    tb->kinds = (tb->rules & RULE_PAPER) || !(tb->rules & RULE_INTERNAL)
                    ? 1
                    : 2;
    tb->fcol = INT64_MAX;
    tb->dpw = tb->width;
    tb->lo = 0;
    if (!tb->reference && (tb->rules & RULE_INTERNAL) &&
        !(tb->rules & RULE_PAPER)) {
        const int64_t f = closed_form_from(tb->t, tb->s, tb->width);
        if (f <= tb->width) {
            tb->fcol = f;
            tb->dpw = f - 1;
            if (tb->asked_lo >= f) { /* only closed-form budgets asked */
                tb->dpw = -1;
                tb->lo = f;
            }
        }
    }
}

/* Bytes of the stored columns (SIZE_MAX if they would not fit a size_t). */
static size_t dp_bytes(const bptt_table *tb)
{
    const size_t T1 = tb->t + 1, M1 = (size_t)(tb->dpw + 1);
    const size_t per = (sizeof(int64_t) + sizeof(int32_t)) * (size_t)tb->kinds;
    if (M1 && M1 > SIZE_MAX / T1 / per)
        return SIZE_MAX;
    return M1 * T1 * per;
}

static int dp_build(bptt_table *tb)
{
    if (tb->t > INT32_MAX)
        return BPTT_ETOOBIG;
    dp_layout(tb);
    if (tb->dpw < 0)
        return BPTT_OK; /* closed form only */

    const size_t T1 = tb->t + 1;
    const size_t M1 = (size_t)tb->dpw + 1;
    const int kinds = tb->kinds;
    const size_t bytes = dp_bytes(tb);
    if (bytes == SIZE_MAX)
        return BPTT_ETOOBIG;
    const size_t cells = M1 * T1;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0 &&
        bytes / 2 > (size_t)pages / 2 * (size_t)psize / 2)
        return BPTT_ETOOBIG; /* more than half of physical memory */
    for (int k = 0; k < kinds; k++) {
        tb->cost[k] = planner_malloc(cells * sizeof(int64_t));
        tb->choice[k] = planner_malloc(cells * sizeof(int32_t));
        if (!tb->cost[k] || !tb->choice[k])
            return BPTT_ENOMEM; /* bptt_table_free releases the rest */
    }
    tb->bytes += bytes;

    int nt = tb->threads;
#ifdef _OPENMP
    if (nt <= 0)
        nt = omp_get_max_threads();
#else
    nt = 1;
#endif
    if (!tb->reference)
        return fast_build(tb, tb->dpw + 1, nt);
    const long mmax = (long)tb->dpw;
    (void)nt;
    for (size_t len = 0; len <= tb->t; len++) {
        /* Cells of one length are independent across budgets. */
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt) if (len > 64)
        for (long m = 0; m <= mmax; m++)
            for (int k = 0; k < kinds; k++)
                dp_cell(tb, k, len, m);
    }
    return BPTT_OK;
}

static int64_t dp_cost(const bptt_table *tb, size_t len, int64_t m)
{
    if (len > tb->t || m < tb->lo || m > tb->max_m)
        return -1;
    if (m >= tb->fcol)
        return closed_form(len, m, tb->s);
    const int64_t c = at(tb, KIND_H, m < tb->width ? m : tb->width, len);
    return c >= INF ? -1 : c;
}

static int64_t dp_min_budget(size_t t, int64_t h, int64_t s, size_t k)
{
    (void)t, (void)s, (void)k;
    return h; /* h(0) alone: recompute from it before every backward */
}

/* Unrolling, with an explicit stack (depth can reach t). */
enum { TASK_SOLVE, TASK_ACTION };
typedef struct {
    uint8_t type, kind, from_internal, owns; /* SOLVE: start kind/source */
    uint32_t op;                             /* ACTION */
    size_t a, len;                           /* SOLVE: start, length */
    int64_t m;                               /* SOLVE: budget */
} task;

typedef struct {
    task *v;
    size_t n, cap;
} task_stack;

static int stack_push(task_stack *st, task tk)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 64;
        task *v = planner_realloc(st->v, cap * sizeof *v);
        if (!v)
            return BPTT_ENOMEM;
        st->v = v;
        st->cap = cap;
    }
    st->v[st->n++] = tk;
    return BPTT_OK;
}

static int push_action(task_stack *st, int op, size_t step)
{
    task tk = {.type = TASK_ACTION, .op = (uint32_t)op, .a = step};
    return stack_push(st, tk);
}

static int push_solve(task_stack *st, int kind, int from_internal, int owns,
                      size_t a, size_t len, int64_t m)
{
    task tk = {.type = TASK_SOLVE,
               .kind = (uint8_t)kind,
               .from_internal = (uint8_t)from_internal,
               .owns = (uint8_t)owns,
               .a = a,
               .len = len,
               .m = m};
    return stack_push(st, tk);
}

/* Emits actions and tracks the running position, so that a restore is
 * emitted only when the running state is not already where it is needed. */
typedef struct {
    bptt_plan *plan;
    long long pos; /* -1: no running state */
} emitter;

static int emit(emitter *e, int op, size_t step)
{
    if (op == BPTT_ADVANCE || op == BPTT_RESTORE_HIDDEN ||
        op == BPTT_RESTORE_INTERNAL)
        e->pos = (long long)step;
    else if (op == BPTT_BACKWARD)
        e->pos = -1;
    return bptt_plan_push(e->plan, op, step);
}

static int go_to(emitter *e, size_t a, int from_internal)
{
    if (e->pos == (long long)a)
        return BPTT_OK;
    return emit(e, from_internal ? BPTT_RESTORE_INTERNAL : BPTT_RESTORE_HIDDEN,
                a);
}

static int advance(emitter *e, size_t from, size_t to)
{
    int rc = BPTT_OK;
    for (size_t i = from + 1; i <= to && rc == BPTT_OK; i++)
        rc = emit(e, BPTT_ADVANCE, i);
    return rc;
}

static int dp_emit(const bptt_table *tb, int64_t m, bptt_plan *plan)
{
    const int paper = (tb->rules & RULE_PAPER) != 0;
    const int64_t h = tb->h, s = tb->s;
    const size_t T1 = tb->t + 1;
    task_stack st = {0};
    emitter e = {plan, 0};
    int rc = push_solve(&st, KIND_H, 0, 1, 0, tb->t, m);

    while (rc == BPTT_OK && st.n > 0) {
        const task tk = st.v[--st.n];
        if (tk.type == TASK_ACTION) {
            rc = emit(&e, (int)tk.op, tk.a);
            continue;
        }
        const size_t a = tk.a, len = tk.len;
        if (len == 0) {
            if (tk.owns)
                rc = emit(&e, BPTT_FREE_HIDDEN, a);
            continue;
        }
        const int32_t c =
            tk.m <= tb->dpw ? tb->choice[tk.kind][(size_t)tk.m * T1 + len]
                            : closed_form_choice(tk.kind, len, tk.m, s);
        if (c == 0) {
            rc = BPTT_EINFEASIBLE; /* not reached for feasible budgets */
            break;
        }
        const size_t y = (size_t)(c < 0 ? -c : c);
        if ((rc = go_to(&e, a, tk.from_internal)) != BPTT_OK ||
            (rc = advance(&e, a, a + y)) != BPTT_OK)
            break;
        if (c > 0 && y == len) { /* nothing stored: backward at once */
            if ((rc = emit(&e, BPTT_BACKWARD, a + y)) == BPTT_OK)
                rc = push_solve(&st, tk.kind, tk.from_internal, tk.owns, a,
                                len - 1, tk.m);
        } else if (c < 0) { /* hidden split: right part owns h(a+y) */
            const int64_t mr = (tk.kind == KIND_S) ? tk.m : tk.m - h;
            if ((rc = emit(&e, BPTT_SAVE_HIDDEN, a + y)) == BPTT_OK &&
                (rc = push_solve(&st, tk.kind, tk.from_internal, tk.owns, a,
                                 y, tk.m)) == BPTT_OK)
                rc = push_solve(&st, KIND_H, 0, 1, a + y, len - y, mr);
        } else { /* internal split */
            int rk = KIND_S;
            int64_t mr;
            int left_needed = 1;
            if (paper) {
                rk = KIND_H;
                mr = tk.m - s;
            } else if (tk.kind == KIND_H && y == 1) {
                /* the start is needed by nothing after this: free it */
                rc = emit(&e, BPTT_FREE_HIDDEN, a);
                mr = tk.m - s;
                left_needed = 0;
            } else if (tk.kind == KIND_H) {
                mr = tk.m - h - s;
            } else {
                mr = tk.m - s;
            }
            if (rc == BPTT_OK)
                rc = emit(&e, BPTT_SAVE_INTERNAL, a + y);
            if (rc == BPTT_OK && left_needed)
                rc = push_solve(&st, tk.kind, tk.from_internal, tk.owns, a,
                                y - 1, tk.m);
            if (rc == BPTT_OK)
                rc = push_action(&st, BPTT_FREE_INTERNAL, a + y);
            if (rc == BPTT_OK)
                rc = push_action(&st, BPTT_BACKWARD, a + y);
            if (rc == BPTT_OK)
                rc = push_solve(&st, rk, 1, 0, a + y, len - y, mr);
        }
    }
    free(st.v);
    return rc;
}

/* ---- full BPTT ----------------------------------------------------------- */

static int64_t full_cost(const bptt_table *tb, size_t len, int64_t m)
{
    return m >= bptt_full_peak(len, tb->h, tb->s) ? (int64_t)len : -1;
}

static int64_t full_min_budget(size_t t, int64_t h, int64_t s, size_t k)
{
    (void)k;
    return bptt_full_peak(t, h, s);
}

static int full_emit(const bptt_table *tb, int64_t m, bptt_plan *plan)
{
    (void)m;
    const size_t t = tb->t;
    int rc = bptt_plan_push(plan, BPTT_ADVANCE, 1);
    if (rc == BPTT_OK)
        rc = bptt_plan_push(plan, BPTT_FREE_HIDDEN, 0);
    for (size_t i = 1; i <= t && rc == BPTT_OK; i++) {
        if (i > 1)
            rc = bptt_plan_push(plan, BPTT_ADVANCE, i);
        if (rc == BPTT_OK && i < t)
            rc = bptt_plan_push(plan, BPTT_SAVE_INTERNAL, i);
    }
    if (rc == BPTT_OK)
        rc = bptt_plan_push(plan, BPTT_BACKWARD, t);
    for (size_t i = t - 1; i >= 1 && rc == BPTT_OK; i--) {
        rc = bptt_plan_push(plan, BPTT_BACKWARD, i);
        if (rc == BPTT_OK)
            rc = bptt_plan_push(plan, BPTT_FREE_INTERNAL, i);
    }
    return rc;
}

/* ---- Chen's sqrt(t) ------------------------------------------------------ */

/* Chen's segment for length len: k (0: the default), at most len. */
static size_t chen_k(size_t k, size_t len)
{
    if (!k)
        k = bptt_chen_default_segment(len);
    return k > len ? len : k;
}

static int64_t chen_cost(const bptt_table *tb, size_t len, int64_t m)
{
    if (len == 0)
        return 0;
    const size_t k = chen_k(tb->chen_k, len);
    return m >= bptt_chen_peak(len, k, tb->h, tb->s) ? bptt_chen_cost(len, k)
                                                     : -1;
}

static int64_t chen_min_budget(size_t t, int64_t h, int64_t s, size_t k)
{
    return bptt_chen_peak(t, chen_k(k, t), h, s);
}

static int chen_emit(const bptt_table *tb, int64_t m, bptt_plan *plan)
{
    (void)m;
    const size_t t = tb->t, k = chen_k(tb->chen_k, t);
    const size_t n = (t + k - 1) / k;
    int rc = BPTT_OK;
    /* first sweep: keep the hidden state at every segment start */
    for (size_t i = 1; i <= t && rc == BPTT_OK; i++) {
        rc = bptt_plan_push(plan, BPTT_ADVANCE, i);
        if (rc == BPTT_OK && i % k == 0 && i / k < n)
            rc = bptt_plan_push(plan, BPTT_SAVE_HIDDEN, i);
    }
    /* last segment first: recompute keeping internal states, go back */
    for (size_t j = n; j-- > 0 && rc == BPTT_OK;) {
        const size_t a = j * k, b = (j + 1) * k < t ? (j + 1) * k : t;
        rc = bptt_plan_push(plan, BPTT_RESTORE_HIDDEN, a);
        for (size_t i = a + 1; i <= b && rc == BPTT_OK; i++) {
            rc = bptt_plan_push(plan, BPTT_ADVANCE, i);
            if (rc == BPTT_OK && i < b)
                rc = bptt_plan_push(plan, BPTT_SAVE_INTERNAL, i);
        }
        if (rc == BPTT_OK)
            rc = bptt_plan_push(plan, BPTT_BACKWARD, b);
        for (size_t i = b - 1; i > a && rc == BPTT_OK; i--) {
            rc = bptt_plan_push(plan, BPTT_BACKWARD, i);
            if (rc == BPTT_OK)
                rc = bptt_plan_push(plan, BPTT_FREE_INTERNAL, i);
        }
        if (rc == BPTT_OK)
            rc = bptt_plan_push(plan, BPTT_FREE_HIDDEN, a);
    }
    return rc;
}

static int nothing_to_build(bptt_table *tb)
{
    (void)tb;
    return BPTT_OK;
}

/* ---- the strategy table -------------------------------------------------- */

/* The rule set of each DP strategy, keyed by its type object. */
#define DP_STRATEGY(var, nm, text)                                          \
    static int var##_build(bptt_table *tb);                                \
    const bptt_strategy var = {nm, text, var##_build, dp_cost, dp_emit,     \
                               dp_min_budget}

DP_STRATEGY(bptt_strategy_hsm, "hsm",
            "BPTT-HSM: hidden states only (= binomial checkpointing)");
DP_STRATEGY(bptt_strategy_ism, "ism",
            "BPTT-ISM: internal states only, optimal over all schedules");
DP_STRATEGY(bptt_strategy_msm, "msm",
            "BPTT-MSM: hidden and internal states, optimal over all schedules");
DP_STRATEGY(bptt_strategy_ism_paper, "ism-paper",
            "BPTT-ISM by the paper's literal recursion");
DP_STRATEGY(bptt_strategy_msm_paper, "msm-paper",
            "BPTT-MSM by the paper's literal recursion");

static int bptt_strategy_hsm_build(bptt_table *tb)
{
    tb->rules = RULE_HIDDEN;
    return dp_build(tb);
}
static int bptt_strategy_ism_build(bptt_table *tb)
{
    tb->rules = RULE_INTERNAL;
    return dp_build(tb);
}
static int bptt_strategy_msm_build(bptt_table *tb)
{
    tb->rules = RULE_HIDDEN | RULE_INTERNAL;
    return dp_build(tb);
}
static int bptt_strategy_ism_paper_build(bptt_table *tb)
{
    tb->rules = RULE_INTERNAL | RULE_PAPER;
    return dp_build(tb);
}
static int bptt_strategy_msm_paper_build(bptt_table *tb)
{
    tb->rules = RULE_HIDDEN | RULE_INTERNAL | RULE_PAPER;
    return dp_build(tb);
}

const bptt_strategy bptt_strategy_full = {
    "full", "full BPTT: every internal state kept", nothing_to_build,
    full_cost, full_emit, full_min_budget};
const bptt_strategy bptt_strategy_chen = {
    "chen", "Chen's sqrt(t): hidden state at each segment start",
    nothing_to_build, chen_cost, chen_emit, chen_min_budget};

const bptt_strategy *const bptt_strategies[] = {
    &bptt_strategy_full,      &bptt_strategy_chen, &bptt_strategy_hsm,
    &bptt_strategy_ism,       &bptt_strategy_msm,  &bptt_strategy_ism_paper,
    &bptt_strategy_msm_paper, NULL};

const bptt_strategy *bptt_strategy_find(const char *name)
{
    for (size_t i = 0; bptt_strategies[i]; i++)
        if (strcmp(bptt_strategies[i]->name, name) == 0)
            return bptt_strategies[i];
    return NULL;
}

size_t bptt_names_text(char *buf, size_t cap, const char *const *names,
                       size_t n, const char *last)
{
    size_t len = 0;
    if (cap)
        buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *sep = i == 0 ? "" : i + 1 == n ? last : ", ";
        const size_t at = len < cap ? len : cap;
        const int k = snprintf(cap ? buf + at : NULL, cap - at, "%s%s", sep,
                               names[i]);
        len += k > 0 ? (size_t)k : 0;
    }
    return len;
}

size_t bptt_strategy_names(char *buf, size_t cap, const char *last)
{
    const char *names[16];
    size_t n = 0;
    while (bptt_strategies[n] && n < 16) {
        names[n] = bptt_strategies[n]->name;
        n++;
    }
    return bptt_names_text(buf, cap, names, n, last);
}

/* ---- the table object ---------------------------------------------------- */

int bptt_table_alloc(bptt_table **out, const bptt_strategy *strategy,
                     size_t t, int64_t h, int64_t s, int64_t max_m,
                     const bptt_table_options *opts)
{
    *out = NULL;
    if (!strategy || t < 1 || t > UINT32_MAX - 1 || h < 1 || s < h ||
        max_m < 0)
        return BPTT_EINVAL;
    bptt_table *tb = planner_calloc(1, sizeof *tb);
    if (!tb)
        return BPTT_ENOMEM;
    tb->strategy = strategy;
    tb->t = t;
    tb->h = h;
    tb->s = s;
    tb->max_m = max_m;
    tb->bytes = sizeof *tb;
    tb->fcol = INT64_MAX;
    if (opts) {
        tb->chen_k = opts->chen_segment;
        tb->threads = opts->threads;
        tb->reference = opts->reference;
        tb->asked_lo = opts->min_budget;
    }
    int rc = strategy->build(tb);
    if (rc != BPTT_OK) {
        bptt_table_free(tb);
        return rc;
    }
    *out = tb;
    return BPTT_OK;
}

void bptt_table_free(bptt_table *tb)
{
    if (!tb)
        return;
    for (int k = 0; k < 2; k++) {
        free(tb->cost[k]);
        free(tb->choice[k]);
    }
    free(tb);
}

size_t bptt_table_length(const bptt_table *tb) { return tb->t; }
int64_t bptt_table_max_budget(const bptt_table *tb) { return tb->max_m; }
const bptt_strategy *bptt_table_strategy(const bptt_table *tb)
{
    return tb->strategy;
}
size_t bptt_table_bytes(const bptt_table *tb) { return tb->bytes; }
int64_t bptt_table_min_served(const bptt_table *tb) { return tb->lo; }
int64_t bptt_table_closed_form_from(const bptt_table *tb) { return tb->fcol; }

size_t bptt_table_bytes_needed(const bptt_strategy *strategy, size_t t,
                                int64_t h, int64_t s, int64_t max_m,
                                const bptt_table_options *opts)
{
    bptt_table tb = {.strategy = strategy, .t = t, .h = h, .s = s,
                     .max_m = max_m};
    if (!strategy || t < 1 || t > INT32_MAX || h < 1 || s < h || max_m < 0)
        return 0;
    if (opts) {
        tb.reference = opts->reference;
        tb.asked_lo = opts->min_budget;
    }
    static const struct {
        const bptt_strategy *st;
        unsigned rules;
    } dp[] = {{&bptt_strategy_hsm, RULE_HIDDEN},
              {&bptt_strategy_ism, RULE_INTERNAL},
              {&bptt_strategy_msm, RULE_HIDDEN | RULE_INTERNAL},
              {&bptt_strategy_ism_paper, RULE_INTERNAL | RULE_PAPER},
              {&bptt_strategy_msm_paper,
               RULE_HIDDEN | RULE_INTERNAL | RULE_PAPER}};
    for (size_t i = 0; i < sizeof dp / sizeof dp[0]; i++)
        if (dp[i].st == strategy) {
            tb.rules = dp[i].rules;
            dp_layout(&tb);
            const size_t b = dp_bytes(&tb);
            return b == SIZE_MAX ? SIZE_MAX : b + sizeof tb;
        }
    return sizeof tb; /* full, chen: nothing beyond the object */
}

int64_t bptt_table_cost_at(const bptt_table *tb, size_t t, int64_t m)
{
    if (t > tb->t || m < tb->lo || m > tb->max_m)
        return -1;
    return tb->strategy->cost(tb, t, m);
}

int64_t bptt_table_cost(const bptt_table *tb, int64_t m)
{
    if (m < tb->lo || m > tb->max_m)
        return -1;
    return tb->strategy->cost(tb, tb->t, m);
}

int64_t bptt_table_min_budget(const bptt_table *tb)
{
    return tb->strategy->min_budget(tb->t, tb->h, tb->s, tb->chen_k);
}

int64_t bptt_strategy_min_budget(const bptt_strategy *st, size_t t,
                                 int64_t h, int64_t s,
                                 const bptt_table_options *opts)
{
    return st->min_budget(t, h, s, opts ? opts->chen_segment : 0);
}

int64_t bptt_table_tight_budget(const bptt_table *tb, int64_t m)
{
    const int64_t c = bptt_table_cost(tb, m);
    if (c < 0)
        return -1;
    /* costs never rise with the budget: bisect for the first budget
     * that costs c */
    int64_t lo = tb->lo, hi = m;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (bptt_table_cost(tb, mid) == c)
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi;
}

int bptt_table_plan(const bptt_table *tb, int64_t m, bptt_plan **out,
                    int64_t *min_feasible)
{
    *out = NULL;
    if (min_feasible)
        *min_feasible = bptt_table_min_budget(tb);
    if (m < tb->lo || m > tb->max_m)
        return BPTT_EINVAL;
    const int64_t mt = bptt_table_tight_budget(tb, m);
    if (mt < 0)
        return BPTT_EINFEASIBLE;
    bptt_plan *plan;
    int rc = bptt_plan_alloc(&plan, tb->t, tb->h, tb->s, m);
    if (rc != BPTT_OK)
        return rc;
    rc = tb->strategy->emit(tb, mt, plan);
    if (rc != BPTT_OK) {
        bptt_plan_free(plan);
        return rc;
    }
    *out = plan;
    return BPTT_OK;
}
