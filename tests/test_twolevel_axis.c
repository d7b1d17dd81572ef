/* test_twolevel_axis.c: Check suite of the two-level table's compressed
 * budget axes (src/plan/twolevel_axis.c, doc/twolevel.md 3).
 *
 * The table keeps one column per sum of states a level can hold, not one
 * per unit.  What this proves:
 *   - against the layout of a column per unit on both levels (the table
 *     as it was before, built by the same recursion through
 *     twolevel_alloc_layout's TL_LAYOUT_UNITS): for chosen and random sizes
 *     (h, s), coprime ones among them, lengths to 40, fast budgets, slow
 *     budgets (none, bounded, just below the bound past which nothing
 *     binds, unlimited), hsm and msm and four pairs of write and read
 *     costs, every cell of every kind at every budget in units costs the
 *     same as the compressed table's cell at the column of that budget,
 *     with the layout chosen (the sums, or the grid of gcd(h, s)) and
 *     with the list of sums forced;
 *     bptt_twolevel_cost_at agrees at budgets that are no sums;
 *   - the compressed table's plans, at its own budgets and at random
 *     smaller ones, pass the validator within both budgets and cost what
 *     the unit layout says;
 *   - the table holds no more than bptt_twolevel_bytes_needed says;
 *   - sizes in units past any unit layout (h = 131073, s = 524297, as an
 *     8-byte RNG state makes them) plan, validate and, with no slow
 *     level, cost what the one-level planner says.
 *
 * Legend: t sequence length, h hidden-state units, s internal-state units,
 * m fast budget in units (h(0) counted), d slow budget in units.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bptt.h"
#include "twolevel.h"
#include "plan/alloc.h"
#include "plan/twolevel_impl.h"
#include "twolevel_check.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

/* A fixed sequence: the cases are the same on every run. */
static int64_t rnd(int64_t lo, int64_t hi)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return lo + (int64_t)((rng_state >> 33) % (uint64_t)(hi - lo + 1));
}

static bptt_twolevel *build(const char *st, size_t t, int64_t h, int64_t s,
                            int64_t m, int64_t d, double wd, double rd,
                            int layout)
{
    const bptt_slow_level sl = {d, wd, rd};
    bptt_twolevel *tl = NULL;
    const int rc = twolevel_alloc_layout(&tl, st, t, h, s, m, &sl,
                                         layout, 1);
    ck_assert_msg(rc == BPTT_OK && tl, "%s t=%zu h=%lld s=%lld m=%lld "
                  "d=%lld layout %d: %s", st, t, (long long)h, (long long)s,
                  (long long)m, (long long)d, layout, bptt_strerror(rc));
    return tl;
}

/* Every cell of the unit layout u equals the compressed table c's cell
 * at the columns of its budgets. */
static void same_cells(const bptt_twolevel *u, const bptt_twolevel *c,
                       const char *what)
{
    ck_assert_int_eq(u->nm, u->m + 1);
    ck_assert_int_le(c->nm, u->nm);
    ck_assert_int_le(c->nd, u->nd);
    for (int64_t mi = 0; mi < u->nm; mi++)
        for (int64_t di = 0; di < u->nd; di++) {
            const int64_t cm = twolevel_axis_col(c->fv, c->nm, mi);
            const int64_t cd =
                unlimited(c) ? 0 : twolevel_axis_col(c->sv, c->nd, di);
            for (int k = 0; k < TK_N; k++)
                for (size_t n = 0; n <= u->t; n++) {
                    const int64_t a = get(u, k, mi, di, n);
                    const int64_t b = get(c, k, cm, cd, n);
                    if (a != b) /* ck_assert writes on each pass */
                        ck_abort_msg("%s: kind %d n=%zu m=%lld d=%lld: "
                                     "units %lld, compressed %lld", what, k,
                                     n, (long long)mi, (long long)di,
                                     (long long)a, (long long)b);
                }
        }
}

/* The table's cost (integers of 2^-20 forward ops, its write and read
 * costs rounded to them) against the plan's, counted in doubles. */
static int close_to(double table, double plan)
{
    return fabs(table - plan) <= 1e-4 * (1.0 + fabs(plan));
}

static const double cost_pairs[][2] = {{1, 1}, {0.5, 2}, {3, 0.25}, {0, 0}};

/* One strategy and sizes, every length and budget of the cases. */
static void check_sizes(const char *st, int64_t h, int64_t s)
{
    static const size_t lengths[] = {1, 2, 5, 12, 40};
    for (size_t li = 0; li < sizeof lengths / sizeof *lengths; li++) {
        const size_t t = lengths[li];
        const int64_t m = h + 3 * s + rnd(0, 2 * h);
        const int64_t cap = twolevel_slow_cap(t, h, s);
        const int64_t ds[] = {0, s + h + rnd(0, s), 3 * s + rnd(0, h),
                              t <= 5 ? cap - 1 : h - 1 + rnd(0, 1),
                              BPTT_SLOW_UNLIMITED};
        for (size_t j = 0; j < sizeof ds / sizeof *ds; j++) {
            const int64_t d = ds[j];
            const double *w = cost_pairs[(li + j) % 4];
            char what[160];
            snprintf(what, sizeof what, "%s t=%zu h=%lld s=%lld m=%lld "
                     "d=%lld wd=%g rd=%g", st, t, (long long)h, (long long)s,
                     (long long)m, (long long)d, w[0], w[1]);
            const bptt_slow_level sl = {d, w[0], w[1]};
            const size_t need =
                bptt_twolevel_bytes_needed(st, t, h, s, m, &sl);
            const size_t before = bptt_alloc_bytes();
            bptt_twolevel *c =
                build(st, t, h, s, m, d, w[0], w[1], TL_LAYOUT_AUTO);
            ck_assert_msg(bptt_alloc_bytes() - before <= need,
                          "%s: holds %zu, bytes_needed %zu", what,
                          bptt_alloc_bytes() - before, need);
            bptt_twolevel *u =
                build(st, t, h, s, m, d, w[0], w[1], TL_LAYOUT_UNITS);
            same_cells(u, c, what);
            /* and the list of sums where the grid of the gcd is smaller */
            bptt_twolevel *l =
                build(st, t, h, s, m, d, w[0], w[1], TL_LAYOUT_SUMS);
            same_cells(u, l, what);
            ck_assert(close_to(bptt_twolevel_cost_at(l, t, m, d),
                               checked_cost(l, t, h, s, m, d, w[0], w[1])));
            bptt_twolevel_free(l);
            const double cu = checked_cost(u, t, h, s, m, d, w[0], w[1]);
            const double cc = checked_cost(c, t, h, s, m, d, w[0], w[1]);
            ck_assert_msg(cu == cc, "%s: plan costs %g (units), %g", what,
                          cu, cc);
            ck_assert(close_to(bptt_twolevel_cost_at(c, t, m, d), cc));
            /* smaller budgets, mostly no sums: cost_at of both layouts,
             * and a compressed table made for them */
            for (int r = 0; r < 3; r++) {
                const size_t t2 = (size_t)rnd(1, (int64_t)t);
                const int64_t m2 = rnd(h, m);
                /* (a table whose slow level never binds answers no
                 * smaller slow budget) */
                const int64_t d2 = unlimited(u) ? d : rnd(0, d);
                const double a = bptt_twolevel_cost_at(u, t2, m2, d2);
                ck_assert_msg(a == bptt_twolevel_cost_at(c, t2, m2, d2),
                              "%s: cost_at(%zu, %lld, %lld)", what, t2,
                              (long long)m2, (long long)d2);
                bptt_twolevel *c2 = build(st, t2, h, s, m2, d2, w[0], w[1],
                                          TL_LAYOUT_AUTO);
                const double b = bptt_twolevel_cost_at(c2, t2, m2, d2);
                ck_assert_msg(a == b, "%s: t=%zu m=%lld d=%lld: units %g, "
                              "its own table %g", what, t2, (long long)m2,
                              (long long)d2, a, b);
                if (a >= 0)
                    ck_assert(close_to(a, checked_cost(c2, t2, h, s, m2, d2,
                                                       w[0], w[1])));
                bptt_twolevel_free(c2);
            }
            bptt_twolevel_free(u);
            bptt_twolevel_free(c);
        }
    }
}

/* Chosen sizes (coprime, equal, alpha 1 and 4) and then random ones. */
static const int64_t chosen[][2] = {{3, 7}, {5, 12}, {1, 1}, {2, 2},
                                    {1, 4}, {2, 3},  {4, 6}, {7, 9}};
#define N_CHOSEN (int)(sizeof chosen / sizeof chosen[0])
#define N_RANDOM 6

START_TEST(test_axis_matches_units)
{
    const char *st = _i % 2 ? "msm" : "hsm";
    const int k = _i / 2;
    int64_t h, s;
    rng_state += (uint64_t)_i * 0x632be59bd9b4e019u;
    if (k < N_CHOSEN) {
        h = chosen[k][0];
        s = chosen[k][1];
    } else {
        h = rnd(1, 9);
        s = rnd(h, 4 * h + 3);
    }
    check_sizes(st, h, s);
}
END_TEST

/* The largest a h + b s at most x (a, b >= 0). */
static int64_t largest_sum(int64_t h, int64_t s, int64_t x)
{
    int64_t best = 0;
    for (int64_t b = 0; b * s <= x; b++) {
        const int64_t v = b * s + (x - b * s) / h * h;
        best = v > best ? v : best;
    }
    return best;
}

/* Sizes past any unit layout: m = 12 hidden states and d = 20 (units
 * 131073 and 524297: their columns in units would be 10^12 a kind). */
START_TEST(test_axis_large_units)
{
    const char *st = _i == 0 ? "hsm" : "msm";
    const size_t t = 200;
    const int64_t h = 131073, s = 524297, m = 12 * h, d = 20 * h;
    const int64_t ds[] = {0, d, d + s / 3, BPTT_SLOW_UNLIMITED};
    double prev = -1.0;
    for (size_t j = 0; j < sizeof ds / sizeof *ds; j++) {
        const bptt_slow_level sl = {ds[j], 1.0, 1.0};
        ck_assert_uint_lt(bptt_twolevel_bytes_needed(st, t, h, s, m, &sl),
                          (size_t)1 << 30);
        bptt_twolevel *tl =
            build(st, t, h, s, m, ds[j], 1.0, 1.0, TL_LAYOUT_AUTO);
        const double c = checked_cost(tl, t, h, s, m, ds[j], 1.0, 1.0);
        ck_assert(bptt_twolevel_cost_at(tl, t, m, ds[j]) == c);
        /* a budget between two sums costs what the sum below it does */
        const int64_t below = largest_sum(h, _i ? s : h, m - 1);
        ck_assert_int_lt(below, m - 1);
        ck_assert(bptt_twolevel_cost_at(tl, t, m - 1, ds[j]) ==
                  bptt_twolevel_cost_at(tl, t, below, ds[j]));
        bptt_twolevel_free(tl);
        if (prev >= 0.0) /* more slow room never costs more */
            ck_assert(c <= prev);
        prev = c;
        if (ds[j] != 0)
            continue;
        /* no slow level: the one-level planner's optimum */
        bptt_table *tb = NULL;
        ck_assert_int_eq(bptt_table_alloc(&tb, bptt_strategy_find(st), t, h,
                                          s, m, NULL),
                         BPTT_OK);
        const int64_t one = bptt_table_cost(tb, m);
        bptt_table_free(tb);
        ck_assert_msg(c == (double)one, "%s: %g, one level %lld", st, c,
                      (long long)one);
    }
}
END_TEST

static Suite *axis_suite(void)
{
    Suite *su = suite_create("twolevel_axis");
    TCase *tc = tcase_create("units");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_axis_matches_units, 0,
                        2 * (N_CHOSEN + N_RANDOM));
    suite_add_tcase(su, tc);
    tc = tcase_create("large");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_axis_large_units, 0, 2);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(axis_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
