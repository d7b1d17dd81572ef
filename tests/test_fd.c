/* test_fd.c: Check suite of the gradients against finite differences, in
 * double precision (this program compiles the training sources with
 * -DBPTT_DOUBLE, so `real` is double).
 *
 * Promises: full BPTT's gradient of the mean cross-entropy agrees with
 * central finite differences of the loss, for every parameter tensor of
 * RNN, LSTM and GRU stacks of 1 and 2 layers (copy task, and adding):
 *   ||g_fd - g|| / max(||g_fd||, ||g||, tiny) < 1e-6 per tensor,
 * with every parameter perturbed (the models are tiny) but the entries a
 * cell keeps at zero (the GRU's zero blocks, cell.h), which are not free
 * parameters: those must be zero, with a gradient of exactly zero; and every
 * strategy's plan, at its smallest budget and halfway to full BPTT's peak,
 * gives gradients bit-identical to full BPTT's in double too.  Both with
 * the model's weight-gradient blocks and with blocks of 3 steps (several
 * blocks, the top one partial).
 *
 * The loss is what the executor reports (bptt_exec_stats.loss) after
 * running the full-BPTT plan, so the finite differences go through the
 * same data, model and executor as the gradients.  Step eps = 1e-5:
 * truncation error O(eps^2) and rounding O(1e-16 / eps) stay far below the
 * bar in double (measured worst tensor: about 3e-9; 1e-6 gives 3e-8).
 *
 * Threads: every test runs with 2 OpenMP and 2 OpenBLAS threads, set in a
 * checked fixture (in Check's child).  main only builds the suite and runs
 * it: no BLAS or OpenMP before Check forks.
 *
 * Legend: L layers, B batch, X input width, H hidden width, T steps.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "real_impl.h"
#include "bptt.h"
#include "data.h"
#include "exec.h"
#include "mem.h"
#include "model.h"
#include "rig.h"

#ifndef BPTT_DOUBLE
#error "test_fd needs the double build of the training code (-DBPTT_DOUBLE)"
#endif

#define FD_EPS 1e-5
#define FD_BAR 1e-6 /* relative error per tensor */

/* every shape on every cell of bptt_cells[] (rig.h); X != H where the
 * task allows, so that a transposed view fails */
static const shape shapes[] = {
    {1, "copy", 8, 2, 3, 4, 31},
    {2, "copy", 5, 2, 4, 3, 34},
    {1, "adding", 6, 2, 2, 3, 37},
};
#define N_CONFIGS RIG_CASES(shapes)

static bptt_plan *plan_of(const rig *r, const char *strategy, int which)
{
    const bptt_strategy *st = bptt_strategy_find(strategy);
    ck_assert_ptr_nonnull(st);
    bptt_table *tb = NULL;
    int rc = bptt_table_alloc(&tb, st, r->c->T, r->u.hidden_units,
                              r->u.internal_units, r->full_peak, NULL);
    ck_assert_msg(rc == BPTT_OK, "%s: table %s: %s", r->name, strategy,
                  bptt_strerror(rc));
    const int64_t mmin = bptt_table_min_budget(tb);
    ck_assert_msg(mmin >= 0, "%s: %s infeasible at full BPTT's peak",
                  r->name, strategy);
    /* which: 0 the smallest budget, 1 halfway, 2 full BPTT's peak */
    const int64_t m = which == 0   ? mmin
                      : which == 1 ? (mmin + r->full_peak) / 2
                                   : r->full_peak;
    bptt_plan *plan = NULL;
    rc = bptt_table_plan(tb, m, &plan, NULL);
    ck_assert_msg(rc == BPTT_OK, "%s: %s at m=%lld: %s", r->name, strategy,
                  (long long)m, bptt_strerror(rc));
    bptt_table_free(tb);
    return plan;
}

/* The shared rig, with full BPTT's plan. */
static void fd_rig_open(rig *r, const config *c)
{
    rig_open(r, c);
    r->full = plan_of(r, "full", 2);
}

/* Runs plan: the model's gradients, and the mean loss returned. */
static double run(rig *r, const bptt_plan *plan)
{
    bptt_exec_stats ex;
    const int rc = bptt_exec_run(plan, r->model, &r->batch, r->mem, &ex);
    ck_assert_msg(rc == BPTT_OK, "%s: exec: %s", r->name, bptt_strerror(rc));
    ck_assert_msg(isfinite(ex.loss), "%s: loss %g", r->name, ex.loss);
    return ex.loss;
}

/* ---- finite differences ---------------------------------------------------- */

/* loop index: config, then the weight-gradient block size (the model's
 * default, or K_SMALL: several blocks, the top one partial) */
#define K_SMALL 3

START_TEST(test_fd_full)
{
    rig r;
    const config c = rig_config(shapes, _i % N_CONFIGS);
    fd_rig_open(&r, &c);
    bptt_model *m = r.model;
    if (_i >= N_CONFIGS)
        ck_assert_int_eq(bptt_model_set_wgrad_steps(m, K_SMALL), BPTT_OK);
    const size_t n = m->n_params;
    run(&r, r.full);
    real *g = malloc(n * sizeof(real));
    ck_assert_ptr_nonnull(g);
    memcpy(g, m->grads, n * sizeof(real));
    ck_assert_msg(bptt_model_grad_norm(m) > 0, "%s: zero gradient", r.name);

    for (size_t k = 0; k < m->n_tensors; k++) {
        const bptt_tensor *t = &m->tensor[k];
        const size_t len = t->rows * t->cols;
        /* free[j]: entry j is a parameter (1), or one the cell keeps at
         * zero (0): the cell's zero_fixed on ones, for the layers' W */
        real *free_ = malloc(len * sizeof(real));
        ck_assert_ptr_nonnull(free_);
        for (size_t j = 0; j < len; j++)
            free_[j] = 1;
        const size_t l = k / 2;
        if (m->cell->zero_fixed && k % 2 == 0 && l < m->L)
            m->cell->zero_fixed(m->ws[l].X, m->H, free_);
        size_t fixed = 0;
        double num = 0, nfd = 0, ng = 0;
        size_t worst = 0;
        double worst_d = -1, worst_fd = 0;
        for (size_t j = 0; j < len; j++) {
            real *p = m->params + t->offset + j;
            if (free_[j] == 0) {
                fixed++;
                ck_assert_msg(*p == 0 && g[t->offset + j] == 0,
                              "%s: %s entry %zu, kept at zero by the cell: "
                              "parameter %.17g, gradient %.17g",
                              r.name, t->name, j, (double)*p,
                              (double)g[t->offset + j]);
                continue;
            }
            const real saved = *p;
            *p = saved + FD_EPS;
            const double up = run(&r, r.full);
            *p = saved - FD_EPS;
            const double down = run(&r, r.full);
            *p = saved;
            const double fd = (up - down) / (2 * FD_EPS);
            const double an = g[t->offset + j];
            const double d = fd - an;
            num += d * d;
            nfd += fd * fd;
            ng += an * an;
            if (fabs(d) > worst_d) {
                worst_d = fabs(d);
                worst_fd = fd;
                worst = j;
            }
        }
        free(free_);
        /* the GRU's W_l: n_x rows without their H h columns, n_h rows
         * without their X_l x columns */
        const size_t want_fixed =
            m->cell->zero_fixed && k % 2 == 0 && l < m->L
                ? m->H * (m->ws[l].X + m->H)
                : 0;
        ck_assert_uint_eq(fixed, want_fixed);
        double den = sqrt(nfd) > sqrt(ng) ? sqrt(nfd) : sqrt(ng);
        if (den < 1e-300)
            den = 1e-300;
        const double rel = sqrt(num) / den;
#ifdef FD_VERBOSE
        fprintf(stderr, "%s %s: |g| %.3e rel %.3e\n", r.name, t->name,
                sqrt(ng), rel);
#endif
        ck_assert_msg(rel < FD_BAR,
                      "%s: tensor %s (%zu x %zu): relative error %.3e "
                      "(bar %.0e); |g_fd| %.6e, |g| %.6e; worst entry %zu: "
                      "g_fd %.12e, g %.12e",
                      r.name, t->name, t->rows, t->cols, rel, FD_BAR,
                      sqrt(nfd), sqrt(ng), worst, worst_fd,
                      (double)g[t->offset + worst]);
    }
    /* the parameters are back as they were: the gradient repeats */
    run(&r, r.full);
    ck_assert(memcmp(m->grads, g, n * sizeof(real)) == 0);
    free(g);
    rig_close(&r);
}
END_TEST

/* ---- every strategy equals full BPTT, in double ----------------------------- */

START_TEST(test_strategies_identical)
{
    rig r;
    const config c = rig_config(shapes, _i % N_CONFIGS);
    fd_rig_open(&r, &c);
    if (_i >= N_CONFIGS)
        ck_assert_int_eq(bptt_model_set_wgrad_steps(r.model, K_SMALL),
                         BPTT_OK);
    const size_t n = r.model->n_params;
    const double ref_loss = run(&r, r.full);
    real *ref = malloc(n * sizeof(real));
    ck_assert_ptr_nonnull(ref);
    memcpy(ref, r.model->grads, n * sizeof(real));
    for (int k = 0; bptt_strategies[k]; k++) {
        for (int which = 0; which <= 1; which++) {
            bptt_plan *plan = plan_of(&r, bptt_strategies[k]->name, which);
            const double loss = run(&r, plan);
            size_t d = 0;
            while (d < n && memcmp(&r.model->grads[d], &ref[d],
                                   sizeof(real)) == 0)
                d++;
            ck_assert_msg(d == n,
                          "%s: %s at m=%lld: gradient %zu is %.17g, full "
                          "BPTT's %.17g",
                          r.name, bptt_strategies[k]->name,
                          (long long)plan->budget, d,
                          d < n ? (double)r.model->grads[d] : 0.0,
                          d < n ? (double)ref[d] : 0.0);
            ck_assert_msg(memcmp(&loss, &ref_loss, sizeof loss) == 0,
                          "%s: %s: loss %.17g, full's %.17g", r.name,
                          bptt_strategies[k]->name, loss, ref_loss);
            bptt_plan_free(plan);
        }
    }
    free(ref);
    rig_close(&r);
}
END_TEST

static Suite *fd_suite(void)
{
    Suite *su = suite_create("fd");
    TCase *tc;

    tc = tcase_create("finite_differences");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_fd_full, 0, 2 * N_CONFIGS);
    suite_add_tcase(su, tc);

    tc = tcase_create("strategies_double");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_strategies_identical, 0, 2 * N_CONFIGS);
    suite_add_tcase(su, tc);

    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(fd_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
