/* runrec.c: the record of a run (runrec.h). */
#include "io/runrec.h"
#include "real_impl.h"

void bptt_run_fields(const bptt_run_report *r, bptt_fields *f)
{
    f->n = f->lost = 0;
#define FS(k, v) bptt_fields_str(f, (k), (v))
#define FI(k, v) bptt_fields_int(f, (k), (int64_t)(v))
#define FD(k, v) bptt_fields_real(f, (k), (double)(v))
    FS("cell", r->cell);
    FI("layers", r->layers);
    FI("input", r->input);
    FI("hidden", r->hidden);
    FI("batch", r->batch);
    FI("length", r->length);
    FI("classes", r->classes);
    FS("task", r->task);
    FS("strategy", r->strategy);
    FS("memory_given", r->memory_given);
    FI("memory_budget_bytes", r->budget_bytes);
    FD("alpha", (double)r->internal_bytes / (double)r->hidden_bytes);
    FI("hidden_state_bytes", r->hidden_bytes);
    FI("internal_state_bytes", r->internal_bytes);
    FI("forward_ops", r->ex.forward_ops);
    FI("recompute_ops", r->ex.recompute_ops);
    FI("backward_ops", r->ex.backward_ops);
    FI("output_ops", r->ex.output_ops);
    FI("plan_forward_ops", r->plan_forward_ops);
    FI("checkpoint_peak_bytes", r->mem.peak[BPTT_MEM_CHECKPOINT]);
    FI("predicted_checkpoint_peak_bytes", r->predicted_peak_bytes);
    FI("full_checkpoint_bytes", r->full_bytes);
    FI("working_peak_bytes", r->mem.peak[BPTT_MEM_WORKING]);
    FI("parameter_bytes", r->mem.peak[BPTT_MEM_PARAMS]);
    FI("gradient_bytes", r->mem.peak[BPTT_MEM_GRADS]);
    FI("optimizer_bytes", r->mem.peak[BPTT_MEM_OPTIMIZER]);
    FI("data_bytes", r->mem.peak[BPTT_MEM_DATA]);
    FI("total_tracked_peak_bytes", r->mem.total_peak);
    FI("rss_peak_bytes", r->rss_peak_bytes);
    FD("seconds_per_iter", r->time.seconds_median);
    FD("forward_seconds", r->time.forward_seconds_median);
    FD("backward_seconds", r->time.backward_seconds_median);
    FD("forward_step_seconds",
       r->ex.forward_ops ? r->time.forward_seconds_median /
                               (double)r->ex.forward_ops
                         : 0);
    FD("backward_step_seconds",
       r->ex.backward_ops ? r->time.backward_seconds_median /
                                (double)r->ex.backward_ops
                          : 0);
    FD("seconds_first_iter", r->seconds_first);
    FD("seconds_min", r->time.seconds_min);
    FD("seconds_max", r->time.seconds_max);
    FD("seconds_trend", r->time.seconds_trend);
    FD("cpu_share_median", r->time.cpu_share_median);
    FD("cpu_share_min", r->time.cpu_share_min);
    FD("steal_seconds", r->time.steal_seconds);
    FI("disturbed_iters", r->time.disturbed_iters);
    FI("iters", r->iters);
    FI("timed_iters", r->time.timed_iters);
    FD("loss_first", r->loss_first);
    FD("loss_last", r->loss_last);
    FD("grad_norm", r->grad_norm);
    FS("optimizer", r->optimizer);
    FD("lr", r->lr);
    FI("threads", r->threads);
    FI("seed", r->seed);
    FS("precision", REAL_NAME);
    FI("packed_weight_bytes", r->wpack_bytes);
    FI("wgrad_block_bytes", r->wgrad_bytes);
    FS("disk_given", r->disk_given ? r->disk_given : "");
    FI("slow_budget_bytes", r->slow_budget_bytes);
    FI("disk_direct", r->disk_direct);
    FD("write_cost", r->write_cost);
    FD("read_cost", r->read_cost);
    FI("slow_writes", r->ex.slow_writes);
    FI("slow_reads", r->ex.slow_reads);
    FI("plan_slow_writes", r->plan_slow_writes);
    FI("plan_slow_reads", r->plan_slow_reads);
    FI("slow_bytes_written", r->ex.slow_bytes_written);
    FI("slow_bytes_read", r->ex.slow_bytes_read);
    FI("predicted_slow_bytes_written", r->predicted_slow_bytes_written);
    FI("predicted_slow_bytes_read", r->predicted_slow_bytes_read);
    FI("slow_peak_bytes", r->ex.slow_peak_bytes);
    FI("predicted_slow_peak_bytes", r->predicted_slow_peak_bytes);
    FD("slow_seconds", r->time.slow_seconds_median);
    FD("plan_cost", r->plan_cost);
#undef FS
#undef FI
#undef FD
}
