/* test_train.c: Check suite of the executor on a real model (float32).
 *
 * Promises: for every strategy in bptt_strategies[] and every feasible
 * budget, on RNN, LSTM and GRU stacks of 1 and 2 layers (copy task, and
 * one adding case), running a plan
 *   - does exactly the plan's forward ops (the table's cost, the
 *     validator's count), t backward ops and t output ops;
 *   - holds, at its tracked checkpoint peak, exactly the bytes the
 *     validator predicts (the executor's own count of its peak agreeing),
 *     never more than the byte budget, and releases every byte it took;
 *   - recorded action by action (bptt_exec_run_recorded), gives the same
 *     gradients, one point per action whose checkpoint bytes reach the
 *     peak and never pass it, and op times that sum to the stats'
 *     forward and backward seconds (every forward op counted);
 *   - gives gradients and loss bit-identical to full BPTT's, and, after 3
 *     SGD or Adam steps, bit-identical parameters (the GRU's zero blocks
 *     still exactly zero);
 * the executor rejects plans of the wrong length or units (BPTT_EINVAL)
 * and broken plans (BPTT_EBADPLAN) without leaking, and an allocation
 * failure at any of its allocations (and of bptt_model_alloc's) gives
 * BPTT_ENOMEM with every byte released; a hidden state (and h alone)
 * rebuilt from an internal state equals the one the forward op produced,
 * bit for bit.  Bit-identity holds for weight-gradient blocks of 1, 3, 4
 * and the default number of steps, and with cblas instead of the GEMM
 * kernel; the kernel agrees with a double-precision reference on shapes
 * around its tiles, writes nothing outside C and gives the same bits on
 * 1 and 2 threads; on the kernel, whole training steps give the same bits
 * on 1, 2, 3 and 7 threads; the model's workspaces have the documented
 * sizes; the cells' exp, sigmoid and tanh stay within their documented
 * errors, never return a subnormal and keep NaN.
 *
 * Threads: every test runs with 2 OpenMP and 2 OpenBLAS threads, set in a
 * checked fixture (so in Check's child process).  Bit-identity across
 * strategies is promised for a fixed thread count (doc/design.md 8).  main only
 * builds the suite and runs it: no BLAS or OpenMP before Check forks.
 *
 * Legend: L layers, B batch, X input width, H hidden width, V classes,
 * T steps; h, s hidden and internal state units, q bytes per unit, m budget
 * in units.
 */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "real_impl.h"
#include "bptt.h"
#include "data.h"
#include "exec.h"
#include "mem.h"
#include "model.h"
#include "optim.h"
#include "rig.h"
#include "train/gemm.h"
#include "train/model_impl.h"
#include "train/team.h"
#include "train/fastmath.h"

#define TRAIN_STEPS 3
#define EXTRA_BUDGET 3 /* budgets run up to full BPTT's peak + this */

/* ---- configurations ------------------------------------------------------ */

/* every shape on every cell of bptt_cells[] (rig.h) */
static const shape shapes[] = {
    {1, "copy", 16, 2, 4, 5, 13},
    {2, "copy", 10, 3, 3, 4, 16},
    {1, "adding", 9, 3, 2, 4, 19},
};
#define N_CONFIGS RIG_CASES(shapes)

static int n_strategies(void)
{
    int n = 0;
    while (bptt_strategies[n])
        n++;
    return n;
}

/* ---- a model, its task and its batch -------------------------------------- */

/* The table of strategy st for the rig's length and units, budgets up to
 * full BPTT's peak + EXTRA_BUDGET. */
static bptt_table *rig_table(const rig *r, const bptt_strategy *st)
{
    bptt_table *tb = NULL;
    const int rc = bptt_table_alloc(&tb, st, r->c->T, r->u.hidden_units,
                                    r->u.internal_units,
                                    r->full_peak + EXTRA_BUDGET, NULL);
    ck_assert_msg(rc == BPTT_OK, "%s: table %s: %s", r->name, st->name,
                  bptt_strerror(rc));
    return tb;
}

static int64_t table_min(const rig *r, const bptt_table *tb)
{
    const int64_t mmin = bptt_table_min_budget(tb);
    ck_assert_msg(mmin >= 0 && mmin <= r->full_peak + EXTRA_BUDGET,
                  "%s: %s: no feasible budget up to %lld (min %lld)",
                  r->name, bptt_table_strategy(tb)->name,
                  (long long)(r->full_peak + EXTRA_BUDGET), (long long)mmin);
    return mmin;
}

static bptt_plan *table_plan(const rig *r, const bptt_table *tb, int64_t m)
{
    bptt_plan *plan = NULL;
    int64_t minf = -1;
    const int rc = bptt_table_plan(tb, m, &plan, &minf);
    ck_assert_msg(rc == BPTT_OK, "%s: %s at m=%lld: %s (min %lld)", r->name,
                  bptt_table_strategy(tb)->name, (long long)m,
                  bptt_strerror(rc), (long long)minf);
    return plan;
}

/* The plan of the named strategy at budget m. */
static bptt_plan *rig_plan(const rig *r, const char *strategy, int64_t m)
{
    const bptt_strategy *st = bptt_strategy_find(strategy);
    ck_assert_ptr_nonnull(st);
    bptt_table *tb = rig_table(r, st);
    bptt_plan *plan = table_plan(r, tb, m);
    bptt_table_free(tb);
    return plan;
}

static void run_ok(rig *r, const bptt_plan *plan, bptt_exec_stats *ex,
                   const char *what, int64_t m)
{
    const int rc = bptt_exec_run(plan, r->model, &r->batch, r->mem, ex);
    ck_assert_msg(rc == BPTT_OK, "%s: %s at m=%lld: exec: %s", r->name, what,
                  (long long)m, bptt_strerror(rc));
}

static real *copy_of(const real *p, size_t n)
{
    real *q = malloc(n * sizeof(real));
    ck_assert_ptr_nonnull(q);
    memcpy(q, p, n * sizeof(real));
    return q;
}

/* Index of the first differing real, or n if the arrays are identical. */
static size_t first_diff(const real *a, const real *b, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (memcmp(a + k, b + k, sizeof(real)) != 0)
            return k;
    return n;
}

/* rig_open with the cells' products on the kernel named (a model keeps
 * the kernel it was made with), the process's choice put back after */
static void rig_open_on(rig *r, const config *c, const char *kernel)
{
    char was[16];
    snprintf(was, sizeof was, "%s", bptt_cell_kernel());
    ck_assert_int_eq(bptt_cell_kernel_use(kernel), 0);
    rig_open(r, c);
    ck_assert_int_eq(r->model->ws[0].kernel,
                     strcmp(kernel, "avx512") == 0 ? 2
                     : strcmp(kernel, "avx2") == 0 ? 1 : 0);
    ck_assert_int_eq(bptt_cell_kernel_use(was), 0);
}

/* The model's gradients and loss under full BPTT on batch 0. */
static real *full_grads(rig *r, double *loss)
{
    bptt_plan *plan = rig_plan(r, "full", r->full_peak);
    bptt_exec_stats ex;
    run_ok(r, plan, &ex, "full", r->full_peak);
    bptt_plan_free(plan);
    *loss = ex.loss;
    return copy_of(r->model->grads, r->model->n_params);
}

static void mem_snapshot(const rig *r, bptt_mem_stats *out)
{
    *out = *bptt_mem_stats_get(r->mem);
}

/* Every category's current bytes as in before. */
static void assert_mem_as_before(const rig *r, const bptt_mem_stats *before,
                                 const char *what)
{
    const bptt_mem_stats *now = bptt_mem_stats_get(r->mem);
    for (int c = 0; c < BPTT_MEM_N; c++)
        ck_assert_msg(now->current[c] == before->current[c],
                      "%s: %s: %s bytes %zu, before the run %zu", r->name,
                      what, bptt_mem_cat_name(c), now->current[c],
                      before->current[c]);
    ck_assert_msg(now->total_current == before->total_current,
                  "%s: %s: total bytes %zu, before the run %zu", r->name,
                  what, now->total_current, before->total_current);
}

/* ---- (1) counts ------------------------------------------------------------ */

START_TEST(test_counts)
{
    rig r;
    const config c = rig_config(shapes, _i);
    rig_open(&r, &c);
    const int64_t T = (int64_t)r.c->T;
    for (int k = 0; bptt_strategies[k]; k++) {
        const bptt_strategy *st = bptt_strategies[k];
        bptt_table *tb = rig_table(&r, st);
        for (int64_t m = table_min(&r, tb); m <= r.full_peak + EXTRA_BUDGET;
             m++) {
            const int64_t cost = bptt_table_cost(tb, m);
            ck_assert_msg(cost >= T, "%s: %s m=%lld: cost %lld", r.name,
                          st->name, (long long)m, (long long)cost);
            bptt_plan *plan = table_plan(&r, tb, m);
            bptt_plan_stats vs;
            ck_assert_int_eq(bptt_plan_validate(plan, &vs), BPTT_OK);
            int64_t restores = 0;
            for (size_t a = 0; a < plan->n_actions; a++)
                restores += plan->actions[a].op == BPTT_RESTORE_HIDDEN ||
                            plan->actions[a].op == BPTT_RESTORE_INTERNAL;
            bptt_exec_stats ex;
            run_ok(&r, plan, &ex, st->name, m);
            ck_assert_msg(ex.forward_ops == cost && ex.forward_ops ==
                                                        vs.forward_ops,
                          "%s: %s m=%lld: executed %lld forward ops, table "
                          "cost %lld, validator %lld",
                          r.name, st->name, (long long)m,
                          (long long)ex.forward_ops, (long long)cost,
                          (long long)vs.forward_ops);
            ck_assert_msg(ex.backward_ops == T && ex.output_ops == T,
                          "%s: %s m=%lld: %lld backward and %lld output ops "
                          "for T=%lld",
                          r.name, st->name, (long long)m,
                          (long long)ex.backward_ops,
                          (long long)ex.output_ops, (long long)T);
            ck_assert_msg(ex.recompute_ops == ex.forward_ops - T &&
                              ex.recompute_ops == vs.recompute_ops,
                          "%s: %s m=%lld: recompute %lld, forward %lld, "
                          "validator's recompute %lld",
                          r.name, st->name, (long long)m,
                          (long long)ex.recompute_ops,
                          (long long)ex.forward_ops,
                          (long long)vs.recompute_ops);
            ck_assert_msg(ex.restores == restores,
                          "%s: %s m=%lld: %lld restores, plan has %lld",
                          r.name, st->name, (long long)m,
                          (long long)ex.restores, (long long)restores);
            bptt_plan_free(plan);
        }
        bptt_table_free(tb);
    }
    rig_close(&r);
}
END_TEST

/* ---- (2) checkpoint bytes ------------------------------------------------ */

START_TEST(test_checkpoint_peak)
{
    rig r;
    const config c = rig_config(shapes, _i);
    rig_open(&r, &c);
    const int64_t q = r.u.quantum;
    /* the reference for every percentage, from the sizes alone */
    ck_assert_int_eq(r.full_peak * q, (int64_t)((r.c->T - 1) * r.sb));
    for (int k = 0; bptt_strategies[k]; k++) {
        const bptt_strategy *st = bptt_strategies[k];
        bptt_table *tb = rig_table(&r, st);
        for (int64_t m = table_min(&r, tb); m <= r.full_peak + EXTRA_BUDGET;
             m++) {
            /* a byte budget that is not a multiple of the quantum */
            const int64_t budget_bytes = m * q + q / 2;
            const int64_t units = budget_bytes / q;
            ck_assert_int_eq(units, m);
            bptt_plan *plan = table_plan(&r, tb, units);
            bptt_plan_stats vs;
            ck_assert_int_eq(bptt_plan_validate(plan, &vs), BPTT_OK);
            bptt_mem_stats before;
            bptt_mem_reset_peaks(r.mem);
            mem_snapshot(&r, &before);
            ck_assert_uint_eq(before.current[BPTT_MEM_CHECKPOINT], 0);
            bptt_exec_stats ex;
            run_ok(&r, plan, &ex, st->name, m);
            const bptt_mem_stats *ms = bptt_mem_stats_get(r.mem);
            const int64_t peak = (int64_t)ms->peak[BPTT_MEM_CHECKPOINT];
            ck_assert_msg(peak == vs.peak_units * q,
                          "%s: %s m=%lld: checkpoint peak %lld bytes, plan "
                          "predicts %lld units x %lld = %lld",
                          r.name, st->name, (long long)m, (long long)peak,
                          (long long)vs.peak_units, (long long)q,
                          (long long)(vs.peak_units * q));
            ck_assert_msg(ex.checkpoint_peak_bytes == (size_t)peak,
                          "%s: %s m=%lld: the executor counts a peak of %zu "
                          "bytes, the allocator %lld",
                          r.name, st->name, (long long)m,
                          ex.checkpoint_peak_bytes, (long long)peak);
            ck_assert_msg(peak <= budget_bytes,
                          "%s: %s m=%lld: checkpoint peak %lld bytes over "
                          "the budget of %lld",
                          r.name, st->name, (long long)m, (long long)peak,
                          (long long)budget_bytes);
            ck_assert_msg(peak >= (int64_t)r.hb, "%s: %s: peak %lld below "
                          "one hidden state (h(0) is stored)",
                          r.name, st->name, (long long)peak);
            assert_mem_as_before(&r, &before, st->name);
            bptt_plan_free(plan);
        }
        bptt_table_free(tb);
    }
    rig_close(&r);
}
END_TEST

/* ---- (2b) the record of an iteration and its op times ------------------- */

static double wall_now(void)
{
    struct timespec ts;
    ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* For every strategy at every budget, the recorded run: the same
 * gradients as an unrecorded one; one point per action, in plan order;
 * forward ops so far ending at the plan's count, each advance (a
 * recomputation too) adding one; checkpoint bytes never above the measured
 * peak, reaching it, ending at 0; the op times in the points summing to
 * forward_seconds and backward_seconds bit for bit (so those count every
 * forward op, recomputations included), both positive and within the
 * call's wall time; under full BPTT, checkpoint bytes that only grow
 * through the forward sweep (but for h(0)'s release). */
START_TEST(test_recorded)
{
    rig r;
    const config c = rig_config(shapes, _i);
    rig_open(&r, &c);
    const size_t n = r.model->n_params;
    for (int k = 0; bptt_strategies[k]; k++) {
        const bptt_strategy *st = bptt_strategies[k];
        bptt_table *tb = rig_table(&r, st);
        for (int64_t m = table_min(&r, tb); m <= r.full_peak; m++) {
            bptt_plan *plan = table_plan(&r, tb, m);
            bptt_plan_stats vs;
            ck_assert_int_eq(bptt_plan_validate(plan, &vs), BPTT_OK);
            bptt_exec_stats ex, ex0;
            run_ok(&r, plan, &ex0, st->name, m);
            real *ref = copy_of(r.model->grads, n);
            bptt_exec_point *pt = calloc(plan->n_actions, sizeof *pt);
            ck_assert_ptr_nonnull(pt);
            bptt_mem_reset_peaks(r.mem);
            const double t0 = wall_now();
            const int rc = bptt_exec_run_recorded(plan, r.model, &r.batch,
                                                  r.mem, &ex, pt);
            const double wall = wall_now() - t0;
            ck_assert_int_eq(rc, BPTT_OK);
            ck_assert_msg(first_diff(r.model->grads, ref, n) == n,
                          "%s: %s m=%lld: recording changed the gradients",
                          r.name, st->name, (long long)m);
            free(ref);
            const size_t peak =
                bptt_mem_stats_get(r.mem)->peak[BPTT_MEM_CHECKPOINT];
            ck_assert_uint_eq(peak, (size_t)(vs.peak_units * r.u.quantum));
            size_t most = 0, advances = 0;
            double fwd = 0, bwd = 0;
            int backward_seen = 0;
            for (size_t a = 0; a < plan->n_actions; a++) {
                const bptt_exec_point *p = &pt[a];
                const int op = (int)plan->actions[a].op;
                ck_assert_msg(p->op == (uint32_t)op &&
                                  p->step == plan->actions[a].step,
                              "%s: %s m=%lld: point %zu is %s %u", r.name,
                              st->name, (long long)m, a,
                              bptt_op_name((int)p->op), p->step);
                advances += op == BPTT_ADVANCE;
                ck_assert_int_eq(p->forward_ops, (int64_t)advances);
                ck_assert_msg(p->checkpoint_bytes <= peak &&
                                  p->checkpoint_bytes <= p->total_bytes,
                              "%s: %s m=%lld: point %zu holds %zu of %zu "
                              "bytes, peak %zu", r.name, st->name,
                              (long long)m, a, p->checkpoint_bytes,
                              p->total_bytes, peak);
                most = p->checkpoint_bytes > most ? p->checkpoint_bytes
                                                  : most;
                ck_assert(p->seconds >= 0);
                if (op == BPTT_ADVANCE)
                    fwd += p->seconds;
                else if (op == BPTT_BACKWARD)
                    bwd += p->seconds;
                else
                    ck_assert(p->seconds == 0);
                backward_seen |= op == BPTT_BACKWARD;
                /* full BPTT: the forward sweep only adds states */
                if (strcmp(st->name, "full") == 0 && a > 0 &&
                    !backward_seen &&
                    !(op == BPTT_FREE_HIDDEN && p->step == 0))
                    ck_assert_msg(p->checkpoint_bytes >=
                                      pt[a - 1].checkpoint_bytes,
                                  "%s: full: point %zu drops to %zu bytes",
                                  r.name, a, p->checkpoint_bytes);
            }
            ck_assert_msg(most == peak, "%s: %s m=%lld: points reach %zu, "
                          "peak %zu", r.name, st->name, (long long)m, most,
                          peak);
            ck_assert_uint_eq(pt[plan->n_actions - 1].checkpoint_bytes, 0);
            ck_assert_int_eq(pt[plan->n_actions - 1].forward_ops,
                             vs.forward_ops);
            ck_assert_int_eq((int64_t)advances, ex.forward_ops);
            ck_assert_msg(fwd == ex.forward_seconds &&
                              bwd == ex.backward_seconds,
                          "%s: %s m=%lld: points sum to %.9g + %.9g s, "
                          "stats %.9g + %.9g", r.name, st->name,
                          (long long)m, fwd, bwd, ex.forward_seconds,
                          ex.backward_seconds);
            ck_assert_msg(ex.forward_seconds > 0 && ex.backward_seconds > 0 &&
                              ex.forward_seconds + ex.backward_seconds <=
                                  wall,
                          "%s: %s m=%lld: %.9g + %.9g s of ops in %.9g s",
                          r.name, st->name, (long long)m, ex.forward_seconds,
                          ex.backward_seconds, wall);
            ck_assert(ex0.forward_seconds > 0 && ex0.backward_seconds > 0);
            free(pt);
            bptt_plan_free(plan);
        }
        bptt_table_free(tb);
    }
    rig_close(&r);
}
END_TEST

/* ---- (3) gradients ---------------------------------------------------------- */

/* Gradients of every strategy at every budget against full BPTT's, for
 * one weight-gradient block size and GEMM kernel (the model's as set). */
static void check_identical(rig *r, const char *mode, real **ref_out)
{
    const size_t n = r->model->n_params;
    double ref_loss;
    real *ref = full_grads(r, &ref_loss);
    ck_assert_msg(isfinite(ref_loss) && ref_loss > 0, "%s (%s): loss %g",
                  r->name, mode, ref_loss);
    ck_assert_msg(bptt_model_grad_norm(r->model) > 0,
                  "%s (%s): zero gradient", r->name, mode);
    int runs = 0;
    for (int k = 0; bptt_strategies[k]; k++) {
        const bptt_strategy *st = bptt_strategies[k];
        bptt_table *tb = rig_table(r, st);
        for (int64_t m = table_min(r, tb); m <= r->full_peak + EXTRA_BUDGET;
             m++) {
            bptt_plan *plan = table_plan(r, tb, m);
            /* dirty gradients: the executor must zero them */
            for (size_t j = 0; j < n; j++)
                r->model->grads[j] = (real)(j + 1);
            bptt_exec_stats ex;
            run_ok(r, plan, &ex, st->name, m);
            const size_t d = first_diff(r->model->grads, ref, n);
            ck_assert_msg(d == n,
                          "%s (%s): %s m=%lld (%lld forward ops): gradient "
                          "%zu is %.9g, full BPTT's %.9g",
                          r->name, mode, st->name, (long long)m,
                          (long long)ex.forward_ops, d,
                          d < n ? (double)r->model->grads[d] : 0.0,
                          d < n ? (double)ref[d] : 0.0);
            ck_assert_msg(isfinite(ex.loss) &&
                              memcmp(&ex.loss, &ref_loss, sizeof(double)) ==
                                  0,
                          "%s (%s): %s m=%lld: loss %.17g, full BPTT's "
                          "%.17g",
                          r->name, mode, st->name, (long long)m, ex.loss,
                          ref_loss);
            bptt_plan_free(plan);
            runs++;
        }
        bptt_table_free(tb);
    }
    ck_assert_int_ge(runs, n_strategies());
    *ref_out = ref;
}

/* ||a - b|| / ||b||, in double */
static double rel_diff(const real *a, const real *b, size_t n)
{
    double d = 0, nb = 0;
    for (size_t k = 0; k < n; k++) {
        d += ((double)a[k] - (double)b[k]) * ((double)a[k] - (double)b[k]);
        nb += (double)b[k] * (double)b[k];
    }
    return sqrt(d) / (nb > 0 ? sqrt(nb) : 1);
}

/* Bit-identity holds for every weight-gradient block size K (1: every
 * step; 3: several blocks and a partial one at the top; the default: one
 * block or two here) and for either GEMM kernel; across them the
 * gradients differ only by rounding. */
START_TEST(test_gradients_identical)
{
    rig r;
    const config c = rig_config(shapes, _i);
    rig_open(&r, &c);
    const size_t n = r.model->n_params;
    const size_t K0 = r.model->wgrad_steps;
    const int kernel = strcmp(bptt_cell_kernel(), "cblas") != 0;
    real *ref0 = NULL, *ref = NULL;
    check_identical(&r, "default", &ref0);
    static const size_t ks[] = {1, 3, 4};
    for (size_t q = 0; q < sizeof ks / sizeof ks[0]; q++) {
        ck_assert_int_eq(bptt_model_set_wgrad_steps(r.model, ks[q]),
                         BPTT_OK);
        char mode[32];
        snprintf(mode, sizeof mode, "K=%zu", ks[q]);
        check_identical(&r, mode, &ref);
        const double rd = rel_diff(ref, ref0, n);
        ck_assert_msg(rd < 1e-5, "%s: K=%zu against K=%zu: relative "
                      "difference %.3g", r.name, ks[q], K0, rd);
        free(ref);
    }
    if (kernel) { /* and the same model on the cblas path, K = 3 */
        rig rc;
        rig_open_on(&rc, &c, "cblas");
        ck_assert_int_eq(bptt_model_set_wgrad_steps(rc.model, 3), BPTT_OK);
        check_identical(&rc, "cblas, K=3", &ref);
        const double rd = rel_diff(ref, ref0, n);
        ck_assert_msg(rd < 1e-5, "%s: cblas against the %s kernel: "
                      "relative difference %.3g", r.name, bptt_cell_kernel(),
                      rd);
        ck_assert_msg(rd > 0, "%s: cblas and the %s kernel gave the same "
                      "bits: did the second model run on cblas?", r.name,
                      bptt_cell_kernel());
        free(ref);
        rig_close(&rc);
    }
    ck_assert_int_eq(bptt_model_set_wgrad_steps(r.model, K0), BPTT_OK);
    free(ref0);
    rig_close(&r);
}
END_TEST

/* On the kernel a step is one parallel region whose threads share every
 * product (by tiles of columns, or by rows where the weights fit in L2)
 * and row loop (model_step.c; a run of steps holds one team for all its
 * steps, team.h): both ways are taken, and the gradients and the loss, of full BPTT and
 * of an MSM plan that recomputes and restores, are the same bits on 1,
 * 2, 3 and 7 threads (rows and columns that do not divide
 * evenly, more threads than rows; steps large enough that the region is
 * shared, bptt_gemm_worth_threads), for every cell on one and two layers,
 * and the forward step equals the cells' whole ops bit for bit.  On cblas
 * (no team path) both agree to rounding. */
static const shape thread_shapes[] = { /* large enough to be shared */
    {2, "copy", 7, 35, 4, 100, 21},
    {1, "adding", 6, 21, 2, 120, 24},
};

static void set_threads(int t)
{
#ifdef _OPENMP
    omp_set_num_threads(t);
#endif
    openblas_set_num_threads(t);
}

/* team.h: every part runs once on each thread of the team with its own
 * number, and after bptt_team_barrier each thread sees what every other
 * wrote before it; on a held team (3 threads, and 7: more than this
 * machine may have processors) and on plain parallel regions, and a part
 * run with par 0 runs once, alone. */
#define PROBE_MAX 8
typedef struct {
    int round, P;
    int wrote[PROBE_MAX];  /* round * 16 + q, by thread q */
    int parts[PROBE_MAX];  /* parts thread q ran */
    int bad[PROBE_MAX];    /* stale values thread q saw after the barrier */
    int sizes[PROBE_MAX];  /* the P thread q was given */
} team_probe;

static void probe_part(void *arg, int q, int P)
{
    team_probe *t = arg;
    t->wrote[q] = t->round * 16 + q;
    t->parts[q]++;
    t->sizes[q] = P;
    bptt_team_barrier();
    for (int k = 0; k < P; k++)
        t->bad[q] += t->wrote[k] != t->round * 16 + k;
}

static void probe_rounds(void *arg)
{
    team_probe *t = arg;
    for (t->round = 1; t->round <= 2000; t->round++)
        bptt_team_run(probe_part, t, 1);
    bptt_team_run(probe_part, t, 0); /* alone */
}

START_TEST(test_team)
{
    static const int threads[] = {3, 7};
    for (int held = 0; held < 2; held++)
        for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
            set_threads(threads[k]);
            team_probe t = {0};
            if (held)
                bptt_team_hold(probe_rounds, &t);
            else
                probe_rounds(&t);
            set_threads(THREADS);
            int P = threads[k];
#ifndef _OPENMP
            P = 1;
#endif
            for (int q = 0; q < P; q++) {
                ck_assert_msg(t.parts[q] == 2000 + (q == 0),
                              "%s team of %d: thread %d ran %d parts of "
                              "2001", held ? "held" : "plain", P, q,
                              t.parts[q]);
                ck_assert_msg(t.bad[q] == 0,
                              "%s team of %d: thread %d saw %d stale "
                              "values after the barrier",
                              held ? "held" : "plain", P, q, t.bad[q]);
                ck_assert_int_eq(t.sizes[q], q == 0 ? 1 : P);
            }
            for (int q = P; q < PROBE_MAX; q++)
                ck_assert_int_eq(t.parts[q], 0);
        }
}
END_TEST

/* A part given one thread, where one thread is asked for or where it is
 * called inside a region in which no more may nest, runs on the calling
 * thread without a region of its own (its OpenMP level is the caller's),
 * as thread 0 of 1, and its barrier returns at once. */
typedef struct {
    int runs, q, P, level;
} alone_probe;

static void alone_part(void *arg, int q, int P)
{
    alone_probe *a = arg;
    a->runs++;
    a->q = q;
    a->P = P;
#ifdef _OPENMP
    a->level = omp_get_level();
#endif
    bptt_team_barrier();
}

START_TEST(test_team_one_thread)
{
    set_threads(1);
    alone_probe a = {0};
    for (int i = 0; i < 100; i++)
        bptt_team_run(alone_part, &a, 1);
    set_threads(THREADS);
    ck_assert_int_eq(a.runs, 100);
    ck_assert_int_eq(a.q, 0);
    ck_assert_int_eq(a.P, 1);
    ck_assert_msg(a.level == 0,
                  "one thread: the part ran in a region of its own "
                  "(OpenMP level %d)", a.level);
#ifdef _OPENMP
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(1);
    alone_probe in[2] = {{0}};
    int team = 0;
    _Pragma("omp parallel num_threads(2)")
    {
        const int t = omp_get_thread_num();
        if (t == 0)
            team = omp_get_num_threads();
        if (t < 2)
            bptt_team_run(alone_part, &in[t], 1);
    }
    omp_set_max_active_levels(levels);
    for (int t = 0; t < team; t++) {
        ck_assert_int_eq(in[t].runs, 1);
        ck_assert_int_eq(in[t].q, 0);
        ck_assert_int_eq(in[t].P, 1);
        ck_assert_msg(in[t].level == 1,
                      "inside a region: the part on thread %d opened a "
                      "nested one (OpenMP level %d)", t, in[t].level);
    }
#endif
}
END_TEST

START_TEST(test_threads_identical)
{
    rig r;
    const config c = rig_config(thread_shapes, _i);
    rig_open(&r, &c);
    bptt_model *m = r.model;
    for (size_t l = 0; l < m->L; l++) /* the region is shared (model_step.c) */
        ck_assert_msg(bptt_gemm_worth_threads(
                          m->B, m->cell->gates * m->H,
                          (m->ws[l].X > m->H ? m->ws[l].X : m->H) + m->H),
                      "%s: too small for the team path to share", r.name);
    const size_t n = m->n_params;
    const int kernel = strcmp(bptt_cell_kernel(), "cblas") != 0;
    static const int threads[] = {1, 2, 3, 7};
    real *ref = NULL;
    double ref_loss = 0;
    /* and MSM at the smallest budget whose plan restores an internal
       state: recomputations and restores inside the team held for the
       run (team.h) */
    bptt_table *tb = rig_table(&r, bptt_strategy_find("msm"));
    bptt_plan *tight = NULL;
    int64_t mt = table_min(&r, tb);
    for (; !tight && mt <= r.full_peak; mt++) {
        bptt_plan *p = table_plan(&r, tb, mt);
        for (size_t a = 0; a < p->n_actions && !tight; a++)
            if (p->actions[a].op == BPTT_RESTORE_INTERNAL)
                tight = p;
        if (!tight)
            bptt_plan_free(p);
    }
    bptt_table_free(tb);
    ck_assert_msg(tight != NULL, "%s: no msm plan restores an internal "
                  "state", r.name);
    int ways = 0; /* 1: by columns, 2: by rows, on some thread count */
    for (size_t k = 0; k < 2 * sizeof threads / sizeof threads[0]; k++) {
        set_threads(threads[k / 2]);
        if (threads[k / 2] > 1)
            ways |= 1 << bptt_model_steps_by_rows(m, threads[k / 2]);
        double loss;
        real *g;
        if (k % 2 == 0) {
            g = full_grads(&r, &loss);
        } else {
            bptt_exec_stats ex;
            run_ok(&r, tight, &ex, "msm", mt - 1);
            ck_assert(ex.recompute_ops > 0 && ex.restores > 0);
            loss = ex.loss;
            g = copy_of(m->grads, n);
        }
        if (k == 0) {
            ref = g;
            ref_loss = loss;
            continue;
        }
        if (kernel) {
            const size_t d = first_diff(g, ref, n);
            ck_assert_msg(d == n,
                          "%s: gradient %zu on %d threads is %.9g, on 1 "
                          "%.9g", r.name, d, threads[k],
                          d < n ? (double)g[d] : 0.0,
                          d < n ? (double)ref[d] : 0.0);
            ck_assert_msg(memcmp(&loss, &ref_loss, sizeof loss) == 0,
                          "%s: loss %.17g on %d threads, %.17g on 1",
                          r.name, loss, threads[k], ref_loss);
        } else {
            ck_assert_msg(rel_diff(g, ref, n) < 1e-5,
                          "%s: %d threads against 1: relative difference "
                          "%.3g", r.name, threads[k], rel_diff(g, ref, n));
        }
        free(g);
    }
    free(ref);
    bptt_plan_free(tight);
    /* 7 threads have fewer rows each than a tile; the RNN's weights
       (under 256 KB) fit in any L2 we run on */
    ck_assert_msg(!kernel || (ways & 1), "%s: never by columns", r.name);
    ck_assert_msg(!kernel || strcmp(m->cell->name, "rnn") != 0 || (ways & 2),
                  "%s: never by rows", r.name);

    /* one forward step on 3 threads against the cells' whole ops */
    const size_t hl = m->hidden_len, il = m->internal_len;
    real *in = malloc(hl * sizeof(real)), *s1 = malloc(il * sizeof(real)),
         *s2 = malloc(il * sizeof(real)), *o1 = malloc(hl * sizeof(real)),
         *o2 = malloc(hl * sizeof(real));
    ck_assert(in && s1 && s2 && o1 && o2);
    for (size_t k = 0; k < hl; k++)
        in[k] = (real)sin(0.37 * (double)k);
    const real *x = r.batch.x;
    set_threads(3);
    bptt_model_forward_step(m, x, in, s1, o1);
    set_threads(1);
    const size_t hv = m->cell->hidden_vecs * m->B * m->H;
    const size_t iv = m->cell->internal_vecs * m->B * m->H;
    for (size_t l = 0; l < m->L; l++)
        bptt_cell_forward(m->cell, &m->ws[l],
                          m->params + m->tensor[2 * l].offset,
                          m->params + m->tensor[2 * l + 1].offset,
                          l == 0 ? x : o2 + (l - 1) * hv, in + l * hv,
                          s2 + l * iv, o2 + l * hv);
    if (kernel) { /* one region on 3 threads, the same bits */
        ck_assert_msg(memcmp(s1, s2, il * sizeof(real)) == 0 &&
                          memcmp(o1, o2, hl * sizeof(real)) == 0,
                      "%s: the forward step differs from the cells' ops",
                      r.name);
        /* and the state rebuilt from s1 on 3 threads is that step's */
        set_threads(3);
        for (size_t k = 0; k < hl; k++)
            o2[k] = (real)-7;
        bptt_model_state_from_internal(m, s1, o2);
        set_threads(1);
        ck_assert_msg(memcmp(o1, o2, hl * sizeof(real)) == 0,
                      "%s: the state rebuilt on 3 threads differs from the "
                      "forward step's", r.name);
    }
    else /* OpenBLAS on 3 threads against 1: to rounding */
        ck_assert_msg(rel_diff(s1, s2, il) < 1e-6 &&
                          rel_diff(o1, o2, hl) < 1e-6,
                      "%s: the forward step on 3 threads against 1: "
                      "relative differences %.3g, %.3g",
                      r.name, rel_diff(s1, s2, il), rel_diff(o1, o2, hl));
    free(in), free(s1), free(s2), free(o1), free(o2);
    set_threads(THREADS);
    rig_close(&r);
}
END_TEST

/* A weight-gradient block left open (the backward ops stopped short of
 * step 1, as the model's own calls may) is added by
 * bptt_model_finish_grads, bias gradients included: on two threads the
 * steps leave those to the block's flush (model_step.c), on one thread
 * they add them at once; the gradients are the same bits either way. */
START_TEST(test_open_block_bias)
{
    rig r;
    const config c = rig_config(thread_shapes, _i);
    rig_open(&r, &c);
    bptt_model *m = r.model;
    const int kernel = strcmp(bptt_cell_kernel(), "cblas") != 0;
    const size_t n = m->n_params, T = c.T, BX = c.B * c.X;
    const size_t hl = m->hidden_len, il = m->internal_len;
    real *s = calloc(T * il, sizeof(real));
    real *state = calloc(2 * hl, sizeof(real));
    real *carry = calloc(hl, sizeof(real));
    ck_assert(s && state && carry);
    const real scale = (real)(1.0 / ((double)c.B * (double)T));
    static const int threads[] = {1, 2};
    real *ref = NULL;
    for (int k = 0; k < 2; k++) {
        set_threads(threads[k]);
        bptt_model_pack_weights(m);
        bptt_model_zero_grads(m);
        memset(state, 0, hl * sizeof(real));
        for (size_t i = 1; i <= T; i++)
            bptt_model_forward_step(m, r.batch.x + (i - 1) * BX,
                                    state + (i - 1) % 2 * hl,
                                    s + (i - 1) * il, state + i % 2 * hl);
        memset(carry, 0, hl * sizeof(real));
        for (size_t i = T; i >= 2; i--) /* not step 1: its block stays open */
            (void)bptt_model_backward_step(m, i, r.batch.x + (i - 1) * BX,
                                           r.batch.y + (i - 1) * c.B,
                                           s + (i - 1) * il, carry, scale);
        ck_assert_msg(m->wgrad_rows > 0, "%s: no block open", r.name);
        if (kernel)
            ck_assert_msg((m->wgrad_bias_slots > 0) == (threads[k] > 1),
                          "%s on %d threads: %zu slots' bias gradients "
                          "left to the flush",
                          r.name, threads[k], m->wgrad_bias_slots);
        bptt_model_finish_grads(m);
        ck_assert_uint_eq(m->wgrad_rows, 0);
        ck_assert_uint_eq(m->wgrad_bias_slots, 0);
        real *g = copy_of(m->grads, n);
        if (k == 0) {
            ref = g;
            continue;
        }
        if (kernel) {
            const size_t d = first_diff(g, ref, n);
            ck_assert_msg(d == n,
                          "%s: gradient %zu on 2 threads is %.9g, on 1 %.9g",
                          r.name, d, d < n ? (double)g[d] : 0.0,
                          d < n ? (double)ref[d] : 0.0);
        } else {
            ck_assert_msg(rel_diff(g, ref, n) < 1e-5,
                          "%s: 2 threads against 1: relative difference "
                          "%.3g", r.name, rel_diff(g, ref, n));
        }
        free(g);
    }
    /* not vacuous: every layer's bias gradient and the output's moved */
    for (size_t l = 0; l <= m->L; l++) {
        const bptt_tensor *t = &m->tensor[2 * l + 1];
        size_t nonzero = 0;
        for (size_t j = 0; j < t->rows; j++)
            nonzero += ref[t->offset + j] != 0;
        ck_assert_msg(nonzero > 0, "%s: bias %zu has no gradient", r.name,
                      l);
    }
    set_threads(THREADS);
    free(ref);
    free(s);
    free(state);
    free(carry);
    rig_close(&r);
}
END_TEST

/* ---- (4) training ---------------------------------------------------------- */

/* Parameters after TRAIN_STEPS steps of optimizer opt (batches 0, 1, 2)
 * from the config's seed, with the plan of strategy at budget m (-1: the
 * strategy's smallest; -2: halfway to full BPTT's peak; -3: full's peak +
 * EXTRA_BUDGET).  losses receives each step's loss. */
static real *train(const config *c, const char *strategy, int64_t which,
                   const char *opt, double lr, double *losses,
                   real **initial)
{
    rig r;
    rig_open(&r, c);
    const bptt_strategy *st = bptt_strategy_find(strategy);
    ck_assert_ptr_nonnull(st);
    bptt_table *tb = rig_table(&r, st);
    const int64_t mmin = table_min(&r, tb);
    const int64_t top = r.full_peak + EXTRA_BUDGET;
    int64_t m = which == -1 ? mmin : which == -2 ? (mmin + top) / 2 : top;
    bptt_plan *plan = table_plan(&r, tb, m);
    bptt_table_free(tb);
    bptt_optimizer *o = NULL;
    ck_assert_int_eq(bptt_optimizer_alloc(&o, opt, lr, r.model, r.mem),
                     BPTT_OK);
    if (initial)
        *initial = copy_of(r.model->params, r.model->n_params);
    for (size_t it = 0; it < TRAIN_STEPS; it++) {
        ck_assert_int_eq(bptt_session_fetch(r.session, it), BPTT_OK);
        r.batch = *bptt_session_batch(r.session);
        bptt_exec_stats ex;
        run_ok(&r, plan, &ex, strategy, m);
        losses[it] = ex.loss;
        bptt_optimizer_step(o, r.model);
    }
    real *p = copy_of(r.model->params, r.model->n_params);
    bptt_optimizer_free(o, r.mem);
    bptt_plan_free(plan);
    rig_close(&r);
    return p;
}

/* The entries a cell keeps at zero (the GRU's zero blocks, cell.h) are
 * exactly zero in params, a parameter arena of config c after training
 * with opt; there are H (X_l + H) of them in each layer's W. */
static void check_zero_blocks(const config *c, const real *params,
                              const char *opt)
{
    const bptt_cell_type *cell = bptt_cell_find(c->cell);
    if (!cell->zero_fixed)
        return;
    rig r;
    rig_open(&r, c);
    const bptt_model *m = r.model;
    for (size_t l = 0; l < m->L; l++) {
        const bptt_tensor *t = &m->tensor[2 * l];
        const size_t len = t->rows * t->cols;
        real *ones = malloc(len * sizeof(real));
        ck_assert_ptr_nonnull(ones);
        for (size_t j = 0; j < len; j++)
            ones[j] = 1;
        cell->zero_fixed(m->ws[l].X, m->H, ones);
        size_t fixed = 0, nonzero_free = 0;
        for (size_t j = 0; j < len; j++) {
            const real p = params[t->offset + j];
            if (ones[j] == 0) {
                fixed++;
                ck_assert_msg(p == 0, "%s: %s: %s[%zu] is %.9g, kept at zero "
                              "by the cell", r.name, opt, t->name, j,
                              (double)p);
            } else {
                nonzero_free += p != 0;
            }
        }
        ck_assert_uint_eq(fixed, m->H * (m->ws[l].X + m->H));
        ck_assert_uint_eq(nonzero_free, len - fixed);
        free(ones);
    }
    rig_close(&r);
}

static void check_training(int ci, const char *opt, double lr)
{
    const config cc = rig_config(shapes, ci), *c = &cc;
    double ref_loss[TRAIN_STEPS], loss[TRAIN_STEPS];
    real *init = NULL;
    real *ref = train(c, "full", -3, opt, lr, ref_loss, &init);
    /* the size of the parameter arena, from a model of the same config */
    rig r;
    rig_open(&r, c);
    const size_t n = r.model->n_params;
    rig_close(&r);
    ck_assert_msg(first_diff(ref, init, n) < n,
                  "%s: %s left the parameters unchanged", c->cell, opt);
    check_zero_blocks(c, ref, opt);
    for (int k = 0; bptt_strategies[k]; k++) {
        for (int64_t which = -1; which >= -3; which--) {
            real *p = train(c, bptt_strategies[k]->name, which, opt, lr,
                            loss, NULL);
            const size_t d = first_diff(p, ref, n);
            ck_assert_msg(d == n,
                          "%s L%zu %s, %s: %s (budget choice %lld): "
                          "parameter %zu after %d steps is %.9g, full "
                          "BPTT's %.9g",
                          c->cell, c->L, c->task, opt,
                          bptt_strategies[k]->name, (long long)which, d,
                          TRAIN_STEPS, d < n ? (double)p[d] : 0.0,
                          d < n ? (double)ref[d] : 0.0);
            for (int it = 0; it < TRAIN_STEPS; it++)
                ck_assert_msg(memcmp(&loss[it], &ref_loss[it],
                                     sizeof(double)) == 0,
                              "%s: %s: step %d loss %.17g, full's %.17g",
                              c->cell, bptt_strategies[k]->name, it,
                              loss[it], ref_loss[it]);
            free(p);
        }
    }
    free(init);
    free(ref);
}

START_TEST(test_train_sgd) { check_training(_i, "sgd", 0.5); }
END_TEST

START_TEST(test_train_adam) { check_training(_i, "adam", 0.01); }
END_TEST

/* ---- rejected plans -------------------------------------------------------- */

START_TEST(test_wrong_length)
{
    rig r;
    const config c = rig_config(shapes, _i);
    rig_open(&r, &c);
    const size_t T = r.c->T;
    const int64_t h = r.u.hidden_units, s = r.u.internal_units;
    bptt_mem_stats before;
    mem_snapshot(&r, &before);
    for (int d = -1; d <= 1; d += 2) {
        const size_t t = T + (size_t)d;
        bptt_table *tb = NULL;
        ck_assert_int_eq(bptt_table_alloc(&tb, bptt_strategy_find("msm"), t,
                                          h, s, bptt_full_peak(t, h, s),
                                          NULL),
                         BPTT_OK);
        bptt_plan *plan = NULL;
        ck_assert_int_eq(
            bptt_table_plan(tb, bptt_full_peak(t, h, s), &plan, NULL),
            BPTT_OK);
        bptt_table_free(tb);
        bptt_exec_stats ex;
        const int rc = bptt_exec_run(plan, r.model, &r.batch, r.mem, &ex);
        ck_assert_msg(rc == BPTT_EINVAL,
                      "%s: a plan of length %zu on a batch of %zu: %s",
                      r.name, t, T, bptt_strerror(rc));
        assert_mem_as_before(&r, &before, "wrong length");
        bptt_plan_free(plan);
    }
    rig_close(&r);
}
END_TEST

/* A full-BPTT plan for the rig's length in the given units. */
static bptt_plan *full_in_units(const rig *r, int64_t h, int64_t s)
{
    const size_t T = r->c->T;
    bptt_table *tb = NULL;
    ck_assert_int_eq(bptt_table_alloc(&tb, bptt_strategy_find("full"), T, h,
                                      s, bptt_full_peak(T, h, s), NULL),
                     BPTT_OK);
    bptt_plan *plan = NULL;
    ck_assert_int_eq(bptt_table_plan(tb, bptt_full_peak(T, h, s), &plan,
                                     NULL),
                     BPTT_OK);
    bptt_table_free(tb);
    return plan;
}

START_TEST(test_wrong_units)
{
    rig r;
    const config c = rig_config(shapes, _i);
    rig_open(&r, &c);
    const int64_t h = r.u.hidden_units, s = r.u.internal_units;
    bptt_mem_stats before;
    mem_snapshot(&r, &before);
    const int64_t bad[][2] = {{h, s + 1}, {h + 1, s}, {1, 1}, {h, 2 * s}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        bptt_plan *plan = full_in_units(&r, bad[k][0], bad[k][1]);
        bptt_exec_stats ex;
        const int rc = bptt_exec_run(plan, r.model, &r.batch, r.mem, &ex);
        ck_assert_msg(rc == BPTT_EINVAL,
                      "%s: units h=%lld s=%lld for a model of %lld:%lld: %s",
                      r.name, (long long)bad[k][0], (long long)bad[k][1],
                      (long long)h, (long long)s, bptt_strerror(rc));
        assert_mem_as_before(&r, &before, "wrong units");
        bptt_plan_free(plan);
    }
    /* the same ratio in other units is the same plan (exec.h) */
    bptt_plan *plan = full_in_units(&r, 3 * h, 3 * s);
    bptt_exec_stats ex;
    run_ok(&r, plan, &ex, "full in units x3", plan->budget);
    bptt_plan_free(plan);
    rig_close(&r);
}
END_TEST

START_TEST(test_broken_plans)
{
    rig r;
    const config c = rig_config(shapes, _i);
    rig_open(&r, &c);
    const size_t T = r.c->T;
    const int64_t h = r.u.hidden_units, s = r.u.internal_units;
    double ref_loss;
    real *ref = full_grads(&r, &ref_loss);
    bptt_mem_stats before;
    mem_snapshot(&r, &before);

    /* 0: a backward without its state: one sweep, nothing saved */
    /* 1: over its own budget: full BPTT with one unit less */
    /* 2: ends with s(1) still stored */
    /* 3: backward out of order */
    for (int kind = 0; kind < 4; kind++) {
        bptt_plan *plan = NULL;
        if (kind == 0) {
            ck_assert_int_eq(bptt_plan_alloc(&plan, T, h, s, 100 * s),
                             BPTT_OK);
            for (size_t i = 1; i <= T; i++) {
                ck_assert_int_eq(bptt_plan_push(plan, BPTT_ADVANCE, i),
                                 BPTT_OK);
                if (i == 1)
                    ck_assert_int_eq(
                        bptt_plan_push(plan, BPTT_FREE_HIDDEN, 0), BPTT_OK);
            }
            for (size_t i = T; i >= 1; i--)
                ck_assert_int_eq(bptt_plan_push(plan, BPTT_BACKWARD, i),
                                 BPTT_OK);
        } else {
            plan = full_in_units(&r, h, s);
            if (kind == 1) {
                plan->budget = bptt_full_peak(T, h, s) - 1;
            } else if (kind == 2) {
                ck_assert_uint_eq(plan->actions[plan->n_actions - 1].op,
                                  BPTT_FREE_INTERNAL);
                plan->n_actions--;
            } else {
                /* swap "backward T" with the following "backward T-1" */
                size_t a = 0;
                while (plan->actions[a].op != BPTT_BACKWARD)
                    a++;
                ck_assert_uint_eq(plan->actions[a + 1].op, BPTT_BACKWARD);
                plan->actions[a].step = T - 1;
                plan->actions[a + 1].step = T;
            }
        }
        bptt_plan_stats vs;
        ck_assert_int_eq(bptt_plan_validate(plan, &vs), BPTT_EBADPLAN);
        bptt_exec_stats ex;
        const int rc = bptt_exec_run(plan, r.model, &r.batch, r.mem, &ex);
        ck_assert_msg(rc == BPTT_EBADPLAN, "%s: broken plan %d (%s): %s",
                      r.name, kind, bptt_violation_str(vs.violation),
                      bptt_strerror(rc));
        assert_mem_as_before(&r, &before, "broken plan");
        bptt_plan_free(plan);
    }
    /* and the model still trains as before */
    double loss;
    real *again = full_grads(&r, &loss);
    ck_assert_uint_eq(first_diff(again, ref, r.model->n_params),
                      r.model->n_params);
    free(again);
    free(ref);
    rig_close(&r);
}
END_TEST

/* ---- allocation failure ---------------------------------------------------- */

START_TEST(test_enomem)
{
    rig r;
    const config c = rig_config(shapes, _i);
    rig_open(&r, &c);
    const size_t n = r.model->n_params;
    static const char *const names[] = {"full", "chen", "hsm", "ism", "msm"};
    /* each strategy at its smallest budget and halfway to full BPTT's */
    for (size_t k = 0; k < 2 * (sizeof names / sizeof names[0]); k++) {
        const bptt_strategy *st = bptt_strategy_find(names[k / 2]);
        ck_assert_ptr_nonnull(st);
        bptt_table *tb = rig_table(&r, st);
        const int64_t mmin = table_min(&r, tb);
        bptt_plan *plan = table_plan(
            &r, tb, k % 2 ? mmin : (mmin + r.full_peak + EXTRA_BUDGET) / 2);
        bptt_table_free(tb);

        bptt_exec_stats ex;
        const size_t a0 = bptt_mem_stats_get(r.mem)->allocations;
        run_ok(&r, plan, &ex, st->name, plan->budget);
        const size_t n_alloc = bptt_mem_stats_get(r.mem)->allocations - a0;
        /* at least h(0), one block per save and a working set */
        size_t saves = 0;
        for (size_t a = 0; a < plan->n_actions; a++)
            saves += plan->actions[a].op == BPTT_SAVE_HIDDEN ||
                     plan->actions[a].op == BPTT_SAVE_INTERNAL;
        ck_assert_msg(n_alloc > saves + 1,
                      "%s: %s: %zu allocations for %zu saves", r.name,
                      st->name, n_alloc, saves);
        real *ref = copy_of(r.model->grads, n);

        bptt_mem_stats before;
        mem_snapshot(&r, &before);
        for (size_t f = 1; f <= n_alloc; f++) {
            bptt_mem_fail_at(r.mem, f);
            const int rc = bptt_exec_run(plan, r.model, &r.batch, r.mem, &ex);
            bptt_mem_fail_at(r.mem, 0);
            ck_assert_msg(rc == BPTT_ENOMEM,
                          "%s: %s: allocation %zu of %zu failed: %s", r.name,
                          st->name, f, n_alloc, bptt_strerror(rc));
            char what[64];
            snprintf(what, sizeof what, "%s, allocation %zu of %zu failed",
                     st->name, f, n_alloc);
            assert_mem_as_before(&r, &before, what);
        }
        /* one past the last: the run does not reach it */
        bptt_mem_fail_at(r.mem, n_alloc + 1);
        const int rc = bptt_exec_run(plan, r.model, &r.batch, r.mem, &ex);
        bptt_mem_fail_at(r.mem, 0);
        ck_assert_msg(rc == BPTT_OK, "%s: %s: failure at allocation %zu "
                      "(after the run's %zu): %s",
                      r.name, st->name, n_alloc + 1, n_alloc,
                      bptt_strerror(rc));
        ck_assert_uint_eq(first_diff(r.model->grads, ref, n), n);
        assert_mem_as_before(&r, &before, "after the failures");
        free(ref);
        bptt_plan_free(plan);
    }
    rig_close(&r);
}
END_TEST

/* ---- restoring from an internal state ------------------------------------- */

START_TEST(test_state_from_internal)
{
    /* loop index: every cell x layers (1, 2) */
    static const shape layers[] = {{1, "copy", 8, 3, 4, 5, 21},
                                   {2, "copy", 8, 3, 4, 5, 21}};
    const config c = rig_config(layers, _i);
    rig r;
    rig_open(&r, &c);
    bptt_model *m = r.model;
    real *state = calloc(m->hidden_len, sizeof(real));
    real *next = calloc(m->hidden_len, sizeof(real));
    real *rebuilt = calloc(m->hidden_len, sizeof(real));
    real *s = calloc(m->internal_len, sizeof(real));
    ck_assert(state && next && rebuilt && s);
    for (size_t i = 0; i < c.T; i++) {
        bptt_model_forward_step(m, r.batch.x + i * c.B * c.X, state, s, next);
        for (size_t k = 0; k < m->hidden_len; k++)
            rebuilt[k] = (real)-7; /* every entry must be written */
        bptt_model_state_from_internal(m, s, rebuilt);
        const size_t d = first_diff(rebuilt, next, m->hidden_len);
        ck_assert_msg(d == m->hidden_len,
                      "%s L%zu step %zu: rebuilt state[%zu] = %.9g, forward "
                      "op's %.9g",
                      c.cell, c.L, i + 1, d,
                      d < m->hidden_len ? (double)rebuilt[d] : 0.0,
                      d < m->hidden_len ? (double)next[d] : 0.0);
        /* and h alone, layer by layer (what the output layer reads) */
        const size_t nh = c.B * c.H, hv = m->cell->hidden_vecs;
        for (size_t l = 0; l < m->L; l++) {
            for (size_t k = 0; k < nh; k++)
                rebuilt[k] = (real)-7;
            const real *h = bptt_cell_h_from_internal(
                m->cell, &m->ws[l], s + l * m->cell->internal_vecs * nh,
                rebuilt);
            ck_assert_msg(memcmp(h, next + l * hv * nh, nh * sizeof(real)) ==
                              0,
                          "%s L%zu step %zu: h of layer %zu from the "
                          "internal state differs from the forward op's",
                          c.cell, c.L, i + 1, l);
        }
        memcpy(state, next, m->hidden_len * sizeof(real));
    }
    /* not vacuous: the state moved away from zero */
    real zero = 0;
    size_t nonzero = 0;
    for (size_t k = 0; k < m->hidden_len; k++)
        nonzero += memcmp(&state[k], &zero, sizeof zero) != 0;
    ck_assert_uint_eq(nonzero, m->hidden_len);
    free(state);
    free(next);
    free(rebuilt);
    free(s);
    rig_close(&r);
}
END_TEST

/* ---- the per-step GEMM kernel ---------------------------------------------- */

/* bptt_cell_gemm against a double-precision reference over shapes around
 * the kernel's tiles (8 rows, 32 columns) and panels, with row strides
 * wider than the rows: every element within rounding, nothing written
 * outside C, and, for the kernel, the same bits with 1 and 2 threads. */
START_TEST(test_kernel_gemm)
{
    static const size_t Ms[] = {1, 2, 7, 8, 9, 17, 32};
    static const size_t Ns[] = {1, 5, 16, 31, 32, 33, 47, 100};
    static const size_t Ks[] = {1, 3, 64, 129};
    const size_t pad = 3;
    for (size_t a = 0; a < sizeof Ms / sizeof Ms[0]; a++)
        for (size_t b = 0; b < sizeof Ns / sizeof Ns[0]; b++)
            for (size_t c = 0; c < sizeof Ks / sizeof Ks[0]; c++) {
                const size_t M = Ms[a], N = Ns[b], K = Ks[c];
                const size_t lda = K + pad, ldb = N + pad, ldc = N + pad;
                real *A = malloc(M * lda * sizeof(real));
                real *Bm = malloc(K * ldb * sizeof(real));
                real *C = malloc(M * ldc * sizeof(real));
                real *C2 = malloc(M * ldc * sizeof(real));
                ck_assert(A && Bm && C && C2);
                for (size_t k = 0; k < M * lda; k++)
                    A[k] = (real)((double)((k * 7919) % 199) / 99.0 - 1);
                for (size_t k = 0; k < K * ldb; k++)
                    Bm[k] = (real)((double)((k * 104729) % 211) / 105.0 - 1);
                for (int beta = 0; beta <= 1; beta++) {
                    for (size_t k = 0; k < M * ldc; k++)
                        C[k] = (real)((double)(k % 13) - 6) / 8;
                    memcpy(C2, C, M * ldc * sizeof(real));
                    bptt_cell_gemm(M, N, K, A, lda, Bm, ldb, C, ldc, beta);
                    for (size_t i = 0; i < M; i++)
                        for (size_t j = 0; j < ldc; j++) {
                            const real got = C[i * ldc + j];
                            if (j >= N) { /* the gap between rows */
                                ck_assert_msg(
                                    memcmp(&got, &C2[i * ldc + j],
                                           sizeof got) == 0,
                                    "M=%zu N=%zu K=%zu: wrote C[%zu][%zu]",
                                    M, N, K, i, j);
                                continue;
                            }
                            double ref = beta ? (double)C2[i * ldc + j] : 0;
                            double mag = fabs(ref);
                            for (size_t k = 0; k < K; k++) {
                                const double t = (double)A[i * lda + k] *
                                                 (double)Bm[k * ldb + j];
                                ref += t;
                                mag += fabs(t);
                            }
                            /* the usual bound: (K + 1) u sum |a b| */
                            ck_assert_msg(fabs((double)got - ref) <=
                                              (double)(K + 1) * 6e-8 * mag +
                                                  1e-30,
                                          "M=%zu N=%zu K=%zu beta=%d: "
                                          "C[%zu][%zu] = %.9g, reference "
                                          "%.9g",
                                          M, N, K, beta, i, j, (double)got,
                                          ref);
                        }
                }
                /* with the kernel, one thread gives the same bits as two
                 * (cblas promises no such thing) */
                if (strcmp(bptt_cell_kernel(), "cblas") != 0) {
                    for (size_t k = 0; k < M * ldc; k++)
                        C[k] = C2[k] = 0;
                    bptt_cell_gemm(M, N, K, A, lda, Bm, ldb, C, ldc, 0);
#ifdef _OPENMP
                    omp_set_num_threads(1);
#endif
                    bptt_cell_gemm(M, N, K, A, lda, Bm, ldb, C2, ldc, 0);
#ifdef _OPENMP
                    omp_set_num_threads(THREADS);
#endif
                    ck_assert_msg(
                        memcmp(C, C2, M * ldc * sizeof(real)) == 0,
                        "M=%zu N=%zu K=%zu: 1 and 2 threads differ", M, N,
                        K);
                }
                free(A);
                free(Bm);
                free(C);
                free(C2);
            }
}
END_TEST

/* bptt_cell_weight_grads, dW (GH, XH) += dgates^T xh over rows rows, on
 * shapes around the kernel's tiles and its blocks of 256 k (the kernel
 * copies dgates^T's columns in blocks of k and goes on from the dW it
 * stored): against a double-precision reference; with the kernel, every
 * element bit for bit the one sum over k in order with a fused
 * multiply-add per term, on 1, 2 and 3 threads. */
START_TEST(test_kernel_wgrad)
{
    static const size_t GHs[] = {1, 7, 8, 9, 40, 64};
    static const size_t XHs[] = {1, 5, 33, 70};
    static const size_t rowss[] = {1, 3, 255, 256, 257, 600};
    const int kernel = strcmp(bptt_cell_kernel(), "cblas") != 0;
    for (size_t a = 0; a < sizeof GHs / sizeof GHs[0]; a++)
        for (size_t b = 0; b < sizeof XHs / sizeof XHs[0]; b++)
            for (size_t c = 0; c < sizeof rowss / sizeof rowss[0]; c++) {
                const size_t GH = GHs[a], XH = XHs[b], rows = rowss[c];
                real *dg = malloc(rows * GH * sizeof(real));
                real *xh = malloc(rows * XH * sizeof(real));
                real *dW = malloc(GH * XH * sizeof(real));
                real *dW0 = malloc(GH * XH * sizeof(real));
                ck_assert(dg && xh && dW && dW0);
                for (size_t k = 0; k < rows * GH; k++)
                    dg[k] = (real)((double)((k * 7919) % 199) / 99.0 - 1);
                for (size_t k = 0; k < rows * XH; k++)
                    xh[k] = (real)((double)((k * 104729) % 211) / 105.0 - 1);
                for (size_t k = 0; k < GH * XH; k++)
                    dW0[k] = (real)((double)(k % 13) - 6) / 8;
                for (int t = 1; t <= 3; t++) {
#ifdef _OPENMP
                    omp_set_num_threads(t);
#endif
                    memcpy(dW, dW0, GH * XH * sizeof(real));
                    bptt_cell_weight_grads(GH, XH, rows, dg, xh, dW);
                    for (size_t i = 0; i < GH; i++)
                        for (size_t j = 0; j < XH; j++) {
                            const real got = dW[i * XH + j];
                            double ref = (double)dW0[i * XH + j],
                                   mag = fabs(ref);
                            real inorder = dW0[i * XH + j];
                            for (size_t k = 0; k < rows; k++) {
                                const real u = dg[k * GH + i],
                                           v = xh[k * XH + j];
                                ref += (double)u * (double)v;
                                mag += fabs((double)u * (double)v);
#ifdef BPTT_DOUBLE
                                inorder = fma(u, v, inorder);
#else
                                inorder = fmaf(u, v, inorder);
#endif
                            }
                            ck_assert_msg(
                                fabs((double)got - ref) <=
                                    (double)(rows + 1) * 6e-8 * mag + 1e-30,
                                "GH=%zu XH=%zu rows=%zu: dW[%zu][%zu] = "
                                "%.9g, reference %.9g",
                                GH, XH, rows, i, j, (double)got, ref);
                            ck_assert_msg(
                                !kernel || memcmp(&got, &inorder,
                                                  sizeof got) == 0,
                                "GH=%zu XH=%zu rows=%zu, %d threads: "
                                "dW[%zu][%zu] = %.9g, the sum in order "
                                "%.9g",
                                GH, XH, rows, t, i, j, (double)got,
                                (double)inorder);
                        }
                }
#ifdef _OPENMP
                omp_set_num_threads(THREADS);
#endif
                free(dg), free(xh), free(dW), free(dW0);
            }
}
END_TEST

/* The forward op with the weights packed for the kernel equals the one
 * with cblas on W up to rounding (every cell, sizes off the tiles). */
START_TEST(test_kernel_forward)
{
    /* added to the suite only where the kernel runs */
    ck_assert_str_ne(bptt_cell_kernel(), "cblas");
    static const shape one[] = {{1, "copy", 4, 11, 4, 37, 41}};
    const config c = rig_config(one, _i);
    rig r, rc; /* the same model on the kernel and on cblas */
    rig_open(&r, &c);
    rig_open_on(&rc, &c, "cblas");
    bptt_model *m = r.model;
    ck_assert_ptr_nonnull(m->ws[0].wpack);
    ck_assert_ptr_null(rc.model->ws[0].wpack);
    real *state = calloc(m->hidden_len, sizeof(real));
    real *next = calloc(m->hidden_len, sizeof(real));
    real *next2 = calloc(m->hidden_len, sizeof(real));
    real *s = calloc(m->internal_len, sizeof(real));
    real *s2 = calloc(m->internal_len, sizeof(real));
    ck_assert(state && next && next2 && s && s2);
    for (size_t i = 0; i < c.T; i++) {
        const real *x = r.batch.x + i * c.B * c.X;
        bptt_model_forward_step(m, x, state, s, next);
        bptt_model_forward_step(rc.model, x, state, s2, next2);
        for (size_t k = 0; k < m->internal_len; k++)
            ck_assert_msg(fabs((double)s[k] - (double)s2[k]) <= 1e-5,
                          "%s step %zu: s[%zu] %.9g with the kernel, %.9g "
                          "with cblas",
                          c.cell, i + 1, k, (double)s[k], (double)s2[k]);
        memcpy(state, next, m->hidden_len * sizeof(real));
    }
    free(state);
    free(next);
    free(next2);
    free(s);
    free(s2);
    rig_close(&rc);
    rig_close(&r);
}
END_TEST

/* The two kernels give every element the same bits (gemm_kernel.h): one
 * model made on each, trained one iteration under full BPTT and under
 * MSM at a tight budget, has the same gradients and loss to the bit, on
 * every cell and one and two layers (shapes off both kernels' tiles).
 * Added to the suite only where the CPU has both. */
static const shape agree_shapes[] = {
    {1, "copy", 9, 13, 5, 37, 61},
    {2, "adding", 7, 6, 2, 20, 62},
};

START_TEST(test_kernels_agree)
{
    const config c = rig_config(agree_shapes, _i);
    rig a, b;
    rig_open_on(&a, &c, "avx512");
    rig_open_on(&b, &c, "avx2");
    double la, lb;
    real *ga = full_grads(&a, &la), *gb = full_grads(&b, &lb);
    const size_t n = a.model->n_params, k = first_diff(ga, gb, n);
    ck_assert_msg(k == n, "%s: avx512 and avx2 gradients differ at %zu: "
                  "%.9g and %.9g", a.name, k, (double)ga[k], (double)gb[k]);
    ck_assert_msg(memcmp(&la, &lb, sizeof la) == 0,
                  "%s: avx512 and avx2 losses %.17g and %.17g", a.name, la,
                  lb);
    free(ga);
    free(gb);
    /* and MSM at a fifth of full BPTT's peak recomputes on each alike */
    bptt_plan *pa = rig_plan(&a, "msm", a.full_peak / 5 + 1);
    bptt_plan *pb = rig_plan(&b, "msm", b.full_peak / 5 + 1);
    bptt_exec_stats ea, eb;
    run_ok(&a, pa, &ea, "msm", a.full_peak / 5 + 1);
    run_ok(&b, pb, &eb, "msm", b.full_peak / 5 + 1);
    ck_assert_msg(first_diff(a.model->grads, b.model->grads, n) == n,
                  "%s: avx512 and avx2 gradients under msm differ", a.name);
    bptt_plan_free(pa);
    bptt_plan_free(pb);
    rig_close(&b);
    rig_close(&a);
}
END_TEST

/* The model's workspaces are what model.h says, in working memory, and a
 * failed resize keeps the old ones. */
START_TEST(test_workspace_bytes)
{
    const config cc = rig_config(shapes, _i), *c = &cc;
    rig r;
    rig_open(&r, c);
    bptt_model *m = r.model;
    const size_t G = m->cell->gates, K = m->wgrad_steps;
    size_t want = 0;
    for (size_t l = 0; l < m->L; l++)
        want += K * m->B * (G * m->H + m->ws[l].X + m->H);
    want += K * m->B * m->V + m->B * m->H; /* the output layer's dlogits,
                                              and h at the highest step */
    ck_assert_uint_eq(m->wgrad_bytes, want * sizeof(real));
    size_t packed = 0;
    for (size_t l = 0; l < m->L; l++)
        packed += bptt_cell_packed_len_for(G, m->ws[l].X, m->H, l > 0);
    if (packed) /* the kernel's output layer reads Wo^T (H, V) */
        packed += m->H * m->V;
    ck_assert_uint_eq(m->wpack_bytes, packed * sizeof(real));
    const bptt_mem_stats *st = bptt_mem_stats_get(r.mem);
    ck_assert_uint_ge(st->current[BPTT_MEM_WORKING],
                      m->wgrad_bytes + m->wpack_bytes);
    const size_t working = st->current[BPTT_MEM_WORKING];
    /* at 2K every part but the highest step's h is twice as large */
    const size_t h_top = m->B * m->H * sizeof(real);
    const size_t more = m->wgrad_bytes - h_top;
    ck_assert_int_eq(bptt_model_set_wgrad_steps(m, 2 * K), BPTT_OK);
    ck_assert_uint_eq(m->wgrad_bytes, 2 * more + h_top);
    ck_assert_uint_eq(st->current[BPTT_MEM_WORKING], working + more);
    for (size_t f = 1; f <= 4; f++) { /* each of the four workspaces */
        bptt_mem_fail_at(r.mem, f);
        ck_assert_int_eq(bptt_model_set_wgrad_steps(m, 3), BPTT_ENOMEM);
        bptt_mem_fail_at(r.mem, 0);
        ck_assert_uint_eq(m->wgrad_steps, 2 * K);
        ck_assert_uint_eq(st->current[BPTT_MEM_WORKING], working + more);
    }
    ck_assert_int_eq(bptt_model_set_wgrad_steps(m, 0), BPTT_EINVAL);
    ck_assert_int_eq(bptt_model_set_wgrad_steps(m, K), BPTT_OK);
    ck_assert_uint_eq(st->current[BPTT_MEM_WORKING], working);
    rig_close(&r);
}
END_TEST

/* Every allocation of bptt_model_alloc, made to fail in turn, gives
 * BPTT_ENOMEM with every byte released; a whole one takes the working
 * memory bptt_model_working_bytes announces. */
START_TEST(test_model_enomem)
{
    const config cc = rig_config(shapes, _i), *c = &cc;
    bptt_mem *mem = bptt_mem_alloc();
    ck_assert_ptr_nonnull(mem);
    const bptt_cell_type *cell = bptt_cell_find(c->cell);
    bptt_model *m = NULL;
    size_t f = 1;
    for (;; f++) {
        bptt_mem_fail_at(mem, f);
        const int rc = bptt_model_alloc(&m, cell, c->L, c->B, c->X, c->H, 5,
                                        c->seed, mem);
        bptt_mem_fail_at(mem, 0);
        if (rc == BPTT_OK)
            break;
        ck_assert_int_eq(rc, BPTT_ENOMEM);
        ck_assert_ptr_null(m);
        ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    }
    ck_assert_uint_ge(f, 10); /* it did fail at each of its allocations */
    /* and the working memory it took is the one announced */
    const double want = bptt_model_working_bytes(cell, c->L, c->B, c->X,
                                                 c->H, 5);
    ck_assert_msg((double)bptt_mem_stats_get(mem)->current[BPTT_MEM_WORKING]
                      == want,
                  "working %zu bytes, announced %.0f",
                  bptt_mem_stats_get(mem)->current[BPTT_MEM_WORKING], want);
    bptt_model_free(m);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    bptt_mem_free(mem);
}
END_TEST

/* ---- cells that break the layout rules (cell.h) ------------------------ */

/* One way of breaking cell k's table (its copy *t), by number; 0 when
 * there is no such way n. */
static int break_cell(bptt_cell_type *t, int n)
{
    switch (n) {
    case 1: t->forward_rows = NULL; return 1;
    case 2: t->backward_rows = NULL; return 1;
    case 3: t->h_rows = NULL; return 1;
    case 4: t->name = NULL; return 1;
    case 5: t->gates = 0; return 1;
    case 6: t->gates = BPTT_CELL_MAX_GATES + 1; return 1;
    case 7: t->hidden_vecs = 0; return 1;
    case 8: t->internal_vecs = t->hidden_vecs - 1; return 1;
    case 9: t->internal_vecs = BPTT_CELL_MAX_VECS + 1; return 1;
    case 10: t->gates_at = 0; return 1; /* over h_prev */
    case 11: t->gates_at = t->internal_vecs - t->gates + 1; return 1;
    case 12: /* a second hidden block kept inside the gate block */
        t->hidden_vecs = 2;
        t->rest_at = t->gates_at;
        return 1;
    case 13: /* ... over h_prev */
        t->hidden_vecs = 2;
        t->rest_at = 0;
        return 1;
    case 14: /* ... past the end */
        t->hidden_vecs = 2;
        t->rest_at = t->internal_vecs;
        return 1;
    default: return 0;
    }
}

/* Every cell's table, copied, passes bptt_cell_check and makes a model
 * whose forward step equals the original's; each way of breaking it
 * (a part missing, blocks out of place) is refused by bptt_cell_check
 * and by bptt_model_alloc with BPTT_EINVAL, before anything is
 * allocated and with no part called (a missing part would crash). */
START_TEST(test_cell_refused)
{
    const bptt_cell_type *cell = bptt_cells[_i];
    bptt_mem *mem = bptt_mem_alloc();
    ck_assert_ptr_nonnull(mem);
    bptt_cell_type copy = *cell;
    ck_assert_int_eq(bptt_cell_check(&copy), BPTT_OK);
    bptt_model *m = NULL, *m0 = NULL;
    ck_assert_int_eq(bptt_model_alloc(&m, &copy, 2, 3, 4, 5, 6, 7, mem),
                     BPTT_OK);
    ck_assert_int_eq(bptt_model_alloc(&m0, cell, 2, 3, 4, 5, 6, 7, mem),
                     BPTT_OK);
    real *st = calloc(m->hidden_len, sizeof(real));
    real *s1 = calloc(m->internal_len, sizeof(real));
    real *s2 = calloc(m->internal_len, sizeof(real));
    real *o1 = calloc(m->hidden_len, sizeof(real));
    real *o2 = calloc(m->hidden_len, sizeof(real));
    real *x = calloc(3 * 4, sizeof(real));
    ck_assert(st && s1 && s2 && o1 && o2 && x);
    for (size_t k = 0; k < 12; k++)
        x[k] = (real)(0.1 * (double)k - 0.5);
    bptt_model_forward_step(m, x, st, s1, o1);
    bptt_model_forward_step(m0, x, st, s2, o2);
    ck_assert(memcmp(s1, s2, m->internal_len * sizeof(real)) == 0);
    ck_assert(memcmp(o1, o2, m->hidden_len * sizeof(real)) == 0);
    free(st), free(s1), free(s2), free(o1), free(o2), free(x);
    bptt_model_free(m);
    bptt_model_free(m0);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);

    int ways = 0;
    for (int n = 1;; n++) {
        copy = *cell;
        if (!break_cell(&copy, n))
            break;
        ways++;
        ck_assert_msg(bptt_cell_check(&copy) == BPTT_EINVAL,
                      "%s broken in way %d: bptt_cell_check accepts it",
                      cell->name, n);
        const size_t before = bptt_mem_stats_get(mem)->allocations;
        m = (bptt_model *)&copy; /* must come back NULL */
        const int rc = bptt_model_alloc(&m, &copy, 1, 2, 3, 4, 5, 1, mem);
        ck_assert_msg(rc == BPTT_EINVAL, "%s broken in way %d: %s",
                      cell->name, n, bptt_strerror(rc));
        ck_assert_ptr_null(m);
        ck_assert_uint_eq(bptt_mem_stats_get(mem)->allocations, before);
    }
    ck_assert_int_eq(ways, 14);
    ck_assert_int_eq(bptt_cell_check(NULL), BPTT_EINVAL);
    ck_assert_int_eq(bptt_model_alloc(&m, NULL, 1, 2, 3, 4, 5, 1, mem),
                     BPTT_EINVAL);
    bptt_mem_free(mem);
}
END_TEST

/* ---- the cells' exp, sigmoid and tanh ----------------------------------------
 * src/train/fastmath.h promises exp within a relative 1e-7 of the exact
 * value on [-87, 87], tanh within an absolute 2e-7 (1 - 2 / (e + 1), the
 * division's rounding doubled), sigmoid within a relative 2e-7 where its
 * value is a normal float; no subnormal out of any of them, whatever the
 * argument; NaN in, NaN out.  Checked every 1/1024 over [-100, 100] (the
 * steps exact in float), against double libm. */
START_TEST(test_fastmath)
{
    double worst_exp = 0, worst_tanh = 0, worst_sig = 0;
    for (int32_t i = -100 * 1024; i <= 100 * 1024; i++) {
        const float x = (float)i / 1024.0f;
        const float e = fm_exp(x), t = fm_tanh(x), g = fm_sigmoid(x);
        ck_assert_msg(fpclassify(e) == FP_NORMAL &&
                          fpclassify(g) == FP_NORMAL &&
                          (fpclassify(t) == FP_NORMAL || x == 0),
                      "x = %.9g: exp %.9g, tanh %.9g, sigmoid %.9g: not a "
                      "normal float", (double)x, (double)e, (double)t,
                      (double)g);
        if (x >= -87.0f && x <= 87.0f) {
            const double want = exp((double)x);
            const double rel = fabs((double)e - want) / want;
            worst_exp = rel > worst_exp ? rel : worst_exp;
        }
        const double at = fabs((double)t - tanh((double)x));
        worst_tanh = at > worst_tanh ? at : worst_tanh;
        if (x >= -87.0f) {
            const double want = 1 / (1 + exp(-(double)x));
            const double rel = fabs((double)g - want) / want;
            worst_sig = rel > worst_sig ? rel : worst_sig;
        }
    }
    ck_assert_msg(worst_exp <= 1e-7, "exp: relative error %.3g", worst_exp);
    ck_assert_msg(worst_tanh <= 2e-7, "tanh: absolute error %.3g",
                  worst_tanh);
    ck_assert_msg(worst_sig <= 2e-7, "sigmoid: relative error %.3g",
                  worst_sig);
    const float inf = (float)INFINITY, nan = (float)NAN;
    ck_assert(fm_exp(-inf) > 0 && fpclassify(fm_exp(-inf)) == FP_NORMAL);
    ck_assert(fm_tanh(inf) == 1.0f && fm_tanh(-inf) == -1.0f);
    ck_assert(fpclassify(fm_sigmoid(-inf)) == FP_NORMAL &&
              fm_sigmoid(inf) == 1.0f);
    ck_assert(isnan(fm_exp(nan)) && isnan(fm_tanh(nan)) &&
              isnan(fm_sigmoid(nan)));
}
END_TEST

/* ---- the suite ---------------------------------------------------------------- */

static Suite *train_suite(void)
{
    Suite *su = suite_create("train");
    TCase *tc;

    tc = tcase_create("counts");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_counts, 0, N_CONFIGS);
    suite_add_tcase(su, tc);

    tc = tcase_create("checkpoint_bytes");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_checkpoint_peak, 0, N_CONFIGS);
    suite_add_tcase(su, tc);

    tc = tcase_create("recorded");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_recorded, 0, N_CONFIGS);
    suite_add_tcase(su, tc);

    tc = tcase_create("gradients");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_gradients_identical, 0, N_CONFIGS);
    tcase_add_test(tc, test_team);
    tcase_add_test(tc, test_team_one_thread);
    tcase_add_loop_test(tc, test_threads_identical, 0,
                        RIG_CASES(thread_shapes));
    tcase_add_loop_test(tc, test_open_block_bias, 0,
                        RIG_CASES(thread_shapes));
    suite_add_tcase(su, tc);

    tc = tcase_create("training");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_train_sgd, 0, N_CONFIGS);
    tcase_add_loop_test(tc, test_train_adam, 0, N_CONFIGS);
    suite_add_tcase(su, tc);

    tc = tcase_create("rejected_plans");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_wrong_length, 0, N_CONFIGS);
    tcase_add_loop_test(tc, test_wrong_units, 0, N_CONFIGS);
    tcase_add_loop_test(tc, test_broken_plans, 0, N_CONFIGS);
    suite_add_tcase(su, tc);

    tc = tcase_create("allocation_failure");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_enomem, 0, N_CONFIGS);
    suite_add_tcase(su, tc);

    tc = tcase_create("kernel");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_kernel_gemm);
    tcase_add_test(tc, test_kernel_wgrad);
    /* a path this CPU cannot run is said by name, not counted as passed
     * (main says which kernels the whole suite runs on) */
    if (strcmp(bptt_cell_kernel(), "cblas") != 0)
        tcase_add_loop_test(tc, test_kernel_forward, 0, rig_n_cells());
    if (strcmp(bptt_cell_kernel(), "avx512") == 0 &&
        bptt_cell_kernel_has("avx2"))
        tcase_add_loop_test(tc, test_kernels_agree, 0,
                            RIG_CASES(agree_shapes));
    suite_add_tcase(su, tc);

    tc = tcase_create("workspace");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_workspace_bytes, 0, N_CONFIGS);
    tcase_add_loop_test(tc, test_model_enomem, 0, N_CONFIGS);
    tcase_add_loop_test(tc, test_cell_refused, 0, rig_n_cells());
    tcase_add_test(tc, test_fastmath);
    suite_add_tcase(su, tc);

    tc = tcase_create("restore");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_state_from_internal, 0, 2 * rig_n_cells());
    suite_add_tcase(su, tc);

    return su;
}

/* The whole suite once on each of our kernels the CPU has, widest first
 * (so every kernel test, and every gradient and memory test besides,
 * runs on each), or, where it has none or BPTT_GEMM_KERNEL names one, on
 * that path alone.  A kernel not run is said by name. */
int main(void)
{
    static const char *const ours[] = {"avx512", "avx2"};
    const char *forced = getenv("BPTT_GEMM_KERNEL");
    const int one = forced && bptt_cell_kernel_has(forced);
    int failed = 0, runs = 0;
    /* the two kernels against each other: in the AVX-512 run, where the
     * CPU has both */
    if (!bptt_cell_kernel_has("avx512") || !bptt_cell_kernel_has("avx2"))
        printf("SKIP: test_kernels_agree: this CPU has no %s, as cpuid "
               "reports it\n",
               bptt_cell_kernel_has("avx512") ? "AVX2 and FMA" : "AVX-512");
    else if (one && strcmp(forced, "avx512") != 0)
        printf("SKIP: test_kernels_agree: BPTT_GEMM_KERNEL=%s is set\n",
               forced);
    for (size_t k = 0; k < sizeof ours / sizeof ours[0]; k++) {
        if (one && strcmp(forced, ours[k]) != 0) {
            printf("SKIP: test_train on the %s kernel: BPTT_GEMM_KERNEL=%s "
                   "is set\n", ours[k], forced);
            continue;
        }
        if (!bptt_cell_kernel_has(ours[k])) {
            printf("SKIP: test_train on the %s kernel: this CPU has no %s, "
                   "as cpuid reports it\n", ours[k],
                   k == 0 ? "AVX-512" : "AVX2 and FMA");
            continue;
        }
        if (bptt_cell_kernel_use(ours[k]) != 0) {
            printf("test_train: the %s kernel cannot be chosen\n", ours[k]);
            return EXIT_FAILURE;
        }
        printf("# test_train on the %s kernel\n", ours[k]);
        fflush(stdout);
        SRunner *sr = srunner_create(train_suite());
        srunner_run_all(sr, CK_ENV);
        failed += srunner_ntests_failed(sr);
        srunner_free(sr);
        runs++;
    }
    if (runs == 0) { /* cblas: the kernels' comparisons cannot run */
        if (bptt_cell_kernel_use("cblas") != 0) {
            printf("test_train: cblas cannot be chosen\n");
            return EXIT_FAILURE;
        }
        printf("SKIP: test_kernel_forward: no kernel of ours runs here "
               "(%s)\n",
               forced && strcmp(forced, "cblas") == 0
                   ? "BPTT_GEMM_KERNEL=cblas is set"
                   : "this CPU has neither AVX-512 nor AVX2 and FMA");
        printf("# test_train on cblas\n");
        fflush(stdout);
        SRunner *sr = srunner_create(train_suite());
        srunner_run_all(sr, CK_ENV);
        failed += srunner_ntests_failed(sr);
        srunner_free(sr);
    }
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
