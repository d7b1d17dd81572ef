/* alloc.h: the allocation hooks of the planner (alloc.c).  Every
 * allocation of plans and tables (plan.c, table.c, fast.c) goes through
 * them, so that bptt_alloc_fail_at() (bptt.h) can fail any one of them and
 * bptt_alloc_count() counts them all.  Not part of the public interface. */
#ifndef BPTT_PLAN_ALLOC_H
#define BPTT_PLAN_ALLOC_H

#include <stddef.h>

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
