/* bench-plan.c: planner benchmark (not a test).  Times building the MSM
 * cost table for alpha = 4 at several lengths and budget ranges, and
 * reports the table's memory and the cost at a few budgets.  Each figure is
 * the median of three builds, all in one run. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "expt.h"

/* Median seconds of `reps` builds; 0 on failure. */
static double bench(size_t t, int64_t alpha, int64_t max_m, int threads,
                    int reps, size_t *bytes, int64_t *cost_at_max)
{
    const bptt_strategy *msm = bptt_strategy_find("msm");
    bptt_table_options opts = {.threads = threads};
    double sec[8];
    for (int r = 0; r < reps; r++) {
        bptt_table *tb;
        const double t0 = expt_now();
        if (bptt_table_alloc(&tb, msm, t, 1, alpha, max_m, &opts) != BPTT_OK)
            return 0;
        sec[r] = expt_now() - t0;
        *bytes = bptt_table_bytes(tb);
        *cost_at_max = bptt_table_cost(tb, max_m);
        bptt_table_free(tb);
    }
    qsort(sec, (size_t)reps, sizeof sec[0], expt_cmp_double);
    return sec[reps / 2];
}

int main(int argc, char **argv)
{
    int threads = 0;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    if (argc > 1)
        threads = atoi(argv[1]);
    const int64_t alpha = 4;
    struct {
        size_t t;
        int percent; /* budgets up to this share of full BPTT's memory */
        int reps;
    } cases[] = {{1000, 100, 3}, {1000, 10, 3}, {2000, 10, 3},
                 {5000, 1, 1}};
    printf("# MSM table build, alpha = %" PRId64 ", threads = %d\n", alpha,
           threads);
    printf("%6s %9s %10s %12s %12s %14s\n", "t", "budgets", "max_slots",
           "seconds", "table_MiB", "cost_at_max");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const size_t t = cases[i].t;
        const int64_t full = bptt_full_peak(t, 1, alpha);
        const int64_t max_m = full * cases[i].percent / 100;
        size_t bytes = 0;
        int64_t c = -1;
        double s = bench(t, alpha, max_m, threads, cases[i].reps, &bytes, &c);
        if (s == 0) {
            printf("%6zu %8d%% %10" PRId64 "   (failed: too large)\n", t,
                   cases[i].percent, max_m);
            continue;
        }
        printf("%6zu %8d%% %10" PRId64 " %12.3f %12.1f %14" PRId64 "\n", t,
               cases[i].percent, max_m, s, (double)bytes / 1048576.0, c);
        fflush(stdout);
    }
    return 0;
}
