/* gemm.c: the per-step products of the cells (cell.h, gemm.h): an
 * AVX-512 GEMM kernel of our own with its weight packing, the cblas path
 * beside it, the choice between the two, the gate product of a step and
 * its backward share, and the weight gradient of a block of steps
 * (its determinism: doc/design.md 8.1).  The cell equations are in
 * cell.c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "real_impl.h"
#include "bptt.h"
#include "cell.h"
#include "gemm.h"

/* the bias-gradient loop vectorizes, as in cell.c */
#define SIMD _Pragma("omp simd")

/* xh := [x, h] (B, X+H) */
void bptt_gemm_concat(const bptt_cell_ws *ws, real *xh, const real *x,
                      const real *h)
{
    const size_t B = ws->B, X = ws->X, H = ws->H, XH = X + H;
    for (size_t b = 0; b < B; b++) {
        memcpy(xh + b * XH, x + b * X, X * sizeof(real));
        memcpy(xh + b * XH + X, h + b * H, H * sizeof(real));
    }
}

/* ---- per-step GEMMs ---------------------------------------------------------
 * A step multiplies a few rows (M = B) by a weight matrix that stays the
 * same all iteration.  OpenBLAS packs that matrix on every call, work
 * repeated at every step (results/performance-log.md, "What made it
 * fast"); on x86-64 with AVX-512, or AVX2 and
 * FMA, we use a kernel of our own instead, which reads the weights packed
 * once per iteration (bptt_cell_pack_weights: W^T for the forward op, W's
 * h columns for dh_prev) or, for dx, where they lie (W's rows).  The
 * kernel is written once (gemm_kernel.h) and built for each width: 16
 * floats a vector and tiles of 8 rows by 32 columns on AVX-512 (16 of its
 * 32 registers accumulate), 8 floats and 6 by 16 on AVX2 (12 of 16).
 * Both give every element the same bits (gemm_kernel.h); they differ from
 * cblas's in rounding.  Threads take panels (no BLAS call inside the
 * region).  Without either set (or where valgrind hides AVX-512, the
 * AVX2 one) every product goes to cblas as before.  A workspace keeps
 * the kernel it was made with (ws->kernel), and its weights are packed
 * for that kernel's panels. */

#ifdef BPTT_GEMM_HAVE_KERNEL
#define HAVE_KERNEL 1
#include <immintrin.h>

typedef bptt_gemm_prod gemm_args; /* gemm.h */

/* A core's L2 in bytes, read with the CPU's features (kernel_possible);
 * 1 MiB where the system does not say. */
static size_t l2_bytes = (size_t)1 << 20;

size_t bptt_gemm_wgrad_k_rows(size_t N)
{
    const size_t kc = l2_bytes / 4 / sizeof(real) / (N > 0 ? N : 1);
    return kc < 8 ? 8 : kc > BPTT_GEMM_KC_MAX ? BPTT_GEMM_KC_MAX : kc;
}

#define KSUF avx512
#define KISA_AVX512
#include "gemm_isa.h"
#include "gemm_kernel.h" /* which undefines both */

#define KSUF avx2
#define KISA_AVX2
#include "gemm_isa.h"
#include "gemm_kernel.h"

static void kernel_gemm(const gemm_args *g)
{
    if (g->kernel == BPTT_GEMM_AVX512)
        kgemm_avx512(g);
    else
        kgemm_avx2(g);
}

/* A product's tiles, in either numbering, on the product's kernel. */
void bptt_gemm_part(const bptt_gemm_prod *g, int q, int P)
{
    if (g->kernel == BPTT_GEMM_AVX512)
        kpart_avx512(g, q, P);
    else if (g->kernel == BPTT_GEMM_AVX2)
        kpart_avx2(g, q, P);
}

size_t bptt_gemm_nr(int kernel)
{
    return kernel == BPTT_GEMM_AVX512 ? (size_t)knr_avx512
           : kernel == BPTT_GEMM_AVX2 ? (size_t)knr_avx2
                                      : 1;
}

size_t bptt_gemm_mr(int kernel)
{
    return kernel == BPTT_GEMM_AVX512 ? (size_t)kmr_avx512
           : kernel == BPTT_GEMM_AVX2 ? (size_t)kmr_avx2
                                      : 1;
}

/* the widest kernel the CPU has (and the OS keeps the registers of) */
static int kernel_possible(void)
{
    static int possible = -1;
    if (possible < 0) {
        __builtin_cpu_init();
        const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        if (l2 >= 65536) /* 0 or -1 where unknown */
            l2_bytes = (size_t)l2;
        possible = __builtin_cpu_supports("avx512f") ? BPTT_GEMM_AVX512
                   : __builtin_cpu_supports("avx2") &&
                           __builtin_cpu_supports("fma")
                       ? BPTT_GEMM_AVX2
                       : BPTT_GEMM_CBLAS;
    }
    return possible;
}

size_t bptt_gemm_l2_bytes(void)
{
    (void)kernel_possible(); /* which reads the size */
    return l2_bytes;
}
#else
static int kernel_possible(void) { return BPTT_GEMM_CBLAS; }
size_t bptt_gemm_l2_bytes(void) { return (size_t)1 << 20; }
/* A product's tiles, in either numbering. */
void bptt_gemm_part(const bptt_gemm_prod *g, int q, int P)
{
    (void)g, (void)q, (void)P; /* the team path needs the kernel */
}
size_t bptt_gemm_nr(int kernel)
{
    (void)kernel;
    return 1;
}
size_t bptt_gemm_mr(int kernel)
{
    (void)kernel;
    return 1;
}
#endif

/* The kernel products run on: BPTT_GEMM_CBLAS, _AVX2 or _AVX512 (chosen
 * by bptt_cell_kernel_select or _use, else by the environment's
 * BPTT_GEMM_KERNEL, read at the first product: cblas, avx2 or avx512,
 * so that a test suite or a run can be repeated on another path; else the
 * widest the CPU has); -1: not chosen yet. */
static int kernel_chosen = -1;

static const char *const kernel_names[] = {"cblas", "avx2", "avx512"};
#define KERNELS ((int)(sizeof kernel_names / sizeof kernel_names[0]))

static int kernel_named(const char *name)
{
    for (int k = 0; k < KERNELS; k++)
        if (strcmp(name, kernel_names[k]) == 0)
            return k;
    return -1;
}

int bptt_gemm_kernel(void)
{
    if (kernel_chosen < 0) {
        const char *env = getenv("BPTT_GEMM_KERNEL");
        const int k = env ? kernel_named(env) : -1;
        /* a kernel the CPU lacks, or a name that is none: the widest */
        kernel_chosen = k >= 0 && k <= kernel_possible() ? k
                                                         : kernel_possible();
    }
    return kernel_chosen;
}

int bptt_gemm_kernel_on(void) { return bptt_gemm_kernel() != BPTT_GEMM_CBLAS; }

int bptt_gemm_worth_threads(size_t M, size_t N, size_t K)
{
    return M * N * K >= 262144;
}

const char *bptt_cell_kernel(void)
{
    return kernel_names[bptt_gemm_kernel()];
}

int bptt_cell_kernel_select(int on)
{
    if (on && kernel_possible() == BPTT_GEMM_CBLAS)
        return -1;
    kernel_chosen = on ? kernel_possible() : BPTT_GEMM_CBLAS;
    return 0;
}

int bptt_cell_kernel_known(const char *name)
{
    return name && kernel_named(name) >= 0;
}

int bptt_cell_kernel_has(const char *name)
{
    return bptt_cell_kernel_known(name) &&
           kernel_named(name) <= kernel_possible();
}

int bptt_cell_kernel_use(const char *name)
{
    if (!bptt_cell_kernel_has(name))
        return -1;
    kernel_chosen = kernel_named(name);
    return 0;
}

size_t bptt_cell_kernel_names(char *buf, size_t cap, const char *last,
                              int runnable)
{
    const int n = runnable ? kernel_possible() + 1 : KERNELS;
    return bptt_names_text(buf, cap, kernel_names, (size_t)n, last);
}

/* C (M, N) = A Bm [+ C], A and Bm row-major, on kernel (or cblas) */
static void gemm_on(int kernel, size_t M, size_t N, size_t K, const real *A,
                    size_t lda, const real *Bm, size_t ldb, real *C,
                    size_t ldc, int beta)
{
#ifdef HAVE_KERNEL
    if (kernel != BPTT_GEMM_CBLAS) {
        const gemm_args g = bptt_gemm_plain_prod(kernel, M, N, K, A, lda, 0,
                                                 Bm, ldb, C, ldc, NULL, beta);
        kernel_gemm(&g);
        return;
    }
#endif
    REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N,
              (int)K, 1, A, (int)lda, Bm, (int)ldb, beta ? 1 : 0, C,
              (int)ldc);
}

/* C (M, N) = A (M, K) Bm (K, N) [+ C if beta], on the kernel chosen */
void bptt_cell_gemm(size_t M, size_t N, size_t K, const real *A, size_t lda,
                    const real *Bm, size_t ldb, real *C, size_t ldc, int beta)
{
    gemm_on(bptt_gemm_kernel(), M, N, K, A, lda, Bm, ldb, C, ldc, beta);
}

/* wpack holds two packings: W^T in panels of NR of its G*H columns
 * (forward: [x, h] W^T), then W's h columns, W[:, X:X+H], in panels of
 * NR of its H columns (backward: dh_prev = dgates W_h), NR the panel
 * width of the kernel the packing is for. */
static size_t packed_fwd_len(size_t nr, size_t G, size_t X, size_t H)
{
    return (G * H + nr - 1) / nr * nr * (X + H);
}

size_t bptt_cell_packed_len_for(size_t G, size_t X, size_t H, int with_dx)
{
    const int kernel = bptt_gemm_kernel();
    if (kernel == BPTT_GEMM_CBLAS)
        return 0;
    const size_t nr = bptt_gemm_nr(kernel), cols = with_dx ? X + H : H;
    return packed_fwd_len(nr, G, X, H) + (cols + nr - 1) / nr * nr * G * H;
}

size_t bptt_cell_packed_len(size_t G, size_t X, size_t H)
{
    return bptt_cell_packed_len_for(G, X, H, 0);
}

/* B (K, N), element (k, j) at src[k * ks + j * js], into panels of nr
 * columns (k-major inside a panel, zero past column N) at dst. */
static void pack_panels(real *dst, size_t nr, const real *src, size_t K,
                        size_t N, size_t ks, size_t js)
{
    for (size_t p = 0; p < (N + nr - 1) / nr; p++, dst += K * nr)
        for (size_t k = 0; k < K; k++)
            for (size_t c = 0; c < nr; c++) {
                const size_t j = p * nr + c;
                dst[k * nr + c] = j < N ? src[k * ks + j * js] : 0;
            }
}

void bptt_cell_pack_weights(const bptt_cell_ws *ws, size_t G, const real *W,
                            real *wpack)
{
    const size_t X = ws->X, H = ws->H, XH = X + H, GH = G * H;
    const size_t nr = bptt_gemm_nr(ws->kernel);
    pack_panels(wpack, nr, W, XH, GH, 1, XH); /* W^T: (k, j) = W[j][k] */
    real *back = wpack + packed_fwd_len(nr, G, X, H);
    if (ws->wpack_dx) /* all of W: (k, j) = W[k][j], for [dx, dh_prev] */
        pack_panels(back, nr, W, GH, XH, XH, 1);
    else              /* W_h: (k, j) = W[k][X + j] */
        pack_panels(back, nr, W + X, GH, H, XH, 1);
}

/* ---- the products, described (gemm.h) ---------------------------------- */

bptt_gemm_prod bptt_gemm_plain_prod(int kernel, size_t M, size_t N, size_t K,
                                    const real *A, size_t lda, int atrans,
                                    const real *Bm, size_t ldb, real *C,
                                    size_t ldc, const real *bias, int beta)
{
    return (bptt_gemm_prod){M,   N,  K,    K,   A,   NULL,
                            lda, 0,  atrans, Bm, ldb, bptt_gemm_nr(kernel),
                            C,   ldc, bias, beta, kernel};
}

bptt_gemm_prod bptt_gemm_gates_prod(const bptt_cell_ws *ws, size_t G,
                                    const real *bias, const real *x,
                                    const real *h, real *out)
{
    const size_t X = ws->X, XH = X + ws->H, nr = bptt_gemm_nr(ws->kernel);
    return (bptt_gemm_prod){ws->B, G * ws->H, XH, X, x, h, X, ws->H, 0,
                            ws->wpack, nr, XH * nr, out, G * ws->H, bias,
                            0, ws->kernel};
}

bptt_gemm_prod bptt_gemm_rows(bptt_gemm_prod g, size_t r0, size_t r1)
{
    g.M = r1 - r0;
    g.A1 += r0 * g.lda1;
    if (g.A2)
        g.A2 += r0 * g.lda2;
    g.C += r0 * g.ldc;
    return g;
}

/* C (B, N) := dgates (B, G*H) on the backward's packing (after W^T in
 * wpack: W's h columns, N = H, or all of W, N = X + H) */
static bptt_gemm_prod back_prod(const bptt_cell_ws *ws, size_t G,
                                const real *dgates, size_t N, real *C)
{
    const size_t GH = G * ws->H, nr = bptt_gemm_nr(ws->kernel);
    return (bptt_gemm_prod){ws->B, N, GH, GH, dgates, NULL, GH, 0, 0,
                            ws->wpack + packed_fwd_len(nr, G, ws->X, ws->H),
                            nr, GH * nr, C, N, NULL, 0, ws->kernel};
}

bptt_gemm_prod bptt_gemm_dh_prod(const bptt_cell_ws *ws, size_t G,
                                 const real *dgates, real *dh_prev)
{
    return back_prod(ws, G, dgates, ws->H, dh_prev);
}

bptt_gemm_prod bptt_gemm_dxh_prod(const bptt_cell_ws *ws, size_t G,
                                  const real *W, const real *dgates)
{
    const size_t XH = ws->X + ws->H;
    if (ws->wpack && ws->wpack_dx) /* all of W packed: the same sums */
        return back_prod(ws, G, dgates, XH, ws->dxh);
    return bptt_gemm_plain_prod(ws->kernel, ws->B, XH, G * ws->H, dgates,
                                G * ws->H, 0, W, XH, ws->dxh, XH, NULL, 0);
}

bptt_gemm_prod bptt_gemm_wgrad_prod_ld(int kernel, size_t GH, size_t XH,
                                       size_t rows, const real *dgates,
                                       const real *xh, size_t ldx, real *dW)
{ /* A = dgates^T, read in place; Bm = xh as it lies */
    return bptt_gemm_plain_prod(kernel, GH, XH, rows, dgates, GH, 1, xh, ldx,
                                dW, XH, NULL, 1);
}

bptt_gemm_prod bptt_gemm_wgrad_prod(int kernel, size_t GH, size_t XH,
                                    size_t rows, const real *dgates,
                                    const real *xh, real *dW)
{
    return bptt_gemm_wgrad_prod_ld(kernel, GH, XH, rows, dgates, xh, XH, dW);
}

/* out (B, G*H) := [x, h] W^T + b */
void bptt_gemm_gates(const bptt_cell_ws *ws, size_t G, const real *W,
                     const real *bias, const real *x, const real *h,
                     real *out)
{
    const size_t B = ws->B, X = ws->X, H = ws->H, XH = X + H, GH = G * H;
#ifdef HAVE_KERNEL
    if (ws->wpack && ws->kernel != BPTT_GEMM_CBLAS) {
        const gemm_args g = bptt_gemm_gates_prod(ws, G, bias, x, h, out);
        kernel_gemm(&g);
        return;
    }
#endif
    bptt_gemm_concat(ws, ws->xh, x, h);
    for (size_t r = 0; r < B; r++)
        memcpy(out + r * GH, bias, GH * sizeof(real));
    REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)GH,
              (int)XH, 1, ws->xh, (int)XH, W, (int)XH, 1, out, (int)GH);
}

/* db += dgates' rows, one after the other (in double); then dx (if
 * wanted) and dh_prev from dxh = dgates W.  The weight gradient is the
 * caller's (bptt_cell_weight_grads). */
void bptt_gemm_gates_backward(const bptt_cell_ws *ws, size_t G,
                              const real *W, const real *dgates, double *db,
                              real *dh_prev, real *dx)
{
    const size_t B = ws->B, X = ws->X, H = ws->H, XH = X + H, GH = G * H;
    for (size_t r = 0; r < B; r++) {
        const real *d = dgates + r * GH;
        SIMD
        for (size_t j = 0; j < GH; j++)
            db[j] += (double)d[j];
    }
    if (dx) {
#ifdef HAVE_KERNEL
        if (ws->kernel != BPTT_GEMM_CBLAS) {
            const gemm_args g = bptt_gemm_dxh_prod(ws, G, W, dgates);
            kernel_gemm(&g);
        } else
#endif
            gemm_on(ws->kernel, B, XH, GH, dgates, GH, W, XH, ws->dxh, XH,
                    0);
        for (size_t r = 0; r < B; r++) {
            memcpy(dx + r * X, ws->dxh + r * XH, X * sizeof(real));
            memcpy(dh_prev + r * H, ws->dxh + r * XH + X, H * sizeof(real));
        }
    } else { /* only the h columns of W: skip the input's share */
#ifdef HAVE_KERNEL
        if (ws->wpack && !ws->wpack_dx && ws->kernel != BPTT_GEMM_CBLAS) {
            /* W_h packed: same sums, in order */
            const gemm_args g = bptt_gemm_dh_prod(ws, G, dgates, dh_prev);
            kernel_gemm(&g);
            return;
        }
#endif
        gemm_on(ws->kernel, B, H, GH, dgates, GH, W + X, XH, dh_prev, H, 0);
    }
}

void bptt_gemm_weight_grads_ld(int kernel, size_t GH, size_t XH,
                               size_t rows, const real *dgates,
                               const real *xh, size_t ldx, real *dW)
{
    if (rows == 0)
        return;
#ifdef HAVE_KERNEL
    if (kernel != BPTT_GEMM_CBLAS) {
        const gemm_args g = bptt_gemm_wgrad_prod_ld(kernel, GH, XH, rows,
                                                    dgates, xh, ldx, dW);
        kernel_gemm(&g);
        return;
    }
#endif
    REAL_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)GH, (int)XH,
              (int)rows, 1, dgates, (int)GH, xh, (int)ldx, 1, dW, (int)XH);
}

void bptt_gemm_weight_grads(int kernel, size_t GH, size_t XH, size_t rows,
                            const real *dgates, const real *xh, real *dW)
{
    bptt_gemm_weight_grads_ld(kernel, GH, XH, rows, dgates, xh, XH, dW);
}

void bptt_cell_weight_grads(size_t GH, size_t XH, size_t rows,
                            const real *dgates, const real *xh, real *dW)
{
    bptt_gemm_weight_grads(bptt_gemm_kernel(), GH, XH, rows, dgates, xh, dW);
}
