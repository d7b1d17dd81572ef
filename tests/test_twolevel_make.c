/* test_twolevel_make.c: Check suite of bptt_twolevel_make (twolevel.h),
 * the one call from sizes in bytes to a checked two-level plan.
 *
 * What it proves, against the step-by-step calls it stands for
 * (bptt_units_from_bytes, bptt_twolevel_alloc, _plan, bptt_plan_validate):
 *   - for hsm and msm, byte sizes with a common quantum (and none but 1),
 *     fast and slow budgets in bytes that are not whole units (taken
 *     down to whole units), bounded, none and no bound: the plan is the
 *     step-by-step one action for action, its stats the validator's, with
 *     peak_bytes the peak in bytes and both peaks within the budgets;
 *   - refusals: a fast budget below one hidden state is BPTT_EINFEASIBLE
 *     naming hidden_bytes; strategies it does not plan BPTT_EUNKNOWN; bad
 *     sizes and NULLs BPTT_EINVAL; a table past memory BPTT_ETOOBIG with
 *     n_actions 0; nothing is left allocated (*out NULL) on any error;
 *   - every allocation failing in turn returns an error and holds nothing.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "twolevel.h"
#include "plan/alloc.h"

/* The plan step by step, in the units of the sizes. */
static bptt_plan *by_hand(const char *st, size_t t, int64_t hb, int64_t sb,
                          int64_t mb, const bptt_slow_level *slow)
{
    bptt_units u;
    ck_assert_int_eq(bptt_units_from_bytes(&u, hb, sb), BPTT_OK);
    bptt_slow_level sl = *slow;
    if (sl.budget != BPTT_SLOW_UNLIMITED)
        sl.budget /= u.quantum;
    bptt_twolevel *tl = NULL;
    ck_assert_int_eq(bptt_twolevel_alloc(&tl, st, t, u.hidden_units,
                                         u.internal_units, mb / u.quantum,
                                         &sl),
                     BPTT_OK);
    bptt_plan *p = NULL;
    ck_assert_int_eq(bptt_twolevel_plan(tl, &p), BPTT_OK);
    bptt_twolevel_free(tl);
    return p;
}

START_TEST(test_same_as_by_hand)
{
    const char *strategies[] = {"hsm", "msm"};
    /* (hidden, internal) bytes: quantum 64, 8 and 1 */
    const int64_t sizes[][2] = {{192, 704}, {200, 712}, {7, 19}};
    const size_t lengths[] = {1, 5, 23, 60};
    for (size_t k = 0; k < 2; k++)
        for (size_t z = 0; z < 3; z++)
            for (size_t li = 0; li < 4; li++) {
                const int64_t hb = sizes[z][0], sb = sizes[z][1];
                const size_t t = lengths[li];
                /* budgets a little past whole states: not whole units
                 * where the quantum is above 1 */
                const int64_t fast[] = {hb, 3 * hb + 5, 2 * sb + hb + 1};
                const int64_t disk[] = {0, hb + 3, 2 * sb + 7,
                                        BPTT_SLOW_UNLIMITED};
                for (size_t fi = 0; fi < 3; fi++)
                    for (size_t di = 0; di < 4; di++) {
                        const bptt_slow_level slow = {disk[di], 0.5, 1.25};
                        bptt_plan *p = NULL;
                        bptt_plan_stats st;
                        int64_t least = 0;
                        const int rc = bptt_twolevel_make(
                            strategies[k], t, hb, sb, fast[fi], &slow, &p,
                            &st, &least);
                        ck_assert_msg(rc == BPTT_OK, "%s t %zu %lld/%lld: %s",
                                      strategies[k], t, (long long)hb,
                                      (long long)sb, bptt_strerror(rc));
                        ck_assert_int_eq(least, -1);
                        bptt_plan *q = by_hand(strategies[k], t, hb, sb,
                                               fast[fi], &slow);
                        ck_assert_uint_eq(p->n_actions, q->n_actions);
                        ck_assert_int_eq(memcmp(p->actions, q->actions,
                                                p->n_actions *
                                                    sizeof *p->actions),
                                         0);
                        ck_assert_int_eq(p->budget, q->budget);
                        ck_assert_int_eq(p->slow_budget, q->slow_budget);
                        bptt_plan_stats v;
                        ck_assert_int_eq(bptt_plan_validate(q, &v), BPTT_OK);
                        ck_assert_int_eq(st.forward_ops, v.forward_ops);
                        ck_assert_int_eq(st.slow_writes, v.slow_writes);
                        ck_assert_int_eq(st.slow_reads, v.slow_reads);
                        ck_assert_int_eq(st.slow_peak_units,
                                         v.slow_peak_units);
                        bptt_units u;
                        bptt_units_from_bytes(&u, hb, sb);
                        const int64_t qn = u.quantum;
                        ck_assert_int_eq(st.peak_bytes, v.peak_units * qn);
                        ck_assert_int_le(st.peak_bytes, fast[fi]);
                        if (disk[di] != BPTT_SLOW_UNLIMITED)
                            ck_assert_int_le(st.slow_peak_units * qn,
                                             disk[di]);
                        bptt_plan_free(p);
                        bptt_plan_free(q);
                    }
            }
}
END_TEST

START_TEST(test_refusals)
{
    const bptt_slow_level inf = {BPTT_SLOW_UNLIMITED, 1, 1};
    bptt_plan *p = (bptt_plan *)&p; /* set to NULL by every call */
    bptt_plan_stats st;
    int64_t least = 0;
    ck_assert_int_eq(bptt_twolevel_make("msm", 10, 64, 256, 63, &inf, &p,
                                        &st, &least),
                     BPTT_EINFEASIBLE);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(least, 64);
    ck_assert_int_eq(bptt_twolevel_make("hsm", 10, 64, 256, 64, &inf, &p,
                                        &st, NULL),
                     BPTT_OK);
    bptt_plan_free(p);
    const char *others[] = {"full", "chen", "ism", "msm-paper", "nope"};
    for (size_t i = 0; i < 5; i++)
        ck_assert_int_eq(bptt_twolevel_make(others[i], 10, 64, 256, 1000,
                                            &inf, &p, &st, NULL),
                         BPTT_EUNKNOWN);
    const bptt_slow_level neg = {-1, 1, 1}, nan_cost = {5, 0.0 / 0.0, 1};
    ck_assert_int_eq(bptt_twolevel_make("msm", 10, 64, 256, 1000, &neg, &p,
                                        &st, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_twolevel_make("msm", 10, 64, 256, 1000, &nan_cost,
                                        &p, &st, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_twolevel_make("msm", 0, 64, 256, 1000, &inf, &p,
                                        &st, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_twolevel_make("msm", 10, 256, 64, 1000, &inf, &p,
                                        &st, NULL),
                     BPTT_EINVAL); /* internal smaller than hidden */
    ck_assert_int_eq(bptt_twolevel_make("msm", 10, 64, 256, -1, &inf, &p,
                                        &st, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_twolevel_make("msm", 10, 64, 256, 1000, NULL, &p,
                                        &st, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_twolevel_make("msm", 10, 64, 256, 1000, &inf, NULL,
                                        &st, NULL),
                     BPTT_EINVAL);
    ck_assert_ptr_null(p);
    /* a table past half of any machine's memory: refused before it is
     * built, the table's (no actions counted) */
    const bptt_slow_level big = {(int64_t)1 << 40, 1, 1};
    memset(&st, 0xff, sizeof st);
    ck_assert_int_eq(bptt_twolevel_make("hsm", 100000000, 1, 1,
                                        (int64_t)1 << 40, &big, &p, &st,
                                        NULL),
                     BPTT_ETOOBIG);
    ck_assert_uint_eq(st.n_actions, 0);
    ck_assert_ptr_null(p);
}
END_TEST

/* Allocation n failing, for every n the call reaches: BPTT_ENOMEM, *out
 * NULL and nothing held; the first n past them all succeeds. */
START_TEST(test_alloc_failures)
{
    const bptt_slow_level slow = {_i ? BPTT_SLOW_UNLIMITED : 3 * 256, 0.5,
                                  0.5};
    for (size_t n = 1;; n++) {
        const size_t bytes = bptt_alloc_bytes(), count = bptt_alloc_count();
        bptt_alloc_fail_at(n);
        bptt_plan *p = NULL;
        bptt_plan_stats st;
        const int rc = bptt_twolevel_make(_i ? "msm" : "hsm", 40, 64, 256,
                                          4 * 64, &slow, &p, &st, NULL);
        const size_t made = bptt_alloc_count() - count;
        bptt_alloc_fail_at(0);
        if (made < n) { /* the n-th was never reached */
            ck_assert_int_eq(rc, BPTT_OK);
            ck_assert_ptr_nonnull(p);
            ck_assert_uint_gt(n, 2);
            bptt_plan_free(p);
            ck_assert_uint_eq(bptt_alloc_bytes(), bytes);
            break;
        }
        ck_assert_msg(rc == BPTT_ENOMEM, "allocation %zu: %s", n,
                      bptt_strerror(rc));
        ck_assert_ptr_null(p);
        ck_assert_uint_eq(bptt_alloc_bytes(), bytes);
    }
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("twolevel_make");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_same_as_by_hand);
    tcase_add_test(tc, test_refusals);
    tcase_add_loop_test(tc, test_alloc_failures, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(make_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
