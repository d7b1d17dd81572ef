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

/* a layer above the first hands dx down to the one below: its backward
 * reads all of W, so the kernel keeps all of it packed (gemm.c) */
static int layer_hands_dx(size_t l) { return l > 0; }

/* size products that cannot overflow: every factor is checked first */
static int sizes_ok(size_t L, size_t B, size_t X, size_t H, size_t V)
{
    const size_t lim = (size_t)1 << 24; /* per dimension */
    return L >= 1 && L <= BPTT_MAX_LAYERS && B >= 1 && X >= 1 && H >= 1 &&
           V >= 1 && B < lim && X < lim && H < lim && V < lim &&
           (X + H) * 4 * H < ((size_t)1 << 40) && B * 8 * H < ((size_t)1 << 40);
}

/* Every block a model of these sizes holds, in elements: the one place
 * its sizes are written.  The allocation takes exactly these blocks (after
 * sizes_ok, every count is a whole number below 2^53, exact in a double,
 * and fits a size_t) and the byte counts of model.h add them up (in
 * doubles, so that sizes past memory do not overflow).  reals unless said
 * otherwise; the weight-gradient blocks at K steps. */
typedef struct {
    double params;         /* the tensor table: each of params and grads */
    double dbias;          /* doubles: the bias gradient sums */
    double scratch;        /* each of scratch_xh and scratch_dxh */
    double state_tmp, dx;
    double row_loss;       /* doubles */
    double hidden, internal; /* one hidden and one internal state */
    double hidden_off[BPTT_MAX_LAYERS], internal_off[BPTT_MAX_LAYERS];
                           /* where layer l's part of each starts */
    double wgrad_dgates;   /* all layers' */
    double wgrad_xh_off[BPTT_MAX_LAYERS], wgrad_xh; /* layer l's at its
                                                        offset; all layers' */
    double wgrad_dlogits, wgrad_htop; /* the output layer's */
    double wpack[BPTT_MAX_LAYERS]; /* 0 where cblas does the forward op */
    double wo_t;           /* 0 without the kernel */
} model_layout;

/* With m (when it is being made, after sizes_ok), the tensor table too. */
static void layout_of(const bptt_cell_type *cell, size_t L, size_t B,
                      size_t X, size_t H, size_t V, size_t K,
                      model_layout *z, bptt_model *m)
{
    const double b = (double)B, h = (double)H, v = (double)V;
    const double gh = (double)cell->gates * h, k = (double)K;
    char name[sizeof m->tensor[0].name];
    memset(z, 0, sizeof *z);
    for (size_t l = 0; l < L; l++) {
        const size_t in = l == 0 ? X : H;
        z->params += gh * ((double)in + h) + gh; /* W_l, b_l */
        if (m) {
            snprintf(name, sizeof name, "W%u", (unsigned)l);
            add_tensor(m, name, 2, cell->gates * H, in + H);
            snprintf(name, sizeof name, "b%u", (unsigned)l);
            add_tensor(m, name, 1, cell->gates * H, 1);
        }
        z->wgrad_xh_off[l] = z->wgrad_xh;
        z->wgrad_xh += k * b * ((double)in + h);
        if (gh * ((double)in + h) < 1e15) /* no overflow in size_t */
            z->wpack[l] = (double)bptt_cell_packed_len_for(
                cell->gates, in, H, layer_hands_dx(l));
        else if (bptt_gemm_kernel_on()) /* past any memory: unpadded */
            z->wpack[l] = 2 * gh * ((double)in + h);
    }
    z->params += v * h + v; /* Wo (V, H), bo (V) */
    if (m) {
        add_tensor(m, "Wo", 2, V, H);
        add_tensor(m, "bo", 1, V, 1);
    }
    z->dbias = (double)L * gh + v;
    z->scratch = b * ((double)(X > H ? X : H) + h);
    for (size_t l = 0; l < L; l++) {
        z->hidden_off[l] = (double)l * (double)cell->hidden_vecs * b * h;
        z->internal_off[l] = (double)l * (double)cell->internal_vecs * b * h;
    }
    z->hidden = (double)L * (double)cell->hidden_vecs * b * h;
    z->internal = (double)L * (double)cell->internal_vecs * b * h;
    z->state_tmp = z->hidden;
    z->dx = b * h;
    z->row_loss = b;
    z->wgrad_dgates = (double)L * k * b * gh;
    z->wgrad_dlogits = k * b * v;
    z->wgrad_htop = b * h;
    if (z->wpack[0] > 0) /* the kernel is in use: Wo^T for the output */
        z->wo_t = h * v;
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
    model_layout z;
    layout_of(cell, L, B, X, H, V, BPTT_WGRAD_STEPS, &z, m);
    m->hidden_len = (size_t)z.hidden;
    m->internal_len = (size_t)z.internal;
    for (size_t l = 0; l < L; l++) {
        m->hidden_off[l] = (size_t)z.hidden_off[l];
        m->internal_off[l] = (size_t)z.internal_off[l];
    }

    const size_t rb = sizeof(real), db = sizeof(double);
    m->params = bptt_mem_get(mem, BPTT_MEM_PARAMS, m->n_params * rb);
    m->grads = bptt_mem_get(mem, BPTT_MEM_GRADS, m->n_params * rb);
    m->scratch_xh = bptt_mem_get(mem, BPTT_MEM_WORKING, (size_t)z.scratch * rb);
    m->scratch_dxh = bptt_mem_get(mem, BPTT_MEM_WORKING,
                                  (size_t)z.scratch * rb);
    m->state_tmp = bptt_mem_get(mem, BPTT_MEM_WORKING,
                                (size_t)z.state_tmp * rb);
    m->dx = bptt_mem_get(mem, BPTT_MEM_WORKING, (size_t)z.dx * rb);
    m->row_loss = bptt_mem_get(mem, BPTT_MEM_WORKING,
                               (size_t)z.row_loss * db);
    m->dbias = bptt_mem_get(mem, BPTT_MEM_GRADS, (size_t)z.dbias * db);
    if (!m->params || !m->grads || !m->scratch_xh || !m->scratch_dxh ||
        !m->state_tmp || !m->dx || !m->row_loss || !m->dbias ||
        bptt_model_set_wgrad_steps(m, BPTT_WGRAD_STEPS) != BPTT_OK) {
        bptt_model_free(m);
        return BPTT_ENOMEM;
    }
    for (size_t l = 0; l < L; l++) {
        m->ws[l] = (bptt_cell_ws){B, layer_input(m, l), H, m->scratch_xh,
                                  m->scratch_dxh, NULL, bptt_gemm_kernel(),
                                  0};
        const size_t len = (size_t)z.wpack[l];
        if (len) {
            m->wpack[l] = bptt_mem_get(mem, BPTT_MEM_WORKING, len * rb);
            if (!m->wpack[l]) {
                bptt_model_free(m);
                return BPTT_ENOMEM;
            }
            m->ws[l].wpack = m->wpack[l];
            m->ws[l].wpack_dx = layer_hands_dx(l);
            m->wpack_bytes += len * rb;
        }
    }
    if (z.wo_t > 0) { /* the kernel is in use: Wo^T for the output layer */
        m->wo_t = bptt_mem_get(mem, BPTT_MEM_WORKING, (size_t)z.wo_t * rb);
        if (!m->wo_t) {
            bptt_model_free(m);
            return BPTT_ENOMEM;
        }
        m->wpack_bytes += (size_t)z.wo_t * rb;
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
    model_layout z;
    layout_of(cell, L, B, 1, H, 1, 1, &z, NULL);
    *hidden_bytes = (double)sizeof(real) * z.hidden;
    *internal_bytes = (double)sizeof(real) * z.internal;
}

double bptt_model_param_reals(const bptt_cell_type *cell, size_t L, size_t X,
                              size_t H, size_t V)
{
    model_layout z;
    layout_of(cell, L, 1, X, H, V, 1, &z, NULL);
    return z.params;
}

double bptt_model_grad_bytes(const bptt_cell_type *cell, size_t L, size_t X,
                             size_t H, size_t V)
{
    model_layout z;
    layout_of(cell, L, 1, X, H, V, 1, &z, NULL);
    return (double)sizeof(real) * z.params + (double)sizeof(double) * z.dbias;
}

double bptt_model_working_bytes(const bptt_cell_type *cell, size_t L,
                                size_t B, size_t X, size_t H, size_t V)
{
    model_layout z;
    layout_of(cell, L, B, X, H, V, BPTT_WGRAD_STEPS, &z, NULL);
    double w = 2 * z.scratch + z.state_tmp + z.dx + z.wgrad_dgates +
               z.wgrad_xh + z.wgrad_dlogits + z.wgrad_htop + z.wo_t;
    for (size_t l = 0; l < L; l++)
        w += z.wpack[l];
    return (double)sizeof(real) * w + (double)sizeof(double) * z.row_loss;
}

int bptt_model_set_wgrad_steps(bptt_model *m, size_t K)
{
    if (K < 1 || K > BPTT_WGRAD_STEPS_MAX)
        return BPTT_EINVAL;
    if (K == m->wgrad_steps)
        return BPTT_OK;
    model_layout z;
    layout_of(m->cell, m->L, m->B, m->X, m->H, m->V, K, &z, NULL);
    const size_t rb = sizeof(real);
    const size_t len[4] = {(size_t)z.wgrad_dgates, (size_t)z.wgrad_xh,
                           (size_t)z.wgrad_dlogits, (size_t)z.wgrad_htop};
    real **cur[4] = {&m->wgrad_dgates, &m->wgrad_xh, &m->wgrad_dlogits,
                     &m->wgrad_htop};
    real *got[4] = {NULL, NULL, NULL, NULL};
    size_t bytes = 0;
    for (int k = 0; k < 4; k++) {
        got[k] = bptt_mem_get(m->mem, BPTT_MEM_WORKING, len[k] * rb);
        if (!got[k]) { /* the old workspace stays */
            for (int j = 0; j < k; j++)
                bptt_mem_put(m->mem, got[j]);
            return BPTT_ENOMEM;
        }
        bytes += len[k] * rb;
    }
    for (int k = 0; k < 4; k++) {
        bptt_mem_put(m->mem, *cur[k]);
        *cur[k] = got[k];
    }
    for (size_t l = 0; l < m->L; l++)
        m->wgrad_xh_off[l] = (size_t)z.wgrad_xh_off[l];
    m->wgrad_steps = K;
    m->wgrad_rows = 0;
    m->wgrad_bias_slots = 0;
    m->wgrad_bytes = bytes;
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
    bptt_mem_put(mem, m->state_tmp);
    bptt_mem_put(mem, m->dx);
    bptt_mem_put(mem, m->row_loss);
    bptt_mem_put(mem, m->wo_t);
    bptt_mem_put(mem, m->dbias);
    bptt_mem_put(mem, m->wgrad_dgates);
    bptt_mem_put(mem, m->wgrad_xh);
    bptt_mem_put(mem, m->wgrad_dlogits);
    bptt_mem_put(mem, m->wgrad_htop);
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
