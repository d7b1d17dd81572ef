/* calibrate.c: `bptt calibrate`: the slow level's costs, measured on this
 * machine in forward steps of the model (doc/twolevel.md 6): the wd and
 * rd that `bptt plan --disk` takes as --write-cost and --read-cost.
 *
 * In one process, round after round, it times one forward step of the
 * model on the library's cell code (bptt_model_forward_step, on a session
 * as `bptt run` opens it), a pwrite of one hidden state's bytes to a
 * scratch file, a pread of them, and the same for an internal state's
 * bytes; each timing covers enough operations to lie far above the
 * clock's resolution.  Medians over the rounds (bptt_compare_median) give
 * wd = write seconds / forward seconds and rd = read seconds / forward
 * seconds per hidden state, and the same per internal state (about alpha
 * times those).
 *
 * Promises: the model options are `bptt run`'s, parsed by the same code
 * (run_model_option); every input is checked before any work (one line,
 * exit 2): the folder must exist, and the scratch file is made inside it
 * with O_CREAT|O_EXCL|O_NOFOLLOW, so an existing file of its name (or a
 * link) is refused, never replaced; the scratch file (and the temporary
 * folder) is removed at the end, on a failure and on SIGINT or SIGTERM
 * too.  Nothing is written on stdout unless the whole measurement
 * succeeded.
 *
 * --direct measures the slow level as bptt_steps.slow_direct runs it
 * (steps.h): the scratch file switched to O_DIRECT, each state at an
 * aligned offset and moved whole aligned blocks at a time through an
 * aligned bounce buffer, the copy into or out of it timed with the write
 * or read; a folder whose filesystem refuses O_DIRECT is refused (exit 2)
 * before any work. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "bptt.h"
#include "cli.h"
#include "compare.h"
#include "fields.h"
#include "live.h"
#include "meta.h"
#include "run.h"
#include "session.h"
#include "steps.h"
#include "strbuf.h"

#define CMD "calibrate"
#define SCRATCH "bptt-calibrate.scratch"
#define CAL_LENGTH 16          /* the batch's steps, cycled through */
#define CAL_REPEATS 31         /* default rounds: odd, a median is one */
#define CAL_REPEATS_MAX 100000
#define CAL_TARGET_SECONDS 2e-4 /* the least a timing covers */
#define CAL_MAX_OPS 65536       /* operations in one timing, at most */
#define TMPFS_MAGIC_NUMBER 0x01021994

/* The page cache's caveat, in the text output and in the record. */
#define NOTE_CACHE                                                          \
    "reads of data just written come from the page cache (a memory copy), " \
    "not the device; --sync measures the device"
#define NOTE_SYNC                                                           \
    "--sync: each write is followed by fsync and each read preceded by "    \
    "posix_fadvise(DONTNEED), best effort"
#define NOTE_DIRECT                                                         \
    "--direct: O_DIRECT, bypassing the page cache, each state padded to "   \
    "the alignment and copied through an aligned buffer, as slow_direct"
#define NOTE_TMPFS "the folder is on tmpfs: its writes and reads are memory " \
    "copies whatever --sync says"

typedef struct {
    run_args m; /* the model options (run.h) */
    const char *disk_dir; /* NULL: a temporary folder */
    int64_t repeats;
    int sync;
    int direct;
    enum output_format format;
} cal_args;

static void usage(FILE *f)
{
    cli_usage(f,
        "usage: bptt calibrate [--disk-dir DIR] [--repeats N] [--sync]\n"
        "                      [--direct]\n"
        "                      [--cell C] [--layers L] [--input X]\n"
        "                      [--hidden H] [--batch B] [--length T]\n"
        "                      [--seed S] [--threads K]\n"
        "                      [--task copy|adding|text:FILE]\n"
        "                      [--format text|json|csv] [--help]\n"
        "\n"
        "Measures what the slow level of a two-level plan costs on this\n"
        "machine (doc/twolevel.md): in rounds, one forward step of the model,\n"
        "a write of one hidden state's bytes to a scratch file, a read of\n"
        "them back, and the same for an internal state.  Prints the median\n"
        "and least seconds of each and the costs in forward steps per hidden\n"
        "state, write_cost and read_cost, which a two-level bptt plan takes\n"
        "as its write and read costs (an internal state costs about alpha\n"
        "times as much).\n"
        "\n"
        "  --disk-dir DIR  an existing folder for the scratch file\n"
        "                  (" SCRATCH ", made new and removed\n"
        "                  afterwards; an existing one is refused); default:\n"
        "                  a new folder under $TMPDIR or /tmp, removed\n"
        "  --repeats N     rounds, 1..100000 (default 31)\n"
        "  --sync          fsync after each write and drop the file's cached\n"
        "                  pages before each read, to measure the device\n"
        "                  rather than the page cache (best effort)\n"
        "  --direct        open the scratch file with O_DIRECT, as a run's\n"
        "                  slow level with slow_direct: states padded to the\n"
        "                  filesystem's alignment (4096 or more), copied\n"
        "                  through an aligned buffer (the copy timed too);\n"
        "                  a folder whose filesystem refuses O_DIRECT is\n"
        "                  refused\n"
        "  --cell C        @CELLS@ (default lstm)\n"
        "  --layers L      stacked recurrent layers, 1..16 (default 1)\n"
        "  --input X       input width (default: the task's; copy: 16)\n"
        "  --hidden H      hidden width (default 128)\n"
        "  --batch B       sequences per batch (default 32)\n"
        "  --length T      steps of the batch whose inputs the forward steps\n"
        "                  take in turn (default 16)\n"
        "  --seed S        seed of parameters and data (default 1)\n"
        "  --threads K     OpenMP and OpenBLAS threads (default: all cores)\n"
        "  --task T        copy (default), adding, or text:FILE\n"
        "  --format F      text (default), json (one object) or csv\n"
        "\n"
        "Without --sync a read of data just written comes from the page\n"
        "cache: it measures a memory copy, not the device; with --direct\n"
        "every write and read goes to the device.\n"
        "\n"
        "exit status: 0 ok, 2 bad input, 1 failure while measuring (a write\n"
        "or read that failed, out of memory), 130 stopped by SIGINT, 143\n"
        "stopped by SIGTERM\n");
}

static int parse_args(int argc, char **argv, cal_args *a, int *help)
{
    static const struct option opts[] = {
        RUN_MODEL_OPTIONS,
        {"disk-dir", required_argument, NULL, 'D'},
        {"repeats", required_argument, NULL, 'n'},
        {"sync", no_argument, NULL, 'y'},
        {"direct", no_argument, NULL, 'd'},
        {"format", required_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *seen[CLI_MAX_OPTIONS] = {NULL};
    run_model_defaults(&a->m);
    a->repeats = CAL_REPEATS;
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
        case 'D':
            a->disk_dir = optarg;
            break;
        case 'n':
            rc = cli_parse_int(CMD, "--repeats", optarg, 1, CAL_REPEATS_MAX,
                               &a->repeats);
            break;
        case 'y':
            a->sync = 1;
            break;
        case 'd':
            a->direct = 1;
            break;
        case 'f':
            rc = cli_parse_format(CMD, optarg, &a->format);
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
    if (a->m.length == 0)
        a->m.length = CAL_LENGTH;
    if (a->disk_dir && !a->disk_dir[0])
        return cli_error(EXIT_USAGE, CMD, "--disk-dir: empty folder name "
                         "(give an existing folder, or leave --disk-dir out "
                         "for a temporary one)");
    return 0;
}

/* ---- the scratch file ----------------------------------------------------- */

typedef struct {
    char tmp[PATH_MAX]; /* the temporary folder made, or "" */
    const char *dir;    /* the folder, as given or made */
    int dfd, fd;        /* the folder and the scratch file, or -1 */
    int tmpfs;          /* the folder is on tmpfs */
    size_t align;       /* --direct: the alignment of offsets and lengths */
} scratch;

/* The scratch file removed, and the temporary folder. */
static void scratch_close(scratch *s)
{
    if (s->fd >= 0) {
        close(s->fd);
        unlinkat(s->dfd, SCRATCH, 0);
    }
    if (s->dfd >= 0)
        close(s->dfd);
    if (s->tmp[0])
        rmdir(s->tmp);
    s->fd = s->dfd = -1;
}

/* The folder (made under $TMPDIR or /tmp when not given) and the scratch
 * file new in it: 0, or the refusal and EXIT_USAGE with nothing left. */
static int scratch_open(const cal_args *a, scratch *s)
{
    s->tmp[0] = '\0';
    s->dfd = s->fd = -1;
    s->dir = a->disk_dir;
    if (!s->dir) {
        const char *t = getenv("TMPDIR");
        const char *base = t && t[0] ? t : "/tmp";
        const int n = snprintf(s->tmp, sizeof s->tmp,
                               "%s/bptt-calibrate.XXXXXX", base);
        if (n < 0 || (size_t)n >= sizeof s->tmp || !mkdtemp(s->tmp)) {
            const int e = n >= 0 && (size_t)n < sizeof s->tmp ? errno
                                                              : ENAMETOOLONG;
            s->tmp[0] = '\0';
            return cli_error(EXIT_USAGE, CMD, "cannot make a temporary "
                             "folder in '%s'%s: %s (set TMPDIR to a folder "
                             "you can write, or give --disk-dir DIR)", base,
                             t && t[0] ? " ($TMPDIR)" : "", strerror(e));
        }
        s->dir = s->tmp;
    }
    s->dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s->dfd < 0) {
        const int e = errno;
        if (s->tmp[0])
            rmdir(s->tmp);
        s->tmp[0] = '\0';
        if (e == ENOENT)
            return cli_error(EXIT_USAGE, CMD, "--disk-dir: '%s' does not "
                             "exist (give an existing folder, or leave "
                             "--disk-dir out for a temporary one)", s->dir);
        if (e == ENOTDIR)
            return cli_error(EXIT_USAGE, CMD, "--disk-dir: '%s' is %s, not "
                             "a folder (give an existing folder)", s->dir,
                             cli_file_kind(s->dir, -1));
        return cli_error(EXIT_USAGE, CMD, "--disk-dir: cannot open '%s': %s "
                         "(give a folder you can read and write)", s->dir,
                         strerror(e));
    }
    s->fd = openat(s->dfd, SCRATCH, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
                                        O_CLOEXEC, 0600);
    if (s->fd < 0) {
        const int e = errno;
        close(s->dfd);
        s->dfd = -1;
        if (s->tmp[0])
            rmdir(s->tmp);
        s->tmp[0] = '\0';
        if (e == EEXIST)
            return cli_error(EXIT_USAGE, CMD, "--disk-dir: '%s/%s' exists "
                             "(bptt calibrate replaces no file: remove it or "
                             "give another folder)", s->dir, SCRATCH);
        return cli_error(EXIT_USAGE, CMD, "cannot make the scratch file "
                         "'%s/%s': %s (give --disk-dir a folder you can "
                         "write)", s->dir, SCRATCH, strerror(e));
    }
    struct statfs fs;
    s->tmpfs = fstatfs(s->fd, &fs) == 0 &&
               (unsigned long)fs.f_type == TMPFS_MAGIC_NUMBER;
    s->align = 0;
    int e = 0; /* O_DIRECT as a run's slow level has it (steps.h) */
    if (a->direct && (e = bptt_steps_slow_direct(s->fd, &s->align)) != 0) {
        scratch_close(s);
        return cli_error(EXIT_USAGE, CMD, "--direct: the filesystem of '%s' "
                         "%s (give --disk-dir a folder on a disk "
                         "filesystem)", a->disk_dir ? a->disk_dir : "the "
                         "temporary folder", e == EINVAL ? "refuses O_DIRECT"
                         : strerror(e));
    }
    return 0;
}

/* ---- the measurement ------------------------------------------------------ */

enum { OP_FORWARD, OP_WRITE_H, OP_READ_H, OP_WRITE_S, OP_READ_S, N_OPS };

typedef struct {
    bptt_model *model;
    const bptt_batch *batch;
    bptt_real *in, *out, *s, *back; /* states, and a buffer read into */
    size_t step;                    /* the input's step, cycled */
    size_t hb, sb;                  /* bytes of a hidden, internal state */
    int fd, sync;
    int err;                        /* errno of a failed write or read */
    size_t align;                   /* --direct: offsets, lengths; else 0 */
    unsigned char *bounce;          /* --direct: aligned, a padded state */
} cal_state;

/* n rounded up to the alignment (n itself without --direct). */
static size_t padded(const cal_state *c, size_t n)
{
    return c->align ? (n + c->align - 1) / c->align * c->align : n;
}

static void forward_one(cal_state *c)
{
    const bptt_batch *b = c->batch;
    bptt_model_forward_step(c->model, b->x + c->step * b->B * b->X, c->in,
                            c->s, c->out);
    bptt_real *t = c->in; /* the output state is the next step's input */
    c->in = c->out;
    c->out = t;
    c->step = (c->step + 1) % b->T;
}

/* n bytes at offset off written (write) or read whole: 0, or -1 with
 * c->err. */
static int io_whole(cal_state *c, int write, void *buf, size_t n, off_t off)
{
    char *p = buf;
    const size_t want = n;
    if (c->align) { /* through the bounce buffer, whole aligned blocks */
        n = padded(c, want);
        if (write) { /* the padding written as zero bytes, as the store */
            memcpy(c->bounce, buf, want);
            memset(c->bounce + want, 0, n - want);
        }
        p = (char *)c->bounce;
    }
    while (n > 0) {
        const ssize_t k = write ? pwrite(c->fd, p, n, off)
                                : pread(c->fd, p, n, off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            c->err = k < 0 ? errno : EIO;
            return -1;
        }
        p += k;
        off += k;
        n -= (size_t)k;
    }
    if (write && c->sync && fsync(c->fd) != 0) {
        c->err = errno;
        return -1;
    }
    if (c->align && !write)
        memcpy(buf, c->bounce, want);
    return 0;
}

/* k operations of kind op: their seconds (with --sync only the read
 * itself is timed, not the dropping of the cache before it); -1 when one
 * failed, -2 when a signal came. */
static double time_ops(cal_state *c, int op, size_t k)
{
    const int wr = op == OP_WRITE_H || op == OP_WRITE_S;
    const int hid = op == OP_WRITE_H || op == OP_READ_H;
    const int each = c->sync && (op == OP_READ_H || op == OP_READ_S);
    void *buf = wr ? (void *)(hid ? c->in : c->s) : (void *)c->back;
    const size_t n = hid ? c->hb : c->sb;
    const off_t off = hid ? 0 : (off_t)padded(c, c->hb);
    double sum = 0, t0 = cli_seconds();
    for (size_t i = 0; i < k; i++) {
        if (live_signal_caught())
            return -2;
        if (op == OP_FORWARD) {
            forward_one(c);
            continue;
        }
        if (each) {
            (void)posix_fadvise(c->fd, 0, 0, POSIX_FADV_DONTNEED);
            t0 = cli_seconds();
        }
        if (io_whole(c, wr, buf, n, off) != 0)
            return -1;
        if (each)
            sum += cli_seconds() - t0;
    }
    return each ? sum : cli_seconds() - t0;
}

/* The measurement: per op kind, rounds samples of seconds per operation
 * into v[op][0..rounds).  0; a signal's exit code (nothing printed); or 1
 * with the error printed. */
static int measure(cal_state *c, size_t rounds, double *v[N_OPS])
{
    /* a warm-up that also sizes each timing: k operations of a kind take
     * at least CAL_TARGET_SECONDS */
    size_t k[N_OPS];
    struct timespec res;
    const double floor_s = clock_getres(CLOCK_MONOTONIC, &res) == 0
                               ? 1000 * (res.tv_sec + res.tv_nsec * 1e-9)
                               : 0;
    const double target = fmax(CAL_TARGET_SECONDS, floor_s);
    for (int op = 0; op < N_OPS; op++) {
        double t = 0;
        size_t n = 1;
        for (; n <= CAL_MAX_OPS; n *= 2) {
            if ((t = time_ops(c, op, n)) < 0)
                goto failed;
            if (t >= target)
                break;
        }
        const double each = t / (double)(n > CAL_MAX_OPS ? CAL_MAX_OPS : n);
        const double want = each > 0 ? ceil(target / each) : CAL_MAX_OPS;
        k[op] = want > CAL_MAX_OPS ? CAL_MAX_OPS : (size_t)want;
    }
    for (size_t r = 0; r < rounds; r++) {
        if (live_signal_caught())
            return 128 + live_signal_caught();
        for (int op = 0; op < N_OPS; op++) {
            const double t = time_ops(c, op, k[op]);
            if (t < 0)
                goto failed;
            v[op][r] = t / (double)k[op];
        }
    }
    return 0;
failed:
    if (live_signal_caught())
        return 128 + live_signal_caught();
    return cli_error(1, CMD, "the scratch file's %s failed: %s",
                     c->err == ENOSPC ? "write" : "write or read",
                     strerror(c->err));
}

/* ---- the output ------------------------------------------------------------- */

typedef struct {
    double med[N_OPS], min[N_OPS];
} cal_result;

static void put_text(const cal_args *a, const scratch *sc, int threads,
                     size_t input, const cal_state *c, const cal_result *r,
                     bptt_strbuf *b)
{
    static const char *const names[N_OPS] = {
        "forward step", "write hidden", "read hidden", "write internal",
        "read internal"};
    const double f = r->med[OP_FORWARD];
    bptt_strbuf_printf(b, "model     %s, %" PRId64 " layer%s, input %zu, "
                       "hidden %" PRId64 ", batch %" PRId64 ", %d thread%s\n",
                       a->m.cell->name, a->m.layers,
                       a->m.layers > 1 ? "s" : "", input, a->m.hidden,
                       a->m.batch, threads, threads > 1 ? "s" : "");
    bptt_strbuf_printf(b, "folder    %s%s%s%s\n",
                       a->disk_dir ? "given" : "temporary",
                       sc->tmpfs ? " (tmpfs)" : "",
                       a->sync ? ", --sync" : "",
                       a->direct ? ", --direct" : "");
    bptt_strbuf_printf(b, "repeats   %" PRId64 " rounds: medians (least)\n\n",
                       a->repeats);
    bptt_strbuf_printf(b, "%-15s %8s  %-22s %s\n", "op", "bytes",
                       "seconds (least)", "forward steps");
    for (int op = 0; op < N_OPS; op++) {
        const size_t n = op == OP_FORWARD ? 0
                         : op <= OP_READ_H ? c->hb
                                           : c->sb;
        char bytes[24] = "-";
        if (n)
            snprintf(bytes, sizeof bytes, "%zu", n);
        bptt_strbuf_printf(b, "%-15s %8s  %.3e (%.3e)  %.4g\n", names[op],
                           bytes, r->med[op], r->min[op], r->med[op] / f);
    }
    const double wd = r->med[OP_WRITE_H] / f, rd = r->med[OP_READ_H] / f;
    const double alpha = (double)c->sb / (double)c->hb;
    bptt_strbuf_printf(b, "\nwrite_cost %.4g  read_cost %.4g  (forward steps "
                       "per hidden state)\n", wd, rd);
    bptt_strbuf_printf(b, "alpha %.4g: an internal state's write and read "
                       "cost %.3g and %.3g times a hidden state's\n", alpha,
                       r->med[OP_WRITE_S] / r->med[OP_WRITE_H],
                       r->med[OP_READ_S] / r->med[OP_READ_H]);
    bptt_strbuf_printf(b, "for the planner: bptt plan --disk ... "
                       "--write-cost %.4g --read-cost %.4g\n", wd, rd);
    if (a->direct)
        bptt_strbuf_printf(b, "note: %s (alignment %zu)\n", NOTE_DIRECT,
                           sc->align);
    else
        bptt_strbuf_printf(b, "note: %s\n",
                           a->sync ? NOTE_SYNC : NOTE_CACHE);
    if (sc->tmpfs)
        bptt_strbuf_printf(b, "note: %s\n", NOTE_TMPFS);
}

static void put_record(const cal_args *a, const scratch *sc, int threads,
                       size_t input, const cal_state *c, const cal_result *r,
                       bptt_strbuf *b)
{
    /* the keys are kept, not copied (fields.h) */
    static const char *const keys[N_OPS] = {
        "forward_seconds", "write_seconds_hidden", "read_seconds_hidden",
        "write_seconds_internal", "read_seconds_internal"};
    static const char *const min_keys[N_OPS] = {
        "forward_seconds_min", "write_seconds_hidden_min",
        "read_seconds_hidden_min", "write_seconds_internal_min",
        "read_seconds_internal_min"};
    bptt_fields fs = {.n = 0};
    const double f = r->med[OP_FORWARD];
    bptt_fields_str(&fs, "cell", a->m.cell->name);
    bptt_fields_str(&fs, "task", a->m.task);
    bptt_fields_int(&fs, "layers", a->m.layers);
    bptt_fields_int(&fs, "input", (int64_t)input);
    bptt_fields_int(&fs, "hidden", a->m.hidden);
    bptt_fields_int(&fs, "batch", a->m.batch);
    bptt_fields_int(&fs, "seed", a->m.seed);
    bptt_fields_int(&fs, "threads", threads);
    bptt_fields_int(&fs, "repeats", a->repeats);
    bptt_fields_int(&fs, "sync", a->sync);
    bptt_fields_int(&fs, "direct", a->direct);
    bptt_fields_int(&fs, "direct_align", (int64_t)sc->align);
    bptt_fields_str(&fs, "disk_dir_kind", a->disk_dir ? "given" : "temporary");
    bptt_fields_str(&fs, "disk_dir", sc->dir);
    bptt_fields_int(&fs, "tmpfs", sc->tmpfs);
    bptt_fields_int(&fs, "hidden_bytes", (int64_t)c->hb);
    bptt_fields_int(&fs, "internal_bytes", (int64_t)c->sb);
    bptt_fields_real(&fs, "alpha", (double)c->sb / (double)c->hb);
    for (int op = 0; op < N_OPS; op++) {
        bptt_fields_real(&fs, keys[op], r->med[op]);
        bptt_fields_real(&fs, min_keys[op], r->min[op]);
    }
    bptt_fields_real(&fs, "write_cost", r->med[OP_WRITE_H] / f);
    bptt_fields_real(&fs, "read_cost", r->med[OP_READ_H] / f);
    bptt_fields_real(&fs, "write_cost_internal", r->med[OP_WRITE_S] / f);
    bptt_fields_real(&fs, "read_cost_internal", r->med[OP_READ_S] / f);
    bptt_fields_str(&fs, "note", a->direct ? NOTE_DIRECT
                                 : a->sync ? NOTE_SYNC : NOTE_CACHE);
    bptt_meta meta;
    bptt_meta_collect(&meta);
    bptt_fields_write(&fs, (int)a->format, &meta, b);
}

/* ---- the command ------------------------------------------------------------ */

static int calibrate(const cal_args *a)
{
    bptt_session_sizes z;
    int rc = run_preflight_sizes(CMD, &a->m, &z);
    if (rc)
        return rc;
    /* the states as bytes in memory, twice, and a buffer to read into */
    if ((rc = run_fits(CMD, "these sizes need at least",
                       z.fixed_bytes + 3 * z.hidden_bytes +
                           2 * z.internal_bytes,
                       "use smaller --hidden, --batch or --layers")))
        return rc;
    int threads;
    if ((rc = run_set_threads(CMD, a->m.threads, &z, 0, &threads)))
        return rc;
    scratch sc;
    if ((rc = scratch_open(a, &sc)) != 0)
        return rc;
    live_signals_catch();
    const size_t R = (size_t)a->repeats;
    double *v[N_OPS] = {NULL};
    cal_state c = {.fd = sc.fd, .sync = a->sync, .align = sc.align};
    bptt_session *s = NULL;
    bptt_mem *mem = bptt_mem_alloc();
    bptt_session_spec sp;
    run_session_spec(&a->m, &sp);
    sp.optimizer = NULL;
    sp.keep_last_params = 0;
    char why[4200] = "";
    int st = mem ? bptt_session_open(&s, &sp, mem, why, sizeof why)
                 : BPTT_ENOMEM;
    if (st == BPTT_OK)
        st = bptt_session_fetch(s, 0);
    if (st != BPTT_OK) {
        rc = st == BPTT_ENOMEM || st == BPTT_OK
                 ? cli_error(1, CMD, "out of memory")
                 : cli_error(EXIT_USAGE, CMD, "--task %s: %s", a->m.task,
                             why[0] ? why : bptt_strerror(st));
        goto out;
    }
    c.model = bptt_session_model(s);
    c.batch = bptt_session_batch(s);
    c.hb = bptt_model_hidden_bytes(c.model);
    c.sb = bptt_model_internal_bytes(c.model);
    c.in = calloc(1, c.hb);
    c.out = calloc(1, c.hb);
    c.s = calloc(1, c.sb);
    c.back = calloc(1, c.sb);
    if (c.align) { /* zeroed: the padding written is zero bytes */
        const size_t len = padded(&c, c.sb);
        c.bounce = aligned_alloc(c.align, len);
        if (c.bounce)
            memset(c.bounce, 0, len);
    }
    for (int op = 0; op < N_OPS; op++)
        v[op] = calloc(R, sizeof(double));
    int ok = c.in && c.out && c.s && c.back && (!c.align || c.bounce);
    for (int op = 0; op < N_OPS; op++)
        ok = ok && v[op];
    if (!ok) {
        rc = cli_error(1, CMD, "out of memory");
        goto out;
    }
    /* the file holds both states before the first read */
    if (io_whole(&c, 1, c.in, c.hb, 0) != 0 ||
        io_whole(&c, 1, c.s, c.sb, (off_t)padded(&c, c.hb)) != 0) {
        rc = cli_error(1, CMD, "cannot write the scratch file '%s/%s': %s",
                       sc.dir, SCRATCH, strerror(c.err));
        goto out;
    }
    if ((rc = measure(&c, R, v)) != 0)
        goto out;
    cal_result r;
    for (int op = 0; op < N_OPS; op++) {
        r.med[op] = bptt_compare_median(v[op], R); /* sorts v[op] */
        r.min[op] = v[op][0];
        if (!(r.med[op] > 0) || !isfinite(r.med[op])) {
            rc = cli_error(1, CMD, "a timing was not positive (the clock "
                           "did not advance): give more --repeats");
            goto out;
        }
    }
    bptt_strbuf b = {0};
    const size_t input = bptt_session_input(s);
    if (a->format == FORMAT_TEXT)
        put_text(a, &sc, threads, input, &c, &r, &b);
    else
        put_record(a, &sc, threads, input, &c, &r, &b);
    if (b.failed)
        rc = cli_error(1, CMD, "out of memory writing the result");
    else if (b.p)
        fwrite(b.p, 1, b.n, stdout);
    bptt_strbuf_free(&b);
out:
    live_signals_restore();
    scratch_close(&sc);
    if (rc > 128)
        cli_error(rc, CMD, "stopped by %s: nothing written, the scratch file "
                  "removed", rc == 130 ? "SIGINT" : "SIGTERM");
    for (int op = 0; op < N_OPS; op++)
        free(v[op]);
    free(c.in);
    free(c.out);
    free(c.s);
    free(c.back);
    free(c.bounce);
    bptt_session_close(s);
    bptt_mem_free(mem);
    return rc;
}

int cli_calibrate(int argc, char **argv)
{
    cal_args a;
    memset(&a, 0, sizeof a);
    int help;
    const int rc = parse_args(argc, argv, &a, &help);
    if (help) {
        usage(stdout);
        return 0;
    }
    return rc ? rc : calibrate(&a);
}
