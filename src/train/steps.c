/* steps.c: the executor (see steps.h): one action interpreter, one branch
 * per action, the only caller of a model's step ops; bptt_steps_run feeds
 * it a whole plan, bptt_steps_run_online the actions an online planner
 * (online.h) hands out as the steps arrive, then the rest of the plan it
 * finishes with.  The forward and backward ops are timed each on its own
 * (two reads of the monotonic clock, tens of nanoseconds, against a
 * step's microseconds to milliseconds).  A two-level plan's slow-level
 * actions go to the store of slow.h, opened before the first action when
 * the plan has any. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "slow.h"
#include "steps.h"
#include "twolevel.h"

typedef struct {
    unsigned char *state[2]; /* running hidden state, double-buffered */
    unsigned char *work;     /* working internal state */
    unsigned char *carry;    /* dh: gradient w.r.t. the running state */
    unsigned char **hslot;   /* (cap+1) stored hidden states, NULL if none */
    unsigned char **sslot;   /* (cap+1) stored internal states, NULL if none */
    unsigned char *computed; /* (cap+1) step already run once */
    size_t held, peak;       /* checkpoint bytes held now and at most */
} exec_ws;

/* The interpreter: the state of a run between two actions. */
typedef struct {
    const bptt_steps *ops;
    bptt_mem *mem;
    bptt_steps_stats *st;
    bptt_exec_point *points; /* points[k] for k < points_cap */
    size_t points_cap;
    exec_ws w;
    size_t hb, sb;
    size_t t;      /* the length; SIZE_MAX while it is not known */
    size_t cap;    /* the tables cover steps 0..cap */
    size_t budget; /* checkpoint bytes the run may hold */
    int online;    /* actions checked one by one (no validated plan) */
    int cur;       /* w.state[cur] is the running state */
    /* the working internal state s(in_slot) is in w.sslot[in_slot], not
     * in w.work (0: it is in w.work, or there is none) */
    size_t in_slot;
    size_t k;    /* actions run */
    size_t head; /* the step of the running state, after an advance */
    bptt_slow_store slow; /* the slow level (live when the plan has one) */
    size_t slow_budget;   /* bytes the slow level may hold */
} interp;

/* a checkpoint block, counted into the store's bytes */
static unsigned char *store_get(interp *x, size_t bytes)
{
    unsigned char *p =
        bptt_mem_get_uninit(x->mem, BPTT_MEM_CHECKPOINT, bytes);
    if (p) {
        x->w.held += bytes;
        if (x->w.held > x->w.peak)
            x->w.peak = x->w.held;
    }
    return p;
}

static void store_put(interp *x, unsigned char **slot, size_t bytes)
{
    if (*slot) {
        bptt_mem_put(x->mem, *slot);
        x->w.held -= bytes;
        *slot = NULL;
    }
}

static void ws_release(interp *x)
{
    exec_ws *w = &x->w;
    for (size_t i = 0; i <= x->cap; i++) {
        if (w->hslot)
            store_put(x, &w->hslot[i], x->hb);
        if (w->sslot)
            store_put(x, &w->sslot[i], x->sb);
    }
    bptt_mem *mem = x->mem;
    bptt_mem_put(mem, w->hslot);
    bptt_mem_put(mem, w->sslot);
    bptt_mem_put(mem, w->computed);
    bptt_mem_put(mem, w->state[0]);
    bptt_mem_put(mem, w->state[1]);
    bptt_mem_put(mem, w->work);
    bptt_mem_put(mem, w->carry);
}

static double now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* the working set for steps 0..cap and h(0), stored from the start */
static int ws_take(interp *x, size_t cap)
{
    const int W = BPTT_MEM_WORKING;
    exec_ws *w = &x->w;
    bptt_mem *mem = x->mem;
    const size_t hb = x->hb, sb = x->sb;
    x->cap = cap;
    w->state[0] = bptt_mem_get(mem, W, hb);
    w->state[1] = bptt_mem_get(mem, W, hb);
    w->work = bptt_mem_get(mem, W, sb);
    w->carry = bptt_mem_get(mem, W, hb);
    w->hslot = bptt_mem_get(mem, W, (cap + 1) * sizeof *w->hslot);
    w->sslot = bptt_mem_get(mem, W, (cap + 1) * sizeof *w->sslot);
    w->computed = bptt_mem_get(mem, W, cap + 1);
    if (w->hslot)
        w->hslot[0] = store_get(x, hb);
    if (!w->state[0] || !w->state[1] || !w->work || !w->carry || !w->hslot ||
        !w->sslot || !w->computed || !w->hslot[0])
        return BPTT_ENOMEM;
    if (x->ops->h0)
        memcpy(w->state[0], x->ops->h0, hb);
    memcpy(w->hslot[0], w->state[0], hb); /* zero when h0 is NULL */
    return BPTT_OK;
}

/* The per-step tables grown to cover step i (online: the length is not
 * known in advance), doubling. */
static int ws_cover(interp *x, size_t i)
{
    if (i <= x->cap)
        return BPTT_OK;
    size_t cap = x->cap;
    while (cap < i)
        cap = cap > SIZE_MAX / 4 ? i : 2 * cap;
    if (cap >= SIZE_MAX / sizeof(void *))
        return BPTT_ENOMEM;
    const int W = BPTT_MEM_WORKING;
    exec_ws *w = &x->w;
    unsigned char **h = bptt_mem_get(x->mem, W, (cap + 1) * sizeof *h);
    unsigned char **s = bptt_mem_get(x->mem, W, (cap + 1) * sizeof *s);
    unsigned char *c = bptt_mem_get(x->mem, W, cap + 1);
    if (!h || !s || !c) {
        bptt_mem_put(x->mem, h);
        bptt_mem_put(x->mem, s);
        bptt_mem_put(x->mem, c);
        return BPTT_ENOMEM;
    }
    memcpy(h, w->hslot, (x->cap + 1) * sizeof *h);
    memcpy(s, w->sslot, (x->cap + 1) * sizeof *s);
    memcpy(c, w->computed, x->cap + 1);
    bptt_mem_put(x->mem, w->hslot);
    bptt_mem_put(x->mem, w->sslot);
    bptt_mem_put(x->mem, w->computed);
    w->hslot = h;
    w->sslot = s;
    w->computed = c;
    x->cap = cap;
    return BPTT_OK;
}

/* An op's nonzero status as the run returns it (steps.h:
 * BPTT_OP_STATUS_MIN), kept as it was in the stats. */
static int op_failed(bptt_steps_stats *st, int status)
{
    st->op_status = status;
    return status < 0 || status >= BPTT_OP_STATUS_MIN ? status : BPTT_EOP;
}

/* Online, where no validator has seen the actions yet: only the first
 * sweep's kinds, each on a slot in the state it needs. */
static int online_ok(const interp *x, bptt_action a)
{
    const exec_ws *w = &x->w;
    const size_t i = a.step;
    switch (a.op) {
    case BPTT_ADVANCE: /* the next step, from the running state */
        return i == x->head + 1 && !w->computed[i];
    case BPTT_SAVE_HIDDEN: /* the running state */
        return i == x->head && !w->hslot[i];
    case BPTT_SAVE_INTERNAL: /* the working internal state */
        return i >= 1 && i == x->head && !w->sslot[i];
    case BPTT_FREE_HIDDEN:
        return i <= x->cap && w->hslot[i];
    case BPTT_FREE_INTERNAL:
        return i <= x->cap && w->sslot[i];
    default:
        return 0;
    }
}

/* Action a, the run's x->k-th; next: the action after it when known (the
 * advance then writes s(i) straight into a checkpoint saved at once). */
static int act(interp *x, bptt_action a, const bptt_action *next)
{
    const bptt_steps *ops = x->ops;
    bptt_steps_stats *st = x->st;
    exec_ws *w = &x->w;
    const size_t i = a.step, hb = x->hb, sb = x->sb;
    const size_t off = ops->hidden_offset;
    const int copy_hidden = ops->hidden_in_internal != 0;
    void *const ctx = ops->ctx;
    double seconds = 0;
    int rc = BPTT_OK;
    if (x->online) {
        if (a.op == BPTT_ADVANCE)
            rc = ws_cover(x, i);
        if (rc == BPTT_OK && !online_ok(x, a))
            rc = BPTT_EBADPLAN;
        if (rc != BPTT_OK) {
            st->failed_action = (int64_t)x->k++;
            return rc;
        }
    }
    switch (a.op) {
    case BPTT_ADVANCE: {
        /* "advance i; save_internal i": the forward op writes s(i)
         * straight into its checkpoint (taken one action early, with
         * nothing in between, so the peak is the same), which spares
         * copying the working state */
        unsigned char *s_out = w->work;
        x->in_slot = 0;
        if (next && next->op == BPTT_SAVE_INTERNAL && next->step == i &&
            !w->sslot[i]) {
            w->sslot[i] = store_get(x, sb);
            if (!w->sslot[i]) {
                rc = BPTT_ENOMEM;
                break;
            }
            s_out = w->sslot[i];
            x->in_slot = i;
        }
        const int cur = x->cur;
        const double t0 = now();
        rc = ops->forward(ctx, i, w->state[cur], s_out, w->state[!cur]);
        seconds = now() - t0;
        st->forward_seconds += seconds;
        if (rc != 0)
            rc = op_failed(st, rc);
        else if (copy_hidden && memcmp(s_out + off, w->state[!cur], hb))
            rc = BPTT_ESTEPS; /* h(i) is not where the table says */
        else if (i == x->t && ops->h_last)
            memcpy(ops->h_last, w->state[!cur], hb);
        x->cur = !cur;
        x->head = i;
        st->forward_ops++;
        st->recompute_ops += w->computed[i];
        w->computed[i] = 1;
        break;
    }
    case BPTT_SAVE_HIDDEN:
        w->hslot[i] = store_get(x, hb);
        if (!w->hslot[i])
            rc = BPTT_ENOMEM;
        else
            memcpy(w->hslot[i], w->state[x->cur], hb);
        break;
    case BPTT_SAVE_INTERNAL:
        if (x->in_slot == i) /* already there (see advance) */
            break;
        w->sslot[i] = store_get(x, sb);
        if (!w->sslot[i])
            rc = BPTT_ENOMEM;
        else
            memcpy(w->sslot[i], w->work, sb);
        break;
    case BPTT_RESTORE_HIDDEN:
        memcpy(w->state[x->cur], w->hslot[i], hb);
        st->restores++;
        st->restore_hidden_ops++;
        x->in_slot = 0; /* no working internal state now */
        break;
    case BPTT_RESTORE_INTERNAL:
        if (copy_hidden)
            memcpy(w->state[x->cur], w->sslot[i] + off, hb);
        else if ((rc = ops->hidden_from_internal(ctx, i, w->sslot[i],
                                                 w->state[x->cur])) != 0)
            rc = op_failed(st, rc);
        st->restores++;
        st->restore_internal_ops++;
        x->in_slot = 0;
        break;
    case BPTT_BACKWARD: {
        const unsigned char *s = w->sslot[i] ? w->sslot[i] : w->work;
        const double t0 = now();
        rc = ops->backward(ctx, i, s, w->carry);
        if (rc != 0)
            rc = op_failed(st, rc);
        seconds = now() - t0;
        st->backward_seconds += seconds;
        x->in_slot = 0;
        st->backward_ops++;
        break;
    }
    case BPTT_FREE_HIDDEN:
        store_put(x, &w->hslot[i], hb);
        break;
    case BPTT_FREE_INTERNAL:
        if (x->in_slot == i) { /* the working state lives on in w->work */
            memcpy(w->work, w->sslot[i], sb);
            x->in_slot = 0;
        }
        store_put(x, &w->sslot[i], sb);
        break;
    case BPTT_WRITE_HIDDEN: /* a copy of the running state */
        rc = bptt_slow_write(&x->slow, 0, i, w->state[x->cur], hb);
        break;
    case BPTT_WRITE_INTERNAL: /* a copy of the working internal state */
        rc = bptt_slow_write(&x->slow, 1, i,
                             x->in_slot == i ? w->sslot[i] : w->work, sb);
        break;
    case BPTT_READ_HIDDEN:
        rc = bptt_slow_read(&x->slow, 0, i, w->state[x->cur], hb);
        x->in_slot = 0; /* no working internal state now */
        break;
    case BPTT_READ_INTERNAL:
        /* s(i) becomes the working internal state (a backward op of step
         * i may read it), the running state h(i) inside it */
        x->in_slot = 0;
        rc = bptt_slow_read(&x->slow, 1, i, w->work, sb);
        if (rc != BPTT_OK)
            break;
        if (copy_hidden)
            memcpy(w->state[x->cur], w->work + off, hb);
        else if ((rc = ops->hidden_from_internal(ctx, i, w->work,
                                                 w->state[x->cur])) != 0)
            rc = op_failed(st, rc);
        break;
    case BPTT_DROP_HIDDEN:
        rc = bptt_slow_drop(&x->slow, 0, i, hb);
        break;
    case BPTT_DROP_INTERNAL:
        rc = bptt_slow_drop(&x->slow, 1, i, sb);
        break;
    default: /* the validator let no other op through */
        rc = BPTT_EBADPLAN;
    }
    if (rc == BPTT_OK &&
        (w->held > x->budget || x->slow.held > x->slow_budget))
        rc = BPTT_EBADPLAN; /* never past a budget, whoever planned */
    if (rc != BPTT_OK)
        st->failed_action = (int64_t)x->k;
    if (x->points && x->k < x->points_cap && rc == BPTT_OK) {
        const bptt_mem_stats *ms = bptt_mem_stats_get(x->mem);
        bptt_exec_point *p = &x->points[x->k];
        p->op = a.op;
        p->step = a.step;
        p->forward_ops = st->forward_ops;
        p->checkpoint_bytes = ms->current[BPTT_MEM_CHECKPOINT];
        p->total_bytes = ms->total_current;
        p->seconds = seconds;
    }
    x->k++;
    return rc;
}

/* Actions [from, plan->n_actions) of plan, each with the one after it. */
static int act_plan(interp *x, const bptt_plan *plan, size_t from)
{
    int rc = BPTT_OK;
    for (size_t k = from; k < plan->n_actions && rc == BPTT_OK; k++)
        rc = act(x, plan->actions[k],
                 k + 1 < plan->n_actions ? &plan->actions[k + 1] : NULL);
    return rc;
}

/* The end of a run: dh0, the peaks, everything given back. */
static int finish_run(interp *x, int rc)
{
    if (rc == BPTT_OK && x->ops->dh0) /* after the backward op of step 1 */
        memcpy(x->ops->dh0, x->w.carry, x->hb);
    bptt_steps_stats *st = x->st;
    const bptt_slow_store *z = &x->slow;
    st->checkpoint_peak_bytes = x->w.peak;
    st->slow_writes = z->writes;
    st->slow_reads = z->reads;
    st->slow_bytes_written = z->bytes_written;
    st->slow_bytes_read = z->bytes_read;
    st->slow_peak_bytes = z->peak;
    st->slow_file_bytes = (uint64_t)z->size;
    st->slow_seconds = z->seconds;
    st->slow_errno = z->err;
    bptt_slow_close(&x->slow, x->mem);
    ws_release(x);
    return rc;
}

/* Whether the plan steps on from an internal state anywhere (a restore
 * from the fast level or a read from the slow one). */
static int restores_internal(const bptt_plan *plan)
{
    for (size_t k = 0; k < plan->n_actions; k++)
        if (plan->actions[k].op == BPTT_RESTORE_INTERNAL ||
            plan->actions[k].op == BPTT_READ_INTERNAL)
            return 1;
    return 0;
}

/* Whether the plan uses the slow level. */
static int has_slow_ops(const bptt_plan *plan)
{
    for (size_t k = 0; k < plan->n_actions; k++)
        if (plan->actions[k].op >= BPTT_WRITE_HIDDEN &&
            plan->actions[k].op <= BPTT_DROP_INTERNAL)
            return 1;
    return 0;
}

/* The checks of a table both entries make; *st zeroed first. */
static int table_ok(const bptt_steps *ops, bptt_steps_stats *st)
{
    if (!st)
        return BPTT_EINVAL;
    memset(st, 0, sizeof *st);
    st->failed_action = -1;
    if (!ops || !ops->forward || !ops->backward)
        return BPTT_EINVAL;
    const size_t hb = ops->hidden_bytes, sb = ops->internal_bytes;
    if (hb < 1 || sb < hb)
        return BPTT_EINVAL;
    if (ops->hidden_in_internal &&
        (ops->hidden_offset > sb || sb - ops->hidden_offset < hb))
        return BPTT_EINVAL;
    return BPTT_OK;
}

/* Checkpoint bytes of m units of hidden_bytes / h bytes each. */
static size_t budget_bytes(int64_t m, int64_t h, size_t hb)
{
    const unsigned __int128 b =
        (unsigned __int128)m * (hb / (size_t)h);
    return b > SIZE_MAX ? SIZE_MAX : (size_t)b;
}

static int run(const bptt_plan *plan, const bptt_steps *ops, bptt_mem *mem,
               bptt_steps_stats *st, bptt_exec_point *points);

int bptt_steps_run(const bptt_plan *plan, const bptt_steps *ops,
                   bptt_mem *mem, bptt_steps_stats *st,
                   bptt_exec_point *points)
{
    int rc = table_ok(ops, st);
    if (rc != BPTT_OK)
        return rc;
    if (!plan)
        return BPTT_EINVAL;
    const size_t hb = ops->hidden_bytes, sb = ops->internal_bytes;
    if (plan->hidden_units < 1 || plan->internal_units < 1 ||
        (unsigned __int128)plan->hidden_units * sb !=
            (unsigned __int128)plan->internal_units * hb)
        return BPTT_EINVAL;
    bptt_plan_stats vs;
    rc = bptt_plan_validate(plan, &vs);
    if (rc != BPTT_OK)
        return rc;
    if (!ops->hidden_from_internal && !ops->hidden_in_internal &&
        restores_internal(plan))
        return BPTT_EINVAL; /* no way to restore from an internal state */
    if (mem)
        return run(plan, ops, mem, st, points);
    bptt_mem *own = bptt_mem_alloc();
    if (!own)
        return BPTT_ENOMEM;
    rc = run(plan, ops, own, st, points);
    bptt_mem_free(own);
    return rc;
}

/* bptt_steps_run on arguments checked, with an allocator. */
static int run(const bptt_plan *plan, const bptt_steps *ops, bptt_mem *mem,
               bptt_steps_stats *st, bptt_exec_point *points)
{
    interp x = {.ops = ops, .mem = mem, .st = st, .points = points,
                .points_cap = points ? plan->n_actions : 0,
                .hb = ops->hidden_bytes, .sb = ops->internal_bytes,
                .t = plan->length};
    /* the validator holds the peak to the budget; the unit's bytes are
     * whole when the units are in the bytes' ratio with h | hb, and where
     * they are not the check stands aside */
    const int whole = ops->hidden_bytes % (size_t)plan->hidden_units == 0;
    x.budget = whole ? budget_bytes(plan->budget, plan->hidden_units,
                                    ops->hidden_bytes)
                     : SIZE_MAX;
    x.slow_budget = whole && plan->slow_budget != BPTT_SLOW_UNLIMITED
                        ? budget_bytes(plan->slow_budget, plan->hidden_units,
                                       ops->hidden_bytes)
                        : SIZE_MAX;
    int rc = ws_take(&x, plan->length);
    /* the slow level's file before any op runs: a folder that cannot
     * take it stops the run before it starts */
    if (rc == BPTT_OK && has_slow_ops(plan))
        rc = bptt_slow_open(&x.slow, mem, plan->length, ops->slow_dir);
    if (rc == BPTT_OK)
        rc = act_plan(&x, plan, 0);
    return finish_run(&x, rc);
}

/* ---- online ------------------------------------------------------------ */

static int run_online(bptt_online *o, const bptt_steps *ops, bptt_mem *mem,
                      bptt_steps_more more, void *more_ctx,
                      bptt_steps_stats *st, bptt_plan **plan_out,
                      bptt_exec_point *points, size_t points_cap,
                      size_t budget)
{
    interp x = {.ops = ops, .mem = mem, .st = st, .points = points,
                .points_cap = points ? points_cap : 0,
                .hb = ops->hidden_bytes, .sb = ops->internal_bytes,
                .t = SIZE_MAX, .budget = budget, .online = 1};
    int rc = ws_take(&x, 64);
    bptt_action acts[BPTT_ONLINE_ACTIONS_MAX];
    size_t i = 0; /* steps run */
    int last = 0;
    while (rc == BPTT_OK && !last) {
        const int go = more(more_ctx, i, &last);
        if (go == 0)
            break;
        if (go != 1) {
            rc = op_failed(st, go);
            break;
        }
        size_t n = 0;
        rc = bptt_online_next(o, last != 0, acts, &n);
        for (size_t j = 0; j < n && rc == BPTT_OK; j++)
            rc = act(&x, acts[j], NULL);
        i++;
    }
    if (rc == BPTT_OK && i == 0)
        rc = BPTT_ESHORT; /* no step: nothing to plan */
    bptt_plan *plan = NULL;
    size_t prefix = 0;
    if (rc == BPTT_OK) {
        /* h(T) is the running state now: the plan's next action is
         * backward T, so step T never runs again */
        x.t = i;
        if (ops->h_last)
            memcpy(ops->h_last, x.w.state[x.cur], x.hb);
        rc = bptt_online_finish(o, &plan, &prefix);
    }
    bptt_plan_stats vs;
    if (rc == BPTT_OK && (prefix != x.k || plan->length != i))
        rc = BPTT_EBADPLAN;
    if (rc == BPTT_OK)
        rc = bptt_plan_validate(plan, &vs);
    if (rc == BPTT_OK && bptt_plan_slow_actions(plan))
        rc = BPTT_EINVAL; /* online plans have no slow level */
    if (rc == BPTT_OK && !ops->hidden_from_internal &&
        !ops->hidden_in_internal && restores_internal(plan))
        rc = BPTT_EINVAL;
    if (rc == BPTT_OK)
        x.online = 0; /* the whole plan is validated */
    if (rc == BPTT_OK)
        rc = ws_cover(&x, i);
    if (rc == BPTT_OK)
        rc = act_plan(&x, plan, prefix);
    rc = finish_run(&x, rc);
    if (rc == BPTT_OK && plan_out)
        *plan_out = plan;
    else
        bptt_plan_free(plan);
    return rc;
}

int bptt_steps_run_online(bptt_online *o, const bptt_steps *ops,
                          bptt_mem *mem, bptt_steps_more more, void *more_ctx,
                          bptt_steps_stats *st, bptt_plan **plan,
                          bptt_exec_point *points, size_t points_cap)
{
    if (plan)
        *plan = NULL;
    int rc = table_ok(ops, st);
    if (rc != BPTT_OK)
        return rc;
    bptt_units u;
    int64_t m;
    if (!o || !more || bptt_online_units(o, &u, &m) != BPTT_OK ||
        bptt_online_steps(o) != 0)
        return BPTT_EINVAL;
    /* the planner's units are the table's bytes */
    if ((unsigned __int128)u.hidden_units * (uint64_t)u.quantum !=
            ops->hidden_bytes ||
        (unsigned __int128)u.internal_units * (uint64_t)u.quantum !=
            ops->internal_bytes)
        return BPTT_EINVAL;
    const size_t budget = budget_bytes(m, 1, (size_t)u.quantum);
    if (mem)
        return run_online(o, ops, mem, more, more_ctx, st, plan, points,
                          points_cap, budget);
    bptt_mem *own = bptt_mem_alloc();
    if (!own)
        return BPTT_ENOMEM;
    rc = run_online(o, ops, own, more, more_ctx, st, plan, points, points_cap,
                    budget);
    bptt_mem_free(own);
    return rc;
}

double bptt_exec_working_bytes(size_t t, double hidden_bytes,
                               double internal_bytes)
{
    const double steps = (double)t + 1;
    return 3 * hidden_bytes + internal_bytes +
           steps * (2 * (double)sizeof(void *) + 1);
}
