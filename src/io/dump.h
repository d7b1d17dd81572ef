/* dump.h: a training iteration's parameters, gradients, inputs and targets
 * as NumPy .npy files in one directory, for checking gradients elsewhere
 * (experiments/pytorch_compare.py; the format: doc/design.md 7).
 *
 * Files: param_NAME.npy and grad_NAME.npy for every tensor of the model
 * (W0, b0, ..., Wo, bo: model.h), inputs.npy (T, B, X), targets.npy (T,
 * B) int32, and index.txt: one line per file, "FILE ARRAY (SHAPE) DTYPE".
 */
#ifndef BPTT_DUMP_H
#define BPTT_DUMP_H

#include "data.h"
#include "model.h"
#include "real.h"

/* Writes the dump of model m (its gradients), batch and params (the
 * parameters the gradients are of: before the update) to the directory
 * dir, which must not exist or be empty: all files or none.  0, or an
 * errno value (ENAMETOOLONG for a path too long). */
int bptt_dump_write(const char *dir, const bptt_model *m,
                    const bptt_batch *batch, const bptt_real *params);

#endif
