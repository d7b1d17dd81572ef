/* fixed.c: the strategies whose plans follow a fixed pattern, with no
 * table: full BPTT (every internal state kept) and Chen's sqrt(t) (a
 * hidden state at the start of every segment of k steps; doc/design.md 3).
 * Their costs and peaks have closed forms (closed.c); their emitters write
 * the pattern.
 */
#include <stdint.h>
#include <stdlib.h>

#include "bptt.h"
#include "costs.h"

/* ---- full BPTT ----------------------------------------------------------- */

static int64_t full_cost(const bptt_table *tb, size_t len, int64_t m)
{
    const int64_t peak = bptt_full_peak(len, tb->h, tb->s);
    return peak >= 0 && m >= peak ? (int64_t)len : -1; /* -1: too big */
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
    const int64_t peak = bptt_chen_peak(len, k, tb->h, tb->s);
    return peak >= 0 && m >= peak ? bptt_chen_cost(len, k) : -1;
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

int planner_nothing_to_build(bptt_table *tb)
{
    (void)tb;
    return BPTT_OK;
}

static int64_t full_known_cost(size_t t, int64_t h, int64_t s, int64_t m)
{
    (void)h, (void)s, (void)m;
    return (int64_t)t;
}

static int64_t chen_known_cost(size_t t, int64_t h, int64_t s, int64_t m)
{
    (void)h, (void)s, (void)m;
    return bptt_chen_cost(t, bptt_chen_default_segment(t));
}

const bptt_strategy bptt_strategy_full = {
    "full", "full BPTT: every internal state kept",
    planner_nothing_to_build,
    full_cost, full_emit, full_min_budget, full_known_cost,
    BPTT_STRATEGY_FIXED_COST};
const bptt_strategy bptt_strategy_chen = {
    "chen", "Chen's sqrt(t): hidden state at each segment start",
    planner_nothing_to_build, chen_cost, chen_emit, chen_min_budget, chen_known_cost,
    BPTT_STRATEGY_SEGMENT | BPTT_STRATEGY_FIXED_COST};

