/* run.c: `bptt run`: training iterations of a real recurrent network
 * under one strategy and budget, with what happened measured: forward ops,
 * checkpoint and total tracked bytes, RSS, time per iteration, loss.
 *
 * Promises: every input is checked, and every byte the run will hold is
 * counted against this machine's physical memory, before anything is
 * allocated (one line and exit 2 or 3 otherwise; an existing --trace file
 * is refused too); after each iteration the loss, the gradients and the
 * updated parameters are checked for NaN and infinity (finite.h), and a
 * run that meets one stops with the iteration and the tensor named and
 * exit 1.  --trace is a log: created before the first iteration, one row
 * per completed iteration written whole and flushed, kept when the run
 * stops early (divergence, out of memory, a signal) with at least one row,
 * and the one error line says so; the result (stdout), --memory-trace (the
 * last iteration's actions with the bytes held after each, written whole
 * by bptt_memtrace_write and never over an existing file) and --dump-grads
 * appear only when the whole run succeeded.  On a terminal (stderr) one
 * progress line is redrawn in place and cleared at the end; elsewhere
 * nothing.  The first SIGINT or SIGTERM stops the run between iterations
 * with one line saying what was kept and what was not, exit 130 or 143; a
 * second of the same kind ends it at once.  Every iteration's wall, CPU
 * and steal time is measured, and the result says how disturbed the timed
 * iterations were (cpu_share_*, steal_seconds, disturbed_iters; doc/run.md).
 * The result holds every value whole, whatever it is (a --task path of any
 * length and bytes): JSON strings escaped by bptt_json_string (json.h;
 * invalid UTF-8 becomes U+FFFD), a number that is not finite as null; csv
 * fields quoted as RFC 4180 wants; text as given.  The gradient dump
 * writes every tensor with its rank from the model's table (model.h), so a
 * weight matrix stays 2-D when a size is 1 (Wo at --hidden 1), and
 * index.txt says the same shapes; bias vectors are 1-D.
 *
 * Test hook, deliberately left out of --help: --fail-alloc N makes the
 * N-th tracked allocation of the run (src/train/mem.c) fail, so that a test can
 * walk every allocation of a small run (tests/test_cli_fail).  It is an option,
 * not an environment variable, so that it is parsed and checked like the
 * others, and hidden because it is no use outside that test.  The
 * arguments are parsed in src/cli/run_args.c (run.h). */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "budget.h"
#include "cli.h"
#include "live.h"
#include "data.h"
#include "train/aslimit.h"
#include "exec.h"
#include "finite.h"
#include "json.h"
#include "meta.h"
#include "model.h"
#include "npy.h"
#include "session.h"
#include "run.h"
#include "run_online.h"
#include "dump.h"
#include "fields.h"
#include "io/runrec.h"

#define CMD "run"

void openblas_set_num_threads(int);

/* ---- output ----------------------------------------------------------- */

/* The record of the run (runrec.h), filled in as it goes. */
typedef bptt_run_report run_result;

/* The result, whole, in a malloc'd block (*text, *len), in a->format
 * (fields.h): made before the gradient dump, so that what cannot be made
 * stops the run with neither written.  0, or ENOMEM. */
static int make_result(const run_args *a, const run_result *r, char **text,
                       size_t *len)
{
    static bptt_fields f;
    bptt_run_fields(r, &f);
    bptt_meta meta;
    bptt_meta_collect(&meta);
    bptt_strbuf b = {0};
    const int format = a->format == FORMAT_JSON  ? BPTT_FIELDS_JSON
                       : a->format == FORMAT_CSV ? BPTT_FIELDS_CSV
                                                 : BPTT_FIELDS_TEXT;
    bptt_fields_write(&f, format, &meta, &b);
    /* for people: a median of too few iterations is said to be one (json
     * and csv carry timed_iters for programs to judge) */
    if (format == BPTT_FIELDS_TEXT && r->time.timed_iters < RUN_ROBUST_TIMED)
        bptt_strbuf_printf(&b, "%-32s only %lld iteration%s timed after the "
                           "warm-up: seconds_per_iter is not a robust "
                           "median (give --iters %d or more)\n", "note",
                           (long long)r->time.timed_iters,
                           r->time.timed_iters == 1 ? "" : "s",
                           RUN_ROBUST_TIMED + 1);
    *len = b.n;
    *text = bptt_strbuf_take(&b);
    return *text ? 0 : ENOMEM;
}

/* ---- the run ------------------------------------------------------------ */

void run_session_spec(const run_args *a, bptt_session_spec *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->cell = a->cell;
    sp->layers = (size_t)a->layers;
    sp->hidden = (size_t)a->hidden;
    sp->batch = (size_t)a->batch;
    sp->length = (size_t)a->length;
    sp->input = (size_t)a->input;
    sp->task = a->task;
    sp->optimizer = a->optimizer;
    sp->lr = a->lr;
    sp->seed = (unsigned long)a->seed;
    sp->keep_last_params = a->dump_dir != NULL;
    sp->slow_dir = a->disk_dir;
    sp->slow_direct = a->disk_direct;
}

/* The parts of what a run holds that are known before anything is
 * allocated, in bytes (bptt_session_size). */
typedef bptt_session_sizes run_sizes;

/* The sizes of a run (or of a comparison) before anything is allocated:
 * the task's and the model's, checked to fit in memory with at least one
 * stored state.  Fills *z, or prints the error and returns the exit
 * code. */
int run_preflight_sizes(const char *cmd, const run_args *a,
                        bptt_session_sizes *z)
{
    bptt_session_spec sp;
    run_session_spec(a, &sp);
    char why[4200];
    int rc = bptt_session_size(&sp, z, why, sizeof why);
    if (rc != BPTT_OK)
        return cli_error(EXIT_USAGE, cmd, "--task %s: %s", a->task, why);
    if ((rc = run_fits(cmd, "the data alone (length x batch x input) "
                       "needs", z->data_bytes,
                       "use a smaller --length or --batch")))
        return rc;
    /* at least one stored state besides the working set */
    return run_fits(cmd, "these sizes need at least",
                    z->fixed_bytes + z->hidden_bytes,
                    "use smaller --hidden, --batch, --length or --layers");
}

static int preflight(const run_args *a, run_sizes *z,
                     bptt_budget_resolved *budget)
{
    int rc = run_preflight_sizes(CMD, a, z);
    if (rc != 0)
        return rc;
    if ((rc = run_budget(CMD, "--memory", a->memory, (size_t)a->length, z,
                         budget)) != 0)
        return rc;
    /* A budget above full BPTT's needs is fine as given (the plan holds no
     * more than it needs); what the plan can hold must fit in memory. */
    const double held = (double)budget->held_bytes;
    char c[32], what[96];
    snprintf(what, sizeof what, "with %s of checkpoints this run would "
             "hold up to", bptt_bytes_text(c, sizeof c, held));
    return run_fits(CMD, what, z->fixed_bytes + held,
                    "give a smaller --memory, e.g. 5%");
}

/* Under an address-space limit (ulimit -v): room for the OpenBLAS
 * buffers of the threads beyond those it started with (each would
 * otherwise spin in OpenBLAS's allocator when it first calls it) and for
 * what the run holds; 0, or the one-line refusal and EXIT_USAGE. */
int run_address_space_room(const char *cmd, int threads,
                           const bptt_session_sizes *z, double held)
{
    int64_t left, limit;
    if (!bptt_address_space_left(&left, &limit))
        return 0;
    extern char **environ;
    const int started = bptt_blas_start_threads(environ);
    /* what the run allocates itself fails cleanly (its allocator returns
     * BPTT_ENOMEM) but is counted, so that the advice is a limit that
     * works */
    const double need =
        (threads > started ? threads - started : 0) *
            (double)BPTT_BLAS_THREAD_BYTES +
        z->fixed_bytes + held + (double)BPTT_AS_SLACK_BYTES;
    if (need < 9e18 && bptt_address_space_fits((int64_t)need) == 0)
        return 0;
    return cli_error(EXIT_USAGE, cmd, "the address-space limit (ulimit -v "
                     "%lld) leaves no room for this run: %d threads (OpenBLAS "
                     "reserves 128 MiB for each beyond the %d it started with) "
                     "and %.1f MiB of data, checkpoints and working set; "
                     "raise it to ulimit -v %lld, or give fewer --threads",
                     (long long)(limit / 1024), threads, started,
                     (z->fixed_bytes + held) / 1048576.0,
                     bptt_address_space_advice(limit - left, (int64_t)need));
}

int run_set_threads(const char *cmd, int64_t asked,
                    const bptt_session_sizes *z, double held_bytes,
                    int *threads)
{
    int n = (int)asked;
#ifdef _OPENMP
    /* before OpenBLAS is given the threads (it then maps their buffers) */
    const int rc = run_address_space_room(cmd, n > 0 ? n
                                                    : omp_get_max_threads(),
                                          z, held_bytes);
    if (rc != 0)
        return rc;
    if (n > 0)
        omp_set_num_threads(n);
    n = omp_get_max_threads();
#else
    (void)cmd, (void)z, (void)held_bytes;
    n = 1;
#endif
    openblas_set_num_threads(n);
    *threads = n;
    return 0;
}

/* What a run holds while it iterates. */
typedef struct {
    const run_args *a;
    run_result *r;
    bptt_plan *plan;
    bptt_mem *mem;
    bptt_session *session;
    bptt_sample *samples; /* one per iteration */
    bptt_exec_point *points; /* --memory-trace: one per action */
    bptt_trace trace;
    live_progress progress;
    int64_t done; /* iterations completed */
    struct run_text *text; /* --online: the sequences */
    struct run_row *rows;  /* --online: one per iteration */
    int64_t budget_bytes, quantum;
} run_state;

/* The end of the line of a run that stops early, into buf: what was kept
 * (the trace, when it has a row; closed here) and what was not. */
static const char *kept_text(run_state *s, char *buf, size_t cap)
{
    const run_args *a = s->a;
    live_progress_clear(&s->progress);
    live_signals_restore();
    const int64_t rows = s->trace.rows;
    if (!a->trace || !bptt_trace_close(&s->trace, a->trace, 1))
        snprintf(buf, cap, "nothing was written");
    else
        snprintf(buf, cap, "kept: the trace of %" PRId64 " iteration%s in "
                 "%s; not written: the result%s%s", rows, rows == 1 ? "" : "s",
                 a->trace, a->memory_trace ? ", the memory trace" : "",
                 a->dump_dir ? ", the gradient dump" : "");
    return buf;
}

/* What a run that completed keeps when writing an output at its end
 * fails: "; kept: the trace of N iterations in FILE[, the memory trace in
 * FILE]" (memtrace: the memory trace was written), or "" when nothing. */
static void kept_at_end(const run_args *a, int memtrace, char *buf,
                        size_t cap)
{
    buf[0] = '\0';
    if (a->trace)
        snprintf(buf, cap, "; kept: the trace of %" PRId64 " iteration%s in "
                 "%s", a->iters, a->iters == 1 ? "" : "s", a->trace);
    if (memtrace)
        snprintf(buf + strlen(buf), cap - strlen(buf),
                 "%s the memory trace in %s", a->trace ? "," : "; kept:",
                 a->memory_trace);
}

/* The one line of a run that stops early: "bptt run: WHAT; kept: ..." */
__attribute__((format(printf, 3, 4))) static int
stopped(run_state *s, int code, const char *fmt, ...)
{
    char what[512], kept[4400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return cli_error(code, CMD, "%s; %s", what,
                     kept_text(s, kept, sizeof kept));
}

/* The error line of an iteration that made a NaN or an infinity. */
static int diverged(run_state *s, int64_t it, const bptt_session_fault *f)
{
    char what[160], more[64] = "";
    const bptt_nonfinite *w = &f->where;
    if (w->count > 1)
        snprintf(more, sizeof more, " (and %zu more values)", w->count - 1);
    if (strcmp(f->arena, "loss") == 0)
        snprintf(what, sizeof what, "the loss is %s",
                 bptt_strerror(f->status));
    else
        snprintf(what, sizeof what, "%s%s %s[%zu, %zu] is %s%s",
                 strcmp(f->arena, "parameter") == 0 ? "after the update, "
                                                    : "",
                 f->arena, *w->tensor ? w->tensor : "?", w->row, w->col,
                 bptt_strerror(f->status), more);
    return stopped(s, 1, "iteration %" PRId64 " of %" PRId64 ": %s; the "
                   "training diverged (try a smaller --lr than %g)", it + 1,
                   s->a->iters, what, s->a->lr);
}

/* Iteration it (0-based): the session's gradients of batch it, timed, and
 * its update, each checked for NaN and infinity, then the trace's row.
 * 0, or the error line printed and the exit code. */
static int iterate(run_state *s, int64_t it)
{
    const run_args *a = s->a;
    run_result *r = s->r;
    bptt_session_fault f;
    bptt_clock c0, c1;
    if (s->points && it == a->iters - 1) /* the last iteration's actions */
        bptt_session_record(s->session, s->points);
    bptt_clock_start(&c0);
    int rc = a->online ? run_online_gradients(a, s->r, s->session, s->text,
                                              s->budget_bytes, s->quantum,
                                              it, &s->rows[it], &f)
                       : bptt_session_gradients(s->session, s->plan,
                                                (size_t)it, &r->ex, &f);
    bptt_clock_stop(&c1);
    bptt_sample_between(&c0, &c1, &s->samples[it]);
    bptt_session_record(s->session, NULL);
    s->samples[it].forward = r->ex.forward_seconds;
    s->samples[it].backward = r->ex.backward_seconds;
    s->samples[it].slow = r->ex.slow_seconds;
    if (rc == BPTT_ENONFINITE)
        return diverged(s, it, &f);
    if (rc == BPTT_EIO) /* the slow level's folder and what it said */
        return stopped(s, 1, "training failed in iteration %" PRId64 " of "
                       "%" PRId64 ": the slow level's file in %s: %s (give "
                       "--disk-dir a folder with room, or a smaller --disk)",
                       it + 1, a->iters,
                       a->disk_dir ? a->disk_dir : "a temporary folder",
                       r->ex.slow_errno ? strerror(r->ex.slow_errno)
                                        : bptt_strerror(rc));
    if (rc != BPTT_OK)
        return stopped(s, 1, "training failed in iteration %" PRId64 " of "
                       "%" PRId64 ": %s%s", it + 1, a->iters,
                       bptt_strerror(rc),
                       rc == BPTT_ENOMEM && a->fail_alloc ? " (--fail-alloc)"
                                                          : "");
    const bptt_model *m = bptt_session_model(s->session);
    if (it == 0)
        r->loss_first = r->ex.loss;
    r->loss_last = r->ex.loss;
    r->grad_norm = bptt_model_grad_norm(m);
    r->mem = *bptt_mem_stats_get(s->mem);
    r->wpack_bytes = m->wpack_bytes;
    r->wgrad_bytes = m->wgrad_bytes;
    if (bptt_session_update(s->session, &f) != BPTT_OK)
        return diverged(s, it, &f);
    if (a->trace) {
        const int err = bptt_trace_row(&s->trace, it + 1, r->ex.loss,
                                       r->grad_norm, &s->samples[it]);
        if (err)
            return stopped(s, 1, "--trace %s: %s after iteration %" PRId64
                           " of %" PRId64, a->trace, strerror(err), it + 1,
                           a->iters);
    }
    s->done = it + 1;
    live_progress_show(&s->progress, it + 1, a->iters, r->ex.loss,
                       s->samples[it].wall);
    return 0;
}

/* A caught SIGINT or SIGTERM: the line, and 128 + the signal. */
static int interrupted(run_state *s)
{
    const int sig = live_signal_caught();
    const char *name = sig == SIGINT ? "SIGINT" : "SIGTERM";
    if (s->done == 0)
        return stopped(s, 128 + sig, "interrupted (%s) before iteration 1 of "
                       "%" PRId64, name, s->a->iters);
    return stopped(s, 128 + sig, "interrupted (%s) after iteration %" PRId64
                   " of %" PRId64, name, s->done, s->a->iters);
}

/* The iterations, with the trace, the progress line and the signals: 0, or
 * the error line printed and the exit code. */
static int iterate_all(run_state *s)
{
    const run_args *a = s->a;
    live_progress_start(&s->progress);
    s->trace.fd = -1;
    s->trace.rows = 0;
    live_signals_catch();
    if (a->trace) {
        const int err = bptt_trace_open(&s->trace, a->trace);
        if (err) {
            live_signals_restore();
            return err == EEXIST
                       ? cli_error(EXIT_USAGE, CMD, "--trace: '%s' exists "
                                   "(remove it or name a new file)", a->trace)
                       : cli_error(1, CMD, "--trace %s: %s; nothing was "
                                   "written", a->trace, strerror(err));
        }
    }
    for (int64_t it = 0; it < a->iters; it++) {
        if (live_signal_caught())
            return interrupted(s);
        const int rc = iterate(s, it);
        if (rc)
            return rc;
    }
    if (live_signal_caught())
        return interrupted(s);
    live_progress_clear(&s->progress);
    live_signals_restore();
    if (a->trace)
        bptt_trace_close(&s->trace, a->trace, 1);
    return 0;
}

/* After a whole run: the gradient dump, then the result. */
static int finish(run_state *s)
{
    const run_args *a = s->a;
    run_result *r = s->r;
    r->seconds_first = s->samples[0].wall;
    if (bptt_timing_summarize(s->samples, (size_t)a->iters, r->threads, &r->time))
        return cli_error(1, CMD, "out of memory at the end of the run%s",
                         a->trace ? "; the trace is whole, the result was "
                                    "not written"
                                  : "");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r->rss_peak_bytes = (int64_t)ru.ru_maxrss * 1024;
    char *result = NULL;
    size_t result_len = 0;
    const int merr = make_result(a, r, &result, &result_len);
    if (merr)
        return cli_error(1, CMD, "%s at the end of the run; not written: "
                         "the result%s%s%s", strerror(merr),
                         a->memory_trace ? ", the memory trace" : "",
                         a->dump_dir ? ", the gradient dump" : "",
                         a->trace ? "; the trace is whole" : "");
    if (a->memory_trace) {
        const int err = bptt_memtrace_write(a->memory_trace, s->points,
                                            s->plan->n_actions);
        if (err) {
            char kept[4200];
            kept_at_end(a, 0, kept, sizeof kept);
            free(result);
            return cli_error(err == EEXIST ? EXIT_USAGE : 1, CMD,
                             "--memory-trace %s: %s; not written: the "
                             "result, the memory trace%s%s", a->memory_trace,
                             err == EEXIST ? "it appeared during the run"
                                           : strerror(err),
                             a->dump_dir ? ", the gradient dump" : "", kept);
        }
    }
    if (a->dump_dir) {
        const int err = bptt_dump_write(a->dump_dir,
                                        bptt_session_model(s->session),
                                   bptt_session_batch(s->session),
                                   bptt_session_last_params(s->session));
        if (err) {
            char kept[4200];
            kept_at_end(a, a->memory_trace != NULL, kept, sizeof kept);
            free(result);
            return cli_error(1, CMD, "--dump-grads %s: %s%s; not written: "
                             "the result, the gradient dump", a->dump_dir,
                             strerror(err), kept);
        }
    }
    if (s->rows && a->format == FORMAT_TEXT) { /* --online's iterations */
        printf("%-8s %6s %8s %12s %17s %22s %10s\n", "online", "iter",
               "steps", "forward_ops", "plan_forward_ops",
               "checkpoint_peak_bytes", "loss");
        for (int64_t k = 0; k < a->iters; k++) {
            const struct run_row *w = &s->rows[k];
            printf("%-8s %6" PRId64 " %8" PRId64 " %12" PRId64
                   " %17" PRId64 " %22zu %10.6f\n", "online", k + 1,
                   w->steps, w->forward_ops, w->plan_forward_ops,
                   w->peak_bytes, w->loss);
        }
    }
    fwrite(result, 1, result_len, stdout); /* errors: cli.c's finish */
    free(result);
    return 0;
}

static int run_with(run_args *a, struct run_text *text);

int cli_run(int argc, char **argv)
{
    run_args a;
    int help;
    int rc = run_parse_args(argc, argv, &a, &help);
    if (help) {
        run_usage(stdout);
        return 0;
    }
    if (rc)
        return rc;

    /* every check before the first allocation */
    struct run_text *text = NULL;
    if (a.online) {
        if ((rc = run_text_load(&a, (size_t)a.length, &text)) != 0)
            return rc;
        if (text->longest < (size_t)a.length) /* the room a line needs */
            a.length = (int64_t)text->longest;
    }
    rc = run_with(&a, text);
    run_text_free(text);
    return rc;
}

/* cli_run on its arguments (and --online's text) */
static int run_with(run_args *ap, struct run_text *text)
{
    run_args a = *ap;
    int rc;
    run_sizes z;
    bptt_budget_resolved budget;
    if ((rc = preflight(&a, &z, &budget)) != 0)
        return rc;
    const int64_t budget_bytes = budget.bytes;
    const size_t T = (size_t)a.length;
    const double hb = z.hidden_bytes, sb = z.internal_bytes;
    const double full_ckpt = z.full_checkpoint_bytes;
    bptt_units u;
    bptt_units_from_bytes(&u, (int64_t)hb, (int64_t)sb);
    int threads;
    if ((rc = run_set_threads(CMD, a.threads, &z, (double)budget.held_bytes,
                              &threads)))
        return rc;
    bptt_plan *plan = NULL;
    bptt_plan_stats ps;
    bptt_slow_level slow;
    if ((rc = run_plan(&a, &z, &budget, threads, &plan, &ps, &slow)) != 0)
        return rc;
    /* the slow level's file, in its folder, before any work */
    if (a.disk && (rc = run_slow_room(CMD, a.disk_dir, a.disk_direct,
                                      ps.slow_peak_units * u.quantum))) {
        bptt_plan_free(plan);
        return rc;
    }
    /* the plan is held for the whole run, beside everything else */
    /* with --memory-trace, the record of one iteration's actions too */
    /* (a two-level plan's slow ops pass the bound: its actions, made) */
    const double plan_bytes =
        (a.disk ? (double)plan->n_actions * sizeof(bptt_action)
                : bptt_plan_bytes_bound(T, ps.forward_ops)) +
        (a.memory_trace ? (double)ps.n_actions * sizeof(bptt_exec_point) : 0);
    const double held = (double)budget.held_bytes;
    char pb[32], what[96];
    snprintf(what, sizeof what, "with its plan (up to %s) this run would "
             "hold up to", bptt_bytes_text(pb, sizeof pb, plan_bytes));
    if ((rc = run_fits(CMD, what, z.fixed_bytes + held + plan_bytes,
                       "use a smaller --length"))) {
        bptt_plan_free(plan);
        return rc;
    }

    run_result r = {.cell = a.cell->name, .task = a.task,
                    .strategy = a.strategy->name, .memory_given = a.memory,
                    .optimizer = a.optimizer, .layers = a.layers,
                    .hidden = a.hidden, .batch = a.batch, .length = a.length,
                    .iters = a.iters, .seed = a.seed, .lr = a.lr};
    r.budget_bytes = budget_bytes;
    r.full_bytes = (int64_t)full_ckpt;
    r.predicted_peak_bytes = ps.peak_units * u.quantum;
    r.plan_forward_ops = ps.forward_ops;
    r.disk_given = a.disk ? a.disk : "";
    r.disk_direct = a.disk_direct;
    r.slow_budget_bytes = slow.budget == BPTT_SLOW_UNLIMITED ? -1
                                                             : slow.budget;
    r.write_cost = a.disk ? a.write_cost : 0;
    r.read_cost = a.disk ? a.read_cost : 0;
    r.plan_slow_writes = ps.slow_writes;
    r.plan_slow_reads = ps.slow_reads;
    r.predicted_slow_peak_bytes = ps.slow_peak_units * u.quantum;
    r.predicted_slow_bytes_written = ps.slow_write_units * u.quantum;
    r.predicted_slow_bytes_read = ps.slow_read_units * u.quantum;
    r.plan_cost = bptt_twolevel_stats_cost(&ps, u.hidden_units, &slow);
    r.hidden_bytes = (size_t)hb;
    r.internal_bytes = (size_t)sb;
    r.threads = threads;

    run_state s;
    memset(&s, 0, sizeof s);
    s.a = &a;
    s.r = &r;
    s.plan = plan;
    s.trace.fd = -1;
    s.text = text;
    s.budget_bytes = budget_bytes;
    s.quantum = u.quantum;
    s.mem = bptt_mem_alloc();
    if (!s.mem) {
        bptt_plan_free(plan);
        return cli_error(1, CMD, "out of memory");
    }
    if (a.fail_alloc)
        bptt_mem_fail_at(s.mem, (size_t)a.fail_alloc);
    const char *hook = a.fail_alloc ? " (--fail-alloc)" : "";
    s.samples = calloc((size_t)a.iters, sizeof *s.samples);
    if (a.online && s.samples) {
        s.rows = calloc((size_t)a.iters, sizeof *s.rows);
        if (!s.rows) {
            free(s.samples);
            s.samples = NULL;
        }
    }
    if (a.memory_trace && s.samples) {
        s.points = calloc(plan->n_actions, sizeof *s.points);
        if (!s.points) {
            free(s.samples);
            s.samples = NULL;
        }
    }
    bptt_session_spec sp;
    run_session_spec(&a, &sp);
    char why[4200] = "";
    rc = s.samples ? bptt_session_open(&s.session, &sp, s.mem, why,
                                       sizeof why)
                   : BPTT_ENOMEM;
    if (rc != BPTT_OK) {
        if (rc == BPTT_ENOMEM)
            rc = cli_error(1, CMD, "training failed: %s%s", bptt_strerror(rc),
                           hook);
        else
            rc = cli_error(EXIT_USAGE, CMD, "--task %s: %s", a.task, why);
        goto out;
    }
    r.input = bptt_session_input(s.session);
    r.classes = bptt_session_classes(s.session);
    if (a.online && (bptt_session_classes(s.session) != text->classes ||
                     bptt_session_fetch(s.session, 0) != BPTT_OK)) {
        rc = cli_error(1, CMD, "--task %s changed since it was read",
                       a.task);
        goto out;
    }
    rc = iterate_all(&s);
    if (rc == 0)
        rc = finish(&s);
out:
    free(s.samples);
    free(s.rows);
    free(s.points);
    bptt_session_close(s.session);
    bptt_plan_free(plan);
    bptt_mem_free(s.mem);
    return rc;
}
