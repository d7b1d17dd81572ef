/* model.c: parameters, the cell stack, output layer and loss, optimizers
 * (see model.h). */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "fastmath.h"
#include "model.h"
#include "gemm.h"

/* A matrix (rows, cols), or a vector (rows) when ndim is 1 (cols 1). */
static void add_tensor(bptt_model *m, const char *name, int ndim, size_t rows,
                       size_t cols)
{
    bptt_tensor *t = &m->tensor[m->n_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->offset = m->n_params;
    t->ndim = ndim;
    t->rows = rows;
    t->cols = cols;
    m->n_params += rows * cols;
}

static size_t layer_input(const bptt_model *m, size_t l)
{
    return l == 0 ? m->X : m->H;
}

/* size products that cannot overflow: every factor is checked first */
static int sizes_ok(size_t L, size_t B, size_t X, size_t H, size_t V)
{
    const size_t lim = (size_t)1 << 24; /* per dimension */
    return L >= 1 && L <= BPTT_MAX_LAYERS && B >= 1 && X >= 1 && H >= 1 &&
           V >= 1 && B < lim && X < lim && H < lim && V < lim &&
           (X + H) * 4 * H < ((size_t)1 << 40) && B * 8 * H < ((size_t)1 << 40);
}

int bptt_model_alloc(bptt_model **out, const bptt_cell_type *cell, size_t L,
                     size_t B, size_t X, size_t H, size_t V,
                     unsigned long seed, bptt_mem *mem)
{
    *out = NULL;
    if (!cell || !sizes_ok(L, B, X, H, V))
        return BPTT_EINVAL;
    bptt_model *m = calloc(1, sizeof *m);
    if (!m)
        return BPTT_ENOMEM;
    m->cell = cell;
    m->L = L;
    m->B = B;
    m->X = X;
    m->H = H;
    m->V = V;
    m->mem = mem;
    const size_t G = cell->gates;
    char name[sizeof m->tensor[0].name];
    for (size_t l = 0; l < L; l++) {
        snprintf(name, sizeof name, "W%zu", l);
        add_tensor(m, name, 2, G * H, layer_input(m, l) + H);
        snprintf(name, sizeof name, "b%zu", l);
        add_tensor(m, name, 1, G * H, 1);
    }
    add_tensor(m, "Wo", 2, V, H);
    add_tensor(m, "bo", 1, V, 1);
    m->hidden_len = L * cell->hidden_vecs * B * H;
    m->internal_len = L * cell->internal_vecs * B * H;

    const size_t XH = (X > H ? X : H) + H;
    const size_t rb = sizeof(real);
    m->params = bptt_mem_get(mem, BPTT_MEM_PARAMS, m->n_params * rb);
    m->grads = bptt_mem_get(mem, BPTT_MEM_GRADS, m->n_params * rb);
    m->scratch_xh = bptt_mem_get(mem, BPTT_MEM_WORKING, B * XH * rb);
    m->scratch_dxh = bptt_mem_get(mem, BPTT_MEM_WORKING, B * XH * rb);
    m->logits = bptt_mem_get(mem, BPTT_MEM_WORKING, B * V * rb);
    m->state_tmp = bptt_mem_get(mem, BPTT_MEM_WORKING, m->hidden_len * rb);
    m->dx = bptt_mem_get(mem, BPTT_MEM_WORKING, B * H * rb);
    m->row_loss = bptt_mem_get(mem, BPTT_MEM_WORKING, B * sizeof(double));
    m->dbias = bptt_mem_get(mem, BPTT_MEM_GRADS,
                            (L * G * H + V) * sizeof(double));
    if (!m->params || !m->grads || !m->scratch_xh || !m->scratch_dxh ||
        !m->logits || !m->state_tmp || !m->dx || !m->row_loss || !m->dbias ||
        bptt_model_set_wgrad_steps(m, BPTT_WGRAD_STEPS) != BPTT_OK) {
        bptt_model_free(m);
        return BPTT_ENOMEM;
    }
    for (size_t l = 0; l < L; l++) {
        m->ws[l] = (bptt_cell_ws){B, layer_input(m, l), H, m->scratch_xh,
                                  m->scratch_dxh, NULL};
        const size_t len = bptt_cell_packed_len(G, layer_input(m, l), H);
        if (len) {
            m->wpack[l] = bptt_mem_get(mem, BPTT_MEM_WORKING, len * rb);
            if (!m->wpack[l]) {
                bptt_model_free(m);
                return BPTT_ENOMEM;
            }
            m->ws[l].wpack = m->wpack[l];
            m->wpack_bytes += len * rb;
        }
    }
    if (m->wpack[0]) { /* the kernel is in use: Wo^T for the output layer */
        m->wo_t = bptt_mem_get(mem, BPTT_MEM_WORKING, H * V * rb);
        if (!m->wo_t) {
            bptt_model_free(m);
            return BPTT_ENOMEM;
        }
        m->wpack_bytes += H * V * rb;
    }

    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) {
        bptt_model_free(m);
        return BPTT_ENOMEM;
    }
    gsl_rng_set(rng, seed);
    const double r = 1.0 / sqrt((double)H);
    for (size_t k = 0; k < m->n_params; k++)
        m->params[k] = (real)((2 * gsl_rng_uniform(rng) - 1) * r);
    gsl_rng_free(rng);
    if (cell->init_layer) /* LSTM forget biases, GRU zero blocks */
        for (size_t l = 0; l < L; l++)
            cell->init_layer(layer_input(m, l), H,
                             m->params + m->tensor[2 * l].offset,
                             m->params + m->tensor[2 * l + 1].offset);
    bptt_model_pack_weights(m);
    *out = m;
    return BPTT_OK;
}

void bptt_model_state_bytes(const bptt_cell_type *cell, size_t L, size_t B,
                            size_t H, double *hidden_bytes,
                            double *internal_bytes)
{
    const double n = (double)sizeof(real) * (double)L * (double)B * (double)H;
    *hidden_bytes = n * (double)cell->hidden_vecs;
    *internal_bytes = n * (double)cell->internal_vecs;
}

double bptt_model_param_reals(const bptt_cell_type *cell, size_t L, size_t X,
                              size_t H, size_t V)
{
    const double gh = (double)cell->gates * (double)H, h = (double)H;
    double n = 0;
    for (size_t l = 0; l < L; l++) /* W_l (G H, X_l + H) and b_l (G H) */
        n += gh * ((double)(l == 0 ? X : H) + h) + gh;
    return n + (double)V * h + (double)V; /* Wo (V, H) and bo (V) */
}

double bptt_model_grad_bytes(const bptt_cell_type *cell, size_t L, size_t X,
                             size_t H, size_t V)
{
    const double biases = (double)L * (double)cell->gates * (double)H +
                          (double)V; /* dbias: model.h */
    return (double)sizeof(real) * bptt_model_param_reals(cell, L, X, H, V) +
           (double)sizeof(double) * biases;
}

double bptt_model_working_bytes(const bptt_cell_type *cell, size_t L,
                                size_t B, size_t X, size_t H, size_t V)
{
    const double rb = (double)sizeof(real), b = (double)B, h = (double)H;
    const double gh = (double)cell->gates * h, K = BPTT_WGRAD_STEPS;
    const double xh = (double)(X > H ? X : H) + h;
    double w = 2 * b * xh                                   /* scratch */
               + b * (double)V                              /* logits */
               + (double)L * (double)cell->hidden_vecs * b * h /* state */
               + b * h                                      /* dx */
               + b * (double)sizeof(double) / rb;           /* row_loss */
    if (bptt_gemm_kernel_on()) /* Wo^T for the output layer */
        w += h * (double)V;
    for (size_t l = 0; l < L; l++) {
        const size_t in = l == 0 ? X : H;
        w += K * b * (gh + (double)in + h); /* weight-gradient blocks */
        if (gh * ((double)in + h) < 1e15) /* no overflow in size_t */
            w += (double)bptt_cell_packed_len(cell->gates, in, H);
        else /* past any memory: the unpadded size will do */
            w += 2 * gh * ((double)in + h);
    }
    return w * rb;
}

int bptt_model_set_wgrad_steps(bptt_model *m, size_t K)
{
    const size_t L = m->L, B = m->B, H = m->H, GH = m->cell->gates * H;
    if (K < 1 || K > BPTT_WGRAD_STEPS_MAX)
        return BPTT_EINVAL;
    if (K == m->wgrad_steps)
        return BPTT_OK;
    size_t off[BPTT_MAX_LAYERS], xh = 0; /* reals of all layers' xh blocks */
    for (size_t l = 0; l < L; l++) {
        off[l] = xh;
        xh += K * B * (layer_input(m, l) + H);
    }
    const size_t rb = sizeof(real), dg = L * K * B * GH;
    real *new_dg = bptt_mem_get(m->mem, BPTT_MEM_WORKING, dg * rb);
    real *new_xh = new_dg ? bptt_mem_get(m->mem, BPTT_MEM_WORKING, xh * rb)
                          : NULL;
    if (!new_xh) {
        bptt_mem_put(m->mem, new_dg);
        return BPTT_ENOMEM;
    }
    bptt_mem_put(m->mem, m->wgrad_dgates);
    bptt_mem_put(m->mem, m->wgrad_xh);
    m->wgrad_dgates = new_dg;
    m->wgrad_xh = new_xh;
    memcpy(m->wgrad_xh_off, off, L * sizeof off[0]);
    m->wgrad_steps = K;
    m->wgrad_rows = 0;
    m->wgrad_bytes = (dg + xh) * rb;
    return BPTT_OK;
}

void bptt_model_free(bptt_model *m)
{
    if (!m)
        return;
    bptt_mem *mem = m->mem;
    bptt_mem_put(mem, m->params);
    bptt_mem_put(mem, m->grads);
    bptt_mem_put(mem, m->scratch_xh);
    bptt_mem_put(mem, m->scratch_dxh);
    bptt_mem_put(mem, m->logits);
    bptt_mem_put(mem, m->state_tmp);
    bptt_mem_put(mem, m->dx);
    bptt_mem_put(mem, m->row_loss);
    bptt_mem_put(mem, m->wo_t);
    bptt_mem_put(mem, m->dbias);
    bptt_mem_put(mem, m->wgrad_dgates);
    bptt_mem_put(mem, m->wgrad_xh);
    for (size_t l = 0; l < m->L; l++)
        bptt_mem_put(mem, m->wpack[l]);
    free(m);
}

void bptt_model_pack_weights(bptt_model *m)
{
    for (size_t l = 0; l < m->L; l++)
        if (m->wpack[l])
            bptt_cell_pack_weights(&m->ws[l], m->cell->gates,
                                   m->params + m->tensor[2 * l].offset,
                                   m->wpack[l]);
    if (m->wo_t) {
        const size_t H = m->H, V = m->V;
        const real *Wo = m->params + m->tensor[2 * m->L].offset;
        for (size_t v = 0; v < V; v++)
            for (size_t j = 0; j < H; j++)
                m->wo_t[j * V + v] = Wo[v * H + j];
    }
}

size_t bptt_model_hidden_bytes(const bptt_model *m)
{
    return m->hidden_len * sizeof(real);
}

size_t bptt_model_internal_bytes(const bptt_model *m)
{
    return m->internal_len * sizeof(real);
}

static double *dbias_of(const bptt_model *m, size_t l) /* l == L: output */
{
    return m->dbias + l * m->cell->gates * m->H;
}

void bptt_model_zero_grads(bptt_model *m)
{
    memset(m->grads, 0, m->n_params * sizeof(real));
    memset(m->dbias, 0,
           (m->L * m->cell->gates * m->H + m->V) * sizeof(double));
    m->wgrad_rows = 0;
}

/* Rows of the block of layer l holding slot k (a step's (B, .) rows). */
static real *wgrad_dgates_of(const bptt_model *m, size_t l, size_t k)
{
    const size_t GH = m->cell->gates * m->H;
    return m->wgrad_dgates + (l * m->wgrad_steps + k) * m->B * GH;
}
static real *wgrad_xh_of(const bptt_model *m, size_t l, size_t k)
{
    return m->wgrad_xh + m->wgrad_xh_off[l] +
           k * m->B * (m->ws[l].X + m->H);
}

/* dW += dgates^T xh over the open block, every layer; closes the block. */
static void wgrad_flush(bptt_model *m)
{
    const size_t GH = m->cell->gates * m->H;
    for (size_t l = 0; l < m->L; l++)
        bptt_cell_weight_grads(GH, m->ws[l].X + m->H, m->wgrad_rows * m->B,
                               wgrad_dgates_of(m, l, 0),
                               wgrad_xh_of(m, l, 0),
                               m->grads + m->tensor[2 * l].offset);
    m->wgrad_rows = 0;
}

void bptt_model_finish_grads(bptt_model *m)
{
    if (m->wgrad_rows)
        wgrad_flush(m);
    if (m->cell->zero_fixed) /* entries the cell keeps at zero (GRU) */
        for (size_t l = 0; l < m->L; l++)
            m->cell->zero_fixed(m->ws[l].X, m->H,
                                m->grads + m->tensor[2 * l].offset);
    for (size_t l = 0; l <= m->L; l++) {
        const bptt_tensor *t = &m->tensor[2 * l + 1]; /* b_l, then bo */
        const double *acc = dbias_of(m, l);
        real *g = m->grads + t->offset;
        for (size_t j = 0; j < t->rows; j++)
            g[j] = (real)acc[j];
    }
}

/* offsets of layer l inside hidden and internal states */
static size_t hid_off(const bptt_model *m, size_t l)
{
    return l * m->cell->hidden_vecs * m->B * m->H;
}
static size_t int_off(const bptt_model *m, size_t l)
{
    return l * m->cell->internal_vecs * m->B * m->H;
}

/* ---- the kernel's path: one parallel region a step ---------------------------
 * Where the kernel is in use (the weights are packed), a forward or a
 * backward step is one parallel region.  Its threads split each product
 * into runs of the kernel's tiles (bptt_gemm_part: a thread keeps the
 * same columns of the weights at every step), and the elementwise work
 * into even runs of rows, with a barrier wherever one part reads what
 * another thread wrote.  Every element is computed by one thread in the
 * order the serial ops use, so the results are bit for bit those of the
 * whole ops on the kernel, whatever the thread count (doc/design.md 8.1).
 * Sums over rows (bias gradients, the loss) run over all rows in order,
 * cut by column (or summed after the region). */

static int team_path(const bptt_model *m)
{
    return m->wpack[0] != NULL && bptt_gemm_kernel_on();
}

/* the region runs on one thread where a step's largest product (a layer's
 * gates) is too small to share: same bits either way */
static int team_worth(const bptt_model *m)
{
    const size_t X = m->X > m->H ? m->X : m->H;
    return bptt_gemm_worth_threads(m->B, m->cell->gates * m->H, X + m->H);
}

#ifdef _OPENMP
#define TEAM_BARRIER() _Pragma("omp barrier")
#else
#define TEAM_BARRIER()
#endif

static size_t hid_off(const bptt_model *m, size_t l);
static size_t int_off(const bptt_model *m, size_t l);

static void team_forward(bptt_model *m, const real *x, const real *state_in,
                         real *s_out, real *state_out)
{
    const bptt_cell_type *c = m->cell;
    const size_t B = m->B, n = B * m->H;
    const int par = team_worth(m);
    (void)par; /* read by the pragma only (a build without OpenMP) */
    _Pragma("omp parallel if (par)")
    {
        const int q = bptt_team_id(), P = bptt_team_size();
        size_t r0, r1;
        bptt_share(B, q, P, &r0, &r1);
        for (size_t l = 0; l < m->L; l++) {
            const bptt_cell_ws *ws = &m->ws[l];
            const real *in = l == 0 ? x : state_out + hid_off(m, l - 1);
            real *sl = s_out + int_off(m, l);
            const bptt_gemm_prod g = bptt_gemm_gates_prod(
                ws, c->gates, m->params + m->tensor[2 * l + 1].offset, in,
                state_in + hid_off(m, l), sl + c->gates_at * n);
            bptt_gemm_part(&g, q, P);
            TEAM_BARRIER();
            c->forward_rows(ws, state_in + hid_off(m, l), sl,
                            state_out + hid_off(m, l), r0, r1);
            if (l + 1 < m->L) { /* the next layer's product reads all rows */
                TEAM_BARRIER();
            }
        }
    }
}

void bptt_model_forward_step(bptt_model *m, const real *x,
                             const real *state_in, real *s_out,
                             real *state_out)
{
    if (team_path(m)) {
        team_forward(m, x, state_in, s_out, state_out);
        return;
    }
    for (size_t l = 0; l < m->L; l++) {
        const real *in = l == 0 ? x : state_out + hid_off(m, l - 1);
        m->cell->forward(&m->ws[l], m->params + m->tensor[2 * l].offset,
                         m->params + m->tensor[2 * l + 1].offset, in,
                         state_in + hid_off(m, l), s_out + int_off(m, l),
                         state_out + hid_off(m, l));
    }
}

void bptt_model_state_from_internal(bptt_model *m, const real *s,
                                    real *state)
{
    for (size_t l = 0; l < m->L; l++)
        m->cell->state_from_internal(&m->ws[l], s + int_off(m, l),
                                     state + hid_off(m, l));
}

/* h of layer l at this step, from the internal state s */
static const real *layer_h(bptt_model *m, const real *s, size_t l)
{
    return m->cell->h_from_internal(&m->ws[l], s + int_off(m, l),
                                    m->state_tmp + hid_off(m, l));
}

/* Rows [r0, r1) of the logits: softmax cross-entropy, each row's loss
 * into row_loss, and dlogits = (p - onehot) * scale in place. */
static void softmax_rows(bptt_model *m, const int32_t *y, real scale,
                         size_t r0, size_t r1)
{
    const size_t V = m->V;
    for (size_t r = r0; r < r1; r++) {
        real *z = m->logits + r * V;
        real mx = z[0];
        for (size_t v = 1; v < V; v++)
            mx = z[v] > mx ? z[v] : mx;
        const size_t target = (size_t)y[r];
        const double zt = (double)(z[target] - mx);
        for (size_t v = 0; v < V; v++)
            z[v] = fm_exp(z[v] - mx);
        double sum = 0;
        for (size_t v = 0; v < V; v++)
            sum += z[v];
        const real inv = (real)(1.0 / sum);
        m->row_loss[r] = log(sum) - zt; /* -log softmax, without underflow */
        for (size_t v = 0; v < V; v++)
            z[v] = z[v] * inv * scale; /* dlogits = (p - onehot) * scale */
        z[target] -= scale;
    }
}

/* db[j] += the sum over the rows of d (rows, cols), in row order (in
 * double), for the columns [j0, j1) */
static void bias_rows_sum(const real *d, size_t rows, size_t cols, double *db,
                          size_t j0, size_t j1)
{
    for (size_t j = j0; j < j1; j++) {
        double sum = 0;
        for (size_t r = 0; r < rows; r++)
            sum += (double)d[r * cols + j];
        db[j] += sum;
    }
}

/* this step's rows in the weight-gradient blocks: [1, K] is a block, then
 * [K+1, 2K], ... whatever the plan */
static size_t wgrad_slot(bptt_model *m, size_t i)
{
    const size_t slot = (i - 1) % m->wgrad_steps;
    if (slot + 1 > m->wgrad_rows)
        m->wgrad_rows = slot + 1;
    return slot;
}

/* The backward step of bptt_model_backward_step on the kernel, one
 * region: output layer (rows, then the products), then each layer from
 * the top (rows, the products, then rows again), then the weight-gradient
 * block when it closes. */
static double team_backward(bptt_model *m, size_t slot, const real *x,
                            const int32_t *y, const real *s, real *carry,
                            real scale)
{
    const bptt_cell_type *c = m->cell;
    const size_t B = m->B, H = m->H, V = m->V, L = m->L;
    const size_t G = c->gates, GH = G * H;
    real *dWo = m->grads + m->tensor[2 * L].offset;
    const real *Wo = m->params + m->tensor[2 * L].offset;
    const real *bo = m->params + m->tensor[2 * L + 1].offset;
    const int flush = slot == 0; /* the block's lowest step */
    const size_t rows = m->wgrad_rows * B;
    const int par = team_worth(m);
    (void)par;
    _Pragma("omp parallel if (par)")
    {
        const int q = bptt_team_id(), P = bptt_team_size();
        size_t r0, r1;
        bptt_share(B, q, P, &r0, &r1);
        /* output layer: this thread's rows of the logits and softmax */
        const real *hL = c->h_rows(&m->ws[L - 1], s + int_off(m, L - 1),
                                   m->state_tmp + hid_off(m, L - 1), r0, r1);
        const bptt_gemm_prod lg = bptt_gemm_plain_prod(
            r1 - r0, V, H, hL + r0 * H, H, 0, m->wo_t, V, m->logits + r0 * V,
            V, bo, 0);
        bptt_gemm_part(&lg, 0, 1);
        softmax_rows(m, y, scale, r0, r1);
        TEAM_BARRIER();
        real *dhL = carry + hid_off(m, L - 1);
        const bptt_gemm_prod dwo = bptt_gemm_plain_prod(
            V, H, B, m->logits, V, 1, hL, H, dWo, H, NULL, 1);
        bptt_gemm_part(&dwo, q, P);
        const bptt_gemm_prod dh = bptt_gemm_plain_prod(
            B, H, V, m->logits, V, 0, Wo, H, dhL, H, NULL, 1);
        bptt_gemm_part(&dh, q, P);
        size_t v0, v1;
        bptt_share(V, q, P, &v0, &v1);
        bias_rows_sum(m->logits, B, V, dbias_of(m, L), v0, v1);
        TEAM_BARRIER();

        /* the cell stack, top layer first */
        for (size_t l = L; l-- > 0;) {
            const bptt_cell_ws *ws = &m->ws[l];
            const real *sl = s + int_off(m, l);
            const size_t X = ws->X, XH = X + H;
            const real *in =
                l == 0 ? x
                       : c->h_rows(&m->ws[l - 1], s + int_off(m, l - 1),
                                   m->state_tmp + hid_off(m, l - 1), r0, r1);
            real *dc = carry + hid_off(m, l);
            real *dg = wgrad_dgates_of(m, l, slot), *xh = wgrad_xh_of(m, l, slot);
            c->backward_rows(ws, sl, dc, dc, dg, r0, r1);
            for (size_t r = r0; r < r1; r++) { /* xh = [x, h_prev] */
                memcpy(xh + r * XH, in + r * X, X * sizeof(real));
                memcpy(xh + r * XH + X, sl + r * H, H * sizeof(real));
            }
            TEAM_BARRIER();
            size_t j0, j1;
            bptt_share(GH, q, P, &j0, &j1);
            double *db = dbias_of(m, l);
            for (size_t r = 0; r < B; r++) { /* row by row, as the whole op */
                const real *d = dg + r * GH;
                _Pragma("omp simd")
                for (size_t j = j0; j < j1; j++)
                    db[j] += (double)d[j];
            }
            const bptt_gemm_prod back =
                l == 0 ? bptt_gemm_dh_prod(ws, G, dg, dc)
                       : bptt_gemm_dxh_prod(
                             ws, G, m->params + m->tensor[2 * l].offset, dg);
            bptt_gemm_part(&back, q, P);
            TEAM_BARRIER();
            if (l > 0) { /* dx to the layer below, dh_prev to this one */
                real *dh_below = carry + hid_off(m, l - 1);
                for (size_t r = r0; r < r1; r++) {
                    const real *d = ws->dxh + r * XH;
                    for (size_t k = 0; k < X; k++)
                        dh_below[r * H + k] += d[k];
                    memcpy(dc + r * H, d + X, H * sizeof(real));
                }
            }
            if (c->backward_post_rows)
                c->backward_post_rows(ws, dc, r0, r1);
        }
        if (flush) /* every part of the block is written (the barriers) */
            for (size_t l = 0; l < L; l++) {
                const bptt_gemm_prod wg = bptt_gemm_wgrad_prod(
                    GH, m->ws[l].X + H, rows, wgrad_dgates_of(m, l, 0),
                    wgrad_xh_of(m, l, 0),
                    m->grads + m->tensor[2 * l].offset);
                bptt_gemm_part(&wg, q, P);
            }
    }
    if (flush)
        m->wgrad_rows = 0;
    double loss = 0;
    for (size_t r = 0; r < B; r++)
        loss += m->row_loss[r];
    return loss;
}

double bptt_model_backward_step(bptt_model *m, size_t i, const real *x,
                                const int32_t *y, const real *s, real *carry,
                                real scale)
{
    const size_t slot = wgrad_slot(m, i);
    if (team_path(m))
        return team_backward(m, slot, x, y, s, carry, scale);
    const size_t B = m->B, H = m->H, V = m->V, L = m->L;
    const real *Wo = m->params + m->tensor[2 * L].offset;
    real *dWo = m->grads + m->tensor[2 * L].offset;
    double *dbo = dbias_of(m, L);
    const real *bo = m->params + m->tensor[2 * L + 1].offset;
    const real *hL = layer_h(m, s, L - 1);

    /* output layer: logits = hL Wo^T + bo; softmax cross-entropy */
    for (size_t r = 0; r < B; r++)
        memcpy(m->logits + r * V, bo, V * sizeof(real));
    REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)V, (int)H,
              1, hL, (int)H, Wo, (int)H, 1, m->logits, (int)V);
    softmax_rows(m, y, scale, 0, B);
    double loss = 0;
    for (size_t r = 0; r < B; r++)
        loss += m->row_loss[r];
    REAL_GEMM(CblasRowMajor, CblasTrans, CblasNoTrans, (int)V, (int)H, (int)B,
              1, m->logits, (int)V, hL, (int)H, 1, dWo, (int)H);
    bias_rows_sum(m->logits, B, V, dbo, 0, V);
    real *dhL = carry + hid_off(m, L - 1);
    REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)H,
              (int)V, 1, m->logits, (int)V, Wo, (int)H, 1, dhL, (int)H);

    /* the cell stack, top layer first */
    for (size_t l = L; l-- > 0;) {
        const real *in = l == 0 ? x : layer_h(m, s, l - 1);
        real *dc = carry + hid_off(m, l);
        m->cell->backward(&m->ws[l], m->params + m->tensor[2 * l].offset,
                          dbias_of(m, l), in, s + int_off(m, l), dc, dc,
                          l == 0 ? NULL : m->dx, wgrad_dgates_of(m, l, slot),
                          wgrad_xh_of(m, l, slot));
        if (l > 0) {
            real *dh_below = carry + hid_off(m, l - 1);
            for (size_t k = 0; k < B * H; k++)
                dh_below[k] += m->dx[k];
        }
    }
    if (slot == 0) /* the block's lowest step: add its weight gradients */
        wgrad_flush(m);
    return loss;
}

void bptt_model_flops(const bptt_model *m, bptt_flops *f)
{
    const double B = (double)m->B, H = (double)m->H, V = (double)m->V;
    const double GH = (double)m->cell->gates * H;
    f->cell_forward = f->cell_backward = 0;
    for (size_t l = 0; l < m->L; l++) {
        const double XH = (double)m->ws[l].X + H;
        f->cell_forward += 2 * B * GH * XH;             /* gates */
        f->cell_backward += 2 * GH * XH * B;            /* dW */
        f->cell_backward += 2 * B * (l ? XH : H) * GH;  /* dx, dh_prev */
    }
    f->output = 3 * 2 * B * V * H; /* logits, dWo, dh */
}

double bptt_model_grad_norm(const bptt_model *m)
{
    double s = 0;
    for (size_t k = 0; k < m->n_params; k++)
        s += (double)m->grads[k] * (double)m->grads[k];
    return sqrt(s);
}
