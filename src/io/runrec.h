/* runrec.h: the record of a run (`bptt run`): the run as it was asked
 * (network, task, strategy, budget as given, optimizer) and what happened
 * (forward ops, checkpoint and total tracked bytes, RSS, seconds, loss,
 * how disturbed the timing was), as named fields (fields.h) in one fixed
 * order, which a caller writes as JSON, csv or text.
 *
 * Promises: strings are held as given (not copied: they must outlive the
 * fields), never cut; every field is written whatever its value (a number
 * that is not finite becomes JSON null where it is written).  Library
 * code: no output.
 */
#ifndef BPTT_IO_RUNREC_H
#define BPTT_IO_RUNREC_H

#include <stddef.h>
#include <stdint.h>

#include "exec.h"
#include "fields.h"
#include "mem.h"
#include "timing.h"

typedef struct {
    /* the run as asked */
    const char *cell, *task, *strategy, *memory_given, *optimizer;
    int64_t layers, hidden, batch, length, iters, seed;
    double lr;
    /* what happened */
    int64_t budget_bytes, full_bytes, predicted_peak_bytes, plan_forward_ops;
    size_t hidden_bytes, internal_bytes;
    bptt_exec_stats ex;
    bptt_mem_stats mem;
    size_t classes, input;
    double seconds_first, loss_first, loss_last, grad_norm;
    bptt_timing time; /* over the timed iterations */
    int64_t rss_peak_bytes;
    size_t wpack_bytes, wgrad_bytes; /* parts of the working memory */
    int threads;
    /* the slow level of a two-level plan ("" and zeros: one level) */
    const char *disk_given;     /* --disk as written */
    int disk_direct;            /* --disk-direct */
    int64_t slow_budget_bytes;  /* -1: no bound */
    double write_cost, read_cost, plan_cost;
    int64_t plan_slow_writes, plan_slow_reads, predicted_slow_peak_bytes;
    int64_t predicted_slow_bytes_written, predicted_slow_bytes_read;
} bptt_run_report;

/* Every field of the run, in output order, into f. */
void bptt_run_fields(const bptt_run_report *r, bptt_fields *f);

#endif
