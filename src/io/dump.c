/* dump.c: the gradient dump (dump.h; its format: doc/design.md 7).
 *
 * Promises: written into DIR.tmp.PID and renamed to DIR, so that DIR holds
 * every file or does not exist; each tensor with its rank from the model's
 * table (a weight matrix stays 2-D when a size is 1); index.txt names every
 * file with its array, shape and dtype.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "real_impl.h"
#include "dump.h"
#include "npy.h"

/* dir/name into buf; -1 if it does not fit */
static int join(char *buf, size_t cap, const char *dir, const char *name)
{
    const int n = snprintf(buf, cap, "%s/%s", dir, name);
    return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int dump_tensor(const char *dir, const char *prefix, const char *name,
                       const void *data, int dtype, const size_t *shape,
                       int ndim, FILE *index)
{
    char file[256], path[4096];
    snprintf(file, sizeof file, "%s%s.npy", prefix, name);
    if (join(path, sizeof path, dir, file) != 0)
        return ENAMETOOLONG;
    int err = bptt_npy_write(path, data, dtype, shape, ndim);
    if (err)
        return err;
    fprintf(index, "%s%s.npy %s%s (", prefix, name, prefix, name);
    for (int d = 0; d < ndim; d++)
        fprintf(index, "%s%zu", d ? ", " : "", shape[d]);
    fprintf(index, "%s) %s\n", ndim == 1 ? "," : "",
            dtype == BPTT_NPY_I4 ? "int32" : dtype == BPTT_NPY_F8 ? "float64"
                                                                  : "float32");
    return 0;
}

/* Removes the files named in dir/index.txt, the index, then dir. */
static void remove_tree(const char *dir)
{
    char path[4096];
    if (join(path, sizeof path, dir, "index.txt") != 0)
        return;
    FILE *f = fopen(path, "r");
    if (f) {
        char line[512], p[4096];
        while (fgets(line, sizeof line, f)) {
            char *sp = strchr(line, ' ');
            if (line[0] == '#' || !sp)
                continue;
            *sp = '\0';
            if (join(p, sizeof p, dir, line) == 0)
                unlink(p);
        }
        fclose(f);
        unlink(path);
    }
    rmdir(dir);
}

int bptt_dump_write(const char *dir, const bptt_model *m,
                    const bptt_batch *batch, const real *params_before)
{
    char tmp[4000], ipath[4096];
    const int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", dir, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp ||
        join(ipath, sizeof ipath, tmp, "index.txt") != 0)
        return ENAMETOOLONG;
    if (mkdir(tmp, 0777) != 0)
        return errno;
    FILE *index = fopen(ipath, "w");
    if (!index) {
        int e = errno;
        rmdir(tmp);
        return e;
    }
    fprintf(index, "# file array (shape) dtype; little-endian, C order; "
                   "gradients are of the mean cross-entropy\n");
    const int dt = sizeof(real) == 4 ? BPTT_NPY_F4 : BPTT_NPY_F8;
    int err = 0;
    for (size_t k = 0; k < m->n_tensors && !err; k++) {
        const bptt_tensor *t = &m->tensor[k];
        size_t shape[2] = {t->rows, t->cols};
        const int nd = t->ndim == 1 ? 1 : 2; /* the rank, not the sizes' */
        err = dump_tensor(tmp, "param_", t->name, params_before + t->offset,
                          dt, shape, nd, index);
        if (!err)
            err = dump_tensor(tmp, "grad_", t->name, m->grads + t->offset, dt,
                              shape, nd, index);
    }
    size_t xs[3] = {batch->T, batch->B, batch->X}, ys[2] = {batch->T,
                                                            batch->B};
    if (!err)
        err = dump_tensor(tmp, "", "inputs", batch->x, dt, xs, 3, index);
    if (!err)
        err = dump_tensor(tmp, "", "targets", batch->y, BPTT_NPY_I4, ys, 2,
                          index);
    if (fclose(index) != 0 && !err)
        err = errno ? errno : EIO;
    if (!err) {
        rmdir(dir); /* an empty directory of that name may be replaced */
        if (rename(tmp, dir) != 0)
            err = errno;
    }
    if (err)
        remove_tree(tmp);
    return err;
}
