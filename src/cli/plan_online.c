/* plan_online.c: `bptt plan --online`: the plan the online planner
 * (online.h) makes for a sequence whose length it learns only at its end,
 * stepped --length times (told at the last step that it is the last,
 * unless --no-lookahead), its counts as the validator measured them, the
 * offline optimum of the same strategy beside them; with --curve the
 * online and the offline cost at every length up to --length under the
 * one budget (bptt_online_curve, one sweep).  Its arguments are
 * plan_args.c's, checked there; its records are the library's
 * (planrec.h).  Output is written whole at the end, or not at all. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "bptt.h"
#include "online.h"
#include "plan/alloc.h"
#include "cli.h"
#include "plan.h"
#include "io/planrec.h"

#define CMD "plan"

/* The error for a status of the online planner or its curve that no
 * earlier check caught: out of memory (exit 1), or the library's word. */
static int online_error(int rc, const char *what)
{
    if (rc == BPTT_ENOMEM)
        return cli_error(1, CMD, "out of memory %s", what);
    return cli_error(1, CMD, "%s: %s", what, bptt_strerror(rc));
}

/* The offline optimum of a's strategy at length t and budget m: without a
 * table where the strategy knows it, else from a table built for that
 * budget alone (refused, as for an offline plan, when it would not fit).
 * *cost: -1 when infeasible or too many to count. */
static int offline_cost(const plan_args *a, size_t t, int64_t m,
                        int64_t *cost, size_t *tbytes)
{
    const bptt_strategy *st = a->strategies[0];
    *tbytes = 0;
    *cost = bptt_strategy_known_cost(st, t, a->h, a->s, m);
    if (*cost == INT64_MAX)
        *cost = -1;
    if (*cost >= 0 || bptt_strategy_known_cost(st, 1, 1, 1, 1) >= 0)
        return 0;
    const bptt_table_options opts = {.threads = (int)a->threads,
                                     .min_budget = m};
    bptt_table *tb = NULL;
    const int rc = bptt_table_alloc(&tb, st, t, a->h, a->s, m, &opts);
    if (rc != BPTT_OK) {
        char budget[64], b[32];
        snprintf(budget, sizeof budget, "budget %s slots",
                 bptt_slots_text(b, sizeof b, m, a->h));
        return cli_table_error(CMD, rc, st, t, a->h, a->s, m, budget);
    }
    *cost = bptt_table_cost(tb, m);
    *tbytes = bptt_table_bytes(tb);
    bptt_table_free(tb);
    return 0;
}

/* n lengths from 1 to t, log-spaced and strictly rising, into out (every
 * length when n >= t); returns how many. */
static size_t log_points(size_t t, size_t n, size_t *out)
{
    if (n >= t || n < 2) {
        for (size_t k = 0; k < t; k++)
            out[k] = k + 1;
        return t;
    }
    size_t prev = 0;
    for (size_t k = 0; k < n; k++) {
        const double x =
            k == n - 1 ? (double)t
                       : exp(log((double)t) * (double)k / (double)(n - 1));
        size_t v = (size_t)llround(x);
        if (v <= prev)
            v = prev + 1;
        if (v > t - (n - 1 - k)) /* room for the points still to come */
            v = t - (n - 1 - k);
        out[k] = prev = v;
    }
    return n;
}

/* --online --curve: the online and the offline forward ops at every
 * length 1..T (or --points of them), from one bptt_online_curve. */
static int online_curve(const plan_args *a, bptt_strbuf *out, int64_t hb,
                        int64_t sb, int64_t mb, int64_t min_units)
{
    const bptt_strategy *st = a->strategies[0];
    const size_t t = (size_t)a->length;
    const int64_t m = a->budget[0];
    const size_t n = a->points && (size_t)a->points < t ? (size_t)a->points
                                                        : t;
    /* what it holds: two counts a length, the lengths printed, and the
     * offline table where the strategy's cost needs one */
    const int table = bptt_strategy_known_cost(st, 1, 1, 1, 1) < 0;
    const size_t tb = table ? bptt_table_bytes_needed(st, t, a->h, a->s, m,
                                                      NULL)
                            : 0;
    const double need = 2.0 * (double)t * sizeof(int64_t) +
                        (double)n * sizeof(size_t) +
                        (tb == SIZE_MAX ? HUGE_VAL : (double)tb);
    double half;
    if (bptt_memory_fits(need, 2, &half) != BPTT_OK) {
        char b[32], c[32];
        return cli_error(EXIT_USAGE, CMD, "--online --curve to length %zu "
                         "would hold %s (two counts a length%s%s), more than "
                         "half of this machine's %s; use a smaller length",
                         t, bptt_bytes_text(b, sizeof b, need),
                         table ? " and the offline table of " : "",
                         table ? st->name : "",
                         bptt_bytes_text(c, sizeof c, 2 * half));
    }
    int64_t *online = malloc(t * sizeof *online);
    int64_t *offline = malloc(t * sizeof *offline);
    size_t *lengths = malloc(n * sizeof *lengths);
    int rc = 0;
    if (!online || !offline || !lengths)
        rc = cli_error(1, CMD, "out of memory for the curve to length %zu",
                       t);
    if (rc == 0) {
        const int status = bptt_online_curve(st->name, hb, sb, mb, t,
                                             !a->no_lookahead, online,
                                             offline);
        if (status == BPTT_ETOOBIG) {
            char budget[64], s[32];
            snprintf(budget, sizeof budget, "budget %s slots",
                     bptt_slots_text(s, sizeof s, m, a->h));
            rc = cli_table_error(CMD, status, st, t, a->h, a->s, m, budget);
        } else if (status != BPTT_OK) {
            rc = online_error(status, "making the online curve");
        }
    }
    if (rc == 0) {
        const size_t k = log_points(t, n, lengths);
        const bptt_plan_record r = {st->name, a->length, a->s, m,
                                    bptt_full_peak(t, a->h, a->s), min_units,
                                    NULL, a->h};
        bptt_plan_online_curve(out, (int)a->format, &r, !a->no_lookahead,
                               lengths, k, online, offline);
    }
    free(online);
    free(offline);
    free(lengths);
    return rc;
}

/* The online planner stepped t times, its plan finished and validated;
 * 0 with *p and *st, or the error said. */
static int online_plan(const plan_args *a, bptt_online *o, size_t t,
                       bptt_plan **p, bptt_plan_stats *st, size_t *prefix,
                       double *seconds)
{
    const char *name = a->strategies[0]->name;
    const int64_t m = a->budget[0];
    *p = NULL;
    /* the actions handed out are kept: at most BPTT_ONLINE_ACTIONS_MAX a
     * step */
    const double log_bytes =
        (double)t * BPTT_ONLINE_ACTIONS_MAX * sizeof(bptt_action);
    double half;
    if (bptt_memory_fits(log_bytes, 2, &half) != BPTT_OK) {
        char b[32], c[32];
        return cli_error(EXIT_USAGE, CMD, "the online planner stepped %zu "
                         "times may hand out %s of actions, more than half "
                         "of this machine's %s; use a smaller length", t,
                         bptt_bytes_text(b, sizeof b, log_bytes),
                         bptt_bytes_text(c, sizeof c, 2 * half));
    }
    const double t0 = cli_seconds();
    bptt_action acts[BPTT_ONLINE_ACTIONS_MAX];
    size_t n;
    for (size_t i = 1; i <= t; i++) {
        const int rc = bptt_online_next(o, !a->no_lookahead && i == t, acts,
                                        &n);
        if (rc != BPTT_OK)
            return online_error(rc, "stepping the online planner");
    }
    /* its plan must fit before it is made */
    const int64_t c = bptt_online_cost(o);
    int rc = c < 0 ? cli_error(EXIT_USAGE, CMD, "the online %s plan for "
                               "length %zu at budget %" PRId64 " has too many "
                               "forward ops to count; use a smaller length "
                               "or a larger budget", name, t, m)
                   : cli_plan_cost_fits(CMD, name, t, m, c);
    if (rc)
        return rc;
    rc = bptt_online_finish(o, p, prefix);
    *seconds = cli_seconds() - t0;
    if (rc == BPTT_ETOOBIG)
        return cli_error(EXIT_USAGE, CMD, "the reversal of the online %s plan "
                         "for length %zu at budget %" PRId64 " needs a table "
                         "of more than half of this machine's memory; use a "
                         "smaller length", name, t, m);
    if (rc != BPTT_OK)
        return online_error(rc, "finishing the online plan");
    rc = bptt_plan_validate(*p, st);
    if (rc == BPTT_ENOMEM)
        rc = online_error(rc, "validating the online plan");
    else if (rc != BPTT_OK)
        /* a planner bug: never print an unchecked plan as valid */
        rc = cli_error(1, CMD, "internal error: the online %s plan failed "
                       "validation at action %zu (%s)", name, st->bad_action,
                       bptt_violation_str(st->violation));
    else if ((*p)->hidden_units != a->h || (*p)->internal_units != a->s ||
             (*p)->budget != m)
        rc = cli_error(1, CMD, "internal error: the online plan is in units "
                       "other than the budget's");
    if (rc) {
        bptt_plan_free(*p);
        *p = NULL;
    }
    return rc;
}

int plan_online(const plan_args *a)
{
    const bptt_strategy *strategy = a->strategies[0];
    const char *name = strategy->name;
    const size_t t = (size_t)a->length;
    const int64_t m = a->budget[0];
    const int64_t q = a->quantum ? a->quantum : 1;
    if (m > INT64_MAX / q || a->s > INT64_MAX / q)
        return cli_error(EXIT_USAGE, CMD, "--memory: %s is more bytes than "
                         "can be planned online (give a smaller budget)",
                         a->budget_text[0]);
    const int64_t hb = a->h * q, sb = a->s * q, mb = m * q;
    /* the smallest feasible budget, as the planner says it */
    bptt_online *o = NULL;
    int64_t min_bytes = -1;
    int rc = bptt_online_new(&o, name, hb, sb, 0, &min_bytes);
    bptt_online_free(o);
    o = NULL;
    const int64_t min_units = min_bytes >= 0 ? min_bytes / q : -1;
    if (rc == BPTT_EINFEASIBLE && m < min_units) {
        char b[32], mm[32], al[32], bytes[96] = "";
        bptt_slots_text(b, sizeof b, m, a->h);
        bptt_slots_text(mm, sizeof mm, min_units, a->h);
        bptt_slots_text(al, sizeof al, a->s, a->h);
        if (a->quantum) /* --cell: the bytes too */
            snprintf(bytes, sizeof bytes, " (%" PRId64 " bytes)", min_bytes);
        return cli_error(EXIT_INFEASIBLE, CMD,
                         "budget %s slots (%s) is infeasible for online %s at "
                         "any length, alpha %s; the smallest feasible budget "
                         "is %s slots%s", b, a->budget_text[0], name, al, mm,
                         bytes);
    }
    if (a->fail_alloc)
        bptt_alloc_fail_at((size_t)a->fail_alloc);
    bptt_strbuf out = {0};
    if (a->curve) {
        rc = online_curve(a, &out, hb, sb, mb, min_units);
    } else {
        int64_t off;
        size_t tbytes = 0, prefix = 0;
        bptt_plan *p = NULL;
        bptt_plan_stats st;
        double seconds = 0;
        rc = offline_cost(a, t, m, &off, &tbytes);
        /* the offline optimum is the least any plan costs: the online
         * plan is refused at once where even that one would not fit */
        if (rc == 0 && off >= 0)
            rc = cli_plan_cost_fits(CMD, name, t, m, off);
        if (rc == 0) {
            const int status = bptt_online_new(&o, name, hb, sb, mb, NULL);
            if (status != BPTT_OK)
                rc = online_error(status, "starting the online planner");
        }
        if (rc == 0)
            rc = online_plan(a, o, t, &p, &st, &prefix, &seconds);
        bptt_online_free(o);
        if (rc == 0) {
            const bptt_plan_record r = {name, a->length, a->s, m,
                                        bptt_full_peak(t, a->h, a->s),
                                        min_units, &st, a->h};
            const bptt_plan_sizes z = {a->cell ? a->cell->name : NULL,
                                       a->layers, a->hidden, a->batch,
                                       a->quantum};
            const bptt_plan_online on = {!a->no_lookahead, prefix, off};
            const int json = a->format == FORMAT_JSON;
            bptt_plan_online_header(&out, (int)a->format);
            bptt_plan_online_row(&out, (int)a->format, &r, &z, seconds,
                                 tbytes, &on, a->actions && json ? p : NULL);
            if (a->actions && !json)
                bptt_plan_actions(&out, (int)a->format, p, a->h);
        }
        bptt_plan_free(p);
    }
    if (out.failed && rc == 0)
        rc = cli_error(1, CMD, "out of memory");
    if (rc == 0 && out.p)
        fwrite(out.p, 1, out.n, stdout); /* errors: main.c's finish */
    bptt_strbuf_free(&out);
    return rc;
}
