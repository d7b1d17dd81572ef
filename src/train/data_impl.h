/* src/train/data_impl.h: what the training library's own files call in
 * data.c and users of data.h do not. */
#ifndef BPTT_DATA_IMPL_H
#define BPTT_DATA_IMPL_H

#include <stddef.h>

#include "data.h"

/* bptt_task_alloc, saying in why[cap] (when cap > 0) why a task was
 * refused: what only reading its text can find (one distinct byte, an
 * input width other than the text's number of distinct bytes, a text
 * that shrank since it was checked). */
int bptt_task_alloc_why(bptt_task **out, const char *spec, size_t T,
                        size_t B, size_t input_width, unsigned long seed,
                        bptt_mem *mem, char *why, size_t cap);

#endif
