/* plan_shared.c: what `bptt plan` and `bptt sweep` share (cli.h): the
 * validated plan of a table at one budget, whether a plan fits in memory
 * before it is made, and the message for a table that cannot be built;
 * and what `bptt plan`'s one-level and two-level plans share (plan.h):
 * the check of a budget below the smallest feasible one.  (Their records
 * are the library's: planrec.h.) */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>

#include "bptt.h"
#include "cli.h"
#include "plan.h"

int cli_plan_at(const char *cmd, const bptt_table *tb, int64_t m,
                bptt_plan **plan, bptt_plan_stats *st, double *plan_seconds)
{
    int64_t min_feasible;
    const char *name = bptt_table_strategy(tb)->name;
    *plan = NULL;
    int rc = cli_plan_fits(cmd, tb, m);
    if (rc)
        return rc;
    const double t0 = cli_seconds();
    rc = bptt_table_plan(tb, m, plan, &min_feasible);
    if (plan_seconds)
        *plan_seconds = cli_seconds() - t0;
    if (rc == BPTT_EINFEASIBLE)
        return cli_error(EXIT_INFEASIBLE, cmd,
                         "budget %" PRId64 " is infeasible for %s at length "
                         "%zu; the smallest feasible budget is %" PRId64,
                         m, name, bptt_table_length(tb), min_feasible);
    if (rc == BPTT_ENOMEM)
        return cli_error(1, cmd, "out of memory making the %s plan for length "
                         "%zu at budget %" PRId64, name,
                         bptt_table_length(tb), m);
    if (rc != BPTT_OK)
        return cli_error(1, cmd, "%s", bptt_strerror(rc));
    rc = bptt_plan_validate(*plan, st);
    if (rc == BPTT_ENOMEM) {
        bptt_plan_free(*plan);
        *plan = NULL;
        return cli_error(1, cmd, "out of memory validating the %s plan for "
                         "length %zu at budget %" PRId64, name,
                         bptt_table_length(tb), m);
    }
    if (rc != BPTT_OK) {
        /* a planner bug: never print an unchecked plan as valid */
        rc = cli_error(1, cmd, "internal error: the %s plan failed "
                       "validation at action %zu (%s)", name, st->bad_action,
                       bptt_violation_str(st->violation));
        bptt_plan_free(*plan);
        *plan = NULL;
        return rc;
    }
    return 0;
}

/* The plan of cost c, n actions (-1: not counted; at most
 * bptt_plan_bytes_bound's), fits with `held` bytes already held (the
 * table)?  0, or the error naming the bytes it would take. */
static int plan_fits(const char *cmd, const char *name, size_t t, int64_t m,
                     int64_t c, int64_t n, double held)
{
    const double bytes = n >= 0 ? (double)n * sizeof(bptt_action)
                                : bptt_plan_bytes_bound(t, c);
    const double actions = bytes / (double)sizeof(bptt_action);
    const bptt_strategy *st = bptt_strategy_find(name);
    const double total =
        bytes + (double)bptt_plan_scratch_bytes(st, t) + held;
    double half;
    if (bptt_memory_fits(total, 2, &half) == BPTT_OK)
        return 0;
    char need[32], have[32];
    const int dp = st && !(st->flags & BPTT_STRATEGY_FIXED_COST);
    return cli_error(EXIT_USAGE, cmd, "the %s plan for length %zu at budget "
                     "%" PRId64 " (%" PRId64 " forward ops) %s %.0f "
                     "actions; making it would hold %s with %s, more "
                     "than half of this machine's %s; use a smaller "
                     "length%s", name, t, m, c,
                     n >= 0 ? "has" : "may hold up to", actions,
                     bptt_bytes_text(need, sizeof need, total),
                     held > 0 ? "the table and the planner's scratch"
                              : "the planner's scratch",
                     bptt_bytes_text(have, sizeof have, 2 * half),
                     dp ? " or a larger budget" : "");
}

int cli_plan_fits(const char *cmd, const bptt_table *tb, int64_t m)
{
    const int64_t c = bptt_table_cost(tb, m);
    if (c < 0)
        return 0; /* infeasible: bptt_table_plan says so */
    const char *name = bptt_table_strategy(tb)->name;
    const size_t t = bptt_table_length(tb);
    const double held = (double)bptt_table_bytes(tb);
    /* at least c + t actions (every advance, every backward): past half
     * of memory with those, refused uncounted; else counted exactly */
    int rc = plan_fits(cmd, name, t, m, c, c + (int64_t)t, held);
    if (rc)
        return rc;
    const int64_t n = bptt_table_plan_actions(tb, m);
    return plan_fits(cmd, name, t, m, c, n, held);
}

int cli_plan_cost_fits(const char *cmd, const char *name, size_t t,
                       int64_t m, int64_t c)
{
    return plan_fits(cmd, name, t, m, c, -1, 0);
}

int cli_table_error(const char *cmd, int status, const bptt_strategy *st,
                    size_t t, int64_t h, int64_t s, int64_t max_m,
                    const char *budget)
{
    if (status != BPTT_ETOOBIG && status != BPTT_ENOMEM)
        return cli_error(1, cmd, "cannot build the %s table for length %zu: "
                         "%s", st->name, t, bptt_strerror(status));
    const size_t nb = bptt_table_bytes_needed(st, t, h, s, max_m, NULL);
    const double bytes = nb == SIZE_MAX ? (double)SIZE_MAX : (double)nb;
    char need[32], have[32];
    bptt_bytes_text(need, sizeof need, bytes);
    bptt_bytes_text(have, sizeof have, (double)bptt_phys_bytes());
    if (status == BPTT_ENOMEM)
        return cli_error(1, cmd, "out of memory building the %s table for "
                         "length %zu and %s (the table would hold %s); use a "
                         "smaller length or budget", st->name, t, budget,
                         need);
    return cli_error(EXIT_USAGE, cmd, "the %s table for length %zu and %s "
                     "needs more than half of this machine's %s (building "
                     "it would hold %s); use a smaller length or budget",
                     st->name, t, budget, have, need);
}

int plan_check_feasible(const plan_args *a, const bptt_table_options *o,
                        int64_t *min_mem)
{
    const size_t t = (size_t)a->length;
    *min_mem = bptt_strategy_min_budget(a->strategy, t, a->h, a->s, o);
    for (int i = 0; i < a->n_budgets && a->infeasible == PLAN_INFEASIBLE_FAIL;
         i++) {
        if (a->budget[i] >= *min_mem)
            continue;
        char b[32], m[32], al[32], bytes[96] = "";
        bptt_slots_text(b, sizeof b, a->budget[i], a->h);
        bptt_slots_text(m, sizeof m, *min_mem, a->h);
        bptt_slots_text(al, sizeof al, a->s, a->h);
        if (a->quantum) /* --cell: the bytes too */
            snprintf(bytes, sizeof bytes, " (%" PRId64 " bytes)",
                     *min_mem * a->quantum);
        return cli_error(EXIT_INFEASIBLE, "plan",
                         "budget %s slots (%s) is infeasible for %s at length "
                         "%zu, alpha %s; the smallest feasible budget is %s "
                         "slots%s", b, a->budget_text[i], a->strategy->name,
                         t, al, m, bytes);
    }
    return 0;
}
