/* table.c: cost tables and plan emitters for every strategy.
 *
 * A table holds, for one strategy and one (t, h, s), the optimal cost of
 * every length 0..t at every budget 0..max_m, and whatever the emitter needs
 * to unroll a plan at any of those budgets.  It is built once and serves
 * every budget (plan once, execute many).
 *
 * The dynamic programme (doc/design.md 3.2; how it departs from the
 * paper's recursions: 3.3): a subproblem is a segment of `len` steps
 * whose start state is either
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
 * One cell of it is dp_cell.c's (the plain scan; the cheap options both
 * builds share), the fast build of whole columns fast.c's, the compressed
 * budget axis axis.c's, the unrolling of a plan emit.c's; this file lays
 * the table out, chooses the build, and answers for the table object.
 */
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bptt.h"
#include "budget.h"
#include "dp_cell.h"
#include "costs.h"
#include "threads.h"

#define INF (INT64_MAX / 4)

/* ---- the closed form ----------------------------------------------------- */

static int64_t closed_form(size_t len, int64_t m, int64_t s)
{
    const int64_t l = (int64_t)len, two = 2 * l - 1 - m / s;
    return two > l ? two : l;
}

/* Tc(m) of the comment above, capped at cap. */
static int64_t closed_form_reach_s(int64_t m, int64_t s, int64_t cap)
{
    int64_t r = 1; /* the bottom of m's chain, m mod s < s */
    if (m < s)
        return r < cap ? r : cap;
    /* r rises by at least 1 a step: at most cap steps; mm never passes m */
    for (int64_t mm = m % s + s; r < cap; mm += s) {
        const int64_t F = mm / s + 1, a = 2 * F, b = F + 1 + r;
        r = a > b ? a : b;
        if (mm > m - s)
            break;
    }
    return r < cap ? r : cap;
}

/* The first budget from which both kinds follow the closed form at every
 * length up to t (INT64_MAX if none up to top). */
static int64_t closed_form_from(size_t t, int64_t s, int64_t top)
{
    const int64_t need = (int64_t)t;
    /* H column m reaches 1 + Tc(m - s); rising in m: bisect */
    if (top < s || 1 + closed_form_reach_s(top - s, s, need) < need)
        return INT64_MAX;
    int64_t lo = s, hi = top;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (1 + closed_form_reach_s(mid - s, s, need) >= need)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}


/* What a DP table over lengths 0..t and budgets up to max_m holds: the
 * stored width, the DP columns, the closed-form budget, the served range
 * and the number of start kinds (set in tb from its strategy's rules). */
static void dp_layout(bptt_table *tb)
{
    /* Beyond max(t h, (t-1) s + h) every state that can ever be useful
     * fits at once, so no budget above it changes any cost. */
    int64_t th, ts, sat;
    if (__builtin_mul_overflow((int64_t)tb->t, tb->h, &th))
        th = INT64_MAX;
    if (__builtin_mul_overflow((int64_t)(tb->t - 1), tb->s, &ts) ||
        __builtin_add_overflow(ts, tb->h, &ts))
        ts = INT64_MAX; /* beyond any budget: nothing saturates */
    sat = th > ts ? th : ts;
    tb->width = tb->max_m < sat ? tb->max_m : sat;
    tb->kinds = (tb->rules & RULE_PAPER) || !(tb->rules & RULE_INTERNAL)
                    ? 1
                    : 2;
    tb->fcol = INT64_MAX;
    tb->dpw = tb->width;
    tb->lo = 0;
    if (!tb->reference && (tb->rules & RULE_INTERNAL) &&
        !(tb->rules & RULE_PAPER)) {
        const int64_t f = closed_form_from(tb->t, tb->s, tb->width);
        if (f != INT64_MAX && f <= tb->width) { /* INT64_MAX: none */
            tb->fcol = f;
            tb->dpw = f - 1;
            if (tb->asked_lo >= f) { /* only closed-form budgets asked */
                tb->dpw = -1;
                tb->lo = f;
            }
        }
    }
    /* The budget axis: dense, or compressed where far fewer sums
     * a h + b s than budgets lie below dpw (s much above t h). */
    /* dpw + 1 columns (INT64_MAX: too many anyway, and no overflow) */
    tb->ncols = tb->dpw < INT64_MAX ? tb->dpw + 1 : INT64_MAX;
    tb->compressed = 0;
    if (tb->dpw >= 0) {
        const int64_t half = tb->dpw / 2 + (tb->dpw & 1); /* (dpw + 1) / 2 */
        const int64_t n = planner_count_sums(tb->t, tb->h, tb->s, tb->dpw, half);
        if (n <= half) {
            tb->compressed = 1;
            tb->ncols = n; /* at least the distinct sums */
        }
    }
}

/* One length of the plain (reference) build: its cells at every column,
 * taken 16 columns at a time from next. */
typedef struct {
    bptt_table *tb;
    size_t len;
    _Atomic int64_t *next;
} row_job;

static void row_cells(void *arg)
{
    const row_job *j = arg;
    const int64_t n = j->tb->ncols;
    for (int64_t a; (a = atomic_fetch_add(j->next, 16)) < n;)
        for (int64_t m = a; m < a + 16 && m < n; m++)
            for (int k = 0; k < j->tb->kinds; k++)
                planner_dp_cell(j->tb, k, j->len, m);
}

/* Bytes a DP build holds at its peak, every allocation counted with
 * malloc's slack (SIZE_MAX if more than a size_t): the stored columns,
 * the compressed axis, and the fast build's scratch while it runs. */
static size_t dp_bytes(const bptt_table *tb)
{
    if (tb->dpw < 0)
        return 0;
    const size_t T1 = tb->t + 1, M1 = (size_t)tb->ncols;
    const size_t per = (sizeof(int64_t) + sizeof(int32_t)) * (size_t)tb->kinds;
    if (M1 > SIZE_MAX / T1 / per / 2)
        return SIZE_MAX;
    size_t b = M1 * T1 * per + 4 * (size_t)tb->kinds * PLANNER_ALLOC_SLACK;
    if (tb->compressed) /* vals (as many as pairs), dep */
        b += M1 * 4 * sizeof(int64_t) + 2 * PLANNER_ALLOC_SLACK;
    if (!tb->reference) {
        const size_t f = planner_fast_scratch_bytes(tb);
        if (f == SIZE_MAX || b > SIZE_MAX - f)
            return SIZE_MAX;
        b += f;
    }
    return b;
}

static int dp_build(bptt_table *tb)
{
    if (tb->t > INT32_MAX)
        return BPTT_ETOOBIG;
    dp_layout(tb);
    if (tb->dpw < 0)
        return BPTT_OK; /* closed form only */

    const size_t T1 = tb->t + 1;
    const int kinds = tb->kinds;
    const size_t bytes = dp_bytes(tb);
    if (bytes == SIZE_MAX)
        return BPTT_ETOOBIG;
    if (bptt_memory_fits((double)bytes, 2, NULL) != BPTT_OK)
        return BPTT_ETOOBIG; /* more than half of physical memory */
    if (tb->compressed) {
        const int rc = planner_build_axis(tb);
        if (rc != BPTT_OK)
            return rc;
        tb->bytes += (size_t)tb->ncols * 3 * sizeof(int64_t);
    }
    const size_t cells = (size_t)tb->ncols * T1;
    for (int k = 0; k < kinds; k++) {
        tb->cost[k] = planner_malloc(cells * sizeof(int64_t));
        tb->choice[k] = planner_malloc(cells * sizeof(int32_t));
        if (!tb->cost[k] || !tb->choice[k])
            return BPTT_ENOMEM; /* bptt_table_free releases the rest */
    }
    tb->bytes += cells * (sizeof(int64_t) + sizeof(int32_t)) * (size_t)kinds;

    const int nt = planner_threads(tb->threads);
    if (!tb->reference)
        return planner_fast_build(tb, tb->ncols, nt);
    for (size_t len = 0; len <= tb->t; len++) {
        /* Cells of one length are independent across budgets: shared out
         * in blocks of 16 columns, on threads where the row is long */
        _Atomic int64_t next = 0;
        row_job job = {tb, len, &next};
        planner_run(len > 64 ? nt : 1, row_cells, &job);
    }
    return BPTT_OK;
}

static int64_t dp_cost(const bptt_table *tb, size_t len, int64_t m)
{
    if (len > tb->t || m < tb->lo || m > tb->max_m)
        return -1;
    if (m >= tb->fcol)
        return closed_form(len, m, tb->s);
    const int64_t c =
        at(tb, KIND_H, planner_col_of(tb, m < tb->dpw ? m : tb->dpw), len);
    return c >= INF ? -1 : c;
}

int64_t planner_cost_kind(const bptt_table *tb, int kind, size_t len,
                          int64_t m)
{
    if (kind == KIND_H)
        return dp_cost(tb, len, m);
    if (kind != KIND_S || tb->kinds < 2 || len > tb->t || m < tb->lo ||
        m > tb->max_m)
        return -1;
    if (m >= tb->fcol)
        return closed_form(len, m, tb->s);
    const int64_t c =
        at(tb, KIND_S, planner_col_of(tb, m < tb->dpw ? m : tb->dpw), len);
    return c >= INF ? -1 : c;
}

static int64_t dp_min_budget(size_t t, int64_t h, int64_t s, size_t k)
{
    (void)t, (void)s, (void)k;
    return h; /* h(0) alone: recompute from it before every backward */
}

/* ---- the strategy table -------------------------------------------------- */

/* The rule set of each DP strategy, keyed by its type object. */
#define DP_STRATEGY(var, nm, text, known)                                   \
    static int var##_build(bptt_table *tb);                                \
    const bptt_strategy var = {nm,      text,          var##_build,         \
                               dp_cost, planner_dp_emit, dp_min_budget,     \
                               known,   0}

/* HSM's cost is Griewank and Walther's closed form over the hidden states
 * the budget holds; one state (or none) means recomputing from h(0) for
 * every step, t (t + 1) / 2, without the slow loop. */
static int64_t hsm_known_cost(size_t t, int64_t h, int64_t s, int64_t m)
{
    (void)s;
    const int64_t n = (int64_t)t, states = m / h;
    if (states <= 1) {
        const __int128 c = (__int128)n * (n + 1) / 2;
        return c > INT64_MAX ? INT64_MAX : (int64_t)c;
    }
    const int64_t c = bptt_hsm_closed_cost(n, states);
    return c < 0 ? INT64_MAX : c;
}

DP_STRATEGY(bptt_strategy_hsm, "hsm",
            "BPTT-HSM: hidden states only (= binomial checkpointing)",
            hsm_known_cost);
DP_STRATEGY(bptt_strategy_ism, "ism",
            "BPTT-ISM: internal states only, optimal over all schedules",
            NULL);
DP_STRATEGY(bptt_strategy_msm, "msm",
            "BPTT-MSM: hidden and internal states, optimal over all schedules",
            NULL);
DP_STRATEGY(bptt_strategy_ism_paper, "ism-paper",
            "BPTT-ISM by the paper's literal recursion", NULL);
DP_STRATEGY(bptt_strategy_msm_paper, "msm-paper",
            "BPTT-MSM by the paper's literal recursion", NULL);

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

int64_t bptt_strategy_known_cost(const bptt_strategy *st, size_t t,
                                 int64_t h, int64_t s, int64_t m)
{
    if (!st || !st->known_cost || t < 1 || h < 1 || s < h || m < 0)
        return -1;
    return st->known_cost(t, h, s, m);
}

size_t bptt_strategy_names_with(char *buf, size_t cap, unsigned flag,
                                const char *last)
{
    const char *names[16];
    size_t n = 0;
    for (size_t i = 0; bptt_strategies[i] && n < 16; i++)
        if (bptt_strategies[i]->flags & flag)
            names[n++] = bptt_strategies[i]->name;
    return bptt_names_text(buf, cap, names, n, last);
}

const bptt_strategy *const bptt_strategies[] = {
    &bptt_strategy_full,      &bptt_strategy_chen, &bptt_strategy_hsm,
    &bptt_strategy_ism,       &bptt_strategy_msm,  &bptt_strategy_ism_paper,
    &bptt_strategy_msm_paper, NULL};

const bptt_strategy *bptt_strategy_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; bptt_strategies[i]; i++)
        if (strcmp(bptt_strategies[i]->name, name) == 0)
            return bptt_strategies[i];
    return NULL;
}

size_t bptt_names_text(char *buf, size_t cap, const char *const *names,
                       size_t n, const char *last)
{
    size_t len = 0;
    if (!buf)
        cap = 0; /* only the length */
    if (cap)
        buf[0] = '\0';
    if (!names)
        n = 0;
    if (!last)
        last = ", ";
    for (size_t i = 0; i < n; i++) {
        if (!names[i])
            continue;
        const char *sep = i == 0 ? "" : i + 1 == n ? last : ", ";
        const size_t at = len < cap ? len : cap;
        const int k = snprintf(cap ? buf + at : NULL, cap - at, "%s%s", sep,
                               names[i]);
        len += k > 0 ? (size_t)k : 0;
    }
    return len;
}

size_t bptt_strategy_names(char *buf, size_t cap, const char *last)
{
    const char *names[16];
    size_t n = 0;
    while (bptt_strategies[n] && n < 16) {
        names[n] = bptt_strategies[n]->name;
        n++;
    }
    return bptt_names_text(buf, cap, names, n, last);
}

/* ---- the table object ---------------------------------------------------- */

int bptt_table_alloc(bptt_table **out, const bptt_strategy *strategy,
                     size_t t, int64_t h, int64_t s, int64_t max_m,
                     const bptt_table_options *opts)
{
    if (!out)
        return BPTT_EINVAL;
    *out = NULL;
    if (!strategy || !strategy->build || t < 1 || t > UINT32_MAX - 1 || h < 1 || s < h ||
        max_m < 0)
        return BPTT_EINVAL;
    bptt_table *tb = planner_calloc(1, sizeof *tb);
    if (!tb)
        return BPTT_ENOMEM;
    tb->strategy = strategy;
    tb->t = t;
    tb->h = h;
    tb->s = s;
    tb->max_m = max_m;
    tb->bytes = sizeof *tb;
    tb->fcol = INT64_MAX;
    if (opts) {
        tb->chen_k = opts->chen_segment;
        tb->threads = opts->threads;
        tb->reference = opts->reference;
        tb->asked_lo = opts->min_budget;
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
        planner_free(tb->cost[k]);
        planner_free(tb->choice[k]);
    }
    planner_free(tb->vals);
    planner_free(tb->dep);
    planner_free(tb);
}

size_t bptt_table_length(const bptt_table *tb) { return tb ? tb->t : 0; }
int64_t bptt_table_max_budget(const bptt_table *tb)
{
    return tb ? tb->max_m : -1;
}
const bptt_strategy *bptt_table_strategy(const bptt_table *tb)
{
    return tb ? tb->strategy : NULL;
}
size_t bptt_table_bytes(const bptt_table *tb) { return tb ? tb->bytes : 0; }
int64_t bptt_table_min_served(const bptt_table *tb) { return tb ? tb->lo : -1; }
int64_t bptt_table_closed_form_from(const bptt_table *tb)
{
    return tb ? tb->fcol : INT64_MAX;
}

size_t bptt_table_bytes_needed(const bptt_strategy *strategy, size_t t,
                                int64_t h, int64_t s, int64_t max_m,
                                const bptt_table_options *opts)
{
    bptt_table tb = {.strategy = strategy, .t = t, .h = h, .s = s,
                     .max_m = max_m};
    if (!strategy || t < 1 || t > INT32_MAX || h < 1 || s < h || max_m < 0)
        return 0;
    if (opts) {
        tb.reference = opts->reference;
        tb.asked_lo = opts->min_budget;
    }
    static const struct {
        const bptt_strategy *st;
        unsigned rules;
    } dp[] = {{&bptt_strategy_hsm, RULE_HIDDEN},
              {&bptt_strategy_ism, RULE_INTERNAL},
              {&bptt_strategy_msm, RULE_HIDDEN | RULE_INTERNAL},
              {&bptt_strategy_ism_paper, RULE_INTERNAL | RULE_PAPER},
              {&bptt_strategy_msm_paper,
               RULE_HIDDEN | RULE_INTERNAL | RULE_PAPER}};
    for (size_t i = 0; i < sizeof dp / sizeof dp[0]; i++)
        if (dp[i].st == strategy) {
            tb.rules = dp[i].rules;
            dp_layout(&tb);
            const size_t b = dp_bytes(&tb);
            return b == SIZE_MAX ? SIZE_MAX
                                 : b + sizeof tb + PLANNER_ALLOC_SLACK;
        }
    return sizeof tb + PLANNER_ALLOC_SLACK; /* full, chen: the object */
}

int64_t bptt_table_cost_at(const bptt_table *tb, size_t t, int64_t m)
{
    if (!tb || t > tb->t || m < tb->lo || m > tb->max_m)
        return -1;
    return tb->strategy->cost(tb, t, m);
}

int64_t bptt_table_cost(const bptt_table *tb, int64_t m)
{
    if (!tb || m < tb->lo || m > tb->max_m)
        return -1;
    return tb->strategy->cost(tb, tb->t, m);
}

int64_t bptt_table_min_budget(const bptt_table *tb)
{
    if (!tb)
        return -1;
    return tb->strategy->min_budget(tb->t, tb->h, tb->s, tb->chen_k);
}

int64_t bptt_strategy_min_budget(const bptt_strategy *st, size_t t,
                                 int64_t h, int64_t s,
                                 const bptt_table_options *opts)
{
    if (!st || !st->min_budget)
        return -1;
    return st->min_budget(t, h, s, opts ? opts->chen_segment : 0);
}

int64_t bptt_table_tight_budget(const bptt_table *tb, int64_t m)
{
    const int64_t c = bptt_table_cost(tb, m);
    if (c < 0)
        return -1;
    /* costs never rise with the budget: bisect for the first budget
     * that costs c */
    int64_t lo = tb->lo, hi = m;
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
    if (min_feasible)
        *min_feasible = -1;
    if (!out || !tb)
        return BPTT_EINVAL;
    *out = NULL;
    if (min_feasible)
        *min_feasible = bptt_table_min_budget(tb);
    if (m < tb->lo || m > tb->max_m)
        return BPTT_EINVAL;
    const int64_t mt = bptt_table_tight_budget(tb, m);
    if (mt < 0)
        return BPTT_EINFEASIBLE;
    /* the actions counted first, so that the array is made once, of
     * exactly that size (no doubling: what is held is what is counted) */
    const int64_t n = bptt_table_plan_actions(tb, m);
    if (n < 0)
        return BPTT_ENOMEM; /* the count's stack could not grow */
    bptt_plan *plan;
    int rc = bptt_plan_alloc(&plan, tb->t, tb->h, tb->s, m);
    if (rc != BPTT_OK)
        return rc;
    if ((uint64_t)n > SIZE_MAX / sizeof(bptt_action) ||
        (n > 0 && !(plan->actions = planner_malloc((size_t)n *
                                                  sizeof(bptt_action))))) {
        bptt_plan_free(plan);
        return BPTT_ENOMEM;
    }
    plan->capacity = (size_t)n;
    rc = tb->strategy->emit(tb, mt, plan);
    if (rc != BPTT_OK) {
        bptt_plan_free(plan);
        return rc;
    }
    *out = plan;
    return BPTT_OK;
}

int64_t bptt_table_plan_actions(const bptt_table *tb, int64_t m)
{
    if (!tb || m < tb->lo || m > tb->max_m)
        return -1;
    const int64_t mt = bptt_table_tight_budget(tb, m);
    if (mt < 0)
        return -1;
    /* a counting plan (plan.c): pushes only count */
    bptt_plan counter = {.length = tb->t, .hidden_units = tb->h,
                         .internal_units = tb->s, .budget = m,
                         .capacity = SIZE_MAX};
    if (tb->strategy->emit(tb, mt, &counter) != BPTT_OK)
        return -1;
    return (int64_t)counter.n_actions;
}
