/* steps.c: the executor's entries (see steps.h): bptt_steps_run feeds
 * the interpreter (steps_act.c) a whole plan, bptt_steps_run_online the
 * actions an online planner (online.h) hands out as the steps arrive,
 * then the rest of the plan it finishes with.  A two-level plan's slow
 * level is opened before the first action when the plan has any. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>

#include "steps_impl.h"
#include "twolevel.h"

/* Whether the plan steps on from an internal state anywhere (a restore
 * from the fast level or a read from the slow one). */
static int restores_internal(const bptt_plan *plan)
{
    for (size_t k = 0; k < plan->n_actions; k++)
        if (plan->actions[k].op == BPTT_RESTORE_INTERNAL ||
            plan->actions[k].op == BPTT_READ_INTERNAL)
            return 1;
    return 0;
}

/* The checks of a table both entries make; *st zeroed first. */
static int table_ok(const bptt_steps *ops, bptt_steps_stats *st)
{
    if (!st)
        return BPTT_EINVAL;
    memset(st, 0, sizeof *st);
    st->failed_action = -1;
    if (!ops || !ops->forward || !ops->backward)
        return BPTT_EINVAL;
    const size_t hb = ops->hidden_bytes, sb = ops->internal_bytes;
    if (hb < 1 || sb < hb)
        return BPTT_EINVAL;
    if (ops->hidden_in_internal &&
        (ops->hidden_offset > sb || sb - ops->hidden_offset < hb))
        return BPTT_EINVAL;
    return BPTT_OK;
}

/* Checkpoint bytes of m units of hidden_bytes / h bytes each. */
static size_t budget_bytes(int64_t m, int64_t h, size_t hb)
{
    const unsigned __int128 b =
        (unsigned __int128)m * (hb / (size_t)h);
    return b > SIZE_MAX ? SIZE_MAX : (size_t)b;
}

static int run(const bptt_plan *plan, const bptt_steps *ops, bptt_mem *mem,
               bptt_steps_stats *st, bptt_exec_point *points);

int bptt_steps_run(const bptt_plan *plan, const bptt_steps *ops,
                   bptt_mem *mem, bptt_steps_stats *st,
                   bptt_exec_point *points)
{
    int rc = table_ok(ops, st);
    if (rc != BPTT_OK)
        return rc;
    if (!plan)
        return BPTT_EINVAL;
    const size_t hb = ops->hidden_bytes, sb = ops->internal_bytes;
    if (plan->hidden_units < 1 || plan->internal_units < 1 ||
        (unsigned __int128)plan->hidden_units * sb !=
            (unsigned __int128)plan->internal_units * hb)
        return BPTT_EINVAL;
    bptt_plan_stats vs;
    rc = bptt_plan_validate(plan, &vs);
    if (rc != BPTT_OK)
        return rc;
    if (!ops->hidden_from_internal && !ops->hidden_in_internal &&
        restores_internal(plan))
        return BPTT_EINVAL; /* no way to restore from an internal state */
    if (mem)
        return run(plan, ops, mem, st, points);
    bptt_mem *own = bptt_mem_alloc();
    if (!own)
        return BPTT_ENOMEM;
    rc = run(plan, ops, own, st, points);
    bptt_mem_free(own);
    return rc;
}

/* bptt_steps_run on arguments checked, with an allocator. */
static int run(const bptt_plan *plan, const bptt_steps *ops, bptt_mem *mem,
               bptt_steps_stats *st, bptt_exec_point *points)
{
    interp x = {.ops = ops, .mem = mem, .st = st, .points = points,
                .points_cap = points ? plan->n_actions : 0,
                .hb = ops->hidden_bytes, .sb = ops->internal_bytes,
                .t = plan->length};
    /* the validator holds the peak to the budget; the unit's bytes are
     * whole when the units are in the bytes' ratio with h | hb, and where
     * they are not the check stands aside */
    const int whole = ops->hidden_bytes % (size_t)plan->hidden_units == 0;
    x.budget = whole ? budget_bytes(plan->budget, plan->hidden_units,
                                    ops->hidden_bytes)
                     : SIZE_MAX;
    x.slow_budget = whole && plan->slow_budget != BPTT_SLOW_UNLIMITED
                        ? budget_bytes(plan->slow_budget, plan->hidden_units,
                                       ops->hidden_bytes)
                        : SIZE_MAX;
    int rc = steps_ws_take(&x, plan->length);
    /* the slow level's file before any op runs: a folder that cannot
     * take it stops the run before it starts */
    if (rc == BPTT_OK && bptt_plan_slow_actions(plan))
        rc = bptt_slow_open(&x.slow, mem, plan->length, ops->slow_dir,
                            ops->slow_direct, ops->internal_bytes);
    if (rc == BPTT_OK)
        rc = steps_act_plan(&x, plan, 0);
    return steps_finish_run(&x, rc);
}

/* ---- online ------------------------------------------------------------ */

static int run_online(bptt_online *o, const bptt_steps *ops, bptt_mem *mem,
                      bptt_steps_more more, void *more_ctx,
                      bptt_steps_stats *st, bptt_plan **plan_out,
                      bptt_exec_point *points, size_t points_cap,
                      size_t budget)
{
    interp x = {.ops = ops, .mem = mem, .st = st, .points = points,
                .points_cap = points ? points_cap : 0,
                .hb = ops->hidden_bytes, .sb = ops->internal_bytes,
                .t = SIZE_MAX, .budget = budget, .online = 1};
    int rc = steps_ws_take(&x, 64);
    bptt_action acts[BPTT_ONLINE_ACTIONS_MAX];
    size_t i = 0; /* steps run */
    int last = 0;
    while (rc == BPTT_OK && !last) {
        const int go = more(more_ctx, i, &last);
        if (go == 0)
            break;
        if (go != 1) {
            rc = steps_op_failed(st, go);
            break;
        }
        size_t n = 0;
        rc = bptt_online_next(o, last != 0, acts, &n);
        for (size_t j = 0; j < n && rc == BPTT_OK; j++)
            rc = steps_act(&x, acts[j], NULL);
        i++;
    }
    if (rc == BPTT_OK && i == 0)
        rc = BPTT_ESHORT; /* no step: nothing to plan */
    bptt_plan *plan = NULL;
    size_t prefix = 0;
    if (rc == BPTT_OK) {
        /* h(T) is the running state now: the plan's next action is
         * backward T, so step T never runs again */
        x.t = i;
        if (ops->h_last)
            memcpy(ops->h_last, x.w.state[x.cur], x.hb);
        rc = bptt_online_finish(o, &plan, &prefix);
    }
    bptt_plan_stats vs;
    if (rc == BPTT_OK && (prefix != x.k || plan->length != i))
        rc = BPTT_EBADPLAN;
    if (rc == BPTT_OK)
        rc = bptt_plan_validate(plan, &vs);
    if (rc == BPTT_OK && bptt_plan_slow_actions(plan))
        rc = BPTT_EINVAL; /* online plans have no slow level */
    if (rc == BPTT_OK && !ops->hidden_from_internal &&
        !ops->hidden_in_internal && restores_internal(plan))
        rc = BPTT_EINVAL;
    if (rc == BPTT_OK)
        x.online = 0; /* the whole plan is validated */
    if (rc == BPTT_OK)
        rc = steps_ws_cover(&x, i);
    if (rc == BPTT_OK)
        rc = steps_act_plan(&x, plan, prefix);
    rc = steps_finish_run(&x, rc);
    if (rc == BPTT_OK && plan_out)
        *plan_out = plan;
    else
        bptt_plan_free(plan);
    return rc;
}

int bptt_steps_run_online(bptt_online *o, const bptt_steps *ops,
                          bptt_mem *mem, bptt_steps_more more, void *more_ctx,
                          bptt_steps_stats *st, bptt_plan **plan,
                          bptt_exec_point *points, size_t points_cap)
{
    if (plan)
        *plan = NULL;
    int rc = table_ok(ops, st);
    if (rc != BPTT_OK)
        return rc;
    bptt_units u;
    int64_t m;
    if (!o || !more || bptt_online_units(o, &u, &m) != BPTT_OK ||
        bptt_online_steps(o) != 0)
        return BPTT_EINVAL;
    /* the planner's units are the table's bytes */
    if ((unsigned __int128)u.hidden_units * (uint64_t)u.quantum !=
            ops->hidden_bytes ||
        (unsigned __int128)u.internal_units * (uint64_t)u.quantum !=
            ops->internal_bytes)
        return BPTT_EINVAL;
    const size_t budget = budget_bytes(m, 1, (size_t)u.quantum);
    if (mem)
        return run_online(o, ops, mem, more, more_ctx, st, plan, points,
                          points_cap, budget);
    bptt_mem *own = bptt_mem_alloc();
    if (!own)
        return BPTT_ENOMEM;
    rc = run_online(o, ops, own, more, more_ctx, st, plan, points, points_cap,
                    budget);
    bptt_mem_free(own);
    return rc;
}

double bptt_exec_working_bytes(size_t t, double hidden_bytes,
                               double internal_bytes)
{
    const double steps = (double)t + 1;
    return 3 * hidden_bytes + internal_bytes +
           steps * (2 * (double)sizeof(void *) + 1);
}
