/* optim.c: the optimizers (optim.h): SGD and Adam, each one flat loop
 * over the model's parameter and gradient arenas. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "real_impl.h"
#include "bptt.h"
#include "optim.h"

struct bptt_optimizer {
    int adam;
    double lr, beta1, beta2, eps;
    long step;
    real *m1, *m2; /* Adam moments (n_params) */
};

int bptt_optimizer_state_per_param(const char *name)
{
    return strcmp(name, "adam") == 0 ? 2 : strcmp(name, "sgd") == 0 ? 0 : -1;
}

int bptt_optimizer_alloc(bptt_optimizer **out, const char *name, double lr,
                         const bptt_model *m, bptt_mem *mem)
{
    *out = NULL;
    const int adam = strcmp(name, "adam") == 0;
    if ((!adam && strcmp(name, "sgd") != 0) || !(lr > 0))
        return BPTT_EINVAL;
    bptt_optimizer *o = calloc(1, sizeof *o);
    if (!o)
        return BPTT_ENOMEM;
    o->adam = adam;
    o->lr = lr;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    if (adam) {
        o->m1 = bptt_mem_get(mem, BPTT_MEM_OPTIMIZER, m->n_params * sizeof(real));
        o->m2 = bptt_mem_get(mem, BPTT_MEM_OPTIMIZER, m->n_params * sizeof(real));
        if (!o->m1 || !o->m2) {
            bptt_optimizer_free(o, mem);
            return BPTT_ENOMEM;
        }
    }
    *out = o;
    return BPTT_OK;
}

void bptt_optimizer_free(bptt_optimizer *o, bptt_mem *mem)
{
    if (!o)
        return;
    bptt_mem_put(mem, o->m1);
    bptt_mem_put(mem, o->m2);
    free(o);
}

void bptt_optimizer_step(bptt_optimizer *o, bptt_model *m)
{
    real *p = m->params;
    const real *g = m->grads;
    const size_t n = m->n_params;
    if (!o->adam) {
        const real lr = (real)o->lr;
        for (size_t k = 0; k < n; k++)
            p[k] -= lr * g[k];
        return;
    }
    o->step++;
    const real b1 = (real)o->beta1, b2 = (real)o->beta2;
    const real c1 = (real)(1 - pow(o->beta1, (double)o->step));
    const real c2 = (real)(1 - pow(o->beta2, (double)o->step));
    const real lr = (real)o->lr, eps = (real)o->eps;
    for (size_t k = 0; k < n; k++) {
        o->m1[k] = b1 * o->m1[k] + (1 - b1) * g[k];
        o->m2[k] = b2 * o->m2[k] + (1 - b2) * g[k] * g[k];
        const real mh = o->m1[k] / c1, vh = o->m2[k] / c2;
        p[k] -= lr * mh / ((real)sqrt((double)vh) + eps);
    }
}
