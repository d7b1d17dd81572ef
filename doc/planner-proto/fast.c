/* fast.c: MSM DP (h=1, s=alpha) with "trivial-left window" + certification.
 * For a cell (len, m, kind) past the trivial prefix F_k(m) of its column,
 * splits whose left part is fully stored (L(y) = y) are evaluated through a
 * sliding-window minimum of V(j) = R(j, m') - 2 j, and the rest is bounded by
 * L(y) >= y: a prefix minimum of the same V.  If the window minimum is at
 * most that bound the cell is exact; otherwise the cell is scanned plainly.
 * usage: fast t alpha W [check]   (check: compare with plain DP) */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

typedef int32_t cost_t;
#define INF ((int64_t)1 << 30)
static int T, W, A;
static size_t T1;
#define NA 3
static const int AS[NA] = {2, 3, 4};
static cost_t *C[2], *PM[NA][2]; static int64_t *G[NA][2]; /* PM[k][m][j] = min_{1<=i<=j} C[k][m][i] - 2i */
#define IX(m, l) ((size_t)(m) * T1 + (l))
static inline int64_t at(int k, int m, int l) { return m < 0 ? INF : C[k][IX(m, l)]; }
static inline int64_t pm(int a, int k, int m, int j) { return (m < 0 || j < 1) ? INF : PM[a][k][IX(m, j)]; }

typedef struct { int32_t *q; int head, tail, cap; } deq; /* indices j */
static deq *DQ[2][2]; /* [kind][type][m] */
typedef struct { int64_t mn[NA]; int next; } pref;
static pref *PR[2][2];
static inline int64_t prefq(int k, int ty, int m, int rk, int rm, int jmax, int a)
{
    pref *p = &PR[k][ty][m];
    if (!p->next) { p->next = 1; for (int i = 0; i < NA; i++) p->mn[i] = INF; }
    while (p->next <= jmax) {
        int64_t c = at(rk, rm, p->next);
        if (c < INF) for (int i = 0; i < NA; i++) { int64_t v = c - (int64_t)AS[i] * p->next; if (v < p->mn[i]) p->mn[i] = v; }
        p->next++;
    }
    return jmax < 1 ? INF : p->mn[a];
}
static int *F[2];
typedef struct { int32_t *v; int n, cap; } ivec;
static ivec *BP[2]; /* [k][m]: lengths l where C(l)-C(l-1) != C(l-1)-C(l-2) */
static int useBP;
static void bp_add(int k, int m, int l) { ivec *b = &BP[k][m]; if (b->n == b->cap) { b->cap = b->cap ? 2 * b->cap : 16; b->v = realloc(b->v, b->cap * 4); } b->v[b->n++] = l; }
static int64_t bpscan(int k, int l, int m)
{
    /* exact: min over options; split values are sums of piecewise-linear
     * functions of y, so their minimum is at a piece endpoint */
    int64_t best = INF;
    if (l >= 2) { int64_t v = 1 + at(1, m - A, l - 1); if (v < best) best = v; }
    { int64_t v = l + at(k, m, l - 1); if (v < best) best = v; }
    if (best <= l) return best;
    for (int ty = 0; ty < 2; ty++) {
        int rm = ty == 0 ? (k == 0 ? m - 1 - A : m - A) : (k == 1 ? m : m - 1);
        int rk = ty == 0 ? 1 : 0;
        int ylo = ty == 0 ? 2 : 1, yhi = l - 1, sh = ty == 0 ? 1 : 0; /* left arg = y - sh */
        if (rm < 0 || yhi < ylo) continue;
#define EV(yy) do { int y_ = (yy); if (y_ >= ylo && y_ <= yhi) { int64_t v = y_ + at(rk, rm, l - y_) + at(k, m, y_ - sh); if (v < best) best = v; } } while (0)
        EV(ylo); EV(yhi);
        ivec *bl = &BP[k][m];
        for (int i = 0; i < bl->n && bl->v[i] - 1 + sh <= yhi; i++) { int y = bl->v[i] - 1 + sh; EV(y); }
        ivec *br = &BP[rk][rm];
        for (int i = 0; i < br->n && br->v[i] - 1 <= l - ylo; i++) { int y = l - (br->v[i] - 1); EV(y); }
#undef EV
    }
    return best;
}
static long fbm[1<<16]; static long fallback, windowed, plaincells;

static int64_t plain(int k, int l, int m)
{
    int64_t best = INF;
    if (l >= 2) { int64_t v = 1 + at(1, m - A, l - 1); if (v < best) best = v; }
    { int64_t v = l + at(k, m, l - 1); if (v < best) best = v; }
    if (best <= l) return best;
    int rm = k == 0 ? m - 1 - A : m - A;
    if (rm >= 0)
        for (int y = 2; y < l; y++) { int64_t v = y + at(1, rm, l - y) + at(k, m, y - 1); if (v < best) best = v; }
    if (best <= l) return best;
    rm = k == 1 ? m : m - 1;
    if (rm >= 0)
        for (int y = 1; y < l; y++) { int64_t v = y + at(0, rm, l - y) + at(k, m, y); if (v < best) best = v; }
    return best;
}

static inline int64_t V(int rk, int rm, int j) { int64_t c = at(rk, rm, j); return c >= INF ? INF : c - 2 * j; }

/* window min over j in [lo, l-1] of V(rk, rm, j), deque for (k, ty, m) */
static int64_t window(int k, int ty, int m, int rk, int rm, int l, int lo)
{
    deq *d = &DQ[k][ty][m];
    if (!d->q) { d->cap = l + 2 > 64 ? l + 2 : 64; d->q = malloc(sizeof(int32_t) * d->cap); d->head = d->tail = 0; }
    /* push j = l-1 (and any missed since the deque started) */
    int j = l - 1;
    if (d->tail == d->head || d->q[(d->tail - 1 + d->cap) % d->cap] < j - 1) {
        /* (re)start: fill from lo */
        d->head = d->tail = 0;
        for (int i = lo; i <= j; i++) {
            int64_t v = V(rk, rm, i);
            while (d->tail > d->head && V(rk, rm, d->q[(d->tail - 1) % d->cap]) >= v) d->tail--;
            if (d->tail - d->head >= d->cap) abort();
            d->q[d->tail % d->cap] = i; d->tail++;
        }
    } else {
        int64_t v = V(rk, rm, j);
        while (d->tail > d->head && V(rk, rm, d->q[(d->tail - 1) % d->cap]) >= v) d->tail--;
        d->q[d->tail % d->cap] = j; d->tail++;
    }
    while (d->q[d->head % d->cap] < lo) d->head++;
    return V(rk, rm, d->q[d->head % d->cap]);
}

static void cell(int k, int l, int m)
{
    size_t ix = IX(m, l);
    int64_t best;
    if (l == 0) best = (k == 0 && m < 1) ? INF : 0;
    else if (k == 0 && m < 1) best = INF;
    else if (l <= F[k][m] + 2 || l < 4) { best = useBP ? bpscan(k, l, m) : plain(k, l, m); plaincells++; }
    else {
        const int f = F[k][m];
        best = INF;
        { int64_t v = 1 + at(1, m - A, l - 1); if (v < best) best = v; }
        { int64_t v = l + at(k, m, l - 1); if (v < best) best = v; }
        int64_t lb = INF; /* bound on splits with nontrivial left part */
        /* internal y in [2, f+1]: 2y - 1 + S(l-y, rm); j = l - y in [l-f-1, l-2] */
        int rm = k == 0 ? m - 1 - A : m - A;
        if (rm >= 0) {
            /* window j in [l-f-1, l-2]: use deque over j <= l-2, i.e. call with "l-1" */
            int64_t w = window(k, 0, m, 1, rm, l - 1, l - f - 1);
            if (w < INF) { int64_t v = 2 * (int64_t)l - 1 + w; if (v < best) best = v; }
            /* y in [f+2, l-1]: j in [1, l-f-2], L(y-1) >= y-1 */
            int64_t b = -INF;
            for (int a = 0; a < NA; a++) {
                int64_t p = prefq(k, 0, m, 1, rm, l - f - 2, a), g = G[a][k][m];
                int64_t v = (p >= INF || g >= INF) ? INF : p + (int64_t)AS[a] * (l - 1) + 1 + g;
                if (v > b) b = v;
            }
            if (b < lb) lb = b;
        }
        rm = k == 1 ? m : m - 1;
        if (rm >= 0) {
            /* hidden y in [1, f]: 2y + H(l-y, rm); j in [l-f, l-1] */
            int64_t w = window(k, 1, m, 0, rm, l, l - f);
            if (w < INF) { int64_t v = 2 * (int64_t)l + w; if (v < best) best = v; }
            int64_t b = -INF;
            for (int a = 0; a < NA; a++) {
                int64_t p = prefq(k, 1, m, 0, rm, l - f - 1, a), g = G[a][k][m];
                int64_t v = (p >= INF || g >= INF) ? INF : p + (int64_t)AS[a] * l + g;
                if (v > b) b = v;
            }
            if (b < lb) lb = b;
        }
        if (best > lb) { best = useBP ? bpscan(k, l, m) : plain(k, l, m); fallback++; fbm[m]++; }
        else windowed++;
    }
    if (best >= INF) best = INF;
    C[k][ix] = (cost_t)best;
    if (l >= 2) { int64_t d1 = at(k, m, l) - at(k, m, l - 1), d0 = at(k, m, l - 1) - at(k, m, l - 2); if (d1 != d0) bp_add(k, m, l); }
    else if (l == 1) bp_add(k, m, 1);
    if (l >= 1 && best == l && F[k][m] == l - 1) F[k][m] = l;
    if (l > F[k][m] && best < INF)
        for (int a = 0; a < NA; a++) { int64_t v = best + (int64_t)(1 - AS[a]) * l; if (v < G[a][k][m]) G[a][k][m] = v; }
}

int main(int argc, char **argv)
{
    T = atoi(argv[1]); A = atoi(argv[2]); W = atoi(argv[3]);
    int check = argc > 4;
    int full = A * (T - 1) > T ? A * (T - 1) : T;
    if (W > full + 1) W = full + 1;
    T1 = T + 1;
    size_t n = (size_t)(W + 1) * T1;
    for (int k = 0; k < 2; k++) {
        C[k] = malloc(n * sizeof(cost_t));
        for (int a = 0; a < NA; a++) { G[a][k] = malloc((W + 1) * 8); for (int m = 0; m <= W; m++) G[a][k][m] = INF; }
        F[k] = calloc(W + 1, sizeof(int)); BP[k] = calloc(W + 1, sizeof(ivec)); useBP = getenv("BP") != NULL;
        for (int ty = 0; ty < 2; ty++) { DQ[k][ty] = calloc(W + 1, sizeof(deq)); PR[k][ty] = calloc(W + 1, sizeof(pref)); }
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int l = 0; l <= T; l++)
        for (int m = 0; m <= W; m++)
            for (int k = 0; k < 2; k++) cell(k, l, m);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double sec = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    printf("t=%d a=%d W=%d time=%.3fs windowed=%ld fallback=%ld plaincells=%ld top=%lld\n", T, A, W, sec, windowed, fallback, plaincells, (long long)at(0, W, T));
    if (getenv("RUNS")) {
        long runs = 0, maxr = 0, dmax = 0, cells = 0;
        for (int k = 0; k < 2; k++) for (int m = 1; m <= W; m++) {
            long r = 0; int64_t pd = -1;
            for (int l = 1; l <= T; l++) { int64_t d = at(k, m, l) - at(k, m, l - 1); if (d != pd) { r++; pd = d; } if (d > dmax && at(k,m,l) < INF && at(k,m,l-1) < INF) dmax = d; cells++; }
            runs += r; if (r > maxr) maxr = r;
            if (k == 0 && (m <= 8 || m == 16 || m == 32 || m == 64 || m == 128 || m == 256 || m == 1000 || m == 2000 || m==4000)) printf("  col H m=%d runs=%ld F=%d\n", m, r, F[0][m]);
        }
        printf("runs: total=%ld (%.4f per cell) max per column=%ld maxdiff=%ld\n", runs, (double)runs / cells, maxr, dmax);
    }
    if (getenv("CF")) {
        for (int k = 0; k < 2; k++) {
            int lastbad = -1; long bp = 0;
            for (int m = 0; m <= W; m++) {
                int f = F[k][m], ok = 1;
                for (int l = 0; l <= T && ok; l++) { int64_t e = 2 * (int64_t)l - f; if (e < l) e = l; if (at(k, m, l) != e) ok = 0; }
                if (!ok) lastbad = m;
                bp += BP[k][m].n;
            }
            printf("kind %c: closed form max(l, 2l-F(m)) holds for all m > %d (W=%d); F(W)=%d; F formula check: ", "HS"[k], lastbad, W, F[k][W]);
            int fbad = 0; for (int m = A + 1; m <= W; m++) { int e = k == 0 ? (m - 1) / A + 1 : m / A + 1; if (F[k][m] != e && F[k][m] < T) fbad++; }
            printf("mismatches vs F=%s: %d; breakpoints stored=%ld\n", k == 0 ? "(m-1)/a+1" : "m/a+1", fbad, bp);
        }
    }
    if (getenv("FBM")) for (int m = 0; m <= W; m++) if (fbm[m]) printf("m=%d fb=%ld F=%d\n", m, fbm[m], F[0][m]);
    if (check) {
        /* plain DP into fresh arrays */
        cost_t *F0 = C[0], *F1 = C[1];
        C[0] = malloc(n * sizeof(cost_t)); C[1] = malloc(n * sizeof(cost_t));
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int l = 0; l <= T; l++)
            for (int m = 0; m <= W; m++)
                for (int k = 0; k < 2; k++) {
                    int64_t b;
                    if (l == 0) b = (k == 0 && m < 1) ? INF : 0;
                    else if (k == 0 && m < 1) b = INF;
                    else b = plain(k, l, m);
                    C[k][IX(m, l)] = (cost_t)(b >= INF ? INF : b);
                }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double sp = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
        long bad = 0;
        for (size_t i = 0; i < n; i++) bad += (C[0][i] != F0[i]) + (C[1][i] != F1[i]);
        printf("  check: mismatches=%ld plain(no early exit)=%.3fs\n", bad, sp);
    }
    return 0;
}
