/* steps_act.c: the executor's action interpreter (steps_impl.h): one
 * branch per action, the only caller of a model's step ops, and the
 * tables and checkpoint store it works in.  The forward and backward ops
 * are timed each on its own (two reads of the monotonic clock, tens of
 * nanoseconds, against a step's microseconds to milliseconds).  A
 * two-level plan's slow-level actions go to the store of slow.h. */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "steps_impl.h"

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
int steps_ws_take(interp *x, size_t cap)
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
int steps_ws_cover(interp *x, size_t i)
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
int steps_op_failed(bptt_steps_stats *st, int status)
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
int steps_act(interp *x, bptt_action a, const bptt_action *next)
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
            rc = steps_ws_cover(x, i);
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
            rc = steps_op_failed(st, rc);
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
            rc = steps_op_failed(st, rc);
        st->restores++;
        st->restore_internal_ops++;
        x->in_slot = 0;
        break;
    case BPTT_BACKWARD: {
        const unsigned char *s = w->sslot[i] ? w->sslot[i] : w->work;
        const double t0 = now();
        rc = ops->backward(ctx, i, s, w->carry);
        if (rc != 0)
            rc = steps_op_failed(st, rc);
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
            rc = steps_op_failed(st, rc);
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
int steps_act_plan(interp *x, const bptt_plan *plan, size_t from)
{
    int rc = BPTT_OK;
    for (size_t k = from; k < plan->n_actions && rc == BPTT_OK; k++)
        rc = steps_act(x, plan->actions[k],
                 k + 1 < plan->n_actions ? &plan->actions[k + 1] : NULL);
    return rc;
}

/* The end of a run: dh0, the peaks, everything given back. */
int steps_finish_run(interp *x, int rc)
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

