/* cli_plan.c: `bptt plan`: the optimal plan for one (strategy, length,
 * budget, alpha), its cost and peak as the validator measured them, the
 * schedule itself (--actions) or the cost at every budget (--curve).
 *
 * Its JSON and csv hold no string from the user: the strategy and the op
 * names are fixed words of the library (bptt.h), written as they are, and
 * every other value is a number (a budget as its slots, never as typed).
 *
 * Test hook, left out of --help like run's: --fail-alloc N makes the N-th
 * allocation of the planner library fail (bptt_alloc_fail_at), so that
 * tests/test_cli can walk every allocation of a small plan. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "budget.h"
#include "cell.h"
#include "cli.h"
#include "model.h"
#include "plan.h"

#define CMD "plan"
#define MAX_CURVE 10000000 /* lines of --curve */

static void plan_usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt plan --length T [--strategy S] [--memory M]\n"
        "                 [--alpha A | --cell C [--hidden H] [--batch B]\n"
        "                 [--layers L]] [--segment K] [--threads K]\n"
        "                 [--format text|json|csv] [--actions | --curve]\n"
        "                 [--infeasible fail|record|skip]\n"
        "                 [--help] [--version]\n"
        "\n"
        "Plans one training iteration of T steps under a memory budget and\n"
        "reports forward ops (the first sweep included), backward ops and the\n"
        "peak of stored slots, as the symbolic validator counted them.\n"
        "\n"
        "  --strategy S   @STRATEGIES@\n"
        "                 (default msm); a comma list plans each\n"
        "  --length T     sequence length, T >= 1\n"
        "  --memory M     budget in slots (hidden state = 1, internal state =\n"
        "                 A, h(0) counted): 200 or 200slots, or a share of full\n"
        "                 BPTT's memory: 5%; a comma list plans each budget\n"
        "                 from one table (default 100%)\n"
        "  --alpha A      internal state size in slots, >= 1, e.g. 4 or 3.5\n"
        "                 (default 1)\n"
        "  --cell C       @CELLS@: the state sizes of the network bptt run\n"
        "                 trains, with --hidden H (128), --batch B (32) and\n"
        "                 --layers L (1); budgets may then be bytes (64MiB)\n"
        "                 and the records add the bytes\n"
        "  --segment K    Chen's segment length (default ceil(sqrt(T)))\n"
        "  --format F     text (default), json (one object per line) or csv\n"
        "  --actions      print the schedule, one action per line (csv: the\n"
        "                 schedule alone; json: inside the object)\n"
        "  --curve        cost at every budget 1..M (M the largest budget)\n"
        "  --threads K    threads for building the table (default: OpenMP's)\n"
        "  --infeasible P a budget below a strategy's smallest feasible one:\n"
        "                 fail (default: exit 3, nothing printed), record (a\n"
        "                 record without counts, naming the smallest), skip\n"
        "                 (no record; stderr counts them)\n"
        "\n"
        "exit status: 0 ok, 2 bad input, 3 budget below the smallest feasible\n"
        "one (the message names it)\n");
}



/* Splits a comma list in place; an empty item ("", "5,", "5,,6") is an
 * error. */
static int split_budgets(plan_args *a, char *list)
{
    a->n_budgets = 0;
    for (char *tok = list, *comma;; tok = comma + 1) {
        comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        if (!*tok)
            return cli_error(EXIT_USAGE, CMD,
                             "--memory: empty budget in the list (give "
                             "slots, e.g. 200, or a share of full BPTT's "
                             "memory, e.g. 5%%, separated by commas)");
        if (a->n_budgets == MAX_BUDGETS)
            return cli_error(EXIT_USAGE, CMD,
                             "--memory: more than %d budgets (split the "
                             "list into several runs)",
                             MAX_BUDGETS);
        a->budget_text[a->n_budgets++] = tok;
        if (!comma)
            return 0;
    }
}

/* Splits a comma list of strategies in place into a->strategies. */
static int split_strategies(plan_args *a, char *list)
{
    a->n_strategies = 0;
    for (char *tok = list, *comma;; tok = comma + 1) {
        comma = strchr(tok, ',');
        if (comma)
            *comma = '\0';
        const bptt_strategy *st = bptt_strategy_find(tok);
        if (!st)
            return cli_unknown_strategy(CMD, "--strategy", tok);
        if (a->n_strategies == MAX_STRATEGIES)
            return cli_error(EXIT_USAGE, CMD, "--strategy: more than %d "
                             "strategies", MAX_STRATEGIES);
        a->strategies[a->n_strategies++] = st;
        if (!comma)
            return 0;
    }
}

/* The units of a hidden and an internal state: from --alpha (h = 1 for an
 * integer alpha), or from the sizes of a network (--cell, with bytes per
 * unit in a->quantum). */
static int state_units(plan_args *a)
{
    bptt_units u;
    if (!a->cell) {
        if (a->sized)
            return cli_error(EXIT_USAGE, CMD, "%s sizes a network: give "
                             "--cell too (e.g. --cell lstm)", a->sized);
        bptt_units_from_alpha(a->alpha_text, &u); /* checked when parsed */
    } else {
        if (a->alpha_given)
            return cli_error(EXIT_USAGE, CMD, "--alpha and --cell exclude "
                             "each other (the cell's sizes give alpha)");
        double hb, sb;
        bptt_model_state_bytes(a->cell, (size_t)a->layers, (size_t)a->batch,
                               (size_t)a->hidden, &hb, &sb);
        if (sb > (double)INT64_MAX / 4 ||
            bptt_units_from_bytes(&u, (int64_t)hb, (int64_t)sb) != BPTT_OK)
            return cli_error(EXIT_USAGE, CMD, "--cell: states of %.0f bytes "
                             "are too large to plan", sb);
        a->quantum = u.quantum;
    }
    a->h = u.hidden_units;
    a->s = u.internal_units;
    return 0;
}

/* A budget in units: slots (a->h units each), a share of full (units), or
 * bytes (with --cell only).  0, or the error and EXIT_USAGE. */
static int budget_units(const plan_args *a, const char *text, int64_t full,
                        int64_t *out)
{
    bptt_budget b;
    if (bptt_budget_parse(text, &b) != BPTT_OK)
        return cli_parse_budget(CMD, text, full, out); /* its error */
    if (b.kind == BPTT_BUDGET_BYTES && !a->quantum)
        return cli_error(EXIT_USAGE, CMD, "--memory: '%s' is in bytes, which "
                         "needs the network's sizes (give --cell), or give "
                         "slots (200) or a share (5%%)", text);
    if (b.kind == BPTT_BUDGET_BYTES) {
        *out = b.bytes / a->quantum;
        return 0;
    }
    if (b.kind == BPTT_BUDGET_SLOTS)
        return cli_slots_units(CMD, "--memory", &b, text, a->h, a->alpha_text,
                               out);
    return cli_parse_budget(CMD, text, full, out); /* a share of full */
}

int plan_parse_args(int argc, char **argv, plan_args *a, int *help)
{
    static const struct option opts[] = {
        {"strategy", required_argument, NULL, 's'},
        {"length", required_argument, NULL, 't'},
        {"memory", required_argument, NULL, 'm'},
        {"alpha", required_argument, NULL, 'a'},
        {"segment", required_argument, NULL, 'k'},
        {"format", required_argument, NULL, 'f'},
        {"threads", required_argument, NULL, 'j'},
        {"actions", no_argument, NULL, 'A'},
        {"curve", no_argument, NULL, 'C'},
        {"cell", required_argument, NULL, 'c'},
        {"hidden", required_argument, NULL, 'H'},
        {"batch", required_argument, NULL, 'B'},
        {"layers", required_argument, NULL, 'L'},
        {"infeasible", required_argument, NULL, 'I'},
        {"fail-alloc", required_argument, NULL, 'F'}, /* test hook */
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    static char budget_copy[4096], strategy_copy[1024];
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    int rc = 0, have_memory = 0;

    memset(a, 0, sizeof *a);
    a->strategies[0] = bptt_strategy_find("msm");
    a->n_strategies = 1;
    a->alpha_text = "1";
    a->hidden = 128, a->batch = 32, a->layers = 1;
    a->format = FORMAT_TEXT;
    *help = 0;
    opterr = 0;
    optind = 1;
    int c;
    while (rc == 0 &&
           (c = cli_getopt(CMD, argc, argv, opts, seen, &rc)) != -1) {
        switch (c) {
        case CLI_OPT_ERROR:
            break;
        case 's':
            if (strlen(optarg) >= sizeof strategy_copy) {
                rc = cli_error(EXIT_USAGE, CMD, "--strategy: list too long");
                break;
            }
            strcpy(strategy_copy, optarg);
            rc = split_strategies(a, strategy_copy);
            break;
        case 't':
            rc = cli_parse_int(CMD, "--length", optarg, 1, INT32_MAX - 1,
                               &a->length);
            break;
        case 'm':
            if (strlen(optarg) >= sizeof budget_copy)
                rc = cli_error(EXIT_USAGE, CMD, "--memory: list too long");
            else {
                strcpy(budget_copy, optarg);
                rc = split_budgets(a, budget_copy);
                have_memory = 1;
            }
            break;
        case 'a': {
            bptt_units u;
            a->alpha_text = optarg;
            a->alpha_given = 1;
            if (bptt_units_from_alpha(optarg, &u) != BPTT_OK)
                rc = cli_error(EXIT_USAGE, CMD, "--alpha: '%s' is not a state "
                               "size (give a number from 1 to %d with at most "
                               "6 decimals, e.g. 4 or 3.5)", optarg,
                               BPTT_ALPHA_MAX);
            break;
        }
        case 'c':
            a->cell = bptt_cell_find(optarg);
            if (!a->cell)
                rc = cli_unknown_cell(CMD, "--cell", optarg);
            break;
        case 'H':
            a->sized = a->sized ? a->sized : "--hidden";
            rc = cli_parse_int(CMD, "--hidden", optarg, 1, (1 << 24) - 1,
                               &a->hidden);
            break;
        case 'B':
            a->sized = a->sized ? a->sized : "--batch";
            rc = cli_parse_int(CMD, "--batch", optarg, 1, (1 << 24) - 1,
                               &a->batch);
            break;
        case 'L':
            a->sized = a->sized ? a->sized : "--layers";
            rc = cli_parse_int(CMD, "--layers", optarg, 1, BPTT_MAX_LAYERS,
                               &a->layers);
            break;
        case 'k':
            rc = cli_parse_int(CMD, "--segment", optarg, 1, INT32_MAX - 1,
                               &a->segment);
            break;
        case 'j':
            rc = cli_parse_int(CMD, "--threads", optarg, 1, 4096,
                               &a->threads);
            break;
        case 'f':
            rc = cli_parse_format(CMD, optarg, &a->format);
            break;
        case 'A':
            a->actions = 1;
            break;
        case 'C':
            a->curve = 1;
            break;
        case 'I':
            if (strcmp(optarg, "fail") == 0 || strcmp(optarg, "error") == 0)
                a->infeasible = PLAN_INFEASIBLE_FAIL;
            else if (strcmp(optarg, "record") == 0)
                a->infeasible = PLAN_INFEASIBLE_RECORD;
            else if (strcmp(optarg, "skip") == 0)
                a->infeasible = PLAN_INFEASIBLE_SKIP;
            else
                rc = cli_error(EXIT_USAGE, CMD, "--infeasible: '%s' is not a "
                               "policy (use fail, record or skip)", optarg);
            break;
        case 'F':
            rc = cli_parse_int(CMD, "--fail-alloc", optarg, 1, INT64_MAX / 2,
                               &a->fail_alloc);
            break;
        case 'h':
            *help = 1;
            return 0;
        default:
            rc = cli_option_error(CMD, c, argv);
        }
    }
    if ((rc = cli_no_operands(CMD, rc, argc, argv)) != 0)
        return rc;
    if ((rc = cli_length_given(CMD, a->length)) != 0)
        return rc;
    if (a->actions && a->curve)
        return cli_error(EXIT_USAGE, CMD, "--actions and --curve exclude each "
                         "other (use one)");
    if ((a->actions || a->curve) && a->infeasible != PLAN_INFEASIBLE_FAIL)
        return cli_error(EXIT_USAGE, CMD, "--infeasible applies to records, "
                         "not to --%s (which prints %s)",
                         a->actions ? "actions" : "curve",
                         a->actions ? "one plan"
                                    : "every budget, infeasible ones marked");
    for (int k = 0; k < a->n_strategies; k++)
        if (a->segment && !(a->strategies[k]->flags & BPTT_STRATEGY_SEGMENT)) {
            char names[128];
            bptt_strategy_names_with(names, sizeof names,
                                     BPTT_STRATEGY_SEGMENT, " or ");
            return cli_error(EXIT_USAGE, CMD, "--segment applies to "
                             "--strategy %s only", names);
        }
    if ((a->actions || a->curve) && a->n_strategies > 1)
        return cli_error(EXIT_USAGE, CMD, "--%s takes one strategy, not a "
                         "list", a->actions ? "actions" : "curve");
    if ((rc = state_units(a)) != 0)
        return rc;
    if (!have_memory) {
        a->budget_text[0] = "100%";
        a->n_budgets = 1;
    }
    if ((a->actions || a->curve) && a->n_budgets > 1)
        return cli_error(EXIT_USAGE, CMD, "--%s takes one budget, not a list",
                         a->actions ? "actions" : "curve");
    const int64_t full = bptt_full_peak((size_t)a->length, a->h, a->s);
    for (int i = 0; i < a->n_budgets && rc == 0; i++)
        rc = budget_units(a, a->budget_text[i], full, &a->budget[i]);
    if (rc == 0 && a->curve && a->budget[0] > MAX_CURVE)
        return cli_error(EXIT_USAGE, CMD, "--curve prints one line per budget "
                         "1..M; M = %" PRId64 " (%s) is more than %d lines "
                         "(give a smaller --memory)", a->budget[0],
                         a->budget_text[0], MAX_CURVE);
    return rc;
}

/* ---- shared with `bptt sweep` (cli.h) ------------------------------------ */

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
