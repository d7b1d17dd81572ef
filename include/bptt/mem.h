/* mem.h: the tracked allocator.  Every byte the training side holds comes
 * from here, tagged with a category; current and peak bytes are kept per
 * category and in total.  Counts are of requested (payload) bytes, so the
 * checkpoint peak equals the plan's predicted peak exactly.  For tests of
 * allocation failure, the n-th allocation can be made to fail. */
#ifndef BPTT_MEM_H
#define BPTT_MEM_H

#include <stddef.h>

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

enum bptt_mem_cat {
    BPTT_MEM_CHECKPOINT, /* stored hidden and internal states */
    BPTT_MEM_WORKING,    /* running state, working internal state, carries,
                            output-layer buffers */
    BPTT_MEM_PARAMS,
    BPTT_MEM_GRADS,
    BPTT_MEM_OPTIMIZER,
    BPTT_MEM_DATA, /* input and target batches */
    BPTT_MEM_N
};

typedef struct {
    size_t current[BPTT_MEM_N];
    size_t peak[BPTT_MEM_N];
    size_t total_current, total_peak;
    size_t allocations; /* successful and failed calls of bptt_mem_get */
} bptt_mem_stats;

typedef struct bptt_mem bptt_mem;

bptt_mem *bptt_mem_alloc(void);     /* NULL if out of memory */
void bptt_mem_free(bptt_mem *mem);  /* accepts NULL; blocks must be put back */

/* bytes zeroed, 64-byte aligned; NULL on failure (or the injected one). */
void *bptt_mem_get(bptt_mem *mem, int category, size_t bytes);
/* The same, not zeroed: for blocks the caller fills at once (checkpoints). */
void *bptt_mem_get_uninit(bptt_mem *mem, int category, size_t bytes);
void bptt_mem_put(bptt_mem *mem, void *block); /* accepts NULL */

const bptt_mem_stats *bptt_mem_stats_get(const bptt_mem *mem);
void bptt_mem_reset_peaks(bptt_mem *mem); /* peaks := current */
/* Make the n-th call of bptt_mem_get from now fail (n >= 1; 0: never). */
void bptt_mem_fail_at(bptt_mem *mem, size_t n);
const char *bptt_mem_cat_name(int category);

#pragma GCC visibility pop

#endif
