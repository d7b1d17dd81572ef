/* bench-onednn.h: one training iteration of a one-layer LSTM or vanilla
 * RNN (tanh) on oneDNN's RNN primitives, for experiments/bench-train's
 * comparison column (not part of the library, and not needed by it).
 *
 * An iteration does what bptt_exec_run does for full BPTT on the same
 * model and batch: the recurrent layer forward (forward_training, keeping
 * oneDNN's workspace), the output layer and softmax cross-entropy over all
 * T*B rows at once (OpenBLAS: logits, dWo, dbo and the gradient of the
 * hidden states), then the recurrent layer backward with weight and bias
 * gradients.  Weights live in oneDNN's user layout (ldigo); when the
 * primitives want another, they are reordered inside every iteration, as
 * a trainer whose weights change each step must.
 *
 * Built without libdnnl-dev (HAVE_DNNL undefined), every function is there
 * but bench_onednn_available() is 0 and bench_onednn_open fails with
 * BENCH_ONEDNN_NA.  Threads: oneDNN runs on OpenMP here, so it uses
 * omp_set_num_threads' count, set by the caller. */
#ifndef BENCH_ONEDNN_H
#define BENCH_ONEDNN_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_ONEDNN_NA "n/a (no libdnnl-dev)"

/* The model and batch, in bptt's layouts (model.h, data.h), copied at
 * open.  LSTM gate row blocks of W and b are ours, [i, f, o, g]; they are
 * mapped to oneDNN's order (i, f, c~, o) and back. */
typedef struct {
    const char *cell; /* "lstm" or "rnn" */
    size_t T, B, X, H, V;
    const float *W;   /* (G*H, X+H), acting on [x, h] */
    const float *b;   /* (G*H) */
    const float *Wo;  /* (V, H) */
    const float *bo;  /* (V) */
    const float *x;   /* (T, B, X) */
    const int32_t *y; /* (T, B), each in [0, V) */
} bench_onednn_spec;

typedef struct bench_onednn bench_onednn;

/* 1 when built with oneDNN, 0 otherwise. */
int bench_onednn_available(void);
/* oneDNN's version ("2.6.3"), or BENCH_ONEDNN_NA. */
const char *bench_onednn_version(void);

/* Creates the primitives and buffers.  0 on success; -1 with a one-line
 * reason in why[cap] (the call that failed and oneDNN's status) and
 * nothing left allocated. */
int bench_onednn_open(bench_onednn **out, const bench_onednn_spec *spec,
                      char *why, size_t cap);
void bench_onednn_close(bench_onednn *o); /* accepts NULL */

/* One iteration (see above).  0 on success; -1 with a reason in why. */
int bench_onednn_iteration(bench_onednn *o, char *why, size_t cap);

/* After an iteration: the mean cross-entropy over steps and batch. */
double bench_onednn_loss(const bench_onednn *o);
/* The hidden states of the last forward: (T, B, H). */
const float *bench_onednn_hidden(const bench_onednn *o);
/* The last iteration's gradients in bptt's layouts: dW (G*H, X+H), db
 * (G*H), dWo (V, H), dbo (V). */
void bench_onednn_grads(const bench_onednn *o, float *dW, float *db,
                        float *dWo, float *dbo);
/* 1 when the hidden states, loss and every gradient are finite. */
int bench_onednn_finite(const bench_onednn *o);
/* Bytes of the forward's workspace, which the backward reads: oneDNN's
 * counterpart of the checkpoints (the hidden states, (T, B, H), are kept
 * apart and not counted). */
size_t bench_onednn_workspace_bytes(const bench_onednn *o);
/* The implementation oneDNN chose for the forward and the backward
 * ("ref:any", "jit:avx512_core", ...), for the output's header. */
void bench_onednn_impl(const bench_onednn *o, char *buf, size_t cap);

#endif
