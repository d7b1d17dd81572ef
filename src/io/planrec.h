/* planrec.h: the records of `bptt plan` and of a plan-mode sweep: one
 * plan's counts as the validator measured them, in slots, as text (a
 * table row), csv or JSON; the schedule as a table; the cost at every
 * budget (--curve); and the validator's verdict on a plan read back
 * (`bptt validate`).
 *
 * Promises: every value is a number or a fixed word of the library (the
 * strategy's and the ops' names), written as it is; a budget is written
 * as its slots (bptt_slots_text, budget.h), never as typed, so a record
 * holds no string from the user.  The same record is written alike by
 * every caller (`bptt plan --format json` and a sweep's records share
 * bptt_plan_record_json).  Library code: no output but into the buffer.
 */
#ifndef BPTT_PLANREC_H
#define BPTT_PLANREC_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"
#include "strbuf.h"

/* One plan of one (strategy, length, alpha, budget) as the validator
 * counted it.  st is NULL for an infeasible budget (a record without
 * counts). */
typedef struct {
    const char *strategy;
    int64_t length, alpha, memory; /* alpha: an internal state; memory: the
                                      budget; both in units */
    int64_t full_peak, min_memory; /* full BPTT's peak, least feasible */
    const bptt_plan_stats *st;
    int64_t unit; /* units of a hidden state (a slot); 0 or 1: every
                     value is in slots */
} bptt_plan_record;

/* The network a plan was sized for (`bptt plan --cell`): its states'
 * bytes are quantum bytes a unit.  cell NULL: none (sizes in slots). */
typedef struct {
    const char *cell;
    int64_t layers, hidden, batch, quantum;
} bptt_plan_sizes;

/* The record's JSON members without braces (strategy ... actions: no
 * timings) into buf[cap]; returns what snprintf returns. */
int bptt_plan_record_json(const bptt_plan_record *r, char *buf, size_t cap);

/* The records in format (BPTT_FIELDS_TEXT, _JSON or _CSV, fields.h), onto
 * b.  The header row (text and csv; with the sizes' columns when sized): */
void bptt_plan_header(bptt_strbuf *b, int format, int sized);
/* One record with its planning seconds and table bytes, and the sizes'
 * bytes when z->cell is set; with a schedule (JSON only) the actions go
 * inside the object as "schedule": [{"op":..., "step":...}, ...]. */
void bptt_plan_row(bptt_strbuf *b, int format, const bptt_plan_record *r,
                   const bptt_plan_sizes *z, double seconds,
                   size_t table_bytes, const bptt_plan *schedule);
/* The record of a budget below the least feasible one (r->st NULL): no
 * counts, the least named. */
void bptt_plan_row_infeasible(bptt_strbuf *b, int format,
                              const bptt_plan_record *r,
                              const bptt_plan_sizes *z);
/* The schedule as a table, one action a line, with the stored slots and
 * the forward ops so far (text and csv), and for a plan with a slow level
 * (slow_budget not 0) the slots on it; unit as in the record. */
void bptt_plan_actions(bptt_strbuf *b, int format, const bptt_plan *p,
                       int64_t unit);
/* The cost of r's strategy at every budget 1..top from tb (r: strategy,
 * length, alpha, full_peak, unit). */
void bptt_plan_curve(bptt_strbuf *b, int format, const bptt_plan_record *r,
                     const bptt_table *tb, int64_t top);

/* What the record of an online plan (`bptt plan --online`) adds: whether
 * the last step was announced as the last, the actions handed out before
 * the end (the plan's first ones), and the offline optimum of the same
 * strategy, length and budget (-1: not known). */
typedef struct {
    int lookahead;
    size_t prefix_actions;
    int64_t offline_forward_ops;
} bptt_plan_online;

/* The header row of online records (text; nothing for json). */
void bptt_plan_online_header(bptt_strbuf *b, int format);
/* One online plan's record, as bptt_plan_row's (text or JSON) with on's
 * fields and the ratio of its forward ops to the offline optimum. */
void bptt_plan_online_row(bptt_strbuf *b, int format,
                          const bptt_plan_record *r, const bptt_plan_sizes *z,
                          double seconds, size_t table_bytes,
                          const bptt_plan_online *on,
                          const bptt_plan *schedule);
/* The online and the offline forward ops at the lengths T = lengths[0 ..
 * n), read from online[T - 1] and offline[T - 1] (as bptt_online_curve
 * gives them; a negative value: not known), text (a table T, online,
 * offline, ratio) or one JSON object per length; r: strategy, alpha,
 * memory and unit. */
void bptt_plan_online_curve(bptt_strbuf *b, int format,
                            const bptt_plan_record *r, int lookahead,
                            const size_t *lengths, size_t n,
                            const int64_t *online, const int64_t *offline);

/* What the record of a two-level plan (`bptt plan --disk`, twolevel.h)
 * adds: the slow level, disk units (BPTT_SLOW_UNLIMITED: no bound,
 * written "inf"), and its write and read costs in forward ops a hidden
 * state; with them the plan's cost, bptt_twolevel_stats_cost of r->st.
 * The costs are written with the digits that read back as the same double
 * (bptt_real_text, numbers.h). */
typedef struct {
    int64_t disk;
    double write_cost, read_cost;
} bptt_plan_slow;

/* The header row of two-level records (text and csv, with the sizes'
 * columns when sized; nothing for json). */
void bptt_plan_slow_header(bptt_strbuf *b, int format, int sized);
/* One two-level plan's record, as bptt_plan_row's with the slow level's
 * values and counts: disk, write_cost, read_cost, slow_writes, slow_reads,
 * slow_peak_slots and cost (with the sizes: disk_bytes, null for inf,
 * and slow_peak_bytes). */
void bptt_plan_slow_row(bptt_strbuf *b, int format, const bptt_plan_record *r,
                        const bptt_plan_sizes *z, double seconds,
                        size_t table_bytes, const bptt_plan_slow *sl,
                        const bptt_plan *schedule);

/* The validator's verdict on plan (ok: it broke no rule; else st says
 * where and which) as text or, with json, one object, and a newline.
 * A plan with a slow level (slow_budget not 0) adds its budget ("disk":
 * slots, or "inf"), the states written and read and its peak. */
void bptt_plan_verdict(bptt_strbuf *b, int json, const bptt_plan *plan,
                       const bptt_plan_stats *st, int ok);

#endif
