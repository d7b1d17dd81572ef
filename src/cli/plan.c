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
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "cli.h"

#define CMD "plan"
#define MAX_BUDGETS 64
#define MAX_CURVE 10000000 /* lines of --curve */

static void plan_usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt plan --length T [--strategy S] [--memory M] [--alpha A]\n"
        "                 [--format text|json|csv] [--actions | --curve]\n"
        "\n"
        "Plans one training iteration of T steps under a memory budget and\n"
        "reports forward ops (the first sweep included), backward ops and the\n"
        "peak of stored slots, as the symbolic validator counted them.\n"
        "\n"
        "  --strategy S   @STRATEGIES@\n"
        "                 (default msm)\n"
        "  --length T     sequence length, T >= 1\n"
        "  --memory M     budget in slots (hidden state = 1, internal state =\n"
        "                 A, h(0) counted): 200 or 200slots, or a share of full\n"
        "                 BPTT's memory: 5%; a comma list plans each budget\n"
        "                 from one table (default 100%)\n"
        "  --alpha A      internal state size in slots, integer >= 1 (default 1)\n"
        "  --segment K    Chen's segment length (default ceil(sqrt(T)))\n"
        "  --format F     text (default), json (one object per line) or csv\n"
        "  --actions      print the schedule, one action per line (csv: the\n"
        "                 schedule alone; json: inside the object)\n"
        "  --curve        cost at every budget 1..M (M the largest budget)\n"
        "  --threads K    threads for building the table (default: OpenMP's)\n"
        "\n"
        "exit status: 0 ok, 2 bad input, 3 budget below the smallest feasible\n"
        "one (the message names it)\n");
}

typedef struct {
    const bptt_strategy *strategy;
    int64_t length, alpha, segment, threads;
    int n_budgets;
    const char *budget_text[MAX_BUDGETS];
    int64_t budget[MAX_BUDGETS];
    enum output_format format;
    int actions, curve;
    int64_t fail_alloc; /* test hook: the planner allocation to fail */
} plan_args;

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

static int parse_args(int argc, char **argv, plan_args *a, int *help)
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
        {"fail-alloc", required_argument, NULL, 'F'}, /* test hook */
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    static char budget_copy[4096];
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    int rc = 0, have_memory = 0;

    memset(a, 0, sizeof *a);
    a->strategy = bptt_strategy_find("msm");
    a->alpha = 1;
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
            a->strategy = bptt_strategy_find(optarg);
            if (!a->strategy)
                rc = cli_unknown_strategy(CMD, "--strategy", optarg);
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
        case 'a':
            rc = cli_parse_int(CMD, "--alpha", optarg, 1, 1000000, &a->alpha);
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
    if (rc)
        return rc;
    if ((rc = cli_no_operands(CMD, argc, argv)) != 0)
        return rc;
    if (a->length == 0)
        return cli_error(EXIT_USAGE, CMD, "--length is required (e.g. "
                         "--length 1000)");
    if (a->actions && a->curve)
        return cli_error(EXIT_USAGE, CMD, "--actions and --curve exclude each "
                         "other (use one)");
    if (a->segment && !(a->strategy->flags & BPTT_STRATEGY_SEGMENT)) {
        char names[128];
        bptt_strategy_names_with(names, sizeof names, BPTT_STRATEGY_SEGMENT,
                                 " or ");
        return cli_error(EXIT_USAGE, CMD, "--segment applies to --strategy "
                         "%s only", names);
    }
    if (!have_memory) {
        a->budget_text[0] = "100%";
        a->n_budgets = 1;
    }
    if ((a->actions || a->curve) && a->n_budgets > 1)
        return cli_error(EXIT_USAGE, CMD, "--%s takes one budget, not a list",
                         a->actions ? "actions" : "curve");
    const int64_t full = bptt_full_peak((size_t)a->length, 1, a->alpha);
    for (int i = 0; i < a->n_budgets && rc == 0; i++)
        rc = cli_parse_budget(CMD, a->budget_text[i], full, &a->budget[i]);
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
    const int head = snprintf(buf, cap,
                              "\"strategy\":\"%s\",\"length\":%" PRId64
                              ",\"alpha\":%" PRId64 ",\"memory\":%" PRId64,
                              r->strategy, r->length, r->alpha, r->memory);
    if (head < 0 || (size_t)head >= cap)
        return head;
    char *rest = buf + head;
    const size_t left = cap - (size_t)head;
    int n;
    if (r->st) {
        const bptt_plan_stats *st = r->st;
        n = snprintf(rest, left,
                     ",\"forward_ops\":%" PRId64 ",\"recompute_ops\":%" PRId64
                     ",\"backward_ops\":%" PRId64 ",\"peak_slots\":%" PRId64
                     ",\"forward_ops_per_step\":%.6f"
                     ",\"full_peak_slots\":%" PRId64
                     ",\"memory_fraction\":%.6f,\"min_memory\":%" PRId64
                     ",\"actions\":%zu",
                     st->forward_ops, st->recompute_ops, st->backward_ops,
                     st->peak_units,
                     (double)st->forward_ops / (double)r->length,
                     r->full_peak,
                     (double)st->peak_units / (double)r->full_peak,
                     r->min_memory, st->n_actions);
    } else {
        n = snprintf(rest, left,
                     ",\"forward_ops\":null,\"recompute_ops\":null"
                     ",\"backward_ops\":null,\"peak_slots\":null"
                     ",\"forward_ops_per_step\":null"
                     ",\"full_peak_slots\":%" PRId64
                     ",\"memory_fraction\":null,\"min_memory\":%" PRId64
                     ",\"actions\":null",
                     r->full_peak, r->min_memory);
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

static void print_header(const plan_args *a)
{
    if (a->format == FORMAT_CSV)
        puts("strategy,length,alpha,memory,forward_ops,recompute_ops,"
             "backward_ops,peak_slots,forward_ops_per_step,full_peak_slots,"
             "memory_fraction,min_memory,actions,plan_seconds,table_bytes");
    else if (a->format == FORMAT_TEXT)
        printf("%-10s %8s %6s %10s %12s %9s %10s %9s\n", "strategy", "length",
               "alpha", "memory", "forward_ops", "fwd/step", "peak", "vs full");
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
    switch (a->format) {
    case FORMAT_TEXT:
        printf("%-10s %8" PRId64 " %6" PRId64 " %10" PRId64 " %12" PRId64
               " %9.4f %10" PRId64 " %8.2f%%\n",
               name, a->length, a->alpha, r->memory, r->st.forward_ops,
               per_step, r->st.peak_units, 100.0 * frac);
        break;
    case FORMAT_CSV:
        printf("%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
               ",%" PRId64 ",%" PRId64 ",%.6f,%" PRId64 ",%.6f,%" PRId64
               ",%zu,%.6f,%zu\n",
               name, a->length, a->alpha, r->memory, r->st.forward_ops,
               r->st.recompute_ops, r->st.backward_ops, r->st.peak_units,
               per_step, full, frac, min_mem, r->st.n_actions, r->seconds,
               table_bytes);
        break;
    case FORMAT_JSON: {
        const cli_plan_record rec = {name,    a->length, a->alpha, r->memory,
                                     full,    min_mem,   &r->st};
        char buf[1024];
        cli_plan_record_json(&rec, buf, sizeof buf);
        printf("{%s,\"plan_seconds\":%.6f,\"table_bytes\":%zu", buf,
               r->seconds, table_bytes);
        if (schedule) {
            fputs(",\"schedule\":[", stdout);
            for (size_t i = 0; i < schedule->n_actions; i++)
                printf("%s{\"op\":\"%s\",\"step\":%u}", i ? "," : "",
                       bptt_op_name((int)schedule->actions[i].op),
                       schedule->actions[i].step);
            fputc(']', stdout);
        }
        fputs("}\n", stdout);
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
        puts("index,op,step,stored_slots,forward_ops");
    else
        printf("\n%8s  %-16s %8s %8s %8s\n", "index", "action", "step",
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
        if (a->format == FORMAT_CSV)
            printf("%zu,%s,%u,%" PRId64 ",%" PRId64 "\n", i, op, x->step,
                   stored, fwd);
        else
            printf("%8zu  %-16s %8u %8" PRId64 " %8" PRId64 "\n", i, op,
                   x->step, stored, fwd);
    }
}

static int run_curve(const plan_args *a, const bptt_table *tb, int64_t full)
{
    const int64_t top = a->budget[0];
    if (a->format == FORMAT_CSV)
        puts("strategy,length,alpha,memory,forward_ops,forward_ops_per_step,"
             "memory_fraction");
    else if (a->format == FORMAT_TEXT)
        printf("%10s %12s %9s\n", "memory", "forward_ops", "fwd/step");
    for (int64_t m = 1; m <= top; m++) {
        const int64_t c = bptt_table_cost(tb, m);
        const double ps = (double)c / (double)a->length;
        const double frac = (double)m / (double)full;
        if (c < 0) {
            if (a->format == FORMAT_CSV)
                printf("%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",,,%.6f\n",
                       a->strategy->name, a->length, a->alpha, m, frac);
            else if (a->format == FORMAT_JSON)
                printf("{\"strategy\":\"%s\",\"length\":%" PRId64
                       ",\"alpha\":%" PRId64 ",\"memory\":%" PRId64
                       ",\"forward_ops\":null,\"forward_ops_per_step\":null"
                       ",\"memory_fraction\":%.6f}\n",
                       a->strategy->name, a->length, a->alpha, m, frac);
            else
                printf("%10" PRId64 " %12s %9s\n", m, "infeasible", "-");
            continue;
        }
        if (a->format == FORMAT_CSV)
            printf("%s,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64
                   ",%.6f,%.6f\n",
                   a->strategy->name, a->length, a->alpha, m, c, ps, frac);
        else if (a->format == FORMAT_JSON)
            printf("{\"strategy\":\"%s\",\"length\":%" PRId64
                   ",\"alpha\":%" PRId64 ",\"memory\":%" PRId64
                   ",\"forward_ops\":%" PRId64 ",\"forward_ops_per_step\":%.6f"
                   ",\"memory_fraction\":%.6f}\n",
                   a->strategy->name, a->length, a->alpha, m, c, ps, frac);
        else
            printf("%10" PRId64 " %12" PRId64 " %9.4f\n", m, c, ps);
    }
    return 0;
}

int cli_plan(int argc, char **argv)
{
    plan_args a;
    int help;
    int rc = parse_args(argc, argv, &a, &help);
    if (help) {
        plan_usage(stdout);
        return 0;
    }
    if (rc)
        return rc;

    const size_t t = (size_t)a.length;
    const int64_t full = bptt_full_peak(t, 1, a.alpha);
    int64_t top = 0;
    for (int i = 0; i < a.n_budgets; i++)
        if (a.budget[i] > top)
            top = a.budget[i];

    int64_t least = top;
    for (int i = 0; i < a.n_budgets; i++)
        if (a.budget[i] < least)
            least = a.budget[i];
    /* budgets below the least asked need not be built (--curve asks all) */
    bptt_table_options opts = {.chen_segment = (size_t)a.segment,
                               .threads = (int)a.threads,
                               .min_budget = a.curve ? 0 : least};
    const int64_t min_mem = bptt_strategy_min_budget(a.strategy, t, 1, a.alpha,
                                                     &opts);
    for (int i = 0; i < a.n_budgets; i++)
        if (a.budget[i] < min_mem) {
            return cli_error(EXIT_INFEASIBLE, CMD,
                             "budget %" PRId64 " slots (%s) is infeasible "
                             "for %s at length %zu, alpha %" PRId64
                             "; the smallest feasible budget is %" PRId64
                             " slots",
                             a.budget[i], a.budget_text[i], a.strategy->name,
                             t, a.alpha, min_mem);
        }

    bptt_table *tb;
    if (a.fail_alloc)
        bptt_alloc_fail_at((size_t)a.fail_alloc);
    const double t0 = cli_seconds();
    rc = bptt_table_alloc(&tb, a.strategy, t, 1, a.alpha, top, &opts);
    const double table_seconds = cli_seconds() - t0;
    if (rc != BPTT_OK) {
        char budget[64];
        snprintf(budget, sizeof budget, "budgets up to %" PRId64 " slots",
                 top);
        return cli_table_error(CMD, rc, a.strategy, t, 1, a.alpha, top,
                               budget);
    }

    if (a.curve) {
        rc = run_curve(&a, tb, full);
        bptt_table_free(tb);
        return rc;
    }

    /* every plan must fit before anything is printed */
    for (int i = 0; i < a.n_budgets && rc == 0; i++)
        rc = cli_plan_fits(CMD, tb, a.budget[i]);
    if (rc) {
        bptt_table_free(tb);
        return rc;
    }
    if (!a.actions)
        print_header(&a);
    for (int i = 0; i < a.n_budgets && rc == 0; i++) {
        plan_row r = {.memory = a.budget[i]};
        bptt_plan *p;
        double plan_seconds;
        rc = cli_plan_at(CMD, tb, a.budget[i], &p, &r.st, &plan_seconds);
        if (rc)
            break;
        r.seconds = table_seconds + plan_seconds;
        const size_t tbytes = bptt_table_bytes(tb);
        if (a.actions && a.format == FORMAT_JSON) {
            print_row(&a, &r, full, min_mem, tbytes, p);
        } else if (a.actions) {
            if (a.format == FORMAT_TEXT) {
                print_header(&a);
                print_row(&a, &r, full, min_mem, tbytes, NULL);
            }
            print_actions(&a, p);
        } else {
            print_row(&a, &r, full, min_mem, tbytes, NULL);
        }
        bptt_plan_free(p);
    }
    bptt_table_free(tb);
    return rc;
}
