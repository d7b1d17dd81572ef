/* finite.h: NaN and infinity in what a training iteration made.
 *
 * Promises: a scan of a model's parameter or gradient arena (the layout of
 * model.h) that names the first element that is not finite, by tensor
 * (W0, b0, ..., Wo, bo), row and column, with its value and the number of
 * such elements in the arena; and the same verdict for one number (the
 * loss).  Library code: it returns a status and fills a struct, and never
 * prints.  Does not promise: the time step that made the value (gradients
 * are sums over every step of an iteration).
 */
#ifndef BPTT_FINITE_H
#define BPTT_FINITE_H

#include <stddef.h>

#include "bptt.h"
#include "model.h"
#include "real.h"

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

/* Verdicts are status codes of bptt.h: BPTT_OK (every value finite),
 * BPTT_ENAN (the first value that is not finite is a NaN), BPTT_EINF (it
 * is +inf or -inf); bptt_strerror says "NaN" or "infinite". */

/* Where the first value that is not finite lies. */
typedef struct {
    const char *tensor; /* its tensor's name (in the model), "" if none */
    size_t offset;      /* in reals, into the arena */
    size_t row, col;    /* within the tensor; col 0 for vectors */
    double value;       /* NaN, +inf or -inf */
    size_t count;       /* values in the arena that are not finite */
} bptt_nonfinite;

/* The status of one number (the loss). */
int bptt_finite_value(double v);

/* Index of the first value of a[0..n) that is not finite; n if none. */
size_t bptt_finite_first(const bptt_real *a, size_t n);

/* Scans arena (m->params or m->grads: n_params reals, laid out by m's
 * tensor table).  BPTT_OK, or the kind of the first value that is
 * not finite, with *where filled (where may be NULL). */
int bptt_finite_scan(const bptt_model *m, const bptt_real *arena,
                     bptt_nonfinite *where);


#pragma GCC visibility pop

#endif
