/* sweep.h: what the files of `bptt sweep` share (src/cli/sweep*.c): the
 * command's state over a grid (grid.h), the steps each file does, and the
 * shelf of helpers.  From the top: sweep.c: options, help, the command;
 * sweep_file.c: the direct sweep (partial file, progress, result);
 * sweep_batch.c: --only, --merge, --jobs; sweep_run.c: the points'
 * records in run mode (children), and the dispatch by mode; sweep_plan.c:
 * plan mode; sweep_read.c: files read back; sweep_util.c: the helpers and
 * the signals, which call none of the others.  Internal to the command
 * line; the fuzz targets of fuzz/ call the parser through it. */
#ifndef BPTT_CLI_SWEEP_H
#define BPTT_CLI_SWEEP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "grid.h"
#include "strbuf.h"

#define SWEEP_CMD "sweep"
#define SWEEP_INTERRUPTED (-1) /* compute: stopped by SIGINT or SIGTERM */

enum sweep_action { ACT_SWEEP, ACT_LIST, ACT_JOBS, ACT_ONLY, ACT_MERGE };

typedef struct {
    bptt_grid g;
    int force;
    enum sweep_action action;
    int64_t only;
    const char *jobs_file, *config;
    const char *out;
} sweep;

/* sweep.c: the options (and --config) into s, the grid built and the
 * outputs checked: 0 or the error printed and its exit code; *help set
 * for --help.  sweep_free accepts a zeroed or parsed sweep. */
int sweep_parse_args(int argc, char **argv, sweep *s, int *help);
void sweep_free(sweep *s);
void sweep_list(const sweep *s); /* --list */

/* Receives each finished point's record line; nonzero stops the sweep. */
typedef int (*sweep_sink)(void *ctx, size_t point, const char *line,
                          size_t len);

/* sweep_plan.c: every plan point's budget against its smallest feasible
 * one, before any work; the records of the points todo[0..n). */
int sweep_plan_preflight(const sweep *s);
int sweep_compute_plan(const sweep *s, const size_t *todo, size_t n,
                       sweep_sink sink, void *ctx);

/* sweep_run.c: the records of todo[0..n) in the grid's mode (run: one
 * child each). */
int sweep_compute(const sweep *s, const size_t *todo, size_t n,
                  sweep_sink sink, void *ctx);

/* sweep_file.c: the direct sweep. */
int sweep_direct(const sweep *s);
/* Whether FILE is done: 0 to go on, or the exit code (0 included) with
 * *stop set. */
int sweep_check_done(const sweep *s, int *stop);
/* FILE from the header and every record, in grid order. */
int sweep_write_result(const sweep *s, const char *header, char **rec);

/* sweep_util.c: the shelf.  Out of memory: the error, and exit. */
void sweep_out_of_memory(void);
void *sweep_alloc(size_t n);
char *sweep_dup(const char *s);
char *sweep_take(bptt_strbuf *b); /* b's string */
char *sweep_cat(const char *a, const char *b);
char *sweep_header(const sweep *s);
char *sweep_point_text(const sweep *s, size_t k);
void sweep_free_records(char **rec, size_t n);
/* fsync of the directory holding path (filewrite.h). */
void sweep_sync_dir(const char *path);
/* text to path.tmp.PID, fsync, rename to path: 0, or the error printed
 * and 1. */
int sweep_write_atomic(const char *path, const char *text, size_t n);
/* The same, but without force never over a file that exists when it is
 * put in place (link, which fails on an existing name: no race can
 * clobber one): 0, or the error printed and its exit code (EXIT_USAGE for
 * an existing file). */
int sweep_write_new(const char *path, const char *text, size_t n,
                    int force);
/* SIGINT and SIGTERM set sweep_signal from the call on, and wake a poll
 * on sweep_wake_fd() (the read end of a pipe; -1 before the call). */
extern volatile sig_atomic_t sweep_signal;
void sweep_catch_signals(void);
int sweep_wake_fd(void);

/* sweep_batch.c: before any work, for --jobs: every value that reaches
 * the job list (each setting of the grid, --out, the working directory,
 * the bptt binary's path) free of control bytes, and JOBFILE new (or, with
 * --force, none of the sweep's own files and not the binary): 0, or the
 * error printed and EXIT_USAGE. */
int sweep_jobs_check(const sweep *s);

/* sweep_read.c: what a sweep reads back, none of it trusted: a --config
 * file at most SWEEP_CONFIG_MAX bytes (1 MiB: lines of settings, ranges
 * for long axes); FILE.partial, a part or a finished FILE at most
 * bptt_records_file_cap (records.h), whose records are checked against
 * the grid by bptt_record_check. */
#define SWEEP_CONFIG_MAX ((size_t)1 << 20)
/* sweep_readback's code: a missing file is no error (returns this, quiet);
 * other failures then exit 1. */
#define SWEEP_MISSING_OK (-2)
/* opt (may be NULL) names the option that gave path, as in "--config:
 * 'FILE' is a directory".  path (or the open fd, from its offset) whole
 * into *text (the caller frees it) and *len, at most max bytes, through
 * bptt_readback: 0, or the one-line error printed (a directory, a FIFO or
 * a device named as such, a file too big, a NUL with its line and column,
 * each followed by hint, what would work) and its exit code: code for a
 * failed read, EXIT_USAGE for the rest. */
int sweep_readback(const char *opt, const char *path, int fd, size_t max,
                   int code, const char *hint, char **text, size_t *len);

/* sweep_batch.c */
int sweep_only(const sweep *s);
int sweep_merge(const sweep *s);
int sweep_jobs(const sweep *s);

#endif
