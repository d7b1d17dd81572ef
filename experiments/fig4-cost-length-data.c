/* fig4-cost-length-data.c: data of figure 4 (experiments/fig4-cost-length).
 *
 * Forward ops per step against the sequence length t (log-spaced, 1 to TOP)
 * at a few fixed budgets m (slots), for MSM (internal state = alpha hidden
 * states, default alpha = 1: every stored state costs one slot) and HSM,
 * beside the growth t^(1/m) of the paper's O(t^(1+1/m)) bound and the bound
 * with its constant, m t^(1/m) forward ops per step.
 *
 * One cost table per strategy at the top length and the largest budget
 * serves every (t, m) (strategy->cost(table, t, m)).  The HSM table is
 * checked against Griewank and Walther's binomial closed form at every
 * point (the count of disagreements goes into the '#' line; it is 0).
 *
 * Writes CSV to stdout ('#' lines first), the time of each table build to
 * stderr.  Not a test.
 *
 * usage: fig4-cost-length-data [-t TOP] [-m M1,M2,...] [-a ALPHA] [-p N]
 *                              [-j THREADS]
 *   TOP      longest length (default 10000)
 *   M...     budgets in slots (default 5,10,50)
 *   ALPHA    MSM's internal state in slots (default 1)
 *   N        lengths per decade (default 20)
 *   THREADS  threads for building the tables (default: OpenMP's)
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bptt.h"
#include "expt.h"

#define MAX_BUDGETS 8
#define MAX_LENGTHS 512

int main(int argc, char **argv)
{
    size_t top = 10000;
    int64_t budgets[MAX_BUDGETS] = {5, 10, 50};
    int n_budgets = 3, per_decade = 20, threads = 0;
    int64_t alpha = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            goto usage;
        if (strcmp(argv[i], "-t") == 0)
            top = (size_t)strtoull(v, NULL, 10);
        else if (strcmp(argv[i], "-a") == 0)
            alpha = strtoll(v, NULL, 10);
        else if (strcmp(argv[i], "-p") == 0)
            per_decade = atoi(v);
        else if (strcmp(argv[i], "-j") == 0)
            threads = atoi(v);
        else if (strcmp(argv[i], "-m") == 0)
            n_budgets = expt_parse_list(v, budgets, MAX_BUDGETS);
        else
            goto usage;
        i++;
    }
    if (top < 1 || per_decade < 1 || alpha < 1 || n_budgets < 1)
        goto usage;
    int64_t max_m = 0;
    for (int b = 0; b < n_budgets; b++) {
        if (budgets[b] < 1)
            goto usage;
        max_m = budgets[b] > max_m ? budgets[b] : max_m;
    }

    size_t len[MAX_LENGTHS];
    const size_t n_len = expt_log_lengths(len, MAX_LENGTHS, 1.0, top, per_decade);
    const char *names[] = {"msm", "hsm"};
    bptt_table *tb[2] = {NULL, NULL};
    double secs[2];
    for (int s = 0; s < 2; s++) {
        bptt_table_options opts = {.threads = threads};
        const double t0 = expt_now();
        const int rc = bptt_table_alloc(&tb[s], bptt_strategy_find(names[s]),
                                        top, 1, alpha, max_m, &opts);
        if (rc != BPTT_OK) {
            fprintf(stderr, "fig4-cost-length-data: %s table, t = %zu, "
                    "M = %" PRId64 ": %s\n", names[s], top, max_m,
                    bptt_strerror(rc));
            bptt_table_free(tb[0]);
            return 1;
        }
        secs[s] = expt_now() - t0;
        fprintf(stderr, "  %s table, alpha = %" PRId64 ", t = %zu, budgets "
                "up to %" PRId64 ": %.2f s\n", names[s], alpha, top, max_m,
                secs[s]);
    }

    /* cost(s, i, b): strategy s at length len[i], budget budgets[b] */
#define COST(s, i, b) \
    (bptt_table_strategy(tb[s])->cost(tb[s], len[i], budgets[b]))

    /* HSM table against the closed form, at every point drawn */
    int mismatches = 0;
    for (int b = 0; b < n_budgets; b++)
        for (size_t i = 0; i < n_len; i++)
            if (COST(1, i, b) !=
                bptt_hsm_closed_cost((int64_t)len[i], budgets[b]))
                mismatches++;

    printf("# figure 4: forward ops per step (cost / t, the first sweep "
           "included) against the sequence length t at fixed budgets m "
           "(slots: hidden state 1, internal state alpha = %" PRId64
           ", h(0) counted), msm and hsm, beside t^(1/m), the per-step "
           "growth of the paper's O(t^(1+1/m)) bound, and m t^(1/m)\n",
           alpha);
    printf("# made by experiments/fig4-cost-length-data");
    for (int i = 1; i < argc; i++)
        printf(" %s", argv[i]);
    printf(" (libbpttcore): one cost table per strategy at t = %zu, budgets "
           "up to %" PRId64 ", serving every (t, m); built in %.1f s (msm) "
           "and %.1f s (hsm); the hsm table differs from the binomial closed "
           "form at %d of %zu points\n",
           top, max_m, secs[0], secs[1], mismatches,
           n_len * (size_t)n_budgets);
    /* the numbers that matter: msm against t^(1+1/m) for t >= 100, and
     * how often hsm - msm = t - 1 (every time, when alpha = 1) */
    printf("# msm / t^(1+1/m) for 100 <= t <= %zu:", top);
    int equal_gap = 0, points = 0;
    for (int b = 0; b < n_budgets; b++) {
        const int64_t m = budgets[b];
        double lo = 1e300, hi = 0;
        for (size_t i = 0; i < n_len; i++) {
            const int64_t cm = COST(0, i, b), ch = COST(1, i, b);
            points++;
            equal_gap += ch - cm == (int64_t)len[i] - 1;
            if (len[i] < 100)
                continue;
            const double r =
                (double)cm / pow((double)len[i], 1.0 + 1.0 / (double)m);
            lo = r < lo ? r : lo;
            hi = r > hi ? r : hi;
        }
        printf("%s m = %" PRId64 ": %.2f to %.2f", b ? ";" : "", m, lo, hi);
    }
    printf("; hsm - msm = t - 1 at %d of %d points\n", equal_gap, points);
    printf("strategy,alpha,memory_slots,length,forward_ops,"
           "forward_ops_per_step,growth_t_pow_1_over_m,bound_m_t_pow_1_over_m"
           "\n");
    /* one block of rows per (strategy, budget), lengths ascending */
    for (int s = 0; s < 2; s++)
        for (int b = 0; b < n_budgets; b++)
            for (size_t i = 0; i < n_len; i++) {
                const int64_t m = budgets[b], c = COST(s, i, b);
                const double g = pow((double)len[i], 1.0 / (double)m);
                printf("%s,%" PRId64 ",%" PRId64 ",%zu,%" PRId64
                       ",%.6f,%.6f,%.6f\n",
                       names[s], alpha, m, len[i], c,
                       (double)c / (double)len[i], g, (double)m * g);
            }
#undef COST
    bptt_table_free(tb[0]);
    bptt_table_free(tb[1]);
    return 0;

usage:
    fputs("usage: fig4-cost-length-data [-t TOP] [-m M1,M2,...] [-a ALPHA] "
          "[-p PER_DECADE] [-j THREADS]\n", stderr);
    return 2;
}
