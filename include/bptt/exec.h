/* exec.h: the executor: runs a plan's actions on a model, one loop, the
 * only caller of the cells' forward and backward ops.  Checkpoints live in
 * a store whose bytes come from the tracked allocator (category
 * BPTT_MEM_CHECKPOINT), so its peak is measured, not predicted. */
#ifndef BPTT_EXEC_H
#define BPTT_EXEC_H

#include <stdint.h>

#include "bptt.h"
#include "data.h"
#include "mem.h"
#include "model.h"

typedef struct {
    int64_t forward_ops;   /* cell-stack forward ops run, first sweep included */
    int64_t recompute_ops; /* of which recomputations */
    int64_t backward_ops;  /* cell-stack backward ops */
    int64_t output_ops;    /* output layer and loss (forward and backward),
                              run once per step inside the backward op */
    int64_t restores;      /* states copied back into the running state */
    double loss;           /* mean cross-entropy over steps and batch */
} bptt_exec_stats;

/* One training iteration's gradients: zeroes the model's gradients, runs
 * the plan on batch (batch->T == plan->length), accumulates gradients.  The
 * plan's units must match the model's state sizes (hidden_units *
 * internal bytes == internal_units * hidden bytes).  BPTT_EBADPLAN for a
 * plan the validator rejects, BPTT_ENOMEM when a tracked allocation fails
 * (everything taken is released). */
int bptt_exec_run(const bptt_plan *plan, bptt_model *model,
                  const bptt_batch *batch, bptt_mem *mem,
                  bptt_exec_stats *stats);

/* The working memory (BPTT_MEM_WORKING) bptt_exec_run takes for a plan of
 * length t on states of hidden_bytes and internal_bytes, to the byte: two
 * running states, the working internal state, the carry, and its per-step
 * tables (a hidden and an internal slot pointer and a flag per step).  As
 * a double, so that sizes past memory do not overflow. */
double bptt_exec_working_bytes(size_t t, double hidden_bytes,
                               double internal_bytes);

#endif
