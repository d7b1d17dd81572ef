/* mem.c: the tracked allocator (see mem.h).  Each block carries a 64-byte
 * header with its size and category, so put() needs only the pointer.
 * Freed blocks are kept for reuse by size (a few size classes), because a
 * plan saves and frees checkpoints of the same few sizes over and over:
 * returning each to the C library would map and unmap large blocks and
 * fault their pages in again every time.  The cache never holds more than
 * the peak of what was in use; bptt_mem_free releases it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

#define ALIGN 64

#define CLASSES 16

typedef struct header {
    size_t bytes;
    int category;
    struct header *next; /* in a free list */
} header;

struct bptt_mem {
    bptt_mem_stats st;
    size_t fail_at; /* 0: never; else fail when allocations reaches it */
    size_t class_bytes[CLASSES];
    header *free_list[CLASSES];
};

_Static_assert(sizeof(header) <= ALIGN, "the header must fit before the block");

bptt_mem *bptt_mem_alloc(void) { return calloc(1, sizeof(bptt_mem)); }

void bptt_mem_free(bptt_mem *mem)
{
    if (!mem)
        return;
    for (int c = 0; c < CLASSES; c++)
        for (header *h = mem->free_list[c], *next; h; h = next) {
            next = h->next;
            free(h);
        }
    free(mem);
}

/* the size class of bytes, creating it if there is room; -1 if none */
static int size_class(bptt_mem *mem, size_t bytes)
{
    for (int c = 0; c < CLASSES; c++)
        if (mem->class_bytes[c] == bytes)
            return c;
    for (int c = 0; c < CLASSES; c++)
        if (mem->class_bytes[c] == 0 && !mem->free_list[c]) {
            mem->class_bytes[c] = bytes;
            return c;
        }
    return -1;
}

static void *get(bptt_mem *mem, int category, size_t bytes, int zero)
{
    if (category < 0 || category >= BPTT_MEM_N)
        return NULL;
    mem->st.allocations++;
    if (mem->fail_at && mem->st.allocations == mem->fail_at)
        return NULL;
    if (bytes > SIZE_MAX - 2 * ALIGN)
        return NULL;
    unsigned char *raw = NULL;
    const int c = bytes ? size_class(mem, bytes) : -1;
    if (c >= 0 && mem->free_list[c]) {
        raw = (unsigned char *)mem->free_list[c];
        mem->free_list[c] = mem->free_list[c]->next;
    } else {
        const size_t total = (bytes + ALIGN + ALIGN - 1) / ALIGN * ALIGN;
        raw = aligned_alloc(ALIGN, total);
        if (!raw)
            return NULL;
    }
    if (zero)
        memset(raw + ALIGN, 0, bytes);
    header *hd = (header *)raw;
    hd->bytes = bytes;
    hd->category = category;
    bptt_mem_stats *st = &mem->st;
    st->current[category] += bytes;
    if (st->current[category] > st->peak[category])
        st->peak[category] = st->current[category];
    st->total_current += bytes;
    if (st->total_current > st->total_peak)
        st->total_peak = st->total_current;
    return raw + ALIGN;
}

void *bptt_mem_get(bptt_mem *mem, int category, size_t bytes)
{
    return get(mem, category, bytes, 1);
}

void *bptt_mem_get_uninit(bptt_mem *mem, int category, size_t bytes)
{
    return get(mem, category, bytes, 0);
}

void bptt_mem_put(bptt_mem *mem, void *block)
{
    if (!block)
        return;
    header *hd = (header *)((unsigned char *)block - ALIGN);
    mem->st.current[hd->category] -= hd->bytes;
    mem->st.total_current -= hd->bytes;
    const int c = hd->bytes ? size_class(mem, hd->bytes) : -1;
    if (c < 0) {
        free(hd);
        return;
    }
    hd->next = mem->free_list[c];
    mem->free_list[c] = hd;
}

const bptt_mem_stats *bptt_mem_stats_get(const bptt_mem *mem)
{
    return &mem->st;
}

void bptt_mem_reset_peaks(bptt_mem *mem)
{
    for (int c = 0; c < BPTT_MEM_N; c++)
        mem->st.peak[c] = mem->st.current[c];
    mem->st.total_peak = mem->st.total_current;
}

void bptt_mem_fail_at(bptt_mem *mem, size_t n)
{
    mem->fail_at = n ? mem->st.allocations + n : 0;
}

const char *bptt_mem_cat_name(int category)
{
    static const char *const names[BPTT_MEM_N] = {
        "checkpoint", "working", "parameters", "gradients", "optimizer",
        "data"};
    return (category >= 0 && category < BPTT_MEM_N) ? names[category]
                                                     : "unknown";
}
