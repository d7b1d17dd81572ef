/* cli_run.c: `bptt run`: training iterations of a real recurrent network
 * under one strategy and budget, with what happened measured: forward ops,
 * checkpoint and total tracked bytes, RSS, time per iteration, loss. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
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
#include "data.h"
#include "exec.h"
#include "meta.h"
#include "model.h"
#include "npy.h"

#define CMD "run"

void openblas_set_num_threads(int);

static void run_usage(FILE *f)
{
    fputs(
        "usage: bptt run --length T [--cell rnn|lstm] [--layers L] [--input X]\n"
        "                [--hidden H] [--batch B] [--strategy S] [--memory M]\n"
        "                [--iters N] [--seed S] [--threads K]\n"
        "                [--task copy|adding|text:FILE] [--optimizer sgd|adam]\n"
        "                [--lr R] [--format text|json|csv] [--dump-grads DIR]\n"
        "\n"
        "Trains a recurrent network for N iterations of T steps, each planned\n"
        "once under the memory budget and executed by the plan, and reports\n"
        "what happened: forward ops, checkpoint and total tracked bytes, RSS,\n"
        "seconds per iteration (median after one warm-up), loss.\n"
        "\n"
        "  --cell C        rnn or lstm (default lstm)\n"
        "  --layers L      stacked recurrent layers, 1..16 (default 1)\n"
        "  --input X       input width (default: the task's; copy: 16)\n"
        "  --hidden H      hidden width (default 128)\n"
        "  --batch B       sequences per batch (default 32)\n"
        "  --length T      steps per sequence\n"
        "  --strategy S    full, chen, hsm, ism, msm, ism-paper, msm-paper\n"
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
        "  --trace FILE    write iteration, loss, grad_norm, seconds of every\n"
        "                  iteration to FILE (csv)\n"
        "  --dump-grads D  write parameters, inputs, targets and gradients of\n"
        "                  the last iteration to directory D as .npy files\n"
        "\n"
        "exit status: 0 ok, 2 bad input, 3 budget below the smallest feasible\n"
        "one (the message names it), 1 failure while running\n",
        f);
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
} run_args;

static int parse_real(const char *opt, const char *text, double lo,
                      double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !(v >= lo) ||
        !(v <= hi))
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
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
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
    const int64_t big = (int64_t)1 << 24;
    while (rc == 0 && (c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            a->cell = bptt_cell_find(optarg);
            if (!a->cell)
                rc = cli_error(EXIT_USAGE, CMD,
                               "--cell: unknown cell '%s' (use rnn or lstm)",
                               optarg);
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
                rc = cli_error(EXIT_USAGE, CMD,
                               "--strategy: unknown strategy '%s' (use full, "
                               "chen, hsm, ism, msm, ism-paper or msm-paper)",
                               optarg);
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
            rc = parse_real("--lr", optarg, 1e-12, 1e6, &a->lr);
            break;
        case 'f':
            rc = cli_parse_format(CMD, optarg, &a->format);
            break;
        case 'd':
            a->dump_dir = optarg;
            if (!*optarg)
                rc = cli_error(EXIT_USAGE, CMD, "--dump-grads: empty "
                               "directory name");
            break;
        case 'R':
            a->trace = optarg;
            if (!*optarg)
                rc = cli_error(EXIT_USAGE, CMD, "--trace: empty file name");
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
    if (n > 5 && strcmp(text + n - 5, "slots") == 0) {
        char buf[32];
        int64_t slots;
        if (n - 5 >= sizeof buf)
            goto bad;
        memcpy(buf, text, n - 5);
        buf[n - 5] = '\0';
        if (cli_parse_budget(CMD, buf, 0, &slots))
            return EXIT_USAGE;
        if (slots > INT64_MAX / 4 / hidden_bytes)
            goto range;
        *out = slots * hidden_bytes;
        return 0;
    }
    if (n > 1 && text[n - 1] == '%')
        return cli_parse_budget(CMD, text, full_bytes, out);
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
        const size_t k = strlen(units[u].suffix);
        if (n > k && strcmp(text + n - k, units[u].suffix) == 0) {
            char buf[32];
            if (n - k >= sizeof buf)
                goto bad;
            memcpy(buf, text, n - k);
            buf[n - k] = '\0';
            char *end;
            errno = 0;
            double v = strtod(buf, &end);
            if (end == buf || *end || errno == ERANGE || !(v >= 0) ||
                buf[0] == '-' || buf[0] == ' ')
                goto bad;
            if (v * (double)units[u].mult > 4e18)
                goto range;
            *out = (int64_t)(v * (double)units[u].mult);
            return 0;
        }
    }
bad:
    return cli_error(EXIT_USAGE, CMD,
                     "--memory: '%s' is not a budget (give bytes with a unit, "
                     "e.g. 64MiB or 100000B, a share of full BPTT's "
                     "checkpoint bytes, e.g. 5%%, or slots, e.g. 200slots)",
                     text);
range:
    return cli_error(EXIT_USAGE, CMD, "--memory: %s is too large", text);
}

/* ---- output ----------------------------------------------------------- */

typedef struct {
    int64_t budget_bytes, full_bytes, predicted_peak_bytes, plan_forward_ops;
    size_t hidden_bytes, internal_bytes;
    bptt_exec_stats ex;
    bptt_mem_stats mem;
    size_t classes, input;
    double seconds_per_iter, seconds_first, loss_first, loss_last, grad_norm;
    int64_t rss_peak_bytes;
    int threads;
} run_result;

typedef struct {
    const char *key;
    char val[96];
    int quoted;
} field;

/* Every field of a run, in output order. */
static size_t collect(const run_args *a, const run_result *r, field *f)
{
    size_t n = 0;
#define FS(k, v) (f[n].quoted = 1, f[n].key = (k), snprintf(f[n++].val, 96, "%s", (v)))
#define FI(k, v) (f[n].quoted = 0, f[n].key = (k), snprintf(f[n++].val, 96, "%" PRId64, (int64_t)(v)))
#define FD(k, v) (f[n].quoted = 0, f[n].key = (k), snprintf(f[n++].val, 96, "%.9g", (double)(v)))
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
    FD("seconds_per_iter", r->seconds_per_iter);
    FD("seconds_first_iter", r->seconds_first);
    FI("iters", a->iters);
    FD("loss_first", r->loss_first);
    FD("loss_last", r->loss_last);
    FD("grad_norm", r->grad_norm);
    FS("optimizer", a->optimizer);
    FD("lr", a->lr);
    FI("threads", r->threads);
    FI("seed", a->seed);
    FS("precision", REAL_NAME);
#undef FS
#undef FI
#undef FD
    return n;
}

static void print_result(const run_args *a, const run_result *r)
{
    field f[64];
    const size_t n = collect(a, r, f);
    bptt_meta meta;
    bptt_meta_collect(&meta);
    if (a->format == FORMAT_JSON) {
        fputc('{', stdout);
        for (size_t i = 0; i < n; i++)
            printf(f[i].quoted ? "\"%s\":\"%s\"," : "\"%s\":%s,", f[i].key,
                   f[i].val);
        char buf[BPTT_META_JSON_MAX];
        bptt_meta_json(&meta, buf, sizeof buf);
        printf("%s}\n", buf);
    } else if (a->format == FORMAT_CSV) {
        char buf[BPTT_META_JSON_MAX];
        bptt_meta_json(&meta, buf, sizeof buf);
        printf("# %s\n", buf); /* the metadata header */
        for (size_t i = 0; i < n; i++)
            printf("%s%c", f[i].key, i + 1 < n ? ',' : '\n');
        for (size_t i = 0; i < n; i++)
            printf("%s%c", f[i].val, i + 1 < n ? ',' : '\n');
    } else {
        for (size_t i = 0; i < n; i++)
            printf("%-32s %s\n", f[i].key, f[i].val);
        printf("%-32s %s (git %s), %s, %s\n", "build", meta.version,
               meta.git_revision, meta.compiler, meta.cpu_model);
    }
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
        const int nd = t->cols == 1 ? 1 : 2;
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

/* The per-iteration trace, written to a temporary file and renamed. */
static int write_trace(const char *path, size_t n, const double *loss,
                       const double *norm, const double *secs)
{
    char tmp[4096];
    const int len = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path,
                             (long)getpid());
    if (len < 0 || (size_t)len >= sizeof tmp)
        return ENAMETOOLONG;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return errno;
    fprintf(f, "iteration,loss,grad_norm,seconds\n");
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%zu,%.9g,%.9g,%.6f\n", i + 1, loss[i], norm[i], secs[i]);
    int err = ferror(f) ? EIO : 0;
    if (fclose(f) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err)
        unlink(tmp);
    return err;
}

/* ---- the run ------------------------------------------------------------ */

static int cmp_double(const void *x, const void *y)
{
    const double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

static int64_t phys_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (int64_t)pages * psize : INT64_MAX;
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

    if (a.dump_dir) {
        struct stat sb;
        if (stat(a.dump_dir, &sb) == 0 && (!S_ISDIR(sb.st_mode) ||
                                           rmdir(a.dump_dir) != 0))
            return cli_error(EXIT_USAGE, CMD,
                             "--dump-grads: '%s' exists and is not an empty "
                             "directory (remove it or name another)",
                             a.dump_dir);
    }

    bptt_mem *mem = bptt_mem_alloc();
    if (!mem)
        return cli_error(1, CMD, "out of memory");
    const size_t T = (size_t)a.length, B = (size_t)a.batch;
    const size_t H = (size_t)a.hidden, L = (size_t)a.layers;

    /* The data must fit before it is drawn (the input width is known here
     * but for text, whose vocabulary is at least 1). */
    {
        const double xw = a.input ? (double)a.input
                          : strcmp(a.task, "adding") == 0 ? 2
                          : strcmp(a.task, "copy") == 0   ? 16
                                                           : 1;
        const double data = (double)sizeof(real) * (double)T * (double)B *
                            (xw + 1);
        if (data > (double)phys_bytes()) {
            bptt_mem_free(mem);
            return cli_error(EXIT_USAGE, CMD,
                             "the data alone (length x batch x input) needs "
                             "%.3g GiB, more than this machine's %.3g GiB; use "
                             "a smaller --length or --batch",
                             data / 1073741824.0,
                             (double)phys_bytes() / 1073741824.0);
        }
    }

    /* data first: it fixes the input width and the classes */
    bptt_task *task = NULL;
    int terr = bptt_task_alloc(&task, a.task, T, B, (size_t)a.input,
                               (unsigned long)a.seed, mem);
    if (terr != BPTT_TASK_OK) {
        bptt_mem_free(mem);
        return cli_error(terr == BPTT_TASK_NOMEM ? 1 : EXIT_USAGE, CMD,
                         "--task %s: %s", a.task, bptt_task_strerror(terr));
    }
    const size_t X = bptt_task_input_width(task), V = bptt_task_classes(task);

    /* sizes: every byte the run will hold, before holding any */
    const size_t G = a.cell->gates;
    const double rb = (double)sizeof(real);
    const double hb = rb * (double)(L * a.cell->hidden_vecs * B * H);
    const double sb = rb * (double)(L * a.cell->internal_vecs * B * H);
    const double params = rb * ((double)G * H * ((double)X + H + 1) +
                                (double)(L - 1) * G * H * (2.0 * H + 1) +
                                (double)V * (H + 1));
    const double opt = strcmp(a.optimizer, "adam") == 0 ? 2 * params : 0;
    const double full_ckpt = sb * (double)(T > 1 ? T - 1 : 1);
    const double need = 2 * params + opt + rb * (double)T * B * (X + 1) +
                        sb + 4 * hb + rb * (double)B * (X + H) * (G + 2);
    if (need + hb > (double)phys_bytes() || hb > 1e15) {
        bptt_task_free(task);
        bptt_mem_free(mem);
        return cli_error(EXIT_USAGE, CMD,
                         "these sizes need at least %.3g GiB before any "
                         "checkpoint, more than this machine's %.3g GiB; use "
                         "smaller --hidden, --batch, --length or --layers",
                         (need + hb) / 1073741824.0,
                         (double)phys_bytes() / 1073741824.0);
    }

    bptt_units u;
    bptt_units_from_bytes(&u, (int64_t)hb, (int64_t)sb);
    int64_t budget_bytes;
    if ((rc = parse_memory(a.memory, (int64_t)full_ckpt, (int64_t)hb,
                           &budget_bytes)) != 0) {
        bptt_task_free(task);
        bptt_mem_free(mem);
        return rc;
    }
    /* A budget above full BPTT's needs is fine as given (the plan holds no
     * more than it needs); what the plan can hold must fit in memory. */
    const double held = (double)budget_bytes < full_ckpt + hb
                            ? (double)budget_bytes
                            : full_ckpt + hb;
    if (need + held > (double)phys_bytes()) {
        bptt_task_free(task);
        bptt_mem_free(mem);
        return cli_error(EXIT_USAGE, CMD,
                         "this run would hold up to %.3g GiB (%.3g GiB of "
                         "checkpoints), more than this machine's %.3g GiB; "
                         "give a smaller --memory, e.g. 5%%",
                         (need + held) / 1073741824.0, held / 1073741824.0,
                         (double)phys_bytes() / 1073741824.0);
    }
    const int64_t budget_units = budget_bytes / u.quantum;

    int threads = (int)a.threads;
#ifdef _OPENMP
    if (threads > 0)
        omp_set_num_threads(threads);
    threads = omp_get_max_threads();
#else
    threads = 1;
#endif
    openblas_set_num_threads(threads);

    /* plan once: a budget below the smallest feasible one is refused
     * before any table is built */
    const int64_t min_units = bptt_strategy_min_budget(
        a.strategy, T, u.hidden_units, u.internal_units, NULL);
    if (budget_units < min_units) {
        bptt_task_free(task);
        bptt_mem_free(mem);
        const int64_t min_bytes = min_units * u.quantum;
        return cli_error(EXIT_INFEASIBLE, CMD,
                         "budget %" PRId64 " bytes (%s) is infeasible for %s "
                         "at length %zu; the smallest feasible budget is "
                         "%" PRId64 " bytes (%.4g%% of full BPTT's %.0f)",
                         budget_bytes, a.memory, a.strategy->name, T,
                         min_bytes, 100.0 * (double)min_bytes / full_ckpt,
                         full_ckpt);
    }
    bptt_table *tb = NULL;
    bptt_plan *plan = NULL;
    bptt_table_options topts = {.threads = threads};
    rc = bptt_table_alloc(&tb, a.strategy, T, u.hidden_units,
                          u.internal_units, budget_units, &topts);
    if (rc != BPTT_OK) {
        bptt_task_free(task);
        bptt_mem_free(mem);
        return cli_error(rc == BPTT_ETOOBIG ? EXIT_USAGE : 1, CMD,
                         "cannot plan length %zu with a budget of %" PRId64
                         " bytes: %s; use a smaller --length or --memory",
                         T, budget_bytes, bptt_strerror(rc));
    }
    rc = bptt_table_plan(tb, budget_units, &plan, NULL);
    bptt_plan_stats ps;
    if (rc == BPTT_OK)
        rc = bptt_plan_validate(plan, &ps);
    bptt_table_free(tb);
    if (rc != BPTT_OK) {
        bptt_plan_free(plan);
        bptt_task_free(task);
        bptt_mem_free(mem);
        return cli_error(1, CMD, "planning failed: %s", bptt_strerror(rc));
    }

    run_result r = {0};
    r.budget_bytes = budget_bytes;
    r.full_bytes = (int64_t)full_ckpt;
    r.predicted_peak_bytes = ps.peak_units * u.quantum;
    r.plan_forward_ops = ps.forward_ops;
    r.hidden_bytes = (size_t)hb;
    r.internal_bytes = (size_t)sb;
    r.classes = V;
    r.input = X;
    r.threads = threads;

    bptt_model *model = NULL;
    bptt_optimizer *optim = NULL;
    real *params_before = NULL;
    double *secs = calloc((size_t)a.iters, sizeof(double));
    double *losses = calloc((size_t)a.iters, sizeof(double));
    double *norms = calloc((size_t)a.iters, sizeof(double));
    rc = bptt_model_alloc(&model, a.cell, L, B, X, H, V,
                          (unsigned long)a.seed, mem);
    if (rc == BPTT_OK)
        rc = bptt_optimizer_alloc(&optim, a.optimizer, a.lr, model, mem);
    if (rc == BPTT_OK && a.dump_dir) {
        params_before = malloc(model->n_params * sizeof(real));
        if (!params_before)
            rc = BPTT_ENOMEM;
    }
    if (!secs || !losses || !norms)
        rc = BPTT_ENOMEM;
    bptt_batch batch;
    for (int64_t it = 0; it < a.iters && rc == BPTT_OK; it++) {
        rc = bptt_task_batch(task, (size_t)it, &batch);
        if (rc != BPTT_OK)
            break;
        bptt_mem_reset_peaks(mem);
        const double t0 = cli_seconds();
        rc = bptt_exec_run(plan, model, &batch, mem, &r.ex);
        secs[it] = cli_seconds() - t0;
        if (rc != BPTT_OK)
            break;
        if (it == 0)
            r.loss_first = r.ex.loss;
        r.loss_last = r.ex.loss;
        r.grad_norm = bptt_model_grad_norm(model);
        losses[it] = r.ex.loss;
        norms[it] = r.grad_norm;
        r.mem = *bptt_mem_stats_get(mem);
        if (it == a.iters - 1 && params_before)
            memcpy(params_before, model->params,
                   model->n_params * sizeof(real));
        bptt_optimizer_step(optim, model);
    }
    if (rc == BPTT_OK) {
        r.seconds_first = secs[0];
        if (a.iters > 1) {
            qsort(secs + 1, (size_t)a.iters - 1, sizeof(double), cmp_double);
            r.seconds_per_iter = secs[1 + (a.iters - 1) / 2];
        } else {
            r.seconds_per_iter = secs[0];
        }
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        r.rss_peak_bytes = (int64_t)ru.ru_maxrss * 1024;
        if (a.dump_dir) {
            int err = dump_grads(a.dump_dir, model, &batch, params_before);
            if (err)
                rc = cli_error(1, CMD, "--dump-grads %s: %s", a.dump_dir,
                               strerror(err));
        }
        if (rc == BPTT_OK && a.trace) {
            int err = write_trace(a.trace, (size_t)a.iters, losses, norms,
                                  secs);
            if (err)
                rc = cli_error(1, CMD, "--trace %s: %s", a.trace,
                               strerror(err));
        }
        if (rc == BPTT_OK)
            print_result(&a, &r);
    } else {
        rc = cli_error(1, CMD, "training failed: %s", bptt_strerror(rc));
    }
    free(params_before);
    free(secs);
    free(losses);
    free(norms);
    bptt_optimizer_free(optim, mem);
    bptt_model_free(model);
    bptt_plan_free(plan);
    bptt_task_free(task);
    bptt_mem_free(mem);
    return rc;
}
