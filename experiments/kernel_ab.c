/* kernel_ab.c: two versions of the GEMM kernel (src/train/gemm_kernel.h)
 * side by side in one process.  experiments/kernel-ab builds it with
 * KAB_OLD naming the other version's header (a file, or the header at a
 * git revision), and the working tree's as the new one.  Each instruction
 * set the CPU has gets both versions, compiled from the same vector
 * macros (gemm_isa.h), so that the only difference between them is the
 * header.
 *
 * For each set and hidden width H it times the products of one LSTM
 * layer step (B rows, X = 64, 4 gates) as the model runs them: the gates
 * on the packed weights, dh_prev on W's packed h columns, the weight
 * gradient of a block of 16 steps, and a run of steps (gates and dh_prev
 * every step, the weight gradient every 16th), which keeps the caches as
 * a training iteration does.  Rounds alternate old, new, old, ... (the
 * order flipping each round); the ratio is new over old within a round,
 * so that the machine's drift between rounds does not enter it.  Every
 * product of both versions writes to its own output, compared bit by bit
 * at the end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "real_impl.h"
#include "cell.h"
#include "gemm.h"
#include "expt.h"

#ifndef KAB_OLD
#define KAB_OLD "gemm_kernel.h"
#endif

#ifdef BPTT_GEMM_HAVE_KERNEL
#include <immintrin.h>

typedef bptt_gemm_prod gemm_args;
#define KC_MAX BPTT_GEMM_KC_MAX /* the name older headers use */

/* an older header sized the weight gradient's chunks itself */
__attribute__((unused)) static size_t wgrad_k_rows(size_t N)
{
    return bptt_gemm_wgrad_k_rows(N);
}

#define KSUF avx512_old
#define KISA_AVX512
#include "gemm_isa.h"
#include KAB_OLD
#define KSUF avx512_new
#define KISA_AVX512
#include "gemm_isa.h"
#include "gemm_kernel.h"
#define KSUF avx2_old
#define KISA_AVX2
#include "gemm_isa.h"
#include KAB_OLD
#define KSUF avx2_new
#define KISA_AVX2
#include "gemm_isa.h"
#include "gemm_kernel.h"

typedef void (*part_fn)(const gemm_args *, int, int);

/* the whole products (threads of their own) are not timed here */
__attribute__((used)) static void (*const whole_products[])(
    const gemm_args *) = {kgemm_avx512_old, kgemm_avx512_new, kgemm_avx2_old,
                          kgemm_avx2_new};

enum { PRODS = 4, MAX_H = 8, MAX_ROUNDS = 1000 };
static const char *const prod_names[PRODS] = {"gates", "dh", "wgrad",
                                              "steps"};

typedef struct {
    size_t B, X, H, G, XH, GH, rows;
    real *W, *wpack, *x, *h, *bias, *dg, *xh;
    real *out[PRODS][2]; /* each version's outputs */
    size_t out_len[PRODS];
    gemm_args prod[3];
} layer;

static void layer_free(layer *L)
{
    free(L->W), free(L->wpack), free(L->x), free(L->h), free(L->bias);
    free(L->dg), free(L->xh);
    for (int p = 0; p < PRODS; p++)
        free(L->out[p][0]), free(L->out[p][1]);
}

static real *filled(size_t n, unsigned mod, double step)
{
    real *v = malloc((n ? n : 1) * sizeof(real));
    if (v)
        for (size_t i = 0; i < n; i++)
            v[i] = (real)((double)(i % mod) * step - 0.25);
    return v;
}

/* reals of product p's outputs: "steps" holds a step's gates and dh_prev
 * after the weight gradient */
static size_t out_all(const layer *L, int p)
{
    return L->out_len[p] + (p == 3 ? L->B * L->GH + L->B * L->H : 0);
}

/* the layer's data and its three products on kernel (a model's layer:
 * weights packed once, dgates and xh of a block of 16 steps) */
static int layer_make(layer *L, int kernel, size_t B, size_t H)
{
    memset(L, 0, sizeof *L);
    L->B = B, L->X = 64, L->H = H, L->G = 4;
    L->XH = L->X + H, L->GH = L->G * H, L->rows = 16 * B;
    bptt_cell_ws ws = {0};
    ws.B = B, ws.X = L->X, ws.H = H, ws.kernel = kernel;
    const size_t len = bptt_cell_packed_len(L->G, L->X, H);
    L->W = filled(L->GH * L->XH, 7, 0.01);
    L->wpack = malloc((len ? len : 1) * sizeof(real));
    L->x = filled(B * L->X, 5, 0.1);
    L->h = filled(B * H, 11, 0.02);
    L->bias = filled(L->GH, 3, 0.1);
    L->dg = filled(L->rows * L->GH, 97, 0.005);
    L->xh = filled(L->rows * L->XH, 89, 0.006);
    L->out_len[0] = B * L->GH, L->out_len[1] = B * H;
    L->out_len[2] = L->out_len[3] = L->GH * L->XH;
    int ok = L->W && L->wpack && L->x && L->h && L->bias && L->dg && L->xh;
    for (int p = 0; p < PRODS; p++)
        for (int v = 0; v < 2; v++)
            ok = ok && (L->out[p][v] = calloc(out_all(L, p), sizeof(real)));
    if (!ok)
        return -1;
    bptt_cell_pack_weights(&ws, L->G, L->W, L->wpack);
    ws.wpack = L->wpack;
    L->prod[0] = bptt_gemm_gates_prod(&ws, L->G, L->bias, L->x, L->h,
                                      L->out[0][0]);
    L->prod[1] = bptt_gemm_dh_prod(&ws, L->G, L->dg, L->out[1][0]);
    L->prod[2] = bptt_gemm_wgrad_prod(kernel, L->GH, L->XH, L->rows, L->dg,
                                      L->xh, L->out[2][0]);
    return 0;
}

/* one timed piece of product p on version f, writing to version v's
 * outputs: reps calls (a run of reps steps for "steps") */
static double piece(const layer *L, part_fn f, int p, int v, int reps)
{
    gemm_args g[3];
    for (int k = 0; k < 3; k++)
        g[k] = L->prod[k];
    if (p < 3)
        g[p].C = L->out[p][v];
    else { /* a step's gates and dh_prev, the block's weight gradient */
        g[0].C = L->out[3][v] + L->out_len[3];
        g[1].C = L->out[3][v] + L->out_len[3] + L->B * L->GH;
        g[2].C = L->out[3][v];
    }
    const double t0 = expt_now();
    for (int i = 0; i < reps; i++) {
        if (p < 3) {
            f(&g[p], 0, 1);
        } else {
            f(&g[0], 0, 1);
            f(&g[1], 0, 1);
            if (i % 16 == 15)
                f(&g[2], 0, 1);
        }
    }
    return expt_now() - t0;
}

/* reps so that a piece takes about 20 ms, from one (steps: 16) taking
 * one seconds: whatever the machine or the build (a sanitizer's is many
 * times slower) */
static int reps_for(int p, double one)
{
    const double r = 0.02 / (one > 1e-9 ? one : 1e-9);
    if (p == 3) /* in steps, a whole number of weight-gradient blocks */
        return r < 1 ? 16 : r > 100 ? 1600 : 16 * (int)r;
    return r < 1 ? 1 : r > 100000 ? 100000 : (int)r;
}

static double flops_of(const layer *L, int p, int reps)
{
    const double g = 2.0 * (double)(L->B * L->GH * L->XH),
                 d = 2.0 * (double)(L->B * L->H * L->GH),
                 w = 2.0 * (double)(L->GH * L->XH * L->rows);
    return p == 0   ? g * reps
           : p == 1 ? d * reps
           : p == 2 ? w * reps
                    : (g + d) * reps + w * (reps / 16);
}

static int run_set(const char *set, part_fn fold, part_fn fnew, int kernel,
                   const int64_t *Hs, int nH, size_t B, int rounds)
{
    int all_same = 1;
    for (int a = 0; a < nH; a++) {
        layer L;
        if (layer_make(&L, kernel, B, (size_t)Hs[a]) != 0) {
            layer_free(&L);
            fprintf(stderr, "kernel-ab: out of memory at H = %lld\n",
                    (long long)Hs[a]);
            return -1;
        }
        for (int p = 0; p < PRODS; p++) {
            const int unit = p == 3 ? 16 : 1;
            double t[2][MAX_ROUNDS], ratio[MAX_ROUNDS];
            piece(&L, fold, p, 0, unit); /* warm both: pages, caches */
            const int reps = reps_for(p, piece(&L, fnew, p, 1, unit));
            const double fl = flops_of(&L, p, reps);
            for (int r = 0; r < rounds; r++) {
                const int first = r % 2; /* old first on even rounds */
                for (int s = 0; s < 2; s++) {
                    const int v = s ^ first;
                    t[v][r] = piece(&L, v ? fnew : fold, p, v, reps);
                }
                ratio[r] = t[0][r] / t[1][r]; /* new's speed over old's */
            }
            double gf[2], lo = ratio[0], hi = ratio[0];
            for (int r = 1; r < rounds; r++) {
                lo = ratio[r] < lo ? ratio[r] : lo;
                hi = ratio[r] > hi ? ratio[r] : hi;
            }
            for (int v = 0; v < 2; v++)
                gf[v] = fl / expt_median(t[v], rounds) / 1e9;
            const int same = memcmp(L.out[p][0], L.out[p][1],
                                    out_all(&L, p) * sizeof(real)) == 0;
            all_same = all_same && same;
            printf("%-6s %5zu %4zu %-6s %6d %8.1f %8.1f %7.3f %5.3f-%5.3f "
                   "%s\n",
                   set, L.H, B, prod_names[p], reps, gf[0], gf[1],
                   expt_median(ratio, rounds), lo, hi, same ? "yes" : "NO");
        }
        layer_free(&L);
    }
    return all_same ? 0 : 1;
}

static int usage(const char *what, const char *value)
{
    char esc[96];
    expt_escape(esc, sizeof esc, value ? value : "");
    fprintf(stderr,
            "kernel-ab: %s%s%s%s (usage: kernel-ab [-g avx512|avx2] "
            "[-H H,... (1-4096, at most %d)] [-B B (1-1024)] "
            "[-n ROUNDS (1-%d)])\n",
            what, value ? " '" : "", value ? esc : "", value ? "'" : "",
            MAX_H, MAX_ROUNDS);
    return 2;
}

int main(int argc, char **argv)
{
    int64_t Hs[MAX_H] = {256, 512};
    int nH = 2, rounds = 10;
    size_t B = 32;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (strlen(o) != 2 || o[0] != '-' || !strchr("gHBn", o[1]))
            return usage("unknown option", o);
        if (i + 1 >= argc)
            return usage("a value is missing after", o);
        const char *v = argv[++i];
        int64_t one[1];
        switch (o[1]) {
        case 'g':
            if (strcmp(v, "avx512") != 0 && strcmp(v, "avx2") != 0)
                return usage("-g names no kernel of ours:", v);
            only = v;
            break;
        case 'H':
            nH = expt_parse_sizes(v, Hs, MAX_H, 1, 4096);
            if (nH <= 0)
                return usage("-H is not a list of widths:", v);
            break;
        case 'B':
            if (expt_parse_sizes(v, one, 1, 1, 1024) != 1)
                return usage("-B is not a batch size:", v);
            B = (size_t)one[0];
            break;
        default: /* n */
            if (expt_parse_sizes(v, one, 1, 1, MAX_ROUNDS) != 1)
                return usage("-n is not a count of rounds:", v);
            rounds = (int)one[0];
            break;
        }
    }
    const char *name = getenv("KAB_OLD_NAME");
    char esc[512];
    expt_escape(esc, sizeof esc, name ? name : KAB_OLD);
    printf("# kernel-ab: old = %s, new = the working tree's "
           "src/train/gemm_kernel.h; %d interleaved rounds of each\n",
           esc, rounds);
    printf("# reps: calls a piece of about 20 ms (steps for \"steps\"); old_gf, new_gf: "
           "GFLOP/s at the median round; new/old: median of the rounds' "
           "speed ratios (> 1: new faster), lo-hi their range; same: both "
           "versions' outputs equal bit for bit\n");
    printf("%-6s %5s %4s %-6s %6s %8s %8s %7s %11s %s\n", "set", "H", "B",
           "prod", "reps", "old_gf", "new_gf", "new/old", "lo-hi", "same");
    int rc = 0;
    static const char *const sets[2] = {"avx512", "avx2"};
    const part_fn olds[2] = {kpart_avx512_old, kpart_avx2_old};
    const part_fn news[2] = {kpart_avx512_new, kpart_avx2_new};
    const int kernels[2] = {BPTT_GEMM_AVX512, BPTT_GEMM_AVX2};
    for (int s = 0; s < 2; s++) {
        if (only && strcmp(only, sets[s]) != 0)
            continue;
        if (!bptt_cell_kernel_has(sets[s])) {
            printf("SKIP: the %s kernel: this CPU lacks it\n", sets[s]);
            continue;
        }
        if (bptt_cell_kernel_use(sets[s]) != 0) { /* the packing's panels */
            fprintf(stderr, "kernel-ab: cannot choose the %s kernel\n",
                    sets[s]);
            return 1;
        }
        const int r = run_set(sets[s], olds[s], news[s], kernels[s], Hs, nH,
                              B, rounds);
        if (r < 0)
            return 1;
        rc |= r;
    }
    return rc;
}
#else
int main(void)
{
    printf("SKIP: kernel-ab: this build has no kernel of ours\n");
    return 0;
}
#endif
