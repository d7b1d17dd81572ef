/* compare.h: two or more plans timed against a reference inside one
 * process, each next to the reference, many times, so that the ratio of
 * their iteration times is trustworthy where timings taken in separate
 * processes (which differ widely on shared machines: doc/performance.md,
 * "How to measure") or far apart in one process
 * (the machine's speed drifts over seconds) are not.
 *
 * The procedure (bptt_compare_run).  Every iteration is
 * bptt_session_gradients on batch 0 with the session's parameters, which
 * are never updated, so every plan computes the same gradients (the
 * project's promise: same batch, same parameters, bit-identical
 * gradients across plans).  One untimed iteration of the reference (plan
 * 0) comes first and its gradient arena is copied.  Then warmup + rounds
 * rounds, the first warmup discarded.  Round r runs one pair for each plan
 * p, plan 0 included, in the order p = (j + r) mod n for j = 0..n-1: the
 * reference's iteration and p's, next to each other, the reference first
 * in even rounds and second in odd ones (cancelling what running first or
 * second does: wholly when the measured rounds are even in number, since
 * any warmup + rounds consecutive rounds hold rounds / 2 of each parity).  Each iteration is timed by timing.h's clocks (wall
 * seconds).  For plan p the round gives one seconds sample (p's iteration)
 * and one ratio sample, p's seconds over the reference's in the same
 * pair.  Plan 0's pair is the reference against itself (an A/A pair): its
 * ratio samples show how much two neighbouring iterations of one plan
 * differ, the noise floor of every other ratio; their median is near 1.
 *
 * After every iteration of every round (the warm-up included) the
 * gradients are compared byte for byte (memcmp) with the copy;
 * gradients_identical is 1 only when every one of p's iterations matched.
 * Counts and bytes are exact: the forward ops and checkpoint peak bytes of
 * p's first measured iteration (bptt_exec_stats, and the tracked
 * allocator's peaks, which bptt_session_gradients resets first).  Each
 * measured iteration of p also gives the wall seconds of its forward ops
 * per forward op, from which the predicted ratio below is made.
 *
 * Summaries.  The median of an even count is the mean of the middle two.
 * The interval for the median ratio is distribution-free, from order
 * statistics: with R samples sorted x(1) <= ... <= x(R), [x(k), x(R+1-k)]
 * holds the true median with probability 1 - 2 P(B <= k-1), B ~
 * binomial(R, 1/2), whatever the distribution (continuous); k is the
 * largest with that coverage >= 95% (R = 21: ranks 6 and 16, coverage
 * 97.3%).  When R is too small for 95% (R <= 5) the interval is the
 * widest there is, [min, max] (k = 1), with its coverage 1 - 2^(1-R)
 * (R = 5: 93.75%, R = 1: 0) reported as it is.
 *
 * Library code: status codes (bptt.h), no output, no exit.  The samples
 * are malloc'd (not tracked, so the tracked peaks are the plans' alone);
 * on any error everything is freed.
 */
#ifndef BPTT_COMPARE_H
#define BPTT_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"
#include "exec.h"
#include "session.h"

/* The coverage bptt_compare_run asks of its intervals. */
#define BPTT_COMPARE_LEVEL 0.95

typedef struct {
    size_t rounds;          /* samples of each kind */
    double *seconds;        /* (rounds): p's seconds per iteration */
    double *ratio;          /* (rounds): p's seconds / the neighbouring
                               reference iteration's */
    double *forward_step;   /* (rounds): p's forward seconds per forward op
                               (bptt_exec_stats) */
    bptt_exec_stats ex;     /* of p's first measured iteration */
    size_t checkpoint_peak_bytes;   /* measured, BPTT_MEM_CHECKPOINT */
    size_t total_tracked_peak_bytes; /* measured, every category */
    int gradients_identical; /* 1: memcmp-equal to the reference's in every
                                iteration */
    double seconds_median, seconds_min;
    double ratio_median, ratio_lo, ratio_hi;
    size_t ratio_lo_rank, ratio_hi_rank; /* 1-based ranks of lo and hi */
    double ratio_coverage;  /* the interval's coverage */
    double forward_step_median; /* median of forward_step */
    /* What p's forward ops cost at the reference's measured rates:
     * 1 + (F_p - F_0) f / S, F the plans' forward ops, f the reference's
     * forward_step_median and S its seconds_median: each forward op beyond
     * the reference's costs one of the reference's forward steps, and
     * nothing else differs.  A measured ratio near it says the time is the
     * recomputation the plan asked for. */
    double predicted_ratio;
} bptt_compare_result;

/* Runs the comparison above: plans[0..n_plans) (n_plans >= 1; plans[0] the
 * reference; each of the session's length and state sizes), rounds >= 1
 * measured rounds after warmup discarded ones, into results[0..n_plans),
 * which the caller frees with bptt_compare_results_free.  BPTT_OK;
 * BPTT_EINVAL for bad arguments (then none is run);
 * BPTT_ENOMEM (nothing left allocated);
 * bptt_session_gradients's error (BPTT_ENONFINITE, BPTT_EBADPLAN,
 * BPTT_ENOMEM from the tracked allocator).  On an error results hold no
 * samples and need no freeing. */
int bptt_compare_run(bptt_session *session, const bptt_plan *const *plans,
                     size_t n_plans, size_t rounds, size_t warmup,
                     bptt_compare_result *results);
void bptt_compare_results_free(bptt_compare_result *results, size_t n);

/* The ranks of the distribution-free interval for the median of n >= 1
 * samples at coverage level (0 < level < 1): *lo = k and *hi = n + 1 - k
 * (1-based), k the largest with coverage 1 - 2 P(B <= k-1) >= level, B ~
 * binomial(n, 1/2), or k = 1 when none is; *coverage gets the interval's
 * coverage.  Pure.  BPTT_OK, or BPTT_EINVAL (n = 0, level outside (0, 1)). */
int bptt_compare_ci_ranks(size_t n, double level, size_t *lo, size_t *hi,
                          double *coverage);

/* The median of x[0..n) (n >= 1; the mean of the middle two for even n),
 * sorting x in place. */
double bptt_compare_median(double *x, size_t n);

/* Make the n-th malloc of bptt_compare_run from now fail (n = 0: none), a
 * testing aid like bptt_alloc_fail_at.  Process-wide. */
void bptt_compare_fail_at(size_t n);

#endif
