/* cli_sweep.c: `bptt sweep`: every point of a grid of configurations, either
 * planned in this process (--mode plan, the records of `bptt plan`) or run
 * as a child `bptt run` process each (--mode run, so that each point's RSS
 * peak is its own), into one file of records with a metadata header.
 *
 * Promises: records in grid order (row-major over the axes in the order of
 * `keys` below, the last axis fastest); a grid is checked whole, and a plan
 * grid's budgets are checked against each point's smallest feasible one,
 * before any work; FILE appears whole (temporary file, fsync, rename) or not
 * at all; each finished point is appended to FILE.partial as one line (one
 * write, then fsync), so a sweep stopped at any moment, even by SIGKILL, and
 * run again computes only the points missing and ends with the file an
 * uninterrupted sweep writes: byte for byte in plan mode, whose records hold
 * no timings, when both share the metadata date (SOURCE_DATE_EPOCH).
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
 * Test hook: BPTT_SWEEP_DIE_AFTER=N makes a direct sweep kill itself with
 * SIGKILL once it has recorded N points in this process; N.5 kills it
 * halfway through writing the next record's line.
 */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "git-revision.h"

#include "bptt.h"
#include "cell.h"
#include "cli.h"
#include "json.h"
#include "meta.h"
#include "model.h"

#define CMD "sweep"
#define MAX_POINTS 1000000
#define MAX_AXIS_VALUES 100000
#define INTERRUPTED (-1) /* compute_*: stopped by SIGINT or SIGTERM */

static void sweep_usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt sweep --length LIST [GRID OPTIONS] --out FILE\n"
        "                  [--mode plan|run] [--format jsonl|csv] [--config FILE]\n"
        "                  [--force] [--infeasible error|record]\n"
        "                  [--list | --jobs JOBFILE | --only K | --merge]\n"
        "\n"
        "Plans (--mode plan, the default) or runs (--mode run) every point of a\n"
        "grid and writes one record per point, in grid order, to FILE, after a\n"
        "metadata header. Each finished point is kept in FILE.partial at once:\n"
        "an interrupted sweep, run again with the same grid, does only the\n"
        "points missing. When FILE is complete a rerun does nothing (--force\n"
        "recomputes it).\n"
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
        "  --alpha A       internal state size in slots             (plan only)\n"
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
        "  --config FILE   'key = value' lines (# comments); keys are the option\n"
        "                  names without dashes: the axes, mode, out, format,\n"
        "                  infeasible, iters, task, optimizer, lr; options on the\n"
        "                  command line win\n"
        "  --infeasible P  error (default): a budget below a point's smallest\n"
        "                  feasible one is an error (plan: before any work);\n"
        "                  record: such a point gets a record without results\n"
        "  --force         recompute even if FILE or a part is complete\n"
        "  --list          print the points of the grid and stop\n"
        "  --jobs JOBFILE  write one command per point (--only K) and the merge\n"
        "                  command instead of running: for scripts/sweep-parallel\n"
        "                  and scripts/slurm-sweep\n"
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

/* ---- small helpers: memory, strings, files ------------------------------ */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        cli_error(1, CMD, "out of memory");
        exit(1);
    }
    return q;
}

static char *xstrdup(const char *s)
{
    const size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

/* A growing string. */
typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = 2 * (b->n + n + 1) + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

__attribute__((format(printf, 2, 3))) static void sb_printf(sbuf *b,
                                                           const char *fmt,
                                                           ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        sb_add(b, small, (size_t)n);
        return;
    }
    char *big = xrealloc(NULL, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_add(b, big, (size_t)n);
    free(big);
}

/* s as a JSON string, quotes included: escaped by bptt_json_string
 * (json.h), invalid UTF-8 as U+FFFD, nothing cut. */
static void sb_json_str(sbuf *b, const char *s)
{
    const size_t n = bptt_json_string(NULL, 0, s, (size_t)-1);
    if (b->n + n + 1 > b->cap) {
        b->cap = 2 * (b->n + n + 1) + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    bptt_json_string(b->p + b->n, n + 1, s, (size_t)-1);
    b->n += n;
}

/* s for a POSIX shell, in single quotes. */
static void sb_shell(sbuf *b, const char *s)
{
    sb_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            sb_puts(b, "'\\''");
        else
            sb_add(b, s, 1);
    }
    sb_puts(b, "'");
}

static char *cat2(const char *a, const char *b)
{
    sbuf s = {0};
    sb_puts(&s, a);
    sb_puts(&s, b);
    return s.p;
}

/* All of buf to fd; 0 or errno. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        const ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The whole file into a NUL-terminated buffer; NULL with errno set. */
static char *read_file_fd(int fd, size_t *len)
{
    sbuf b = {0};
    char chunk[65536];
    for (;;) {
        const ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(b.p);
            return NULL;
        }
        if (r == 0)
            break;
        sb_add(&b, chunk, (size_t)r);
    }
    if (!b.p)
        b.p = xstrdup("");
    *len = b.n;
    return b.p;
}

static char *read_file(const char *path, size_t *len)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *s = read_file_fd(fd, len);
    const int e = errno;
    close(fd);
    errno = e;
    return s;
}

/* fsync of the directory holding path, so that a rename in it lasts. */
static void sync_dir_of(const char *path)
{
    char *d = xstrdup(path);
    char *slash = strrchr(d, '/');
    const char *dir = ".";
    if (slash == d)
        dir = "/";
    else if (slash) {
        *slash = '\0';
        dir = d;
    }
    const int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(d);
}

/* Writes text to path.tmp.PID, fsyncs it and renames it to path: 0, or the
 * error printed and 1. */
static int write_atomic(const char *path, const char *text, size_t n)
{
    sbuf tmp = {0};
    sb_printf(&tmp, "%s.tmp.%ld", path, (long)getpid());
    const int fd = open(tmp.p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    int err = fd < 0 ? errno : write_all(fd, text, n);
    if (fd >= 0) {
        if (!err && fsync(fd) != 0)
            err = errno;
        if (close(fd) != 0 && !err)
            err = errno;
        if (!err && rename(tmp.p, path) != 0)
            err = errno;
        if (err)
            unlink(tmp.p);
    }
    free(tmp.p);
    if (err)
        return cli_error(1, CMD, "cannot write %s: %s", path, strerror(err));
    sync_dir_of(path);
    return 0;
}

/* ---- the options and the config file ------------------------------------ */

/* Every key of the grid and of the config file.  The axes come first, in
 * grid order: the point index is row-major over them, the last fastest. */
enum key_id {
    K_STRATEGY,
    K_CELL,
    K_LAYERS,
    K_INPUT,
    K_HIDDEN,
    K_BATCH,
    K_LENGTH,
    K_ALPHA,
    K_MEMORY,
    K_THREADS,
    K_SEED,
    N_AXES,
    K_MODE = N_AXES,
    K_OUT,
    K_FORMAT,
    K_INFEASIBLE,
    K_ITERS,
    K_TASK,
    K_OPTIMIZER,
    K_LR,
    N_KEYS
};

enum { IN_PLAN = 1, IN_RUN = 2 };
enum { KIND_NAME, KIND_INT, KIND_MEMORY, KIND_FIXED };

typedef struct {
    const char *name;
    int kind;
    int modes;     /* axes: the modes it applies to */
    int64_t lo, hi; /* KIND_INT */
} key_def;

static const key_def keys[N_KEYS] = {
    [K_STRATEGY] = {"strategy", KIND_NAME, IN_PLAN | IN_RUN, 0, 0},
    [K_CELL] = {"cell", KIND_NAME, IN_RUN, 0, 0},
    [K_LAYERS] = {"layers", KIND_INT, IN_RUN, 1, BPTT_MAX_LAYERS},
    [K_INPUT] = {"input", KIND_INT, IN_RUN, 1, ((int64_t)1 << 24) - 1},
    [K_HIDDEN] = {"hidden", KIND_INT, IN_RUN, 1, ((int64_t)1 << 24) - 1},
    [K_BATCH] = {"batch", KIND_INT, IN_RUN, 1, ((int64_t)1 << 24) - 1},
    [K_LENGTH] = {"length", KIND_INT, IN_PLAN | IN_RUN, 1, INT32_MAX - 1},
    [K_ALPHA] = {"alpha", KIND_INT, IN_PLAN, 1, 1000000},
    [K_MEMORY] = {"memory", KIND_MEMORY, IN_PLAN | IN_RUN, 0, 0},
    [K_THREADS] = {"threads", KIND_INT, IN_PLAN | IN_RUN, 1, 4096},
    [K_SEED] = {"seed", KIND_INT, IN_RUN, 0, INT64_MAX / 2},
    [K_MODE] = {"mode", KIND_FIXED, 0, 0, 0},
    [K_OUT] = {"out", KIND_FIXED, 0, 0, 0},
    [K_FORMAT] = {"format", KIND_FIXED, 0, 0, 0},
    [K_INFEASIBLE] = {"infeasible", KIND_FIXED, 0, 0, 0},
    [K_ITERS] = {"iters", KIND_FIXED, 0, 1, 1000000},
    [K_TASK] = {"task", KIND_FIXED, 0, 0, 0},
    [K_OPTIMIZER] = {"optimizer", KIND_FIXED, 0, 0, 0},
    [K_LR] = {"lr", KIND_FIXED, 0, 0, 0},
};

/* A key's text as given, and where: "--length" or "FILE:LINE: length". */
typedef struct {
    char *text;
    char *label;
} setting;

/* The values of one axis, as canonical texts (integers in decimal). */
typedef struct {
    size_t n;
    char **text;
    int64_t *num; /* KIND_INT */
} axis_vals;

enum sweep_action { ACT_SWEEP, ACT_LIST, ACT_JOBS, ACT_ONLY, ACT_MERGE };

typedef struct {
    setting set[N_KEYS];
    int mode; /* IN_PLAN or IN_RUN */
    enum output_format format;
    int record_infeasible;
    int force;
    enum sweep_action action;
    int64_t only;
    const char *jobs_file, *config;
    const char *out;
    axis_vals ax[N_AXES];
    int applies[N_AXES]; /* the axis varies (or is passed) in this mode */
    size_t n_points;
    char *grid;     /* canonical description, the grid's identity */
    char grid_hash[17];
} sweep;

static const char *mode_name(int mode)
{
    return mode == IN_RUN ? "run" : "plan";
}

static void set_key(sweep *s, int k, const char *text, const char *label)
{
    free(s->set[k].text);
    free(s->set[k].label);
    s->set[k].text = xstrdup(text);
    s->set[k].label = xstrdup(label);
}

static int find_key(const char *name)
{
    for (int k = 0; k < N_KEYS; k++)
        if (strcmp(keys[k].name, name) == 0)
            return k;
    return -1;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
                     s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

/* Reads the `key = value` lines of text (len bytes and a NUL: the contents
 * of the config file `path`, which messages name; changed in place) into
 * the keys the command line left unset. */
static int parse_config(sweep *s, const char *path, char *text, size_t len,
                        const int *from_cli)
{
    int first_line[N_KEYS] = {0};
    int lineno = 0, rc = 0;
    char *const end = text + len;
    for (char *line = text, *next; rc == 0 && line < end; line = next) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        next = nl ? nl + 1 : end;
        if (nl)
            *nl = '\0';
        lineno++;
        /* a comment starts with # at the start or after white space */
        for (char *p = line; *p; p++)
            if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
                *p = '\0';
                break;
            }
        char *l = trim(line);
        if (!*l)
            continue;
        char *eq = strchr(l, '=');
        if (!eq) {
            rc = cli_error(EXIT_USAGE, CMD, "%s:%d: '%s' is not 'key = value' "
                           "(e.g. length = 100:1000:100)", path, lineno, l);
            break;
        }
        *eq = '\0';
        char *key = trim(l), *val = trim(eq + 1);
        const int k = find_key(key);
        if (k < 0) {
            rc = cli_error(EXIT_USAGE, CMD, "%s:%d: unknown key '%s' (keys: "
                           "strategy, cell, layers, input, hidden, batch, "
                           "length, alpha, memory, threads, seed, mode, out, "
                           "format, infeasible, iters, task, optimizer, lr)",
                           path, lineno, key);
            break;
        }
        if (!*val) {
            rc = cli_error(EXIT_USAGE, CMD, "%s:%d: %s has no value (e.g. "
                           "%s = ...; or remove the line)", path, lineno, key,
                           key);
            break;
        }
        if (first_line[k]) {
            rc = cli_error(EXIT_USAGE, CMD, "%s:%d: %s is set twice (first "
                           "on line %d); keep one line", path, lineno, key,
                           first_line[k]);
            break;
        }
        first_line[k] = lineno;
        if (from_cli[k])
            continue; /* the command line wins */
        sbuf label = {0};
        sb_printf(&label, "%s:%d: %s", path, lineno, key);
        set_key(s, k, val, label.p);
        free(label.p);
    }
    return rc;
}

/* Reads the config file at path (--config) into the keys the command line
 * left unset. */
static int read_config(sweep *s, const char *path, const int *from_cli)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return cli_error(EXIT_USAGE, CMD, "--config: cannot read '%s' (%s); "
                         "give a readable file of 'key = value' lines",
                         path, strerror(errno));
    /* a file without a setting is not a config: a wrong or truncated one */
    int any = 0;
    for (const char *p = text; p < text + len && !any; p++) {
        while (p < text + len && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        any = p < text + len && *p != '\n' && *p != '#';
        while (p < text + len && *p != '\n')
            p++;
    }
    const int rc = any ? parse_config(s, path, text, len, from_cli)
                       : cli_error(EXIT_USAGE, CMD, "--config: '%s' holds no "
                                   "settings (give 'key = value' lines, e.g. "
                                   "length = 100:1000:100)", path);
    free(text);
    return rc;
}

/* ---- values: integers, ranges, budgets ---------------------------------- */

/* A decimal integer filling all of text (no sign but '-', no spaces). */
static int parse_i64(const char *text, int64_t *out)
{
    if (!*text || *text == '+' || *text == ' ' || *text == '\t')
        return -1;
    char *end;
    errno = 0;
    const long long v = strtoll(text, &end, 10);
    if (*end || end == text)
        return -1;
    if (errno == ERANGE)
        return -2;
    *out = (int64_t)v;
    return 0;
}

/* A non-negative decimal number filling all of text. */
static int parse_nonneg(const char *text, double *out)
{
    if (!*text || *text == '+' || *text == '-' || *text == ' ')
        return -1;
    char *end;
    errno = 0;
    const double v = strtod(text, &end);
    if (*end || end == text || errno == ERANGE || !(v >= 0) || v > 1e18)
        return -1;
    *out = v;
    return 0;
}

static void vals_push(axis_vals *v, const char *text, int64_t num)
{
    if (v->n % 64 == 0) {
        v->text = xrealloc(v->text, (v->n + 64) * sizeof *v->text);
        v->num = xrealloc(v->num, (v->n + 64) * sizeof *v->num);
    }
    v->text[v->n] = xstrdup(text);
    v->num[v->n] = num;
    v->n++;
}

static void vals_free(axis_vals *v)
{
    for (size_t i = 0; i < v->n; i++)
        free(v->text[i]);
    free(v->text);
    free(v->num);
    memset(v, 0, sizeof *v);
}

/* Expands start:stop[:step | :*factor] (integers) with `suffix` appended to
 * every value; `what` names the axis in errors. */
static int expand_range(const char *label, const char *item, char **part,
                        int n_parts, const char *suffix, int64_t lo,
                        int64_t hi, axis_vals *v)
{
    int64_t start, stop, step = 1;
    int geometric = 0;
    if (parse_i64(part[0], &start) != 0 || parse_i64(part[1], &stop) != 0)
        return cli_error(EXIT_USAGE, CMD, "%s: range '%s' needs whole-number "
                         "ends (e.g. 100:1000:100 or 10:10000:*10)", label,
                         item);
    if (n_parts == 3) {
        const char *st = part[2];
        if (*st == '*') {
            geometric = 1;
            st++;
        }
        if (parse_i64(st, &step) != 0 || step < (geometric ? 2 : 1))
            return cli_error(EXIT_USAGE, CMD, "%s: range '%s' has a bad "
                             "step '%s' (give a whole number >= 1, or *F with "
                             "a whole factor F >= 2)", label, item, part[2]);
    }
    if (start > stop)
        return cli_error(EXIT_USAGE, CMD, "%s: range '%s' runs downwards "
                         "(give start <= stop, e.g. %s:%s)", label, item,
                         part[1], part[0]);
    if (geometric && start < 1)
        return cli_error(EXIT_USAGE, CMD, "%s: geometric range '%s' must "
                         "start at 1 or more", label, item);
    if (start < lo || stop > hi)
        return cli_error(EXIT_USAGE, CMD, "%s: range '%s' leaves %" PRId64
                         "..%" PRId64 " (give values in that interval)",
                         label, item, lo, hi);
    for (int64_t x = start;;) {
        if (v->n >= MAX_AXIS_VALUES)
            return cli_error(EXIT_USAGE, CMD, "%s: more than %d values (use "
                             "a larger step)", label, MAX_AXIS_VALUES);
        char text[64];
        snprintf(text, sizeof text, "%" PRId64 "%s", x, suffix);
        vals_push(v, text, x);
        if (geometric ? x > stop / step : x > stop - step)
            break;
        x = geometric ? x * step : x + step;
        if (x > stop)
            break;
    }
    return 0;
}

/* Splits item at ':' into at most 4 parts (in place); returns the count. */
static int split_colons(char *item, char **part)
{
    int n = 0;
    part[n++] = item;
    for (char *p = item; *p; p++)
        if (*p == ':') {
            *p = '\0';
            if (n == 4)
                return 5;
            part[n++] = p + 1;
        }
    return n;
}

/* A budget as written: its number, and its unit ("", "slots", "%", "MiB",
 * ...).  kind: 0 slots, 1 percent, 2 bytes; -1 if it is not a budget. */
enum { MEM_SLOTS, MEM_PERCENT, MEM_BYTES };

static int mem_kind(const char *text, char *num, size_t cap,
                    const char **unit)
{
    static const char *const byte_units[] = {"KiB", "MiB", "GiB", "TiB", "kB",
                                             "KB",  "MB",  "GB",  "B"};
    const size_t n = strlen(text);
    size_t k = 0;
    int kind = MEM_SLOTS;
    *unit = "";
    if (n > 1 && text[n - 1] == '%') {
        k = 1, kind = MEM_PERCENT, *unit = "%";
    } else if (n > 5 && strcmp(text + n - 5, "slots") == 0) {
        k = 5, *unit = "slots";
    } else {
        for (size_t u = 0; u < sizeof byte_units / sizeof *byte_units; u++) {
            const size_t m = strlen(byte_units[u]);
            if (n > m && strcmp(text + n - m, byte_units[u]) == 0) {
                k = m, kind = MEM_BYTES, *unit = byte_units[u];
                break;
            }
        }
    }
    if (n - k >= cap || n == k)
        return -1;
    memcpy(num, text, n - k);
    num[n - k] = '\0';
    int64_t i;
    double d;
    if (kind == MEM_SLOTS ? parse_i64(num, &i) != 0 || i < 0 ||
                                i > INT64_MAX / 4
                          : parse_nonneg(num, &d) != 0 ||
                                (kind == MEM_PERCENT && d > 1e6))
        return -1;
    return kind;
}

static int check_budget(const char *label, const char *text, int mode)
{
    char num[64];
    const char *unit;
    const int kind = mem_kind(text, num, sizeof num, &unit);
    if (kind < 0)
        return cli_error(EXIT_USAGE, CMD, "%s: '%s' is not a budget (give %s)",
                         label, text,
                         mode == IN_PLAN ? "slots, e.g. 200 or 200slots, or a "
                                           "share of full BPTT's, e.g. 5%"
                                         : "bytes with a unit, e.g. 64MiB, "
                                           "slots, e.g. 200slots, or a share, "
                                           "e.g. 5%");
    if (mode == IN_PLAN && kind == MEM_BYTES)
        return cli_error(EXIT_USAGE, CMD, "%s: '%s' is in bytes, which only "
                         "--mode run knows; plan mode counts slots (200, "
                         "200slots) or shares (5%%)", label, text);
    if (mode == IN_RUN && kind == MEM_SLOTS && !*unit)
        return cli_error(EXIT_USAGE, CMD, "%s: '%s' has no unit; run mode "
                         "takes bytes (64MiB, 100000B), slots (%sslots) or "
                         "shares (5%%)", label, text, text);
    return 0;
}

/* One value, list or range of an axis into v. */
static int parse_axis(const sweep *s, int k, axis_vals *v)
{
    const setting *st = &s->set[k];
    const key_def *d = &keys[k];
    char *copy = xstrdup(st->text);
    int rc = 0;
    char *save = NULL;
    size_t len = strlen(copy);
    if (len == 0 || copy[0] == ',' || copy[len - 1] == ',' ||
        strstr(copy, ",,")) {
        free(copy);
        return cli_error(EXIT_USAGE, CMD, "%s: empty value in '%s' (give "
                         "values separated by commas, e.g. 1,2,3)", st->label,
                         st->text);
    }
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        char *whole = xstrdup(item);
        char *part[5];
        const int np = strchr(item, ':') ? split_colons(item, part) : 1;
        if (np > 3) {
            rc = cli_error(EXIT_USAGE, CMD, "%s: '%s' is not a range (give "
                           "start:stop:step or start:stop:*factor)", st->label,
                           whole);
        } else if (d->kind == KIND_NAME) {
            const int ok = k == K_STRATEGY ? bptt_strategy_find(whole) != NULL
                                           : bptt_cell_find(whole) != NULL;
            if (!ok) {
                char list[256];
                if (k == K_STRATEGY)
                    bptt_strategy_names(list, sizeof list, " or ");
                else
                    bptt_cell_names(list, sizeof list, " or ");
                rc = cli_error(EXIT_USAGE, CMD, "%s: unknown %s '%s' (use %s, "
                               "or a comma list of them)",
                               st->label, d->name, whole, list);
            }
            else
                vals_push(v, whole, 0);
        } else if (d->kind == KIND_INT) {
            if (np == 1) {
                int64_t x;
                const int e = parse_i64(whole, &x);
                if (e == -1)
                    rc = cli_error(EXIT_USAGE, CMD, "%s: '%s' is not a whole "
                                   "number (give a number, a list 1,2,3 or a "
                                   "range 1:10:1)", st->label, whole);
                else if (e == -2 || x < d->lo || x > d->hi)
                    rc = cli_error(EXIT_USAGE, CMD, "%s: %s is out of range "
                                   "(give whole numbers from %" PRId64
                                   " to %" PRId64 ")", st->label, whole,
                                   d->lo, d->hi);
                else {
                    char text[32];
                    snprintf(text, sizeof text, "%" PRId64, x);
                    vals_push(v, text, x);
                }
            } else {
                rc = expand_range(st->label, whole, part, np, "", d->lo, d->hi,
                                  v);
            }
        } else { /* budgets keep their text */
            if (np == 1) {
                rc = check_budget(st->label, whole, s->mode);
                if (rc == 0)
                    vals_push(v, whole, 0);
            } else {
                char n0[64], n1[64];
                const char *u0, *u1;
                const int k0 = mem_kind(part[0], n0, sizeof n0, &u0);
                const int k1 = mem_kind(part[1], n1, sizeof n1, &u1);
                int64_t dummy;
                if (k0 < 0 || k1 < 0 || strcmp(u0, u1) != 0 ||
                    parse_i64(n0, &dummy) != 0 || parse_i64(n1, &dummy) != 0)
                    rc = cli_error(EXIT_USAGE, CMD, "%s: range '%s' needs "
                                   "whole-number ends with one unit (e.g. "
                                   "5%%:50%%:5, 100:1000:100 or "
                                   "1MiB:64MiB:*2)", st->label, whole);
                else {
                    char *p2[3] = {n0, n1, np == 3 ? part[2] : NULL};
                    const size_t first = v->n;
                    rc = expand_range(st->label, whole, p2, np, u0, 0,
                                      INT64_MAX / 4, v);
                    for (size_t i = first; i < v->n && rc == 0; i++)
                        rc = check_budget(st->label, v->text[i], s->mode);
                }
            }
        }
        free(whole);
    }
    free(copy);
    return rc;
}

static int parse_real(const char *label, const char *text, double lo,
                      double hi)
{
    char *end;
    errno = 0;
    const double v = strtod(text, &end);
    if (end == text || *end || errno == ERANGE || !(v >= lo) || !(v <= hi) ||
        !((*text >= '0' && *text <= '9') || *text == '.'))
        return cli_error(EXIT_USAGE, CMD, "%s: '%s' is not a number in [%g, "
                         "%g]", label, text, lo, hi);
    return 0;
}

/* ---- the grid ----------------------------------------------------------- */

/* Checks every key, expands the axes and describes the grid. */
static int build_grid(sweep *s)
{
    int rc = 0;
    const setting *set = s->set;
    s->mode = IN_PLAN;
    if (set[K_MODE].text) {
        if (strcmp(set[K_MODE].text, "run") == 0)
            s->mode = IN_RUN;
        else if (strcmp(set[K_MODE].text, "plan") != 0)
            return cli_error(EXIT_USAGE, CMD, "%s: unknown mode '%s' (use plan "
                             "or run)", set[K_MODE].label, set[K_MODE].text);
    }
    if (set[K_INFEASIBLE].text) {
        if (strcmp(set[K_INFEASIBLE].text, "record") == 0)
            s->record_infeasible = 1;
        else if (strcmp(set[K_INFEASIBLE].text, "error") != 0)
            return cli_error(EXIT_USAGE, CMD, "%s: unknown policy '%s' (use "
                             "error or record)", set[K_INFEASIBLE].label,
                             set[K_INFEASIBLE].text);
    }
    if (set[K_ITERS].text) {
        int64_t x;
        if (parse_i64(set[K_ITERS].text, &x) != 0 || x < 1 || x > 1000000)
            return cli_error(EXIT_USAGE, CMD, "%s: '%s' is not a whole number "
                             "from 1 to 1000000", set[K_ITERS].label,
                             set[K_ITERS].text);
    }
    if (set[K_OPTIMIZER].text && strcmp(set[K_OPTIMIZER].text, "sgd") != 0 &&
        strcmp(set[K_OPTIMIZER].text, "adam") != 0)
        return cli_error(EXIT_USAGE, CMD, "%s: unknown optimizer '%s' (use sgd "
                         "or adam)", set[K_OPTIMIZER].label,
                         set[K_OPTIMIZER].text);
    if (set[K_LR].text &&
        (rc = parse_real(set[K_LR].label, set[K_LR].text, 1e-12, 1e38)) != 0)
        return rc;
    if (set[K_TASK].text) {
        const char *t = set[K_TASK].text;
        if (strncmp(t, "text:", 5) == 0) {
            struct stat sb;
            if (access(t + 5, R_OK) != 0 || stat(t + 5, &sb) != 0)
                return cli_error(EXIT_USAGE, CMD, "%s: cannot read the text "
                                 "file '%s' (%s)", set[K_TASK].label, t + 5,
                                 strerror(errno));
            if (S_ISDIR(sb.st_mode) ||
                (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode)))
                return cli_error(EXIT_USAGE, CMD, "%s: '%s' is not a text "
                                 "file (give a regular file)",
                                 set[K_TASK].label, t + 5);
            if (S_ISREG(sb.st_mode) && sb.st_size == 0)
                return cli_error(EXIT_USAGE, CMD, "%s: the text file '%s' is "
                                 "empty", set[K_TASK].label, t + 5);
        } else if (strcmp(t, "copy") != 0 && strcmp(t, "adding") != 0) {
            return cli_error(EXIT_USAGE, CMD, "%s: unknown task '%s' (use "
                             "copy, adding or text:FILE)", set[K_TASK].label,
                             t);
        }
    }
    if (set[K_FORMAT].text) {
        const char *f = set[K_FORMAT].text;
        if (strcmp(f, "csv") == 0)
            s->format = FORMAT_CSV;
        else if (strcmp(f, "jsonl") == 0 || strcmp(f, "json") == 0)
            s->format = FORMAT_JSON;
        else
            return cli_error(EXIT_USAGE, CMD, "%s: unknown format '%s' (use "
                             "jsonl or csv)", set[K_FORMAT].label, f);
    } else {
        const char *o = set[K_OUT].text ? set[K_OUT].text : "";
        const size_t n = strlen(o);
        s->format = n > 4 && strcmp(o + n - 4, ".csv") == 0 ? FORMAT_CSV
                                                            : FORMAT_JSON;
    }
    if (!set[K_LENGTH].text)
        return cli_error(EXIT_USAGE, CMD, "--length is required (e.g. --length "
                         "100:1000:100)");
    if (!set[K_STRATEGY].text)
        set_key(s, K_STRATEGY, "msm", "--strategy");
    if (!set[K_MEMORY].text)
        set_key(s, K_MEMORY, "100%", "--memory");
    if (s->mode == IN_PLAN && !set[K_ALPHA].text)
        set_key(s, K_ALPHA, "1", "--alpha");

    /* the axes */
    s->n_points = 1;
    for (int k = 0; k < N_AXES; k++) {
        if (!set[k].text)
            continue;
        if ((rc = parse_axis(s, k, &s->ax[k])) != 0)
            return rc;
        const int applies = (keys[k].modes & s->mode) != 0;
        if (s->ax[k].n > 1 && !applies)
            return cli_error(EXIT_USAGE, CMD, "%s: %s does not apply in %s "
                             "mode, so it takes one value, not %zu (drop it, "
                             "or use --mode %s)", set[k].label, keys[k].name,
                             mode_name(s->mode), s->ax[k].n,
                             s->mode == IN_PLAN ? "run" : "plan");
        if (k == K_THREADS && s->mode == IN_PLAN && s->ax[k].n > 1)
            return cli_error(EXIT_USAGE, CMD, "%s: plan mode takes one thread "
                             "count (threads do not change a plan; sweep them "
                             "with --mode run)", set[k].label);
        s->applies[k] = applies;
        if (applies) {
            if (s->n_points > (size_t)MAX_POINTS / s->ax[k].n)
                return cli_error(EXIT_USAGE, CMD, "the grid has more than %d "
                                 "points (split it into several sweeps)",
                                 MAX_POINTS);
            s->n_points *= s->ax[k].n;
        }
    }

    /* the grid's identity: what the records depend on */
    sbuf g = {0};
    sb_printf(&g, "mode=%s", mode_name(s->mode));
    for (int k = 0; k < N_AXES; k++) {
        if (!(keys[k].modes & s->mode) ||
            (k == K_THREADS && s->mode == IN_PLAN))
            continue;
        sb_printf(&g, "; %s=", keys[k].name);
        if (!s->ax[k].n)
            sb_puts(&g, "-");
        for (size_t i = 0; i < s->ax[k].n; i++)
            sb_printf(&g, "%s%s", i ? "," : "", s->ax[k].text[i]);
    }
    if (s->mode == IN_RUN)
        for (int k = K_ITERS; k <= K_LR; k++)
            sb_printf(&g, "; %s=%s", keys[k].name,
                      set[k].text ? set[k].text : "-");
    s->grid = g.p;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *p = s->grid; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    snprintf(s->grid_hash, sizeof s->grid_hash, "%016" PRIx64, h);
    return 0;
}

/* The value index of every axis at point K (row-major, the last fastest);
 * axes without values get 0. */
static void decode(const sweep *s, size_t point, size_t *idx)
{
    for (int k = N_AXES - 1; k >= 0; k--) {
        idx[k] = 0;
        if (s->applies[k] && s->ax[k].n) {
            idx[k] = point % s->ax[k].n;
            point /= s->ax[k].n;
        }
    }
}

static const char *value(const sweep *s, const size_t *idx, int k)
{
    return s->ax[k].n ? s->ax[k].text[idx[k]] : NULL;
}

/* "point 3 of 8 (strategy=msm length=100 memory=5%)" */
static char *point_desc(const sweep *s, size_t point)
{
    size_t idx[N_AXES];
    decode(s, point, idx);
    sbuf b = {0};
    sb_printf(&b, "point %zu of %zu (", point, s->n_points);
    int first = 1;
    for (int k = 0; k < N_AXES; k++)
        if (s->applies[k] && s->ax[k].n) {
            sb_printf(&b, "%s%s=%s", first ? "" : " ", keys[k].name,
                      value(s, idx, k));
            first = 0;
        }
    sb_puts(&b, ")");
    return b.p;
}

/* The header line: metadata (of this machine, now) and the grid. */
static char *header_line(const sweep *s)
{
    bptt_meta m;
    bptt_meta_collect(&m);
    /* reproducible dates (https://reproducible-builds.org/specs/) */
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    int64_t secs;
    if (epoch && parse_i64(epoch, &secs) == 0 && secs >= 0) {
        const time_t t = (time_t)secs;
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(m.date, sizeof m.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    char meta[BPTT_META_JSON_MAX];
    bptt_meta_json(&m, meta, sizeof meta);
    sbuf b = {0};
    sb_printf(&b, "{\"meta\":{%s,\"sweep\":{\"mode\":\"%s\",\"points\":%zu,"
              "\"axes\":\"", meta, mode_name(s->mode), s->n_points);
    int first = 1;
    for (int k = 0; k < N_AXES; k++)
        if (s->applies[k]) {
            sb_printf(&b, "%s%s", first ? "" : ",", keys[k].name);
            first = 0;
        }
    sb_puts(&b, "\",\"grid\":");
    sb_json_str(&b, s->grid);
    sb_printf(&b, ",\"grid_hash\":\"%s\"}}}\n", s->grid_hash);
    return b.p;
}

/* 1 if the header line (csv's "# " allowed) is of this grid, 0 if of
 * another sweep (*other_hash gets its hash), -1 if not a sweep header. */
static int header_matches(const sweep *s, const char *line,
                          char other_hash[17])
{
    if (strncmp(line, "# ", 2) == 0)
        line += 2;
    if (strncmp(line, "{\"meta\":{", 9) != 0)
        return -1;
    const char *nl = strchr(line, '\n');
    const size_t len = nl ? (size_t)(nl - line) : strlen(line);
    const char *h = strstr(line, "\"grid_hash\":\"");
    if (!h || h > line + len)
        return -1;
    snprintf(other_hash, 17, "%.16s", h + 13);
    sbuf want = {0};
    sb_puts(&want, "\"grid\":");
    sb_json_str(&want, s->grid);
    sb_puts(&want, ",");
    const char *at = strstr(line, want.p);
    const int ok = at && at + want.n <= line + len;
    free(want.p);
    return ok;
}

static int json_string(const char **pp, sbuf *b);

/* The value of "key":"..." in a header line, unescaped (empty if absent or
 * not a whole JSON string; cut to cap). */
static void header_string(const char *line, const char *key, char *out,
                          size_t cap)
{
    sbuf k = {0}, v = {0};
    sb_printf(&k, "\"%s\":\"", key);
    const char *p = strstr(line, k.p);
    out[0] = '\0';
    if (p) {
        p += k.n - 1; /* at the value's opening quote */
        if (json_string(&p, &v) == 0)
            snprintf(out, cap, "%s", v.p);
    }
    free(k.p);
    free(v.p);
}

/* Whether the header line was written by this build (version and git
 * revision): records of two builds never share a file.  *was gets the
 * header's "version (git revision)". */
static int same_build(const char *line, char *was, size_t cap)
{
    bptt_meta m;
    bptt_meta_collect(&m);
    char v[64], g[128];
    header_string(line, "version", v, sizeof v);
    header_string(line, "git_revision", g, sizeof g);
    snprintf(was, cap, "%s (git %s)", v, g);
    return strcmp(v, m.version) == 0 && strcmp(g, m.git_revision) == 0;
}

/* ---- plan mode: records computed here ----------------------------------- */

/* Receives each finished point's record line; nonzero stops the sweep. */
typedef int (*sink_fn)(void *ctx, size_t point, const char *line, size_t len);

static volatile sig_atomic_t got_signal;

/* A pipe the handler writes a byte to, so that run mode's poll for a
 * child's output wakes up however late the signal comes (even between its
 * check of got_signal and the poll), on whichever thread it lands. */
static int wake_fd[2] = {-1, -1};

static void on_signal(int sig)
{
    if (got_signal) { /* a second one: stop at once (a run child dies with
                       * this process: see spawn) */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    got_signal = sig;
    if (wake_fd[1] >= 0) {
        const int e = errno;
        if (write(wake_fd[1], "", 1) < 0) {
            /* the pipe is full: a wake-up is waiting already */
        }
        errno = e;
    }
}

/* From now on SIGINT and SIGTERM set got_signal (and wake spawn's poll). */
static void catch_signals(void)
{
    int p[2];
    if (wake_fd[0] < 0 && pipe(p) == 0) {
        for (int i = 0; i < 2; i++) {
            fcntl(p[i], F_SETFD, FD_CLOEXEC);
            fcntl(p[i], F_SETFL, O_NONBLOCK);
        }
        wake_fd[0] = p[0];
        wake_fd[1] = p[1];
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

typedef struct {
    const bptt_strategy *strategy;
    size_t length;
    int64_t alpha, budget, full, min;
    const char *spec;
} plan_point;

static int plan_point_at(const sweep *s, size_t point, plan_point *p)
{
    size_t idx[N_AXES];
    decode(s, point, idx);
    p->strategy = bptt_strategy_find(value(s, idx, K_STRATEGY));
    p->length = (size_t)s->ax[K_LENGTH].num[idx[K_LENGTH]];
    p->alpha = s->ax[K_ALPHA].num[idx[K_ALPHA]];
    p->spec = value(s, idx, K_MEMORY);
    p->full = bptt_full_peak(p->length, 1, p->alpha);
    p->min = bptt_strategy_min_budget(p->strategy, p->length, 1, p->alpha,
                                      NULL);
    return cli_parse_budget(CMD, p->spec, p->full, &p->budget);
}

static int infeasible_error(const sweep *s, size_t point, const char *what)
{
    char *d = point_desc(s, point);
    const int rc = cli_error(EXIT_INFEASIBLE, CMD, "%s: %s; drop this budget "
                             "from the grid, or give --infeasible record to "
                             "keep such points as records", d, what);
    free(d);
    return rc;
}

/* The forward ops of a feasible point's plan where they are known without
 * a table (full, chen, hsm; INT64_MAX when too many to count), else -1. */
static int64_t known_cost(const plan_point *p)
{
    const char *name = p->strategy->name;
    const int64_t t = (int64_t)p->length;
    if (strcmp(name, "full") == 0)
        return t;
    if (strcmp(name, "chen") == 0)
        return bptt_chen_cost(p->length, bptt_chen_default_segment(p->length));
    if (strcmp(name, "hsm") != 0)
        return -1;
    if (p->budget <= 1) /* C(t, 1) = t (t + 1) / 2, without the slow loop */
        return (int64_t)((__int128)t * (t + 1) / 2);
    const int64_t c = bptt_hsm_closed_cost(t, p->budget);
    return c < 0 ? INT64_MAX : c;
}

/* Every plan point's budget against its smallest feasible one. */
static int plan_preflight(const sweep *s)
{
    for (size_t k = 0; k < s->n_points; k++) {
        plan_point p;
        int rc = plan_point_at(s, k, &p);
        if (rc)
            return rc;
        if (p.budget < p.min && !s->record_infeasible) {
            char what[160];
            snprintf(what, sizeof what, "budget %" PRId64 " slots is below "
                     "the smallest feasible one, %" PRId64 " slots",
                     p.budget, p.min);
            return infeasible_error(s, k, what);
        }
        /* plans whose cost is known without a table must fit in memory
         * (the others are checked when their table is built) */
        const int64_t cost = p.budget >= p.min ? known_cost(&p) : -1;
        if (cost >= 0 && (rc = cli_plan_cost_fits(CMD, p.strategy->name,
                                                  p.length, p.budget, cost)))
            return rc;
    }
    return 0;
}

static char *plan_record(size_t point, const plan_point *p,
                         const bptt_plan_stats *st, int64_t min_memory)
{
    const cli_plan_record r = {p->strategy->name, (int64_t)p->length,
                               p->alpha,          p->budget,
                               p->full,           min_memory,
                               st};
    char fields[1024];
    cli_plan_record_json(&r, fields, sizeof fields);
    sbuf b = {0};
    sb_printf(&b, "{\"point\":%zu,\"memory_spec\":", point);
    sb_json_str(&b, p->spec);
    sb_printf(&b, ",%s}\n", fields);
    return b.p;
}

/* Plans the points todo[0..n) (ascending).  Consecutive points of one
 * (strategy, length, alpha) share one table: memory is the last plan axis.
 * A record never depends on the table's largest budget. */
static int compute_plan(const sweep *s, const size_t *todo, size_t n,
                        sink_fn sink, void *ctx)
{
    int64_t threads = s->ax[K_THREADS].n ? s->ax[K_THREADS].num[0] : 0;
    size_t i = 0;
    while (i < n) {
        if (got_signal)
            return INTERRUPTED;
        plan_point first;
        int rc = plan_point_at(s, todo[i], &first);
        if (rc)
            return rc;
        size_t j = i + 1;
        int64_t top = first.budget >= first.min ? first.budget : -1;
        for (; j < n; j++) {
            plan_point q;
            if ((rc = plan_point_at(s, todo[j], &q)) != 0)
                return rc;
            if (q.strategy != first.strategy || q.length != first.length ||
                q.alpha != first.alpha)
                break;
            if (q.budget >= q.min && q.budget > top)
                top = q.budget;
        }
        bptt_table *tb = NULL;
        if (top >= 0) {
            const bptt_table_options opts = {.threads = (int)threads};
            rc = bptt_table_alloc(&tb, first.strategy, first.length, 1,
                                  first.alpha, top, &opts);
            if (rc != BPTT_OK) {
                char budget[64];
                snprintf(budget, sizeof budget, "budgets up to %" PRId64
                         " slots", top);
                return cli_table_error(CMD, rc, first.strategy, first.length,
                                       1, first.alpha, top, budget);
            }
        }
        for (; i < j && rc == 0; i++) {
            plan_point p;
            plan_point_at(s, todo[i], &p);
            char *line;
            if (p.budget < p.min || !tb) {
                line = plan_record(todo[i], &p, NULL, p.min);
            } else {
                bptt_plan *plan;
                bptt_plan_stats st;
                if ((rc = cli_plan_at(CMD, tb, p.budget, &plan, &st,
                                      NULL)) != 0)
                    break;
                bptt_plan_free(plan);
                line = plan_record(todo[i], &p, &st, p.min);
            }
            rc = sink(ctx, todo[i], line, strlen(line));
            free(line);
            if (rc == 0 && got_signal)
                rc = INTERRUPTED;
        }
        bptt_table_free(tb);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- run mode: one child `bptt run` per point --------------------------- */

/* Runs argv (the bptt binary itself) with stdout and stderr captured.
 *
 * Promises: the child never outlives this process, however it ends.  On
 * SIGINT or SIGTERM (got_signal) the child gets SIGTERM and is waited for,
 * even when the signal comes between the fork and the child's exec (the
 * forking thread blocks it across the fork, and the child unblocks it with
 * the default action, not this process's handler).  On Linux the child
 * also gets SIGKILL when this process dies, SIGKILL and a second signal
 * included (PR_SET_PDEATHSIG; a child whose parent died before that was
 * set exits at once).  The kernel sends it when the thread that forked
 * exits, not the process: spawn runs on the main thread (compute_run is
 * called from the command's code, never from a worker thread), which ends
 * only when the process does.
 * Elsewhere a child may outlive a sweep killed by SIGKILL. */
static int spawn(char *const *argv, sbuf *out, sbuf *err, int *status)
{
    int po[2], pe[2];
    if (pipe(po) != 0)
        return errno;
    if (pipe(pe) != 0) {
        const int e = errno;
        close(po[0]);
        close(po[1]);
        return e;
    }
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, &old);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
#ifdef __linux__
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
            _exit(127);
#endif
        if (getppid() != parent) /* the sweep died before the line above */
            _exit(127);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL); /* a pending one ends it */
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    const int fork_err = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return fork_err;
    }
    close(po[1]);
    close(pe[1]);
    struct pollfd fds[3] = {
        {po[0], POLLIN, 0}, {pe[0], POLLIN, 0}, {wake_fd[0], POLLIN, 0}};
    sbuf *dst[2] = {out, err};
    int open_fds = 2, killed = 0;
    while (open_fds > 0) {
        if (got_signal && !killed) {
            kill(pid, SIGTERM); /* abandon the point */
            killed = 1;
        }
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[2].revents) { /* a signal came (seen above): empty it */
            char buf[64];
            while (read(fds[2].fd, buf, sizeof buf) > 0)
                ;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !fds[i].revents)
                continue;
            char buf[65536];
            const ssize_t r = read(fds[i].fd, buf, sizeof buf);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            } else {
                sb_add(dst[i], buf, (size_t)r);
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* The child's error line, without its newline. */
static const char *last_line(sbuf *err)
{
    if (!err->p)
        return "(no message)";
    while (err->n > 0 && err->p[err->n - 1] == '\n')
        err->p[--err->n] = '\0';
    const char *nl = strrchr(err->p, '\n');
    return nl ? nl + 1 : err->p;
}

static int compute_run(const sweep *s, const size_t *todo, size_t n,
                       sink_fn sink, void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        if (got_signal)
            return INTERRUPTED;
        size_t idx[N_AXES];
        decode(s, todo[i], idx);
        char *argv[2 * (N_AXES + 8) + 4];
        int c = 0;
        argv[c++] = "bptt";
        argv[c++] = "run";
        char opt[N_AXES + 8][24];
        for (int k = 0; k < N_AXES; k++)
            if (s->applies[k] && s->ax[k].n) {
                snprintf(opt[k], sizeof opt[k], "--%s", keys[k].name);
                argv[c++] = opt[k];
                argv[c++] = (char *)value(s, idx, k);
            }
        for (int k = K_ITERS; k <= K_LR; k++)
            if (s->set[k].text) {
                snprintf(opt[N_AXES + k - K_ITERS], sizeof opt[0], "--%s",
                         keys[k].name);
                argv[c++] = opt[N_AXES + k - K_ITERS];
                argv[c++] = s->set[k].text;
            }
        argv[c++] = "--format";
        argv[c++] = "json";
        argv[c] = NULL;

        sbuf out = {0}, err = {0};
        int status = 0;
        const int e = spawn(argv, &out, &err, &status);
        int rc = 0;
        char *line = NULL;
        if (e) {
            rc = cli_error(1, CMD, "cannot run bptt run: %s", strerror(e));
        } else if (got_signal) {
            rc = INTERRUPTED;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            if (out.n < 3 || out.p[0] != '{' || out.p[out.n - 1] != '\n' ||
                out.p[out.n - 2] != '}' || memchr(out.p, '\n', out.n - 1)) {
                char *d = point_desc(s, todo[i]);
                rc = cli_error(1, CMD, "%s: bptt run printed no JSON object",
                               d);
                free(d);
            } else {
                sbuf b = {0};
                sb_printf(&b, "{\"point\":%zu,\"memory_spec\":", todo[i]);
                sb_json_str(&b, value(s, idx, K_MEMORY));
                sb_puts(&b, ",");
                sb_add(&b, out.p + 1, out.n - 1);
                line = b.p;
            }
        } else if (WIFEXITED(status) &&
                   WEXITSTATUS(status) == EXIT_INFEASIBLE &&
                   s->record_infeasible) {
            sbuf b = {0};
            sb_printf(&b, "{\"point\":%zu,\"memory_spec\":", todo[i]);
            sb_json_str(&b, value(s, idx, K_MEMORY));
            for (int k = 0; k < N_AXES; k++)
                if (s->applies[k] && s->ax[k].n && k != K_MEMORY) {
                    sb_printf(&b, ",\"%s\":", keys[k].name);
                    if (keys[k].kind == KIND_INT)
                        sb_puts(&b, value(s, idx, k));
                    else
                        sb_json_str(&b, value(s, idx, k));
                }
            sb_puts(&b, ",\"error\":");
            sb_json_str(&b, last_line(&err));
            sb_puts(&b, "}\n");
            line = b.p;
        } else {
            char *d = point_desc(s, todo[i]);
            const int code = !WIFEXITED(status) ? 1
                             : WEXITSTATUS(status) == EXIT_USAGE ||
                                     WEXITSTATUS(status) == EXIT_INFEASIBLE
                                 ? WEXITSTATUS(status)
                                 : 1;
            if (WIFSIGNALED(status))
                rc = cli_error(code, CMD, "%s: bptt run was killed by signal "
                               "%d", d, WTERMSIG(status));
            else if (code == EXIT_INFEASIBLE)
                rc = cli_error(code, CMD, "%s: %s; drop this budget from "
                               "the grid, or rerun with --infeasible record "
                               "to keep such points as records", d,
                               last_line(&err));
            else
                rc = cli_error(code, CMD, "%s: %s", d, last_line(&err));
            free(d);
        }
        free(out.p);
        free(err.p);
        if (line) {
            rc = sink(ctx, todo[i], line, strlen(line));
            free(line);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static int compute(const sweep *s, const size_t *todo, size_t n, sink_fn sink,
                   void *ctx)
{
    return s->mode == IN_PLAN ? compute_plan(s, todo, n, sink, ctx)
                              : compute_run(s, todo, n, sink, ctx);
}

/* ---- records: reading, sorting, csv ------------------------------------- */

/* The point index of a record line ({"point":K,...), or -1. */
static int64_t record_point(const char *line)
{
    if (strncmp(line, "{\"point\":", 9) != 0)
        return -1;
    const char *p = line + 9;
    int64_t k = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (k > INT64_MAX / 10 - 10)
            return -1;
        k = 10 * k + (*p - '0');
    }
    return *p == ',' || *p == '}' ? k : -1;
}

typedef struct {
    char *key, *val; /* val: unescaped string, raw token, or NULL (null) */
} member;

static void utf8_put(sbuf *b, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80)
        u[0] = (char)cp, n = 1;
    else if (cp < 0x800)
        u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F)),
        n = 2;
    else if (cp < 0x10000)
        u[0] = (char)(0xE0 | cp >> 12), u[1] = (char)(0x80 | (cp >> 6 & 0x3F)),
        u[2] = (char)(0x80 | (cp & 0x3F)), n = 3;
    else
        u[0] = (char)(0xF0 | cp >> 18), u[1] = (char)(0x80 | (cp >> 12 & 0x3F)),
        u[2] = (char)(0x80 | (cp >> 6 & 0x3F)),
        u[3] = (char)(0x80 | (cp & 0x3F)), n = 4;
    sb_add(b, u, n);
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        const char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

/* A JSON string at *pp (at the quote) into b; advances *pp past it. */
static int json_string(const char **pp, sbuf *b)
{
    const char *p = *pp + 1;
    sb_puts(b, "");
    while (*p && *p != '"') {
        if (*p != '\\') {
            sb_add(b, p++, 1);
            continue;
        }
        p++;
        unsigned cp, lo;
        switch (*p) {
        case 'n': sb_puts(b, "\n"); break;
        case 't': sb_puts(b, "\t"); break;
        case 'r': sb_puts(b, "\r"); break;
        case 'b': sb_puts(b, "\b"); break;
        case 'f': sb_puts(b, "\f"); break;
        case 'u':
            if (hex4(p + 1, &cp) != 0)
                return -1;
            p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && p[1] == '\\' && p[2] == 'u' &&
                hex4(p + 3, &lo) == 0 && lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD;
            }
            if (cp == 0) /* the C strings values become hold no NUL */
                cp = 0xFFFD;
            utf8_put(b, cp);
            break;
        case '\0': return -1;
        default: sb_add(b, p, 1); break;
        }
        p++;
    }
    if (*p != '"')
        return -1;
    *pp = p + 1;
    return 0;
}

/* A flat JSON object (string, number, true, false, null values); 0 or -1. */
static int parse_object(const char *line, member **out, size_t *n_out)
{
    member *m = NULL;
    size_t n = 0;
    const char *p = line;
    if (*p++ != '{')
        return -1;
    while (*p && *p != '}') {
        if (n % 32 == 0)
            m = xrealloc(m, (n + 32) * sizeof *m);
        sbuf key = {0}, val = {0};
        if (*p != '"' || json_string(&p, &key) != 0 || *p++ != ':')
            goto bad_member;
        m[n].key = key.p;
        if (*p == '"') {
            if (json_string(&p, &val) != 0)
                goto bad_member;
            m[n].val = val.p;
        } else {
            const char *e = p;
            while (*e && *e != ',' && *e != '}')
                e++;
            if (e == p || *p == '{' || *p == '[')
                goto bad_member;
            if ((size_t)(e - p) == 4 && strncmp(p, "null", 4) == 0) {
                m[n].val = NULL;
            } else {
                sb_add(&val, p, (size_t)(e - p));
                m[n].val = val.p;
            }
            p = e;
        }
        n++;
        if (*p == ',')
            p++;
        continue;
    bad_member:
        free(key.p);
        free(val.p);
        for (size_t i = 0; i < n; i++)
            free(m[i].key), free(m[i].val);
        free(m);
        return -1;
    }
    if (*p != '}') {
        for (size_t i = 0; i < n; i++)
            free(m[i].key), free(m[i].val);
        free(m);
        return -1;
    }
    *out = m;
    *n_out = n;
    return 0;
}

static void csv_cell(sbuf *b, const char *v)
{
    if (!v)
        return;
    if (!strpbrk(v, ",\"\r\n") && v[0] != ' ' && v[0] != '#') {
        sb_puts(b, v);
        return;
    }
    sb_puts(b, "\"");
    for (; *v; v++) {
        if (*v == '"')
            sb_puts(b, "\"");
        sb_add(b, v, 1);
    }
    sb_puts(b, "\"");
}

/* The records (all n present) as csv rows after a header row: the columns
 * are the keys of the record with the most members, then any others in
 * the order they first appear. */
static int records_csv(const sweep *s, char **rec, sbuf *b)
{
    const size_t n = s->n_points;
    member **m = xrealloc(NULL, n * sizeof *m);
    size_t *nm = xrealloc(NULL, n * sizeof *nm);
    for (size_t k = 0; k < n; k++) {
        if (parse_object(rec[k], &m[k], &nm[k]) != 0) {
            for (size_t j = 0; j < k; j++) {
                for (size_t i = 0; i < nm[j]; i++)
                    free(m[j][i].key), free(m[j][i].val);
                free(m[j]);
            }
            free(m);
            free(nm);
            return cli_error(1, CMD, "the record of point %zu is not a flat "
                             "JSON object; write --format jsonl instead", k);
        }
    }
    size_t widest = 0;
    for (size_t k = 1; k < n; k++)
        if (nm[k] > nm[widest])
            widest = k;
    const char **col = NULL;
    size_t ncol = 0;
    for (size_t pass = 0; pass < 2; pass++)
        for (size_t k = pass ? 0 : widest; k < (pass ? n : widest + 1); k++)
            for (size_t i = 0; i < nm[k]; i++) {
                size_t c = 0;
                while (c < ncol && strcmp(col[c], m[k][i].key) != 0)
                    c++;
                if (c == ncol) {
                    col = xrealloc(col, (ncol + 1) * sizeof *col);
                    col[ncol++] = m[k][i].key;
                }
            }
    for (size_t c = 0; c < ncol; c++) {
        if (c)
            sb_puts(b, ",");
        csv_cell(b, col[c]);
    }
    sb_puts(b, "\n");
    for (size_t k = 0; k < n; k++) {
        size_t hint = 0;
        for (size_t c = 0; c < ncol; c++) {
            if (c)
                sb_puts(b, ",");
            size_t i = hint < nm[k] && strcmp(m[k][hint].key, col[c]) == 0
                           ? hint
                           : 0;
            while (i < nm[k] && strcmp(m[k][i].key, col[c]) != 0)
                i++;
            if (i < nm[k]) {
                csv_cell(b, m[k][i].val);
                hint = i + 1;
            }
        }
        sb_puts(b, "\n");
    }
    for (size_t k = 0; k < n; k++) {
        for (size_t i = 0; i < nm[k]; i++)
            free(m[k][i].key), free(m[k][i].val);
        free(m[k]);
    }
    free(m);
    free(nm);
    free(col);
    return 0;
}

/* FILE from the header and every record, in grid order. */
static int write_result(const sweep *s, const char *header, char **rec)
{
    sbuf b = {0};
    int rc = 0;
    if (s->format == FORMAT_CSV) {
        sb_puts(&b, "# ");
        sb_puts(&b, header);
        rc = records_csv(s, rec, &b);
    } else {
        sb_puts(&b, header);
        for (size_t k = 0; k < s->n_points; k++)
            sb_puts(&b, rec[k]);
    }
    if (rc == 0)
        rc = write_atomic(s->out, b.p, b.n);
    free(b.p);
    return rc;
}

/* Whether FILE is done: 0 to go on, or the exit code (0 included) with
 * *stop set. */
static int check_done(const sweep *s, int *stop)
{
    *stop = 0;
    if (s->force || access(s->out, F_OK) != 0)
        return 0;
    *stop = 1;
    FILE *f = fopen(s->out, "r");
    char *line = NULL;
    size_t cap = 0;
    const int got = f && getline(&line, &cap, f) > 0;
    if (f)
        fclose(f);
    char other[17] = "";
    const int m = got ? header_matches(s, line, other) : -1;
    free(line);
    if (m == 1) {
        /* a sweep killed between its rename and its unlink leaves this */
        char *partial = cat2(s->out, ".partial");
        size_t len;
        char *text = read_file(partial, &len);
        if (text && header_matches(s, text, other) == 1)
            unlink(partial);
        free(text);
        free(partial);
        fprintf(stderr, "bptt sweep: %s is complete (%zu points of this "
                "grid); nothing to do (--force recomputes it)\n", s->out,
                s->n_points);
        return 0;
    }
    if (m == 0)
        return cli_error(EXIT_USAGE, CMD, "%s holds another sweep (grid %s, "
                         "this one is %s); give another --out, or --force to "
                         "replace it", s->out, other, s->grid_hash);
    return cli_error(EXIT_USAGE, CMD, "%s exists and is not a bptt sweep "
                     "file; give another --out, or --force to replace it",
                     s->out);
}

/* ---- progress ----------------------------------------------------------- */

typedef struct {
    int on;
    double t0, shown; /* start, last update */
    size_t total, before, now;
} progress;

static void clock_text(char *buf, size_t cap, double secs)
{
    const long t = (long)(secs + 0.5);
    if (t >= 3600)
        snprintf(buf, cap, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, cap, "%ld:%02ld", t / 60, t % 60);
}

/* At most five updates a second, and the last point's. */
static void progress_show(progress *p)
{
    const double now = cli_seconds();
    if (!p->on || (now - p->shown < 0.2 && p->before + p->now < p->total))
        return;
    p->shown = now;
    const double el = now - p->t0;
    char e[32], r[32] = "?";
    const size_t left = p->total - p->before - p->now;
    if (p->now > 0)
        clock_text(r, sizeof r, el / (double)p->now * (double)left);
    clock_text(e, sizeof e, el);
    fprintf(stderr, "\rbptt sweep: %zu/%zu points, %s elapsed, %s left\033[K",
            p->before + p->now, p->total, e, r);
}

/* ---- the direct sweep --------------------------------------------------- */

typedef struct {
    int fd;
    char **rec;
    progress prog;
    long die_after; /* test hook: -1 off */
    int die_halfway;
    long written;
} direct;

static int sink_partial(void *ctx, size_t point, const char *line, size_t len)
{
    direct *d = ctx;
    if (d->die_after >= 0 && d->written == d->die_after) {
        if (d->die_halfway)
            write_all(d->fd, line, len / 2);
        raise(SIGKILL);
    }
    int e = write_all(d->fd, line, len);
    if (!e && fsync(d->fd) != 0)
        e = errno;
    if (e)
        return cli_error(1, CMD, "cannot append to the partial file: %s",
                         strerror(e));
    d->rec[point] = xstrdup(line);
    d->written++;
    d->prog.now++;
    progress_show(&d->prog);
    return 0;
}

/* Opens FILE.partial (creating it with a header) and locks it; reads the
 * records there into d->rec, dropping a trailing incomplete line.  *header
 * gets the header line. */
static int open_partial(const sweep *s, const char *path, direct *d,
                        char **header)
{
    if (s->force)
        unlink(path);
    for (int attempt = 0; attempt < 2; attempt++) {
        d->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
        if (d->fd < 0 && errno == ENOENT) {
            char *h = header_line(s);
            int rc = write_atomic(path, h, strlen(h));
            free(h);
            if (rc)
                return rc;
            continue;
        }
        if (d->fd < 0)
            return cli_error(1, CMD, "cannot open %s: %s", path,
                             strerror(errno));
        struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fcntl(d->fd, F_SETLK, &lk) != 0) {
            struct flock who = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
            fcntl(d->fd, F_GETLK, &who);
            return cli_error(1, CMD, "another bptt sweep (pid %ld) is writing "
                             "%s; wait for it, or stop it first",
                             (long)who.l_pid, path);
        }
        size_t len;
        char *text = read_file_fd(d->fd, &len);
        if (!text)
            return cli_error(1, CMD, "cannot read %s: %s", path,
                             strerror(errno));
        char *nl = memchr(text, '\n', len);
        if (!nl) { /* not even a header: start it again */
            free(text);
            close(d->fd);
            unlink(path);
            continue;
        }
        *nl = '\0';
        char other[17] = "";
        const int m = header_matches(s, text, other);
        if (m != 1) {
            free(text);
            if (m == 0)
                return cli_error(EXIT_USAGE, CMD, "%s belongs to another "
                                 "sweep (grid %s, this one is %s); finish it "
                                 "with its own command, or give --force to "
                                 "start this one over it", path, other,
                                 s->grid_hash);
            return cli_error(EXIT_USAGE, CMD, "%s is not a bptt sweep file; "
                             "remove it, or give --force", path);
        }
        char was[200];
        if (!same_build(text, was, sizeof was)) {
            free(text);
            return cli_error(EXIT_USAGE, CMD, "%s was started by bptt %s, "
                             "not by this build (%s (git %s)); finish it "
                             "with that build, or give --force to start "
                             "over", path, was, PACKAGE_VERSION,
                             BPTT_GIT_REVISION);
        }
        *header = cat2(text, "\n");
        size_t keep = (size_t)(nl + 1 - text), lineno = 1;
        for (char *p = nl + 1; p < text + len;) {
            char *e = memchr(p, '\n', (size_t)(text + len - p));
            if (!e)
                break; /* a line cut short: dropped */
            *e = '\0';
            lineno++;
            const int64_t k = record_point(p);
            if (k < 0 || (size_t)k >= s->n_points) {
                free(text);
                return cli_error(1, CMD, "%s:%zu is not a record of this "
                                 "sweep; remove the file (or --force) to "
                                 "start over", path, lineno);
            }
            if (!d->rec[k])
                d->rec[k] = cat2(p, "\n");
            p = e + 1;
            keep = (size_t)(p - text);
        }
        free(text);
        if (keep < len && ftruncate(d->fd, (off_t)keep) != 0)
            return cli_error(1, CMD, "cannot truncate %s: %s", path,
                             strerror(errno));
        return 0;
    }
    return cli_error(1, CMD, "cannot create %s", path);
}

static void free_records(char **rec, size_t n)
{
    if (!rec)
        return;
    for (size_t k = 0; k < n; k++)
        free(rec[k]);
    free(rec);
}

static int run_direct(const sweep *s)
{
    int stop;
    int rc = check_done(s, &stop);
    if (stop)
        return rc;
    char *partial = cat2(s->out, ".partial");
    direct d = {.fd = -1, .die_after = -1};
    d.rec = xrealloc(NULL, s->n_points * sizeof *d.rec);
    memset(d.rec, 0, s->n_points * sizeof *d.rec);
    char *header = NULL;
    size_t *todo = NULL, n_todo = 0;
    if ((rc = open_partial(s, partial, &d, &header)) != 0)
        goto out;

    todo = xrealloc(NULL, s->n_points * sizeof *todo);
    for (size_t k = 0; k < s->n_points; k++)
        if (!d.rec[k])
            todo[n_todo++] = k;
    const char *hook = getenv("BPTT_SWEEP_DIE_AFTER");
    if (hook && *hook) {
        char *end;
        d.die_after = strtol(hook, &end, 10);
        d.die_halfway = strcmp(end, ".5") == 0;
    }
    d.prog = (progress){isatty(2), cli_seconds(), -1, s->n_points,
                        s->n_points - n_todo, 0};
    progress_show(&d.prog);
    catch_signals();
    rc = compute(s, todo, n_todo, sink_partial, &d);
    if (d.prog.on)
        fputs("\r\033[K", stderr);
    if (rc == INTERRUPTED) {
        const size_t done = d.prog.before + d.prog.now;
        rc = 128 + (int)got_signal;
        cli_error(rc, CMD, "interrupted after %zu of %zu points, kept in %s; "
                  "run the same command again to resume", done, s->n_points,
                  partial);
        goto out;
    }
    if (rc) {
        /* failed before its first record (a table that does not fit):
         * leave nothing behind */
        if (d.prog.before + d.prog.now == 0 && d.fd >= 0)
            unlink(partial);
        goto out;
    }
    if ((rc = write_result(s, header, d.rec)) != 0)
        goto out;
    unlink(partial);
    sync_dir_of(partial);
    if (d.prog.on)
        fprintf(stderr, "bptt sweep: wrote %s (%zu points)\n", s->out,
                s->n_points);
out:
    if (d.fd >= 0)
        close(d.fd);
    free(todo);
    free(header);
    free_records(d.rec, s->n_points);
    free(partial);
    return rc;
}

/* ---- batch: --only, --merge, --jobs ------------------------------------- */

static char *part_path(const sweep *s, size_t point)
{
    sbuf b = {0};
    sb_printf(&b, "%s.parts/%zu.jsonl", s->out, point);
    return b.p;
}

typedef struct {
    char *line;
} one_record;

static int sink_one(void *ctx, size_t point, const char *line, size_t len)
{
    (void)point;
    (void)len;
    ((one_record *)ctx)->line = xstrdup(line);
    return 0;
}

static int run_only(const sweep *s)
{
    const size_t k = (size_t)s->only;
    if (s->only < 0 || k >= s->n_points)
        return cli_error(EXIT_USAGE, CMD, "--only: point %" PRId64 " is not in "
                         "the grid (give 0 to %zu)", s->only, s->n_points - 1);
    char *dir = cat2(s->out, ".parts");
    char *path = part_path(s, k);
    int rc = 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        rc = cli_error(1, CMD, "cannot make %s: %s", dir, strerror(errno));
        goto out;
    }
    if (!s->force && access(path, F_OK) == 0) {
        size_t len;
        char *text = read_file(path, &len);
        char other[17] = "";
        const int m = text ? header_matches(s, text, other) : -1;
        free(text);
        if (m == 1)
            fprintf(stderr, "bptt sweep: point %zu is done already (%s)\n", k,
                    path);
        else
            rc = cli_error(EXIT_USAGE, CMD, "%s holds a point of another "
                           "sweep (grid %s, this one is %s); remove %s, or "
                           "give --force", path, other, s->grid_hash, dir);
        goto out;
    }
    catch_signals();
    one_record r = {NULL};
    rc = compute(s, &k, 1, sink_one, &r);
    if (rc == INTERRUPTED) {
        rc = 128 + (int)got_signal;
        cli_error(rc, CMD, "interrupted: point %zu not written", k);
    }
    if (rc == 0) {
        char *h = header_line(s);
        char *text = cat2(h, r.line);
        rc = write_atomic(path, text, strlen(text));
        free(text);
        free(h);
    }
    free(r.line);
out:
    free(dir);
    free(path);
    return rc;
}

static int run_merge(const sweep *s)
{
    int stop;
    int rc = check_done(s, &stop);
    if (stop)
        return rc;
    char **rec = xrealloc(NULL, s->n_points * sizeof *rec);
    memset(rec, 0, s->n_points * sizeof *rec);
    char *header = NULL;
    sbuf missing = {0};
    size_t n_missing = 0, first_missing = 0;
    for (size_t k = 0; k < s->n_points && rc == 0; k++) {
        char *path = part_path(s, k);
        size_t len;
        char *text = read_file(path, &len);
        if (!text) {
            if (n_missing == 0)
                first_missing = k;
            if (n_missing < 20)
                sb_printf(&missing, "%s%zu", n_missing ? ", " : "", k);
            else if (n_missing == 20)
                sb_puts(&missing, ", ...");
            n_missing++;
            free(path);
            continue;
        }
        char other[17] = "";
        char *nl = memchr(text, '\n', len);
        const int m = header_matches(s, text, other);
        if (m != 1 || !nl || record_point(nl + 1) != (int64_t)k ||
            text[len - 1] != '\n' || memchr(nl + 1, '\n', len - 1 -
                                            (size_t)(nl + 1 - text))) {
            rc = cli_error(m == 0 ? EXIT_USAGE : 1, CMD, m == 0
                           ? "%s holds a point of another sweep (grid %s); "
                             "remove it and run its job again"
                           : "%s is not a part of this sweep%s; remove it and "
                             "run its job again",
                           path, m == 0 ? other : "");
        } else {
            char was[200];
            if (!same_build(text, was, sizeof was)) {
                rc = cli_error(1, CMD, "%s was written by bptt %s, not by "
                               "this build (%s (git %s)); rerun its job with "
                               "this build (--force) and merge again", path,
                               was, PACKAGE_VERSION, BPTT_GIT_REVISION);
                free(text);
                free(path);
                break;
            }
            if (!header) {
                nl[0] = '\0';
                header = cat2(text, "\n");
                nl[0] = '\n';
            }
            rec[k] = xstrdup(nl + 1);
        }
        free(text);
        free(path);
    }
    if (rc == 0 && n_missing)
        rc = cli_error(1, CMD, "--merge: %zu of %zu points are missing from "
                       "%s.parts: %s (run their jobs, e.g. --only %zu, then "
                       "merge again)", n_missing, s->n_points, s->out,
                       missing.p, first_missing);
    if (rc == 0)
        rc = write_result(s, header, rec);
    free(missing.p);
    free(header);
    free_records(rec, s->n_points);
    return rc;
}

/* The job list: a header of comments, the merge command, then one
 * `bptt sweep ... --only K` per point; every line first enters this
 * directory, so relative paths hold on any machine sharing it. */
static int write_jobs(const sweep *s)
{
    char exe[PATH_MAX], cwd[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0)
        return cli_error(1, CMD, "cannot find the bptt binary: %s",
                         strerror(errno));
    exe[n] = '\0';
    if (!getcwd(cwd, sizeof cwd))
        return cli_error(1, CMD, "cannot read the working directory: %s",
                         strerror(errno));
    sbuf base = {0};
    sb_puts(&base, "cd ");
    sb_shell(&base, cwd);
    sb_puts(&base, " && ");
    sb_shell(&base, exe);
    sb_printf(&base, " sweep --mode %s", mode_name(s->mode));
    for (int k = 0; k < N_KEYS; k++) {
        if (!s->set[k].text || k == K_MODE || k == K_OUT || k == K_FORMAT ||
            k == K_INFEASIBLE)
            continue;
        sb_printf(&base, " --%s ", keys[k].name);
        sb_shell(&base, s->set[k].text);
    }
    sb_printf(&base, " --format %s",
              s->format == FORMAT_CSV ? "csv" : "jsonl");
    if (s->record_infeasible)
        sb_puts(&base, " --infeasible record");
    sb_puts(&base, " --out ");
    sb_shell(&base, s->out);

    sbuf b = {0};
    sb_printf(&b, "# bptt sweep job list: %zu points of grid %s (%s mode).\n"
              "# Run every line below that does not start with #, in any "
              "order, on any machine\n# that sees this directory; each "
              "writes %s.parts/K.jsonl. Then run the merge\n# command, "
              "which writes %s. scripts/sweep-parallel and "
              "scripts/slurm-sweep do both.\n# merge: %s --merge\n",
              s->n_points, s->grid_hash, mode_name(s->mode), s->out, s->out,
              base.p);
    for (size_t k = 0; k < s->n_points; k++)
        sb_printf(&b, "%s --only %zu\n", base.p, k);
    const int rc = write_atomic(s->jobs_file, b.p, b.n);
    if (rc == 0 && isatty(2))
        fprintf(stderr, "bptt sweep: wrote %zu jobs to %s; merge with: %s "
                "--merge\n", s->n_points, s->jobs_file, base.p);
    free(b.p);
    free(base.p);
    return rc;
}

static void list_points(const sweep *s)
{
    for (size_t k = 0; k < s->n_points; k++) {
        size_t idx[N_AXES];
        decode(s, k, idx);
        printf("%zu", k);
        for (int j = 0; j < N_AXES; j++)
            if (s->applies[j] && s->ax[j].n)
                printf("\t%s=%s", keys[j].name, value(s, idx, j));
        putchar('\n');
    }
}

/* ---- the command -------------------------------------------------------- */

static int parse_args(int argc, char **argv, sweep *s, int *help)
{
    enum { O_CONFIG = 256, O_JOBS, O_ONLY, O_MERGE, O_FORCE, O_LIST };
    static const struct option opts[] = {
        {"strategy", required_argument, NULL, K_STRATEGY},
        {"cell", required_argument, NULL, K_CELL},
        {"layers", required_argument, NULL, K_LAYERS},
        {"input", required_argument, NULL, K_INPUT},
        {"hidden", required_argument, NULL, K_HIDDEN},
        {"batch", required_argument, NULL, K_BATCH},
        {"length", required_argument, NULL, K_LENGTH},
        {"alpha", required_argument, NULL, K_ALPHA},
        {"memory", required_argument, NULL, K_MEMORY},
        {"threads", required_argument, NULL, K_THREADS},
        {"seed", required_argument, NULL, K_SEED},
        {"mode", required_argument, NULL, K_MODE},
        {"out", required_argument, NULL, K_OUT},
        {"format", required_argument, NULL, K_FORMAT},
        {"infeasible", required_argument, NULL, K_INFEASIBLE},
        {"iters", required_argument, NULL, K_ITERS},
        {"task", required_argument, NULL, K_TASK},
        {"optimizer", required_argument, NULL, K_OPTIMIZER},
        {"lr", required_argument, NULL, K_LR},
        {"config", required_argument, NULL, O_CONFIG},
        {"jobs", required_argument, NULL, O_JOBS},
        {"only", required_argument, NULL, O_ONLY},
        {"merge", no_argument, NULL, O_MERGE},
        {"force", no_argument, NULL, O_FORCE},
        {"list", no_argument, NULL, O_LIST},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    int from_cli[N_KEYS] = {0};
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    int rc = 0, c, n_actions = 0;
    *help = 0;
    opterr = 0;
    optind = 1;
    while (rc == 0 &&
           (c = cli_getopt(CMD, argc, argv, opts, seen, &rc)) != -1) {
        if (c == CLI_OPT_ERROR)
            break;
        if (c >= 0 && c < N_KEYS) {
            char label[32];
            snprintf(label, sizeof label, "--%s", keys[c].name);
            set_key(s, c, optarg, label);
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
            rc = cli_parse_int(CMD, "--only", optarg, 0, MAX_POINTS - 1,
                               &s->only);
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
    if (rc)
        return rc;
    if ((rc = cli_no_operands(CMD, argc, argv)) != 0)
        return rc;
    if (n_actions > 1)
        return cli_error(EXIT_USAGE, CMD, "--list, --jobs, --only and --merge "
                         "exclude each other (give one)");
    if (s->config && (rc = read_config(s, s->config, from_cli)) != 0)
        return rc;
    if ((rc = build_grid(s)) != 0)
        return rc;
    s->out = s->set[K_OUT].text;
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
    }
    return 0;
}

static void sweep_free(sweep *s)
{
    for (int k = 0; k < N_KEYS; k++) {
        free(s->set[k].text);
        free(s->set[k].label);
    }
    for (int k = 0; k < N_AXES; k++)
        vals_free(&s->ax[k]);
    free(s->grid);
}

int cli_sweep_check_config(const char *path, const char *text, size_t len)
{
    sweep s;
    memset(&s, 0, sizeof s);
    const int from_cli[N_KEYS] = {0};
    char *copy = xrealloc(NULL, len + 1);
    if (len)
        memcpy(copy, text, len);
    copy[len] = '\0';
    int rc = parse_config(&s, path, copy, len, from_cli);
    free(copy);
    if (rc == 0)
        rc = build_grid(&s);
    sweep_free(&s);
    return rc;
}

int cli_sweep(int argc, char **argv)
{
    sweep s;
    memset(&s, 0, sizeof s);
    int help;
    int rc = parse_args(argc, argv, &s, &help);
    if (help) {
        sweep_usage(stdout);
        sweep_free(&s);
        return 0;
    }
    if (rc == 0 && s.mode == IN_PLAN && s.action != ACT_LIST)
        rc = plan_preflight(&s);
    if (rc == 0) {
        switch (s.action) {
        case ACT_LIST: list_points(&s); break;
        case ACT_JOBS: rc = write_jobs(&s); break;
        case ACT_ONLY: rc = run_only(&s); break;
        case ACT_MERGE: rc = run_merge(&s); break;
        case ACT_SWEEP: rc = run_direct(&s); break;
        }
    }
    sweep_free(&s);
    return rc;
}
