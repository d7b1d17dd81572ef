/* lib_ab_side.c: one side of experiments/lib-ab, the library (planner and
 * training) at one version.  The script compiles this file against that
 * version's headers and links the object with that version's library
 * objects into one relocatable object (ld -r), then gives every global
 * symbol in it a prefix of its own (libab_old_, libab_new_), so that two
 * versions live in one program: lab_open becomes libab_old_lab_open, and
 * bptt_exec_run, which it calls, libab_old_bptt_exec_run.  Each version
 * keeps its own globals (the kernel chosen, the thread team).
 *
 * Only plain types cross the line between a side and the program
 * (lib_ab.c), never a struct of the library, whose layout may differ
 * between the versions.  lib_ab.c reads the declarations below twice,
 * with LAB_FN giving each side's names and LAB_DECLARATIONS_ONLY set, so
 * that both files see one list of them. */
#ifndef LAB_FN
#define LAB_FN(name) name
#endif

/* The kernel chosen (bptt_cell_kernel), and 1 when this version can run
 * the one named on this CPU. */
const char *LAB_FN(lab_kernel)(void);
int LAB_FN(lab_kernel_has)(const char *name);
/* Makes name the kernel of the models made after it: 0, or -1. */
int LAB_FN(lab_kernel_use)(const char *name);
/* Whether the training of these sizes and its plan (below) can be set
 * up, without doing so (bptt_session_size): 0 with the bytes it holds at
 * most (its fixed bytes and full BPTT's checkpoints) in *bytes, or -1
 * with one sentence in why[cap]. */
int LAB_FN(lab_check)(const char *cell, unsigned long layers,
                      unsigned long hidden, unsigned long batch,
                      unsigned long length, unsigned long input, int percent,
                      double *bytes, char *why, unsigned long cap);
/* Sets up the training (bptt_session_open) on the copy task (seed 1)
 * with batch 0 loaded, and its plan: full BPTT for percent 0, else MSM
 * at percent % of full BPTT's memory.  Returns the side's handle, or
 * NULL with one sentence in why[cap]. */
void *LAB_FN(lab_open)(const char *cell, unsigned long layers,
                       unsigned long hidden, unsigned long batch,
                       unsigned long length, unsigned long input,
                       int percent, char *why, unsigned long cap);
/* One training iteration (bptt_exec_run): 0 with its wall seconds in
 * *seconds, or -1 with one sentence in why[cap]. */
int LAB_FN(lab_run)(void *h, double *seconds, char *why,
                    unsigned long cap);
/* The gradients of the latest iteration: n reals of size bytes each. */
const void *LAB_FN(lab_grads)(void *h, unsigned long *n,
                              unsigned long *size);
/* The latest iteration's loss. */
double LAB_FN(lab_loss)(void *h);
/* The real at i of the gradients, as a double. */
double LAB_FN(lab_grad_at)(void *h, unsigned long i);
void LAB_FN(lab_close)(void *h); /* accepts NULL */

#undef LAB_FN

#ifndef LAB_DECLARATIONS_ONLY

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bptt.h"
#include "exec.h"
#include "model.h"
#include "session.h"

typedef struct {
    bptt_mem *mem;
    bptt_session *session;
    bptt_plan *plan;
    double loss;
} side;

const char *lab_kernel(void)
{
    return bptt_cell_kernel();
}

int lab_kernel_has(const char *name)
{
    return bptt_cell_kernel_has(name);
}

int lab_kernel_use(const char *name)
{
    return bptt_cell_kernel_use(name) == 0 ? 0 : -1;
}

/* the bptt_session_spec of these sizes, or -1 for a cell of no name */
static int spec_of(bptt_session_spec *sp, const char *cell,
                   unsigned long layers, unsigned long hidden,
                   unsigned long batch, unsigned long length,
                   unsigned long input, char *why, unsigned long cap)
{
    const bptt_session_spec zero = {0};
    *sp = zero;
    sp->cell = bptt_cell_find(cell);
    if (!sp->cell) {
        snprintf(why, cap, "this version has no cell named %s", cell);
        return -1;
    }
    sp->layers = layers, sp->hidden = hidden, sp->batch = batch;
    sp->length = length, sp->input = input;
    sp->task = "copy", sp->seed = 1;
    return 0;
}

/* the plan for states of hb and sb bytes: full BPTT at its full peak, or
 * MSM at percent % of it (as experiments/bench-train makes its arms) */
static int plan_of(int64_t hb, int64_t sb, size_t T, int percent,
                   bptt_plan **plan, char *why, unsigned long cap)
{
    bptt_units u;
    if (bptt_units_from_bytes(&u, hb, sb) != BPTT_OK) {
        snprintf(why, cap, "no planner units for states of %lld and %lld "
                 "bytes", (long long)hb, (long long)sb);
        return -1;
    }
    const int64_t full = bptt_full_peak(T, u.hidden_units, u.internal_units);
    const int pc = percent > 0 ? percent : 100;
    const int64_t budget = full * pc / 100 * u.quantum;
    bptt_plan_stats st;
    const int rc = bptt_plan_make(percent > 0 ? "msm" : "full", T, hb, sb,
                                  budget, NULL, plan, &st, NULL);
    if (rc == BPTT_EINFEASIBLE) {
        snprintf(why, cap, "no MSM plan fits %d%% of full BPTT's memory at "
                 "T=%zu; give a larger -p", percent, T);
        return -1;
    }
    if (rc != BPTT_OK) {
        snprintf(why, cap, "the planner failed (status %d)", rc);
        return -1;
    }
    return 0;
}

int lab_check(const char *cell, unsigned long layers, unsigned long hidden,
              unsigned long batch, unsigned long length, unsigned long input,
              int percent, double *bytes, char *why, unsigned long cap)
{
    bptt_session_spec sp;
    bptt_session_sizes z;
    if (spec_of(&sp, cell, layers, hidden, batch, length, input, why, cap))
        return -1;
    if (bptt_session_size(&sp, &z, why, cap) != BPTT_OK)
        return -1;
    *bytes = z.fixed_bytes + z.full_checkpoint_bytes;
    double hb, sb;
    bptt_model_state_bytes(sp.cell, sp.layers, sp.batch, sp.hidden, &hb, &sb);
    bptt_plan *plan = NULL;
    const int rc = plan_of((int64_t)hb, (int64_t)sb, sp.length, percent,
                           &plan, why, cap);
    bptt_plan_free(plan);
    return rc;
}

void *lab_open(const char *cell, unsigned long layers, unsigned long hidden,
               unsigned long batch, unsigned long length, unsigned long input,
               int percent, char *why, unsigned long cap)
{
    bptt_session_spec sp;
    if (spec_of(&sp, cell, layers, hidden, batch, length, input, why, cap))
        return NULL;
    side *s = calloc(1, sizeof *s);
    if (!s || !(s->mem = bptt_mem_alloc())) {
        snprintf(why, cap, "out of memory");
        free(s);
        return NULL;
    }
    int rc = bptt_session_open(&s->session, &sp, s->mem, why, cap);
    if (rc != BPTT_OK) {
        if (rc != BPTT_EINVAL)
            snprintf(why, cap,
                     "bptt_session_open refused these sizes (status %d)", rc);
        s->session = NULL;
        lab_close(s);
        return NULL;
    }
    rc = bptt_session_fetch(s->session, 0);
    if (rc != BPTT_OK) {
        snprintf(why, cap, "no batch (status %d)", rc);
        lab_close(s);
        return NULL;
    }
    const bptt_model *m = bptt_session_model(s->session);
    if (plan_of((int64_t)bptt_model_hidden_bytes(m),
                (int64_t)bptt_model_internal_bytes(m), sp.length, percent,
                &s->plan, why, cap)) {
        lab_close(s);
        return NULL;
    }
    return s;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int lab_run(void *h, double *seconds, char *why, unsigned long cap)
{
    side *s = h;
    bptt_exec_stats st;
    const double t0 = now();
    const int rc = bptt_exec_run(s->plan, bptt_session_model(s->session),
                                 bptt_session_batch(s->session), s->mem, &st);
    *seconds = now() - t0;
    if (rc != BPTT_OK) {
        snprintf(why, cap, "the iteration failed (status %d)", rc);
        return -1;
    }
    s->loss = st.loss;
    return 0;
}

const void *lab_grads(void *h, unsigned long *n, unsigned long *size)
{
    side *s = h;
    const bptt_model *m = bptt_session_model(s->session);
    *n = (unsigned long)m->n_params;
    *size = (unsigned long)sizeof m->grads[0];
    return m->grads;
}

double lab_grad_at(void *h, unsigned long i)
{
    side *s = h;
    return (double)bptt_session_model(s->session)->grads[i];
}

double lab_loss(void *h)
{
    return ((side *)h)->loss;
}

void lab_close(void *h)
{
    side *s = h;
    if (!s)
        return;
    bptt_plan_free(s->plan);
    bptt_session_close(s->session);
    bptt_mem_free(s->mem);
    free(s);
}

#endif /* LAB_DECLARATIONS_ONLY */
