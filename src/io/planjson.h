/* planjson.h: a plan given as JSON actions, from bptt or any other
 * library, read into a bptt_plan for the validator (`bptt validate`).
 *
 * The JSON is either an array of actions, [{"op":"advance","step":1},
 * ...], or an object holding one as "schedule" with, optionally, "length",
 * "alpha" (a state's size in slots: 4, 3.5), "memory" (the budget in
 * slots) and "disk" (the slow level's budget of a two-level plan,
 * twolevel.h: slots, or the string "inf" for no bound; absent: 0, a plan
 * of one level): what `bptt plan --actions --format json` prints.  Ops
 * are the names of bptt_op_name (advance, save_hidden, ..., free_internal,
 * and the slow level's write_hidden, ..., drop_internal, which a plan
 * without a slow level may not have: refused as it is read); steps are
 * whole numbers from 0 to 4294967295.
 *
 * The reader streams: it holds the plan's actions (8 bytes each) and one
 * action or member at a time, never the document's tree, so memory stays
 * near a third of the input's size.  Members it knows (those `bptt plan
 * --actions --format json` writes) must have their type (a string "4" for
 * alpha is refused); a member of another library's is read and ignored
 * if it is a number, string, boolean or null, refused if it is an array or
 * an object; a member given twice is refused.
 *
 * Library code: no output; what is wrong comes back as one sentence.
 */
#ifndef BPTT_PLANJSON_H
#define BPTT_PLANJSON_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"

/* What the caller sets, over what the JSON says. */
typedef struct {
    size_t length;     /* 0: the JSON's "length", else the largest step */
    const char *alpha; /* NULL: the JSON's "alpha", else 1 */
    int64_t memory;    /* the budget in slots; < 0: the JSON's "memory",
                          else no limit (BPTT_PLAN_NO_LIMIT slots) */
    const char *memory_text; /* when not NULL, the budget in slots as
                                written, over memory: "174.5" (whole units
                                of alpha) */
    const char *disk_text; /* when not NULL, the slow level's budget
                              (twolevel.h) over the JSON's "disk": slots as
                              memory_text, or "inf" (no bound) */
} bptt_plan_json_given;

/* The counts a file states beside its actions, for bptt_plan_json_check:
 * -1 (whole counts) or NAN (the others) when it does not state one.
 * unwritable: "" or the first whole count stated that no plan has (not a
 * whole number from 0 to BPTT_PLAN_JSON_COUNT_MAX: negative, fractional,
 * 1e30), as given: "forward_ops":1e30 (a value over 60 bytes cut, with
 * "..."); its field is then -1. */
typedef struct {
    int64_t forward_ops, recompute_ops, backward_ops, actions;
    double peak_slots, full_peak_slots, forward_ops_per_step,
        memory_fraction;
    /* a two-level plan's (`bptt plan --disk`) */
    int64_t slow_writes, slow_reads;
    double slow_peak_slots, cost, write_cost, read_cost;
    char unwritable[96];
} bptt_plan_json_stated;

/* The largest whole count a plan file may state: 2^53, the last of the
 * whole numbers a double holds exactly (no plan has that many actions). */
#define BPTT_PLAN_JSON_COUNT_MAX 9007199254740992.0

#define BPTT_PLAN_NO_LIMIT (INT64_MAX / 1048576)

/* Reads text[0..len) into *out (in units of bptt_units_from_alpha; free it
 * with bptt_plan_free): BPTT_OK; BPTT_EINVAL with one sentence in why[cap]
 * (not JSON, no actions, an unknown op, a step that is not a whole number,
 * a length, alpha, memory or disk out of range, a slow level's action in
 * a plan without a slow level, a length (given, stated, or the
 * largest step) above the number of actions read, which no valid plan
 * has: the validator's work is sized by the length, so by the input);
 * BPTT_ENOMEM. */
int bptt_plan_from_json(const char *text, size_t len,
                        const bptt_plan_json_given *given, bptt_plan **out,
                        char *why, size_t cap);

/* bptt_plan_from_json, and what the file states into *stated (may be
 * NULL). */
int bptt_plan_read_json(const char *text, size_t len,
                        const bptt_plan_json_given *given, bptt_plan **out,
                        bptt_plan_json_stated *stated, char *why, size_t cap);

/* Whether the counts a file states are the validator's counts st of plan
 * (those printed to 6 decimals within their rounding; "cost" where the
 * file states "write_cost" and "read_cost" too, bptt_twolevel_stats_cost
 * of them): BPTT_OK, or BPTT_EINVAL with the first field that differs
 * named in why (an unwritable count first, with its value as given). */
int bptt_plan_json_check(const bptt_plan *plan, const bptt_plan_stats *st,
                         const bptt_plan_json_stated *stated, char *why,
                         size_t cap);

#endif
