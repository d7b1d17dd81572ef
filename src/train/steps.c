/* steps.c: the executor (see steps.h): one loop, one branch per action,
 * the only caller of a model's step ops.  The forward and backward ops are
 * timed each on its own (two reads of the monotonic clock, tens of
 * nanoseconds, against a step's microseconds to milliseconds). */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "steps.h"

typedef struct {
    unsigned char *state[2]; /* running hidden state, double-buffered */
    unsigned char *work;     /* working internal state */
    unsigned char *carry;    /* dh: gradient w.r.t. the running state */
    unsigned char **hslot;   /* (t+1) stored hidden states, NULL if none */
    unsigned char **sslot;   /* (t+1) stored internal states, NULL if none */
    unsigned char *computed; /* (t+1) step already run once */
    size_t held, peak;       /* checkpoint bytes held now and at most */
} exec_ws;

/* a checkpoint block, counted into the store's bytes */
static unsigned char *store_get(exec_ws *w, bptt_mem *mem, size_t bytes)
{
    unsigned char *p = bptt_mem_get_uninit(mem, BPTT_MEM_CHECKPOINT, bytes);
    if (p) {
        w->held += bytes;
        if (w->held > w->peak)
            w->peak = w->held;
    }
    return p;
}

static void store_put(exec_ws *w, bptt_mem *mem, unsigned char **slot,
                      size_t bytes)
{
    if (*slot) {
        bptt_mem_put(mem, *slot);
        w->held -= bytes;
        *slot = NULL;
    }
}

static void ws_release(exec_ws *w, bptt_mem *mem, size_t t, size_t hb,
                       size_t sb)
{
    for (size_t i = 0; i <= t; i++) {
        if (w->hslot)
            store_put(w, mem, &w->hslot[i], hb);
        if (w->sslot)
            store_put(w, mem, &w->sslot[i], sb);
    }
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

/* the working set and h(0), stored from the start */
static int ws_take(exec_ws *w, bptt_mem *mem, size_t t, size_t hb, size_t sb,
                   const void *h0)
{
    const int W = BPTT_MEM_WORKING;
    w->state[0] = bptt_mem_get(mem, W, hb);
    w->state[1] = bptt_mem_get(mem, W, hb);
    w->work = bptt_mem_get(mem, W, sb);
    w->carry = bptt_mem_get(mem, W, hb);
    w->hslot = bptt_mem_get(mem, W, (t + 1) * sizeof *w->hslot);
    w->sslot = bptt_mem_get(mem, W, (t + 1) * sizeof *w->sslot);
    w->computed = bptt_mem_get(mem, W, t + 1);
    if (w->hslot)
        w->hslot[0] = store_get(w, mem, hb);
    if (!w->state[0] || !w->state[1] || !w->work || !w->carry || !w->hslot ||
        !w->sslot || !w->computed || !w->hslot[0])
        return BPTT_ENOMEM;
    if (h0)
        memcpy(w->state[0], h0, hb);
    memcpy(w->hslot[0], w->state[0], hb); /* zero when h0 is NULL */
    return BPTT_OK;
}

/* An op's nonzero status as the run returns it (steps.h:
 * BPTT_OP_STATUS_MIN), kept as it was in the stats. */
static int op_failed(bptt_steps_stats *st, int status)
{
    st->op_status = status;
    return status < 0 || status >= BPTT_OP_STATUS_MIN ? status : BPTT_EOP;
}

/* Whether the plan restores from an internal state anywhere. */
static int restores_internal(const bptt_plan *plan)
{
    for (size_t k = 0; k < plan->n_actions; k++)
        if (plan->actions[k].op == BPTT_RESTORE_INTERNAL)
            return 1;
    return 0;
}

static int run(const bptt_plan *plan, const bptt_steps *ops, bptt_mem *mem,
               bptt_steps_stats *st, bptt_exec_point *points);

int bptt_steps_run(const bptt_plan *plan, const bptt_steps *ops,
                   bptt_mem *mem, bptt_steps_stats *st,
                   bptt_exec_point *points)
{
    if (!st)
        return BPTT_EINVAL;
    memset(st, 0, sizeof *st);
    st->failed_action = -1;
    if (!plan || !ops || !ops->forward || !ops->backward)
        return BPTT_EINVAL;
    const size_t hb = ops->hidden_bytes, sb = ops->internal_bytes;
    if (hb < 1 || sb < hb)
        return BPTT_EINVAL;
    if (ops->hidden_in_internal &&
        (ops->hidden_offset > sb || sb - ops->hidden_offset < hb))
        return BPTT_EINVAL;
    if (plan->hidden_units < 1 || plan->internal_units < 1 ||
        (unsigned __int128)plan->hidden_units * sb !=
            (unsigned __int128)plan->internal_units * hb)
        return BPTT_EINVAL;
    bptt_plan_stats vs;
    int rc = bptt_plan_validate(plan, &vs);
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
    const size_t t = plan->length;
    const size_t hb = ops->hidden_bytes, sb = ops->internal_bytes;
    const size_t off = ops->hidden_offset;
    const int copy_hidden = ops->hidden_in_internal != 0;
    int rc;
    exec_ws w = {0};
    rc = ws_take(&w, mem, t, hb, sb, ops->h0);
    if (rc != BPTT_OK) {
        ws_release(&w, mem, t, hb, sb);
        return rc;
    }

    void *const ctx = ops->ctx;
    int cur = 0; /* w.state[cur] is the running state */
    /* the working internal state s(in_slot) is in w.sslot[in_slot], not in
     * w.work (0: it is in w.work, or there is none) */
    size_t in_slot = 0;
    for (size_t k = 0; k < plan->n_actions && rc == BPTT_OK; k++) {
        const size_t i = plan->actions[k].step;
        double seconds = 0;
        switch (plan->actions[k].op) {
        case BPTT_ADVANCE: {
            /* "advance i; save_internal i": the forward op writes s(i)
             * straight into its checkpoint (taken one action early, with
             * nothing in between, so the peak is the same), which spares
             * copying the working state */
            unsigned char *s_out = w.work;
            in_slot = 0;
            if (k + 1 < plan->n_actions &&
                plan->actions[k + 1].op == BPTT_SAVE_INTERNAL &&
                plan->actions[k + 1].step == i && !w.sslot[i]) {
                w.sslot[i] = store_get(&w, mem, sb);
                if (!w.sslot[i]) {
                    rc = BPTT_ENOMEM;
                    break;
                }
                s_out = w.sslot[i];
                in_slot = i;
            }
            const double t0 = now();
            rc = ops->forward(ctx, i, w.state[cur], s_out, w.state[!cur]);
            seconds = now() - t0;
            st->forward_seconds += seconds;
            if (rc != 0)
                rc = op_failed(st, rc);
            else if (copy_hidden && memcmp(s_out + off, w.state[!cur], hb))
                rc = BPTT_ESTEPS; /* h(i) is not where the table says */
            else if (i == t && ops->h_last)
                memcpy(ops->h_last, w.state[!cur], hb);
            cur = !cur;
            st->forward_ops++;
            st->recompute_ops += w.computed[i];
            w.computed[i] = 1;
            break;
        }
        case BPTT_SAVE_HIDDEN:
            w.hslot[i] = store_get(&w, mem, hb);
            if (!w.hslot[i])
                rc = BPTT_ENOMEM;
            else
                memcpy(w.hslot[i], w.state[cur], hb);
            break;
        case BPTT_SAVE_INTERNAL:
            if (in_slot == i) /* already there (see advance) */
                break;
            w.sslot[i] = store_get(&w, mem, sb);
            if (!w.sslot[i])
                rc = BPTT_ENOMEM;
            else
                memcpy(w.sslot[i], w.work, sb);
            break;
        case BPTT_RESTORE_HIDDEN:
            memcpy(w.state[cur], w.hslot[i], hb);
            st->restores++;
            st->restore_hidden_ops++;
            in_slot = 0; /* no working internal state now */
            break;
        case BPTT_RESTORE_INTERNAL:
            if (copy_hidden)
                memcpy(w.state[cur], w.sslot[i] + off, hb);
            else if ((rc = ops->hidden_from_internal(ctx, i, w.sslot[i],
                                                     w.state[cur])) != 0)
                rc = op_failed(st, rc);
            st->restores++;
            st->restore_internal_ops++;
            in_slot = 0;
            break;
        case BPTT_BACKWARD: {
            const unsigned char *s = w.sslot[i] ? w.sslot[i] : w.work;
            const double t0 = now();
            rc = ops->backward(ctx, i, s, w.carry);
            if (rc != 0)
                rc = op_failed(st, rc);
            seconds = now() - t0;
            st->backward_seconds += seconds;
            in_slot = 0;
            st->backward_ops++;
            break;
        }
        case BPTT_FREE_HIDDEN:
            store_put(&w, mem, &w.hslot[i], hb);
            break;
        case BPTT_FREE_INTERNAL:
            if (in_slot == i) { /* the working state lives on in w.work */
                memcpy(w.work, w.sslot[i], sb);
                in_slot = 0;
            }
            store_put(&w, mem, &w.sslot[i], sb);
            break;
        default: /* the validator let no other op through */
            rc = BPTT_EBADPLAN;
        }
        if (rc != BPTT_OK)
            st->failed_action = (int64_t)k;
        if (points && rc == BPTT_OK) {
            const bptt_mem_stats *ms = bptt_mem_stats_get(mem);
            bptt_exec_point *p = &points[k];
            p->op = plan->actions[k].op;
            p->step = plan->actions[k].step;
            p->forward_ops = st->forward_ops;
            p->checkpoint_bytes = ms->current[BPTT_MEM_CHECKPOINT];
            p->total_bytes = ms->total_current;
            p->seconds = seconds;
        }
    }
    if (rc == BPTT_OK && ops->dh0)
        memcpy(ops->dh0, w.carry, hb); /* after the backward op of step 1 */
    st->checkpoint_peak_bytes = w.peak;
    ws_release(&w, mem, t, hb, sb);
    return rc;
}

double bptt_exec_working_bytes(size_t t, double hidden_bytes,
                               double internal_bytes)
{
    const double steps = (double)t + 1;
    return 3 * hidden_bytes + internal_bytes +
           steps * (2 * (double)sizeof(void *) + 1);
}
