/* exhaustive_slow.h: the true optimum of the two-level cost model by
 * exhaustive search (tests/exhaustive_slow.c).
 *
 * Promises: the least cost over every schedule of the two-level model
 * (include/bptt/twolevel.h; the slow level's ops of bptt.h, as
 * src/plan/plan.c's validator runs them), for short sequences, found by a
 * shortest-path search over the schedule's whole state space, with the
 * schedule itself when asked.  It shares no code or recursion with the
 * planner in src/plan/twolevel.c, so the tests can hold the planner to it.
 *
 * Costs are integers, scaled by h so that every move costs a whole number:
 * a forward op costs h, a write of u units wd x u, a read of u units
 * rd x u.  The scaled total is h x (forward ops + wd x written units / h
 * + rd x read units / h); with h = 1 it is the cost itself.
 *
 * Legend: t sequence length, h hidden-state units, s internal-state units,
 * m fast budget in units (h(0) counted), d slow budget in units.
 */
#ifndef BPTT_TESTS_EXHAUSTIVE_SLOW_H
#define BPTT_TESTS_EXHAUSTIVE_SLOW_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"

/* Longest sequence the search accepts (its states hold four sets of t
 * bits each). */
#define EXSLOW_MAX_T 8

/* A slow level that holds anything. */
#define EXSLOW_UNLIMITED INT64_MAX

typedef struct {
    int t;
    int64_t h, s;
    int64_t m;      /* fast budget */
    int64_t d;      /* slow budget; 0: no slow level; EXSLOW_UNLIMITED */
    int64_t wd, rd; /* per unit written or read, in the scaled cost */
    int internal;   /* nonzero: internal states may be kept (msm); zero:
                       hidden states only (hsm) */
} exslow_problem;

typedef struct {
    int64_t cost;     /* scaled optimum (h x the cost); -1: no schedule */
    int64_t forward;  /* forward ops of the schedule found */
    int64_t wunits;   /* units it writes */
    int64_t runits;   /* units it reads */
    size_t states;    /* states the search settled or reached */
    bptt_action *path; /* the schedule (with every free and drop), when
                          asked: free() it; NULL otherwise */
    size_t n_path;
} exslow_result;

/* Search.  want_path: also return the optimal schedule as actions
 * (every state released by the end, so it passes bptt_plan_validate).
 * Returns 0, or -1 for bad arguments (t < 1 or > EXSLOW_MAX_T, h < 1,
 * s < h, m < 0, d < 0, wd or rd < 0) or memory that ran out. */
int exslow_solve(const exslow_problem *pb, int want_path, exslow_result *out);

#endif
