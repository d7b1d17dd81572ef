/* plan_args.c: the arguments of `bptt plan` (plan.h): its help, the
 * options parsed and checked, budgets turned into units, before any
 * work. */
#define _POSIX_C_SOURCE 200809L
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "bptt.h"
#include "cli.h"
#include "online.h"
#include "model.h"
#include "numbers.h"
#include "twolevel.h"
#include "plan.h"

#define CMD "plan"

void plan_usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt plan --length T [--strategy S] [--memory M]\n"
        "                 [--alpha A | --cell C [--hidden H] [--batch B]\n"
        "                 [--layers L]] [--segment K] [--threads K]\n"
        "                 [--format text|json|csv] [--actions | --curve]\n"
        "                 [--online [--no-lookahead] [--points N]]\n"
        "                 [--disk D [--write-cost WD] [--read-cost RD]]\n"
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
        "  --curve        cost at every budget 1..M (M the largest budget);\n"
        "                 with --online, the online and the offline cost at\n"
        "                 every length 1..T under the one budget\n"
        "  --online       plan as if the length were unknown until the\n"
        "                 sequence ends (--strategy @ONLINE@; one budget;\n"
        "                 text or json): the planner is told step by step\n"
        "                 that one more step runs, and at step T that it is\n"
        "                 the last; the record adds the offline optimum\n"
        "  --no-lookahead with --online: the end is learned only after step\n"
        "                 T (no step is announced as the last)\n"
        "  --points N     with --online --curve: N lengths, log-spaced from 1\n"
        "                 to T (default: every length)\n"
        "  --disk D       a slow level beside the budget (host memory, a\n"
        "                 disk) of D slots, as --memory takes them (200, 5%,\n"
        "                 bytes with --cell), or inf (no bound): the two-level\n"
        "                 plan of the least cost, forward ops + WD x hidden\n"
        "                 states written + RD x hidden states read (an\n"
        "                 internal state counts alpha); --strategy @TWOLEVEL@,\n"
        "                 with --memory, not with --online or --curve; --disk\n"
        "                 0 plans one level.  The record adds disk, the costs,\n"
        "                 the states written and read, the cost and the slow\n"
        "                 level's peak\n"
        "  --write-cost WD  with --disk: forward ops a hidden state's write\n"
        "                 costs, a number from 0 to @COSTMAX@ (default 1)\n"
        "  --read-cost RD with --disk: forward ops a hidden state's read\n"
        "                 costs, the same (default 1)\n"
        "  --threads K    threads for building the table (default:\n"
        "                 OMP_NUM_THREADS, else the CPUs online)\n"
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

/* A budget of option opt in units: slots (a->h units each), a share of
 * full BPTT's peak, or bytes (with --cell only).  0, or the error and
 * EXIT_USAGE. */
static int budget_units(const plan_args *a, const char *opt,
                        const char *text, int64_t *out)
{
    const bptt_budget_sizes z = {(size_t)a->length, a->h, a->s, a->quantum};
    bptt_budget_resolved r;
    char why[512];
    if (bptt_budget_resolve(text, &z, 0, &r, why, sizeof why) == BPTT_OK) {
        *out = r.units;
        return 0;
    }
    if (r.given.kind == BPTT_BUDGET_BYTES && !a->quantum) /* as parsed */
        return cli_error(EXIT_USAGE, CMD, "%s: '%s' is in bytes, which "
                         "needs the network's sizes (give --cell), or give "
                         "slots (200) or a share (5%%)%s", opt, text,
                         a->disk_text == text ? ", or inf" : "");
    return cli_error(EXIT_USAGE, CMD, "%s: %s%s", opt, why,
                     a->disk_text == text ? "; or give inf, no bound" : "");
}

/* What --disk, --write-cost and --read-cost ask, checked against the
 * rest: 0, or the error and EXIT_USAGE. */
static int disk_args(const plan_args *a)
{
    if (a->cost_given && !a->disk_text)
        return cli_error(EXIT_USAGE, CMD, "%s applies to two-level plans "
                         "(add --disk D, e.g. --disk 10 or --disk inf)",
                         a->cost_given);
    if (!a->disk_text)
        return 0;
    if (a->online)
        return cli_error(EXIT_USAGE, CMD, "--disk and --online exclude each "
                         "other (the online planner keeps one level; drop "
                         "one)");
    if (a->curve)
        return cli_error(EXIT_USAGE, CMD, "--disk and --curve exclude each "
                         "other (--curve prints one level's cost at every "
                         "budget; drop one)");
    if (a->infeasible != PLAN_INFEASIBLE_FAIL)
        return cli_error(EXIT_USAGE, CMD, "--infeasible applies to one-level "
                         "plans' records, not to --disk (a budget below the "
                         "smallest: exit 3)");
    char names[128];
    cli_twolevel_strategy_names(names, sizeof names, " or ");
    for (int k = 0; k < a->n_strategies; k++)
        if (!cli_twolevel_takes(a->strategies[k]->name))
            return cli_error(EXIT_USAGE, CMD, "--disk: strategy %s has no "
                             "two-level planner (give --strategy %s)",
                             a->strategies[k]->name, names);
    return 0;
}

/* What --online, --no-lookahead and --points ask, checked against the
 * rest: 0, or the error and EXIT_USAGE. */
static int online_args(const plan_args *a)
{
    if (a->no_lookahead && !a->online)
        return cli_error(EXIT_USAGE, CMD, "--no-lookahead applies to online "
                         "plans (add --online)");
    if (a->points && !(a->online && a->curve))
        return cli_error(EXIT_USAGE, CMD, "--points applies to --online "
                         "--curve (add %s)",
                         a->online ? "--curve" : a->curve ? "--online"
                                                         : "--online --curve");
    if (!a->online)
        return 0;
    char names[128];
    cli_online_strategy_names(names, sizeof names, " or ");
    if (a->n_strategies > 1)
        return cli_error(EXIT_USAGE, CMD, "--online takes one strategy, not "
                         "a list (give --strategy %s)", names);
    bptt_online *o = NULL;
    const int known = bptt_online_new(&o, a->strategies[0]->name, 1, 1, 0,
                                      NULL) != BPTT_EUNKNOWN;
    bptt_online_free(o);
    if (!known)
        return cli_error(EXIT_USAGE, CMD, "--online: strategy %s has no "
                         "online planner (give --strategy %s)",
                         a->strategies[0]->name, names);
    if (a->format == FORMAT_CSV)
        return cli_error(EXIT_USAGE, CMD, "--online prints text or json, not "
                         "csv (give --format text or --format json)");
    if (a->infeasible != PLAN_INFEASIBLE_FAIL)
        return cli_error(EXIT_USAGE, CMD, "--infeasible applies to offline "
                         "plans' records, not to --online (one budget: "
                         "below the smallest, exit 3)");
    if (a->n_budgets > 1)
        return cli_error(EXIT_USAGE, CMD, "--online takes one budget, not a "
                         "list");
    if (a->curve && !a->points && a->length > MAX_CURVE)
        return cli_error(EXIT_USAGE, CMD, "--online --curve prints one line "
                         "per length 1..T; T = %" PRId64 " is more than %d "
                         "lines (give --points N, e.g. --points 100)",
                         a->length, MAX_CURVE);
    return 0;
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
        {"online", no_argument, NULL, 'O'},
        {"no-lookahead", no_argument, NULL, 'N'},
        {"points", required_argument, NULL, 'P'},
        {"cell", required_argument, NULL, 'c'},
        {"hidden", required_argument, NULL, 'H'},
        {"batch", required_argument, NULL, 'B'},
        {"layers", required_argument, NULL, 'L'},
        {"infeasible", required_argument, NULL, 'I'},
        {"disk", required_argument, NULL, 'D'},
        {"write-cost", required_argument, NULL, 'W'},
        {"read-cost", required_argument, NULL, 'R'},
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
    a->write_cost = a->read_cost = 1;
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
            rc = cli_parse_int(CMD, "--threads", optarg, 1, BPTT_THREADS_MAX,
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
        case 'O':
            a->online = 1;
            break;
        case 'N':
            a->no_lookahead = 1;
            break;
        case 'P':
            rc = cli_parse_int(CMD, "--points", optarg, 2, MAX_CURVE,
                               &a->points);
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
        case 'D':
            a->disk_text = optarg; /* its units wait for the state sizes */
            break;
        case 'W':
        case 'R':
            a->cost_given = a->cost_given ? a->cost_given
                            : c == 'W'    ? "--write-cost"
                                          : "--read-cost";
            rc = cli_parse_cost(CMD,
                                c == 'W' ? "--write-cost" : "--read-cost",
                                optarg,
                                c == 'W' ? &a->write_cost : &a->read_cost);
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
    if ((rc = disk_args(a)) != 0 || (rc = online_args(a)) != 0)
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
    if (!have_memory && a->disk_text)
        return cli_error(EXIT_USAGE, CMD, "--disk needs --memory M, the fast "
                         "level's budget (at the default, 100%%, the slow "
                         "level has nothing to do; e.g. --memory 10)");
    if (!have_memory) {
        a->budget_text[0] = "100%";
        a->n_budgets = 1;
    }
    if ((a->actions || a->curve) && a->n_budgets > 1)
        return cli_error(EXIT_USAGE, CMD, "--%s takes one budget, not a list",
                         a->actions ? "actions" : "curve");
    for (int i = 0; i < a->n_budgets && rc == 0; i++)
        rc = budget_units(a, "--memory", a->budget_text[i], &a->budget[i]);
    if (rc == 0 && a->disk_text)
        rc = strcmp(a->disk_text, "inf") == 0
                 ? (a->disk = BPTT_SLOW_UNLIMITED, 0)
                 : budget_units(a, "--disk", a->disk_text, &a->disk);
    if (rc == 0 && a->curve && !a->online && a->budget[0] > MAX_CURVE)
        return cli_error(EXIT_USAGE, CMD, "--curve prints one line per budget "
                         "1..M; M = %" PRId64 " (%s) is more than %d lines "
                         "(give a smaller --memory)", a->budget[0],
                         a->budget_text[0], MAX_CURVE);
    return rc;
}
