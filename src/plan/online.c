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
    int msm;
    bptt_units u;
    int64_t h, s, m; /* units; budget */
    int64_t slots;   /* hidden slots of the whole budget: m / h */
    size_t i;        /* steps run */
    int state;       /* 0: open, 1: the last step announced, 2: finished */
    size_t *c;       /* hidden checkpoints c[0..k] */
    size_t *tmp;     /* scratch of the rule (ccap) */
    size_t k, ccap;
    size_t wlo, whi; /* window: s(j) stored for wlo <= j < whi */
    int64_t wmax;    /* the window's size from now on (it only falls) */
    int keep_log;
    bptt_action *log; /* every action handed out */
    size_t nlog, logcap;
};

/* ---- arithmetic ---------------------------------------------------------- */

/* binom(n, k) capped at cap (>= 1). */
static int64_t binom_cap(int64_t n, int64_t k, int64_t cap)
{
    if (k < 0 || k > n)
        return 0;
    if (n - k < k)
        k = n - k;
    __int128 b = 1;
    for (int64_t j = 1; j <= k; j++) {
        b = b * (n - k + j) / j;
        if (b >= cap)
            return cap;
    }
    return (int64_t)b;
}

/* Offline hsm cost of n steps with `slots` hidden slots (start's
 * included); 0 for n <= 0; INF when it does not fit. */
static int64_t F(int64_t n, int64_t slots)
{
    if (n <= 0)
        return 0;
    if (slots < 1)
        return INF;
    if (slots > n)
        slots = n; /* more slots than steps change nothing */
    const int64_t c = slots == 1 ? -1 : bptt_hsm_closed_cost(n, slots);
    if (slots == 1) {
        const __int128 q = (__int128)n * (n + 1) / 2;
        return q >= INF ? INF : (int64_t)q;
    }
    return c < 0 || c >= INF ? INF : c;
}

static int64_t add_cap(int64_t a, int64_t b)
{
    return (a >= INF || b >= INF || a > INF - b) ? INF : a + b;
}

/* The hidden slots the placement may use while the window keeps w. */
static int64_t place_slots(const bptt_online *o, int64_t w)
{
    const int64_t left = o->m - w * o->s;
    return left < o->h ? 0 : left / o->h;
}

/* ---- the cost of ending now --------------------------------------------- */

/* Forward ops if the sequence ends after T steps with checkpoints c[0..k]
 * and the window s(wlo .. whi - 1). */
static int64_t end_cost(const bptt_online *o, const size_t *c, size_t k,
                        size_t T, size_t wlo, size_t whi)
{
    const size_t E = (whi == T && wlo < whi) ? wlo : T;
    size_t q = 0;
    while (q < k && c[q + 1] <= E - 1)
        q++;
    int64_t tot = (int64_t)T;
    for (size_t j = 1; j <= q; j++)
        tot = add_cap(tot, F((int64_t)(c[j] - c[j - 1]),
                             o->slots - (int64_t)j + 1));
    return add_cap(tot, F((int64_t)(E - 1 - c[q]), o->slots - (int64_t)q));
}

/* ---- the placement rule (doc/online.md 2) --------------------------------- */

/* The rule's choice at state i (step i + 1 will run and is not the last):
 * -1 store nothing, 0 store h(i) in a free slot, j >= 1 store h(i) in
 * place of c[j]. */
static long choose(const bptt_online *o, size_t i)
{
    const int64_t S = place_slots(o, o->wmax);
    if (i == 0 || S < 1)
        return -1;
    if ((int64_t)o->k + 1 < S)
        return 0;
    if (o->k == 0)
        return -1; /* one slot: h(0) alone */
    const size_t *c = o->c, k = o->k;
    const int64_t Tn = (int64_t)i + 2; /* the next end this choice sees */
    int64_t r = 1;
    while (binom_cap(S + r, S, Tn) < Tn)
        r++;
    const int64_t x = (int64_t)(i - c[k]);
    /* gaps, level by level: merging c[j] joins the gaps of levels
     * S - j + 1 and S - j into level S - j + 1 */
    for (size_t j = k; j >= 1; j--) {
        const int64_t g = (int64_t)(c[j] - c[j - 1]);
        const int64_t gn = j < k ? (int64_t)(c[j + 1] - c[j]) : x;
        const int64_t lev = S - (int64_t)j + 1;
        const int64_t cap = binom_cap(lev + r - 1, lev, INT64_MAX / 4);
        if (g + gn == cap && r <= 2)
            return (long)j; /* fills its level exactly */
    }
    if (r <= 2 && x + 1 <= r)
        return -1;
    if (r <= 2) {
        for (size_t j = k; j >= 1; j--) {
            const int64_t g = (int64_t)(c[j] - c[j - 1]);
            const int64_t gn = j < k ? (int64_t)(c[j + 1] - c[j]) : x;
            const int64_t lev = S - (int64_t)j + 1;
            if (g + gn <= binom_cap(lev + r - 1, lev, INT64_MAX / 4))
                return (long)j;
        }
        return (long)k;
    }
    /* past C(S+2, 2): the choice that costs least at the next two ends,
     * storing nothing on a tie */
    long best = -1;
    int64_t bestc = INT64_MAX;
    size_t *tmp = o->tmp;
    for (long j = -1; j <= (long)k; j++) {
        if (j == 0)
            continue;
        memcpy(tmp, c, (k + 1) * sizeof *tmp);
        if (j >= 1) {
            memmove(tmp + j, tmp + j + 1, (k - (size_t)j) * sizeof *tmp);
            tmp[k] = i;
        }
        int64_t sc = 0;
        for (size_t e = i + 2; e <= i + 3; e++)
            sc = add_cap(sc, end_cost(o, tmp, k, e, e, e));
        if (sc < bestc) {
            bestc = sc;
            best = j;
        }
    }
    return best;
}

/* msm: the window's size for the ends ahead: shrink it by one while that
 * costs less at the next end, each state given up buying hidden slots. */
static void shrink_window(bptt_online *o, size_t i)
{
    const int64_t Tn = (int64_t)i + 2;
    while (o->wmax > 0) {
        const int64_t w = o->wmax;
        const int64_t keep = add_cap(Tn, F(Tn - w, place_slots(o, w)) -
                                             (Tn - w > 0 ? Tn - w : 0));
        const int64_t less =
            add_cap(Tn, F(Tn - w + 1, place_slots(o, w - 1)) -
                            (Tn - w + 1 > 0 ? Tn - w + 1 : 0));
        if (less >= keep)
            break;
        o->wmax--;
    }
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
    o->msm = msm;
    o->u = u;
    o->h = u.hidden_units;
    o->s = u.internal_units;
    o->m = m;
    o->slots = m / o->h;
    o->keep_log = keep_log;
    o->ccap = 16;
    o->c = planner_malloc(o->ccap * sizeof *o->c);
    o->tmp = planner_malloc(o->ccap * sizeof *o->tmp);
    if (!o->c || !o->tmp) {
        bptt_online_free(o);
        return BPTT_ENOMEM;
    }
    o->c[0] = 0;
    o->wmax = msm ? (m - o->h) / o->s : 0;
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
    planner_free(o->c);
    planner_free(o->tmp);
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
    bptt_action a[BPTT_ONLINE_ACTIONS_MAX];
    size_t na = 0;
    if (o->msm && !last)
        shrink_window(o, i);
    /* the window keeps wmax states, s(i) among them */
    const int keep_si = o->msm && i >= 1 && o->wmax >= 1;
    while (o->whi - o->wlo > 0 &&
           (int64_t)(o->whi - o->wlo) + keep_si > o->wmax) {
        a[na++] = (bptt_action){BPTT_FREE_INTERNAL, (uint32_t)o->wlo};
        o->wlo++;
    }
    if (o->k + 2 > o->ccap) { /* room for one more, before choosing */
        size_t *v = planner_realloc(o->c, 2 * o->ccap * sizeof *v);
        if (!v)
            return BPTT_ENOMEM;
        o->c = v;
        v = planner_realloc(o->tmp, 2 * o->ccap * sizeof *v);
        if (!v)
            return BPTT_ENOMEM;
        o->tmp = v;
        o->ccap *= 2;
    }
    const long j = last ? -1 : choose(o, i);
    if (j >= 1) {
        a[na++] = (bptt_action){BPTT_FREE_HIDDEN, (uint32_t)o->c[j]};
        memmove(o->c + j, o->c + j + 1, (o->k - (size_t)j) * sizeof *o->c);
        o->c[o->k] = i;
    } else if (j == 0) {
        o->c[++o->k] = i;
    }
    if (j >= 0)
        a[na++] = (bptt_action){BPTT_SAVE_HIDDEN, (uint32_t)i};
    if (keep_si) {
        if (o->whi == o->wlo)
            o->wlo = i;
        o->whi = i + 1;
        a[na++] = (bptt_action){BPTT_SAVE_INTERNAL, (uint32_t)i};
    }
    a[na++] = (bptt_action){BPTT_ADVANCE, (uint32_t)(i + 1)};
    const int rc = log_push(o, a, na);
    if (rc != BPTT_OK)
        return rc;
    memcpy(acts, a, na * sizeof *a);
    *n = na;
    o->i = i + 1;
    if (last)
        o->state = 1;
    return BPTT_OK;
}

int64_t bptt_online_cost(const bptt_online *o)
{
    if (!o || o->i < 1)
        return -1;
    const int64_t c = end_cost(o, o->c, o->k, o->i, o->wlo, o->whi);
    return c >= INF ? -1 : c;
}

size_t bptt_online_steps(const bptt_online *o)
{
    return o ? o->i : 0;
}

int64_t bptt_online_held(const bptt_online *o)
{
    if (!o)
        return -1;
    return (int64_t)(o->k + 1) * o->h + (int64_t)(o->whi - o->wlo) * o->s;
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

int bptt_online_finish(bptt_online *o, bptt_plan **out, size_t *prefix)
{
    if (out)
        *out = NULL;
    if (!o || !out || o->i < 1 || o->state == 2 || !o->keep_log)
        return BPTT_EINVAL;
    const size_t T = o->i;
    const size_t E = (o->whi == T && o->wlo < o->whi) ? o->wlo : T;
    size_t q = 0;
    while (q < o->k && o->c[q + 1] <= E - 1)
        q++;
    /* the longest hidden segment, for one hsm table in slots */
    size_t maxlen = E - 1 - o->c[q];
    for (size_t j = 1; j <= q; j++)
        if (o->c[j] - o->c[j - 1] > maxlen)
            maxlen = o->c[j] - o->c[j - 1];
    bptt_plan *p = NULL;
    bptt_table *tb = NULL;
    int rc = bptt_plan_alloc(&p, T, o->h, o->s, o->m);
    if (rc != BPTT_OK)
        return rc;
    const int64_t slot_cap =
        o->slots < (int64_t)maxlen + 1 ? o->slots : (int64_t)maxlen + 1;
    if (maxlen > 0)
        rc = bptt_table_alloc(&tb, bptt_strategy_find("hsm"), maxlen, 1, 1,
                              slot_cap, NULL);
    for (size_t n = 0; n < o->nlog && rc == BPTT_OK; n++)
        rc = bptt_plan_push(p, (int)o->log[n].op, o->log[n].step);
    if (rc == BPTT_OK)
        rc = bptt_plan_push(p, BPTT_BACKWARD, T);
    for (size_t j = T - 1; j >= E && j >= 1 && rc == BPTT_OK; j--) {
        rc = bptt_plan_push(p, BPTT_BACKWARD, j);
        if (rc == BPTT_OK)
            rc = bptt_plan_push(p, BPTT_FREE_INTERNAL, j);
    }
    for (size_t j = o->k; j > q && rc == BPTT_OK; j--)
        rc = bptt_plan_push(p, BPTT_FREE_HIDDEN, o->c[j]);
    for (size_t j = q + 1; j-- > 0 && rc == BPTT_OK;) {
        const size_t len = (j == q ? E - 1 : o->c[j + 1]) - o->c[j];
        int64_t b = o->slots - (int64_t)j;
        if (b > slot_cap)
            b = slot_cap;
        if (len == 0)
            rc = bptt_plan_push(p, BPTT_FREE_HIDDEN, o->c[j]);
        else
            rc = planner_dp_emit_at(tb, o->c[j], len, b, 0, p);
    }
    bptt_table_free(tb);
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
    bptt_online *d = planner_malloc(sizeof *d);
    if (!d)
        return BPTT_ENOMEM;
    *d = *o;
    d->c = planner_malloc(o->ccap * sizeof *d->c);
    if (!d->c) {
        planner_free(d);
        return BPTT_ENOMEM;
    }
    d->tmp = planner_malloc(o->ccap * sizeof *d->tmp);
    if (!d->tmp) {
        planner_free(d->c);
        planner_free(d);
        return BPTT_ENOMEM;
    }
    memcpy(d->c, o->c, (o->k + 1) * sizeof *d->c);
    d->log = NULL;
    d->nlog = d->logcap = 0;
    d->keep_log = 0;
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
            rc = online_copy(&d, o);
            if (rc == BPTT_OK)
                rc = bptt_online_next(d, 1, a, &n);
            if (rc == BPTT_OK)
                online[T - 1] = bptt_online_cost(d);
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
    const int msm = o->msm;
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
    rc = bptt_table_alloc(&tb, bptt_strategy_find("msm"), t_max, h, s, m,
                          NULL);
    if (rc != BPTT_OK)
        return rc;
    for (size_t T = 1; T <= t_max; T++)
        offline[T - 1] = bptt_table_cost_at(tb, T, m);
    bptt_table_free(tb);
    return BPTT_OK;
}
