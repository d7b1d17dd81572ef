/* exec.c: the executor (see exec.h).  One loop, one branch per action;
 * the forward and backward ops are timed each on its own (two reads of
 * the monotonic clock, tens of nanoseconds, against a step's
 * microseconds to milliseconds). */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>

#include "exec.h"

typedef struct {
    real *state[2];  /* running hidden state, double-buffered (hidden_len) */
    real *work;      /* working internal state (internal_len) */
    real *carry;     /* gradient w.r.t. the running state (hidden_len) */
    real **hslot;    /* (t+1) stored hidden states, NULL if none */
    real **sslot;    /* (t+1) stored internal states, NULL if none */
    unsigned char *computed; /* (t+1) step already run once */
} exec_ws;

static void ws_release(exec_ws *w, bptt_mem *mem, size_t t)
{
    for (size_t i = 0; i <= t; i++) {
        if (w->hslot)
            bptt_mem_put(mem, w->hslot[i]);
        if (w->sslot)
            bptt_mem_put(mem, w->sslot[i]);
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

int bptt_exec_run(const bptt_plan *plan, bptt_model *m,
                  const bptt_batch *batch, bptt_mem *mem,
                  bptt_exec_stats *st)
{
    return bptt_exec_run_recorded(plan, m, batch, mem, st, NULL);
}

int bptt_exec_run_recorded(const bptt_plan *plan, bptt_model *m,
                           const bptt_batch *batch, bptt_mem *mem,
                           bptt_exec_stats *st, bptt_exec_point *points)
{
    memset(st, 0, sizeof *st);
    const size_t t = plan->length;
    const size_t hb = bptt_model_hidden_bytes(m);
    const size_t sb = bptt_model_internal_bytes(m);
    if (batch->T != t || batch->B != m->B || batch->X != m->X)
        return BPTT_EINVAL;
    if ((unsigned __int128)plan->hidden_units * sb !=
        (unsigned __int128)plan->internal_units * hb)
        return BPTT_EINVAL;
    bptt_plan_stats vs;
    int rc = bptt_plan_validate(plan, &vs);
    if (rc != BPTT_OK)
        return rc;

    exec_ws w = {0};
    const int W = BPTT_MEM_WORKING;
    w.state[0] = bptt_mem_get(mem, W, hb);
    w.state[1] = bptt_mem_get(mem, W, hb);
    w.work = bptt_mem_get(mem, W, sb);
    w.carry = bptt_mem_get(mem, W, hb);
    w.hslot = bptt_mem_get(mem, W, (t + 1) * sizeof(real *));
    w.sslot = bptt_mem_get(mem, W, (t + 1) * sizeof(real *));
    w.computed = bptt_mem_get(mem, W, t + 1);
    if (w.hslot) /* h(0) is stored from the start (it is zero) */
        w.hslot[0] = bptt_mem_get(mem, BPTT_MEM_CHECKPOINT, hb);
    if (!w.state[0] || !w.state[1] || !w.work || !w.carry || !w.hslot ||
        !w.sslot || !w.computed || !w.hslot[0]) {
        ws_release(&w, mem, t);
        return BPTT_ENOMEM;
    }
    bptt_model_pack_weights(m); /* params may have changed since */
    bptt_model_zero_grads(m);

    const size_t B = m->B, X = m->X;
    const real scale = (real)(1.0 / ((double)B * (double)t));
    int cur = 0; /* w.state[cur] is the running state */
    /* the working internal state s(in_slot) is in w.sslot[in_slot], not in
     * w.work (0: it is in w.work, or there is none) */
    size_t in_slot = 0;
    double loss = 0;
    for (size_t k = 0; k < plan->n_actions && rc == BPTT_OK; k++) {
        const size_t i = plan->actions[k].step;
        double seconds = 0;
        switch (plan->actions[k].op) {
        case BPTT_ADVANCE: {
            /* "advance i; save_internal i": the forward op writes s(i)
             * straight into its checkpoint (taken one action early, with
             * nothing in between, so the peak is the same), which spares
             * copying the working state */
            real *s_out = w.work;
            in_slot = 0;
            if (k + 1 < plan->n_actions &&
                plan->actions[k + 1].op == BPTT_SAVE_INTERNAL &&
                plan->actions[k + 1].step == i && !w.sslot[i]) {
                w.sslot[i] =
                    bptt_mem_get_uninit(mem, BPTT_MEM_CHECKPOINT, sb);
                if (!w.sslot[i]) {
                    rc = BPTT_ENOMEM;
                    break;
                }
                s_out = w.sslot[i];
                in_slot = i;
            }
            const double t0 = now();
            bptt_model_forward_step(m, batch->x + (i - 1) * B * X,
                                    w.state[cur], s_out, w.state[!cur]);
            seconds = now() - t0;
            st->forward_seconds += seconds;
            cur = !cur;
            st->forward_ops++;
            st->recompute_ops += w.computed[i];
            w.computed[i] = 1;
            break;
        }
        case BPTT_SAVE_HIDDEN:
            w.hslot[i] = bptt_mem_get_uninit(mem, BPTT_MEM_CHECKPOINT, hb);
            if (!w.hslot[i])
                rc = BPTT_ENOMEM;
            else
                memcpy(w.hslot[i], w.state[cur], hb);
            break;
        case BPTT_SAVE_INTERNAL:
            if (in_slot == i) /* already there (see advance) */
                break;
            w.sslot[i] = bptt_mem_get_uninit(mem, BPTT_MEM_CHECKPOINT, sb);
            if (!w.sslot[i])
                rc = BPTT_ENOMEM;
            else
                memcpy(w.sslot[i], w.work, sb);
            break;
        case BPTT_RESTORE_HIDDEN:
            memcpy(w.state[cur], w.hslot[i], hb);
            st->restores++;
            in_slot = 0; /* no working internal state now */
            break;
        case BPTT_RESTORE_INTERNAL:
            bptt_model_state_from_internal(m, w.sslot[i], w.state[cur]);
            st->restores++;
            in_slot = 0;
            break;
        case BPTT_BACKWARD: {
            const real *s = w.sslot[i] ? w.sslot[i] : w.work;
            const double t0 = now();
            loss += bptt_model_backward_step(m, i,
                                             batch->x + (i - 1) * B * X,
                                             batch->y + (i - 1) * B, s,
                                             w.carry, scale);
            seconds = now() - t0;
            st->backward_seconds += seconds;
            in_slot = 0;
            st->backward_ops++;
            st->output_ops++;
            break;
        }
        case BPTT_FREE_HIDDEN:
            bptt_mem_put(mem, w.hslot[i]);
            w.hslot[i] = NULL;
            break;
        case BPTT_FREE_INTERNAL:
            if (in_slot == i) { /* the working state lives on in w.work */
                memcpy(w.work, w.sslot[i], sb);
                in_slot = 0;
            }
            bptt_mem_put(mem, w.sslot[i]);
            w.sslot[i] = NULL;
            break;
        default:
            rc = BPTT_EBADPLAN;
        }
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
    ws_release(&w, mem, t);
    if (rc == BPTT_OK)
        bptt_model_finish_grads(m);
    st->loss = loss / ((double)B * (double)t);
    return rc;
}

double bptt_exec_working_bytes(size_t t, double hidden_bytes,
                               double internal_bytes)
{
    const double steps = (double)t + 1;
    return 3 * hidden_bytes + internal_bytes +
           steps * (2 * (double)sizeof(real *) + 1);
}
