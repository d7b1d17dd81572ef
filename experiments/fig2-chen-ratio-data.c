/* fig2-chen-ratio-data.c: data of figure 2 (experiments/fig2-chen-ratio).
 *
 * For each alpha and each length t from 10 to TOP (log-spaced), the least
 * memory (slots) at which a strategy costs at most 2 forward ops per step,
 * i.e. the smallest m with cost(t, m) <= 2t, against Chen's sqrt(t)
 * method, which costs exactly 2t: as a fraction of the paper's
 * sqrt(t)(1 + alpha) and of Chen's exact peak (bptt_chen_peak, default
 * segment ceil(sqrt(t))).
 *
 * MSM and ISM: one cost table per (strategy, alpha) at the top length
 * serves every shorter length (strategy->cost(table, t, m)).  Its budgets
 * go up to Chen's memory at the top length times (1 + margin): 5% for MSM,
 * 40% for ISM, which needs more than Chen's memory when alpha >= 5 (1.25
 * times at t = 5000, alpha = 10).  A strategy that needs more than its
 * table holds at some t gets an empty memory_slots there.  HSM needs about
 * t slots, far beyond such a table; it comes from Griewank and Walther's
 * binomial formula (bptt_hsm_closed_cost), which the planner tests prove
 * equal to the HSM table.  Costs never rise with the budget, so the
 * smallest m is found by bisection.
 *
 * Writes CSV to stdout ('#' lines first), the time of each table build to
 * stderr.  Not a test.
 *
 * usage: fig2-chen-ratio-data [-t TOP] [-a A1,A2,...] [-g MSM_MARGIN]
 *                             [-G ISM_MARGIN] [-p N] [-j THREADS]
 *   TOP      longest length (default 5000: see experiments/fig2-chen-ratio)
 *   A...     alphas (default 2,5,10)
 *   MARGIN   table budgets up to (1 + MARGIN) x Chen's memory at TOP
 *            (defaults 0.05 for MSM, 0.4 for ISM)
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

#define MAX_ALPHAS 8
#define MAX_LENGTHS 512

static int64_t chen_formula(size_t t, int64_t alpha)
{
    return (int64_t)ceil(sqrt((double)t) * (double)(1 + alpha));
}

/* Smallest m in [lo, hi] with cost(m) <= limit, or -1 if none. */
static int64_t least_budget_table(const bptt_table *tb, size_t t,
                                  int64_t lo, int64_t hi, int64_t limit)
{
    const bptt_strategy *st = bptt_table_strategy(tb);
    const int64_t c = st->cost(tb, t, hi);
    if (c < 0 || c > limit)
        return -1;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const int64_t cm = st->cost(tb, t, mid);
        if (cm >= 0 && cm <= limit)
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi;
}

static int64_t least_budget_hsm(size_t t, int64_t limit)
{
    int64_t lo = 1, hi = (int64_t)t; /* C_HSM(t, t) = 2t - 1 */
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const int64_t cm = bptt_hsm_closed_cost((int64_t)t, mid);
        if (cm >= 0 && cm <= limit)
            hi = mid;
        else
            lo = mid + 1;
    }
    return hi;
}

static void row(size_t t, int64_t alpha, const char *strategy, int64_t m,
                int64_t cost)
{
    const int64_t cf = chen_formula(t, alpha);
    const int64_t cp =
        bptt_chen_peak(t, bptt_chen_default_segment(t), 1, alpha);
    if (m < 0) {
        printf("%" PRId64 ",%zu,%s,,,,%" PRId64 ",%" PRId64 ",,\n", alpha, t,
               strategy, cf, cp);
        return;
    }
    printf("%" PRId64 ",%zu,%s,%" PRId64 ",%" PRId64 ",%.6f,%" PRId64
           ",%" PRId64 ",%.6f,%.6f\n",
           alpha, t, strategy, m, cost, (double)cost / (double)t, cf, cp,
           (double)m / (double)cf, (double)m / (double)cp);
}

int main(int argc, char **argv)
{
    size_t top = 5000;
    int64_t alphas[MAX_ALPHAS] = {2, 5, 10};
    int n_alphas = 3, per_decade = 20, threads = 0;
    double margin[2] = {0.05, 0.4}; /* msm, ism */
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            goto usage;
        if (strcmp(argv[i], "-t") == 0)
            top = (size_t)strtoull(v, NULL, 10);
        else if (strcmp(argv[i], "-g") == 0)
            margin[0] = atof(v);
        else if (strcmp(argv[i], "-G") == 0)
            margin[1] = atof(v);
        else if (strcmp(argv[i], "-p") == 0)
            per_decade = atoi(v);
        else if (strcmp(argv[i], "-j") == 0)
            threads = atoi(v);
        else if (strcmp(argv[i], "-a") == 0)
            n_alphas = expt_parse_list(v, alphas, MAX_ALPHAS);
        else
            goto usage;
        i++;
    }
    if (top < 10 || per_decade < 1 || margin[0] < 0 || margin[1] < 0 ||
        n_alphas < 1)
        goto usage;
    for (int a = 0; a < n_alphas; a++)
        if (alphas[a] < 1)
            goto usage;

    size_t len[MAX_LENGTHS];
    const size_t n_len = expt_log_lengths(len, MAX_LENGTHS, 10.0, top, per_decade);
    const char *dp_names[] = {"msm", "ism"};
    static int64_t need[MAX_ALPHAS][2][MAX_LENGTHS];
    static int64_t cost[MAX_ALPHAS][2][MAX_LENGTHS];
    int64_t max_m[MAX_ALPHAS][2];
    double secs[MAX_ALPHAS][2];
    const double t_start = expt_now();

    for (int a = 0; a < n_alphas; a++) {
        const int64_t alpha = alphas[a];
        const int64_t cf = chen_formula(top, alpha);
        const int64_t cp =
            bptt_chen_peak(top, bptt_chen_default_segment(top), 1, alpha);
        for (int s = 0; s < 2; s++) {
            max_m[a][s] = (int64_t)ceil((1.0 + margin[s]) *
                                        (double)(cf > cp ? cf : cp));
            const bptt_strategy *st = bptt_strategy_find(dp_names[s]);
            bptt_table_options opts = {.threads = threads};
            bptt_table *tb;
            const double t0 = expt_now();
            const int rc =
                bptt_table_alloc(&tb, st, top, 1, alpha, max_m[a][s], &opts);
            if (rc != BPTT_OK) {
                fprintf(stderr, "fig2-chen-ratio-data: %s table, t = %zu, "
                        "M = %" PRId64 ": %s\n", dp_names[s], top, max_m[a][s],
                        bptt_strerror(rc));
                return 1;
            }
            secs[a][s] = expt_now() - t0;
            fprintf(stderr, "  %s table, alpha = %" PRId64 ", t = %zu, "
                    "budgets up to %" PRId64 ": %.2f s\n", dp_names[s],
                    alpha, top, max_m[a][s], secs[a][s]);
            for (size_t i = 0; i < n_len; i++) {
                const int64_t lim = 2 * (int64_t)len[i];
                need[a][s][i] =
                    least_budget_table(tb, len[i], 1, max_m[a][s], lim);
                cost[a][s][i] = need[a][s][i] < 0
                                    ? -1
                                    : st->cost(tb, len[i], need[a][s][i]);
            }
            bptt_table_free(tb);
        }
    }
    const double total = expt_now() - t_start;

    printf("# figure 2: least memory (slots; hidden state 1, internal state "
           "alpha) at which a strategy costs at most 2 forward ops per step, "
           "i.e. the smallest m with cost(t, m) <= 2t, against Chen's "
           "sqrt(t) method (exactly 2t forward ops)\n");
    printf("# made by experiments/fig2-chen-ratio-data");
    for (int i = 1; i < argc; i++)
        printf(" %s", argv[i]);
    printf(" (libbpttcore): msm and ism from one cost table per (strategy, "
           "alpha) at t = %zu serving every shorter t, budgets up to Chen's "
           "memory there times %g (msm) and %g (ism):", top, 1 + margin[0],
           1 + margin[1]);
    for (int a = 0; a < n_alphas; a++)
        printf("%s alpha %" PRId64 " %" PRId64 " and %" PRId64 " slots",
               a ? ";" : "", alphas[a], max_m[a][0], max_m[a][1]);
    printf(" (an empty memory_slots: more than that); hsm from the binomial "
           "closed form (equal to the hsm table, tested); "
           "chen_formula_slots = ceil(sqrt(t)(1 + alpha)) (the paper's "
           "figure); chen_peak_slots = Chen's exact peak, segment "
           "ceil(sqrt(t))\n");
    printf("# table builds, %.1f s in all:", total);
    for (int a = 0; a < n_alphas; a++)
        printf("%s alpha %" PRId64 " msm %.1f s, ism %.1f s", a ? ";" : "",
               alphas[a], secs[a][0], secs[a][1]);
    printf("\n# msm / ceil(sqrt(t)(1 + alpha)):");
    for (int a = 0; a < n_alphas; a++) {
        double lo = 1e300, hi = 0, at1000 = -1;
        for (size_t i = 0; i < n_len; i++) {
            if (need[a][0][i] < 0 || len[i] < 100)
                continue;
            const double f = (double)need[a][0][i] /
                             (double)chen_formula(len[i], alphas[a]);
            lo = f < lo ? f : lo;
            hi = f > hi ? f : hi;
            if (len[i] == 1000)
                at1000 = f;
        }
        printf("%s alpha %" PRId64 ": %.3f at t = 1000, %.3f to %.3f for "
               "100 <= t <= %zu", a ? ";" : "", alphas[a], at1000, lo, hi,
               top);
    }
    printf("\n");
    printf("alpha,length,strategy,memory_slots,forward_ops,"
           "forward_ops_per_step,chen_formula_slots,chen_peak_slots,"
           "fraction_of_chen_formula,fraction_of_chen_peak\n");
    /* one block of rows per (alpha, strategy), lengths ascending */
    for (int a = 0; a < n_alphas; a++) {
        const int64_t alpha = alphas[a];
        for (int s = 0; s < 2; s++)
            for (size_t i = 0; i < n_len; i++)
                row(len[i], alpha, dp_names[s], need[a][s][i], cost[a][s][i]);
        for (size_t i = 0; i < n_len; i++) {
            const int64_t mh = least_budget_hsm(len[i], 2 * (int64_t)len[i]);
            row(len[i], alpha, "hsm", mh,
                bptt_hsm_closed_cost((int64_t)len[i], mh));
        }
        for (size_t i = 0; i < n_len; i++) {
            const size_t k = bptt_chen_default_segment(len[i]);
            row(len[i], alpha, "chen", bptt_chen_peak(len[i], k, 1, alpha),
                bptt_chen_cost(len[i], k));
        }
    }
    return 0;

usage:
    fputs("usage: fig2-chen-ratio-data [-t TOP] [-a A1,A2,...] "
          "[-g MSM_MARGIN] [-G ISM_MARGIN] [-p PER_DECADE] [-j THREADS]\n",
          stderr);
    return 2;
}
