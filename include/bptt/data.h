/* data.h: seeded training data: synthetic tasks and character-level text.
 *
 * A task yields batches of B sequences of T steps: inputs x (T, B, X) as
 * reals (one-hot or dense) and target classes y (T, B), one per step
 * (softmax cross-entropy at every step).  Every batch is a pure function of
 * (task spec, sizes, seed, batch index), drawn with GSL's random number
 * generators (gsl_rng_mt19937), so runs repeat exactly.
 *
 * Tasks:
 *   copy      recall: random symbols 1..X-1 (0 is the blank, never an
 *             input), one-hot; the target at step i (0-based) is the input
 *             symbol at step i - lag for i >= lag, and the blank 0 for
 *             i < lag; lag = max(1, T/4) (integer division), so difficulty
 *             grows with T.  X >= 2 symbols in, V = X classes out.
 *   adding    the adding problem, as classification at every step: X = 2
 *             (x[.,.,0] a value in [0,1), a multiple of 2^-24 so that it is
 *             the same in float and double; x[.,.,1] a marker in {0,1};
 *             exactly two distinct steps are marked, so T >= 2), target at
 *             step i = the sum of the marked values at steps <= i, quantised
 *             into V = 16 bins of width 1/8 over [0, 2): floor(8 * sum).
 *   text:FILE character-level text: the vocabulary is the distinct bytes of
 *             FILE (sorted), X = V = vocabulary size; each sequence starts
 *             at a random offset, input one-hot of byte i, target byte i+1.
 *             FILE is read once, by bptt_task_alloc, and its bytes are kept
 *             (from mem, category BPTT_MEM_DATA).
 */
#ifndef BPTT_DATA_H
#define BPTT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"
#include "mem.h"
#include "real.h"

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

typedef struct {
    size_t T, B, X;
    bptt_real *x;    /* (T, B, X) */
    int32_t *y; /* (T, B) */
} bptt_batch;

typedef struct bptt_task bptt_task;

/* Status codes: those of bptt.h (bptt_strerror).  BPTT_EUNKNOWN: spec is
 * not copy, adding or text:FILE; BPTT_EINVAL: T or B is 0, adding with
 * T < 2, X does not suit the task (see bptt_task_alloc), or out or mem is
 * NULL; BPTT_EFILE: FILE unreadable; BPTT_ESHORT: FILE shorter than T + 1
 * bytes or empty; BPTT_ENOMEM; BPTT_ETOOBIG: a buffer size, T * B * X *
 * sizeof(bptt_real), overflows size_t. */

/* spec: "copy", "adding" or "text:FILE".  input_width: X wanted; 0 picks
 * the task's natural width (copy: 16; adding: 2; text: vocabulary size);
 * a nonzero X that the task cannot use (adding with X != 2, text with X !=
 * vocabulary size, copy with X < 2) gives BPTT_EINVAL.
 * Batch buffers come from mem (category BPTT_MEM_DATA); mem must outlive
 * the task.  On failure *out is NULL and nothing is left allocated. */
int bptt_task_alloc(bptt_task **out, const char *spec, size_t T, size_t B,
                    size_t input_width, unsigned long seed, bptt_mem *mem);
void bptt_task_free(bptt_task *task); /* accepts NULL */

size_t bptt_task_input_width(const bptt_task *task);   /* X */
size_t bptt_task_classes(const bptt_task *task);       /* V */
const char *bptt_task_name(const bptt_task *task);     /* "copy", ... */
/* The batch with index k (k = 0, 1, ...): same k, same batch.  out's
 * pointers point into buffers the task owns: valid until the next call or
 * bptt_task_free, overwritten by the next call.  Returns BPTT_OK (or
 * BPTT_EINVAL for NULL arguments). */
int bptt_task_batch(bptt_task *task, size_t k, bptt_batch *out);

/* The task's sizes before anything is allocated or read, and whether
 * bptt_task_alloc can make it: spec, length T and input_width as for
 * bptt_task_alloc.  Fills *X and *V (input width and classes; for text the
 * vocabulary is known only once the file is read: then both are the
 * largest it can be, 256 or the file's length, or input_width when given)
 * and *file_bytes (the text file's size, which the task will hold; 0
 * otherwise).  Returns BPTT_OK or the error, with one sentence for
 * people in why[cap] (NUL-terminated, cut to fit; may be NULL): what is
 * wrong and what would work, naming sizes, not options ("the copy task
 * needs an input width of 2 or more ..."). */
int bptt_task_check(const char *spec, size_t T, size_t input_width,
                    size_t *X, size_t *V, double *file_bytes, char *why,
                    size_t cap);


#pragma GCC visibility pop

#endif
