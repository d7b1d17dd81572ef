/* test_planner.c: Check suite of the planner, its tables and the validator.
 *
 * Promises: every strategy in bptt_strategies[] is held to the cost model
 * of doc/design.md 1 through the validator (its plans run, cost what the table
 * says, and fit the budget); the optimal strategies are held to exhaustive
 * search (tests/exhaustive.c), HSM to the binomial closed form, and the
 * -paper strategies to an independent reading of the paper's recursions;
 * the validator rejects each kind of broken plan at the right action.
 * The exit status carries the failures.
 *
 * Legend: t sequence length, h hidden-state units, s internal-state units
 * (alpha in slot mode, h = 1), m budget in units.
 *
 * main only builds the suite and runs it: no math and no OpenMP before
 * Check forks (the tests themselves build tables, in the children).
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "plan/alloc.h"
#include "exhaustive.h"

/* ---- helpers --------------------------------------------------------- */

static bptt_table *make_table(const char *name, size_t t, int64_t h,
                              int64_t s, int64_t max_m,
                              const bptt_table_options *opts)
{
    const bptt_strategy *st = bptt_strategy_find(name);
    ck_assert_msg(st != NULL, "strategy %s not found", name);
    bptt_table *tb = NULL;
    const int rc = bptt_table_alloc(&tb, st, t, h, s, max_m, opts);
    ck_assert_msg(rc == BPTT_OK && tb != NULL,
                  "bptt_table_alloc(%s, t=%zu, h=%lld, s=%lld, m=%lld): %s",
                  name, t, (long long)h, (long long)s, (long long)max_m,
                  bptt_strerror(rc));
    return tb;
}

/* Cost of length t' <= the table's length, through the strategy. */
static int64_t cost_at(const bptt_table *tb, size_t t, int64_t m)
{
    return bptt_table_strategy(tb)->cost(tb, t, m);
}

/* Collects mismatches so that a failing test lists several, not one. */
typedef struct {
    int n;
    char text[1536];
} mismatches;

static void note(mismatches *mm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void note(mismatches *mm, const char *fmt, ...)
{
    if (mm->n++ >= 12)
        return;
    const size_t used = strlen(mm->text);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(mm->text + used, sizeof mm->text - used, fmt, ap);
    va_end(ap);
}

#define ASSERT_NO_MISMATCH(mm, what)                                        \
    ck_assert_msg((mm).n == 0, "%s: %d mismatches:%s", (what), (mm).n,      \
                  (mm).text)

static bptt_plan *plan_new(size_t t, int64_t h, int64_t s, int64_t m)
{
    bptt_plan *p = NULL;
    ck_assert_int_eq(bptt_plan_alloc(&p, t, h, s, m), BPTT_OK);
    return p;
}

/* A plan from (op, step) pairs, terminated by op -1. */
static bptt_plan *plan_of(size_t t, int64_t h, int64_t s, int64_t m,
                          const int *pairs)
{
    bptt_plan *p = plan_new(t, h, s, m);
    for (size_t k = 0; pairs[2 * k] >= 0; k++)
        ck_assert_int_eq(
            bptt_plan_push(p, pairs[2 * k], (size_t)pairs[2 * k + 1]),
            BPTT_OK);
    return p;
}

/* Validates a plan expected to be broken with violation v at action k. */
static void expect_violation(const bptt_plan *p, int v, size_t k)
{
    bptt_plan_stats st;
    const int rc = bptt_plan_validate(p, &st);
    ck_assert_msg(rc == BPTT_EBADPLAN, "plan accepted; expected '%s'",
                  bptt_violation_str(v));
    ck_assert_msg(st.violation == v, "violation '%s', expected '%s'",
                  bptt_violation_str(st.violation), bptt_violation_str(v));
    ck_assert_msg(st.bad_action == k, "bad_action %zu, expected %zu",
                  st.bad_action, k);
}

/* ---- HSM: binomial checkpointing ------------------------------------- */

START_TEST(test_hsm_closed_pinned)
{
    ck_assert_int_eq(bptt_hsm_closed_cost(10, 3), 25);
    ck_assert_int_eq(bptt_hsm_closed_cost(100, 5), 416);
    ck_assert_int_eq(bptt_hsm_closed_cost(1000, 10), 4636);
    ck_assert_int_eq(bptt_hsm_closed_cost(1000, 31), 3439);
    ck_assert_int_eq(bptt_hsm_closed_cost(10, 0), -1);
    ck_assert_int_eq(bptt_hsm_closed_cost(0, 3), 0);
    /* one slot: recompute from h(0) before every backward op */
    for (int64_t t = 1; t <= 100; t++)
        ck_assert_int_eq(bptt_hsm_closed_cost(t, 1), t * (t + 1) / 2);
    /* m >= t: 2t - 1 */
    for (int64_t t = 1; t <= 200; t++)
        for (int64_t m = t; m <= t + 5; m++)
            ck_assert_int_eq(bptt_hsm_closed_cost(t, m), 2 * t - 1);
}
END_TEST

START_TEST(test_hsm_dp_pinned)
{
    bptt_table *tb = make_table("hsm", 1000, 1, 1, 31, NULL);
    ck_assert_int_eq(cost_at(tb, 10, 3), 25);
    ck_assert_int_eq(cost_at(tb, 100, 5), 416);
    ck_assert_int_eq(cost_at(tb, 1000, 10), 4636);
    ck_assert_int_eq(cost_at(tb, 1000, 31), 3439);
    ck_assert_int_eq(bptt_table_cost(tb, 10), 4636);
    ck_assert_int_eq(bptt_table_cost(tb, 31), 3439);
    bptt_table_free(tb);

    tb = make_table("hsm", 100, 1, 3, 110, NULL);
    for (size_t t = 1; t <= 100; t++)
        for (int64_t m = (int64_t)t; m <= 110; m++)
            ck_assert_int_eq(cost_at(tb, t, m), 2 * (int64_t)t - 1);
    bptt_table_free(tb);
}
END_TEST

/* _i: alpha index (alpha 1 and 3); internal units must not matter. */
START_TEST(test_hsm_dp_equals_closed)
{
    const int64_t alpha = _i == 0 ? 1 : 3;
    const size_t T = 500;
    const int64_t M = 30;
    bptt_table *tb = make_table("hsm", T, 1, alpha, M, NULL);
    mismatches mm = {0};
    for (size_t t = 0; t <= T; t++)
        for (int64_t m = 0; m <= M; m++) {
            const int64_t dp = cost_at(tb, t, m);
            const int64_t cf = bptt_hsm_closed_cost((int64_t)t, m);
            if (dp != cf)
                note(&mm, " (t=%zu m=%lld: dp %lld closed %lld)", t,
                     (long long)m, (long long)dp, (long long)cf);
        }
    bptt_table_free(tb);
    ASSERT_NO_MISMATCH(mm, alpha == 1 ? "hsm alpha=1" : "hsm alpha=3");
}
END_TEST

/* ---- optimal strategies against exhaustive search -------------------- */

#define EX_T 7 /* lengths 1..EX_T */
#define EX_M 8 /* budgets 0..EX_M */

/* The strategy's table at every (t, m) of the small grid equals the
 * exhaustive optimum with the same kinds of state allowed. */
static void check_against_exhaustive(const char *name, int64_t h, int64_t s,
                                     int tmax, int64_t mmax,
                                     int allow_hidden, int allow_internal)
{
    bptt_table *tb = make_table(name, (size_t)tmax, h, s, mmax, NULL);
    mismatches mm = {0};
    for (int t = 1; t <= tmax; t++)
        for (int64_t m = 0; m <= mmax; m++) {
            const int64_t ex =
                exhaustive_cost(t, h, s, m, allow_hidden, allow_internal);
            ck_assert_msg(ex >= -1, "exhaustive_cost failed (t=%d)", t);
            const int64_t dp = cost_at(tb, (size_t)t, m);
            if (dp != ex)
                note(&mm, " (t=%d m=%lld: %s %lld exhaustive %lld)", t,
                     (long long)m, name, (long long)dp, (long long)ex);
        }
    bptt_table_free(tb);
    char what[96];
    snprintf(what, sizeof what, "%s h=%lld s=%lld", name, (long long)h,
             (long long)s);
    ASSERT_NO_MISMATCH(mm, what);
}

/* _i: alpha - 1, alpha in 1..3 */
START_TEST(test_msm_exhaustive)
{
    check_against_exhaustive("msm", 1, _i + 1, EX_T, EX_M, 1, 1);
}
END_TEST

START_TEST(test_ism_exhaustive)
{
    check_against_exhaustive("ism", 1, _i + 1, EX_T, EX_M, 0, 1);
}
END_TEST

START_TEST(test_hsm_exhaustive)
{
    check_against_exhaustive("hsm", 1, _i + 1, EX_T, EX_M, 1, 0);
}
END_TEST

START_TEST(test_exhaustive_pinned)
{
    /* doc/design.md 3.3: alpha = 2, t = 2, m = 2 costs 2 (advance 1, free
     * h(0), save s(1), advance 2, backward 2, backward 1); the paper's
     * recursion keeps h(0) and needs 3. */
    ck_assert_int_eq(exhaustive_cost(2, 1, 2, 2, 1, 1), 2);
    ck_assert_int_eq(exhaustive_cost(2, 1, 2, 2, 0, 1), 2);
    ck_assert_int_eq(exhaustive_cost(2, 1, 2, 2, 1, 0), 3);
    bptt_table *tb = make_table("msm", 2, 1, 2, 2, NULL);
    ck_assert_int_eq(bptt_table_cost(tb, 2), 2);
    bptt_table_free(tb);
    tb = make_table("msm-paper", 2, 1, 2, 2, NULL);
    ck_assert_int_eq(bptt_table_cost(tb, 2), 3);
    bptt_table_free(tb);

    /* the search itself: budgets below h(0), one slot, plenty */
    ck_assert_int_eq(exhaustive_cost(3, 2, 5, 1, 1, 1), -1);
    ck_assert_int_eq(exhaustive_cost(5, 1, 1, 1, 1, 0), 15);
    ck_assert_int_eq(exhaustive_cost(5, 1, 1, 1, 0, 0), 15);
    /* alpha = 1, one slot: s(1) replaces h(0), then 4 + 3 + 2 + 1 */
    ck_assert_int_eq(exhaustive_cost(5, 1, 1, 1, 1, 1), 11);
    ck_assert_int_eq(exhaustive_cost(6, 1, 3, 100, 1, 1), 6);
    ck_assert_int_eq(exhaustive_cost(6, 1, 3, 100, 1, 0), 11);
    ck_assert_int_eq(exhaustive_cost(0, 1, 1, 1, 1, 1), -2);
    ck_assert_int_eq(exhaustive_cost(EXHAUSTIVE_MAX_T + 1, 1, 1, 1, 1, 1),
                     -2);
}
END_TEST

/* ---- the -paper strategies: the literal recursions ------------------- */

#define PAPER_T 60
#define PAPER_M 40
#define PAPER_INF INT64_MAX

/* The paper's recursions in slots (h = 1, s = alpha), memoised:
 *   C(0, m) = 0;  C(t, m) = inf for m < 1, t >= 1;  C(1, m) = 1;
 *   HSM term  min_{1<=y<t} y + C(t-y, m-1) + C(y, m)
 *   ISM term  min_{1<=y<t} y + C(t-y, m-alpha) + C(y-1, m),
 *             and y = t (nothing stored): t + C(t-1, m)
 *   MSM: the smaller of the two. */
typedef struct {
    int64_t alpha;
    int hidden; /* HSM term on */
    int64_t memo[PAPER_T + 1][PAPER_M + 1];
    char known[PAPER_T + 1][PAPER_M + 1];
} paper_ref;

static int64_t add3(int64_t a, int64_t b, int64_t c)
{
    if (a == PAPER_INF || b == PAPER_INF || c == PAPER_INF)
        return PAPER_INF;
    return a + b + c;
}

static int64_t paper_c(paper_ref *r, int t, int64_t m)
{
    if (t == 0)
        return 0;
    if (m < 1)
        return PAPER_INF;
    if (r->known[t][m])
        return r->memo[t][m];
    int64_t best = PAPER_INF;
    if (t == 1)
        best = 1;
    else {
        best = add3(t, paper_c(r, t - 1, m), 0); /* y = t */
        for (int y = 1; y < t; y++) {
            int64_t v = add3(y, paper_c(r, t - y, m - r->alpha),
                             paper_c(r, y - 1, m));
            if (v < best)
                best = v;
            if (r->hidden) {
                v = add3(y, paper_c(r, t - y, m - 1), paper_c(r, y, m));
                if (v < best)
                    best = v;
            }
        }
    }
    r->known[t][m] = 1;
    r->memo[t][m] = best;
    return best;
}

/* _i: alpha index into {1, 2, 4}, times 2 for the strategy. */
START_TEST(test_paper_recursions)
{
    static const int64_t alphas[] = {1, 2, 4};
    const int64_t alpha = alphas[_i % 3];
    const int hidden = _i / 3;
    const char *name = hidden ? "msm-paper" : "ism-paper";
    paper_ref *ref = calloc(1, sizeof *ref);
    ck_assert_ptr_nonnull(ref);
    ref->alpha = alpha;
    ref->hidden = hidden;
    bptt_table *tb = make_table(name, PAPER_T, 1, alpha, PAPER_M, NULL);
    mismatches mm = {0};
    for (int t = 1; t <= PAPER_T; t++)
        for (int64_t m = 0; m <= PAPER_M; m++) {
            const int64_t c = paper_c(ref, t, m);
            const int64_t want = c == PAPER_INF ? -1 : c;
            const int64_t got = cost_at(tb, (size_t)t, m);
            if (got != want)
                note(&mm, " (t=%d m=%lld alpha=%lld: %lld, recursion %lld)",
                     t, (long long)m, (long long)alpha, (long long)got,
                     (long long)want);
        }
    /* the paper's base case C(t, 1) = t(t+1)/2 */
    for (int t = 1; t <= PAPER_T; t++)
        ck_assert_int_eq(paper_c(ref, t, 1), (int64_t)t * (t + 1) / 2);
    bptt_table_free(tb);
    free(ref);
    ASSERT_NO_MISMATCH(mm, name);
}
END_TEST

/* ---- every strategy: plans validate and cost what the table says ----- */

static int is_tight_strategy(const char *name)
{
    return strcmp(name, "ism") == 0 || strcmp(name, "msm") == 0;
}

/* For lengths 1..tmax and every budget 0 .. full peak + 2, the strategy's
 * plans are valid, cost their table entry, run t backward ops, fit the
 * budget (exactly its tight budget for ism and msm); budgets below the
 * minimum are refused and report it; cost never rises with the budget. */
static void check_strategy_plans(const bptt_strategy *st, size_t tmax,
                                 int64_t h, int64_t s)
{
    mismatches mm = {0};
    for (size_t t = 1; t <= tmax; t++) {
        const int64_t maxb = bptt_full_peak(t, h, s) + 2;
        bptt_table *tb = make_table(st->name, t, h, s, maxb, NULL);
        const int64_t minb = bptt_table_min_budget(tb);
        ck_assert_msg(minb >= 0 && minb <= maxb,
                      "%s t=%zu: min budget %lld outside 0..%lld", st->name,
                      t, (long long)minb, (long long)maxb);
        ck_assert_msg(bptt_table_cost(tb, minb) >= 0,
                      "%s t=%zu: min budget %lld infeasible", st->name, t,
                      (long long)minb);
        int64_t prev = -1;
        for (int64_t m = 0; m <= maxb; m++) {
            const int64_t c = bptt_table_cost(tb, m);
            bptt_plan *plan = NULL;
            int64_t minf = -7;
            const int rc = bptt_table_plan(tb, m, &plan, &minf);
            if (m < minb) {
                if (c != -1 || rc != BPTT_EINFEASIBLE || plan != NULL ||
                    minf != minb)
                    note(&mm,
                         " (t=%zu m=%lld below min %lld: cost %lld rc %d "
                         "min_feasible %lld)",
                         t, (long long)m, (long long)minb, (long long)c, rc,
                         (long long)minf);
                bptt_plan_free(plan);
                continue;
            }
            if (rc != BPTT_OK || plan == NULL || c < 0) {
                note(&mm, " (t=%zu m=%lld: cost %lld, plan rc %d)", t,
                     (long long)m, (long long)c, rc);
                bptt_plan_free(plan);
                continue;
            }
            if (prev >= 0 && c > prev)
                note(&mm, " (t=%zu m=%lld: cost %lld rises from %lld)", t,
                     (long long)m, (long long)c, (long long)prev);
            prev = c;
            bptt_plan_stats ps;
            const int vrc = bptt_plan_validate(plan, &ps);
            const int64_t tight = bptt_table_tight_budget(tb, m);
            if (vrc != BPTT_OK)
                note(&mm, " (t=%zu m=%lld: invalid, '%s' at action %zu)", t,
                     (long long)m, bptt_violation_str(ps.violation),
                     ps.bad_action);
            else if (ps.forward_ops != c || ps.backward_ops != (int64_t)t ||
                     ps.recompute_ops != c - (int64_t)t ||
                     ps.peak_units > m || plan->budget != m ||
                     plan->length != t || tight < 0 || tight > m ||
                     (is_tight_strategy(st->name) && ps.peak_units != tight))
                note(&mm,
                     " (t=%zu m=%lld: cost %lld, plan fwd %lld bwd %lld "
                     "recompute %lld peak %lld, tight budget %lld)",
                     t, (long long)m, (long long)c, (long long)ps.forward_ops,
                     (long long)ps.backward_ops,
                     (long long)ps.recompute_ops, (long long)ps.peak_units,
                     (long long)tight);
            bptt_plan_free(plan);
        }
        bptt_table_free(tb);
    }
    char what[96];
    snprintf(what, sizeof what, "%s h=%lld s=%lld", st->name, (long long)h,
             (long long)s);
    ASSERT_NO_MISMATCH(mm, what);
}

START_TEST(test_strategy_table)
{
    static const char *const names[] = {"full", "chen", "hsm", "ism",
                                        "msm", "ism-paper", "msm-paper"};
    size_t n = 0;
    while (bptt_strategies[n])
        n++;
    ck_assert_uint_ge(n, 7);
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        const bptt_strategy *st = bptt_strategy_find(names[k]);
        ck_assert_msg(st != NULL, "strategy %s missing", names[k]);
        ck_assert_str_eq(st->name, names[k]);
    }
    for (size_t k = 0; k < n; k++) {
        const bptt_strategy *st = bptt_strategies[k];
        ck_assert_ptr_eq(bptt_strategy_find(st->name), st);
        ck_assert(st->summary && st->build && st->cost && st->emit &&
                  st->min_budget);
    }
    ck_assert_ptr_null(bptt_strategy_find("no-such-strategy"));
}
END_TEST

/* _i: index into bptt_strategies[]; slots with alpha 1 and 3. */
START_TEST(test_strategy_plans_slots)
{
    const bptt_strategy *st = bptt_strategies[_i];
    check_strategy_plans(st, 60, 1, 1);
    check_strategy_plans(st, 60, 1, 3);
}
END_TEST

/* _i: index into bptt_strategies[]; byte units (h = 2, s = 9: 64 KiB and
 * 288 KiB). */
START_TEST(test_strategy_plans_units)
{
    const bptt_strategy *st = bptt_strategies[_i];
    check_strategy_plans(st, 25, 2, 9);
}
END_TEST

/* _i: index into bptt_strategies[].  A table's answers do not depend on
 * its largest budget, and a budget far beyond any need (byte mode with a
 * small quantum) is served without a table that wide. */
#define HUGE_BUDGET INT64_C(1000000000000)

START_TEST(test_budget_width)
{
    const bptt_strategy *st = bptt_strategies[_i];
    static const int64_t sizes[][2] = {{1, 1}, {1, 3}, {2, 9}};
    static const size_t lengths[] = {1, 2, 5, 17};
    mismatches mm = {0};
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++) {
            const int64_t h = sizes[a][0], s = sizes[a][1];
            const size_t t = lengths[l];
            const int64_t wide = bptt_full_peak(t, h, s) + 3 * s + 5;
            bptt_table *ta = make_table(st->name, t, h, s, wide, NULL);
            bptt_table *tb = make_table(st->name, t, h, s, HUGE_BUDGET, NULL);
            for (size_t u = 0; u <= t; u++)
                for (int64_t m = 0; m <= wide; m++)
                    if (cost_at(ta, u, m) != cost_at(tb, u, m))
                        note(&mm,
                             " (h=%lld s=%lld t=%zu m=%lld: %lld vs %lld)",
                             (long long)h, (long long)s, u, (long long)m,
                             (long long)cost_at(ta, u, m),
                             (long long)cost_at(tb, u, m));
            ck_assert_int_eq(bptt_table_max_budget(tb), HUGE_BUDGET);
            ck_assert_int_eq(bptt_table_cost(tb, HUGE_BUDGET),
                             bptt_table_cost(ta, wide));
            ck_assert_int_eq(bptt_table_cost(tb, HUGE_BUDGET + 1), -1);
            bptt_table_free(ta);
            bptt_table_free(tb);
        }
    ASSERT_NO_MISMATCH(mm, st->name);
}
END_TEST

/* _i: index into bptt_strategies[].  The plan at a huge budget is the
 * plan at the tight budget, found without walking down the budgets. */
START_TEST(test_huge_budget_plan)
{
    const bptt_strategy *st = bptt_strategies[_i];
    const size_t t = 17;
    const int64_t h = 2, s = 9, wide = bptt_full_peak(t, h, s) + 2 * s;
    bptt_table *ta = make_table(st->name, t, h, s, wide, NULL);
    bptt_table *tb = make_table(st->name, t, h, s, HUGE_BUDGET, NULL);
    mark_point(); /* a timeout after this: the tight budget walks */
    const int64_t tight = bptt_table_tight_budget(tb, HUGE_BUDGET);
    ck_assert_int_eq(tight, bptt_table_tight_budget(ta, wide));
    bptt_plan *plan = NULL;
    ck_assert_int_eq(bptt_table_plan(tb, HUGE_BUDGET, &plan, NULL), BPTT_OK);
    ck_assert_int_eq(plan->budget, HUGE_BUDGET);
    bptt_plan_stats ps;
    ck_assert_int_eq(bptt_plan_validate(plan, &ps), BPTT_OK);
    ck_assert_int_eq(ps.forward_ops, bptt_table_cost(tb, HUGE_BUDGET));
    ck_assert_int_le(ps.peak_units, tight);
    if (is_tight_strategy(st->name))
        ck_assert_int_eq(ps.peak_units, tight);
    bptt_plan_free(plan);
    bptt_table_free(ta);
    bptt_table_free(tb);
}
END_TEST

START_TEST(test_table_args)
{
    const bptt_strategy *msm = bptt_strategy_find("msm");
    bptt_table *tb = (bptt_table *)&tb; /* must be reset to NULL */
    ck_assert_int_eq(bptt_table_alloc(&tb, msm, 0, 1, 1, 5, NULL),
                     BPTT_EINVAL);
    ck_assert_ptr_null(tb);
    ck_assert_int_eq(bptt_table_alloc(&tb, msm, 5, 2, 1, 5, NULL),
                     BPTT_EINVAL); /* s < h */
    ck_assert_int_eq(bptt_table_alloc(&tb, msm, 5, 0, 1, 5, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_table_alloc(&tb, msm, 5, 1, 1, -1, NULL),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_table_alloc(&tb, NULL, 5, 1, 1, 5, NULL),
                     BPTT_EINVAL);
    bptt_table_free(NULL);

    tb = make_table("msm", 10, 1, 2, 12, NULL);
    ck_assert_uint_eq(bptt_table_length(tb), 10);
    ck_assert_int_eq(bptt_table_max_budget(tb), 12);
    ck_assert_ptr_eq(bptt_table_strategy(tb), msm);
    ck_assert_uint_gt(bptt_table_bytes(tb), 0);
    ck_assert_int_eq(bptt_table_cost(tb, -1), -1);
    ck_assert_int_eq(bptt_table_cost(tb, 13), -1);
    ck_assert_int_eq(bptt_table_min_budget(tb), 1);
    bptt_plan *plan = (bptt_plan *)&plan;
    ck_assert_int_eq(bptt_table_plan(tb, 13, &plan, NULL), BPTT_EINVAL);
    ck_assert_ptr_null(plan);
    ck_assert_int_eq(bptt_table_plan(tb, 0, &plan, NULL), BPTT_EINFEASIBLE);
    ck_assert_ptr_null(plan);
    bptt_table_free(tb);
}
END_TEST

/* ---- Chen's sqrt(t) and full BPTT ------------------------------------ */

/* Validates the chen plan of length t with segment k (0: default). */
static void check_chen(size_t t, size_t k_opt, int64_t alpha)
{
    const size_t k = k_opt ? (k_opt > t ? t : k_opt)
                           : bptt_chen_default_segment(t);
    const int64_t peak = bptt_chen_peak(t, k, 1, alpha);
    const bptt_table_options opts = {.chen_segment = k_opt, .threads = 0};
    bptt_table *tb = make_table("chen", t, 1, alpha, peak + 1, &opts);
    ck_assert_int_eq(bptt_chen_cost(t, k), 2 * (int64_t)t);
    ck_assert_int_eq(bptt_table_min_budget(tb), peak);
    ck_assert_int_eq(bptt_table_cost(tb, peak), 2 * (int64_t)t);
    ck_assert_int_eq(bptt_table_cost(tb, peak + 1), 2 * (int64_t)t);
    ck_assert_int_eq(bptt_table_cost(tb, peak - 1), -1);
    bptt_plan *plan = NULL;
    ck_assert_int_eq(bptt_table_plan(tb, peak, &plan, NULL), BPTT_OK);
    bptt_plan_stats ps;
    const int rc = bptt_plan_validate(plan, &ps);
    ck_assert_msg(rc == BPTT_OK, "chen t=%zu k=%zu alpha=%lld: '%s' at %zu",
                  t, k, (long long)alpha, bptt_violation_str(ps.violation),
                  ps.bad_action);
    ck_assert_int_eq(ps.forward_ops, 2 * (int64_t)t);
    ck_assert_int_eq(ps.recompute_ops, (int64_t)t);
    ck_assert_int_eq(ps.backward_ops, (int64_t)t);
    ck_assert_msg(ps.peak_units == peak,
                  "chen t=%zu k=%zu alpha=%lld: peak %lld, predicted %lld", t,
                  k, (long long)alpha, (long long)ps.peak_units,
                  (long long)peak);
    bptt_plan_free(plan);
    bptt_table_free(tb);
}

START_TEST(test_chen_default)
{
    for (size_t t = 1; t <= 200; t++) {
        const size_t k = bptt_chen_default_segment(t);
        ck_assert_msg(k >= 1 && k * k >= t && (k - 1) * (k - 1) < t,
                      "default segment %zu is not ceil(sqrt(%zu))", k, t);
        check_chen(t, 0, 1);
        check_chen(t, 0, 3);
    }
}
END_TEST

START_TEST(test_chen_segments)
{
    for (size_t t = 1; t <= 60; t++)
        for (size_t k = 1; k <= t + 2; k++)
            check_chen(t, k, 1 + (int64_t)(k % 3));
    /* the peak formula on a few hand-counted cases (h = 1, s = 2):
     * t = 10, k = 3: segments 3,3,3,1; while segment 3 (1-based) runs,
     * h(0), h(3), h(6) and s(7), s(8) are stored: 3 + 4 = 7 */
    ck_assert_int_eq(bptt_chen_peak(10, 3, 1, 2), 7);
    /* t = 9, k = 3: 3 + 2 * 2 = 7 (the last segment) */
    ck_assert_int_eq(bptt_chen_peak(9, 3, 1, 2), 7);
    /* k = 1: every hidden state h(0..t-1), no internal ones */
    ck_assert_int_eq(bptt_chen_peak(8, 1, 1, 5), 8);
}
END_TEST

START_TEST(test_full)
{
    for (int64_t alpha = 1; alpha <= 3; alpha += 2)
        for (size_t t = 1; t <= 200; t++) {
            const int64_t peak = bptt_full_peak(t, 1, alpha);
            const int64_t want = t == 1 ? 1 : (int64_t)(t - 1) * alpha;
            ck_assert_int_eq(peak, want);
            bptt_table *tb = make_table("full", t, 1, alpha, peak, NULL);
            ck_assert_int_eq(bptt_table_min_budget(tb), peak);
            ck_assert_int_eq(bptt_table_cost(tb, peak), (int64_t)t);
            ck_assert_int_eq(bptt_table_cost(tb, peak - 1), -1);
            bptt_plan *plan = NULL;
            ck_assert_int_eq(bptt_table_plan(tb, peak, &plan, NULL), BPTT_OK);
            bptt_plan_stats ps;
            ck_assert_int_eq(bptt_plan_validate(plan, &ps), BPTT_OK);
            ck_assert_int_eq(ps.forward_ops, (int64_t)t);
            ck_assert_int_eq(ps.recompute_ops, 0);
            ck_assert_int_eq(ps.backward_ops, (int64_t)t);
            ck_assert_int_eq(ps.peak_units, peak);
            bptt_plan_free(plan);
            bptt_table_free(tb);
        }
}
END_TEST

/* ---- byte mode ------------------------------------------------------- */

START_TEST(test_units_from_bytes)
{
    bptt_units u;
    ck_assert_int_eq(bptt_units_from_bytes(&u, 64 * 1024, 288 * 1024),
                     BPTT_OK);
    ck_assert_int_eq(u.quantum, 32 * 1024);
    ck_assert_int_eq(u.hidden_units, 2);
    ck_assert_int_eq(u.internal_units, 9);
    ck_assert_int_eq(bptt_units_from_bytes(&u, 100, 100), BPTT_OK);
    ck_assert_int_eq(u.quantum, 100);
    ck_assert_int_eq(u.hidden_units, 1);
    ck_assert_int_eq(u.internal_units, 1);
    ck_assert_int_eq(bptt_units_from_bytes(&u, 6, 10), BPTT_OK);
    ck_assert_int_eq(u.quantum, 2);
    ck_assert_int_eq(u.hidden_units, 3);
    ck_assert_int_eq(u.internal_units, 5);
    ck_assert_int_eq(bptt_units_from_bytes(&u, 7, 7 * 4), BPTT_OK);
    ck_assert_int_eq(u.quantum, 7);
    ck_assert_int_eq(u.hidden_units, 1);
    ck_assert_int_eq(u.internal_units, 4);
    ck_assert_int_eq(bptt_units_from_bytes(&u, 0, 10), BPTT_EINVAL);
    ck_assert_int_eq(bptt_units_from_bytes(&u, -4, 10), BPTT_EINVAL);
    ck_assert_int_eq(bptt_units_from_bytes(&u, 10, 5), BPTT_EINVAL);
}
END_TEST

/* _i: 0 for (h, s) = (2, 9) (64 KiB and 288 KiB), 1 for (3, 5). Budgets
 * from 0 (below h: infeasible) to every internal state stored. */
START_TEST(test_units_exhaustive)
{
    const int64_t h = _i == 0 ? 2 : 3, s = _i == 0 ? 9 : 5;
    const int tmax = 5;
    const int64_t mmax = bptt_full_peak((size_t)tmax, h, s) + 2;
    check_against_exhaustive("msm", h, s, tmax, mmax, 1, 1);
    check_against_exhaustive("ism", h, s, tmax, mmax, 0, 1);
    check_against_exhaustive("hsm", h, s, tmax, mmax, 1, 0);
}
END_TEST

/* ---- the validator --------------------------------------------------- */

enum { AD = BPTT_ADVANCE, SH = BPTT_SAVE_HIDDEN, SI = BPTT_SAVE_INTERNAL,
       RH = BPTT_RESTORE_HIDDEN, RI = BPTT_RESTORE_INTERNAL,
       BW = BPTT_BACKWARD, FH = BPTT_FREE_HIDDEN, FI = BPTT_FREE_INTERNAL,
       END = -1 };

/* t = 3, h = 1, s = 2: keep s(1), recompute step 2. */
static const int valid_plan[] = {AD, 1, SI, 1, AD, 2, AD, 3, BW, 3,
                                 RI, 1, AD, 2, BW, 2, BW, 1, FI, 1,
                                 FH, 0, END, 0};

START_TEST(test_validator_accepts)
{
    bptt_plan *p = plan_of(3, 1, 2, 3, valid_plan);
    bptt_plan_stats st;
    ck_assert_int_eq(bptt_plan_validate(p, &st), BPTT_OK);
    ck_assert_int_eq(st.violation, BPTT_V_NONE);
    ck_assert_uint_eq(st.bad_action, p->n_actions);
    ck_assert_uint_eq(st.n_actions, 11);
    ck_assert_int_eq(st.forward_ops, 4);
    ck_assert_int_eq(st.recompute_ops, 1);
    ck_assert_int_eq(st.backward_ops, 3);
    ck_assert_int_eq(st.peak_units, 3);
    bptt_plan_free(p);

    /* one unit less: the save of s(1) is over budget */
    p = plan_of(3, 1, 2, 2, valid_plan);
    expect_violation(p, BPTT_V_OVER_BUDGET, 1);
    bptt_plan_free(p);

    /* h(0) freed as soon as s(1) is made: 2 units suffice */
    static const int lean[] = {AD, 1, FH, 0, SI, 1, AD, 2, BW, 2,
                               BW, 1, FI, 1, END, 0};
    p = plan_of(2, 1, 2, 2, lean);
    ck_assert_int_eq(bptt_plan_validate(p, &st), BPTT_OK);
    ck_assert_int_eq(st.forward_ops, 2);
    ck_assert_int_eq(st.recompute_ops, 0);
    ck_assert_int_eq(st.peak_units, 2);
    bptt_plan_free(p);

    /* hidden checkpoints only, restored twice */
    static const int hidden[] = {AD, 1, AD, 2, SH, 2, AD, 3, BW, 3,
                                 RH, 0, AD, 1, AD, 2, BW, 2, FH, 2,
                                 RH, 0, AD, 1, BW, 1, FH, 0, END, 0};
    p = plan_of(3, 1, 4, 2, hidden);
    ck_assert_int_eq(bptt_plan_validate(p, &st), BPTT_OK);
    ck_assert_int_eq(st.forward_ops, 6);
    ck_assert_int_eq(st.recompute_ops, 3);
    ck_assert_int_eq(st.peak_units, 2);
    bptt_plan_free(p);
}
END_TEST

START_TEST(test_validator_rejects)
{
    bptt_plan *p;
#define REJECT(tt, hh, ss, mm, v, k, ...)                                   \
    do {                                                                   \
        static const int pairs_[] = {__VA_ARGS__, END, 0};                 \
        p = plan_of(tt, hh, ss, mm, pairs_);                               \
        expect_violation(p, v, k);                                         \
        bptt_plan_free(p);                                                 \
    } while (0)

    /* backward out of order: 1 before 3 */
    REJECT(3, 1, 2, 10, BPTT_V_BACKWARD_ORDER, 1, AD, 1, BW, 1);
    /* backward 3 twice */
    REJECT(3, 1, 2, 10, BPTT_V_BACKWARD_ORDER, 5, AD, 1, AD, 2, AD, 3, BW, 3,
           RH, 0, BW, 3);
    /* backward 2 with the running state at 1 and s(2) not stored */
    REJECT(3, 1, 2, 10, BPTT_V_BACKWARD_NO_STATE, 6, AD, 1, AD, 2, AD, 3,
           BW, 3, RH, 0, AD, 1, BW, 2);
    /* backward 2 at position 2 reached by a restore: s(2) not working */
    REJECT(3, 1, 2, 10, BPTT_V_BACKWARD_NO_STATE, 9, AD, 1, AD, 2, SH, 2,
           AD, 3, BW, 3, RH, 0, AD, 1, AD, 2, RH, 2, BW, 2);
    /* restore of something not stored */
    REJECT(3, 1, 2, 10, BPTT_V_NOT_STORED, 0, RI, 1);
    REJECT(3, 1, 2, 10, BPTT_V_NOT_STORED, 2, AD, 1, AD, 2, RH, 1);
    /* restore of a freed state */
    REJECT(3, 1, 2, 10, BPTT_V_NOT_STORED, 3, AD, 1, SI, 1, FI, 1, RI, 1);
    /* advance after a backward: no running state */
    REJECT(3, 1, 2, 10, BPTT_V_NO_RUNNING_STATE, 4, AD, 1, AD, 2, AD, 3,
           BW, 3, AD, 1);
    /* advance skipping a step */
    REJECT(3, 1, 2, 10, BPTT_V_NO_RUNNING_STATE, 1, AD, 1, AD, 3);
    /* advance of step 0 */
    REJECT(3, 1, 2, 10, BPTT_V_NO_RUNNING_STATE, 0, AD, 0);
    /* save away from the running state */
    REJECT(3, 1, 2, 10, BPTT_V_NO_RUNNING_STATE, 1, AD, 1, SH, 2);
    REJECT(3, 1, 2, 10, BPTT_V_NO_RUNNING_STATE, 4, AD, 1, AD, 2, AD, 3,
           BW, 3, SH, 2);
    /* save internal after a restore: s(1) is not the working state */
    REJECT(3, 1, 2, 10, BPTT_V_NO_WORKING, 3, AD, 1, SH, 1, RH, 1, SI, 1);
    /* save internal at the start: h(0) has no internal state */
    REJECT(3, 1, 2, 10, BPTT_V_NO_WORKING, 0, SI, 0);
    /* double save */
    REJECT(3, 1, 2, 10, BPTT_V_ALREADY_STORED, 2, AD, 1, SI, 1, SI, 1);
    REJECT(3, 1, 2, 10, BPTT_V_ALREADY_STORED, 0, SH, 0);
    /* over budget: s(1) on top of h(0) at m = 2; h(1) next to h(0) at 1 */
    REJECT(3, 1, 2, 2, BPTT_V_OVER_BUDGET, 1, AD, 1, SI, 1);
    REJECT(3, 1, 2, 1, BPTT_V_OVER_BUDGET, 1, AD, 1, SH, 1);
    /* over budget in byte units: h = 2, s = 9, m = 10 */
    REJECT(3, 2, 9, 10, BPTT_V_OVER_BUDGET, 1, AD, 1, SI, 1);
    /* free of something not stored */
    REJECT(3, 1, 2, 10, BPTT_V_NOT_STORED, 0, FI, 2);
    REJECT(3, 1, 2, 10, BPTT_V_NOT_STORED, 1, FH, 0, FH, 0);
    /* ending before backward 1 */
    REJECT(3, 1, 2, 10, BPTT_V_INCOMPLETE, 4, AD, 1, AD, 2, AD, 3, BW, 3);
    /* ending with h(0) still stored */
    REJECT(2, 1, 2, 10, BPTT_V_LEAK, 6, AD, 1, SI, 1, AD, 2, BW, 2, BW, 1,
           FI, 1);
    /* ending with s(1) still stored */
    REJECT(2, 1, 2, 10, BPTT_V_LEAK, 6, AD, 1, FH, 0, SI, 1, AD, 2, BW, 2,
           BW, 1);
#undef REJECT

    /* h(0) alone over the budget: flagged before the first action */
    static const int one[] = {AD, 1, BW, 1, FH, 0, END, 0};
    p = plan_of(1, 1, 1, 0, one);
    expect_violation(p, BPTT_V_OVER_BUDGET, 0);
    bptt_plan_free(p);
    p = plan_of(1, 1, 1, 1, one);
    bptt_plan_stats st;
    ck_assert_int_eq(bptt_plan_validate(p, &st), BPTT_OK);
    bptt_plan_free(p);

    /* an empty plan is incomplete at action 0 */
    p = plan_new(2, 1, 1, 5);
    expect_violation(p, BPTT_V_INCOMPLETE, 0);
    bptt_plan_free(p);
}
END_TEST

START_TEST(test_validator_bad_op)
{
    /* bptt_plan_push refuses them ... */
    bptt_plan *p = plan_new(3, 1, 2, 10);
    ck_assert_int_eq(bptt_plan_push(p, BPTT_ADVANCE, 4), BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_push(p, BPTT_N_OPS, 1), BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_push(p, -1, 1), BPTT_EINVAL);
    ck_assert_uint_eq(p->n_actions, 0);
    /* ... so write them in place: a step past t, then an unknown op */
    ck_assert_int_eq(bptt_plan_push(p, BPTT_ADVANCE, 1), BPTT_OK);
    ck_assert_int_eq(bptt_plan_push(p, BPTT_ADVANCE, 2), BPTT_OK);
    p->actions[1].step = 4;
    expect_violation(p, BPTT_V_BAD_OP, 1);
    p->actions[1].step = 2;
    p->actions[1].op = BPTT_N_OPS;
    expect_violation(p, BPTT_V_BAD_OP, 1);
    bptt_plan_free(p);

    /* the counts cover the actions before the bad one */
    static const int pairs[] = {AD, 1, AD, 2, AD, 3, BW, 3, RH, 0,
                                AD, 1, BW, 2, END, 0};
    p = plan_of(3, 1, 2, 10, pairs);
    bptt_plan_stats st;
    ck_assert_int_eq(bptt_plan_validate(p, &st), BPTT_EBADPLAN);
    ck_assert_int_eq(st.forward_ops, 4);
    ck_assert_int_eq(st.recompute_ops, 1);
    ck_assert_int_eq(st.backward_ops, 1);
    bptt_plan_free(p);
}
END_TEST

START_TEST(test_plan_args)
{
    bptt_plan *p = (bptt_plan *)&p;
    ck_assert_int_eq(bptt_plan_alloc(&p, 0, 1, 1, 1), BPTT_EINVAL);
    ck_assert_ptr_null(p);
    ck_assert_int_eq(bptt_plan_alloc(&p, 3, 2, 1, 1), BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_alloc(&p, 3, 0, 1, 1), BPTT_EINVAL);
    ck_assert_int_eq(bptt_plan_alloc(&p, 3, 1, 1, -1), BPTT_EINVAL);
    bptt_plan_free(NULL);
    for (int op = 0; op < BPTT_N_OPS; op++)
        ck_assert_int_eq(bptt_op_parse(bptt_op_name(op)), op);
    ck_assert_int_eq(bptt_op_parse("jump"), -1);
    ck_assert_str_eq(bptt_op_name(BPTT_ADVANCE), "advance");
    for (int v = 0; v < BPTT_N_VIOLATIONS; v++)
        ck_assert_ptr_nonnull(bptt_violation_str(v));
    ck_assert_ptr_nonnull(bptt_strerror(BPTT_EBADPLAN));
}
END_TEST

/* ---- the fast planner against the plain DP ---------------------------- */

/* Every cell (t' <= t, m <= M) of the fast table equals the plain DP's
 * (opts.reference: every split of every cell scanned, no closed form).
 * Below the closed-form budget the plans are the same action for action;
 * from it on they are valid, cost what the table says and fit the budget.
 * Fast tables of the shorter lengths in `shorter` (0-terminated) are held
 * to the same reference cells. */
static void compare_with_reference(const char *name, size_t t, int64_t h,
                                   int64_t s, int64_t M,
                                   const size_t *shorter)
{
    const bptt_table_options ref = {.reference = 1};
    bptt_table *a = make_table(name, t, h, s, M, &ref);
    bptt_table *b = make_table(name, t, h, s, M, NULL);
    mismatches mm = {0};
    for (size_t l = 0; l <= t; l++)
        for (int64_t m = 0; m <= M; m++) {
            const int64_t ca = cost_at(a, l, m), cb = cost_at(b, l, m);
            if (ca != cb)
                note(&mm, " (t=%zu m=%lld: plain %lld, fast %lld)", l,
                     (long long)m, (long long)ca, (long long)cb);
        }
    const int64_t fcol = bptt_table_closed_form_from(b);
    for (int64_t m = 0; m <= M; m++) {
        bptt_plan *pa = NULL, *pb = NULL;
        const int ra = bptt_table_plan(a, m, &pa, NULL);
        const int rb = bptt_table_plan(b, m, &pb, NULL);
        if (ra != rb) {
            note(&mm, " (plan m=%lld: rc %d vs %d)", (long long)m, ra, rb);
        } else if (ra == BPTT_OK && m < fcol) {
            if (pa->n_actions != pb->n_actions ||
                memcmp(pa->actions, pb->actions,
                       pa->n_actions * sizeof *pa->actions) != 0)
                note(&mm, " (plan m=%lld differs)", (long long)m);
        } else if (ra == BPTT_OK) {
            bptt_plan_stats st;
            if (bptt_plan_validate(pb, &st) != BPTT_OK ||
                st.forward_ops != bptt_table_cost(a, m) ||
                st.peak_units > m)
                note(&mm, " (closed-form plan m=%lld: %s, %lld ops)",
                     (long long)m, bptt_violation_str(st.violation),
                     (long long)st.forward_ops);
        }
        bptt_plan_free(pa);
        bptt_plan_free(pb);
    }
    for (size_t i = 0; shorter && shorter[i]; i++) {
        const size_t ts = shorter[i];
        bptt_table *c = make_table(name, ts, h, s, M, NULL);
        for (size_t l = 0; l <= ts; l++)
            for (int64_t m = 0; m <= M; m++)
                if (cost_at(a, l, m) != cost_at(c, l, m))
                    note(&mm, " (table t=%zu, t=%zu m=%lld: %lld vs %lld)",
                         ts, l, (long long)m, (long long)cost_at(a, l, m),
                         (long long)cost_at(c, l, m));
        bptt_table_free(c);
    }
    bptt_table_free(a);
    bptt_table_free(b);
    char what[128];
    snprintf(what, sizeof what, "%s t=%zu h=%lld s=%lld M=%lld", name, t,
             (long long)h, (long long)s, (long long)M);
    ASSERT_NO_MISMATCH(mm, what);
}

/* Every DP strategy, several (h, s), every budget, t = 150. */
START_TEST(test_fast_equals_plain_small)
{
    static const char *const names[] = {"hsm", "ism", "msm", "ism-paper",
                                        "msm-paper"};
    static const int64_t hs[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 7}, {3, 5}};
    const char *name = names[_i / 5];
    const int64_t h = hs[_i % 5][0], s = hs[_i % 5][1];
    const size_t t = 150, shorter[] = {149, 77, 12, 3, 1, 0};
    compare_with_reference(name, t, h, s, bptt_full_peak(t, h, s) + h,
                           shorter);
}
END_TEST

/* The bar: every (t, m) up to t = 2000 at alpha 4, every budget
 * up to full BPTT's memory (the reference takes about a minute), and
 * alpha 1 and 2 and ism at t = 1000. */
START_TEST(test_fast_equals_plain_2000)
{
    static const size_t shorter[] = {1999, 1000, 555, 64, 0};
    /* BPTT_QUICK_TESTS (the sanitizer build in scripts/check): budgets up
     * to 10% at t = 2000, a tenth of the time */
    const int64_t full = bptt_full_peak(2000, 1, 4);
    switch (_i) {
    case 0:
        compare_with_reference("msm", 2000, 1, 4,
                               getenv("BPTT_QUICK_TESTS") ? full / 10 : full,
                               shorter);
        break;
    case 1:
        compare_with_reference("msm", 1000, 1, 1, bptt_full_peak(1000, 1, 1),
                               NULL);
        compare_with_reference("msm", 1000, 1, 2, bptt_full_peak(1000, 1, 2),
                               NULL);
        break;
    default:
        compare_with_reference("ism", 1000, 1, 4, 1000, NULL);
        break;
    }
}
END_TEST

/* The lower bound the fast planner stops at, max(t, 2t - 1 - floor(m/s)),
 * holds at every cell of the plain DP (ism and msm), and is reached from
 * the closed-form budget on. */
START_TEST(test_lower_bound)
{
    static const int64_t hs[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 7}};
    const int64_t h = hs[_i][0], s = hs[_i][1];
    const size_t T = 400;
    const int64_t M = bptt_full_peak(T, h, s) + h;
    const bptt_table_options ref = {.reference = 1};
    const char *const names[] = {"msm", "ism"};
    mismatches mm = {0};
    for (int n = 0; n < 2; n++) {
        bptt_table *a = make_table(names[n], T, h, s, M, &ref);
        bptt_table *b = make_table(names[n], T, h, s, M, NULL);
        const int64_t fcol = bptt_table_closed_form_from(b);
        ck_assert_int_lt(fcol, M);
        for (size_t t = 1; t <= T; t++)
            for (int64_t m = h; m <= M; m++) {
                const int64_t l = (int64_t)t, c = cost_at(a, t, m);
                const int64_t lb = 2 * l - 1 - m / s > l ? 2 * l - 1 - m / s
                                                         : l;
                if (c < lb || (m >= fcol && c != lb))
                    note(&mm, " (%s t=%zu m=%lld: %lld, bound %lld)",
                         names[n], t, (long long)m, (long long)c,
                         (long long)lb);
            }
        bptt_table_free(a);
        bptt_table_free(b);
    }
    ASSERT_NO_MISMATCH(mm, "lower bound");
}
END_TEST

/* A table asked only for closed-form budgets builds nothing, answers the
 * same as the whole table, refuses smaller budgets, and its plans are
 * valid and optimal. */
START_TEST(test_closed_form_only)
{
    const size_t T = 2000;
    const int64_t s = 4, M = bptt_full_peak(T, 1, s);
    bptt_table *all = make_table("msm", T, 1, s, M, NULL);
    const int64_t fcol = bptt_table_closed_form_from(all);
    const bptt_table_options lazy = {.min_budget = fcol};
    bptt_table *tb = make_table("msm", T, 1, s, M, &lazy);
    ck_assert_int_eq(bptt_table_min_served(tb), fcol);
    ck_assert_uint_lt(bptt_table_bytes(tb), 4096);
    ck_assert_int_eq(bptt_table_cost(tb, fcol - 1), -1);
    bptt_plan *p = NULL;
    ck_assert_int_eq(bptt_table_plan(tb, fcol - 1, &p, NULL), BPTT_EINVAL);
    mismatches mm = {0};
    for (int64_t m = fcol; m <= M; m += 7) {
        const int64_t c = bptt_table_cost(tb, m);
        if (c != bptt_table_cost(all, m))
            note(&mm, " (m=%lld: %lld vs %lld)", (long long)m, (long long)c,
                 (long long)bptt_table_cost(all, m));
        bptt_plan_stats st;
        ck_assert_int_eq(bptt_table_plan(tb, m, &p, NULL), BPTT_OK);
        if (bptt_plan_validate(p, &st) != BPTT_OK || st.forward_ops != c ||
            st.peak_units > m)
            note(&mm, " (plan m=%lld)", (long long)m);
        bptt_plan_free(p);
    }
    /* the size is known before building: what the build holds at its
     * peak (the table and the fast planner's scratch) is at most the
     * count, and what the table keeps after it at most that */
    ck_assert_uint_ge(bptt_table_bytes_needed(bptt_strategy_find("msm"), T,
                                              1, s, M, &lazy),
                      bptt_table_bytes(tb));
    ck_assert_uint_ge(bptt_table_bytes_needed(bptt_strategy_find("msm"), T,
                                              1, s, M, NULL),
                      bptt_table_bytes(all));
    for (int i = 0; bptt_strategies[i]; i++) {
        const size_t need = bptt_table_bytes_needed(bptt_strategies[i], 300,
                                                    2, 7, 900, NULL);
        bptt_alloc_reset_peak();
        const size_t base = bptt_alloc_bytes();
        bptt_table *x = make_table(bptt_strategies[i]->name, 300, 2, 7, 900,
                                   NULL);
        const size_t peak = bptt_alloc_peak_bytes() - base;
        ck_assert_msg(peak <= need, "%s: build held %zu bytes, counted %zu",
                      bptt_strategies[i]->name, peak, need);
        ck_assert_uint_ge(need, bptt_table_bytes(x));
        /* counted within a small factor of what is held (the vertex
         * lists are counted at their most) */
        ck_assert_msg(need <= 2 * peak + 65536, "%s: counted %zu, held %zu",
                      bptt_strategies[i]->name, need, peak);
        bptt_table_free(x);
    }
    bptt_table_free(tb);
    bptt_table_free(all);
    ASSERT_NO_MISMATCH(mm, "closed-form-only table");
}
END_TEST

/* An independent reading of the recursions of doc/design.md 3.2 and 3.3
 * over every budget 0..M (no shortcut, no compressed axis): H and S
 * (P in H for the paper's), (t+1) x (M+1) each, INF when infeasible. */
#define NAIVE_INF (INT64_MAX / 4)
static int64_t naive_get(const int64_t *c, int64_t M, size_t len, int64_t m)
{
    return m < 0 ? NAIVE_INF : c[len * (size_t)(M + 1) + (size_t)m];
}

static void naive_dp(const char *name, size_t t, int64_t h, int64_t s,
                     int64_t M, int64_t *H, int64_t *S)
{
    const int hid = strstr(name, "ism") == NULL;
    const int inl = strcmp(name, "hsm") != 0;
    const int paper = strstr(name, "paper") != NULL;
    for (size_t len = 0; len <= t; len++)
        for (int64_t m = 0; m <= M; m++) {
            const size_t at = len * (size_t)(M + 1) + (size_t)m;
            int64_t bh = NAIVE_INF, bs = len ? NAIVE_INF : 0, v;
            if (m >= h && len == 0)
                bh = 0;
            else if (m >= h) {
                bh = (int64_t)len + naive_get(H, M, len - 1, m);
                for (size_t y = 1; y < len; y++) {
                    const int64_t Y = (int64_t)y;
                    if (hid) {
                        v = Y + naive_get(H, M, len - y, m - h) +
                            naive_get(H, M, y, m);
                        bh = v < bh ? v : bh;
                    }
                    if (inl && paper)
                        v = Y + naive_get(H, M, len - y, m - s) +
                            naive_get(H, M, y - 1, m);
                    else if (inl && y == 1)
                        v = 1 + naive_get(S, M, len - 1, m - s);
                    else if (inl)
                        v = Y + naive_get(S, M, len - y, m - h - s) +
                            naive_get(H, M, y - 1, m);
                    else
                        v = NAIVE_INF;
                    bh = v < bh ? v : bh;
                }
            }
            if (len && inl && !paper) {
                bs = (int64_t)len + naive_get(S, M, len - 1, m);
                for (size_t y = 1; y < len; y++) {
                    const int64_t Y = (int64_t)y;
                    if (hid) {
                        v = Y + naive_get(H, M, len - y, m) +
                            naive_get(S, M, y, m);
                        bs = v < bs ? v : bs;
                    }
                    v = Y + naive_get(S, M, len - y, m - s) +
                        naive_get(S, M, y - 1, m);
                    bs = v < bs ? v : bs;
                }
            }
            H[at] = bh >= NAIVE_INF ? NAIVE_INF : bh;
            S[at] = bs >= NAIVE_INF ? NAIVE_INF : bs;
        }
}

/* Internal states far above t hidden ones: the table keeps a column per
 * sum a h + b s (a + b <= t + 1), not per budget (doc/design.md 4.6), and
 * answers every length and budget as the recursions over every budget do;
 * its plans are valid, cost that, and fit.  Fast build and plain scan. */
START_TEST(test_compressed_axis)
{
    static const char *const names[] = {"msm", "ism", "hsm", "msm-paper",
                                        "ism-paper"};
    static const int64_t hs[][2] = {{1, 40}, {2, 97}, {3, 200}};
    static const size_t ts[] = {6, 13, 25};
    const char *name = names[_i % 5];
    const int64_t h = hs[_i / 5 % 3][0], s = hs[_i / 5 % 3][1];
    const size_t t = ts[_i / 15];
    const int64_t M = bptt_full_peak(t, h, s) + h;
    int64_t *H = malloc((t + 1) * (size_t)(M + 1) * sizeof *H);
    int64_t *S = malloc((t + 1) * (size_t)(M + 1) * sizeof *S);
    ck_assert(H && S);
    naive_dp(name, t, h, s, M, H, S);
    mismatches mm = {0};
    for (int ref = 0; ref < 2; ref++) {
        const bptt_table_options o = {.reference = ref};
        bptt_table *tb = make_table(name, t, h, s, M, &o);
        /* a column per sum: fewer than the M + 1 budgets' columns */
        const size_t kinds = strcmp(name, "msm") && strcmp(name, "ism") ? 1 : 2;
        ck_assert_uint_lt(bptt_table_bytes(tb),
                          (size_t)(M + 1) * (t + 1) * 12 * kinds);
        for (size_t len = 0; len <= t; len++)
            for (int64_t m = 0; m <= M; m++) {
                const int64_t want = naive_get(H, M, len, m);
                const int64_t c = cost_at(tb, len, m);
                if (c != (want >= NAIVE_INF ? -1 : want))
                    note(&mm, " (%s ref=%d t=%zu m=%lld: %lld, want %lld)",
                         name, ref, len, (long long)m, (long long)c,
                         (long long)want);
            }
        for (int64_t m = h; m <= M; m += 1 + M / 97) {
            bptt_plan *p = NULL;
            bptt_plan_stats st;
            ck_assert_int_eq(bptt_table_plan(tb, m, &p, NULL), BPTT_OK);
            if (bptt_plan_validate(p, &st) != BPTT_OK ||
                st.forward_ops != naive_get(H, M, t, m) || st.peak_units > m)
                note(&mm, " (%s plan m=%lld)", name, (long long)m);
            bptt_plan_free(p);
        }
        bptt_table_free(tb);
    }
    free(H);
    free(S);
    ASSERT_NO_MISMATCH(mm, "compressed axis");
}
END_TEST

/* t = 100,000 at 1% and 5% of full BPTT's memory (alpha 4): the plan
 * validates, costs what the table says, meets the lower bound (so it is
 * optimal) and fits the budget; the table holds next to nothing. */
START_TEST(test_long_plan)
{
    const size_t T = 100000;
    const int64_t s = 4, full = bptt_full_peak(T, 1, s);
    const int64_t m = full * (_i ? 5 : 1) / 100;
    const bptt_table_options lazy = {.min_budget = m};
    bptt_table *tb = make_table("msm", T, 1, s, m, &lazy);
    ck_assert_uint_lt(bptt_table_bytes(tb), 4096);
    bptt_plan *p = NULL;
    ck_assert_int_eq(bptt_table_plan(tb, m, &p, NULL), BPTT_OK);
    bptt_plan_stats st;
    ck_assert_int_eq(bptt_plan_validate(p, &st), BPTT_OK);
    ck_assert_int_eq(st.forward_ops, bptt_table_cost(tb, m));
    ck_assert_int_eq(st.forward_ops, 2 * (int64_t)T - 1 - m / s);
    ck_assert_int_eq(st.backward_ops, (int64_t)T);
    ck_assert_int_le(st.peak_units, m);
    bptt_plan_free(p);
    bptt_table_free(tb);
}
END_TEST

/* The n-th allocation of building, planning or validating fails, for
 * every n: each call reports BPTT_ENOMEM (none crashes, none claims
 * success), and with no failure everything succeeds (leaks: the sanitizer
 * build of this suite). */
START_TEST(test_alloc_failure)
{
    static const char *const names[] = {"msm", "hsm", "msm-paper", "msm"};
    const char *name = names[_i];
    const bptt_strategy *st = bptt_strategy_find(name);
    /* the last: a compressed budget axis (s far above t) */
    const size_t T = _i == 3 ? 60 : 200;
    const int64_t s = _i == 3 ? 500 : 4, M = _i == 3 ? 3000 : 300;
    const bptt_table_options opts = {.threads = _i == 0 ? 2 : 1};
    size_t n_ok = 0;
    for (size_t n = 1;; n++) {
        bptt_alloc_fail_at(n);
        const size_t before = bptt_alloc_count();
        bptt_table *tb = NULL;
        bptt_plan *p = NULL;
        bptt_plan_stats stats;
        int rc = bptt_table_alloc(&tb, st, T, 1, s, M, &opts);
        if (rc == BPTT_OK)
            rc = bptt_table_plan(tb, _i == 3 ? 1200 : 60, &p, NULL);
        if (rc == BPTT_OK)
            rc = bptt_plan_validate(p, &stats);
        const size_t made = bptt_alloc_count() - before;
        bptt_alloc_fail_at(0);
        bptt_plan_free(p);
        bptt_table_free(tb);
        if (made < n) { /* the n-th was never reached: all succeeded */
            ck_assert_int_eq(rc, BPTT_OK);
            n_ok = n - 1;
            break;
        }
        ck_assert_msg(rc == BPTT_ENOMEM, "%s: allocation %zu failed, rc %d",
                      name, n, rc);
    }
    ck_assert_uint_gt(n_ok, 3);
}
END_TEST

/* ---- determinism ----------------------------------------------------- */

START_TEST(test_threads_identical)
{
    const size_t T = 300;
    const int64_t M = 300, alpha = 4;
    const bptt_table_options one = {.chen_segment = 0, .threads = 1};
    const bptt_table_options two = {.chen_segment = 0, .threads = 2};
    bptt_table *a = make_table("msm", T, 1, alpha, M, &one);
    bptt_table *b = make_table("msm", T, 1, alpha, M, &two);
    mismatches mm = {0};
    for (size_t t = 0; t <= T; t++)
        for (int64_t m = 0; m <= M; m++) {
            const int64_t ca = cost_at(a, t, m), cb = cost_at(b, t, m);
            if (ca != cb)
                note(&mm, " (t=%zu m=%lld: %lld vs %lld)", t, (long long)m,
                     (long long)ca, (long long)cb);
        }
    static const int64_t budgets[] = {1, 4, 5, 17, 60, 299, 300};
    for (size_t k = 0; k < sizeof budgets / sizeof *budgets; k++) {
        bptt_plan *pa = NULL, *pb = NULL;
        ck_assert_int_eq(bptt_table_plan(a, budgets[k], &pa, NULL), BPTT_OK);
        ck_assert_int_eq(bptt_table_plan(b, budgets[k], &pb, NULL), BPTT_OK);
        ck_assert_uint_eq(pa->n_actions, pb->n_actions);
        ck_assert_msg(memcmp(pa->actions, pb->actions,
                             pa->n_actions * sizeof *pa->actions) == 0,
                      "plans at m=%lld differ", (long long)budgets[k]);
        bptt_plan_free(pa);
        bptt_plan_free(pb);
    }
    bptt_table_free(a);
    bptt_table_free(b);
    ASSERT_NO_MISMATCH(mm, "msm threads 1 vs 2");
}
END_TEST

/* ---- the suite ------------------------------------------------------- */

static int n_strategies(void)
{
    int n = 0;
    while (bptt_strategies[n])
        n++;
    return n;
}

static Suite *planner_suite(void)
{
    const int n_st = n_strategies();
    Suite *su = suite_create("planner");
    TCase *tc;

    tc = tcase_create("hsm");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_hsm_closed_pinned);
    tcase_add_test(tc, test_hsm_dp_pinned);
    tcase_add_loop_test(tc, test_hsm_dp_equals_closed, 0, 2);
    suite_add_tcase(su, tc);

    tc = tcase_create("exhaustive");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_exhaustive_pinned);
    tcase_add_loop_test(tc, test_msm_exhaustive, 0, 3);
    tcase_add_loop_test(tc, test_ism_exhaustive, 0, 3);
    tcase_add_loop_test(tc, test_hsm_exhaustive, 0, 3);
    suite_add_tcase(su, tc);

    tc = tcase_create("paper");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_paper_recursions, 0, 6);
    suite_add_tcase(su, tc);

    tc = tcase_create("strategies");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_strategy_table);
    tcase_add_test(tc, test_table_args);
    /* one run per entry of the table: a strategy added later is tested
     * without touching this file */
    tcase_add_loop_test(tc, test_strategy_plans_slots, 0, n_st);
    tcase_add_loop_test(tc, test_strategy_plans_units, 0, n_st);
    tcase_add_loop_test(tc, test_budget_width, 0, n_st);
    suite_add_tcase(su, tc);

    /* short timeout: a planner that walks down a 10^12 budget one unit at
     * a time fails here in seconds rather than hanging */
    tc = tcase_create("huge_budget");
    tcase_set_timeout(tc, 10);
    tcase_add_loop_test(tc, test_huge_budget_plan, 0, n_st);
    suite_add_tcase(su, tc);

    tc = tcase_create("chen_full");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_chen_default);
    tcase_add_test(tc, test_chen_segments);
    tcase_add_test(tc, test_full);
    suite_add_tcase(su, tc);

    tc = tcase_create("bytes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_units_from_bytes);
    tcase_add_loop_test(tc, test_units_exhaustive, 0, 2);
    suite_add_tcase(su, tc);

    tc = tcase_create("validator");
    tcase_add_test(tc, test_validator_accepts);
    tcase_add_test(tc, test_validator_rejects);
    tcase_add_test(tc, test_validator_bad_op);
    tcase_add_test(tc, test_plan_args);
    suite_add_tcase(su, tc);

    tc = tcase_create("fast planner");
    tcase_set_timeout(tc, 900);
    tcase_add_loop_test(tc, test_fast_equals_plain_small, 0, 25);
    tcase_add_loop_test(tc, test_fast_equals_plain_2000, 0, 3);
    tcase_add_loop_test(tc, test_lower_bound, 0, 4);
    tcase_add_test(tc, test_closed_form_only);
    tcase_add_loop_test(tc, test_long_plan, 0, 2);
    tcase_add_loop_test(tc, test_alloc_failure, 0, 4);
    tcase_add_loop_test(tc, test_compressed_axis, 0, 45);
    suite_add_tcase(su, tc);

    tc = tcase_create("determinism");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_threads_identical);
    suite_add_tcase(su, tc);

    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(planner_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
