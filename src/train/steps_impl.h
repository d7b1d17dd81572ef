/* steps_impl.h: the executor's interpreter (steps_act.c), shared with
 * the entries that feed it a plan or an online planner's actions
 * (steps.c).  Not part of the public interface (steps.h). */
#ifndef BPTT_TRAIN_STEPS_IMPL_H
#define BPTT_TRAIN_STEPS_IMPL_H

#include <stddef.h>

#include "slow.h"
#include "steps.h"

typedef struct {
    unsigned char *state[2]; /* running hidden state, double-buffered */
    unsigned char *work;     /* working internal state */
    unsigned char *carry;    /* dh: gradient w.r.t. the running state */
    unsigned char **hslot;   /* (cap+1) stored hidden states, NULL if none */
    unsigned char **sslot;   /* (cap+1) stored internal states, NULL if none */
    unsigned char *computed; /* (cap+1) step already run once */
    size_t held, peak;       /* checkpoint bytes held now and at most */
} exec_ws;

/* The interpreter: the state of a run between two actions. */
typedef struct {
    const bptt_steps *ops;
    bptt_mem *mem;
    bptt_steps_stats *st;
    bptt_exec_point *points; /* points[k] for k < points_cap */
    size_t points_cap;
    exec_ws w;
    size_t hb, sb;
    size_t t;      /* the length; SIZE_MAX while it is not known */
    size_t cap;    /* the tables cover steps 0..cap */
    size_t budget; /* checkpoint bytes the run may hold */
    int online;    /* actions checked one by one (no validated plan) */
    int cur;       /* w.state[cur] is the running state */
    /* the working internal state s(in_slot) is in w.sslot[in_slot], not
     * in w.work (0: it is in w.work, or there is none) */
    size_t in_slot;
    size_t k;    /* actions run */
    size_t head; /* the step of the running state, after an advance */
    bptt_slow_store slow; /* the slow level (live when the plan has one) */
    size_t slow_budget;   /* bytes the slow level may hold */
} interp;

/* Tables for steps 0..cap (steps_ws_take), grown to cover step i
 * (steps_ws_cover). */
int steps_ws_take(interp *x, size_t cap);
int steps_ws_cover(interp *x, size_t i);
/* An op's nonzero status as the run returns it, kept in the stats. */
int steps_op_failed(bptt_steps_stats *st, int status);
/* Action a, the run's x->k-th; next: the action after it when known. */
int steps_act(interp *x, bptt_action a, const bptt_action *next);
/* Actions [from, plan->n_actions) of plan. */
int steps_act_plan(interp *x, const bptt_plan *plan, size_t from);
/* The end of a run: dh0, the peaks, everything given back; returns rc. */
int steps_finish_run(interp *x, int rc);

#endif /* BPTT_TRAIN_STEPS_IMPL_H */
