/* npy.h: NumPy .npy writer (format version 1.0, little-endian, C order).
 * Files are written to a temporary
 * name and renamed into place: a reader never sees half a file. */
#ifndef BPTT_NPY_H
#define BPTT_NPY_H

#include <stddef.h>

enum bptt_npy_dtype { BPTT_NPY_F4, BPTT_NPY_F8, BPTT_NPY_I4 };

/* Writes the array data (C order, shape[0..ndim-1]; ndim 0 is a scalar)
 * to path.  0 on success, else an errno value: EINVAL for a bad dtype,
 * ndim < 0, or NULL path, shape or data (data may be NULL when the array
 * is empty), EOVERFLOW when the size overflows or the header exceeds v1.0's
 * 65535 bytes, or what the file system said.  On failure path is as it was
 * and no temporary file is left. */
int bptt_npy_write(const char *path, const void *data, int dtype,
                   const size_t *shape, int ndim);

#endif
