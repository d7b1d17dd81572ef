/* live.h: what `bptt run` does while it runs (src/cli/run.c), besides
 * the measurement and the trace (timing.h): the progress line on a
 * terminal, and SIGINT and SIGTERM turned into a stop between iterations.
 * Command line code: the progress line is the only thing it prints. */
#ifndef BPTT_CLI_LIVE_H
#define BPTT_CLI_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "timing.h"

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
