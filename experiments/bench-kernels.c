#define _POSIX_C_SOURCE 200809L
/* bench-kernels.c: bench-train -m kernels (not a test): full BPTT on every
 * path the cells' per-step products can take on this CPU (cblas, and our
 * kernel on AVX2 and on AVX-512 where it has them), side by side in one
 * process.  One model per path, made from the same seed (a model keeps
 * the kernel it was made with, cell.h), and one iteration of each per
 * round, the order rotating from round to round, so that drift and the
 * order hit every path alike.  Per path: seconds (median, min, max), the
 * median of its ratio to cblas's iteration of the same round with the
 * smallest and largest of those ratios, the recurrent layer's GEMM rate
 * and its share of the FMA roof of the path's own vectors (cblas: the
 * widest the CPU has).  Checked before timing: the two kernels' gradients
 * are the same bits, and cblas's agree with them to rounding. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-kernels.h"
#include "bench-roof.h"
#include "bptt.h"
#include "exec.h"
#include "expt.h"
#include "mem.h"
#include "model.h"
#include "session.h"

#define PATHS 3

typedef struct {
    const char *name; /* cblas, avx2, avx512 */
    int lanes;        /* of its FMA roof */
    bptt_mem *mem;
    bptt_session *session;
    bptt_model *model;
    bptt_plan *plan;
    double *sec, *ratio;
} path;

static void path_close(path *p)
{
    bptt_plan_free(p->plan);
    bptt_session_close(p->session);
    bptt_mem_free(p->mem);
    free(p->sec);
    free(p->ratio);
}

/* the path's model (made on its kernel), full BPTT's plan, and one
 * iteration run: 0, or -1 with a line on stderr */
static int path_open(path *p, const bptt_session_spec *sp, int iters)
{
    p->mem = bptt_mem_alloc();
    p->sec = calloc((size_t)iters, sizeof(double));
    p->ratio = calloc((size_t)iters, sizeof(double));
    if (!p->mem || !p->sec || !p->ratio) {
        fprintf(stderr, "bench-train: out of memory\n");
        return -1;
    }
    if (bptt_cell_kernel_use(p->name) != 0 ||
        bptt_session_open(&p->session, sp, p->mem, NULL, 0) != BPTT_OK ||
        bptt_session_fetch(p->session, 0) != BPTT_OK) {
        fprintf(stderr, "bench-train: cannot open a %s model at H=%zu on "
                        "%s\n", sp->cell->name, sp->hidden, p->name);
        return -1;
    }
    p->model = bptt_session_model(p->session);
    const int64_t hb = (int64_t)bptt_model_hidden_bytes(p->model);
    const int64_t sb = (int64_t)bptt_model_internal_bytes(p->model);
    bptt_units u;
    bptt_plan_stats st;
    bptt_exec_stats es;
    if (bptt_units_from_bytes(&u, hb, sb) != BPTT_OK ||
        bptt_plan_make("full", sp->length, hb, sb,
                       bptt_full_peak(sp->length, u.hidden_units,
                                      u.internal_units) * u.quantum,
                       NULL, &p->plan, &st, NULL) != BPTT_OK ||
        bptt_exec_run(p->plan, p->model, bptt_session_batch(p->session),
                      p->mem, &es) != BPTT_OK) {
        fprintf(stderr, "bench-train: full BPTT on %s failed\n", p->name);
        return -1;
    }
    return 0;
}

/* 2-norm of a - b over that of a */
static double grad_gap(const bptt_model *a, const bptt_model *b)
{
    double d = 0, n = 0;
    for (size_t k = 0; k < a->n_params; k++) {
        const double x = a->grads[k], y = b->grads[k];
        d += (x - y) * (x - y);
        n += x * x;
    }
    return n > 0 ? sqrt(d / n) : sqrt(d);
}

void bench_kernels_header(int iters, const char *blas)
{
    printf("# bench-train -m kernels: full BPTT with the cells' per-step "
           "GEMMs on each path this CPU has, one model per path (same "
           "seed), %d iterations each, interleaved in one process (the "
           "order rotating)\n"
           "# s, min, max: seconds per iteration; vs_cblas: median of the "
           "side-by-side ratios to the cblas iteration of the same round "
           "(< 1: faster), lo-hi their range; gflops: recurrent-layer GEMM "
           "flops per second at the median (every layer); roof: the FMA throughput of "
           "the path's vectors on registers at thr threads (cblas: the "
           "widest), roof%%: gflops / roof; gap: gradients' relative "
           "distance to the widest kernel's (0: the same bits)\n",
           iters);
    printf("# OpenBLAS kernels (the cblas path): %s\n", blas);
    printf("%-5s %2s %4s %4s %3s %-7s %8s %8s %8s %8s %11s %8s %7s %6s "
           "%8s\n",
           "cell", "L", "B", "H", "thr", "path", "s", "min", "max", "vs_cblas",
           "lo-hi", "gflops", "roof", "roof%", "gap");
}

int bench_kernels(const bptt_cell_type *cell, size_t L, size_t H,
                  int threads, int iters, size_t T, size_t B, size_t X,
                  const char *only)
{
    static const char *const names[PATHS] = {"cblas", "avx2", "avx512"};
    static const int lanes[PATHS] = {0, 8, 16};
    char was[16];
    snprintf(was, sizeof was, "%s", bptt_cell_kernel());
    path ps[PATHS];
    int n = 0, rc = 1;
    const bptt_session_spec sp = {.cell = cell, .layers = L, .hidden = H,
                                  .batch = B, .length = T, .input = X,
                                  .task = "copy", .seed = 1};
    memset(ps, 0, sizeof ps);
    for (int k = 0; k < PATHS; k++) {
        if (!bptt_cell_kernel_has(names[k]) ||
            (only && k > 0 && strcmp(only, names[k]) != 0))
            continue;
        ps[n].name = names[k];
        ps[n].lanes = lanes[k];
        if (path_open(&ps[n++], &sp, iters) != 0)
            goto done;
    }
    /* the widest kernel is the last path; every other is checked
     * against it before anything is timed */
    const path *ref = &ps[n - 1];
    double gap[PATHS];
    for (int k = 0; k < n; k++) {
        gap[k] = grad_gap(ref->model, ps[k].model);
        if (strcmp(ps[k].name, "cblas") != 0 && gap[k] != 0) {
            fprintf(stderr, "bench-train: %s H=%zu: the %s and %s kernels' "
                            "gradients differ (%.3g)\n", cell->name, H,
                    ps[k].name, ref->name, gap[k]);
            goto done;
        }
        if (!(gap[k] < 1e-3)) {
            fprintf(stderr, "bench-train: %s H=%zu: cblas's gradients lie "
                            "%.3g from the kernel's\n", cell->name, H,
                    gap[k]);
            goto done;
        }
    }
    for (int i = 0; i < iters; i++) {
        double sec[PATHS];
        for (int j = 0; j < n; j++) {
            path *p = &ps[(i + j) % n];
            const double t0 = expt_now();
            bptt_exec_stats es;
            if (bptt_exec_run(p->plan, p->model,
                              bptt_session_batch(p->session), p->mem,
                              &es) != BPTT_OK) {
                fprintf(stderr, "bench-train: full BPTT on %s failed\n",
                        p->name);
                goto done;
            }
            sec[(i + j) % n] = expt_now() - t0;
        }
        for (int k = 0; k < n; k++) {
            ps[k].sec[i] = sec[k];
            ps[k].ratio[i] = sec[k] / sec[0]; /* path 0 is cblas */
        }
    }
    bptt_flops f;
    bptt_model_flops(ps[0].model, &f);
    const double gf = (double)T * (f.cell_forward + f.cell_backward) / 1e9;
    const double widest = bench_fma_peak(threads);
    for (int k = 0; k < n; k++) {
        double tmp[4096];
        const int m = iters < 4096 ? iters : 4096;
        memcpy(tmp, ps[k].sec, (size_t)m * sizeof(double));
        const double med = expt_median(tmp, m), lo = tmp[0],
                     hi = tmp[m - 1];
        memcpy(tmp, ps[k].ratio, (size_t)m * sizeof(double));
        const double r = expt_median(tmp, m);
        const double roof = ps[k].lanes == 16 || ps[k].lanes == 0
                                ? widest
                                : bench_fma_peak_lanes(threads, ps[k].lanes);
        char range[32];
        snprintf(range, sizeof range, "%.3f-%.3f", tmp[0], tmp[m - 1]);
        printf("%-5s %2zu %4zu %4zu %3d %-7s %8.4g %8.4g %8.4g %8.3f %11s "
               "%8.1f %7.1f %5.0f%% %8.1e\n",
               cell->name, L, B, H, threads, ps[k].name, med, lo, hi, r, range,
               gf / med, roof, roof > 0 ? 100 * gf / med / roof : NAN,
               gap[k]);
    }
    fflush(stdout);
    rc = 0;
done:
    for (int k = 0; k < PATHS; k++)
        path_close(&ps[k]);
    (void)bptt_cell_kernel_use(was);
    return rc;
}
