/* run_online.h: `bptt run --online` (run_online.c): a text's lines as
 * sequences whose end the data decides, and one iteration's gradients
 * under the online planner. */
#ifndef BPTT_CLI_RUN_ONLINE_H
#define BPTT_CLI_RUN_ONLINE_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"
#include "io/runrec.h"
#include "run.h"

/* A sequence: the bytes of a line (cut at --length) and the byte after its
 * last step: the separator, or the next byte of a line that was cut. */
typedef struct {
    const unsigned char *at;
    size_t len;
    unsigned char end;
} run_line;

struct run_text {
    unsigned char *bytes;
    size_t n_bytes;
    run_line *lines;
    size_t n_lines, longest;
    int32_t class_of[256]; /* byte -> class: the sorted distinct bytes */
    size_t classes;
};

/* What one --online iteration did. */
struct run_row {
    int64_t steps, forward_ops, plan_forward_ops;
    size_t peak_bytes;
    double loss;
};

/* The text of --task text:FILE split at --separator into its non-empty
 * lines, each cut at max steps: 0 with *out, or the error printed and its
 * exit code.  Before any work (the task reads the file again). */
int run_text_load(const run_args *a, size_t max, struct run_text **out);
void run_text_free(struct run_text *t); /* accepts NULL */
/* The gradients of --online iteration it into session's: line it
 * (cyclically), planned online (hsm, msm) or read whole and run by full
 * BPTT (a->strategy); r's counts and *w, the iteration's row. */
int run_online_gradients(const run_args *a, bptt_run_report *r,
                         bptt_session *session, const struct run_text *text,
                         int64_t budget_bytes, int64_t quantum, int64_t it,
                         struct run_row *w, bptt_session_fault *f);

#endif /* BPTT_CLI_RUN_ONLINE_H */
