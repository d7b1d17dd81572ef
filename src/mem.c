/* mem.c: the tracked allocator (see mem.h).  Each block carries a 64-byte
 * header with its size and category, so put() needs only the pointer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mem.h"

#define ALIGN 64

struct bptt_mem {
    bptt_mem_stats st;
    size_t fail_at; /* 0: never; else fail when allocations reaches it */
};

typedef struct {
    size_t bytes;
    int category;
} header;

bptt_mem *bptt_mem_alloc(void) { return calloc(1, sizeof(bptt_mem)); }

void bptt_mem_free(bptt_mem *mem) { free(mem); }

void *bptt_mem_get(bptt_mem *mem, int category, size_t bytes)
{
    if (category < 0 || category >= BPTT_MEM_N)
        return NULL;
    mem->st.allocations++;
    if (mem->fail_at && mem->st.allocations == mem->fail_at)
        return NULL;
    if (bytes > SIZE_MAX - 2 * ALIGN)
        return NULL;
    const size_t total = (bytes + ALIGN + ALIGN - 1) / ALIGN * ALIGN;
    unsigned char *raw = aligned_alloc(ALIGN, total);
    if (!raw)
        return NULL;
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

void bptt_mem_put(bptt_mem *mem, void *block)
{
    if (!block)
        return;
    unsigned char *raw = (unsigned char *)block - ALIGN;
    const header *hd = (const header *)raw;
    mem->st.current[hd->category] -= hd->bytes;
    mem->st.total_current -= hd->bytes;
    free(raw);
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
