/* train.c: one of the library's own cells trained under a memory budget,
 * through the installed headers alone (doc/api.md):
 *
 *     cc -o train examples/train.c $(pkg-config --cflags --libs bptt)
 *     ./train
 *
 * An LSTM learns the copy task (data.h) with Adam (optim.h) through a
 * training session (session.h).  The budget is written as people write
 * it, "20%" of full BPTT's checkpoints (budget.h); the planner (bptt.h)
 * turns it into an MSM plan from the session's two state sizes, and every
 * iteration runs that plan through the executor (exec.h).  The program
 * checks what the library promises: the first iteration's gradients
 * under the plan are bit-identical to full BPTT's, the checkpoints never
 * take more than the budget, the forward ops are the plan's, and the loss
 * falls.  It prints "train: ok: ..." and exits 0, else says what failed
 * and exits 1.  make check runs it (built against include/ alone), make
 * installcheck builds it with pkg-config and runs it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bptt/bptt.h>
#include <bptt/budget.h>
#include <bptt/exec.h>
#include <bptt/mem.h>
#include <bptt/model.h>
#include <bptt/session.h>

#define ITERATIONS 60

static int fail(const char *what, int rc)
{
    fprintf(stderr, "train: %s: %s\n", what, bptt_strerror(rc));
    return 1;
}

/* The gradients of batch 0 under plan, from a session opened afresh (its
 * parameters drawn from the seed), into grads[n]. */
static int gradients(const bptt_session_spec *spec, const bptt_plan *plan,
                     bptt_real *grads, size_t n, bptt_exec_stats *st)
{
    bptt_mem *mem = bptt_mem_alloc();
    bptt_session *s = NULL;
    bptt_session_fault f;
    char why[256] = "";
    if (!mem)
        return BPTT_ENOMEM;
    int rc = bptt_session_open(&s, spec, mem, why, sizeof why);
    if (rc == BPTT_OK)
        rc = bptt_session_gradients(s, plan, 0, st, &f);
    if (rc == BPTT_OK) {
        const bptt_model *m = bptt_session_model(s);
        if (m->n_params != n)
            rc = BPTT_EINVAL;
        else
            memcpy(grads, m->grads, n * sizeof *grads);
    }
    bptt_session_close(s);
    bptt_mem_free(mem);
    return rc;
}

int main(void)
{
    const bptt_session_spec spec = {
        .cell = bptt_cell_find("lstm"), .layers = 1, .hidden = 32,
        .batch = 8, .length = 40, .task = "copy", .optimizer = "adam",
        .lr = 1e-2, .seed = 1};
    char why[256] = "";
    bptt_session_sizes z;
    int rc = bptt_session_size(&spec, &z, why, sizeof why);
    if (rc != BPTT_OK) {
        fprintf(stderr, "train: %s\n", why);
        return 1;
    }

    /* the budget: 20% of full BPTT's checkpoints, resolved against the
     * states' sizes (in the planner's units, a unit being u.quantum bytes) */
    bptt_units u;
    rc = bptt_units_from_bytes(&u, (int64_t)z.hidden_bytes,
                               (int64_t)z.internal_bytes);
    if (rc != BPTT_OK)
        return fail("the state sizes", rc);
    const bptt_budget_sizes bz = {spec.length, u.hidden_units,
                                  u.internal_units, u.quantum};
    bptt_budget_resolved r;
    rc = bptt_budget_resolve("20%", &bz, 0, &r, why, sizeof why);
    if (rc != BPTT_OK) {
        fprintf(stderr, "train: the budget: %s\n", why);
        return 1;
    }
    const int64_t budget = r.bytes;

    /* the plan, and full BPTT's for the comparison */
    bptt_plan *plan = NULL, *full = NULL;
    bptt_plan_stats ps, fs;
    rc = bptt_plan_make("msm", spec.length, (int64_t)z.hidden_bytes,
                        (int64_t)z.internal_bytes, budget, NULL, &plan, &ps,
                        NULL);
    if (rc != BPTT_OK)
        return fail("bptt_plan_make msm", rc);
    rc = bptt_plan_make("full", spec.length, (int64_t)z.hidden_bytes,
                        (int64_t)z.internal_bytes,
                        (int64_t)z.full_checkpoint_bytes, NULL, &full, &fs,
                        NULL);
    if (rc != BPTT_OK)
        return fail("bptt_plan_make full", rc);

    /* the same gradients under both plans, bit for bit */
    bptt_mem *mem = bptt_mem_alloc();
    bptt_session *s = NULL;
    if (!mem)
        return fail("bptt_mem_alloc", BPTT_ENOMEM);
    rc = bptt_session_open(&s, &spec, mem, why, sizeof why);
    if (rc != BPTT_OK) {
        fprintf(stderr, "train: %s\n", why);
        return 1;
    }
    const size_t n = bptt_session_model(s)->n_params;
    bptt_real *g_plan = malloc(n * sizeof *g_plan);
    bptt_real *g_full = malloc(n * sizeof *g_full);
    bptt_exec_stats st;
    if (!g_plan || !g_full)
        return fail("malloc", BPTT_ENOMEM);
    if ((rc = gradients(&spec, plan, g_plan, n, &st)) != BPTT_OK ||
        (rc = gradients(&spec, full, g_full, n, &st)) != BPTT_OK)
        return fail("the first gradients", rc);
    if (memcmp(g_plan, g_full, n * sizeof *g_plan) != 0) {
        fprintf(stderr, "train: the gradients under MSM differ from full "
                        "BPTT's\n");
        return 1;
    }

    /* training */
    double first = 0, last = 0;
    for (size_t k = 0; k < ITERATIONS; k++) {
        bptt_session_fault f;
        rc = bptt_session_gradients(s, plan, k, &st, &f);
        if (rc == BPTT_OK)
            rc = bptt_session_update(s, &f);
        if (rc != BPTT_OK)
            return fail("an iteration", rc);
        if ((int64_t)st.checkpoint_peak_bytes > budget) {
            fprintf(stderr, "train: checkpoints took %zu bytes, over the "
                            "budget of %lld\n",
                    st.checkpoint_peak_bytes, (long long)budget);
            return 1;
        }
        if (st.forward_ops != ps.forward_ops) {
            fprintf(stderr, "train: %lld forward ops, the plan says %lld\n",
                    (long long)st.forward_ops, (long long)ps.forward_ops);
            return 1;
        }
        if (k == 0)
            first = st.loss;
        last = st.loss;
    }
    if (!(last < first)) {
        fprintf(stderr, "train: the loss went from %g to %g\n", first, last);
        return 1;
    }
    printf("train: ok: %zu parameters, budget %lld of %.0f bytes, %lld "
           "forward ops for %zu steps, loss %.4f -> %.4f in %d iterations\n",
           n, (long long)budget, z.full_checkpoint_bytes,
           (long long)ps.forward_ops, spec.length, first, last, ITERATIONS);
    free(g_plan);
    free(g_full);
    bptt_session_close(s);
    bptt_mem_free(mem);
    bptt_plan_free(plan);
    bptt_plan_free(full);
    return 0;
}
