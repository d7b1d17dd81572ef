/* npy.c: NumPy .npy writer, format version 1.0 (see npy.h).
 *
 * Promises: the file is "\x93NUMPY", version 1.0, a 2-byte little-endian
 * header length, and a header dict such as
 *     {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
 * padded with spaces and ended by '\n' so that the data starts at a multiple
 * of 64 bytes; then the data, little-endian, C order.  On a big-endian host
 * the data are byte-swapped as they are written.  The file is written to
 * "PATH.tmp.<pid>" and renamed onto PATH, so PATH is either absent, the old
 * file, or the whole new file; on failure the temporary file is removed.
 *
 * Does not promise: durability across a power failure (no fsync), or
 * concurrent writes of one PATH from several threads of one process (they
 * would share the temporary name).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npy.h"

#define NPY_PREAMBLE 10 /* magic (6), version (2), header length (2) */
#define NPY_ALIGN 64
#define NPY_MAX_HEADER 65535 /* v1.0: the length is a uint16 */

static int host_little_endian(void)
{
    const uint32_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* Builds the preamble and padded dict into a malloc'd block of *len bytes
 * (a multiple of NPY_ALIGN).  Returns 0 or an errno value. */
static int build_header(const char *descr, const size_t *shape, int ndim,
                        unsigned char **out, size_t *len)
{
    /* Each dimension: up to 20 digits and ", "; the rest fits in 128. */
    const size_t cap = NPY_PREAMBLE + 128 + (size_t)ndim * 22 + NPY_ALIGN;
    unsigned char *h = malloc(cap);
    if (!h)
        return ENOMEM;
    char *dict = (char *)h + NPY_PREAMBLE;
    const size_t dict_cap = cap - NPY_PREAMBLE;
    size_t n = (size_t)snprintf(
        dict, dict_cap, "{'descr': '%s', 'fortran_order': False, 'shape': (",
        descr);
    for (int i = 0; i < ndim; i++)
        n += (size_t)snprintf(dict + n, dict_cap - n, "%s%zu",
                              i ? ", " : "", shape[i]);
    n += (size_t)snprintf(dict + n, dict_cap - n, "%s), }",
                          ndim == 1 ? "," : "");
    /* Pad with spaces, then '\n', to the next multiple of NPY_ALIGN. */
    size_t total = NPY_PREAMBLE + n + 1;
    total = (total + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    const size_t dict_len = total - NPY_PREAMBLE;
    if (dict_len > NPY_MAX_HEADER) {
        free(h);
        return EOVERFLOW;
    }
    memset(dict + n, ' ', dict_len - 1 - n);
    dict[dict_len - 1] = '\n';

    memcpy(h, "\x93NUMPY", 6);
    h[6] = 1; /* major */
    h[7] = 0; /* minor */
    h[8] = (unsigned char)(dict_len & 0xFF);
    h[9] = (unsigned char)(dict_len >> 8);
    *out = h;
    *len = total;
    return 0;
}

/* Writes count items of itemsize bytes, little-endian.  Returns 0 or an
 * errno value. */
static int write_data(FILE *f, const void *data, size_t itemsize,
                      size_t count)
{
    if (count == 0)
        return 0;
    errno = 0;
    if (host_little_endian() || itemsize == 1) {
        if (fwrite(data, itemsize, count, f) != count)
            return errno ? errno : EIO;
        return 0;
    }
    /* Big-endian host: reverse each item's bytes through a buffer. */
    unsigned char buf[4096];
    const size_t per = sizeof buf / itemsize;
    const unsigned char *src = data;
    while (count > 0) {
        const size_t m = count < per ? count : per;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < itemsize; j++)
                buf[i * itemsize + j] = src[i * itemsize + itemsize - 1 - j];
        if (fwrite(buf, itemsize, m, f) != m)
            return errno ? errno : EIO;
        src += m * itemsize;
        count -= m;
    }
    return 0;
}

int bptt_npy_write(const char *path, const void *data, int dtype,
                   const size_t *shape, int ndim)
{
    const char *descr;
    size_t itemsize;
    switch (dtype) {
    case BPTT_NPY_F4:
        descr = "<f4";
        itemsize = 4;
        break;
    case BPTT_NPY_F8:
        descr = "<f8";
        itemsize = 8;
        break;
    case BPTT_NPY_I4:
        descr = "<i4";
        itemsize = 4;
        break;
    default:
        return EINVAL;
    }
    if (!path || ndim < 0 || (ndim > 0 && !shape))
        return EINVAL;
    if (ndim > NPY_MAX_HEADER / 3) /* each dimension takes >= 3 chars */
        return EOVERFLOW;
    size_t count = 1;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] != 0 && count > SIZE_MAX / shape[i])
            return EOVERFLOW;
        count *= shape[i];
    }
    if (count > SIZE_MAX / itemsize)
        return EOVERFLOW;
    if (count > 0 && !data)
        return EINVAL;

    unsigned char *header = NULL;
    size_t header_len = 0;
    int err = build_header(descr, shape, ndim, &header, &header_len);
    if (err)
        return err;

    const size_t tmp_cap = strlen(path) + 32;
    char *tmp = malloc(tmp_cap);
    if (!tmp) {
        free(header);
        return ENOMEM;
    }
    snprintf(tmp, tmp_cap, "%s.tmp.%ld", path, (long)getpid());

    /* "x": created here or not at all, so a link or file planted at the
     * temporary name is never written through (one left by a dead
     * process of the same pid is removed, then the name taken anew) */
    errno = 0;
    FILE *f = fopen(tmp, "wbx");
    if (!f && errno == EEXIST && unlink(tmp) == 0) {
        errno = 0;
        f = fopen(tmp, "wbx");
    }
    if (!f) {
        err = errno ? errno : EIO;
        free(tmp);
        free(header);
        return err;
    }
    errno = 0;
    if (fwrite(header, 1, header_len, f) != header_len)
        err = errno ? errno : EIO;
    if (!err)
        err = write_data(f, data, itemsize, count);
    errno = 0;
    if (!err && fflush(f) != 0)
        err = errno ? errno : EIO;
    errno = 0;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    errno = 0;
    if (!err && rename(tmp, path) != 0)
        err = errno ? errno : EIO;
    if (err)
        remove(tmp);
    free(tmp);
    free(header);
    return err;
}
