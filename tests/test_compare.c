/* test_compare.c: plans timed against a reference in one process
 * (compare.h).  No assertion here depends on how fast anything ran.
 *
 * - The interval's ranks are the binomial(R, 1/2) order statistics: on
 *   fixed counts (R = 21: ranks 6 and 16, coverage 97.34%; R <= 5: the
 *   widest interval, [min, max], with its coverage below 95%), and for
 *   every R up to 60 against the coverage summed exactly in integers
 *   (the largest k that reaches 95%, or k = 1).  Medians of odd and even
 *   counts on fixed arrays.
 * - On a tiny LSTM and a tiny GRU with plans full (the reference), msm at
 *   5%, chen and hsm: every plan's gradients were bit-identical to the
 *   reference's in every iteration; each plan's checkpoint peak bytes and
 *   forward ops equal what bptt_exec_run alone measures for that plan;
 *   every seconds and ratio sample is positive and finite; lo <= median
 *   <= hi, and lo and hi are the sorted ratios at the ranks
 *   bptt_compare_ci_ranks gives.  Each plan's forward-step median is the
 *   median of its samples, and its predicted ratio is 1 + (F_p - F_0) f / S
 *   from the reference's medians, to the bit; the reference's is 1.
 * - The pairing: the tracked allocator counts every call, and each plan's
 *   iteration makes a fixed number of them, so the count over a whole
 *   comparison says how many iterations of each plan ran: one untimed
 *   reference iteration, then per round one of each plan and n + 1 of the
 *   reference (one in each pair, two in its pair with itself).
 * - The reference paired with itself: its ratio samples are R positive
 *   ratios of two iterations of one plan, and its gradients are identical
 *   (a plan repeated is deterministic).
 * - Bad arguments give BPTT_EINVAL; every malloc of the comparison and
 *   every tracked allocation during it made to fail in turn gives
 *   BPTT_ENOMEM with nothing left allocated and no samples in the results.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "rig.h"

/* ---- order statistics ---------------------------------------------------- */

START_TEST(test_ci_ranks_fixed)
{
    static const struct {
        size_t n, lo, hi;
        double coverage;
    } want[] = {
        {1, 1, 1, 0.0},
        {2, 1, 2, 0.5},
        {5, 1, 5, 0.9375},
        {6, 1, 6, 0.96875},
        {9, 2, 8, 0.9609375},
        {21, 6, 16, 0.9733963012695312},
        {100, 40, 61, 0.9647997997822952},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        size_t lo = 0, hi = 0;
        double cov = -1;
        ck_assert_int_eq(bptt_compare_ci_ranks(want[i].n, 0.95, &lo, &hi,
                                               &cov),
                         BPTT_OK);
        ck_assert_msg(lo == want[i].lo && hi == want[i].hi,
                      "R = %zu: ranks %zu and %zu, want %zu and %zu",
                      want[i].n, lo, hi, want[i].lo, want[i].hi);
        ck_assert_msg(fabs(cov - want[i].coverage) < 1e-9,
                      "R = %zu: coverage %.12f, want %.12f", want[i].n, cov,
                      want[i].coverage);
    }
    size_t lo, hi;
    double cov;
    ck_assert_int_eq(bptt_compare_ci_ranks(0, 0.95, &lo, &hi, &cov),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_compare_ci_ranks(21, 0, &lo, &hi, &cov),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_compare_ci_ranks(21, 1, &lo, &hi, &cov),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_compare_ci_ranks(21, NAN, &lo, &hi, &cov),
                     BPTT_EINVAL);
}
END_TEST

/* Every R up to 60 against sums of binomial coefficients in integers. */
START_TEST(test_ci_ranks_exact)
{
    for (uint64_t n = 1; n <= 60; n++) {
        uint64_t binom[61];
        binom[0] = 1;
        for (uint64_t i = 1; i <= n; i++)
            binom[i] = binom[i - 1] * (n - i + 1) / i;
        const double total = ldexp(1.0, (int)n);
        uint64_t tail = 0; /* sum of binom[0..k) */
        size_t best = 1;
        double best_cov = 1 - 2 * (double)binom[0] / total;
        for (uint64_t k = 1; k <= (n + 1) / 2; k++) {
            tail += binom[k - 1];
            /* coverage >= 0.95 exactly: 2 tail / 2^n <= 1/20 */
            const double cov = 1 - 2 * (double)tail / total;
            if (40 * (long double)tail <= (long double)total) {
                best = k;
                best_cov = cov;
            }
        }
        size_t lo, hi;
        double cov;
        ck_assert_int_eq(bptt_compare_ci_ranks(n, 0.95, &lo, &hi, &cov),
                         BPTT_OK);
        ck_assert_msg(lo == best && hi == n + 1 - best,
                      "R = %zu: ranks %zu, %zu; want %zu, %zu", (size_t)n, lo,
                      hi, best, (size_t)n + 1 - best);
        ck_assert_msg(fabs(cov - best_cov) < 1e-9, "R = %zu: coverage %.12f "
                      "want %.12f", (size_t)n, cov, best_cov);
        ck_assert(lo <= hi);
    }
}
END_TEST

START_TEST(test_median)
{
    double a[] = {3, 1, 2};
    ck_assert(bptt_compare_median(a, 3) == 2);
    double b[] = {4, 1, 3, 2};
    ck_assert(bptt_compare_median(b, 4) == 2.5);
    double c[] = {7};
    ck_assert(bptt_compare_median(c, 1) == 7);
    double d[] = {2, 2, 9, 1, 5, 6};
    ck_assert(bptt_compare_median(d, 6) == 3.5);
    ck_assert(d[0] == 1 && d[5] == 9); /* sorted in place */
}
END_TEST

/* ---- the comparison ------------------------------------------------------- */

/* every shape on every cell of bptt_cells[] (rig.h) */
static const shape cmp_shapes[] = {
    {1, "copy", 12, 3, 16, 8, 5},
    {2, "copy", 12, 3, 16, 8, 9},
};
#define N_CONFIGS RIG_CASES(cmp_shapes)

#define N_PLANS 4
static const char *const plan_names[N_PLANS] = {"full", "msm", "chen",
                                                 "hsm"};

/* full at 100%, msm at 5% (raised to its smallest feasible budget when 5%
 * is below it), chen at 100%, hsm at 30%. */
static void make_plans(const rig *r, bptt_plan **plans)
{
    const int64_t full = (int64_t)(r->full_peak * r->u.quantum);
    const int64_t budgets[N_PLANS] = {full, full / 20, full, full * 3 / 10};
    for (size_t p = 0; p < N_PLANS; p++) {
        bptt_plan_stats st;
        int64_t min_bytes = 0;
        int rc = bptt_plan_make(plan_names[p], r->c->T, (int64_t)r->hb,
                                (int64_t)r->sb, budgets[p], NULL, &plans[p],
                                &st, &min_bytes);
        if (rc == BPTT_EINFEASIBLE)
            rc = bptt_plan_make(plan_names[p], r->c->T, (int64_t)r->hb,
                                (int64_t)r->sb, min_bytes, NULL, &plans[p],
                                &st, NULL);
        ck_assert_msg(rc == BPTT_OK, "%s: plan %s: %s", r->name,
                      plan_names[p], bptt_strerror(rc));
    }
}

static void free_plans(bptt_plan **plans)
{
    for (size_t p = 0; p < N_PLANS; p++)
        bptt_plan_free(plans[p]);
}

static int sorted_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

START_TEST(test_compare_plans)
{
    rig r;
    const config c = rig_config(cmp_shapes, _i);
    rig_open(&r, &c);
    bptt_plan *plans[N_PLANS];
    make_plans(&r, plans);
    /* what each plan measures alone, and the allocations it makes */
    size_t peak[N_PLANS], allocs[N_PLANS];
    int64_t fwd[N_PLANS];
    for (size_t p = 0; p < N_PLANS; p++) {
        bptt_exec_stats ex;
        bptt_mem_reset_peaks(r.mem);
        const size_t before = bptt_mem_stats_get(r.mem)->allocations;
        ck_assert_int_eq(bptt_exec_run(plans[p], r.model, &r.batch, r.mem,
                                       &ex),
                         BPTT_OK);
        allocs[p] = bptt_mem_stats_get(r.mem)->allocations - before;
        peak[p] = bptt_mem_stats_get(r.mem)->peak[BPTT_MEM_CHECKPOINT];
        fwd[p] = ex.forward_ops;
    }
    /* the plans differ, or the comparison would prove little */
    ck_assert_int_ne(fwd[0], fwd[1]);
    ck_assert_uint_ne(peak[0], peak[1]);
    const size_t R = 7, W = 2;
    bptt_compare_result res[N_PLANS];
    const size_t before = bptt_mem_stats_get(r.mem)->allocations;
    const size_t held = bptt_mem_stats_get(r.mem)->total_current;
    ck_assert_int_eq(bptt_compare_run(r.session,
                                      (const bptt_plan *const *)plans,
                                      N_PLANS, R, W, res),
                     BPTT_OK);
    /* the pairing, counted: the untimed reference iteration, then per
     * round one of each plan and N_PLANS + 1 of the reference */
    size_t expect = allocs[0];
    for (size_t p = 0; p < N_PLANS; p++)
        expect += (W + R) * allocs[p];
    expect += (W + R) * N_PLANS * allocs[0];
    ck_assert_uint_eq(bptt_mem_stats_get(r.mem)->allocations - before,
                      expect);
    ck_assert_uint_eq(bptt_mem_stats_get(r.mem)->total_current, held);
    size_t lo_rank, hi_rank;
    double cov;
    ck_assert_int_eq(bptt_compare_ci_ranks(R, BPTT_COMPARE_LEVEL, &lo_rank,
                                           &hi_rank, &cov),
                     BPTT_OK);
    for (size_t p = 0; p < N_PLANS; p++) {
        const bptt_compare_result *x = &res[p];
        ck_assert_msg(x->gradients_identical == 1, "%s: %s: gradients differ "
                      "from the reference's", r.name, plan_names[p]);
        ck_assert_msg(x->checkpoint_peak_bytes == peak[p], "%s: %s: peak %zu "
                      "in the comparison, %zu alone", r.name, plan_names[p],
                      x->checkpoint_peak_bytes, peak[p]);
        ck_assert_int_eq(x->ex.forward_ops, fwd[p]);
        ck_assert_uint_ge(x->total_tracked_peak_bytes,
                          x->checkpoint_peak_bytes);
        ck_assert_uint_eq(x->rounds, R);
        double sorted[7];
        for (size_t k = 0; k < R; k++) {
            ck_assert(x->seconds[k] > 0 && isfinite(x->seconds[k]));
            ck_assert(x->ratio[k] > 0 && isfinite(x->ratio[k]));
            ck_assert(x->seconds_min <= x->seconds[k]);
            sorted[k] = x->ratio[k];
        }
        qsort(sorted, R, sizeof *sorted, sorted_cmp);
        ck_assert(x->seconds_min <= x->seconds_median);
        ck_assert(x->ratio_lo <= x->ratio_median);
        ck_assert(x->ratio_median <= x->ratio_hi);
        ck_assert(x->ratio_median == sorted[R / 2]);
        ck_assert_uint_eq(x->ratio_lo_rank, lo_rank);
        ck_assert_uint_eq(x->ratio_hi_rank, hi_rank);
        ck_assert(x->ratio_lo == sorted[lo_rank - 1]);
        ck_assert(x->ratio_hi == sorted[hi_rank - 1]);
        ck_assert(x->ratio_coverage == cov);
        /* the forward-step samples and their median, and the prediction
         * made from the reference's: exact arithmetic on exact fields */
        for (size_t k = 0; k < R; k++) {
            ck_assert(x->forward_step[k] > 0 && isfinite(x->forward_step[k]));
            sorted[k] = x->forward_step[k];
        }
        qsort(sorted, R, sizeof *sorted, sorted_cmp);
        ck_assert(x->forward_step_median == sorted[R / 2]);
        const double want =
            1 + (double)(fwd[p] - fwd[0]) * res[0].forward_step_median /
                    res[0].seconds_median;
        ck_assert_msg(x->predicted_ratio == want, "%s: %s: predicted %.17g, "
                      "not %.17g", r.name, plan_names[p], x->predicted_ratio,
                      want);
    }
    ck_assert(res[0].predicted_ratio == 1);
    bptt_compare_results_free(res, N_PLANS);
    ck_assert_ptr_null(res[0].seconds);
    free_plans(plans);
    rig_close(&r);
}
END_TEST

/* One plan: the reference against itself alone. */
START_TEST(test_reference_alone)
{
    rig r;
    const config c = rig_config(cmp_shapes, 0);
    rig_open(&r, &c);
    bptt_plan *plans[N_PLANS];
    make_plans(&r, plans);
    bptt_compare_result res[1];
    ck_assert_int_eq(bptt_compare_run(r.session,
                                      (const bptt_plan *const *)plans, 1, 4,
                                      0, res),
                     BPTT_OK);
    ck_assert_int_eq(res[0].gradients_identical, 1);
    ck_assert_uint_eq(res[0].rounds, 4);
    for (size_t k = 0; k < 4; k++)
        ck_assert(res[0].ratio[k] > 0 && isfinite(res[0].ratio[k]));
    /* R = 4 is too few for 95%: the widest interval, its coverage 7/8 */
    ck_assert_uint_eq(res[0].ratio_lo_rank, 1);
    ck_assert_uint_eq(res[0].ratio_hi_rank, 4);
    ck_assert(fabs(res[0].ratio_coverage - 0.875) < 1e-12);
    bptt_compare_results_free(res, 1);
    free_plans(plans);
    rig_close(&r);
}
END_TEST

START_TEST(test_bad_arguments)
{
    rig r;
    const config c = rig_config(cmp_shapes, 0);
    rig_open(&r, &c);
    bptt_plan *plans[N_PLANS];
    make_plans(&r, plans);
    const bptt_plan *const *pp = (const bptt_plan *const *)plans;
    bptt_compare_result res[N_PLANS];
    ck_assert_int_eq(bptt_compare_run(r.session, pp, 0, 3, 0, res),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_compare_run(r.session, pp, 2, 0, 0, res),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_compare_run(NULL, pp, 2, 3, 0, res), BPTT_EINVAL);
    ck_assert_int_eq(bptt_compare_run(r.session, NULL, 2, 3, 0, res),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_compare_run(r.session, pp, 2, 3, 0, NULL),
                     BPTT_EINVAL);
    const bptt_plan *holes[2] = {plans[0], NULL};
    ck_assert_int_eq(bptt_compare_run(r.session, holes, 2, 3, 0, res),
                     BPTT_EINVAL);
    free_plans(plans);
    rig_close(&r);
}
END_TEST

/* Every malloc of the comparison, then every tracked allocation during it,
 * made to fail in turn. */
START_TEST(test_enomem)
{
    rig r;
    const config c = rig_config(cmp_shapes, _i);
    rig_open(&r, &c);
    bptt_plan *plans[N_PLANS];
    make_plans(&r, plans);
    const bptt_plan *const *pp = (const bptt_plan *const *)plans;
    bptt_compare_result res[N_PLANS];
    const size_t held = bptt_mem_stats_get(r.mem)->total_current;
    size_t f;
    for (f = 1;; f++) {
        bptt_compare_fail_at(f);
        const int rc = bptt_compare_run(r.session, pp, N_PLANS, 2, 1, res);
        bptt_compare_fail_at(0);
        if (rc == BPTT_OK)
            break;
        ck_assert_int_eq(rc, BPTT_ENOMEM);
        for (size_t p = 0; p < N_PLANS; p++)
            ck_assert(!res[p].seconds && !res[p].ratio &&
                      !res[p].forward_step);
        ck_assert_uint_eq(bptt_mem_stats_get(r.mem)->total_current, held);
    }
    /* the copy, the sort buffer and three arrays per plan */
    ck_assert_uint_eq(f, 2 + 3 * N_PLANS + 1);
    bptt_compare_results_free(res, N_PLANS);
    size_t tracked_failures = 0;
    for (f = 1;; f++) {
        bptt_mem_fail_at(r.mem, f);
        const int rc = bptt_compare_run(r.session, pp, 2, 1, 0, res);
        bptt_mem_fail_at(r.mem, 0);
        if (rc == BPTT_OK)
            break;
        ck_assert_int_eq(rc, BPTT_ENOMEM);
        for (size_t p = 0; p < 2; p++)
            ck_assert(!res[p].seconds && !res[p].ratio);
        ck_assert_uint_eq(bptt_mem_stats_get(r.mem)->total_current, held);
        tracked_failures++;
    }
    ck_assert_uint_ge(tracked_failures, 10);
    bptt_compare_results_free(res, 2);
    free_plans(plans);
    rig_close(&r);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("compare");
    TCase *tc = tcase_create("compare");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_ci_ranks_fixed);
    tcase_add_test(tc, test_ci_ranks_exact);
    tcase_add_test(tc, test_median);
    tcase_add_loop_test(tc, test_compare_plans, 0, N_CONFIGS);
    tcase_add_test(tc, test_reference_alone);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_loop_test(tc, test_enomem, 0, N_CONFIGS);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
