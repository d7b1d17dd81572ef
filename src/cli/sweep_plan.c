/* sweep_plan.c: `bptt sweep --mode plan`: the records of `bptt plan
 * --format json` (no timings) computed in this process, one table shared
 * by the consecutive points of one (strategy, length, alpha). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io/planrec.h"
#include "records.h"
#include "sweep.h"

#define CMD SWEEP_CMD

typedef bptt_grid_plan plan_point;

/* Point `point` of the grid (grid.h), or its budget's error as `bptt
 * plan --memory` says it. */
static int plan_point_at(const sweep *s, size_t point, plan_point *p)
{
    if (bptt_grid_plan_point(&s->g, point, p) == BPTT_OK)
        return 0;
    const bptt_budget_sizes z = {p->length, p->h, p->alpha, 0};
    bptt_budget_resolved r;
    return cli_budget(CMD, "--memory", p->spec, &z, 0, &r);
}

static int infeasible_error(const sweep *s, size_t point, const char *what)
{
    char *d = sweep_point_text(s, point);
    const int rc = cli_error(EXIT_INFEASIBLE, CMD, "%s: %s; drop this budget "
                             "from the grid, or give --infeasible record to "
                             "keep such points as records", d, what);
    free(d);
    return rc;
}

int sweep_plan_preflight(const sweep *s)
{
    for (size_t k = 0; k < s->g.n_points; k++) {
        plan_point p;
        int rc = plan_point_at(s, k, &p);
        if (rc)
            return rc;
        if (p.budget < p.min && !s->g.record_infeasible) {
            char what[160], have[32], least[32];
            snprintf(what, sizeof what, "budget %s slots is below the "
                     "smallest feasible one, %s slots",
                     bptt_slots_text(have, sizeof have, p.budget, p.h),
                     bptt_slots_text(least, sizeof least, p.min, p.h));
            return infeasible_error(s, k, what);
        }
        /* plans whose cost is known without a table must fit in memory
         * (the others are checked when their table is built) */
        const int64_t cost =
            p.budget >= p.min ? bptt_strategy_known_cost(p.strategy, p.length,
                                                         p.h, p.alpha,
                                                         p.budget)
                              : -1;
        if (cost >= 0 && (rc = cli_plan_cost_fits(CMD, p.strategy->name,
                                                  p.length, p.budget, cost)))
            return rc;
    }
    return 0;
}

static char *plan_record(const sweep *s, size_t point, const plan_point *p,
                         const bptt_plan_stats *st, int64_t min_memory)
{
    const bptt_plan_record r = {p->strategy->name, (int64_t)p->length,
                                p->alpha,          p->budget,
                                p->full,           min_memory,
                                st,                p->h};
    char fields[1024];
    bptt_plan_record_json(&r, fields, sizeof fields);
    bptt_strbuf b = {0};
    bptt_record_start(&b, &s->g, point);
    bptt_strbuf_printf(&b, ",%s}\n", fields);
    return sweep_take(&b);
}

/* The points todo[i..j) of one (strategy, length, alpha) from one table
 * (NULL when every budget is infeasible). */
static int plan_group(const sweep *s, const size_t *todo, size_t i, size_t j,
                      const bptt_table *tb, sweep_sink sink, void *ctx)
{
    int rc = 0;
    for (; i < j && rc == 0; i++) {
        plan_point p;
        plan_point_at(s, todo[i], &p);
        char *line;
        if (p.budget < p.min || !tb) {
            line = plan_record(s, todo[i], &p, NULL, p.min);
        } else {
            bptt_plan *plan;
            bptt_plan_stats st;
            if ((rc = cli_plan_at(CMD, tb, p.budget, &plan, &st, NULL)) != 0)
                break;
            bptt_plan_free(plan);
            line = plan_record(s, todo[i], &p, &st, p.min);
        }
        rc = sink(ctx, todo[i], line, strlen(line));
        free(line);
        if (rc == 0 && sweep_signal)
            rc = SWEEP_INTERRUPTED;
    }
    return rc;
}

/* Consecutive points of one (strategy, length, alpha) share one table:
 * memory is the last plan axis.  A record never depends on the table's
 * largest budget. */
int sweep_compute_plan(const sweep *s, const size_t *todo, size_t n,
                       sweep_sink sink, void *ctx)
{
    const bptt_grid_axis *th = &s->g.ax[BPTT_GK_THREADS];
    const int64_t threads = th->n ? th->num[0] : 0;
    size_t i = 0;
    while (i < n) {
        if (sweep_signal)
            return SWEEP_INTERRUPTED;
        plan_point first;
        int rc = plan_point_at(s, todo[i], &first);
        if (rc)
            return rc;
        size_t j = i + 1;
        int64_t top = first.budget >= first.min ? first.budget : -1;
        for (; j < n; j++) {
            plan_point q;
            if ((rc = plan_point_at(s, todo[j], &q)) != 0)
                return rc;
            if (q.strategy != first.strategy || q.length != first.length ||
                q.alpha != first.alpha || q.h != first.h)
                break;
            if (q.budget >= q.min && q.budget > top)
                top = q.budget;
        }
        bptt_table *tb = NULL;
        if (top >= 0) {
            const bptt_table_options opts = {.threads = (int)threads};
            rc = bptt_table_alloc(&tb, first.strategy, first.length, first.h,
                                  first.alpha, top, &opts);
            if (rc != BPTT_OK) {
                char budget[64], slots[32];
                snprintf(budget, sizeof budget, "budgets up to %s slots",
                         bptt_slots_text(slots, sizeof slots, top, first.h));
                return cli_table_error(CMD, rc, first.strategy, first.length,
                                       first.h, first.alpha, top, budget);
            }
        }
        rc = plan_group(s, todo, i, j, tb, sink, ctx);
        bptt_table_free(tb);
        if (rc)
            return rc;
        i = j;
    }
    return 0;
}
