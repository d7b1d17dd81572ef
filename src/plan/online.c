/* online.c: plans for sequences of unknown length (online.h,
 * doc/online.md).
 *
 * The planner keeps, while the sequence runs:
 *   - hidden checkpoints c[0] = 0 < c[1] < ... < c[k], placed by the rule
 *     of doc/online.md 2 (a step's state is saved, or one checkpoint is
 *     traded for it, before the next step runs);
 *   - for msm, a window of the internal states of the latest steps,
 *     s(wlo) .. s(whi - 1), whose size only falls (doc/online.md 3).
 * When the sequence ends after T steps: backward T, backward every step
 * the window holds, then the hidden segments from the last to the first,
 * each by the offline hsm plan with the slots not held by the
 * checkpoints before it.  Its cost is
 *   T + sum_j F(c[j] - c[j-1], S - j + 1) + F(E - 1 - c[q], S - q)
 * with F the binomial cost (bptt_hsm_closed_cost), S the budget's hidden
 * slots, E the first step the window holds (T when none), c[q] the last
 * checkpoint below E. */
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "costs.h"
#include "online.h"

struct bptt_online {
    int msm;         /* costs from the msm table (else binomial) */
    int mixed;       /* internal states placed too (else hidden only) */
    int subst;       /* hidden only, an internal state costing a hidden
                        one: each checkpoint past h(0) is stored as s(c) */
    int tabled;      /* msm's costs from its table (else binomial, and an
                        internal state only ends segments) */
    int msm_asked;   /* the strategy asked was msm */
    bptt_units u;
    int64_t h, s, m; /* units; budget */
    int64_t slots;   /* hidden slots of the whole budget: m / h */
    size_t i;        /* steps run */
    int state;       /* 0: open, 1: the last step announced, 2: finished */
    unsigned char *block; /* the arrays below up to xs, in one block */
    size_t *c;       /* checkpoints c[0..k], rising */
    unsigned char *kd; /* their kinds: KIND_H (h stored) or KIND_S (s) */
    size_t *tc;      /* scratch configurations of the rule (ccap) */
    unsigned char *tk;
    int64_t *top;    /* the rule's top positions (ccap) */
    size_t *xs;      /* msm placing hidden states: internal states of the
                        latest steps in memory the rule leaves (rising) */
    size_t xh, nx, xcap; /* xs[xh .. xh + nx): the live ones */
    unsigned char *fixed; /* the rule's fixed checkpoints (ccap) */
    size_t k, ccap;
    bptt_table *tb;  /* msm: the offline table the costs come from */
    int keep_log;
    bptt_action *log; /* every action handed out */
    size_t nlog, logcap;
};

/* ---- arithmetic ---------------------------------------------------------- */

/* binom(n, k) capped at cap (>= 1). */
static int64_t binom_cap(int64_t n, int64_t k, int64_t cap)
{
    return (int64_t)planner_binom_capped(n, k, cap);
}

/* Offline hsm cost of n steps with `slots` hidden slots (start's
 * included); 0 for n <= 0; INF when infeasible or too big. */
static int64_t F(int64_t n, int64_t slots)
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

static int64_t units_of(const bptt_online *o, int kind)
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
        return free < o->h ? INF : F((int64_t)len, free / o->h);
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
        held += units_of(o, kd[j]);
    }
    return tot;
}

static int64_t end_cost(const bptt_online *o, const size_t *c,
                        const unsigned char *kd, size_t k, size_t T)
{
    return end_cost_by(o, c, kd, k, T, 0);
}

static int64_t held_units(const bptt_online *o, const unsigned char *kd,
                          size_t k)
{
    int64_t u = 0;
    for (size_t j = 0; j <= k; j++)
        u += units_of(o, kd[j]);
    return u;
}

/* ---- the placement rules (doc/online.md 2, 3) --------------------------- */

/* A choice: store nothing (kind < 0), or store the state of `kind` at i,
 * in place of checkpoint `evict` (-1: none evicted; 0: h(0), once s(1)
 * is stored). */
typedef struct {
    int kind;
    long evict;
} choice;

/* c[0..k] after choice ch at i, into tc/tk; returns the new k. */
static size_t apply(const bptt_online *o, choice ch, size_t i, size_t *tc,
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

/* hsm: the state of step i (step i + 1 runs next and is not the last) is
 * stored when the gaps' rule says so (doc/online.md 2). */
static choice choose_hidden(bptt_online *o, size_t i)
{
    const choice none = {-1, -1};
    const int64_t S = o->slots;
    if (i == 0)
        return none;
    if ((int64_t)o->k + 1 < S)
        return (choice){KIND_H, -1};
    if (o->k == 0)
        return none; /* one slot: h(0) alone */
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
        const size_t kk = apply(o, ch, i, o->tc, o->tk);
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
#define MSM_HORIZON_MAX 8
static size_t msm_horizon(const bptt_online *o)
{
    return o->s == o->h ? 4 : MSM_HORIZON_MAX;
}
/* internal states are placed from this many beside h(0) (doc/online.md 3) */
#define ONLINE_MIXED_FROM 8
/* ... and up to this many: past it a step's choice would weigh too many
 * (k^2 per end); the hidden rule with extras holds there */
#define ONLINE_MIXED_TO 64
static choice choose_mixed(bptt_online *o, size_t i, int last)
{
    choice best = {-1, -1};
    int64_t bestc = 0;
    /* the ends this choice serves: i + 1 alone when it is the last */
    const size_t e0 = last ? i + 1 : i + 2,
                 e1 = last ? i + 1 : i + 1 + msm_horizon(o);
    for (size_t e = e0; e <= e1; e++)
        bestc = add_cap(bestc, end_cost(o, o->c, o->kd, o->k, e));
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
            const size_t kk = apply(o, ch, i, o->tc, o->tk);
            if (held_units(o, o->tk, kk) > o->m)
                continue;
            int64_t sc = 0;
            for (size_t e = e0; e <= e1; e++)
                sc = add_cap(sc, end_cost(o, o->tc, o->tk, kk, e));
            if (sc < bestc) {
                bestc = sc;
                best = ch;
            }
        }
    return best;
}

/* The longest segment a cost may read for ends up to `end`: a gap, two
 * merged by a choice, or the last one. */
static size_t table_need(const bptt_online *o, size_t end)
{
    size_t g = 0;
    for (size_t j = 1; j <= o->k; j++)
        if (o->c[j] - o->c[j - 1] > g)
            g = o->c[j] - o->c[j - 1];
    const size_t last = end - o->c[o->k];
    return (2 * g > last ? 2 * g : last) + 1;
}

/* msm: the table covers every segment the costs up to length t read. */
static int ensure_table(bptt_online *o, size_t t)
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

/* ---- the object ------------------------------------------------------------ */

static int log_push(bptt_online *o, const bptt_action *a, size_t n)
{
    if (!o->keep_log)
        return BPTT_OK;
    if (o->nlog + n > o->logcap) {
        size_t cap = o->logcap ? 2 * o->logcap : 256;
        while (cap < o->nlog + n)
            cap *= 2;
        if (cap > SIZE_MAX / sizeof *o->log)
            return BPTT_ENOMEM;
        bptt_action *v = planner_realloc(o->log, cap * sizeof *v);
        if (!v)
            return BPTT_ENOMEM;
        o->log = v;
        o->logcap = cap;
    }
    memcpy(o->log + o->nlog, a, n * sizeof *a);
    o->nlog += n;
    return BPTT_OK;
}

/* Room for `cap` checkpoints in every array: one block, the 8-byte
 * arrays first; the checkpoints and their kinds carried over (the rest is
 * scratch). */
static int reserve(bptt_online *o, size_t cap)
{
    if (cap <= o->ccap)
        return BPTT_OK;
    const size_t per = 3 * sizeof(size_t) + 3;
    if (cap > SIZE_MAX / per)
        return BPTT_ENOMEM;
    unsigned char *blk = planner_malloc(cap * per);
    if (!blk)
        return BPTT_ENOMEM;
    size_t *c = (size_t *)(void *)blk, *tc = c + cap;
    int64_t *top = (int64_t *)(void *)(tc + cap);
    unsigned char *kd = (unsigned char *)(top + cap), *tk = kd + cap;
    if (o->ccap) {
        memcpy(c, o->c, (o->k + 1) * sizeof *c);
        memcpy(kd, o->kd, o->k + 1);
    }
    planner_free(o->block);
    o->block = blk;
    o->c = c;
    o->tc = tc;
    o->top = top;
    o->kd = kd;
    o->tk = tk;
    o->fixed = tk + cap;
    o->ccap = cap;
    return BPTT_OK;
}

static int online_open(bptt_online **out, const char *strategy,
                       int64_t hidden_bytes, int64_t internal_bytes,
                       int64_t budget_bytes, int64_t *min_budget_bytes,
                       int keep_log)
{
    if (min_budget_bytes)
        *min_budget_bytes = -1;
    if (!out)
        return BPTT_EINVAL;
    *out = NULL;
    bptt_units u;
    if (!strategy || budget_bytes < 0 ||
        bptt_units_from_bytes(&u, hidden_bytes, internal_bytes) != BPTT_OK)
        return BPTT_EINVAL;
    int msm;
    if (strcmp(strategy, "hsm") == 0)
        msm = 0;
    else if (strcmp(strategy, "msm") == 0)
        msm = 1;
    else
        return BPTT_EUNKNOWN;
    const int64_t m = budget_bytes / u.quantum;
    if (m < u.hidden_units) {
        if (min_budget_bytes)
            *min_budget_bytes = hidden_bytes;
        return BPTT_EINFEASIBLE;
    }
    bptt_online *o = planner_calloc(1, sizeof *o);
    if (!o)
        return BPTT_ENOMEM;
    o->u = u;
    o->h = u.hidden_units;
    o->s = u.internal_units;
    o->m = m;
    o->slots = m / o->h;
    /* msm reverses with the msm table; it places internal states where
     * the budget holds several (doc/online.md 3), else hidden states by
     * hsm's rule, so it never costs more than hsm */
    o->msm_asked = msm;
    o->msm = msm && m >= o->h + o->s;
    /* past ONLINE_MIXED_TO internal states the msm table (every budget
     * up to m) would be large: binomial costs, internal states only as
     * the latest steps' extras */
    const int64_t ns = o->msm ? (m - o->h) / o->s : 0;
    o->tabled = o->msm && ns <= ONLINE_MIXED_TO;
    o->mixed = o->tabled && ns >= ONLINE_MIXED_FROM;
    o->subst = o->tabled && !o->mixed && o->s == o->h;
    o->keep_log = keep_log;
    int rc = reserve(o, 16);
    if (rc == BPTT_OK)
        rc = ensure_table(o, 64);
    if (rc != BPTT_OK) {
        bptt_online_free(o);
        return rc;
    }
    o->c[0] = 0;
    o->kd[0] = KIND_H;
    *out = o;
    return BPTT_OK;
}

int bptt_online_new(bptt_online **out, const char *strategy,
                    int64_t hidden_bytes, int64_t internal_bytes,
                    int64_t budget_bytes, int64_t *min_budget_bytes)
{
    return online_open(out, strategy, hidden_bytes, internal_bytes,
                       budget_bytes, min_budget_bytes, 1);
}

void bptt_online_free(bptt_online *o)
{
    if (!o)
        return;
    bptt_table_free(o->tb);
    planner_free(o->block);
    planner_free(o->xs);
    planner_free(o->log);
    planner_free(o);
}

int bptt_online_next(bptt_online *o, int last, bptt_action *acts, size_t *n)
{
    if (!o || !acts || !n || o->state != 0)
        return BPTT_EINVAL;
    *n = 0;
    const size_t i = o->i;
    if (i >= (size_t)UINT32_MAX - 2)
        return BPTT_ETOOBIG;
    int rc = reserve(o, o->k + o->nx + 3 > o->ccap ? 2 * (o->k + o->nx + 3)
                                                   : o->ccap);
    if (rc == BPTT_OK && o->xh + o->nx + 1 > o->xcap && o->xh > o->nx) {
        memmove(o->xs, o->xs + o->xh, o->nx * sizeof *o->xs); /* compact */
        o->xh = 0;
    }
    if (rc == BPTT_OK && o->xh + o->nx + 1 > o->xcap) {
        const size_t cap = o->xcap ? 2 * o->xcap : 16;
        size_t *v = planner_realloc(o->xs, cap * sizeof *v);
        if (!v)
            rc = BPTT_ENOMEM;
        else {
            o->xs = v;
            o->xcap = cap;
        }
    }
    if (rc == BPTT_OK)
        rc = ensure_table(o, table_need(o, i + 2 + MSM_HORIZON_MAX));
    if (rc != BPTT_OK)
        return rc;
    choice ch = {-1, -1};
    if (o->mixed)
        ch = choose_mixed(o, i, last);
    else if (!last)
        ch = choose_hidden(o, i);
    if (last && ch.kind == KIND_H)
        ch.kind = -1; /* h(i) cannot serve a sequence ending at i + 1 */
    bptt_action a[BPTT_ONLINE_ACTIONS_MAX];
    size_t na = 0;
    /* (subst: only at the last step, which the rule stores nothing for) */
    const int extras = o->msm && !o->mixed && (!o->subst || last);
    int64_t held = bptt_online_held(o);
    /* a hidden state stored in a free slot takes the oldest extras' room */
    if (ch.kind == KIND_H && ch.evict < 0)
        while (o->nx > 0 && held + o->h > o->m) {
            a[na++] = (bptt_action){BPTT_FREE_INTERNAL,
                                    (uint32_t)o->xs[o->xh]};
            o->xh++;
            o->nx--;
            held -= o->s;
        }
    if (ch.kind >= 0 && ch.evict < 0)
        held += units_of(o, ch.kind);
    if (ch.kind >= 0 && ch.evict >= 0)
        a[na++] = (bptt_action){o->kd[ch.evict] == KIND_S ||
                                        (o->subst && ch.evict > 0)
                                    ? BPTT_FREE_INTERNAL
                                    : BPTT_FREE_HIDDEN,
                                (uint32_t)o->c[ch.evict]};
    if (ch.kind >= 0)
        a[na++] = (bptt_action){ch.kind == KIND_S || o->subst
                                    ? BPTT_SAVE_INTERNAL
                                    : BPTT_SAVE_HIDDEN,
                                (uint32_t)i};
    /* extras: s(i) in what is left, the oldest giving way */
    if (extras && i >= 1) {
        if (held + o->s > o->m && o->nx > 0 && held - o->s + o->s <= o->m) {
            a[na++] = (bptt_action){BPTT_FREE_INTERNAL,
                                    (uint32_t)o->xs[o->xh]};
            o->xh++;
            o->nx--;
            held -= o->s;
        }
        if (held + o->s <= o->m) {
            a[na++] = (bptt_action){BPTT_SAVE_INTERNAL, (uint32_t)i};
            o->xs[o->xh + o->nx++] = i;
        }
    }
    a[na++] = (bptt_action){BPTT_ADVANCE, (uint32_t)(i + 1)};
    if ((rc = log_push(o, a, na)) != BPTT_OK)
        return rc;
    if (ch.kind >= 0) {
        o->k = apply(o, ch, i, o->tc, o->tk);
        memcpy(o->c, o->tc, (o->k + 1) * sizeof *o->c);
        memcpy(o->kd, o->tk, o->k + 1);
    }
    memcpy(acts, a, na * sizeof *a);
    *n = na;
    o->i = i + 1;
    if (last)
        o->state = 1;
    return BPTT_OK;
}

/* The states the planner holds, as checkpoints: the rule's, each past
 * h(0) an internal state where it stores them so (subst), and with_x:
 * the extra internal states among them (an extra at a hidden
 * checkpoint's step replaces it: s(j) holds h(j)); into tc/tk (room for
 * k + 1 + nx); returns the new k. */
static size_t physical(const bptt_online *o, int with_x, size_t *tc,
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
static int64_t reversal_cost(bptt_online *o, size_t T, int *keep)
{
    size_t kk = physical(o, 0, o->tc, o->tk);
    const int64_t plain = end_cost(o, o->tc, o->tk, kk, T);
    *keep = 0;
    if (o->nx == 0)
        return plain;
    kk = physical(o, 1, o->tc, o->tk);
    const int64_t with = end_cost(o, o->tc, o->tk, kk, T);
    *keep = with < plain;
    return with < plain ? with : plain;
}

int64_t bptt_online_cost(const bptt_online *o)
{
    if (!o || o->i < 1)
        return -1;
    int keep;
    /* the scratch arrays are the only thing written */
    const int64_t c = reversal_cost((bptt_online *)o, o->i, &keep);
    return c >= INF ? -1 : c;
}

size_t bptt_online_steps(const bptt_online *o)
{
    return o ? o->i : 0;
}

int64_t bptt_online_held(const bptt_online *o)
{
    return o ? held_units(o, o->kd, o->k) + (int64_t)o->nx * o->s : -1;
}

int bptt_online_units(const bptt_online *o, bptt_units *u, int64_t *budget)
{
    if (!o || !u || !budget)
        return BPTT_EINVAL;
    *u = o->u;
    *budget = o->m;
    return BPTT_OK;
}

/* ---- the reversal ------------------------------------------------------------ */

/* Append the reversal from checkpoints c[0..k] of kinds kd (the units
 * they hold taken as stored) for a sequence of T steps. */
static int emit_reversal(const bptt_online *o, const size_t *c,
                         const unsigned char *kd, size_t k, size_t T,
                         bptt_plan *p)
{
    bptt_table *slots = NULL; /* hsm: a table in hidden slots */
    int rc = BPTT_OK;
    if (!o->tabled) {
        size_t maxlen = 0;
        for (size_t j = 0; j <= k; j++) {
            const size_t next = j < k ? c[j + 1] : T - 1;
            if (next - c[j] > maxlen)
                maxlen = next - c[j];
        }
        const int64_t cap = o->slots < (int64_t)maxlen + 1
                                ? o->slots
                                : (int64_t)maxlen + 1;
        if (maxlen > 0)
            rc = bptt_table_alloc(&slots, bptt_strategy_find("hsm"), maxlen,
                                  1, 1, cap, NULL);
    }
    int64_t held = held_units(o, kd, k);
    for (size_t j = k + 1; j-- > 0 && rc == BPTT_OK;) {
        const size_t next = j < k ? c[j + 1] : T;
        const int nin = j < k ? kd[j + 1] == KIND_S : 1;
        const size_t len = next - c[j] - (size_t)nin;
        held -= units_of(o, kd[j]);
        const int64_t free = o->m - held;
        if (!o->tabled && kd[j] == KIND_H) {
            const int64_t b = free / o->h, top = bptt_table_max_budget(slots);
            rc = len == 0 ? bptt_plan_push(p, BPTT_FREE_HIDDEN, c[j])
                          : planner_dp_emit_at(slots, KIND_H, c[j], len,
                                               b < top ? b : top, 0, p);
            continue;
        }
        if (kd[j] == KIND_H) {
            rc = len == 0 ? bptt_plan_push(p, BPTT_FREE_HIDDEN, c[j])
                          : planner_dp_emit_at(o->tb, KIND_H, c[j], len,
                                               free, 0, p);
            continue;
        }
        if (len > 0)
            rc = o->tabled ? planner_dp_emit_at(o->tb, KIND_S, c[j], len,
                                                free - o->s, 0, p)
                           : BPTT_EINVAL; /* costed INF, never chosen */
        if (rc == BPTT_OK)
            rc = bptt_plan_push(p, BPTT_BACKWARD, c[j]);
        if (rc == BPTT_OK)
            rc = bptt_plan_push(p, BPTT_FREE_INTERNAL, c[j]);
    }
    bptt_table_free(slots);
    return rc;
}

int bptt_online_finish(bptt_online *o, bptt_plan **out, size_t *prefix)
{
    if (out)
        *out = NULL;
    if (!o || !out || o->i < 1 || o->state == 2 || !o->keep_log)
        return BPTT_EINVAL;
    const size_t T = o->i;
    bptt_plan *p = NULL;
    int rc = bptt_plan_alloc(&p, T, o->h, o->s, o->m);
    for (size_t n = 0; n < o->nlog && rc == BPTT_OK; n++)
        rc = bptt_plan_push(p, (int)o->log[n].op, o->log[n].step);
    if (rc == BPTT_OK)
        rc = bptt_plan_push(p, BPTT_BACKWARD, T);
    int keep = 0;
    if (rc == BPTT_OK && reversal_cost(o, T, &keep) >= INF)
        rc = BPTT_ETOOBIG; /* not reached: a plan of its budget exists */
    if (keep) {
        /* s(j) holds h(j): a hidden state under an extra goes first */
        for (size_t a = 0, b = 0; a <= o->k && b < o->nx && rc == BPTT_OK;)
            if (o->c[a] < o->xs[o->xh + b])
                a++;
            else if (o->c[a] > o->xs[o->xh + b])
                b++;
            else
                rc = bptt_plan_push(p, BPTT_FREE_HIDDEN, o->c[a++]);
        const size_t kk = physical(o, 1, o->tc, o->tk);
        if (rc == BPTT_OK)
            rc = emit_reversal(o, o->tc, o->tk, kk, T, p);
    } else {
        for (size_t b = 0; b < o->nx && rc == BPTT_OK; b++)
            rc = bptt_plan_push(p, BPTT_FREE_INTERNAL, o->xs[o->xh + b]);
        const size_t kk = physical(o, 0, o->tc, o->tk);
        if (rc == BPTT_OK)
            rc = emit_reversal(o, o->tc, o->tk, kk, T, p);
    }
    if (rc != BPTT_OK) {
        bptt_plan_free(p);
        return rc;
    }
    if (prefix)
        *prefix = o->nlog;
    o->state = 2;
    *out = p;
    return BPTT_OK;
}

/* ---- every length in one sweep ---------------------------------------------- */

static int online_copy(bptt_online **out, const bptt_online *o)
{
    bptt_online *d = planner_calloc(1, sizeof *d);
    if (!d)
        return BPTT_ENOMEM;
    *d = *o;
    d->block = NULL;
    d->c = NULL;
    d->kd = d->tk = d->fixed = NULL;
    d->tc = NULL;
    d->top = NULL;
    d->xs = NULL;
    d->xcap = 0;
    d->ccap = 0;
    /* the table is borrowed: the caller made it long enough for the
     * copy's step, and takes it back before freeing the copy */
    d->log = NULL;
    d->nlog = d->logcap = 0;
    d->keep_log = 0;
    if (reserve(d, o->ccap) != BPTT_OK) {
        d->tb = NULL;
        bptt_online_free(d);
        return BPTT_ENOMEM;
    }
    memcpy(d->c, o->c, (o->k + 1) * sizeof *d->c);
    memcpy(d->kd, o->kd, o->k + 1);
    if (o->nx) {
        d->xs = planner_malloc(o->xcap * sizeof *d->xs);
        if (!d->xs) {
            d->tb = NULL;
            bptt_online_free(d);
            return BPTT_ENOMEM;
        }
        memcpy(d->xs, o->xs + o->xh, o->nx * sizeof *d->xs);
        d->xcap = o->xcap;
        d->xh = 0;
    }
    *out = d;
    return BPTT_OK;
}

int bptt_online_curve(const char *strategy, int64_t hidden_bytes,
                      int64_t internal_bytes, int64_t budget_bytes,
                      size_t t_max, int lookahead, int64_t *online,
                      int64_t *offline)
{
    bptt_online *o = NULL;
    if (t_max < 1 || t_max > (size_t)UINT32_MAX - 3)
        return BPTT_EINVAL;
    int rc = online_open(&o, strategy, hidden_bytes, internal_bytes,
                         budget_bytes, NULL, 0);
    if (rc != BPTT_OK)
        return rc;
    bptt_action a[BPTT_ONLINE_ACTIONS_MAX];
    size_t n;
    for (size_t T = 1; T <= t_max && rc == BPTT_OK && online; T++) {
        if (lookahead) {
            bptt_online *d = NULL;
            rc = ensure_table(o, table_need(o, T + 1 + MSM_HORIZON_MAX));
            if (rc == BPTT_OK)
                rc = online_copy(&d, o);
            if (rc == BPTT_OK)
                rc = bptt_online_next(d, 1, a, &n);
            if (rc == BPTT_OK)
                online[T - 1] = bptt_online_cost(d);
            if (d)
                d->tb = NULL;
            bptt_online_free(d);
            if (rc == BPTT_OK)
                rc = bptt_online_next(o, 0, a, &n);
        } else {
            rc = bptt_online_next(o, 0, a, &n);
            if (rc == BPTT_OK)
                online[T - 1] = bptt_online_cost(o);
        }
    }
    const int64_t h = o->h, s = o->s, m = o->m;
    const int msm = o->msm_asked;
    bptt_online_free(o);
    if (rc != BPTT_OK || !offline)
        return rc;
    if (!msm) {
        for (size_t T = 1; T <= t_max; T++) {
            const int64_t c = F((int64_t)T, m / h);
            offline[T - 1] = c >= INF ? -1 : c;
        }
        return BPTT_OK;
    }
    bptt_table *tb = NULL;
    const bptt_table_options topt = {.min_budget = m};
    rc = bptt_table_alloc(&tb, bptt_strategy_find("msm"), t_max, h, s, m,
                          &topt);
    if (rc != BPTT_OK)
        return rc;
    for (size_t T = 1; T <= t_max; T++)
        offline[T - 1] = bptt_table_cost_at(tb, T, m);
    bptt_table_free(tb);
    return BPTT_OK;
}
