/* alloc.h: the allocation hooks of the planner (alloc.c).  Every
 * allocation of plans and tables (plan.c, table.c, fast.c, emit.c, axis.c)
 * goes through them, so that bptt_alloc_fail_at() can fail any one of them
 * and bptt_alloc_count() counts them all.  Not part of the public
 * interface: the tests, the fuzz targets and `bptt plan --fail-alloc` use
 * them (the libraries do not export them). */
#ifndef BPTT_PLAN_ALLOC_H
#define BPTT_PLAN_ALLOC_H

#include <stddef.h>

/* Make the planner's n-th allocation from now fail (n = 0: none); every
 * function then returns BPTT_ENOMEM and frees what it allocated.
 * Process-wide. */
void bptt_alloc_fail_at(size_t n);
/* The planner's allocations so far in this process. */
size_t bptt_alloc_count(void);
/* Bytes the planner's allocations hold now (what malloc reserved for each:
 * malloc_usable_size; 0 where the C library lacks it), their peak since
 * the last bptt_alloc_reset_peak, and that reset (the peak becomes the
 * bytes held now).  Process-wide; tests hold the planner's peak to
 * bptt_table_bytes_needed + bptt_plan_bytes_bound with them. */
size_t bptt_alloc_bytes(void);
size_t bptt_alloc_peak_bytes(void);
void bptt_alloc_reset_peak(void);

/* malloc, calloc and realloc, or NULL when this allocation is the one
 * bptt_alloc_fail_at chose. */
void *planner_malloc(size_t n);
void *planner_calloc(size_t n, size_t size);
void *planner_realloc(void *p, size_t n);
/* free, for what the three above returned (the held bytes go down). */
void planner_free(void *p);

/* What malloc may reserve beyond the bytes asked, at most: a small block
 * rounds up to 16 bytes past an 8-byte header (32 covers it), a large one
 * (mapped) to a page.  Byte counts of the planner (bptt_table_bytes_needed)
 * add one of these per allocation. */
#define PLANNER_SMALL_SLACK ((size_t)32)
#define PLANNER_ALLOC_SLACK ((size_t)4096)

#endif
