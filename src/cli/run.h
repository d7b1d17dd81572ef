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
#include "twolevel.h"

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
    const char *disk;     /* --disk D: a slow level ("inf": no bound); NULL:
                             one level */
    const char *disk_dir; /* --disk-dir DIR; NULL: a temporary folder */
    int disk_direct;      /* --disk-direct: its file under O_DIRECT */
    double write_cost, read_cost; /* --write-cost, --read-cost (default 1) */
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

/* The plan of run a (src/cli/run_plan.c), one level (bptt_plan_make) or,
 * with --disk, two (run_twolevel_plan), at budget (resolved by
 * run_budget) on `threads`: 0 with *plan, *ps (the validator's counts)
 * and *slow (the slow level planned, its budget in bytes; 0 for one
 * level), or the one-line error and its exit code. */
int run_plan(const run_args *a, const bptt_session_sizes *z,
             const bptt_budget_resolved *budget, int threads,
             bptt_plan **plan, bptt_plan_stats *ps, bptt_slow_level *slow);

/* The two-level plan (twolevel.h: bptt_twolevel_make) of strategy name
 * for length T and the state sizes of z, at budget_bytes (budget_text as
 * written) and slow level *slow (its budget in bytes, or
 * BPTT_SLOW_UNLIMITED), its refusals said in one line for cmd, each
 * beginning with what ("" or "--plans item 2 (msm:1%/inf): "): 0 with
 * *plan and *ps, its actions' bytes added to *plan_bytes, or the error
 * and its exit code (3: an infeasible budget, naming the smallest). */
int run_twolevel_plan(const char *cmd, const char *what, const char *name,
                      size_t T, const bptt_session_sizes *z,
                      int64_t budget_bytes, const char *budget_text,
                      const bptt_slow_level *slow, bptt_plan **plan,
                      bptt_plan_stats *ps, double *plan_bytes);

/* A slow level of up to bytes in dir (NULL: the executor's temporary
 * folder; steps.h), under O_DIRECT where direct: the file made there and
 * removed as a run would, and room for the bytes on its filesystem
 * (bptt_steps_slow_check).  0, or the one-line refusal for cmd and
 * EXIT_USAGE. */
int run_slow_room(const char *cmd, const char *dir, int direct,
                  int64_t bytes);

#endif
