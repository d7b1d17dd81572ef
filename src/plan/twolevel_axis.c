/* twolevel_axis.c: the budget axes of the two-level table (doc/twolevel.md
 * 3).  A plan's cost changes with a level's budget only where the budget
 * passes a sum of the states that level can hold at once, so each level
 * keeps one column per such sum up to its budget (as the one-level
 * table does: axis.c, doc/design.md 4.6), not one per unit.
 *
 * The sums.  Every cell's cost is the least over plans of a segment whose
 * every constraint on a level reads "the budget is at least the units
 * held", the units held being a h + b s:
 *   - hsm holds hidden states only: a h, a <= t + 1;
 *   - msm's fast memory holds at most one state per step: a h + b s,
 *     a + b <= t + 1;
 *   - msm's slow level may hold both h(i) and s(i) of one step (a DS
 *     start written again as DH): a h + b s, a <= t + 1, b <= t + 1; and a
 *     DS segment, whose own s(start) is held outside its budget, gives it
 *     back to its child when moving it to fast memory, so its constraints
 *     read "budget + s >= a h + b s" too: the budgets a h + b s - s, new
 *     only where b = 0.
 * The cost at a budget x is then the cost at the largest such sum <= x,
 * and a budget less (or, given back, plus) some states maps to the
 * column of the largest sum <= that: the columns are exact. */
#include <stdint.h>
#include <stdlib.h>

#include "alloc.h"
#include "bptt.h"
#include "costs.h"
#include "twolevel_impl.h"

/* Every sum is a multiple of this. */
static int64_t grid_step(const twolevel_axis *ax)
{
    if (ax->layout == TL_LAYOUT_UNITS)
        return 1;
    bptt_units u; /* the quantum of h and s is their gcd */
    if (!ax->msm || bptt_units_from_bytes(&u, ax->h, ax->s) != BPTT_OK)
        return ax->h;
    return u.quantum;
}

/* The columns on the grid of grid_step: every multiple up to top. */
static int64_t grid_count(const twolevel_axis *ax)
{
    return ax->top / grid_step(ax) + 1;
}

/* How many (a, b) pairs (and, slow msm, a h - s budgets) there are, or
 * stop when they pass stop. */
static int64_t pair_count(const twolevel_axis *ax, int64_t stop)
{
    const int64_t n = (int64_t)ax->t + 1, top = ax->top;
    const int64_t bmax = ax->msm ? (top / ax->s < n ? top / ax->s : n) : 0;
    int64_t total = ax->msm && ax->slow ? n + 1 : 0;
    for (int64_t b = 0; b <= bmax && total <= stop; b++) {
        const int64_t rest = (top - b * ax->s) / ax->h; /* b s <= top */
        const int64_t amax = ax->slow ? n : n - b;
        total += (rest < amax ? rest : amax) + 1;
    }
    return total;
}

/* The grid when it is no larger than the list of sums. */
static int use_grid(const twolevel_axis *ax)
{
    if (ax->layout != TL_LAYOUT_AUTO)
        return ax->layout == TL_LAYOUT_UNITS;
    const int64_t g = grid_count(ax);
    return pair_count(ax, g) >= g;
}

int64_t twolevel_axis_bound(const twolevel_axis *ax)
{
    const int64_t g = grid_count(ax);
    if (use_grid(ax))
        return g;
    return pair_count(ax, ax->layout == TL_LAYOUT_SUMS ? INT64_MAX : g);
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t twolevel_axis_col(const int64_t *v, int64_t n, int64_t x)
{
    return planner_floor_index(v, n, x);
}

/* The sums, rising and each once, into v (room for pair_count); their
 * number. */
static int64_t list_sums(const twolevel_axis *ax, int64_t *v)
{
    const int64_t n = (int64_t)ax->t + 1, top = ax->top;
    const int64_t bmax = ax->msm ? (top / ax->s < n ? top / ax->s : n) : 0;
    int64_t k = 0;
    for (int64_t b = 0; b <= bmax; b++) {
        const int64_t base = b * ax->s, rest = (top - base) / ax->h;
        const int64_t amax = ax->slow ? n : n - b;
        for (int64_t a = 0; a <= rest && a <= amax; a++)
            v[k++] = base + a * ax->h;
    }
    if (ax->msm && ax->slow) /* a h - s <= top: a h <= top + s */
        for (int64_t a = 0; a <= n; a++)
            if ((__int128)a * ax->h >= ax->s &&
                (__int128)a * ax->h - ax->s <= top)
                v[k++] = (int64_t)((__int128)a * ax->h - ax->s);
    qsort(v, (size_t)k, sizeof *v, cmp_i64);
    int64_t u = 0;
    for (int64_t i = 0; i < k; i++)
        if (u == 0 || v[i] != v[u - 1])
            v[u++] = v[i];
    return u;
}

int twolevel_axis_build(const twolevel_axis *ax, int64_t **vals,
                        int64_t **dep, int64_t *n)
{
    *vals = NULL;
    *dep = NULL;
    *n = 0;
    const int grid = use_grid(ax);
    const int64_t cap = twolevel_axis_bound(ax), step = grid_step(ax);
    int64_t *v = planner_malloc((size_t)cap * sizeof *v), u = 0;
    if (!v)
        return BPTT_ENOMEM;
    if (grid)
        for (u = 0; u < cap; u++)
            v[u] = u * step;
    else
        u = list_sums(ax, v);
    const int nd = ax->slow ? 4 : 3;
    int64_t *d = planner_malloc((size_t)u * (size_t)nd * sizeof *d);
    if (!d) {
        planner_free(v);
        return BPTT_ENOMEM;
    }
    const int64_t h = ax->h, s = ax->s;
    for (int64_t c = 0; c < u; c++)
        for (int i = 0; i < nd; i++) {
            /* in 128 bits: no overflow, whatever the units */
            const __int128 y = (__int128)v[c] +
                               (i == AX_PS ? (__int128)s
                                : i == AX_H ? -(__int128)h
                                : i == AX_S ? -(__int128)s
                                            : -(__int128)h - s);
            const int64_t x = y > ax->top ? ax->top : y < 0 ? -1 : (int64_t)y;
            d[(size_t)c * (size_t)nd + (size_t)i] =
                x < 0 ? -1 : twolevel_axis_col(v, u, x);
        }
    *vals = v;
    *dep = d;
    *n = u;
    return BPTT_OK;
}
