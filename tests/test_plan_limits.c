/* test_plan_limits.c: Check suite of the planner API at the edges of the
 * sizes it accepts: checked arithmetic (a result that does not fit is
 * BPTT_ETOOBIG or -1, never a wrap, a crash or a wrong "infeasible"),
 * closed forms bounded in time, and NULL pointers refused (BPTT_EINVAL).
 * Each case comes from a hostile battery on include/bptt/bptt.h.
 *
 * Legend: t sequence length, h hidden-state units, s internal-state units,
 * m budget in units.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "plan/alloc.h"

static const char *const dp_names[] = {"hsm", "ism", "msm", "ism-paper",
                                       "msm-paper"};
#define N_DP 5

/* A plan that bptt_plan_make returned is the validator's: re-check it. */
static void check_plan(const bptt_plan *plan, const bptt_plan_stats *st)
{
    bptt_plan_stats again;
    ck_assert_ptr_nonnull(plan);
    ck_assert_int_eq(bptt_plan_validate(plan, &again), BPTT_OK);
    ck_assert_int_eq(again.forward_ops, st->forward_ops);
    ck_assert(again.peak_units <= plan->budget);
    ck_assert_int_eq(again.backward_ops, (int64_t)plan->length);
}

/* ---- huge units: no signed overflow, no NULL read --------------------- */

#define BIG_H INT64_C(3070000000000000000)

/* t >= 4, h ~ 3.07e18, s = INT64_MAX, budget INT64_MAX: DP strategies
 * used to overflow in the table layout and read a NULL choice column.
 * Now: a validated plan, or BPTT_ETOOBIG (a table of ~1e19 budgets). */
START_TEST(test_huge_units_dp)
{
    const char *name = dp_names[_i % N_DP];
    const size_t t = 4 + (size_t)(_i / N_DP);
    bptt_plan *plan = NULL;
    bptt_plan_stats st;
    int64_t least = 0;
    const int rc = bptt_plan_make(name, t, BIG_H, INT64_MAX, INT64_MAX,
                                  NULL, &plan, &st, &least);
    ck_assert_msg(rc == BPTT_OK || rc == BPTT_ETOOBIG, "%s t=%zu: %s", name,
                  t, bptt_strerror(rc));
    if (rc == BPTT_OK) {
        check_plan(plan, &st);
        bptt_plan_free(plan);
    } else {
        ck_assert_ptr_null(plan);
    }
    /* hsm stores hidden states only: 3 of them fit, a plan is due */
    if (strcmp(name, "hsm") == 0)
        ck_assert_int_eq(rc, BPTT_OK);
}
END_TEST

/* Below one internal state, every DP strategy stores hidden states only:
 * 3 of 3.07e18 units fit in 9.21e18; a plan is due, costing what
 * binomial checkpointing with 3 slots costs (ism: h(0) alone). */
START_TEST(test_huge_units_three_hidden)
{
    const char *name = dp_names[_i % N_DP];
    const size_t t = 4 + (size_t)(_i / N_DP) * 3;
    bptt_plan *plan = NULL;
    bptt_plan_stats st;
    const int rc = bptt_plan_make(name, t, BIG_H, INT64_MAX, 3 * BIG_H, NULL,
                                  &plan, &st, NULL);
    ck_assert_msg(rc == BPTT_OK, "%s t=%zu: %s", name, t, bptt_strerror(rc));
    check_plan(plan, &st);
    /* ism stores no hidden state: h(0) alone, t (t + 1) / 2 */
    const int64_t want = strstr(name, "ism")
                             ? (int64_t)(t * (t + 1) / 2)
                             : bptt_hsm_closed_cost((int64_t)t, 3);
    ck_assert_int_eq(st.forward_ops, want);
    ck_assert(st.peak_units <= 3 * BIG_H);
    bptt_plan_free(plan);
}
END_TEST

/* full with the same sizes needs (t-1) INT64_MAX bytes: too big to state,
 * never BPTT_EBADPLAN for a plan of its own. */
START_TEST(test_huge_units_full)
{
    const size_t t = 4 + (size_t)_i;
    bptt_plan *plan = NULL;
    bptt_plan_stats st;
    int64_t least = 0;
    const int rc = bptt_plan_make("full", t, BIG_H, INT64_MAX, INT64_MAX,
                                  NULL, &plan, &st, &least);
    ck_assert_int_eq(rc, BPTT_ETOOBIG);
    ck_assert_ptr_null(plan);
    /* and where it fits, the plan is valid at exactly its peak */
    ck_assert_int_eq(bptt_plan_make("full", 2, BIG_H, INT64_MAX, INT64_MAX,
                                    NULL, &plan, &st, &least),
                     BPTT_OK);
    check_plan(plan, &st);
    ck_assert_int_eq(st.peak_units, bptt_full_peak(2, plan->hidden_units,
                                                   plan->internal_units));
    bptt_plan_free(plan);
}
END_TEST

/* msm at t = 10000, h = 1e15+1, s = 3e15+4 bytes: (t-1) s overflows; it
 * used to be "infeasible at every budget" with min_budget -1. */
START_TEST(test_msm_big_units)
{
    const int64_t h = INT64_C(1000000000000001), s = INT64_C(3000000000000004);
    const size_t t = 10000;
    const int64_t k = 1 + _i; /* hidden states the budget holds */
    bptt_plan *plan = NULL;
    bptt_plan_stats st;
    int64_t least = 0;
    int rc = bptt_plan_make("msm", t, h, s, k * h, NULL, &plan, &st, &least);
    ck_assert_msg(rc == BPTT_OK, "k=%lld: %s", (long long)k,
                  bptt_strerror(rc));
    check_plan(plan, &st);
    /* below s only hidden states: binomial checkpointing with k slots
     * (one slot: t (t+1) / 2) */
    const int64_t want = k == 1 ? (int64_t)(t * (t + 1) / 2)
                                : bptt_hsm_closed_cost((int64_t)t, k);
    ck_assert_int_eq(st.forward_ops, want);
    ck_assert(st.peak_units <= k * h);
    bptt_plan_free(plan);
    /* the smallest budget is h(0) alone, exactly */
    plan = NULL;
    rc = bptt_plan_make("msm", t, h, s, h - 1, NULL, &plan, &st, &least);
    ck_assert_int_eq(rc, BPTT_EINFEASIBLE);
    ck_assert_int_eq(least, h);
    ck_assert_ptr_null(plan);
}
END_TEST

/* The same units at budgets of one internal state and more: only a few
 * sums a h + b s lie below them, so the table has a column per sum, not
 * one per unit of 1e15 budgets (it used to be BPTT_ETOOBIG at every such
 * budget).  Plans valid within the budget, costs falling as the budget
 * rises, above the lower bound max(t, 2t - 1 - floor(m / s)), below what
 * 3 hidden states cost (3 h < s), and the closed form at the top. */
START_TEST(test_msm_big_units_internal)
{
    const int64_t h = INT64_C(1000000000000001), s = INT64_C(3000000000000004);
    const size_t t = 10000;
    const int64_t ms[] = {s, s + h, 2 * s, 3 * s + h, 200 * s, INT64_MAX};
    const bptt_strategy *msm = bptt_strategy_find("msm");
    int64_t last = bptt_hsm_closed_cost((int64_t)t, 3);
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        const int64_t m = ms[i];
        bptt_plan *plan = NULL;
        bptt_plan_stats st;
        int64_t least = 0;
        const bptt_table_options one = {.min_budget = m};
        /* counted before building: a few columns (MiB), not 1e15 */
        ck_assert_uint_lt(bptt_table_bytes_needed(msm, t, h, s, m, &one),
                          (size_t)16 << 20);
        const int rc = bptt_plan_make("msm", t, h, s, m, NULL, &plan, &st,
                                      &least);
        ck_assert_msg(rc == BPTT_OK, "m=%lld: %s", (long long)m,
                      bptt_strerror(rc));
        check_plan(plan, &st);
        ck_assert(st.peak_units <= m);
        const int64_t lb = 2 * (int64_t)t - 1 - m / s;
        ck_assert_int_ge(st.forward_ops, lb > (int64_t)t ? lb : (int64_t)t);
        ck_assert_int_le(st.forward_ops, last);
        if (m >= 200 * s) /* closed-form budgets */
            ck_assert_int_eq(st.forward_ops, lb);
        last = st.forward_ops;
        bptt_plan_free(plan);
    }
}
END_TEST

/* ---- what planning holds is what is counted --------------------------- */

/* bptt_plan_make at (t, alpha, budget) in slots, internal states both far
 * above t hidden ones (the compressed axis) and small (the dense one): the
 * planner's allocations at their peak (the tracked bytes of alloc.c, what
 * malloc reserved) stay within what is counted before they are made: the
 * table's build (bptt_table_bytes_needed), then the table with the plan
 * (bptt_plan_bytes_bound + bptt_plan_scratch_bytes); and the count is not
 * far above what is held. */
START_TEST(test_bytes_counted)
{
    static const struct {
        const char *name;
        size_t t;
        int64_t s, m;
    } c[] = {{"msm", 100, 100000, 500000},  {"msm", 100, 100000, 495000},
             {"msm", 100, 1000000, 2000000}, {"ism", 100, 100000, 700000},
             {"msm-paper", 60, 100000, 900000}, {"msm", 1000, 4, 400},
             {"msm", 2000, 1, 100},         {"ism", 500, 2, 300},
             {"hsm", 3000, 1, 40},          {"msm", 100000, 1, 2}};
    const size_t i = (size_t)_i;
    const bptt_strategy *st = bptt_strategy_find(c[i].name);
    const bptt_table_options one = {.min_budget = c[i].m};
    const size_t build =
        bptt_table_bytes_needed(st, c[i].t, 1, c[i].s, c[i].m, &one);
    ck_assert(build > 0 && build < SIZE_MAX);
    bptt_alloc_reset_peak();
    const size_t base = bptt_alloc_bytes();
    bptt_plan *plan = NULL;
    bptt_plan_stats ps;
    const int rc = bptt_plan_make(c[i].name, c[i].t, 1, c[i].s, c[i].m, NULL,
                                  &plan, &ps, NULL);
    ck_assert_msg(rc == BPTT_OK, "%s: %s", c[i].name, bptt_strerror(rc));
    const size_t peak = bptt_alloc_peak_bytes() - base;
    /* the build, then the table (at most the build's count) with the
     * plan's actions (an array of exactly their number) and the scratch */
    const double counted = (double)build +
                           (double)plan->n_actions * sizeof(bptt_action) +
                           (double)bptt_plan_scratch_bytes(
                               bptt_strategy_find(c[i].name), c[i].t);
    ck_assert_uint_eq(plan->capacity, plan->n_actions);
    ck_assert_msg((double)peak <= counted,
                  "%s t=%zu s=%lld m=%lld: held %zu bytes, counted %.0f",
                  c[i].name, c[i].t, (long long)c[i].s, (long long)c[i].m,
                  peak, counted);
    if (bptt_alloc_bytes() > 0 || peak > 0) /* tracked by this C library */
        ck_assert_msg(counted <= 4.0 * (double)peak + (1 << 20),
                      "%s t=%zu: counted %.0f, held %zu", c[i].name, c[i].t,
                      counted, peak);
    bptt_plan_free(plan);
    ck_assert_uint_eq(bptt_alloc_bytes(), base); /* all given back */
}
END_TEST

/* The cases of the hostile battery that took a minute: t = 100 at alpha
 * 1e6 counts a table of a few hundred columns (it was 2e6 columns, 4.8
 * GB), and t = 1e5 at two slots gives the pinned optimal costs (a split
 * group that is convex is bisected, not scanned: the suite's timeout
 * catches a return to t^2 work). */
START_TEST(test_hostile_sizes)
{
    const bptt_strategy *msm = bptt_strategy_find("msm");
    const bptt_table_options one = {.min_budget = 2000000};
    ck_assert_uint_lt(bptt_table_bytes_needed(msm, 100, 1, 1000000, 2000000,
                                              &one),
                      (size_t)4 << 20);
    bptt_plan *plan = NULL;
    bptt_plan_stats st;
    ck_assert_int_eq(bptt_plan_make("msm", 100, 1, 1000000, 2000000, NULL,
                                    &plan, &st, NULL),
                     BPTT_OK);
    check_plan(plan, &st);
    ck_assert_int_eq(st.forward_ops, 198);
    bptt_plan_free(plan);
    static const char *const names[] = {"msm", "ism", "hsm"};
    static const int64_t want[] = {29714305, 29714305, 29814304};
    for (int k = 0; k < 3; k++) {
        plan = NULL;
        ck_assert_int_eq(bptt_plan_make(names[k], 100000, 1, 1, 2, NULL,
                                        &plan, &st, NULL),
                         BPTT_OK);
        check_plan(plan, &st);
        ck_assert_int_eq(st.forward_ops, want[k]);
        bptt_plan_free(plan);
    }
    ck_assert_int_eq(bptt_hsm_closed_cost(100000, 2), want[2]);
}
END_TEST

/* ---- closed forms: bounded in time, never wrapping --------------------- */

/* The old loop, for small sizes only. */
static int64_t hsm_closed_ref(int64_t t, int64_t m)
{
    if (t == 0)
        return 0;
    __int128 b = 1;
    int64_t r = 0;
    while (b < t) {
        r++;
        b = b * (m + r) / r;
    }
    return (int64_t)((__int128)(r + 1) * t - b * r / (m + 1));
}

START_TEST(test_hsm_closed_bounded)
{
    for (int64_t t = 0; t <= 300; t++)
        for (int64_t m = 1; m <= 12; m++)
            ck_assert_int_eq(bptt_hsm_closed_cost(t, m), hsm_closed_ref(t, m));
    /* m = 1: t (t + 1) / 2, in no time */
    const int64_t t9 = 1000000000;
    ck_assert_int_eq(bptt_hsm_closed_cost(t9, 1), t9 * (t9 + 1) / 2);
    ck_assert_int_eq(bptt_hsm_closed_cost(INT64_C(10000000000), 1), -1);
    ck_assert_int_eq(bptt_hsm_closed_cost(INT64_MAX, 1), -1);
    ck_assert_int_eq(bptt_hsm_closed_cost(INT64_MAX, INT64_MAX), -1);
    /* a huge budget: one pass and every backward from a stored state */
    ck_assert_int_eq(bptt_hsm_closed_cost(1000, INT64_MAX), 1999);
    ck_assert_int_eq(bptt_hsm_closed_cost(-1, 1), -1);
    ck_assert_int_eq(bptt_hsm_closed_cost(5, 0), -1);
}
END_TEST

START_TEST(test_chen_segment_bounded)
{
    for (size_t t = 1; t <= 5000; t++) {
        const size_t k = bptt_chen_default_segment(t);
        ck_assert(k * k >= t);
        ck_assert(k == 1 || (k - 1) * (k - 1) < t);
    }
    if (SIZE_MAX == UINT64_MAX) {
        const size_t r = (size_t)UINT32_MAX;
        ck_assert_uint_eq(bptt_chen_default_segment(SIZE_MAX), r + 1);
        ck_assert_uint_eq(bptt_chen_default_segment(r * r), r);
        ck_assert_uint_eq(bptt_chen_default_segment(r * r + 1), r + 1);
    }
}
END_TEST

/* ---- peaks that do not fit: -1, and BPTT_ETOOBIG from plan_make -------- */

START_TEST(test_peaks_overflow)
{
    const int64_t p62 = INT64_C(1) << 62;
    ck_assert_int_eq(bptt_full_peak(4, 1, p62), -1);
    ck_assert_int_eq(bptt_full_peak(3, 1, p62), -1); /* 2^63 */
    ck_assert_int_eq(bptt_full_peak(2, 1, p62), p62);
    ck_assert_int_eq(bptt_full_peak(1, 7, p62), 7);
    const int64_t s61 = (INT64_C(1) << 61) - 1;
    ck_assert_int_eq(bptt_full_peak(1000, 1, s61), -1);
    /* chen: 32 segments of 32 (or fewer) steps: 32 + 31 s61 > INT64_MAX */
    ck_assert_int_eq(bptt_chen_peak(1000, 32, 1, s61), -1);
    /* 31 segments of 32 and one of 8: max(32 + 7, 31 + 31) */
    ck_assert_int_eq(bptt_chen_peak(1000, 32, 1, 1), 62);
    ck_assert_int_eq(bptt_chen_cost(SIZE_MAX, 1), -1);
    const bptt_strategy *chen = bptt_strategy_find("chen");
    const bptt_strategy *full = bptt_strategy_find("full");
    ck_assert_int_eq(bptt_strategy_min_budget(chen, 1000, 1, s61, NULL), -1);
    ck_assert_int_eq(bptt_strategy_min_budget(full, 1000, 1, s61, NULL), -1);
    /* Python's plan(1000, 1, 2**61-1, '100%'): never "1 byte" */
    bptt_plan *plan = NULL;
    bptt_plan_stats st;
    int64_t least = 0;
    ck_assert_int_eq(bptt_plan_make("full", 1000, 1, s61, INT64_MAX, NULL,
                                    &plan, &st, &least),
                     BPTT_ETOOBIG);
    ck_assert_ptr_null(plan);
    ck_assert_int_eq(bptt_plan_make("chen", 1000, 1, s61, INT64_MAX, NULL,
                                    &plan, &st, &least),
                     BPTT_ETOOBIG);
    ck_assert_ptr_null(plan);
    /* a table answers -1 (infeasible or too big), not a wrapped cost */
    bptt_table *tb = NULL;
    ck_assert_int_eq(bptt_table_alloc(&tb, full, 4, 1, p62, INT64_MAX, NULL),
                     BPTT_OK);
    ck_assert_int_eq(bptt_table_cost(tb, INT64_MAX), -1);
    ck_assert_int_eq(bptt_table_cost(tb, 1), -1);
    bptt_table_free(tb);
}
END_TEST

/* ---- NULL pointers: BPTT_EINVAL (or the documented value) -------------- */

/* Budgets in bytes at the API: bptt_plan_min_budget is the budget below
 * which bptt_plan_make is infeasible (and the one it names), at every
 * strategy and a few sizes; the plan's peak comes back in bytes. */
START_TEST(test_min_budget_bytes)
{
    static const int64_t sizes[][2] = {{1, 1}, {8, 28}, {256, 384},
                                       {3, 1000003}};
    static const size_t lengths[] = {1, 2, 17, 200};
    for (size_t k = 0; bptt_strategies[k]; k++)
        for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
            for (size_t j = 0; j < sizeof lengths / sizeof *lengths; j++) {
                const char *name = bptt_strategies[k]->name;
                const size_t t = lengths[j];
                const int64_t hb = sizes[i][0], sb = sizes[i][1];
                int64_t least = 0, named = 0;
                ck_assert_int_eq(bptt_plan_min_budget(name, t, hb, sb, NULL,
                                                      &least),
                                 BPTT_OK);
                ck_assert_int_ge(least, hb); /* h(0) at least */
                bptt_plan *p = (bptt_plan *)&named; /* must become NULL */
                bptt_plan_stats st;
                ck_assert_int_eq(bptt_plan_make(name, t, hb, sb, least - 1,
                                                NULL, &p, &st, &named),
                                 BPTT_EINFEASIBLE);
                ck_assert_ptr_null(p);
                ck_assert_int_eq(named, least);
                ck_assert_int_eq(bptt_plan_make(name, t, hb, sb, least, NULL,
                                                &p, &st, NULL),
                                 BPTT_OK);
                ck_assert_int_eq(st.peak_bytes,
                                 st.peak_units * (hb / p->hidden_units));
                ck_assert_int_le(st.peak_bytes, least);
                bptt_plan_free(p);
            }
    /* refusals */
    int64_t b = 7;
    ck_assert_int_eq(bptt_plan_min_budget("fast", 10, 1, 1, NULL, &b),
                     BPTT_EINVAL);
    ck_assert_int_eq(b, -1);
    ck_assert_int_eq(bptt_plan_min_budget("msm", 0, 1, 1, NULL, &b),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_min_budget("msm", 10, 2, 1, NULL, &b),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_min_budget("msm", 10, 1, 1, NULL, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_min_budget(NULL, 10, 1, 1, NULL, &b),
                     BPTT_EINVAL);
    /* the validator alone has no bytes */
    bptt_plan *p = NULL;
    bptt_plan_stats st;
    ck_assert_int_eq(bptt_plan_make("msm", 10, 4, 8, 1000, NULL, &p, &st,
                                    NULL),
                     BPTT_OK);
    ck_assert_int_eq(bptt_plan_validate(p, &st), BPTT_OK);
    ck_assert_int_eq(st.peak_bytes, 0);
    bptt_plan_free(p);
}
END_TEST

START_TEST(test_null_pointers)
{
    bptt_plan *plan = NULL;
    bptt_plan_stats st;
    bptt_table *tb = NULL;
    bptt_units u;
    int64_t least;
    const bptt_strategy *msm = bptt_strategy_find("msm");

    ck_assert_int_eq(bptt_op_parse(NULL), -1);
    ck_assert_ptr_null(bptt_strategy_find(NULL));
    ck_assert_int_eq(bptt_plan_alloc(NULL, 4, 1, 1, 4), BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_push(NULL, BPTT_ADVANCE, 1), BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_validate(NULL, &st), BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_alloc(&plan, 4, 1, 1, 4), BPTT_OK);
    ck_assert_int_eq(bptt_plan_validate(plan, NULL), BPTT_EINVAL);
    plan->n_actions = 3; /* actions NULL */
    ck_assert_int_eq(bptt_plan_validate(plan, &st), BPTT_EINVAL);
    plan->n_actions = 0;
    bptt_plan_free(plan);
    plan = NULL;

    ck_assert_int_eq(bptt_table_alloc(NULL, msm, 4, 1, 1, 4, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_table_alloc(&tb, NULL, 4, 1, 1, 4, NULL),
                     BPTT_EINVAL);
    ck_assert_ptr_null(tb);
    ck_assert_uint_eq(bptt_table_length(NULL), 0);
    ck_assert_int_eq(bptt_table_max_budget(NULL), -1);
    ck_assert_ptr_null(bptt_table_strategy(NULL));
    ck_assert_uint_eq(bptt_table_bytes(NULL), 0);
    ck_assert_int_eq(bptt_table_min_served(NULL), -1);
    ck_assert_int_eq(bptt_table_closed_form_from(NULL), INT64_MAX);
    ck_assert_int_eq(bptt_table_cost_at(NULL, 1, 1), -1);
    ck_assert_int_eq(bptt_table_cost(NULL, 1), -1);
    ck_assert_int_eq(bptt_table_min_budget(NULL), -1);
    ck_assert_int_eq(bptt_table_tight_budget(NULL, 1), -1);
    ck_assert_int_eq(bptt_strategy_min_budget(NULL, 4, 1, 1, NULL), -1);
    ck_assert_int_eq(bptt_strategy_known_cost(NULL, 4, 1, 1, 4), -1);
    ck_assert_uint_eq(bptt_table_bytes_needed(NULL, 4, 1, 1, 4, NULL), 0);
    least = 0;
    ck_assert_int_eq(bptt_table_plan(NULL, 1, &plan, &least), BPTT_EINVAL);
    ck_assert_int_eq(least, -1);
    ck_assert_int_eq(bptt_table_alloc(&tb, msm, 4, 1, 1, 4, NULL), BPTT_OK);
    ck_assert_int_eq(bptt_table_plan(tb, 4, NULL, NULL), BPTT_EINVAL);
    ck_assert_int_eq(bptt_table_plan(tb, 4, &plan, NULL), BPTT_OK);
    bptt_plan_free(plan);
    plan = NULL;
    bptt_table_free(tb);

    ck_assert_int_eq(bptt_plan_make(NULL, 4, 1, 1, 4, NULL, &plan, &st,
                                    NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_make("msm", 4, 1, 1, 4, NULL, NULL, &st, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_make("msm", 4, 1, 1, 4, NULL, &plan, NULL,
                                    NULL),
                     BPTT_EINVAL);
    ck_assert_ptr_null(plan);

    ck_assert_int_eq(bptt_units_from_bytes(NULL, 1, 2), BPTT_EINVAL);
    ck_assert_int_eq(bptt_units_from_alpha(NULL, &u), BPTT_EINVAL);
    ck_assert_int_eq(bptt_units_from_alpha("4", NULL), BPTT_EINVAL);

    /* name lists: NULL buffer (length only), NULL names, NULL separator */
    char buf[128];
    const size_t n = bptt_strategy_names(buf, sizeof buf, " or ");
    ck_assert_uint_eq(bptt_strategy_names(NULL, 64, " or "), n);
    ck_assert_uint_eq(bptt_strategy_names(NULL, 0, NULL),
                      bptt_strategy_names(buf, sizeof buf, ", "));
    ck_assert_uint_eq(bptt_names_text(buf, sizeof buf, NULL, 3, ", "), 0);
    ck_assert_uint_eq(bptt_strategy_names_with(NULL, 8, 1u, NULL),
                      bptt_strategy_names_with(buf, sizeof buf, 1u, ", "));
    bptt_plan_free(NULL);
    bptt_table_free(NULL);
}
END_TEST

static Suite *limits_suite(void)
{
    Suite *su = suite_create("plan_limits");
    TCase *tc = tcase_create("huge_units");
    /* short: a planner that walks 1e18 budgets fails here, not hangs */
    tcase_set_timeout(tc, 20);
    tcase_add_loop_test(tc, test_huge_units_dp, 0, 3 * N_DP);
    tcase_add_loop_test(tc, test_huge_units_three_hidden, 0, 3 * N_DP);
    tcase_add_loop_test(tc, test_huge_units_full, 0, 3);
    tcase_add_loop_test(tc, test_msm_big_units, 0, 3);
    suite_add_tcase(su, tc);

    tc = tcase_create("counted");
    /* a hang guard, not a speed check: each case takes well under a
     * second on 2 cores; the t^2 scans it replaced took about a minute */
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_msm_big_units_internal);
    tcase_add_loop_test(tc, test_bytes_counted, 0, 10);
    tcase_add_test(tc, test_hostile_sizes);
    suite_add_tcase(su, tc);

    tc = tcase_create("closed_forms");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_hsm_closed_bounded);
    tcase_add_test(tc, test_chen_segment_bounded);
    tcase_add_test(tc, test_peaks_overflow);
    suite_add_tcase(su, tc);

    tc = tcase_create("null");
    tcase_set_timeout(tc, 5);
    tcase_add_test(tc, test_null_pointers);
    tcase_add_test(tc, test_min_budget_bytes);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(limits_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
