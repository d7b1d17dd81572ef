/* cli_live.h: what `bptt run` does while it runs (src/cli/run.c): the
 * measurement of each iteration (wall, process CPU and the hypervisor's
 * steal), the trace written row by row, the progress line on a terminal,
 * and SIGINT and SIGTERM turned into a stop between iterations.  Command
 * line code: the progress line is the only thing it prints. */
#ifndef BPTT_CLI_LIVE_H
#define BPTT_CLI_LIVE_H

#include <stddef.h>
#include <stdint.h>

/* ---- measurement -------------------------------------------------------- */

/* The three clocks at one moment, in seconds: monotonic wall time, the
 * process's CPU time (all threads), and the steal of the whole machine
 * (/proc/stat; 0 when unreadable). */
typedef struct {
    double wall, cpu, steal;
} live_clock;

/* One iteration: the differences of two readings. */
typedef struct {
    double wall, cpu, steal;
} live_sample;

/* Reads the clocks at the start of what is measured and at its end, the
 * CPU clock innermost (its window lies within the wall clock's: one busy
 * thread's share stays at most 1) and the steal outermost. */
void live_clock_start(live_clock *c);
void live_clock_stop(live_clock *c);
void live_sample_between(const live_clock *start, const live_clock *end,
                         live_sample *s);

/* The timed iterations (iterations 2..n, or 1 when n = 1) summed up.  An
 * iteration was disturbed when its CPU share, cpu / (wall x threads), was
 * below 0.90 (a threshold chosen by measurement: cli_live.c), or its steal
 * above 10% of wall x threads. */
typedef struct {
    double seconds_median, seconds_min, seconds_max;
    double cpu_share_median, cpu_share_min;
    double steal_seconds;
    int64_t disturbed_iters, timed_iters;
    double seconds_trend; /* last quarter's median / first quarter's */
} live_summary;

/* 0, or ENOMEM (the summary needs a copy of the samples). */
int live_summarize(const live_sample *s, size_t n, int threads,
                   live_summary *out);

/* ---- the trace ---------------------------------------------------------- */

#define LIVE_TRACE_HEADER \
    "iteration,loss,grad_norm,seconds,cpu_seconds,steal_seconds\n"

typedef struct {
    int fd;        /* -1: none */
    int64_t rows;  /* complete rows written */
    long long end; /* bytes written: the end of the last complete row */
} live_trace;

/* Creates path (which must not exist: O_EXCL) and writes the header: 0 or
 * an errno value. */
int live_trace_open(live_trace *t, const char *path);
/* One row, written whole with one write and no buffer in between, so that
 * `tail -f` shows it; a row that could not be written whole is cut off
 * again.  0 or an errno value. */
int live_trace_row(live_trace *t, int64_t iteration, double loss,
                   double grad_norm, const live_sample *s);
/* Closes the trace; with keep 0 (or no complete row) removes it.  Returns
 * whether the file was kept. */
int live_trace_close(live_trace *t, const char *path, int keep);

/* ---- the progress line -------------------------------------------------- */

typedef struct {
    int on;        /* stderr is a terminal */
    size_t width;  /* the most characters a line may have */
    size_t shown;  /* characters of the line now on the terminal */
    double last;   /* when it was last drawn */
    double timed;  /* seconds of the timed iterations so far */
} live_progress;

void live_progress_start(live_progress *p);
/* After iteration k (1-based) of n took `seconds`: redraws the line (at
 * most ten times a second, and always after the first iteration). */
void live_progress_show(live_progress *p, int64_t k, int64_t n, double loss,
                        double seconds);
/* Clears the line, so that what is printed next starts on a clean one. */
void live_progress_clear(live_progress *p);

/* ---- SIGINT and SIGTERM ------------------------------------------------- */

/* From here on the first SIGINT or SIGTERM only sets a flag; a second of
 * the same kind ends the process at once (the default action). */
void live_signals_catch(void);
/* The signal caught (SIGINT or SIGTERM), or 0. */
int live_signal_caught(void);
/* Back to the handlers there were before live_signals_catch. */
void live_signals_restore(void);

#endif
