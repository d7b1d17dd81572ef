/* twolevel.c: the two-level planner's table (include/bptt/twolevel.h):
 * its size, checked before it is allocated, and its build, length by
 * length on the planner's threads, from the cells of twolevel_cell.c
 * (the recursion); twolevel_plan.c unrolls it.  The model, the recursion
 * and why it is the optimum: doc/twolevel.md. */
#include <math.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bptt.h"
#include "budget.h"
#include "threads.h"
#include "twolevel.h"
#include "twolevel_impl.h"

/* ---- the build on threads -------------------------------------------------
 *
 * What the one-thread build does: for n = 0..t, for every column (mi, di)
 * in mi-major order, fill_cell.  Cell (n, mi, di) reads its own column at
 * lengths below n, other columns (mi' <= mi, di' <= di: the y = 1
 * options' and the split groups' children) at lengths below n and their
 * lower convex hulls as they stand after length n (hull_at interpolates
 * between hull points, which may include n), and, for the change of level
 * OPT_TO_S, the S cost of column (fsub(mi, 0, 1), dadd_s(di)) at length n.
 * Every one of those columns comes before (mi, di) in that order, and it
 * writes only its own column.
 *
 * A hull is a stack that length n + 1 pops and overwrites, so a column
 * cannot run ahead of the columns that read its hull without changing
 * what they read (and the choices among equal splits with it).  So the
 * tasks are the pairs (n, column), handed out from one counter length by
 * length, the columns of a length in task_order (every column read before
 * its reader, as in mi-major order), and task (n, c) waits (a) until every
 * task of length n - 1 is done and (b) until each column it reads at
 * length n has published n.  Then every read sees what the one-thread
 * build sees: a column c' read at length n has done n and, as no task of
 * length n + 1 starts before (n, c) is done, no more; and a column's own
 * lengths below n, and all others', were done before (a).  Unlike fast.c
 * this is a wavefront within each length, not across lengths: a column
 * may not run ahead of its readers' length.
 *
 * No deadlock: every wait of task i is on tasks with a smaller index (all
 * of length n - 1; columns before c in task_order at length n), and tasks
 * are taken in rising order, so each of those has a thread running it;
 * the smallest unfinished task waits on none, so by induction every task
 * ends.  The
 * release stores and acquire loads of the counters make each column's
 * cost, choice, hull and hint writes visible to the tasks that wait on
 * them. */

typedef struct {
    bptt_twolevel *tl;
    size_t *order;        /* the columns (mi * nd + di) in task order */
    _Atomic size_t *pub;  /* [mi * nd + di]: lengths done */
    _Atomic size_t next;  /* the next task: n * cols + c */
    _Atomic size_t done;  /* tasks done (those of length n - 1 are done
                             before any of length n is) */
} build_job;

static void spin_wait(unsigned *spin)
{
    if (++*spin > 256)
        sched_yield(); /* the thread awaited may be descheduled */
#if defined(__x86_64__) || defined(__i386__)
    else
        __builtin_ia32_pause();
#endif
}

/* Waits until column (mi, di) has published length n (a column before the
 * caller's; -1 or the caller's own: none). */
static void wait_column(build_job *j, int64_t mi, int64_t di, int64_t own,
                        size_t n)
{
    if (mi < 0 || di < 0)
        return;
    const int64_t c = mi * j->tl->nd + di;
    unsigned spin = 0;
    if (c != own)
        while (atomic_load_explicit(&j->pub[c], memory_order_acquire) <= n)
            spin_wait(&spin);
}

static void build_tasks(void *arg)
{
    build_job *j = arg;
    bptt_twolevel *tl = j->tl;
    const size_t cols = (size_t)tl->nm * (size_t)tl->nd;
    const size_t ntask = cols * (tl->t + 1);
    for (;;) {
        const size_t i = atomic_fetch_add(&j->next, 1);
        if (i >= ntask)
            break;
        const size_t n = i / cols, c = j->order[i % cols];
        const int64_t mi = (int64_t)(c / (size_t)tl->nd),
                      di = (int64_t)(c % (size_t)tl->nd);
        unsigned spin = 0;
        while (atomic_load_explicit(&j->done, memory_order_acquire) <
               n * cols)
            spin_wait(&spin);
        /* every column the cell reads: a superset of base_cell's (the
         * fast and slow budgets less none, h, s or h + s) and OPT_TO_S */
        static const int hs[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                wait_column(j, fsub(tl, mi, hs[a][0], hs[a][1]),
                            dsub(tl, di, hs[b][0], hs[b][1]), (int64_t)c,
                            n);
        if (tl->msm && fval(tl, mi) >= tl->s)
            wait_column(j, fsub(tl, mi, 0, 1), dadd_s(tl, di), (int64_t)c,
                        n);
        twolevel_fill_cell(tl, n, mi, di);
        atomic_store_explicit(&j->pub[c], n + 1, memory_order_release);
        atomic_fetch_add_explicit(&j->done, 1, memory_order_acq_rel);
    }
}

/* Columns below this many build on one thread: measured, doc/twolevel.md
 * 3 (the tasks' waits cost more than they share). */
#define TL_THREADS_MIN_COLS 32

typedef struct {
    int64_t key;
    size_t c;
} col_key;

static int key_cmp(const void *a, const void *b)
{
    const col_key *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->c < y->c ? -1 : x->c > y->c;
}

/* The task order of the columns within a length: by 2 fv + sv (sv 0 where
 * the slow level is unlimited).  Every column a cell reads has a smaller
 * key: both budgets at most its own and one less, or (OPT_TO_S) s less
 * fast and at most s more slow.  So the order keeps every read before
 * the reader, as mi-major order does (the same table), and columns next
 * to each other in it are mostly independent, as mi-major's are not. */
static size_t *task_order(const bptt_twolevel *tl)
{
    const size_t cols = (size_t)tl->nm * (size_t)tl->nd;
    col_key *ck = planner_malloc(cols * sizeof *ck);
    size_t *order = planner_malloc(cols * sizeof *order);
    if (!ck || !order) {
        planner_free(ck);
        planner_free(order);
        return NULL;
    }
    for (size_t c = 0; c < cols; c++) {
        const int64_t mi = (int64_t)(c / (size_t)tl->nd),
                      di = (int64_t)(c % (size_t)tl->nd);
        ck[c] = (col_key){2 * fval(tl, mi) + (unlimited(tl) ? 0 : tl->sv[di]),
                          c};
    }
    qsort(ck, cols, sizeof *ck, key_cmp);
    for (size_t c = 0; c < cols; c++)
        order[c] = ck[c].c;
    planner_free(ck);
    return order;
}

/* Fills the table on nt threads (or one where it is small). */
int twolevel_fill_table(bptt_twolevel *tl, int nt)
{
    const size_t cols = (size_t)tl->nm * (size_t)tl->nd;
    if (nt > 1 && cols < TL_THREADS_MIN_COLS)
        nt = 1;
    if (nt <= 1) {
        for (size_t n = 0; n <= tl->t; n++)
            for (int64_t mi = 0; mi < tl->nm; mi++)
                for (int64_t di = 0; di < tl->nd; di++)
                    twolevel_fill_cell(tl, n, mi, di);
        return BPTT_OK;
    }
    build_job j = {tl, task_order(tl), NULL, 0, 0};
    if (j.order)
        j.pub = planner_malloc(cols * sizeof *j.pub);
    if (!j.pub) {
        planner_free(j.order);
        return BPTT_ENOMEM;
    }
    for (size_t c = 0; c < cols; c++)
        atomic_init(&j.pub[c], 0);
    atomic_init(&j.next, 0);
    atomic_init(&j.done, 0);
    planner_run(nt, build_tasks, &j);
    planner_free(j.pub);
    planner_free(j.order);
    return BPTT_OK;
}


static int strategy_msm(const char *strategy)
{
    if (!strategy)
        return -1;
    if (strcmp(strategy, "hsm") == 0)
        return 0;
    if (strcmp(strategy, "msm") == 0)
        return 1;
    return -1;
}

static int args_ok(size_t t, int64_t h, int64_t s, int64_t m,
                   const bptt_slow_level *slow)
{
    if (!slow || t < 1 || t > (size_t)INT32_MAX >> 4 || h < 1 || s < h ||
        m < 0 || slow->budget < 0)
        return 0;
    const double c[2] = {slow->write_cost, slow->read_cost};
    for (int i = 0; i < 2; i++)
        if (!(c[i] >= 0.0 && c[i] <= BPTT_SLOW_COST_MAX))
            return 0; /* NaN fails both */
    return 1;
}

/* A slow budget of at least this many units never binds: every state of
 * every step, both kinds, fits (the table then has one slow column). */
int64_t twolevel_slow_cap(size_t t, int64_t h, int64_t s)
{
    const double c = ((double)t + 1.0) * ((double)h + (double)s);
    return c >= 9e18 ? INT64_MAX : (int64_t)c;
}

static int64_t slow_table(size_t t, int64_t h, int64_t s, int64_t d)
{
    return d >= twolevel_slow_cap(t, h, s) ? BPTT_SLOW_UNLIMITED : d;
}

/* The two axes of a table (the slow one unused where d is unlimited). */
static void axes_of(twolevel_axis ax[2], int msm, size_t t, int64_t h,
                    int64_t s, int64_t m, int64_t d, int layout)
{
    for (int i = 0; i < 2; i++)
        ax[i] = (twolevel_axis){t, h, s, i ? d : m, msm, i, layout};
}

/* At most what the table holds: its columns are at most the axes'
 * bounds (twolevel_axis_bound). */
static size_t table_bytes(const twolevel_axis ax[2])
{
    const double nm = (double)twolevel_axis_bound(&ax[0]);
    const double nd = ax[1].top == BPTT_SLOW_UNLIMITED
                          ? 0.0
                          : (double)twolevel_axis_bound(&ax[1]);
    const double cols = 4.0 * nm * (nd > 0.0 ? nd : 1.0);
    const double cells = cols * ((double)ax[0].t + 1.0);
    const double b = cells * (sizeof(int64_t) + 2 * sizeof(int32_t)) +
                     5.0 * cols * sizeof(size_t) +
                     (4.0 * nm + 5.0 * nd) * sizeof(int64_t) +
                     9.0 * (double)PLANNER_ALLOC_SLACK +
                     (double)sizeof(bptt_twolevel) + PLANNER_SMALL_SLACK;
    return b >= (double)SIZE_MAX ? SIZE_MAX : (size_t)b;
}

size_t bptt_twolevel_bytes_needed(const char *strategy, size_t t, int64_t h,
                                  int64_t s, int64_t m,
                                  const bptt_slow_level *slow)
{
    const int msm = strategy_msm(strategy);
    if (msm < 0 || !args_ok(t, h, s, m, slow))
        return 0;
    twolevel_axis ax[2];
    axes_of(ax, msm, t, h, s, m, slow_table(t, h, s, slow->budget),
            TL_LAYOUT_AUTO);
    return table_bytes(ax);
}

int bptt_twolevel_alloc(bptt_twolevel **out, const char *strategy, size_t t,
                        int64_t h, int64_t s, int64_t m,
                        const bptt_slow_level *slow)
{
    return twolevel_alloc_layout(out, strategy, t, h, s, m, slow,
                                 TL_LAYOUT_AUTO, 1);
}

int bptt_twolevel_alloc_threads(bptt_twolevel **out, const char *strategy,
                                size_t t, int64_t h, int64_t s, int64_t m,
                                const bptt_slow_level *slow, int threads)
{
    return twolevel_alloc_layout(out, strategy, t, h, s, m, slow,
                                 TL_LAYOUT_AUTO, threads);
}

int twolevel_alloc_layout(bptt_twolevel **out, const char *strategy,
                          size_t t, int64_t h, int64_t s, int64_t m,
                          const bptt_slow_level *slow, int layout,
                          int threads)
{
    if (!out)
        return BPTT_EINVAL;
    *out = NULL;
    if (!strategy || !args_ok(t, h, s, m, slow))
        return BPTT_EINVAL;
    const int msm = strategy_msm(strategy);
    if (msm < 0)
        return BPTT_EUNKNOWN;
    if (m < h)
        return BPTT_EINFEASIBLE;
    twolevel_axis ax[2];
    axes_of(ax, msm, t, h, s, m, slow_table(t, h, s, slow->budget), layout);
    const size_t bytes = table_bytes(ax);
    if (bytes == SIZE_MAX ||
        bptt_memory_fits((double)bytes, 2, NULL) != BPTT_OK)
        return BPTT_ETOOBIG;
    bptt_twolevel *tl = planner_calloc(1, sizeof *tl);
    if (!tl)
        return BPTT_ENOMEM;
    tl->msm = msm;
    tl->t = t;
    tl->h = h;
    tl->s = s;
    tl->m = m;
    tl->d = slow_table(t, h, s, slow->budget);
    tl->d_asked = slow->budget;
    tl->wd = slow->write_cost;
    tl->rd = slow->read_cost;
    const double q = (double)TL_Q, alpha = (double)s / (double)h;
    tl->wh = llround(tl->wd * q);
    tl->ws = llround(tl->wd * q * alpha);
    tl->rh = llround(tl->rd * q);
    tl->rs = llround(tl->rd * q * alpha);
    int rc = twolevel_axis_build(&ax[0], &tl->fv, &tl->fdep, &tl->nm);
    tl->nd = 1;
    if (rc == BPTT_OK && !unlimited(tl))
        rc = twolevel_axis_build(&ax[1], &tl->sv, &tl->sdep, &tl->nd);
    if (rc != BPTT_OK) {
        bptt_twolevel_free(tl);
        return rc;
    }
    const size_t cells = 4u * (size_t)tl->nm * (size_t)tl->nd * (t + 1);
    tl->cost = planner_malloc(cells * sizeof *tl->cost);
    tl->choice = planner_malloc(cells * sizeof *tl->choice);
    tl->hull = planner_malloc(cells * sizeof *tl->hull);
    tl->nhull = planner_calloc(cells / (t + 1), sizeof *tl->nhull);
    tl->hint = planner_calloc(cells / (t + 1) * 4, sizeof *tl->hint);
    if (!tl->cost || !tl->choice || !tl->hull || !tl->nhull || !tl->hint) {
        bptt_twolevel_free(tl);
        return BPTT_ENOMEM;
    }
    rc = twolevel_fill_table(tl, planner_threads(threads));
    if (rc != BPTT_OK) {
        bptt_twolevel_free(tl);
        return rc;
    }
    *out = tl;
    return BPTT_OK;
}

void bptt_twolevel_free(bptt_twolevel *tl)
{
    if (!tl)
        return;
    planner_free(tl->cost);
    planner_free(tl->choice);
    planner_free(tl->hull);
    planner_free(tl->nhull);
    planner_free(tl->hint);
    planner_free(tl->fv);
    planner_free(tl->fdep);
    planner_free(tl->sv);
    planner_free(tl->sdep);
    planner_free(tl);
}
