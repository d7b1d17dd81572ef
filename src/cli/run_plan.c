/* run_plan.c: the plan of `bptt run`, one level or two (run.h:
 * run_plan), and what `bptt run` and `bptt compare` share about a slow
 * level (twolevel.h): the two-level plan of a run's sizes made by the
 * library (bptt_twolevel_make) with its refusals said in one line, and
 * the room its slow level needs in the folder it will be kept in. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "bptt.h"
#include "budget.h"
#include "twolevel.h"
#include "steps.h"
#include "cli.h"
#include "run.h"

#define CMD "run"

int run_twolevel_plan(const char *cmd, const char *what, const char *name,
                      size_t T, const bptt_session_sizes *z,
                      int64_t budget_bytes, const char *budget_text,
                      const bptt_slow_level *slow, bptt_plan **plan,
                      bptt_plan_stats *ps, double *plan_bytes)
{
    const int64_t hb = (int64_t)z->hidden_bytes;
    const int64_t sb = (int64_t)z->internal_bytes;
    int64_t least = -1;
    *plan = NULL;
    int rc = bptt_twolevel_make(name, T, hb, sb, budget_bytes, slow, plan,
                                ps, &least);
    if (rc == BPTT_EINFEASIBLE)
        return cli_error(EXIT_INFEASIBLE, cmd, "%sbudget %s (%" PRId64
                         " bytes) is infeasible for the two-level %s planner "
                         "at length %zu; the smallest feasible budget is %"
                         PRId64 " bytes (h(0) is kept in the budget)", what,
                         budget_text, budget_bytes, name, T, least);
    if (rc == BPTT_ETOOBIG && ps->n_actions > 0)
        return cli_error(EXIT_USAGE, cmd, "%sits two-level plan has %zu "
                         "actions, more than half of this machine's memory "
                         "holds beside its table; use a smaller length or a "
                         "larger budget or disk", what, ps->n_actions);
    if (rc == BPTT_ETOOBIG) {
        bptt_units u;
        bptt_units_from_bytes(&u, hb, sb);
        bptt_slow_level sl = *slow;
        if (sl.budget != BPTT_SLOW_UNLIMITED)
            sl.budget /= u.quantum;
        const size_t need = bptt_twolevel_bytes_needed(
            name, T, u.hidden_units, u.internal_units,
            budget_bytes / u.quantum, &sl);
        char b[32];
        return cli_error(EXIT_USAGE, cmd, "%sthe two-level %s table for "
                         "length %zu would hold %s, more than half of this "
                         "machine's memory; use a smaller length, budget or "
                         "disk", what, name, T,
                         need == SIZE_MAX || need == 0
                             ? "more than a size_t counts"
                             : bptt_bytes_text(b, sizeof b, (double)need));
    }
    if (rc == BPTT_ENOMEM)
        return cli_error(1, cmd, "%sout of memory while planning", what);
    if (rc != BPTT_OK) /* the planner's plans are valid: a bug */
        return cli_error(1, cmd, "%splanning failed: %s", what,
                         bptt_strerror(rc));
    *plan_bytes += (double)(*plan)->n_actions * sizeof(bptt_action);
    return 0;
}

int run_slow_room(const char *cmd, const char *dir, int direct,
                  int64_t bytes)
{
    int err = 0;
    uint64_t room = 0;
    const int rc = bptt_steps_slow_check(dir, direct, &room, &err);
    const char *where = dir ? dir : "the temporary folder";
    if (rc == BPTT_ENOMEM)
        return cli_error(1, cmd, "out of memory");
    if (rc != BPTT_OK && direct && err == EINVAL)
        return cli_error(EXIT_USAGE, cmd, "--disk-direct: the filesystem of "
                         "%s refuses O_DIRECT (leave --disk-direct out, or "
                         "give --disk-dir a folder on a disk)", where);
    if (rc != BPTT_OK)
        return cli_error(EXIT_USAGE, cmd, "the slow level's file cannot be "
                         "made in %s: %s (give --disk-dir a folder you can "
                         "write)", where, strerror(err ? err : EIO));
    if ((double)bytes <= (double)room)
        return 0;
    char need[32], have[32];
    return cli_error(EXIT_USAGE, cmd, "the slow level needs up to %s and %s "
                     "has %s free; give a smaller --disk or another "
                     "--disk-dir", bptt_bytes_text(need, sizeof need,
                                                   (double)bytes),
                     where, bptt_bytes_text(have, sizeof have, (double)room));
}

int run_plan(const run_args *a, const bptt_session_sizes *z,
             const bptt_budget_resolved *budget, int threads,
             bptt_plan **plan, bptt_plan_stats *ps, bptt_slow_level *slow)
{
    const size_t T = (size_t)a->length;
    const int64_t hb = (int64_t)z->hidden_bytes;
    const int64_t sb = (int64_t)z->internal_bytes;
    const char *name = a->strategy->name;
    memset(slow, 0, sizeof *slow);
    *plan = NULL;
    if (a->disk) { /* its budget resolved as --memory's is */
        bptt_budget_resolved d;
        int rc = 0;
        slow->budget = BPTT_SLOW_UNLIMITED;
        if (strcmp(a->disk, "inf") != 0) {
            if ((rc = run_budget(CMD, "--disk", a->disk, T, z, &d)) != 0)
                return rc;
            slow->budget = d.bytes;
        }
        slow->write_cost = a->write_cost;
        slow->read_cost = a->read_cost;
        double bytes = 0;
        return run_twolevel_plan(CMD, "", name, T, z, budget->bytes,
                                 a->memory, slow, plan, ps, &bytes);
    }
    /* plan once (bptt_plan_make): an infeasible budget is refused before
     * any table is built, a table or plan past half of memory before it
     * is made */
    int64_t min_bytes;
    const bptt_table_options topts = {.threads = threads};
    const int rc = bptt_plan_make(name, T, hb, sb, budget->bytes, &topts,
                                  plan, ps, &min_bytes);
    const double full_ckpt = z->full_checkpoint_bytes;
    if (rc == BPTT_EINFEASIBLE)
        return cli_error(EXIT_INFEASIBLE, CMD,
                         "budget %" PRId64 " bytes (%s) is infeasible for %s "
                         "at length %zu; the smallest feasible budget is "
                         "%" PRId64 " bytes (%.4g%% of full BPTT's %.0f)",
                         budget->bytes, a->memory, name, T, min_bytes,
                         100.0 * (double)min_bytes / full_ckpt, full_ckpt);
    if (rc == BPTT_ETOOBIG && ps->forward_ops > 0)
        return cli_plan_cost_fits(CMD, name, T, budget->units,
                                  ps->forward_ops);
    if (rc == BPTT_ETOOBIG || rc == BPTT_ENOMEM) {
        bptt_units u;
        bptt_units_from_bytes(&u, hb, sb);
        char said[96];
        snprintf(said, sizeof said, "a budget of %s (%" PRId64 " bytes)",
                 a->memory, budget->bytes);
        return cli_table_error(CMD, rc, a->strategy, T, u.hidden_units,
                               u.internal_units, budget->units, said);
    }
    if (rc != BPTT_OK)
        return cli_error(1, CMD, "planning failed: %s", bptt_strerror(rc));
    return 0;
}
