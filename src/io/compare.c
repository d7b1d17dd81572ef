/* compare.c: plans timed against a reference in one process, pair by
 * pair (compare.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "real_impl.h"
#include "compare.h"
#include "mem.h"
#include "model.h"
#include "timing.h"
#include "twolevel.h"

static size_t fail_at, mallocs; /* bptt_compare_fail_at */

void bptt_compare_fail_at(size_t n)
{
    fail_at = n ? mallocs + n : 0;
}

static void *compare_malloc(size_t n)
{
    mallocs++;
    if (fail_at && mallocs == fail_at) {
        fail_at = 0;
        return NULL;
    }
    return malloc(n ? n : 1);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bptt_compare_median(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* P(B = i), B ~ binomial(n, 1/2). */
static double half_pmf(size_t n, size_t i)
{
    return exp(lgamma((double)n + 1) - lgamma((double)i + 1) -
               lgamma((double)(n - i) + 1) - (double)n * log(2.0));
}

int bptt_compare_ci_ranks(size_t n, double level, size_t *lo, size_t *hi,
                          double *coverage)
{
    if (n == 0 || !(level > 0 && level < 1))
        return BPTT_EINVAL;
    /* coverage of [x(k), x(n+1-k)] is 1 - 2 P(B <= k-1); it falls as k
     * grows, so walk k up while the next one still reaches level */
    size_t k = 1;
    double cdf = half_pmf(n, 0); /* P(B <= k-1) */
    double cov = 1 - 2 * cdf;
    while (k + 1 <= (n + 1) / 2) {
        const double next_cdf = cdf + half_pmf(n, k);
        const double next_cov = 1 - 2 * next_cdf;
        if (next_cov < level)
            break;
        k++;
        cdf = next_cdf;
        cov = next_cov;
    }
    *lo = k;
    *hi = n + 1 - k;
    *coverage = cov < 0 ? 0 : cov;
    return BPTT_OK;
}

void bptt_compare_results_free(bptt_compare_result *results, size_t n)
{
    if (!results)
        return;
    for (size_t p = 0; p < n; p++) {
        free(results[p].seconds);
        free(results[p].ratio);
        free(results[p].forward_step);
        results[p].seconds = results[p].ratio = NULL;
        results[p].forward_step = NULL;
    }
}

/* What a run holds. */
typedef struct {
    bptt_session *s;
    const bptt_plan *const *plans;
    bptt_compare_result *res;
    const real *ref_grads; /* the copy */
    size_t n_grads;
} compare_state;

/* One iteration of plan p, timed: its wall seconds into *sec and its
 * forward seconds per forward op into *fwd, its gradients compared with
 * the copy, and with keep_stats its counts and peaks kept.  BPTT_OK or the
 * session's error. */
static int iteration(compare_state *c, size_t p, int keep_stats, double *sec,
                     double *fwd)
{
    bptt_exec_stats ex;
    bptt_session_fault f;
    bptt_clock c0, c1;
    bptt_sample smp;
    bptt_clock_start(&c0);
    const int rc = bptt_session_gradients(c->s, c->plans[p], 0, &ex, &f);
    bptt_clock_stop(&c1);
    if (rc != BPTT_OK)
        return rc;
    bptt_sample_between(&c0, &c1, &smp);
    *sec = smp.wall;
    *fwd = ex.forward_ops > 0 ? ex.forward_seconds / (double)ex.forward_ops
                              : 0;
    const bptt_model *m = bptt_session_model(c->s);
    bptt_compare_result *r = &c->res[p];
    if (memcmp(m->grads, c->ref_grads, c->n_grads * sizeof(real)) != 0)
        r->gradients_identical = 0;
    if (keep_stats) {
        const bptt_mem_stats *ms = bptt_mem_stats_get(bptt_session_mem(c->s));
        r->ex = ex;
        r->checkpoint_peak_bytes = ms->peak[BPTT_MEM_CHECKPOINT];
        r->total_tracked_peak_bytes = ms->total_peak;
    }
    return BPTT_OK;
}

/* Round r: one pair per plan, rotated; slot r - warmup when measured
 * (measured != 0). */
static int round_of(compare_state *c, size_t n, size_t r, int measured,
                    size_t slot)
{
    for (size_t j = 0; j < n; j++) {
        const size_t p = (j + r) % n;
        const int keep = measured && slot == 0;
        double ref_sec = 0, p_sec = 0, ref_fwd, p_fwd = 0;
        int rc;
        if (r % 2 == 0) {
            rc = iteration(c, 0, 0, &ref_sec, &ref_fwd);
            if (rc == BPTT_OK)
                rc = iteration(c, p, keep, &p_sec, &p_fwd);
        } else {
            rc = iteration(c, p, keep, &p_sec, &p_fwd);
            if (rc == BPTT_OK)
                rc = iteration(c, 0, 0, &ref_sec, &ref_fwd);
        }
        if (rc != BPTT_OK)
            return rc;
        if (measured) {
            c->res[p].seconds[slot] = p_sec;
            c->res[p].ratio[slot] = p_sec / ref_sec;
            c->res[p].forward_step[slot] = p_fwd;
        }
    }
    return BPTT_OK;
}

/* The summaries of one plan (samples copied: the stored order is the
 * rounds'). */
static int summarize(bptt_compare_result *r, double *tmp)
{
    const size_t R = r->rounds;
    memcpy(tmp, r->seconds, R * sizeof *tmp);
    r->seconds_median = bptt_compare_median(tmp, R);
    r->seconds_min = tmp[0];
    memcpy(tmp, r->ratio, R * sizeof *tmp);
    r->ratio_median = bptt_compare_median(tmp, R);
    const int rc = bptt_compare_ci_ranks(R, BPTT_COMPARE_LEVEL,
                                         &r->ratio_lo_rank, &r->ratio_hi_rank,
                                         &r->ratio_coverage);
    if (rc != BPTT_OK)
        return rc;
    r->ratio_lo = tmp[r->ratio_lo_rank - 1];
    r->ratio_hi = tmp[r->ratio_hi_rank - 1];
    memcpy(tmp, r->forward_step, R * sizeof *tmp);
    r->forward_step_median = bptt_compare_median(tmp, R);
    return BPTT_OK;
}

int bptt_compare_run(bptt_session *session, const bptt_plan *const *plans,
                     size_t n_plans, size_t rounds, size_t warmup,
                     bptt_compare_result *results)
{
    if (!session || !plans || !results || n_plans == 0 || rounds == 0 ||
        rounds > SIZE_MAX / 2 / sizeof(double) || warmup > SIZE_MAX - rounds)
        return BPTT_EINVAL;
    for (size_t p = 0; p < n_plans; p++)
        if (!plans[p])
            return BPTT_EINVAL;
    memset(results, 0, n_plans * sizeof *results);
    const bptt_model *m = bptt_session_model(session);
    compare_state c = {.s = session, .plans = plans, .res = results,
                       .n_grads = m->n_params};
    real *copy = compare_malloc(m->n_params * sizeof(real));
    double *tmp = compare_malloc(rounds * sizeof *tmp);
    int rc = copy && tmp ? BPTT_OK : BPTT_ENOMEM;
    for (size_t p = 0; rc == BPTT_OK && p < n_plans; p++) {
        results[p].rounds = rounds;
        results[p].gradients_identical = 1;
        results[p].seconds = compare_malloc(rounds * sizeof(double));
        results[p].ratio = compare_malloc(rounds * sizeof(double));
        results[p].forward_step = compare_malloc(rounds * sizeof(double));
        if (!results[p].seconds || !results[p].ratio ||
            !results[p].forward_step)
            rc = BPTT_ENOMEM;
    }
    if (rc == BPTT_OK) {
        /* the reference's gradients, once, untimed */
        bptt_exec_stats ex;
        bptt_session_fault f;
        rc = bptt_session_gradients(session, plans[0], 0, &ex, &f);
        if (rc == BPTT_OK)
            memcpy(copy, m->grads, m->n_params * sizeof(real));
        c.ref_grads = copy;
    }
    for (size_t r = 0; rc == BPTT_OK && r < warmup + rounds; r++)
        rc = round_of(&c, n_plans, r, r >= warmup, r >= warmup ? r - warmup
                                                                : 0);
    for (size_t p = 0; rc == BPTT_OK && p < n_plans; p++)
        rc = summarize(&results[p], tmp);
    for (size_t p = 0; rc == BPTT_OK && p < n_plans; p++) {
        const bptt_compare_result *r0 = &results[0];
        results[p].predicted_ratio =
            1 + (double)(results[p].ex.forward_ops - r0->ex.forward_ops) *
                    r0->forward_step_median / r0->seconds_median;
    }
    free(copy);
    free(tmp);
    if (rc != BPTT_OK) {
        bptt_compare_results_free(results, n_plans);
        memset(results, 0, n_plans * sizeof *results);
    }
    return rc;
}
