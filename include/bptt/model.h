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
 *
 * A cell's fixed zero entries of W_l (the GRU's, cell.h) are zeroed in the
 * gradient by bptt_model_finish_grads, after the last block is added.
 *
 * Weight gradients are added a block of K = BPTT_WGRAD_STEPS steps at a
 * time: the backward op of step i leaves its gate gradients and GEMM input
 * [x, h_prev] in slot (i-1) mod K of a workspace, and the backward op of
 * the block's lowest step adds dW += dgates^T xh over the whole block in
 * one GEMM (B*K rows) per layer, instead of a memory-bound GEMM of B rows
 * every step.  The output layer's Wo is added the same way: each step's
 * logits (turned into dlogits in place) stay in the slot, and the
 * block's lowest step adds dWo += dlogits^T h over the block, where h,
 * the top layer's output at step i, is the h_prev that step i + 1 keeps
 * in its slot of [x, h_prev], and the block's highest step keeps its own
 * (wgrad_htop).  Blocks are fixed by absolute step index: [1, K], [K+1,
 * 2K], ..., the last one ending at T, and backward ops always run T, ...,
 * 1, so the GEMM calls, and hence the gradients, are the same for every
 * plan.  The bias gradients are sums in double over every row of every
 * step, added in the order of the backward ops, row by row; where threads
 * share a step they are added at the block's flush instead, still in that
 * order (wgrad_bias_slots), so that no thread reads another's rows of a
 * step for them.  The workspace, K steps of (B, G*H + X_l + H) reals per layer and
 * K steps of (B, V) and one of (B, H) for the output layer, is working
 * memory (wgrad_bytes; bptt_model_set_wgrad_steps changes K).
 *
 * Where the cells use their own GEMM kernel (cell.h), each layer also
 * keeps W_l packed (wpack, wpack_bytes: W_l^T for the forward op and
 * W_l's h columns for dh_prev, rounded up to the kernel's panels: about
 * twice W_l), working memory too,
 * repacked at the start of every bptt_exec_run.
 */
#ifndef BPTT_MODEL_H
#define BPTT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "cell.h"
#include "mem.h"
#include "real.h"

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

#define BPTT_MAX_LAYERS 16
#define BPTT_MAX_TENSORS (2 * BPTT_MAX_LAYERS + 2)

/* Steps per weight-gradient block (see above); changing it changes the
 * gradients' rounding, never their agreement across plans. */
#ifndef BPTT_WGRAD_STEPS
#define BPTT_WGRAD_STEPS 16
#endif
#define BPTT_WGRAD_STEPS_MAX 4096

/* One tensor of the parameters: its name, rank and place in params and
 * grads. */
typedef struct {
    char name[12];  /* "W0", "b0", ..., "W15", "b15", "Wo", "bo" */
    int ndim;       /* the tensor's rank, never read off its sizes: 1 for
                       the bias vectors (rows), 2 for the weight matrices
                       (rows, cols), also when a size is 1 (Wo (V, 1) at
                       H = 1) */
    size_t offset;  /* in reals, into params and grads */
    size_t rows, cols; /* cols = 1 for vectors */
} bptt_tensor;

typedef struct {
    const bptt_cell_type *cell;
    size_t L, B, X, H, V;
    size_t n_params;
    bptt_real *params; /* (n_params) */
    bptt_real *grads;  /* (n_params) */
    size_t n_tensors;
    bptt_tensor tensor[BPTT_MAX_TENSORS];
    size_t hidden_len;   /* reals in one hidden state */
    size_t internal_len; /* reals in one internal state */
    /* where layer l's part of them starts, in reals (laid out once, with
     * every other size, when the model is made) */
    size_t hidden_off[BPTT_MAX_LAYERS], internal_off[BPTT_MAX_LAYERS];
    /* working set (tracked as BPTT_MEM_WORKING) */
    bptt_cell_ws ws[BPTT_MAX_LAYERS];
    bptt_real *scratch_xh, *scratch_dxh; /* (B, max(X, H) + H), shared by
                                            layers */
    bptt_real *state_tmp; /* (hidden_len) h of each layer rebuilt for this
                             step, at the layer's offset in a hidden state */
    bptt_real *dx;        /* (B, H) */
    double *dbias;   /* bias gradients summed in double over an iteration:
                        layer l at dbias + l*G*H, the output's after them */
    /* weight-gradient blocks (working set), K = wgrad_steps */
    size_t wgrad_steps;
    bptt_real *wgrad_dgates; /* (L, K, B, G*H) */
    bptt_real *wgrad_xh;     /* layer l at wgrad_xh_off[l]: (K, B, X_l + H) */
    size_t wgrad_xh_off[BPTT_MAX_LAYERS];
    bptt_real *wgrad_dlogits; /* (K, B, V) each step's logits, then dlogits */
    bptt_real *wgrad_htop;    /* (B, H) the top layer's h at the open
                                 block's highest step */
    size_t wgrad_rows;      /* slots in use in the open block (0: none) */
    size_t wgrad_bias_slots; /* the open block's slots [0, n) whose bias
                                gradients are not in dbias yet (its flush
                                adds them) */
    size_t wgrad_bytes;     /* bytes of the four workspaces */
    /* W_l^T packed for the forward op's kernel (working set), NULL where
     * cblas does the forward op (bptt_cell_packed_len) */
    bptt_real *wpack[BPTT_MAX_LAYERS];
    bptt_real *wo_t; /* Wo^T (H, V), for the output layer on the kernel,
                        NULL with cblas */
    size_t wpack_bytes; /* all of wpack and wo_t */
    double *row_loss; /* (B) each row's loss at a step, summed in row order
                         (working set) */
    bptt_mem *mem;
} bptt_model;

/* Parameters drawn uniformly from [-1/sqrt(H), 1/sqrt(H)] with GSL's
 * mt19937 seeded by seed, then adjusted by the cell (init_layer): LSTM
 * forget-gate biases start at 1, the GRU's zero blocks at 0.  BPTT_EINVAL
 * for sizes out of range or a cell that bptt_cell_check refuses (cell.h:
 * a table missing a part or breaking the layout rules), before anything
 * is allocated; BPTT_ENOMEM. */
int bptt_model_alloc(bptt_model **out, const bptt_cell_type *cell, size_t L,
                     size_t B, size_t X, size_t H, size_t V,
                     unsigned long seed, bptt_mem *mem);
void bptt_model_free(bptt_model *m); /* accepts NULL */

/* The working memory (BPTT_MEM_WORKING) bptt_model_alloc takes for these
 * sizes, to the byte: scratch rows, a state, the weight-gradient blocks
 * (the output layer's logits among them) at K = BPTT_WGRAD_STEPS and the
 * packed weights (cell.h), as doubles so that sizes past memory do not
 * overflow.  For refusing sizes that cannot fit before allocating. */
double bptt_model_working_bytes(const bptt_cell_type *cell, size_t L,
                                size_t B, size_t X, size_t H, size_t V);

/* The bytes of one hidden and one internal state of a stack of L layers
 * of cell with batch B and hidden width H (the planner's state sizes), as
 * doubles so that sizes past memory do not overflow. */
void bptt_model_state_bytes(const bptt_cell_type *cell, size_t L, size_t B,
                            size_t H, double *hidden_bytes,
                            double *internal_bytes);

/* Parameters (reals) of a model of these sizes: the tensor table above,
 * counted without making it; as a double, so that sizes past memory do not
 * overflow. */
double bptt_model_param_reals(const bptt_cell_type *cell, size_t L, size_t X,
                              size_t H, size_t V);
/* The gradient memory (BPTT_MEM_GRADS) of such a model, to the byte: the
 * gradient arena and the bias sums in double. */
double bptt_model_grad_bytes(const bptt_cell_type *cell, size_t L, size_t X,
                             size_t H, size_t V);

/* Steps per weight-gradient block, 1..BPTT_WGRAD_STEPS_MAX (a model starts
 * with BPTT_WGRAD_STEPS): reallocates the workspace (BPTT_ENOMEM keeps the
 * old one).  Not during an iteration.  Gradients agree bit for bit across
 * plans for a fixed K; across values of K only up to rounding. */
int bptt_model_set_wgrad_steps(bptt_model *m, size_t K);

/* Repack the weights for the forward op's kernel (cell.h) from params:
 * after any change of params and before the next forward op.
 * bptt_exec_run does it at the start of every run, and alloc once. */
void bptt_model_pack_weights(bptt_model *m);

size_t bptt_model_hidden_bytes(const bptt_model *m);
size_t bptt_model_internal_bytes(const bptt_model *m);

/* Zero the gradients (and their bias accumulators, and the open block)
 * before an iteration's backward ops; after the last one, add what an
 * open block holds (nothing, when backward ops ran down to step 1) and
 * write the bias sums into grads. */
void bptt_model_zero_grads(bptt_model *m);
void bptt_model_finish_grads(bptt_model *m);

/* One forward op of the cell stack (no output layer). */
void bptt_model_forward_step(bptt_model *m, const bptt_real *x,
                             const bptt_real *state_in, bptt_real *s_out,
                             bptt_real *state_out);
/* The hidden state held inside an internal state. */
void bptt_model_state_from_internal(bptt_model *m, const bptt_real *s,
                                    bptt_real *state);
/* Backward op of step i (>= 1): output layer and loss at this step, then
 * the cell stack.  An iteration's backward ops must run in the order T,
 * T-1, ..., 1 (the weight gradients of a block are added at its lowest
 * step).  carry (hidden_len) holds the gradient w.r.t. this step's output
 * state on entry and w.r.t. the previous state on exit.  scale = 1/(B T).
 * Returns this step's summed (unscaled) cross-entropy. */
double bptt_model_backward_step(bptt_model *m, size_t i, const bptt_real *x,
                                const int32_t *y, const bptt_real *s,
                                bptt_real *carry, bptt_real scale);

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

#pragma GCC visibility pop

#endif
