/* lif.c: a model that is not the library's, trained through the library's
 * executor under every plan.  Built against the installed headers alone:
 *
 *     cc -o lif lif.c $(pkg-config --cflags --libs bptt)
 *
 * The model is a recurrent spiking network of N leaky integrate-and-fire
 * neurons with current-based synapses, read out by a linear layer, trained
 * with a surrogate gradient (doc/own-model.md explains it line by line).
 * At step i, with input x(i) and spikes z = spike(v):
 *
 *     I(i) = A I(i-1) + W_in x(i) + W_rec z(i-1) + b    synaptic current
 *     v(i) = BETA v(i-1) + I(i) - THETA z(i-1)           membrane, soft reset
 *     z(i) = spike(v(i))                                 spikes
 *     y(i) = W_out z(i) + b_out,  L = sum_i |y(i) - target(i)|^2 / (2 T)
 *
 * spike(v) is the step function H(v - THETA).  Its derivative is zero
 * almost everywhere, so the backward op uses a surrogate in its place: the
 * slope of the fast sigmoid f(u) = (1 + K u / (1 + K |u|)) / 2 at u = v -
 * THETA (SuperSpike's).  In the smooth variant (the context's smooth flag,
 * checked after the spiking network) the forward op uses f itself as the
 * spike, and the surrogate is then the true derivative: that variant is the
 * one finite differences can check in full (see check_fd below).
 *
 * To the executor the model is a bptt_steps table:
 *   hidden state   h(i) = [v(i), I(i)]            2 N doubles
 *   internal state s(i) = [v(i-1), v(i), I(i)]    3 N doubles (alpha 1.5)
 * s(i) holds what the backward op of step i reads (v(i-1) for the spikes
 * and surrogate slopes of the previous step, v(i) for this step's, and
 * the current, which with v(i) is h(i): the table states where h(i)
 * lies in s(i), so no op rebuilds it).  The parameters and their gradients
 * live in the context.
 *
 * What it checks, for the spiking network and for the smooth variant (exit
 * status 1 and a line on stderr at the first failure, 0 and a short report
 * otherwise):
 *   - for every strategy of bptt_strategies[] and every feasible budget
 *     from its smallest to full BPTT's peak, bptt_steps_run's loss and
 *     parameter gradients, h(T) and dL/dh(0) are bit-identical (memcmp) to
 *     those of full BPTT written out as two plain loops over the same ops
 *     (backprop_direct);
 *   - its counts are the validator's, and its measured checkpoint peak,
 *     and the tracked allocator's, equal the plan's peak in bytes;
 *   - a stream of three chunks of T steps, the state carried from one to
 *     the next (h_last as the next h0: truncated BPTT), gives each chunk
 *     the plain loops' loss, gradients, h(T) and dL/dh(0) from that state;
 *   - the gradients pass central finite differences: every parameter of
 *     the smooth variant, the readout's parameters of the spiking network.
 * --break-recompute and --break-backward plant a fault (a forward op that
 * differs when a step is recomputed; a backward op missing a term), so
 * that the test can see the checks fail.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bptt/bptt.h>
#include <bptt/mem.h>
#include <bptt/steps.h>

/* sizes: neurons, inputs, outputs, steps */
enum { N = 16, X = 4, Y = 3, T = 40 };

/* fixed constants of the neuron */
static const double A = 0.8;     /* synaptic decay */
static const double BETA = 0.9;  /* membrane decay */
static const double THETA = 1.0; /* threshold, and the reset's size */
static const double K = 4.0;     /* surrogate slope */

/* the parameters, one array so that gradients compare with one memcmp */
enum {
    P_WIN = 0,                /* W_in  (N, X) */
    P_WREC = P_WIN + N * X,   /* W_rec (N, N) */
    P_B = P_WREC + N * N,     /* b     (N) */
    P_WOUT = P_B + N,         /* W_out (Y, N) */
    P_BOUT = P_WOUT + Y * N,  /* b_out (Y) */
    NP = P_BOUT + Y
};

typedef struct {
    double p[NP];      /* parameters */
    double g[NP];      /* dL/dp, accumulated by the backward ops */
    double loss;       /* accumulated by the backward ops */
    double x[T][X];    /* the sequence's inputs */
    double tgt[T][Y];  /* and targets */
    int smooth;        /* spike = f instead of H */
    int break_recompute, break_backward;
    unsigned runs[T + 1];    /* forward ops per step (--break-recompute) */
    long first_spikes;       /* spikes of the first forward op of each
                                step so far (an episode's end rule) */
    double dcur[N];          /* scratch of the backward op */
    long spikes;             /* spikes seen by the backward ops */
} lif;

static double absd(double u) { return u < 0 ? -u : u; }

static double spike(const lif *m, double v)
{
    const double u = v - THETA;
    if (m->smooth)
        return 0.5 * (1 + K * u / (1 + K * absd(u)));
    return u >= 0 ? 1.0 : 0.0;
}

/* f'(v - THETA): the surrogate (exact for the smooth variant) */
static double slope(double v)
{
    const double d = 1 + K * absd(v - THETA);
    return 0.5 * K / (d * d);
}

/* the readout's error at step i, e = (y - target) / T, from v(i); returns
 * the step's term of the loss */
static double readout(const lif *m, size_t i, const double *v, double *e)
{
    const double *wout = m->p + P_WOUT, *bout = m->p + P_BOUT;
    double l = 0;
    for (size_t k = 0; k < Y; k++) {
        double y = bout[k];
        for (size_t n = 0; n < N; n++)
            y += wout[k * N + n] * spike(m, v[n]);
        const double d = y - m->tgt[i - 1][k];
        l += 0.5 * d * d / T;
        e[k] = d / T;
    }
    return l;
}

/* ---- the step operations ------------------------------------------------ */

static int lif_forward(void *ctx, size_t i, const void *h_in, void *s_out,
                       void *h_out)
{
    lif *m = ctx;
    const double *vp = h_in, *ip = vp + N;
    double *s = s_out, *h = h_out;
    const double *win = m->p + P_WIN, *wrec = m->p + P_WREC, *b = m->p + P_B;
    double zp[N];
    for (size_t n = 0; n < N; n++)
        zp[n] = spike(m, vp[n]);
    m->runs[i]++; /* read only by the planted fault */
    for (size_t n = 0; n < N; n++) {
        double cur = A * ip[n] + b[n];
        for (size_t j = 0; j < X; j++)
            cur += win[n * X + j] * m->x[i - 1][j];
        for (size_t j = 0; j < N; j++)
            cur += wrec[n * N + j] * zp[j];
        if (m->break_recompute && m->runs[i] > 1)
            cur += 1e-12; /* a forward op that reads more than h_in */
        const double v = BETA * vp[n] + cur - THETA * zp[n];
        s[n] = vp[n];    /* v(i-1) */
        s[N + n] = v;    /* v(i) */
        s[2 * N + n] = cur;
        h[n] = v;
        h[N + n] = cur;
        if (m->runs[i] == 1 && v >= THETA)
            m->first_spikes++; /* read by the episode's end rule only */
    }
    return 0;
}

static int lif_backward(void *ctx, size_t i, const void *s_in, void *dh)
{
    lif *m = ctx;
    const double *s = s_in, *vp = s, *v = s + N;
    double *dv = dh, *di = dv + N; /* dL/dv(i), dL/dI(i); in place */
    const double *wrec = m->p + P_WREC, *wout = m->p + P_WOUT;
    double *gwin = m->g + P_WIN, *gwrec = m->g + P_WREC, *gb = m->g + P_B;
    double *gwout = m->g + P_WOUT, *gbout = m->g + P_BOUT;
    double e[Y], *dcur = m->dcur;

    /* the loss term at step i, into dv */
    m->loss += readout(m, i, v, e);
    for (size_t n = 0; n < N; n++) {
        const double z = spike(m, v[n]);
        double dz = 0;
        m->spikes += z >= 1;
        for (size_t k = 0; k < Y; k++) {
            gwout[k * N + n] += e[k] * z;
            dz += wout[k * N + n] * e[k];
        }
        dv[n] += dz * slope(v[n]);
    }
    for (size_t k = 0; k < Y; k++)
        gbout[k] += e[k];

    /* v(i) = BETA v(i-1) + I(i) - THETA z(i-1), I(i) = A I(i-1) + ... */
    for (size_t n = 0; n < N; n++) {
        dcur[n] = di[n] + dv[n];
        gb[n] += dcur[n];
        for (size_t j = 0; j < X; j++)
            gwin[n * X + j] += dcur[n] * m->x[i - 1][j];
        for (size_t j = 0; j < N; j++)
            gwrec[n * N + j] += dcur[n] * spike(m, vp[j]);
    }
    for (size_t j = 0; j < N; j++) {
        double dzp = m->break_backward ? 0 : -THETA * dv[j];
        for (size_t n = 0; n < N; n++)
            dzp += wrec[n * N + j] * dcur[n];
        dv[j] = BETA * dv[j] + dzp * slope(vp[j]);
        di[j] = A * dcur[j];
    }
    return 0;
}

/* h(i) = [v(i), I(i)] is s(i) from its N-th double on: the table says
 * so (hidden_in_internal), and the executor restores h(i) from a stored
 * s(i) by copying those bytes, with no op of ours.  h_last and dh0 take
 * h(T) and dL/dh(0) from each run (a stream's next chunk would start from
 * h(T)). */
static bptt_steps lif_steps(lif *m, double *h_last, double *dh0)
{
    const bptt_steps ops = {.name = "lif",
                            .hidden_bytes = 2 * N * sizeof(double),
                            .internal_bytes = 3 * N * sizeof(double),
                            .h0 = NULL, /* v(0) = I(0) = 0 */
                            .forward = lif_forward,
                            .backward = lif_backward,
                            .hidden_in_internal = 1,
                            .hidden_offset = N * sizeof(double),
                            .h_last = h_last,
                            .dh0 = dh0,
                            .ctx = m};
    return ops;
}

/* ---- the model's own loops, without the executor ------------------------ */

static void start(lif *m)
{
    memset(m->g, 0, sizeof m->g);
    memset(m->runs, 0, sizeof m->runs);
    m->loss = 0;
    m->spikes = 0;
    m->first_spikes = 0;
}

/* full BPTT written out: every internal state kept, then t, ..., 1,
 * from h0 (2 N doubles; NULL: zero); h(T) into h_last and dL/dh(0) into
 * dh0 (each 2 N doubles, or NULL) */
static int backprop_direct_len(lif *m, size_t L, const double *h0,
                               double *h_last, double *dh0)
{
    static double s[T + 1][3 * N];
    double h[2][2 * N] = {{0}}, dh[2 * N] = {0};
    if (h0)
        memcpy(h[0], h0, sizeof h[0]);
    start(m);
    for (size_t i = 1; i <= L; i++)
        lif_forward(m, i, h[(i - 1) % 2], s[i], h[i % 2]);
    for (size_t i = L; i >= 1; i--)
        lif_backward(m, i, s[i], dh);
    if (h_last)
        memcpy(h_last, h[L % 2], sizeof h[0]);
    if (dh0)
        memcpy(dh0, dh, sizeof dh);
    return 0;
}

static int backprop_direct_from(lif *m, const double *h0, double *h_last,
                                double *dh0)
{
    return backprop_direct_len(m, T, h0, h_last, dh0);
}

static int backprop_direct(lif *m, double *h_last, double *dh0)
{
    return backprop_direct_from(m, NULL, h_last, dh0);
}

/* the loss alone, for finite differences */
static double loss_only(lif *m)
{
    double h[2][2 * N] = {{0}}, s[3 * N], e[Y], l = 0;
    for (size_t i = 1; i <= T; i++) {
        lif_forward(m, i, h[(i - 1) % 2], s, h[i % 2]);
        l += readout(m, i, h[i % 2], e);
    }
    return l;
}

/* ---- data --------------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static double uniform(void) /* [-1, 1), splitmix64 */
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return (double)(z >> 11) / 4503599627370496.0 - 1;
}

static void init(lif *m)
{
    for (size_t j = 0; j < NP; j++)
        m->p[j] = 0.5 * uniform();
    for (size_t j = 0; j < N; j++)
        m->p[P_B + j] = 0.3; /* so that some neurons fire */
    for (size_t i = 0; i < T; i++) {
        for (size_t j = 0; j < X; j++)
            m->x[i][j] = uniform() + 0.5;
        for (size_t k = 0; k < Y; k++)
            m->tgt[i][k] = uniform();
    }
}

/* ---- the checks --------------------------------------------------------- */

static int fail(const char *what)
{
    fprintf(stderr, "lif: %s\n", what);
    return 1;
}

typedef struct {
    long runs;                       /* plans run */
    int64_t least_fwd, most_fwd;     /* forward ops over the budgets */
    int64_t least_bytes, full_bytes; /* budgets tried, bytes */
} sweep;

/* Every feasible budget of every strategy, from its smallest to full
 * BPTT's peak in whole quanta, against the direct loops' gradients. */
static int check_plans(lif *m, bptt_mem *mem, sweep *sw, const char *mode)
{
    double h_last[2 * N], dh0[2 * N], want_h_last[2 * N], want_dh0[2 * N];
    const bptt_steps ops = lif_steps(m, h_last, dh0);
    bptt_units u;
    char msg[256];
    if (bptt_units_from_bytes(&u, (int64_t)ops.hidden_bytes,
                              (int64_t)ops.internal_bytes) != BPTT_OK)
        return fail("bptt_units_from_bytes refused the sizes");
    const int64_t full = bptt_full_peak(T, u.hidden_units, u.internal_units);

    backprop_direct(m, want_h_last, want_dh0);
    double want_g[NP], want_loss = m->loss;
    memcpy(want_g, m->g, sizeof want_g);

    for (size_t k = 0; bptt_strategies[k]; k++) {
        const char *name = bptt_strategies[k]->name;
        bptt_plan *plan = NULL;
        bptt_plan_stats ps;
        int64_t least = 0;
        int rc = bptt_plan_min_budget(name, T, (int64_t)ops.hidden_bytes,
                                      (int64_t)ops.internal_bytes, NULL,
                                      &least);
        if (rc != BPTT_OK || least < 1 || least % u.quantum) {
            snprintf(msg, sizeof msg, "%s: no smallest budget (%s)", name,
                     bptt_strerror(rc));
            return fail(msg);
        }
        sweep *s = &sw[k];
        *s = (sweep){.least_fwd = INT64_MAX, .least_bytes = least,
                     .full_bytes = full * u.quantum};
        for (int64_t b = least; b <= full * u.quantum; b += u.quantum) {
            rc = bptt_plan_make(name, T, (int64_t)ops.hidden_bytes,
                                (int64_t)ops.internal_bytes, b, NULL, &plan,
                                &ps, NULL);
            if (rc != BPTT_OK) {
                snprintf(msg, sizeof msg, "%s at %lld bytes: %s", name,
                         (long long)b, bptt_strerror(rc));
                return fail(msg);
            }
            /* a unit of the plan, in bytes */
            const int64_t unit =
                (int64_t)ops.hidden_bytes / plan->hidden_units;
            bptt_steps_stats st;
            start(m);
            bptt_mem_reset_peaks(mem);
            rc = bptt_steps_run(plan, &ops, mem, &st, NULL);
            bptt_plan_free(plan);
            const char *bad = NULL;
            if (rc != BPTT_OK)
                bad = bptt_strerror(rc);
            else if (memcmp(m->g, want_g, sizeof want_g) != 0 ||
                     memcmp(&m->loss, &want_loss, sizeof want_loss) != 0)
                bad = "gradients differ from full BPTT's";
            else if (memcmp(h_last, want_h_last, sizeof h_last) != 0 ||
                     memcmp(dh0, want_dh0, sizeof dh0) != 0)
                bad = "h(T) or dL/dh(0) differs from full BPTT's";
            else if ((int64_t)st.checkpoint_peak_bytes != ps.peak_bytes ||
                     ps.peak_bytes != ps.peak_units * unit)
                bad = "measured checkpoint peak is not the planned one";
            else if ((int64_t)bptt_mem_stats_get(mem)
                         ->peak[BPTT_MEM_CHECKPOINT] != ps.peak_units * unit)
                bad = "the allocator's checkpoint peak is not the planned one";
            else if (st.forward_ops != ps.forward_ops ||
                     st.backward_ops != T)
                bad = "forward or backward ops are not the plan's";
            if (bad) {
                snprintf(msg, sizeof msg, "%s, %s, budget %lld bytes: %s",
                         mode, name, (long long)b, bad);
                return fail(msg);
            }
            s->runs++;
            if (st.forward_ops < s->least_fwd)
                s->least_fwd = st.forward_ops;
            if (st.forward_ops > s->most_fwd)
                s->most_fwd = st.forward_ops;
        }
    }
    return 0;
}

/* A stream of three chunks of T steps trained one after the other, the
 * state carried across (truncated BPTT): each chunk's run starts from the
 * h(T) the one before handed back (h_last as the next h0), under msm at
 * its smallest budget, and each chunk's loss, gradients, h(T) and
 * dL/dh(0) are bit-identical to the plain loops' from that same state. */
static int check_stream(lif *m)
{
    double carry[2 * N] = {0}, h_last[2 * N], dh0[2 * N];
    double want_h[2 * N], want_dh0[2 * N], want_g[NP], want_loss;
    bptt_steps ops = lif_steps(m, h_last, dh0);
    int64_t least;
    if (bptt_plan_min_budget("msm", T, (int64_t)ops.hidden_bytes,
                             (int64_t)ops.internal_bytes, NULL,
                             &least) != BPTT_OK)
        return fail("stream: no smallest msm budget");
    bptt_plan *plan = NULL;
    bptt_plan_stats ps;
    if (bptt_plan_make("msm", T, (int64_t)ops.hidden_bytes,
                       (int64_t)ops.internal_bytes, least, NULL, &plan, &ps,
                       NULL) != BPTT_OK)
        return fail("stream: no msm plan at its smallest budget");
    int rc = 0;
    for (int chunk = 0; chunk < 3 && rc == 0; chunk++) {
        backprop_direct_from(m, carry, want_h, want_dh0);
        memcpy(want_g, m->g, sizeof want_g);
        want_loss = m->loss;
        ops.h0 = carry;
        bptt_steps_stats st;
        start(m);
        if (bptt_steps_run(plan, &ops, NULL, &st, NULL) != BPTT_OK)
            rc = fail("stream: a chunk's run failed");
        else if (memcmp(m->g, want_g, sizeof want_g) != 0 ||
                 memcmp(&m->loss, &want_loss, sizeof want_loss) != 0 ||
                 memcmp(h_last, want_h, sizeof want_h) != 0 ||
                 memcmp(dh0, want_dh0, sizeof want_dh0) != 0)
            rc = fail("stream: a chunk differs from the plain loops from "
                      "the same carried state");
        else if (chunk > 0 && memcmp(carry, h_last, sizeof carry) == 0)
            rc = fail("stream: the state did not move");
        memcpy(carry, h_last, sizeof carry); /* the next chunk's h(0) */
    }
    bptt_plan_free(plan);
    return rc;
}

/* An episode whose end the state decides: it runs until the network has
 * spiked `limit` times (counted as the first forward op of each step
 * makes v(i)), or T steps.  Its length is known only once it has ended,
 * so the executor asks before each step (bptt_steps_run_online), an
 * online planner (online.h) says what to store as it goes, and the run
 * must equal the plain loops over the same steps bit for bit: loss,
 * gradients, h(L), dL/dh(0), under hsm and msm at several budgets, its
 * checkpoint peak within the budget. */
typedef struct {
    lif *m;
    long limit;
} episode;

static int episode_more(void *ctx, size_t i, int *last)
{
    const episode *e = ctx;
    if (i >= T || (i > 0 && e->m->first_spikes >= e->limit))
        return 0; /* the rule: read from the state the steps made */
    *last = i + 1 == T;
    return 1;
}

static int check_online(lif *m, long *episodes, size_t *shortest)
{
    const long limits[] = {1, 8, 40, 100000};
    const char *strategies[] = {"hsm", "msm"};
    double h_last[2 * N], dh0[2 * N], want_h[2 * N], want_dh0[2 * N];
    double want_g[NP], want_loss;
    bptt_steps ops = lif_steps(m, h_last, dh0);
    const int64_t hb = (int64_t)ops.hidden_bytes;
    const int64_t sb = (int64_t)ops.internal_bytes;
    const int64_t budgets[] = {hb, 2 * hb, 3 * hb + sb, 6 * sb};
    for (size_t l = 0; l < sizeof limits / sizeof *limits; l++) {
        /* the plain loops, the episode's length found by its first pass */
        episode e = {m, limits[l]};
        size_t L = 0;
        {
            double h[2][2 * N] = {{0}}, s[3 * N];
            start(m);
            int last = 0;
            while (!last && episode_more(&e, L, &last) == 1) {
                lif_forward(m, L + 1, h[L % 2], s, h[(L + 1) % 2]);
                L++;
            }
        }
        backprop_direct_len(m, L, NULL, want_h, want_dh0);
        memcpy(want_g, m->g, sizeof want_g);
        want_loss = m->loss;
        if (L < *shortest)
            *shortest = L;
        for (size_t a = 0; a < 2; a++)
            for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++) {
                bptt_online *o = NULL;
                if (bptt_online_new(&o, strategies[a], hb, sb, budgets[b],
                                    NULL) != BPTT_OK)
                    return fail("online: no planner");
                bptt_steps_stats st;
                bptt_plan *plan = NULL;
                start(m);
                const int rc = bptt_steps_run_online(o, &ops, NULL,
                                                     episode_more, &e, &st,
                                                     &plan, NULL, 0);
                bptt_online_free(o);
                const size_t got = plan ? plan->length : 0;
                bptt_plan_free(plan);
                if (rc != BPTT_OK)
                    return fail("online: an episode's run failed");
                if (got != L)
                    return fail("online: the episode's length differs from "
                                "the plain loops'");
                if ((int64_t)st.checkpoint_peak_bytes > budgets[b])
                    return fail("online: checkpoint peak past the budget");
                if (memcmp(m->g, want_g, sizeof want_g) != 0 ||
                    memcmp(&m->loss, &want_loss, sizeof want_loss) != 0 ||
                    memcmp(h_last, want_h, sizeof want_h) != 0 ||
                    memcmp(dh0, want_dh0, sizeof want_dh0) != 0)
                    return fail("online: gradients differ from full BPTT's "
                                "over the same episode");
                ++*episodes;
            }
    }
    return 0;
}

/* Central differences in double, on the parameters [from, to), with step
 * h = 1e-6.  The error has two parts: truncation, of order h^2 |L'''|, and
 * rounding, of order 1e-16 |L| / h.  The surrogate's slope is steep (K)
 * and chained over T steps, so |L'''| is large: measured on this model, the
 * largest error is 2.6e-6 of the largest gradient at h = 1e-5, 2.5e-8 at
 * 1e-6 and 6e-9 at 1e-7, where rounding takes over.  The limit 1e-6 is 40
 * times the error at 1e-6; a missing term of the backward op is off by the
 * order of the gradient itself (--break-backward: 0.94).  Double, not
 * float: in float the rounding part alone would be near 1e-7 / h, and no
 * step would separate a right gradient from a slightly wrong one.
 *
 * The smooth variant is differentiable, so all of it is checked.  The
 * spiking network's loss is a step function of every parameter the spikes
 * depend on (its derivative there is zero or undefined, not what the
 * surrogate computes, by design), but the readout's parameters come after
 * the spikes and the loss is quadratic in them: that part of the spiking
 * network's gradient is exact, and checked. */
static int check_fd(lif *m, size_t from, size_t to, double *max_err)
{
    const double h = 1e-6, limit = 1e-6;
    double gmax = 0;
    backprop_direct(m, NULL, NULL);
    for (size_t j = from; j < to; j++)
        if (absd(m->g[j]) > gmax)
            gmax = absd(m->g[j]);
    if (gmax == 0)
        return fail("every gradient is zero");
    *max_err = 0;
    for (size_t j = from; j < to; j++) {
        const double p = m->p[j];
        m->p[j] = p + h;
        const double lp = loss_only(m);
        m->p[j] = p - h;
        const double lm = loss_only(m);
        m->p[j] = p;
        const double err = absd((lp - lm) / (2 * h) - m->g[j]) / gmax;
        if (err > *max_err)
            *max_err = err;
    }
    if (*max_err > limit) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s: finite differences: error %.3g of "
                 "the largest gradient", m->smooth ? "smooth" : "spiking",
                 *max_err);
        return fail(msg);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static lif m;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--break-recompute") == 0)
            m.break_recompute = 1;
        else if (strcmp(argv[a], "--break-backward") == 0)
            m.break_backward = 1;
        else {
            fprintf(stderr,
                    "usage: %s [--break-recompute | --break-backward]\n",
                    argv[0]);
            return 2;
        }
    }
    init(&m);
    bptt_mem *mem = bptt_mem_alloc();
    if (!mem)
        return fail("out of memory");
    size_t n_strategies = 0;
    while (bptt_strategies[n_strategies])
        n_strategies++;
    sweep *sw = calloc(n_strategies, sizeof *sw);
    if (!sw) {
        bptt_mem_free(mem);
        return fail("out of memory");
    }

    printf("lif: %d neurons, %d inputs, %d outputs, %d steps, %d parameters;"
           " hidden state %zu bytes, internal state %zu (alpha 1.5)\n",
           N, X, Y, T, NP, 2 * N * sizeof(double), 3 * N * sizeof(double));
    int rc = 0;
    long runs = 0, episodes = 0;
    size_t shortest = T;
    for (m.smooth = 0; m.smooth <= 1 && rc == 0; m.smooth++) {
        double err;
        rc = check_plans(&m, mem, sw, m.smooth ? "smooth" : "spiking");
        if (rc == 0)
            rc = check_stream(&m);
        if (rc == 0)
            rc = check_online(&m, &episodes, &shortest);
        if (rc == 0 && m.smooth)
            rc = check_fd(&m, 0, NP, &err);
        else if (rc == 0)
            rc = check_fd(&m, P_WOUT, NP, &err);
        if (rc != 0)
            break;
        backprop_direct(&m, NULL, NULL);
        if (m.smooth)
            printf("smooth: loss %.6f; finite differences on every "
                   "parameter: error %.1e of the largest gradient\n",
                   m.loss, err);
        else
            printf("spiking: loss %.6f, %.1f%% of neuron-steps spike; finite "
                   "differences on the readout: error %.1e of the largest "
                   "gradient\n",
                   m.loss, 100.0 * (double)m.spikes / (N * T), err);
        for (size_t k = 0; k < n_strategies; k++) {
            runs += sw[k].runs;
            if (!m.smooth)
                printf("  %-10s %3ld budgets, %5lld..%lld bytes, "
                       "%lld..%lld forward ops\n",
                       bptt_strategies[k]->name, sw[k].runs,
                       (long long)sw[k].least_bytes,
                       (long long)sw[k].full_bytes,
                       (long long)sw[k].least_fwd, (long long)sw[k].most_fwd);
        }
    }
    if (rc == 0 && bptt_mem_stats_get(mem)->total_current)
        rc = fail("bytes left in the tracked allocator");
    if (rc == 0)
        printf("lif: ok: %ld runs, gradients bit-identical to full BPTT's, "
               "checkpoint peaks as planned; a stream of 3 chunks with its "
               "state carried the same; %ld episodes ended by a spike count "
               "(shortest %zu steps), planned online, the same\n", runs,
               episodes, shortest);
    free(sw);
    bptt_mem_free(mem);
    return rc;
}
