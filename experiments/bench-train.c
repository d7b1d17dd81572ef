/* bench-train.c: training-speed benchmark (not a test).
 *
 * For an LSTM at T = 1000, B = 32, X = 64 and H in {256, 512} (or the sizes
 * given), in one run:
 *   - one full-BPTT iteration: seconds, GEMM GFLOP/s;
 *   - OpenBLAS's SGEMM rate on exactly the GEMM shapes of that iteration
 *     (the same calls, with no elementwise work between them);
 *   - the time of MSM at 5% and 10% of full BPTT's checkpoint bytes and of
 *     Chen's sqrt(t), relative to full BPTT.
 * Strategies are timed in rounds (full, msm 5%, msm 10%, chen, full, ...),
 * so drift on a noisy machine hits all of them alike; each figure is the
 * median over the rounds.
 *
 * usage: bench-train [ROUNDS [H ...]]   (default 3 rounds, H = 256 512)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "expt.h"
#include "data.h"
#include "exec.h"
#include "model.h"

/* The GEMMs of one iteration of a one-layer LSTM, alone: fwd forward ops,
 * T backward ops and T output-layer passes, on buffers of the same shapes. */
static double gemm_only_seconds(size_t T, size_t B, size_t X, size_t H,
                                size_t V, int64_t fwd)
{
    const size_t G = 4, XH = X + H, GH = G * H;
    float *W = calloc(GH * XH, sizeof(float)), *dW = calloc(GH * XH, 4);
    float *xh = calloc(B * XH, 4), *gates = calloc(B * GH, 4);
    float *dh = calloc(B * H, 4), *Wo = calloc(V * H, 4);
    float *dWo = calloc(V * H, 4), *logits = calloc(B * V, 4);
    for (size_t k = 0; k < GH * XH; k++)
        W[k] = 0.01f * (float)(k % 7);
    const double t0 = expt_now();
    for (int64_t i = 0; i < fwd; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)GH,
                    (int)XH, 1, xh, (int)XH, W, (int)XH, 1, gates, (int)GH);
    for (size_t i = 0; i < T; i++) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)V,
                    (int)H, 1, xh, (int)H, Wo, (int)H, 1, logits, (int)V);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)V, (int)H,
                    (int)B, 1, logits, (int)V, xh, (int)H, 1, dWo, (int)H);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)H,
                    (int)V, 1, logits, (int)V, Wo, (int)H, 1, dh, (int)H);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)GH,
                    (int)XH, (int)B, 1, gates, (int)GH, xh, (int)XH, 1, dW,
                    (int)XH);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)H,
                    (int)GH, 1, gates, (int)GH, W + X, (int)XH, 0, dh,
                    (int)H);
    }
    const double s = expt_now() - t0;
    free(W); free(dW); free(xh); free(gates); free(dh); free(Wo); free(dWo);
    free(logits);
    return s;
}

typedef struct {
    const char *label;
    const char *strategy;
    int percent;
    bptt_plan *plan;
    bptt_plan_stats st;
    double sec[32];
} arm;

static int make_plan(arm *a, size_t T, const bptt_model *m)
{
    bptt_units u;
    bptt_units_from_bytes(&u, (int64_t)bptt_model_hidden_bytes(m),
                          (int64_t)bptt_model_internal_bytes(m));
    const int64_t full = bptt_full_peak(T, u.hidden_units, u.internal_units);
    const int64_t budget = full * a->percent / 100;
    bptt_table *tb;
    int rc = bptt_table_alloc(&tb, bptt_strategy_find(a->strategy), T,
                              u.hidden_units, u.internal_units, budget, NULL);
    if (rc != BPTT_OK)
        return rc;
    int64_t minf;
    rc = bptt_table_plan(tb, budget, &a->plan, &minf);
    bptt_table_free(tb);
    if (rc == BPTT_OK)
        rc = bptt_plan_validate(a->plan, &a->st);
    return rc;
}

static int bench_size(size_t H, int rounds)
{
    const size_t T = 1000, B = 32, X = 64;
    bptt_mem *mem = bptt_mem_alloc();
    bptt_task *task;
    bptt_model *model;
    if (bptt_task_alloc(&task, "copy", T, B, X, 1, mem) != BPTT_TASK_OK)
        return 1;
    const size_t V = bptt_task_classes(task);
    if (bptt_model_alloc(&model, &bptt_cell_lstm, 1, B, X, H, V, 1, mem) !=
        BPTT_OK)
        return 1;
    bptt_batch batch;
    bptt_task_batch(task, 0, &batch);
    arm arms[] = {{"full", "full", 100, NULL, {0}, {0}},
                  {"msm 5%", "msm", 5, NULL, {0}, {0}},
                  {"msm 10%", "msm", 10, NULL, {0}, {0}},
                  {"chen", "chen", 100, NULL, {0}, {0}}};
    const int n_arms = (int)(sizeof arms / sizeof arms[0]);
    for (int k = 0; k < n_arms; k++)
        if (make_plan(&arms[k], T, model) != BPTT_OK)
            return 1;
    if (rounds > 32)
        rounds = 32;

    bptt_exec_stats es;
    bptt_exec_run(arms[0].plan, model, &batch, mem, &es); /* warm-up */
    double gemm[32];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < n_arms; k++) {
            const double t0 = expt_now();
            bptt_exec_run(arms[k].plan, model, &batch, mem, &es);
            arms[k].sec[r] = expt_now() - t0;
        }
        gemm[r] = gemm_only_seconds(T, B, X, H, V, (int64_t)T);
    }
    bptt_flops f;
    bptt_model_flops(model, &f);
    const double flops_full =
        (double)T * (f.cell_forward + f.cell_backward + f.output);
    const double t_full = expt_median(arms[0].sec, rounds);
    const double t_gemm = expt_median(gemm, rounds);
    printf("LSTM T=%zu B=%zu X=%zu H=%zu V=%zu: full BPTT %.3f s/iter, "
           "%.1f GFLOP/s; SGEMM on the same shapes %.3f s, %.1f GFLOP/s; "
           "ratio %.2f\n",
           T, B, X, H, V, t_full, flops_full / t_full / 1e9, t_gemm,
           flops_full / t_gemm / 1e9, t_gemm / t_full);
    printf("  %-8s %11s %10s %12s %14s\n", "strategy", "fwd/step",
           "s/iter", "vs full", "ckpt memory");
    for (int k = 0; k < n_arms; k++) {
        const double t = expt_median(arms[k].sec, rounds);
        printf("  %-8s %11.3f %10.3f %11.3fx %13.2f%%\n", arms[k].label,
               (double)arms[k].st.forward_ops / (double)T, t, t / t_full,
               100.0 * (double)arms[k].st.peak_units /
                   (double)arms[0].st.peak_units);
        bptt_plan_free(arms[k].plan);
    }
    fflush(stdout);
    bptt_model_free(model);
    bptt_task_free(task);
    bptt_mem_free(mem);
    return 0;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (rounds < 1)
        rounds = 1;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    printf("# bench-train: %d rounds, %d threads, median per figure\n", rounds,
           threads);
    int rc = 0;
    if (argc > 2)
        for (int i = 2; i < argc; i++)
            rc |= bench_size((size_t)atoi(argv[i]), rounds);
    else
        rc = bench_size(256, rounds) | bench_size(512, rounds);
    return rc;
}
