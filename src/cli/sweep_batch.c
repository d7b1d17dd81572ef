/* sweep_batch.c: batch runs of `bptt sweep`: --jobs writes one command a
 * point and the merge command, --only K computes point K alone into
 * FILE.parts/K.jsonl, --merge assembles FILE from the parts (all of them,
 * of this grid and this build). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "git-revision.h"

#include "records.h"
#include "sweep.h"

#define CMD SWEEP_CMD

static char *part_path(const sweep *s, size_t point)
{
    bptt_strbuf b = {0};
    bptt_strbuf_printf(&b, "%s.parts/%zu.jsonl", s->out, point);
    return sweep_take(&b);
}

/* Part k at path, read back and checked whole: the header of this grid
 * and build, then point k's record (bptt_record_check, records.h) and nothing
 * more (the header itself is not kept: FILE gets this run's).  0 with
 * *rec (the record line with its newline) set; SWEEP_MISSING_OK when there is no such
 * file; or the error printed and its code. */
static int read_part(const sweep *s, size_t k, const char *path,
                     char **rec)
{
    char redo[96];
    snprintf(redo, sizeof redo, "remove it and run its job again (--only "
             "%zu --force)", k);
    char *text;
    size_t len;
    int rc = sweep_readback(NULL, path, -1, BPTT_RECORDS_HEADER_MAX +
                            BPTT_RECORDS_RECORD_MAX, SWEEP_MISSING_OK, redo, &text,
                            &len);
    if (rc)
        return rc;
    char other[17] = "";
    char *nl = memchr(text, '\n', len);
    const int m = bptt_grid_header_matches(&s->g, text, other);
    char was[200], why[300] = "";
    size_t got;
    if (m == 0)
        rc = cli_error(EXIT_USAGE, CMD, "%s holds a point of another sweep "
                       "(grid %s, this one is %s); %s", path, other,
                       s->g.hash, redo);
    else if (m != 1 || !nl)
        rc = cli_error(EXIT_USAGE, CMD, "%s is not a part of a bptt sweep "
                       "(no header of this grid); %s", path, redo);
    else if (!bptt_grid_header_same_build(text, was, sizeof was))
        rc = cli_error(1, CMD, "%s was written by bptt %s, not by this build "
                       "(%s (git %s)); rerun its job with this build "
                       "(--force) and merge again", path, was,
                       PACKAGE_VERSION, BPTT_GIT_REVISION);
    else {
        const char *r = nl + 1, *end = text + len;
        const char *e = memchr(r, '\n', (size_t)(end - r));
        if (!e || e + 1 != end)
            snprintf(why, sizeof why, "%s", !e ? "its record is cut short "
                     "or missing" : "more than one record");
        else {
            const int ok = bptt_record_check(&s->g, r, (size_t)(e - r), k,
                                             &got, why, sizeof why);
            if (ok == BPTT_ENOMEM)
                sweep_out_of_memory();
            if (ok == BPTT_OK)
                why[0] = '\0';
        }
        if (why[0])
            rc = cli_error(EXIT_USAGE, CMD, "%s is not point %zu's part of "
                           "this sweep (%s); %s", path, k, why, redo);
        else
            *rec = sweep_cat(r, "");
    }
    free(text);
    return rc;
}

typedef struct {
    char *line;
} one_record;

static int sink_one(void *ctx, size_t point, const char *line, size_t len)
{
    (void)point;
    (void)len;
    ((one_record *)ctx)->line = sweep_cat(line, "");
    return 0;
}

int sweep_only(const sweep *s)
{
    const size_t k = (size_t)s->only;
    if (s->only < 0 || k >= s->g.n_points)
        return cli_error(EXIT_USAGE, CMD, "--only: point %" PRId64 " is not "
                         "in the grid (give 0 to %zu)", s->only,
                         s->g.n_points - 1);
    char *dir = sweep_cat(s->out, ".parts");
    char *path = part_path(s, k);
    int rc = 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        rc = cli_error(1, CMD, "cannot make %s: %s", dir, strerror(errno));
        goto out;
    }
    /* the folder as it is, not through a link: a link planted there would
     * have this point's part written (and with --force replaced) wherever
     * it points */
    struct stat sb;
    if (lstat(dir, &sb) != 0) {
        rc = cli_error(1, CMD, "cannot read %s: %s", dir, strerror(errno));
        goto out;
    }
    if (!S_ISDIR(sb.st_mode)) {
        rc = cli_error(EXIT_USAGE, CMD, "'%s' is %s, which bptt neither "
                       "writes through nor replaces; remove it, or give "
                       "another --out", dir,
                       S_ISLNK(sb.st_mode) ? "a symbolic link"
                                           : "not a folder");
        goto out;
    }
    if (!s->force) {
        char *rec = NULL;
        rc = read_part(s, k, path, &rec);
        free(rec);
        if (rc == 0)
            cli_note(CMD, "point %zu is done already (%s)", k, path);
        if (rc != SWEEP_MISSING_OK)
            goto out;
        rc = 0;
    }
    sweep_catch_signals();
    one_record r = {NULL};
    rc = sweep_compute(s, &k, 1, sink_one, &r);
    if (rc == SWEEP_INTERRUPTED) {
        rc = 128 + (int)sweep_signal;
        cli_error(rc, CMD, "interrupted: point %zu not written", k);
    }
    if (rc == 0) {
        char *h = sweep_header(s);
        char *text = sweep_cat(h, r.line);
        rc = sweep_write_atomic(path, text, strlen(text));
        free(text);
        free(h);
    }
    free(r.line);
out:
    free(dir);
    free(path);
    return rc;
}

int sweep_merge(const sweep *s)
{
    int stop;
    int rc = sweep_check_done(s, &stop);
    if (stop)
        return rc;
    char **rec = calloc(s->g.n_points, sizeof *rec);
    if (!rec)
        return cli_error(1, CMD, "out of memory");
    char *header = NULL;
    bptt_strbuf missing = {0};
    size_t n_missing = 0, first_missing = 0;
    for (size_t k = 0; k < s->g.n_points && rc == 0; k++) {
        char *path = part_path(s, k);
        rc = read_part(s, k, path, &rec[k]);
        free(path);
        if (rc == SWEEP_MISSING_OK) {
            rc = 0;
            if (n_missing == 0)
                first_missing = k;
            if (n_missing < 20)
                bptt_strbuf_printf(&missing, "%s%zu", n_missing ? ", " : "",
                                   k);
            else if (n_missing == 20)
                bptt_strbuf_puts(&missing, ", ...");
            n_missing++;
        }
    }
    if (rc == 0 && n_missing)
        rc = cli_error(1, CMD, "--merge: %zu of %zu points are missing from "
                       "%s.parts: %s (run their jobs, e.g. --only %zu, then "
                       "merge again)", n_missing, s->g.n_points, s->out,
                       missing.p, first_missing);
    /* the header is this run's, as an uninterrupted sweep writes it
     * (each part's grid and build were checked against it) */
    if (rc == 0) {
        header = sweep_header(s);
        rc = sweep_write_result(s, header, rec);
    }
    bptt_strbuf_free(&missing);
    free(header);
    sweep_free_records(rec, s->g.n_points);
    return rc;
}

/* The first byte of v that a line of a shell script cannot hold as it
 * is (a control byte: newline, carriage return, tab, escape..., DEL), or
 * NULL. */
static const char *control_byte(const char *v)
{
    for (; *v; v++)
        if ((unsigned char)*v < 0x20 || (unsigned char)*v == 0x7f)
            return v;
    return NULL;
}

/* The bptt binary's path and the working directory, which every line of
 * a job list names: 0, or the error and 1. */
static int jobs_paths(char exe[PATH_MAX], char cwd[PATH_MAX])
{
    const ssize_t n = readlink("/proc/self/exe", exe, PATH_MAX - 1);
    if (n < 0)
        return cli_error(1, CMD, "cannot find the bptt binary: %s",
                         strerror(errno));
    exe[n] = '\0';
    if (!getcwd(cwd, PATH_MAX))
        return cli_error(1, CMD, "cannot read the working directory: %s",
                         strerror(errno));
    return 0;
}

static int refuse_value(const char *what, const char *v, const char *fix)
{
    const char *c = control_byte(v);
    if (!c)
        return 0;
    return cli_error(EXIT_USAGE, CMD, "--jobs: %s '%s' holds the control "
                     "byte 0x%02x, which a shell running the job list would "
                     "take for the end of a command; %s", what, v,
                     (unsigned char)*c, fix);
}

/* st is the file path names (when it exists). */
static int same_file(const struct stat *st, const char *path)
{
    struct stat o;
    return path && stat(path, &o) == 0 && o.st_dev == st->st_dev &&
           o.st_ino == st->st_ino;
}

int sweep_jobs_check(const sweep *s)
{
    static const char fix[] = "give a value without control bytes";
    int rc = 0;
    for (int k = 0; k < BPTT_GRID_KEYS && rc == 0; k++)
        if (s->g.text[k]) {
            char what[200];
            snprintf(what, sizeof what, "%s%s value",
                     s->g.label[k] ? s->g.label[k] : "the",
                     s->g.label[k] ? "" : " setting");
            rc = refuse_value(what, s->g.text[k], fix);
        }
    if (rc)
        return rc;
    char exe[PATH_MAX], cwd[PATH_MAX];
    if ((rc = jobs_paths(exe, cwd)) != 0)
        return rc;
    if ((rc = refuse_value("the working directory", cwd, "run it from a "
                           "directory whose path has none")) != 0 ||
        (rc = refuse_value("the bptt binary's path", exe, "run a bptt "
                           "whose path has none")) != 0)
        return rc;
    struct stat st;
    if (stat(s->jobs_file, &st) != 0)
        return 0;
    if (!s->force)
        return cli_error(EXIT_USAGE, CMD, "--jobs: %s exists; give another "
                         "name, or --force to replace it", s->jobs_file);
    char *partial = sweep_cat(s->out, ".partial");
    const char *what = same_file(&st, s->config)    ? "the --config file"
                       : same_file(&st, s->out)     ? "the --out file"
                       : same_file(&st, partial)    ? "the sweep's partial file"
                       : same_file(&st, "/proc/self/exe") ? "the bptt binary"
                                                          : NULL;
    free(partial);
    if (what)
        return cli_error(EXIT_USAGE, CMD, "--jobs: %s is %s; --force "
                         "replaces only an old job list: give the job list "
                         "another name", s->jobs_file, what);
    return 0;
}

/* The job list: a header of comments, the merge command, then one
 * `bptt sweep ... --only K` per point; every line first enters this
 * directory, so relative paths hold on any machine sharing it. */
int sweep_jobs(const sweep *s)
{
    char exe[PATH_MAX], cwd[PATH_MAX];
    int rc = jobs_paths(exe, cwd);
    if (rc != 0)
        return rc;
    bptt_strbuf base = {0};
    bptt_grid_command(&base, &s->g, cwd, exe, s->out);
    const char *mode = bptt_grid_mode_name(s->g.mode);
    bptt_strbuf b = {0};
    bptt_strbuf_printf(&b, "# bptt sweep job list: %zu points of grid %s "
              "(%s mode).\n"
              "# Run every line below that does not start with #, in any "
              "order, on any machine\n# that sees this directory; each "
              "writes %s.parts/K.jsonl. Then run the merge\n# command, "
              "which writes %s. scripts/sweep-parallel and "
              "scripts/slurm-sweep do both.\n# merge: %s --merge\n",
              s->g.n_points, s->g.hash, mode, s->out, s->out,
              base.p);
    for (size_t k = 0; k < s->g.n_points; k++)
        bptt_strbuf_printf(&b, "%s --only %zu\n", base.p, k);
    rc = b.failed || base.failed
             ? cli_error(1, CMD, "out of memory")
             : sweep_write_new(s->jobs_file, b.p, b.n, s->force);
    if (rc == 0 && isatty(2))
        cli_note(CMD, "wrote %zu jobs to %s; merge with: %s --merge",
                 s->g.n_points, s->jobs_file, base.p);
    bptt_strbuf_free(&b);
    bptt_strbuf_free(&base);
    return rc;
}

