/* comparerec.c: the records of a comparison (comparerec.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "io/comparerec.h"

void bptt_compare_fields(const bptt_compare_report *c, size_t p,
                         bptt_fields *f)
{
    const bptt_compare_result *r = &c->res[p];
    f->n = f->lost = 0;
#define FS(k, v) bptt_fields_str(f, (k), (v))
#define FI(k, v) bptt_fields_int(f, (k), (int64_t)(v))
#define FD(k, v) bptt_fields_real(f, (k), (double)(v))
    FI("plan", p);
    FI("reference", p == 0);
    FS("strategy", c->strategy[p]);
    FS("memory_given", c->memory[p]);
    FI("memory_budget_bytes", c->budget_bytes[p]);
    FS("disk_given", c->disk[p]);
    FD("write_cost", c->write_cost);
    FD("read_cost", c->read_cost);
    FI("forward_ops", r->ex.forward_ops);
    FI("recompute_ops", r->ex.recompute_ops);
    FI("checkpoint_peak_bytes", r->checkpoint_peak_bytes);
    FI("total_tracked_peak_bytes", r->total_tracked_peak_bytes);
    FI("slow_writes", r->ex.slow_writes);
    FI("slow_reads", r->ex.slow_reads);
    FI("slow_bytes_written", r->ex.slow_bytes_written);
    FI("slow_bytes_read", r->ex.slow_bytes_read);
    FD("slow_seconds", r->ex.slow_seconds);
    FD("predicted_cost", c->predicted_cost[p]);
    FD("seconds_median", r->seconds_median);
    FD("seconds_min", r->seconds_min);
    FD("ratio_median", r->ratio_median);
    FD("ratio_lo", r->ratio_lo);
    FD("ratio_hi", r->ratio_hi);
    FI("ratio_lo_rank", r->ratio_lo_rank);
    FI("ratio_hi_rank", r->ratio_hi_rank);
    FD("ratio_coverage", r->ratio_coverage);
    FD("forward_step_seconds", r->forward_step_median);
    FD("predicted_ratio", r->predicted_ratio);
    FI("full_checkpoint_bytes", c->full_checkpoint_bytes);
    FI("rounds", r->rounds);
    FI("warmup", c->warmup);
    FI("gradients_identical", r->gradients_identical);
    FS("cell", c->cell);
    FI("layers", c->layers);
    FI("input", c->input);
    FI("hidden", c->hidden);
    FI("batch", c->batch);
    FI("length", c->length);
    FS("task", c->task);
    FI("seed", c->seed);
    FI("threads", c->threads);
#undef FS
#undef FI
#undef FD
}

/* The text table: a line on the reference, a row a plan, the interval's
 * ranks and coverage, and what the reference's own ratio means. */
static void write_text(const bptt_compare_report *c, bptt_strbuf *b)
{
    const bptt_compare_result *r0 = &c->res[0];
    bptt_strbuf_printf(b, "reference %s:%s; %zu rounds after %" PRId64
                       " discarded, each plan's iteration next to one "
                       "of the reference's, in one process\n",
                       c->strategy[0], c->memory[0], r0->rounds, c->warmup);
    bptt_strbuf_printf(b, "%-10s %-16s %12s %14s %12s %12s %12s %9s "
                       "%20s %9s %9s %9s %9s %12s %12s %10s\n", "strategy",
                       "memory", "forward_ops", "ckpt_peak_B", "pred_cost",
                       "s_median", "s_min", "ratio", "ratio_interval",
                       "predicted", "identical", "slow_w", "slow_r",
                       "slow_B_w", "slow_B_r", "slow_s");
    for (size_t p = 0; p < c->n; p++) {
        const bptt_compare_result *r = &c->res[p];
        char iv[48], mem[256];
        snprintf(iv, sizeof iv, "[%.4f, %.4f]", r->ratio_lo, r->ratio_hi);
        snprintf(mem, sizeof mem, "%s%s%s", c->memory[p],
                 *c->disk[p] ? "/" : "", c->disk[p]);
        bptt_strbuf_printf(b, "%-10s %-16s %12" PRId64 " %14zu %12.6g "
                           "%12.6g %12.6g %9.4f %20s %9.4f %9s %9" PRId64
                           " %9" PRId64 " %12" PRIu64 " %12" PRIu64
                           " %10.4g\n",
                           c->strategy[p], mem, r->ex.forward_ops,
                           r->checkpoint_peak_bytes, c->predicted_cost[p],
                           r->seconds_median, r->seconds_min,
                           r->ratio_median, iv, r->predicted_ratio,
                           r->gradients_identical ? "yes" : "NO",
                           r->ex.slow_writes, r->ex.slow_reads,
                           r->ex.slow_bytes_written, r->ex.slow_bytes_read,
                           r->ex.slow_seconds);
    }
    bptt_strbuf_printf(b, "interval: ratios of rank %zu and %zu of %zu, "
                       "coverage %.2f%% (distribution-free, binomial(%zu, "
                       "1/2))%s\n", r0->ratio_lo_rank, r0->ratio_hi_rank,
                       r0->rounds, 100 * r0->ratio_coverage, r0->rounds,
                       r0->ratio_coverage < BPTT_COMPARE_LEVEL
                           ? "; too few rounds for 95%: the widest "
                             "interval there is"
                           : "");
    bptt_strbuf_printf(b, "the reference's ratio is against itself "
                       "(neighbouring iterations of one plan: the "
                       "noise); predicted: the plan's forward ops at the "
                       "reference's measured forward step (%.6g s); pred_cost: "
                       "forward ops + %.6g x hidden states written + %.6g x "
                       "read (slow_*: the slow level of a two-level plan)\n"
                       "%s\n", r0->forward_step_median, c->write_cost,
                       c->read_cost,
                       BPTT_COMPARE_RSS_NOTE);
}

int bptt_compare_write(const bptt_compare_report *c, int format,
                       const bptt_meta *meta, bptt_strbuf *b)
{
    static bptt_fields f;
    if (format == BPTT_FIELDS_TEXT) {
        write_text(c, b);
        return b->failed ? -1 : 0;
    }
    for (size_t p = 0; p < c->n; p++) {
        bptt_compare_fields(c, p, &f);
        if (format == BPTT_FIELDS_JSON) {
            bptt_fields_write(&f, BPTT_FIELDS_JSON, meta, b);
            continue;
        }
        bptt_strbuf row = {0};
        bptt_fields_write(&f, BPTT_FIELDS_CSV, p == 0 ? meta : NULL, &row);
        if (row.failed || !row.p) {
            b->failed = 1;
            bptt_strbuf_free(&row);
            return -1;
        }
        const char *start = row.p;
        if (p > 0) { /* the header once */
            const char *nl = strchr(row.p, '\n');
            start = nl ? nl + 1 : row.p + row.n;
        }
        bptt_strbuf_puts(b, start);
        bptt_strbuf_free(&row);
    }
    return b->failed ? -1 : 0;
}
