/* run.h: `bptt run`'s arguments, parsed (src/cli/run_args.c), for the command
 * and for the fuzz target of its parser (fuzz/args_run.c). */
#ifndef BPTT_CLI_RUN_H
#define BPTT_CLI_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "bptt.h"
#include "cell.h"
#include "cli.h"
#include "session.h"
#include "io/runrec.h"

typedef struct {
    const bptt_cell_type *cell;
    const bptt_strategy *strategy;
    int64_t layers, input, hidden, batch, length, iters, seed, threads;
    const char *memory;
    const char *task;
    const char *optimizer;
    double lr;
    enum output_format format;
    const char *dump_dir;
    const char *trace;
    const char *memory_trace; /* --memory-trace FILE, or NULL */
    int64_t fail_alloc; /* test hook: the tracked allocation to fail */
    int online;         /* --online: sequences are the text's lines */
    int separator;      /* --separator BYTE (default '\n'); -1 not given */
} run_args;

/* --online's longest sequence when --length is not given. */
#define RUN_ONLINE_LENGTH 1000

/* The model options, shared by `bptt run` and `bptt compare` (struct
 * option entries), with their defaults and their parser. */
#define RUN_MODEL_OPTIONS                                                     \
    {"cell", required_argument, NULL, 'c'},                                   \
        {"layers", required_argument, NULL, 'L'},                             \
        {"input", required_argument, NULL, 'X'},                              \
        {"hidden", required_argument, NULL, 'H'},                             \
        {"batch", required_argument, NULL, 'B'},                              \
        {"length", required_argument, NULL, 'T'},                             \
        {"seed", required_argument, NULL, 'S'},                               \
        {"threads", required_argument, NULL, 'j'},                            \
        {"task", required_argument, NULL, 'k'}
/* *a zeroed, then the model options' defaults (lstm, 1 layer, hidden 128,
 * batch 32, seed 1, copy). */
void run_model_defaults(run_args *a);
/* Option c of RUN_MODEL_OPTIONS with value arg into *a: 1 (*rc: 0, or the
 * error printed for cmd and EXIT_USAGE); 0 when c is not one of them. */
int run_model_option(const char *cmd, int c, const char *arg, run_args *a,
                     int *rc);

/* The session a run's arguments describe (session.h). */
void run_session_spec(const run_args *a, bptt_session_spec *sp);
/* The sizes of a's session and the checks of them against this machine's
 * memory that need no budget (the task, the data, the least a run
 * holds): 0 with *z filled, or the error printed for cmd and EXIT_USAGE. */
int run_preflight_sizes(const char *cmd, const run_args *a,
                        bptt_session_sizes *z);
/* need bytes held against this machine's memory (bptt_memory_fits): 0,
 * or the one-line refusal for cmd ("WHAT N MiB, more than this machine's
 * M GiB; ADVICE") and EXIT_USAGE. */
int run_fits(const char *cmd, const char *what, double need,
             const char *advice);

/* Under an address-space limit (ulimit -v): room for the OpenBLAS buffers
 * of threads beyond those it started with and for what a run of sizes z
 * holds with held_bytes of checkpoints (bptt_budget_resolved's): 0, or
 * the one-line refusal for cmd and EXIT_USAGE. */
int run_address_space_room(const char *cmd, int threads,
                           const bptt_session_sizes *z, double held_bytes);

/* The threads of a run: asked (0: OpenMP's default) given to OpenMP and
 * OpenBLAS, after run_address_space_room made sure their buffers fit
 * (held_bytes: the most checkpoint bytes any of its plans holds).  0 with
 * *threads set, or the refusal's exit code. */
int run_set_threads(const char *cmd, int64_t asked,
                    const bptt_session_sizes *z, double held_bytes,
                    int *threads);

/* The timed iterations (after the one warm-up) whose median the text
 * output calls robust; the default --iters times that many. */
#define RUN_ROBUST_TIMED 5

/* The usage text (--help), onto f. */
void run_usage(FILE *f);

/* The arguments into *a, checked: 0, *help set for --help, or the
 * one-line error printed and EXIT_USAGE. */
int run_parse_args(int argc, char **argv, run_args *a, int *help);

/* A budget as written (--memory, an item of compare's --plans) resolved
 * against a run's sizes (bptt_budget_resolve, the one resolution: a unit
 * required, "200" being slots or bytes): 0 with *r, or the one-line error
 * for opt and EXIT_USAGE. */
int run_budget(const char *cmd, const char *opt, const char *text, size_t T,
               const bptt_session_sizes *z, bptt_budget_resolved *r);
/* Its form alone, before the sizes are known: 0, or the error. */
int run_budget_form(const char *cmd, const char *opt, const char *text);

/* ---- --online (run_online.c) ------------------------------------------- */

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

#endif
