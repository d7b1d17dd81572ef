/* fast.c: the fast build of the DP tables (table.c): exact shortcuts over
 * the plain scan, run by columns over OpenMP threads.
 */
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "dp_cell.h"
#include "costs.h"
#include "threads.h"

/* ---- the fast DP ----------------------------------------------------------
 *
 * Exact shortcuts over the plain scan's cell (planner_dp_cell, dp_cell.c;
 * doc/design.md 4 gives the proofs; tests/test_planner.c compares every
 * cell with the plain DP up to t = 2000):
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
 * Ties go to the same option as in planner_dp_cell, so the plans are the same too.
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
 * the published ones while the owner appends: blocks of 2^vshift, about
 * sqrt(t) (16 to 256), so that short tables waste little on them. */
static int vtx_shift(size_t t)
{
    int k = 4;
    while (k < 8 && ((size_t)1 << (2 * k)) < t + 1)
        k++;
    return k;
}

typedef struct {
    int32_t **vtx;   /* blocks of positions p where cost(p+1) - cost(p)
                        changes, rising */
    size_t nv;       /* vertices so far (the owner's count) */
    _Atomic uint64_t published; /* lengths done << 32 | vertices then */
    _Atomic int64_t nonconvex; /* first position p where cost(p+1) -
                                  cost(p) < cost(p) - cost(p-1) (INT64_MAX:
                                  none yet); set before publishing */
    int64_t full;    /* F: cost(i) = i for every i <= F */
    int64_t g[NSLOPES]; /* min over computed i > F of cost(i) + (1 - a) i */
    group_state grp[2]; /* [0]: internal splits, [1]: hidden splits */
} col_state;

static inline int32_t vtx_at(const col_state *c, size_t i, int sh)
{
    return c->vtx[i >> sh][i & (((size_t)1 << sh) - 1)];
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
    int vshift;      /* vertex blocks of 2^vshift */
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
    g[0].rm = paper || kind == KIND_S ? col_minus(tb, m, DEP_S)
                                          : col_minus(tb, m, DEP_HS);
    g[0].sh = 1;
    g[0].sign = 1;
    g[0].ok = (tb->rules & RULE_INTERNAL) && len >= 3 && g[0].rm >= 0;
    g[1].rk = KIND_H;
    g[1].rm = kind == KIND_S ? m : col_minus(tb, m, DEP_H);
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
    const col_state *lc = col(d, kind, m);
    const col_state *rc = col(d, gp->rk, gp->rm);
    if (atomic_load_explicit(&lc->nonconvex, memory_order_relaxed) >=
            len - 1 &&
        atomic_load_explicit(&rc->nonconvex, memory_order_relaxed) >=
            len - 2) {
        /* both columns convex where the group reads them (L at 1..len-1,
         * R at 1..len-2): the group is convex in y, and its smallest
         * minimiser is the first y whose next difference is >= 0 */
        int64_t lo = ylo, hi = yhi;
        while (lo < hi) {
            const int64_t y = lo + (hi - lo) / 2;
            const int64_t dv = 1 + R[len - y - 1] - R[len - y] +
                               L[y + 1 - sh] - L[y - sh];
            if (dv >= 0)
                hi = y;
            else
                lo = y + 1;
        }
        *bv = lo + R[len - lo] + L[lo - sh];
        *by = lo;
        return;
    }
    EVAL(ylo);
    EVAL(yhi);
    for (size_t i = 0; i < lc->nv; i++) {
        const int64_t y = vtx_at(lc, i, d->vshift) + sh;
        if (y >= yhi)
            break;
        if (y > ylo)
            EVAL(y);
    }
    /* another column's vertices: only those it has published (all that
     * matter here: positions up to len - 2) */
    const size_t rnv =
        gp->rm == m ? rc->nv
                    : (size_t)(atomic_load_explicit(&rc->published,
                                                    memory_order_acquire) &
                               0xffffffffu);
    for (size_t i = 0; i < rnv; i++) {
        const int64_t y = len - vtx_at(rc, i, d->vshift);
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

/* One cell by the shortcuts; the same cost and choice as planner_dp_cell. */
static int fast_cell(const fast_dp *d, int kind, size_t len, int64_t m)
{
    bptt_table *tb = d->tb;
    const unsigned rules = tb->rules;
    const int paper = (rules & RULE_PAPER) != 0;
    const int64_t h = tb->h, s = tb->s, mb = col_budget(tb, m);
    const size_t idx = (size_t)m * (tb->t + 1) + len;
    col_state *c = col(d, kind, m);
    int64_t best = INF;
    int32_t choice = 0;

    if (len == 0 || (kind == KIND_H && mb < h)) {
        tb->cost[kind][idx] = (kind == KIND_H && mb < h) ? INF : 0;
        tb->choice[kind][idx] = 0;
        if (len == 0)
            for (int a = 0; a < NSLOPES; a++)
                c->g[a] = INF;
        return 0;
    }
    const int64_t L = (int64_t)len;
    int64_t lb = (rules & RULE_INTERNAL) ? L : 2 * L - 1;
    if ((rules & RULE_INTERNAL) && !paper && 2 * L - 1 - mb / s > lb)
        lb = 2 * L - 1 - mb / s;

    split_group g[2];
    split_groups(tb, kind, len, m, g);
    if (L >= c->full + 2)
        for (int i = 0; i < 2; i++)
            if (g[i].ok && group_advance(d, c, &c->grp[i], &g[i], L) != 0)
                return -1;

    planner_cheap_options(tb, kind, len, m, lb, &best, &choice);
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
    if (C[len] - C[len - 1] < C[len - 1] - C[len - 2] &&
        atomic_load_explicit(&c->nonconvex, memory_order_relaxed) ==
            INT64_MAX)
        atomic_store_explicit(&c->nonconvex, (int64_t)len - 1,
                              memory_order_relaxed);
    const int sh = d->vshift;
    const size_t mask = ((size_t)1 << sh) - 1;
    if ((c->nv & mask) == 0 &&
        !(c->vtx[c->nv >> sh] =
              planner_malloc((mask + 1) * sizeof **c->vtx)))
        return -1;
    c->vtx[c->nv >> sh][c->nv & mask] = (int32_t)(len - 1);
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
    const int64_t deps[3] = {col_minus(tb, m, DEP_H), col_minus(tb, m, DEP_S),
                             col_minus(tb, m, DEP_HS)};
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
/* What the threads of one build share: the columns are taken in rising
 * order from next, each built length by length after the one before it
 * (wait_for), until failed. */
typedef struct {
    fast_dp *d;
    _Atomic int64_t *next;
    _Atomic int *failed;
} build_job;

static void build_columns(void *arg)
{
    const build_job *j = arg;
    fast_dp *d = j->d;
    const int kinds = d->tb->kinds;
    const size_t t = d->tb->t;
    for (;;) {
        const int64_t m = atomic_fetch_add(j->next, 1);
        if (m >= d->ncols || atomic_load(j->failed))
            break;
        for (size_t len = 0; len <= t; len++) {
            int bad = wait_for(d, m, len, j->failed);
            for (int k = 0; k < kinds && !bad; k++)
                bad = fast_cell(d, k, len, m);
            for (int k = 0; k < kinds && !bad; k++)
                bad = note_vertex(d, k, m, len);
            if (bad) {
                atomic_store(j->failed, 1);
                publish(d, m, t); /* let no one wait on this column */
                break;
            }
            publish(d, m, len);
        }
    }
}

int planner_fast_build(bptt_table *tb, int64_t ncols, int nt)
{
    fast_dp d = {tb, NULL, ncols, vtx_shift(tb->t)};
    const size_t ncs = (size_t)tb->kinds * (size_t)ncols;
    const size_t nblocks = (tb->t >> d.vshift) + 1;
    d.cs = planner_calloc(ncs, sizeof *d.cs);
    if (!d.cs)
        return BPTT_ENOMEM;
    _Atomic int failed = 0;
    _Atomic int64_t next = 0;
    for (size_t i = 0; i < ncs; i++) {
        atomic_init(&d.cs[i].published, 0);
        atomic_init(&d.cs[i].nonconvex, INT64_MAX);
        if (!(d.cs[i].vtx = planner_calloc(nblocks, sizeof *d.cs[i].vtx)))
            atomic_store(&failed, 1);
    }
    if (ncols < 2 || tb->t < 64)
        nt = 1;
    build_job job = {&d, &next, &failed};
    planner_run(nt, build_columns, &job);
    for (size_t i = 0; i < ncs; i++) {
        for (size_t b = 0; d.cs[i].vtx && b < nblocks; b++)
            planner_free(d.cs[i].vtx[b]);
        planner_free(d.cs[i].vtx);
        for (int g = 0; g < 2; g++)
            planner_free(d.cs[i].grp[g].q);
    }
    planner_free(d.cs);
    return atomic_load(&failed) ? BPTT_ENOMEM : BPTT_OK;
}

/* What planner_fast_build allocates besides the table, at most: the
 * column states; per column and kind the vertex blocks' index, the blocks
 * (at most t - 1 vertices), and two windows of F + 2 positions, F the
 * longest length the column stores whole: F (s) <= budget, so F <=
 * floor(budget / s) + 1 (and <= t). */
size_t planner_fast_scratch_bytes(const bptt_table *tb)
{
    if (tb->ncols <= 0)
        return 0;
    const size_t t = tb->t, ncs = (size_t)tb->kinds * (size_t)tb->ncols;
    const int sh = vtx_shift(t);
    const size_t nblocks = (t >> sh) + 1;
    const size_t used = t >= 2 ? ((t - 1) >> sh) + 1 : 0; /* blocks used */
    const int64_t fmax = tb->dpw / tb->s + 1; /* dpw: the largest budget */
    const size_t F = (uint64_t)fmax < (uint64_t)t ? (size_t)fmax : t;
    const size_t per = nblocks * sizeof(int32_t *) + PLANNER_SMALL_SLACK +
                       used * (((size_t)1 << sh) * sizeof(int32_t) +
                               PLANNER_SMALL_SLACK) +
                       2 * ((F + 2) * sizeof(int32_t) + PLANNER_SMALL_SLACK);
    if (ncs > (SIZE_MAX / 2) / (per + sizeof(col_state)))
        return SIZE_MAX;
    return ncs * (per + sizeof(col_state)) + PLANNER_ALLOC_SLACK;
}
