/* plan_shared.c: what `bptt plan` and `bptt sweep` share (cli.h): a plan
 * record as JSON members, the validated plan of a table at one budget,
 * whether a plan fits in memory before it is made, and the message for a
 * table that cannot be built. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>

#include "bptt.h"
#include "cli.h"
#include "plan.h"

int cli_plan_record_json(const cli_plan_record *r, char *buf, size_t cap)
{
    const int64_t u = r->unit > 1 ? r->unit : 1;
    char al[32], mem[32], full[32], least[32], peak[32];
    cli_slots_text(al, sizeof al, r->alpha, u);
    cli_slots_text(mem, sizeof mem, r->memory, u);
    cli_slots_text(full, sizeof full, r->full_peak, u);
    cli_slots_text(least, sizeof least, r->min_memory, u);
    const int head = snprintf(buf, cap,
                              "\"strategy\":\"%s\",\"length\":%" PRId64
                              ",\"alpha\":%s,\"memory\":%s",
                              r->strategy, r->length, al, mem);
    if (head < 0 || (size_t)head >= cap)
        return head;
    char *rest = buf + head;
    const size_t left = cap - (size_t)head;
    int n;
    if (r->st) {
        const bptt_plan_stats *st = r->st;
        n = snprintf(rest, left,
                     ",\"forward_ops\":%" PRId64 ",\"recompute_ops\":%" PRId64
                     ",\"backward_ops\":%" PRId64 ",\"peak_slots\":%s"
                     ",\"forward_ops_per_step\":%.6f"
                     ",\"full_peak_slots\":%s"
                     ",\"memory_fraction\":%.6f,\"min_memory\":%s"
                     ",\"actions\":%zu",
                     st->forward_ops, st->recompute_ops, st->backward_ops,
                     cli_slots_text(peak, sizeof peak, st->peak_units, u),
                     (double)st->forward_ops / (double)r->length, full,
                     (double)st->peak_units / (double)r->full_peak, least,
                     st->n_actions);
    } else {
        n = snprintf(rest, left,
                     ",\"forward_ops\":null,\"recompute_ops\":null"
                     ",\"backward_ops\":null,\"peak_slots\":null"
                     ",\"forward_ops_per_step\":null"
                     ",\"full_peak_slots\":%s"
                     ",\"memory_fraction\":null,\"min_memory\":%s"
                     ",\"actions\":null",
                     full, least);
    }
    return n < 0 ? n : head + n;
}

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

int cli_plan_fits(const char *cmd, const bptt_table *tb, int64_t m)
{
    const int64_t c = bptt_table_cost(tb, m);
    if (c < 0)
        return 0; /* infeasible: bptt_table_plan says so */
    return cli_plan_cost_fits(cmd, bptt_table_strategy(tb)->name,
                              bptt_table_length(tb), m, c);
}

int cli_plan_cost_fits(const char *cmd, const char *name, size_t t,
                       int64_t m, int64_t c)
{
    const double bytes = bptt_plan_bytes_bound(t, c);
    const double actions = bytes / (double)sizeof(bptt_action);
    const double phys = (double)cli_phys_bytes();
    if (bytes <= phys / 2)
        return 0;
    char need[32], have[32];
    const bptt_strategy *st = bptt_strategy_find(name);
    const int dp = st && !(st->flags & BPTT_STRATEGY_FIXED_COST);
    return cli_error(EXIT_USAGE, cmd, "the %s plan for length %zu at budget "
                     "%" PRId64 " (%" PRId64 " forward ops) may hold up to "
                     "%.0f actions, %s, more than half of this machine's "
                     "%s; use a smaller length%s", name, t, m, c, actions,
                     cli_bytes_text(need, sizeof need, bytes),
                     cli_bytes_text(have, sizeof have, phys),
                     dp ? " or a larger budget" : "");
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
    cli_bytes_text(need, sizeof need, bytes);
    cli_bytes_text(have, sizeof have, (double)cli_phys_bytes());
    if (status == BPTT_ENOMEM)
        return cli_error(1, cmd, "out of memory building the %s table for "
                         "length %zu and %s (the table would hold %s); use a "
                         "smaller length or budget", st->name, t, budget,
                         need);
    return cli_error(EXIT_USAGE, cmd, "the %s table for length %zu and %s "
                     "needs more than half of this machine's %s (it would "
                     "hold %s); use a smaller length or budget",
                     st->name, t, budget, have, need);
}
