/* sweep_file.c: the direct sweep of `bptt sweep` (no --only, --merge or
 * --jobs): FILE.partial, one line a finished point (one write, then
 * fsync), locked while in use and resumed by a rerun; the progress line;
 * FILE written whole (temporary file, fsync, link) at the end; whether
 * FILE is done already.  The top of the sweep files: the helpers it calls
 * are sweep_util.c's, the points' records sweep_run.c's. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "git-revision.h"

#include "io/filewrite.h"
#include "io/readback.h"
#include "records.h"
#include "sweep.h"

#define CMD SWEEP_CMD

/* FILE from the header and every record, in grid order. */
int sweep_write_result(const sweep *s, const char *header, char **rec)
{
    bptt_strbuf b = {0};
    int rc = 0;
    if (s->g.csv) {
        bptt_strbuf_puts(&b, "# ");
        bptt_strbuf_puts(&b, header);
        size_t bad = 0;
        rc = bptt_records_csv(rec, s->g.n_points, &b, &bad);
        if (rc == BPTT_EINVAL)
            rc = cli_error(1, CMD, "the record of point %zu is not a flat "
                           "JSON object; write --format jsonl instead", bad);
        else if (rc)
            rc = cli_error(1, CMD, "out of memory");
    } else {
        bptt_strbuf_puts(&b, header);
        for (size_t k = 0; k < s->g.n_points; k++)
            bptt_strbuf_puts(&b, rec[k]);
    }
    if (rc == 0 && b.failed)
        rc = cli_error(1, CMD, "out of memory");
    /* FILE was absent when the sweep began (or --force): one that
     * appeared since is not replaced */
    if (rc == 0)
        rc = sweep_write_new(s->out, b.p, b.n, s->force);
    bptt_strbuf_free(&b);
    return rc;
}

/* A FILE.partial left beside a complete FILE (a sweep killed between its
 * rename and its unlink) is removed, but only with its lock held (no
 * sweep is writing it: a --force one may be) and only if it is a file of
 * this grid. */
static void drop_stale_partial(const sweep *s)
{
    char *partial = sweep_cat(s->out, ".partial");
    const int fd = open(partial, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
                                     O_NOFOLLOW);
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    struct stat a, b;
    if (fd >= 0 && fcntl(fd, F_SETLK, &lk) == 0 && fstat(fd, &a) == 0 &&
        S_ISREG(a.st_mode) && stat(partial, &b) == 0 &&
        a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
        char *text = NULL;
        size_t len;
        int err;
        char other[17] = "";
        if (bptt_readback(partial, fd, bptt_records_file_cap(&s->g), &text, &len, &err,
                          NULL) == BPTT_READBACK_OK &&
            bptt_grid_header_matches(&s->g, text, other) == 1)
            unlink(partial);
        free(text);
    }
    if (fd >= 0)
        close(fd);
    free(partial);
}

/* Whether FILE is done: 0 to go on, or the exit code (0 included) with
 * *stop set. */
int sweep_check_done(const sweep *s, int *stop)
{
    *stop = 0;
    struct stat sb;
    if (s->force || stat(s->out, &sb) != 0)
        return 0;
    *stop = 1;
    char *text;
    size_t len;
    int rc = sweep_readback(NULL, s->out, -1, bptt_records_file_cap(&s->g), 1,
                            "give another --out, or --force to replace it",
                            &text, &len);
    if (rc)
        return rc;
    char other[17] = "";
    const int m = len ? bptt_grid_header_matches(&s->g, text, other) : -1;
    if (m == 1) {
        size_t got;
        char why[300];
        const int whole = bptt_records_whole(&s->g, text, len, &got, why,
                                             sizeof why);
        if (whole == BPTT_ENOMEM)
            sweep_out_of_memory();
        if (whole != BPTT_OK)
            rc = cli_error(EXIT_USAGE, CMD, "%s holds %zu of %zu records of "
                           "this grid (%s): it is not a finished sweep; "
                           "--force recomputes it", s->out, got,
                           s->g.n_points, why);
    }
    free(text);
    if (m == 1 && rc == 0) {
        drop_stale_partial(s);
        cli_note(CMD, "%s is complete (%zu points of this grid); nothing to "
                 "do (--force recomputes it)", s->out, s->g.n_points);
        return 0;
    }
    if (m == 1)
        return rc;
    if (m == 0)
        return cli_error(EXIT_USAGE, CMD, "%s holds another sweep (grid %s, "
                         "this one is %s); give another --out, or --force to "
                         "replace it", s->out, other, s->g.hash);
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
            bptt_write_all(d->fd, line, len / 2);
        raise(SIGKILL);
    }
    int e = bptt_write_all(d->fd, line, len);
    if (!e && fsync(d->fd) != 0)
        e = errno;
    if (e)
        return cli_error(1, CMD, "cannot append to the partial file: %s",
                         strerror(e));
    d->rec[point] = sweep_dup(line);
    d->written++;
    d->prog.now++;
    progress_show(&d->prog);
    return 0;
}

/* The lock of FILE.partial on fd: 0; 1 when it must be tried again (the
 * lock was let go between the two calls); or the error printed and 1
 * with *rc set. */
static int lock_partial(int fd, const char *path, int *rc)
{
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_SETLK, &lk) == 0)
        return 0;
    if (errno != EACCES && errno != EAGAIN) {
        *rc = cli_error(1, CMD, "cannot lock %s: %s", path, strerror(errno));
        return 1;
    }
    struct flock who = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(fd, F_GETLK, &who) == 0 && who.l_type == F_UNLCK)
        return 1; /* let go meanwhile */
    *rc = cli_error(1, CMD, "another bptt sweep (pid %ld) is writing %s; "
                    "wait for it, or stop it first (even --force does not "
                    "take over a running sweep)", (long)who.l_pid, path);
    return 1;
}

/* The records after the header of FILE.partial (text[0..len), the header
 * ending at nl) into d->rec, each checked whole against the grid; a last
 * line without its newline (a sweep killed while writing it) is dropped:
 * *keep gets the length to keep.  0, or the error printed and its code. */
static int partial_records(const sweep *s, const char *path, direct *d,
                           char *text, size_t len, char *nl, size_t *keep)
{
    size_t lineno = 1;
    *keep = (size_t)(nl + 1 - text);
    for (char *p = nl + 1; p < text + len;) {
        char *e = memchr(p, '\n', (size_t)(text + len - p));
        if (!e)
            break; /* a line cut short: dropped */
        lineno++;
        size_t k;
        char why[300];
        const int ok = bptt_record_check(&s->g, p, (size_t)(e - p), SIZE_MAX,
                                         &k, why, sizeof why);
        if (ok == BPTT_ENOMEM)
            sweep_out_of_memory();
        if (ok != BPTT_OK)
            return cli_error(EXIT_USAGE, CMD, "%s:%zu is not a record of this "
                             "sweep (%s); remove the file, or give --force "
                             "to start over", path, lineno, why);
        const int kept = bptt_record_keep(d->rec, k, p, (size_t)(e - p));
        if (kept == BPTT_ENOMEM)
            sweep_out_of_memory();
        if (kept != BPTT_OK)
            return cli_error(EXIT_USAGE, CMD, "%s:%zu is a second record of "
                             "point %zu, not the same as the first; remove "
                             "the file, or give --force to start over", path,
                             lineno, k);
        p = e + 1;
        *keep = (size_t)(p - text);
    }
    return 0;
}

/* Opens FILE.partial (creating it) and locks it, whatever the timing of
 * other sweeps: the file is opened with O_CREAT (never replaced by a
 * rename), locked, and kept only if the path still names the inode locked
 * (a sweep that finished meanwhile removed it: open again).  With the
 * lock held: --force empties it; an empty file, or one cut short inside
 * its header, gets the header; a FILE that appeared meanwhile (a sweep
 * finished it) ends this one (*done, rc its verdict); else the records
 * there are read into d->rec.  *header gets the header line. */
static int open_partial(const sweep *s, const char *path, direct *d,
                        char **header, int *done)
{
    int rc = 0, emptied = !s->force;
    *done = 0;
    for (int attempt = 0; attempt < 100; attempt++) {
        /* O_NOFOLLOW: a link planted at FILE.partial, dangling or not,
         * would have the sweep write (or, with --force, empty) its
         * target */
        d->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC |
                     O_NOCTTY | O_NONBLOCK | O_NOFOLLOW, 0666);
        if (d->fd < 0)
            return errno == EISDIR
                       ? cli_error(EXIT_USAGE, CMD, "%s is a directory, not "
                                   "a file; remove it (a sweep keeps its "
                                   "progress there)", path)
                   : errno == ELOOP
                       ? cli_error(EXIT_USAGE, CMD, "%s is a symbolic link, "
                                   "not a file; remove it (a sweep keeps its "
                                   "progress there, and writes through no "
                                   "link)", path)
                       : cli_error(1, CMD, "cannot open %s: %s", path,
                                   strerror(errno));
        struct stat got, now;
        if (fstat(d->fd, &got) != 0 || !S_ISREG(got.st_mode))
            return cli_error(EXIT_USAGE, CMD, "%s is %s, not a file; remove "
                             "it (a sweep keeps its progress there)", path,
                             cli_file_kind(path, d->fd));
        const int fl = fcntl(d->fd, F_GETFL);
        if (fl >= 0)
            fcntl(d->fd, F_SETFL, fl & ~O_NONBLOCK);
        if (lock_partial(d->fd, path, &rc)) {
            if (rc)
                return rc;
            close(d->fd);
            d->fd = -1;
            continue;
        }
        if (lstat(path, &now) != 0 || now.st_ino != got.st_ino ||
            now.st_dev != got.st_dev) {
            close(d->fd); /* removed or replaced since it was opened */
            d->fd = -1;
            continue;
        }
        if (!s->force && access(s->out, F_OK) == 0) {
            /* a sweep finished FILE while this one waited for the lock */
            if (got.st_size == 0)
                unlink(path);
            close(d->fd);
            d->fd = -1;
            *done = 1;
            int stop;
            return sweep_check_done(s, &stop);
        }
        if (!emptied) {
            if (ftruncate(d->fd, 0) != 0)
                return cli_error(1, CMD, "cannot empty %s: %s", path,
                                 strerror(errno));
            emptied = 1;
        }
        char *text;
        size_t len;
        if (lseek(d->fd, 0, SEEK_SET) < 0)
            return cli_error(1, CMD, "cannot read %s: %s", path,
                             strerror(errno));
        if ((rc = sweep_readback(NULL, path, d->fd, bptt_records_file_cap(&s->g), 1,
                                 "remove it, or give --force to start over",
                                 &text, &len)) != 0)
            return rc;
        char *nl = memchr(text, '\n', len);
        if (!nl) { /* new, or not even a header: start it again */
            free(text);
            char *h = sweep_header(s);
            int e = ftruncate(d->fd, 0) != 0 ? errno : 0;
            if (!e)
                e = bptt_write_all(d->fd, h, strlen(h));
            if (!e && fsync(d->fd) != 0)
                e = errno;
            if (e) {
                free(h);
                return cli_error(1, CMD, "cannot write %s: %s", path,
                                 strerror(e));
            }
            *header = h;
            return 0;
        }
        *nl = '\0';
        char other[17] = "";
        const int m = bptt_grid_header_matches(&s->g, text, other);
        if (m != 1) {
            free(text);
            if (m == 0)
                return cli_error(EXIT_USAGE, CMD, "%s belongs to another "
                                 "sweep (grid %s, this one is %s); finish it "
                                 "with its own command, or give --force to "
                                 "start this one over it", path, other,
                                 s->g.hash);
            return cli_error(EXIT_USAGE, CMD, "%s is not a bptt sweep file; "
                             "remove it, or give --force", path);
        }
        char was[200];
        if (!bptt_grid_header_same_build(text, was, sizeof was)) {
            free(text);
            return cli_error(EXIT_USAGE, CMD, "%s was started by bptt %s, "
                             "not by this build (%s (git %s)); finish it "
                             "with that build, or give --force to start "
                             "over", path, was, PACKAGE_VERSION,
                             BPTT_GIT_REVISION);
        }
        /* the header is this run's, not the partial's copy: its grid
         * and build are checked above, and the machine's facts (the CPU,
         * which a run short of descriptors may have written as
         * "unknown", the cores, the BLAS) and the date are those an
         * uninterrupted sweep started now writes */
        *header = sweep_header(s);
        size_t keep;
        rc = partial_records(s, path, d, text, len, nl, &keep);
        free(text);
        if (rc)
            return rc;
        if (keep < len && ftruncate(d->fd, (off_t)keep) != 0)
            return cli_error(1, CMD, "cannot truncate %s: %s", path,
                             strerror(errno));
        return 0;
    }
    return cli_error(1, CMD, "cannot lock %s: it keeps being removed or "
                     "replaced", path);
}

int sweep_direct(const sweep *s)
{
    int stop;
    int rc = sweep_check_done(s, &stop);
    if (stop)
        return rc;
    char *partial = sweep_cat(s->out, ".partial");
    direct d = {.fd = -1, .die_after = -1};
    d.rec = sweep_alloc(s->g.n_points * sizeof *d.rec);
    memset(d.rec, 0, s->g.n_points * sizeof *d.rec);
    char *header = NULL;
    size_t *todo = NULL, n_todo = 0;
    int finished;
    if ((rc = open_partial(s, partial, &d, &header, &finished)) != 0 ||
        finished)
        goto out;

    todo = sweep_alloc(s->g.n_points * sizeof *todo);
    for (size_t k = 0; k < s->g.n_points; k++)
        if (!d.rec[k])
            todo[n_todo++] = k;
    const char *hook = getenv("BPTT_SWEEP_DIE_AFTER");
    if (hook && *hook) {
        char *end;
        d.die_after = strtol(hook, &end, 10);
        d.die_halfway = strcmp(end, ".5") == 0;
    }
    d.prog = (progress){isatty(2), cli_seconds(), -1, s->g.n_points,
                        s->g.n_points - n_todo, 0};
    progress_show(&d.prog);
    sweep_catch_signals();
    rc = sweep_compute(s, todo, n_todo, sink_partial, &d);
    if (d.prog.on)
        fputs("\r\033[K", stderr);
    if (rc == SWEEP_INTERRUPTED) {
        const size_t done = d.prog.before + d.prog.now;
        rc = 128 + (int)sweep_signal;
        cli_error(rc, CMD, "interrupted after %zu of %zu points, kept in %s; "
                  "run the same command again to resume", done, s->g.n_points,
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
    if ((rc = sweep_write_result(s, header, d.rec)) != 0)
        goto out;
    unlink(partial);
    sweep_sync_dir(partial);
    if (d.prog.on)
        cli_note(CMD, "wrote %s (%zu points)", s->out, s->g.n_points);
out:
    if (d.fd >= 0)
        close(d.fd);
    free(todo);
    free(header);
    sweep_free_records(d.rec, s->g.n_points);
    free(partial);
    return rc;
}

