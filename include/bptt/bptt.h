/* bptt.h: public interface of the bptt-msm library.
 *
 * Promises: exact arithmetic for the checkpointing cost model of
 * doc/design.md 1, optimal plans for every strategy in the strategy table,
 * and a symbolic validator that checks any plan without running a network.
 * Every function returns a status code (enum bptt_status) or a value whose
 * meaning is documented beside it; nothing here prints or exits.
 * Sizes meet in checked arithmetic: a result that does not fit an int64_t
 * is BPTT_ETOOBIG (or -1 where a value is returned), never a wrap.  A NULL
 * pointer argument is BPTT_EINVAL (or the value said beside the function)
 * unless the comment says it may be NULL.
 *
 * Units.  The planner counts memory in integer units.  In slot mode a
 * hidden state is 1 unit and an internal state alpha units; in byte mode
 * units are quanta q = gcd(hidden bytes, internal bytes) (doc/design.md 1.3).
 * Legend: t sequence length, h hidden-state units, s internal-state units,
 * m budget in units.
 */
#ifndef BPTT_H
#define BPTT_H

#include <stddef.h>
#include <stdint.h>

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

/* ---- status codes --------------------------------------------------- */

enum bptt_status {
    BPTT_OK = 0,
    BPTT_EINVAL,      /* an argument is out of range */
    BPTT_ENOMEM,      /* an allocation failed */
    BPTT_EINFEASIBLE, /* the budget is below the smallest feasible one */
    BPTT_EBADPLAN,    /* the validator rejected a plan */
    BPTT_ETOOBIG,     /* sizes whose tables, plans or buffers would not
                         fit */
    BPTT_EUNKNOWN,    /* an unknown name (a task: not copy, adding or
                         text:FILE) */
    BPTT_EFILE,       /* a file that cannot be read */
    BPTT_ESHORT,      /* an input too short for the work (a text shorter
                         than the length + 1) */
    BPTT_ENAN,        /* a value is NaN (finite.h) */
    BPTT_EINF,        /* a value is +inf or -inf (finite.h) */
    BPTT_ENONFINITE,  /* training made a NaN or an infinity (session.h) */
    BPTT_EOP,         /* an op of steps.h failed with a status inside the
                         library's range (steps.h: BPTT_OP_STATUS_MIN) */
    BPTT_ESTEPS,      /* an op table broke its own promise (steps.h: h(i)
                         not at the hidden_offset it states) */
    BPTT_EIO          /* the slow level's file could not be made, written
                         or read (steps.h: its errno in the run's stats) */
};

/* What a status means, for people; the one to-string of every library
 * function's status (planner, training, data, NaN checks). */
const char *bptt_strerror(int status);

/* ---- plans: sequences of actions (doc/design.md 2) ------------------- */

enum bptt_op {
    BPTT_ADVANCE,          /* forward op of step i: reads h(i-1), makes h(i), s(i) */
    BPTT_SAVE_HIDDEN,      /* store h(i) (running state, at position i) */
    BPTT_SAVE_INTERNAL,    /* store s(i) (working internal state of step i) */
    BPTT_RESTORE_HIDDEN,   /* running state := stored h(i) */
    BPTT_RESTORE_INTERNAL, /* running state := h(i) inside stored s(i) */
    BPTT_BACKWARD,         /* backward op of step i (needs s(i)) */
    BPTT_FREE_HIDDEN,      /* release stored h(i) */
    BPTT_FREE_INTERNAL,    /* release stored s(i) */
    /* the slow level of a two-level plan (twolevel.h, doc/twolevel.md) */
    BPTT_WRITE_HIDDEN,     /* write the running h(i) to the slow level */
    BPTT_WRITE_INTERNAL,   /* write the working s(i) to the slow level */
    BPTT_READ_HIDDEN,      /* running state := h(i) read from the slow level */
    BPTT_READ_INTERNAL,    /* read s(i): running state h(i), s(i) working */
    BPTT_DROP_HIDDEN,      /* release h(i) on the slow level */
    BPTT_DROP_INTERNAL,    /* release s(i) on the slow level */
    BPTT_N_OPS
};

const char *bptt_op_name(int op);
int bptt_op_parse(const char *name); /* -1 if unknown or NULL */

typedef struct {
    uint32_t op;   /* enum bptt_op */
    uint32_t step; /* the step i the action refers to, 0..t */
} bptt_action;

typedef struct {
    size_t length;          /* t */
    int64_t hidden_units;   /* h */
    int64_t internal_units; /* s */
    int64_t budget;         /* m: stored units may never exceed it */
    size_t n_actions;
    size_t capacity;
    bptt_action *actions; /* (n_actions) */
    /* units the slow level may hold at any moment (twolevel.h): 0, as
     * bptt_plan_alloc sets it, for a plan of one level;
     * BPTT_SLOW_UNLIMITED (INT64_MAX) for no bound */
    int64_t slow_budget;
} bptt_plan;

/* An empty plan; t >= 1, 1 <= h <= s, m >= 0 (out NULL: BPTT_EINVAL). */
int bptt_plan_alloc(bptt_plan **out, size_t t, int64_t h, int64_t s,
                    int64_t m);
void bptt_plan_free(bptt_plan *plan); /* accepts NULL */
int bptt_plan_push(bptt_plan *plan, int op, size_t step); /* NULL: EINVAL */

/* What the validator found. */
enum bptt_violation {
    BPTT_V_NONE = 0,
    BPTT_V_BAD_OP,           /* unknown op or step out of range */
    BPTT_V_NO_RUNNING_STATE, /* advance/save with no running state there */
    BPTT_V_NO_WORKING,       /* save internal: s(i) is not the working one */
    BPTT_V_ALREADY_STORED,   /* saving what is already stored */
    BPTT_V_NOT_STORED,       /* restore or free of something not stored */
    BPTT_V_OVER_BUDGET,      /* stored units exceed the budget */
    BPTT_V_BACKWARD_ORDER,   /* backward not in the order t, t-1, ..., 1 */
    BPTT_V_BACKWARD_NO_STATE,/* backward i without s(i) */
    BPTT_V_INCOMPLETE,       /* plan ended before backward 1 */
    BPTT_V_LEAK,             /* plan ended with states still stored */
    BPTT_V_SLOW_OVER_BUDGET, /* units on the slow level exceed its budget */
    BPTT_N_VIOLATIONS
};

const char *bptt_violation_str(int violation);

typedef struct {
    int64_t forward_ops;   /* every advance, the first sweep included */
    int64_t recompute_ops; /* advances of steps computed before */
    int64_t backward_ops;
    int64_t peak_units;    /* most units stored at any moment, h(0) included */
    size_t n_actions;
    int violation;         /* enum bptt_violation */
    size_t bad_action;     /* index of the first bad action (n_actions: at the end) */
    /* peak_units in bytes, where the bytes of a unit are known: set by
     * bptt_plan_make (its quantum); the validator alone, which sees units
     * only, leaves it 0 */
    int64_t peak_bytes;
    /* the slow level (twolevel.h): its most units at any moment, and the
     * states written and read with their units (INT64_MAX where these
     * would pass it: a state may be written, dropped and written again,
     * or read any number of times) */
    int64_t slow_peak_units;
    int64_t slow_writes, slow_reads;
    int64_t slow_write_units, slow_read_units;
} bptt_plan_stats;

/* Symbolic execution of a plan under the rules of doc/design.md 2.3.
 * Returns BPTT_OK and fills *stats, or BPTT_EBADPLAN with stats->violation
 * and stats->bad_action set (the counts then cover the actions before it).
 * BPTT_EINVAL: plan or stats NULL, or a header no bptt_plan_alloc makes
 * (t < 1 or t >= UINT32_MAX, h < 1, s < h, m < 0, actions NULL with
 * n_actions > 0). */
int bptt_plan_validate(const bptt_plan *plan, bptt_plan_stats *stats);

/* The most bytes the actions of a plan of length t and c forward ops can
 * take: at most 4 c + t + 3 actions (each save follows an advance, each
 * free a save, each restore precedes an advance), sizeof(bptt_action)
 * each.  A double: it may exceed any size_t. */
double bptt_plan_bytes_bound(size_t t, int64_t c);

/* ---- strategies and their cost tables -------------------------------- */

typedef struct bptt_table bptt_table;

typedef struct {
    const char *name;
    const char *summary;
    /* Fill the strategy's part of a table (allocated by bptt_table_alloc). */
    int (*build)(bptt_table *table);
    /* Cost (forward ops) of length t' <= t at budget m <= max budget;
     * -1 when infeasible. */
    int64_t (*cost)(const bptt_table *table, size_t t, int64_t m);
    /* Append the plan for the table's length at budget m (feasible). */
    int (*emit)(const bptt_table *table, int64_t m, bptt_plan *plan);
    /* Smallest feasible budget for length t with state sizes h and s
     * (and Chen's segment k, 0 for the default); no table needed; -1 when
     * it does not fit an int64_t. */
    int64_t (*min_budget)(size_t t, int64_t h, int64_t s, size_t k);
    /* Forward ops of the plan for length t at a feasible budget m (h, s as
     * above; Chen's default segment) when known without a table: INT64_MAX
     * when too many to count; NULL when only a table knows them.  Call it
     * through bptt_strategy_known_cost. */
    int64_t (*known_cost)(size_t t, int64_t h, int64_t s, int64_t m);
    unsigned flags; /* BPTT_STRATEGY_* */
} bptt_strategy;

/* bptt_strategy.flags */
enum {
    BPTT_STRATEGY_SEGMENT = 1u,   /* takes Chen's segment (chen_segment) */
    BPTT_STRATEGY_FIXED_COST = 2u /* a larger budget never lowers its cost */
};

/* The strategy's known_cost, or -1 when it has none (a table is needed)
 * or strategy is NULL. */
int64_t bptt_strategy_known_cost(const bptt_strategy *strategy, size_t t,
                                 int64_t h, int64_t s, int64_t m);
/* The names of the strategies whose flags include `flag`, as
 * bptt_strategy_names writes them; returns the whole length. */
size_t bptt_strategy_names_with(char *buf, size_t cap, unsigned flag,
                                const char *last);

/* NULL-terminated table of every strategy: full, chen, hsm, ism, msm,
 * ism-paper, msm-paper. */
extern const bptt_strategy *const bptt_strategies[];
const bptt_strategy *bptt_strategy_find(const char *name); /* NULL: NULL */
/* The names of bptt_strategies as a list for people, "full, chen, ...,
 * ism-paper<last>msm-paper" (last: " or ", ", ", ...), into buf[cap] as
 * snprintf would (buf may be NULL: the length only; last NULL: ", ");
 * returns the whole length. */
size_t bptt_strategy_names(char *buf, size_t cap, const char *last);
/* names[0..n) joined as "a, b<last>c" into buf[cap] (buf may be NULL: the
 * length only), NUL-terminated as snprintf would; returns the whole length.
 * names NULL: no names; NULL entries are skipped; last NULL: ", ". */
size_t bptt_names_text(char *buf, size_t cap, const char *const *names,
                       size_t n, const char *last);

typedef struct {
    size_t chen_segment; /* Chen's segment length k; 0 = ceil(sqrt(t)) */
    int threads;         /* threads for building; 0: bptt_planner_threads */
    /* Smallest budget the caller will ask for (0: every budget).  When every
     * budget from it up is answered in closed form (msm and ism at long
     * lengths, doc/design.md 4), nothing else is built and the
     * table serves only budgets from bptt_table_min_served() up. */
    int64_t min_budget;
    /* Nonzero: the plain dynamic programme, every split of every cell
     * scanned, no closed form (slow; the reference the tests compare the
     * fast planner with). */
    int reference;
} bptt_table_options;

/* Build the cost table of strategy for lengths 0..t and budgets 0..max_m.
 * The table serves every budget up to max_m (from bptt_table_min_served()
 * when opts->min_budget let it skip the small ones).  opts may be NULL;
 * out or strategy NULL: BPTT_EINVAL. */
int bptt_table_alloc(bptt_table **out, const bptt_strategy *strategy,
                     size_t t, int64_t h, int64_t s, int64_t max_m,
                     const bptt_table_options *opts);
void bptt_table_free(bptt_table *table); /* accepts NULL */

/* Given a NULL table, the getters below return 0 (sizes), -1 (costs and
 * budgets), NULL (the strategy) and INT64_MAX (closed_form_from). */

size_t bptt_table_length(const bptt_table *table);
int64_t bptt_table_max_budget(const bptt_table *table);
const bptt_strategy *bptt_table_strategy(const bptt_table *table);
size_t bptt_table_bytes(const bptt_table *table); /* memory the table holds */
/* The most bytes building such a table holds at once, without building
 * it (SIZE_MAX: more than a size_t; 0: bad arguments): the table
 * (bptt_table_bytes() after the build, at most this), the compressed
 * budget axis, and the fast planner's scratch while it runs (column
 * states, vertex lists counted at their most, windows), each allocation
 * with malloc's slack.  bptt_table_alloc refuses (BPTT_ETOOBIG) a table
 * whose count passes half of physical memory, before allocating. */
size_t bptt_table_bytes_needed(const bptt_strategy *strategy, size_t t,
                               int64_t h, int64_t s, int64_t max_m,
                               const bptt_table_options *opts);
/* Smallest budget the table answers (0 unless opts->min_budget let the
 * build skip small budgets). */
int64_t bptt_table_min_served(const bptt_table *table);
/* Budgets from this one up (at every length up to t) are answered by the
 * closed form max(t', 2t' - 1 - floor(m / s)); INT64_MAX when none are
 * (strategies other than msm and ism, or short tables). */
int64_t bptt_table_closed_form_from(const bptt_table *table);
/* Forward ops of length t' <= t at budget m (a cell of the table); -1 when
 * infeasible or not served. */
int64_t bptt_table_cost_at(const bptt_table *table, size_t t, int64_t m);

/* Forward ops of the table's full length at budget m (0 <= m <= max),
 * or -1 when m is infeasible. */
int64_t bptt_table_cost(const bptt_table *table, int64_t m);

/* Smallest feasible budget for the table's length (it may exceed the
 * table's largest budget); -1 when it does not fit an int64_t. */
int64_t bptt_table_min_budget(const bptt_table *table);
/* The same without building a table; opts may be NULL (strategy NULL:
 * -1). */
int64_t bptt_strategy_min_budget(const bptt_strategy *strategy, size_t t,
                                 int64_t h, int64_t s,
                                 const bptt_table_options *opts);

/* Smallest budget m' <= m with the same cost as m (the plan at m' has the
 * fewest forward ops and, among those plans, the least memory); -1 if m is
 * infeasible. */
int64_t bptt_table_tight_budget(const bptt_table *table, int64_t m);

/* The plan for budget m: BPTT_EINFEASIBLE if m is below the smallest
 * feasible budget (*min_feasible then holds it, or -1 if none exists below
 * the table's maximum).  The plan's budget field is m.  min_feasible may
 * be NULL; table or out NULL: BPTT_EINVAL. */
int bptt_table_plan(const bptt_table *table, int64_t m, bptt_plan **out,
                    int64_t *min_feasible);
/* The number of actions bptt_table_plan would give at budget m, counted
 * by unrolling the plan without storing it (as long as making it, but
 * holding only the unrolling stack); -1 when m is infeasible or not
 * served, or the stack could not grow.  bptt_table_plan counts first and
 * makes the action array of exactly that size. */
int64_t bptt_table_plan_actions(const bptt_table *table, int64_t m);

/* The threads a table is built on where the options ask for none
 * (threads 0): the first number of OMP_NUM_THREADS where it is set, else
 * the CPUs online; at most BPTT_THREADS_MAX (budget.h), at least 1.  The
 * planner's threads are its own (POSIX threads, no OpenMP runtime).
 * *asked (may be NULL): what OMP_NUM_THREADS asked for (0 when unset or
 * not a number), more than the result where it was capped. */
int bptt_planner_threads(int *asked);

/* What making and validating a plan of strategy st and length t holds
 * besides its actions (bptt_table_plan_actions of them, in an array of
 * exactly that size) and the table, at most: for a DP strategy the
 * unrolling stack (at most 3 t + 4 pending entries, doubled as it grows),
 * for every one the validator's flags (t + 1 bytes), with malloc's slack;
 * st NULL: the most of any strategy; SIZE_MAX if more than a size_t. */
size_t bptt_plan_scratch_bytes(const bptt_strategy *st, size_t t);

/* ---- one call: sizes in, a checked plan out --------------------------- */

/* The optimal plan of strategy `strategy` (a name of bptt_strategies) for
 * t steps whose hidden and internal states take hidden_bytes and
 * internal_bytes (slots: 1 and alpha), under budget_bytes of stored states
 * (h(0) counted): the table is built for that budget alone, the plan made
 * and validated.  On BPTT_OK, *out holds the plan (in units of
 * bptt_units_from_bytes's quantum; free it with bptt_plan_free) and *stats
 * the validator's counts.  BPTT_EINFEASIBLE: the budget is below the
 * smallest feasible one, whose bytes *min_budget_bytes (may be NULL) then
 * holds.  BPTT_ETOOBIG: the table or the plan would take more than half
 * of physical memory, refused before it is made; stats->forward_ops then
 * holds the plan's cost when it was the plan (0: the table); or the
 * smallest feasible budget, in units or in bytes, does not fit an int64_t
 * (too big to state: no int64_t budget would be feasible).
 * Below one internal state (hsm: at any budget) only hidden states can be
 * stored, and the table is built in hidden-state slots, so huge units
 * (h ~ 1e15) at a budget of a few hidden states cost a few columns.
 * BPTT_EINVAL: an unknown or NULL strategy, bad sizes, out or stats NULL.
 * opts (may be NULL) sets Chen's segment and the threads; its min_budget
 * is ignored.  The budget goes in in bytes and stats->peak_bytes comes out
 * in bytes; units stay inside the plan.  On every failure *out is NULL
 * (out is set first), and nothing is left allocated. */
/* The smallest feasible budget of `strategy` for t steps whose states
 * take hidden_bytes and internal_bytes, in bytes (h(0) counted), without
 * building a table or a plan: BPTT_OK and *bytes; BPTT_EINVAL for an
 * unknown or NULL strategy, bad sizes or bytes NULL; BPTT_ETOOBIG when it
 * does not fit an int64_t.  opts as for bptt_plan_make (Chen's segment
 * changes chen's). */
int bptt_plan_min_budget(const char *strategy, size_t t, int64_t hidden_bytes,
                         int64_t internal_bytes,
                         const bptt_table_options *opts, int64_t *bytes);

int bptt_plan_make(const char *strategy, size_t t, int64_t hidden_bytes,
                   int64_t internal_bytes, int64_t budget_bytes,
                   const bptt_table_options *opts, bptt_plan **out,
                   bptt_plan_stats *stats, int64_t *min_budget_bytes);

/* ---- closed forms ---------------------------------------------------- */

/* Griewank-Walther binomial checkpointing (equal to BPTT-HSM in slots):
 * (r+1) t - binom(m+r, m+1), r least with binom(m+r, m) >= t; m >= 1.
 * -1 if m < 1 or the result would overflow.  Bounded time (a bisection
 * over r, never a loop over t). */
int64_t bptt_hsm_closed_cost(int64_t t, int64_t m);

/* Chen's sqrt(t) method with segment length k (doc/design.md 3.6): the
 * default segment is the least k with k^2 >= t (exact up to SIZE_MAX);
 * cost and peak are -1 when they do not fit an int64_t. */
size_t bptt_chen_default_segment(size_t t);
int64_t bptt_chen_cost(size_t t, size_t k);
int64_t bptt_chen_peak(size_t t, size_t k, int64_t h, int64_t s);

/* Full BPTT: every internal state kept; h(0) released after step 1;
 * -1 when the peak does not fit an int64_t. */
int64_t bptt_full_peak(size_t t, int64_t h, int64_t s);

/* ---- bytes to units (doc/design.md 1.3) ------------------------------ */

typedef struct {
    int64_t quantum;        /* q = gcd(hidden_bytes, internal_bytes) */
    int64_t hidden_units;   /* hidden_bytes / q */
    int64_t internal_units; /* internal_bytes / q */
} bptt_units;

/* hidden_bytes >= 1 and internal_bytes >= hidden_bytes (u NULL: EINVAL). */
int bptt_units_from_bytes(bptt_units *u, int64_t hidden_bytes,
                          int64_t internal_bytes);

/* The units of a hidden and an internal state whose sizes are 1 and alpha,
 * alpha written in decimal ("4", "3.5", "1.25"): 1 <= alpha <=
 * BPTT_ALPHA_MAX, at most 6 decimals, no sign, exponent or space; the
 * units are exact ("3.5": h = 2, s = 7; an integer alpha: h = 1).
 * BPTT_EINVAL otherwise (and when alpha or u is NULL). */
#define BPTT_ALPHA_MAX 1000000
int bptt_units_from_alpha(const char *alpha, bptt_units *u);

#pragma GCC visibility pop

#endif /* BPTT_H */
