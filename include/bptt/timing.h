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

/* ---- measurement -------------------------------------------------------- */

/* The three clocks at one moment, in seconds: monotonic wall time, the
 * process's CPU time (all threads), and the steal of the whole machine
 * (/proc/stat; 0 when unreadable). */
typedef struct {
    double wall, cpu, steal;
} bptt_clock;

/* One iteration: the differences of two readings. */
typedef struct {
    double wall, cpu, steal;
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

#endif
