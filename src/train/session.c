/* session.c: a training session (session.h): what it holds, counted before
 * it is made, and its iterations, checked for NaN and infinity.
 *
 * Promises: bptt_session_size counts, without allocating, every byte that
 * bptt_session_open and the iterations will take from the tracked
 * allocator but the checkpoints and the plan: parameters and gradients
 * (model.h's tensor table), the optimizer's moments, the kept copy of the
 * parameters, the task's batch and text, and the working set of the
 * executor and of the model
 * (bptt_exec_working_bytes and bptt_model_working_bytes, to the byte).  The kept copy of the
 * parameters is the harness's, not training's: it comes from malloc and
 * is not in the tracked counts (but is in fixed_bytes).  Iterations change nothing of
 * what bptt_exec_run computes: the same calls, in the same order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "real_impl.h"
#include "optim.h"
#include "session.h"
#include "data_impl.h"
#include "twolevel.h"

struct bptt_session {
    bptt_session_spec spec;
    bptt_mem *mem;
    bptt_task *task;
    bptt_model *model;
    bptt_optimizer *optim; /* NULL: no updates */
    real *last_params;     /* keep_last_params: before the latest update */
    bptt_batch batch;      /* the latest iteration's */
    bptt_exec_point *record; /* bptt_session_record's, or NULL */
};

static int why_text(int status, char *why, size_t cap, const char *text)
{
    if (why && cap)
        snprintf(why, cap, "%s", text);
    return status;
}

int bptt_session_size(const bptt_session_spec *sp, bptt_session_sizes *z,
                      char *why, size_t cap)
{
    memset(z, 0, sizeof *z);
    if (why && cap)
        why[0] = '\0';
    if (!sp->cell || !sp->task || sp->layers < 1 ||
        sp->layers > BPTT_MAX_LAYERS || sp->hidden < 1 || sp->batch < 1 ||
        sp->length < 1)
        return why_text(BPTT_EINVAL, why, cap,
                        "a session needs a cell, a task, 1 to 16 layers and "
                        "hidden width, batch and length of 1 or more");
    const int per_param =
        sp->optimizer ? bptt_optimizer_state_per_param(sp->optimizer) : 0;
    if (per_param < 0)
        return why_text(BPTT_EINVAL, why, cap,
                        "unknown optimizer (use sgd or adam)");
    size_t X, V;
    double file_bytes;
    if (bptt_task_check(sp->task, sp->length, sp->input, &X, &V, &file_bytes,
                        why, cap) != BPTT_OK)
        return BPTT_EINVAL;
    const double rb = (double)sizeof(real), T = (double)sp->length;
    const double B = (double)sp->batch;
    z->input = X;
    z->classes = V;
    bptt_model_state_bytes(sp->cell, sp->layers, sp->batch, sp->hidden,
                           &z->hidden_bytes, &z->internal_bytes);
    z->full_checkpoint_bytes = z->internal_bytes * (sp->length > 1 ? T - 1 : 1);
    const double params =
        rb * bptt_model_param_reals(sp->cell, sp->layers, X, sp->hidden, V);
    const double arenas = /* parameters, gradients, moments, the copy */
        params * (1.0 + per_param + (sp->keep_last_params ? 1 : 0)) +
        bptt_model_grad_bytes(sp->cell, sp->layers, X, sp->hidden, V);
    /* a batch: x (T, B, X) reals and y (T, B) int32 (data.h) */
    z->data_bytes = rb * T * B * (double)X + 4 * T * B + file_bytes;
    const double working =
        bptt_exec_working_bytes(sp->length, z->hidden_bytes,
                                z->internal_bytes) +
        bptt_model_working_bytes(sp->cell, sp->layers, sp->batch, X,
                                 sp->hidden, V);
    z->fixed_bytes = arenas + z->data_bytes + working;
    return BPTT_OK;
}

void bptt_session_close(bptt_session *s)
{
    if (!s)
        return;
    free(s->last_params);
    bptt_optimizer_free(s->optim, s->mem);
    bptt_model_free(s->model);
    bptt_task_free(s->task);
    free(s);
}

int bptt_session_open(bptt_session **out, const bptt_session_spec *sp,
                      bptt_mem *mem, char *why, size_t cap)
{
    *out = NULL;
    bptt_session_sizes z;
    int rc = bptt_session_size(sp, &z, why, cap);
    if (rc != BPTT_OK)
        return rc;
    if (!mem)
        return why_text(BPTT_EINVAL, why, cap, "a session needs memory");
    bptt_session *s = calloc(1, sizeof *s);
    if (!s)
        return BPTT_ENOMEM;
    s->spec = *sp;
    s->mem = mem;
    const int trc =
        bptt_task_alloc_why(&s->task, sp->task, sp->length, sp->batch,
                            sp->input, sp->seed, mem, why, cap);
    if (trc != BPTT_OK) {
        rc = trc;
        if (!why || !cap || !why[0])
            why_text(trc, why, cap, bptt_strerror(trc));
        goto fail;
    }
    rc = bptt_model_alloc(&s->model, sp->cell, sp->layers, sp->batch,
                          bptt_task_input_width(s->task), sp->hidden,
                          bptt_task_classes(s->task), sp->seed, mem);
    if (rc == BPTT_OK && sp->optimizer)
        rc = bptt_optimizer_alloc(&s->optim, sp->optimizer, sp->lr, s->model,
                                  mem);
    if (rc == BPTT_OK && sp->keep_last_params) {
        s->last_params = malloc(s->model->n_params * sizeof(real));
        if (!s->last_params)
            rc = BPTT_ENOMEM;
    }
    if (rc == BPTT_OK) {
        *out = s;
        return BPTT_OK;
    }
    if (rc == BPTT_EINVAL)
        why_text(rc, why, cap, "the optimizer needs a learning rate above 0");
fail:
    bptt_session_close(s);
    return rc;
}

bptt_model *bptt_session_model(bptt_session *s) { return s->model; }

bptt_mem *bptt_session_mem(bptt_session *s) { return s->mem; }

const bptt_batch *bptt_session_batch(const bptt_session *s)
{
    return &s->batch;
}

size_t bptt_session_input(const bptt_session *s)
{
    return bptt_task_input_width(s->task);
}

size_t bptt_session_classes(const bptt_session *s)
{
    return bptt_task_classes(s->task);
}

const real *bptt_session_last_params(const bptt_session *s)
{
    return s->last_params;
}

/* Scans arena (params or grads) into *fault: BPTT_OK or BPTT_ENONFINITE. */
static int scan(bptt_session *s, const real *arena, const char *name,
                bptt_session_fault *fault)
{
    const int fs = bptt_finite_scan(s->model, arena, &fault->where);
    if (fs == BPTT_OK)
        return BPTT_OK;
    fault->arena = name;
    fault->status = fs;
    return BPTT_ENONFINITE;
}

int bptt_session_fetch(bptt_session *s, size_t k)
{
    return bptt_task_batch(s->task, k, &s->batch) == BPTT_OK
               ? BPTT_OK
               : BPTT_EINVAL;
}

static int check_run(bptt_session *s, const bptt_exec_stats *stats,
                     bptt_session_fault *fault);

int bptt_session_gradients(bptt_session *s, const bptt_plan *plan, size_t k,
                           bptt_exec_stats *stats, bptt_session_fault *fault)
{
    memset(fault, 0, sizeof *fault);
    if (bptt_session_fetch(s, k) != BPTT_OK)
        return BPTT_EINVAL;
    bptt_mem_reset_peaks(s->mem);
    const bptt_exec_options opt = {.slow_dir = s->spec.slow_dir,
                                   .slow_direct = s->spec.slow_direct};
    const int rc = bptt_exec_run_options(plan, s->model, &s->batch, s->mem,
                                         &opt, stats, s->record);
    if (rc != BPTT_OK)
        return rc;
    return check_run(s, stats, fault);
}

/* The checks after a run: the loss, then the gradients. */
static int check_run(bptt_session *s, const bptt_exec_stats *stats,
                     bptt_session_fault *fault)
{
    const int fs = bptt_finite_value(stats->loss);
    if (fs != BPTT_OK) {
        fault->arena = "loss";
        fault->status = fs;
        fault->where.value = stats->loss;
        fault->where.tensor = "";
        return BPTT_ENONFINITE;
    }
    return scan(s, s->model->grads, "gradient", fault);
}

/* o NULL: the sequence read whole through more, then full BPTT's plan of
 * its length run on it. */
static int run_whole(bptt_session *s, bptt_steps_more more, void *more_ctx,
                     bptt_exec_stats *stats, bptt_plan **plan_out)
{
    size_t T = 0;
    for (int last = 0; !last;) {
        const int go = more(more_ctx, T, &last);
        if (go == 0)
            break;
        if (go != 1)
            return go < 0 || go >= BPTT_OP_STATUS_MIN ? go : BPTT_EOP;
        if (T + 1 > s->batch.T)
            return BPTT_EINVAL;
        T++;
    }
    if (T == 0)
        return BPTT_ESHORT;
    const size_t hb = bptt_model_hidden_bytes(s->model);
    const size_t sb = bptt_model_internal_bytes(s->model);
    bptt_plan *plan = NULL;
    bptt_plan_stats ps;
    int rc = bptt_plan_make("full", T, (int64_t)hb, (int64_t)sb,
                            (int64_t)(sb * T + hb), NULL, &plan, &ps, NULL);
    if (rc != BPTT_OK)
        return rc;
    bptt_batch b = s->batch;
    b.T = T;
    rc = bptt_exec_run(plan, s->model, &b, s->mem, stats);
    if (rc == BPTT_OK && plan_out)
        *plan_out = plan;
    else
        bptt_plan_free(plan);
    return rc;
}

int bptt_session_gradients_online(bptt_session *s, bptt_online *o,
                                  bptt_steps_more more, void *more_ctx,
                                  bptt_exec_stats *stats, bptt_plan **plan,
                                  bptt_session_fault *fault)
{
    if (plan)
        *plan = NULL;
    memset(fault, 0, sizeof *fault);
    memset(stats, 0, sizeof *stats);
    if (!s->batch.x || !more)
        return BPTT_EINVAL;
    s->batch.T = s->spec.length; /* the room for a sequence */
    bptt_mem_reset_peaks(s->mem);
    const int rc =
        o ? bptt_exec_run_online(o, s->model, &s->batch, more, more_ctx,
                                 s->mem, stats, plan)
          : run_whole(s, more, more_ctx, stats, plan);
    if (rc != BPTT_OK)
        return rc;
    s->batch.T = (size_t)stats->backward_ops; /* the sequence's steps */
    return check_run(s, stats, fault);
}

void bptt_session_record(bptt_session *s, bptt_exec_point *points)
{
    s->record = points;
}

int bptt_session_update(bptt_session *s, bptt_session_fault *fault)
{
    memset(fault, 0, sizeof *fault);
    if (!s->optim)
        return BPTT_OK;
    if (s->last_params)
        memcpy(s->last_params, s->model->params,
               s->model->n_params * sizeof(real));
    bptt_optimizer_step(s->optim, s->model);
    return scan(s, s->model->params, "parameter", fault);
}
