/* finite.c: NaN and infinity in a model's arenas and in the loss (see
 * finite.h). */
#include <math.h>
#include <string.h>

#include "real_impl.h"
#include "finite.h"

int bptt_finite_value(double v)
{
    if (isnan(v))
        return BPTT_ENAN;
    if (isinf(v))
        return BPTT_EINF;
    return BPTT_OK;
}

size_t bptt_finite_first(const real *a, size_t n)
{
    /* one pass, a compare per value: next to an iteration's GEMMs over the
     * same parameters this costs nothing worth vectorizing */
    for (size_t i = 0; i < n; i++)
        if (!isfinite(a[i]))
            return i;
    return n;
}

int bptt_finite_scan(const bptt_model *m, const real *arena,
                     bptt_nonfinite *where)
{
    const size_t n = m->n_params;
    const size_t first = bptt_finite_first(arena, n);
    if (first == n)
        return BPTT_OK;
    const double v = (double)arena[first];
    if (where) {
        memset(where, 0, sizeof *where);
        where->tensor = "";
        where->offset = first;
        where->value = v;
        for (size_t k = 0; k < m->n_tensors; k++) {
            const bptt_tensor *t = &m->tensor[k];
            if (first >= t->offset && first - t->offset < t->rows * t->cols) {
                where->tensor = t->name;
                where->row = (first - t->offset) / t->cols;
                where->col = (first - t->offset) % t->cols;
                break;
            }
        }
        size_t count = 0;
        for (size_t i = first; i < n; i++)
            count += !isfinite(arena[i]);
        where->count = count;
    }
    return bptt_finite_value(v);
}
