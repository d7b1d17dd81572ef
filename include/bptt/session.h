/* session.h: a training session: a task, a model, an optimizer and the
 * tracked memory they take, driven one iteration at a time by a plan.
 *
 * Promises: every byte a session will hold is known from its description
 * before anything is allocated (bptt_session_size), so a caller can refuse
 * sizes past the machine's memory and turn a budget given as a share into
 * bytes; an iteration is the plan executed on the next batch and checked
 * for NaN and infinity (the loss and the gradients), then the update
 * checked the same way, and a value that is not finite is reported with
 * the arena, tensor, row and column that hold it (finite.h).  The session
 * never prints and never exits; it returns status codes (bptt.h) and, for
 * a description it cannot make, one sentence for people.  The counts,
 * bytes and gradients are those of bptt_exec_run, unchanged.
 *
 * Used by `bptt run`, the training benchmark (experiments/bench-train.c)
 * and the tests' rig (tests/rig.h).
 */
#ifndef BPTT_SESSION_H
#define BPTT_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"
#include "cell.h"
#include "data.h"
#include "exec.h"
#include "finite.h"
#include "mem.h"
#include "model.h"

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

/* What to train. */
typedef struct {
    const bptt_cell_type *cell; /* bptt_cells[] */
    size_t layers, hidden, batch, length;
    size_t input;          /* input width; 0: the task's own */
    const char *task;      /* "copy", "adding" or "text:FILE" (data.h) */
    const char *optimizer; /* "sgd", "adam", or NULL: no updates */
    double lr;
    unsigned long seed;
    int keep_last_params;  /* keep a copy of the parameters as they were
                              before the latest update (a gradient dump
                              shows the parameters its gradients are of;
                              counted in fixed_bytes, not tracked by mem) */
    const char *slow_dir;  /* the folder of a two-level plan's slow level
                              (exec.h: bptt_exec_options; NULL: a temporary
                              folder made for each iteration and removed);
                              not copied: it must outlive the session */
    int slow_direct;       /* its file under O_DIRECT (steps.h) */
} bptt_session_spec;

/* What a session holds, in bytes, known before anything is allocated.
 * Doubles, so that sizes past memory do not overflow. */
typedef struct {
    size_t input, classes;  /* X and V (text: their largest values) */
    double hidden_bytes;    /* one checkpointed hidden state (all layers) */
    double internal_bytes;  /* one checkpointed internal state */
    double full_checkpoint_bytes; /* full BPTT's checkpoints */
    double data_bytes;      /* a batch and the text the task keeps */
    double fixed_bytes;     /* everything but checkpoints and the plan:
                               parameters, gradients, optimizer state, the
                               kept copy, data and the working set */
} bptt_session_sizes;

/* The sizes of spec: BPTT_OK, or BPTT_EINVAL with one sentence in why[cap]
 * (may be NULL) saying what does not suit (the task's rules, data.h). */
int bptt_session_size(const bptt_session_spec *spec, bptt_session_sizes *z,
                      char *why, size_t cap);

typedef struct bptt_session bptt_session;

/* Makes the session: task, model (parameters drawn from the seed) and
 * optimizer, all from mem (which must outlive it).  BPTT_OK; BPTT_EINVAL
 * with why[cap] filled for a description it cannot make; the task's status
 * when its file changed since it was sized (BPTT_EFILE, BPTT_ESHORT);
 * BPTT_ENOMEM when a tracked allocation fails (nothing is left
 * allocated). */
int bptt_session_open(bptt_session **out, const bptt_session_spec *spec,
                      bptt_mem *mem, char *why, size_t cap);
void bptt_session_close(bptt_session *s); /* accepts NULL */

bptt_model *bptt_session_model(bptt_session *s);
/* The tracked allocator the session was opened on (its peaks are those of
 * the latest bptt_session_gradients). */
bptt_mem *bptt_session_mem(bptt_session *s);
const bptt_batch *bptt_session_batch(const bptt_session *s);
size_t bptt_session_input(const bptt_session *s);   /* X */
size_t bptt_session_classes(const bptt_session *s); /* V */
/* The parameters before the latest update (keep_last_params), else NULL. */
const bptt_real *bptt_session_last_params(const bptt_session *s);

/* Loads batch k (0, 1, ...; same k, same batch) as the session's batch
 * (bptt_session_batch), as bptt_session_gradients does first: for callers
 * that run plans on it themselves (bptt_exec_run).  BPTT_OK or
 * BPTT_EINVAL. */
int bptt_session_fetch(bptt_session *s, size_t k);

/* Where an iteration met a value that is not finite. */
typedef struct {
    const char *arena;    /* "loss", "gradient" or "parameter" (after the
                             update) */
    int status;           /* BPTT_ENAN or BPTT_EINF */
    bptt_nonfinite where; /* the tensor, row and column (not for the loss) */
} bptt_session_fault;

/* The first half of iteration k (0, 1, ...): batch k, the memory peaks
 * reset, the plan executed (gradients of batch k in the model), stats
 * filled, then the loss and the gradients checked.  BPTT_OK;
 * BPTT_ENONFINITE with *fault filled; or bptt_exec_run's error.  Only this
 * half runs the plan, so a caller may time it alone.  A two-level plan
 * (twolevel.h) runs as bptt_exec_run runs it, its slow level in the
 * spec's slow_dir (or a temporary folder made for the iteration and
 * removed); its tables take
 * 48 (t + 1) working bytes beyond fixed_bytes. */
int bptt_session_gradients(bptt_session *s, const bptt_plan *plan, size_t k,
                           bptt_exec_stats *stats, bptt_session_fault *fault);

/* bptt_session_gradients for a sequence whose length is known only when
 * it ends (bptt_exec_run_online): more(more_ctx, i, &last) (steps.h)
 * puts step i + 1's inputs and targets into row i of the session's batch
 * (bptt_session_batch: call bptt_session_fetch once first, so that it
 * has its buffers; its T, the spec's length, is the most steps a sequence
 * may have) and answers 1, or 0 when the sequence ended.  o: an online
 * planner for the model's state bytes (fresh; online.h), or NULL for the
 * reference: the sequence read whole first, then full BPTT's plan of its
 * length run on it.  *plan (may be NULL): the plan run, the caller's to
 * free, on BPTT_OK.  Afterwards the batch's T is the sequence's length
 * (a gradient dump shows the sequence).  Statuses as
 * bptt_session_gradients and bptt_exec_run_online (BPTT_EINVAL also
 * before any fetch). */
int bptt_session_gradients_online(bptt_session *s, bptt_online *o,
                                  bptt_steps_more more, void *more_ctx,
                                  bptt_exec_stats *stats, bptt_plan **plan,
                                  bptt_session_fault *fault);

/* From now on, each bptt_session_gradients records its plan's actions into
 * points[0..plan->n_actions) (bptt_exec_run_recorded; the caller sizes it
 * for the plans it gives); NULL stops the recording.  points must stay
 * valid while it is set. */
void bptt_session_record(bptt_session *s, bptt_exec_point *points);

/* The second half: the update (the parameters kept first when asked), and
 * the parameters checked.  BPTT_OK or BPTT_ENONFINITE with *fault filled;
 * BPTT_OK and nothing done without an optimizer. */
int bptt_session_update(bptt_session *s, bptt_session_fault *fault);

#pragma GCC visibility pop

#endif
