/* record_check.c: the records of a sweep file checked against its grid
 * (records.h): one record whole, and a finished file whole.  Nothing read
 * back is trusted: every record is parsed whole before any of it is used. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
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
