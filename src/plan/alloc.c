/* alloc.c: the planner's allocations (alloc.h), counted in one place so
 * that bptt_alloc_fail_at (bptt.h) can fail any one of them. */
#include <stdatomic.h>
#include <stdlib.h>

#include "bptt.h"
#include "alloc.h"

static _Atomic size_t n_allocs;  /* allocations so far */
static _Atomic size_t fail_when; /* 0: never; else fail the one with this number */

void bptt_alloc_fail_at(size_t n)
{
    atomic_store(&fail_when, n ? atomic_load(&n_allocs) + n : 0);
}

size_t bptt_alloc_count(void) { return atomic_load(&n_allocs); }

static int planner_alloc_fails(void)
{
    const size_t k = atomic_fetch_add(&n_allocs, 1) + 1;
    return k == atomic_load(&fail_when);
}

void *planner_malloc(size_t n)
{
    return planner_alloc_fails() ? NULL : malloc(n);
}

void *planner_calloc(size_t n, size_t size)
{
    return planner_alloc_fails() ? NULL : calloc(n, size);
}

void *planner_realloc(void *p, size_t n)
{
    return planner_alloc_fails() ? NULL : realloc(p, n);
}
