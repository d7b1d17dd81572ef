/* planjson.c: a plan given as JSON actions (planjson.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "planjson.h"

__attribute__((format(printf, 4, 5))) static int
say(int status, char *why, size_t cap, const char *fmt, ...)
{
    if (why && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, cap, fmt, ap);
        va_end(ap);
    }
    return status;
}

/* v as a whole number in [lo, hi]: 1, or 0. */
static int whole(const bptt_json *v, double lo, double hi, int64_t *out)
{
    if (!v || v->type != BPTT_JSON_NUMBER || !(v->number >= lo) ||
        !(v->number <= hi) || v->number != floor(v->number))
        return 0;
    *out = (int64_t)v->number;
    return 1;
}

int bptt_plan_from_json(const char *text, size_t len,
                        const bptt_plan_json_given *given, bptt_plan **out,
                        char *why, size_t cap)
{
    *out = NULL;
    bptt_json *root = NULL;
    size_t at = 0;
    int rc = bptt_json_parse(text, len, &root, &at);
    if (rc == BPTT_OK && at < len) {
        bptt_json_free(root);
        root = NULL;
        rc = BPTT_EINVAL;
    }
    if (rc == BPTT_ENOMEM)
        return rc;
    if (rc != BPTT_OK)
        return say(BPTT_EINVAL, why, cap, "not JSON (at byte %zu)", at);
    const bptt_json *acts = root;
    const bptt_json *len_v = NULL, *alpha_v = NULL, *mem_v = NULL;
    if (root->type == BPTT_JSON_OBJECT) {
        acts = bptt_json_get(root, "schedule");
        len_v = bptt_json_get(root, "length");
        alpha_v = bptt_json_get(root, "alpha");
        mem_v = bptt_json_get(root, "memory");
    }
    bptt_plan *plan = NULL;
    if (!acts || acts->type != BPTT_JSON_ARRAY) {
        rc = say(BPTT_EINVAL, why, cap, "no actions (give an array of "
                 "{\"op\":..., \"step\":...}, or an object with one as "
                 "\"schedule\")");
        goto done;
    }
    /* the units: alpha as given, or the JSON's, or 1 */
    char alpha[64] = "1";
    if (given && given->alpha)
        snprintf(alpha, sizeof alpha, "%s", given->alpha);
    else if (alpha_v && alpha_v->type == BPTT_JSON_NUMBER)
        snprintf(alpha, sizeof alpha, "%s", alpha_v->text);
    bptt_units u;
    if (bptt_units_from_alpha(alpha, &u) != BPTT_OK) {
        rc = say(BPTT_EINVAL, why, cap, "alpha %s is not a state size (1 to "
                 "%d, at most 6 decimals)", alpha, BPTT_ALPHA_MAX);
        goto done;
    }
    /* the steps, checked, and the largest */
    int64_t top = 0;
    for (size_t i = 0; i < acts->n; i++) {
        const bptt_json *a = &acts->items[i];
        const bptt_json *op = bptt_json_get(a, "op");
        int64_t step = 0;
        if (!op || op->type != BPTT_JSON_STRING || bptt_op_parse(op->text) < 0) {
            rc = say(BPTT_EINVAL, why, cap, "action %zu: %s%s%s (give one of "
                     "advance, save_hidden, save_internal, restore_hidden, "
                     "restore_internal, backward, free_hidden, "
                     "free_internal)", i,
                     op && op->type == BPTT_JSON_STRING ? "unknown op '"
                                                        : "no op",
                     op && op->type == BPTT_JSON_STRING ? op->text : "",
                     op && op->type == BPTT_JSON_STRING ? "'" : "");
            goto done;
        }
        if (!whole(bptt_json_get(a, "step"), 0, 4294967295.0, &step)) {
            rc = say(BPTT_EINVAL, why, cap, "action %zu: no step, or not a "
                     "whole number from 0 to 4294967295", i);
            goto done;
        }
        top = step > top ? step : top;
    }
    int64_t t = given && given->length ? (int64_t)given->length : 0;
    if (!t && len_v && !whole(len_v, 1, 4294967295.0, &t)) {
        rc = say(BPTT_EINVAL, why, cap, "\"length\" is not a whole number "
                 "from 1 to 4294967295");
        goto done;
    }
    if (!t)
        t = top > 0 ? top : 1;
    if (top > t || t > 4294967294) {
        rc = say(BPTT_EINVAL, why, cap, "the actions reach step %lld, "
                 "beyond the length %lld", (long long)top, (long long)t);
        goto done;
    }
    /* the budget in units: slots as given, or the JSON's (which may be a
     * fraction of a slot, as bptt plan prints one: 54.5), or no limit */
    int64_t m = -1;
    if (given && given->memory >= 0) {
        m = given->memory > BPTT_PLAN_NO_LIMIT ? BPTT_PLAN_NO_LIMIT
                                               : given->memory;
        m *= u.hidden_units;
    } else if (mem_v) {
        const double units = mem_v->type == BPTT_JSON_NUMBER
                                 ? mem_v->number * (double)u.hidden_units
                                 : -1;
        if (!(units >= 0) || !(units <= (double)BPTT_PLAN_NO_LIMIT) ||
            fabs(units - floor(units + 0.5)) > 1e-6) {
            rc = say(BPTT_EINVAL, why, cap, "\"memory\" is not a budget in "
                     "slots (0 to %lld, in whole units of alpha %s)",
                     (long long)BPTT_PLAN_NO_LIMIT, alpha);
            goto done;
        }
        m = (int64_t)floor(units + 0.5);
    }
    if (m < 0)
        m = BPTT_PLAN_NO_LIMIT * u.hidden_units;
    rc = bptt_plan_alloc(&plan, (size_t)t, u.hidden_units, u.internal_units,
                         m);
    for (size_t i = 0; rc == BPTT_OK && i < acts->n; i++) {
        const bptt_json *a = &acts->items[i];
        int64_t step = 0; /* checked above */
        whole(bptt_json_get(a, "step"), 0, 4294967295.0, &step);
        rc = bptt_plan_push(plan, bptt_op_parse(bptt_json_get(a, "op")->text),
                            (size_t)step);
    }
    if (rc == BPTT_OK) {
        *out = plan;
        plan = NULL;
    }
done:
    bptt_plan_free(plan);
    bptt_json_free(root);
    return rc;
}
