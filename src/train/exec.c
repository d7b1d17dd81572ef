/* exec.c: a model of model.h as a step-operations table (steps.h),
 * and bptt_exec_run (exec.h), which runs a plan on it through the one
 * executor.
 *
 * The table's ops are the model's own steps, called with the same
 * arguments in the same order as before the executor was made generic:
 * the step number picks the step's input and targets out of the batch,
 * and the backward op is bptt_model_backward_step, the output layer and
 * loss included (so they run once per step, never in a recomputation).
 * The loss of each step is summed in the context in backward order, as
 * the executor used to, so losses and gradients keep their bits.  Where
 * the steps run on several threads, the executor runs inside a team held
 * for the whole run (team.h), so that a step hands its parts to waiting
 * threads instead of opening a parallel region. */
#include <stddef.h>
#include <string.h>

#include "real_impl.h"
#include "exec.h"
#include "model_impl.h"
#include "team.h"
#include "twolevel.h"

typedef struct {
    bptt_model *m;
    const bptt_batch *batch;
    real scale;  /* 1 / (B T): the loss is the mean over steps and batch */
    double loss; /* summed cross-entropy of the backward ops so far */
    /* online: the caller's more, and the steps it said run */
    bptt_steps_more more;
    void *more_ctx;
    size_t steps;
    int overflow; /* more said a step past the batch runs */
    const char *slow_dir; /* the slow level's folder (steps.h) */
    int slow_direct;      /* and its direct I/O */
} model_ctx;

static int model_forward(void *ctx, size_t i, const void *h_in, void *s_out,
                         void *h_out)
{
    model_ctx *c = ctx;
    const size_t BX = c->m->B * c->m->X;
    bptt_model_forward_step(c->m, c->batch->x + (i - 1) * BX, h_in, s_out,
                            h_out);
    return BPTT_OK;
}

static int model_backward(void *ctx, size_t i, const void *s, void *dh)
{
    model_ctx *c = ctx;
    const size_t B = c->m->B, BX = B * c->m->X;
    c->loss += bptt_model_backward_step(c->m, i, c->batch->x + (i - 1) * BX,
                                        c->batch->y + (i - 1) * B, s, dh,
                                        c->scale);
    return BPTT_OK;
}

static int model_from_internal(void *ctx, size_t i, const void *s, void *h)
{
    (void)i; /* every step's internal state has the same layout */
    model_ctx *c = ctx;
    bptt_model_state_from_internal(c->m, s, h);
    return BPTT_OK;
}

/* Online: the caller's more, held to the batch; the scale set once the
 * length is known (before any backward op). */
static int model_more(void *ctx, size_t i, int *last)
{
    model_ctx *c = ctx;
    const int go = c->more(c->more_ctx, i, last);
    if (go == 1 && i + 1 > c->batch->T) {
        c->overflow = 1;
        return -1;
    }
    if (go == 1)
        c->steps = i + 1;
    if ((go == 1 && *last) || go == 0)
        c->scale = (real)(1.0 / ((double)c->m->B *
                                 (double)(c->steps ? c->steps : 1)));
    return go;
}

/* bptt_steps_run's or bptt_steps_run_online's arguments and result, for
 * bptt_team_hold */
typedef struct {
    const bptt_plan *plan;
    const bptt_steps *ops;
    bptt_mem *mem;
    bptt_steps_stats *ss;
    bptt_exec_point *points;
    bptt_online *online; /* NULL: run plan */
    bptt_plan **plan_out;
    int rc;
} steps_args;

static void steps_body(void *arg)
{
    steps_args *r = arg;
    if (r->online)
        r->rc = bptt_steps_run_online(r->online, r->ops, r->mem, model_more,
                                      r->ops->ctx, r->ss, r->plan_out, NULL,
                                      0);
    else
        r->rc = bptt_steps_run(r->plan, r->ops, r->mem, r->ss, r->points);
}

/* The table of m on c, the run (held in a team where the steps share
 * threads), and its stats into *st. */
static int run_model(model_ctx *c, const bptt_plan *plan, bptt_online *o,
                     bptt_plan **plan_out, bptt_mem *mem,
                     bptt_exec_stats *st, bptt_exec_point *points)
{
    bptt_model *m = c->m;
    const bptt_steps ops = {.name = m->cell->name,
                            .hidden_bytes = bptt_model_hidden_bytes(m),
                            .internal_bytes = bptt_model_internal_bytes(m),
                            .h0 = NULL, /* the zero state */
                            .forward = model_forward,
                            .backward = model_backward,
                            .hidden_from_internal = model_from_internal,
                            .ctx = c,
                            .slow_dir = c->slow_dir,
                            .slow_direct = c->slow_direct};
    bptt_model_pack_weights(m); /* params may have changed since */
    bptt_model_zero_grads(m);
    bptt_steps_stats ss;
    steps_args r = {plan, &ops, mem, &ss, points, o, plan_out, BPTT_OK};
    if (bptt_model_steps_shared(m))
        bptt_team_hold(steps_body, &r);
    else
        steps_body(&r);
    int rc = r.rc;
    if (o && c->overflow)
        rc = BPTT_EINVAL;
    if (rc == BPTT_OK)
        bptt_model_finish_grads(m);
    st->forward_ops = ss.forward_ops;
    st->recompute_ops = ss.recompute_ops;
    st->backward_ops = ss.backward_ops;
    st->output_ops = ss.backward_ops; /* one output layer per backward op */
    st->restores = ss.restores;
    st->checkpoint_peak_bytes = ss.checkpoint_peak_bytes;
    st->forward_seconds = ss.forward_seconds;
    st->backward_seconds = ss.backward_seconds;
    st->slow_writes = ss.slow_writes;
    st->slow_reads = ss.slow_reads;
    st->slow_bytes_written = ss.slow_bytes_written;
    st->slow_bytes_read = ss.slow_bytes_read;
    st->slow_peak_bytes = ss.slow_peak_bytes;
    st->slow_seconds = ss.slow_seconds;
    st->slow_errno = ss.slow_errno;
    const size_t t = o ? c->steps : plan->length;
    st->loss = c->loss / ((double)m->B * (double)(t ? t : 1));
    return rc;
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
    return bptt_exec_run_options(plan, m, batch, mem, NULL, st, points);
}

int bptt_exec_run_options(const bptt_plan *plan, bptt_model *m,
                          const bptt_batch *batch, bptt_mem *mem,
                          const bptt_exec_options *opt, bptt_exec_stats *st,
                          bptt_exec_point *points)
{
    memset(st, 0, sizeof *st);
    const size_t t = plan->length;
    if (batch->T != t || batch->B != m->B || batch->X != m->X)
        return BPTT_EINVAL; /* the model untouched */
    model_ctx c = {.m = m, .batch = batch,
                   .scale = (real)(1.0 / ((double)m->B * (double)t)),
                   .slow_dir = opt ? opt->slow_dir : NULL,
                   .slow_direct = opt ? opt->slow_direct : 0};
    return run_model(&c, plan, NULL, NULL, mem, st, points);
}

int bptt_exec_run_online(bptt_online *o, bptt_model *m,
                         const bptt_batch *batch, bptt_steps_more more,
                         void *more_ctx, bptt_mem *mem, bptt_exec_stats *st,
                         bptt_plan **plan)
{
    if (plan)
        *plan = NULL;
    if (!st)
        return BPTT_EINVAL;
    memset(st, 0, sizeof *st);
    if (!o || !m || !batch || !more || batch->T < 1 || batch->B != m->B ||
        batch->X != m->X)
        return BPTT_EINVAL;
    model_ctx c = {.m = m, .batch = batch, .more = more,
                   .more_ctx = more_ctx};
    return run_model(&c, NULL, o, plan, mem, st, NULL);
}
