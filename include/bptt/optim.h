/* optim.h: the optimizers that update a model's parameters from its
 * gradients: one flat loop over the arenas (model.h keeps every parameter
 * in one block and every gradient in another).  SGD holds no state, Adam
 * its two moments per parameter, from the tracked memory given.  Library
 * code: status codes, no output. */
#ifndef BPTT_OPTIM_H
#define BPTT_OPTIM_H

#include "mem.h"
#include "model.h"

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

typedef struct bptt_optimizer bptt_optimizer;
/* Reals of optimizer state per parameter: sgd 0, adam 2 (its moments);
 * -1 for an unknown name. */
int bptt_optimizer_state_per_param(const char *name);
/* name: "sgd" or "adam"; lr > 0. */
int bptt_optimizer_alloc(bptt_optimizer **out, const char *name, double lr,
                         const bptt_model *m, bptt_mem *mem);
void bptt_optimizer_free(bptt_optimizer *opt, bptt_mem *mem);
void bptt_optimizer_step(bptt_optimizer *opt, bptt_model *m);

#pragma GCC visibility pop

#endif
