/* bench-train.c: training-speed benchmark (not a test).
 *
 * For LSTM and RNN at T = 1000, B = 32, X = 64, H in {128, 256, 512} and
 * 1 and all threads (or what the options say), in one run:
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
 * usage: bench-train [-r ROUNDS] [-c CELL,...] [-H H,...] [-j THREADS,...]
 *                    [-k STEPS,...]
 *   defaults: 3 rounds, lstm,rnn, 128,256,512, 1 and omp_get_max_threads(),
 *   K = the model's BPTT_WGRAD_STEPS (-k: steps per weight-gradient block)
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

#include "blascore.h"
#include "bptt.h"
#include "expt.h"
#include "data.h"
#include "exec.h"
#include "meta.h"
#include "model.h"
#include "session.h"

void openblas_set_num_threads(int);

/* The GEMMs of one iteration of a one-layer cell with G gates, alone: fwd
 * forward ops, T backward ops and T output-layer passes, on buffers of the
 * same shapes.  The weight gradient is added K steps at a time (blocks
 * [1, K], [K+1, 2K], ..., as the model does; K = 1: every step). */
static double gemm_only_seconds(size_t G, size_t T, size_t B, size_t X,
                                size_t H, size_t V, int64_t fwd, size_t K)
{
    const size_t XH = X + H, GH = G * H;
    float *W = calloc(GH * XH, sizeof(float)), *dW = calloc(GH * XH, 4);
    float *xh = calloc(K * B * XH, 4), *gates = calloc(K * B * GH, 4);
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
        const size_t j = T - i; /* the step */
        if ((j - 1) % K == 0) { /* the lowest of block [j, j+K-1] */
            const size_t steps = T - j + 1 < K ? T - j + 1 : K;
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)GH,
                        (int)XH, (int)(steps * B), 1, gates, (int)GH, xh,
                        (int)XH, 1, dW, (int)XH);
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

/* OpenBLAS on one large square product (N = 1024), the rate a GEMM reaches
 * on this machine at this thread count: the roofline the iteration is held
 * against. */
#define ROOF_N 1024
static double square_seconds(float *a, float *b, float *c)
{
    const double t0 = expt_now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ROOF_N, ROOF_N,
                ROOF_N, 1, a, ROOF_N, b, ROOF_N, 0, c, ROOF_N);
    return expt_now() - t0;
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

static int bench_size(const bptt_cell_type *cell, size_t H, int threads,
                      int rounds, size_t K)
{
    const size_t T = 1000, B = 32, X = 64;
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    openblas_set_num_threads(threads);
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
        if (make_plan(&arms[k], T, model) != BPTT_OK)
            return 1;
    if (rounds > 32)
        rounds = 32;

    const size_t nn = (size_t)ROOF_N * ROOF_N;
    float *sa = malloc(nn * sizeof(float)), *sb = malloc(nn * sizeof(float));
    float *sc = malloc(nn * sizeof(float));
    if (!sa || !sb || !sc)
        return 1;
    for (size_t k = 0; k < nn; k++) {
        sa[k] = 0.001f * (float)(k % 13);
        sb[k] = 0.001f * (float)(k % 7);
    }
    square_seconds(sa, sb, sc); /* warm-up: OpenBLAS's threads start */
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
        square[r] = square_seconds(sa, sb, sc);
    }
    free(sa);
    free(sb);
    free(sc);
    bptt_flops f;
    bptt_model_flops(model, &f);
    const double flops_full =
        (double)T * (f.cell_forward + f.cell_backward + f.output);
    const double t_full = expt_median(arms[0].sec, rounds);
    const double t_gemm = expt_median(gemm, rounds);
    const double t_gemm1 = expt_median(gemm1, rounds);
    const double roof = 2.0 * ROOF_N * ROOF_N * ROOF_N /
                        expt_median(square, rounds) / 1e9;
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

int main(int argc, char **argv)
{
    (void)bptt_blas_reexec(argv); /* OpenBLAS's best kernels (blascore.h) */
    int rounds = 3, n_h = 3, n_j = 1, n_k = 1;
    int64_t hs[8] = {128, 256, 512}, js[8], ks[8] = {0};
    const char *cells = "lstm,rnn";
    js[0] = 1;
#ifdef _OPENMP
    if (omp_get_max_threads() > 1)
        js[n_j++] = omp_get_max_threads();
#endif
    int o;
    while ((o = getopt(argc, argv, "r:c:H:j:k:")) != -1) {
        switch (o) {
        case 'r': rounds = atoi(optarg) > 0 ? atoi(optarg) : 1; break;
        case 'c': cells = optarg; break;
        case 'H': n_h = expt_parse_list(optarg, hs, 8); break;
        case 'j': n_j = expt_parse_list(optarg, js, 8); break;
        case 'k': n_k = expt_parse_list(optarg, ks, 8); break;
        default:
            fprintf(stderr, "usage: bench-train [-r ROUNDS] [-c CELL,...] "
                            "[-H H,...] [-j THREADS,...] [-k STEPS,...]\n");
            return 2;
        }
    }
    bptt_meta meta;
    bptt_meta_collect(&meta);
    printf("# bench-train: T=1000 B=32 X=64 V=64, one layer; median of %d "
           "rounds, strategies interleaved in each round; per-step GEMMs: "
           "%s\n"
           "# k: steps per weight-gradient block; gflops: GEMM flops of a "
           "full-BPTT iteration per second;\n# sgemm: the same GEMM calls "
           "alone, share: sgemm time / iteration time; sgemm1, share1: the "
           "same with dW added every step;\n# roof: OpenBLAS on one "
           "1024^3 product at this thread count (GFLOP/s), roof%%: gflops / "
           "roof\n",
           rounds, bptt_cell_kernel());
    char blas[160];
    bptt_meta_blas_text(&meta, blas, sizeof blas);
    printf("# OpenBLAS kernels: %s\n", blas);
    printf("%-5s %4s %4s %3s %8s %8s %8s %7s %8s %7s %7s %6s %8s %8s %8s\n",
           "cell", "H", "thr", "k", "full_s", "gflops", "sgemm", "share",
           "sgemm1", "share1", "roof", "roof%", "msm5%", "msm10%", "chen");
    int rc = 0;
    char *list = strdup(cells), *save = NULL;
    for (char *c = strtok_r(list, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
        const bptt_cell_type *cell = bptt_cell_find(c);
        if (!cell) {
            char names[128];
            bptt_cell_names(names, sizeof names, " or ");
            fprintf(stderr, "bench-train: unknown cell '%s' (use %s)\n", c,
                    names);
            rc = 2;
            break;
        }
        for (int i = 0; i < n_h; i++)
            for (int j = 0; j < n_j; j++)
                for (int q = 0; q < n_k; q++)
                    if (hs[i] > 0 && js[j] > 0 && ks[q] >= 0)
                        rc |= bench_size(cell, (size_t)hs[i], (int)js[j],
                                         rounds, (size_t)ks[q]);
    }
    free(list);
    return rc;
}
