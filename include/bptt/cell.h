/* cell.h: the recurrent cell interface: a vanilla RNN (tanh), an LSTM and
 * a GRU.
 *
 * Legend: B batch, X input width of the layer, H hidden width, G gates
 * (RNN 1, LSTM 4, GRU 4).  Weights W (G*H, X+H) act on the concatenation
 * [x, h] of the input and the previous hidden state: all gates come from
 * one GEMM.
 *
 * A cell declares its hidden state (what the next step reads: RNN and GRU
 * h; LSTM h and c) and its internal state (exactly what its backward op
 * needs, and enough to rebuild the hidden state with no forward op), in
 * units of B*H reals:
 *   RNN  hidden [h] (1)        internal [h_prev, h] (2)
 *   LSTM hidden [h, c] (2)     internal [h_prev, c_prev, act, c] (7), act
 *        the activated gates (B, 4H) in the order i, f, o, g; h = o*tanh(c)
 *        is rebuilt from it with the same expression the forward op uses,
 *        so the rebuilt state is bit-identical.
 *   GRU  hidden [h] (1)        internal [h_prev, act] (5), act (B, 4H) the
 *        row blocks [r, z, n, a_nh]: reset and update gates, candidate, and
 *        a_nh = W_hn h_prev + b_hn; h = (1 - z)*n + z*h_prev is rebuilt from
 *        it with the forward op's expression (bit-identical).
 *        PyTorch's equations (nn.GRU): r = sigmoid(W_ir x + b_ir + W_hr h +
 *        b_hr), z likewise, n = tanh(W_in x + b_in + r*(W_hn h + b_hn)).
 *        W's row blocks of H are [r, z, n_x, n_h]: r and z act on [x, h]
 *        (biases b_ir + b_hr and b_iz + b_hz as one), n_x on x only (W_in,
 *        b_in) and n_h on h only (W_hn, b_hn).  The other halves of the
 *        n_x and n_h rows (n_x's h columns, n_h's x columns) are zero
 *        blocks: never initialised non-zero and zeroed in every weight
 *        gradient (zero_fixed), so no optimizer moves them.  They cost a
 *        quarter of the GEMMs' work and keep one GEMM per step.
 * Backward ops do not touch the weight gradient: they hand back the
 * step's gate gradients dgates (B, G*H) and the GEMM input xh = [x, h_prev]
 * (B, X+H), and the caller adds dW += dgates^T xh over a block of steps at
 * once (bptt_cell_weight_grads: one GEMM with B*steps rows instead of a
 * memory-bound GEMM with B rows every step).  Bias gradients accumulate in
 * double, one step at a time (a float sum over thousands of steps loses
 * digits).
 */
#ifndef BPTT_CELL_H
#define BPTT_CELL_H

#include <stddef.h>

#include "real.h"

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

typedef struct {
    size_t B, X, H;
    bptt_real *xh;     /* scratch of the forward op on cblas (B, X+H), and
                     the cell's own during a backward op (L7) */
    bptt_real *dxh;    /* scratch of the backward op (B, X+H) */
    const bptt_real *wpack; /* W packed by bptt_cell_pack_weights from the W
                          the ops are given, or NULL: cblas on W */
    int kernel;        /* the products' kernel, fixed when the workspace is
                          made (0: cblas; bptt_cell_kernel names them) */
    int wpack_dx;      /* 1: wpack holds all of W's X+H columns for the
                          backward op, which then gives dx and dh_prev from
                          it; 0: W's h columns, for dh_prev alone */
} bptt_cell_ws;

/* A cell is its sizes and its parts over rows of the batch; the library
 * derives the whole ops (bptt_cell_forward, ... below) from the parts, and
 * the kernel's path (one parallel region a step, model_step.c) calls the
 * parts itself, so both run the same code on every row.
 *
 * A forward op is: the gate product [x, h_prev] W^T + b written at
 * s_out + gates_at*B*H (B, G*H), then forward_rows of every row.  A
 * backward op is: backward_rows of every row (dgates, and what of
 * dstate_prev does not come from the product, such as the LSTM's
 * dc_prev), then the products (db += column sums of dgates, dh_prev or
 * [dx, dh_prev] from dgates W, and the weight gradient's input xh = [x,
 * h_prev]), then backward_post_rows where not NULL.
 *
 * The layout rules.  Every cell keeps them; the library relies on them
 * (the numbers are cited in cell.c and model_step.c).  Sizes are in
 * blocks of n = B*H reals.  bptt_cell_check refuses, with BPTT_EINVAL, a
 * table that breaks one it can see (marked [checked]); bptt_model_alloc
 * calls it, so such a cell never runs.
 *  L1 [checked] name, forward_rows, backward_rows and h_rows are given
 *     (every path calls them); backward_post_rows, init_layer and
 *     zero_fixed may be NULL.  1 <= gates <= BPTT_CELL_MAX_GATES, 1 <=
 *     hidden_vecs <= internal_vecs <= BPTT_CELL_MAX_VECS.
 *  L2 The hidden state starts with h (B, H): the layer above reads its
 *     input there, the output layer its h, and the products write dh_prev
 *     (overwriting it) into dstate_prev's first block, so backward_rows
 *     writes only dstate_prev's other blocks.
 *  L3 [checked] The internal state starts with h_prev (B, H), which
 *     forward_rows copies from state_in: the backward op builds xh from
 *     it.  The gate block (B, G*H) lies after it, not necessarily next
 *     (the LSTM keeps c_prev between): 1 <= gates_at and gates_at + G <=
 *     internal_vecs.  The product writes the gates' inputs there
 *     and forward_rows turns them in place into what the backward op
 *     reads.
 *  L4 [checked] The hidden state's blocks after h (hidden_vecs - 1 of
 *     them: the LSTM's c) are stored verbatim in the internal state at
 *     rest_at, apart from h_prev and the gate block (rest_at is not read
 *     when hidden_vecs is 1): the hidden state is rebuilt as h (h_rows)
 *     followed by those blocks, copied.
 *  L5 Rows are independent: a part given [r0, r1) reads and writes rows
 *     r0..r1-1 of each block and nothing else, since threads share the
 *     rows, and computes each element alone (the same bits whatever the
 *     cut).  forward_rows writes every element of s and state_out that a
 *     later part reads (stored internal states are not zeroed) and reads
 *     nothing but state_in and its own rows of s_out, so a recomputed
 *     step gives the same bits.
 *  L6 dstate_prev may be dstate: backward_rows reads each element of
 *     dstate before it writes the same element of dstate_prev.
 *  L7 Scratch: during a backward op ws->xh (at least B*H reals) is the
 *     cell's: it may keep up to B*H reals there from backward_rows to
 *     backward_post_rows of the same step, row r in reals [r*H, (r+1)*H)
 *     (the GRU keeps dh z there, since dstate_prev may be dstate).
 *     ws->dxh is the library's.  Nothing else lasts from one call to the
 *     next.
 *  L8 h_rows either writes rows of h into scratch (B, H) and returns
 *     scratch, or returns a pointer to h inside s and writes nothing; it
 *     returns the same pointer for every call, and called with no rows
 *     (r0 == r1) it only says where h is.  A rebuilt h uses the forward
 *     op's own expression, so it is bit-identical. */
#define BPTT_CELL_MAX_GATES 16
#define BPTT_CELL_MAX_VECS 64

typedef struct {
    const char *name;
    size_t gates;         /* G */
    size_t hidden_vecs;   /* hidden state size in blocks of B*H */
    size_t internal_vecs; /* internal state size in blocks of B*H */
    size_t gates_at;      /* the gate block's first block in s (L3) */
    size_t rest_at;       /* the hidden state's blocks after h, in s (L4) */
    /* s_out's rows and state_out's, from state_in's and the product at
     * s_out + gates_at*B*H */
    void (*forward_rows)(const bptt_cell_ws *ws, const bptt_real *state_in,
                         bptt_real *s_out, bptt_real *state_out,
                         size_t r0, size_t r1);
    /* dgates' rows (B, G*H) and dstate_prev's blocks after dh, from s and
     * dstate ([dh, dc] for the LSTM) */
    void (*backward_rows)(const bptt_cell_ws *ws, const bptt_real *s,
                          const bptt_real *dstate, bptt_real *dstate_prev,
                          bptt_real *dgates, size_t r0, size_t r1);
    /* after the products (the GRU's dh z, kept in ws->xh, added to
     * dh_prev), or NULL */
    void (*backward_post_rows)(const bptt_cell_ws *ws, bptt_real *dstate_prev,
                               size_t r0, size_t r1);
    /* rows of h (L8) */
    const bptt_real *(*h_rows)(const bptt_cell_ws *ws, const bptt_real *s,
                          bptt_real *scratch, size_t r0, size_t r1);
    /* Adjusts a layer's freshly drawn W (G*H, X+H) and b (G*H), or NULL
     * (RNN): LSTM forget-gate biases start at 1; the GRU zeroes its zero
     * blocks. */
    void (*init_layer)(size_t X, size_t H, bptt_real *W, bptt_real *b);
    /* Zeroes the entries of W (G*H, X+H), or of its gradient, that the
     * cell keeps at exactly zero; NULL where every entry is free (RNN,
     * LSTM). */
    void (*zero_fixed)(size_t X, size_t H, bptt_real *W);
} bptt_cell_type;

/* BPTT_OK when the table keeps the layout rules marked [checked] above,
 * else BPTT_EINVAL (NULL included). */
int bptt_cell_check(const bptt_cell_type *cell);

/* The whole ops, derived from a cell's parts, all rows (in parallel where
 * the step is large enough; each element computed alone, so the bits do
 * not depend on the thread count).  cell must pass bptt_cell_check. */

/* s_out (internal) and state_out (hidden) from x (B, X) and state_in. */
void bptt_cell_forward(const bptt_cell_type *cell, const bptt_cell_ws *ws,
                       const bptt_real *W, const bptt_real *b,
                       const bptt_real *x, const bptt_real *state_in,
                       bptt_real *s_out, bptt_real *state_out);
/* Backward of one step.  dstate (hidden-state gradient w.r.t. the cell's
 * output state, e.g. [dh, dc]) is consumed; dstate_prev receives the
 * gradient w.r.t. state_in (it may be dstate); dx (may be NULL) receives
 * the gradient w.r.t. x; db += the column sums of dgates.  dgates (B,
 * G*H) and xh (B, X+H) receive this step's share of the weight gradient,
 * dW += dgates^T xh, which the caller adds with bptt_cell_weight_grads. */
void bptt_cell_backward(const bptt_cell_type *cell, const bptt_cell_ws *ws,
                        const bptt_real *W, double *db, const bptt_real *x,
                        const bptt_real *s, const bptt_real *dstate,
                        bptt_real *dstate_prev,
                        bptt_real *dx, bptt_real *dgates, bptt_real *xh);
/* h (B, H) of an internal state: a pointer into s, or h rebuilt into
 * scratch (B, H) (bit-identical to the forward op's) and scratch. */
const bptt_real *bptt_cell_h_from_internal(const bptt_cell_type *cell,
                                           const bptt_cell_ws *ws,
                                           const bptt_real *s,
                                           bptt_real *scratch);
/* The hidden state held inside an internal state (L4). */
void bptt_cell_state_from_internal(const bptt_cell_type *cell,
                                   const bptt_cell_ws *ws, const bptt_real *s,
                                   bptt_real *state);

extern const bptt_cell_type bptt_cell_rnn;
extern const bptt_cell_type bptt_cell_lstm;
extern const bptt_cell_type bptt_cell_gru;
/* NULL-terminated table of every cell, the default (lstm) first. */
extern const bptt_cell_type *const bptt_cells[];
const bptt_cell_type *bptt_cell_find(const char *name);
/* The names of bptt_cells as a list for people ("lstm<last>rnn"), into
 * buf[cap] as snprintf would; returns the whole length. */
size_t bptt_cell_names(char *buf, size_t cap, const char *last);

/* The per-step products: a kernel of our own, for AVX-512 or for AVX2 +
 * FMA, where the CPU has it, else cblas (see gemm.c).  bptt_cell_kernel
 * names the one chosen ("avx512", "avx2" or "cblas"): the widest the CPU
 * has unless bptt_cell_kernel_select(0) (cblas), (1) (the widest kernel;
 * -1 if the CPU has none), bptt_cell_kernel_use(name) (-1 for a name that
 * is none of the three or a kernel the CPU lacks) or, before any of them,
 * BPTT_GEMM_KERNEL=name in the environment (a kernel the CPU lacks: the
 * widest it has) said otherwise.  A model keeps the kernel chosen when it
 * was made, so models on different kernels can run side by side.  The two
 * kernels give the same bits; cblas differs from them in rounding, and
 * gradients agree across plans and thread counts on each.
 * bptt_cell_kernel_has(name): 1 when the CPU can run that one;
 * bptt_cell_kernel_known(name): 1 when it names one of the three.
 * bptt_cell_kernel_names: their names, narrowest first (runnable: only
 * those the CPU can run), "a, b<last>c", into buf[cap] as snprintf
 * would; returns the whole length. */
const char *bptt_cell_kernel(void);
int bptt_cell_kernel_select(int on);
int bptt_cell_kernel_use(const char *name);
int bptt_cell_kernel_has(const char *name);
int bptt_cell_kernel_known(const char *name);
size_t bptt_cell_kernel_names(char *buf, size_t cap, const char *last,
                              int runnable);

/* C (M, N) = A (M, K) Bm (K, N) [+ C if beta], all row-major (lda, ldb,
 * ldc: row strides), on the kernel chosen. */
void bptt_cell_gemm(size_t M, size_t N, size_t K,
                    const bptt_real *A, size_t lda,
                    const bptt_real *Bm, size_t ldb, bptt_real *C, size_t ldc,
                    int beta);

/* Reals of W packed for the kernel chosen, for a cell with G gates, input
 * X and hidden H: W^T for the forward op and W's h columns for dh_prev
 * (or, with_dx, all its columns, for a layer that hands dx down),
 * each rounded up to the kernel's panels (about twice W); 0 on cblas (then
 * nothing is packed and ws->wpack stays NULL).  bptt_cell_pack_weights
 * writes it from W (G*H, X+H) for ws->kernel and ws->wpack_dx, which
 * must be those it was sized for; it must be redone whenever W changes. */
size_t bptt_cell_packed_len(size_t G, size_t X, size_t H);
/* the same, with_dx: for a workspace with wpack_dx set (all of W's
 * columns in the backward's packing: about X/H more) */
size_t bptt_cell_packed_len_for(size_t G, size_t X, size_t H, int with_dx);
void bptt_cell_pack_weights(const bptt_cell_ws *ws, size_t G,
                            const bptt_real *W, bptt_real *wpack);

/* dW (GH, XH) += dgates^T xh over rows rows: dgates (rows, GH), xh (rows,
 * XH), where the rows of several steps' (B, .) blocks lie one after the
 * other, on the kernel chosen.  One GEMM; for a fixed row count and thread
 * count its result is a pure function of its inputs. */
void bptt_cell_weight_grads(size_t GH, size_t XH, size_t rows,
                            const bptt_real *dgates, const bptt_real *xh,
                            bptt_real *dW);

#pragma GCC visibility pop

#endif
