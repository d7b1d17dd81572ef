/* use-train.c: a training-library user, built against the installed files
 * with `pkg-config --cflags --libs bptt` (tests/installcheck.sh): allocates
 * an LSTM through the tracked allocator and prints its parameter count and
 * the GEMM kernel in use. */
#include <stdio.h>

#include <bptt/bptt.h>
#include <bptt/mem.h>
#include <bptt/cell.h>
#include <bptt/model.h>

int main(void)
{
    bptt_mem *mem = bptt_mem_alloc();
    bptt_model *m = NULL;
    if (!mem)
        return 1;
    const int rc = bptt_model_alloc(&m, bptt_cell_find("lstm"), 1, 2, 3, 4,
                                    5, 1, mem);
    if (rc != BPTT_OK) {
        bptt_mem_free(mem);
        return 1;
    }
    printf("%zu %s\n", m->n_params, bptt_cell_kernel());
    bptt_model_free(m);
    bptt_mem_free(mem);
    return 0;
}
