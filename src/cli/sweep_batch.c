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

/* s for a POSIX shell, in single quotes. */
static void shell_word(bptt_strbuf *b, const char *s)
{
    bptt_strbuf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            bptt_strbuf_puts(b, "'\\''");
        else
            bptt_strbuf_add(b, s, 1);
    }
    bptt_strbuf_puts(b, "'");
}

static char *part_path(const sweep *s, size_t point)
{
    bptt_strbuf b = {0};
    bptt_strbuf_printf(&b, "%s.parts/%zu.jsonl", s->out, point);
    return sweep_take(&b);
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
    if (!s->force && access(path, F_OK) == 0) {
        size_t len;
        char *text = sweep_read_file(path, &len);
        char other[17] = "";
        const int m = text ? bptt_grid_header_matches(&s->g, text, other) : -1;
        free(text);
        if (m == 1)
            fprintf(stderr, "bptt sweep: point %zu is done already (%s)\n", k,
                    path);
        else
            rc = cli_error(EXIT_USAGE, CMD, "%s holds a point of another "
                           "sweep (grid %s, this one is %s); remove %s, or "
                           "give --force", path, other, s->g.hash, dir);
        goto out;
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
        size_t len;
        char *text = sweep_read_file(path, &len);
        if (!text) {
            if (n_missing == 0)
                first_missing = k;
            if (n_missing < 20)
                bptt_strbuf_printf(&missing, "%s%zu", n_missing ? ", " : "",
                                   k);
            else if (n_missing == 20)
                bptt_strbuf_puts(&missing, ", ...");
            n_missing++;
            free(path);
            continue;
        }
        char other[17] = "";
        char *nl = memchr(text, '\n', len);
        const int m = bptt_grid_header_matches(&s->g, text, other);
        if (m != 1 || !nl || bptt_record_point(nl + 1) != (int64_t)k ||
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
            if (!bptt_grid_header_same_build(text, was, sizeof was)) {
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
                header = sweep_cat(text, "\n");
                nl[0] = '\n';
            }
            rec[k] = sweep_cat(nl + 1, "");
        }
        free(text);
        free(path);
    }
    if (rc == 0 && n_missing)
        rc = cli_error(1, CMD, "--merge: %zu of %zu points are missing from "
                       "%s.parts: %s (run their jobs, e.g. --only %zu, then "
                       "merge again)", n_missing, s->g.n_points, s->out,
                       missing.p, first_missing);
    if (rc == 0)
        rc = sweep_write_result(s, header, rec);
    bptt_strbuf_free(&missing);
    free(header);
    sweep_free_records(rec, s->g.n_points);
    return rc;
}

/* The job list: a header of comments, the merge command, then one
 * `bptt sweep ... --only K` per point; every line first enters this
 * directory, so relative paths hold on any machine sharing it. */
int sweep_jobs(const sweep *s)
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
    bptt_strbuf base = {0};
    bptt_strbuf_puts(&base, "cd ");
    shell_word(&base, cwd);
    bptt_strbuf_puts(&base, " && ");
    shell_word(&base, exe);
    const char *mode = bptt_grid_mode_name(s->g.mode);
    bptt_strbuf_printf(&base, " sweep --mode %s", mode);
    for (int k = 0; k < BPTT_GRID_KEYS; k++) {
        if (!s->g.text[k] || k == BPTT_GK_MODE || k == BPTT_GK_OUT ||
            k == BPTT_GK_FORMAT || k == BPTT_GK_INFEASIBLE)
            continue;
        bptt_strbuf_printf(&base, " --%s ", bptt_grid_keys[k].name);
        shell_word(&base, s->g.text[k]);
    }
    bptt_strbuf_printf(&base, " --format %s",
              s->g.csv ? "csv" : "jsonl");
    if (s->g.record_infeasible)
        bptt_strbuf_puts(&base, " --infeasible record");
    bptt_strbuf_puts(&base, " --out ");
    shell_word(&base, s->out);

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
    const int rc = sweep_write_atomic(s->jobs_file, b.p, b.n);
    if (rc == 0 && isatty(2))
        fprintf(stderr, "bptt sweep: wrote %zu jobs to %s; merge with: %s "
                "--merge\n", s->g.n_points, s->jobs_file, base.p);
    bptt_strbuf_free(&b);
    bptt_strbuf_free(&base);
    return rc;
}

