/* timing.h: what a training run measures while it runs: each
 * iteration's wall time, the process's CPU time and the machine's steal
 * (/proc/stat), summed up with how disturbed the timing was (doc/run.md),
 * and the trace: one csv row per iteration, written whole as the run goes
 * (`tail -f` shows it).  Library code: no output but the trace file.
 */
#ifndef BPTT_TIMING_H
#define BPTT_TIMING_H

#include <stddef.h>
#include <stdint.h>

#include "exec.h"

/* ---- measurement -------------------------------------------------------- */

/* The three clocks at one moment, in seconds: monotonic wall time, the
 * process's CPU time (all threads), and the steal of the whole machine
 * (/proc/stat; 0 when unreadable). */
typedef struct {
    double wall, cpu, steal;
} bptt_clock;

/* One iteration: the differences of two readings, and of the wall time
 * the seconds in forward and in backward ops and in the slow level's
 * transfers (bptt_exec_stats; the caller's to set, 0 when not
 * measured). */
typedef struct {
    double wall, cpu, steal;
    double forward, backward;
    double slow; /* in the slow level's pwrite and pread */
} bptt_sample;

/* Reads the clocks at the start of what is measured and at its end, the
 * CPU clock innermost (its window lies within the wall clock's: one busy
 * thread's share stays at most 1) and the steal outermost. */
void bptt_clock_start(bptt_clock *c);
void bptt_clock_stop(bptt_clock *c);
void bptt_sample_between(const bptt_clock *start, const bptt_clock *end,
                         bptt_sample *s);

/* The timed iterations (iterations 2..n, or 1 when n = 1) summed up.  An
 * iteration was disturbed when its CPU share, cpu / (wall x threads), was
 * below 0.90 (a threshold chosen by measurement: src/io/timing.c), or its steal
 * above 10% of wall x threads. */
typedef struct {
    double seconds_median, seconds_min, seconds_max;
    double cpu_share_median, cpu_share_min;
    double steal_seconds;
    int64_t disturbed_iters, timed_iters;
    double seconds_trend; /* last quarter's median / first quarter's */
    /* medians of the samples' forward and backward seconds, each on its
     * own (their sum may exceed seconds_median by a little when they
     * come from different iterations; in one iteration it never does) */
    double forward_seconds_median, backward_seconds_median;
    double slow_seconds_median; /* the samples' slow seconds */
} bptt_timing;

/* 0, or ENOMEM (the summary needs a copy of the samples). */
int bptt_timing_summarize(const bptt_sample *s, size_t n, int threads,
                   bptt_timing *out);

/* ---- the trace ---------------------------------------------------------- */

#define BPTT_TRACE_HEADER \
    "iteration,loss,grad_norm,seconds,cpu_seconds,steal_seconds\n"

typedef struct {
    int fd;        /* -1: none */
    int64_t rows;  /* complete rows written */
    long long end; /* bytes written: the end of the last complete row */
} bptt_trace;

/* Creates path (which must not exist: O_EXCL) and writes the header: 0 or
 * an errno value. */
int bptt_trace_open(bptt_trace *t, const char *path);
/* One row, written whole with one write and no buffer in between, so that
 * `tail -f` shows it; a row that could not be written whole is cut off
 * again.  0 or an errno value. */
int bptt_trace_row(bptt_trace *t, int64_t iteration, double loss,
                   double grad_norm, const bptt_sample *s);
/* Closes the trace; with keep 0 (or no complete row) removes it.  Returns
 * whether the file was kept. */
int bptt_trace_close(bptt_trace *t, const char *path, int keep);

/* ---- the memory trace ----------------------------------------------------- */

/* Columns: the action's index in the plan (from 0), its kind (the op's
 * name: advance, save_hidden, ..., backward, free_internal), its step,
 * the checkpoint and total tracked bytes held after it, the forward ops
 * run so far, and the seconds of a forward or backward op (%.9g; 0
 * for other actions). */
#define BPTT_MEMTRACE_HEADER \
    "action,kind,step,checkpoint_bytes,total_bytes,forward_ops_so_far," \
    "seconds\n"

/* The n points of one iteration (bptt_exec_run_recorded) as csv into path,
 * which must not exist: written into a new file beside it
 * (path.tmp.PID), synced, then linked to path, which is never replaced
 * (link fails when it exists), so path is whole or absent.  0, or an errno
 * value (EEXIST: path exists); nothing is left behind on an error. */
int bptt_memtrace_write(const char *path, const bptt_exec_point *points,
                        size_t n);

#endif
