/* plan.c: plans as arrays of actions, and the symbolic validator.
 *
 * The validator is the referee between planner and executor: it runs a
 * plan under the rules of doc/design.md 2 with no network and reports
 * forward ops, recomputations, backward ops and the peak of stored units.
 * Model, stated once:
 *   - the running state is h(p) at a position p; it exists at the start
 *     (p = 0, h(0) also stored), after an advance, and after a restore;
 *     a backward op consumes it (a restore must follow);
 *   - the working internal state is s(p) when p was reached by an advance
 *     (not by a restore); it is free, stored states cost units;
 *   - backward ops run t, t-1, ..., 1, each with s(i) stored or working;
 *   - a plan ends with every backward done and nothing stored.
 */
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "alloc.h"

static const char *const op_names[BPTT_N_OPS] = {
    "advance",          "save_hidden",  "save_internal",
    "restore_hidden",   "restore_internal", "backward",
    "free_hidden",      "free_internal",
    "write_hidden",     "write_internal",  "read_hidden",
    "read_internal",    "drop_hidden",     "drop_internal",
};

const char *bptt_op_name(int op)
{
    return (op >= 0 && op < BPTT_N_OPS) ? op_names[op] : "unknown";
}

int bptt_op_parse(const char *name)
{
    if (!name)
        return -1;
    for (int i = 0; i < BPTT_N_OPS; i++)
        if (strcmp(name, op_names[i]) == 0)
            return i;
    return -1;
}

const char *bptt_strerror(int status)
{
    switch (status) {
    case BPTT_OK: return "success";
    case BPTT_EINVAL: return "invalid argument";
    case BPTT_ENOMEM: return "out of memory";
    case BPTT_EINFEASIBLE: return "budget below the smallest feasible one";
    case BPTT_EBADPLAN: return "invalid plan";
    case BPTT_ETOOBIG: return "sizes too large for this machine";
    case BPTT_EUNKNOWN: return "unknown name";
    case BPTT_EFILE: return "cannot read the file";
    case BPTT_ESHORT: return "input too short";
    case BPTT_ENAN: return "NaN";
    case BPTT_EINF: return "infinite";
    case BPTT_ENONFINITE: return "a NaN or an infinity";
    case BPTT_EOP: return "an op failed (its status is in the run's stats)";
    case BPTT_ESTEPS: return "the steps broke their stated layout";
    case BPTT_EIO: return "slow level: the file could not be made, "
                          "written or read";
    default: return "unknown status";
    }
}

static const char *const violation_names[BPTT_N_VIOLATIONS] = {
    "none",
    "unknown op or step out of range",
    "no running state at the step the action needs",
    "internal state to save is not the working one",
    "state already stored",
    "state not stored",
    "stored units exceed the budget",
    "backward ops out of order (must run t, t-1, ..., 1)",
    "backward op without its internal state",
    "plan ended before every backward op ran",
    "plan ended with states still stored",
    "units on the slow level exceed its budget",
};

const char *bptt_violation_str(int violation)
{
    return (violation >= 0 && violation < BPTT_N_VIOLATIONS)
               ? violation_names[violation]
               : "unknown violation";
}

int bptt_plan_alloc(bptt_plan **out, size_t t, int64_t h, int64_t s,
                    int64_t m)
{
    if (!out)
        return BPTT_EINVAL;
    *out = NULL;
    if (t < 1 || t > UINT32_MAX - 1 || h < 1 || s < h || m < 0)
        return BPTT_EINVAL;
    bptt_plan *p = planner_calloc(1, sizeof *p);
    if (!p)
        return BPTT_ENOMEM;
    p->length = t;
    p->hidden_units = h;
    p->internal_units = s;
    p->budget = m;
    *out = p;
    return BPTT_OK;
}

void bptt_plan_free(bptt_plan *plan)
{
    if (!plan)
        return;
    planner_free(plan->actions);
    planner_free(plan);
}

int bptt_plan_push(bptt_plan *plan, int op, size_t step)
{
    if (!plan || op < 0 || op >= BPTT_N_OPS || step > plan->length)
        return BPTT_EINVAL;
    if (!plan->actions && plan->capacity == SIZE_MAX) {
        plan->n_actions++; /* a counting plan (bptt_table_plan_actions) */
        return BPTT_OK;
    }
    if (plan->n_actions == plan->capacity) {
        size_t cap = plan->capacity ? 2 * plan->capacity : 64;
        if (cap > SIZE_MAX / sizeof(bptt_action))
            return BPTT_ENOMEM;
        bptt_action *a = planner_realloc(plan->actions, cap * sizeof *a);
        if (!a)
            return BPTT_ENOMEM;
        plan->actions = a;
        plan->capacity = cap;
    }
    plan->actions[plan->n_actions].op = (uint32_t)op;
    plan->actions[plan->n_actions].step = (uint32_t)step;
    plan->n_actions++;
    return BPTT_OK;
}

/* Flags per step in the validator's state. */
enum {
    HAS_HIDDEN = 1,
    HAS_INTERNAL = 2,
    COMPUTED = 4,
    SLOW_HIDDEN = 8,  /* h(i) on the slow level */
    SLOW_INTERNAL = 16 /* s(i) on the slow level */
};

/* a + b for a, b >= 0, INT64_MAX where it would pass it (the units a
 * plan moves: a state written, dropped and written again, read again and
 * again, counts each time) */
static int64_t add_units(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

int bptt_plan_validate(const bptt_plan *plan, bptt_plan_stats *st)
{
    if (!st || !plan)
        return BPTT_EINVAL;
    memset(st, 0, sizeof *st);
    if (plan->length < 1 || plan->length > UINT32_MAX - 1 ||
        plan->hidden_units < 1 || plan->internal_units < plan->hidden_units ||
        plan->budget < 0 || plan->slow_budget < 0 ||
        (plan->n_actions && !plan->actions))
        return BPTT_EINVAL;
    st->n_actions = plan->n_actions;
    const size_t t = plan->length;
    const int64_t h = plan->hidden_units, s = plan->internal_units;
    unsigned char *flag = planner_calloc(t + 1, 1); /* (t+1) */
    if (!flag)
        return BPTT_ENOMEM;

    flag[0] = HAS_HIDDEN | COMPUTED;
    int64_t stored = h;
    int64_t slow = 0; /* units on the slow level */
    st->peak_units = stored;
    long long pos = 0;   /* running state h(pos); -1: none */
    int working = 0;     /* s(pos) is the working internal state */
    size_t next_bwd = t; /* the backward op due next; 0 = all done */
    int v = BPTT_V_NONE;
    size_t k = 0;

    if (stored > plan->budget)
        v = BPTT_V_OVER_BUDGET;
    for (; k < plan->n_actions && v == BPTT_V_NONE; k++) {
        const bptt_action a = plan->actions[k];
        const size_t i = a.step;
        if (a.op >= BPTT_N_OPS || i > t) {
            v = BPTT_V_BAD_OP;
            break;
        }
        switch (a.op) {
        case BPTT_ADVANCE:
            if (i == 0 || pos != (long long)i - 1) {
                v = BPTT_V_NO_RUNNING_STATE;
                break;
            }
            st->forward_ops++;
            if (flag[i] & COMPUTED)
                st->recompute_ops++;
            flag[i] |= COMPUTED;
            pos = (long long)i;
            working = 1;
            break;
        case BPTT_SAVE_HIDDEN:
        case BPTT_SAVE_INTERNAL: {
            const int internal = a.op == BPTT_SAVE_INTERNAL;
            const int bit = internal ? HAS_INTERNAL : HAS_HIDDEN;
            if (pos != (long long)i)
                v = BPTT_V_NO_RUNNING_STATE;
            else if (internal && !working)
                v = BPTT_V_NO_WORKING;
            else if (flag[i] & bit)
                v = BPTT_V_ALREADY_STORED;
            /* stored <= budget here: no overflow, whatever the units */
            else if ((internal ? s : h) > plan->budget - stored)
                v = BPTT_V_OVER_BUDGET;
            else {
                flag[i] |= (unsigned char)bit;
                stored += internal ? s : h;
                if (stored > st->peak_units)
                    st->peak_units = stored;
            }
            break;
        }
        case BPTT_RESTORE_HIDDEN:
        case BPTT_RESTORE_INTERNAL: {
            const int bit =
                a.op == BPTT_RESTORE_INTERNAL ? HAS_INTERNAL : HAS_HIDDEN;
            if (!(flag[i] & bit))
                v = BPTT_V_NOT_STORED;
            else {
                pos = (long long)i;
                working = 0;
            }
            break;
        }
        case BPTT_WRITE_HIDDEN:
        case BPTT_WRITE_INTERNAL: {
            const int internal = a.op == BPTT_WRITE_INTERNAL;
            const int bit = internal ? SLOW_INTERNAL : SLOW_HIDDEN;
            const int64_t u = internal ? s : h;
            if (pos != (long long)i)
                v = BPTT_V_NO_RUNNING_STATE;
            else if (internal && !working)
                v = BPTT_V_NO_WORKING;
            else if (flag[i] & bit)
                v = BPTT_V_ALREADY_STORED;
            else if (u > plan->slow_budget - slow)
                v = BPTT_V_SLOW_OVER_BUDGET;
            else {
                flag[i] |= (unsigned char)bit;
                slow += u;
                if (slow > st->slow_peak_units)
                    st->slow_peak_units = slow;
                st->slow_writes++;
                st->slow_write_units = add_units(st->slow_write_units, u);
            }
            break;
        }
        case BPTT_READ_HIDDEN:
        case BPTT_READ_INTERNAL: {
            const int internal = a.op == BPTT_READ_INTERNAL;
            if (!(flag[i] & (internal ? SLOW_INTERNAL : SLOW_HIDDEN)))
                v = BPTT_V_NOT_STORED;
            else {
                pos = (long long)i;
                working = internal && i >= 1; /* s(i) read whole */
                st->slow_reads++;
                st->slow_read_units =
                    add_units(st->slow_read_units, internal ? s : h);
            }
            break;
        }
        case BPTT_BACKWARD:
            if (i != next_bwd || i == 0)
                v = BPTT_V_BACKWARD_ORDER;
            else if (!(flag[i] & HAS_INTERNAL) &&
                     !(working && pos == (long long)i))
                v = BPTT_V_BACKWARD_NO_STATE;
            else {
                st->backward_ops++;
                next_bwd--;
                pos = -1;
                working = 0;
            }
            break;
        case BPTT_FREE_HIDDEN:
        case BPTT_FREE_INTERNAL:
        case BPTT_DROP_HIDDEN:
        case BPTT_DROP_INTERNAL: {
            /* a release, in fast memory (free) or on the slow level */
            const int internal =
                a.op == BPTT_FREE_INTERNAL || a.op == BPTT_DROP_INTERNAL;
            const int on_slow =
                a.op == BPTT_DROP_HIDDEN || a.op == BPTT_DROP_INTERNAL;
            const int bit = on_slow ? (internal ? SLOW_INTERNAL : SLOW_HIDDEN)
                                    : (internal ? HAS_INTERNAL : HAS_HIDDEN);
            if (!(flag[i] & bit))
                v = BPTT_V_NOT_STORED;
            else {
                flag[i] &= (unsigned char)~bit;
                *(on_slow ? &slow : &stored) -= internal ? s : h;
            }
            break;
        }
        default:
            v = BPTT_V_BAD_OP;
        }
        if (v != BPTT_V_NONE)
            break;
    }
    if (v == BPTT_V_NONE) {
        k = plan->n_actions;
        if (next_bwd != 0)
            v = BPTT_V_INCOMPLETE;
        else if (stored != 0 || slow != 0)
            v = BPTT_V_LEAK;
    }
    planner_free(flag);
    st->violation = v;
    st->bad_action = v == BPTT_V_NONE ? plan->n_actions : k;
    return v == BPTT_V_NONE ? BPTT_OK : BPTT_EBADPLAN;
}

double bptt_plan_bytes_bound(size_t t, int64_t c)
{
    return (4.0 * (double)c + (double)t + 3) * (double)sizeof(bptt_action);
}
