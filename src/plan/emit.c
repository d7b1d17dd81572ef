/* emit.c: a plan unrolled from a cost table: the splits its choice
 * arrays (or the closed form's proof, past the stored columns) give, from
 * the whole sequence down, each split's actions in the order they run. */
#include <stdint.h>
#include <stdlib.h>

#include "bptt.h"
#include "costs.h"

/* The split the closed form's proof uses at a cell it covers. */
static int32_t closed_form_choice(int kind, size_t len, int64_t m, int64_t s)
{
    const int64_t l = (int64_t)len, F = m / s + 1;
    if (l <= 1 || kind == KIND_H || l <= F)
        return 1; /* l = 1: nothing stored; else internal y = 1 */
    return (int32_t)(F + 1 < l - F + 1 ? F + 1 : l - F + 1);
}

/* Unrolling, with an explicit stack (depth can reach t). */
enum { TASK_SOLVE, TASK_ACTION };
typedef struct {
    uint8_t type, kind, from_internal, owns; /* SOLVE: start kind/source */
    uint32_t op;                             /* ACTION */
    size_t a, len;                           /* SOLVE: start, length */
    int64_t m;                               /* SOLVE: budget */
} task;

typedef struct {
    task *v;
    size_t n, cap;
} task_stack;

static int stack_push(task_stack *st, task tk)
{
    if (st->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 64;
        task *v = planner_realloc(st->v, cap * sizeof *v);
        if (!v)
            return BPTT_ENOMEM;
        st->v = v;
        st->cap = cap;
    }
    st->v[st->n++] = tk;
    return BPTT_OK;
}

static int push_action(task_stack *st, int op, size_t step)
{
    task tk = {.type = TASK_ACTION, .op = (uint32_t)op, .a = step};
    return stack_push(st, tk);
}

static int push_solve(task_stack *st, int kind, int from_internal, int owns,
                      size_t a, size_t len, int64_t m)
{
    task tk = {.type = TASK_SOLVE,
               .kind = (uint8_t)kind,
               .from_internal = (uint8_t)from_internal,
               .owns = (uint8_t)owns,
               .a = a,
               .len = len,
               .m = m};
    return stack_push(st, tk);
}

/* Emits actions and tracks the running position, so that a restore is
 * emitted only when the running state is not already where it is needed. */
typedef struct {
    bptt_plan *plan;
    long long pos; /* -1: no running state */
} emitter;

static int emit(emitter *e, int op, size_t step)
{
    if (op == BPTT_ADVANCE || op == BPTT_RESTORE_HIDDEN ||
        op == BPTT_RESTORE_INTERNAL)
        e->pos = (long long)step;
    else if (op == BPTT_BACKWARD)
        e->pos = -1;
    return bptt_plan_push(e->plan, op, step);
}

static int go_to(emitter *e, size_t a, int from_internal)
{
    if (e->pos == (long long)a)
        return BPTT_OK;
    return emit(e, from_internal ? BPTT_RESTORE_INTERNAL : BPTT_RESTORE_HIDDEN,
                a);
}

static int advance(emitter *e, size_t from, size_t to)
{
    int rc = BPTT_OK;
    for (size_t i = from + 1; i <= to && rc == BPTT_OK; i++)
        rc = emit(e, BPTT_ADVANCE, i);
    return rc;
}

size_t bptt_plan_scratch_bytes(const bptt_strategy *st, size_t t)
{
    /* the stack: each open split keeps at most 3 entries below the segment
     * being unrolled (its left part, free, backward) and open splits nest
     * in right parts of falling length: 3 t + 4 entries, capacity below
     * twice that (or 64), and a realloc holds old and new at once; full
     * and chen write their actions straight, with no stack */
    const int fixed = st && (st->flags & BPTT_STRATEGY_FIXED_COST);
    const double stack =
        fixed ? 0 : (3.0 * (double)t + 68) * 3 * sizeof(task);
    const double b = stack + (double)t + 1 + 4 * PLANNER_ALLOC_SLACK;
    return b >= (double)SIZE_MAX ? SIZE_MAX : (size_t)b;
}

int planner_dp_emit(const bptt_table *tb, int64_t m, bptt_plan *plan)
{
    return planner_dp_emit_at(tb, KIND_H, 0, tb->t, m, 1, plan);
}

int planner_dp_emit_at(const bptt_table *tb, int kind, size_t a0,
                       size_t len0, int64_t m, int running, bptt_plan *plan)
{
    if (len0 > tb->t || (kind == KIND_S && tb->kinds < 2))
        return BPTT_EINVAL;
    const int paper = (tb->rules & RULE_PAPER) != 0;
    const int64_t h = tb->h, s = tb->s;
    const size_t T1 = tb->t + 1;
    task_stack st = {0};
    emitter e = {plan, running ? (long long)a0 : -1};
    if (m > tb->dpw && tb->fcol == INT64_MAX)
        m = tb->dpw; /* past the stored width nothing changes */
    int rc = kind == KIND_S ? push_solve(&st, KIND_S, 1, 0, a0, len0, m)
                            : push_solve(&st, KIND_H, 0, 1, a0, len0, m);

    while (rc == BPTT_OK && st.n > 0) {
        task tk = st.v[--st.n];
        if (tk.type == TASK_ACTION) {
            rc = emit(&e, (int)tk.op, tk.a);
            continue;
        }
        const size_t a = tk.a, len = tk.len;
        if (len == 0) {
            if (tk.owns)
                rc = emit(&e, BPTT_FREE_HIDDEN, a);
            continue;
        }
        /* past the DP columns the closed form's split holds (its proof
         * covers the smaller cells it recurses into) */
        if (tk.m < 0 || (tk.m <= tb->dpw && !tb->choice[tk.kind]) ||
            (tk.m > tb->dpw && tb->fcol == INT64_MAX)) {
            rc = BPTT_EINFEASIBLE; /* not reached for feasible budgets */
            break;
        }
        int64_t col = -1;
        if (tk.m <= tb->dpw) { /* on a compressed axis: its largest sum */
            col = planner_col_of(tb, tk.m);
            tk.m = col_budget(tb, col);
        }
        const int32_t c =
            col >= 0 ? tb->choice[tk.kind][(size_t)col * T1 + len]
                     : closed_form_choice(tk.kind, len, tk.m, s);
        if (c == 0) {
            rc = BPTT_EINFEASIBLE; /* not reached for feasible budgets */
            break;
        }
        const size_t y = (size_t)(c < 0 ? -c : c);
        if ((rc = go_to(&e, a, tk.from_internal)) != BPTT_OK ||
            (rc = advance(&e, a, a + y)) != BPTT_OK)
            break;
        if (c > 0 && y == len) { /* nothing stored: backward at once */
            if ((rc = emit(&e, BPTT_BACKWARD, a + y)) == BPTT_OK)
                rc = push_solve(&st, tk.kind, tk.from_internal, tk.owns, a,
                                len - 1, tk.m);
        } else if (c < 0) { /* hidden split: right part owns h(a+y) */
            const int64_t mr =
                (tk.kind == KIND_S) ? tk.m : budget_minus(tk.m, h, 0);
            if ((rc = emit(&e, BPTT_SAVE_HIDDEN, a + y)) == BPTT_OK &&
                (rc = push_solve(&st, tk.kind, tk.from_internal, tk.owns, a,
                                 y, tk.m)) == BPTT_OK)
                rc = push_solve(&st, KIND_H, 0, 1, a + y, len - y, mr);
        } else { /* internal split */
            int rk = KIND_S;
            int64_t mr;
            int left_needed = 1;
            if (paper) {
                rk = KIND_H;
                mr = budget_minus(tk.m, s, 0);
            } else if (tk.kind == KIND_H && y == 1) {
                /* the start is needed by nothing after this: free it */
                rc = emit(&e, BPTT_FREE_HIDDEN, a);
                mr = budget_minus(tk.m, s, 0);
                left_needed = 0;
            } else if (tk.kind == KIND_H) {
                mr = budget_minus(tk.m, h, s);
            } else {
                mr = budget_minus(tk.m, s, 0);
            }
            if (rc == BPTT_OK)
                rc = emit(&e, BPTT_SAVE_INTERNAL, a + y);
            if (rc == BPTT_OK && left_needed)
                rc = push_solve(&st, tk.kind, tk.from_internal, tk.owns, a,
                                y - 1, tk.m);
            if (rc == BPTT_OK)
                rc = push_action(&st, BPTT_FREE_INTERNAL, a + y);
            if (rc == BPTT_OK)
                rc = push_action(&st, BPTT_BACKWARD, a + y);
            if (rc == BPTT_OK)
                rc = push_solve(&st, rk, 1, 0, a + y, len - y, mr);
        }
    }
    planner_free(st.v);
    return rc;
}
