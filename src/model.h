/* model.h: a stack of L recurrent layers, a linear output layer and softmax
 * cross-entropy at every step (mean over steps and batch).
 *
 * Legend: L layers, B batch, X input width, H hidden width, V classes,
 * G gates of the cell, T steps.
 * Parameters and gradients each live in one tracked arena with named views
 * (tensor table below), so zeroing is one memset and the optimizer is one
 * flat loop.  Layout, in this order:
 *   layer l: W (G*H, X_l + H), b (G*H)       X_0 = X, X_l = H for l > 0
 *   output:  Wo (V, H), bo (V)
 * State layouts, layer after layer:
 *   hidden state   (L, hidden_vecs, B, H)
 *   internal state (L, internal_vecs, B, H)
 * The output layer and loss run inside the backward op of each step (from
 * h of the top layer, held in the internal state), so they run exactly once
 * per step and never as part of a recomputation.
 */
#ifndef BPTT_MODEL_H
#define BPTT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cell.h"
#include "mem.h"
#include "real.h"

#define BPTT_MAX_LAYERS 16
#define BPTT_MAX_TENSORS (2 * BPTT_MAX_LAYERS + 2)

typedef struct {
    char name[16];  /* "W0", "b0", ..., "Wo", "bo" */
    size_t offset;  /* in reals, into params and grads */
    size_t rows, cols; /* cols = 1 for vectors */
} bptt_tensor;

typedef struct {
    const bptt_cell_type *cell;
    size_t L, B, X, H, V;
    size_t n_params;
    real *params; /* (n_params) */
    real *grads;  /* (n_params) */
    size_t n_tensors;
    bptt_tensor tensor[BPTT_MAX_TENSORS];
    size_t hidden_len;   /* reals in one hidden state */
    size_t internal_len; /* reals in one internal state */
    /* working set (tracked as BPTT_MEM_WORKING) */
    bptt_cell_ws ws[BPTT_MAX_LAYERS];
    real *scratch_xh, *scratch_dgates, *scratch_dxh; /* shared by layers */
    real *logits;    /* (B, V) */
    real *state_tmp; /* (hidden_len) rebuilt states of this step */
    real *dx;        /* (B, H) */
    double *dbias;   /* bias gradients summed in double over an iteration:
                        layer l at dbias + l*G*H, the output's after them */
    bptt_mem *mem;
} bptt_model;

/* Parameters drawn uniformly from [-1/sqrt(H), 1/sqrt(H)] with GSL's
 * mt19937 seeded by seed; LSTM forget-gate biases start at 1. */
int bptt_model_alloc(bptt_model **out, const bptt_cell_type *cell, size_t L,
                     size_t B, size_t X, size_t H, size_t V,
                     unsigned long seed, bptt_mem *mem);
void bptt_model_free(bptt_model *m); /* accepts NULL */

size_t bptt_model_hidden_bytes(const bptt_model *m);
size_t bptt_model_internal_bytes(const bptt_model *m);

/* Zero the gradients (and their bias accumulators) before an iteration's
 * backward ops; after the last one, write the bias sums into grads. */
void bptt_model_zero_grads(bptt_model *m);
void bptt_model_finish_grads(bptt_model *m);

/* One forward op of the cell stack (no output layer). */
void bptt_model_forward_step(bptt_model *m, const real *x,
                             const real *state_in, real *s_out,
                             real *state_out);
/* The hidden state held inside an internal state. */
void bptt_model_state_from_internal(bptt_model *m, const real *s,
                                    real *state);
/* One backward op: output layer and loss at this step, then the cell
 * stack.  carry (hidden_len) holds the gradient w.r.t. this step's output
 * state on entry and w.r.t. the previous state on exit.  scale = 1/(B T).
 * Returns this step's summed (unscaled) cross-entropy. */
double bptt_model_backward_step(bptt_model *m, const real *x,
                                const int32_t *y, const real *s, real *carry,
                                real scale);

/* GEMM floating-point operations of one step (2 per multiply-add):
 * the cell stack's forward op, its backward op, and the output layer's
 * forward and backward (run once per step).  Elementwise work is not
 * counted, as usual. */
typedef struct {
    double cell_forward, cell_backward, output;
} bptt_flops;
void bptt_model_flops(const bptt_model *m, bptt_flops *f);

/* sqrt of the sum of squared gradients (in double). */
double bptt_model_grad_norm(const bptt_model *m);

/* ---- optimizers: one flat loop over the arena --------------------------- */

typedef struct bptt_optimizer bptt_optimizer;
/* name: "sgd" or "adam"; lr > 0. */
int bptt_optimizer_alloc(bptt_optimizer **out, const char *name, double lr,
                         const bptt_model *m, bptt_mem *mem);
void bptt_optimizer_free(bptt_optimizer *opt, bptt_mem *mem);
void bptt_optimizer_step(bptt_optimizer *opt, bptt_model *m);

#endif
