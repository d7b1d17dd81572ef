/* exhaustive.h: the true optimum of the cost model by exhaustive search.
 *
 * Promises: the fewest forward ops over every schedule of doc/design.md 1 (the
 * model of src/plan/plan.c's validator), for short sequences, found by a
 * shortest-path search over the schedule's whole state space.  It shares
 * no code or recursion with the planner in src/plan/table.c, so the tests can
 * hold the planner to it.  It does not emit plans.
 *
 * Legend: t sequence length, h hidden-state units, s internal-state units,
 * m budget in units.
 */
#ifndef BPTT_TESTS_EXHAUSTIVE_H
#define BPTT_TESTS_EXHAUSTIVE_H

#include <stdint.h>

/* Longest sequence the search accepts (its state space grows as 4^t). */
#define EXHAUSTIVE_MAX_T 10

/* The fewest forward ops that take a sequence of t steps through all t
 * backward ops with at most m units stored at any moment (h(0) stored at
 * the start, h units), saving hidden states only if allow_hidden and
 * internal states only if allow_internal.  Returns -1 if no schedule fits
 * (m < h), -2 if the arguments are out of range (t < 1 or t >
 * EXHAUSTIVE_MAX_T, h < 1, s < 1, m < 0) or memory ran out. */
int64_t exhaustive_cost(int t, int64_t h, int64_t s, int64_t m,
                        int allow_hidden, int allow_internal);

#endif
