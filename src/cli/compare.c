/* compare.c: `bptt compare`: plans timed against a reference inside one
 * process, each iteration next to one of the reference, round after
 * round (compare.h), with each plan's exact counts and measured
 * checkpoint bytes, its seconds, the median ratio to the reference with
 * a distribution-free 95% interval, and whether its gradients were
 * bit-identical to the reference's in every iteration.
 *
 * Promises: every input is checked before any work (one line, exit 2; a
 * budget below a strategy's smallest feasible one, exit 3 naming it, as
 * `bptt run` does); the model options are `bptt run`'s, parsed by the
 * same code (run_model_option, src/cli/run_args.c); the session has no
 * optimizer, so every iteration sees the same parameters and batch.
 * Nothing is written on stdout unless the whole comparison succeeded.
 *
 * Two-level plans (twolevel.h): an item STRATEGY:BUDGET/DISK (the slash
 * is in no budget's grammar, budget.h) is planned by the two-level
 * planner with a slow level of DISK ("inf": no bound) and the costs of
 * --write-cost and --read-cost, in the units of the model's state bytes
 * (as `bptt plan --disk --cell` has them), and run with its slow level
 * in a temporary file, as every executor runs one.  Every plan's record
 * has its slow level's traffic and its predicted cost
 * (bptt_twolevel_stats_cost: one level, its forward ops). */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "twolevel.h"
#include "cli.h"
#include "compare.h"
#include "io/comparerec.h"
#include "fields.h"
#include "meta.h"
#include "run.h"
#include "session.h"
#include "strbuf.h"

#define CMD "compare"
#define MAX_PLANS 16

void openblas_set_num_threads(int);

typedef struct {
    run_args m; /* the model options (run.h) */
    const char *plans;
    int64_t rounds, warmup;
    enum output_format format;
    size_t n;
    char *buf; /* a copy of --plans, cut into its items */
    double write_cost, read_cost; /* forward ops a hidden state */
    const char *cost_given; /* the first of --write-cost, --read-cost */
    const bptt_strategy *strategy[MAX_PLANS];
    const char *memory[MAX_PLANS];
    const char *disk[MAX_PLANS]; /* "inf" of "msm:2%/inf"; "": one level */
    const char *item[MAX_PLANS]; /* "msm:5%" as given, in --plans */
    int item_len[MAX_PLANS];
} compare_args;

static void usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt compare --length T [--plans LIST] [--rounds R]\n"
        "                    [--warmup W] [--cell C] [--layers L] [--input X]\n"
        "                    [--hidden H] [--batch B] [--seed S] [--threads K]\n"
        "                    [--task copy|adding|text:FILE]\n"
        "                    [--write-cost WD] [--read-cost RD]\n"
        "                    [--disk-dir DIR] [--disk-direct]\n"
        "                    [--format text|json|csv] [--help]\n"
        "\n"
        "Times plans against a reference inside one process: in each round\n"
        "every plan's iteration runs next to one of the reference's (which of\n"
        "the two goes first alternates), all on one batch with the same\n"
        "parameters (no updates), and the ratio of the two is kept.  Reports\n"
        "per plan the forward ops and measured checkpoint bytes, median and\n"
        "least seconds, the median ratio to the reference with a\n"
        "distribution-free 95% interval (order statistics), and whether its\n"
        "gradients were bit-identical to the reference's in every iteration.\n"
        "The reference is also paired with itself: its ratio shows the noise.\n"
        "\n"
        "  --plans LIST    strategy:budget items, comma-separated, the first\n"
        "                  the reference (default full:100%,msm:5%); budgets\n"
        "                  as bptt run --memory takes them (64MiB, 5%,\n"
        "                  200slots); at most 16 items; strategies:\n"
        "                  @STRATEGIES@\n"
        "                  STRATEGY:BUDGET/DISK is a two-level plan (@TWOLEVEL@)\n"
        "                  with a slow level of DISK beside the budget, as\n"
        "                  budgets are written, or inf (no bound): msm:2%/inf,\n"
        "                  hsm:10slots/20slots; it runs with the slow level\n"
        "                  in a file (as bptt plan --disk plans it)\n"
        "  --disk-dir DIR  the folder of the slow level's file (an existing\n"
        "                  one; the file is removed at once and never\n"
        "                  outlives the run); default a temporary folder\n"
        "                  under $TMPDIR or /tmp, removed; needs a two-level\n"
        "                  item\n"
        "  --disk-direct   that file under O_DIRECT, past the page cache\n"
        "                  (as bptt calibrate --direct measures it)\n"
        "  --write-cost WD forward ops a hidden state's write to the slow\n"
        "                  level costs the two-level planner, 0..@COSTMAX@\n"
        "                  (default 1); needs a two-level item\n"
        "  --read-cost RD  the same for a read (default 1)\n"
        "  --rounds R      measured rounds, 1..100000 (default 20: an even\n"
        "                  count runs each order of a pair equally often)\n"
        "  --warmup W      rounds run first and discarded, 0..100000\n"
        "                  (default 1)\n"
        "  --cell C        @CELLS@ (default lstm)\n"
        "  --layers L      stacked recurrent layers, 1..16 (default 1)\n"
        "  --input X       input width (default: the task's; copy: 16)\n"
        "  --hidden H      hidden width (default 128)\n"
        "  --batch B       sequences per batch (default 32)\n"
        "  --length T      steps per sequence\n"
        "  --seed S        seed of parameters and data (default 1)\n"
        "  --threads K     OpenMP and OpenBLAS threads (default: all cores)\n"
        "  --task T        copy (default), adding, or text:FILE\n"
        "  --format F      text (default), json (one object per plan and\n"
        "                  line) or csv (a # meta line, a header, a row per\n"
        "                  plan)\n"
        "\n"
        "Every plan also reports its slow level's states and bytes written\n"
        "and read and their seconds (zeros for one level) and pred_cost,\n"
        "forward ops + WD x states written + RD x states read (in hidden\n"
        "states' worth), next to its measured seconds.\n"
        "RSS is per process, not per plan, so it is not reported per plan.\n"
        "\n"
        "exit status: 0 ok, 2 bad input, 3 a budget below its strategy's\n"
        "smallest feasible one (the message names it), 1 failure while\n"
        "running\n");
}

/* The disk part of item i (1-based; a->n its index) checked: a two-level
 * strategy, and "inf" or a budget's form.  0, or the error and
 * EXIT_USAGE. */
static int disk_form(const compare_args *a, size_t i)
{
    const size_t k = a->n;
    if (!cli_twolevel_takes(a->strategy[k]->name)) {
        char names[128];
        cli_twolevel_strategy_names(names, sizeof names, " or ");
        return cli_error(EXIT_USAGE, CMD, "--plans item %zu (%.*s): strategy "
                         "%s has no two-level planner (give %s, e.g. "
                         "msm:2%%/inf)", i, a->item_len[k], a->item[k],
                         a->strategy[k]->name, names);
    }
    char opt[48];
    snprintf(opt, sizeof opt, "--plans item %zu disk", i);
    return cli_disk_form(CMD, opt, a->disk[k]);
}

/* --plans into a->strategy, memory, disk, item: 0 or the error and EXIT_USAGE.
 * Budgets are checked as budgets here; in bytes once the sizes are
 * known. */
static int parse_plans(compare_args *a)
{
    free(a->buf);
    a->buf = strdup(a->plans);
    if (!a->buf)
        return cli_error(1, CMD, "out of memory");
    a->n = 0;
    char *p = a->buf;
    for (size_t i = 1;; i++) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        if (!*p)
            return cli_error(EXIT_USAGE, CMD, "--plans: item %zu is empty "
                             "(give strategy:budget items separated by "
                             "commas, e.g. full:100%%,msm:5%%)", i);
        if (a->n == MAX_PLANS)
            return cli_error(EXIT_USAGE, CMD, "--plans: more than %d items "
                             "(give at most %d)", MAX_PLANS, MAX_PLANS);
        a->item[a->n] = a->plans + (p - a->buf);
        a->item_len[a->n] = (int)strlen(p);
        char *colon = strchr(p, ':');
        if (!colon)
            return cli_error(EXIT_USAGE, CMD, "--plans: item %zu '%s' is not "
                             "strategy:budget (e.g. msm:5%%)", i, p);
        *colon = '\0';
        a->strategy[a->n] = bptt_strategy_find(p);
        if (!a->strategy[a->n]) {
            char opt[40];
            snprintf(opt, sizeof opt, "--plans item %zu", i);
            return cli_unknown_strategy(CMD, opt, p);
        }
        a->memory[a->n] = colon + 1;
        char *slash = strchr(colon + 1, '/');
        a->disk[a->n] = "";
        if (slash) {
            *slash = '\0';
            a->disk[a->n] = slash + 1;
        }
        char opt[40];
        snprintf(opt, sizeof opt, "--plans item %zu", i);
        int v = run_budget_form(CMD, opt, colon + 1);
        if (v != 0)
            return v;
        if (slash && (v = disk_form(a, i)) != 0)
            return v;
        a->n++;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

static int parse_args(int argc, char **argv, compare_args *a, int *help)
{
    static const struct option opts[] = {
        RUN_MODEL_OPTIONS,
        {"plans", required_argument, NULL, 'p'},
        {"rounds", required_argument, NULL, 'r'},
        {"warmup", required_argument, NULL, 'w'},
        {"format", required_argument, NULL, 'f'},
        {"write-cost", required_argument, NULL, 'W'},
        {"read-cost", required_argument, NULL, 'R'},
        {"disk-dir", required_argument, NULL, 'G'},
        {"disk-direct", no_argument, NULL, 'Y'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    run_model_defaults(&a->m);
    a->plans = "full:100%,msm:5%";
    a->rounds = 20;
    a->warmup = 1;
    a->write_cost = a->read_cost = 1;
    a->format = FORMAT_TEXT;
    *help = 0;
    opterr = 0;
    optind = 1;
    int c, rc = 0;
    while (rc == 0 &&
           (c = cli_getopt(CMD, argc, argv, opts, seen, &rc)) != -1) {
        if (run_model_option(CMD, c, optarg, &a->m, &rc))
            continue;
        switch (c) {
        case CLI_OPT_ERROR:
            break;
        case 'p':
            a->plans = optarg;
            break;
        case 'r':
            rc = cli_parse_int(CMD, "--rounds", optarg, 1, 100000,
                               &a->rounds);
            break;
        case 'w':
            rc = cli_parse_int(CMD, "--warmup", optarg, 0, 100000,
                               &a->warmup);
            break;
        case 'f':
            rc = cli_parse_format(CMD, optarg, &a->format);
            break;
        case 'W':
        case 'R': {
            const char *opt = c == 'W' ? "--write-cost" : "--read-cost";
            if (!a->cost_given)
                a->cost_given = opt;
            rc = cli_parse_cost(CMD, opt, optarg,
                                c == 'W' ? &a->write_cost : &a->read_cost);
            break;
        }
        case 'G':
            a->m.disk_dir = optarg;
            break;
        case 'Y':
            a->m.disk_direct = 1;
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
    if ((rc = cli_length_given(CMD, a->m.length)) != 0)
        return rc;
    if ((rc = parse_plans(a)) != 0)
        return rc;
    int two = 0;
    for (size_t p = 0; p < a->n; p++)
        two |= *a->disk[p] != '\0';
    if (a->cost_given && !two)
        return cli_error(EXIT_USAGE, CMD, "%s applies to two-level plans (give "
                         "an item strategy:budget/disk in --plans, e.g. "
                         "msm:2%%/inf)", a->cost_given);
    const char *alone = a->m.disk_dir ? "--disk-dir"
                        : a->m.disk_direct ? "--disk-direct" : NULL;
    if (alone && !two)
        return cli_error(EXIT_USAGE, CMD, "%s applies to two-level plans "
                         "(give an item strategy:budget/disk in --plans, "
                         "e.g. msm:2%%/inf)", alone);
    if (a->m.disk_dir)
        return cli_check_folder(CMD, "--disk-dir", a->m.disk_dir);
    return 0;
}

/* ---- the command ---------------------------------------------------------- */

/* The plans, every one checked: 0, or the error and its exit code. */
static int make_plans(const compare_args *a, const bptt_session_sizes *z,
                      int threads, const int64_t *budget_bytes,
                      const int64_t *disk, bptt_plan **plans,
                      double *plan_bytes, double *cost, int64_t *slow_peak)
{
    const size_t T = (size_t)a->m.length;
    const double hb = z->hidden_bytes, sb = z->internal_bytes;
    const double full = z->full_checkpoint_bytes;
    bptt_units u;
    bptt_units_from_bytes(&u, (int64_t)hb, (int64_t)sb);
    const bptt_table_options topts = {.threads = threads};
    *plan_bytes = 0;
    for (size_t p = 0; p < a->n; p++) {
        bptt_plan_stats ps;
        int64_t min_bytes;
        const char *name = a->strategy[p]->name;
        const bptt_slow_level slow = {disk[p], a->write_cost, a->read_cost};
        if (*a->disk[p]) {
            char what[160];
            snprintf(what, sizeof what, "--plans item %zu (%.*s): ", p + 1,
                     a->item_len[p], a->item[p]);
            const int r2 = run_twolevel_plan(CMD, what, name, T, z,
                                             budget_bytes[p], a->memory[p],
                                             &slow, &plans[p], &ps,
                                             plan_bytes);
            if (r2)
                return r2;
            cost[p] = bptt_twolevel_stats_cost(&ps, u.hidden_units, &slow);
            if (ps.slow_peak_units * u.quantum > *slow_peak)
                *slow_peak = ps.slow_peak_units * u.quantum;
            continue;
        }
        const int rc = bptt_plan_make(name, T, (int64_t)hb, (int64_t)sb,
                                      budget_bytes[p], &topts, &plans[p], &ps,
                                      &min_bytes);
        if (rc == BPTT_EINFEASIBLE)
            return cli_error(EXIT_INFEASIBLE, CMD,
                             "--plans item %zu (%.*s): budget %" PRId64
                             " bytes is infeasible for %s at length %zu; the "
                             "smallest feasible budget is %" PRId64 " bytes "
                             "(%.4g%% of full BPTT's %.0f)", p + 1,
                             a->item_len[p], a->item[p], budget_bytes[p],
                             name, T, min_bytes,
                             100.0 * (double)min_bytes / full, full);
        const int64_t m_units = budget_bytes[p] / u.quantum;
        if (rc == BPTT_ETOOBIG && ps.forward_ops > 0)
            return cli_plan_cost_fits(CMD, name, T, m_units, ps.forward_ops);
        if (rc == BPTT_ETOOBIG || rc == BPTT_ENOMEM) {
            char budget[160];
            snprintf(budget, sizeof budget, "a budget of %s (%" PRId64
                     " bytes)", a->memory[p], budget_bytes[p]);
            return cli_table_error(CMD, rc, a->strategy[p], T,
                                   u.hidden_units, u.internal_units, m_units,
                                   budget);
        }
        if (rc != BPTT_OK)
            return cli_error(1, CMD, "planning %.*s failed: %s",
                             a->item_len[p], a->item[p], bptt_strerror(rc));
        *plan_bytes += bptt_plan_bytes_bound(T, ps.forward_ops);
        cost[p] = bptt_twolevel_stats_cost(&ps, u.hidden_units, &slow);
    }
    return 0;
}

static int compare(compare_args *a)
{
    bptt_session_sizes z;
    int rc = run_preflight_sizes(CMD, &a->m, &z);
    if (rc)
        return rc;
    int64_t budget_bytes[MAX_PLANS], disk[MAX_PLANS];
    double cost[MAX_PLANS];
    double held = 0; /* the most checkpoint bytes any plan may hold */
    for (size_t p = 0; p < a->n; p++) {
        char opt[40];
        snprintf(opt, sizeof opt, "--plans item %zu", p + 1);
        bptt_budget_resolved r;
        if ((rc = run_budget(CMD, opt, a->memory[p], (size_t)a->m.length, &z,
                             &r)) != 0)
            return rc;
        budget_bytes[p] = r.bytes;
        held = fmax(held, (double)r.held_bytes);
        disk[p] = 0;
        if (strcmp(a->disk[p], "inf") == 0)
            disk[p] = BPTT_SLOW_UNLIMITED;
        else if (*a->disk[p]) {
            snprintf(opt, sizeof opt, "--plans item %zu disk", p + 1);
            if ((rc = run_budget(CMD, opt, a->disk[p], (size_t)a->m.length,
                                 &z, &r)) != 0)
                return rc;
            disk[p] = r.bytes;
        }
    }
    if ((rc = run_fits(CMD, "with its largest budget this comparison "
                       "would hold up to", z.fixed_bytes + held,
                       "give smaller budgets in --plans, e.g. 5%")))
        return rc;
    int threads;
    if ((rc = run_set_threads(CMD, a->m.threads, &z, held, &threads)))
        return rc;
    bptt_plan *plans[MAX_PLANS] = {NULL};
    bptt_compare_result res[MAX_PLANS];
    bptt_mem *mem = NULL;
    bptt_session *s = NULL;
    double plan_bytes = 0;
    int64_t slow_peak = 0; /* the most any plan keeps on the slow level */
    rc = make_plans(a, &z, threads, budget_bytes, disk, plans, &plan_bytes,
                    cost, &slow_peak);
    if (rc == 0 && slow_peak > 0)
        rc = run_slow_room(CMD, a->m.disk_dir, a->m.disk_direct, slow_peak);
    if (rc)
        goto out;
    if ((rc = run_fits(CMD, "with its plans this comparison would hold up "
                       "to", z.fixed_bytes + held + plan_bytes,
                       "use a smaller --length or fewer --plans")))
        goto out;
    mem = bptt_mem_alloc();
    if (!mem) {
        rc = cli_error(1, CMD, "out of memory");
        goto out;
    }
    bptt_session_spec sp;
    run_session_spec(&a->m, &sp);
    sp.optimizer = NULL; /* no updates: the same parameters throughout */
    sp.keep_last_params = 0;
    char why[4200] = "";
    int st = bptt_session_open(&s, &sp, mem, why, sizeof why);
    if (st != BPTT_OK) {
        rc = st == BPTT_ENOMEM
                 ? cli_error(1, CMD, "out of memory")
                 : cli_error(EXIT_USAGE, CMD, "--task %s: %s", a->m.task, why);
        goto out;
    }
    st = bptt_compare_run(s, (const bptt_plan *const *)plans, a->n,
                          (size_t)a->rounds, (size_t)a->warmup, res);
    if (st != BPTT_OK) {
        rc = cli_error(1, CMD, "the comparison failed: %s%s",
                       bptt_strerror(st),
                       st == BPTT_ENONFINITE ? " (the loss or the gradients "
                                               "of batch 0)"
                                             : "");
        goto out;
    }
    const char *names[MAX_PLANS];
    for (size_t p = 0; p < a->n; p++)
        names[p] = a->strategy[p]->name;
    const bptt_compare_report o = {
        .n = a->n, .strategy = names, .memory = a->memory,
        .budget_bytes = budget_bytes, .disk = a->disk,
        .predicted_cost = cost, .write_cost = a->write_cost,
        .read_cost = a->read_cost, .res = res, .warmup = a->warmup,
        .full_checkpoint_bytes = z.full_checkpoint_bytes,
        .cell = a->m.cell->name, .task = a->m.task, .layers = a->m.layers,
        .input = (int64_t)bptt_session_input(s), .hidden = a->m.hidden,
        .batch = a->m.batch, .length = a->m.length, .seed = a->m.seed,
        .threads = threads};
    bptt_meta meta;
    bptt_meta_collect(&meta);
    bptt_strbuf b = {0};
    bptt_compare_write(&o, (int)a->format, &meta, &b);
    bptt_compare_results_free(res, a->n);
    if (b.failed) {
        bptt_strbuf_free(&b);
        rc = cli_error(1, CMD, "out of memory writing the result");
        goto out;
    }
    if (b.p)
        fwrite(b.p, 1, b.n, stdout);
    bptt_strbuf_free(&b);
    if (a->format != FORMAT_TEXT) /* the records stay records */
        cli_note(CMD, "%s", BPTT_COMPARE_RSS_NOTE);
out:
    bptt_session_close(s);
    for (size_t p = 0; p < a->n; p++)
        bptt_plan_free(plans[p]);
    bptt_mem_free(mem);
    return rc;
}

int cli_compare(int argc, char **argv)
{
    compare_args a;
    memset(&a, 0, sizeof a);
    int help;
    int rc = parse_args(argc, argv, &a, &help);
    if (help) {
        usage(stdout);
        free(a.buf);
        return 0;
    }
    if (rc == 0)
        rc = compare(&a);
    free(a.buf);
    return rc;
}
