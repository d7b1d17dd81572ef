/* sweep.c: `bptt sweep`: every point of a grid of configurations, either
 * planned in this process (--mode plan, the records of `bptt plan`) or run
 * as a child `bptt run` process each (--mode run, so that each point's RSS
 * peak is its own), into one file of records with a metadata header.
 *
 * Promises: records in grid order (row-major over the axes in the order of
 * `keys` below, the last axis fastest); a grid is checked whole, and a plan
 * grid's budgets are checked against each point's smallest feasible one,
 * before any work; FILE appears whole (temporary file, fsync, link) or not
 * at all; each finished point is appended to FILE.partial as one line (one
 * write, then fsync), so a sweep stopped at any moment, even by SIGKILL, and
 * run again computes only the points missing and ends with the file an
 * uninterrupted sweep writes: byte for byte in plan mode, whose records hold
 * no timings, when both share the metadata date (SOURCE_DATE_EPOCH).
 * Every file read back (--config, FILE.partial, a part, FILE) is read
 * through bptt_readback (regular files only, bounded: sweep.h) and every
 * record in it is parsed whole and checked against the grid before it is
 * kept (bptt_record_check, records.h); one sweep at a time writes FILE.partial
 * (the fcntl lock of the inode its path names), --force included.
 * Batch runs: --jobs writes one command per point, --only K computes one
 * point into FILE.parts/K.jsonl (temporary file and rename), --merge
 * assembles FILE from the parts.  A run-mode child (`bptt run`) never
 * outlives its sweep: SIGINT or SIGTERM stop it and wait for it, and on
 * Linux it gets SIGKILL when the sweep dies in any other way (see spawn).
 * Every line of a jsonl FILE is valid JSON whatever the values hold (a
 * --task path with quotes, control bytes or invalid UTF-8): strings are
 * escaped by bptt_json_string (json.h), and a run child's object is
 * escaped by `bptt run` itself; a csv FILE quotes fields as RFC 4180
 * wants.
 *
 * Does not promise: that a run-mode budget is feasible before its point
 * runs (only `bptt run` knows the byte sizes: a child's exit 3 stops the
 * sweep, or becomes a record with --infeasible record); anything about a
 * FILE.parts directory shared by two different grids (the merge refuses
 * parts of another grid).
 *
 * This file holds the options, the help and the command; sweep.h says
 * which file does the rest.  The grid itself (settings, config file,
 * values, points, identity) is the library's (grid.h).
 *
 * Test hook: BPTT_SWEEP_DIE_AFTER=N makes a direct sweep kill itself with
 * SIGKILL once it has recorded N points in this process; N.5 kills it
 * halfway through writing the next record's line.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "io/readback.h"
#include "sweep.h"

#define CMD SWEEP_CMD

static void sweep_usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt sweep --length LIST --out FILE [--mode plan|run]\n"
        "                  [--strategy LIST] [--cell LIST] [--layers LIST]\n"
        "                  [--input LIST] [--hidden LIST] [--batch LIST]\n"
        "                  [--alpha LIST] [--memory LIST] [--threads LIST]\n"
        "                  [--seed LIST] [--iters N] [--task T] [--optimizer O]\n"
        "                  [--lr R] [--format jsonl|csv] [--config FILE]\n"
        "                  [--force] [--infeasible error|record]\n"
        "                  [--list | --jobs JOBFILE | --only K | --merge]\n"
        "                  [--help] [--version]\n"
        "\n"
        "Plans (--mode plan, the default) or runs (--mode run) every point of a\n"
        "grid and writes one record per point, in grid order, to FILE, after a\n"
        "metadata header. Each finished point is kept in FILE.partial at once:\n"
        "an interrupted sweep, run again with the same grid, does only the\n"
        "points missing; every record read back (FILE.partial, the parts of\n"
        "--merge) is checked against the grid first, and a bad one is refused\n"
        "naming FILE:LINE (--force starts over). When FILE holds every record\n"
        "a rerun does nothing (--force recomputes it); a FILE that lacks some\n"
        "is refused, never overwritten without --force. One sweep at a time\n"
        "writes a FILE: another, even with --force, is refused.\n"
        "\n"
        "Grid axes, in grid order (the last varies fastest). Each takes one\n"
        "value, a list a,b,c, or a range: start:stop:step (arithmetic, stop\n"
        "included when reached), start:stop:*factor (geometric, e.g.\n"
        "10:10000:*10), start:stop (step 1):\n"
        "  --strategy S    @STRATEGIES@ (msm)\n"
        "  --cell C        @CELLS@ (lstm; run only)\n"
        "  --layers L      stacked layers                            (run only)\n"
        "  --input X       input width                               (run only)\n"
        "  --hidden H      hidden width                              (run only)\n"
        "  --batch B       batch size                                (run only)\n"
        "  --length T      sequence length (required)\n"
        "  --alpha A       internal state size in slots, e.g. 4 or 3.5 (plan only)\n"
        "  --memory M      budgets, kept as written: plan: 200, 200slots, 5%;\n"
        "                  run: 64MiB, 100000B, 200slots, 5%; ranges such as\n"
        "                  5%:50%:5 or 1MiB:64MiB:*2 keep the unit (100%)\n"
        "  --threads K     threads (plan: one value, for building tables)\n"
        "  --seed S        seed of parameters and data               (run only)\n"
        "An axis that does not apply to the mode takes at most one value, which\n"
        "is ignored. Fixed options, passed to every `bptt run` (run only):\n"
        "  --iters N, --task T, --optimizer O, --lr R\n"
        "\n"
        "  --mode M        plan: computed here, records of `bptt plan --format\n"
        "                  json` without timings; run: each point runs\n"
        "                  `bptt run ... --format json` as a child process, its\n"
        "                  record is the child's object\n"
        "  --out FILE      the result; FILE.partial holds a sweep in progress\n"
        "  --format F      jsonl (first line {\"meta\":{...}}) or csv (first line\n"
        "                  \"# {...}\", then the header row); default: by FILE's\n"
        "                  extension (.csv: csv), else jsonl\n"
        "  --config FILE   'key = value' lines (# comments; text, at most 1 MiB;\n"
        "                  a regular file); keys are the option\n"
        "                  names without dashes: the axes, mode, out, format,\n"
        "                  infeasible, iters, task, optimizer, lr; options on the\n"
        "                  command line win\n"
        "  --infeasible P  error (default): a budget below a point's smallest\n"
        "                  feasible one is an error (plan: before any work);\n"
        "                  record: such a point gets a record without results\n"
        "  --force         recompute even if FILE or a part is complete, or start\n"
        "                  over a FILE.partial that is refused; replace an old\n"
        "                  JOBFILE (never the sweep's own files or bptt itself)\n"
        "  --list          print the points of the grid and stop\n"
        "  --jobs JOBFILE  write one command per point (--only K) and the merge\n"
        "                  command instead of running: for scripts/sweep-parallel\n"
        "                  and scripts/slurm-sweep; an existing JOBFILE needs\n"
        "                  --force; a value holding a control byte (a newline)\n"
        "                  is refused\n"
        "  --only K        compute point K (from 0) alone into FILE.parts/K.jsonl\n"
        "  --merge         assemble FILE from FILE.parts (all points needed)\n"
        "\n"
        "Every record starts with \"point\" (its index) and \"memory_spec\" (the\n"
        "budget as written). Progress goes to stderr when it is a terminal.\n"
        "\n"
        "exit status: 0 ok (or nothing to do), 2 bad input, 3 budget below a\n"
        "point's smallest feasible one, 1 failure, 130 (SIGINT) or 143\n"
        "(SIGTERM): interrupted, rerun the same command to resume\n");
}

/* The grid's one-line error (or out of memory) for the command. */
static int grid_error(int rc, bptt_strbuf *err)
{
    if (rc == BPTT_ENOMEM || err->failed)
        rc = cli_error(1, CMD, "out of memory");
    else
        rc = cli_error(EXIT_USAGE, CMD, "%s", err->p ? err->p : "bad grid");
    bptt_strbuf_free(err);
    return rc;
}

/* Reads the config file at path (--config) into the keys the command line
 * left unset: a regular file of at most SWEEP_CONFIG_MAX bytes (a FIFO or
 * a device is refused at once, never waited on), text without NUL or
 * control bytes (their line and column named). */
static int read_config(sweep *s, const char *path, const int *from_cli)
{
    size_t len;
    char *text;
    int rc = sweep_readback("--config", path, -1, SWEEP_CONFIG_MAX,
                            EXIT_USAGE, "give a readable file of 'key = "
                            "value' lines (at most 1 MiB)", &text, &len);
    if (rc)
        return rc;
    bptt_text_where at;
    if (bptt_text_check(text, len, &at) != 0) {
        rc = cli_error(EXIT_USAGE, CMD, "--config: %s:%zu:%zu holds the "
                       "control byte 0x%02x; a config file is text: 'key = "
                       "value' lines", path, at.line, at.column, at.byte);
    } else if (!bptt_grid_config_has_settings(text, len)) {
        /* a file without a setting is not a config: a wrong or truncated
         * one */
        rc = cli_error(EXIT_USAGE, CMD, "--config: '%s' holds no settings "
                       "(give 'key = value' lines, e.g. length = "
                       "100:1000:100)", path);
    } else {
        bptt_strbuf err = {0};
        rc = bptt_grid_config(&s->g, path, text, len, from_cli, &err);
        rc = rc ? grid_error(rc, &err) : 0;
    }
    free(text);
    return rc;
}

int sweep_parse_args(int argc, char **argv, sweep *s, int *help)
{
    enum { O_CONFIG = 256, O_JOBS, O_ONLY, O_MERGE, O_FORCE, O_LIST };
    static struct option opts[BPTT_GRID_KEYS + 8]; /* and the zero entry */
    static const struct option extra[] = {
        {"config", required_argument, NULL, O_CONFIG},
        {"jobs", required_argument, NULL, O_JOBS},
        {"only", required_argument, NULL, O_ONLY},
        {"merge", no_argument, NULL, O_MERGE},
        {"force", no_argument, NULL, O_FORCE},
        {"list", no_argument, NULL, O_LIST},
        {"help", no_argument, NULL, 'h'}};
    /* every key of the grid is an option of the same name */
    for (int k = 0; k < BPTT_GRID_KEYS; k++)
        opts[k] = (struct option){bptt_grid_keys[k].name, required_argument,
                                  NULL, k};
    memcpy(opts + BPTT_GRID_KEYS, extra, sizeof extra);
    int from_cli[BPTT_GRID_KEYS] = {0};
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    int rc = 0, c, n_actions = 0;
    *help = 0;
    opterr = 0;
    optind = 1;
    while (rc == 0 &&
           (c = cli_getopt(CMD, argc, argv, opts, seen, &rc)) != -1) {
        if (c == CLI_OPT_ERROR)
            break;
        if (c >= 0 && c < BPTT_GRID_KEYS) {
            char label[32];
            snprintf(label, sizeof label, "--%s", bptt_grid_keys[c].name);
            if (bptt_grid_set(&s->g, c, optarg, label) != BPTT_OK)
                return cli_error(1, CMD, "out of memory");
            from_cli[c] = 1;
            continue;
        }
        switch (c) {
        case O_CONFIG: s->config = optarg; break;
        case O_JOBS:
            s->jobs_file = optarg;
            s->action = ACT_JOBS;
            n_actions++;
            break;
        case O_ONLY:
            rc = cli_parse_int(CMD, "--only", optarg, 0,
                               BPTT_GRID_MAX_POINTS - 1, &s->only);
            s->action = ACT_ONLY;
            n_actions++;
            break;
        case O_MERGE: s->action = ACT_MERGE, n_actions++; break;
        case O_LIST: s->action = ACT_LIST, n_actions++; break;
        case O_FORCE: s->force = 1; break;
        case 'h': *help = 1; return 0;
        default:
            rc = cli_option_error(CMD, c, argv);
        }
    }
    if ((rc = cli_no_operands(CMD, rc, argc, argv)) != 0)
        return rc;
    if (n_actions > 1)
        return cli_error(EXIT_USAGE, CMD, "--list, --jobs, --only and --merge "
                         "exclude each other (give one)");
    if (s->config && (rc = read_config(s, s->config, from_cli)) != 0)
        return rc;
    bptt_strbuf err = {0};
    if ((rc = bptt_grid_build(&s->g, &err)) != BPTT_OK)
        return grid_error(rc, &err);
    bptt_strbuf_free(&err);
    s->out = s->g.text[BPTT_GK_OUT];
    if (s->action != ACT_LIST && (!s->out || !*s->out))
        return cli_error(EXIT_USAGE, CMD, "--out FILE is required (e.g. --out "
                         "sweep.jsonl)");
    /* FILE (and the job list) are renamed into place at the end: they must
     * be writable files now, never a directory or a device */
    if (s->action != ACT_LIST &&
        (rc = cli_check_output(CMD, "--out", s->out, 0)) != 0)
        return rc;
    if (s->action == ACT_JOBS) {
        if ((rc = cli_check_output(CMD, "--jobs", s->jobs_file, 0)) != 0)
            return rc;
        if (strcmp(s->jobs_file, s->out) == 0)
            return cli_error(EXIT_USAGE, CMD, "--jobs and --out both name "
                             "'%s' (give the job list another name)",
                             s->out);
        if ((rc = sweep_jobs_check(s)) != 0)
            return rc;
    }
    return 0;
}

void sweep_free(sweep *s) { bptt_grid_free(&s->g); }

void sweep_list(const sweep *s)
{
    const bptt_grid *g = &s->g;
    for (size_t k = 0; k < g->n_points; k++) {
        size_t idx[BPTT_GRID_AXES];
        bptt_grid_decode(g, k, idx);
        printf("%zu", k);
        for (int j = 0; j < BPTT_GRID_AXES; j++)
            if (g->applies[j] && g->ax[j].n)
                printf("\t%s=%s", bptt_grid_keys[j].name,
                       bptt_grid_value(g, idx, j));
        putchar('\n');
    }
}

int cli_sweep(int argc, char **argv)
{
    sweep s;
    memset(&s, 0, sizeof s);
    int help;
    int rc = sweep_parse_args(argc, argv, &s, &help);
    if (help) {
        sweep_usage(stdout);
        sweep_free(&s);
        return 0;
    }
    if (rc == 0 && s.g.mode == BPTT_GRID_PLAN && s.action != ACT_LIST)
        rc = sweep_plan_preflight(&s);
    if (rc == 0) {
        switch (s.action) {
        case ACT_LIST: sweep_list(&s); break;
        case ACT_JOBS: rc = sweep_jobs(&s); break;
        case ACT_ONLY: rc = sweep_only(&s); break;
        case ACT_MERGE: rc = sweep_merge(&s); break;
        case ACT_SWEEP: rc = sweep_direct(&s); break;
        }
    }
    sweep_free(&s);
    return rc;
}
