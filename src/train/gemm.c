/* gemm.c: the per-step products of the cells (cell.h, gemm.h): an
 * AVX-512 GEMM kernel of our own with its weight packing, the cblas path
 * beside it, the choice between the two, the gate product of a step and
 * its backward share, and the weight gradient of a block of steps
 * (its determinism: doc/design.md 8.1).  The cell equations are in
 * cell.c. */
#include <stdlib.h>
#include <string.h>

#include "real_impl.h"
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
 * same all iteration.  OpenBLAS packs that matrix on every call, which
 * took about a fifth of an iteration; with AVX-512 we use a kernel of our
 * own instead, which reads the weights packed once per iteration
 * (bptt_cell_pack_weights: W^T for the forward op, W's h columns for
 * dh_prev) or, for dx, where they lie (W's rows).
 *
 *   C (M, N) = [C +] A (M, K) Bm (K, N),  A and C row-major,
 *   Bm in column panels of NR: element (k, j) at
 *   Bm[(j / NR) * pstride + k * ldb + j % NR]
 *   (a row-major matrix: ldb its row stride, pstride = NR; packed panels:
 *   ldb = NR, pstride = K * NR).
 *
 * Each element is a sum over k in increasing order with one fused
 * multiply-add per term, started from the bias, C or 0, and computed by
 * one thread: results do not depend on the thread count or on how rows
 * are grouped into tiles (they differ from cblas's in rounding).  Threads
 * take panels (no BLAS call inside the region).  Without AVX-512 (or
 * under valgrind, which hides it) every product goes to cblas as before;
 * a process uses one or the other throughout. */

#ifdef BPTT_GEMM_HAVE_KERNEL
#define HAVE_KERNEL 1
#include <immintrin.h>

#define KTARGET __attribute__((target("avx512f")))
#ifdef BPTT_DOUBLE
typedef __m512d vreal;
typedef __mmask8 vmask;
#define VL 8
#define V_MLOAD(m, p) _mm512_maskz_loadu_pd(m, p)
#define V_MSTORE(p, m, v) _mm512_mask_storeu_pd(p, m, v)
#define V_SET1(x) _mm512_set1_pd(x)
#define V_FMA(a, b, c) _mm512_fmadd_pd(a, b, c)
#define V_ZERO() _mm512_setzero_pd()
#else
typedef __m512 vreal;
typedef __mmask16 vmask;
#define VL 16
#define V_MLOAD(m, p) _mm512_maskz_loadu_ps(m, p)
#define V_MSTORE(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define V_SET1(x) _mm512_set1_ps(x)
#define V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_ZERO() _mm512_setzero_ps()
#endif
#define MR 8             /* rows of a tile */
#define NV 2             /* vectors across a tile */
#define NR (NV * VL)     /* columns of a tile and of a panel */

typedef bptt_gemm_prod gemm_args; /* gemm.h */

/* One tile: rows [i, i + mr) of A and C, the columns of panel p, the
 * lanes of vector v limited by mask[v].  mr and at are constants in each
 * instance (see tiles), so the accumulators live in registers; at: A is
 * read transposed (the 8 rows of a k lie side by side). */
#define UNROLL _Pragma("GCC unroll 8")
#define K_STEP(AR)                                                           \
    do {                                                                     \
        vreal bv[NV];                                                        \
        UNROLL for (int v = 0; v < NV; v++)                                  \
            bv[v] = V_MLOAD(mask[v], b + v * VL);                            \
        UNROLL for (int r = 0; r < mr; r++) {                                \
            const vreal av = V_SET1(AR);                                     \
            UNROLL for (int v = 0; v < NV; v++)                              \
                acc[r][v] = V_FMA(av, bv[v], acc[r][v]);                     \
        }                                                                    \
    } while (0)
#define K_LOOP(A, lda, kn)                                                   \
    do {                                                                     \
        const real *ar[MR];                                                  \
        UNROLL for (int r = 0; r < mr; r++) ar[r] = (A) + r * (lda);         \
        const size_t kend = (kn);                                            \
        for (size_t k = 0; k < kend; k++, b += ldb)                          \
            K_STEP(ar[r][k]);                                                \
    } while (0)
__attribute__((always_inline)) KTARGET static inline void
tile(const int mr, const int at, const gemm_args *g, size_t i, size_t p,
     const vmask *mask)
{
    const size_t ldc = g->ldc, ldb = g->ldb;
    real *C = g->C + i * ldc + p * NR;
    const real *b = g->Bm + p * g->pstride;
    vreal acc[MR][NV];
    if (!g->beta) /* C not read: ask for its lines now, to write them at
                     the end (a step's outputs land on fresh memory, such
                     as a checkpoint, whose lines would stall the stores) */
        UNROLL for (int r = 0; r < mr; r++)
            UNROLL for (int v = 0; v < NV; v++)
                __builtin_prefetch(C + r * ldc + v * VL, 1, 3);
    UNROLL for (int r = 0; r < mr; r++)
        UNROLL for (int v = 0; v < NV; v++)
            acc[r][v] = g->bias   ? V_MLOAD(mask[v], g->bias + p * NR + v * VL)
                        : g->beta ? V_MLOAD(mask[v], C + r * ldc + v * VL)
                                  : V_ZERO();
    if (at) {
        const real *a = g->A1 + i;
        const size_t lda = g->lda1;
        for (size_t k = 0; k < g->K; k++, b += ldb, a += lda)
            K_STEP(a[r]);
    } else {
        K_LOOP(g->A1 + i * g->lda1, g->lda1, g->K1);
        if (g->A2)
            K_LOOP(g->A2 + i * g->lda2, g->lda2, g->K - g->K1);
    }
    UNROLL for (int r = 0; r < mr; r++)
        UNROLL for (int v = 0; v < NV; v++)
            V_MSTORE(C + r * ldc + v * VL, mask[v], acc[r][v]);
}

/* One tile of any height (the rows left at i, at most MR). */
__attribute__((always_inline)) KTARGET static inline void
tile_at(const int at, const gemm_args *g, size_t i, size_t p,
        const vmask *mask)
{
    switch (g->M - i < MR ? g->M - i : MR) {
    case 8: tile(8, at, g, i, p, mask); break;
    case 7: tile(7, at, g, i, p, mask); break;
    case 6: tile(6, at, g, i, p, mask); break;
    case 5: tile(5, at, g, i, p, mask); break;
    case 4: tile(4, at, g, i, p, mask); break;
    case 3: tile(3, at, g, i, p, mask); break;
    case 2: tile(2, at, g, i, p, mask); break;
    case 1: tile(1, at, g, i, p, mask); break;
    default: break;
    }
}

/* Every row of panel p: tiles of MR rows, then the rest. */
__attribute__((always_inline)) KTARGET static inline void
tiles_of(const int at, const gemm_args *g, size_t p, const vmask *mask)
{
    for (size_t i = 0; i < g->M; i += MR)
        tile_at(at, g, i, p, mask);
}
KTARGET static void tiles(const gemm_args *g, size_t p, const vmask *mask)
{
    tiles_of(0, g, p, mask);
}

/* the lanes of panel p's vectors that lie inside N */
static void panel_masks(const gemm_args *g, size_t p, vmask *mask)
{
    const size_t cols = g->N - p * NR < NR ? g->N - p * NR : NR;
    for (int v = 0; v < NV; v++) {
        const size_t lanes = cols > (size_t)v * VL
                                 ? (cols - (size_t)v * VL < VL
                                        ? cols - (size_t)v * VL
                                        : VL)
                                 : 0;
        mask[v] = (vmask)((1u << lanes) - 1u);
    }
}

KTARGET static void kernel_gemm(const gemm_args *g)
{
    const size_t panels = (g->N + NR - 1) / NR;
    const int par = bptt_gemm_worth_threads(g->M, g->N, g->K);
    (void)par; /* read by the pragma only; unused in a build without OpenMP
                  (the clang fuzz build) */
    if (g->atrans) { /* row blocks, their A copied once (tile_range_t) */
        _Pragma("omp parallel if (par)")
        bptt_gemm_part(g, bptt_team_id(), bptt_team_size());
        return;
    }
    _Pragma("omp parallel for schedule(static) if (par)")
    for (size_t p = 0; p < panels; p++) {
        vmask mask[NV];
        panel_masks(g, p, mask);
        tiles(g, p, mask);
    }
}

/* Tiles [first, last) of the product, numbered panel by panel (the tiles
 * of panel 0 top to bottom, then panel 1's, ...). */
__attribute__((always_inline)) KTARGET static inline void
tile_range(const int at, const gemm_args *g, size_t first, size_t last)
{
    const size_t per = (g->M + MR - 1) / MR; /* tiles in a panel */
    size_t p = first / per;
    vmask mask[NV];
    panel_masks(g, p, mask);
    for (size_t k = first; k < last; k++) {
        if (k / per != p) {
            p = k / per;
            panel_masks(g, p, mask);
        }
        tile_at(at, g, (k % per) * MR, p, mask);
    }
}
KTARGET static void tile_range_n(const gemm_args *g, size_t first,
                                 size_t last)
{
    tile_range(0, g, first, last);
}
/* A read transposed (the weight gradient: A = dgates^T, whose rows of
 * G*H reals are often a power of two apart, so that the k of one tile fall
 * into a few cache sets): tiles [first, last) numbered row block by row
 * block (the panels of row block 0, then of row block 1, ...), taken kc
 * rows of k at a time: the kc rows of Bm (at most 512 KiB, half of a
 * 1 MiB L2, so that they stay in L2 while every row block passes over
 * them), and for each row block its A copied into kc rows of MR side by
 * side.  The sums are
 * unchanged: each tile starts its next kc from the C it stored (beta), so
 * every element is still one sum over k in order. */
#define KC_MAX 256
KTARGET static void tile_range_t(const gemm_args *g, size_t first,
                                 size_t last)
{
    const size_t panels = (g->N + NR - 1) / NR;
    size_t kc_len = (size_t)131072 / (g->N > 0 ? g->N : 1);
    kc_len = kc_len < 8 ? 8 : kc_len > KC_MAX ? KC_MAX : kc_len;
    real pack[KC_MAX * MR];
    for (size_t kc = 0; kc < g->K; kc += kc_len) {
        const size_t kn = g->K - kc < kc_len ? g->K - kc : kc_len;
        size_t k = first;
        while (k < last) {
            const size_t rb = k / panels, i = rb * MR;
            const size_t p0 = k % panels;
            const size_t p1 = (rb + 1) * panels < last ? panels
                                                       : last - rb * panels;
            const size_t mr = g->M - i < MR ? g->M - i : MR;
            for (size_t kk = 0; kk < kn; kk++)
                for (size_t r = 0; r < mr; r++)
                    pack[kk * MR + r] = g->A1[(kc + kk) * g->lda1 + i + r];
            gemm_args sub = *g;
            sub.M = mr;
            sub.K = sub.K1 = kn;
            sub.A1 = pack;
            sub.lda1 = MR;
            sub.Bm = g->Bm + kc * g->ldb;
            sub.C = g->C + i * g->ldc;
            if (kc > 0) { /* go on from the C stored */
                sub.bias = NULL;
                sub.beta = 1;
            }
            for (size_t p = p0; p < p1; p++) {
                vmask mask[NV];
                panel_masks(g, p, mask);
                tile_at(1, &sub, 0, p, mask);
            }
            k = rb * panels + p1;
        }
    }
}

/* A product's tiles, in either numbering. */
void bptt_gemm_part(const bptt_gemm_prod *g, int q, int P)
{
    const size_t tiles_all =
        (g->N + NR - 1) / NR * ((g->M + MR - 1) / MR);
    size_t first, last;
    bptt_share(tiles_all, q, P, &first, &last);
    if (first == last) /* nothing for this thread (or an empty product) */
        return;
    if (g->atrans)
        tile_range_t(g, first, last);
    else
        tile_range_n(g, first, last);
}

/* the CPU has AVX-512 (and the OS keeps its registers) */
static int kernel_possible(void)
{
    static int possible = -1;
    if (possible < 0) {
        __builtin_cpu_init();
        possible = __builtin_cpu_supports("avx512f") ? 1 : 0;
    }
    return possible;
}
#else
#define NR 1
static int kernel_possible(void) { return 0; }
/* A product's tiles, in either numbering. */
void bptt_gemm_part(const bptt_gemm_prod *g, int q, int P)
{
    (void)g, (void)q, (void)P; /* the team path needs the kernel */
}
#endif

/* 1: cblas for every product (bptt_cell_kernel_select(0), or the
 * environment's BPTT_GEMM_KERNEL=cblas, read at the first product, so that
 * a test suite or a run can be repeated on the cblas path); -1: not read */
static int kernel_off = -1;

static int kernel_on(void)
{
    if (kernel_off < 0) {
        const char *env = getenv("BPTT_GEMM_KERNEL");
        kernel_off = env && strcmp(env, "cblas") == 0;
    }
    return !kernel_off && kernel_possible();
}

int bptt_gemm_kernel_on(void) { return kernel_on(); }

int bptt_gemm_worth_threads(size_t M, size_t N, size_t K)
{
    return M * N * K >= 262144;
}

const char *bptt_cell_kernel(void)
{
    return kernel_on() ? "avx512" : "cblas";
}

int bptt_cell_kernel_select(int on)
{
    if (on && !kernel_possible())
        return -1;
    kernel_off = !on;
    return 0;
}

void bptt_cell_gemm(size_t M, size_t N, size_t K, const real *A, size_t lda,
                    const real *Bm, size_t ldb, real *C, size_t ldc, int beta)
{
#ifdef HAVE_KERNEL
    if (kernel_on()) {
        const gemm_args g = bptt_gemm_plain_prod(M, N, K, A, lda, 0, Bm, ldb,
                                                 C, ldc, NULL, beta);
        kernel_gemm(&g);
        return;
    }
#endif
    REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N,
              (int)K, 1, A, (int)lda, Bm, (int)ldb, beta ? 1 : 0, C,
              (int)ldc);
}

/* wpack holds two packings: W^T in panels of NR of its G*H columns
 * (forward: [x, h] W^T), then W's h columns, W[:, X:X+H], in panels of
 * NR of its H columns (backward: dh_prev = dgates W_h). */
static size_t packed_fwd_len(size_t G, size_t X, size_t H)
{
    return (G * H + NR - 1) / NR * NR * (X + H);
}

size_t bptt_cell_packed_len(size_t G, size_t X, size_t H)
{
    if (!kernel_on())
        return 0;
    return packed_fwd_len(G, X, H) + (H + NR - 1) / NR * NR * G * H;
}

/* B (K, N), element (k, j) at src[k * ks + j * js], into panels of NR
 * columns (k-major inside a panel, zero past column N) at dst. */
static void pack_panels(real *dst, const real *src, size_t K, size_t N,
                        size_t ks, size_t js)
{
    for (size_t p = 0; p < (N + NR - 1) / NR; p++, dst += K * NR)
        for (size_t k = 0; k < K; k++)
            for (size_t c = 0; c < NR; c++) {
                const size_t j = p * NR + c;
                dst[k * NR + c] = j < N ? src[k * ks + j * js] : 0;
            }
}

void bptt_cell_pack_weights(const bptt_cell_ws *ws, size_t G, const real *W,
                            real *wpack)
{
    const size_t X = ws->X, H = ws->H, XH = X + H, GH = G * H;
    pack_panels(wpack, W, XH, GH, 1, XH);  /* W^T: (k, j) = W[j][k] */
    pack_panels(wpack + packed_fwd_len(G, X, H), W + X, GH, H, XH,
                1);                        /* W_h: (k, j) = W[k][X + j] */
}

/* ---- the products, described (gemm.h) ---------------------------------- */

bptt_gemm_prod bptt_gemm_plain_prod(size_t M, size_t N, size_t K,
                                    const real *A, size_t lda, int atrans,
                                    const real *Bm, size_t ldb, real *C,
                                    size_t ldc, const real *bias, int beta)
{
    return (bptt_gemm_prod){M, N, K, K, A, NULL, lda, 0, atrans, Bm, ldb,
                            NR, C, ldc, bias, beta};
}

bptt_gemm_prod bptt_gemm_gates_prod(const bptt_cell_ws *ws, size_t G,
                                    const real *bias, const real *x,
                                    const real *h, real *out)
{
    const size_t X = ws->X, XH = X + ws->H;
    return (bptt_gemm_prod){ws->B, G * ws->H, XH, X, x, h, X, ws->H, 0,
                            ws->wpack, NR, XH * NR, out, G * ws->H, bias,
                            0};
}

bptt_gemm_prod bptt_gemm_dh_prod(const bptt_cell_ws *ws, size_t G,
                                 const real *dgates, real *dh_prev)
{
    const size_t GH = G * ws->H;
    return (bptt_gemm_prod){ws->B, ws->H, GH, GH, dgates, NULL, GH, 0, 0,
                            ws->wpack + packed_fwd_len(G, ws->X, ws->H), NR,
                            GH * NR, dh_prev, ws->H, NULL, 0};
}

bptt_gemm_prod bptt_gemm_dxh_prod(const bptt_cell_ws *ws, size_t G,
                                  const real *W, const real *dgates)
{
    const size_t XH = ws->X + ws->H, GH = G * ws->H;
    return bptt_gemm_plain_prod(ws->B, XH, GH, dgates, GH, 0, W, XH, ws->dxh,
                                XH, NULL, 0);
}

bptt_gemm_prod bptt_gemm_wgrad_prod(size_t GH, size_t XH, size_t rows,
                                    const real *dgates, const real *xh,
                                    real *dW)
{ /* A = dgates^T, read in place; Bm = xh as it lies */
    return bptt_gemm_plain_prod(GH, XH, rows, dgates, GH, 1, xh, XH, dW, XH,
                                NULL, 1);
}

/* out (B, G*H) := [x, h] W^T + b */
void bptt_gemm_gates(const bptt_cell_ws *ws, size_t G, const real *W,
                     const real *bias, const real *x, const real *h,
                     real *out)
{
    const size_t B = ws->B, X = ws->X, H = ws->H, XH = X + H, GH = G * H;
#ifdef HAVE_KERNEL
    if (ws->wpack && kernel_on()) {
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
        if (kernel_on()) {
            const gemm_args g = bptt_gemm_dxh_prod(ws, G, W, dgates);
            kernel_gemm(&g);
        } else
#endif
            bptt_cell_gemm(B, XH, GH, dgates, GH, W, XH, ws->dxh, XH, 0);
        for (size_t r = 0; r < B; r++) {
            memcpy(dx + r * X, ws->dxh + r * XH, X * sizeof(real));
            memcpy(dh_prev + r * H, ws->dxh + r * XH + X, H * sizeof(real));
        }
    } else { /* only the h columns of W: skip the input's share */
#ifdef HAVE_KERNEL
        if (ws->wpack && kernel_on()) { /* W_h packed: same sums, in order */
            const gemm_args g = bptt_gemm_dh_prod(ws, G, dgates, dh_prev);
            kernel_gemm(&g);
            return;
        }
#endif
        bptt_cell_gemm(B, H, GH, dgates, GH, W + X, XH, dh_prev, H, 0);
    }
}

void bptt_cell_weight_grads(size_t GH, size_t XH, size_t rows,
                            const real *dgates, const real *xh, real *dW)
{
    if (rows == 0)
        return;
#ifdef HAVE_KERNEL
    if (kernel_on()) {
        const gemm_args g =
            bptt_gemm_wgrad_prod(GH, XH, rows, dgates, xh, dW);
        kernel_gemm(&g);
        return;
    }
#endif
    REAL_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)GH, (int)XH,
              (int)rows, 1, dgates, (int)GH, xh, (int)XH, 1, dW, (int)XH);
}
