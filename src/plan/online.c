/* online.c: plans for sequences of unknown length (online.h,
 * doc/online.md): the planner object, its steps, the reversal, and every
 * length's cost in one sweep.
 *
 * The planner keeps, while the sequence runs, checkpoints c[0] = 0 <
 * c[1] < ... < c[k] of two kinds (h(c) or s(c)) placed by the rules of
 * online_rule.c, and for msm placing hidden states, internal states of
 * the latest steps in what the rule leaves (xs).  When the sequence ends
 * after T steps: backward T, then each segment from the last checkpoint
 * to the first, by the offline plan (msm's table, or hsm's in slots) with
 * what the checkpoints before it leave. */
#include <stdlib.h>
#include <string.h>

#include "online_impl.h"

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
    const size_t per = 4 * sizeof(size_t) + 3;
    if (cap > SIZE_MAX / per)
        return BPTT_ENOMEM;
    unsigned char *blk = planner_malloc(cap * per);
    if (!blk)
        return BPTT_ENOMEM;
    size_t *c = (size_t *)(void *)blk, *tc = c + cap;
    int64_t *top = (int64_t *)(void *)(tc + cap), *lev = top + cap;
    unsigned char *kd = (unsigned char *)(lev + cap), *tk = kd + cap;
    if (o->ccap) {
        memcpy(c, o->c, (o->k + 1) * sizeof *c);
        memcpy(lev, o->lev, (o->k + 1) * sizeof *lev);
        memcpy(kd, o->kd, o->k + 1);
    } else
        lev[0] = 0;
    planner_free(o->block);
    o->block = blk;
    o->c = c;
    o->tc = tc;
    o->top = top;
    o->lev = lev;
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
        rc = online_ensure_table(o, 64);
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
    if (o->nx == 0)
        o->xh = 0;
    if (rc == BPTT_OK && o->xh + o->nx + 1 > o->xcap && o->xh > 0) {
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
        rc = online_ensure_table(o, online_table_need(o, i + 2 + MSM_HORIZON_MAX));
    if (rc != BPTT_OK)
        return rc;
    choice ch = {-1, -1};
    if (o->mixed)
        ch = online_choose_mixed(o, i, last);
    else if (!last)
        ch = online_choose_hidden(o, i);
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
        held += online_units_of(o, ch.kind);
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
        if (ch.evict >= 0) {
            const size_t e = (size_t)ch.evict;
            memmove(o->lev + e, o->lev + e + 1, (o->k - e) * sizeof *o->lev);
            o->lev[o->k] = o->newlev;
        } else
            o->lev[o->k + 1] = o->newlev;
        o->newlev = 0;
        o->k = online_apply(o, ch, i, o->tc, o->tk);
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

int64_t bptt_online_cost(const bptt_online *o)
{
    if (!o || o->i < 1)
        return -1;
    int keep;
    /* the scratch arrays are the only thing written */
    const int64_t c = online_reversal_cost((bptt_online *)o, o->i, &keep);
    return c >= INF ? -1 : c;
}

size_t bptt_online_steps(const bptt_online *o)
{
    return o ? o->i : 0;
}

int64_t bptt_online_held(const bptt_online *o)
{
    return o ? online_held_units(o, o->kd, o->k) + (int64_t)o->nx * o->s : -1;
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
    int64_t held = online_held_units(o, kd, k);
    for (size_t j = k + 1; j-- > 0 && rc == BPTT_OK;) {
        const size_t next = j < k ? c[j + 1] : T;
        const int nin = j < k ? kd[j + 1] == KIND_S : 1;
        const size_t len = next - c[j] - (size_t)nin;
        held -= online_units_of(o, kd[j]);
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
    if (rc == BPTT_OK && online_reversal_cost(o, T, &keep) >= INF)
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
        const size_t kk = online_physical(o, 1, o->tc, o->tk);
        if (rc == BPTT_OK)
            rc = emit_reversal(o, o->tc, o->tk, kk, T, p);
    } else {
        for (size_t b = 0; b < o->nx && rc == BPTT_OK; b++)
            rc = bptt_plan_push(p, BPTT_FREE_INTERNAL, o->xs[o->xh + b]);
        const size_t kk = online_physical(o, 0, o->tc, o->tk);
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
    d->lev = NULL;
    d->xs = NULL;
    d->xh = d->xcap = 0;
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
    memcpy(d->lev, o->lev, (o->k + 1) * sizeof *d->lev);
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
            rc = online_ensure_table(o, online_table_need(o, T + 1 + MSM_HORIZON_MAX));
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
            const int64_t c = online_hsm_cost((int64_t)T, m / h);
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
