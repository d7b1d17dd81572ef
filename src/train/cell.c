/* cell.c: the cells' equations (vanilla RNN, LSTM, GRU) and the cell table
 * (see cell.h); their per-step products are in gemm.c. */
#include <stdlib.h>
#include <string.h>

#include "real_impl.h"
#include "bptt.h"
#include "cell.h"
#include "fastmath.h"
#include "gemm.h"

/* Each op is written in parts over a range of rows (cell.h): the gate
 * product (gemm.c), the elementwise rows, and for the backward op what
 * follows the product.  The whole ops below run the rows in parallel
 * (each element is computed alone, so results do not depend on the
 * thread count) and vectorize within a row; the kernel's team path
 * (model_step.c) calls the parts itself.  A cell supplies only the parts;
 * the whole ops are derived from them once, here, for every cell.  No BLAS
 * call is made inside a parallel region. */
#define SIMD _Pragma("omp simd")

/* The cells' elementwise rows with exp in them (LSTM forward op, backward
 * op and h rebuilt from an internal state; RNN and GRU forward ops) are written
 * once and compiled three times: for the build's target, for AVX-512 (16
 * lanes) and for AVX2 (8), the last two used where the GEMM kernel of that
 * width runs (ws->kernel).  All do the same IEEE operations on each
 * element (no contraction: the build has -ffp-contract=off), so they give
 * the same bits. */
#ifdef BPTT_GEMM_HAVE_KERNEL
#ifdef __clang__
#define EWTARGET __attribute__((target("avx512f"), min_vector_width(512)))
#define EWTARGET2 __attribute__((target("avx2,fma"), min_vector_width(256)))
#else
#define EWTARGET __attribute__((target("avx512f,prefer-vector-width=512")))
#define EWTARGET2 __attribute__((target("avx2,fma")))
#endif
#define ROWS(name, args, call)                                               \
    EWTARGET static void name##_wide args { name call; }                     \
    EWTARGET2 static void name##_avx2 args { name call; }                    \
    static void name##_plain args { name call; }
#define ROW_CALL(name, kernel)                                               \
    ((kernel) == BPTT_GEMM_AVX512 ? name##_wide                              \
     : (kernel) == BPTT_GEMM_AVX2 ? name##_avx2                              \
                                  : name##_plain)
#else
#define ROWS(name, args, call)                                               \
    static void name##_plain args { name call; }
#define ROW_CALL(name, kernel) ((void)(kernel), name##_plain)
#endif
#define INLINE __attribute__((always_inline)) static inline

/* ---- the whole ops, derived from a cell's parts (cell.h) ------------------ */

/* call over rows [r0, r1): all rows, cut among the threads where worth
 * them */
#define OVER_ROWS(B, H, call)                                                \
    _Pragma("omp parallel if ((B) * (H) >= 8192)")                           \
    {                                                                        \
        size_t r0, r1;                                                       \
        bptt_share(B, bptt_team_id(), bptt_team_size(), &r0, &r1);           \
        call;                                                                \
    }

void bptt_cell_forward(const bptt_cell_type *c, const bptt_cell_ws *ws,
                       const real *W, const real *b, const real *x,
                       const real *state_in, real *s_out, real *state_out)
{
    const size_t B = ws->B, H = ws->H;
    bptt_gemm_gates(ws, c->gates, W, b, x, state_in,
                    s_out + c->gates_at * B * H);
    OVER_ROWS(B, H, c->forward_rows(ws, state_in, s_out, state_out, r0, r1))
}

/* h_prev is the first block of every cell's internal state (cell.h) */
void bptt_cell_backward(const bptt_cell_type *c, const bptt_cell_ws *ws,
                        const real *W, double *db, const real *x,
                        const real *s, const real *dstate, real *dstate_prev,
                        real *dx, real *dgates, real *xh)
{
    const size_t B = ws->B, H = ws->H;
    OVER_ROWS(B, H,
              c->backward_rows(ws, s, dstate, dstate_prev, dgates, r0, r1))
    bptt_gemm_concat(ws, xh, x, s);
    bptt_gemm_gates_backward(ws, c->gates, W, dgates, db, dstate_prev, dx);
    if (c->backward_post_rows)
        c->backward_post_rows(ws, dstate_prev, 0, B);
}

const real *bptt_cell_h_from_internal(const bptt_cell_type *c,
                                      const bptt_cell_ws *ws, const real *s,
                                      real *scratch)
{
    const size_t B = ws->B, H = ws->H;
    OVER_ROWS(B, H, (void)c->h_rows(ws, s, scratch, r0, r1))
    return c->h_rows(ws, s, scratch, 0, 0); /* no rows: where h is */
}

/* h first, rebuilt into the state's own first block (or copied from where
 * it is kept), then the other blocks as stored at rest_at */
void bptt_cell_state_rows(const bptt_cell_type *c, const bptt_cell_ws *ws,
                          const real *s, real *state, size_t r0, size_t r1)
{
    const size_t H = ws->H, n = ws->B * H, o = r0 * H, len = (r1 - r0) * H;
    const real *h = c->h_rows(ws, s, state, r0, r1);
    if (h != state)
        memcpy(state + o, h + o, len * sizeof(real));
    for (size_t v = 1; v < c->hidden_vecs; v++)
        memcpy(state + v * n + o, s + (c->rest_at + v - 1) * n + o,
               len * sizeof(real));
}

void bptt_cell_state_from_internal(const bptt_cell_type *c,
                                   const bptt_cell_ws *ws, const real *s,
                                   real *state)
{
    const size_t B = ws->B, H = ws->H;
    OVER_ROWS(B, H, bptt_cell_state_rows(c, ws, s, state, r0, r1))
}

/* the blocks [a0, a0 + an) and [b0, b0 + bn) of a state share none */
static int apart(size_t a0, size_t an, size_t b0, size_t bn)
{
    return a0 + an <= b0 || b0 + bn <= a0;
}

int bptt_cell_check(const bptt_cell_type *c)
{
    if (!c || !c->name || !c->forward_rows || !c->backward_rows ||
        !c->h_rows)
        return BPTT_EINVAL;
    const size_t G = c->gates, hv = c->hidden_vecs, iv = c->internal_vecs;
    if (G < 1 || G > BPTT_CELL_MAX_GATES || hv < 1 || iv < hv ||
        iv > BPTT_CELL_MAX_VECS)
        return BPTT_EINVAL;
    /* h_prev at 0, the gate block after it, inside s */
    if (c->gates_at < 1 || c->gates_at + G > iv)
        return BPTT_EINVAL;
    /* the hidden state's other blocks, apart from h_prev and the gates */
    if (hv > 1 && (c->rest_at + (hv - 1) > iv ||
                   !apart(c->rest_at, hv - 1, 0, 1) ||
                   !apart(c->rest_at, hv - 1, c->gates_at, G)))
        return BPTT_EINVAL;
    return BPTT_OK;
}

/* ---- vanilla RNN: h = tanh(W [x, h_prev] + b) ---------------------------- */

/* hr := tanh(hr), into out too */
INLINE void tanh_row(size_t H, real *hr, real *out)
{
    SIMD
    for (size_t j = 0; j < H; j++) {
        const real h = fm_tanh(hr[j]);
        hr[j] = h;
        out[j] = h;
    }
}
ROWS(tanh_row, (size_t H, real *hr, real *out), (H, hr, out))

/* internal [h_prev, h]: the product leaves W [x, h_prev] + b in h */
static void rnn_forward_rows(const bptt_cell_ws *ws, const real *state_in,
                             real *s_out, real *state_out, size_t r0,
                             size_t r1)
{
    const size_t H = ws->H, n = ws->B * H;
    real *h = s_out + n;
    const int kernel = ws->kernel;
    memcpy(s_out + r0 * H, state_in + r0 * H, (r1 - r0) * H * sizeof(real));
    for (size_t r = r0; r < r1; r++)
        ROW_CALL(tanh_row, kernel)(H, h + r * H, state_out + r * H);
}

static void rnn_backward_rows(const bptt_cell_ws *ws, const real *s,
                              const real *dstate, real *dstate_prev,
                              real *dgates, size_t r0, size_t r1)
{
    (void)dstate_prev; /* all of dh_prev comes from the product */
    const size_t H = ws->H, n = ws->B * H;
    const real *h = s + n;
    SIMD
    for (size_t k = r0 * H; k < r1 * H; k++)
        dgates[k] = dstate[k] * (1 - h[k] * h[k]);
}

static const real *rnn_h_rows(const bptt_cell_ws *ws, const real *s,
                              real *scratch, size_t r0, size_t r1)
{
    (void)scratch, (void)r0, (void)r1;
    return s + ws->B * ws->H;
}

const bptt_cell_type bptt_cell_rnn = {
    .name = "rnn", .gates = 1, .hidden_vecs = 1, .internal_vecs = 2,
    .gates_at = 1, .forward_rows = rnn_forward_rows,
    .backward_rows = rnn_backward_rows, .h_rows = rnn_h_rows};

/* ---- LSTM ------------------------------------------------------------------
 * act = [i, f, o, g] per row: i, f, o = sigmoid, g = tanh;
 * c = f c_prev + i g; h = o tanh(c). */

static inline real lstm_h(real o, real c) { return o * fm_tanh(c); }

/* act row [i, f, o, g] activated in place; c (into cr and cn) and h of
 * the row */
INLINE void lstm_fwd_row(size_t H, real *a, const real *cp, real *cr,
                         real *cn, real *hr)
{
    SIMD
    for (size_t j = 0; j < H; j++) {
        const real i = fm_sigmoid(a[j]), f = fm_sigmoid(a[H + j]),
                   o = fm_sigmoid(a[2 * H + j]), g = fm_tanh(a[3 * H + j]);
        a[j] = i;
        a[H + j] = f;
        a[2 * H + j] = o;
        a[3 * H + j] = g;
        const real cj = f * cp[j] + i * g;
        cr[j] = cj;
        cn[j] = cj;
        hr[j] = lstm_h(o, cj);
    }
}
ROWS(lstm_fwd_row,
     (size_t H, real *a, const real *cp, real *cr, real *cn, real *hr),
     (H, a, cp, cr, cn, hr))

/* gate gradients d and dc_prev of a row */
INLINE void lstm_bwd_row(size_t H, const real *a, const real *cr,
                         const real *cp, const real *dhr, const real *dcr,
                         real *d, real *dcp)
{
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
ROWS(lstm_bwd_row,
     (size_t H, const real *a, const real *cr, const real *cp,
      const real *dhr, const real *dcr, real *d, real *dcp),
     (H, a, cr, cp, dhr, dcr, d, dcp))

INLINE void lstm_h_row(size_t H, const real *o, const real *cr, real *hr)
{
    SIMD
    for (size_t j = 0; j < H; j++)
        hr[j] = lstm_h(o[j], cr[j]);
}
ROWS(lstm_h_row, (size_t H, const real *o, const real *cr, real *hr),
     (H, o, cr, hr))

/* internal [h_prev, c_prev, act, c]: the product leaves the gates' inputs
 * in act */
static void lstm_forward_rows(const bptt_cell_ws *ws, const real *state_in,
                              real *s_out, real *state_out, size_t r0,
                              size_t r1)
{
    const size_t B = ws->B, H = ws->H, n = B * H;
    const real *c_prev = state_in + n;
    real *act = s_out + 2 * n, *c = s_out + 6 * n;
    real *h_new = state_out, *c_new = state_out + n;
    const int kernel = ws->kernel;
    const size_t len = (r1 - r0) * H * sizeof(real);
    memcpy(s_out + r0 * H, state_in + r0 * H, len);         /* h_prev */
    memcpy(s_out + n + r0 * H, state_in + n + r0 * H, len); /* c_prev */
    for (size_t r = r0; r < r1; r++)
        ROW_CALL(lstm_fwd_row, kernel)(H, act + r * 4 * H, c_prev + r * H,
                                     c + r * H, c_new + r * H,
                                     h_new + r * H);
}

/* dstate [dh, dc]; writes dgates' rows and dc_prev's (dh_prev is the
 * product's) */
static void lstm_backward_rows(const bptt_cell_ws *ws, const real *s,
                               const real *dstate, real *dstate_prev,
                               real *dgates, size_t r0, size_t r1)
{
    const size_t B = ws->B, H = ws->H, n = B * H;
    const real *c_prev = s + n, *act = s + 2 * n, *c = s + 6 * n;
    const real *dh = dstate, *dc_in = dstate + n;
    real *dc_prev = dstate_prev + n;
    const int kernel = ws->kernel;
    for (size_t r = r0; r < r1; r++)
        ROW_CALL(lstm_bwd_row, kernel)(H, act + r * 4 * H, c + r * H,
                                     c_prev + r * H, dh + r * H,
                                     dc_in + r * H, dgates + r * 4 * H,
                                     dc_prev + r * H);
}

static const real *lstm_h_rows(const bptt_cell_ws *ws, const real *s,
                               real *scratch, size_t r0, size_t r1)
{
    const size_t B = ws->B, H = ws->H, n = B * H;
    const real *act = s + 2 * n, *c = s + 6 * n;
    const int kernel = ws->kernel;
    for (size_t r = r0; r < r1; r++)
        ROW_CALL(lstm_h_row, kernel)(H, act + r * 4 * H + 2 * H, c + r * H,
                                   scratch + r * H);
    return scratch;
}

/* forget-gate biases start at 1 (gate blocks [i, f, o, g]) */
static void lstm_init_layer(size_t X, size_t H, real *W, real *b)
{
    (void)X;
    (void)W;
    for (size_t j = 0; j < H; j++)
        b[H + j] = 1;
}

const bptt_cell_type bptt_cell_lstm = {
    .name = "lstm", .gates = 4, .hidden_vecs = 2, .internal_vecs = 7,
    .gates_at = 2, .rest_at = 6, .init_layer = lstm_init_layer,
    .forward_rows = lstm_forward_rows,
    .backward_rows = lstm_backward_rows, .h_rows = lstm_h_rows};

/* ---- GRU (PyTorch's equations, doc/design.md 1.2 and 7) --------------------
 * One product per step gives four blocks of H per row,
 *   [a_r, a_z, a_nx, a_nh] = [x, h_prev] W^T + b,
 * where W's n_x rows act on x only and its n_h rows on h_prev only (the
 * other half of each is a zero block the cell keeps at zero: gru_zero_fixed
 * on the initial weights and on every weight gradient), so a_nx = W_in x +
 * b_in and a_nh = W_hn h_prev + b_hn stay apart as the reset gate needs:
 *   r = sigmoid(a_r), z = sigmoid(a_z), n = tanh(a_nx + r a_nh),
 *   h = (1 - z) n + z h_prev.
 * (b_r and b_z are PyTorch's b_ir + b_hr and b_iz + b_hz.)  The internal
 * state is [h_prev, act] with act = [r, z, n, a_nh] per row (B, 4H): the
 * backward op needs exactly these, and h is rebuilt from them with the
 * forward op's own expression, so bit for bit. */

static inline real gru_h(real z, real n, real hp)
{
    return (1 - z) * n + z * hp;
}

/* act row [a_r, a_z, a_nx, a_nh] into [r, z, n, a_nh]; h of the row */
INLINE void gru_fwd_row(size_t H, real *a, const real *hp, real *hr)
{
    SIMD
    for (size_t j = 0; j < H; j++) {
        const real r = fm_sigmoid(a[j]), z = fm_sigmoid(a[H + j]);
        const real n = fm_tanh(a[2 * H + j] + r * a[3 * H + j]);
        a[j] = r;
        a[H + j] = z;
        a[2 * H + j] = n;
        hr[j] = gru_h(z, n, hp[j]);
    }
}
ROWS(gru_fwd_row, (size_t H, real *a, const real *hp, real *hr),
     (H, a, hp, hr))

/* gate gradients d [da_r, da_z, da_nx, da_nh] of a row, and the share of
 * dh_prev that does not go through W (dh z) into dhz */
INLINE void gru_bwd_row(size_t H, const real *a, const real *hp,
                        const real *dhr, real *d, real *dhz)
{
    SIMD
    for (size_t j = 0; j < H; j++) {
        const real r = a[j], z = a[H + j], n = a[2 * H + j],
                   hn = a[3 * H + j], dh = dhr[j];
        const real dan = dh * (1 - z) * (1 - n * n); /* into tanh */
        d[j] = dan * hn * r * (1 - r);                /* reset gate */
        d[H + j] = dh * (hp[j] - n) * z * (1 - z);    /* update gate */
        d[2 * H + j] = dan;                           /* W_in x + b_in */
        d[3 * H + j] = dan * r;                       /* W_hn h + b_hn */
        dhz[j] = dh * z;
    }
}

/* no exp in the backward row: one build of it */
INLINE void gru_h_row(size_t H, const real *a, const real *hp, real *hr)
{
    SIMD
    for (size_t j = 0; j < H; j++)
        hr[j] = gru_h(a[H + j], a[2 * H + j], hp[j]);
}

static void gru_forward_rows(const bptt_cell_ws *ws, const real *state_in,
                             real *s_out, real *state_out, size_t r0,
                             size_t r1)
{
    const size_t B = ws->B, H = ws->H, n = B * H;
    real *act = s_out + n;
    const int kernel = ws->kernel;
    memcpy(s_out + r0 * H, state_in + r0 * H, (r1 - r0) * H * sizeof(real));
    for (size_t r = r0; r < r1; r++)
        ROW_CALL(gru_fwd_row, kernel)(H, act + r * 4 * H, state_in + r * H,
                                    state_out + r * H);
}

/* dh z goes to ws->xh (free in a backward op, at least B*H reals), to be
 * added to dh_prev after the product (gru_backward_post_rows), since
 * dstate_prev may be dstate */
static void gru_backward_rows(const bptt_cell_ws *ws, const real *s,
                              const real *dstate, real *dstate_prev,
                              real *dgates, size_t r0, size_t r1)
{
    (void)dstate_prev;
    const size_t B = ws->B, H = ws->H, n = B * H;
    const real *h_prev = s, *act = s + n;
    for (size_t r = r0; r < r1; r++)
        gru_bwd_row(H, act + r * 4 * H, h_prev + r * H, dstate + r * H,
                    dgates + r * 4 * H, ws->xh + r * H);
}

static void gru_backward_post_rows(const bptt_cell_ws *ws, real *dstate_prev,
                                   size_t r0, size_t r1)
{
    const size_t H = ws->H;
    const real *dhz = ws->xh;
    SIMD
    for (size_t k = r0 * H; k < r1 * H; k++)
        dstate_prev[k] += dhz[k];
}

static const real *gru_h_rows(const bptt_cell_ws *ws, const real *s,
                              real *scratch, size_t r0, size_t r1)
{
    const size_t B = ws->B, H = ws->H, n = B * H;
    for (size_t r = r0; r < r1; r++)
        gru_h_row(H, s + n + r * 4 * H, s + r * H, scratch + r * H);
    return scratch;
}

/* rows [2H, 3H) (n_x) see x only, rows [3H, 4H) (n_h) h only */
static void gru_zero_fixed(size_t X, size_t H, real *W)
{
    const size_t XH = X + H;
    for (size_t j = 2 * H; j < 3 * H; j++)
        memset(W + j * XH + X, 0, H * sizeof(real));
    for (size_t j = 3 * H; j < 4 * H; j++)
        memset(W + j * XH, 0, X * sizeof(real));
}

static void gru_init_layer(size_t X, size_t H, real *W, real *b)
{
    (void)b;
    gru_zero_fixed(X, H, W);
}

const bptt_cell_type bptt_cell_gru = {
    .name = "gru", .gates = 4, .hidden_vecs = 1, .internal_vecs = 5,
    .gates_at = 1, .init_layer = gru_init_layer, .zero_fixed = gru_zero_fixed,
    .forward_rows = gru_forward_rows, .backward_rows = gru_backward_rows,
    .backward_post_rows = gru_backward_post_rows, .h_rows = gru_h_rows};

const bptt_cell_type *const bptt_cells[] = {&bptt_cell_lstm, &bptt_cell_rnn,
                                             &bptt_cell_gru, NULL};

const bptt_cell_type *bptt_cell_find(const char *name)
{
    for (size_t i = 0; bptt_cells[i]; i++)
        if (strcmp(bptt_cells[i]->name, name) == 0)
            return bptt_cells[i];
    return NULL;
}

size_t bptt_cell_names(char *buf, size_t cap, const char *last)
{
    const char *names[16];
    size_t n = 0;
    while (bptt_cells[n] && n < 16) {
        names[n] = bptt_cells[n]->name;
        n++;
    }
    return bptt_names_text(buf, cap, names, n, last);
}
