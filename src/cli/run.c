/* cli_run.c: `bptt run`: training iterations of a real recurrent network
 * under one strategy and budget, with what happened measured: forward ops,
 * checkpoint and total tracked bytes, RSS, time per iteration, loss.
 *
 * Promises: every input is checked, and every byte the run will hold is
 * counted against this machine's physical memory, before anything is
 * allocated (one line and exit 2 or 3 otherwise; an existing --trace file
 * is refused too); after each iteration the loss, the gradients and the
 * updated parameters are checked for NaN and infinity (finite.h), and a
 * run that meets one stops with the iteration and the tensor named and
 * exit 1.  --trace is a log: created before the first iteration, one row
 * per completed iteration written whole and flushed, kept when the run
 * stops early (divergence, out of memory, a signal) with at least one row,
 * and the one error line says so; the result (stdout) and --dump-grads
 * appear only when the whole run succeeded.  On a terminal (stderr) one
 * progress line is redrawn in place and cleared at the end; elsewhere
 * nothing.  The first SIGINT or SIGTERM stops the run between iterations
 * with one line saying what was kept and what was not, exit 130 or 143; a
 * second of the same kind ends it at once.  Every iteration's wall, CPU
 * and steal time is measured, and the result says how disturbed the timed
 * iterations were (cpu_share_*, steal_seconds, disturbed_iters; doc/run.md).
 * The result holds every value whole, whatever it is (a --task path of any
 * length and bytes): JSON strings escaped by bptt_json_string (json.h;
 * invalid UTF-8 becomes U+FFFD), a number that is not finite as null; csv
 * fields quoted as RFC 4180 wants; text as given.  The gradient dump
 * writes every tensor with its rank from the model's table (model.h), so a
 * weight matrix stays 2-D when a size is 1 (Wo at --hidden 1), and
 * index.txt says the same shapes; bias vectors are 1-D.
 *
 * Test hook, deliberately left out of --help: --fail-alloc N makes the
 * N-th tracked allocation of the run (src/train/mem.c) fail, so that a test can
 * walk every allocation of a small run (tests/test_cli).  It is an option,
 * not an environment variable, so that it is parsed and checked like the
 * others, and hidden because it is no use outside that test. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "cli.h"
#include "live.h"
#include "data.h"
#include "exec.h"
#include "finite.h"
#include "json.h"
#include "meta.h"
#include "model.h"
#include "npy.h"
#include "session.h"

#define CMD "run"

void openblas_set_num_threads(int);

static void run_usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt run --length T [--cell C] [--layers L] [--input X]\n"
        "                [--hidden H] [--batch B] [--strategy S] [--memory M]\n"
        "                [--iters N] [--seed S] [--threads K]\n"
        "                [--task copy|adding|text:FILE] [--optimizer sgd|adam]\n"
        "                [--lr R] [--format text|json|csv] [--trace FILE]\n"
        "                [--dump-grads DIR]\n"
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
        "  --iters N       training iterations (default 3)\n"
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
        "  --dump-grads D  write parameters, inputs, targets and gradients of\n"
        "                  the last iteration to directory D as .npy files\n"
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

typedef struct {
    const bptt_cell_type *cell;
    const bptt_strategy *strategy;
    int64_t layers, input, hidden, batch, length, iters, seed, threads;
    const char *memory;
    const char *task;
    const char *optimizer;
    double lr;
    enum output_format format;
    const char *dump_dir;
    const char *trace;
    int64_t fail_alloc; /* test hook: the tracked allocation to fail */
} run_args;

static int parse_real(const char *opt, const char *text, double lo,
                      double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !(v >= lo) ||
        !(v <= hi) || !(isdigit((unsigned char)text[0]) || text[0] == '.'))
        return cli_error(EXIT_USAGE, CMD,
                         "%s: '%s' is not a number in [%g, %g]", opt, text,
                         lo, hi);
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, run_args *a, int *help)
{
    static const struct option opts[] = {
        {"cell", required_argument, NULL, 'c'},
        {"layers", required_argument, NULL, 'L'},
        {"input", required_argument, NULL, 'X'},
        {"hidden", required_argument, NULL, 'H'},
        {"batch", required_argument, NULL, 'B'},
        {"length", required_argument, NULL, 'T'},
        {"strategy", required_argument, NULL, 's'},
        {"memory", required_argument, NULL, 'm'},
        {"iters", required_argument, NULL, 'n'},
        {"seed", required_argument, NULL, 'S'},
        {"threads", required_argument, NULL, 'j'},
        {"task", required_argument, NULL, 'k'},
        {"optimizer", required_argument, NULL, 'o'},
        {"lr", required_argument, NULL, 'r'},
        {"format", required_argument, NULL, 'f'},
        {"dump-grads", required_argument, NULL, 'd'},
        {"trace", required_argument, NULL, 'R'},
        {"fail-alloc", required_argument, NULL, 'F'}, /* test hook */
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    memset(a, 0, sizeof *a);
    a->cell = &bptt_cell_lstm;
    a->strategy = bptt_strategy_find("msm");
    a->layers = 1;
    a->hidden = 128;
    a->batch = 32;
    a->iters = 3;
    a->seed = 1;
    a->memory = "100%";
    a->task = "copy";
    a->optimizer = "sgd";
    a->format = FORMAT_TEXT;
    *help = 0;
    opterr = 0;
    optind = 1;
    int c, rc = 0;
    const int64_t big = ((int64_t)1 << 24) - 1; /* the model's limit */
    while (rc == 0 &&
           (c = cli_getopt(CMD, argc, argv, opts, seen, &rc)) != -1) {
        switch (c) {
        case CLI_OPT_ERROR:
            break;
        case 'c':
            a->cell = bptt_cell_find(optarg);
            if (!a->cell)
                rc = cli_unknown_cell(CMD, "--cell", optarg);
            break;
        case 'L':
            rc = cli_parse_int(CMD, "--layers", optarg, 1, BPTT_MAX_LAYERS,
                               &a->layers);
            break;
        case 'X':
            rc = cli_parse_int(CMD, "--input", optarg, 1, big, &a->input);
            break;
        case 'H':
            rc = cli_parse_int(CMD, "--hidden", optarg, 1, big, &a->hidden);
            break;
        case 'B':
            rc = cli_parse_int(CMD, "--batch", optarg, 1, big, &a->batch);
            break;
        case 'T':
            rc = cli_parse_int(CMD, "--length", optarg, 1, INT32_MAX - 1,
                               &a->length);
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
        case 'S':
            rc = cli_parse_int(CMD, "--seed", optarg, 0, INT64_MAX / 2,
                               &a->seed);
            break;
        case 'j':
            rc = cli_parse_int(CMD, "--threads", optarg, 1, 4096,
                               &a->threads);
            break;
        case 'k':
            a->task = optarg;
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
    return 0;
}

/* "64MiB", "512KiB", "3GB", "100000B", "5%", "200slots" -> bytes */
static int parse_memory(const char *text, int64_t full_bytes,
                        int64_t hidden_bytes, int64_t *out)
{
    static const struct {
        const char *suffix;
        int64_t mult;
    } units[] = {{"KiB", 1LL << 10}, {"MiB", 1LL << 20}, {"GiB", 1LL << 30},
                 {"TiB", 1LL << 40}, {"kB", 1000LL},      {"KB", 1000LL},
                 {"MB", 1000000LL},  {"GB", 1000000000LL}, {"B", 1}};
    const size_t n = strlen(text);
    int rc = -1;
    if (n > 5 && strcmp(text + n - 5, "slots") == 0) {
        int64_t slots;
        rc = cli_budget_value(text, 0, &slots);
        if (rc == 0 && slots > INT64_MAX / 4 / hidden_bytes)
            rc = -2;
        if (rc == 0)
            *out = slots * hidden_bytes;
    } else if (n > 1 && text[n - 1] == '%') {
        rc = cli_budget_value(text, full_bytes, out);
    } else {
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            const size_t k = strlen(units[u].suffix);
            if (n <= k || strcmp(text + n - k, units[u].suffix) != 0)
                continue;
            char buf[32];
            if (n - k >= sizeof buf)
                break;
            memcpy(buf, text, n - k);
            buf[n - k] = '\0';
            char *end;
            errno = 0;
            double v = strtod(buf, &end);
            if (end == buf || *end || !(v >= 0) ||
                !(isdigit((unsigned char)buf[0]) || buf[0] == '.'))
                break;
            if (errno == ERANGE || v * (double)units[u].mult > 4e18) {
                rc = -2;
                break;
            }
            *out = (int64_t)(v * (double)units[u].mult);
            rc = 0;
            break;
        }
    }
    if (rc == 0)
        return 0;
    if (rc == -2)
        return cli_error(EXIT_USAGE, CMD, "--memory: %s is out of range (give "
                         "at most 4e18 bytes, e.g. 64MiB, or a share up to "
                         "1000000%%)", text);
    return cli_error(EXIT_USAGE, CMD,
                     "--memory: '%s' is not a budget (give bytes with a unit, "
                     "e.g. 64MiB or 100000B, a share of full BPTT's "
                     "checkpoint bytes, e.g. 5%%, or slots, e.g. 200slots; "
                     "one budget, not a list)",
                     text);
}

/* ---- output ----------------------------------------------------------- */

typedef struct {
    int64_t budget_bytes, full_bytes, predicted_peak_bytes, plan_forward_ops;
    size_t hidden_bytes, internal_bytes;
    bptt_exec_stats ex;
    bptt_mem_stats mem;
    size_t classes, input;
    double seconds_first, loss_first, loss_last, grad_norm;
    live_summary time; /* over the timed iterations */
    int64_t rss_peak_bytes;
    size_t wpack_bytes, wgrad_bytes; /* parts of the working memory */
    int threads;
} run_result;

/* One field of the result: a string (cell, task, strategy, optimizer,
 * precision: held as given, never cut) or a number as text. */
typedef struct {
    const char *key;
    const char *str; /* a string value, or NULL: a number, in num */
    char num[40];    /* "%" PRId64 or "%.9g": at most 24 bytes */
    int finite;      /* numbers: 0 for NaN and infinity (JSON null) */
} field;

/* The value as text output and csv show it. */
static const char *field_text(const field *f)
{
    return f->str ? f->str : f->num;
}

/* Every field of a run, in output order. */
static size_t collect(const run_args *a, const run_result *r, field *f)
{
    size_t n = 0;
#define FS(k, v) (f[n].key = (k), f[n].str = (v), f[n].num[0] = '\0', \
                  f[n++].finite = 1)
#define FI(k, v) (f[n].key = (k), f[n].str = NULL, f[n].finite = 1, \
                  snprintf(f[n++].num, sizeof f->num, "%" PRId64, (int64_t)(v)))
#define FD(k, v) (f[n].key = (k), f[n].str = NULL, \
                  f[n].finite = isfinite((double)(v)) != 0, \
                  snprintf(f[n++].num, sizeof f->num, "%.9g", (double)(v)))
    FS("cell", a->cell->name);
    FI("layers", a->layers);
    FI("input", r->input);
    FI("hidden", a->hidden);
    FI("batch", a->batch);
    FI("length", a->length);
    FI("classes", r->classes);
    FS("task", a->task);
    FS("strategy", a->strategy->name);
    FI("memory_budget_bytes", r->budget_bytes);
    FD("alpha", (double)r->internal_bytes / (double)r->hidden_bytes);
    FI("hidden_state_bytes", r->hidden_bytes);
    FI("internal_state_bytes", r->internal_bytes);
    FI("forward_ops", r->ex.forward_ops);
    FI("recompute_ops", r->ex.recompute_ops);
    FI("backward_ops", r->ex.backward_ops);
    FI("output_ops", r->ex.output_ops);
    FI("plan_forward_ops", r->plan_forward_ops);
    FI("checkpoint_peak_bytes", r->mem.peak[BPTT_MEM_CHECKPOINT]);
    FI("predicted_checkpoint_peak_bytes", r->predicted_peak_bytes);
    FI("full_checkpoint_bytes", r->full_bytes);
    FI("working_peak_bytes", r->mem.peak[BPTT_MEM_WORKING]);
    FI("parameter_bytes", r->mem.peak[BPTT_MEM_PARAMS]);
    FI("gradient_bytes", r->mem.peak[BPTT_MEM_GRADS]);
    FI("optimizer_bytes", r->mem.peak[BPTT_MEM_OPTIMIZER]);
    FI("data_bytes", r->mem.peak[BPTT_MEM_DATA]);
    FI("total_tracked_peak_bytes", r->mem.total_peak);
    FI("rss_peak_bytes", r->rss_peak_bytes);
    FD("seconds_per_iter", r->time.seconds_median);
    FD("seconds_first_iter", r->seconds_first);
    FD("seconds_min", r->time.seconds_min);
    FD("seconds_max", r->time.seconds_max);
    FD("seconds_trend", r->time.seconds_trend);
    FD("cpu_share_median", r->time.cpu_share_median);
    FD("cpu_share_min", r->time.cpu_share_min);
    FD("steal_seconds", r->time.steal_seconds);
    FI("disturbed_iters", r->time.disturbed_iters);
    FI("iters", a->iters);
    FD("loss_first", r->loss_first);
    FD("loss_last", r->loss_last);
    FD("grad_norm", r->grad_norm);
    FS("optimizer", a->optimizer);
    FD("lr", a->lr);
    FI("threads", r->threads);
    FI("seed", a->seed);
    FS("precision", REAL_NAME);
    FI("packed_weight_bytes", r->wpack_bytes);
    FI("wgrad_block_bytes", r->wgrad_bytes);
#undef FS
#undef FI
#undef FD
    return n;
}

/* s as a JSON string literal (json.h) to f; 0, or ENOMEM. */
static int put_json_string(FILE *f, const char *s)
{
    char small[256];
    const size_t n = bptt_json_string(small, sizeof small, s, (size_t)-1);
    if (n < sizeof small) {
        fputs(small, f);
        return 0;
    }
    char *big = malloc(n + 1);
    if (!big)
        return ENOMEM;
    bptt_json_string(big, n + 1, s, (size_t)-1);
    fputs(big, f);
    free(big);
    return 0;
}

/* s as a csv field (RFC 4180): in double quotes, its quotes doubled, when
 * it holds a comma, a quote or a line break (or starts with a space or
 * '#', as `bptt sweep` writes them), else as it is. */
static void put_csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n") && s[0] != ' ' && s[0] != '#') {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* The result in a->format, written to f: JSON (one object on one line,
 * strings escaped, NaN and infinity as null), csv (the metadata as a "# "
 * line, a header row, a row; fields quoted as RFC 4180 wants them) or text
 * (one "key value" line per field, values as they are).  0, or ENOMEM. */
static int write_result(FILE *out, const run_args *a, const run_result *r)
{
    field f[64];
    const size_t n = collect(a, r, f);
    bptt_meta meta;
    bptt_meta_collect(&meta);
    char buf[BPTT_META_JSON_MAX];
    bptt_meta_json(&meta, buf, sizeof buf);
    if (a->format == FORMAT_JSON) {
        fputc('{', out);
        for (size_t i = 0; i < n; i++) {
            fprintf(out, "\"%s\":", f[i].key);
            if (f[i].str && put_json_string(out, f[i].str) != 0)
                return ENOMEM;
            if (!f[i].str)
                fputs(f[i].finite ? f[i].num : "null", out);
            fputc(',', out);
        }
        fprintf(out, "%s}\n", buf);
    } else if (a->format == FORMAT_CSV) {
        fprintf(out, "# %s\n", buf); /* the metadata header */
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%s%c", f[i].key, i + 1 < n ? ',' : '\n');
        for (size_t i = 0; i < n; i++) {
            put_csv_field(out, field_text(&f[i]));
            fputc(i + 1 < n ? ',' : '\n', out);
        }
    } else {
        for (size_t i = 0; i < n; i++)
            fprintf(out, "%-32s %s\n", f[i].key, field_text(&f[i]));
        char blas[160];
        bptt_meta_blas_text(&meta, blas, sizeof blas);
        fprintf(out, "%-32s %s\n", "blas_core", blas);
        fprintf(out, "%-32s %s (git %s), %s, %s\n", "build", meta.version,
                meta.git_revision, meta.compiler, meta.cpu_model);
    }
    return 0;
}

/* The result, whole, in a malloc'd block (*text, *len): made before the
 * gradient dump, so that what cannot be made stops the run with neither
 * written.  0, or an errno value. */
static int make_result(const run_args *a, const run_result *r, char **text,
                       size_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *f = open_memstream(text, len);
    if (!f)
        return errno ? errno : ENOMEM;
    const int err = write_result(f, a, r);
    const int closed = fclose(f);
    if (err || closed != 0) {
        free(*text);
        *text = NULL;
        return err ? err : ENOMEM;
    }
    return 0;
}

/* ---- gradient dump ---------------------------------------------------- */

/* dir/name into buf; -1 if it does not fit */
static int join(char *buf, size_t cap, const char *dir, const char *name)
{
    const int n = snprintf(buf, cap, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int dump_tensor(const char *dir, const char *prefix, const char *name,
                       const void *data, int dtype, const size_t *shape,
                       int ndim, FILE *index)
{
    char file[256], path[4096];
    snprintf(file, sizeof file, "%s%s.npy", prefix, name);
    if (join(path, sizeof path, dir, file) != 0)
        return ENAMETOOLONG;
    int err = bptt_npy_write(path, data, dtype, shape, ndim);
    if (err)
        return err;
    fprintf(index, "%s%s.npy %s%s (", prefix, name, prefix, name);
    for (int d = 0; d < ndim; d++)
        fprintf(index, "%s%zu", d ? ", " : "", shape[d]);
    fprintf(index, "%s) %s\n", ndim == 1 ? "," : "",
            dtype == BPTT_NPY_I4 ? "int32" : dtype == BPTT_NPY_F8 ? "float64"
                                                                  : "float32");
    return 0;
}

/* Removes the files named in dir/index.txt, the index, then dir. */
static void remove_tree(const char *dir)
{
    char path[4096];
    if (join(path, sizeof path, dir, "index.txt") != 0)
        return;
    FILE *f = fopen(path, "r");
    if (f) {
        char line[512], p[4096];
        while (fgets(line, sizeof line, f)) {
            char *sp = strchr(line, ' ');
            if (line[0] == '#' || !sp)
                continue;
            *sp = '\0';
            if (join(p, sizeof p, dir, line) == 0)
                unlink(p);
        }
        fclose(f);
        unlink(path);
    }
    rmdir(dir);
}

/* Writes into DIR.tmp.PID, then renames it to DIR: all files or none. */
static int dump_grads(const char *dir, const bptt_model *m,
                      const bptt_batch *batch, const real *params_before)
{
    char tmp[4000], ipath[4096];
    const int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", dir, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp ||
        join(ipath, sizeof ipath, tmp, "index.txt") != 0)
        return ENAMETOOLONG;
    if (mkdir(tmp, 0777) != 0)
        return errno;
    FILE *index = fopen(ipath, "w");
    if (!index) {
        int e = errno;
        rmdir(tmp);
        return e;
    }
    fprintf(index, "# file array (shape) dtype; little-endian, C order; "
                   "gradients are of the mean cross-entropy\n");
    const int dt = sizeof(real) == 4 ? BPTT_NPY_F4 : BPTT_NPY_F8;
    int err = 0;
    for (size_t k = 0; k < m->n_tensors && !err; k++) {
        const bptt_tensor *t = &m->tensor[k];
        size_t shape[2] = {t->rows, t->cols};
        const int nd = t->ndim == 1 ? 1 : 2; /* the rank, not the sizes' */
        err = dump_tensor(tmp, "param_", t->name, params_before + t->offset,
                          dt, shape, nd, index);
        if (!err)
            err = dump_tensor(tmp, "grad_", t->name, m->grads + t->offset, dt,
                              shape, nd, index);
    }
    size_t xs[3] = {batch->T, batch->B, batch->X}, ys[2] = {batch->T,
                                                            batch->B};
    if (!err)
        err = dump_tensor(tmp, "", "inputs", batch->x, dt, xs, 3, index);
    if (!err)
        err = dump_tensor(tmp, "", "targets", batch->y, BPTT_NPY_I4, ys, 2,
                          index);
    if (fclose(index) != 0 && !err)
        err = errno ? errno : EIO;
    if (!err) {
        rmdir(dir); /* an empty directory of that name may be replaced */
        if (rename(tmp, dir) != 0)
            err = errno;
    }
    if (err)
        remove_tree(tmp);
    return err;
}

/* ---- the run ------------------------------------------------------------ */

/* The session that a run's arguments describe (session.h). */
static void session_spec(const run_args *a, bptt_session_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->cell = a->cell;
    sp->layers = (size_t)a->layers;
    sp->hidden = (size_t)a->hidden;
    sp->batch = (size_t)a->batch;
    sp->length = (size_t)a->length;
    sp->input = (size_t)a->input;
    sp->task = a->task;
    sp->optimizer = a->optimizer;
    sp->lr = a->lr;
    sp->seed = (unsigned long)a->seed;
    sp->keep_last_params = a->dump_dir != NULL;
}

/* The parts of what a run holds that are known before anything is
 * allocated, in bytes (bptt_session_size). */
typedef bptt_session_sizes run_sizes;

/* The one-line refusal of sizes that need more than the machine has. */
static int too_big(const char *what, double need, const char *advice)
{
    char n[32], h[32];
    return cli_error(EXIT_USAGE, CMD, "%s %s, more than this machine's %s; %s",
                     what, cli_bytes_text(n, sizeof n, need),
                     cli_bytes_text(h, sizeof h, (double)cli_phys_bytes()),
                     advice);
}

/* Everything the run needs before anything is allocated: the task and its
 * sizes, the memory it would hold, the budget.  Fills *X, *V, *z and
 * *budget_bytes, or prints the error and returns the exit code. */
static int preflight(const run_args *a, run_sizes *z, int64_t *budget_bytes)
{
    bptt_session_spec sp;
    session_spec(a, &sp);
    char why[4200];
    int rc = bptt_session_size(&sp, z, why, sizeof why);
    if (rc != BPTT_OK)
        return cli_error(EXIT_USAGE, CMD, "--task %s: %s", a->task, why);
    const double phys = (double)cli_phys_bytes();
    if (z->data_bytes > phys)
        return too_big("the data alone (length x batch x input) needs",
                       z->data_bytes, "use a smaller --length or --batch");
    /* at least one stored state besides the working set */
    if (z->fixed_bytes + z->hidden_bytes > phys)
        return too_big("these sizes need at least",
                       z->fixed_bytes + z->hidden_bytes,
                       "use smaller --hidden, --batch, --length or --layers");
    if ((rc = parse_memory(a->memory, (int64_t)z->full_checkpoint_bytes,
                           (int64_t)z->hidden_bytes, budget_bytes)) != 0)
        return rc;
    /* A budget above full BPTT's needs is fine as given (the plan holds no
     * more than it needs); what the plan can hold must fit in memory. */
    const double held = fmin((double)*budget_bytes,
                             z->full_checkpoint_bytes + z->hidden_bytes);
    if (z->fixed_bytes + held > phys) {
        char c[32];
        char what[96];
        snprintf(what, sizeof what, "with %s of checkpoints this run would "
                 "hold up to", cli_bytes_text(c, sizeof c, held));
        return too_big(what, z->fixed_bytes + held,
                       "give a smaller --memory, e.g. 5%");
    }
    return 0;
}

/* What a run holds while it iterates. */
typedef struct {
    const run_args *a;
    run_result *r;
    bptt_plan *plan;
    bptt_mem *mem;
    bptt_session *session;
    live_sample *samples; /* one per iteration */
    live_trace trace;
    live_progress progress;
    int64_t done; /* iterations completed */
} run_state;

/* The end of the line of a run that stops early, into buf: what was kept
 * (the trace, when it has a row; closed here) and what was not. */
static const char *kept_text(run_state *s, char *buf, size_t cap)
{
    const run_args *a = s->a;
    live_progress_clear(&s->progress);
    live_signals_restore();
    const int64_t rows = s->trace.rows;
    if (!a->trace || !live_trace_close(&s->trace, a->trace, 1))
        snprintf(buf, cap, "nothing was written");
    else
        snprintf(buf, cap, "kept: the trace of %" PRId64 " iteration%s in "
                 "%s; not written: the result%s", rows, rows == 1 ? "" : "s",
                 a->trace, a->dump_dir ? ", the gradient dump" : "");
    return buf;
}

/* The one line of a run that stops early: "bptt run: WHAT; kept: ..." */
__attribute__((format(printf, 3, 4))) static int
stopped(run_state *s, int code, const char *fmt, ...)
{
    char what[512], kept[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cli_error(code, CMD, "%s; %s", what,
                     kept_text(s, kept, sizeof kept));
}

/* The error line of an iteration that made a NaN or an infinity. */
static int diverged(run_state *s, int64_t it, const bptt_session_fault *f)
{
    char what[160], more[64] = "";
    const bptt_nonfinite *w = &f->where;
    if (w->count > 1)
        snprintf(more, sizeof more, " (and %zu more values)", w->count - 1);
    if (strcmp(f->arena, "loss") == 0)
        snprintf(what, sizeof what, "the loss is %s",
                 bptt_finite_str(f->status));
    else
        snprintf(what, sizeof what, "%s%s %s[%zu, %zu] is %s%s",
                 strcmp(f->arena, "parameter") == 0 ? "after the update, "
                                                    : "",
                 f->arena, *w->tensor ? w->tensor : "?", w->row, w->col,
                 bptt_finite_str(f->status), more);
    return stopped(s, 1, "iteration %" PRId64 " of %" PRId64 ": %s; the "
                   "training diverged (try a smaller --lr than %g)", it + 1,
                   s->a->iters, what, s->a->lr);
}

/* Iteration it (0-based): the session's gradients of batch it, timed, and
 * its update, each checked for NaN and infinity, then the trace's row.
 * 0, or the error line printed and the exit code. */
static int iterate(run_state *s, int64_t it)
{
    const run_args *a = s->a;
    run_result *r = s->r;
    bptt_session_fault f;
    live_clock c0, c1;
    live_clock_start(&c0);
    int rc = bptt_session_gradients(s->session, s->plan, (size_t)it, &r->ex,
                                    &f);
    live_clock_stop(&c1);
    live_sample_between(&c0, &c1, &s->samples[it]);
    if (rc == BPTT_ENONFINITE)
        return diverged(s, it, &f);
    if (rc != BPTT_OK)
        return stopped(s, 1, "training failed in iteration %" PRId64 " of "
                       "%" PRId64 ": %s%s", it + 1, a->iters,
                       bptt_strerror(rc),
                       rc == BPTT_ENOMEM && a->fail_alloc ? " (--fail-alloc)"
                                                          : "");
    const bptt_model *m = bptt_session_model(s->session);
    if (it == 0)
        r->loss_first = r->ex.loss;
    r->loss_last = r->ex.loss;
    r->grad_norm = bptt_model_grad_norm(m);
    r->mem = *bptt_mem_stats_get(s->mem);
    r->wpack_bytes = m->wpack_bytes;
    r->wgrad_bytes = m->wgrad_bytes;
    if (bptt_session_update(s->session, &f) != BPTT_OK)
        return diverged(s, it, &f);
    if (a->trace) {
        const int err = live_trace_row(&s->trace, it + 1, r->ex.loss,
                                       r->grad_norm, &s->samples[it]);
        if (err)
            return stopped(s, 1, "--trace %s: %s after iteration %" PRId64
                           " of %" PRId64, a->trace, strerror(err), it + 1,
                           a->iters);
    }
    s->done = it + 1;
    live_progress_show(&s->progress, it + 1, a->iters, r->ex.loss,
                       s->samples[it].wall);
    return 0;
}

/* A caught SIGINT or SIGTERM: the line, and 128 + the signal. */
static int interrupted(run_state *s)
{
    const int sig = live_signal_caught();
    const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    if (s->done == 0)
        return stopped(s, 128 + sig, "interrupted (%s) before iteration 1 of "
                       "%" PRId64, name, s->a->iters);
    return stopped(s, 128 + sig, "interrupted (%s) after iteration %" PRId64
                   " of %" PRId64, name, s->done, s->a->iters);
}

/* The iterations, with the trace, the progress line and the signals: 0, or
 * the error line printed and the exit code. */
static int iterate_all(run_state *s)
{
    const run_args *a = s->a;
    live_progress_start(&s->progress);
    s->trace.fd = -1;
    s->trace.rows = 0;
    live_signals_catch();
    if (a->trace) {
        const int err = live_trace_open(&s->trace, a->trace);
        if (err) {
            live_signals_restore();
            return err == EEXIST
                       ? cli_error(EXIT_USAGE, CMD, "--trace: '%s' exists "
                                   "(remove it or name a new file)", a->trace)
                       : cli_error(1, CMD, "--trace %s: %s; nothing was "
                                   "written", a->trace, strerror(err));
        }
    }
    for (int64_t it = 0; it < a->iters; it++) {
        if (live_signal_caught())
            return interrupted(s);
        const int rc = iterate(s, it);
        if (rc)
            return rc;
    }
    if (live_signal_caught())
        return interrupted(s);
    live_progress_clear(&s->progress);
    live_signals_restore();
    if (a->trace)
        live_trace_close(&s->trace, a->trace, 1);
    return 0;
}

/* After a whole run: the gradient dump, then the result. */
static int finish(run_state *s)
{
    const run_args *a = s->a;
    run_result *r = s->r;
    r->seconds_first = s->samples[0].wall;
    if (live_summarize(s->samples, (size_t)a->iters, r->threads, &r->time))
        return cli_error(1, CMD, "out of memory at the end of the run%s",
                         a->trace ? "; the trace is whole, the result was "
                                    "not written"
                                  : "");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r->rss_peak_bytes = (int64_t)ru.ru_maxrss * 1024;
    char *result = NULL;
    size_t result_len = 0;
    const int merr = make_result(a, r, &result, &result_len);
    if (merr)
        return cli_error(1, CMD, "%s at the end of the run; not written: "
                         "the result%s%s", strerror(merr),
                         a->dump_dir ? ", the gradient dump" : "",
                         a->trace ? "; the trace is whole" : "");
    if (a->dump_dir) {
        const int err = dump_grads(a->dump_dir, bptt_session_model(s->session),
                                   bptt_session_batch(s->session),
                                   bptt_session_last_params(s->session));
        if (err) {
            char kept[4200] = "";
            if (a->trace)
                snprintf(kept, sizeof kept, "; kept: the trace of %" PRId64
                         " iteration%s in %s", a->iters,
                         a->iters == 1 ? "" : "s", a->trace);
            free(result);
            return cli_error(1, CMD, "--dump-grads %s: %s%s; not written: "
                             "the result, the gradient dump", a->dump_dir,
                             strerror(err), kept);
        }
    }
    fwrite(result, 1, result_len, stdout); /* errors: cli.c's finish */
    free(result);
    return 0;
}

int cli_run(int argc, char **argv)
{
    run_args a;
    int help;
    int rc = parse_args(argc, argv, &a, &help);
    if (help) {
        run_usage(stdout);
        return 0;
    }
    if (rc)
        return rc;

    /* every check before the first allocation */
    run_sizes z;
    int64_t budget_bytes = 0;
    if ((rc = preflight(&a, &z, &budget_bytes)) != 0)
        return rc;
    const size_t T = (size_t)a.length;
    const double hb = z.hidden_bytes, sb = z.internal_bytes;
    const double full_ckpt = z.full_checkpoint_bytes;
    bptt_units u;
    bptt_units_from_bytes(&u, (int64_t)hb, (int64_t)sb);
    const int64_t budget_units = budget_bytes / u.quantum;
    /* a budget below the smallest feasible one is refused before any
     * table is built */
    const int64_t min_units = bptt_strategy_min_budget(
        a.strategy, T, u.hidden_units, u.internal_units, NULL);
    if (budget_units < min_units) {
        const int64_t min_bytes = min_units * u.quantum;
        return cli_error(EXIT_INFEASIBLE, CMD,
                         "budget %" PRId64 " bytes (%s) is infeasible for %s "
                         "at length %zu; the smallest feasible budget is "
                         "%" PRId64 " bytes (%.4g%% of full BPTT's %.0f)",
                         budget_bytes, a.memory, a.strategy->name, T,
                         min_bytes, 100.0 * (double)min_bytes / full_ckpt,
                         full_ckpt);
    }

    int threads = (int)a.threads;
#ifdef _OPENMP
    if (threads > 0)
        omp_set_num_threads(threads);
    threads = omp_get_max_threads();
#else
    threads = 1;
#endif
    openblas_set_num_threads(threads);
    /* plan once: the table and the plan are checked against memory before
     * they are made */
    bptt_table *tb = NULL;
    bptt_plan *plan = NULL;
    bptt_table_options topts = {.threads = threads,
                                .min_budget = budget_units};
    rc = bptt_table_alloc(&tb, a.strategy, T, u.hidden_units,
                          u.internal_units, budget_units, &topts);
    if (rc != BPTT_OK) {
        char budget[96];
        snprintf(budget, sizeof budget, "a budget of %s (%" PRId64 " bytes)",
                 a.memory, budget_bytes);
        return cli_table_error(CMD, rc, a.strategy, T, u.hidden_units,
                               u.internal_units, budget_units, budget);
    }
    if ((rc = cli_plan_fits(CMD, tb, budget_units)) != 0) {
        bptt_table_free(tb);
        return rc;
    }
    /* the plan is held for the whole run, beside everything else */
    const double plan_bytes =
        cli_plan_bytes(T, bptt_table_cost(tb, budget_units));
    const double held = fmin((double)budget_bytes, full_ckpt + hb);
    if (z.fixed_bytes + held + plan_bytes > (double)cli_phys_bytes()) {
        bptt_table_free(tb);
        char p[32], what[96];
        snprintf(what, sizeof what, "with its plan (up to %s) this run would "
                 "hold up to", cli_bytes_text(p, sizeof p, plan_bytes));
        return too_big(what, z.fixed_bytes + held + plan_bytes,
                       "use a smaller --length");
    }
    rc = bptt_table_plan(tb, budget_units, &plan, NULL);
    bptt_plan_stats ps;
    if (rc == BPTT_OK)
        rc = bptt_plan_validate(plan, &ps);
    bptt_table_free(tb);
    if (rc != BPTT_OK) {
        bptt_plan_free(plan);
        return cli_error(1, CMD, "planning failed: %s", bptt_strerror(rc));
    }

    run_result r = {0};
    r.budget_bytes = budget_bytes;
    r.full_bytes = (int64_t)full_ckpt;
    r.predicted_peak_bytes = ps.peak_units * u.quantum;
    r.plan_forward_ops = ps.forward_ops;
    r.hidden_bytes = (size_t)hb;
    r.internal_bytes = (size_t)sb;
    r.threads = threads;

    run_state s;
    memset(&s, 0, sizeof s);
    s.a = &a;
    s.r = &r;
    s.plan = plan;
    s.trace.fd = -1;
    s.mem = bptt_mem_alloc();
    if (!s.mem) {
        bptt_plan_free(plan);
        return cli_error(1, CMD, "out of memory");
    }
    if (a.fail_alloc)
        bptt_mem_fail_at(s.mem, (size_t)a.fail_alloc);
    const char *hook = a.fail_alloc ? " (--fail-alloc)" : "";
    s.samples = calloc((size_t)a.iters, sizeof *s.samples);
    bptt_session_spec sp;
    session_spec(&a, &sp);
    char why[4200] = "";
    rc = s.samples ? bptt_session_open(&s.session, &sp, s.mem, why,
                                       sizeof why)
                   : BPTT_ENOMEM;
    if (rc != BPTT_OK) {
        if (rc == BPTT_ENOMEM)
            rc = cli_error(1, CMD, "training failed: %s%s", bptt_strerror(rc),
                           hook);
        else
            rc = cli_error(EXIT_USAGE, CMD, "--task %s: %s", a.task, why);
        goto out;
    }
    r.input = bptt_session_input(s.session);
    r.classes = bptt_session_classes(s.session);
    rc = iterate_all(&s);
    if (rc == 0)
        rc = finish(&s);
out:
    free(s.samples);
    bptt_session_close(s.session);
    bptt_plan_free(plan);
    bptt_mem_free(s.mem);
    return rc;
}
