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
    /* Wall seconds (CLOCK_MONOTONIC, read around each op) spent in the
     * forward ops (every advance, recomputations included) and in the
     * backward ops (output layer and loss included); stores, restores and
     * frees are in neither.  Their sum is at most the call's wall time. */
    double forward_seconds, backward_seconds;
} bptt_exec_stats;

/* One action of an iteration as bptt_exec_run_recorded ran it: what the
 * tracked allocator held just after it, and the forward ops so far. */
typedef struct {
    uint32_t op;   /* enum bptt_op */
    uint32_t step; /* the action's step */
    int64_t forward_ops;     /* forward ops run so far, this action's
                                included */
    size_t checkpoint_bytes; /* BPTT_MEM_CHECKPOINT bytes held after it */
    size_t total_bytes;      /* all tracked bytes held after it (every
                                category: parameters, data, working set) */
    double seconds;          /* wall seconds of a forward or backward op
                                (added to forward_seconds or
                                backward_seconds); 0 for other actions */
} bptt_exec_point;

/* One training iteration's gradients: zeroes the model's gradients, runs
 * the plan on batch (batch->T == plan->length), accumulates gradients.  The
 * plan's units must match the model's state sizes (hidden_units *
 * internal bytes == internal_units * hidden bytes).  BPTT_EBADPLAN for a
 * plan the validator rejects, BPTT_ENOMEM when a tracked allocation fails
 * (everything taken is released). */
int bptt_exec_run(const bptt_plan *plan, bptt_model *model,
                  const bptt_batch *batch, bptt_mem *mem,
                  bptt_exec_stats *stats);

/* bptt_exec_run, recording each action into points[0..plan->n_actions)
 * (may be NULL: nothing recorded), in plan order.  Checkpoint bytes are
 * counted as the executor holds them: advance i followed by save_internal
 * i takes s(i)'s block at the advance (the peak is the plan's all the
 * same).  Recording changes nothing the run computes; on an error the
 * points after the failed action are not written. */
int bptt_exec_run_recorded(const bptt_plan *plan, bptt_model *model,
                           const bptt_batch *batch, bptt_mem *mem,
                           bptt_exec_stats *stats, bptt_exec_point *points);

/* The working memory (BPTT_MEM_WORKING) bptt_exec_run takes for a plan of
 * length t on states of hidden_bytes and internal_bytes, to the byte: two
 * running states, the working internal state, the carry, and its per-step
 * tables (a hidden and an internal slot pointer and a flag per step).  As
 * a double, so that sizes past memory do not overflow. */
double bptt_exec_working_bytes(size_t t, double hidden_bytes,
                               double internal_bytes);

#endif
