/* online_impl.h: the online planner's object and its rules, shared by
 * online.c (the object: steps, the reversal, the curve) and online_rule.c
 * (the costs of ending now and the placement rules).  Not part of the
 * public interface (online.h). */
#ifndef BPTT_PLAN_ONLINE_IMPL_H
#define BPTT_PLAN_ONLINE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"
#include "costs.h"
#include "online.h"

/* msm chooses among both kinds of state from this many internal states
 * beside h(0) (doc/online.md 3) ... */
#define ONLINE_MIXED_FROM 8
/* ... up to this many: past it a step's choice would weigh too many
 * (k^2 per end); hsm's rule with extras holds there */
#define ONLINE_MIXED_TO 64
/* the most ends a choice weighs */
#define MSM_HORIZON_MAX 8

struct bptt_online {
    int msm;         /* costs from the msm table (else binomial) */
    int mixed;       /* internal states placed too (else hidden only) */
    int subst;       /* hidden only, an internal state costing a hidden
                        one: each checkpoint past h(0) is stored as s(c) */
    int tabled;      /* msm's costs from its table (else binomial, and an
                        internal state only ends segments) */
    int msm_asked;   /* the strategy asked was msm */
    bptt_units u;
    int64_t h, s, m; /* units; budget */
    int64_t slots;   /* hidden slots of the whole budget: m / h */
    size_t i;        /* steps run */
    int state;       /* 0: open, 1: the last step announced, 2: finished */
    unsigned char *block; /* the arrays below up to xs, in one block */
    size_t *c;       /* checkpoints c[0..k], rising */
    unsigned char *kd; /* their kinds: KIND_H (h stored) or KIND_S (s) */
    size_t *tc;      /* scratch configurations of the rule (ccap) */
    unsigned char *tk;
    int64_t *top;    /* the rule's top positions (ccap) */
    size_t *xs;      /* msm placing hidden states: internal states of the
                        latest steps in memory the rule leaves (rising) */
    size_t xh, nx, xcap; /* xs[xh .. xh + nx): the live ones */
    unsigned char *fixed; /* the rule's fixed checkpoints (ccap) */
    /* hsm past C(S+3, 3) (doc/online.md 2): Revolve's placement there,
     * with levels.  lev[j]: twice c[j]'s level, plus one when it may be
     * replaced ("dispensable"); carried with c */
    int64_t *lev;
    int64_t newlev;  /* lev of the state the rule stores now */
    int lmode;       /* 0: look for a dispensable one; 1: move the latest */
    size_t lnext;    /* the next step the rule looks at */
    int64_t ljump;   /* the level the latest gets when moved */
    size_t k, ccap;
    bptt_table *tb;  /* msm: the offline table the costs come from */
    int keep_log;
    bptt_action *log; /* every action handed out */
    size_t nlog, logcap;
};

/* A choice: store nothing (kind < 0), or store the state of `kind` at i,
 * in place of checkpoint `evict` (-1: none evicted; 0: h(0), once s(1)
 * is stored). */
typedef struct {
    int kind;
    long evict;
} choice;

/* online_rule.c */
int64_t online_hsm_cost(int64_t n, int64_t slots);
int64_t online_units_of(const bptt_online *o, int kind);
int64_t online_held_units(const bptt_online *o, const unsigned char *kd,
                          size_t k);
int64_t online_end_cost(const bptt_online *o, const size_t *c,
                        const unsigned char *kd, size_t k, size_t T);
size_t online_apply(const bptt_online *o, choice ch, size_t i, size_t *tc,
                    unsigned char *tk);
choice online_choose_hidden(bptt_online *o, size_t i);
choice online_choose_mixed(bptt_online *o, size_t i, int last);
size_t online_table_need(const bptt_online *o, size_t end);
int online_ensure_table(bptt_online *o, size_t t);
size_t online_physical(const bptt_online *o, int with_x, size_t *tc,
                       unsigned char *tk);
int64_t online_reversal_cost(bptt_online *o, size_t T, int *keep);

#endif /* BPTT_PLAN_ONLINE_IMPL_H */
