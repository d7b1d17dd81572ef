/* online_rule.c: what ending now would cost, and the placement rules of
 * the online planner (doc/online.md 2 and 3). */
#include <stdlib.h>
#include <string.h>

#include "online_impl.h"

/* ---- arithmetic ---------------------------------------------------------- */

/* binom(n, k) capped at cap (>= 1). */
static int64_t binom_cap(int64_t n, int64_t k, int64_t cap)
{
    return (int64_t)planner_binom_capped(n, k, cap);
}

/* Offline hsm cost of n steps with `slots` hidden slots (start's
 * included); 0 for n <= 0; INF when infeasible or too big. */
int64_t online_hsm_cost(int64_t n, int64_t slots)
{
    if (n <= 0)
        return 0;
    if (slots < 1)
        return INF;
    if (slots > n)
        slots = n; /* more slots than steps change nothing */
    if (slots == 1) {
        const __int128 q = (__int128)n * (n + 1) / 2;
        return q >= INF ? INF : (int64_t)q;
    }
    const int64_t c = bptt_hsm_closed_cost(n, slots);
    return c < 0 || c >= INF ? INF : c;
}

static int64_t add_cap(int64_t a, int64_t b)
{
    return (a >= INF || b >= INF || a > INF - b) ? INF : a + b;
}

int64_t online_units_of(const bptt_online *o, int kind)
{
    return kind == KIND_S ? o->s : o->h;
}

/* ---- the cost of ending now --------------------------------------------- */

/* Reversing len steps from the checkpoint at c of kind kd with `free`
 * units not held by the checkpoints before it (its own included). */
static int64_t seg_cost(const bptt_online *o, int kd, size_t len,
                        int64_t free, int binomial)
{
    if (len == 0)
        return 0;
    if (binomial || !o->tabled) {
        if (kd == KIND_S)
            return INF; /* reversing from an internal state needs msm's */
        return free < o->h ? INF : online_hsm_cost((int64_t)len, free / o->h);
    }
    const int64_t b = kd == KIND_S ? free - o->s : free;
    const int64_t c = b < 0 ? -1 : planner_cost_kind(o->tb, kd, len, b);
    return c < 0 ? INF : c;
}

/* Forward ops if the sequence ends after T steps with checkpoints
 * c[0..k] of kinds kd: T, then each segment from a checkpoint to the
 * next (or to T) reversed with what the checkpoints before it leave; a
 * segment ending at an internal state (or at T, whose s(T) is working)
 * leaves that step's backward to it. */
static int64_t end_cost_by(const bptt_online *o, const size_t *c,
                           const unsigned char *kd, size_t k, size_t T,
                           int binomial)
{
    int64_t tot = (int64_t)T, held = 0;
    for (size_t j = 0; j <= k && tot < INF; j++) {
        const size_t next = j < k ? c[j + 1] : T;
        const int nin = j < k ? kd[j + 1] == KIND_S : 1;
        tot = add_cap(tot, seg_cost(o, kd[j], next - c[j] - (size_t)nin,
                                    o->m - held, binomial));
        held += online_units_of(o, kd[j]);
    }
    return tot;
}

int64_t online_end_cost(const bptt_online *o, const size_t *c,
                        const unsigned char *kd, size_t k, size_t T)
{
    return end_cost_by(o, c, kd, k, T, 0);
}

/* online_end_cost summed over the ends e0..e1: the segments before the
 * last checkpoint are the same at every end, so they are costed once. */
static int64_t ends_cost(const bptt_online *o, const size_t *c,
                         const unsigned char *kd, size_t k, size_t e0,
                         size_t e1)
{
    int64_t body = 0, held = 0;
    for (size_t j = 0; j < k && body < INF; j++) {
        body = add_cap(body, seg_cost(o, kd[j], c[j + 1] - c[j] -
                                                    (kd[j + 1] == KIND_S),
                                      o->m - held, 0));
        held += online_units_of(o, kd[j]);
    }
    int64_t tot = 0;
    for (size_t e = e0; e <= e1 && tot < INF; e++)
        tot = add_cap(tot, add_cap(add_cap((int64_t)e, body),
                                   seg_cost(o, kd[k], e - c[k] - 1,
                                            o->m - held, 0)));
    return tot;
}

int64_t online_held_units(const bptt_online *o, const unsigned char *kd,
                          size_t k)
{
    int64_t u = 0;
    for (size_t j = 0; j <= k; j++)
        u += online_units_of(o, kd[j]);
    return u;
}

/* ---- the placement rules (doc/online.md 2, 3) --------------------------- */


/* c[0..k] after choice ch at i, into tc/tk; returns the new k. */
size_t online_apply(const bptt_online *o, choice ch, size_t i, size_t *tc,
                    unsigned char *tk)
{
    size_t k = o->k;
    memcpy(tc, o->c, (k + 1) * sizeof *tc);
    memcpy(tk, o->kd, k + 1);
    if (ch.kind < 0)
        return k;
    if (ch.evict >= 0) {
        const size_t e = (size_t)ch.evict;
        memmove(tc + e, tc + e + 1, (k - e) * sizeof *tc);
        memmove(tk + e, tk + e + 1, k - e);
        tc[k] = i;
        tk[k] = (unsigned char)ch.kind;
        return k;
    }
    tc[k + 1] = i;
    tk[k + 1] = (unsigned char)ch.kind;
    return k + 1;
}

/* hsm with 3 slots past C(5, 2) = 10 steps (doc/online.md 2): Revolve's
 * placement, a base checkpoint b and one after it at b + C(j, 2) for j
 * from s to l; at b + C(l, 2) that one becomes the next base and the old
 * base gives way.  The epochs e = 0, 1, ...: b_0 = 10, s = 3 + (e+1)/2,
 * l = 5 + e. */
static choice rule_three(const bptt_online *o, size_t i)
{
    const choice none = {-1, -1};
    const long k = (long)o->k;
    if (i == 10)
        return (choice){KIND_H, k};
    size_t b = 10;
    for (size_t e = 0;; e++) {
        const size_t s = 3 + (e + 1) / 2, l = 5 + e;
        const size_t nb = b + l * (l - 1) / 2;
        if (i <= nb) {
            for (size_t j = s; j <= l; j++)
                if (b + j * (j - 1) / 2 == i)
                    return (choice){KIND_H, j == s ? 1 : k};
            return none;
        }
        b = nb;
    }
}

/* hsm with S >= 4 slots from P = C(S+3, 3) on (doc/online.md 2):
 * Revolve's placement there (Wang, Moin and Iaccarino's levels).  Steps P
 * to P + S - 2 are stored, each in place of a checkpoint from before P
 * (the one whose loss costs least at the next end), P at level 3 and the
 * others at 0.  Then, looking at step i: if a checkpoint is dispensable
 * (a later one has a higher level), the latest such gives way to h(i) at
 * level 0; else, with l the least level, h(i + l + 1) replaces the latest
 * checkpoint at level l + 1, and those before it with a lower level
 * become dispensable. */
static choice rule_levels(bptt_online *o, size_t i, int64_t P)
{
    const choice none = {-1, -1};
    const size_t k = o->k;
    const size_t *c = o->c;
    int64_t *lev = o->lev;
    if (i <= (size_t)P + (size_t)o->slots - 2) {
        choice best = none;
        int64_t bestc = INT64_MAX;
        for (size_t j = 1; j <= k; j++) {
            if (c[j] >= (size_t)P)
                continue;
            const choice ch = {KIND_H, (long)j};
            const size_t kk = online_apply(o, ch, i, o->tc, o->tk);
            const int64_t sc = end_cost_by(o, o->tc, o->tk, kk, i + 2, 1);
            if (sc < bestc) {
                bestc = sc;
                best = ch;
            }
        }
        if (best.kind < 0 && (int64_t)k + 1 < o->slots)
            best = (choice){KIND_H, -1};
        o->newlev = i == (size_t)P ? 2 * 3 : 0;
        o->lmode = 0;
        o->lnext = i + 1;
        return best;
    }
    if (i < o->lnext)
        return none;
    if (o->lmode == 1) {
        for (size_t j = 1; j < k; j++)
            if (lev[j] / 2 < o->ljump)
                lev[j] |= 1;
        o->newlev = 2 * o->ljump;
        o->lmode = 0;
        o->lnext = i + 1;
        return (choice){KIND_H, (long)k};
    }
    for (size_t j = k; j >= 1; j--)
        if (lev[j] & 1) {
            o->newlev = 0;
            o->lnext = i + 1;
            return (choice){KIND_H, (long)j};
        }
    int64_t lmin = INT64_MAX;
    for (size_t j = 1; j <= k; j++)
        if (lev[j] / 2 < lmin)
            lmin = lev[j] / 2;
    o->lmode = 1;
    o->ljump = lmin + 1;
    o->lnext = i + (size_t)lmin + 1;
    return none;
}

/* hsm: the state of step i (step i + 1 runs next and is not the last) is
 * stored when the gaps' rule says so (doc/online.md 2). */
choice online_choose_hidden(bptt_online *o, size_t i)
{
    const choice none = {-1, -1};
    const int64_t S = o->slots;
    if (i == 0)
        return none;
    if ((int64_t)o->k + 1 < S)
        return (choice){KIND_H, -1};
    if (o->k == 0)
        return none; /* one slot: h(0) alone */
    if (S == 3 && i >= 10)
        return rule_three(o, i);
    if (S >= 4) {
        const int64_t P = binom_cap(S + 3, 3, INF);
        if ((int64_t)i >= P)
            return rule_levels(o, i, P);
    }
    const size_t *c = o->c, k = o->k;
    const int64_t Tn = (int64_t)i + 2; /* the next end this choice sees */
    int64_t r = 1;
    while (binom_cap(S + r, S, Tn) < Tn)
        r++;
    const int64_t x = (int64_t)(i - c[k]);
    if (r <= 2) {
        /* merging c[j] joins the gaps of levels S - j + 1 and S - j into
         * level S - j + 1, whose cap is binom(level + r - 1, level):
         * merge where that fills a level exactly, lowest level first;
         * else only when the last gap would pass its cap r, at the lowest
         * level it fits */
        size_t fit = 0;
        for (size_t j = k; j >= 1; j--) {
            const int64_t g = (int64_t)(c[j] - c[j - 1]);
            const int64_t gn = j < k ? (int64_t)(c[j + 1] - c[j]) : x;
            const int64_t lev = S - (int64_t)j + 1;
            const int64_t cap = binom_cap(lev + r - 1, lev, INF);
            if (g + gn == cap)
                return (choice){KIND_H, (long)j};
            if (g + gn < cap && !fit)
                fit = j;
        }
        if (x + 1 <= r)
            return none;
        return (choice){KIND_H, (long)(fit ? fit : k)};
    }
    /* past C(S+2, 2) (doc/online.md 2): the optimal configuration at the
     * top of range r, C(S+r, S), has its checkpoints at the sums of
     * C(m+r-1, m) from level S down ("top positions").  Store h(i) when
     * the last gap reaches r, or when i is a top position; a checkpoint
     * at a top position stays; the one stored replaces, landing on a top
     * position early, the latest checkpoint, else the lowest level whose
     * merged gap fits its cap, else the one that costs least at the next
     * two ends. */
    int64_t *top = o->top;
    top[0] = 0;
    int at_top = 0;
    for (size_t j = 1; j < (size_t)S && j <= k; j++) {
        const int64_t lev = S - (int64_t)j + 1;
        top[j] = add_cap(top[j - 1], binom_cap(lev + r - 1, r - 1, INF));
        at_top |= top[j] == (int64_t)i;
    }
    if (x < r && !at_top)
        return none;
    /* fixed[j]: c[j] sits on a top position */
    size_t t = 1;
    for (size_t j = 1; j <= k; j++) {
        while (t < k && top[t] < (int64_t)c[j])
            t++;
        o->fixed[j] = t <= k && t < (size_t)S && top[t] == (int64_t)c[j];
    }
    if (at_top && x < r && !o->fixed[k])
        return (choice){KIND_H, (long)k};
    for (size_t j = k; j >= 1; j--) {
        if (o->fixed[j])
            continue;
        const int64_t g = (int64_t)(c[j] - c[j - 1]);
        const int64_t gn = j < k ? (int64_t)(c[j + 1] - c[j]) : x;
        const int64_t lev = S - (int64_t)j + 1;
        if (g + gn <= binom_cap(lev + r - 1, r - 1, INF))
            return (choice){KIND_H, (long)j};
    }
    choice best = none;
    int64_t bestc = INT64_MAX;
    for (size_t j = 1; j <= k; j++) {
        if (o->fixed[j])
            continue;
        const choice ch = {KIND_H, (long)j};
        const size_t kk = online_apply(o, ch, i, o->tc, o->tk);
        int64_t sc = 0;
        for (size_t e = i + 2; e <= i + 3; e++)
            sc = add_cap(sc, end_cost_by(o, o->tc, o->tk, kk, e, 1));
        if (sc < bestc) {
            bestc = sc;
            best = ch;
        }
    }
    return best;
}

/* msm: the cheapest over the next ends of storing nothing, h(i) or s(i),
 * each in a free place or in place of one checkpoint (doc/online.md 3):
 * the next 4 ends where an internal state costs a hidden one, else the
 * next 8 (the horizons that measured best, doc/online.md 3) */
static size_t msm_horizon(const bptt_online *o)
{
    return o->s == o->h ? 4 : MSM_HORIZON_MAX;
}

choice online_choose_mixed(bptt_online *o, size_t i, int last)
{
    choice best = {-1, -1};
    int64_t bestc = 0;
    /* the ends this choice serves: i + 1 alone when it is the last */
    const size_t e0 = last ? i + 1 : i + 2,
                 e1 = last ? i + 1 : i + 1 + msm_horizon(o);
    bestc = ends_cost(o, o->c, o->kd, o->k, e0, e1);
    if (i == 0)
        return best;
    /* h(0) may go once s(1) is stored: nothing reads it any more */
    const int h0_free = o->kd[0] == KIND_H && o->k >= 1 && o->c[1] == 1 &&
                        o->kd[1] == KIND_S;
    for (int kind = KIND_H; kind <= KIND_S; kind++)
        for (long j = -1; j <= (long)o->k; j++) {
            if (j == 0 && !h0_free)
                continue;
            const choice ch = {kind, j};
            const size_t kk = online_apply(o, ch, i, o->tc, o->tk);
            if (online_held_units(o, o->tk, kk) > o->m)
                continue;
            const int64_t sc = ends_cost(o, o->tc, o->tk, kk, e0, e1);
            if (sc < bestc) {
                bestc = sc;
                best = ch;
            }
        }
    return best;
}

/* The longest segment a cost may read for ends up to `end`: a gap, two
 * merged by a choice, or the last one. */
size_t online_table_need(const bptt_online *o, size_t end)
{
    size_t g = 0;
    for (size_t j = 1; j <= o->k; j++)
        if (o->c[j] - o->c[j - 1] > g)
            g = o->c[j] - o->c[j - 1];
    const size_t last = end - o->c[o->k];
    return (2 * g > last ? 2 * g : last) + 1;
}

/* msm: the table covers every segment the costs up to length t read. */
int online_ensure_table(bptt_online *o, size_t t)
{
    if (!o->tabled || (o->tb && bptt_table_length(o->tb) >= t))
        return BPTT_OK;
    size_t len = o->tb ? 2 * bptt_table_length(o->tb) : 64;
    if (len < t)
        len = t;
    bptt_table *tb = NULL;
    const int rc = bptt_table_alloc(&tb, bptt_strategy_find("msm"), len,
                                    o->h, o->s, o->m, NULL);
    if (rc != BPTT_OK)
        return rc;
    bptt_table_free(o->tb);
    o->tb = tb;
    return BPTT_OK;
}

/* The states the planner holds, as checkpoints: the rule's, each past
 * h(0) an internal state where it stores them so (subst), and with_x:
 * the extra internal states among them (an extra at a hidden
 * checkpoint's step replaces it: s(j) holds h(j)); into tc/tk (room for
 * k + 1 + nx); returns the new k. */
size_t online_physical(const bptt_online *o, int with_x, size_t *tc,
                       unsigned char *tk)
{
    const size_t nx = with_x ? o->nx : 0;
    size_t a = 0, b = 0, n = 0;
    while (a <= o->k || b < nx) {
        if (b == nx || (a <= o->k && o->c[a] < o->xs[o->xh + b])) {
            tc[n] = o->c[a];
            tk[n++] = o->subst && a > 0 ? KIND_S : o->kd[a];
            a++;
        } else {
            if (a <= o->k && o->c[a] == o->xs[o->xh + b])
                a++;
            tc[n] = o->xs[o->xh + b++];
            tk[n++] = KIND_S;
        }
    }
    return n - 1;
}

/* Whether the reversal keeps the extras (else it frees them first), and
 * the cost it then has: the cheaper of the two. */
int64_t online_reversal_cost(bptt_online *o, size_t T, int *keep)
{
    size_t kk = online_physical(o, 0, o->tc, o->tk);
    const int64_t plain = online_end_cost(o, o->tc, o->tk, kk, T);
    *keep = 0;
    if (o->nx == 0)
        return plain;
    kk = online_physical(o, 1, o->tc, o->tk);
    const int64_t with = online_end_cost(o, o->tc, o->tk, kk, T);
    *keep = with < plain;
    return with < plain ? with : plain;
}

