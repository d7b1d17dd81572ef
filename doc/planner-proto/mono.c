/* mono.c: plain MSM DP (h=1, s=alpha) with argmin sets per (kind, type);
 * monotonicity statistics; check against library table. */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include "bptt.h"

#define INF ((int64_t)1 << 40)
static int T, W, A; /* t, width, alpha */
static int64_t *C[2];           /* cost[kind][m*(T+1)+len] */
static int32_t *LO[2][2], *HI[2][2]; /* [kind][type: 0 int(y>=2), 1 hid] */
#define IX(m, l) ((size_t)(m) * (T + 1) + (l))
static inline int64_t at(int k, int m, int l) { return m < 0 ? INF : C[k][IX(m, l)]; }

static void cell(int k, int l, int m)
{
    size_t ix = IX(m, l);
    for (int ty = 0; ty < 2; ty++) LO[k][ty][ix] = HI[k][ty][ix] = 0;
    if (l == 0) { C[k][ix] = (k == 0 && m < 1) ? INF : 0; return; }
    if (k == 0 && m < 1) { C[k][ix] = INF; return; }
    int64_t best = INF;
    /* y=1 internal */
    if (l >= 2) { int64_t v = 1 + at(1, m - A, l - 1); if (v < best) best = v; }
    /* none */
    { int64_t v = l + at(k, m, l - 1); if (v < best) best = v; }
    /* internal y=2..l-1 */
    {
        int rm = k == 0 ? m - 1 - A : m - A;
        int64_t b = INF; int lo = 0, hi = 0;
        if (rm >= 0)
            for (int y = 2; y < l; y++) {
                int64_t v = y + at(1, rm, l - y) + at(k, m, y - 1);
                if (v < b) { b = v; lo = hi = y; } else if (v == b && b < INF) hi = y;
            }
        if (b < INF) { LO[k][0][ix] = lo; HI[k][0][ix] = hi; }
        if (b < best) best = b;
    }
    /* hidden y=1..l-1 */
    {
        int rm = k == 1 ? m : m - 1;
        int64_t b = INF; int lo = 0, hi = 0;
        if (rm >= 0)
            for (int y = 1; y < l; y++) {
                int64_t v = y + at(0, rm, l - y) + at(k, m, y);
                if (v < b) { b = v; lo = hi = y; } else if (v == b && b < INF) hi = y;
            }
        if (b < INF) { LO[k][1][ix] = lo; HI[k][1][ix] = hi; }
        if (b < best) best = b;
    }
    C[k][ix] = best >= INF ? INF : best;
}

int main(int argc, char **argv)
{
    T = atoi(argv[1]); A = atoi(argv[2]); W = atoi(argv[3]);
    int full = A * (T - 1) > T ? A * (T - 1) : T;
    if (W > full + 1) W = full + 1;
    size_t n = (size_t)(W + 1) * (T + 1);
    for (int k = 0; k < 2; k++) {
        C[k] = malloc(n * 8);
        for (int ty = 0; ty < 2; ty++) { LO[k][ty] = malloc(n * 4); HI[k][ty] = malloc(n * 4); }
    }
    for (int l = 0; l <= T; l++)
        for (int m = 0; m <= W; m++)
            for (int k = 0; k < 2; k++) cell(k, l, m);
    /* check vs library at top length, every budget */
    if (argc > 4) {
        bptt_table *tb;
        bptt_table_alloc(&tb, bptt_strategy_find("msm"), T, 1, A, W, NULL);
        long bad = 0;
        for (int m = 0; m <= W; m++) {
            int64_t c = bptt_table_cost(tb, m), d = at(0, m, T);
            if (d >= INF) d = -1;
            if (c != d) bad++;
        }
        printf("libcheck bad=%ld\n", bad);
        bptt_table_free(tb);
    }
    const char *kn = "HS", *tn[2] = {"int", "hid"};
    for (int k = 0; k < 2; k++)
        for (int ty = 0; ty < 2; ty++) {
            long cells = 0, lenLo = 0, lenHi = 0, lenSep = 0, mLoDec = 0, mLoInc = 0, mHiDec = 0, mSepDec = 0, mSepInc = 0;
            long hist[8] = {0}; /* lo(len,m)-lo(len-1,m): <0,0,1,2,3,4-9,10+ */
            long wsum = 0, wmax = 0;
            for (int l = 2; l <= T; l++)
                for (int m = 0; m <= W; m++) {
                    size_t i = IX(m, l), p = IX(m, l - 1);
                    int lo = LO[k][ty][i], hi = HI[k][ty][i];
                    if (!lo) continue;
                    cells++;
                    wsum += hi - lo; if (hi - lo > wmax) wmax = hi - lo;
                    int plo = LO[k][ty][p], phi = HI[k][ty][p];
                    if (plo) {
                        if (lo < plo) { if (!lenLo) printf("  first len-counterexample kind=%c type=%s len=%d m=%d: argmins [%d,%d] after [%d,%d] at len-1\n", kn[k], tn[ty], l, m, lo, hi, plo, phi); lenLo++; }
                        if (hi < phi) lenHi++;
                        if (hi < plo) lenSep++;
                        int d = lo - plo;
                        hist[d < 0 ? 0 : d == 0 ? 1 : d == 1 ? 2 : d == 2 ? 3 : d == 3 ? 4 : d < 10 ? 5 : 6]++;
                    }
                    if (m < W) {
                        size_t q = IX(m + 1, l);
                        int nlo = LO[k][ty][q], nhi = HI[k][ty][q];
                        if (nlo) {
                            if (nlo < lo) mLoDec++;
                            if (nlo > lo) mLoInc++;
                            if (nhi < hi) mHiDec++;
                            if (nhi < lo) { if (!mSepDec) printf("  first m-counterexample kind=%c type=%s len=%d m=%d: argmins [%d,%d], at m+1 [%d,%d]\n", kn[k], tn[ty], l, m, lo, hi, nlo, nhi); mSepDec++; }
                            if (nlo > hi && !mSepInc) printf("  first m-increase kind=%c type=%s len=%d m=%d: argmins [%d,%d], at m+1 [%d,%d]\n", kn[k], tn[ty], l, m, lo, hi, nlo, nhi); /* no nondecreasing selection */
                            if (nlo > hi) mSepInc++; /* no nonincreasing selection */
                        }
                    }
                }
            printf("t=%d a=%d W=%d kind=%c type=%s cells=%ld meanwidth=%.2f maxwidth=%ld | len: lo-dec=%ld hi-dec=%ld disjoint-dec=%ld | dlo hist <0:%ld 0:%ld 1:%ld 2:%ld 3:%ld 4-9:%ld 10+:%ld | m: lo-dec=%ld lo-inc=%ld hi-dec=%ld disjoint-dec=%ld disjoint-inc=%ld\n",
                   T, A, W, kn[k], tn[ty], cells, cells ? (double)wsum / cells : 0, wmax, lenLo, lenHi, lenSep,
                   hist[0], hist[1], hist[2], hist[3], hist[4], hist[5], hist[6], mLoDec, mLoInc, mHiDec, mSepDec, mSepInc);
        }

    if (getenv("DUMPM")) { int m = atoi(getenv("DUMPM")); for (int l = 2; l <= T; l += (l<40?1:10)) printf("l=%d cost=%lld  Hint[%d,%d] Hhid[%d,%d] Sint[%d,%d] Shid[%d,%d]\n", l, (long long)at(0,m,l), LO[0][0][IX(m,l)], HI[0][0][IX(m,l)], LO[0][1][IX(m,l)], HI[0][1][IX(m,l)], LO[1][0][IX(m,l)], HI[1][0][IX(m,l)], LO[1][1][IX(m,l)], HI[1][1][IX(m,l)]); return 0; }
    if (getenv("YSTAT")) {
        /* per m: F = max len with H(len,m)==len; Y = max over len of smallest optimal y (any option) */
        long work_plain = 0, work_cap = 0; int worst = -1000000, worstm = 0;
        for (int m = 1; m <= W; m++) {
            int F = 0; for (int l = 0; l <= T; l++) if (at(0, m, l) == l) F = l;
            int Fs = 0; for (int l = 0; l <= T; l++) if (at(1, m, l) == l) Fs = l;
            int Y = 0;
            for (int l = 2; l <= T; l++) for (int k = 0; k < 2; k++) {
                int64_t c = at(k, m, l); if (c >= INF) continue;
                int ymin = 1000000;
                if (l >= 2 && 1 + at(1, m - A, l - 1) == c) ymin = 1;
                for (int ty = 0; ty < 2; ty++) { int lo = LO[k][ty][IX(m, l)]; if (lo && lo < ymin) {
                    int rm = ty == 0 ? (k == 0 ? m - 1 - A : m - A) : (k == 1 ? m : m - 1);
                    int64_t v = ty == 0 ? lo + at(1, rm, l - lo) + at(k, m, lo - 1) : lo + at(0, rm, l - lo) + at(k, m, lo);
                    if (v == c) ymin = lo; } }
                if (ymin == 1000000) ymin = l; /* none-option */
                if (ymin > Y) Y = ymin;
            }
            if (Y - F > worst) { worst = Y - F; worstm = m; }
            if (Y > 1 && m < 40) printf("m=%d F_H=%d F_S=%d Ymax=%d\n", m, F, Fs, Y);
        }
        printf("max (Ymax - F_H) = %d at m=%d\n", worst, worstm);
        return 0;
    }
    /* convexity of H, S in len (finite region) */
    for (int k = 0; k < 2; k++) {
        long nc = 0, tot = 0;
        for (int m = 0; m <= W; m++)
            for (int l = 1; l + 1 <= T; l++) {
                int64_t a = at(k, m, l - 1), b = at(k, m, l), c = at(k, m, l + 1);
                if (a >= INF || b >= INF || c >= INF) continue;
                tot++; if (a + c - 2 * b < 0) nc++;
            }
        printf("convexity kind=%c nonconvex triples=%ld of %ld\n", kn[k], nc, tot);
    }
    for (int var = 1; var <= (getenv("NOVAR") ? 0 : 3); var++) {
        int64_t *R[2]; int32_t *RL[2][2], *RH[2][2];
        for (int k = 0; k < 2; k++) { R[k] = malloc(n * 8); for (int ty = 0; ty < 2; ty++) { RL[k][ty] = calloc(n, 4); RH[k][ty] = calloc(n, 4); } }
        long scanned = 0, plain = 0, bad = 0; int fl = -1, fm = -1, fk = -1;
#define RA(k, m, l) ((m) < 0 ? INF : R[k][IX(m, l)])
        for (int l = 0; l <= T; l++)
            for (int m = W; m >= 0; m--)
                for (int k = 0; k < 2; k++) {
                    size_t ix = IX(m, l);
                    if (l == 0) { R[k][ix] = (k == 0 && m < 1) ? INF : 0; continue; }
                    if (k == 0 && m < 1) { R[k][ix] = INF; continue; }
                    int64_t best = INF;
                    if (l >= 2) { int64_t v = 1 + RA(1, m - A, l - 1); if (v < best) best = v; }
                    { int64_t v = l + RA(k, m, l - 1); if (v < best) best = v; }
                    for (int ty = 0; ty < 2; ty++) {
                        int ymin = ty == 0 ? 2 : 1, ymax = l - 1;
                        int rm = ty == 0 ? (k == 0 ? m - 1 - A : m - A) : (k == 1 ? m : m - 1);
                        plain += ymax >= ymin ? ymax - ymin + 1 : 0;
                        if (rm < 0) continue;
                        int a = ymin, b = ymax;
                        int plo = l >= 2 ? RL[k][ty][IX(m, l - 1)] : 0;
                        if (plo && plo > a) a = plo;
                        if (var == 2 && m < W) { int nh = RH[k][ty][IX(m + 1, l)]; if (nh && nh < b) b = nh; }
                        if (var == 3 && plo) { int ph = RH[k][ty][IX(m, l - 1)] + 12; if (ph < b) b = ph; }
                        int64_t bb = INF; int lo = 0, hi = 0;
                        for (int y = a; y <= b; y++) {
                            int64_t v = ty == 0 ? y + RA(1, rm, l - y) + RA(k, m, y - 1) : y + RA(0, rm, l - y) + RA(k, m, y);
                            if (v < bb) { bb = v; lo = hi = y; } else if (v == bb && bb < INF) hi = y;
                        }
                        scanned += b >= a ? b - a + 1 : 0;
                        if (bb < INF) { RL[k][ty][ix] = lo; RH[k][ty][ix] = hi; }
                        if (bb < best) best = bb;
                    }
                    R[k][ix] = best >= INF ? INF : best;
                    if (R[k][ix] != C[k][ix]) { if (!bad) { fl = l; fm = m; fk = k; } bad++; }
                }
        printf("variant %d: mismatched cells=%ld (first len=%d m=%d kind=%d) scanned/plain=%.4f\n", var, bad, fl, fm, fk, (double)scanned / plain);
        for (int k = 0; k < 2; k++) { free(R[k]); for (int ty = 0; ty < 2; ty++) { free(RL[k][ty]); free(RH[k][ty]); } }
    }
    return 0;
}
