/* gemm_kernel.h: the GEMM kernel of gemm.c, written once for every vector
 * width.  gemm.c includes it once per instruction set, after defining
 * (KSUF itself, the rest through gemm_isa.h):
 *
 *   KSUF          the suffix of this instance's names (avx512, avx2)
 *   KTARGET       the function attribute that turns the set on
 *   vreal, vmask  a vector of VL reals, and a lane mask for it
 *   VL            reals in a vector
 *   V_LOAD(p), V_MLOAD(m, p), V_STORE(p, v), V_MSTORE(p, m, v), V_SET1(x),
 *   V_FMA(a, b, c), V_ZERO()
 *                 load (all lanes, masked), store (all lanes, masked),
 *                 broadcast,
 *                 a * b + c in one rounding, zero
 *   V_MASK(n)     the mask of the first n lanes (0 <= n <= VL)
 *   MR            rows of a tile (at most 8)
 *   NV            vectors across a tile
 *   KU            k a pass of a tile's loop takes (unrolled) in the tiles
 *                 of full panels MR or MR - 1 rows high, before it counts
 *                 what it asks for ahead (one in every other tile)
 *
 * (and gemm_args, the type of gemm.h's bptt_gemm_prod), and undefines
 * them at its end, so that the next instance can define
 * its own.  Everything here is static, so each instance
 * is its own; the only names it gives gemm.c are kgemm_KSUF (a whole
 * product, threads of its own) and kpart_KSUF (a thread's share of one,
 * inside a region), and knr_KSUF and kmr_KSUF, its panel width and tile
 * height.
 *
 * What the kernel computes (gemm.h, bptt_gemm_prod):
 *
 *   C (M, N) = [C +] A (M, K) Bm (K, N),  A and C row-major,
 *   Bm in column panels of NR: element (k, j) at
 *   Bm[(j / NR) * pstride + k * ldb + j % NR].
 *
 * Each element is a sum over k in increasing order with one fused
 * multiply-add per term, started from the bias, C or 0, and computed by
 * one thread.  The width of a vector only decides how many elements go
 * side by side: every instance gives every element the same bits
 * (doc/design.md 8.1). */

#define KPASTE2(a, b) a##_##b
#define KPASTE(a, b) KPASTE2(a, b)
#define KFN(name) KPASTE(name, KSUF)

#define KNR (NV * VL) /* columns of a tile and of a panel */
enum { KFN(knr) = KNR, KFN(kmr) = MR };

#define KUNROLL _Pragma("GCC unroll 8")
/* ahead, ahead_every: a tile asks for one row of Bm's next panel (ahead,
 * then ahead + ldb, ...) for every ahead_every of its k, counted after
 * each pass of ku k (see tile); NO_AHEAD: never (the count stays below it within any
 * K) */
#define NO_AHEAD 0xffffffffu
#define K_BLOAD(v) (full ? V_LOAD(b + (v) * VL) : V_MLOAD(mask[v], b + (v) * VL))
/* x stays in a vector register: an empty asm that claims to change it.
 * Else GCC, short of AVX2's 16 registers, folded B's load into every
 * multiply-add that uses it (six loads of one vector a k instead of one)
 * and spilled an accumulator; on AVX-512 it changes nothing. */
#define K_IN_REGISTER(x) __asm__("" : "+v"(x))
#define K_STEP(AR)                                                           \
    do {                                                                     \
        vreal bv[NV];                                                        \
        KUNROLL for (int v = 0; v < NV; v++) {                               \
            bv[v] = K_BLOAD(v);                                              \
            K_IN_REGISTER(bv[v]);                                            \
        }                                                                    \
        KUNROLL for (int r = 0; r < mr; r++) {                               \
            const vreal av = V_SET1(AR);                                     \
            KUNROLL for (int v = 0; v < NV; v++)                             \
                acc[r][v] = V_FMA(av, bv[v], acc[r][v]);                     \
        }                                                                    \
    } while (0)
/* the rows of the next panel due by now (one for every ahead_every of
 * the tile's k), asked for into L2 */
#define K_AHEAD()                                                            \
    while (ahead_in >= ahead_every) {                                        \
        ahead_in -= ahead_every;                                             \
        KUNROLL for (size_t o = 0; o < KNR; o += 64 / sizeof(real))          \
            __builtin_prefetch(ahead + o, 0, 2);                             \
        ahead += ldb;                                                        \
    }
#define K_LOOP(A, lda, kn)                                                   \
    do {                                                                     \
        const real *ar[MR];                                                  \
        KUNROLL for (int r = 0; r < mr; r++) ar[r] = (A) + r * (lda);        \
        const size_t kend = (kn);                                            \
        size_t k = 0;                                                        \
        for (; k + ku <= kend; k += ku) { /* ku k, then the panel ahead */  \
            KUNROLL for (size_t u = 0; u < ku; u++, b += ldb)                \
                K_STEP(ar[r][k + u]);                                        \
            ahead_in += ku;                                                  \
            K_AHEAD()                                                        \
        }                                                                    \
        for (; k < kend; k++, b += ldb) {                                    \
            K_STEP(ar[r][k]);                                                \
            ahead_in++;                                                      \
            K_AHEAD()                                                        \
        }                                                                    \
    } while (0)
/* One tile: rows [i, i + mr) of A and C, the columns of panel p, the
 * lanes of vector v limited by mask[v] (full: every lane, so that the
 * loads need no mask).  mr, at and full are constants in each instance
 * (see tile_at), so the accumulators live in registers; at: A is read
 * transposed (the rows of a k lie side by side). */
__attribute__((always_inline)) KTARGET static inline void
KFN(tile)(const int mr, const int at, const int full, const gemm_args *g,
          size_t i, size_t p, const vmask *mask, const real *ahead,
          unsigned ahead_every)
{
    unsigned ahead_in = 0; /* k since the last row asked for */
    /* KU k a pass in full panels' tiles of MR or MR - 1 rows (those of
       B = 32), one in the others, which seldom run: KU in all 32
       instances of a set made gemm.c far slower to compile, above all
       with the sanitizers (results/performance-log.md, "Four k a pass,
       and exp on fused multiply-adds") */
    const size_t ku = full && mr >= MR - 1 ? KU : 1;
    const size_t ldc = g->ldc, ldb = g->ldb;
    real *C = g->C + i * ldc + p * KNR;
    const real *b = g->Bm + p * g->pstride;
    vreal acc[MR][NV];
    if (!g->beta) /* C not read: ask for its lines now, to write them at
                     the end (a step's outputs land on fresh memory, such
                     as a checkpoint, whose lines would stall the stores) */
        KUNROLL for (int r = 0; r < mr; r++)
            KUNROLL for (int v = 0; v < NV; v++)
                __builtin_prefetch(C + r * ldc + v * VL, 1, 3);
    /* The weight gradient's tiles (at) load and store C without masks
       where the panel is full: the masked loads and stores of C, with
       every lane on, cost that product a large share of its time.  The
       step products' tiles keep them: unmasked there they ran no faster,
       and GCC gave AVX2's loops more register moves (the figures:
       results/performance-log.md, "Masks and registers, on a Zen 5
       core"). */
    const int whole = at && full;
    KUNROLL for (int r = 0; r < mr; r++)
        KUNROLL for (int v = 0; v < NV; v++)
            acc[r][v] = g->bias   ? V_MLOAD(mask[v], g->bias + p * KNR + v * VL)
                        : !g->beta ? V_ZERO()
                        : whole    ? V_LOAD(C + r * ldc + v * VL)
                                   : V_MLOAD(mask[v], C + r * ldc + v * VL);
    if (at) {
        const real *a = g->A1 + i;
        const size_t lda = g->lda1;
        _Pragma("GCC unroll 4")
        for (size_t k = 0; k < g->K; k++, b += ldb, a += lda)
            K_STEP(a[r]);
    } else {
        K_LOOP(g->A1 + i * g->lda1, g->lda1, g->K1);
        if (g->A2)
            K_LOOP(g->A2 + i * g->lda2, g->lda2, g->K - g->K1);
    }
    KUNROLL for (int r = 0; r < mr; r++)
        KUNROLL for (int v = 0; v < NV; v++)
            if (whole)
                V_STORE(C + r * ldc + v * VL, acc[r][v]);
            else
                V_MSTORE(C + r * ldc + v * VL, mask[v], acc[r][v]);
}

/* One tile of height h (1 to MR) at row i. */
#define K_HEIGHT(n, at, full)                                                \
    case n:                                                                  \
        if ((n) <= MR)                                                       \
            KFN(tile)((n) <= MR ? (n) : MR, at, full, g, i, p, mask, ahead,  \
                      ahead_every);                                          \
        break;
#define K_HEIGHTS(at, full)                                                  \
    switch (h) {                                                             \
        K_HEIGHT(8, at, full)                                                \
        K_HEIGHT(7, at, full)                                                \
        K_HEIGHT(6, at, full)                                                \
        K_HEIGHT(5, at, full)                                                \
        K_HEIGHT(4, at, full)                                                \
        K_HEIGHT(3, at, full)                                                \
        K_HEIGHT(2, at, full)                                                \
        K_HEIGHT(1, at, full)                                                \
    default: break;                                                          \
    }
__attribute__((always_inline)) KTARGET static inline void
KFN(tile_at)(const int at, const gemm_args *g, size_t i, size_t h, size_t p,
             const vmask *mask, int full, const real *ahead,
             unsigned ahead_every)
{
    if (full) {
        K_HEIGHTS(at, 1)
    } else {
        K_HEIGHTS(at, 0)
    }
}

/* the lanes of panel p's vectors that lie inside N; 1 when all do */
KTARGET static int KFN(panel_masks)(const gemm_args *g, size_t p,
                                    vmask *mask)
{
    const size_t cols = g->N - p * KNR < KNR ? g->N - p * KNR : KNR;
    for (int v = 0; v < NV; v++) {
        const size_t lanes = cols > (size_t)v * VL
                                 ? (cols - (size_t)v * VL < VL
                                        ? cols - (size_t)v * VL
                                        : VL)
                                 : 0;
        mask[v] = V_MASK((int)lanes);
    }
    return cols == KNR;
}

/* The M rows of a panel go to per = ceil(M / MR) tiles whose heights
 * differ by one at most: tile r starts at row r M / per.  (Tiles of MR
 * rows and a rest would leave 32 rows on AVX2 as 6, 6, 6, 6, 6 and 2, and
 * the tile of 2 has only 4 sums to keep two FMA units busy, each waiting
 * for its previous multiply-add: results/performance-log.md, "Asking for
 * the next panel".) */
static inline size_t KFN(tile_row)(size_t r, size_t M, size_t per)
{
    return r * M / per;
}

/* Every row of panel p. */
KTARGET static void KFN(tiles)(const gemm_args *g, size_t p)
{
    vmask mask[NV];
    const int full = KFN(panel_masks)(g, p, mask);
    const size_t per = (g->M + MR - 1) / MR;
    for (size_t r = 0; r < per; r++) {
        const size_t i = KFN(tile_row)(r, g->M, per);
        KFN(tile_at)(0, g, i, KFN(tile_row)(r + 1, g->M, per) - i, p, mask,
                     full, NULL, NO_AHEAD);
    }
}

/* Tiles [first, last) of the product, numbered panel by panel (the tiles
 * of panel 0 top to bottom, then panel 1's, ...). */
KTARGET static void KFN(tile_range_n)(const gemm_args *g, size_t first,
                                      size_t last)
{
    const size_t per = (g->M + MR - 1) / MR; /* tiles in a panel */
    size_t p = first / per;
    vmask mask[NV];
    int full = KFN(panel_masks)(g, p, mask);
    for (size_t k = first; k < last; k++) {
        if (k / per != p) {
            p = k / per;
            full = KFN(panel_masks)(g, p, mask);
        }
        /* If the next panel is this thread's too, tile r of this one asks
           for its rows from ceil(r K / per) on, one every per k: the
           panel's tiles together ask for all of it, evenly, while they
           work (results/performance-log.md, "Asking for the next
           panel"). */
        const size_t r = k % per, i = KFN(tile_row)(r, g->M, per);
        const int next = (p + 1) * per < last;
        KFN(tile_at)(0, g, i, KFN(tile_row)(r + 1, g->M, per) - i, p, mask,
                     full,
                     next ? g->Bm + (p + 1) * g->pstride +
                                (r * g->K + per - 1) / per * g->ldb
                          : NULL,
                     next ? (unsigned)per : NO_AHEAD);
    }
}

/* A read transposed (the weight gradient: A = dgates^T, whose rows of
 * G*H reals are often a power of two apart, so that the k of one tile fall
 * into a few cache sets): tiles [first, last) numbered row block by row
 * block (the panels of row block 0, then of row block 1, ...), taken kc
 * rows of k at a time: the kc rows of Bm (a quarter of the core's L2,
 * bptt_gemm_wgrad_k_rows, so that they stay in L2 while every row block
 * passes over them), and for each row block its A copied into kc rows of
 * MR side by side.  The sums are unchanged: each tile starts its next kc from the C
 * it stored (beta), so every element is still one sum over k in order. */
KTARGET static void KFN(tile_range_t)(const gemm_args *g, size_t first,
                                      size_t last)
{
    const size_t panels = (g->N + KNR - 1) / KNR;
    const size_t kc_len = bptt_gemm_wgrad_k_rows(g->N);
    real pack[BPTT_GEMM_KC_MAX * MR];
    for (size_t kc = 0; kc < g->K; kc += kc_len) {
        const size_t kn = g->K - kc < kc_len ? g->K - kc : kc_len;
        size_t k = first;
        while (k < last) {
            const size_t rb = k / panels, i = rb * MR;
            const size_t p0 = k % panels;
            const size_t p1 = (rb + 1) * panels < last ? panels
                                                       : last - rb * panels;
            const size_t mr = g->M - i < MR ? g->M - i : MR;
            const real *a = g->A1 + kc * g->lda1 + i;
            if (mr == MR) /* a copy of a known size: a vector or two */
                for (size_t kk = 0; kk < kn; kk++)
                    memcpy(pack + kk * MR, a + kk * g->lda1,
                           MR * sizeof(real));
            else
                for (size_t kk = 0; kk < kn; kk++)
                    for (size_t r = 0; r < mr; r++)
                        pack[kk * MR + r] = a[kk * g->lda1 + r];
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
                const int full = KFN(panel_masks)(g, p, mask);
                KFN(tile_at)(1, &sub, 0, mr, p, mask, full, NULL, NO_AHEAD);
            }
            k = rb * panels + p1;
        }
    }
}

/* Thread q's share of P of a product (gemm.h, bptt_gemm_part). */
static void KFN(kpart)(const gemm_args *g, int q, int P)
{
    const size_t tiles_all =
        (g->N + KNR - 1) / KNR * ((g->M + MR - 1) / MR);
    size_t first, last;
    bptt_share(tiles_all, q, P, &first, &last);
    if (first == last) /* nothing for this thread (or an empty product) */
        return;
    if (g->atrans)
        KFN(tile_range_t)(g, first, last);
    else
        KFN(tile_range_n)(g, first, last);
}

/* A whole product, with threads of its own where it is worth them. */
static void KFN(kgemm)(const gemm_args *g)
{
    const size_t panels = (g->N + KNR - 1) / KNR;
    const int par = bptt_gemm_worth_threads(g->M, g->N, g->K);
    (void)par; /* read by the pragma only; unused in a build without OpenMP
                  (the clang fuzz build) */
    if (g->atrans) { /* row blocks, their A copied once (tile_range_t) */
        _Pragma("omp parallel if (par)")
        KFN(kpart)(g, bptt_team_id(), bptt_team_size());
        return;
    }
    _Pragma("omp parallel for schedule(static) if (par)")
    for (size_t p = 0; p < panels; p++)
        KFN(tiles)(g, p);
}

#undef K_HEIGHTS
#undef K_HEIGHT
#undef K_LOOP
#undef K_AHEAD
#undef K_STEP
#undef K_BLOAD
#undef K_IN_REGISTER
#undef KUNROLL
#undef NO_AHEAD
#undef KNR
#undef KFN
#undef KPASTE
#undef KPASTE2
/* the parameters */
#undef KSUF
#undef KTARGET
#undef vreal
#undef vmask
#undef VL
#undef V_LOAD
#undef V_MLOAD
#undef V_STORE
#undef V_MSTORE
#undef V_SET1
#undef V_FMA
#undef V_ZERO
#undef V_MASK
#undef MR
#undef NV
#undef KU
