/* online.h: plans for sequences whose length is known only when they end
 * (doc/online.md).
 *
 * An online planner is told, step by step, that one more step will run,
 * and answers what to store before it runs (save h(i), save s(i), free a
 * stored state), holding the budget at every moment; it never reads the
 * length.  When the sequence has ended after T steps it gives the whole
 * plan for length T: the actions it handed out, then the reversal.  The
 * plan is an ordinary plan of bptt.h (bptt_plan_validate checks it, the
 * executor of steps.h runs it), and the actions handed out for the first
 * steps are the same whatever the final length (prefix-consistent).
 *
 * Strategies: "hsm" stores hidden states only; "msm" stores hidden states
 * and, while they pay, internal states of the latest steps.  Sizes and the
 * budget are in bytes, as for bptt_plan_make (slots: 1 and alpha).
 *
 * One step of lookahead: where the caller knows, when a step begins, that
 * it is the last one (a while loop whose condition is read before the
 * step, an iterator peeked one ahead), saying so lets the planner store
 * nothing for it.  Then online hsm in slots equals the offline optimum for
 * every T <= C(S+2, 2) (S slots, h(0)'s included).  A caller that learns
 * the end only after the step still gets a valid plan, at most one stored
 * state's use the worse.
 *
 * Every function returns a status of enum bptt_status (or the value said
 * beside it); nothing here prints or exits. */
#ifndef BPTT_ONLINE_H
#define BPTT_ONLINE_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"

#pragma GCC visibility push(default)

typedef struct bptt_online bptt_online;

/* The most actions one bptt_online_next hands out. */
#define BPTT_ONLINE_ACTIONS_MAX 8

/* A planner for states of hidden_bytes and internal_bytes under
 * budget_bytes (h(0) counted).  strategy: "hsm" or "msm" (others:
 * BPTT_EUNKNOWN).  BPTT_EINFEASIBLE when the budget holds no hidden state
 * (h(0) must be kept): *min_budget_bytes (may be NULL) then holds one
 * hidden state's bytes.
 * BPTT_EINVAL: out NULL, strategy NULL or sizes as bptt_units_from_bytes
 * refuses, a negative budget.  On failure *out is NULL. */
int bptt_online_new(bptt_online **out, const char *strategy,
                    int64_t hidden_bytes, int64_t internal_bytes,
                    int64_t budget_bytes, int64_t *min_budget_bytes);
void bptt_online_free(bptt_online *o); /* accepts NULL */

/* Step i + 1 runs next, i being the steps run so far.  last: nonzero when
 * the caller knows it is the last step.  Writes into acts[0 .. *n) the
 * actions to run now, in order: frees, saves of h(i) or s(i), then
 * BPTT_ADVANCE i + 1 (*n <= BPTT_ONLINE_ACTIONS_MAX).  BPTT_EINVAL after
 * a step announced last, after bptt_online_finish, or with a NULL
 * argument; BPTT_ETOOBIG past UINT32_MAX - 2 steps. */
int bptt_online_next(bptt_online *o, int last, bptt_action *acts, size_t *n);

/* The sequence ended after the steps run so far (T >= 1): *out is the
 * plan for length T in the planner's units (bptt_online_units); its
 * first *prefix actions (prefix may be NULL) are every action
 * bptt_online_next handed out, in order, and the rest reverse the
 * sequence.  The planner takes no more steps.  BPTT_EINVAL before the
 * first step or after finish; BPTT_ENOMEM.  On failure *out is NULL. */
int bptt_online_finish(bptt_online *o, bptt_plan **out, size_t *prefix);

/* The forward ops the plan would count if the sequence ended after the
 * steps run so far (its first sweep included), without making it; -1
 * before the first step or on a NULL planner. */
int64_t bptt_online_cost(const bptt_online *o);

/* Steps run so far (0 for NULL). */
size_t bptt_online_steps(const bptt_online *o);
/* Units stored now (h(0) included; -1 for NULL). */
int64_t bptt_online_held(const bptt_online *o);
/* The planner's units and budget in them (EINVAL for NULL arguments). */
int bptt_online_units(const bptt_online *o, bptt_units *u, int64_t *budget);

/* Forward ops of the online plan and of the offline optimum of the same
 * strategy at every length 1..t_max, in one sweep (the online planner
 * run once, told nothing in advance; the offline optimum from the
 * strategy's closed form or one table): online[T - 1] and offline[T - 1]
 * (either may be NULL).  lookahead: nonzero when each step is announced
 * last or not (as bptt_online_next's last).  Offline costs for msm need
 * a table of length t_max (it is refused past half of physical memory:
 * BPTT_ETOOBIG).  Other statuses as bptt_online_new. */
int bptt_online_curve(const char *strategy, int64_t hidden_bytes,
                      int64_t internal_bytes, int64_t budget_bytes,
                      size_t t_max, int lookahead, int64_t *online,
                      int64_t *offline);

#pragma GCC visibility pop

#endif /* BPTT_ONLINE_H */
