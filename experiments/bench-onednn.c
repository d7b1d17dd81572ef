/* bench-onednn.c: one training iteration on oneDNN's RNN primitives
 * (bench-onednn.h), or stand-ins that say n/a when oneDNN is not there. */
#define _POSIX_C_SOURCE 200809L
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-onednn.h"

#ifndef HAVE_DNNL

int bench_onednn_available(void) { return 0; }
const char *bench_onednn_version(void) { return BENCH_ONEDNN_NA; }
int bench_onednn_open(bench_onednn **out, const bench_onednn_spec *spec,
                      char *why, size_t cap)
{
    (void)spec;
    *out = NULL;
    snprintf(why, cap, "%s", BENCH_ONEDNN_NA);
    return -1;
}
void bench_onednn_close(bench_onednn *o) { (void)o; }
int bench_onednn_iteration(bench_onednn *o, char *why, size_t cap)
{
    (void)o;
    snprintf(why, cap, "%s", BENCH_ONEDNN_NA);
    return -1;
}
double bench_onednn_loss(const bench_onednn *o) { (void)o; return NAN; }
const float *bench_onednn_hidden(const bench_onednn *o)
{
    (void)o;
    return NULL;
}
void bench_onednn_grads(const bench_onednn *o, float *dW, float *db,
                        float *dWo, float *dbo)
{
    (void)o; (void)dW; (void)db; (void)dWo; (void)dbo;
}
int bench_onednn_finite(const bench_onednn *o) { (void)o; return 0; }
size_t bench_onednn_workspace_bytes(const bench_onednn *o)
{
    (void)o;
    return 0;
}
void bench_onednn_impl(const bench_onednn *o, char *buf, size_t cap)
{
    (void)o;
    snprintf(buf, cap, "%s", BENCH_ONEDNN_NA);
}

#else /* HAVE_DNNL */

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>

/* An argument of a primitive: the user's memory itself when the primitive
 * takes the user's layout, else a memory in the primitive's layout and the
 * reorder between the two (user -> it for inputs, it -> user for
 * outputs), run inside every iteration. */
typedef struct {
    dnnl_memory_t user, mem;
    dnnl_primitive_t reorder; /* NULL: mem is user */
    int into;                 /* 1: user -> mem; 0: mem -> user */
} bound;

enum { B_FWL, B_FWI, B_FB, B_BWL, B_BWI, B_BB, B_DWL, B_DWI, B_DB, N_BOUND };

struct bench_onednn {
    size_t T, B, X, H, V, G;
    int lstm;
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    dnnl_primitive_desc_t fwd_pd, bwd_pd;
    dnnl_primitive_t fwd, bwd;
    /* our buffers, in oneDNN's user layouts (tnc, ldigo, ldgo) */
    float *x, *h, *dh, *dx, *wl, *wi, *bias, *dwl, *dwi, *dbias;
    float *Wo, *bo, *dWo, *dbo, *logits;
    float *h0, *dh0; /* the initial state, zero ([h, c] for the LSTM), and
                        its gradient */
    int32_t *y;
    dnnl_memory_t m_x, m_h, m_dh, m_dx, m_wl, m_wi, m_bias, m_dwl, m_dwi,
        m_dbias, m_ws, m_h0, m_c0, m_dh0, m_dc0;
    bound arg[N_BOUND];
    size_t ws_bytes;
    double loss;
};

/* oneDNN's LSTM gate g (i, f, c~, o) is our row block ours[g] ([i, f, o,
 * g], cell.h); the RNN has one gate. */
static const size_t lstm_ours[4] = {0, 1, 3, 2};

static size_t ours_gate(const bench_onednn *o, size_t g)
{
    return o->lstm ? lstm_ours[g] : g;
}

#define TRY(what, call)                                                     \
    do {                                                                    \
        const dnnl_status_t st_ = (call);                                   \
        if (st_ != dnnl_success) {                                          \
            snprintf(why, cap, "oneDNN: %s failed: %s", what,               \
                     dnnl_status2str(st_));                                 \
            goto fail;                                                      \
        }                                                                   \
    } while (0)

static dnnl_status_t bind(bench_onednn *o, const_dnnl_primitive_desc_t pd,
                          int arg, dnnl_memory_t user, int into, bound *b)
{
    b->user = user;
    b->mem = user;
    b->reorder = NULL;
    b->into = into;
    const dnnl_memory_desc_t *want =
        dnnl_primitive_desc_query_md(pd, dnnl_query_exec_arg_md, arg);
    const dnnl_memory_desc_t *have;
    dnnl_status_t st = dnnl_memory_get_memory_desc(user, &have);
    if (st != dnnl_success)
        return st;
    if (!want)
        return dnnl_invalid_arguments;
    if (dnnl_memory_desc_equal(want, have))
        return dnnl_success;
    dnnl_memory_t mem;
    st = dnnl_memory_create(&mem, want, o->eng, DNNL_MEMORY_ALLOCATE);
    if (st != dnnl_success)
        return st;
    b->mem = mem; /* owned from here: close destroys it */
    dnnl_primitive_desc_t rpd;
    st = into ? dnnl_reorder_primitive_desc_create(&rpd, have, o->eng, want,
                                                   o->eng, NULL)
              : dnnl_reorder_primitive_desc_create(&rpd, want, o->eng, have,
                                                   o->eng, NULL);
    if (st != dnnl_success)
        return st;
    st = dnnl_primitive_create(&b->reorder, rpd);
    dnnl_primitive_desc_destroy(rpd);
    if (st != dnnl_success)
        b->reorder = NULL;
    return st;
}

static dnnl_status_t run_reorder(bench_onednn *o, const bound *b)
{
    if (!b->reorder)
        return dnnl_success;
    const dnnl_exec_arg_t a[2] = {
        {DNNL_ARG_FROM, b->into ? b->user : b->mem},
        {DNNL_ARG_TO, b->into ? b->mem : b->user}};
    return dnnl_primitive_execute(b->reorder, o->stream, 2, a);
}

/* Zero a gradient the backward writes (it may add to what is there). */
static dnnl_status_t zero_mem(dnnl_memory_t m)
{
    const dnnl_memory_desc_t *md;
    void *p;
    dnnl_status_t st = dnnl_memory_get_memory_desc(m, &md);
    if (st == dnnl_success)
        st = dnnl_memory_get_data_handle(m, &p);
    if (st == dnnl_success)
        memset(p, 0, dnnl_memory_desc_get_size(md));
    return st;
}

int bench_onednn_available(void) { return 1; }

const char *bench_onednn_version(void)
{
    static char text[32];
    const dnnl_version_t *v = dnnl_version();
    snprintf(text, sizeof text, "%d.%d.%d", v->major, v->minor, v->patch);
    return text;
}

void bench_onednn_close(bench_onednn *o)
{
    if (!o)
        return;
    for (int k = 0; k < N_BOUND; k++) {
        if (o->arg[k].reorder)
            dnnl_primitive_destroy(o->arg[k].reorder);
        if (o->arg[k].mem && o->arg[k].mem != o->arg[k].user)
            dnnl_memory_destroy(o->arg[k].mem);
    }
    dnnl_memory_t *mems[] = {&o->m_x, &o->m_h, &o->m_dh, &o->m_dx, &o->m_wl,
                             &o->m_wi, &o->m_bias, &o->m_dwl, &o->m_dwi,
                             &o->m_dbias, &o->m_ws, &o->m_h0, &o->m_c0,
                             &o->m_dh0, &o->m_dc0};
    for (size_t k = 0; k < sizeof mems / sizeof mems[0]; k++)
        if (*mems[k])
            dnnl_memory_destroy(*mems[k]);
    if (o->fwd)
        dnnl_primitive_destroy(o->fwd);
    if (o->bwd)
        dnnl_primitive_destroy(o->bwd);
    if (o->fwd_pd)
        dnnl_primitive_desc_destroy(o->fwd_pd);
    if (o->bwd_pd)
        dnnl_primitive_desc_destroy(o->bwd_pd);
    if (o->stream)
        dnnl_stream_destroy(o->stream);
    if (o->eng)
        dnnl_engine_destroy(o->eng);
    float *bufs[] = {o->x, o->h, o->dh, o->dx, o->wl, o->wi, o->bias,
                     o->dwl, o->dwi, o->dbias, o->Wo, o->bo, o->dWo, o->dbo,
                     o->logits, o->h0, o->dh0};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++)
        free(bufs[k]);
    free(o->y);
    free(o);
}

int bench_onednn_open(bench_onednn **out, const bench_onednn_spec *sp,
                      char *why, size_t cap)
{
    *out = NULL;
    const int lstm = strcmp(sp->cell, "lstm") == 0;
    if (!lstm && strcmp(sp->cell, "rnn") != 0) {
        snprintf(why, cap, "oneDNN: no counterpart of cell '%s' here "
                           "(lstm or rnn)", sp->cell);
        return -1;
    }
    if (!sp->T || !sp->B || !sp->X || !sp->H || !sp->V) {
        snprintf(why, cap, "oneDNN: a size is 0");
        return -1;
    }
    bench_onednn *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(why, cap, "oneDNN: out of memory");
        return -1;
    }
    const size_t T = sp->T, B = sp->B, X = sp->X, H = sp->H, V = sp->V;
    const size_t G = lstm ? 4 : 1, XH = X + H;
    *o = (bench_onednn){.T = T, .B = B, .X = X, .H = H, .V = V, .G = G,
                        .lstm = lstm};
    const size_t R = T * B;
    o->x = malloc(R * X * sizeof(float));
    o->h = calloc(R * H, sizeof(float));
    o->dh = calloc(R * H, sizeof(float));
    o->dx = calloc(R * X, sizeof(float));
    o->wl = malloc(X * G * H * sizeof(float));
    o->wi = malloc(H * G * H * sizeof(float));
    o->bias = malloc(G * H * sizeof(float));
    o->dwl = calloc(X * G * H, sizeof(float));
    o->dwi = calloc(H * G * H, sizeof(float));
    o->dbias = calloc(G * H, sizeof(float));
    o->Wo = malloc(V * H * sizeof(float));
    o->bo = malloc(V * sizeof(float));
    o->dWo = calloc(V * H, sizeof(float));
    o->dbo = calloc(V, sizeof(float));
    o->logits = calloc(R * V, sizeof(float));
    o->y = malloc(R * sizeof(int32_t));
    o->h0 = calloc(2 * B * H, sizeof(float));
    o->dh0 = calloc(2 * B * H, sizeof(float));
    if (!o->x || !o->h || !o->dh || !o->dx || !o->wl || !o->wi || !o->bias ||
        !o->dwl || !o->dwi || !o->dbias || !o->Wo || !o->bo || !o->dWo ||
        !o->dbo || !o->logits || !o->y || !o->h0 || !o->dh0) {
        snprintf(why, cap, "oneDNN: out of memory");
        goto fail;
    }
    memcpy(o->x, sp->x, R * X * sizeof(float));
    memcpy(o->Wo, sp->Wo, V * H * sizeof(float));
    memcpy(o->bo, sp->bo, V * sizeof(float));
    for (size_t r = 0; r < R; r++) {
        if (sp->y[r] < 0 || (size_t)sp->y[r] >= V) {
            snprintf(why, cap, "oneDNN: target %d out of [0, %zu)",
                     (int)sp->y[r], V);
            goto fail;
        }
        o->y[r] = sp->y[r];
    }
    /* W (G*H, X+H), rows [gate][unit] -> ldigo: (input, gate, unit) */
    for (size_t g = 0; g < G; g++)
        for (size_t u = 0; u < H; u++) {
            const float *row = sp->W + (ours_gate(o, g) * H + u) * XH;
            for (size_t i = 0; i < X; i++)
                o->wl[(i * G + g) * H + u] = row[i];
            for (size_t j = 0; j < H; j++)
                o->wi[(j * G + g) * H + u] = row[X + j];
            o->bias[g * H + u] = sp->b[ours_gate(o, g) * H + u];
        }

    TRY("dnnl_engine_create", dnnl_engine_create(&o->eng, dnnl_cpu, 0));
    TRY("dnnl_stream_create",
        dnnl_stream_create(&o->stream, o->eng, dnnl_stream_default_flags));

    const dnnl_dims_t d_src = {(dnnl_dim_t)T, (dnnl_dim_t)B, (dnnl_dim_t)X};
    const dnnl_dims_t d_dst = {(dnnl_dim_t)T, (dnnl_dim_t)B, (dnnl_dim_t)H};
    const dnnl_dims_t d_wl = {1, 1, (dnnl_dim_t)X, (dnnl_dim_t)G,
                              (dnnl_dim_t)H};
    const dnnl_dims_t d_wi = {1, 1, (dnnl_dim_t)H, (dnnl_dim_t)G,
                              (dnnl_dim_t)H};
    const dnnl_dims_t d_b = {1, 1, (dnnl_dim_t)G, (dnnl_dim_t)H};
    const dnnl_dims_t d_it = {1, 1, (dnnl_dim_t)B, (dnnl_dim_t)H};
    dnnl_memory_desc_t src, dst, wl, wi, bias, wl_any, wi_any, it;
    TRY("dnnl_memory_desc_init_by_tag (src_layer)",
        dnnl_memory_desc_init_by_tag(&src, 3, d_src, dnnl_f32, dnnl_tnc));
    TRY("dnnl_memory_desc_init_by_tag (dst_layer)",
        dnnl_memory_desc_init_by_tag(&dst, 3, d_dst, dnnl_f32, dnnl_tnc));
    TRY("dnnl_memory_desc_init_by_tag (weights_layer)",
        dnnl_memory_desc_init_by_tag(&wl, 5, d_wl, dnnl_f32, dnnl_ldigo));
    TRY("dnnl_memory_desc_init_by_tag (weights_iter)",
        dnnl_memory_desc_init_by_tag(&wi, 5, d_wi, dnnl_f32, dnnl_ldigo));
    TRY("dnnl_memory_desc_init_by_tag (src_iter)",
        dnnl_memory_desc_init_by_tag(&it, 4, d_it, dnnl_f32, dnnl_ldnc));
    TRY("dnnl_memory_desc_init_by_tag (bias)",
        dnnl_memory_desc_init_by_tag(&bias, 4, d_b, dnnl_f32, dnnl_ldgo));
    TRY("dnnl_memory_desc_init_by_tag (weights_layer, any)",
        dnnl_memory_desc_init_by_tag(&wl_any, 5, d_wl, dnnl_f32,
                                     dnnl_format_tag_any));
    TRY("dnnl_memory_desc_init_by_tag (weights_iter, any)",
        dnnl_memory_desc_init_by_tag(&wi_any, 5, d_wi, dnnl_f32,
                                     dnnl_format_tag_any));

    const dnnl_rnn_direction_t dir = dnnl_unidirectional_left2right;
    dnnl_rnn_desc_t fd, bd;
    if (lstm) {
        TRY("dnnl_lstm_forward_desc_init",
            dnnl_lstm_forward_desc_init(&fd, dnnl_forward_training, dir,
                                        &src, &it, &it, &wl_any, &wi_any,
                                        &bias, &dst, NULL, NULL, 0));
        TRY("dnnl_lstm_backward_desc_init",
            dnnl_lstm_backward_desc_init(
                &bd, dnnl_backward, dir, &src, &it, &it, &wl_any, &wi_any,
                &bias, &dst, NULL, NULL, &src, &it, &it, &wl_any, &wi_any,
                &bias, &dst, NULL, NULL, 0));
    } else {
        TRY("dnnl_vanilla_rnn_forward_desc_init",
            dnnl_vanilla_rnn_forward_desc_init(
                &fd, dnnl_forward_training, dnnl_eltwise_tanh, dir, &src,
                &it, &wl_any, &wi_any, &bias, &dst, NULL, 0, 0.0f, 0.0f));
        TRY("dnnl_vanilla_rnn_backward_desc_init",
            dnnl_vanilla_rnn_backward_desc_init(
                &bd, dnnl_backward, dnnl_eltwise_tanh, dir, &src, &it,
                &wl_any, &wi_any, &bias, &dst, NULL, &src, &it, &wl_any,
                &wi_any, &bias, &dst, NULL, 0, 0.0f, 0.0f));
    }
    TRY("dnnl_primitive_desc_create (forward)",
        dnnl_primitive_desc_create(&o->fwd_pd, &fd, NULL, o->eng, NULL));
    TRY("dnnl_primitive_desc_create (backward)",
        dnnl_primitive_desc_create(&o->bwd_pd, &bd, NULL, o->eng,
                                   o->fwd_pd));
    TRY("dnnl_primitive_create (forward)",
        dnnl_primitive_create(&o->fwd, o->fwd_pd));
    TRY("dnnl_primitive_create (backward)",
        dnnl_primitive_create(&o->bwd, o->bwd_pd));

    TRY("dnnl_memory_create (src_layer)",
        dnnl_memory_create(&o->m_x, &src, o->eng, o->x));
    TRY("dnnl_memory_create (dst_layer)",
        dnnl_memory_create(&o->m_h, &dst, o->eng, o->h));
    TRY("dnnl_memory_create (diff_dst_layer)",
        dnnl_memory_create(&o->m_dh, &dst, o->eng, o->dh));
    TRY("dnnl_memory_create (diff_src_layer)",
        dnnl_memory_create(&o->m_dx, &src, o->eng, o->dx));
    TRY("dnnl_memory_create (src_iter)",
        dnnl_memory_create(&o->m_h0, &it, o->eng, o->h0));
    TRY("dnnl_memory_create (src_iter_c)",
        dnnl_memory_create(&o->m_c0, &it, o->eng, o->h0 + B * H));
    TRY("dnnl_memory_create (diff_src_iter)",
        dnnl_memory_create(&o->m_dh0, &it, o->eng, o->dh0));
    TRY("dnnl_memory_create (diff_src_iter_c)",
        dnnl_memory_create(&o->m_dc0, &it, o->eng, o->dh0 + B * H));
    TRY("dnnl_memory_create (weights_layer)",
        dnnl_memory_create(&o->m_wl, &wl, o->eng, o->wl));
    TRY("dnnl_memory_create (weights_iter)",
        dnnl_memory_create(&o->m_wi, &wi, o->eng, o->wi));
    TRY("dnnl_memory_create (bias)",
        dnnl_memory_create(&o->m_bias, &bias, o->eng, o->bias));
    TRY("dnnl_memory_create (diff_weights_layer)",
        dnnl_memory_create(&o->m_dwl, &wl, o->eng, o->dwl));
    TRY("dnnl_memory_create (diff_weights_iter)",
        dnnl_memory_create(&o->m_dwi, &wi, o->eng, o->dwi));
    TRY("dnnl_memory_create (diff_bias)",
        dnnl_memory_create(&o->m_dbias, &bias, o->eng, o->dbias));
    const dnnl_memory_desc_t *ws =
        dnnl_primitive_desc_query_md(o->fwd_pd, dnnl_query_workspace_md, 0);
    if (!ws) {
        snprintf(why, cap, "oneDNN: the forward has no workspace");
        goto fail;
    }
    o->ws_bytes = dnnl_memory_desc_get_size(ws);
    TRY("dnnl_memory_create (workspace)",
        dnnl_memory_create(&o->m_ws, ws, o->eng, DNNL_MEMORY_ALLOCATE));

    const struct {
        const_dnnl_primitive_desc_t pd;
        int arg;
        dnnl_memory_t user;
        int into;
    } binds[N_BOUND] = {
        [B_FWL] = {o->fwd_pd, DNNL_ARG_WEIGHTS_LAYER, o->m_wl, 1},
        [B_FWI] = {o->fwd_pd, DNNL_ARG_WEIGHTS_ITER, o->m_wi, 1},
        [B_FB] = {o->fwd_pd, DNNL_ARG_BIAS, o->m_bias, 1},
        [B_BWL] = {o->bwd_pd, DNNL_ARG_WEIGHTS_LAYER, o->m_wl, 1},
        [B_BWI] = {o->bwd_pd, DNNL_ARG_WEIGHTS_ITER, o->m_wi, 1},
        [B_BB] = {o->bwd_pd, DNNL_ARG_BIAS, o->m_bias, 1},
        [B_DWL] = {o->bwd_pd, DNNL_ARG_DIFF_WEIGHTS_LAYER, o->m_dwl, 0},
        [B_DWI] = {o->bwd_pd, DNNL_ARG_DIFF_WEIGHTS_ITER, o->m_dwi, 0},
        [B_DB] = {o->bwd_pd, DNNL_ARG_DIFF_BIAS, o->m_dbias, 0}};
    for (int k = 0; k < N_BOUND; k++)
        TRY("binding an argument (memory or reorder)",
            bind(o, binds[k].pd, binds[k].arg, binds[k].user, binds[k].into,
                 &o->arg[k]));
    *out = o;
    return 0;
fail:
    bench_onednn_close(o);
    return -1;
}

/* The output layer and softmax cross-entropy over all T*B rows at once:
 * logits = h Wo^T + bo, loss = mean over rows of -log p(y), dlogits =
 * (p - onehot(y)) / rows, dWo = dlogits^T h, dbo = column sums,
 * dh = dlogits Wo. */
static void output_layer(bench_onednn *o)
{
    const int R = (int)(o->T * o->B), V = (int)o->V, H = (int)o->H;
    const float scale = 1.0f / (float)R;
    float *z = o->logits;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, R, V, H, 1.0f, o->h,
                H, o->Wo, H, 0.0f, z, V);
    double loss = 0.0;
#pragma omp parallel for reduction(+ : loss)
    for (int r = 0; r < R; r++) {
        float *row = z + (size_t)r * V;
        float top = -INFINITY;
        for (int j = 0; j < V; j++) {
            row[j] += o->bo[j];
            top = row[j] > top ? row[j] : top;
        }
        float sum = 0.0f;
        for (int j = 0; j < V; j++) {
            row[j] = expf(row[j] - top);
            sum += row[j];
        }
        const float inv = 1.0f / sum;
        loss -= log((double)(row[o->y[r]] * inv));
        for (int j = 0; j < V; j++)
            row[j] *= inv * scale;
        row[o->y[r]] -= scale;
    }
    o->loss = loss / R;
    for (int j = 0; j < V; j++)
        o->dbo[j] = 0.0f;
    for (int r = 0; r < R; r++)
        for (int j = 0; j < V; j++)
            o->dbo[j] += z[(size_t)r * V + j];
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, V, H, R, 1.0f, z, V,
                o->h, H, 0.0f, o->dWo, H);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, R, H, V, 1.0f, z,
                V, o->Wo, H, 0.0f, o->dh, H);
}

int bench_onednn_iteration(bench_onednn *o, char *why, size_t cap)
{
    for (int k = B_FWL; k <= B_FB; k++)
        TRY("reorder of the weights (forward)",
            run_reorder(o, &o->arg[k]));
    const dnnl_exec_arg_t fa[] = {
        {DNNL_ARG_SRC_LAYER, o->m_x},
        {DNNL_ARG_SRC_ITER, o->m_h0},
        {DNNL_ARG_WEIGHTS_LAYER, o->arg[B_FWL].mem},
        {DNNL_ARG_WEIGHTS_ITER, o->arg[B_FWI].mem},
        {DNNL_ARG_BIAS, o->arg[B_FB].mem},
        {DNNL_ARG_DST_LAYER, o->m_h},
        {DNNL_ARG_WORKSPACE, o->m_ws},
        {DNNL_ARG_SRC_ITER_C, o->m_c0}}; /* the LSTM's, last */
    TRY("dnnl_primitive_execute (forward)",
        dnnl_primitive_execute(o->fwd, o->stream,
                               (int)(sizeof fa / sizeof fa[0]) - !o->lstm,
                               fa));
    TRY("dnnl_stream_wait (forward)", dnnl_stream_wait(o->stream));
    output_layer(o);
    for (int k = B_BWL; k <= B_BB; k++)
        TRY("reorder of the weights (backward)",
            run_reorder(o, &o->arg[k]));
    for (int k = B_DWL; k <= B_DB; k++)
        TRY("zeroing a gradient", zero_mem(o->arg[k].mem));
    const dnnl_exec_arg_t ba[] = {
        {DNNL_ARG_SRC_LAYER, o->m_x},
        {DNNL_ARG_SRC_ITER, o->m_h0},
        {DNNL_ARG_DIFF_SRC_ITER, o->m_dh0},
        {DNNL_ARG_WEIGHTS_LAYER, o->arg[B_BWL].mem},
        {DNNL_ARG_WEIGHTS_ITER, o->arg[B_BWI].mem},
        {DNNL_ARG_BIAS, o->arg[B_BB].mem},
        {DNNL_ARG_DST_LAYER, o->m_h},
        {DNNL_ARG_DIFF_SRC_LAYER, o->m_dx},
        {DNNL_ARG_DIFF_WEIGHTS_LAYER, o->arg[B_DWL].mem},
        {DNNL_ARG_DIFF_WEIGHTS_ITER, o->arg[B_DWI].mem},
        {DNNL_ARG_DIFF_BIAS, o->arg[B_DB].mem},
        {DNNL_ARG_DIFF_DST_LAYER, o->m_dh},
        {DNNL_ARG_WORKSPACE, o->m_ws},
        {DNNL_ARG_SRC_ITER_C, o->m_c0}, /* the LSTM's, last */
        {DNNL_ARG_DIFF_SRC_ITER_C, o->m_dc0}};
    TRY("dnnl_primitive_execute (backward)",
        dnnl_primitive_execute(o->bwd, o->stream,
                               (int)(sizeof ba / sizeof ba[0]) -
                                   2 * !o->lstm,
                               ba));
    for (int k = B_DWL; k <= B_DB; k++)
        TRY("reorder of the weight gradients", run_reorder(o, &o->arg[k]));
    TRY("dnnl_stream_wait (backward)", dnnl_stream_wait(o->stream));
    return 0;
fail:
    return -1;
}

double bench_onednn_loss(const bench_onednn *o) { return o->loss; }

const float *bench_onednn_hidden(const bench_onednn *o) { return o->h; }

void bench_onednn_grads(const bench_onednn *o, float *dW, float *db,
                        float *dWo, float *dbo)
{
    const size_t X = o->X, H = o->H, G = o->G, XH = X + H;
    for (size_t g = 0; g < G; g++)
        for (size_t u = 0; u < H; u++) {
            float *row = dW + (ours_gate(o, g) * H + u) * XH;
            for (size_t i = 0; i < X; i++)
                row[i] = o->dwl[(i * G + g) * H + u];
            for (size_t j = 0; j < H; j++)
                row[X + j] = o->dwi[(j * G + g) * H + u];
            db[ours_gate(o, g) * H + u] = o->dbias[g * H + u];
        }
    memcpy(dWo, o->dWo, o->V * H * sizeof(float));
    memcpy(dbo, o->dbo, o->V * sizeof(float));
}

static int all_finite(const float *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return 0;
    return 1;
}

int bench_onednn_finite(const bench_onednn *o)
{
    const size_t R = o->T * o->B, GH = o->G * o->H;
    return isfinite(o->loss) && all_finite(o->h, R * o->H) &&
           all_finite(o->dh, R * o->H) && all_finite(o->dx, R * o->X) &&
           all_finite(o->dwl, o->X * GH) && all_finite(o->dwi, o->H * GH) &&
           all_finite(o->dbias, GH) && all_finite(o->dWo, o->V * o->H) &&
           all_finite(o->dbo, o->V);
}

size_t bench_onednn_workspace_bytes(const bench_onednn *o)
{
    return o->ws_bytes;
}

void bench_onednn_impl(const bench_onednn *o, char *buf, size_t cap)
{
    const char *f = NULL, *b = NULL;
    if (dnnl_primitive_desc_query(o->fwd_pd, dnnl_query_impl_info_str, 0,
                                  &f) != dnnl_success)
        f = "?";
    if (dnnl_primitive_desc_query(o->bwd_pd, dnnl_query_impl_info_str, 0,
                                  &b) != dnnl_success)
        b = "?";
    int reorders = 0;
    for (int k = 0; k < N_BOUND; k++)
        reorders += o->arg[k].reorder != NULL;
    snprintf(buf, cap, "forward %s, backward %s, %d reorders an iteration",
             f, b, reorders);
}

#endif /* HAVE_DNNL */
