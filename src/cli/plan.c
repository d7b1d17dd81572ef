/* plan.c: `bptt plan`: the optimal plan for one (strategy, length,
 * budget, alpha), its cost and peak as the validator measured them, the
 * schedule itself (--actions) or the cost at every budget (--curve).
 * Its arguments are plan_args.c's; what it shares with `bptt sweep` is
 * plan_shared.c's.
 *
 * Its JSON and csv hold no string from the user: the strategy and the op
 * names are fixed words of the library (bptt.h), written as they are, and
 * every other value is a number (a budget as its slots, never as typed).
 *
 * Test hook, left out of --help like run's: --fail-alloc N makes the N-th
 * allocation of the planner library fail (bptt_alloc_fail_at), so that
 * tests/test_cli can walk every allocation of a small plan. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>

#include "bptt.h"
#include "cli.h"
#include "plan.h"

#define CMD "plan"

typedef struct {
    int64_t memory;
    bptt_plan_stats st;
    double seconds; /* planning: the plan's share plus the table's */
} plan_row;

/* Where `bptt plan` writes: a buffer, printed whole at the end when every
 * plan was made (the output is written whole or not at all). */
static FILE *out;

static void print_header(const plan_args *a)
{
    if (a->format == FORMAT_CSV)
        fprintf(out, "strategy,length,alpha,memory,forward_ops,recompute_ops,"
               "backward_ops,peak_slots,forward_ops_per_step,full_peak_slots,"
               "memory_fraction,min_memory,actions,plan_seconds,table_bytes"
               "%s\n", a->cell ? ",cell,layers,hidden,batch,"
                                  "hidden_state_bytes,internal_state_bytes,"
                                  "memory_bytes,peak_bytes"
                                : "");
    else if (a->format == FORMAT_TEXT)
        fprintf(out, "%-10s %8s %6s %10s %12s %9s %10s %9s\n", "strategy", "length",
               "alpha", "memory", "forward_ops", "fwd/step", "peak", "vs full");
}

/* With --cell: the network and the bytes, after the other values (csv:
 * columns; JSON: members). */
static void print_sizes(const plan_args *a, const plan_row *r)
{
    const int64_t q = a->quantum;
    if (a->format == FORMAT_CSV)
        fprintf(out, ",%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
               ",%" PRId64 ",%" PRId64, a->cell->name, a->layers, a->hidden,
               a->batch, a->h * q, a->s * q, r->memory * q,
               r->st.peak_units * q);
    else
        fprintf(out, ",\"cell\":\"%s\",\"layers\":%" PRId64 ",\"hidden\":%" PRId64
               ",\"batch\":%" PRId64 ",\"hidden_state_bytes\":%" PRId64
               ",\"internal_state_bytes\":%" PRId64 ",\"memory_bytes\":%" PRId64
               ",\"peak_bytes\":%" PRId64,
               a->cell->name, a->layers, a->hidden, a->batch, a->h * q,
               a->s * q, r->memory * q, r->st.peak_units * q);
}

/* One record.  With a plan (--actions, JSON) the schedule goes inside the
 * object as "schedule": [{"op":..., "step":...}, ...]. */
static void print_row(const plan_args *a, const plan_row *r, int64_t full,
                      int64_t min_mem, size_t table_bytes,
                      const bptt_plan *schedule)
{
    const double per_step = (double)r->st.forward_ops / (double)a->length;
    const double frac = (double)r->st.peak_units / (double)full;
    const char *name = a->strategy->name;
    char al[32], mem[32], peak[32], fp[32], mm[32];
    cli_slots_text(al, sizeof al, a->s, a->h);
    cli_slots_text(mem, sizeof mem, r->memory, a->h);
    cli_slots_text(peak, sizeof peak, r->st.peak_units, a->h);
    switch (a->format) {
    case FORMAT_TEXT:
        fprintf(out, "%-10s %8" PRId64 " %6s %10s %12" PRId64 " %9.4f %10s "
               "%8.2f%%\n",
               name, a->length, al, mem, r->st.forward_ops, per_step, peak,
               100.0 * frac);
        break;
    case FORMAT_CSV:
        fprintf(out, "%s,%" PRId64 ",%s,%s,%" PRId64 ",%" PRId64 ",%" PRId64
               ",%s,%.6f,%s,%.6f,%s,%zu,%.6f,%zu",
               name, a->length, al, mem, r->st.forward_ops,
               r->st.recompute_ops, r->st.backward_ops, peak, per_step,
               cli_slots_text(fp, sizeof fp, full, a->h), frac,
               cli_slots_text(mm, sizeof mm, min_mem, a->h),
               r->st.n_actions, r->seconds, table_bytes);
        if (a->cell)
            print_sizes(a, r);
        fputc('\n', out);
        break;
    case FORMAT_JSON: {
        const cli_plan_record rec = {name, a->length, a->s,   r->memory,
                                     full, min_mem,   &r->st, a->h};
        char buf[1024];
        cli_plan_record_json(&rec, buf, sizeof buf);
        fprintf(out, "{%s,\"plan_seconds\":%.6f,\"table_bytes\":%zu", buf,
               r->seconds, table_bytes);
        if (a->cell)
            print_sizes(a, r);
        if (schedule) {
            fputs(",\"schedule\":[", out);
            for (size_t i = 0; i < schedule->n_actions; i++)
                fprintf(out, "%s{\"op\":\"%s\",\"step\":%u}", i ? "," : "",
                       bptt_op_name((int)schedule->actions[i].op),
                       schedule->actions[i].step);
            fputc(']', out);
        }
        fputs("}\n", out);
        break;
    }
    }
}

/* The record of a budget below min_mem (--infeasible record): no
 * counts, the smallest feasible budget named. */
static void print_infeasible(const plan_args *a, const plan_row *r,
                             int64_t full, int64_t min_mem)
{
    const char *name = a->strategy->name;
    char al[32], mem[32], fp[32], mm[32], need[48];
    cli_slots_text(al, sizeof al, a->s, a->h);
    cli_slots_text(mem, sizeof mem, r->memory, a->h);
    cli_slots_text(fp, sizeof fp, full, a->h);
    cli_slots_text(mm, sizeof mm, min_mem, a->h);
    const int64_t q = a->quantum;
    switch (a->format) {
    case FORMAT_TEXT:
        snprintf(need, sizeof need, "needs %s", mm);
        fprintf(out, "%-10s %8" PRId64 " %6s %10s %12s %9s %10s %9s\n", name,
                a->length, al, mem, "infeasible", "-", need, "-");
        break;
    case FORMAT_CSV:
        fprintf(out, "%s,%" PRId64 ",%s,%s,,,,,,%s,,%s,,,", name, a->length,
                al, mem, fp, mm);
        if (a->cell)
            fprintf(out, ",%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                    ",%" PRId64 ",%" PRId64 ",", a->cell->name, a->layers,
                    a->hidden, a->batch, a->h * q, a->s * q, r->memory * q);
        fputc('\n', out);
        break;
    case FORMAT_JSON: {
        const cli_plan_record rec = {name, a->length, a->s, r->memory,
                                     full, min_mem,   NULL, a->h};
        char buf[1024];
        cli_plan_record_json(&rec, buf, sizeof buf);
        fprintf(out, "{%s,\"plan_seconds\":null,\"table_bytes\":null", buf);
        if (a->cell)
            fprintf(out, ",\"cell\":\"%s\",\"layers\":%" PRId64
                    ",\"hidden\":%" PRId64 ",\"batch\":%" PRId64
                    ",\"hidden_state_bytes\":%" PRId64
                    ",\"internal_state_bytes\":%" PRId64
                    ",\"memory_bytes\":%" PRId64 ",\"peak_bytes\":null",
                    a->cell->name, a->layers, a->hidden, a->batch, a->h * q,
                    a->s * q, r->memory * q);
        fputs("}\n", out);
        break;
    }
    }
}

/* The schedule as a table, one action per line, with the stored slots and
 * the forward ops so far (text and csv). */
static void print_actions(const plan_args *a, const bptt_plan *p)
{
    int64_t stored = p->hidden_units, fwd = 0;
    if (a->format == FORMAT_CSV)
        fprintf(out, "%s\n", "index,op,step,stored_slots,forward_ops");
    else
        fprintf(out, "\n%8s  %-16s %8s %8s %8s\n", "index", "action", "step",
               "stored", "fwd_ops");
    for (size_t i = 0; i < p->n_actions; i++) {
        const bptt_action *x = &p->actions[i];
        switch (x->op) {
        case BPTT_SAVE_HIDDEN: stored += p->hidden_units; break;
        case BPTT_SAVE_INTERNAL: stored += p->internal_units; break;
        case BPTT_FREE_HIDDEN: stored -= p->hidden_units; break;
        case BPTT_FREE_INTERNAL: stored -= p->internal_units; break;
        case BPTT_ADVANCE: fwd++; break;
        default: break;
        }
        const char *op = bptt_op_name((int)x->op);
        char st[32];
        cli_slots_text(st, sizeof st, stored, a->h);
        if (a->format == FORMAT_CSV)
            fprintf(out, "%zu,%s,%u,%s,%" PRId64 "\n", i, op, x->step, st, fwd);
        else
            fprintf(out, "%8zu  %-16s %8u %8s %8" PRId64 "\n", i, op, x->step, st,
                   fwd);
    }
}

static int run_curve(const plan_args *a, const bptt_table *tb, int64_t full)
{
    const int64_t top = a->budget[0];
    const char *name = a->strategy->name;
    char al[32], mem[32], cost[32] = "", ps[32] = "";
    cli_slots_text(al, sizeof al, a->s, a->h);
    if (a->format == FORMAT_CSV)
        fprintf(out, "%s\n", "strategy,length,alpha,memory,forward_ops,forward_ops_per_step,"
             "memory_fraction");
    else if (a->format == FORMAT_TEXT)
        fprintf(out, "%10s %12s %9s\n", "memory", "forward_ops", "fwd/step");
    for (int64_t m = 1; m <= top; m++) {
        const int64_t c = bptt_table_cost(tb, m);
        const double frac = (double)m / (double)full;
        cli_slots_text(mem, sizeof mem, m, a->h);
        cost[0] = ps[0] = '\0';
        if (c >= 0) {
            snprintf(cost, sizeof cost, "%" PRId64, c);
            snprintf(ps, sizeof ps, "%.6f", (double)c / (double)a->length);
        }
        if (a->format == FORMAT_CSV)
            fprintf(out, "%s,%" PRId64 ",%s,%s,%s,%s,%.6f\n", name, a->length, al,
                   mem, cost, ps, frac);
        else if (a->format == FORMAT_JSON)
            fprintf(out, "{\"strategy\":\"%s\",\"length\":%" PRId64
                   ",\"alpha\":%s,\"memory\":%s,\"forward_ops\":%s"
                   ",\"forward_ops_per_step\":%s,\"memory_fraction\":%.6f}\n",
                   name, a->length, al, mem, c < 0 ? "null" : cost,
                   c < 0 ? "null" : ps, frac);
        else if (c < 0)
            fprintf(out, "%10s %12s %9s\n", mem, "infeasible", "-");
        else
            fprintf(out, "%10s %12" PRId64 " %9.4f\n", mem, c,
                   (double)c / (double)a->length);
    }
    return 0;
}

/* The smallest feasible budget of a->strategy; for a budget below it
 * the error (nothing printed yet) and EXIT_INFEASIBLE. */
static int check_feasible(const plan_args *a, const bptt_table_options *o,
                          int64_t *min_mem)
{
    const size_t t = (size_t)a->length;
    *min_mem = bptt_strategy_min_budget(a->strategy, t, a->h, a->s, o);
    for (int i = 0; i < a->n_budgets && a->infeasible == PLAN_INFEASIBLE_FAIL;
         i++) {
        if (a->budget[i] >= *min_mem)
            continue;
        char b[32], m[32], al[32], bytes[96] = "";
        cli_slots_text(b, sizeof b, a->budget[i], a->h);
        cli_slots_text(m, sizeof m, *min_mem, a->h);
        cli_slots_text(al, sizeof al, a->s, a->h);
        if (a->quantum) /* --cell: the bytes too */
            snprintf(bytes, sizeof bytes, " (%" PRId64 " bytes)",
                     *min_mem * a->quantum);
        return cli_error(EXIT_INFEASIBLE, CMD,
                         "budget %s slots (%s) is infeasible for %s at length "
                         "%zu, alpha %s; the smallest feasible budget is %s "
                         "slots%s", b, a->budget_text[i], a->strategy->name,
                         t, al, m, bytes);
    }
    return 0;
}

/* Every budget of a->strategy from one table: the plans, or with --curve
 * the cost at every budget; the budgets checked feasible (min_mem, from
 * check_feasible) and the plans checked to fit in memory before anything
 * of this strategy is printed. */
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
                     cli_slots_text(m, sizeof m, top, a->h));
            return cli_table_error(CMD, rc, a->strategy, t, a->h, a->s, top,
                                   budget);
        }
    }
    if (a->curve) {
        rc = run_curve(a, tb, full);
        bptt_table_free(tb);
        return rc;
    }
    /* every plan must fit before anything is printed */
    for (int i = 0; i < a->n_budgets && rc == 0; i++)
        if (a->budget[i] >= min_mem)
            rc = cli_plan_fits(CMD, tb, a->budget[i]);
    for (int i = 0; i < a->n_budgets && rc == 0; i++) {
        plan_row r = {.memory = a->budget[i]};
        if (a->budget[i] < min_mem) { /* --infeasible record or skip */
            if (a->infeasible == PLAN_INFEASIBLE_RECORD)
                print_infeasible(a, &r, full, min_mem);
            else
                (*n_skipped)++;
            continue;
        }
        bptt_plan *p;
        double plan_seconds;
        rc = cli_plan_at(CMD, tb, a->budget[i], &p, &r.st, &plan_seconds);
        if (rc)
            break;
        r.seconds = table_seconds + plan_seconds;
        const size_t tbytes = bptt_table_bytes(tb);
        if (a->actions && a->format == FORMAT_JSON) {
            print_row(a, &r, full, min_mem, tbytes, p);
        } else if (a->actions) {
            if (a->format == FORMAT_TEXT) {
                print_header(a);
                print_row(a, &r, full, min_mem, tbytes, NULL);
            }
            print_actions(a, p);
        } else {
            print_row(a, &r, full, min_mem, tbytes, NULL);
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

    const int64_t full = bptt_full_peak((size_t)a.length, a.h, a.s);
    /* every strategy's budgets feasible before anything is printed (with
     * --infeasible fail) */
    int64_t min_mem[MAX_STRATEGIES];
    for (int k = 0; k < a.n_strategies && rc == 0; k++) {
        a.strategy = a.strategies[k];
        const bptt_table_options o = {.chen_segment = (size_t)a.segment};
        rc = check_feasible(&a, &o, &min_mem[k]);
    }
    if (rc)
        return rc;
    char *text = NULL;
    size_t len = 0;
    out = open_memstream(&text, &len);
    if (!out)
        return cli_error(1, CMD, "out of memory");
    if (!a.actions && !a.curve)
        print_header(&a);
    int n_skipped = 0;
    for (int k = 0; k < a.n_strategies && rc == 0; k++) {
        a.strategy = a.strategies[k];
        rc = plan_strategy(&a, full, min_mem[k], &n_skipped);
    }
    if (fclose(out) != 0 && rc == 0)
        rc = cli_error(1, CMD, "out of memory");
    if (rc == 0)
        fwrite(text, 1, len, stdout); /* errors: main.c's finish */
    free(text);
    if (rc == 0 && n_skipped)
        cli_note(CMD, "skipped %d (strategy, budget) pair%s below the "
                 "smallest feasible budget (--infeasible record lists them)",
                 n_skipped, n_skipped == 1 ? "" : "s");
    return rc;
}
