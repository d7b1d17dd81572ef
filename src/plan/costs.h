/* costs.h: the cost table object, shared by the files that build and
 * read tables (table.c, dp_cell.c, fast.c, fixed.c; tests that want to
 * look inside).  Not part of the public interface. */
#ifndef BPTT_PLAN_COSTS_H
#define BPTT_PLAN_COSTS_H

#include "alloc.h"
#include "bptt.h"

enum { KIND_H = 0, KIND_S = 1 };
enum { RULE_HIDDEN = 1, RULE_INTERNAL = 2, RULE_PAPER = 4 };

struct bptt_table {
    const bptt_strategy *strategy;
    size_t t;       /* longest length served */
    int64_t h, s;   /* units of a hidden and an internal state */
    int64_t max_m;  /* largest budget served */
    int64_t width;  /* largest budget stored: beyond it nothing changes */
    size_t chen_k;  /* Chen's segment (0: default per length) */
    int threads;    /* OpenMP threads for building (0: default) */
    size_t bytes;   /* memory held */
    /* DP strategies: */
    unsigned rules;    /* RULE_* */
    int kinds;         /* 1 (H or P only) or 2 (H and S) */
    int64_t *cost[2];  /* [kind] (width+1, t+1): forward ops, INF if none */
    int32_t *choice[2];/* [kind] (width+1, t+1): split y (>0 internal,
                          <0 hidden, 0 none; y = len: nothing stored) */
    int reference;     /* plain scan, no closed form */
    int64_t dpw;       /* DP columns stored: budgets 0..dpw (-1: none) */
    int64_t fcol;      /* budgets >= fcol: closed form (INT64_MAX: none) */
    int64_t lo;        /* smallest budget served */
    int64_t asked_lo;  /* the caller's smallest budget (options) */
    /* The stored columns: ncols of them.  Dense (vals NULL): column c is
     * budget c, ncols = dpw + 1.  Compressed (doc/design.md 4.6): column c
     * is budget vals[c], the rising sums a h + b s (a + b <= t + 1) up to
     * dpw, and dep[3 c + DEP_*] the column of the largest such sum <= that
     * budget less h, s or h + s (-1: none). */
    int64_t ncols;
    int compressed;
    int64_t *vals;
    int64_t *dep;
};

enum { DEP_H = 0, DEP_S = 1, DEP_HS = 2 };

#ifndef INF
#define INF (INT64_MAX / 4)
#endif

/* m - a - b for a budget m >= 0 and units a, b >= 0, without overflow:
 * -1 whenever the difference is negative. */
static inline int64_t budget_minus(int64_t m, int64_t a, int64_t b)
{
    return (m < a || m - a < b) ? -1 : m - a - b;
}

/* The budget of stored column c. */
static inline int64_t col_budget(const bptt_table *tb, int64_t c)
{
    return tb->vals ? tb->vals[c] : c;
}

/* The column holding column c's budget less h (DEP_H), s (DEP_S) or
 * h + s (DEP_HS): -1 when that is negative. */
static inline int64_t col_minus(const bptt_table *tb, int64_t c, int which)
{
    if (c < 0)
        return -1;
    if (tb->vals)
        return tb->dep[3 * (size_t)c + (size_t)which];
    return budget_minus(c, which == DEP_S ? tb->s : tb->h,
                        which == DEP_HS ? tb->s : 0);
}

/* The column that answers budget m (0 <= m <= dpw): m itself, or on a
 * compressed axis the largest stored budget <= m (axis.c). */
int64_t planner_col_of(const bptt_table *tb, int64_t m);
/* The largest index i < n with v[i] <= x (v rising, v[0] <= x; axis.c). */
int64_t planner_floor_index(const int64_t *v, int64_t n, int64_t x);

/* Cost of cell (kind, len) at column m (INF below 0). */
static inline int64_t at(const bptt_table *tb, int kind, int64_t m,
                         size_t len)
{
    if (m < 0)
        return INF;
    return tb->cost[kind][(size_t)m * (tb->t + 1) + len];
}

/* How many pairs (a, b), a + b <= t + 1, have a h + b s <= top, counting
 * equal sums once per pair; stops counting above stop (axis.c). */
int64_t planner_count_sums(size_t t, int64_t h, int64_t s, int64_t top,
                           int64_t stop);
/* The compressed axis of tb's layout: vals, dep and ncols (axis.c). */
int planner_build_axis(bptt_table *tb);
/* The plan of tb at budget m (a stored or closed-form column) onto plan
 * (emit.c). */
int planner_dp_emit(const bptt_table *tb, int64_t m, bptt_plan *plan);
/* binom(n, k), or cap when it is at least cap (cap <= INT64_MAX,
 * n < 2^64), in bounded time (closed.c). */
__int128 planner_binom_capped(__int128 n, __int128 k, __int128 cap);

/* Cost of a cell of a DP table of two kinds: kind KIND_H (the start
 * counted in m) or KIND_S (the start an internal state held outside m),
 * len steps, budget m; -1 when infeasible or not served. */
int64_t planner_cost_kind(const bptt_table *tb, int kind, size_t len,
                          int64_t m);

/* The same for the segment of len0 steps from a stored state at a0
 * (steps a0 + 1 .. a0 + len0, len0 <= the table's length) at budget m:
 * kind KIND_H, h(a0) counted in m and freed when last used; KIND_S,
 * s(a0) held outside m and kept.  running: the running state is h(a0)
 * already (else the plan restores it first). */
int planner_dp_emit_at(const bptt_table *tb, int kind, size_t a0,
                       size_t len0, int64_t m, int running, bptt_plan *plan);

/* The fast build of the first ncols columns on nt threads (fast.c). */
int planner_fast_build(bptt_table *tb, int64_t ncols, int nt);
/* Bytes the fast build of tb's dp_layout holds besides the table, at
 * most, with malloc's slack per allocation (SIZE_MAX: too many). */
size_t planner_fast_scratch_bytes(const bptt_table *tb);
/* The build of a strategy with no table (full, chen: fixed.c). */
int planner_nothing_to_build(bptt_table *tb);
extern const bptt_strategy bptt_strategy_full, bptt_strategy_chen;

#endif
