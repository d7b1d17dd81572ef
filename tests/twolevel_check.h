/* twolevel_check.h: what the two-level tests share (test_twolevel.c,
 * test_twolevel_axis.c). */
#ifndef BPTT_TESTS_TWOLEVEL_CHECK_H
#define BPTT_TESTS_TWOLEVEL_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "twolevel.h"

/* The planner's plan for tl, held to the validator: it passes, fits both
 * budgets, and costs what cost_of says, counted from the validator's
 * stats.  Returns that cost (a failed check ends the test). */
double checked_cost(const bptt_twolevel *tl, size_t t, int64_t h, int64_t s,
                    int64_t m, int64_t d, double wd, double rd);

#endif
