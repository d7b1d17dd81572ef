/* plan.c: `bptt plan`: the optimal plan for one (strategy, length,
 * budget, alpha), its cost and peak as the validator measured them, the
 * schedule itself (--actions) or the cost at every budget (--curve);
 * --online plans are plan_online.c's, two-level plans (--disk)
 * plan_disk.c's.
 * Its arguments are plan_args.c's; what it shares with `bptt sweep` is
 * plan_shared.c's; its records are written by the library (planrec.h).
 *
 * Its JSON and csv hold no string from the user: the strategy and the op
 * names are fixed words of the library (bptt.h), written as they are, and
 * every other value is a number (a budget as its slots, never as typed).
 *
 * Test hook, left out of --help like run's: --fail-alloc N makes the N-th
 * allocation of the planner library fail (bptt_alloc_fail_at), so that
 * tests/test_cli_fail can walk every allocation of a small plan. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>

#include "bptt.h"
#include "plan/alloc.h"
#include "cli.h"
#include "plan.h"
#include "io/planrec.h"

#define CMD "plan"

/* Where `bptt plan` writes: a buffer, printed whole at the end when every
 * plan was made (the output is written whole or not at all). */
static bptt_strbuf out;

/* a->strategy's record at budget memory (st NULL: infeasible). */
static bptt_plan_record record(const plan_args *a, int64_t memory,
                               int64_t full, int64_t min_mem,
                               const bptt_plan_stats *st)
{
    return (bptt_plan_record){a->strategy->name, a->length, a->s, memory,
                              full, min_mem, st, a->h};
}

/* Every budget of a->strategy from one table: the plans, or with --curve
 * the cost at every budget; the budgets checked feasible (min_mem, from
 * plan_check_feasible) and the plans checked to fit in memory before
 * anything of this strategy is printed. */
static int plan_strategy(const plan_args *a, int64_t full, int64_t min_mem,
                         int *n_skipped)
{
    const size_t t = (size_t)a->length;
    /* the table serves the feasible budgets only */
    int64_t top = -1, least = INT64_MAX;
    for (int i = 0; i < a->n_budgets; i++)
        if (a->budget[i] >= min_mem || a->curve) {
            top = a->budget[i] > top ? a->budget[i] : top;
            least = a->budget[i] < least ? a->budget[i] : least;
        }
    /* budgets below the least asked need not be built (--curve asks all) */
    bptt_table_options opts = {.chen_segment = (size_t)a->segment,
                               .threads = (int)a->threads,
                               .min_budget = a->curve ? 0 : least};
    bptt_table *tb = NULL;
    int rc = 0;
    double table_seconds = 0;
    if (top >= 0) {
        if (a->fail_alloc)
            bptt_alloc_fail_at((size_t)a->fail_alloc);
        const double t0 = cli_seconds();
        rc = bptt_table_alloc(&tb, a->strategy, t, a->h, a->s, top, &opts);
        table_seconds = cli_seconds() - t0;
        if (rc != BPTT_OK) {
            char budget[64], m[32];
            snprintf(budget, sizeof budget, "budgets up to %s slots",
                     bptt_slots_text(m, sizeof m, top, a->h));
            return cli_table_error(CMD, rc, a->strategy, t, a->h, a->s, top,
                                   budget);
        }
    }
    if (a->curve) {
        const bptt_plan_record r = record(a, top, full, min_mem, NULL);
        bptt_plan_curve(&out, (int)a->format, &r, tb, a->budget[0]);
        bptt_table_free(tb);
        return 0;
    }
    const bptt_plan_sizes z = {a->cell ? a->cell->name : NULL, a->layers,
                               a->hidden, a->batch, a->quantum};
    /* every plan must fit before anything is printed */
    for (int i = 0; i < a->n_budgets && rc == 0; i++)
        if (a->budget[i] >= min_mem)
            rc = cli_plan_fits(CMD, tb, a->budget[i]);
    for (int i = 0; i < a->n_budgets && rc == 0; i++) {
        const int64_t m = a->budget[i];
        if (m < min_mem) { /* --infeasible record or skip */
            const bptt_plan_record r = record(a, m, full, min_mem, NULL);
            if (a->infeasible == PLAN_INFEASIBLE_RECORD)
                bptt_plan_row_infeasible(&out, (int)a->format, &r, &z);
            else
                (*n_skipped)++;
            continue;
        }
        bptt_plan *p;
        bptt_plan_stats st;
        double plan_seconds;
        rc = cli_plan_at(CMD, tb, m, &p, &st, &plan_seconds);
        if (rc)
            break;
        const bptt_plan_record r = record(a, m, full, min_mem, &st);
        const double secs = table_seconds + plan_seconds;
        const size_t tbytes = bptt_table_bytes(tb);
        if (a->actions && a->format == FORMAT_JSON) {
            bptt_plan_row(&out, (int)a->format, &r, &z, secs, tbytes, p);
        } else if (a->actions) {
            if (a->format == FORMAT_TEXT) {
                bptt_plan_header(&out, (int)a->format, a->cell != NULL);
                bptt_plan_row(&out, (int)a->format, &r, &z, secs, tbytes,
                              NULL);
            }
            bptt_plan_actions(&out, (int)a->format, p, a->h);
        } else {
            bptt_plan_row(&out, (int)a->format, &r, &z, secs, tbytes, NULL);
        }
        bptt_plan_free(p);
    }
    bptt_table_free(tb);
    return rc;
}

int cli_plan(int argc, char **argv)
{
    plan_args a;
    int help;
    int rc = plan_parse_args(argc, argv, &a, &help);
    if (help) {
        plan_usage(stdout);
        return 0;
    }
    if (rc)
        return rc;
    if (a.online)
        return plan_online(&a);
    if (a.disk_text)
        return plan_disk(&a);

    const int64_t full = bptt_full_peak((size_t)a.length, a.h, a.s);
    /* every strategy's budgets feasible before anything is printed (with
     * --infeasible fail) */
    int64_t min_mem[MAX_STRATEGIES];
    for (int k = 0; k < a.n_strategies && rc == 0; k++) {
        a.strategy = a.strategies[k];
        const bptt_table_options o = {.chen_segment = (size_t)a.segment};
        rc = plan_check_feasible(&a, &o, &min_mem[k]);
    }
    if (rc)
        return rc;
    if (!a.actions && !a.curve)
        bptt_plan_header(&out, (int)a.format, a.cell != NULL);
    int n_skipped = 0;
    for (int k = 0; k < a.n_strategies && rc == 0; k++) {
        a.strategy = a.strategies[k];
        rc = plan_strategy(&a, full, min_mem[k], &n_skipped);
    }
    if (out.failed && rc == 0)
        rc = cli_error(1, CMD, "out of memory");
    if (rc == 0 && out.p)
        fwrite(out.p, 1, out.n, stdout); /* errors: main.c's finish */
    bptt_strbuf_free(&out);
    if (rc == 0 && n_skipped)
        cli_note(CMD, "skipped %d (strategy, budget) pair%s below the "
                 "smallest feasible budget (--infeasible record lists them)",
                 n_skipped, n_skipped == 1 ? "" : "s");
    return rc;
}
