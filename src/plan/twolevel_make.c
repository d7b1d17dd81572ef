/* twolevel_make.c: from sizes in bytes to a checked two-level plan in one
 * call (bptt_twolevel_make, twolevel.h), as make.c does for one level.
 *
 * Promises: the plan returned is the two-level planner's optimum for the
 * budgets and costs, and stats are the validator's counts of it, never
 * the planner's own; an infeasible fast budget returns BPTT_EINFEASIBLE
 * with the smallest feasible one in bytes before any table is built; a
 * table, or a plan with its table, that would take more than half of
 * physical memory is refused before it is made (BPTT_ETOOBIG); on any
 * error nothing is left allocated. */
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "budget.h"
#include "twolevel.h"

int bptt_twolevel_make(const char *strategy, size_t t, int64_t hidden_bytes,
                       int64_t internal_bytes, int64_t budget_bytes,
                       const bptt_slow_level *slow, bptt_plan **out,
                       bptt_plan_stats *stats, int64_t *min_budget_bytes)
{
    if (out)
        *out = NULL;
    if (min_budget_bytes)
        *min_budget_bytes = -1;
    bptt_units u;
    if (!strategy || !slow || !out || !stats || t < 1 || budget_bytes < 0 ||
        slow->budget < 0 ||
        bptt_units_from_bytes(&u, hidden_bytes, internal_bytes) != BPTT_OK)
        return BPTT_EINVAL;
    memset(stats, 0, sizeof *stats);
    const bptt_strategy *st = bptt_strategy_find(strategy);
    if (!st)
        return BPTT_EUNKNOWN;
    /* both budgets in whole units of the quantum */
    const bptt_slow_level sl = {slow->budget == BPTT_SLOW_UNLIMITED
                                    ? BPTT_SLOW_UNLIMITED
                                    : slow->budget / u.quantum,
                                slow->write_cost, slow->read_cost};
    const int64_t m = budget_bytes / u.quantum;
    bptt_twolevel *tl = NULL;
    int rc = bptt_twolevel_alloc_threads(&tl, strategy, t, u.hidden_units,
                                         u.internal_units, m, &sl, 0);
    if (rc == BPTT_EINFEASIBLE && min_budget_bytes)
        *min_budget_bytes = hidden_bytes; /* h(0) starts in fast memory */
    if (rc != BPTT_OK)
        return rc;
    /* the table stays while the plan is made and validated: the table, the
     * actions (counted first), the unrolling stack and the validator's
     * flags must fit in half of physical memory before the plan is made */
    const int64_t n = bptt_twolevel_plan_actions(tl);
    const double fixed =
        (double)bptt_twolevel_bytes_needed(strategy, t, u.hidden_units,
                                           u.internal_units, m, &sl) +
        (double)bptt_plan_scratch_bytes(st, t);
    if (n < 0)
        rc = BPTT_ENOMEM;
    else if (bptt_memory_fits(fixed + (double)n * sizeof(bptt_action), 2,
                              NULL) != BPTT_OK) {
        stats->n_actions = (size_t)n; /* what was refused: the plan */
        rc = BPTT_ETOOBIG;
    }
    bptt_plan *plan = NULL;
    if (rc == BPTT_OK)
        rc = bptt_twolevel_plan(tl, &plan);
    bptt_twolevel_free(tl);
    if (rc == BPTT_OK)
        rc = bptt_plan_validate(plan, stats);
    if (rc != BPTT_OK) {
        bptt_plan_free(plan);
        return rc;
    }
    stats->peak_bytes = stats->peak_units * u.quantum; /* within budgets */
    *out = plan;
    return BPTT_OK;
}
