/* grid.c: the grid of a sweep (see grid.h): settings, the config file,
 * values, lists and ranges, the grid built and checked; its points and its
 * identity in the header line are grid_points.c's. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "budget.h"
#include "numbers.h"
#include "data.h"
#include "grid.h"
#include "model.h"

enum { PLAN = BPTT_GRID_PLAN, RUN = BPTT_GRID_RUN };

const bptt_grid_key_def bptt_grid_keys[BPTT_GRID_KEYS] = {
    [BPTT_GK_STRATEGY] = {"strategy", BPTT_GRID_NAME, PLAN | RUN, 0, 0},
    [BPTT_GK_CELL] = {"cell", BPTT_GRID_NAME, RUN, 0, 0},
    [BPTT_GK_LAYERS] = {"layers", BPTT_GRID_INT, RUN, 1, BPTT_MAX_LAYERS},
    [BPTT_GK_INPUT] = {"input", BPTT_GRID_INT, RUN, 1, ((int64_t)1 << 24) - 1},
    [BPTT_GK_HIDDEN] = {"hidden", BPTT_GRID_INT, RUN, 1,
                        ((int64_t)1 << 24) - 1},
    [BPTT_GK_BATCH] = {"batch", BPTT_GRID_INT, RUN, 1, ((int64_t)1 << 24) - 1},
    [BPTT_GK_LENGTH] = {"length", BPTT_GRID_INT, PLAN | RUN, 1,
                        INT32_MAX - 1},
    [BPTT_GK_ALPHA] = {"alpha", BPTT_GRID_INT, PLAN, 1, 1000000},
    [BPTT_GK_MEMORY] = {"memory", BPTT_GRID_BUDGET, PLAN | RUN, 0, 0},
    [BPTT_GK_THREADS] = {"threads", BPTT_GRID_INT, PLAN | RUN, 1, 4096},
    [BPTT_GK_SEED] = {"seed", BPTT_GRID_INT, RUN, 0, INT64_MAX / 2},
    [BPTT_GK_MODE] = {"mode", BPTT_GRID_FIXED, 0, 0, 0},
    [BPTT_GK_OUT] = {"out", BPTT_GRID_FIXED, 0, 0, 0},
    [BPTT_GK_FORMAT] = {"format", BPTT_GRID_FIXED, 0, 0, 0},
    [BPTT_GK_INFEASIBLE] = {"infeasible", BPTT_GRID_FIXED, 0, 0, 0},
    [BPTT_GK_ITERS] = {"iters", BPTT_GRID_FIXED, 0, 1, 1000000},
    [BPTT_GK_TASK] = {"task", BPTT_GRID_FIXED, 0, 0, 0},
    [BPTT_GK_OPTIMIZER] = {"optimizer", BPTT_GRID_FIXED, 0, 0, 0},
    [BPTT_GK_LR] = {"lr", BPTT_GRID_FIXED, 0, 0, 0},
};

/* The error line into err; BPTT_EINVAL. */
__attribute__((format(printf, 2, 3))) static int fail(bptt_strbuf *err,
                                                     const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (err && n >= 0) {
        err->n = 0;
        if ((size_t)n < sizeof small) {
            bptt_strbuf_add(err, small, (size_t)n);
        } else if (bptt_strbuf_add(err, "", 0) == 0) {
            char *big = malloc((size_t)n + 1);
            if (big) {
                va_start(ap, fmt);
                vsnprintf(big, (size_t)n + 1, fmt, ap);
                va_end(ap);
                bptt_strbuf_add(err, big, (size_t)n);
                free(big);
            }
        }
    }
    return BPTT_EINVAL;
}

static char *dup_text(const char *s)
{
    const size_t n = strlen(s) + 1;
    char *p = malloc(n);
    return p ? memcpy(p, s, n) : NULL;
}

int bptt_grid_key_find(const char *name)
{
    for (int k = 0; k < BPTT_GRID_KEYS; k++)
        if (strcmp(bptt_grid_keys[k].name, name) == 0)
            return k;
    return -1;
}

const char *bptt_grid_mode_name(int mode)
{
    return mode == RUN ? "run" : "plan";
}

int bptt_grid_set(bptt_grid *g, int k, const char *text, const char *label)
{
    char *t = dup_text(text), *l = dup_text(label);
    if (!t || !l) {
        free(t);
        free(l);
        return BPTT_ENOMEM;
    }
    free(g->text[k]);
    free(g->label[k]);
    g->text[k] = t;
    g->label[k] = l;
    return BPTT_OK;
}

void bptt_grid_free(bptt_grid *g)
{
    for (int k = 0; k < BPTT_GRID_KEYS; k++) {
        free(g->text[k]);
        free(g->label[k]);
    }
    for (int k = 0; k < BPTT_GRID_AXES; k++) {
        for (size_t i = 0; i < g->ax[k].n; i++)
            free(g->ax[k].text[i]);
        free(g->ax[k].text);
        free(g->ax[k].num);
    }
    free(g->desc);
    memset(g, 0, sizeof *g);
}

/* ---- the config file ---------------------------------------------------- */

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' ||
                     s[n - 1] == '\n'))
        s[--n] = '\0';
    return s;
}

int bptt_grid_config_has_settings(const char *text, size_t len)
{
    for (const char *p = text; p < text + len; p++) {
        while (p < text + len && (*p == ' ' || *p == '\t' || *p == '\r'))
            p++;
        if (p < text + len && *p != '\n' && *p != '#')
            return 1;
        while (p < text + len && *p != '\n')
            p++;
    }
    return 0;
}

/* The lines of text (a copy, len bytes and a NUL, changed in place). */
static int config_lines(bptt_grid *g, const char *path, char *text,
                        size_t len, const int *locked, bptt_strbuf *err)
{
    int first_line[BPTT_GRID_KEYS] = {0};
    int lineno = 0;
    char *const end = text + len;
    for (char *line = text, *next; line < end; line = next) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        next = nl ? nl + 1 : end;
        if (nl)
            *nl = '\0';
        lineno++;
        /* a comment starts with # at the start or after white space */
        for (char *p = line; *p; p++)
            if (*p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
                *p = '\0';
                break;
            }
        char *l = trim(line);
        if (!*l)
            continue;
        char *eq = strchr(l, '=');
        if (!eq)
            return fail(err, "%s:%d: '%s' is not 'key = value' (e.g. length "
                        "= 100:1000:100)", path, lineno, l);
        *eq = '\0';
        char *key = trim(l), *val = trim(eq + 1);
        const int k = bptt_grid_key_find(key);
        if (k < 0)
            return fail(err, "%s:%d: unknown key '%s' (keys: strategy, cell, "
                        "layers, input, hidden, batch, length, alpha, memory, "
                        "threads, seed, mode, out, format, infeasible, iters, "
                        "task, optimizer, lr)", path, lineno, key);
        if (!*val)
            return fail(err, "%s:%d: %s has no value (e.g. %s = ...; or "
                        "remove the line)", path, lineno, key, key);
        if (first_line[k])
            return fail(err, "%s:%d: %s is set twice (first on line %d); "
                        "keep one line", path, lineno, key, first_line[k]);
        first_line[k] = lineno;
        if (locked && locked[k])
            continue; /* the command line wins */
        char label[4200];
        snprintf(label, sizeof label, "%.4000s:%d: %s", path, lineno, key);
        if (bptt_grid_set(g, k, val, label) != BPTT_OK)
            return BPTT_ENOMEM;
    }
    return BPTT_OK;
}

int bptt_grid_config(bptt_grid *g, const char *path, const char *text,
                     size_t len, const int *locked, bptt_strbuf *err)
{
    char *copy = malloc(len + 1);
    if (!copy)
        return BPTT_ENOMEM;
    if (len)
        memcpy(copy, text, len);
    copy[len] = '\0';
    const int rc = config_lines(g, path, copy, len, locked, err);
    free(copy);
    return rc;
}

/* ---- values: integers, ranges, budgets ---------------------------------- */

/* A decimal integer filling all of text (no sign but '-', no spaces). */
static int parse_i64(const char *text, int64_t *out)
{
    return bptt_parse_whole(text, strlen(text), out);
}

static int vals_push(bptt_grid_axis *v, const char *text, int64_t num)
{
    if (v->n % 64 == 0) {
        char **t = realloc(v->text, (v->n + 64) * sizeof *t);
        if (t)
            v->text = t;
        int64_t *x = realloc(v->num, (v->n + 64) * sizeof *x);
        if (x)
            v->num = x;
        if (!t || !x)
            return BPTT_ENOMEM;
    }
    if (!(v->text[v->n] = dup_text(text)))
        return BPTT_ENOMEM;
    v->num[v->n++] = num;
    return BPTT_OK;
}

/* Expands start:stop[:step | :*factor] (integers) with `suffix` appended to
 * every value; label and item name it in errors. */
static int expand_range(const char *label, const char *item, char **part,
                        int n_parts, const char *suffix, int64_t lo,
                        int64_t hi, bptt_grid_axis *v, bptt_strbuf *err)
{
    int64_t start, stop, step = 1;
    int geometric = 0;
    if (parse_i64(part[0], &start) != 0 || parse_i64(part[1], &stop) != 0)
        return fail(err, "%s: range '%s' needs whole-number ends (e.g. "
                    "100:1000:100 or 10:10000:*10)", label, item);
    if (n_parts == 3) {
        const char *st = part[2];
        if (*st == '*') {
            geometric = 1;
            st++;
        }
        if (parse_i64(st, &step) != 0 || step < (geometric ? 2 : 1))
            return fail(err, "%s: range '%s' has a bad step '%s' (give a "
                        "whole number >= 1, or *F with a whole factor F >= "
                        "2)", label, item, part[2]);
    }
    if (start > stop)
        return fail(err, "%s: range '%s' runs downwards (give start <= stop, "
                    "e.g. %s:%s)", label, item, part[1], part[0]);
    if (geometric && start < 1)
        return fail(err, "%s: geometric range '%s' must start at 1 or more",
                    label, item);
    if (start < lo || stop > hi)
        return fail(err, "%s: range '%s' leaves %" PRId64 "..%" PRId64
                    " (give values in that interval)", label, item, lo, hi);
    /* an arithmetic range's size is known before any value is made: one
     * past the cap is refused at once, not after filling the axis */
    if (!geometric && ((uint64_t)stop - (uint64_t)start) / (uint64_t)step >=
                          (uint64_t)(BPTT_GRID_MAX_VALUES - v->n))
        return fail(err, "%s: more than %d values (use a larger step)",
                    label, BPTT_GRID_MAX_VALUES);
    for (int64_t x = start;;) {
        if (v->n >= BPTT_GRID_MAX_VALUES)
            return fail(err, "%s: more than %d values (use a larger step)",
                        label, BPTT_GRID_MAX_VALUES);
        char text[64];
        snprintf(text, sizeof text, "%" PRId64 "%s", x, suffix);
        if (vals_push(v, text, x) != BPTT_OK)
            return BPTT_ENOMEM;
        if (geometric ? x > stop / step : x > stop - step)
            break;
        x = geometric ? x * step : x + step;
        if (x > stop)
            break;
    }
    return BPTT_OK;
}

/* Splits item at ':' into at most 4 parts (in place); returns the count. */
static int split_colons(char *item, char **part)
{
    int n = 0;
    part[n++] = item;
    for (char *p = item; *p; p++)
        if (*p == ':') {
            *p = '\0';
            if (n == 4)
                return 5;
            part[n++] = p + 1;
        }
    return n;
}

/* A budget of the mode, as written. */
static int check_budget(const char *label, const char *text, int mode,
                        bptt_strbuf *err)
{
    bptt_budget b;
    if (bptt_budget_parse(text, &b) != BPTT_OK)
        return fail(err, "%s: '%s' is not a budget (give %s)", label, text,
                    mode == PLAN ? "slots, e.g. 200 or 200slots, or a share "
                                   "of full BPTT's, e.g. 5%"
                                 : "bytes with a unit, e.g. 64MiB, slots, "
                                   "e.g. 200slots, or a share, e.g. 5%");
    if (mode == PLAN && b.kind == BPTT_BUDGET_BYTES)
        return fail(err, "%s: '%s' is in bytes, which only --mode run knows; "
                    "plan mode counts slots (200, 200slots) or shares (5%%)",
                    label, text);
    if (mode == RUN && b.kind == BPTT_BUDGET_SLOTS && !*b.unit)
        return fail(err, "%s: '%s' has no unit; run mode takes bytes (64MiB, "
                    "100000B), slots (%sslots) or shares (5%%)", label, text,
                    text);
    return BPTT_OK;
}

/* The whole number before a budget's unit ("5" of "5%"), or -1. */
static int budget_number(const char *text, char *num, size_t cap,
                         const char **unit)
{
    bptt_budget b;
    if (bptt_budget_parse(text, &b) != BPTT_OK)
        return -1;
    const size_t n = strlen(text) - strlen(b.unit);
    int64_t dummy;
    if (n >= cap)
        return -1;
    memcpy(num, text, n);
    num[n] = '\0';
    *unit = b.unit;
    return parse_i64(num, &dummy) == 0 ? 0 : -1;
}

/* The names of a name axis: strategies or cells. */
static int known_name(int k, const char *name, char *list, size_t cap)
{
    if (k == BPTT_GK_STRATEGY) {
        bptt_strategy_names(list, cap, " or ");
        return bptt_strategy_find(name) != NULL;
    }
    bptt_cell_names(list, cap, " or ");
    return bptt_cell_find(name) != NULL;
}

/* One item of an axis (a value or a range; whole: as written, part: its
 * np parts split at ':') into v. */
static int parse_item(const bptt_grid *g, int k, const char *whole,
                      char **part, int np, bptt_grid_axis *v,
                      bptt_strbuf *err)
{
    const bptt_grid_key_def *d = &bptt_grid_keys[k];
    const char *label = g->label[k];
    if (np > 3)
        return fail(err, "%s: '%s' is not a range (give start:stop:step or "
                    "start:stop:*factor)", label, whole);
    if (d->kind == BPTT_GRID_NAME) {
        char list[256];
        if (!known_name(k, whole, list, sizeof list))
            return fail(err, "%s: unknown %s '%s' (use %s, or a comma list "
                        "of them)", label, d->name, whole, list);
        return vals_push(v, whole, 0);
    }
    if (d->kind == BPTT_GRID_INT) {
        if (np > 1)
            return expand_range(label, whole, part, np, "", d->lo, d->hi, v,
                                err);
        int64_t x;
        const int e = parse_i64(whole, &x);
        bptt_units u;
        /* alpha may be a fraction, as bptt plan takes it (3.5) */
        if (e == -1 && k == BPTT_GK_ALPHA &&
            bptt_units_from_alpha(whole, &u) == BPTT_OK)
            return vals_push(v, whole, -1);
        if (e == -1 && k == BPTT_GK_ALPHA)
            return fail(err, "%s: '%s' is not a state size (give a number "
                        "from 1 to %d with at most 6 decimals, e.g. 4 or "
                        "3.5, a list 2,3.5,4 or a whole range 1:10:1)",
                        label, whole, BPTT_ALPHA_MAX);
        if (e == -1)
            return fail(err, "%s: '%s' is not a whole number (give a number, "
                        "a list 1,2,3 or a range 1:10:1)", label, whole);
        if (e == -2 || x < d->lo || x > d->hi)
            return fail(err, "%s: %s is out of range (give whole numbers from "
                        "%" PRId64 " to %" PRId64 ")", label, whole, d->lo,
                        d->hi);
        char text[32];
        snprintf(text, sizeof text, "%" PRId64, x);
        return vals_push(v, text, x);
    }
    /* budgets keep their text */
    if (np == 1) {
        const int rc = check_budget(label, whole, g->mode, err);
        return rc ? rc : vals_push(v, whole, 0);
    }
    char n0[64], n1[64];
    const char *u0, *u1;
    if (budget_number(part[0], n0, sizeof n0, &u0) != 0 ||
        budget_number(part[1], n1, sizeof n1, &u1) != 0 || strcmp(u0, u1))
        return fail(err, "%s: range '%s' needs whole-number ends with one "
                    "unit (e.g. 5%%:50%%:5, 100:1000:100 or 1MiB:64MiB:*2)",
                    label, whole);
    char *p2[3] = {n0, n1, np == 3 ? part[2] : NULL};
    const size_t first = v->n;
    int rc = expand_range(label, whole, p2, np, u0, 0, BPTT_BUDGET_MAX_SLOTS,
                          v, err);
    for (size_t i = first; i < v->n && rc == 0; i++)
        rc = check_budget(label, v->text[i], g->mode, err);
    return rc;
}

/* One value, list or range of an axis into v. */
static int parse_axis(const bptt_grid *g, int k, bptt_grid_axis *v,
                      bptt_strbuf *err)
{
    const char *text = g->text[k];
    const size_t len = strlen(text);
    if (len == 0 || text[0] == ',' || text[len - 1] == ',' ||
        strstr(text, ",,"))
        return fail(err, "%s: empty value in '%s' (give values separated by "
                    "commas, e.g. 1,2,3)", g->label[k], text);
    char *copy = dup_text(text), *whole = malloc(len + 1);
    int rc = copy && whole ? BPTT_OK : BPTT_ENOMEM;
    char *save = NULL;
    for (char *item = copy ? strtok_r(copy, ",", &save) : NULL;
         item && rc == BPTT_OK; item = strtok_r(NULL, ",", &save)) {
        strcpy(whole, item);
        char *part[5];
        const int np = strchr(item, ':') ? split_colons(item, part) : 1;
        rc = parse_item(g, k, whole, part, np, v, err);
    }
    free(copy);
    free(whole);
    return rc;
}

static int parse_real(const char *label, const char *text, double lo,
                      double hi, bptt_strbuf *err)
{
    /* decimal notation, in every locale: no hex (budget.h) */
    double v;
    if (bptt_parse_real(text, &v) != 0 || !(v >= lo) || !(v <= hi))
        return fail(err, "%s: '%s' is not a number in [%g, %g]", label, text,
                    lo, hi);
    return BPTT_OK;
}

/* ---- the grid ----------------------------------------------------------- */

/* The task, by the task's own rules (data.h), at the shortest length any
 * sequence can have (the lengths of the grid are checked by each run). */
static int check_task(const bptt_grid *g, bptt_strbuf *err)
{
    const char *t = g->text[BPTT_GK_TASK], *label = g->label[BPTT_GK_TASK];
    size_t X, V;
    double bytes;
    char why[4200];
    if (bptt_task_check(t, 1, 0, &X, &V, &bytes, why, sizeof why) != BPTT_OK)
        return fail(err, "%s: %s", label, why);
    return BPTT_OK;
}

/* The fixed keys: mode, policy, format and what `bptt run` is passed. */
static int check_fixed(bptt_grid *g, bptt_strbuf *err)
{
    char *const *text = g->text, *const *label = g->label;
    g->mode = PLAN;
    if (text[BPTT_GK_MODE]) {
        if (strcmp(text[BPTT_GK_MODE], "run") == 0)
            g->mode = RUN;
        else if (strcmp(text[BPTT_GK_MODE], "plan") != 0)
            return fail(err, "%s: unknown mode '%s' (use plan or run)",
                        label[BPTT_GK_MODE], text[BPTT_GK_MODE]);
    }
    if (text[BPTT_GK_INFEASIBLE]) {
        if (strcmp(text[BPTT_GK_INFEASIBLE], "record") == 0)
            g->record_infeasible = 1;
        else if (strcmp(text[BPTT_GK_INFEASIBLE], "error") != 0)
            return fail(err, "%s: unknown policy '%s' (use error or record)",
                        label[BPTT_GK_INFEASIBLE], text[BPTT_GK_INFEASIBLE]);
    }
    if (text[BPTT_GK_ITERS]) {
        int64_t x;
        if (parse_i64(text[BPTT_GK_ITERS], &x) != 0 || x < 1 || x > 1000000)
            return fail(err, "%s: '%s' is not a whole number from 1 to "
                        "1000000", label[BPTT_GK_ITERS], text[BPTT_GK_ITERS]);
    }
    const char *opt = text[BPTT_GK_OPTIMIZER];
    if (opt && strcmp(opt, "sgd") != 0 && strcmp(opt, "adam") != 0)
        return fail(err, "%s: unknown optimizer '%s' (use sgd or adam)",
                    label[BPTT_GK_OPTIMIZER], opt);
    int rc;
    if (text[BPTT_GK_LR] &&
        (rc = parse_real(label[BPTT_GK_LR], text[BPTT_GK_LR], 1e-12, 1e38,
                         err)) != BPTT_OK)
        return rc;
    if (text[BPTT_GK_TASK] && (rc = check_task(g, err)) != BPTT_OK)
        return rc;
    if (text[BPTT_GK_FORMAT]) {
        const char *f = text[BPTT_GK_FORMAT];
        if (strcmp(f, "csv") == 0)
            g->csv = 1;
        else if (strcmp(f, "jsonl") != 0 && strcmp(f, "json") != 0)
            return fail(err, "%s: unknown format '%s' (use jsonl or csv)",
                        label[BPTT_GK_FORMAT], f);
    } else {
        const char *o = text[BPTT_GK_OUT] ? text[BPTT_GK_OUT] : "";
        const size_t n = strlen(o);
        g->csv = n > 4 && strcmp(o + n - 4, ".csv") == 0;
    }
    return BPTT_OK;
}

/* desc and hash: what the records depend on. */
static int describe(bptt_grid *g)
{
    bptt_strbuf d = {0};
    bptt_strbuf_printf(&d, "mode=%s", bptt_grid_mode_name(g->mode));
    for (int k = 0; k < BPTT_GRID_AXES; k++) {
        if (!(bptt_grid_keys[k].modes & g->mode) ||
            (k == BPTT_GK_THREADS && g->mode == PLAN))
            continue;
        bptt_strbuf_printf(&d, "; %s=", bptt_grid_keys[k].name);
        if (!g->ax[k].n)
            bptt_strbuf_puts(&d, "-");
        for (size_t i = 0; i < g->ax[k].n; i++)
            bptt_strbuf_printf(&d, "%s%s", i ? "," : "", g->ax[k].text[i]);
    }
    if (g->mode == RUN)
        for (int k = BPTT_GK_ITERS; k <= BPTT_GK_LR; k++)
            bptt_strbuf_printf(&d, "; %s=%s", bptt_grid_keys[k].name,
                               g->text[k] ? g->text[k] : "-");
    if (!(g->desc = bptt_strbuf_take(&d)))
        return BPTT_ENOMEM;
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const char *p = g->desc; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    snprintf(g->hash, sizeof g->hash, "%016" PRIx64, h);
    return BPTT_OK;
}

int bptt_grid_build(bptt_grid *g, bptt_strbuf *err)
{
    int rc = check_fixed(g, err);
    if (rc)
        return rc;
    char *const *text = g->text, *const *label = g->label;
    if (!text[BPTT_GK_LENGTH])
        return fail(err, "--length is required (e.g. --length "
                    "100:1000:100)");
    if (!text[BPTT_GK_STRATEGY] &&
        bptt_grid_set(g, BPTT_GK_STRATEGY, "msm", "--strategy"))
        return BPTT_ENOMEM;
    if (!text[BPTT_GK_MEMORY] &&
        bptt_grid_set(g, BPTT_GK_MEMORY, "100%", "--memory"))
        return BPTT_ENOMEM;
    if (g->mode == PLAN && !text[BPTT_GK_ALPHA] &&
        bptt_grid_set(g, BPTT_GK_ALPHA, "1", "--alpha"))
        return BPTT_ENOMEM;
    g->n_points = 1;
    for (int k = 0; k < BPTT_GRID_AXES; k++) {
        if (!text[k])
            continue;
        if ((rc = parse_axis(g, k, &g->ax[k], err)) != BPTT_OK)
            return rc;
        const int applies = (bptt_grid_keys[k].modes & g->mode) != 0;
        if (g->ax[k].n > 1 && !applies)
            return fail(err, "%s: %s does not apply in %s mode, so it takes "
                        "one value, not %zu (drop it, or use --mode %s)",
                        label[k], bptt_grid_keys[k].name,
                        bptt_grid_mode_name(g->mode), g->ax[k].n,
                        g->mode == PLAN ? "run" : "plan");
        if (k == BPTT_GK_THREADS && g->mode == PLAN && g->ax[k].n > 1)
            return fail(err, "%s: plan mode takes one thread count (threads "
                        "do not change a plan; sweep them with --mode run)",
                        label[k]);
        g->applies[k] = applies;
        if (applies) {
            if (g->n_points > (size_t)BPTT_GRID_MAX_POINTS / g->ax[k].n)
                return fail(err, "the grid has more than %d points (split it "
                            "into several sweeps)", BPTT_GRID_MAX_POINTS);
            g->n_points *= g->ax[k].n;
        }
    }
    return describe(g);
}

int bptt_grid_check_config(const char *path, const char *text, size_t len,
                           bptt_strbuf *err)
{
    bptt_grid g;
    memset(&g, 0, sizeof g);
    int rc = bptt_grid_config(&g, path, text, len, NULL, err);
    if (rc == BPTT_OK)
        rc = bptt_grid_build(&g, err);
    bptt_grid_free(&g);
    return rc;
}
