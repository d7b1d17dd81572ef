/* cell.h: the recurrent cell interface: a vanilla RNN (tanh) and an LSTM.
 *
 * Legend: B batch, X input width of the layer, H hidden width, G gates
 * (RNN 1, LSTM 4).  Weights W (G*H, X+H) act on the concatenation [x, h]
 * of the input and the previous hidden state: all gates come from one GEMM.
 *
 * A cell declares its hidden state (what the next step reads: RNN h; LSTM
 * h and c) and its internal state (exactly what its backward op needs, and
 * enough to rebuild the hidden state with no forward op), in units of B*H
 * reals:
 *   RNN  hidden [h] (1)        internal [h_prev, h] (2)
 *   LSTM hidden [h, c] (2)     internal [h_prev, c_prev, act, c] (7), act
 *        the activated gates (B, 4H) in the order i, f, o, g; h = o*tanh(c)
 *        is rebuilt from it with the same expression the forward op uses,
 *        so the rebuilt state is bit-identical.
 * Backward functions accumulate into weight gradients (+=); bias gradients
 * accumulate in double (a float sum over thousands of steps loses digits).
 */
#ifndef BPTT_CELL_H
#define BPTT_CELL_H

#include <stddef.h>

#include "real.h"

typedef struct {
    size_t B, X, H;
    real *xh;     /* scratch (B, X+H) */
    real *dgates; /* scratch (B, G*H) */
    real *dxh;    /* scratch (B, X+H) */
} bptt_cell_ws;

typedef struct {
    const char *name;
    size_t gates;         /* G */
    size_t hidden_vecs;   /* hidden state size in units of B*H */
    size_t internal_vecs; /* internal state size in units of B*H */
    /* s_out (internal) and state_out (hidden) from x (B, X) and state_in. */
    void (*forward)(const bptt_cell_ws *ws, const real *W, const real *b,
                    const real *x, const real *state_in, real *s_out,
                    real *state_out);
    /* Backward of one step.  dstate (hidden-state gradient w.r.t. the
     * cell's output state, e.g. [dh, dc]) is consumed; dstate_prev
     * receives the gradient w.r.t. state_in; dx (may be NULL) receives the
     * gradient w.r.t. x. */
    void (*backward)(const bptt_cell_ws *ws, const real *W, real *dW,
                     double *db, const real *x, const real *s,
                     const real *dstate, real *dstate_prev, real *dx);
    /* The hidden state held inside an internal state. */
    void (*state_from_internal)(const bptt_cell_ws *ws, const real *s,
                                real *state);
    /* Pointer to h inside an internal state, or NULL when it must be
     * rebuilt with state_from_internal. */
    const real *(*h_in_internal)(const bptt_cell_ws *ws, const real *s);
} bptt_cell_type;

extern const bptt_cell_type bptt_cell_rnn;
extern const bptt_cell_type bptt_cell_lstm;
const bptt_cell_type *bptt_cell_find(const char *name);

#endif
