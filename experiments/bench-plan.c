/* bench-plan.c: planner benchmark (not a test).
 *
 * Builds the MSM cost table (alpha = 4) for several lengths and budget
 * ranges with the fast planner and, where it finishes in reasonable time,
 * with the plain dynamic programme (every split of every cell scanned) in
 * the same run, and prints both times and their ratio, the table's memory,
 * the cost at the largest budget (the two must agree) and the process's
 * peak resident memory.  The single plan at t = 100,000 is timed from table
 * to validated plan.  Each time is the median of `reps` runs.
 *
 * usage: bench-plan [threads [fast]]
 *   fast: skip the plain DP (for thread-scaling runs of the fast planner)
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "expt.h"

typedef struct {
    double seconds;
    size_t bytes;
    int64_t cost; /* at the largest budget */
    int64_t plan_ops; /* the plan's forward ops as validated (-1: no plan) */
} outcome;

/* Median of `reps` builds (and, with plan, one plan at max_m each);
 * seconds < 0 on failure. */
static outcome bench(size_t t, int64_t alpha, int64_t min_m, int64_t max_m,
                     int threads, int reference, int plan, int reps)
{
    const bptt_strategy *msm = bptt_strategy_find("msm");
    const bptt_table_options opts = {
        .threads = threads, .reference = reference, .min_budget = min_m};
    outcome o = {-1, 0, -1, -1};
    double sec[8];
    for (int r = 0; r < reps; r++) {
        bptt_table *tb;
        const double t0 = expt_now();
        if (bptt_table_alloc(&tb, msm, t, 1, alpha, max_m, &opts) != BPTT_OK)
            return o;
        bptt_plan *p = NULL;
        if (plan && bptt_table_plan(tb, max_m, &p, NULL) != BPTT_OK) {
            bptt_table_free(tb);
            return o;
        }
        sec[r] = expt_now() - t0;
        bptt_plan_stats st;
        if (p && bptt_plan_validate(p, &st) == BPTT_OK)
            o.plan_ops = st.forward_ops;
        bptt_plan_free(p);
        o.bytes = bptt_table_bytes(tb);
        o.cost = bptt_table_cost(tb, max_m);
        bptt_table_free(tb);
    }
    o.seconds = expt_median(sec, reps);
    return o;
}

static double peak_rss_mib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

int main(int argc, char **argv)
{
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    if (argc > 1)
        threads = atoi(argv[1]);
    const int fast_only = argc > 2 && strcmp(argv[2], "fast") == 0;
    if (threads < 1 || argc > 3 || (argc > 2 && !fast_only)) {
        fprintf(stderr, "usage: bench-plan [threads [fast]] (threads >= 1)\n");
        return 2;
    }
    const int64_t alpha = 4;
    struct {
        size_t t;
        int percent;   /* budgets up to this share of full BPTT's memory */
        int single;    /* 1: only that budget (a single plan) */
        int reference; /* also time the plain DP */
        int reps;
    } cases[] = {{1000, 100, 0, 1, 3},  {1000, 10, 0, 1, 3},
                 {2000, 10, 0, 1, 3},   {5000, 1, 0, 1, 1},
                 {10000, 10, 0, 0, 3},  {10000, 1, 0, 0, 3},
                 {100000, 5, 1, 0, 3},  {100000, 1, 1, 0, 3}};
    printf("# MSM planner, alpha = %" PRId64 ", threads = %d; seconds are "
           "medians; plain = every split scanned\n",
           alpha, threads);
    printf("%7s %8s %9s %10s %10s %8s %10s %12s %10s\n", "t", "budgets",
           "max_slots", "fast_s", "plain_s", "speedup", "table_MiB",
           "cost_at_max", "rss_MiB");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const size_t t = cases[i].t;
        const int64_t full = bptt_full_peak(t, 1, alpha);
        const int64_t max_m = full * cases[i].percent / 100;
        const int64_t min_m = cases[i].single ? max_m : 0;
        char budgets[16];
        snprintf(budgets, sizeof budgets, "%s%d%%",
                 cases[i].single ? "=" : "<=", cases[i].percent);
        const outcome f = bench(t, alpha, min_m, max_m, threads, 0,
                                cases[i].single, cases[i].reps);
        if (f.seconds < 0) {
            printf("%7zu %8s %9" PRId64 "   (failed)\n", t, budgets, max_m);
            continue;
        }
        outcome p = {-1, 0, -1, -1};
        if (cases[i].reference && !fast_only)
            p = bench(t, alpha, 0, max_m, threads, 1, 0, cases[i].reps);
        char plain[16] = "-", ratio[16] = "-";
        if (p.seconds >= 0) {
            snprintf(plain, sizeof plain, "%.3f", p.seconds);
            snprintf(ratio, sizeof ratio, "%.0fx", p.seconds / f.seconds);
        }
        printf("%7zu %8s %9" PRId64 " %10.3f %10s %8s %10.2f %12" PRId64
               " %10.0f%s\n",
               t, budgets, max_m, f.seconds, plain, ratio,
               (double)f.bytes / 1048576.0, f.cost, peak_rss_mib(),
               (p.seconds >= 0 && p.cost != f.cost) ||
                       (f.plan_ops >= 0 && f.plan_ops != f.cost)
                   ? "  COST MISMATCH"
                   : "");
        fflush(stdout);
    }
    return 0;
}
