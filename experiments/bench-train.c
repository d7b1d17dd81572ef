/* bench-train.c: training-speed benchmark (not a test).
 *
 * Two tables, for LSTM and RNN at T = 1000, B = 32, X = 64 (or what -T,
 * -B, -X say), H in {128, 256, 512} and 1 and all threads (or what the
 * options say):
 *
 * Strategies (-m strategies), in one run:
 *   - one full-BPTT iteration: seconds, GEMM GFLOP/s;
 *   - OpenBLAS's SGEMM rate on exactly the GEMM shapes of that iteration
 *     (the same calls, all to OpenBLAS even where the cells use their own
 *     kernel, with no elementwise work between them: `sgemm`,
 *     the weight gradient in blocks of K steps as the model adds it), and
 *     on the calls of an iteration that adds the weight gradient every
 *     step (`sgemm1`, K = 1: a weight-gradient GEMM of B rows per step);
 *   - the time of MSM at 5% and 10% of full BPTT's checkpoint bytes and of
 *     Chen's sqrt(t), relative to full BPTT.
 * Strategies are timed in rounds (full, msm 5%, msm 10%, chen, full, ...),
 * so drift on a noisy machine hits all of them alike; each figure is the
 * median over the rounds.
 *
 * Against oneDNN (-m onednn; bench-onednn.h): full BPTT and oneDNN's RNN
 * primitives (forward_training + backward with weight gradients, the same
 * weights, batch, output layer and loss), N iterations each, interleaved
 * (ours, oneDNN, ours, ...): median, min and max per column, the median of
 * the side-by-side ratios, each column's recurrent-layer GEMM rate against
 * the machine's peak (the larger of OpenBLAS SGEMM on 2048^3 and the CPU's
 * FMA throughput on registers, at the same thread count, in the same run;
 * bench-roof.h), the trend of each column through the run (last
 * quarter's median over the first quarter's), our checkpoint bytes against
 * oneDNN's workspace, and how far oneDNN's hidden states and gradients lie
 * from ours.  Without libdnnl-dev the oneDNN columns say n/a and ours are
 * still measured.
 *
 * The paths of the per-step GEMMs (-m kernels; bench-kernels.h): full
 * BPTT on cblas and on each of our kernels this CPU has, one model each,
 * interleaved in one process: seconds, the ratio to cblas's iteration of
 * the same round, rate and share of the roof of each path's vectors.
 *
 * usage: bench-train [-m strategies|onednn|both|kernels]
 *                    [-g cblas|avx2|avx512] [-r ROUNDS] [-n ITERS]
 *                    [-v] [-c CELL,...] [-H H,...] [-j THREADS,...]
 *                    [-k STEPS,...] [-L LAYERS] [-T T] [-B B] [-X X]
 *   -L: layers, for -m kernels (the other tables are of one layer);
 *   -g: the path of our side's per-step GEMMs in the strategies and
 *   oneDNN tables (default: the widest kernel the CPU has; avx2 also
 *   takes the FMA roof on AVX2's vectors); with -m kernels, the one kernel
 *   set beside cblas (default: every path; no AVX-512 code then runs in
 *   the process with -g avx2, as on a CPU without it);
 *   defaults: both tables, 3 rounds, 12 iterations against oneDNN and
 *   between the paths,
 *   lstm,rnn, 128,256,512, 1 and omp_get_max_threads(), K = the model's
 *   BPTT_WGRAD_STEPS (-k: steps per weight-gradient block), T = 1000,
 *   B = 32, X = 64; -v: every iteration's times against oneDNN too, as
 *   comment lines after the row
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench-kernels.h"
#include "bench-onednn.h"
#include "real_impl.h"
#include "bench-roof.h"
#include "blascore.h"
#include "bptt.h"
#include "budget.h"
#include "expt.h"
#include "data.h"
#include "exec.h"
#include "meta.h"
#include "mem.h"
#include "model.h"
#include "session.h"

void openblas_set_num_threads(int);

/* The GEMMs of one iteration of a one-layer cell with G gates, alone: fwd
 * forward ops, T backward ops and T output-layer passes, on buffers of the
 * same shapes.  The weight gradients, dW and dWo, are added K steps at a
 * time (blocks [1, K], [K+1, 2K], ..., as the model does; K = 1: every
 * step). */
static double gemm_only_seconds(size_t G, size_t T, size_t B, size_t X,
                                size_t H, size_t V, int64_t fwd, size_t K)
{
    const size_t XH = X + H, GH = G * H;
    float *W = calloc(GH * XH, sizeof(float)), *dW = calloc(GH * XH, 4);
    float *xh = calloc(K * B * XH, 4), *gates = calloc(K * B * GH, 4);
    float *dh = calloc(B * H, 4), *Wo = calloc(V * H, 4);
    float *dWo = calloc(V * H, 4), *logits = calloc(K * B * V, 4);
    for (size_t k = 0; k < GH * XH; k++)
        W[k] = 0.01f * (float)(k % 7);
    const double t0 = expt_now();
    for (int64_t i = 0; i < fwd; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)GH,
                    (int)XH, 1, xh, (int)XH, W, (int)XH, 1, gates, (int)GH);
    for (size_t i = 0; i < T; i++) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)V,
                    (int)H, 1, xh, (int)H, Wo, (int)H, 1, logits, (int)V);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)H,
                    (int)V, 1, logits, (int)V, Wo, (int)H, 1, dh, (int)H);
        const size_t j = T - i; /* the step */
        if ((j - 1) % K == 0) { /* the lowest of block [j, j+K-1] */
            const size_t steps = T - j + 1 < K ? T - j + 1 : K;
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)GH,
                        (int)XH, (int)(steps * B), 1, gates, (int)GH, xh,
                        (int)XH, 1, dW, (int)XH);
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)V,
                        (int)H, (int)(steps * B), 1, logits, (int)V, xh,
                        (int)H, 1, dWo, (int)H);
        }
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

/* The arm's plan, by bptt_plan_make, at its share of full BPTT's peak
 * (rounded down in planner units). */
static int make_plan(arm *a, size_t T, const bptt_model *m)
{
    const int64_t hb = (int64_t)bptt_model_hidden_bytes(m);
    const int64_t sb = (int64_t)bptt_model_internal_bytes(m);
    bptt_units u;
    bptt_units_from_bytes(&u, hb, sb);
    const int64_t full = bptt_full_peak(T, u.hidden_units, u.internal_units);
    const int64_t budget = full * a->percent / 100 * u.quantum;
    return bptt_plan_make(a->strategy, T, hb, sb, budget, NULL, &a->plan,
                          &a->st, NULL);
}

/* The FMA roof's vectors: those of our kernel where it is the AVX2 one
 * (-g avx2: the roof of the vectors it runs on), else the widest. */
static int roof_lanes(void)
{
    return strcmp(bptt_cell_kernel(), "avx2") == 0 ? 8 : 0;
}
static const char *roof_name(void)
{
    return roof_lanes() == 8 ? "AVX2" : bench_fma_name();
}

/* OpenMP's threads (ours, and oneDNN's) and OpenBLAS's, the same count. */
static void set_threads(int threads)
{
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    openblas_set_num_threads(threads);
}

/* The sizes other than H (-T, -B, -X). */
static struct {
    size_t T, B, X;
} dims = {1000, 32, 64};

static int bench_size(const bptt_cell_type *cell, size_t H, int threads,
                      int rounds, size_t K)
{
    const size_t T = dims.T, B = dims.B, X = dims.X;
    set_threads(threads);
    bptt_mem *mem = bptt_mem_alloc();
    const bptt_session_spec sp = {.cell = cell, .layers = 1, .hidden = H,
                                  .batch = B, .length = T, .input = X,
                                  .task = "copy", .seed = 1};
    bptt_session *session;
    if (!mem || bptt_session_open(&session, &sp, mem, NULL, 0) != BPTT_OK)
        return 1;
    bptt_model *model = bptt_session_model(session);
    const size_t V = bptt_session_classes(session);
    if (K == 0)
        K = model->wgrad_steps;
    if (bptt_model_set_wgrad_steps(model, K) != BPTT_OK)
        return 1;
    if (bptt_session_fetch(session, 0) != BPTT_OK)
        return 1;
    const bptt_batch batch = *bptt_session_batch(session);
    arm arms[] = {{"full", "full", 100, NULL, {0}, {0}},
                  {"msm 5%", "msm", 5, NULL, {0}, {0}},
                  {"msm 10%", "msm", 10, NULL, {0}, {0}},
                  {"chen", "chen", 100, NULL, {0}, {0}}};
    const int n_arms = (int)(sizeof arms / sizeof arms[0]);
    for (int k = 0; k < n_arms; k++)
        if (make_plan(&arms[k], T, model) != BPTT_OK) {
            fprintf(stderr, "bench-train: no %s plan at T=%zu H=%zu\n",
                    arms[k].label, T, H);
            return 1;
        }
    if (rounds > 32)
        rounds = 32;

    bench_square sq;
    if (bench_square_open(&sq) != 0)
        return 1;
    bptt_exec_stats es;
    bptt_exec_run(arms[0].plan, model, &batch, mem, &es); /* warm-up */
    double gemm[32], gemm1[32], square[32];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < n_arms; k++) {
            const double t0 = expt_now();
            bptt_exec_run(arms[k].plan, model, &batch, mem, &es);
            arms[k].sec[r] = expt_now() - t0;
        }
        gemm[r] = gemm_only_seconds(cell->gates, T, B, X, H, V, (int64_t)T,
                                    K);
        gemm1[r] = gemm_only_seconds(cell->gates, T, B, X, H, V, (int64_t)T,
                                     1);
        square[r] = bench_square_seconds(&sq);
    }
    bench_square_close(&sq);
    bptt_flops f;
    bptt_model_flops(model, &f);
    const double flops_full =
        (double)T * (f.cell_forward + f.cell_backward + f.output);
    const double t_full = expt_median(arms[0].sec, rounds);
    const double t_gemm = expt_median(gemm, rounds);
    const double t_gemm1 = expt_median(gemm1, rounds);
    const double sgemm = bench_square_gflops(expt_median(square, rounds));
    const double fma = bench_fma_peak_lanes(threads, roof_lanes());
    const double roof = fma > sgemm ? fma : sgemm;
    printf("%-5s %4zu %4d %3zu %8.3f %8.1f %8.1f %6.0f%% %8.1f %6.0f%% %7.1f "
           "%5.0f%%",
           cell->name, H, threads, K, t_full, flops_full / t_full / 1e9,
           flops_full / t_gemm / 1e9, 100.0 * t_gemm / t_full,
           flops_full / t_gemm1 / 1e9, 100.0 * t_gemm1 / t_full, roof,
           100.0 * flops_full / t_full / 1e9 / roof);
    for (int k = 1; k < n_arms; k++)
        printf(" %7.3fx", expt_median(arms[k].sec, rounds) / t_full);
    printf("\n");
    for (int k = 0; k < n_arms; k++)
        bptt_plan_free(arms[k].plan);
    fflush(stdout);
    bptt_session_close(session);
    bptt_mem_free(mem);
    return 0;
}

/* ---- against oneDNN ------------------------------------------------ */

/* median, min and max of v[0..n) (v is left as it was) */
typedef struct {
    double med, min, max;
} spread;
static spread spread_of(const double *v, int n)
{
    double tmp[4096];
    spread s = {NAN, NAN, NAN};
    if (n <= 0 || n > 4096)
        return s;
    memcpy(tmp, v, (size_t)n * sizeof *v);
    s.med = expt_median(tmp, n);
    s.min = tmp[0];
    s.max = tmp[n - 1];
    return s;
}

/* The trend of v[0..n) through the run: the last quarter's median over the
 * first quarter's (NAN below 4 values), and the noise it must rise above
 * to count: the first quarter's own spread (max / min), at least 1.10. */
static double trend_of(const double *v, int n, double *noise)
{
    *noise = NAN;
    const int q = n / 4;
    if (q < 1)
        return NAN;
    const spread first = spread_of(v, q), last = spread_of(v + n - q, q);
    *noise = first.max / first.min > 1.10 ? first.max / first.min : 1.10;
    return last.med / first.med;
}

/* 2-norm of a - b over the 2-norm of a (0 when both are 0) */
static double rel_diff(const float *a, const float *b, size_t n)
{
    double d = 0.0, r = 0.0;
    for (size_t k = 0; k < n; k++) {
        d += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
        r += (double)a[k] * a[k];
    }
    return r > 0.0 ? sqrt(d / r) : sqrt(d);
}

/* The largest |h - h_dnnl| over all steps, batch rows and units, over the
 * largest |h|: our forward run step by step against oneDNN's dst_layer. */
static double hidden_diff(bptt_model *m, const bptt_batch *batch,
                          const float *hd)
{
    const size_t Bn = m->B, Hn = m->H, Xn = m->X;
    real *in = calloc(m->hidden_len, sizeof(real));
    real *out = calloc(m->hidden_len, sizeof(real));
    real *sv = calloc(m->internal_len, sizeof(real));
    double worst = NAN;
    if (in && out && sv) {
        double d = 0.0, top = 0.0;
        for (size_t t = 0; t < batch->T; t++) {
            bptt_model_forward_step(m, batch->x + t * Bn * Xn, in, sv, out);
            const float *ht = hd + t * Bn * Hn; /* h is first in the state */
            for (size_t k = 0; k < Bn * Hn; k++) {
                const double e = fabs((double)out[k] - ht[k]);
                d = e > d ? e : d;
                top = fabs(ht[k]) > top ? fabs(ht[k]) : top;
            }
            real *swap = in;
            in = out;
            out = swap;
        }
        worst = top > 0.0 ? d / top : d;
    }
    free(in);
    free(out);
    free(sv);
    return worst;
}

/* The largest rel_diff over the model's tensors (W, b, Wo, bo) between our
 * gradients and oneDNN's. */
static double grad_diff(const bptt_model *m, const bench_onednn *o)
{
    float *g = malloc(m->n_params * sizeof(float));
    if (!g)
        return NAN;
    const bptt_tensor *t = m->tensor;
    bench_onednn_grads(o, g + t[0].offset, g + t[1].offset, g + t[2].offset,
                       g + t[3].offset);
    double worst = 0.0;
    for (size_t k = 0; k < 4; k++) {
        const double d = rel_diff(m->grads + t[k].offset, g + t[k].offset,
                                  t[k].rows * t[k].cols);
        worst = d > worst ? d : worst;
    }
    free(g);
    return worst;
}

#define MAX_ITERS 4096

/* One row of the table against oneDNN: cell at H, threads, iters
 * iterations of each side.  0, or 1 after a line on stderr. */
static int bench_vs_onednn(const bptt_cell_type *cell, size_t H, int threads,
                           int iters, int verbose)
{
    const size_t T = dims.T, B = dims.B, X = dims.X;
    set_threads(threads);
    int rc = 1;
    bptt_mem *mem = bptt_mem_alloc();
    bptt_session *session = NULL;
    bench_onednn *dn = NULL;
    arm full = {"full", "full", 100, NULL, {0}, {0}};
    double *ours = calloc((size_t)iters, sizeof(double));
    double *theirs = calloc((size_t)iters, sizeof(double));
    double *ratio = calloc((size_t)iters, sizeof(double));
    bench_square sq = {0};
    const bptt_session_spec sp = {.cell = cell, .layers = 1, .hidden = H,
                                  .batch = B, .length = T, .input = X,
                                  .task = "copy", .seed = 1};
    if (!mem || !ours || !theirs || !ratio || bench_square_open(&sq) != 0) {
        fprintf(stderr, "bench-train: out of memory\n");
        goto done;
    }
    if (bptt_session_open(&session, &sp, mem, NULL, 0) != BPTT_OK ||
        bptt_session_fetch(session, 0) != BPTT_OK) {
        fprintf(stderr, "bench-train: cannot open a %s model at T=%zu B=%zu "
                        "X=%zu H=%zu\n", cell->name, T, B, X, H);
        goto done;
    }
    bptt_model *model = bptt_session_model(session);
    const bptt_batch batch = *bptt_session_batch(session);
    if (make_plan(&full, T, model) != BPTT_OK) {
        fprintf(stderr, "bench-train: no full-BPTT plan at T=%zu\n", T);
        goto done;
    }

    /* ours, once: the reference gradients and the checkpoint peak */
    bptt_exec_stats es;
    bptt_mem_reset_peaks(mem);
    if (bptt_exec_run(full.plan, model, &batch, mem, &es) != BPTT_OK) {
        fprintf(stderr, "bench-train: full BPTT failed\n");
        goto done;
    }
    const double ckpt = (double)bptt_mem_stats_get(mem)->peak[
        BPTT_MEM_CHECKPOINT];

    /* oneDNN, once, on the same weights and batch: checked against ours */
    const int has_dnnl = bench_onednn_available() &&
        (strcmp(cell->name, "lstm") == 0 || strcmp(cell->name, "rnn") == 0);
    double hdiff = NAN, gdiff = NAN, ldiff = NAN, ws = NAN;
    int finite = 1;
    char why[256];
    if (has_dnnl) {
        const bptt_tensor *t = model->tensor;
        const bench_onednn_spec ds = {
            .cell = cell->name, .T = T, .B = B, .X = X, .H = H,
            .V = model->V, .W = model->params + t[0].offset,
            .b = model->params + t[1].offset,
            .Wo = model->params + t[2].offset,
            .bo = model->params + t[3].offset, .x = batch.x, .y = batch.y};
        if (bench_onednn_open(&dn, &ds, why, sizeof why) != 0 ||
            bench_onednn_iteration(dn, why, sizeof why) != 0) {
            fprintf(stderr, "bench-train: %s H=%zu: %s\n", cell->name, H,
                    why);
            goto done;
        }
        finite = bench_onednn_finite(dn);
        static const bptt_cell_type *told;
        if (told != cell) { /* once per cell: what oneDNN runs */
            char impl[256];
            bench_onednn_impl(dn, impl, sizeof impl);
            printf("# oneDNN %s: %s\n", cell->name, impl);
            told = cell;
        }
        hdiff = hidden_diff(model, &batch, bench_onednn_hidden(dn));
        gdiff = grad_diff(model, dn);
        ldiff = fabs(bench_onednn_loss(dn) - es.loss) / fabs(es.loss);
        ws = (double)bench_onednn_workspace_bytes(dn);
    }

    /* the peak, three times through the run; interleaved iterations */
    double peak_s[3];
    int n_peak = 0;
    peak_s[n_peak++] = bench_square_seconds(&sq);
    for (int i = 0; i < iters; i++) {
        double t0 = expt_now();
        if (bptt_exec_run(full.plan, model, &batch, mem, &es) != BPTT_OK) {
            fprintf(stderr, "bench-train: full BPTT failed\n");
            goto done;
        }
        ours[i] = expt_now() - t0;
        if (dn) {
            t0 = expt_now();
            if (bench_onednn_iteration(dn, why, sizeof why) != 0) {
                fprintf(stderr, "bench-train: %s H=%zu: %s\n", cell->name, H,
                        why);
                goto done;
            }
            theirs[i] = expt_now() - t0;
            ratio[i] = ours[i] / theirs[i];
        }
        if (i == iters / 2)
            peak_s[n_peak++] = bench_square_seconds(&sq);
    }
    peak_s[n_peak++] = bench_square_seconds(&sq);
    double best = peak_s[0];
    for (int k = 1; k < n_peak; k++)
        best = peak_s[k] < best ? peak_s[k] : best;
    const double sgemm = bench_square_gflops(best);
    const double fma = /* after the run */
        bench_fma_peak_lanes(threads, roof_lanes());
    const double peak = fma > sgemm ? fma : sgemm;
    if (dn)
        finite = finite && bench_onednn_finite(dn);

    bptt_flops f;
    bptt_model_flops(model, &f);
    const double rec = (double)T * (f.cell_forward + f.cell_backward) / 1e9;
    const spread so = spread_of(ours, iters);
    double noise_o, noise_d = NAN;
    const double tr_o = trend_of(ours, iters, &noise_o);
    printf("%-5s %4zu %3d %5zu %3zu %4zu %4d %8.3g %8.3g %8.3g", cell->name,
           H, threads, T, B, X, iters, so.med, so.min, so.max);
    double tr_d = NAN;
    if (dn) {
        const spread sd = spread_of(theirs, iters);
        const spread sr = spread_of(ratio, iters);
        tr_d = trend_of(theirs, iters, &noise_d);
        printf(" %8.3g %8.3g %8.3g %6.3f %7.1f %7.1f %7.3g %5.0f%% %7.3g "
               "%5.0f%%",
               sd.med, sd.min, sd.max, sr.med, sgemm, peak, rec / so.med,
               100.0 * rec / so.med / peak, rec / sd.med,
               100.0 * rec / sd.med / peak);
    } else {
        printf(" %8s %8s %8s %6s %7.1f %7.1f %7.3g %5.0f%% %7s %6s", "n/a",
               "n/a", "n/a", "n/a", sgemm, peak, rec / so.med,
               100.0 * rec / so.med / peak,
               "n/a", "n/a");
    }
    printf(" %7.3f", tr_o);
    if (dn)
        printf(" %7.3f %8.2f %8.2f %8.1e %8.1e %8.1e", tr_d,
               ckpt / 1048576.0, ws / 1048576.0, hdiff, gdiff, ldiff);
    else
        printf(" %7s %8.2f %8s %8s %8s %8s", "n/a", ckpt / 1048576.0, "n/a",
               "n/a", "n/a", "n/a");
    /* flags: a trend above the noise, oneDNN's outputs not finite */
    int flagged = 0;
    if (tr_o > noise_o) {
        printf(" TREND:bptt(>%.2f)", noise_o);
        flagged = 1;
    }
    if (dn && tr_d > noise_d) {
        printf(" TREND:onednn(>%.2f)", noise_d);
        flagged = 1;
    }
    if (dn && !finite) {
        printf(" NONFINITE:onednn");
        flagged = 1;
    }
    printf("%s\n", flagged ? "" : " -");
    for (int i = 0; verbose && i < iters; i++) /* -v: every iteration */
        if (dn)
            printf("# iteration %d: bptt %.6f s, oneDNN %.6f s\n", i + 1,
                   ours[i], theirs[i]);
        else
            printf("# iteration %d: bptt %.6f s\n", i + 1, ours[i]);
    fflush(stdout);
    if (dn && !finite) {
        fprintf(stderr, "bench-train: %s H=%zu: oneDNN's outputs are not "
                        "all finite\n", cell->name, H);
        goto done;
    }
    rc = 0;
done:
    bench_onednn_close(dn);
    bptt_plan_free(full.plan);
    bptt_session_close(session);
    bptt_mem_free(mem);
    free(ours);
    free(theirs);
    free(ratio);
    bench_square_close(&sq);
    return rc;
}

static void onednn_header(int iters, const char *blas)
{
    printf("# bench-train against oneDNN %s: full BPTT (bptt) and oneDNN's "
           "RNN primitives (forward_training + backward with weight "
           "gradients, f32), one layer, the same weights, batch, output "
           "layer and loss (oneDNN's side: OpenBLAS over all T*B rows at "
           "once); %d iterations each, interleaved (bptt, oneDNN, bptt, "
           "...); OpenMP and OpenBLAS threads = thr for both\n",
           bench_onednn_version(), iters);
    printf("# *_s, *_min, *_max: seconds per iteration, median, min, max; "
           "ratio: median of the side-by-side ratios bptt/oneDNN (< 1: bptt "
           "faster); sgemm: OpenBLAS SGEMM on %d^3 at thr threads, best of "
           "3 in this run (GFLOP/s); peak: the larger of sgemm and the CPU's "
           "FMA throughput on registers (%s, thr threads, best of 3, after "
           "the iterations); *_gf: recurrent-layer GEMM flops (cell forward "
           "+ backward) per second at the median, *_pk: %% of peak\n",
           BENCH_ROOF_N, roof_name());
    printf("# trend_*: median of the last quarter of the iterations over "
           "the first quarter's, flagged TREND above max(1.10, the first "
           "quarter's max/min); ckpt_MiB: our checkpoints' measured peak, "
           "ws_MiB: oneDNN's workspace; hdiff: max |h_bptt - h_oneDNN| / "
           "max |h| over all steps; gdiff: max over W, b, Wo, bo of "
           "|g_bptt - g_oneDNN| / |g_bptt| (2-norms); ldiff: relative loss "
           "difference\n");
    printf("# per-step GEMMs: %s; OpenBLAS kernels: %s\n",
           bptt_cell_kernel(), blas);
    if (!bench_onednn_available())
        printf("# oneDNN: %s\n", BENCH_ONEDNN_NA);
    printf("%-5s %4s %3s %5s %3s %4s %4s %8s %8s %8s %8s %8s %8s %6s %7s "
           "%7s %7s %6s %7s %6s %7s %7s %8s %8s %8s %8s %8s %s\n",
           "cell", "H", "thr", "T", "B", "X", "n", "bptt_s", "bptt_min",
           "bptt_max", "dnnl_s", "dnnl_min", "dnnl_max", "ratio", "sgemm",
           "peak",
           "bptt_gf", "b_pk", "dnnl_gf", "d_pk", "trend_b", "trend_d",
           "ckpt_MiB", "ws_MiB", "hdiff", "gdiff", "ldiff", "flags");
}

/* "a,b,c": 1 to 8 whole numbers from lo to hi into v; their count, or -1
 * after one line on stderr */
static int list_option(int opt, const char *text, int64_t lo, int64_t hi,
                       int64_t *v)
{
    const int n = expt_parse_sizes(text, v, 8, lo, hi);
    if (n < 0) {
        char esc[96];
        expt_escape(esc, sizeof esc, text);
        fprintf(stderr, "bench-train: -%c wants 1 to 8 whole numbers "
                        "from %" PRId64 " to %" PRId64 ", comma-"
                        "separated, not '%s'\n", opt, lo, hi, esc);
    }
    return n;
}

static int positive_option(int opt, const char *text, int64_t max,
                           int64_t *out)
{
    if (bptt_parse_whole(text, strlen(text), out) != 0 || *out < 1 ||
        *out > max) {
        char esc[96];
        expt_escape(esc, sizeof esc, text);
        fprintf(stderr, "bench-train: -%c wants a whole number from 1 to "
                        "%" PRId64 ", not '%s'\n", opt, max, esc);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    (void)bptt_blas_reexec(argv); /* OpenBLAS's best kernels (blascore.h) */
    int rounds = 3, n_h = 3, n_j = 1, n_k = 1, iters = 12, verbose = 0;
    int64_t hs[8] = {128, 256, 512}, js[8], ks[8] = {0}, v;
    const char *cells = "lstm,rnn", *mode = "both", *kernel = NULL;
    size_t layers = 1;
    js[0] = 1;
#ifdef _OPENMP
    if (omp_get_max_threads() > 1)
        js[n_j++] = omp_get_max_threads();
#endif
    int o;
    opterr = 0; /* one line of our own below */
    while ((o = getopt(argc, argv, "m:g:r:n:vc:H:j:k:L:T:B:X:")) != -1) {
        switch (o) {
        case 'm': mode = optarg; break;
        case 'g': kernel = optarg; break;
        case 'r':
            if (positive_option(o, optarg, 32, &v) != 0)
                return 2;
            rounds = (int)v;
            break;
        case 'n':
            if (positive_option(o, optarg, MAX_ITERS, &v) != 0)
                return 2;
            iters = (int)v;
            break;
        case 'v': verbose = 1; break;
        case 'c': cells = optarg; break;
        case 'H':
            if ((n_h = list_option(o, optarg, 1, 100000, hs)) < 0)
                return 2;
            break;
        case 'j':
            if ((n_j = list_option(o, optarg, 1, 1024, js)) < 0)
                return 2;
            break;
        case 'k':
            if ((n_k = list_option(o, optarg, 1, BPTT_WGRAD_STEPS_MAX,
                                   ks)) < 0)
                return 2;
            break;
        case 'L':
            if (positive_option(o, optarg, 16, &v) != 0)
                return 2;
            layers = (size_t)v;
            break;
        case 'T': case 'B': case 'X':
            if (positive_option(o, optarg, 1000000, &v) != 0)
                return 2;
            *(o == 'T' ? &dims.T : o == 'B' ? &dims.B : &dims.X) = (size_t)v;
            break;
        default:
            fprintf(stderr, "bench-train: bad option -%c, or its value missing "
                            "(usage: bench-train "
                            "[-m strategies|onednn|both|kernels] "
                            "[-g cblas|avx2|avx512] [-r ROUNDS] [-n ITERS] [-v] [-c CELL,...] "
                            "[-H H,...] "
                            "[-j THREADS,...] [-k STEPS,...] [-L LAYERS] "
                            "[-T T] [-B B] "
                            "[-X X])\n", optopt ? optopt : o);
            return 2;
        }
    }
    const int strategies = strcmp(mode, "strategies") == 0 ||
                           strcmp(mode, "both") == 0;
    const int onednn = strcmp(mode, "onednn") == 0 || strcmp(mode, "both") == 0;
    const int kernels = strcmp(mode, "kernels") == 0;
    if (!strategies && !onednn && !kernels) {
        char shown[64];
        expt_escape(shown, sizeof shown, mode);
        fprintf(stderr, "bench-train: -m wants strategies, onednn, both or "
                        "kernels, not '%s'\n", shown);
        return 2;
    }
    if (layers != 1 && !kernels) {
        fprintf(stderr, "bench-train: -L (layers) is for -m kernels; the "
                        "strategies and oneDNN tables are of one layer\n");
        return 2;
    }
    if (kernel && bptt_cell_kernel_use(kernel) != 0) {
        char shown[64], here[64];
        expt_escape(shown, sizeof shown, kernel);
        bptt_cell_kernel_names(here, sizeof here, ", ", 1);
        fprintf(stderr, "bench-train: -g wants %s, the paths this CPU has, "
                        "not '%s'\n", here, shown);
        return 2;
    }
    if (optind < argc) {
        char shown[64];
        expt_escape(shown, sizeof shown, argv[optind]);
        fprintf(stderr, "bench-train: unexpected argument '%s'\n", shown);
        return 2;
    }
    /* every cell named is known before anything runs */
    const bptt_cell_type *list[8];
    int n_cells = 0;
    char *copy = strdup(cells), *save = NULL;
    if (!copy)
        return 1;
    for (char *c = strtok_r(copy, ",", &save); c;
         c = strtok_r(NULL, ",", &save)) {
        const bptt_cell_type *cell = bptt_cell_find(c);
        if (!cell || n_cells == 8) {
            char names[128];
            bptt_cell_names(names, sizeof names, " or ");
            if (cell)
                fprintf(stderr, "bench-train: at most 8 cells\n");
            else {
                char shown[64];
                expt_escape(shown, sizeof shown, c);
                fprintf(stderr, "bench-train: unknown cell '%s' (use %s)\n",
                        shown, names);
            }
            free(copy);
            return 2;
        }
        list[n_cells++] = cell;
    }
    free(copy);

    bptt_meta meta;
    bptt_meta_collect(&meta);
    char blas[160];
    bptt_meta_blas_text(&meta, blas, sizeof blas);
    int rc = 0;
    if (strategies) {
        printf("# bench-train: T=%zu B=%zu X=%zu, one layer; median of %d "
               "rounds, strategies interleaved in each round; per-step GEMMs: "
               "%s\n"
               "# k: steps per weight-gradient block; gflops: GEMM flops of a "
               "full-BPTT iteration per second;\n# sgemm: the same GEMM calls "
               "alone, share: sgemm time / iteration time; sgemm1, share1: the "
               "same with dW added every step;\n# roof: the larger of "
               "OpenBLAS on one %d^3 product and the CPU's FMA throughput on "
               "registers (%s), at this thread count (GFLOP/s), roof%%: "
               "gflops / roof\n",
               dims.T, dims.B, dims.X, rounds, bptt_cell_kernel(),
               BENCH_ROOF_N, roof_name());
        printf("# OpenBLAS kernels: %s\n", blas);
        printf("%-5s %4s %4s %3s %8s %8s %8s %7s %8s %7s %7s %6s %8s %8s "
               "%8s\n",
               "cell", "H", "thr", "k", "full_s", "gflops", "sgemm", "share",
               "sgemm1", "share1", "roof", "roof%", "msm5%", "msm10%", "chen");
        for (int c = 0; c < n_cells; c++)
            for (int i = 0; i < n_h; i++)
                for (int j = 0; j < n_j; j++)
                    for (int q = 0; q < n_k; q++)
                        if (hs[i] > 0 && js[j] > 0 && ks[q] >= 0)
                            rc |= bench_size(list[c], (size_t)hs[i],
                                             (int)js[j], rounds,
                                             (size_t)ks[q]);
    }
    if (kernels) {
        bench_kernels_header(iters, blas);
        for (int c = 0; c < n_cells; c++)
            for (int i = 0; i < n_h; i++)
                for (int j = 0; j < n_j; j++)
                    if (hs[i] > 0 && js[j] > 0) {
                        set_threads((int)js[j]);
                        rc |= bench_kernels(list[c], layers, (size_t)hs[i],
                                            (int)js[j], iters, dims.T,
                                            dims.B, dims.X, kernel);
                    }
    }
    if (onednn) {
        if (strategies)
            printf("\n");
        onednn_header(iters, blas);
        for (int c = 0; c < n_cells; c++)
            for (int i = 0; i < n_h; i++)
                for (int j = 0; j < n_j; j++)
                    if (hs[i] > 0 && js[j] > 0)
                        rc |= bench_vs_onednn(list[c], (size_t)hs[i],
                                              (int)js[j], iters, verbose);
    }
    return rc;
}
