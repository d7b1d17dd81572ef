/* model.c: a model's layout (see model.h): its tensors, arenas, working
 * set and their sizes, and its gradients zeroed and finished; its forward
 * and backward steps are model_step.c's, the optimizers optim.c's. */
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "real_impl.h"
#include "bptt.h"
#include "fastmath.h"
#include "model.h"
#include "gemm.h"
#include "model_impl.h"

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
    /* a cell that breaks the layout rules never runs (cell.h) */
    if (bptt_cell_check(cell) != BPTT_OK || !sizes_ok(L, B, X, H, V))
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

void bptt_model_zero_grads(bptt_model *m)
{
    memset(m->grads, 0, m->n_params * sizeof(real));
    memset(m->dbias, 0,
           (m->L * m->cell->gates * m->H + m->V) * sizeof(double));
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
