/* make.c: from sizes to a checked plan in one call (bptt_plan_make).
 *
 * Promises: the plan returned is the strategy's optimal plan for the
 * budget, and stats are the validator's counts of it, never the planner's
 * own; an infeasible budget returns BPTT_EINFEASIBLE with the smallest
 * feasible budget in bytes, before any table is built; a table or a plan
 * that would take more than half of physical memory is refused before it
 * is made (BPTT_ETOOBIG); on any error nothing is left allocated. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bptt.h"
#include "budget.h"

int bptt_plan_min_budget(const char *strategy, size_t t, int64_t hidden_bytes,
                         int64_t internal_bytes,
                         const bptt_table_options *opts, int64_t *bytes)
{
    const bptt_strategy *st = strategy ? bptt_strategy_find(strategy) : NULL;
    bptt_units u;
    if (!bytes)
        return BPTT_EINVAL;
    *bytes = -1;
    if (!st || t < 1 ||
        bptt_units_from_bytes(&u, hidden_bytes, internal_bytes) != BPTT_OK)
        return BPTT_EINVAL;
    bptt_table_options o = {0};
    if (opts)
        o = *opts;
    const int64_t least = bptt_strategy_min_budget(st, t, u.hidden_units,
                                                   u.internal_units, &o);
    if (least < 0 || __builtin_mul_overflow(least, u.quantum, bytes)) {
        *bytes = -1;
        return BPTT_ETOOBIG; /* too big to state */
    }
    return BPTT_OK;
}

int bptt_plan_make(const char *strategy, size_t t, int64_t hidden_bytes,
                   int64_t internal_bytes, int64_t budget_bytes,
                   const bptt_table_options *opts, bptt_plan **out,
                   bptt_plan_stats *stats, int64_t *min_budget_bytes)
{
    if (out)
        *out = NULL;
    if (min_budget_bytes)
        *min_budget_bytes = -1;
    const bptt_strategy *st = strategy ? bptt_strategy_find(strategy) : NULL;
    bptt_units u;
    if (!st || !out || !stats || t < 1 || budget_bytes < 0 ||
        bptt_units_from_bytes(&u, hidden_bytes, internal_bytes) != BPTT_OK)
        return BPTT_EINVAL;
    memset(stats, 0, sizeof *stats);
    const int64_t m = budget_bytes / u.quantum;
    bptt_table_options o = {0};
    if (opts)
        o = *opts;
    const int64_t least = bptt_strategy_min_budget(st, t, u.hidden_units,
                                                   u.internal_units, &o);
    if (least < 0)
        return BPTT_ETOOBIG;
    int64_t least_bytes;
    if (__builtin_mul_overflow(least, u.quantum, &least_bytes))
        return BPTT_ETOOBIG; /* the smallest budget is too big to state */
    if (m < least) {
        if (min_budget_bytes)
            *min_budget_bytes = least_bytes;
        return BPTT_EINFEASIBLE;
    }
    /* Below one internal state's units (hsm: at any budget) a DP strategy
     * can store hidden states only, floor(m / h) of them (at most t are ever useful): the
     * same plan comes from slots h' = 1, s' = m' + 1 > m', m' = that count,
     * whatever the sizes of h and s (1e15 units stay a few columns). */
    int64_t th = u.hidden_units, ts = u.internal_units, tm = m;
    const int dp = st != bptt_strategy_find("full") &&
                   st != bptt_strategy_find("chen");
    if (dp && (m < u.internal_units || st == bptt_strategy_find("hsm"))) {
        tm = m / u.hidden_units;
        if ((uint64_t)tm > (uint64_t)t)
            tm = (int64_t)t;
        th = 1;
        ts = tm + 1;
    }
    o.min_budget = tm; /* one budget: only what it needs is built */
    bptt_table *tb = NULL;
    int rc = bptt_table_alloc(&tb, st, t, th, ts, tm, &o);
    bptt_plan *plan = NULL;
    /* the table (its build, with the fast planner's scratch, was held to
     * bptt_table_bytes_needed by bptt_table_alloc) stays while the plan is
     * unrolled and validated: the table, the plan's actions, the
     * unrolling stack and the validator's flags must fit in half of
     * physical memory before the plan is made.  A plan has at least c + t
     * actions (every advance, every backward): past that, no count; else
     * the actions are counted exactly. */
    if (rc == BPTT_OK) {
        const int64_t c = bptt_table_cost(tb, tm);
        const double fixed = (double)bptt_table_bytes(tb) +
                             (double)bptt_plan_scratch_bytes(st, t);
        const double fewest = ((double)c + (double)t) * sizeof(bptt_action);
        if (c > 0 && bptt_memory_fits(fixed + fewest, 2, NULL) != BPTT_OK) {
            stats->forward_ops = c;
            rc = BPTT_ETOOBIG;
        } else if (c > 0) {
            const int64_t n = bptt_table_plan_actions(tb, tm);
            if (n < 0)
                rc = BPTT_ENOMEM;
            else if (bptt_memory_fits(fixed + (double)n * sizeof(bptt_action),
                                      2, NULL) != BPTT_OK) {
                stats->forward_ops = c;
                rc = BPTT_ETOOBIG;
            }
        }
    }
    if (rc == BPTT_OK)
        rc = bptt_table_plan(tb, tm, &plan, NULL);
    bptt_table_free(tb);
    if (rc == BPTT_OK) { /* back to the caller's units */
        plan->hidden_units = u.hidden_units;
        plan->internal_units = u.internal_units;
        plan->budget = m;
    }
    if (rc == BPTT_OK)
        rc = bptt_plan_validate(plan, stats);
    if (rc == BPTT_OK) /* within the budget's bytes: no overflow */
        stats->peak_bytes = stats->peak_units * u.quantum;
    if (rc != BPTT_OK) {
        bptt_plan_free(plan);
        return rc;
    }
    *out = plan;
    return BPTT_OK;
}
