/* table.c: cost tables and plan emitters for every strategy.
 *
 * A table holds, for one strategy and one (t, h, s), the optimal cost of
 * every length 0..t at every budget 0..max_m, and whatever the emitter needs
 * to unroll a plan at any of those budgets.  It is built once and serves
 * every budget (plan once, execute many).
 *
 * The dynamic programme (DESIGN.md 2, with the optimality fix explained in
 * README "Design"): a subproblem is a segment of `len` steps whose start
 * state is either
 *   H  a stored hidden state owned by the subproblem: it counts h units of
 *      the subproblem's budget m and is freed once no longer needed, or
 *   S  the hidden part of an internal state a parent keeps: free here,
 *      and kept after the subproblem ends.
 * The first state stored beyond the start splits the segment at y:
 *   H, hidden y:     y + H(len-y, m-h) + H(y, m)
 *   H, internal y=1: 1 + S(len-1, m-s)              (start freed at once)
 *   H, internal y:   y + S(len-y, m-h-s) + H(y-1, m)
 *   S, hidden y:     y + H(len-y, m)   + S(y, m)
 *   S, internal y:   y + S(len-y, m-s) + S(y-1, m)
 *   any, y = len:    len + X(len-1, m)             (nothing stored: the
 *                                                   working s(len) is used)
 * The paper's literal recursions (the -paper strategies) use one kind P,
 * which keeps its start to the end and charges an internal split's right
 * part for a hidden start it does not store:
 *   P, hidden y:     y + P(len-y, m-h) + P(y, m)
 *   P, internal y:   y + P(len-y, m-s) + P(y-1, m)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "table_impl.h"

#define INF (INT64_MAX / 4)

/* ---- closed forms ------------------------------------------------------ */

int64_t bptt_hsm_closed_cost(int64_t t, int64_t m)
{
    if (t < 0 || m < 1)
        return -1;
    if (t == 0)
        return 0;
    /* b = binom(m + r, m), grown in r until b >= t; b < t * (m + 1)
     * throughout, so __int128 holds every product. */
    __int128 b = 1;
    int64_t r = 0;
    while (b < t) {
        r++;
        b = b * (m + r) / r;
    }
    const __int128 b1 = b * r / (m + 1); /* binom(m + r, m + 1) */
    const __int128 c = (__int128)(r + 1) * t - b1;
    return c > INT64_MAX ? -1 : (int64_t)c;
}

size_t bptt_chen_default_segment(size_t t)
{
    size_t k = (size_t)ceil(sqrt((double)t));
    while (k > 1 && (k - 1) * (k - 1) >= t)
        k--;
    while (k * k < t)
        k++;
    return k < 1 ? 1 : k;
}

int64_t bptt_chen_cost(size_t t, size_t k)
{
    (void)k;
    return 2 * (int64_t)t; /* first sweep, then every segment once more */
}

int64_t bptt_chen_peak(size_t t, size_t k, int64_t h, int64_t s)
{
    if (t == 0)
        return h;
    if (k < 1)
        k = 1;
    if (k > t)
        k = t;
    const size_t n = (t + k - 1) / k;    /* segments */
    const size_t last = t - (n - 1) * k; /* length of the last segment */
    /* While segment j (0-based) runs, starts 0..j and its len_j - 1
     * internal states are stored. */
    int64_t peak = (int64_t)n * h + (int64_t)(last - 1) * s;
    if (n >= 2) {
        const int64_t other = (int64_t)(n - 1) * h + (int64_t)(k - 1) * s;
        if (other > peak)
            peak = other;
    }
    return peak;
}

int64_t bptt_full_peak(size_t t, int64_t h, int64_t s)
{
    const int64_t all = (int64_t)(t - (t > 0)) * s; /* s(1..t-1) */
    return all > h ? all : h;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

int bptt_units_from_bytes(bptt_units *u, int64_t hidden_bytes,
                          int64_t internal_bytes)
{
    if (hidden_bytes < 1 || internal_bytes < hidden_bytes)
        return BPTT_EINVAL;
    u->quantum = gcd64(hidden_bytes, internal_bytes);
    u->hidden_units = hidden_bytes / u->quantum;
    u->internal_units = internal_bytes / u->quantum;
    return BPTT_OK;
}

/* ---- the DP ------------------------------------------------------------ */

static inline int64_t at(const bptt_table *tb, int kind, int64_t m,
                         size_t len)
{
    if (m < 0)
        return INF;
    return tb->cost[kind][(size_t)m * (tb->t + 1) + len];
}

/* One cell: kind at (len, m).  Writes cost and choice. */
static void dp_cell(bptt_table *tb, int kind, size_t len, int64_t m)
{
    const unsigned rules = tb->rules;
    const int paper = (rules & RULE_PAPER) != 0;
    const int64_t h = tb->h, s = tb->s;
    const size_t T1 = tb->t + 1;
    const size_t idx = (size_t)m * T1 + len;
    int64_t best = INF;
    int32_t choice = 0;

    if (len == 0) {
        tb->cost[kind][idx] = (kind == KIND_H && m < h) ? INF : 0;
        tb->choice[kind][idx] = 0;
        return;
    }
    if (kind == KIND_H && m < h) {
        tb->cost[kind][idx] = INF;
        tb->choice[kind][idx] = 0;
        return;
    }
    const int64_t L = (int64_t)len;
    const int64_t lb = (rules & RULE_INTERNAL) ? L : 2 * L - 1;

#define TRY(val, ch)                                                       \
    do {                                                                   \
        const int64_t v_ = (val);                                          \
        if (v_ < best) {                                                   \
            best = v_;                                                     \
            choice = (ch);                                                 \
        }                                                                  \
    } while (0)

    /* Cheap options first: at generous budgets they reach the bound. */
    if ((rules & RULE_INTERNAL) && len >= 2) {
        /* y = 1: the paper keeps its start (left part P(0, m) = 0);
         * ours frees an H start, so H and S both give S(len-1, m-s). */
        TRY(1 + at(tb, paper ? KIND_H : KIND_S, m - s, len - 1), 1);
    }
    if ((rules & RULE_HIDDEN) && len >= 2 && best > lb) {
        const int64_t mr = (kind == KIND_S) ? m : m - h;
        TRY(1 + at(tb, KIND_H, mr, len - 1) + at(tb, kind, m, 1), -1);
    }
    if (best > lb)
        TRY(L + at(tb, kind, m, len - 1), (int32_t)len);

    if (best > lb && len >= 3 && (rules & RULE_INTERNAL)) {
        /* internal y = 2 .. len-1 */
        int rk;
        int64_t mr;
        if (paper) {
            rk = KIND_H;
            mr = m - s;
        } else if (kind == KIND_H) {
            rk = KIND_S;
            mr = m - h - s;
        } else {
            rk = KIND_S;
            mr = m - s;
        }
        if (mr >= 0) {
            const int64_t *right = tb->cost[rk] + (size_t)mr * T1;
            const int64_t *left = tb->cost[kind] + (size_t)m * T1;
            for (size_t y = 2; y < len; y++) {
                const int64_t v = (int64_t)y + right[len - y] + left[y - 1];
                if (v < best) {
                    best = v;
                    choice = (int32_t)y;
                }
            }
        }
    }
    if (best > lb && len >= 3 && (rules & RULE_HIDDEN)) {
        /* hidden y = 2 .. len-1 */
        const int64_t mr = (kind == KIND_S) ? m : m - h;
        if (mr >= 0) {
            const int64_t *right = tb->cost[KIND_H] + (size_t)mr * T1;
            const int64_t *left = tb->cost[kind] + (size_t)m * T1;
            for (size_t y = 2; y < len; y++) {
                const int64_t v = (int64_t)y + right[len - y] + left[y];
                if (v < best) {
                    best = v;
                    choice = -(int32_t)y;
                }
            }
        }
    }
#undef TRY
    if (best >= INF) {
        best = INF;
        choice = 0;
    }
    tb->cost[kind][idx] = best;
    tb->choice[kind][idx] = choice;
}

static int dp_build(bptt_table *tb)
{
    const size_t T1 = tb->t + 1;
    /* Beyond max(t h, (t-1) s + h) every state that can ever be useful
     * fits at once, so no budget above it changes any cost. */
    const int64_t sat = (int64_t)tb->t * tb->h > (int64_t)(tb->t - 1) * tb->s + tb->h
                            ? (int64_t)tb->t * tb->h
                            : (int64_t)(tb->t - 1) * tb->s + tb->h;
    tb->width = tb->max_m < sat ? tb->max_m : sat;
    const size_t M1 = (size_t)tb->width + 1;
    const int kinds = (tb->rules & RULE_PAPER) || !(tb->rules & RULE_INTERNAL)
                          ? 1
                          : 2;
    if (tb->t > INT32_MAX)
        return BPTT_ETOOBIG;
    if (M1 > SIZE_MAX / T1 / (sizeof(int64_t) + sizeof(int32_t)) / 2)
        return BPTT_ETOOBIG;
    const size_t cells = M1 * T1;
    const size_t bytes = cells * (sizeof(int64_t) + sizeof(int32_t)) *
                         (size_t)kinds;
    long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psize > 0 &&
        bytes / 2 > (size_t)pages / 2 * (size_t)psize / 2)
        return BPTT_ETOOBIG; /* more than half of physical memory */
    for (int k = 0; k < kinds; k++) {
        tb->cost[k] = malloc(cells * sizeof(int64_t));
        tb->choice[k] = malloc(cells * sizeof(int32_t));
        if (!tb->cost[k] || !tb->choice[k])
            return BPTT_ENOMEM; /* bptt_table_free releases the rest */
    }
    tb->kinds = kinds;
    tb->bytes += bytes;

    const long mmax = (long)tb->width;
    int nt = tb->threads;
#ifdef _OPENMP
    if (nt <= 0)
        nt = omp_get_max_threads();
#else
    nt = 1;
#endif
    (void)nt;
    for (size_t len = 0; len <= tb->t; len++) {
        /* Cells of one length are independent across budgets. */
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt) if (len > 64)
        for (long m = 0; m <= mmax; m++)
            for (int k = 0; k < kinds; k++)
                dp_cell(tb, k, len, m);
    }
    return BPTT_OK;
}

static int64_t dp_cost(const bptt_table *tb, size_t len, int64_t m)
{
    if (len > tb->t || m < 0 || m > tb->max_m)
        return -1;
    const int64_t c = at(tb, KIND_H, m < tb->width ? m : tb->width, len);
    return c >= INF ? -1 : c;
}

static int64_t dp_min_budget(size_t t, int64_t h, int64_t s, size_t k)
{
    (void)t, (void)s, (void)k;
    return h; /* h(0) alone: recompute from it before every backward */
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
        task *v = realloc(st->v, cap * sizeof *v);
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

static int dp_emit(const bptt_table *tb, int64_t m, bptt_plan *plan)
{
    const int paper = (tb->rules & RULE_PAPER) != 0;
    const int64_t h = tb->h, s = tb->s;
    const size_t T1 = tb->t + 1;
    task_stack st = {0};
    emitter e = {plan, 0};
    int rc = push_solve(&st, KIND_H, 0, 1, 0, tb->t, m);

    while (rc == BPTT_OK && st.n > 0) {
        const task tk = st.v[--st.n];
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
        const int32_t c = tb->choice[tk.kind][(size_t)tk.m * T1 + len];
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
            const int64_t mr = (tk.kind == KIND_S) ? tk.m : tk.m - h;
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
                mr = tk.m - s;
            } else if (tk.kind == KIND_H && y == 1) {
                /* the start is needed by nothing after this: free it */
                rc = emit(&e, BPTT_FREE_HIDDEN, a);
                mr = tk.m - s;
                left_needed = 0;
            } else if (tk.kind == KIND_H) {
                mr = tk.m - h - s;
            } else {
                mr = tk.m - s;
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
    free(st.v);
    return rc;
}

/* ---- full BPTT ----------------------------------------------------------- */

static int64_t full_cost(const bptt_table *tb, size_t len, int64_t m)
{
    return m >= bptt_full_peak(len, tb->h, tb->s) ? (int64_t)len : -1;
}

static int64_t full_min_budget(size_t t, int64_t h, int64_t s, size_t k)
{
    (void)k;
    return bptt_full_peak(t, h, s);
}

static int full_emit(const bptt_table *tb, int64_t m, bptt_plan *plan)
{
    (void)m;
    const size_t t = tb->t;
    int rc = bptt_plan_push(plan, BPTT_ADVANCE, 1);
    if (rc == BPTT_OK)
        rc = bptt_plan_push(plan, BPTT_FREE_HIDDEN, 0);
    for (size_t i = 1; i <= t && rc == BPTT_OK; i++) {
        if (i > 1)
            rc = bptt_plan_push(plan, BPTT_ADVANCE, i);
        if (rc == BPTT_OK && i < t)
            rc = bptt_plan_push(plan, BPTT_SAVE_INTERNAL, i);
    }
    if (rc == BPTT_OK)
        rc = bptt_plan_push(plan, BPTT_BACKWARD, t);
    for (size_t i = t - 1; i >= 1 && rc == BPTT_OK; i--) {
        rc = bptt_plan_push(plan, BPTT_BACKWARD, i);
        if (rc == BPTT_OK)
            rc = bptt_plan_push(plan, BPTT_FREE_INTERNAL, i);
    }
    return rc;
}

/* ---- Chen's sqrt(t) ------------------------------------------------------ */

/* Chen's segment for length len: k (0: the default), at most len. */
static size_t chen_k(size_t k, size_t len)
{
    if (!k)
        k = bptt_chen_default_segment(len);
    return k > len ? len : k;
}

static int64_t chen_cost(const bptt_table *tb, size_t len, int64_t m)
{
    if (len == 0)
        return 0;
    const size_t k = chen_k(tb->chen_k, len);
    return m >= bptt_chen_peak(len, k, tb->h, tb->s) ? bptt_chen_cost(len, k)
                                                     : -1;
}

static int64_t chen_min_budget(size_t t, int64_t h, int64_t s, size_t k)
{
    return bptt_chen_peak(t, chen_k(k, t), h, s);
}

static int chen_emit(const bptt_table *tb, int64_t m, bptt_plan *plan)
{
    (void)m;
    const size_t t = tb->t, k = chen_k(tb->chen_k, t);
    const size_t n = (t + k - 1) / k;
    int rc = BPTT_OK;
    /* first sweep: keep the hidden state at every segment start */
    for (size_t i = 1; i <= t && rc == BPTT_OK; i++) {
        rc = bptt_plan_push(plan, BPTT_ADVANCE, i);
        if (rc == BPTT_OK && i % k == 0 && i / k < n)
            rc = bptt_plan_push(plan, BPTT_SAVE_HIDDEN, i);
    }
    /* last segment first: recompute keeping internal states, go back */
    for (size_t j = n; j-- > 0 && rc == BPTT_OK;) {
        const size_t a = j * k, b = (j + 1) * k < t ? (j + 1) * k : t;
        rc = bptt_plan_push(plan, BPTT_RESTORE_HIDDEN, a);
        for (size_t i = a + 1; i <= b && rc == BPTT_OK; i++) {
            rc = bptt_plan_push(plan, BPTT_ADVANCE, i);
            if (rc == BPTT_OK && i < b)
                rc = bptt_plan_push(plan, BPTT_SAVE_INTERNAL, i);
        }
        if (rc == BPTT_OK)
            rc = bptt_plan_push(plan, BPTT_BACKWARD, b);
        for (size_t i = b - 1; i > a && rc == BPTT_OK; i--) {
            rc = bptt_plan_push(plan, BPTT_BACKWARD, i);
            if (rc == BPTT_OK)
                rc = bptt_plan_push(plan, BPTT_FREE_INTERNAL, i);
        }
        if (rc == BPTT_OK)
            rc = bptt_plan_push(plan, BPTT_FREE_HIDDEN, a);
    }
    return rc;
}

static int nothing_to_build(bptt_table *tb)
{
    (void)tb;
    return BPTT_OK;
}

/* ---- the strategy table -------------------------------------------------- */

/* The rule set of each DP strategy, keyed by its type object. */
#define DP_STRATEGY(var, nm, text)                                          \
    static int var##_build(bptt_table *tb);                                \
    const bptt_strategy var = {nm, text, var##_build, dp_cost, dp_emit,     \
                               dp_min_budget}

DP_STRATEGY(bptt_strategy_hsm, "hsm",
            "BPTT-HSM: hidden states only (= binomial checkpointing)");
DP_STRATEGY(bptt_strategy_ism, "ism",
            "BPTT-ISM: internal states only, optimal over all schedules");
DP_STRATEGY(bptt_strategy_msm, "msm",
            "BPTT-MSM: hidden and internal states, optimal over all schedules");
DP_STRATEGY(bptt_strategy_ism_paper, "ism-paper",
            "BPTT-ISM by the paper's literal recursion");
DP_STRATEGY(bptt_strategy_msm_paper, "msm-paper",
            "BPTT-MSM by the paper's literal recursion");

static int bptt_strategy_hsm_build(bptt_table *tb)
{
    tb->rules = RULE_HIDDEN;
    return dp_build(tb);
}
static int bptt_strategy_ism_build(bptt_table *tb)
{
    tb->rules = RULE_INTERNAL;
    return dp_build(tb);
}
static int bptt_strategy_msm_build(bptt_table *tb)
{
    tb->rules = RULE_HIDDEN | RULE_INTERNAL;
    return dp_build(tb);
}
static int bptt_strategy_ism_paper_build(bptt_table *tb)
{
    tb->rules = RULE_INTERNAL | RULE_PAPER;
    return dp_build(tb);
}
static int bptt_strategy_msm_paper_build(bptt_table *tb)
{
    tb->rules = RULE_HIDDEN | RULE_INTERNAL | RULE_PAPER;
    return dp_build(tb);
}

const bptt_strategy bptt_strategy_full = {
    "full", "full BPTT: every internal state kept", nothing_to_build,
    full_cost, full_emit, full_min_budget};
const bptt_strategy bptt_strategy_chen = {
    "chen", "Chen's sqrt(t): hidden state at each segment start",
    nothing_to_build, chen_cost, chen_emit, chen_min_budget};

const bptt_strategy *const bptt_strategies[] = {
    &bptt_strategy_full,      &bptt_strategy_chen, &bptt_strategy_hsm,
    &bptt_strategy_ism,       &bptt_strategy_msm,  &bptt_strategy_ism_paper,
    &bptt_strategy_msm_paper, NULL};

const bptt_strategy *bptt_strategy_find(const char *name)
{
    for (size_t i = 0; bptt_strategies[i]; i++)
        if (strcmp(bptt_strategies[i]->name, name) == 0)
            return bptt_strategies[i];
    return NULL;
}

/* ---- the table object ---------------------------------------------------- */

int bptt_table_alloc(bptt_table **out, const bptt_strategy *strategy,
                     size_t t, int64_t h, int64_t s, int64_t max_m,
                     const bptt_table_options *opts)
{
    *out = NULL;
    if (!strategy || t < 1 || t > UINT32_MAX - 1 || h < 1 || s < h ||
        max_m < 0)
        return BPTT_EINVAL;
    bptt_table *tb = calloc(1, sizeof *tb);
    if (!tb)
        return BPTT_ENOMEM;
    tb->strategy = strategy;
    tb->t = t;
    tb->h = h;
    tb->s = s;
    tb->max_m = max_m;
    tb->bytes = sizeof *tb;
    if (opts) {
        tb->chen_k = opts->chen_segment;
        tb->threads = opts->threads;
    }
    int rc = strategy->build(tb);
    if (rc != BPTT_OK) {
        bptt_table_free(tb);
        return rc;
    }
    *out = tb;
    return BPTT_OK;
}

void bptt_table_free(bptt_table *tb)
{
    if (!tb)
        return;
    for (int k = 0; k < 2; k++) {
        free(tb->cost[k]);
        free(tb->choice[k]);
    }
    free(tb);
}

size_t bptt_table_length(const bptt_table *tb) { return tb->t; }
int64_t bptt_table_max_budget(const bptt_table *tb) { return tb->max_m; }
const bptt_strategy *bptt_table_strategy(const bptt_table *tb)
{
    return tb->strategy;
}
size_t bptt_table_bytes(const bptt_table *tb) { return tb->bytes; }

int64_t bptt_table_cost(const bptt_table *tb, int64_t m)
{
    if (m < 0 || m > tb->max_m)
        return -1;
    return tb->strategy->cost(tb, tb->t, m);
}

int64_t bptt_table_min_budget(const bptt_table *tb)
{
    return tb->strategy->min_budget(tb->t, tb->h, tb->s, tb->chen_k);
}

int64_t bptt_strategy_min_budget(const bptt_strategy *st, size_t t,
                                 int64_t h, int64_t s,
                                 const bptt_table_options *opts)
{
    return st->min_budget(t, h, s, opts ? opts->chen_segment : 0);
}

int64_t bptt_table_tight_budget(const bptt_table *tb, int64_t m)
{
    const int64_t c = bptt_table_cost(tb, m);
    if (c < 0)
        return -1;
    /* costs never rise with the budget: bisect for the first budget
     * that costs c */
    int64_t lo = 0, hi = m;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (bptt_table_cost(tb, mid) == c)
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi;
}

int bptt_table_plan(const bptt_table *tb, int64_t m, bptt_plan **out,
                    int64_t *min_feasible)
{
    *out = NULL;
    if (min_feasible)
        *min_feasible = bptt_table_min_budget(tb);
    if (m < 0 || m > tb->max_m)
        return BPTT_EINVAL;
    const int64_t mt = bptt_table_tight_budget(tb, m);
    if (mt < 0)
        return BPTT_EINFEASIBLE;
    bptt_plan *plan;
    int rc = bptt_plan_alloc(&plan, tb->t, tb->h, tb->s, m);
    if (rc != BPTT_OK)
        return rc;
    rc = tb->strategy->emit(tb, mt, plan);
    if (rc != BPTT_OK) {
        bptt_plan_free(plan);
        return rc;
    }
    *out = plan;
    return BPTT_OK;
}
