/* test_twolevel_threads.c: Check suite of the two-level table built on
 * threads (bptt_twolevel_alloc_threads, twolevel.h; twolevel.c's tasks).
 *
 * What it proves: for hsm and msm, several (h, s) (coprime ones among
 * them), slow levels bounded, none and unbounded and lengths up to 120,
 * the table built on 2 threads (twice: races are intermittent), 3 and
 * (length 40) 8, is the one-thread table cell for cell: every cost and
 * every choice of every kind, length and budget column; the plans emitted
 * are the same action for action; and every allocation of a threaded
 * build failing in turn returns BPTT_ENOMEM holding nothing.
 * BPTT_QUICK_TESTS (the sanitizer build) repeats less.
 *
 * Legend: t sequence length, h hidden-state units, s internal-state units,
 * m fast budget in units (h(0) counted), d slow budget in units.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "twolevel.h"
#include "plan/alloc.h"
#include "plan/twolevel_impl.h"

static bptt_twolevel *build(const char *st, size_t t, int64_t h, int64_t s,
                            int64_t m, int64_t d, int threads)
{
    const bptt_slow_level sl = {d, 1.5, 0.75};
    bptt_twolevel *tl = NULL;
    ck_assert_int_eq(bptt_twolevel_alloc_threads(&tl, st, t, h, s, m, &sl,
                                                 threads),
                     BPTT_OK);
    return tl;
}

/* a and b the same cell for cell, and their plans action for action. */
static void same(const bptt_twolevel *a, const bptt_twolevel *b,
                 const char *what)
{
    ck_assert_int_eq(a->nm, b->nm);
    ck_assert_int_eq(a->nd, b->nd);
    const size_t cells = 4u * (size_t)a->nm * (size_t)a->nd * (a->t + 1);
    size_t i = 0; /* one assertion (Check records each one it passes) */
    while (i < cells && a->cost[i] == b->cost[i] &&
           a->choice[i] == b->choice[i])
        i++;
    ck_assert_msg(i == cells, "%s: cell %zu of %zu differs", what, i, cells);
    bptt_plan *pa = NULL, *pb = NULL;
    const int ra = bptt_twolevel_plan(a, &pa), rb = bptt_twolevel_plan(b, &pb);
    ck_assert_int_eq(ra, rb);
    if (ra == BPTT_OK) {
        ck_assert_uint_eq(pa->n_actions, pb->n_actions);
        ck_assert(memcmp(pa->actions, pb->actions,
                         pa->n_actions * sizeof *pa->actions) == 0);
    }
    bptt_plan_free(pa);
    bptt_plan_free(pb);
}

/* _i: the strategy (0 hsm, 1 msm). */
START_TEST(test_same_on_threads)
{
    const char *st = _i ? "msm" : "hsm";
    const int quick = getenv("BPTT_QUICK_TESTS") != NULL;
    const int64_t hs[][2] = {{1, 1}, {1, 4}, {2, 3}, {3, 7}, {5, 8}};
    const size_t lengths[] = {40, 120};
    const int threads[] = {2, 3, 8};
    for (size_t z = 0; z < 5; z++)
        for (size_t li = 0; li < 2; li++)
            for (int sc = 0; sc < 3; sc++) {
                const int64_t h = hs[z][0], s = hs[z][1];
                const size_t t = lengths[li];
                if (quick && t > 100 && z > 1)
                    continue;
                /* slow: none, bounded (several states) or unbounded */
                const int64_t d = sc == 0   ? 0
                                  : sc == 1 ? 5 * s + 2 * h
                                            : BPTT_SLOW_UNLIMITED;
                /* one slow column or none: enough fast ones to build
                 * on threads (32 columns at least, twolevel.c) */
                const int64_t m = sc == 1 ? 6 * s + 3 * h : 40 * s;
                bptt_twolevel *one = build(st, t, h, s, m, d, 1);
                /* 8 threads on fewer cores spin: the short length only */
                for (int k = 0; k < (t > 100 ? 2 : 3); k++)
                    for (int rep = 0; rep < (quick || k ? 1 : 2); rep++) {
                        bptt_twolevel *many =
                            build(st, t, h, s, m, d, threads[k]);
                        char what[96];
                        snprintf(what, sizeof what,
                                 "%s t %zu h %lld s %lld d %lld, %d threads",
                                 st, t, (long long)h, (long long)s,
                                 (long long)d, threads[k]);
                        same(one, many, what);
                        bptt_twolevel_free(many);
                    }
                bptt_twolevel_free(one);
            }
}
END_TEST

/* Every allocation of a build on 2 threads failed in turn: ENOMEM, nothing
 * held after. */
START_TEST(test_alloc_failures)
{
    const bptt_slow_level sl = {12, 1.0, 2.0};
    size_t n_ok = 0;
    for (size_t n = 1;; n++) {
        const size_t bytes = bptt_alloc_bytes(), count = bptt_alloc_count();
        bptt_alloc_fail_at(n);
        bptt_twolevel *tl = NULL;
        const int rc =
            bptt_twolevel_alloc_threads(&tl, "msm", 80, 1, 2, 24, &sl, 2);
        const size_t made = bptt_alloc_count() - count;
        bptt_alloc_fail_at(0);
        if (rc != BPTT_OK)
            ck_assert_ptr_null(tl);
        bptt_twolevel_free(tl);
        ck_assert_uint_eq(bptt_alloc_bytes(), bytes);
        if (made < n) {
            ck_assert_int_eq(rc, BPTT_OK);
            n_ok = n - 1;
            break;
        }
        ck_assert_int_eq(rc, BPTT_ENOMEM);
    }
    ck_assert_uint_gt(n_ok, 6);
}
END_TEST

static Suite *suite(void)
{
    Suite *su = suite_create("twolevel_threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_same_on_threads, 0, 2);
    tcase_add_test(tc, test_alloc_failures);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
