/* comparerec.h: the records of a comparison (compare.h): one per plan,
 * with its counts, measured bytes, seconds, ratio to the reference and
 * its interval, whether its gradients were the reference's, its slow
 * level's traffic (a two-level plan, twolevel.h; zeros for one level)
 * and its predicted cost in forward ops, and the model it ran; as text (a table and the interval's note), JSON (one
 * object a plan and line) or csv (a # meta line, a header, a row a plan).
 *
 * Promises: strings (strategies, budgets as given, cell, task) are held
 * whole and escaped or quoted as their format wants (fields.h); a number
 * that is not finite is null in JSON.  Library code: no output but into
 * the buffer.
 */
#ifndef BPTT_IO_COMPAREREC_H
#define BPTT_IO_COMPAREREC_H

#include <stddef.h>
#include <stdint.h>

#include "compare.h"
#include "fields.h"
#include "strbuf.h"

/* RSS is measured per process: a comparison does not report it per plan,
 * and says so (text: its last line; a caller of JSON or csv, elsewhere). */
#define BPTT_COMPARE_RSS_NOTE \
    "RSS is per process, not per plan, so it is not reported per plan"

/* What was compared, and how it came out: n plans, the first the
 * reference. */
typedef struct {
    size_t n;
    const char *const *strategy;    /* [n] the strategies' names */
    const char *const *memory;      /* [n] the budgets as given */
    const int64_t *budget_bytes;    /* [n] the budgets in bytes */
    const char *const *disk;        /* [n] the slow level as given ("inf",
                                       "20slots"), "" for a one-level plan */
    const double *predicted_cost;   /* [n] bptt_twolevel_stats_cost of the
                                       plan: forward ops + write_cost x W +
                                       read_cost x R (one level: its
                                       forward ops) */
    double write_cost, read_cost;   /* forward ops a hidden state */
    const bptt_compare_result *res; /* [n] */
    int64_t warmup;                 /* rounds run first and discarded */
    double full_checkpoint_bytes;   /* full BPTT's, for these sizes */
    const char *cell, *task;
    int64_t layers, input, hidden, batch, length, seed, threads;
} bptt_compare_report;

/* Plan p's fields, in output order, into f. */
void bptt_compare_fields(const bptt_compare_report *r, size_t p,
                         bptt_fields *f);

/* The whole output in format (BPTT_FIELDS_*) onto b, with meta's fields
 * (JSON: in each object; csv: the first line).  0, or -1 when an
 * allocation failed (b->failed). */
int bptt_compare_write(const bptt_compare_report *r, int format,
                       const bptt_meta *meta, bptt_strbuf *b);

#endif
