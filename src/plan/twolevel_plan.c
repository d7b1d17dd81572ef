/* twolevel_plan.c: a two-level table (twolevel.c) unrolled into its plan,
 * counted, and costed (include/bptt/twolevel.h; doc/twolevel.md 2 says
 * which actions each option of the recursion stands for). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "alloc.h"
#include "bptt.h"
#include "twolevel.h"
#include "twolevel_impl.h"

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
    if (n == 0 && k == TK_DS) { /* s(a) is working: its backward */
        const int rc = bptt_plan_push(p, BPTT_BACKWARD, a);
        return rc != BPTT_OK ? rc : bptt_plan_push(p, BPTT_DROP_INTERNAL, a);
    }
    if (n == 0)
        return free_start(p, k, a);
    const int32_t ch = tl->choice[cell(tl, k, x.mi, x.di, n)];
    const int opt = ch & 15;
    const size_t y = (size_t)(ch >> 4);
    const int of = owns_fast(k), os = owns_slow(k);
    const int64_t mf = fsub(tl, x.mi, of, 0), df = dsub(tl, x.di, os, 0);
    int rc = BPTT_OK;
    switch (opt) {
    case OPT_NOTHING:
        rc = advance_to(p, a, a + n);
        if (rc == BPTT_OK)
            rc = bptt_plan_push(p, BPTT_BACKWARD, a + n);
        if (rc != BPTT_OK)
            return rc;
        if (n == 1 && k != TK_DS)
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
        /* at y = 1 an owned start is freed first: its units are left */
        const int fo = y > 1 && of, so = y > 1 && os;
        rc = advance_to(p, a, a + y);
        if (rc == BPTT_OK && y == 1)
            rc = free_start(p, k, a);
        if (rc == BPTT_OK)
            rc = bptt_plan_push(
                p, fast ? BPTT_SAVE_INTERNAL : BPTT_WRITE_INTERNAL, a + y);
        if (rc == BPTT_OK && (y > 1 || k == TK_DS))
            rc = push_left(e, k, a, y - 1, x.mi, x.di);
        /* after the child: backward y, s(y) freed (a DS child reads s(y)
         * back, runs backward y and drops it itself) */
        if (rc == BPTT_OK && fast)
            rc = push_act(e, BPTT_FREE_INTERNAL, a + y);
        if (rc == BPTT_OK && fast)
            rc = push_act(e, BPTT_BACKWARD, a + y);
        if (rc == BPTT_OK)
            rc = fast ? push_seg(e, TK_S, a + y, n - y, fsub(tl, x.mi, fo, 1),
                                 dsub(tl, x.di, so, 0))
                      : push_seg(e, TK_DS, a + y, n - y, fsub(tl, x.mi, fo, 0),
                                 dsub(tl, x.di, so, 1));
        return rc;
    }
    case OPT_TO_H:
    case OPT_TO_DH: {
        const int to_h = opt == OPT_TO_H;
        rc = bptt_plan_push(p, to_h ? BPTT_SAVE_HIDDEN : BPTT_WRITE_HIDDEN,
                            a);
        if (rc == BPTT_OK && k == (to_h ? TK_DH : TK_H))
            rc = bptt_plan_push(p, to_h ? BPTT_DROP_HIDDEN : BPTT_FREE_HIDDEN,
                                a);
        if (rc == BPTT_OK && k == TK_DS) /* then s(a) back, its backward */
            rc = push_left(e, TK_DS, a, 0, 0, 0);
        return rc != BPTT_OK ? rc
                             : push_seg(e, to_h ? TK_H : TK_DH, a, n, x.mi,
                                        x.di);
    }
    case OPT_TO_S: {
        rc = bptt_plan_push(p, BPTT_SAVE_INTERNAL, a);
        if (rc == BPTT_OK)
            rc = bptt_plan_push(p, BPTT_DROP_INTERNAL, a);
        if (rc == BPTT_OK)
            rc = push_act(e, BPTT_FREE_INTERNAL, a);
        if (rc == BPTT_OK)
            rc = push_act(e, BPTT_BACKWARD, a);
        if (rc != BPTT_OK)
            return rc;
        return push_seg(e, TK_S, a, n, fsub(tl, x.mi, 0, 1),
                        dadd_s(tl, x.di));
    }
    default:
        return BPTT_EINVAL; /* an infeasible cell: never asked */
    }
}

/* The optimum's actions onto p (a plan, or a counting one: plan.c). */
static int emit_plan(const bptt_twolevel *tl, bptt_plan *p)
{
    emitter e = {NULL, 0, 0, p};
    int rc = push_seg(&e, TK_H, 0, tl->t, tl->nm - 1, tl->nd - 1);
    while (rc == BPTT_OK && e.n > 0) {
        const task x = e.v[--e.n];
        rc = x.seg ? emit_seg(tl, &e, x) : bptt_plan_push(p, x.k, x.a);
    }
    planner_free(e.v);
    return rc;
}

static int optimum_feasible(const bptt_twolevel *tl)
{
    return get(tl, TK_H, tl->nm - 1, tl->nd - 1, tl->t) < TL_INF;
}

int64_t bptt_twolevel_plan_actions(const bptt_twolevel *tl)
{
    if (!tl || !optimum_feasible(tl))
        return -1;
    bptt_plan counter = {.length = tl->t, .hidden_units = tl->h,
                         .internal_units = tl->s, .budget = tl->m,
                         .capacity = SIZE_MAX, .slow_budget = tl->d_asked};
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
    p->slow_budget = tl->d_asked;
    rc = emit_plan(tl, p);
    if (rc != BPTT_OK) {
        bptt_plan_free(p);
        return rc;
    }
    *out = p;
    return BPTT_OK;
}

double bptt_twolevel_cost_at(const bptt_twolevel *tl, size_t t, int64_t m,
                             int64_t d)
{
    if (!tl || t > tl->t || m < 0 || m > tl->m || d < 0)
        return -1.0;
    if (unlimited(tl) ? d < tl->d_asked && d < twolevel_slow_cap(tl->t, tl->h, tl->s)
                      : d > tl->d)
        return -1.0;
    /* the columns of the largest budgets at most m and d */
    const int64_t mi = twolevel_axis_col(tl->fv, tl->nm, m);
    const int64_t di =
        unlimited(tl) ? 0 : twolevel_axis_col(tl->sv, tl->nd, d);
    const int64_t c = get(tl, TK_H, mi, di, t);
    return c >= TL_INF ? -1.0 : (double)c / (double)TL_Q;
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
    const bptt_slow_level slow = {tl->d_asked, tl->wd, tl->rd};
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
