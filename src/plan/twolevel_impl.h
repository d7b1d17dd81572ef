/* twolevel_impl.h: the two-level planner's table and what its files
 * share (twolevel_cell.c computes a cell, twolevel.c builds the table from
 * them, twolevel_axis.c lays out its budget columns, twolevel_plan.c
 * unrolls it into a plan and counts it).  Not part of the public interface (twolevel.h);
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
    /* The columns (doc/twolevel.md 3): fast column mi is budget fv[mi]
     * (nm of them, rising, fv[0] = 0, fv[nm - 1] <= m); slow column di
     * is budget sv[di] (nd of them, up to d), or one column (sv NULL)
     * where the slow level is unlimited.  A cost at any budget equals its
     * cost at the largest column budget at most it, so the columns are
     * the sums of states a level can hold, not every unit.  fdep[3 mi +
     * AX_*] is the column of fv[mi] less h, s or h + s, sdep[4 di + AX_*]
     * that of sv[di] less h, s, h + s or plus s (at most d); -1: below
     * 0. */
    int64_t nm, nd;
    int64_t *fv, *sv, *fdep, *sdep;
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

enum { AX_H, AX_S, AX_HS, AX_PS };

static inline int64_t ax_which(int hc, int sc)
{
    return hc && sc ? AX_HS : sc ? AX_S : AX_H;
}

/* The fast column of fv[mi] less hc h + sc s units (hc, sc 0 or 1; -1:
 * none). */
static inline int64_t fsub(const bptt_twolevel *tl, int64_t mi, int hc,
                           int sc)
{
    if (mi < 0)
        return -1;
    if (!hc && !sc)
        return mi;
    return tl->fdep[3 * (size_t)mi + (size_t)ax_which(hc, sc)];
}

/* The slow column of sv[di] less hc h + sc s units (-1: none). */
static inline int64_t dsub(const bptt_twolevel *tl, int64_t di, int hc,
                           int sc)
{
    if (di < 0)
        return -1;
    if (unlimited(tl))
        return 0;
    if (!hc && !sc)
        return di;
    return tl->sdep[4 * (size_t)di + (size_t)ax_which(hc, sc)];
}

/* The budget of fast column mi, and of slow column di (unlimited: more
 * than any state). */
static inline int64_t fval(const bptt_twolevel *tl, int64_t mi)
{
    return tl->fv[mi];
}

static inline int64_t dval(const bptt_twolevel *tl, int64_t di)
{
    return unlimited(tl) ? INT64_MAX / 4 : tl->sv[di];
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

/* The slow column after s units come back to column di (the table's
 * widest at most). */
static inline int64_t dadd_s(const bptt_twolevel *tl, int64_t di)
{
    if (unlimited(tl))
        return 0;
    return tl->sdep[4 * (size_t)di + AX_PS];
}

/* Fill the cells of length n in column (mi, di), all four kinds
 * (twolevel_cell.c): reads its own column's shorter lengths, the columns of
 * smaller budgets and, at length n, one column of a smaller fast budget;
 * writes its own column only. */
void twolevel_fill_cell(bptt_twolevel *tl, size_t n, int64_t mi, int64_t di);
/* Every length of the table on nt threads, the same cell for cell as on
 * one (twolevel.c): BPTT_OK or BPTT_ENOMEM. */
int twolevel_fill_table(bptt_twolevel *tl, int nt);

/* A slow budget of at least this many units never binds (twolevel.c). */
int64_t twolevel_slow_cap(size_t t, int64_t h, int64_t s);

/* The axes (twolevel_axis.c).  A level's axis up to top units: slow 0 for
 * the fast level, 1 for the slow; layout TL_LAYOUT_AUTO (the list of sums,
 * or every multiple of the sizes' gcd where that is no longer), or, for
 * the tests to compare, TL_LAYOUT_UNITS (every unit 0..top: the layout
 * before the axes were compressed) or TL_LAYOUT_SUMS (the list always). */
enum { TL_LAYOUT_AUTO, TL_LAYOUT_UNITS, TL_LAYOUT_SUMS };
typedef struct {
    size_t t;
    int64_t h, s, top;
    int msm, slow, layout;
} twolevel_axis;

/* At most how many columns the axis has (its build allocates no more). */
int64_t twolevel_axis_bound(const twolevel_axis *ax);
/* The axis: *vals (*n rising budgets) and *dep (3 or, slow, 4 a column:
 * AX_*). */
int twolevel_axis_build(const twolevel_axis *ax, int64_t **vals,
                        int64_t **dep, int64_t *n);
/* The column of budget x: the last of v[0..n) at most x (v[0] <= x). */
int64_t twolevel_axis_col(const int64_t *v, int64_t n, int64_t x);
/* bptt_twolevel_alloc_threads with the choice of both axes' layout
 * (TL_LAYOUT_*: the same costs, for the tests to compare). */
int twolevel_alloc_layout(bptt_twolevel **out, const char *strategy,
                          size_t t, int64_t h, int64_t s, int64_t m,
                          const bptt_slow_level *slow, int layout,
                          int threads);

#endif /* BPTT_PLAN_TWOLEVEL_IMPL_H */
