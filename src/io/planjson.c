/* planjson.c: a plan given as JSON actions (planjson.h).
 *
 * The document is read in one pass without building its tree: the
 * members of the top object one by one, and the schedule's actions one
 * object at a time (each parsed whole by bptt_json_parse and freed), so
 * that what is held beside the plan's own actions (8 bytes each) is one
 * action or one member, whatever the input. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "budget.h"
#include "json.h"
#include "numbers.h"
#include "planjson.h"
#include "twolevel.h"
#include "why.h"

/* v as a whole number in [lo, hi]: 1, or 0. */
static int whole(const bptt_json *v, double lo, double hi, int64_t *out)
{
    if (!v || v->type != BPTT_JSON_NUMBER || !(v->number >= lo) ||
        !(v->number <= hi) || v->number != floor(v->number))
        return 0;
    *out = (int64_t)v->number;
    return 1;
}

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' ||
                       t[i] == '\r'))
        i++;
    return i;
}

static const char *type_name(int type)
{
    switch (type) {
    case BPTT_JSON_NULL: return "null";
    case BPTT_JSON_FALSE: case BPTT_JSON_TRUE: return "a boolean";
    case BPTT_JSON_NUMBER: return "a number";
    case BPTT_JSON_STRING: return "a string";
    case BPTT_JSON_ARRAY: return "an array";
    default: return "an object";
    }
}

/* The members a plan file may state beside its schedule: bptt plan
 * --actions --format json's record (--disk: the slow level's too).
 * kind: 's' string, 'w' whole number >= 0, 'n' number >= 0, 'd' a number
 * >= 0 or the string "inf". */
enum {
    F_STRATEGY, F_LENGTH, F_ALPHA, F_MEMORY, F_FORWARD, F_RECOMPUTE,
    F_BACKWARD, F_PEAK, F_PER_STEP, F_FULL_PEAK, F_FRACTION, F_MIN_MEMORY,
    F_ACTIONS, F_PLAN_SECONDS, F_TABLE_BYTES, F_DISK, F_WRITE_COST,
    F_READ_COST, F_SLOW_WRITES, F_SLOW_READS, F_SLOW_PEAK, F_COST, N_FIELDS
};
static const struct {
    const char *name;
    char kind;
} fields[N_FIELDS] = {
    [F_STRATEGY] = {"strategy", 's'},
    [F_LENGTH] = {"length", 'w'},
    [F_ALPHA] = {"alpha", 'n'},
    [F_MEMORY] = {"memory", 'n'},
    [F_FORWARD] = {"forward_ops", 'w'},
    [F_RECOMPUTE] = {"recompute_ops", 'w'},
    [F_BACKWARD] = {"backward_ops", 'w'},
    [F_PEAK] = {"peak_slots", 'n'},
    [F_PER_STEP] = {"forward_ops_per_step", 'n'},
    [F_FULL_PEAK] = {"full_peak_slots", 'n'},
    [F_FRACTION] = {"memory_fraction", 'n'},
    [F_MIN_MEMORY] = {"min_memory", 'n'},
    [F_ACTIONS] = {"actions", 'w'},
    [F_PLAN_SECONDS] = {"plan_seconds", 'n'},
    [F_TABLE_BYTES] = {"table_bytes", 'w'},
    [F_DISK] = {"disk", 'd'},
    [F_WRITE_COST] = {"write_cost", 'n'},
    [F_READ_COST] = {"read_cost", 'n'},
    [F_SLOW_WRITES] = {"slow_writes", 'w'},
    [F_SLOW_READS] = {"slow_reads", 'w'},
    [F_SLOW_PEAK] = {"slow_peak_slots", 'n'},
    [F_COST] = {"cost", 'n'},
};

/* The names of every op, "advance, save_hidden, ... or drop_internal",
 * into buf (the library's: bptt_op_name). */
static const char *op_names(char *buf, size_t cap)
{
    const char *names[BPTT_N_OPS];
    for (int k = 0; k < BPTT_N_OPS; k++)
        names[k] = bptt_op_name(k);
    bptt_names_text(buf, cap, names, BPTT_N_OPS, " or ");
    return buf;
}

typedef struct {
    bptt_json *v[N_FIELDS]; /* the members given, parsed */
    int have_schedule;
} members;

/* After an item of an array or object at text[*p]: 1 with *p past a
 * ',' (another item follows), 0 with *p past close (the end), -1 when
 * neither is there. */
static int list_next(const char *text, size_t len, size_t *p, char close)
{
    *p = skip_ws(text, len, *p);
    if (*p < len && text[*p] == ',') {
        *p = skip_ws(text, len, *p + 1);
        return 1;
    }
    if (*p < len && text[*p] == close) {
        *p += 1;
        return 0;
    }
    return -1;
}

/* One action object at text[i..] onto plan (its length is not known yet:
 * steps are checked against 4294967294 and later against the length). */
static int read_action(const char *text, size_t len, size_t *i, size_t k,
                       bptt_plan *plan, int64_t *top, char *why, size_t cap)
{
    bptt_json *a = NULL;
    size_t end = 0;
    int rc = bptt_json_parse(text + *i, len - *i, &a, &end);
    if (rc == BPTT_ENOMEM)
        return rc;
    if (rc != BPTT_OK)
        return bptt_why(BPTT_EINVAL, why, cap,
                        "action %zu is not JSON (at byte "
                        "%zu)",
                        k, *i + end);
    *i += end;
    const bptt_json *op = bptt_json_get(a, "op");
    int64_t step = 0;
    if (a->type != BPTT_JSON_OBJECT)
        rc = bptt_why(BPTT_EINVAL, why, cap,
                      "action %zu is %s, not an object "
                      "{\"op\":..., \"step\":...}",
                      k, type_name(a->type));
    else if (!op || op->type != BPTT_JSON_STRING ||
             bptt_op_parse(op->text) < 0) {
        char names[400];
        rc = bptt_why(
            BPTT_EINVAL, why, cap, "action %zu: %s%.60s%s (give one of %s)",
            k, op && op->type == BPTT_JSON_STRING ? "unknown op '" : "no op",
            op && op->type == BPTT_JSON_STRING ? op->text : "",
            op && op->type == BPTT_JSON_STRING ? "'" : "",
            op_names(names, sizeof names));
    }
    else if (!whole(bptt_json_get(a, "step"), 0, 4294967294.0, &step))
        rc = bptt_why(BPTT_EINVAL, why, cap,
                      "action %zu: no step, or not a "
                      "whole number from 0 to 4294967294",
                      k);
    else
        rc = bptt_plan_push(plan, bptt_op_parse(op->text), (size_t)step);
    if (rc == BPTT_OK && step > *top)
        *top = step;
    bptt_json_free(a);
    return rc;
}

/* The schedule array at text[*i] ('['), streamed into plan. */
static int read_schedule(const char *text, size_t len, size_t *i,
                         bptt_plan *plan, int64_t *top, char *why, size_t cap)
{
    size_t p = skip_ws(text, len, *i + 1);
    if (p < len && text[p] == ']') {
        *i = p + 1;
        return BPTT_OK;
    }
    for (size_t k = 0;; k++) {
        int rc = read_action(text, len, &p, k, plan, top, why, cap);
        if (rc != BPTT_OK)
            return rc;
        const int more = list_next(text, len, &p, ']');
        if (more == 1)
            continue;
        if (more == 0) {
            *i = p;
            return BPTT_OK;
        }
        return bptt_why(BPTT_EINVAL, why, cap,
                        "not JSON (at byte %zu: the "
                        "schedule's actions go on with ',' or end with ']')",
                        p);
    }
}

/* The top object's members at text[*i] ('{'). */
static int read_members(const char *text, size_t len, size_t *i,
                        members *mb, bptt_plan *plan, int64_t *top,
                        char *why, size_t cap)
{
    size_t p = skip_ws(text, len, *i + 1);
    if (p < len && text[p] == '}') {
        *i = p + 1;
        return BPTT_OK;
    }
    for (;;) {
        bptt_json *key = NULL;
        size_t end = 0;
        if (p >= len || text[p] != '"')
            return bptt_why(BPTT_EINVAL, why, cap,
                            "not JSON (at byte %zu: a "
                            "member's name, in quotes, was expected)",
                            p);
        int rc = bptt_json_parse(text + p, len - p, &key, &end);
        if (rc == BPTT_ENOMEM)
            return rc;
        if (rc != BPTT_OK)
            return bptt_why(BPTT_EINVAL, why, cap, "not JSON (at byte %zu)",
                            p + end);
        p = skip_ws(text, len, p + end);
        if (p >= len || text[p] != ':') {
            bptt_json_free(key);
            return bptt_why(BPTT_EINVAL, why, cap,
                            "not JSON (at byte %zu: ':' "
                            "was expected)",
                            p);
        }
        p = skip_ws(text, len, p + 1);
        int f = -1;
        for (int k = 0; k < N_FIELDS; k++)
            if (strcmp(key->text, fields[k].name) == 0)
                f = k;
        const int is_schedule = strcmp(key->text, "schedule") == 0;
        char name[64];
        snprintf(name, sizeof name, "%s", key->text);
        bptt_json_free(key);
        if ((is_schedule && mb->have_schedule) || (f >= 0 && mb->v[f]))
            return bptt_why(BPTT_EINVAL, why, cap,
                            "\"%s\" is given twice (give "
                            "it once)",
                            name);
        if (is_schedule) {
            if (p >= len || text[p] != '[')
                return bptt_why(BPTT_EINVAL, why, cap,
                                "\"schedule\" is not an "
                                "array of actions");
            mb->have_schedule = 1;
            rc = read_schedule(text, len, &p, plan, top, why, cap);
        } else if (p < len && (text[p] == '[' || text[p] == '{')) {
            /* only the schedule may be large: nothing else is held */
            return bptt_why(BPTT_EINVAL, why, cap,
                            "\"%s\" is %s; a plan file's "
                            "members other than \"schedule\" are numbers or "
                            "strings",
                            name, text[p] == '[' ? "an array" : "an object");
        } else {
            bptt_json *v = NULL;
            rc = bptt_json_parse(text + p, len - p, &v, &end);
            if (rc == BPTT_EINVAL)
                return bptt_why(BPTT_EINVAL, why, cap,
                                "not JSON (at byte %zu)", p + end);
            if (rc == BPTT_OK) {
                p += end;
                if (f >= 0)
                    mb->v[f] = v;
                else
                    bptt_json_free(v); /* another library's: not ours */
            }
        }
        if (rc != BPTT_OK)
            return rc;
        const int more = list_next(text, len, &p, '}');
        if (more == 1)
            continue;
        if (more == 0) {
            *i = p;
            return BPTT_OK;
        }
        return bptt_why(BPTT_EINVAL, why, cap,
                        "not JSON (at byte %zu: members go "
                        "on with ',' or end with '}')",
                        p);
    }
}

/* Every member given has its type: BPTT_OK or the sentence. */
static int check_types(const members *mb, char *why, size_t cap)
{
    for (int k = 0; k < N_FIELDS; k++) {
        const bptt_json *v = mb->v[k];
        if (!v)
            continue;
        const char kind = fields[k].kind;
        /* a stated count's value is judged by the check (exit 1 in
         * bptt validate, naming it as given): here only its type */
        const int count = k == F_FORWARD || k == F_RECOMPUTE ||
                          k == F_BACKWARD || k == F_ACTIONS ||
                          k == F_SLOW_WRITES || k == F_SLOW_READS;
        if (kind == 'd') {
            if ((v->type == BPTT_JSON_NUMBER && v->number >= 0) ||
                (v->type == BPTT_JSON_STRING && strcmp(v->text, "inf") == 0))
                continue;
            return bptt_why(BPTT_EINVAL, why, cap, "\"%s\" is %s%s; give a "
                            "number of slots >= 0, or \"inf\" (no bound)",
                            fields[k].name, type_name(v->type),
                            v->type == BPTT_JSON_NUMBER ? " out of its range"
                            : v->type == BPTT_JSON_STRING
                                ? " other than \"inf\""
                                : "");
        }
        const int ok = kind == 's' ? v->type == BPTT_JSON_STRING
                       : count     ? v->type == BPTT_JSON_NUMBER
                                   : v->type == BPTT_JSON_NUMBER &&
                                         v->number >= 0 &&
                                         (kind == 'n' ||
                                          (v->number == floor(v->number) &&
                                           v->number <=
                                               BPTT_PLAN_JSON_COUNT_MAX));
        if (!ok)
            return bptt_why(BPTT_EINVAL, why, cap, "\"%s\" is %s%s; give %s",
                            fields[k].name, type_name(v->type),
                            v->type == BPTT_JSON_NUMBER ? " out of its range"
                                                        : "",
                            kind == 's'   ? "a string"
                            : kind == 'w' ? "a whole number >= 0"
                                          : "a number >= 0 (e.g. 4 or 3.5)");
    }
    return BPTT_OK;
}

/* The budget `name` in units from text (slots, e.g. 174.5), or -1 with
 * why. */
static int64_t memory_units(const char *name, const char *text, int64_t h,
                            const char *alpha, char *why, size_t cap)
{
    bptt_budget b;
    int64_t m;
    if (bptt_budget_parse(text, &b) != BPTT_OK || b.kind != BPTT_BUDGET_SLOTS ||
        bptt_budget_units(&b, h, 0, &m) != BPTT_OK ||
        m > BPTT_PLAN_NO_LIMIT * h) {
        bptt_why(BPTT_EINVAL, why, cap,
                 "%s %.40s is not a budget in slots (0 "
                 "to %lld, in whole units of alpha %s%s)",
                 name, text, (long long)BPTT_PLAN_NO_LIMIT, alpha,
                 strcmp(name, "disk") == 0 ? "; or inf, no bound" : "");
        return -1;
    }
    return m;
}

/* The slow level's budget in units: as given, or the JSON's, or 0 (one
 * level); "inf" BPTT_SLOW_UNLIMITED; -1 with why. */
static int64_t disk_units(const bptt_plan_json_given *given,
                          const bptt_json *v, int64_t h, const char *alpha,
                          char *why, size_t cap)
{
    const char *text = given && given->disk_text ? given->disk_text
                       : v                        ? v->text
                                                  : NULL;
    if (!text)
        return 0;
    if (strcmp(text, "inf") == 0)
        return BPTT_SLOW_UNLIMITED;
    return memory_units("disk", text, h, alpha, why, cap);
}

/* A plan of one level (slow_budget 0) must have no action of the slow
 * level: BPTT_OK, or BPTT_EINVAL naming the first. */
static int slow_ops_budgeted(const bptt_plan *plan, char *why, size_t cap)
{
    if (plan->slow_budget != 0 || !bptt_plan_slow_actions(plan))
        return BPTT_OK;
    size_t k = 0;
    while (plan->actions[k].op < BPTT_WRITE_HIDDEN ||
           plan->actions[k].op > BPTT_DROP_INTERNAL)
        k++;
    return bptt_why(BPTT_EINVAL, why, cap,
                    "action %zu (%s %u) uses a slow level, and the plan has "
                    "none (state its budget as \"disk\", slots or \"inf\", "
                    "or give --disk)",
                    k, bptt_op_name((int)plan->actions[k].op),
                    plan->actions[k].step);
}

int bptt_plan_read_json(const char *text, size_t len,
                        const bptt_plan_json_given *given, bptt_plan **out,
                        bptt_plan_json_stated *stated, char *why, size_t cap)
{
    *out = NULL;
    members mb;
    memset(&mb, 0, sizeof mb);
    bptt_plan *plan = NULL;
    /* the length is not known until the end: a placeholder that admits
     * every step, set below */
    int rc = bptt_plan_alloc(&plan, 4294967294u, 1, 1, 0);
    if (rc != BPTT_OK)
        return rc;
    int64_t top = 0;
    /* a UTF-8 byte order mark, which some editors write first, is read
     * as nothing (RFC 8259 lets a parser ignore it); offsets stay the
     * file's */
    const int bom = len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0;
    size_t i = skip_ws(text, len, bom ? 3 : 0);
    if (i < len && text[i] == '[') {
        mb.have_schedule = 1;
        rc = read_schedule(text, len, &i, plan, &top, why, cap);
    } else if (i < len && text[i] == '{') {
        rc = read_members(text, len, &i, &mb, plan, &top, why, cap);
    } else {
        rc = bptt_why(
            BPTT_EINVAL, why, cap,
            i < len
                ? "no actions (give an array "
                  "of {\"op\":..., \"step\":...}, or an object with one as "
                  "\"schedule\")"
                : "not JSON (at byte %zu: empty)",
            i);
    }
    if (rc == BPTT_OK && (i = skip_ws(text, len, i)) < len)
        rc = bptt_why(BPTT_EINVAL, why, cap,
                      "not JSON (at byte %zu: more after "
                      "the plan)",
                      i);
    if (rc == BPTT_OK && !mb.have_schedule)
        rc = bptt_why(BPTT_EINVAL, why, cap,
                      "no actions (give an array of "
                      "{\"op\":..., \"step\":...}, or an object with one as "
                      "\"schedule\")");
    if (rc == BPTT_OK)
        rc = check_types(&mb, why, cap);
    if (rc != BPTT_OK)
        goto done;
    /* the units: alpha as given, or the JSON's, or 1 */
    char alpha[64] = "1";
    if (given && given->alpha)
        snprintf(alpha, sizeof alpha, "%s", given->alpha);
    else if (mb.v[F_ALPHA])
        snprintf(alpha, sizeof alpha, "%s", mb.v[F_ALPHA]->text);
    bptt_units u;
    if (bptt_units_from_alpha(alpha, &u) != BPTT_OK) {
        rc = bptt_why(BPTT_EINVAL, why, cap,
                      "alpha %s is not a state size (1 to "
                      "%d, at most 6 decimals)",
                      alpha, BPTT_ALPHA_MAX);
        goto done;
    }
    int64_t t = given && given->length ? (int64_t)given->length : 0;
    if (!t && mb.v[F_LENGTH] &&
        !whole(mb.v[F_LENGTH], 1, 4294967294.0, &t)) {
        rc = bptt_why(BPTT_EINVAL, why, cap,
                      "\"length\" is not a whole number "
                      "from 1 to 4294967294");
        goto done;
    }
    if (!t)
        t = top > 0 ? top : 1;
    if (top > t) {
        rc = bptt_why(BPTT_EINVAL, why, cap,
                      "the actions reach step %lld, "
                      "beyond the length %lld",
                      (long long)top, (long long)t);
        goto done;
    }
    /* a valid plan of length T holds T backward actions: a longer one
     * than the actions read is no plan of theirs, and the validator,
     * whose work (a byte a step) follows the length, is not run on it;
     * what is read is held to the input's size */
    if (t > 1 && (uint64_t)t > (uint64_t)plan->n_actions) {
        char from[96];
        if (given && given->length)
            snprintf(from, sizeof from, "--length %lld", (long long)t);
        else if (mb.v[F_LENGTH])
            snprintf(from, sizeof from, "\"length\":%.40s",
                     mb.v[F_LENGTH]->text);
        else
            snprintf(from, sizeof from, "the length %lld (the largest step)",
                     (long long)t);
        rc = bptt_why(BPTT_EINVAL, why, cap,
                      "%s is more steps than the %zu "
                      "actions read can cover (a plan of length T holds T "
                      "backward actions); give the plan's length",
                      from, plan->n_actions);
        goto done;
    }
    /* the budget in units: as given, or the JSON's (a fraction of a slot
     * as bptt plan prints one: 54.5), or no limit */
    int64_t m = BPTT_PLAN_NO_LIMIT * u.hidden_units;
    if (given && given->memory_text) {
        m = memory_units("memory", given->memory_text, u.hidden_units, alpha,
                         why, cap);
    } else if (given && given->memory >= 0) {
        m = (given->memory > BPTT_PLAN_NO_LIMIT ? BPTT_PLAN_NO_LIMIT
                                                : given->memory) *
            u.hidden_units;
    } else if (mb.v[F_MEMORY]) {
        m = memory_units("memory", mb.v[F_MEMORY]->text, u.hidden_units,
                         alpha, why, cap);
    }
    const int64_t d = m < 0 ? 0
                            : disk_units(given, mb.v[F_DISK], u.hidden_units,
                                         alpha, why, cap);
    if (m < 0 || d < 0) {
        rc = BPTT_EINVAL;
        goto done;
    }
    plan->length = (size_t)t;
    plan->hidden_units = u.hidden_units;
    plan->internal_units = u.internal_units;
    plan->budget = m;
    plan->slow_budget = d;
    if ((rc = slow_ops_budgeted(plan, why, cap)) != BPTT_OK)
        goto done;
    if (stated) {
        static const int whole_fields[] = {F_FORWARD,   F_RECOMPUTE,
                                           F_BACKWARD,  F_ACTIONS,
                                           F_SLOW_WRITES, F_SLOW_READS};
        int64_t *dst[] = {&stated->forward_ops, &stated->recompute_ops,
                          &stated->backward_ops, &stated->actions,
                          &stated->slow_writes, &stated->slow_reads};
        stated->unwritable[0] = '\0';
        for (int k = 0; k < 6; k++) {
            const bptt_json *v = mb.v[whole_fields[k]];
            *dst[k] = -1;
            if (!v)
                continue;
            if (v->number >= 0 && v->number <= BPTT_PLAN_JSON_COUNT_MAX &&
                v->number == floor(v->number))
                *dst[k] = (int64_t)v->number;
            else if (!stated->unwritable[0])
                snprintf(stated->unwritable, sizeof stated->unwritable,
                         "\"%s\":%.60s%s", fields[whole_fields[k]].name,
                         v->text, strlen(v->text) > 60 ? "..." : "");
        }
        const bptt_json *pk = mb.v[F_PEAK], *fp = mb.v[F_FULL_PEAK];
        stated->peak_slots = pk ? pk->number : NAN;
        stated->full_peak_slots = fp ? fp->number : NAN;
        stated->forward_ops_per_step =
            mb.v[F_PER_STEP] ? mb.v[F_PER_STEP]->number : NAN;
        stated->memory_fraction =
            mb.v[F_FRACTION] ? mb.v[F_FRACTION]->number : NAN;
        const int reals[] = {F_SLOW_PEAK, F_COST, F_WRITE_COST, F_READ_COST};
        double *rdst[] = {&stated->slow_peak_slots, &stated->cost,
                          &stated->write_cost, &stated->read_cost};
        for (int k = 0; k < 4; k++)
            *rdst[k] = mb.v[reals[k]] ? mb.v[reals[k]]->number : NAN;
    }
    *out = plan;
    plan = NULL;
done:
    bptt_plan_free(plan);
    for (int k = 0; k < N_FIELDS; k++)
        bptt_json_free(mb.v[k]);
    return rc;
}

int bptt_plan_from_json(const char *text, size_t len,
                        const bptt_plan_json_given *given, bptt_plan **out,
                        char *why, size_t cap)
{
    return bptt_plan_read_json(text, len, given, out, NULL, why, cap);
}

/* |a - b| within what printing to 6 decimals leaves (and rounding). */
static int near6(double a, double b)
{
    return fabs(a - b) <= 5.01e-7 + 1e-12 * fabs(b);
}

int bptt_plan_json_check(const bptt_plan *plan, const bptt_plan_stats *st,
                         const bptt_plan_json_stated *stated, char *why,
                         size_t cap)
{
    const double h = (double)plan->hidden_units;
    if (stated->unwritable[0])
        return bptt_why(BPTT_EINVAL, why, cap,
                        "the file says %s, a count no "
                        "plan has (a whole number from 0 to %.0f)",
                        stated->unwritable, BPTT_PLAN_JSON_COUNT_MAX);
    const struct {
        const char *name;
        int64_t said, is;
    } counts[] = {{"forward_ops", stated->forward_ops, st->forward_ops},
                  {"recompute_ops", stated->recompute_ops, st->recompute_ops},
                  {"backward_ops", stated->backward_ops, st->backward_ops},
                  {"actions", stated->actions, (int64_t)plan->n_actions},
                  {"slow_writes", stated->slow_writes, st->slow_writes},
                  {"slow_reads", stated->slow_reads, st->slow_reads}};
    for (size_t k = 0; k < sizeof counts / sizeof *counts; k++)
        if (counts[k].said >= 0 && counts[k].said != counts[k].is)
            return bptt_why(BPTT_EINVAL, why, cap,
                            "the file says \"%s\":%lld, "
                            "the plan has %lld",
                            counts[k].name, (long long)counts[k].said,
                            (long long)counts[k].is);
    const double full =
        (double)bptt_full_peak(plan->length, plan->hidden_units,
                               plan->internal_units);
    const struct {
        const char *name;
        double said, is;
    } reals[] = {
        {"peak_slots", stated->peak_slots, (double)st->peak_units / h},
        {"full_peak_slots", stated->full_peak_slots, full / h},
        {"forward_ops_per_step", stated->forward_ops_per_step,
         (double)st->forward_ops / (double)plan->length},
        {"memory_fraction", stated->memory_fraction,
         (double)st->peak_units / full},
        {"slow_peak_slots", stated->slow_peak_slots,
         (double)st->slow_peak_units / h}};
    for (size_t k = 0; k < sizeof reals / sizeof *reals; k++)
        if (!isnan(reals[k].said) && !near6(reals[k].said, reals[k].is))
            return bptt_why(BPTT_EINVAL, why, cap,
                            "the file says \"%s\":%.6g, "
                            "the plan has %.6f",
                            reals[k].name, reals[k].said, reals[k].is);
    /* the cost, where the file states the costs it is of */
    if (!isnan(stated->cost) && !isnan(stated->write_cost) &&
        !isnan(stated->read_cost)) {
        const bptt_slow_level slow = {plan->slow_budget, stated->write_cost,
                                      stated->read_cost};
        const double is =
            bptt_twolevel_stats_cost(st, plan->hidden_units, &slow);
        char said[40], has[40];
        if (!near6(stated->cost, is))
            return bptt_why(BPTT_EINVAL, why, cap,
                            "the file says \"cost\":%s, the plan has %s at "
                            "its write_cost and read_cost",
                            bptt_real_text(said, sizeof said, stated->cost),
                            bptt_real_text(has, sizeof has, is));
    }
    return BPTT_OK;
}
