/* record_check.c: the records of a sweep file checked against its grid
 * (records.h): one record whole, and a finished file whole.  Nothing read
 * back is trusted: every record is parsed whole before any of it is used. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "budget.h"
#include "numbers.h"
#include "io/planrec.h"
#include "json.h"
#include "records.h"

size_t bptt_records_file_cap(const bptt_grid *g)
{
    const size_t n = g->n_points;
    if (n > (SIZE_MAX / 2 - BPTT_RECORDS_HEADER_MAX) / BPTT_RECORDS_RECORD_MAX)
        return SIZE_MAX / 2;
    return BPTT_RECORDS_HEADER_MAX + n * BPTT_RECORDS_RECORD_MAX;
}

/* The reason a check failed, into why[cap]. */
static void say(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
}

/* Whether member `key` of r holds the grid's value `want` of an axis of
 * kind `kind`: 0, or -1 with why set. */
static int same_value(const bptt_json *r, const char *key, int kind,
                      const char *want, char *why, size_t cap)
{
    const bptt_json *v = bptt_json_get(r, key);
    if (!v) {
        say(why, cap, "the record has no \"%s\"", key);
        return -1;
    }
    const int type = kind == BPTT_GRID_INT ? BPTT_JSON_NUMBER
                                           : BPTT_JSON_STRING;
    if (v->type != type || strcmp(v->text, want) != 0) {
        snprintf(why, cap, "its \"%s\" is %.60s, not this point's %.60s",
                 key, v->text ? v->text : "not a value", want);
        return -1;
    }
    return 0;
}

/* The members a record of the mode always holds, whatever its point's
 * fate (a feasible plan, an infeasible one, a run, a failed run). */
static int mode_fields(const bptt_grid *g, const bptt_json *r, char *why,
                       size_t cap)
{
    if (g->mode == BPTT_GRID_PLAN) {
        static const char *const need[] = {"memory", "full_peak_slots",
                                           "min_memory", "forward_ops",
                                           "peak_slots"};
        for (size_t i = 0; i < sizeof need / sizeof *need; i++) {
            const bptt_json *v = bptt_json_get(r, need[i]);
            if (!v || (v->type != BPTT_JSON_NUMBER &&
                       v->type != BPTT_JSON_NULL)) {
                say(why, cap, "the record has no number \"%s\"", need[i]);
                return -1;
            }
        }
        return 0;
    }
    const bptt_json *e = bptt_json_get(r, "error");
    const bptt_json *rss = bptt_json_get(r, "rss_peak_bytes");
    if ((e && e->type == BPTT_JSON_STRING) ||
        (rss && rss->type == BPTT_JSON_NUMBER))
        return 0;
    say(why, cap, "the record has neither \"rss_peak_bytes\" (a run) nor "
        "\"error\" (an infeasible point)");
    return -1;
}

/* ---- a plan-mode record against its point ---------------------------------
 *
 * A plan-mode record is a function of its point, so a forged one (a
 * feasible point called infeasible, a budget or a smallest budget not the
 * point's, counts that do not add up) need not be taken on trust.  What
 * needs no table is checked exactly: the strategy, length, alpha, budget,
 * full BPTT's peak and the least feasible budget; whether the point is
 * feasible (null counts) or not; the backward ops (one a step), the
 * recomputations (the forward ops past the first sweep), the peak within
 * the budget, the forward ops of a strategy whose cost is known without a
 * table; and the record must be, byte for byte, what the sweep writes from
 * those values and its counts (bptt_plan_record_json).  The forward ops of
 * a strategy that needs a table, and the peak and actions below their
 * bounds, are taken as written: recomputing them is the sweep's work. */

/* member key of r as a whole number >= 0: 1, or 0. */
static int whole_member(const bptt_json *r, const char *key, int64_t *out)
{
    const bptt_json *v = bptt_json_get(r, key);
    if (!v || v->type != BPTT_JSON_NUMBER || !v->text[0])
        return 0;
    int64_t x;
    if (bptt_parse_whole(v->text, strlen(v->text), &x) != 0 || x < 0)
        return 0;
    *out = x;
    return 1;
}

/* The text of member key of r, for a message. */
static const char *member_text(const bptt_json *r, const char *key)
{
    const bptt_json *v = bptt_json_get(r, key);
    return !v ? "missing" : v->type == BPTT_JSON_NULL ? "null"
           : v->text ? v->text : "not a value";
}

/* The first member in which r and want (what the sweep writes) differ,
 * named in why. */
static void first_difference(const bptt_json *r, const bptt_json *want,
                             char *why, size_t cap)
{
    const size_t n = r->n > want->n ? r->n : want->n;
    for (size_t i = 0; i < n; i++) {
        if (i >= r->n) {
            say(why, cap, "the record has no \"%s\"", want->keys[i]);
            return;
        }
        if (i >= want->n) {
            say(why, cap, "\"%s\" is not a member a plan-mode record has",
                r->keys[i]);
            return;
        }
        if (strcmp(r->keys[i], want->keys[i]) != 0) {
            say(why, cap, "\"%s\" where a plan-mode record has \"%s\"",
                r->keys[i], want->keys[i]);
            return;
        }
        const char *a = member_text(r, r->keys[i]);
        const char *b = member_text(want, want->keys[i]);
        if (r->items[i].type != want->items[i].type || strcmp(a, b) != 0) {
            say(why, cap, "its \"%s\" is %.60s, not this point's %.60s",
                r->keys[i], a, b);
            return;
        }
    }
    say(why, cap, "it is not written as this sweep writes its records");
}

/* Record r (line[0..len)) of plan point k against what the point makes
 * it: 0, -1 with why set, or -2 (out of memory). */
static int plan_record_check(const bptt_grid *g, size_t k, const bptt_json *r,
                             const char *line, size_t len, char *why,
                             size_t cap)
{
    bptt_grid_plan p;
    if (bptt_grid_plan_point(g, k, &p) != BPTT_OK || !p.strategy ||
        p.min < 0)
        return 0; /* a budget of no units: refused before any work */
    const int feasible = p.budget >= p.min;
    bptt_plan_stats st;
    memset(&st, 0, sizeof st);
    char least[32], have[32];
    bptt_slots_text(least, sizeof least, p.min, p.h);
    bptt_slots_text(have, sizeof have, p.budget, p.h);
    if (feasible) {
        static const char *const counts[] = {"forward_ops", "recompute_ops",
                                             "backward_ops", "actions"};
        int64_t v[4];
        for (int i = 0; i < 4; i++)
            if (!whole_member(r, counts[i], &v[i])) {
                say(why, cap, "its \"%s\" is %.60s, not a count, but this "
                    "point is feasible (budget %s slots, the least %s)",
                    counts[i], member_text(r, counts[i]), have, least);
                return -1;
            }
        st.forward_ops = v[0];
        st.recompute_ops = v[1];
        st.backward_ops = v[2];
        st.n_actions = (size_t)v[3];
        const int64_t t = (int64_t)p.length;
        if (st.backward_ops != t) {
            say(why, cap, "its \"backward_ops\" is %lld, not this point's "
                "length %lld (a plan does one backward op a step)",
                (long long)st.backward_ops, (long long)t);
            return -1;
        }
        if (st.forward_ops < t || st.recompute_ops != st.forward_ops - t) {
            say(why, cap, "its \"forward_ops\" %lld and \"recompute_ops\" "
                "%lld do not add up (the forward ops are the length, %lld, "
                "and the recomputations)", (long long)st.forward_ops,
                (long long)st.recompute_ops, (long long)t);
            return -1;
        }
        const int64_t known = bptt_strategy_known_cost(p.strategy, p.length,
                                                       p.h, p.alpha,
                                                       p.budget);
        if (known >= 0 && known != INT64_MAX && known != st.forward_ops) {
            say(why, cap, "its \"forward_ops\" is %lld, not this point's "
                "%lld", (long long)st.forward_ops, (long long)known);
            return -1;
        }
        /* the peak, in units: its slots as written, read back */
        const bptt_json *pk = bptt_json_get(r, "peak_slots");
        bptt_budget b;
        if (!pk || pk->type != BPTT_JSON_NUMBER ||
            bptt_budget_parse(pk->text, &b) != BPTT_OK ||
            b.kind != BPTT_BUDGET_SLOTS ||
            bptt_budget_units(&b, p.h, 0, &st.peak_units) != BPTT_OK) {
            say(why, cap, "its \"peak_slots\" is %.60s, not slots of this "
                "point's alpha %s", member_text(r, "peak_slots"),
                p.alpha_text);
            return -1;
        }
        if (st.peak_units > p.budget || st.peak_units < p.h) {
            say(why, cap, "its \"peak_slots\" is %.60s, %s this point's "
                "budget of %s slots", pk->text,
                st.peak_units > p.budget ? "above" : "not within", have);
            return -1;
        }
    }
    const bptt_plan_record pr = {p.strategy->name, (int64_t)p.length,
                                 p.alpha,          p.budget,
                                 p.full,           p.min,
                                 feasible ? &st : NULL, p.h};
    char fields[1024];
    const int n = bptt_plan_record_json(&pr, fields, sizeof fields);
    bptt_strbuf want = {0};
    bptt_record_start(&want, g, k);
    bptt_strbuf_printf(&want, ",%s}", fields);
    if (want.failed) {
        bptt_strbuf_free(&want);
        return -2;
    }
    int rc = 0;
    if (n < 0 || (size_t)n >= sizeof fields || want.n != len ||
        memcmp(want.p, line, len) != 0) {
        bptt_json *w = NULL;
        if (bptt_json_parse(want.p, want.n, &w, NULL) == BPTT_ENOMEM)
            rc = -2;
        else if (w)
            first_difference(r, w, why, cap);
        else
            say(why, cap, "it is not written as this sweep writes its "
                "records");
        bptt_json_free(w);
        if (rc == 0)
            rc = -1;
    }
    bptt_strbuf_free(&want);
    return rc;
}

/* ---- a run-mode record against its point ---------------------------------
 *
 * A run's timings, memory and losses come from training, which is not
 * redone; what its point and its own sizes determine is checked: the
 * budget as written and in bytes (a share of full BPTT's checkpoint bytes,
 * or slots of a hidden state's), full BPTT's checkpoint bytes, the
 * budget feasible for the strategy, the planned peak within it, the
 * backward ops (one a step), the forward ops (the length and the
 * recomputations; the plan's own), and the forward ops of a strategy
 * whose cost is known without a table.  An "error" record (an infeasible
 * point) holds no sizes: that it is infeasible is taken as written. */
static int run_record_check(const bptt_grid *g, size_t k, const bptt_json *r,
                            char *why, size_t cap)
{
    if (!bptt_json_get(r, "rss_peak_bytes"))
        return 0;
    size_t idx[BPTT_GRID_AXES];
    bptt_grid_decode(g, k, idx);
    const char *spec = bptt_grid_value(g, idx, BPTT_GK_MEMORY);
    const bptt_json *given = bptt_json_get(r, "memory_given");
    if (!given || given->type != BPTT_JSON_STRING ||
        strcmp(given->text, spec) != 0) {
        say(why, cap, "its \"memory_given\" is %.60s, not this point's "
            "%.60s", member_text(r, "memory_given"), spec);
        return -1;
    }
    static const char *const need[] = {
        "length", "memory_budget_bytes", "hidden_state_bytes",
        "internal_state_bytes", "full_checkpoint_bytes", "forward_ops",
        "recompute_ops", "backward_ops", "plan_forward_ops",
        "predicted_checkpoint_peak_bytes"};
    enum { T, BUDGET, HID, INTL, FULL, FWD, REC, BWD, PLANFWD, PRED, N };
    int64_t v[N];
    for (int i = 0; i < N; i++)
        if (!whole_member(r, need[i], &v[i])) {
            say(why, cap, "its \"%s\" is %.60s, not a whole number >= 0",
                need[i], member_text(r, need[i]));
            return -1;
        }
    const bptt_json *sn = bptt_json_get(r, "strategy");
    const bptt_strategy *st =
        sn && sn->type == BPTT_JSON_STRING ? bptt_strategy_find(sn->text)
                                           : NULL;
    if (!st) {
        say(why, cap, "its \"strategy\" is %.60s, not a strategy",
            member_text(r, "strategy"));
        return -1;
    }
    if (v[T] < 1 || v[HID] < 1 || v[INTL] < v[HID] ||
        v[INTL] > INT64_MAX / (v[T] > 1 ? v[T] - 1 : 1)) {
        say(why, cap, "its sizes (\"length\" %lld, \"hidden_state_bytes\" "
            "%lld, \"internal_state_bytes\" %lld) are no run's",
            (long long)v[T], (long long)v[HID], (long long)v[INTL]);
        return -1;
    }
    const int64_t full = v[INTL] * (v[T] > 1 ? v[T] - 1 : 1);
    if (v[FULL] != full) {
        say(why, cap, "its \"full_checkpoint_bytes\" is %lld, not its "
            "internal state's bytes a step but the last, %lld",
            (long long)v[FULL], (long long)full);
        return -1;
    }
    /* the budget as bptt run resolved it (budget.h), from these sizes */
    int64_t bytes = -1;
    bptt_units u;
    bptt_budget_resolved br;
    if (bptt_units_from_bytes(&u, v[HID], v[INTL]) == BPTT_OK) {
        const bptt_budget_sizes z = {(size_t)v[T], u.hidden_units,
                                     u.internal_units, u.quantum};
        if (bptt_budget_resolve(spec, &z, BPTT_BUDGET_UNIT_REQUIRED, &br,
                                NULL, 0) == BPTT_OK)
            bytes = br.bytes;
    }
    if (bytes >= 0 && v[BUDGET] != bytes) {
        say(why, cap, "its \"memory_budget_bytes\" is %lld, not this "
            "point's %.60s of its sizes, %lld bytes", (long long)v[BUDGET],
            spec, (long long)bytes);
        return -1;
    }
    const int64_t least = bptt_strategy_min_budget(st, (size_t)v[T], v[HID],
                                                   v[INTL], NULL);
    if (least >= 0 && v[BUDGET] < least) {
        say(why, cap, "it is a run of a budget of %lld bytes, below the "
            "least feasible for %s at length %lld, %lld bytes (an "
            "infeasible point has an \"error\")", (long long)v[BUDGET],
            st->name, (long long)v[T], (long long)least);
        return -1;
    }
    if (v[PRED] > v[BUDGET] || v[PRED] < v[HID]) {
        say(why, cap, "its \"predicted_checkpoint_peak_bytes\" is %lld, "
            "not within its budget of %lld bytes", (long long)v[PRED],
            (long long)v[BUDGET]);
        return -1;
    }
    if (v[BWD] != v[T]) {
        say(why, cap, "its \"backward_ops\" is %lld, not its length %lld "
            "(a plan does one backward op a step)", (long long)v[BWD],
            (long long)v[T]);
        return -1;
    }
    if (v[FWD] < v[T] || v[REC] != v[FWD] - v[T] || v[PLANFWD] != v[FWD]) {
        say(why, cap, "its \"forward_ops\" %lld, \"recompute_ops\" %lld "
            "and \"plan_forward_ops\" %lld do not add up (the forward ops "
            "are the length, %lld, and the recomputations, as planned)",
            (long long)v[FWD], (long long)v[REC], (long long)v[PLANFWD],
            (long long)v[T]);
        return -1;
    }
    const int64_t known = bptt_strategy_known_cost(st, (size_t)v[T], v[HID],
                                                   v[INTL], v[BUDGET]);
    if (known >= 0 && known != INT64_MAX && known != v[FWD]) {
        say(why, cap, "its \"forward_ops\" is %lld, not this point's %lld",
            (long long)v[FWD], (long long)known);
        return -1;
    }
    return 0;
}

int bptt_record_check(const bptt_grid *g, const char *line, size_t len,
                      size_t want, size_t *point, char *why, size_t cap)
{
    bptt_json *r = NULL;
    const int rc = bptt_json_parse(line, len, &r, NULL);
    if (rc == BPTT_ENOMEM)
        return BPTT_ENOMEM;
    int bad = BPTT_EINVAL;
    if (rc != BPTT_OK || r->type != BPTT_JSON_OBJECT) {
        say(why, cap, "not a JSON object");
        goto out;
    }
    for (size_t i = 0; i < r->n; i++)
        if (r->items[i].type == BPTT_JSON_ARRAY ||
            r->items[i].type == BPTT_JSON_OBJECT) {
            say(why, cap, "\"%s\" holds an array or an object (a record is "
                "flat)", r->keys[i]);
            goto out;
        }
    if (r->n < 2 || strcmp(r->keys[0], "point") != 0 ||
        r->items[0].type != BPTT_JSON_NUMBER ||
        strcmp(r->keys[1], "memory_spec") != 0 ||
        r->items[1].type != BPTT_JSON_STRING) {
        say(why, cap, "the record does not start with \"point\" and "
            "\"memory_spec\"");
        goto out;
    }
    const char *t = r->items[0].text;
    size_t k = 0;
    int digits = t[0] != '\0' && (t[0] != '0' || t[1] == '\0');
    for (const char *p = t; digits && *p; p++) {
        if (*p < '0' || *p > '9' || k > BPTT_GRID_MAX_POINTS)
            digits = 0;
        else
            k = 10 * k + (size_t)(*p - '0');
    }
    if (!digits || k >= g->n_points) {
        say(why, cap, "point %.40s is not in this grid of %zu points", t,
            g->n_points);
        goto out;
    }
    if (want != SIZE_MAX && k != want) {
        say(why, cap, "the record is of point %zu, not of point %zu", k,
            want);
        goto out;
    }
    size_t idx[BPTT_GRID_AXES];
    bptt_grid_decode(g, k, idx);
    if (strcmp(r->items[1].text,
               bptt_grid_value(g, idx, BPTT_GK_MEMORY)) != 0) {
        say(why, cap, "\"memory_spec\" is not this point's %s",
            bptt_grid_value(g, idx, BPTT_GK_MEMORY));
        goto out;
    }
    /* every axis the mode writes into its records (plan mode does not
     * write threads, which do not change a plan) */
    for (int a = 0; a < BPTT_GRID_AXES; a++) {
        if (!g->applies[a] || !g->ax[a].n || a == BPTT_GK_MEMORY ||
            (a == BPTT_GK_THREADS && g->mode == BPTT_GRID_PLAN))
            continue;
        if (same_value(r, bptt_grid_keys[a].name, bptt_grid_keys[a].kind,
                       bptt_grid_value(g, idx, a), why, cap) != 0)
            goto out;
    }
    if (mode_fields(g, r, why, cap) != 0)
        goto out;
    if (g->mode == BPTT_GRID_PLAN) {
        const int c = plan_record_check(g, k, r, line, len, why, cap);
        if (c == -2)
            bad = BPTT_ENOMEM;
        if (c != 0)
            goto out;
    } else if (run_record_check(g, k, r, why, cap) != 0) {
        goto out;
    }
    *point = k;
    bad = BPTT_OK;
out:
    bptt_json_free(r);
    return bad;
}

int bptt_record_keep(char **rec, size_t k, const char *line, size_t len)
{
    if (rec[k])
        return strlen(rec[k]) == len + 1 && memcmp(rec[k], line, len) == 0
                   ? BPTT_OK
                   : BPTT_EINVAL;
    rec[k] = malloc(len + 2);
    if (!rec[k])
        return BPTT_ENOMEM;
    memcpy(rec[k], line, len);
    rec[k][len] = '\n';
    rec[k][len + 1] = '\0';
    return BPTT_OK;
}

/* ---- a finished FILE ---------------------------------------------------- */

/* jsonl: after the header, one record a line for every point in order;
 * *nomem set when memory ran out. */
static size_t whole_jsonl(const bptt_grid *g, const char *body, size_t len,
                          char *why, size_t cap, int *nomem)
{
    size_t k = 0;
    const char *p = body, *end = body + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            say(why, cap, "its last line is cut short");
            return k;
        }
        if (k == g->n_points) {
            say(why, cap, "more lines than the grid has points");
            return k;
        }
        size_t got;
        char w[200];
        const int rc = bptt_record_check(g, p, (size_t)(nl - p), k, &got, w,
                                         sizeof w);
        if (rc == BPTT_ENOMEM) {
            *nomem = 1;
            return k;
        }
        if (rc != BPTT_OK) {
            char ln[64];
            snprintf(ln, sizeof ln, "line %zu", k + 2);
            snprintf(why, cap, "%s: %s", ln, w);
            return k;
        }
        k++;
        p = nl + 1;
    }
    if (k < g->n_points)
        say(why, cap, "records are missing");
    return k;
}

/* csv: after the "# header" line, the header row and one row a point,
 * each starting with its point (rows are counted as RFC 4180 has them: a
 * newline inside quotes is part of its field). */
static size_t whole_csv(const bptt_grid *g, const char *body, size_t len,
                        char *why, size_t cap)
{
    size_t rows = 0, k = 0;
    int quoted = 0, at_start = 1;
    for (size_t i = 0; i < len; i++) {
        const char c = body[i];
        if (at_start && rows > 0) {
            /* a data row: its first field is its point */
            char want[32];
            const int n = snprintf(want, sizeof want, "%zu,", k);
            if (k >= g->n_points || (size_t)n > len - i ||
                memcmp(body + i, want, (size_t)n) != 0) {
                say(why, cap, k >= g->n_points
                    ? "more rows than the grid has points"
                    : "a row does not start with its point");
                return k;
            }
        }
        at_start = 0;
        if (c == '"')
            quoted = !quoted;
        else if (c == '\n' && !quoted) {
            if (rows > 0)
                k++;
            rows++;
            at_start = 1;
        }
    }
    if (!at_start || quoted) {
        say(why, cap, "its last row is cut short");
        return k;
    }
    if (rows == 0)
        say(why, cap, "it has no header row");
    else if (k < g->n_points)
        say(why, cap, "rows are missing");
    return k;
}

int bptt_records_whole(const bptt_grid *g, const char *text, size_t len,
                       size_t *records, char *why, size_t cap)
{
    const char *nl = memchr(text, '\n', len);
    why[0] = '\0';
    if (!nl) {
        *records = 0;
        say(why, cap, "no header line");
        return BPTT_EINVAL;
    }
    const char *body = nl + 1;
    const size_t n = len - (size_t)(body - text);
    int nomem = 0;
    *records = g->csv ? whole_csv(g, body, n, why, cap)
                      : whole_jsonl(g, body, n, why, cap, &nomem);
    return nomem ? BPTT_ENOMEM : why[0] ? BPTT_EINVAL : BPTT_OK;
}
