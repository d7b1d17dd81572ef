/* twolevel.h: plans over two levels of storage (doc/twolevel.md).
 *
 * Today's plans keep their checkpoints in one memory (the fast level: a
 * GPU's memory, or RAM).  A two-level plan may also write hidden and
 * internal states to a slower level (host memory behind PCIe, a local
 * disk) and read them back: a write costs now and a read costs each time,
 * but the fast memory they free saves recomputation.  The planner is the
 * exact optimum of the cost
 *
 *     forward ops + write_cost x (states written) + read_cost x (states read)
 *
 * with each state counted in hidden states' worth (an internal state
 * alpha of them), under a budget on each level that holds at every
 * moment.  "hsm" stores hidden states only (on either level; with no slow
 * level it is binomial checkpointing), "msm" both kinds on either level.
 *
 * The plan is an ordinary bptt_plan whose slow_budget is set and whose
 * actions may include the slow level's ops (bptt.h: write_*, read_*,
 * drop_*); bptt_plan_validate checks it and reports both levels' peaks
 * and the states moved.
 *
 * Every function returns a status of enum bptt_status (or the value said
 * beside it); nothing here prints or exits. */
#ifndef BPTT_TWOLEVEL_H
#define BPTT_TWOLEVEL_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"

#pragma GCC visibility push(default)

/* A slow level that holds anything (bptt_slow_level.budget). */
#define BPTT_SLOW_UNLIMITED INT64_MAX

/* The largest write or read cost accepted, in forward ops per hidden
 * state (a finite, non-negative number with at most this value). */
#define BPTT_SLOW_COST_MAX 1e6

typedef struct {
    int64_t budget;    /* units on the slow level at any moment (0: none;
                          BPTT_SLOW_UNLIMITED: no bound) */
    double write_cost; /* forward ops per hidden state written (>= 0) */
    double read_cost;  /* forward ops per hidden state read (>= 0) */
} bptt_slow_level;

/* What a two-level plan costs (the planner's optimum; the validator
 * counts the same of the plan it emits). */
typedef struct {
    int64_t forward_ops;
    int64_t slow_writes;      /* states written */
    int64_t slow_reads;       /* states read */
    int64_t slow_write_units; /* their units */
    int64_t slow_read_units;
    double cost; /* forward_ops + write_cost x write_units / h
                    + read_cost x read_units / h */
} bptt_twolevel_cost;

typedef struct bptt_twolevel bptt_twolevel;

/* The optimal two-level table of strategy ("hsm" or "msm": others
 * BPTT_EUNKNOWN) for length t, state units h <= s, fast budget m units
 * (h(0) counted, as in bptt.h) and the slow level `slow`.  The costs are
 * kept in 2^-20 forward ops: a write or read cost is rounded to that.
 * BPTT_EINFEASIBLE when m < h (h(0) starts in fast memory);
 * BPTT_ETOOBIG when the table passes half of physical memory
 * (bptt_twolevel_bytes_needed), before allocating; BPTT_EINVAL: NULL
 * arguments, t < 1, h < 1, s < h, m < 0, a negative slow budget, a cost
 * negative, NaN or above BPTT_SLOW_COST_MAX. */
int bptt_twolevel_alloc(bptt_twolevel **out, const char *strategy, size_t t,
                        int64_t h, int64_t s, int64_t m,
                        const bptt_slow_level *slow);
/* bptt_twolevel_alloc on `threads` threads (0: the planner's default,
 * OMP_NUM_THREADS or else the CPUs online; bptt_twolevel_alloc builds on
 * one).  The table is the same cell for cell, choices included, on any
 * number of threads; a small table (few budget columns) builds on one. */
int bptt_twolevel_alloc_threads(bptt_twolevel **out, const char *strategy,
                                size_t t, int64_t h, int64_t s, int64_t m,
                                const bptt_slow_level *slow, int threads);
void bptt_twolevel_free(bptt_twolevel *tl); /* accepts NULL */

/* Bytes the table of these arguments holds, at most (its budget axes
 * counted from above: doc/twolevel.md 3; 0: bad arguments; SIZE_MAX: more
 * than a size_t). */
size_t bptt_twolevel_bytes_needed(const char *strategy, size_t t, int64_t h,
                                  int64_t s, int64_t m,
                                  const bptt_slow_level *slow);

/* The optimum for the table's length and budgets. */
int bptt_twolevel_cost_of(const bptt_twolevel *tl, bptt_twolevel_cost *out);

/* The optimum, in forward ops, for a length t' <= t, a fast budget m' <= m
 * and a slow budget d' <= d (BPTT_SLOW_UNLIMITED where the table's is):
 * the table holds them all.  -1 when infeasible, out of the table or tl
 * is NULL. */
double bptt_twolevel_cost_at(const bptt_twolevel *tl, size_t t, int64_t m,
                             int64_t d);

/* The plan of that optimum (budget m, slow_budget the slow level's). */
int bptt_twolevel_plan(const bptt_twolevel *tl, bptt_plan **out);
/* The number of actions bptt_twolevel_plan gives, counted by unrolling
 * the plan without storing it (as long as making it, holding only the
 * unrolling stack), so that a caller can size the plan before it is
 * made; -1 when tl is NULL, the optimum is infeasible or the stack could
 * not grow. */
int64_t bptt_twolevel_plan_actions(const bptt_twolevel *tl);

/* The cost above of a plan whose validator's counts are st (the slow
 * level's units written and read, its hidden states h units each) under
 * the costs of `slow` (its budget is not read): forward_ops + write_cost x
 * slow_write_units / h + read_cost x slow_read_units / h.  NaN when st or
 * slow is NULL or h < 1. */
double bptt_twolevel_stats_cost(const bptt_plan_stats *st, int64_t h,
                                const bptt_slow_level *slow);

/* ---- one call: sizes in, a checked plan out --------------------------- */

/* The optimal two-level plan of strategy ("hsm" or "msm") for t steps
 * whose hidden and internal states take hidden_bytes and internal_bytes,
 * under budget_bytes of fast memory (h(0) counted) and a slow level of
 * slow->budget BYTES (0: none; BPTT_SLOW_UNLIMITED: no bound) with its
 * costs, as bptt_plan_make (bptt.h) makes one-level plans: both budgets
 * are taken in whole units of bptt_units_from_bytes's quantum, the table
 * built (on the planner's default threads: bptt_twolevel_alloc_threads
 * with 0), the plan made and validated.  On BPTT_OK *out holds the plan (in
 * those units: its budget and slow_budget; free it with bptt_plan_free)
 * and *stats the validator's counts, peak_bytes set (the slow level's
 * peak in bytes is slow_peak_units times the quantum).
 * BPTT_EINFEASIBLE: the fast budget holds no hidden state, and
 * *min_budget_bytes (may be NULL) says hidden_bytes.  BPTT_ETOOBIG: the
 * table (stats->n_actions 0) or the plan beside it (stats->n_actions its
 * actions) would take more than half of physical memory, refused before
 * it is made.  BPTT_EUNKNOWN: a strategy the two-level planner does not
 * plan; BPTT_EINVAL as bptt_twolevel_alloc, or for sizes as
 * bptt_units_from_bytes; BPTT_ENOMEM. */
int bptt_twolevel_make(const char *strategy, size_t t, int64_t hidden_bytes,
                       int64_t internal_bytes, int64_t budget_bytes,
                       const bptt_slow_level *slow, bptt_plan **out,
                       bptt_plan_stats *stats, int64_t *min_budget_bytes);

/* How many of the plan's actions use the slow level (write_*, read_*,
 * drop_*; plan NULL: 0).  The executors (steps.h, exec.h, session.h) run
 * such plans with the slow level in a file (steps.h: slow_dir). */
size_t bptt_plan_slow_actions(const bptt_plan *plan);

#pragma GCC visibility pop

#endif /* BPTT_TWOLEVEL_H */
