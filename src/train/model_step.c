/* model_step.c: a model's forward and backward steps (see model.h): on
 * the kernel's path one parallel region a step, else the cells' whole ops
 * on cblas; the output layer, softmax and loss; flops and the gradient's
 * norm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "real_impl.h"
#include "bptt.h"
#include "fastmath.h"
#include "gemm.h"
#include "model.h"
#include "model_impl.h"
#include "team.h"

/* offsets of layer l inside hidden and internal states (model.c laid
 * them out with the model) */
static size_t hid_off(const bptt_model *m, size_t l) { return m->hidden_off[l]; }
static size_t int_off(const bptt_model *m, size_t l)
{
    return m->internal_off[l];
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
 * cut by column: the loss after the region, the bias gradients of a step
 * shared by threads at its weight-gradient block's flush (block_bias). */

static int team_path(const bptt_model *m)
{
    return m->wpack[0] != NULL && m->ws[0].kernel != BPTT_GEMM_CBLAS;
}

/* the region runs on one thread where a step's largest product (a layer's
 * gates) is too small to share: same bits either way */
static int team_worth(const bptt_model *m)
{
    const size_t X = m->X > m->H ? m->X : m->H;
    return bptt_gemm_worth_threads(m->B, m->cell->gates * m->H, X + m->H);
}

/* 1 when P threads take a step's products by rows rather than by tiles
 * of columns.  By rows, a thread runs its rows of the batch through the
 * whole step: the rows of a product are its own rows of the part before
 * and after it, so the forward step needs no barrier and the backward
 * step one a layer (before the sums over every row), and no activation
 * crosses to another core; but every thread reads all of the weights at
 * every step.  So by rows where all of them (every layer's packed
 * weights and the output layer's two copies) fit in three quarters of a
 * core's L2, and each thread has a tile's height of rows at least
 * (results/performance-log.md, "Rows or columns"). */
int bptt_model_steps_by_rows(const bptt_model *m, int P)
{
    if (P < 2 || m->B / (size_t)P < bptt_gemm_mr(m->ws[0].kernel))
        return 0;
    const size_t GH = m->cell->gates * m->H;
    size_t reals = 2 * m->V * m->H;
    for (size_t l = 0; l < m->L; l++) {
        const size_t XH = m->ws[l].X + m->H;
        reals += GH * XH + GH * (m->ws[l].wpack_dx ? XH : m->H);
    }
    return reals * sizeof(real) <= bptt_gemm_l2_bytes() / 4 * 3;
}

int bptt_model_steps_shared(const bptt_model *m)
{
    return team_path(m) && team_worth(m);
}

/* a forward step's arguments, for each thread's part */
typedef struct {
    bptt_model *m;
    const real *x, *state_in;
    real *s_out, *state_out;
} fwd_args;

static void team_forward(void *arg, int q, int P)
{
    const fwd_args *a = arg;
    bptt_model *m = a->m;
    const bptt_cell_type *c = m->cell;
    const size_t B = m->B, n = B * m->H;
    const int by_rows = bptt_model_steps_by_rows(m, P);
    size_t r0, r1;
    bptt_share(B, q, P, &r0, &r1);
    for (size_t l = 0; l < m->L; l++) {
        const bptt_cell_ws *ws = &m->ws[l];
        const real *in = l == 0 ? a->x : a->state_out + hid_off(m, l - 1);
        real *sl = a->s_out + int_off(m, l);
        const bptt_gemm_prod g = bptt_gemm_gates_prod(
            ws, c->gates, m->params + m->tensor[2 * l + 1].offset, in,
            a->state_in + hid_off(m, l), sl + c->gates_at * n);
        if (by_rows) { /* this thread's rows, as the rows part below */
            const bptt_gemm_prod gr = bptt_gemm_rows(g, r0, r1);
            bptt_gemm_part(&gr, 0, 1);
        } else {
            bptt_gemm_part(&g, q, P);
            bptt_team_barrier();
        }
        c->forward_rows(ws, a->state_in + hid_off(m, l), sl,
                        a->state_out + hid_off(m, l), r0, r1);
        /* the next layer's product reads all rows (by columns) */
        if (l + 1 < m->L && !by_rows)
            bptt_team_barrier();
    }
}

void bptt_model_forward_step(bptt_model *m, const real *x,
                             const real *state_in, real *s_out,
                             real *state_out)
{
    if (team_path(m)) {
        fwd_args a = {m, x, state_in, s_out, state_out};
        bptt_team_run(team_forward, &a, team_worth(m));
        return;
    }
    for (size_t l = 0; l < m->L; l++) {
        const real *in = l == 0 ? x : state_out + hid_off(m, l - 1);
        bptt_cell_forward(m->cell, &m->ws[l],
                          m->params + m->tensor[2 * l].offset,
                          m->params + m->tensor[2 * l + 1].offset, in,
                          state_in + hid_off(m, l), s_out + int_off(m, l),
                          state_out + hid_off(m, l));
    }
}

/* a restore's arguments, for each thread's part */
typedef struct {
    bptt_model *m;
    const real *s;
    real *state;
} restore_args;

/* each thread's rows of bptt_cell_state_from_internal, every layer */
static void team_restore(void *arg, int q, int P)
{
    const restore_args *a = arg;
    const bptt_model *m = a->m;
    size_t r0, r1;
    bptt_share(m->B, q, P, &r0, &r1);
    for (size_t l = 0; l < m->L; l++)
        bptt_cell_state_rows(m->cell, &m->ws[l], a->s + int_off(m, l),
                             a->state + hid_off(m, l), r0, r1);
}

void bptt_model_state_from_internal(bptt_model *m, const real *s,
                                    real *state)
{
    if (team_path(m)) {
        restore_args a = {m, s, state};
        bptt_team_run(team_restore, &a, team_worth(m));
        return;
    }
    for (size_t l = 0; l < m->L; l++)
        bptt_cell_state_from_internal(m->cell, &m->ws[l], s + int_off(m, l),
                                      state + hid_off(m, l));
}

/* h of layer l at this step, from the internal state s */
static const real *layer_h(bptt_model *m, const real *s, size_t l)
{
    return bptt_cell_h_from_internal(m->cell, &m->ws[l], s + int_off(m, l),
                                     m->state_tmp + hid_off(m, l));
}

/* Rows [r0, r1) of the logits (B, V): softmax cross-entropy, each row's
 * loss into row_loss, and dlogits = (p - onehot) * scale in place. */
static void softmax_rows(bptt_model *m, real *logits, const int32_t *y,
                         real scale, size_t r0, size_t r1)
{
    const size_t V = m->V;
    for (size_t r = r0; r < r1; r++) {
        real *z = logits + r * V;
        real mx = z[0];
        /* the largest is the same in any order (a NaN row stops the run
           whatever mx is); exp is the same ops in any lane */
        _Pragma("omp simd reduction(max : mx)")
        for (size_t v = 1; v < V; v++)
            mx = z[v] > mx ? z[v] : mx;
        const size_t target = (size_t)y[r];
        const double zt = (double)(z[target] - mx);
        _Pragma("omp simd")
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
 * double), for the columns [j0, j1).  The columns are summed side by
 * side, a block at a time, a row after another: each column's sum is
 * still its rows added in order from 0, and the row is read along its
 * length, not one element of it per row. */
static void bias_rows_sum(const real *d, size_t rows, size_t cols, double *db,
                          size_t j0, size_t j1)
{
    enum { BLOCK = 64 };
    double sum[BLOCK];
    for (size_t jb = j0; jb < j1; jb += BLOCK) {
        const size_t n = j1 - jb < BLOCK ? j1 - jb : BLOCK;
        for (size_t j = 0; j < n; j++)
            sum[j] = 0;
        for (size_t r = 0; r < rows; r++) {
            const real *dr = d + r * cols + jb;
            _Pragma("omp simd")
            for (size_t j = 0; j < n; j++)
                sum[j] += (double)dr[j];
        }
        for (size_t j = 0; j < n; j++)
            db[jb + j] += sum[j];
    }
}

/* db[j] += each row of d (rows, cols) in turn, in double, for the
 * columns [j0, j1): row by row, as the cells' whole ops add them. */
static void bias_rows_add(const real *d, size_t rows, size_t cols,
                          double *db, size_t j0, size_t j1)
{
    for (size_t r = 0; r < rows; r++) {
        const real *dr = d + r * cols;
        _Pragma("omp simd")
        for (size_t j = j0; j < j1; j++)
            db[j] += (double)dr[j];
    }
}

/* The bias gradients of the open block, summed at its flush rather than
 * at each step: the team's steps would otherwise sum every row of each
 * step's dgates by columns, reading half of them from the other cores,
 * and (by rows) meet at a barrier for it.  The slots go from the highest
 * down, as the backward steps wrote them, so that each sum gets the same
 * additions in the same order as at each step: a layer's gates row after
 * row into db, the output layer's rows summed from 0 and then added. */
static void block_bias(bptt_model *m, size_t j0, size_t j1, size_t v0,
                       size_t v1)
{
    const size_t B = m->B, V = m->V, GH = m->cell->gates * m->H;
    for (size_t l = 0; l < m->L; l++) /* a slot's B rows lie together */
        for (size_t k = m->wgrad_bias_slots; k-- > 0;)
            bias_rows_add(wgrad_dgates_of(m, l, k), B, GH, dbias_of(m, l),
                          j0, j1);
    for (size_t k = m->wgrad_bias_slots; k-- > 0;)
        bias_rows_sum(wgrad_dlogits_of(m, k), B, V, dbias_of(m, m->L), v0,
                      v1);
}

/* dW (GH, XH) += dgates^T xh over rows rows, xh's rows ldx apart: thread
 * q's part of P on our kernels; on cblas (only ever q 0 of 1) whole */
static void flush_product(int kernel, size_t GH, size_t XH, size_t rows,
                          const real *dgates, const real *xh, size_t ldx,
                          real *dW, int q, int P)
{
    if (kernel == BPTT_GEMM_CBLAS) {
        bptt_gemm_weight_grads_ld(kernel, GH, XH, rows, dgates, xh, ldx, dW);
        return;
    }
    const bptt_gemm_prod g =
        bptt_gemm_wgrad_prod_ld(kernel, GH, XH, rows, dgates, xh, ldx, dW);
    bptt_gemm_part(&g, q, P);
}

/* Thread q's part of P of the open block's flush (bptt_model_flush_block
 * says what it adds), once every step of the block has written its rows.
 * Each product is cut the same way, so a thread adds both of dWo's to its
 * own tiles, and takes the same tiles at every flush; and it adds the bias
 * gradients of its own columns (those of its tiles, near enough). */
static void block_flush(bptt_model *m, int q, int P)
{
    const size_t B = m->B, H = m->H, V = m->V, L = m->L;
    const size_t GH = m->cell->gates * H, rows = m->wgrad_rows * B;
    const int kernel = m->ws[0].kernel;
    for (size_t l = 0; l < L; l++) {
        const size_t XH = m->ws[l].X + H;
        flush_product(kernel, GH, XH, rows, wgrad_dgates_of(m, l, 0),
                      wgrad_xh_of(m, l, 0), XH,
                      m->grads + m->tensor[2 * l].offset, q, P);
    }
    real *dWo = m->grads + m->tensor[2 * L].offset;
    const size_t X = m->ws[L - 1].X;
    if (rows > B)
        flush_product(kernel, V, H, rows - B, wgrad_dlogits_of(m, 0),
                      wgrad_xh_of(m, L - 1, 1) + X, X + H, dWo, q, P);
    flush_product(kernel, V, H, B, wgrad_dlogits_of(m, m->wgrad_rows - 1),
                  m->wgrad_htop, H, dWo, q, P);
    size_t j0, j1, v0, v1;
    bptt_share(GH, q, P, &j0, &j1);
    bptt_share(V, q, P, &v0, &v1);
    block_bias(m, j0, j1, v0, v1);
}

static void team_flush(void *arg, int q, int P) { block_flush(arg, q, P); }

void bptt_model_flush_block(bptt_model *m)
{
    /* on the kernel, by the team's threads (or a region of its own,
       outside one); cblas threads inside its products */
    bptt_team_run(team_flush, m, team_path(m) && team_worth(m));
    m->wgrad_rows = 0;
    m->wgrad_bias_slots = 0;
}

/* The gradients an iteration starts from, and the last block flushed and
 * the bias sums written out at its end (model.h). */
void bptt_model_zero_grads(bptt_model *m)
{
    memset(m->grads, 0, m->n_params * sizeof(real));
    memset(m->dbias, 0,
           (m->L * m->cell->gates * m->H + m->V) * sizeof(double));
    m->wgrad_rows = 0;
    m->wgrad_bias_slots = 0;
}

void bptt_model_finish_grads(bptt_model *m)
{
    if (m->wgrad_rows)
        bptt_model_flush_block(m);
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

/* this step's rows in the weight-gradient blocks: [1, K] is a block, then
 * [K+1, 2K], ... whatever the plan */
static size_t wgrad_slot(bptt_model *m, size_t i)
{
    const size_t slot = (i - 1) % m->wgrad_steps;
    if (slot + 1 > m->wgrad_rows)
        m->wgrad_rows = slot + 1;
    return slot;
}

/* a backward step's arguments, for each thread's part */
typedef struct {
    bptt_model *m;
    size_t slot;
    const real *x;
    const int32_t *y;
    const real *s;
    real *carry;
    real scale;
} bwd_args;

/* The backward step of bptt_model_backward_step on the kernel, one
 * region: the output layer's rows (h, logits, softmax, and dh, each
 * thread its own rows, so that its rows of the top layer need no
 * barrier before them), then each layer from the top (rows, the
 * products, then rows again), then the weight-gradient block when it
 * closes (dWo and the bias gradients too, those that its steps left
 * there: every step's, where threads share them).  With the products by
 * rows (bptt_model_steps_by_rows) no row is read by another thread before
 * the flush, which has the step's only barrier. */
static void team_backward(void *arg, int q, int P)
{
    const bwd_args *a = arg;
    bptt_model *m = a->m;
    const real *x = a->x, *s = a->s;
    real *carry = a->carry;
    const bptt_cell_type *c = m->cell;
    const size_t B = m->B, H = m->H, V = m->V, L = m->L;
    const size_t G = c->gates, GH = G * H;
    const real *Wo = m->params + m->tensor[2 * L].offset;
    const real *bo = m->params + m->tensor[2 * L + 1].offset;
    const size_t slot = a->slot;
    const int flush = slot == 0; /* the block's lowest step */
    const int kernel = m->ws[0].kernel;
    const int by_rows = bptt_model_steps_by_rows(m, P);
    size_t r0, r1;
    bptt_share(B, q, P, &r0, &r1);
    /* output layer, this thread's rows: h (kept for dWo at the block's
       highest step: wgrad_top_step), the logits, softmax and dh (each row
       of dh reads only its own row of the logits) */
    real *logits = wgrad_dlogits_of(m, slot);
    const int top = wgrad_top_step(m, slot);
    real *hdst = top ? m->wgrad_htop : m->state_tmp + hid_off(m, L - 1);
    const real *hL =
        c->h_rows(&m->ws[L - 1], s + int_off(m, L - 1), hdst, r0, r1);
    if (top && hL != hdst) /* h inside the state, which the block outlives */
        memcpy(hdst + r0 * H, hL + r0 * H, (r1 - r0) * H * sizeof(real));
    const bptt_gemm_prod lg = bptt_gemm_plain_prod(
        kernel, r1 - r0, V, H, hL + r0 * H, H, 0, m->wo_t, V,
        logits + r0 * V, V, bo, 0);
    bptt_gemm_part(&lg, 0, 1);
    softmax_rows(m, logits, a->y, a->scale, r0, r1);
    real *dhL = carry + hid_off(m, L - 1);
    const bptt_gemm_prod dh = bptt_gemm_plain_prod(
        kernel, r1 - r0, H, V, logits + r0 * V, V, 0, Wo, H,
        dhL + r0 * H, H, NULL, 1);
    bptt_gemm_part(&dh, 0, 1);

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
        if (!by_rows) /* the product reads every row of dgates */
            bptt_team_barrier();
        if (!m->wgrad_bias_slots) { /* alone: every row is this thread's */
            if (l == L - 1)
                bias_rows_sum(logits, B, V, dbias_of(m, L), 0, V);
            bias_rows_add(dg, B, GH, dbias_of(m, l), 0, GH);
        }
        const bptt_gemm_prod back =
            l == 0 ? bptt_gemm_dh_prod(ws, G, dg, dc)
                   : bptt_gemm_dxh_prod(
                         ws, G, m->params + m->tensor[2 * l].offset, dg);
        if (by_rows) { /* this thread's rows: the rows below read only them */
            const bptt_gemm_prod br = bptt_gemm_rows(back, r0, r1);
            bptt_gemm_part(&br, 0, 1);
        } else {
            bptt_gemm_part(&back, q, P);
            /* the rows below read dc or dx of every row; the bottom
               layer's rows without a post part need none (the weight
               gradient reads only what the first barrier saw written,
               and the region's end waits for all) */
            if (l > 0 || c->backward_post_rows)
                bptt_team_barrier();
        }
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
    if (!flush)
        return;
    /* every part of the block is written (by columns, the barriers above;
       by rows, this one) */
    if (by_rows)
        bptt_team_barrier();
    block_flush(m, q, P);
}

double bptt_model_backward_step(bptt_model *m, size_t i, const real *x,
                                const int32_t *y, const real *s, real *carry,
                                real scale)
{
    const size_t slot = wgrad_slot(m, i);
    if (team_path(m)) {
        const int par = team_worth(m);
        /* shared by threads, this step's bias gradients wait for the
           flush (block_bias), and so do the lower steps' of
           the block, so that each is added in the same order; while none
           wait, team_backward adds them at once */
        if (!m->wgrad_bias_slots && !bptt_team_alone(par))
            m->wgrad_bias_slots = slot + 1;
        bwd_args a = {m, slot, x, y, s, carry, scale};
        bptt_team_run(team_backward, &a, par);
        if (slot == 0) {
            m->wgrad_rows = 0;
            m->wgrad_bias_slots = 0;
        }
        double loss = 0;
        for (size_t r = 0; r < m->B; r++)
            loss += m->row_loss[r];
        return loss;
    }
    const size_t B = m->B, H = m->H, V = m->V, L = m->L;
    const real *Wo = m->params + m->tensor[2 * L].offset;
    double *dbo = dbias_of(m, L);
    const real *bo = m->params + m->tensor[2 * L + 1].offset;
    real *logits = wgrad_dlogits_of(m, slot);
    const int top = wgrad_top_step(m, slot); /* h kept for dWo */
    real *hdst = top ? m->wgrad_htop : m->state_tmp + hid_off(m, L - 1);
    const real *hL = bptt_cell_h_from_internal(m->cell, &m->ws[L - 1],
                                               s + int_off(m, L - 1), hdst);
    if (top && hL != hdst) /* h inside the state, which the block outlives */
        memcpy(hdst, hL, B * H * sizeof(real));

    /* output layer: logits = hL Wo^T + bo; softmax cross-entropy */
    for (size_t r = 0; r < B; r++)
        memcpy(logits + r * V, bo, V * sizeof(real));
    REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)V, (int)H,
              1, hL, (int)H, Wo, (int)H, 1, logits, (int)V);
    softmax_rows(m, logits, y, scale, 0, B);
    double loss = 0;
    for (size_t r = 0; r < B; r++)
        loss += m->row_loss[r];
    bias_rows_sum(logits, B, V, dbo, 0, V);
    real *dhL = carry + hid_off(m, L - 1);
    REAL_GEMM(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)H,
              (int)V, 1, logits, (int)V, Wo, (int)H, 1, dhL, (int)H);

    /* the cell stack, top layer first */
    for (size_t l = L; l-- > 0;) {
        const real *in = l == 0 ? x : layer_h(m, s, l - 1);
        real *dc = carry + hid_off(m, l);
        bptt_cell_backward(m->cell, &m->ws[l],
                           m->params + m->tensor[2 * l].offset,
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
        bptt_model_flush_block(m); /* dWo too */
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
