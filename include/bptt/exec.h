/* exec.h: a plan run on a model of model.h.  The model is one
 * implementation of the step-operations table of steps.h (src/train/
 * exec.c): its forward op is the cell stack's, its backward op the
 * output layer and loss at the step and then the cell stack's, and the
 * run is bptt_steps_run, the one executor.  Checkpoints live in a store
 * whose bytes come from the tracked allocator (category
 * BPTT_MEM_CHECKPOINT), so its peak is measured, not predicted. */
#ifndef BPTT_EXEC_H
#define BPTT_EXEC_H

#include <stdint.h>

#include "bptt.h"
#include "data.h"
#include "mem.h"
#include "model.h"
#include "steps.h"

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

typedef struct {
    int64_t forward_ops;   /* cell-stack forward ops run, first sweep included */
    int64_t recompute_ops; /* of which recomputations */
    int64_t backward_ops;  /* cell-stack backward ops */
    int64_t output_ops;    /* output layer and loss (forward and backward),
                              run once per step inside the backward op */
    int64_t restores;      /* states copied back into the running state */
    double loss;           /* mean cross-entropy over steps and batch */
    size_t checkpoint_peak_bytes; /* bptt_steps_stats' */
    /* Wall seconds (CLOCK_MONOTONIC, read around each op) spent in the
     * forward ops (every advance, recomputations included) and in the
     * backward ops (output layer and loss included); stores, restores and
     * frees are in neither.  Their sum is at most the call's wall time. */
    double forward_seconds, backward_seconds;
    /* A two-level plan's slow level (bptt_steps_stats' slow_* fields;
     * all 0 for a plan of one level): states and bytes written and read,
     * the most bytes held at once, seconds in pwrite and pread, and the
     * errno behind a BPTT_EIO. */
    int64_t slow_writes, slow_reads;
    uint64_t slow_bytes_written, slow_bytes_read;
    size_t slow_peak_bytes;
    double slow_seconds;
    int slow_errno;
} bptt_exec_stats;

/* One training iteration's gradients: zeroes the model's gradients, runs
 * the plan on batch (batch->T == plan->length), accumulates gradients.  The
 * plan's units must match the model's state sizes (hidden_units *
 * internal bytes == internal_units * hidden bytes).  BPTT_EINVAL for a
 * batch or units that do not fit, BPTT_EBADPLAN for a plan the validator
 * rejects, BPTT_ENOMEM when a tracked allocation fails (everything taken
 * is released; the gradients are then undefined).  A two-level plan
 * (twolevel.h) runs with its slow level in a temporary folder made for
 * the run under $TMPDIR or /tmp and removed (steps.h: slow_dir NULL);
 * BPTT_EIO when that folder or its file cannot be made, written or
 * read. */
int bptt_exec_run(const bptt_plan *plan, bptt_model *model,
                  const bptt_batch *batch, bptt_mem *mem,
                  bptt_exec_stats *stats);

/* bptt_exec_run, recording each action into points[0..plan->n_actions)
 * (may be NULL: nothing recorded), in plan order, as bptt_steps_run does.
 * Recording changes nothing the run computes; on an error the points
 * after the failed action are not written. */
int bptt_exec_run_recorded(const bptt_plan *plan, bptt_model *model,
                           const bptt_batch *batch, bptt_mem *mem,
                           bptt_exec_stats *stats, bptt_exec_point *points);

/* Where a run keeps what is not in memory. */
typedef struct {
    /* the folder of a two-level plan's slow level (steps.h: slow_dir;
     * NULL: a temporary folder made for the run and removed) */
    const char *slow_dir;
    int slow_direct; /* steps.h: slow_direct (O_DIRECT; 0: page cache) */
} bptt_exec_options;

/* bptt_exec_run_recorded with options (NULL: as bptt_exec_run_recorded,
 * every option its default). */
int bptt_exec_run_options(const bptt_plan *plan, bptt_model *model,
                          const bptt_batch *batch, bptt_mem *mem,
                          const bptt_exec_options *opt,
                          bptt_exec_stats *stats, bptt_exec_point *points);

/* One training iteration's gradients on a sequence whose length is known
 * only when it ends, planned online by o (online.h: "hsm" or "msm", made
 * for the model's state bytes, fresh) and run by bptt_steps_run_online,
 * the same executor: zeroes the gradients, then before each step asks
 * more(more_ctx, i, &last) (steps.h), which, when it answers 1, has put
 * step i + 1's inputs and targets into batch->x and batch->y at row i
 * (batch->T is the most steps the sequence may have; batch is read, its
 * buffers are the caller's).  The loss is the mean over the T steps run
 * and the batch.  *plan (may be NULL): the finished plan on BPTT_OK (the
 * caller frees it), NULL otherwise; its length is T.  The gradients are
 * those bptt_exec_run computes for any plan of length T on the batch's
 * first T rows, bit for bit.  BPTT_EINVAL also when more says a step
 * past batch->T runs; otherwise the statuses of bptt_steps_run_online. */
int bptt_exec_run_online(bptt_online *o, bptt_model *model,
                         const bptt_batch *batch, bptt_steps_more more,
                         void *more_ctx, bptt_mem *mem,
                         bptt_exec_stats *stats, bptt_plan **plan);

#pragma GCC visibility pop

#endif
