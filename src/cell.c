/* cell.c: vanilla RNN and LSTM cells on cblas (see cell.h). */
#include <string.h>

#include "cell.h"
#include "fastmath.h"

/* Elementwise loops run over rows in parallel (each element is computed
 * alone, so results do not depend on the thread count) and vectorize
 * within a row.  No BLAS call is made inside a parallel region. */
#define PAR_ROWS _Pragma("omp parallel for schedule(static) if (B * H >= 8192)")
#define SIMD _Pragma("omp simd")

/* xh := [x, h] (B, X+H) */
static void concat(const bptt_cell_ws *ws, const real *x, const real *h)
{
    const size_t B = ws->B, X = ws->X, H = ws->H, XH = X + H;
    for (size_t b = 0; b < B; b++) {
        memcpy(ws->xh + b * XH, x + b * X, X * sizeof(real));
        memcpy(ws->xh + b * XH + X, h + b * H, H * sizeof(real));
    }
}

/* out (B, G*H) := xh W^T + b */
static void gates_gemm(const bptt_cell_ws *ws, size_t G, const real *W,
                       const real *bias, real *out)
{
    const size_t B = ws->B, XH = ws->X + ws->H, GH = G * ws->H;
    for (size_t r = 0; r < B; r++)
        memcpy(out + r * GH, bias, GH * sizeof(real));
    REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)GH,
              (int)XH, 1, ws->xh, (int)XH, W, (int)XH, 1, out, (int)GH);
}

/* dW += dgates^T xh; db += column sums of dgates; then
 * dx (if wanted) and dh_prev from dxh = dgates W. */
static void weights_backward(const bptt_cell_ws *ws, size_t G, const real *W,
                             real *dW, double *db, real *dh_prev, real *dx)
{
    const size_t B = ws->B, X = ws->X, H = ws->H, XH = X + H, GH = G * H;
    REAL_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)GH, (int)XH,
              (int)B, 1, ws->dgates, (int)GH, ws->xh, (int)XH, 1, dW,
              (int)XH);
    SIMD
    for (size_t j = 0; j < GH; j++) {
        double sum = 0;
        for (size_t r = 0; r < B; r++)
            sum += (double)ws->dgates[r * GH + j];
        db[j] += sum;
    }
    if (dx) {
        REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)XH,
                  (int)GH, 1, ws->dgates, (int)GH, W, (int)XH, 0, ws->dxh,
                  (int)XH);
        for (size_t r = 0; r < B; r++) {
            memcpy(dx + r * X, ws->dxh + r * XH, X * sizeof(real));
            memcpy(dh_prev + r * H, ws->dxh + r * XH + X, H * sizeof(real));
        }
    } else { /* only the h columns of W: skip the input's share */
        REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)H,
                  (int)GH, 1, ws->dgates, (int)GH, W + X, (int)XH, 0,
                  dh_prev, (int)H);
    }
}

/* ---- vanilla RNN: h = tanh(W [x, h_prev] + b) ---------------------------- */

static void rnn_forward(const bptt_cell_ws *ws, const real *W, const real *b,
                        const real *x, const real *state_in, real *s_out,
                        real *state_out)
{
    const size_t n = ws->B * ws->H;
    real *h = s_out + n; /* internal: [h_prev, h] */
    memcpy(s_out, state_in, n * sizeof(real));
    concat(ws, x, state_in);
    gates_gemm(ws, 1, W, b, h);
    const size_t B = ws->B, H = ws->H;
    PAR_ROWS
    for (size_t r = 0; r < B; r++) {
        real *hr = h + r * H;
        SIMD
        for (size_t j = 0; j < H; j++)
            hr[j] = fm_tanh(hr[j]);
    }
    memcpy(state_out, h, n * sizeof(real));
}

static void rnn_backward(const bptt_cell_ws *ws, const real *W, real *dW,
                         double *db, const real *x, const real *s,
                         const real *dstate, real *dstate_prev, real *dx)
{
    const size_t n = ws->B * ws->H;
    const real *h_prev = s, *h = s + n;
    real *dg = ws->dgates;
    SIMD
    for (size_t k = 0; k < n; k++)
        dg[k] = dstate[k] * (1 - h[k] * h[k]);
    concat(ws, x, h_prev);
    weights_backward(ws, 1, W, dW, db, dstate_prev, dx);
}

static void rnn_state_from_internal(const bptt_cell_ws *ws, const real *s,
                                    real *state)
{
    const size_t n = ws->B * ws->H;
    memcpy(state, s + n, n * sizeof(real));
}

static const real *rnn_h(const bptt_cell_ws *ws, const real *s)
{
    return s + ws->B * ws->H;
}

const bptt_cell_type bptt_cell_rnn = {
    "rnn", 1, 1, 2, rnn_forward, rnn_backward, rnn_state_from_internal,
    rnn_h};

/* ---- LSTM ------------------------------------------------------------------
 * act = [i, f, o, g] per row: i, f, o = sigmoid, g = tanh;
 * c = f c_prev + i g; h = o tanh(c). */

static inline real lstm_h(real o, real c) { return o * fm_tanh(c); }

static void lstm_forward(const bptt_cell_ws *ws, const real *W, const real *b,
                         const real *x, const real *state_in, real *s_out,
                         real *state_out)
{
    const size_t B = ws->B, H = ws->H, n = B * H;
    const real *h_prev = state_in, *c_prev = state_in + n;
    real *act = s_out + 2 * n, *c = s_out + 6 * n;
    real *h_new = state_out, *c_new = state_out + n;
    memcpy(s_out, state_in, 2 * n * sizeof(real)); /* h_prev, c_prev */
    concat(ws, x, h_prev);
    gates_gemm(ws, 4, W, b, act);
    PAR_ROWS
    for (size_t r = 0; r < B; r++) {
        real *a = act + r * 4 * H;
        const real *cp = c_prev + r * H;
        real *cr = c + r * H, *hr = h_new + r * H;
        SIMD
        for (size_t j = 0; j < H; j++) {
            const real i = fm_sigmoid(a[j]), f = fm_sigmoid(a[H + j]),
                       o = fm_sigmoid(a[2 * H + j]), g = fm_tanh(a[3 * H + j]);
            a[j] = i;
            a[H + j] = f;
            a[2 * H + j] = o;
            a[3 * H + j] = g;
            cr[j] = f * cp[j] + i * g;
            hr[j] = lstm_h(o, cr[j]);
        }
    }
    memcpy(c_new, c, n * sizeof(real));
}

static void lstm_backward(const bptt_cell_ws *ws, const real *W, real *dW,
                          double *db, const real *x, const real *s,
                          const real *dstate, real *dstate_prev, real *dx)
{
    const size_t B = ws->B, H = ws->H, n = B * H;
    const real *h_prev = s, *c_prev = s + n, *act = s + 2 * n, *c = s + 6 * n;
    const real *dh = dstate, *dc_in = dstate + n;
    real *dc_prev = dstate_prev + n;
    PAR_ROWS
    for (size_t r = 0; r < B; r++) {
        const real *a = act + r * 4 * H;
        real *d = ws->dgates + r * 4 * H;
        const real *cr = c + r * H, *cp = c_prev + r * H;
        const real *dhr = dh + r * H, *dcr = dc_in + r * H;
        real *dcp = dc_prev + r * H;
        SIMD
        for (size_t j = 0; j < H; j++) {
            const real i = a[j], f = a[H + j], o = a[2 * H + j],
                       g = a[3 * H + j];
            const real tc = fm_tanh(cr[j]);
            const real dc = dcr[j] + dhr[j] * o * (1 - tc * tc);
            d[j] = dc * g * i * (1 - i);             /* input gate */
            d[H + j] = dc * cp[j] * f * (1 - f);     /* forget gate */
            d[2 * H + j] = dhr[j] * tc * o * (1 - o); /* output gate */
            d[3 * H + j] = dc * i * (1 - g * g);     /* candidate */
            dcp[j] = dc * f;
        }
    }
    concat(ws, x, h_prev);
    weights_backward(ws, 4, W, dW, db, dstate_prev, dx);
}

static void lstm_state_from_internal(const bptt_cell_ws *ws, const real *s,
                                     real *state)
{
    const size_t B = ws->B, H = ws->H, n = B * H;
    const real *act = s + 2 * n, *c = s + 6 * n;
    PAR_ROWS
    for (size_t r = 0; r < B; r++) {
        const real *o = act + r * 4 * H + 2 * H, *cr = c + r * H;
        real *hr = state + r * H;
        SIMD
        for (size_t j = 0; j < H; j++)
            hr[j] = lstm_h(o[j], cr[j]);
    }
    memcpy(state + n, c, n * sizeof(real));
}

static const real *lstm_h_ptr(const bptt_cell_ws *ws, const real *s)
{
    (void)ws;
    (void)s;
    return NULL;
}

const bptt_cell_type bptt_cell_lstm = {
    "lstm", 4, 2, 7, lstm_forward, lstm_backward, lstm_state_from_internal,
    lstm_h_ptr};

const bptt_cell_type *bptt_cell_find(const char *name)
{
    if (strcmp(name, "rnn") == 0)
        return &bptt_cell_rnn;
    if (strcmp(name, "lstm") == 0)
        return &bptt_cell_lstm;
    return NULL;
}
