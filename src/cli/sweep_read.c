/* sweep_read.c: what `bptt sweep` reads back and trusts nothing of: its
 * --config file, FILE.partial, the parts of FILE.parts and a finished
 * FILE.  Every such file is read whole through bptt_readback (regular
 * files only, bounded, no NUL), and every record in it is parsed whole and
 * checked against the grid before it is kept (sweep.h says what is
 * checked). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/readback.h"
#include "json.h"
#include "sweep.h"

#define CMD SWEEP_CMD

size_t sweep_file_cap(const sweep *s)
{
    const size_t n = s->g.n_points;
    if (n > (SIZE_MAX / 2 - SWEEP_HEADER_MAX) / SWEEP_RECORD_MAX)
        return SIZE_MAX / 2;
    return SWEEP_HEADER_MAX + n * SWEEP_RECORD_MAX;
}

int sweep_readback(const char *opt, const char *path, int fd, size_t max,
                   int code, const char *hint, char **text, size_t *len)
{
    int err = 0;
    bptt_text_where at = {0, 0, 0};
    const int why = bptt_readback(path, fd, max, text, len, &err, &at);
    /* "--config: 'FILE' is ..." or "FILE is ..." */
    char pre[64];
    snprintf(pre, sizeof pre, "%s%s", opt ? opt : "", opt ? ": " : "");
    const char *q = opt ? "'" : "";
    const int fail = code == SWEEP_MISSING_OK ? 1 : code;
    switch (why) {
    case BPTT_READBACK_OK: return 0;
    case BPTT_READBACK_ERRNO:
        if (err == ENOENT && code == SWEEP_MISSING_OK)
            return SWEEP_MISSING_OK;
        if (err == EISDIR)
            return cli_error(EXIT_USAGE, CMD, "%s%s%s%s is a directory, not "
                             "a file; %s", pre, q, path, q, hint);
        return cli_error(fail, CMD, "%scannot read %s%s%s (%s); %s", pre, q,
                         path, q, strerror(err), hint);
    case BPTT_READBACK_NOTFILE:
        return cli_error(EXIT_USAGE, CMD, "%s%s%s%s is %s, not a file; %s",
                         pre, q, path, q, cli_file_kind(path, fd), hint);
    case BPTT_READBACK_TOOBIG:
        return cli_error(EXIT_USAGE, CMD, "%s%s%s%s holds more than %zu "
                         "bytes, more than any such file of this sweep; %s",
                         pre, q, path, q, max, hint);
    case BPTT_READBACK_NUL:
        return cli_error(EXIT_USAGE, CMD, "%s%s:%zu:%zu holds a NUL byte; "
                         "%s", pre, path, at.line, at.column, hint);
    default:
        cli_error(1, CMD, "out of memory");
        exit(1);
    }
}

/* ---- records ------------------------------------------------------------ */

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
static int mode_fields(const sweep *s, const bptt_json *r, char *why,
                       size_t cap)
{
    if (s->g.mode == BPTT_GRID_PLAN) {
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

int sweep_record_check(const sweep *s, const char *line, size_t len,
                       size_t want, size_t *point, char *why, size_t cap)
{
    bptt_json *r = NULL;
    const int rc = bptt_json_parse(line, len, &r, NULL);
    if (rc == BPTT_ENOMEM) {
        cli_error(1, CMD, "out of memory");
        exit(1);
    }
    int bad = -1;
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
    if (!digits || k >= s->g.n_points) {
        say(why, cap, "point %.40s is not in this grid of %zu points", t,
            s->g.n_points);
        goto out;
    }
    if (want != SIZE_MAX && k != want) {
        say(why, cap, "the record is of point %zu, not of point %zu", k,
            want);
        goto out;
    }
    size_t idx[BPTT_GRID_AXES];
    bptt_grid_decode(&s->g, k, idx);
    if (strcmp(r->items[1].text,
               bptt_grid_value(&s->g, idx, BPTT_GK_MEMORY)) != 0) {
        say(why, cap, "\"memory_spec\" is not this point's %s",
            bptt_grid_value(&s->g, idx, BPTT_GK_MEMORY));
        goto out;
    }
    /* every axis the mode writes into its records (plan mode does not
     * write threads, which do not change a plan) */
    for (int a = 0; a < BPTT_GRID_AXES; a++) {
        if (!s->g.applies[a] || !s->g.ax[a].n || a == BPTT_GK_MEMORY ||
            (a == BPTT_GK_THREADS && s->g.mode == BPTT_GRID_PLAN))
            continue;
        if (same_value(r, bptt_grid_keys[a].name, bptt_grid_keys[a].kind,
                       bptt_grid_value(&s->g, idx, a), why, cap) != 0)
            goto out;
    }
    if (mode_fields(s, r, why, cap) != 0)
        goto out;
    *point = k;
    bad = 0;
out:
    bptt_json_free(r);
    return bad;
}

int sweep_keep_record(char **rec, size_t k, const char *line, size_t len)
{
    if (rec[k])
        return strlen(rec[k]) == len + 1 && memcmp(rec[k], line, len) == 0
                   ? 0
                   : -1;
    rec[k] = malloc(len + 2);
    if (!rec[k]) {
        cli_error(1, CMD, "out of memory");
        exit(1);
    }
    memcpy(rec[k], line, len);
    rec[k][len] = '\n';
    rec[k][len + 1] = '\0';
    return 0;
}

/* ---- a finished FILE ---------------------------------------------------- */

/* jsonl: after the header, one record a line for every point in order. */
static size_t whole_jsonl(const sweep *s, const char *body, size_t len,
                          char *why, size_t cap)
{
    size_t k = 0;
    const char *p = body, *end = body + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            say(why, cap, "its last line is cut short");
            return k;
        }
        if (k == s->g.n_points) {
            say(why, cap, "more lines than the grid has points");
            return k;
        }
        size_t got;
        char w[200];
        if (sweep_record_check(s, p, (size_t)(nl - p), k, &got, w,
                               sizeof w) != 0) {
            char ln[64];
            snprintf(ln, sizeof ln, "line %zu", k + 2);
            snprintf(why, cap, "%s: %s", ln, w);
            return k;
        }
        k++;
        p = nl + 1;
    }
    if (k < s->g.n_points)
        say(why, cap, "records are missing");
    return k;
}

/* csv: after the "# header" line, the header row and one row a point,
 * each starting with its point (rows are counted as RFC 4180 has them: a
 * newline inside quotes is part of its field). */
static size_t whole_csv(const sweep *s, const char *body, size_t len,
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
            if (k >= s->g.n_points || (size_t)n > len - i ||
                memcmp(body + i, want, (size_t)n) != 0) {
                say(why, cap, k >= s->g.n_points
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
    else if (k < s->g.n_points)
        say(why, cap, "rows are missing");
    return k;
}

int sweep_whole_file(const sweep *s, const char *text, size_t len,
                     size_t *records, char *why, size_t cap)
{
    const char *nl = memchr(text, '\n', len);
    why[0] = '\0';
    if (!nl) {
        *records = 0;
        say(why, cap, "no header line");
        return -1;
    }
    const char *body = nl + 1;
    const size_t n = len - (size_t)(body - text);
    *records = s->g.csv ? whole_csv(s, body, n, why, cap)
                        : whole_jsonl(s, body, n, why, cap);
    return why[0] ? -1 : 0;
}
