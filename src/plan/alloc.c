/* alloc.c: the planner's allocations (alloc.h), counted in one place so
 * that bptt_alloc_fail_at (bptt.h) can fail any one of them, and the bytes
 * they hold (what malloc reserves for each, malloc_usable_size) tracked
 * with their peak, so that tests can hold the planner to what
 * bptt_table_bytes_needed says it needs. */
#include <stdatomic.h>
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#define HELD(p) ((p) ? malloc_usable_size(p) : 0)
#else
#define HELD(p) ((void)(p), (size_t)0) /* not tracked */
#endif

#include "bptt.h"
#include "alloc.h"

static _Atomic size_t n_allocs;  /* allocations so far */
static _Atomic size_t fail_when; /* 0: never; else fail the one with this number */
static _Atomic size_t held, held_peak; /* bytes held now, and their peak */

void bptt_alloc_fail_at(size_t n)
{
    atomic_store(&fail_when, n ? atomic_load(&n_allocs) + n : 0);
}

size_t bptt_alloc_count(void) { return atomic_load(&n_allocs); }

size_t bptt_alloc_bytes(void) { return atomic_load(&held); }

size_t bptt_alloc_peak_bytes(void) { return atomic_load(&held_peak); }

void bptt_alloc_reset_peak(void) { atomic_store(&held_peak, atomic_load(&held)); }

static int planner_alloc_fails(void)
{
    const size_t k = atomic_fetch_add(&n_allocs, 1) + 1;
    return k == atomic_load(&fail_when);
}

static void take(size_t n)
{
    const size_t now = atomic_fetch_add(&held, n) + n;
    size_t pk = atomic_load(&held_peak);
    while (now > pk && !atomic_compare_exchange_weak(&held_peak, &pk, now))
        ;
}

static void *taken(void *p)
{
    take(HELD(p));
    return p;
}

void *planner_malloc(size_t n)
{
    return planner_alloc_fails() ? NULL : taken(malloc(n));
}

void *planner_calloc(size_t n, size_t size)
{
    return planner_alloc_fails() ? NULL : taken(calloc(n, size));
}

void *planner_realloc(void *p, size_t n)
{
    if (planner_alloc_fails())
        return NULL;
    const size_t before = HELD(p);
    void *q = realloc(p, n);
    if (!q)
        return NULL;
    atomic_fetch_sub(&held, before);
    return taken(q);
}

void planner_free(void *p)
{
    if (!p)
        return;
    atomic_fetch_sub(&held, HELD(p));
    free(p);
}
