/* twolevel_impl.h: the two-level planner's table and what its two files
 * share (twolevel.c builds the table, twolevel_plan.c unrolls it into a
 * plan and counts it).  Not part of the public interface (twolevel.h);
 * the recursion: doc/twolevel.md 2. */
#ifndef BPTT_PLAN_TWOLEVEL_IMPL_H
#define BPTT_PLAN_TWOLEVEL_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"
#include "twolevel.h"

enum { TK_H, TK_S, TK_DH, TK_DS, TK_N };
enum {
    OPT_NOTHING = 1, /* y = n: backward n uses the working s(n) */
    OPT_HF,          /* h(y) in fast memory */
    OPT_HS,          /* h(y) on the slow level */
    OPT_IF,          /* s(y) in fast memory */
    OPT_IS,          /* s(y) on the slow level */
    OPT_TO_H,        /* the start copied to fast memory (from DH or DS) */
    OPT_TO_DH,       /* the start written to the slow level (from H or DS) */
    OPT_TO_S         /* DS: s(start) copied to fast memory, the slow copy
                        dropped */
};

/* Costs are integers in 2^-20 forward ops. */
#define TL_Q ((int64_t)1 << 20)
#define TL_INF (INT64_MAX / 4)

struct bptt_twolevel {
    int msm;
    size_t t;
    int64_t h, s, m, d; /* d: BPTT_SLOW_UNLIMITED for no bound */
    int64_t d_asked;    /* the slow budget asked (d is BPTT_SLOW_UNLIMITED
                           where it holds every state: slow_cap) */
    double wd, rd;
    int64_t wh, ws, rh, rs; /* a write or read of h or s units, scaled */
    int64_t nm, nd;         /* columns: budgets 0..m, 0..d (1 if unlimited) */
    int64_t *cost;          /* [kind][mi][di][n] */
    int32_t *choice;        /* option | y << 4 */
    int32_t *hull;          /* [kind][mi][di][0..t]: the lengths on the
                               lower convex hull of each column's costs */
    size_t *nhull;          /* [kind][mi][di]: how many */
    size_t *hint;           /* [kind][mi][di][group]: where the group's
                               bound was least at the length before */
};

static inline int unlimited(const bptt_twolevel *tl)
{
    return tl->d == BPTT_SLOW_UNLIMITED;
}

static inline size_t cell(const bptt_twolevel *tl, int k, int64_t mi, int64_t di,
                   size_t n)
{
    return (((size_t)k * (size_t)tl->nm + (size_t)mi) * (size_t)tl->nd +
            (size_t)di) * (tl->t + 1) + n;
}

/* The slow column left after taking u units from column di (-1: none). */
static inline int64_t dsub(const bptt_twolevel *tl, int64_t di, int64_t u)
{
    if (unlimited(tl))
        return 0;
    return di >= u ? di - u : -1;
}

static inline int64_t get(const bptt_twolevel *tl, int k, int64_t mi, int64_t di,
                   size_t n)
{
    if (mi < 0 || di < 0)
        return TL_INF;
    return tl->cost[cell(tl, k, mi, di, n)];
}

static inline int owns_fast(int k) { return k == TK_H; }
static inline int owns_slow(int k) { return k == TK_DH; }

/* The slow column after u units come back to column di (the table's
 * widest at most). */
static inline int64_t dadd(const bptt_twolevel *tl, int64_t di, int64_t u)
{
    if (unlimited(tl))
        return 0;
    return di + u < tl->nd ? di + u : tl->nd - 1;
}

/* A slow budget of at least this many units never binds (twolevel.c). */
int64_t twolevel_slow_cap(size_t t, int64_t h, int64_t s);

#endif /* BPTT_PLAN_TWOLEVEL_IMPL_H */
