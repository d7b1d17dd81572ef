/* axis.c: the compressed budget axis of a cost table (doc/design.md
 * 4.6): where states are so unequal that most budgets change nothing, one
 * column per distinct sum a h + b s of the states a plan can hold. */
#include <stdint.h>
#include <stdlib.h>

#include "bptt.h"
#include "costs.h"

/* How many pairs (a, b), a + b <= t + 1, have a h + b s <= top, counting
 * equal sums once per pair; stops counting above stop. */
int64_t planner_count_sums(size_t t, int64_t h, int64_t s, int64_t top,
                          int64_t stop)
{
    const int64_t n = (int64_t)t + 1;
    int64_t total = 0;
    for (int64_t b = 0; b <= n && b <= top / s; b++) {
        const int64_t rest = (top - b * s) / h; /* b s <= top: no overflow */
        total += (rest < n - b ? rest : n - b) + 1;
        if (total > stop)
            return total;
    }
    return total;
}

static int cmp_i64(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

int64_t planner_floor_index(const int64_t *v, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo + 1) / 2;
        if (v[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The compressed axis (doc/design.md 4.6): every cost of the DP at budget
 * m equals its cost at the largest sum a h + b s <= m with a + b <= t + 1,
 * since every plan of a segment of len <= t steps stores at most len + 1
 * states at once: a column per distinct sum, and for each the columns of
 * its budget less h, s and h + s. */
int planner_build_axis(bptt_table *tb)
{
    const int64_t n = (int64_t)tb->t + 1, top = tb->dpw, cap = tb->ncols;
    int64_t *v = planner_malloc((size_t)cap * sizeof *v), k = 0;
    if (!v)
        return BPTT_ENOMEM;
    for (int64_t b = 0; b <= n && b <= top / tb->s; b++) {
        const int64_t base = b * tb->s, rest = (top - base) / tb->h;
        for (int64_t a = 0; a <= rest && a <= n - b && k < cap; a++)
            v[k++] = base + a * tb->h; /* <= top */
    }
    qsort(v, (size_t)k, sizeof *v, cmp_i64);
    int64_t u = 0;
    for (int64_t i = 0; i < k; i++)
        if (u == 0 || v[i] != v[u - 1])
            v[u++] = v[i];
    int64_t *dep = planner_malloc((size_t)u * 3 * sizeof *dep);
    if (!dep) {
        planner_free(v);
        return BPTT_ENOMEM;
    }
    for (int64_t c = 0; c < u; c++)
        for (int i = 0; i < 3; i++) {
            const int64_t x = budget_minus(v[c], i == DEP_S ? tb->s : tb->h,
                                           i == DEP_HS ? tb->s : 0);
            dep[3 * c + i] = x < 0 ? -1 : planner_floor_index(v, c, x); /* x < v[c] */
        }
    tb->vals = v;
    tb->dep = dep;
    tb->ncols = u;
    return BPTT_OK;
}

int64_t planner_col_of(const bptt_table *tb, int64_t m)
{
    if (!tb->vals)
        return m;
    return planner_floor_index(tb->vals, tb->ncols, m);
}
