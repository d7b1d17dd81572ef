/* tiny.h: a tiny recurrent model as a step-operations table (steps.h),
 * for the executor's tests (test_steps.c, test_steps_slow.c): its
 * gradients are compared bit for bit between plans.  Static functions:
 * each test program includes it once. */
#ifndef BPTT_TEST_TINY_H
#define BPTT_TEST_TINY_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "steps.h"

/* h(i) = tanh(W h(i-1) + u x(i) + b), width N, loss sum_i w . h(i); s(i)
 * holds h(i-1) (and padding up to the internal size), so the backward op
 * and hidden_from_internal recompute the step from it.  Gradients of W,
 * u, b and w accumulate in the context, in the order the backward ops
 * come.  perturb: recomputations write h(i) a little off (the comparison
 * must catch it). */
#define N 2
typedef struct {
    double W[N * N], u[N], b[N], w[N];
    double gW[N * N], gu[N], gb[N], gw[N];
    int perturb;
    unsigned char seen[4096]; /* step already run forward */
    /* 0, or the internal state's bytes: the forward op then writes every
     * byte of s(i), its padding as zeros (a state the slow level writes
     * whole has no undefined bytes to hand to the system) */
    size_t pad_to;
    /* nonzero: the forward op also copies h(i) into s(i) after h(i-1), at
     * byte TINY_EMBED_AT (for a table with hidden_in_internal) */
    int embed;
    size_t forwards, from_internal_calls; /* calls of those ops */
} tiny;

#define TINY_EMBED_AT (N * sizeof(double))

static double tiny_x(size_t i)
{
    return 0.25 * (double)((i * 7 + 3) % 11) - 1.0;
}

static void tiny_step(const tiny *m, size_t i, const double *hp, double *h)
{
    for (int r = 0; r < N; r++) {
        double a = m->b[r] + m->u[r] * tiny_x(i);
        for (int c = 0; c < N; c++)
            a += m->W[r * N + c] * hp[c];
        h[r] = tanh(a);
    }
}

static int tiny_forward(void *ctx, size_t i, const void *h_in, void *s_out,
                        void *h_out)
{
    tiny *m = ctx;
    memcpy(s_out, h_in, N * sizeof(double));
    tiny_step(m, i, h_in, h_out);
    size_t used = N * sizeof(double);
    if (m->embed) {
        memcpy((unsigned char *)s_out + used, h_out, N * sizeof(double));
        used += N * sizeof(double);
    }
    if (m->pad_to > used)
        memset((unsigned char *)s_out + used, 0, m->pad_to - used);
    m->forwards++;
    if (m->perturb && i < sizeof m->seen && m->seen[i])
        ((double *)h_out)[0] += 1e-9;
    if (i < sizeof m->seen)
        m->seen[i] = 1;
    return 0;
}

static int tiny_from_internal(void *ctx, size_t i, const void *s, void *h)
{
    tiny *m = ctx;
    m->from_internal_calls++;
    tiny_step(m, i, s, h);
    return 0;
}

static int tiny_backward(void *ctx, size_t i, const void *s, void *dh)
{
    tiny *m = ctx;
    const double *hp = s;
    double h[N], d[N], *g = dh;
    tiny_step(m, i, hp, h);
    for (int r = 0; r < N; r++) {
        g[r] += m->w[r];
        m->gw[r] += h[r];
        d[r] = g[r] * (1 - h[r] * h[r]);
        m->gb[r] += d[r];
        m->gu[r] += d[r] * tiny_x(i);
        for (int c = 0; c < N; c++)
            m->gW[r * N + c] += d[r] * hp[c];
    }
    for (int c = 0; c < N; c++) {
        double a = 0;
        for (int r = 0; r < N; r++)
            a += m->W[r * N + c] * d[r];
        g[c] = a;
    }
    return 0;
}

static void tiny_init(tiny *m)
{
    memset(m, 0, sizeof *m);
    const double W[N * N] = {0.5, -0.7, 0.3, 0.9};
    memcpy(m->W, W, sizeof W);
    m->u[0] = 0.4, m->u[1] = -0.6;
    m->b[0] = 0.1, m->b[1] = -0.05;
    m->w[0] = 0.8, m->w[1] = -1.1;
}

static const double TINY_H0[N] = {0.3, -0.2};

static bptt_steps tiny_ops(tiny *m, size_t sb, double *h_last, double *dh0)
{
    return (bptt_steps){.name = "tiny", .hidden_bytes = N * sizeof(double),
                        .internal_bytes = sb, .h0 = TINY_H0,
                        .forward = tiny_forward, .backward = tiny_backward,
                        .hidden_from_internal = tiny_from_internal,
                        .ctx = m, .h_last = h_last, .dh0 = dh0};
}

#endif
