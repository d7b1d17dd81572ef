/* model_impl.h: what the model's rooms share (model.c, the layout;
 * model_step.c, the steps; exec.c, the steps run by the executor):
 * where a layer's bias gradient sums and its block of the weight
 * gradient lie (and the output layer's), the block's flush into dW and
 * dWo (model_step.c), and whether the steps run on a team of threads. */
#ifndef BPTT_MODEL_IMPL_H
#define BPTT_MODEL_IMPL_H

#include "real_impl.h"
#include "cell.h"
#include "gemm.h"
#include "model.h"

static inline double *dbias_of(const bptt_model *m, size_t l) /* l == L: output */
{
    return m->dbias + l * m->cell->gates * m->H;
}

/* Rows of the block of layer l holding slot k (a step's (B, .) rows). */
static inline real *wgrad_dgates_of(const bptt_model *m, size_t l, size_t k)
{
    const size_t GH = m->cell->gates * m->H;
    return m->wgrad_dgates + (l * m->wgrad_steps + k) * m->B * GH;
}
static inline real *wgrad_xh_of(const bptt_model *m, size_t l, size_t k)
{
    return m->wgrad_xh + m->wgrad_xh_off[l] +
           k * m->B * (m->ws[l].X + m->H);
}

/* The output layer's rows of slot k: dlogits (B, V). */
static inline real *wgrad_dlogits_of(const bptt_model *m, size_t k)
{
    return m->wgrad_dlogits + k * m->B * m->V;
}

/* Whether step i's slot (after wgrad_slot) is the open block's highest:
 * its first backward op, which keeps the top layer's h of its own
 * (wgrad_htop); a lower step's h is the h_prev of the step above it, in
 * the top layer's slot of [x, h_prev] one up. */
static inline int wgrad_top_step(const bptt_model *m, size_t slot)
{
    return slot + 1 == m->wgrad_rows;
}

/* Closes the open block (wgrad_rows slots): dW += dgates^T xh, every
 * layer, then dWo += dlogits^T h in two products: the slots below the
 * highest, with h read from the top layer's [x, h_prev] rows one slot up
 * (k = (slots - 1) B), then the highest with wgrad_htop (k = B); then the
 * bias gradients its steps left (wgrad_bias_slots).  The team's backward
 * step at a block's lowest slot runs the same products, cut the same way
 * (model_step.c), so the gradients keep their bits whichever closes it. */
void bptt_model_flush_block(bptt_model *m);

/* 1 when the model's steps run as parts on several threads (on the
 * kernel's path, products large enough to share): then a run of steps
 * gains from a team held for the whole run (team.h). */
int bptt_model_steps_shared(const bptt_model *m);
/* 1 when P threads sharing a step take its products by rows of the batch
 * (each thread all its rows' work, the whole weights), 0 by columns
 * (model_step.c) */
int bptt_model_steps_by_rows(const bptt_model *m, int P);

#endif
