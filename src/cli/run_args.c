/* run_args.c: `bptt run`'s arguments: its usage text, the options parsed
 * and checked (run.h), and --memory in bytes on the one budget parser
 * (budget.h).  The run itself is src/cli/run.c. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "budget.h"
#include "numbers.h"
#include "cli.h"
#include "model.h"
#include "run.h"

#define CMD "run"

void run_usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt run --length T [--cell C] [--layers L] [--input X]\n"
        "                [--hidden H] [--batch B] [--strategy S] [--memory M]\n"
        "                [--iters N] [--seed S] [--threads K]\n"
        "                [--task copy|adding|text:FILE] [--optimizer sgd|adam]\n"
        "                [--lr R] [--format text|json|csv] [--trace FILE]\n"
        "                [--memory-trace FILE] [--dump-grads DIR] [--online]\n"
        "                [--separator BYTE] [--disk D [--disk-dir DIR]\n"
        "                [--disk-direct] [--write-cost WD] [--read-cost RD]]\n"
        "                [--help] [--version]\n"
        "\n"
        "Trains a recurrent network for N iterations of T steps, each planned\n"
        "once under the memory budget and executed by the plan, and reports\n"
        "what happened: forward ops, checkpoint and total tracked bytes, RSS,\n"
        "seconds per iteration (median after one warm-up), loss, and how\n"
        "disturbed the timing was (CPU share, steal; doc/run.md).  On a\n"
        "terminal one progress line shows iteration, loss, time left.\n"
        "\n"
        "  --cell C        @CELLS@ (default lstm)\n"
        "  --layers L      stacked recurrent layers, 1..16 (default 1)\n"
        "  --input X       input width (default: the task's; copy: 16)\n"
        "  --hidden H      hidden width (default 128)\n"
        "  --batch B       sequences per batch (default 32)\n"
        "  --length T      steps per sequence\n"
        "  --strategy S    @STRATEGIES@\n"
        "                  (default msm)\n"
        "  --memory M      checkpoint budget: bytes with a unit (64MiB, 512KiB,\n"
        "                  100000B), a share of full BPTT's checkpoint bytes\n"
        "                  (5%), or hidden-state slots (200slots); default 100%\n"
        "  --iters N       training iterations (default 6: a warm-up, then\n"
        "                  five timed, whose median is seconds_per_iter)\n"
        "  --seed S        seed of parameters and data (default 1)\n"
        "  --threads K     OpenMP and OpenBLAS threads (default: all cores)\n"
        "  --task T        copy (default), adding, or text:FILE\n"
        "  --optimizer O   sgd (default) or adam\n"
        "  --lr R          learning rate (default 0.1 for sgd, 0.001 for adam)\n"
        "  --format F      text (default), json (one object) or csv\n"
        "  --trace FILE    a new file (an existing one is refused): the csv\n"
        "                  log of the run, one row per iteration as it ends:\n"
        "                  iteration, loss, grad_norm, seconds, cpu_seconds,\n"
        "                  steal_seconds; kept when the run stops early\n"
        "  --memory-trace FILE  a new file (an existing one is refused),\n"
        "                  written whole at the end: the last iteration's\n"
        "                  actions, one csv row each: action, kind, step,\n"
        "                  checkpoint_bytes, total_bytes, forward_ops_so_far,\n"
        "                  seconds (of a forward or backward op)\n"
        "  --dump-grads D  write parameters, inputs, targets and gradients of\n"
        "                  the last iteration to directory D as .npy files\n"
        "  --online        sequences of unknown length: with --task text:FILE,\n"
        "                  iteration k trains on the k-th non-empty line of\n"
        "                  FILE (cyclically), each step's target the next\n"
        "                  byte, the line's last the separator; --length is\n"
        "                  then the most steps (default 1000; longer lines are\n"
        "                  cut), --batch 1; --strategy hsm or msm planned\n"
        "                  online as the bytes arrive, full the reference\n"
        "  --separator BYTE  --online's line end: one character, \\n, \\t,\n"
        "                  \\r, \\0 or 0xHH (default \\n)\n"
        "  --disk D        a slow level beside --memory (doc/twolevel.md): the\n"
        "                  plan is the two-level optimum of forward ops + WD x\n"
        "                  hidden states written + RD x read, and states\n"
        "                  written go to a file; D as --memory takes it, or\n"
        "                  inf (no bound); --strategy @TWOLEVEL@.  The result\n"
        "                  adds the states and bytes moved, the plan's, the\n"
        "                  slow level's peak and seconds, and plan_cost\n"
        "  --disk-dir DIR  the slow level's folder (an existing one; the file,\n"
        "                  made new there, is removed at once and never\n"
        "                  outlives the run); default a temporary folder\n"
        "                  under $TMPDIR or /tmp, removed\n"
        "  --disk-direct   that file under O_DIRECT: the states leave the\n"
        "                  page cache (RAM) for the device, each padded to\n"
        "                  4096 bytes (bptt calibrate --direct measures the\n"
        "                  costs); a filesystem that refuses it is refused\n"
        "  --write-cost WD with --disk: forward ops a hidden state's write\n"
        "                  costs, 0 to @COSTMAX@ (default 1; bptt calibrate\n"
        "                  measures it)\n"
        "  --read-cost RD  the same for a read (default 1)\n"
        "\n"
        "Sizes that would not fit in this machine's memory are refused before\n"
        "anything is allocated.  A NaN or infinity in the loss, the gradients or\n"
        "the parameters stops the run (only the trace is kept).  SIGINT or\n"
        "SIGTERM stops it after the current iteration (a second one at once),\n"
        "with one line saying what was kept.\n"
        "\n"
        "exit status: 0 ok, 2 bad input, 3 budget below the smallest feasible\n"
        "one (the message names it), 1 failure while running (out of memory,\n"
        "NaN or infinity, an output not written), 130 stopped by SIGINT, 143\n"
        "stopped by SIGTERM\n");
}



void run_model_defaults(run_args *a)
{
    memset(a, 0, sizeof *a);
    a->cell = &bptt_cell_lstm;
    a->layers = 1;
    a->hidden = 128;
    a->batch = 32;
    a->seed = 1;
    a->task = "copy";
}

int run_model_option(const char *cmd, int c, const char *arg, run_args *a,
                     int *rc)
{
    const int64_t big = ((int64_t)1 << 24) - 1; /* the model's limit */
    switch (c) {
    case 'c':
        a->cell = bptt_cell_find(arg);
        if (!a->cell)
            *rc = cli_unknown_cell(cmd, "--cell", arg);
        return 1;
    case 'L':
        *rc = cli_parse_int(cmd, "--layers", arg, 1, BPTT_MAX_LAYERS,
                            &a->layers);
        return 1;
    case 'X':
        *rc = cli_parse_int(cmd, "--input", arg, 1, big, &a->input);
        return 1;
    case 'H':
        *rc = cli_parse_int(cmd, "--hidden", arg, 1, big, &a->hidden);
        return 1;
    case 'B':
        *rc = cli_parse_int(cmd, "--batch", arg, 1, big, &a->batch);
        return 1;
    case 'T':
        *rc = cli_parse_int(cmd, "--length", arg, 1, INT32_MAX - 1,
                            &a->length);
        return 1;
    case 'S':
        *rc = cli_parse_int(cmd, "--seed", arg, 0, INT64_MAX / 2, &a->seed);
        return 1;
    case 'j':
        *rc = cli_parse_int(cmd, "--threads", arg, 1, BPTT_THREADS_MAX,
                            &a->threads);
        return 1;
    case 'k':
        a->task = arg;
        return 1;
    default:
        return 0;
    }
}

static int parse_real(const char *opt, const char *text, double lo,
                      double hi, double *out)
{
    /* decimal notation, in every locale (budget.h) */
    double v = 0;
    const char *why = bptt_number_trouble(text);
    if (why && strcmp(why, "exponents are not read") == 0)
        why = NULL; /* "1e-3" is read here */
    if (bptt_parse_real(text, &v) != 0 || !(v >= lo) || !(v <= hi))
        return cli_error(EXIT_USAGE, CMD,
                         "%s: '%s' is not a number in [%g, %g]%s%s", opt, text,
                         lo, hi, why ? ": " : "", why ? why : "");
    *out = v;
    return 0;
}

/* --separator's value: 0..255, or -1 when it is not one byte. */
static int parse_separator(const char *t)
{
    static const char esc[] = "n\nt\tr\r0";
    if (t[0] && !t[1])
        return (unsigned char)t[0];
    if (t[0] == '\\' && t[1] && !t[2])
        for (size_t k = 0; k + 1 < sizeof esc; k += 2)
            if (t[1] == esc[k])
                return (unsigned char)esc[k + 1];
    if (t[0] == '0' && (t[1] == 'x' || t[1] == 'X') && isxdigit((unsigned char)t[2]) &&
        isxdigit((unsigned char)t[3]) && !t[4])
        return (int)strtol(t + 2, NULL, 16);
    return -1;
}

/* --online's rules, checked with the rest before any work: 0 or the
 * error. */
static int online_args(run_args *a, int batch_given)
{
    if (strncmp(a->task, "text:", 5) != 0)
        return cli_error(EXIT_USAGE, CMD, "--online reads its sequences "
                         "from a text: give --task text:FILE (not '%s')",
                         a->task);
    const char *st = a->strategy->name;
    if (strcmp(st, "hsm") != 0 && strcmp(st, "msm") != 0 &&
        strcmp(st, "full") != 0)
        return cli_error(EXIT_USAGE, CMD, "--online plans hsm or msm online, "
                         "or runs full BPTT as the reference (not '%s')", st);
    if (batch_given && a->batch != 1)
        return cli_error(EXIT_USAGE, CMD, "--online trains one sequence at "
                         "a time: --batch must be 1 (not %" PRId64 ")",
                         a->batch);
    if (a->memory_trace)
        return cli_error(EXIT_USAGE, CMD, "--memory-trace is not kept with "
                         "--online (the plan is made as the run goes)");
    a->batch = 1;
    if (a->length == 0)
        a->length = RUN_ONLINE_LENGTH;
    if (a->separator < 0)
        a->separator = '\n';
    return 0;
}

/* --disk's rules, checked before any work: 0 or the error. */
static int disk_args(const run_args *a, const char *cost_given)
{
    const char *alone = cost_given          ? cost_given
                        : a->disk_dir       ? "--disk-dir"
                        : a->disk_direct    ? "--disk-direct"
                                            : NULL;
    if (!a->disk) {
        if (alone)
            return cli_error(EXIT_USAGE, CMD, "%s applies to two-level "
                             "plans (add --disk D, e.g. --disk inf)", alone);
        return 0;
    }
    if (a->online)
        return cli_error(EXIT_USAGE, CMD, "--disk plans a known length; "
                         "--online plans one level (give one of them)");
    if (!cli_twolevel_takes(a->strategy->name)) {
        char names[128];
        cli_twolevel_strategy_names(names, sizeof names, " or ");
        return cli_error(EXIT_USAGE, CMD, "--disk: strategy %s has no "
                         "two-level planner (give --strategy %s)",
                         a->strategy->name, names);
    }
    int rc = cli_disk_form(CMD, "--disk", a->disk);
    if (rc)
        return rc;
    if (a->disk_dir)
        return cli_check_folder(CMD, "--disk-dir", a->disk_dir);
    return 0;
}

int run_parse_args(int argc, char **argv, run_args *a, int *help)
{
    static const struct option opts[] = {
        RUN_MODEL_OPTIONS,
        {"strategy", required_argument, NULL, 's'},
        {"memory", required_argument, NULL, 'm'},
        {"iters", required_argument, NULL, 'n'},
        {"optimizer", required_argument, NULL, 'o'},
        {"lr", required_argument, NULL, 'r'},
        {"format", required_argument, NULL, 'f'},
        {"dump-grads", required_argument, NULL, 'd'},
        {"trace", required_argument, NULL, 'R'},
        {"memory-trace", required_argument, NULL, 'W'},
        {"online", no_argument, NULL, 'O'},
        {"separator", required_argument, NULL, 'P'},
        {"disk", required_argument, NULL, 'D'},
        {"disk-dir", required_argument, NULL, 'G'},
        {"disk-direct", no_argument, NULL, 'Y'},
        {"write-cost", required_argument, NULL, 'w'},
        {"read-cost", required_argument, NULL, 'e'},
        {"fail-alloc", required_argument, NULL, 'F'}, /* test hook */
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    run_model_defaults(a);
    a->strategy = bptt_strategy_find("msm");
    a->iters = RUN_ROBUST_TIMED + 1; /* a warm-up, then a robust median */
    a->memory = "100%";
    a->optimizer = "sgd";
    a->format = FORMAT_TEXT;
    a->separator = -1;
    a->write_cost = a->read_cost = 1;
    const char *cost_given = NULL;
    int batch_given = 0;
    *help = 0;
    opterr = 0;
    optind = 1;
    int c, rc = 0;
    while (rc == 0 &&
           (c = cli_getopt(CMD, argc, argv, opts, seen, &rc)) != -1) {
        batch_given |= c == 'B';
        if (run_model_option(CMD, c, optarg, a, &rc))
            continue;
        switch (c) {
        case CLI_OPT_ERROR:
            break;
        case 's':
            a->strategy = bptt_strategy_find(optarg);
            if (!a->strategy)
                rc = cli_unknown_strategy(CMD, "--strategy", optarg);
            break;
        case 'm':
            a->memory = optarg;
            break;
        case 'n':
            rc = cli_parse_int(CMD, "--iters", optarg, 1, 1000000, &a->iters);
            break;
        case 'o':
            a->optimizer = optarg;
            if (strcmp(optarg, "sgd") != 0 && strcmp(optarg, "adam") != 0)
                rc = cli_error(EXIT_USAGE, CMD,
                               "--optimizer: unknown optimizer '%s' (use sgd "
                               "or adam)",
                               optarg);
            break;
        case 'r':
            /* absurd rates are allowed: their divergence is caught */
            rc = parse_real("--lr", optarg, 1e-12, 1e38, &a->lr);
            break;
        case 'f':
            rc = cli_parse_format(CMD, optarg, &a->format);
            break;
        case 'd':
            a->dump_dir = optarg;
            break;
        case 'R':
            a->trace = optarg;
            break;
        case 'W':
            a->memory_trace = optarg;
            break;
        case 'O':
            a->online = 1;
            break;
        case 'P':
            a->separator = parse_separator(optarg);
            if (a->separator < 0)
                rc = cli_error(EXIT_USAGE, CMD, "--separator: '%s' is not "
                               "one byte (give one character, \\n, \\t, "
                               "\\r, \\0 or 0xHH)", optarg);
            break;
        case 'D':
            a->disk = optarg;
            break;
        case 'G':
            a->disk_dir = optarg;
            break;
        case 'Y':
            a->disk_direct = 1;
            break;
        case 'w':
        case 'e': {
            const char *opt = c == 'w' ? "--write-cost" : "--read-cost";
            if (!cost_given)
                cost_given = opt;
            rc = cli_parse_cost(CMD, opt, optarg,
                                c == 'w' ? &a->write_cost : &a->read_cost);
            break;
        }
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
    if (a->separator >= 0 && !a->online)
        return cli_error(EXIT_USAGE, CMD, "--separator needs --online");
    if (a->online && (rc = online_args(a, batch_given)) != 0)
        return rc;
    if ((rc = disk_args(a, cost_given)) != 0)
        return rc;
    if ((rc = cli_length_given(CMD, a->length)) != 0)
        return rc;
    if (a->lr == 0)
        a->lr = strcmp(a->optimizer, "adam") == 0 ? 1e-3 : 0.1;
    /* the outputs, written at the end, must be writable now */
    if (a->dump_dir &&
        (rc = cli_check_output(CMD, "--dump-grads", a->dump_dir, 1)) != 0)
        return rc;
    if (a->trace && (rc = cli_check_output(CMD, "--trace", a->trace, 0)) != 0)
        return rc;
    struct stat sb;
    if (a->trace && lstat(a->trace, &sb) == 0) /* a log is never replaced */
        return cli_error(EXIT_USAGE, CMD, "--trace: '%s' exists (remove it "
                         "or name a new file)", a->trace);
    if (a->dump_dir && a->trace && strcmp(a->dump_dir, a->trace) == 0)
        return cli_error(EXIT_USAGE, CMD, "--trace and --dump-grads both name "
                         "'%s' (give them different names)", a->trace);
    const char *mt = a->memory_trace;
    if (mt && (rc = cli_check_output(CMD, "--memory-trace", mt, 0)) != 0)
        return rc;
    if (mt && lstat(mt, &sb) == 0) /* never replaced */
        return cli_error(EXIT_USAGE, CMD, "--memory-trace: '%s' exists "
                         "(remove it or name a new file)", mt);
    if (mt && ((a->trace && strcmp(mt, a->trace) == 0) ||
               (a->dump_dir && strcmp(mt, a->dump_dir) == 0)))
        return cli_error(EXIT_USAGE, CMD, "--memory-trace and --%s both name "
                         "'%s' (give them different names)",
                         a->trace && strcmp(mt, a->trace) == 0 ? "trace"
                                                               : "dump-grads",
                         mt);
    return 0;
}

int run_budget(const char *cmd, const char *opt, const char *text, size_t T,
               const bptt_session_sizes *z, bptt_budget_resolved *r)
{
    bptt_units u;
    if (z->internal_bytes > (double)BPTT_BUDGET_MAX_BYTES ||
        bptt_units_from_bytes(&u, (int64_t)z->hidden_bytes,
                              (int64_t)z->internal_bytes) != BPTT_OK)
        return cli_error(EXIT_USAGE, cmd, "%s: states of %.0f bytes are too "
                         "large to plan", opt, z->internal_bytes);
    const bptt_budget_sizes s = {T, u.hidden_units, u.internal_units,
                                 u.quantum};
    return cli_budget(cmd, opt, text, &s, BPTT_BUDGET_UNIT_REQUIRED, r);
}

int run_budget_form(const char *cmd, const char *opt, const char *text)
{
    const bptt_budget_sizes one = {1, 1, 1, 1};
    bptt_budget_resolved r;
    return cli_budget(cmd, opt, text, &one, BPTT_BUDGET_UNIT_REQUIRED, &r);
}
