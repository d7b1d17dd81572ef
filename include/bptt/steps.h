/* steps.h: the executor's view of a recurrent model: a table of step
 * operations, and the one executor that runs a plan (bptt.h) on it.
 *
 * The planner needs to know only two sizes: the bytes of a hidden state
 * h(i), which carries a step's result to the next step, and of an internal
 * state s(i), everything the backward op of step i reads.  The executor
 * needs only the three ops below.  So any recurrent model, ours (the
 * stacks of model.h, run this way by bptt_exec_run) or a user's own, is a
 * bptt_steps table: its sizes, its ops and a context pointer handed back
 * to every op, in the manner of GSL's type objects (gsl_rng_type: the
 * library holds the state, the type says how big it is and how to step
 * it).  This header uses nothing but bptt.h and mem.h, so a model written
 * outside the library is built against the installed headers alone.
 *
 * Steps are numbered 1..t, t the plan's length; h(0) is the initial
 * hidden state, h(i) = forward_i(h(i-1)).  The loss is the user's: if it
 * has a term at step i (an output layer and its loss, as in model.h), the
 * backward op of step i computes that term's gradient with respect to h(i)
 * and adds it to dh before running the step backwards.  That way the loss
 * is computed once per step, never as part of a recomputation.
 *
 * Ownership.  The executor owns every state buffer an op is given: the
 * running hidden states, the working internal state, the gradient, and the
 * checkpoint store, all taken from the caller's tracked allocator
 * (mem.h): stored states as BPTT_MEM_CHECKPOINT, the rest as
 * BPTT_MEM_WORKING.  A buffer is valid only during the call it is passed
 * to; an op must not keep a pointer to one, nor free it.  Every buffer is
 * 64-byte aligned (so it may be read as floats or doubles) and holds
 * exactly hidden_bytes or internal_bytes.  The context is the user's;
 * the executor only passes it on.
 *
 * Aliasing.  Within one call, no two of the buffers an op is given
 * overlap.  Across calls, a buffer may be reused for anything: a stored
 * state is copied into the running state before it is stepped from, and
 * s_out may be a checkpoint block that is kept for a later backward op.
 *
 * What the executor promises, for a plan the validator accepts
 * (bptt_plan_validate): the forward op of step i is always given h(i-1)
 * (as the forward ops computed it, or h0), the backward op of step i the
 * s(i) a forward op of step i wrote, the backward ops run once each, in
 * the order t, t-1, ..., 1, with dh chained from one to the next.  It
 * calls the ops exactly as the plan's actions say: one forward op per
 * advance, one hidden_from_internal per restore_internal and per
 * read_internal (none when the table says where h(i) lies in s(i):
 * hidden_in_internal) and one backward op per backward, in plan order,
 * and nothing else (restore_hidden is a copy the executor makes itself,
 * and so are the slow level's writes, reads and drops).  So the gradients
 * cannot depend on the plan, provided the ops keep the rules below.
 *
 * The slow level.  A two-level plan (twolevel.h) also writes states to a
 * slow level and reads them back: the executor keeps them in one file it
 * makes for the run in a folder (slow_dir below) and reads them back
 * byte for byte, so an op cannot tell a state read from the slow level
 * from one kept in memory.  Every byte of a state is written, those an op
 * left unwritten included (their values are undefined, as above).
 */
#ifndef BPTT_STEPS_H
#define BPTT_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"
#include "mem.h"
#include "online.h"

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

typedef struct {
    /* For messages; may be NULL. */
    const char *name;
    /* Bytes of one hidden and one internal state: 1 <= hidden_bytes <=
     * internal_bytes (the planner's rule: an internal state holds at least
     * what is needed to rebuild the hidden state). */
    size_t hidden_bytes, internal_bytes;
    /* h(0), hidden_bytes, copied at the start of a run; NULL: all zero
     * bytes. */
    const void *h0;

    /* Forward op of step i: reads h_in = h(i-1), writes h_out = h(i) and
     * s_out = s(i).  It may run several times for the same step (the
     * plan's recomputations) and must then write the same bytes: it reads
     * nothing but h_in, the step and what stays fixed during a run (the
     * parameters, the step's input), and it changes nothing a later op
     * reads (no gradient is added here).  s_out is always given, and the
     * op cannot tell whether the plan keeps it, so it always writes it;
     * bytes it leaves unwritten are undefined (checkpoint blocks are not
     * zeroed), so it must write every byte its other ops read.  0, or a
     * nonzero status that stops the run. */
    int (*forward)(void *ctx, size_t step, const void *h_in, void *s_out,
                   void *h_out);

    /* Backward op of step i: reads s = s(i) (never written: it may be a
     * checkpoint a later restore reads) and dh, which holds dL/dh(i) on
     * entry (all zero bytes at step t, apart from what the op adds for
     * the loss at step i) and must hold dL/dh(i-1) on return: in place,
     * one buffer, as the gradient of the running state.  Gradients of the
     * parameters are the op's to accumulate, in its context; they come in
     * the fixed order t, ..., 1 whatever the plan, so their sums round
     * the same under every plan.  0, or a nonzero status that stops the
     * run. */
    int (*backward)(void *ctx, size_t step, const void *s, void *dh);

    /* Writes h = h(i) as it is held inside s = s(i) (restore_internal:
     * the plan stepping on from a stored internal state instead of a
     * stored hidden state; read_internal: from one read back from the
     * slow level).  The bytes must be those the forward op of step i
     * wrote into h_out.  0, or a nonzero status that stops the run.  May
     * be NULL when hidden_in_internal says where h(i) lies in s(i), or
     * when the plan has no restore_internal or read_internal action (a
     * plan of full, chen or hsm; checked before any op is called). */
    int (*hidden_from_internal)(void *ctx, size_t step, const void *s,
                                void *h);

    /* Handed to every op, never read by the executor. */
    void *ctx;

    /* Nonzero: h(i) is a plain copy inside s(i), the hidden_bytes at byte
     * hidden_offset (hidden_offset + hidden_bytes <= internal_bytes), and
     * the executor restores from an internal state by copying them;
     * hidden_from_internal, if given as well, is not called.  After every
     * forward op the executor compares those bytes of s_out with h_out
     * and stops the run with BPTT_ESTEPS where they differ (a wrong
     * offset), so gradients never come from a state the op did not
     * write. */
    int hidden_in_internal;
    size_t hidden_offset;

    /* What a run hands back beyond the gradients the ops accumulate, each
     * hidden_bytes, NULL when not wanted (the buffers are the caller's):
     *   h_last: h(t), as the forward op of step t wrote it: the state the
     *           next chunk of a stream starts from (pass it as that run's
     *           h0; truncated BPTT over a stream, state carried across);
     *   dh0:    dL/dh(0), the gradient the backward op of step 1 left: what
     *           the loss asks of h(0) when h(0) is itself computed (an
     *           encoder's output, a learned initial state).
     * h_last is written when the forward op of step t runs (again at each
     * recomputation of step t, with the same bytes), so a run that fails
     * later may have written it; dh0 only when the run returns BPTT_OK. */
    void *h_last;
    void *dh0;

    /* The folder of the slow level, for a plan with slow-level actions
     * (write_*, read_*, drop_*; twolevel.h); not looked at otherwise.
     * The run makes one new file in it (named bptt-slow-PID-K, the first
     * K from 0 not taken; made with O_CREAT | O_EXCL | O_NOFOLLOW, so no
     * file or link already there is opened or written), unlinks it at
     * once and keeps the states in the open file, which it closes at the
     * end: the folder is left as it was, whatever the run returns.  The
     * folder must exist, be a folder (a link to one will do) and take a
     * new file.  NULL: a folder made for the run with mkdtemp under
     * $TMPDIR (or /tmp where TMPDIR is unset or empty), removed as soon
     * as the file is made.  The file never holds more than the plan's
     * slow budget at once (slow_file_bytes in the stats says how long it
     * grew).  Writing past a file size limit (RLIMIT_FSIZE) raises
     * SIGXFSZ, which ends a process that does not ignore it. */
    const char *slow_dir;

    /* Nonzero: the slow level's file bypasses the page cache (O_DIRECT),
     * so the states written really leave memory for the device; 0 (what
     * a table zeroed or made before this field gets): through the page
     * cache, where a state just written may stay in memory.  Not looked
     * at for a plan without slow-level actions.  Direct I/O moves whole
     * blocks at aligned offsets from aligned memory: each state takes a
     * slot of its bytes rounded up to the filesystem's alignment
     * (BPTT_SLOW_DIRECT_ALIGN, or more where statx's STATX_DIOALIGN asks
     * more), the padding written as zero bytes, and goes through a
     * bounce buffer of working memory (bptt_steps_run) unless the
     * executor's buffer and the state's bytes are aligned already.  A
     * folder whose filesystem refuses direct I/O is never used without
     * it: the run stops before any op with BPTT_EIO and slow_errno EINVAL
     * (no fallback to the page cache), the folder left as it was. */
    int slow_direct;
} bptt_steps;

/* The least alignment, in bytes, of the slow level's slots and of its
 * bounce buffer under slow_direct. */
#define BPTT_SLOW_DIRECT_ALIGN 4096

/* Whether a run could keep its slow level in dir (NULL: a temporary
 * folder, as slow_dir NULL), with direct I/O where direct is nonzero:
 * makes the file a run would make there, switches it to O_DIRECT where
 * asked, reads the room left on its filesystem into *free_bytes (may be
 * NULL; 0 where unknown), and removes it, the folder left as it was.
 * BPTT_OK; BPTT_EIO with *err (may be NULL) the errno (EINVAL: the
 * filesystem refuses O_DIRECT); BPTT_ENOMEM.  Nothing runs, nothing is
 * written, so a caller can refuse a folder before any work. */
int bptt_steps_slow_check(const char *dir, int direct, uint64_t *free_bytes,
                          int *err);

/* The open file fd switched to O_DIRECT as a run's slow level switches
 * its file under slow_direct, with *align (may be NULL; 0 on failure)
 * the alignment of offsets, lengths and buffers the run uses there
 * (BPTT_SLOW_DIRECT_ALIGN, or more where the kernel asks for more): 0,
 * or the errno (EINVAL: the filesystem refuses O_DIRECT).  For a caller
 * that measures such a file (bptt calibrate --direct). */
int bptt_steps_slow_direct(int fd, size_t *align);

/* What one run did.  The counts are of calls made, the peak of bytes
 * held, so a caller can compare both with the plan's prediction
 * (bptt_plan_validate: forward_ops, recompute_ops, backward_ops, and
 * peak_units times the bytes of a unit). */
typedef struct {
    int64_t forward_ops;   /* forward ops run, first sweep included */
    int64_t recompute_ops; /* of which of a step run before */
    int64_t backward_ops;
    int64_t restores;      /* restore_hidden and restore_internal actions */
    int64_t restore_hidden_ops;   /* of which restore_hidden */
    int64_t restore_internal_ops; /* of which restore_internal */
    /* The most bytes the checkpoint store held at once (h(0) included),
     * counted as the tracked allocator handed them out. */
    size_t checkpoint_peak_bytes;
    /* Wall seconds (CLOCK_MONOTONIC, read around each call) in forward
     * ops and in backward ops; copies, stores and frees are in neither. */
    double forward_seconds, backward_seconds;
    /* Where a run stopped: the index into plan->actions of the action that
     * failed (its op and step are plan->actions[failed_action]), and the
     * status an op returned there, as it returned it (0 when the failure
     * was the executor's own: BPTT_ENOMEM, BPTT_ESTEPS).  failed_action is
     * -1 when the run returned BPTT_OK or stopped before the first
     * action. */
    int64_t failed_action;
    int op_status;
    /* The slow level of a two-level plan (all 0 for a plan without
     * slow-level actions).  States written and read (as the validator's
     * slow_writes and slow_reads) and their bytes (its slow_write_units
     * and slow_read_units times the bytes of a unit); the most bytes the
     * slow level held at once (its slow_peak_units times the unit); the
     * length the file grew to (equal to slow_peak_bytes when the plan
     * drops states last-written first, as the planner's do; a plan that
     * leaves holes may need more; under slow_direct it counts every slot
     * rounded up to the alignment, so it is more unless the states'
     * bytes are multiples of it, while the bytes written, read and
     * peak stay the plan's state bytes); wall seconds in pwrite and pread
     * (under slow_direct, the bounce buffer's copies included); and
     * where a run returned BPTT_EIO, the errno of the call that failed
     * (0 otherwise). */
    int64_t slow_writes, slow_reads;
    uint64_t slow_bytes_written, slow_bytes_read;
    size_t slow_peak_bytes;
    uint64_t slow_file_bytes;
    double slow_seconds;
    int slow_errno;
} bptt_steps_stats;

/* An op's own failure statuses.  A nonzero status an op returns stops the
 * run; bptt_steps_run returns it unchanged when it is at least
 * BPTT_OP_STATUS_MIN or negative, so a caller tells its ops' failures from
 * the library's.  A status from 1 to BPTT_OP_STATUS_MIN - 1 (the library's
 * own range, enum bptt_status) is returned as BPTT_EOP instead; the op's
 * value is in stats->op_status either way. */
#define BPTT_OP_STATUS_MIN 256

/* One action of a run as the executor ran it (bptt_steps_run's points):
 * what the tracked allocator held just after it, and the forward ops so
 * far. */
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

/* Run plan on steps: take the working set and h(0)'s checkpoint from mem
 * (NULL: from an allocator of the run's own, made and freed inside the
 * call; the stats and points count its bytes all the same), run the
 * actions in order, release everything.  The plan's units must
 * be the steps' sizes in the same ratio (plan->hidden_units *
 * internal_bytes == plan->internal_units * hidden_bytes; a unit is then
 * hidden_bytes / hidden_units bytes, and the checkpoint store never holds
 * more than the plan's budget of them).  points (may be NULL) receives
 * one bptt_exec_point per action, points[0..plan->n_actions).  An action
 * "advance i" followed at once by "save_internal i" has the forward op
 * write s(i) straight into its checkpoint block, taken at the advance
 * (no copy; the peak is the plan's all the same, and the point of the
 * advance already counts the block).
 *
 * A plan with slow-level actions (slow_budget set; twolevel.h) runs them
 * as the validator reads them: write_hidden i writes the running state,
 * write_internal i the working internal state (a copy: a state kept in
 * memory stays there); read_hidden i makes the running state h(i), with
 * no working internal state; read_internal i makes s(i) the working
 * internal state (a backward op of step i may follow and read it) and the
 * running state the h(i) inside it (hidden_offset's bytes, or
 * hidden_from_internal); drop_* gives the slot back.  The file is made
 * (steps->slow_dir) before the first action, and its tables, 48 (t + 1)
 * bytes, are working memory beside bptt_exec_working_bytes'; under
 * steps->slow_direct so is the bounce buffer: internal_bytes rounded up
 * to the alignment A, plus A - 64 bytes to align the block, A being
 * BPTT_SLOW_DIRECT_ALIGN unless the filesystem asks more.  The slow
 * level never holds more than the plan's slow budget of bytes.
 *
 * Returns BPTT_OK; BPTT_EINVAL for a NULL argument or op (but
 * hidden_from_internal, see there), sizes out of range, a hidden_offset
 * past the internal state, or units that do not match; BPTT_EBADPLAN for
 * a plan the validator rejects (no op is called); BPTT_ENOMEM when an
 * allocation from mem fails; BPTT_ESTEPS when the bytes at hidden_offset
 * of s(i) are not the h(i) the forward op wrote; or the status an op
 * returned (BPTT_EOP for one inside the library's range, see
 * BPTT_OP_STATUS_MIN), which stops the run at that action; BPTT_EIO when
 * the slow level's file cannot be made in its folder (no such folder,
 * not a folder, not writable, every name taken, direct I/O refused
 * under slow_direct (EINVAL): before any op runs) or a
 * write or read of it fails (at that action), the errno in
 * stats->slow_errno.  A plan with slow-level actions but no slow budget
 * (0) is one the validator rejects: BPTT_EBADPLAN, no file made.  On
 * every return all it took from mem is given back, the file is closed
 * and no folder is left changed; *stats (zeroed first) covers the
 * actions run; points after the failed action are not written. */
int bptt_steps_run(const bptt_plan *plan, const bptt_steps *steps,
                   bptt_mem *mem, bptt_steps_stats *stats,
                   bptt_exec_point *points);

/* Whether step i + 1 of a sequence of unknown length runs, asked by
 * bptt_steps_run_online before it, i being the steps run so far (0 at
 * the start): 1, step i + 1 runs (its data is ready for the forward op),
 * with *last (0 on entry) set nonzero when it is known to be the last
 * step (one step of lookahead: the planner then stores nothing for it;
 * online.h); 0, the sequence ended after i steps; any other value, a
 * failure that stops the run, returned as an op's status is
 * (BPTT_OP_STATUS_MIN). */
typedef int (*bptt_steps_more)(void *ctx, size_t i, int *last);

/* A sequence whose length is known only when it ends, run on steps under
 * an online planner o (online.h; fresh: no step announced yet, made for
 * exactly the table's hidden_bytes and internal_bytes; its budget is the
 * run's).  Before each step it asks more(more_ctx, i, &last), hands the
 * answer to bptt_online_next and runs the actions it gives at once (frees,
 * saves of h(i) and s(i), the forward op of step i + 1); when more says
 * the sequence ended (or after a step said last), it takes the plan of
 * the length T the sequence had from bptt_online_finish, validates it
 * whole and runs its remaining actions (from the prefix on: the backward
 * ops and their recomputations).  One interpreter runs both this and
 * bptt_steps_run: the ops are called as the actions say, with the same
 * promises (bit-identical gradients to any other plan of length T, h_last
 * = h(T), dh0), and the same ownership, allocator and status rules.
 * The store never holds more than the planner's budget: an action that
 * would break it, or one the first sweep cannot have (checked one by one
 * while the length is unknown), stops the run with BPTT_EBADPLAN.
 *
 * *stats as bptt_steps_run's (failed_action: the index of the action in
 * the finished plan, whose first actions are those run; -1 when more
 * failed, its status in op_status); checkpoint_peak_bytes is measured.
 * *plan (may be NULL): on BPTT_OK the finished plan, the caller's to
 * free (bptt_plan_free); NULL otherwise.  points (may be NULL) receives
 * one point per action as bptt_steps_run's, the first points_cap of
 * them (the plan's n_actions say how many there were).  The per-step
 * tables grow with the sequence (by doubling, as BPTT_MEM_WORKING);
 * working memory is otherwise that of bptt_steps_run.
 *
 * Returns BPTT_OK; BPTT_EINVAL for a NULL o, steps, more or stats, a
 * table bptt_steps_run refuses, a planner already used or whose units
 * are not the table's bytes, a plan with restore_internal on a table
 * that cannot restore, or a finished plan with a slow level's actions;
 * BPTT_ESHORT when more ended the sequence before its first step; the
 * planner's statuses (BPTT_ETOOBIG past its longest sequence,
 * BPTT_ENOMEM); BPTT_EBADPLAN; BPTT_ENOMEM; BPTT_ESTEPS; or an op's or
 * more's status.  On every return all it took from mem is given
 * back.  The planner is spent either way (bptt_online_free it). */
int bptt_steps_run_online(bptt_online *o, const bptt_steps *steps,
                          bptt_mem *mem, bptt_steps_more more,
                          void *more_ctx, bptt_steps_stats *stats,
                          bptt_plan **plan, bptt_exec_point *points,
                          size_t points_cap);

/* The working memory (BPTT_MEM_WORKING) bptt_steps_run takes for a plan
 * of length t on states of hidden_bytes and internal_bytes, to the byte:
 * two running hidden states, the working internal state, the gradient dh,
 * and per-step tables (a hidden and an internal slot pointer and a flag
 * per step); a plan with slow-level actions takes 48 (t + 1) bytes more,
 * and with slow_direct a bounce buffer more (bptt_steps_run).  As a double, so that sizes past memory do not
 * overflow. */
double bptt_exec_working_bytes(size_t t, double hidden_bytes,
                               double internal_bytes);

#pragma GCC visibility pop

#endif
