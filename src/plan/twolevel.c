/* twolevel.c: the two-level planner (include/bptt/twolevel.h).  The model,
 * the recursion and why it is the optimum: doc/twolevel.md.
 *
 * A segment of n steps starts at a state of one of four kinds:
 *   H   a hidden state in fast memory that the segment owns,
 *   S   the hidden part of an internal state a parent keeps in fast memory,
 *   DH  a hidden state on the slow level that the segment owns,
 *   DS  an internal state a parent keeps on the slow level.
 * X(n, m, d) is the least cost of the segment with m fast and d slow units
 * (the owned start's included), the running state at its start.  The
 * first state stored after the start, at step y of the segment, on either
 * level and of either kind, splits it; or nothing is stored; or the start
 * moves level before anything runs (doc/twolevel.md 2). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "bptt.h"
#include "budget.h"
#include "twolevel.h"

enum { TK_H, TK_S, TK_DH, TK_DS, TK_N };
enum {
    OPT_NOTHING = 1, /* y = n: backward n uses the working s(n) */
    OPT_HF,          /* h(y) in fast memory */
    OPT_HS,          /* h(y) on the slow level */
    OPT_IF,          /* s(y) in fast memory */
    OPT_IS,          /* s(y) on the slow level */
    OPT_TO_H,        /* the start copied to fast memory (from DH or DS) */
    OPT_TO_DH        /* the start written to the slow level (from H or DS) */
};

/* Costs are integers in 2^-20 forward ops. */
#define TL_Q ((int64_t)1 << 20)
#define TL_INF (INT64_MAX / 4)

struct bptt_twolevel {
    int msm;
    size_t t;
    int64_t h, s, m, d; /* d: BPTT_SLOW_UNLIMITED for no bound */
    double wd, rd;
    int64_t wh, ws, rh, rs; /* a write or read of h or s units, scaled */
    int64_t nm, nd;         /* columns: budgets 0..m, 0..d (1 if unlimited) */
    int64_t *cost;          /* [kind][mi][di][n] */
    int32_t *choice;        /* option | y << 3 */
};

static int unlimited(const bptt_twolevel *tl)
{
    return tl->d == BPTT_SLOW_UNLIMITED;
}

static size_t cell(const bptt_twolevel *tl, int k, int64_t mi, int64_t di,
                   size_t n)
{
    return (((size_t)k * (size_t)tl->nm + (size_t)mi) * (size_t)tl->nd +
            (size_t)di) * (tl->t + 1) + n;
}

/* The slow column left after taking u units from column di (-1: none). */
static int64_t dsub(const bptt_twolevel *tl, int64_t di, int64_t u)
{
    if (unlimited(tl))
        return 0;
    return di >= u ? di - u : -1;
}

static int64_t get(const bptt_twolevel *tl, int k, int64_t mi, int64_t di,
                   size_t n)
{
    if (mi < 0 || di < 0)
        return TL_INF;
    return tl->cost[cell(tl, k, mi, di, n)];
}

static int owns_fast(int k) { return k == TK_H; }
static int owns_slow(int k) { return k == TK_DH; }

static int64_t restart_cost(const bptt_twolevel *tl, int k)
{
    return k == TK_DH ? tl->rh : k == TK_DS ? tl->rs : 0;
}

static int feasible(const bptt_twolevel *tl, int k, int64_t mi, int64_t di)
{
    if (k == TK_H)
        return mi >= tl->h;
    if (k == TK_DH)
        return unlimited(tl) || di >= tl->h;
    return 1;
}

static void consider(int64_t c, int opt, size_t y, int64_t *best,
                     int32_t *ch)
{
    if (c < *best) {
        *best = c;
        *ch = (int32_t)((int64_t)opt | (int64_t)y << 3);
    }
}

static int64_t add(int64_t a, int64_t b)
{
    return (a >= TL_INF || b >= TL_INF) ? TL_INF : a + b;
}

/* The options of kind k at (n >= 1, mi, di) before any change of level. */
static void base_cell(const bptt_twolevel *tl, int k, size_t n, int64_t mi,
                      int64_t di, int64_t *best, int32_t *ch)
{
    const int64_t h = tl->h, s = tl->s, Q = TL_Q;
    const int64_t r = restart_cost(tl, k);
    const int64_t mf = mi - (owns_fast(k) ? h : 0);
    const int64_t df = owns_slow(k) ? dsub(tl, di, h) : di;
    *best = TL_INF;
    *ch = 0;
    /* nothing stored */
    consider(n > 1 ? add((int64_t)n * Q, add(r, get(tl, k, mi, di, n - 1)))
                   : Q,
             OPT_NOTHING, n, best, ch);
    /* with the start freed first (an internal state at y = 1 of an owned
     * start, whose left part is empty) */
    const int64_t mfree = mi, dfree = di;
    for (size_t y = 1; y < n; y++) {
        const int64_t Y = (int64_t)y * Q;
        const int64_t left = add(r, get(tl, k, mi, di, y));
        if (mf >= h)
            consider(add(Y, add(get(tl, TK_H, mf, df, n - y), left)), OPT_HF,
                     y, best, ch);
        if (dsub(tl, df, h) >= 0)
            consider(add(Y + tl->wh, add(get(tl, TK_DH, mf, df, n - y), left)),
                     OPT_HS, y, best, ch);
        if (!tl->msm)
            continue;
        const int64_t left1 =
            y > 1 ? add(r, get(tl, k, mi, di, y - 1)) : 0;
        const int64_t m1 = y == 1 ? mfree : mf, d1 = y == 1 ? dfree : df;
        if (m1 >= s)
            consider(add(Y, add(get(tl, TK_S, m1 - s, d1, n - y), left1)),
                     OPT_IF, y, best, ch);
        const int64_t d2 = dsub(tl, d1, s);
        if (d2 >= 0)
            consider(add(Y + tl->ws + tl->rs,
                         add(get(tl, TK_DS, m1, d2, n - y), left1)),
                     OPT_IS, y, best, ch);
    }
}

/* Fill every cell of length n. */
static void fill_length(bptt_twolevel *tl, size_t n)
{
    for (int64_t mi = 0; mi < tl->nm; mi++)
        for (int64_t di = 0; di < tl->nd; di++) {
            int64_t b[TK_N];
            int32_t c[TK_N];
            for (int k = 0; k < TK_N; k++) {
                b[k] = TL_INF;
                c[k] = 0;
                if (!tl->msm && (k == TK_S || k == TK_DS))
                    continue;
                if (!feasible(tl, k, mi, unlimited(tl) ? tl->h : di))
                    continue;
                if (n == 0)
                    b[k] = 0;
                else
                    base_cell(tl, k, n, mi, di, &b[k], &c[k]);
            }
            if (n > 0) {
                /* a change of level of the start, before anything runs;
                 * chains of them only add cost (doc/twolevel.md 2) */
                const int64_t hb = b[TK_H], dhb = b[TK_DH];
                consider(add(tl->wh, dhb), OPT_TO_DH, 0, &b[TK_H], &c[TK_H]);
                consider(hb, OPT_TO_H, 0, &b[TK_DH], &c[TK_DH]);
                if (tl->msm) {
                    consider(hb, OPT_TO_H, 0, &b[TK_DS], &c[TK_DS]);
                    consider(add(tl->wh, dhb), OPT_TO_DH, 0, &b[TK_DS],
                             &c[TK_DS]);
                }
            }
            for (int k = 0; k < TK_N; k++) {
                tl->cost[cell(tl, k, mi, di, n)] = b[k];
                tl->choice[cell(tl, k, mi, di, n)] = c[k];
            }
        }
}

static int strategy_msm(const char *strategy)
{
    if (!strategy)
        return -1;
    if (strcmp(strategy, "hsm") == 0)
        return 0;
    if (strcmp(strategy, "msm") == 0)
        return 1;
    return -1;
}

static int args_ok(size_t t, int64_t h, int64_t s, int64_t m,
                   const bptt_slow_level *slow)
{
    if (!slow || t < 1 || t > (size_t)INT32_MAX >> 3 || h < 1 || s < h ||
        m < 0 || slow->budget < 0)
        return 0;
    const double c[2] = {slow->write_cost, slow->read_cost};
    for (int i = 0; i < 2; i++)
        if (!(c[i] >= 0.0 && c[i] <= BPTT_SLOW_COST_MAX))
            return 0; /* NaN fails both */
    return 1;
}

static size_t table_bytes(size_t t, int64_t m, int64_t d)
{
    const double cells = 4.0 * ((double)m + 1.0) *
                         (d == BPTT_SLOW_UNLIMITED ? 1.0 : (double)d + 1.0) *
                         ((double)t + 1.0);
    const double b = cells * (sizeof(int64_t) + sizeof(int32_t)) +
                     2.0 * (double)PLANNER_ALLOC_SLACK +
                     (double)sizeof(bptt_twolevel) + PLANNER_SMALL_SLACK;
    return b >= (double)SIZE_MAX ? SIZE_MAX : (size_t)b;
}

size_t bptt_twolevel_bytes_needed(const char *strategy, size_t t, int64_t h,
                                  int64_t s, int64_t m,
                                  const bptt_slow_level *slow)
{
    if (strategy_msm(strategy) < 0 || !args_ok(t, h, s, m, slow))
        return 0;
    return table_bytes(t, m, slow->budget);
}

int bptt_twolevel_alloc(bptt_twolevel **out, const char *strategy, size_t t,
                        int64_t h, int64_t s, int64_t m,
                        const bptt_slow_level *slow)
{
    if (!out)
        return BPTT_EINVAL;
    *out = NULL;
    if (!strategy || !args_ok(t, h, s, m, slow))
        return BPTT_EINVAL;
    const int msm = strategy_msm(strategy);
    if (msm < 0)
        return BPTT_EUNKNOWN;
    if (m < h)
        return BPTT_EINFEASIBLE;
    const size_t bytes = table_bytes(t, m, slow->budget);
    if (bytes == SIZE_MAX ||
        bptt_memory_fits((double)bytes, 2, NULL) != BPTT_OK)
        return BPTT_ETOOBIG;
    bptt_twolevel *tl = planner_calloc(1, sizeof *tl);
    if (!tl)
        return BPTT_ENOMEM;
    tl->msm = msm;
    tl->t = t;
    tl->h = h;
    tl->s = s;
    tl->m = m;
    tl->d = slow->budget;
    tl->wd = slow->write_cost;
    tl->rd = slow->read_cost;
    const double q = (double)TL_Q, alpha = (double)s / (double)h;
    tl->wh = llround(tl->wd * q);
    tl->ws = llround(tl->wd * q * alpha);
    tl->rh = llround(tl->rd * q);
    tl->rs = llround(tl->rd * q * alpha);
    tl->nm = m + 1;
    tl->nd = unlimited(tl) ? 1 : tl->d + 1;
    const size_t cells = 4u * (size_t)tl->nm * (size_t)tl->nd * (t + 1);
    tl->cost = planner_malloc(cells * sizeof *tl->cost);
    tl->choice = planner_malloc(cells * sizeof *tl->choice);
    if (!tl->cost || !tl->choice) {
        bptt_twolevel_free(tl);
        return BPTT_ENOMEM;
    }
    for (size_t n = 0; n <= t; n++)
        fill_length(tl, n);
    *out = tl;
    return BPTT_OK;
}

void bptt_twolevel_free(bptt_twolevel *tl)
{
    if (!tl)
        return;
    planner_free(tl->cost);
    planner_free(tl->choice);
    planner_free(tl);
}

/* ---- the plan ---------------------------------------------------------- */

/* A task of the emitter: a segment, or one action. */
typedef struct {
    int seg;      /* 1: segment, 0: action */
    int k;        /* segment: kind; action: op */
    size_t a, n;  /* segment: start and length; action: step in a */
    int64_t mi, di;
} task;

typedef struct {
    task *v;
    size_t n, cap;
    bptt_plan *plan;
} emitter;

static int push_task(emitter *e, task x)
{
    if (e->n == e->cap) {
        const size_t cap = e->cap ? 2 * e->cap : 64;
        task *v = planner_realloc(e->v, cap * sizeof *v);
        if (!v)
            return BPTT_ENOMEM;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = x;
    return BPTT_OK;
}

static int push_seg(emitter *e, int k, size_t a, size_t n, int64_t mi,
                    int64_t di)
{
    return push_task(e, (task){1, k, a, n, mi, di});
}

static int push_act(emitter *e, int op, size_t i)
{
    return push_task(e, (task){0, op, i, 0, 0, 0});
}

static int restart_op(int k)
{
    return k == TK_H    ? BPTT_RESTORE_HIDDEN
           : k == TK_S  ? BPTT_RESTORE_INTERNAL
           : k == TK_DH ? BPTT_READ_HIDDEN
                        : BPTT_READ_INTERNAL;
}

/* Release an owned start (nothing for S and DS). */
static int free_start(bptt_plan *p, int k, size_t a)
{
    if (k == TK_H)
        return bptt_plan_push(p, BPTT_FREE_HIDDEN, a);
    if (k == TK_DH)
        return bptt_plan_push(p, BPTT_DROP_HIDDEN, a);
    return BPTT_OK;
}

static int advance_to(bptt_plan *p, size_t a, size_t b)
{
    for (size_t i = a + 1; i <= b; i++) {
        const int rc = bptt_plan_push(p, BPTT_ADVANCE, i);
        if (rc != BPTT_OK)
            return rc;
    }
    return BPTT_OK;
}

/* The left part after a child: (pushed in reverse) restart, segment. */
static int push_left(emitter *e, int k, size_t a, size_t n, int64_t mi,
                     int64_t di)
{
    int rc = push_seg(e, k, a, n, mi, di);
    return rc != BPTT_OK ? rc : push_act(e, restart_op(k), a);
}

/* Emit one segment: its own actions now, the rest as tasks. */
static int emit_seg(const bptt_twolevel *tl, emitter *e, task x)
{
    bptt_plan *p = e->plan;
    const int k = x.k;
    const size_t a = x.a, n = x.n;
    if (n == 0)
        return free_start(p, k, a);
    const int32_t ch = tl->choice[cell(tl, k, x.mi, x.di, n)];
    const int opt = ch & 7;
    const size_t y = (size_t)(ch >> 3);
    const int64_t h = tl->h, s = tl->s;
    const int64_t mf = x.mi - (owns_fast(k) ? h : 0);
    const int64_t df = owns_slow(k) ? dsub(tl, x.di, h) : x.di;
    int rc = BPTT_OK;
    switch (opt) {
    case OPT_NOTHING:
        rc = advance_to(p, a, a + n);
        if (rc == BPTT_OK)
            rc = bptt_plan_push(p, BPTT_BACKWARD, a + n);
        if (rc != BPTT_OK)
            return rc;
        if (n == 1)
            return free_start(p, k, a);
        return push_left(e, k, a, n - 1, x.mi, x.di);
    case OPT_HF:
    case OPT_HS: {
        const int fast = opt == OPT_HF;
        rc = advance_to(p, a, a + y);
        if (rc == BPTT_OK)
            rc = bptt_plan_push(p, fast ? BPTT_SAVE_HIDDEN : BPTT_WRITE_HIDDEN,
                                a + y);
        if (rc == BPTT_OK)
            rc = push_left(e, k, a, y, x.mi, x.di);
        if (rc == BPTT_OK)
            rc = push_seg(e, fast ? TK_H : TK_DH, a + y, n - y, mf, df);
        return rc;
    }
    case OPT_IF:
    case OPT_IS: {
        const int fast = opt == OPT_IF;
        int64_t m1 = mf, d1 = df;
        rc = advance_to(p, a, a + y);
        if (rc == BPTT_OK && y == 1) {
            rc = free_start(p, k, a);
            m1 = x.mi;
            d1 = x.di;
        }
        if (rc == BPTT_OK)
            rc = bptt_plan_push(
                p, fast ? BPTT_SAVE_INTERNAL : BPTT_WRITE_INTERNAL, a + y);
        if (rc == BPTT_OK && y > 1)
            rc = push_left(e, k, a, y - 1, x.mi, x.di);
        /* after the child: (read s(y)), backward y, release s(y) */
        if (rc == BPTT_OK)
            rc = push_act(e, fast ? BPTT_FREE_INTERNAL : BPTT_DROP_INTERNAL,
                          a + y);
        if (rc == BPTT_OK)
            rc = push_act(e, BPTT_BACKWARD, a + y);
        if (rc == BPTT_OK && !fast)
            rc = push_act(e, BPTT_READ_INTERNAL, a + y);
        if (rc == BPTT_OK)
            rc = fast ? push_seg(e, TK_S, a + y, n - y, m1 - s, d1)
                      : push_seg(e, TK_DS, a + y, n - y, m1,
                                 dsub(tl, d1, s));
        return rc;
    }
    case OPT_TO_H:
        rc = bptt_plan_push(p, BPTT_SAVE_HIDDEN, a);
        if (rc == BPTT_OK && k == TK_DH)
            rc = bptt_plan_push(p, BPTT_DROP_HIDDEN, a);
        return rc != BPTT_OK ? rc : push_seg(e, TK_H, a, n, x.mi, x.di);
    case OPT_TO_DH:
        rc = bptt_plan_push(p, BPTT_WRITE_HIDDEN, a);
        if (rc == BPTT_OK && k == TK_H)
            rc = bptt_plan_push(p, BPTT_FREE_HIDDEN, a);
        return rc != BPTT_OK ? rc : push_seg(e, TK_DH, a, n, x.mi, x.di);
    default:
        return BPTT_EINVAL; /* an infeasible cell: never asked */
    }
}

/* The optimum's actions onto p (a plan, or a counting one: plan.c). */
static int emit_plan(const bptt_twolevel *tl, bptt_plan *p)
{
    const int64_t di = unlimited(tl) ? 0 : tl->d;
    emitter e = {NULL, 0, 0, p};
    int rc = push_seg(&e, TK_H, 0, tl->t, tl->m, di);
    while (rc == BPTT_OK && e.n > 0) {
        const task x = e.v[--e.n];
        rc = x.seg ? emit_seg(tl, &e, x) : bptt_plan_push(p, x.k, x.a);
    }
    planner_free(e.v);
    return rc;
}

static int optimum_feasible(const bptt_twolevel *tl)
{
    const int64_t di = unlimited(tl) ? 0 : tl->d;
    return get(tl, TK_H, tl->m, di, tl->t) < TL_INF;
}

int64_t bptt_twolevel_plan_actions(const bptt_twolevel *tl)
{
    if (!tl || !optimum_feasible(tl))
        return -1;
    bptt_plan counter = {.length = tl->t, .hidden_units = tl->h,
                         .internal_units = tl->s, .budget = tl->m,
                         .capacity = SIZE_MAX, .slow_budget = tl->d};
    if (emit_plan(tl, &counter) != BPTT_OK)
        return -1;
    return (int64_t)counter.n_actions;
}

int bptt_twolevel_plan(const bptt_twolevel *tl, bptt_plan **out)
{
    if (!out)
        return BPTT_EINVAL;
    *out = NULL;
    if (!tl)
        return BPTT_EINVAL;
    if (!optimum_feasible(tl))
        return BPTT_EINFEASIBLE;
    bptt_plan *p = NULL;
    int rc = bptt_plan_alloc(&p, tl->t, tl->h, tl->s, tl->m);
    if (rc != BPTT_OK)
        return rc;
    p->slow_budget = tl->d;
    rc = emit_plan(tl, p);
    if (rc != BPTT_OK) {
        bptt_plan_free(p);
        return rc;
    }
    *out = p;
    return BPTT_OK;
}

int bptt_twolevel_cost_of(const bptt_twolevel *tl, bptt_twolevel_cost *out)
{
    if (!tl || !out)
        return BPTT_EINVAL;
    memset(out, 0, sizeof *out);
    bptt_plan *p = NULL;
    int rc = bptt_twolevel_plan(tl, &p);
    if (rc != BPTT_OK)
        return rc;
    bptt_plan_stats st;
    rc = bptt_plan_validate(p, &st);
    bptt_plan_free(p);
    if (rc != BPTT_OK)
        return rc;
    out->forward_ops = st.forward_ops;
    out->slow_writes = st.slow_writes;
    out->slow_reads = st.slow_reads;
    out->slow_write_units = st.slow_write_units;
    out->slow_read_units = st.slow_read_units;
    const bptt_slow_level slow = {tl->d, tl->wd, tl->rd};
    out->cost = bptt_twolevel_stats_cost(&st, tl->h, &slow);
    return BPTT_OK;
}

double bptt_twolevel_stats_cost(const bptt_plan_stats *st, int64_t h,
                                const bptt_slow_level *slow)
{
    if (!st || !slow || h < 1)
        return NAN;
    return (double)st->forward_ops +
           slow->write_cost * (double)st->slow_write_units / (double)h +
           slow->read_cost * (double)st->slow_read_units / (double)h;
}

size_t bptt_plan_slow_actions(const bptt_plan *plan)
{
    size_t n = 0;
    if (!plan || !plan->actions)
        return 0;
    for (size_t k = 0; k < plan->n_actions; k++)
        n += plan->actions[k].op >= BPTT_WRITE_HIDDEN &&
             plan->actions[k].op <= BPTT_DROP_INTERNAL;
    return n;
}
