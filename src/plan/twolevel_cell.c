/* twolevel_cell.c: one cell of the two-level table (twolevel_impl.h:
 * twolevel_fill_cell), the recursion of doc/twolevel.md 2; twolevel.c
 * fills the table with it, on one thread or several.
 *
 * A segment of n steps starts at a state of one of four kinds:
 *   H   a hidden state in fast memory that the segment owns,
 *   S   the hidden part of an internal state a parent keeps in fast memory,
 *   DH  a hidden state on the slow level that the segment owns,
 *   DS  an internal state a parent keeps on the slow level.
 * X(n, m, d) is the least cost of the segment with m fast and d slow units
 * (the owned start's included), the running state at its start.  The
 * first state stored after the start, at step y of the segment, on either
 * level and of either kind, splits it; or nothing is stored; or the start
 * moves level before anything runs (doc/twolevel.md 2). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bptt.h"
#include "twolevel.h"
#include "twolevel_impl.h"

static int64_t restart_cost(const bptt_twolevel *tl, int k)
{
    return k == TK_DH ? tl->rh : k == TK_DS ? tl->rs : 0;
}

static int feasible(const bptt_twolevel *tl, int k, int64_t mi, int64_t di)
{
    if (k == TK_H)
        return fval(tl, mi) >= tl->h;
    if (k == TK_DH)
        return dval(tl, di) >= tl->h;
    return 1;
}

static void consider(int64_t c, int opt, size_t y, int64_t *best,
                     int32_t *ch)
{
    if (c < *best) {
        *best = c;
        *ch = (int32_t)((int64_t)opt | (int64_t)y << 4);
    }
}

static int64_t add(int64_t a, int64_t b)
{
    return (a >= TL_INF || b >= TL_INF) ? TL_INF : a + b;
}

/* A group of splits: for y in [lo, hi],
 *     f(y) = y + c + X_ck(n - y, cm, cd) + r + X_k(y - sh, mi, di),
 * the child's column and the segment's own. */
typedef struct {
    int opt, ck, sh;
    int64_t c, cm, cd;
} group;

static size_t column(const bptt_twolevel *tl, int k, int64_t mi, int64_t di)
{
    return ((size_t)k * (size_t)tl->nm + (size_t)mi) * (size_t)tl->nd +
           (size_t)di;
}

static int64_t group_at(const bptt_twolevel *tl, const group *g, int k,
                        size_t n, int64_t mi, int64_t di, int64_t r,
                        size_t y)
{
    return add((int64_t)y * TL_Q + g->c,
               add(get(tl, g->ck, g->cm, g->cd, n - y),
                   add(r, get(tl, k, mi, di, y - (size_t)g->sh))));
}

/* An exact fraction num / den, den >= 1. */
typedef struct {
    __int128 num;
    int64_t den;
} frac;

static int frac_lt(frac a, frac b)
{
    return a.num * b.den < b.num * a.den;
}

/* The lower convex hull of column col at length x (x at most the last
 * length filled), exactly. */
static frac hull_at(const bptt_twolevel *tl, size_t col, size_t x)
{
    const int32_t *hp = tl->hull + col * (tl->t + 1);
    const size_t nh = tl->nhull[col];
    const int64_t *cv = tl->cost + col * (tl->t + 1);
    size_t lo = 0, hi = nh - 1; /* the last hull length <= x */
    while (lo < hi) {
        const size_t mid = lo + (hi - lo + 1) / 2;
        if ((size_t)hp[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    const size_t x1 = (size_t)hp[lo];
    if (x1 == x || lo + 1 >= nh)
        return (frac){cv[x1], 1};
    const size_t x2 = (size_t)hp[lo + 1];
    const int64_t den = (int64_t)(x2 - x1);
    return (frac){(__int128)cv[x1] * den +
                      (__int128)(cv[x2] - cv[x1]) * (int64_t)(x - x1),
                  den};
}

/* The group's lower bound at y: both columns replaced by their hulls. */
static frac group_lb(const bptt_twolevel *tl, const group *g, size_t cc,
                     size_t co, size_t n, int64_t r, size_t y)
{
    const frac a = hull_at(tl, cc, n - y);
    const frac b = hull_at(tl, co, y - (size_t)g->sh);
    const __int128 base = (__int128)((int64_t)y * TL_Q + g->c + r);
    return (frac){base * a.den * b.den + a.num * b.den + b.num * a.den,
                  a.den * b.den};
}

/* The least f(y) over [lo, hi] that beats *best, exactly.  With each
 * column replaced by its lower convex hull the group becomes a convex
 * function lb(y) <= f(y): every y with f(y) < *best has lb(y) < *best,
 * and those y form one range around lb's minimum.  So lb's minimum is
 * found by bisection and f is tried outwards from it while lb stays
 * below the best so far (doc/twolevel.md 3). */
static void group_min(bptt_twolevel *tl, const group *g, int k,
                      size_t n, int64_t mi, int64_t di, int64_t r,
                      size_t lo, size_t hi, int64_t *best, int32_t *ch)
{
    if (lo > hi || g->cm < 0 || g->cd < 0)
        return;
    /* a segment one step longer costs at least one forward op more, so
     * f(y) >= hi + c + r + X_ck(n - hi) + X_k(lo - sh) over the range */
    if (add((int64_t)hi * TL_Q + g->c + r,
            add(get(tl, g->ck, g->cm, g->cd, n - hi),
                get(tl, k, mi, di, lo - (size_t)g->sh))) >= *best)
        return;
    const size_t cc = column(tl, g->ck, g->cm, g->cd);
    const size_t co = column(tl, k, mi, di);
    /* lb descends at y when lb(y + 1) < lb(y): true up to lb's least
     * point and false from it (convexity), so that point is found from
     * the least point at the length before, galloping then bisecting */
#define DESC(y) ((y) < hi && frac_lt(group_lb(tl, g, cc, co, n, r, (y) + 1), \
                                     group_lb(tl, g, cc, co, n, r, (y))))
    size_t *hint = &tl->hint[co * 4 + (size_t)(g->opt - OPT_HF)];
    size_t a, b; /* the answer lies in [a, b], DESC(b) false */
    size_t y0 = *hint < lo ? lo : *hint > hi ? hi : *hint;
    if (DESC(y0)) {
        a = y0 + 1;
        size_t step = 1;
        b = y0 + 1;
        while (DESC(b)) {
            a = b + 1;
            b = hi - b > step ? b + step : hi;
            step *= 2;
        }
    } else {
        b = y0;
        size_t step = 1;
        a = y0;
        while (a > lo) {
            const size_t c = a - lo > step ? a - step : lo;
            if (DESC(c)) {
                a = c + 1;
                break;
            }
            b = c;
            a = c;
            step *= 2;
        }
    }
    while (a < b) {
        const size_t mid = a + (b - a) / 2;
        if (DESC(mid))
            a = mid + 1;
        else
            b = mid;
    }
#undef DESC
    *hint = a;
    for (size_t y = a;; y--) {
        if (!frac_lt(group_lb(tl, g, cc, co, n, r, y), (frac){*best, 1}))
            break;
        consider(group_at(tl, g, k, n, mi, di, r, y), g->opt, y, best, ch);
        if (y == lo)
            break;
    }
    for (size_t y = a + 1; y <= hi; y++) {
        if (!frac_lt(group_lb(tl, g, cc, co, n, r, y), (frac){*best, 1}))
            break;
        consider(group_at(tl, g, k, n, mi, di, r, y), g->opt, y, best, ch);
    }
}

/* The options of kind k at (n >= 1, mi, di) before any change of level. */
static void base_cell(bptt_twolevel *tl, int k, size_t n, int64_t mi,
                      int64_t di, int64_t *best, int32_t *ch)
{
    const int64_t h = tl->h, s = tl->s, Q = TL_Q;
    const int64_t r = restart_cost(tl, k);
    /* the budgets left once an owned start is counted (values), and
     * their columns */
    const int of = owns_fast(k), os = owns_slow(k);
    const int64_t mv = fval(tl, mi), dv = dval(tl, di);
    const int64_t mfv = mv - (of ? h : 0), dfv = dv - (os ? h : 0);
    const int64_t mf = fsub(tl, mi, of, 0), df = dsub(tl, di, os, 0);
    /* a DS segment ends with s(start) read back for its backward (its
     * left part of length 0 costs that read) */
    const int ds = k == TK_DS;
    *best = TL_INF;
    *ch = 0;
    /* nothing stored */
    consider(n > 1 || ds
                 ? add((int64_t)n * Q, add(r, get(tl, k, mi, di, n - 1)))
                 : Q,
             OPT_NOTHING, n, best, ch);
    if (n < 2)
        return;
    /* an internal state at y = 1: an owned start is freed first (the
     * left part is empty), so the whole of both budgets is left */
    if (tl->msm) {
        const int64_t tail = ds ? r : 0;
        if (mv >= s)
            consider(add(Q + tail, get(tl, TK_S, fsub(tl, mi, 0, 1), di,
                                       n - 1)),
                     OPT_IF, 1, best, ch);
        if (dv >= s)
            consider(add(Q + tl->ws + tail,
                         get(tl, TK_DS, mi, dsub(tl, di, 0, 1), n - 1)),
                     OPT_IS, 1, best, ch);
    }
    group g;
    if (mfv >= h) {
        g = (group){OPT_HF, TK_H, 0, 0, mf, df};
        group_min(tl, &g, k, n, mi, di, r, 1, n - 1, best, ch);
    }
    if (dfv >= h) {
        g = (group){OPT_HS, TK_DH, 0, tl->wh, mf, df};
        group_min(tl, &g, k, n, mi, di, r, 1, n - 1, best, ch);
    }
    if (!tl->msm)
        return;
    if (mfv >= s) {
        g = (group){OPT_IF, TK_S, 1, 0, fsub(tl, mi, of, 1), df};
        group_min(tl, &g, k, n, mi, di, r, 2, n - 1, best, ch);
    }
    if (dfv >= s) {
        g = (group){OPT_IS, TK_DS, 1, tl->ws, mf, dsub(tl, di, os, 1)};
        group_min(tl, &g, k, n, mi, di, r, 2, n - 1, best, ch);
    }
}

/* Length n, just filled, joins its column's lower convex hull: the last
 * hull point is dropped while it does not lie strictly below the line
 * from the one before it to n. */
static void hull_push(bptt_twolevel *tl, size_t col, size_t n)
{
    int32_t *hp = tl->hull + col * (tl->t + 1);
    const int64_t *cv = tl->cost + col * (tl->t + 1);
    size_t nh = tl->nhull[col];
    while (nh >= 2) {
        const size_t x1 = (size_t)hp[nh - 2], x2 = (size_t)hp[nh - 1];
        /* (x2, v2) is on or above the chord from (x1, v1) to (n, vn) */
        const __int128 lhs = (__int128)(cv[x2] - cv[x1]) * (int64_t)(n - x1);
        const __int128 rhs = (__int128)(cv[n] - cv[x1]) * (int64_t)(x2 - x1);
        if (lhs < rhs)
            break;
        nh--;
    }
    hp[nh++] = (int32_t)n;
    tl->nhull[col] = nh;
}

/* Fill the cells of length n in column (mi, di), all four kinds. */
void twolevel_fill_cell(bptt_twolevel *tl, size_t n, int64_t mi, int64_t di)
{
    int64_t b[TK_N];
    int32_t c[TK_N];
    for (int k = 0; k < TK_N; k++) {
        b[k] = TL_INF;
        c[k] = 0;
        if (!tl->msm && (k == TK_S || k == TK_DS))
            continue;
        if (!feasible(tl, k, mi, di))
            continue;
        if (n == 0)
            b[k] = 0;
        else
            base_cell(tl, k, n, mi, di, &b[k], &c[k]);
    }
    if (n > 0) {
        /* a change of level of the start, before anything runs;
         * chains of them only add cost (doc/twolevel.md 2) */
        const int64_t hb = b[TK_H], dhb = b[TK_DH];
        consider(add(tl->wh, dhb), OPT_TO_DH, 0, &b[TK_H], &c[TK_H]);
        consider(hb, OPT_TO_H, 0, &b[TK_DH], &c[TK_DH]);
        if (tl->msm) {
            /* DS: h(start) kept apart (then s(start) read back for
             * its backward at the end), or s(start) moved to fast
             * memory whole, freeing the slow level */
            consider(add(hb, tl->rs), OPT_TO_H, 0, &b[TK_DS],
                     &c[TK_DS]);
            consider(add(tl->wh, add(dhb, tl->rs)), OPT_TO_DH, 0,
                     &b[TK_DS], &c[TK_DS]);
            if (fval(tl, mi) >= tl->s)
                consider(get(tl, TK_S, fsub(tl, mi, 0, 1),
                             dadd_s(tl, di), n),
                         OPT_TO_S, 0, &b[TK_DS], &c[TK_DS]);
        }
    }
    for (int k = 0; k < TK_N; k++) {
        tl->cost[cell(tl, k, mi, di, n)] = b[k];
        tl->choice[cell(tl, k, mi, di, n)] = c[k];
        if (b[k] < TL_INF)
            hull_push(tl, column(tl, k, mi, di), n);
    }
}

