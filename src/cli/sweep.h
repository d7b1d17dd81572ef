/* sweep.h: what the files of `bptt sweep` share (src/cli/sweep*.c): the
 * command's state over a grid (grid.h), the steps each file does, and the
 * file helpers.  sweep.c: options, help, the command; sweep_plan.c: plan
 * mode; sweep_run.c: run mode (children) and signals; sweep_file.c: the
 * direct sweep (partial file, progress, result); sweep_batch.c: --only,
 * --merge, --jobs.  Internal to the command line; the fuzz targets of
 * fuzz/ call the parser through it. */
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

/* sweep_run.c: SIGINT and SIGTERM set sweep_signal from the call on; the
 * records of todo[0..n) in the grid's mode (run: one child each). */
extern volatile sig_atomic_t sweep_signal;
void sweep_catch_signals(void);
int sweep_compute(const sweep *s, const size_t *todo, size_t n,
                  sweep_sink sink, void *ctx);

/* sweep_file.c: the direct sweep, and the helpers of files. */
int sweep_direct(const sweep *s);
/* Whether FILE is done: 0 to go on, or the exit code (0 included) with
 * *stop set. */
int sweep_check_done(const sweep *s, int *stop);
/* FILE from the header and every record, in grid order. */
int sweep_write_result(const sweep *s, const char *header, char **rec);
void sweep_free_records(char **rec, size_t n);
/* b's string; out of memory: the error, and exit. */
char *sweep_take(bptt_strbuf *b);
char *sweep_cat(const char *a, const char *b);
char *sweep_header(const sweep *s);
char *sweep_point_text(const sweep *s, size_t k);
int sweep_write_all(int fd, const char *buf, size_t n); /* 0 or errno */
char *sweep_read_file(const char *path, size_t *len);   /* NULL: errno */
void sweep_sync_dir(const char *path);
/* text to path.tmp.PID, fsync, rename to path: 0, or the error printed
 * and 1. */
int sweep_write_atomic(const char *path, const char *text, size_t n);

/* sweep_batch.c */
int sweep_only(const sweep *s);
int sweep_merge(const sweep *s);
int sweep_jobs(const sweep *s);

#endif
