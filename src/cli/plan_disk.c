/* plan_disk.c: `bptt plan --disk D`: the two-level plan (twolevel.h) of
 * each strategy and budget, with a slow level of D slots (or no bound)
 * beside the budget, of the least cost
 *
 *     forward ops + --write-cost x hidden states' worth written
 *                 + --read-cost x hidden states' worth read,
 *
 * its counts as the validator measured them (both levels' peaks, the
 * states moved) and the cost from them; with --actions the schedule,
 * the slow level's ops by name.  Its arguments are plan_args.c's, checked
 * there; its records are the library's (planrec.h).  Every table is
 * checked to fit in memory before the first is built, every plan (its
 * actions counted from its table) before it is made; output is written
 * whole at the end, or not at all. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>

#include "bptt.h"
#include "twolevel.h"
#include "plan/alloc.h"
#include "cli.h"
#include "plan.h"
#include "io/planrec.h"

#define CMD "plan"

/* "budget 10 slots and disk 4 slots" (or "... and no bound on disk"). */
static const char *sizes_text(char *buf, size_t cap, const plan_args *a,
                              int64_t m)
{
    char mem[32], disk[32];
    bptt_slots_text(mem, sizeof mem, m, a->h);
    if (a->disk == BPTT_SLOW_UNLIMITED)
        snprintf(buf, cap, "budget %s slots and no bound on disk", mem);
    else
        snprintf(buf, cap, "budget %s slots and disk %s slots", mem,
                 bptt_slots_text(disk, sizeof disk, a->disk, a->h));
    return buf;
}

/* The table of strategy st at budget m fits in half of this machine's
 * memory (the library's own bound, asked before anything is built): 0,
 * or the error naming its size and EXIT_USAGE. */
static int table_fits(const plan_args *a, const bptt_strategy *st, int64_t m,
                      const bptt_slow_level *slow)
{
    const size_t t = (size_t)a->length;
    const size_t need =
        bptt_twolevel_bytes_needed(st->name, t, a->h, a->s, m, slow);
    char what[128], b[32], c[32];
    sizes_text(what, sizeof what, a, m);
    if (need == 0) /* arguments it does not take: a length past its own */
        return cli_error(EXIT_USAGE, CMD, "the two-level %s planner does not "
                         "take length %zu with %s (a table past its range); "
                         "use a smaller length", st->name, t, what);
    double half;
    if (need != SIZE_MAX &&
        bptt_memory_fits((double)need, 2, &half) == BPTT_OK)
        return 0;
    bptt_memory_fits((double)need, 2, &half); /* this machine's half */
    return cli_error(EXIT_USAGE, CMD, "the two-level %s table for length %zu "
                     "with %s would hold %s, more than half of this "
                     "machine's %s; use a smaller length, budget or disk",
                     st->name, t, what,
                     need == SIZE_MAX ? "more than a size_t counts"
                                      : bptt_bytes_text(b, sizeof b,
                                                        (double)need),
                     bptt_bytes_text(c, sizeof c, 2 * half));
}

/* The error for a status of the two-level planner no check before it
 * caught: exit 1 (out of memory, or the library's word). */
static int planner_error(int rc, const char *doing, const bptt_strategy *st,
                         const plan_args *a, int64_t m)
{
    char what[128];
    sizes_text(what, sizeof what, a, m);
    if (rc == BPTT_ENOMEM)
        return cli_error(1, CMD, "out of memory %s the two-level %s plan for "
                         "length %" PRId64 " with %s", doing, st->name,
                         a->length, what);
    return cli_error(1, CMD, "%s the two-level %s plan for length %" PRId64
                     " with %s: %s", doing, st->name, a->length, what,
                     bptt_strerror(rc));
}

/* The plan of table tl, counted first and refused when it would not fit
 * beside the table; made, then validated: 0 with *p and *vs, or the
 * error said. */
static int make_plan(const plan_args *a, const bptt_strategy *st, int64_t m,
                     const bptt_twolevel *tl, size_t table_bytes,
                     bptt_plan **p, bptt_plan_stats *vs)
{
    *p = NULL;
    const size_t t = (size_t)a->length;
    const int64_t n = bptt_twolevel_plan_actions(tl);
    if (n < 0)
        return planner_error(BPTT_ENOMEM, "counting the actions of", st, a,
                             m);
    const double bytes = (double)n * sizeof(bptt_action) +
                         (double)bptt_plan_scratch_bytes(st, t) +
                         (double)table_bytes;
    double half;
    if (bptt_memory_fits(bytes, 2, &half) != BPTT_OK) {
        char what[128], need[32], have[32];
        return cli_error(EXIT_USAGE, CMD, "the two-level %s plan for length "
                         "%zu with %s has %" PRId64 " actions; making it "
                         "would hold %s with the table, more than half of "
                         "this machine's %s; use a smaller length or a "
                         "larger budget or disk", st->name, t,
                         sizes_text(what, sizeof what, a, m), n,
                         bptt_bytes_text(need, sizeof need, bytes),
                         bptt_bytes_text(have, sizeof have, 2 * half));
    }
    int rc = bptt_twolevel_plan(tl, p);
    if (rc != BPTT_OK)
        return planner_error(rc, "making", st, a, m);
    rc = bptt_plan_validate(*p, vs);
    if (rc == BPTT_ENOMEM)
        rc = planner_error(rc, "validating", st, a, m);
    else if (rc != BPTT_OK)
        /* a planner bug: never print an unchecked plan as valid */
        rc = cli_error(1, CMD, "internal error: the two-level %s plan failed "
                       "validation at action %zu (%s)", st->name,
                       vs->bad_action, bptt_violation_str(vs->violation));
    if (rc) {
        bptt_plan_free(*p);
        *p = NULL;
    }
    return rc;
}

/* The plan of strategy st at budget m, its record (and schedule) onto
 * out. */
static int plan_one(const plan_args *a, const bptt_strategy *st, int64_t m,
                    int64_t min_mem, const bptt_slow_level *slow,
                    bptt_strbuf *out)
{
    const size_t t = (size_t)a->length;
    const double t0 = cli_seconds();
    bptt_twolevel *tl = NULL;
    int rc = bptt_twolevel_alloc_threads(&tl, st->name, t, a->h, a->s, m,
                                         slow, (int)a->threads);
    if (rc == BPTT_ETOOBIG) { /* checked before, by the same bound */
        const int said = table_fits(a, st, m, slow);
        return said ? said
                    : planner_error(rc, "building the table of", st, a, m);
    }
    if (rc == BPTT_EINFEASIBLE) {
        char b[32];
        return cli_error(EXIT_INFEASIBLE, CMD, "budget %s slots is "
                         "infeasible for the two-level %s planner (h(0) is "
                         "kept in the budget)", bptt_slots_text(b, sizeof b,
                                                                m, a->h),
                         st->name);
    }
    if (rc != BPTT_OK)
        return planner_error(rc, "building the table of", st, a, m);
    const size_t tbytes = bptt_twolevel_bytes_needed(st->name, t, a->h, a->s,
                                                     m, slow);
    bptt_plan *p = NULL;
    bptt_plan_stats vs;
    rc = make_plan(a, st, m, tl, tbytes, &p, &vs);
    bptt_twolevel_free(tl);
    if (rc)
        return rc;
    const double seconds = cli_seconds() - t0;
    const bptt_plan_record r = {st->name, a->length, a->s, m,
                                bptt_full_peak(t, a->h, a->s), min_mem, &vs,
                                a->h};
    const bptt_plan_sizes z = {a->cell ? a->cell->name : NULL, a->layers,
                               a->hidden, a->batch, a->quantum};
    const bptt_plan_slow sl = {a->disk, a->write_cost, a->read_cost};
    const int json = a->format == FORMAT_JSON;
    if (a->actions && a->format == FORMAT_TEXT)
        bptt_plan_slow_header(out, (int)a->format, a->cell != NULL);
    if (!a->actions || a->format != FORMAT_CSV)
        bptt_plan_slow_row(out, (int)a->format, &r, &z, seconds, tbytes, &sl,
                           a->actions && json ? p : NULL);
    if (a->actions && !json)
        bptt_plan_actions(out, (int)a->format, p, a->h);
    bptt_plan_free(p);
    return 0;
}

int plan_disk(const plan_args *a)
{
    const bptt_slow_level slow = {a->disk, a->write_cost, a->read_cost};
    plan_args one = *a;
    int64_t min_mem[MAX_STRATEGIES];
    int rc = 0;
    /* before any work: every budget feasible, every table within memory */
    for (int k = 0; k < a->n_strategies && rc == 0; k++) {
        one.strategy = a->strategies[k];
        const bptt_table_options o = {0};
        rc = plan_check_feasible(&one, &o, &min_mem[k]);
        for (int i = 0; i < a->n_budgets && rc == 0; i++)
            rc = table_fits(a, a->strategies[k], a->budget[i], &slow);
    }
    if (rc)
        return rc;
    if (a->fail_alloc)
        bptt_alloc_fail_at((size_t)a->fail_alloc);
    bptt_strbuf out = {0};
    if (!a->actions)
        bptt_plan_slow_header(&out, (int)a->format, a->cell != NULL);
    for (int k = 0; k < a->n_strategies && rc == 0; k++)
        for (int i = 0; i < a->n_budgets && rc == 0; i++)
            rc = plan_one(a, a->strategies[k], a->budget[i], min_mem[k],
                          &slow, &out);
    if (out.failed && rc == 0)
        rc = cli_error(1, CMD, "out of memory");
    if (rc == 0 && out.p)
        fwrite(out.p, 1, out.n, stdout); /* errors: main.c's finish */
    bptt_strbuf_free(&out);
    return rc;
}
