/* rig.h: the training test rig shared by test_train.c (float) and
 * test_fd.c (double): a small configuration, the fixed thread count set in
 * each forked test, and a rig holding tracked memory, task, model, batch 0
 * and the state sizes in planner units.  Static functions: each test
 * program includes it once. */
#ifndef BPTT_TEST_RIG_H
#define BPTT_TEST_RIG_H

#include <check.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "data.h"
#include "mem.h"
#include "model.h"
#include "session.h"

void openblas_set_num_threads(int);

#define THREADS 2

typedef struct {
    const char *cell;
    size_t L;
    const char *task;
    size_t T, B, X, H;
    unsigned long seed;
} config;

/* A configuration without its cell.  Tests run their shapes on every cell
 * of bptt_cells[], so that a new cell is tested for free: case i of a
 * loop test is cell i % rig_n_cells() on shape i / rig_n_cells()
 * (rig_config), RIG_CASES(shapes) cases in all. */
typedef struct {
    size_t L;
    const char *task;
    size_t T, B, X, H;
    unsigned long seed; /* the cell's index is added */
} shape;

static int rig_n_cells(void)
{
    int n = 0;
    while (bptt_cells[n])
        n++;
    return n;
}

static config rig_config(const shape *shapes, int i)
{
    const int n = rig_n_cells(), k = i % n;
    const shape *p = &shapes[i / n];
    const config c = {bptt_cells[k]->name, p->L, p->task, p->T, p->B, p->X,
                      p->H, p->seed + (unsigned long)k};
    return c;
}

#define RIG_CASES(shapes) \
    (rig_n_cells() * (int)(sizeof(shapes) / sizeof((shapes)[0])))

static void fixed_threads(void)
{
#ifdef _OPENMP
    omp_set_num_threads(THREADS);
#endif
    openblas_set_num_threads(THREADS);
}

typedef struct {
    const config *c;
    char name[64]; /* for messages: "lstm L2 copy T10" */
    bptt_mem *mem;
    bptt_session *session; /* task and model, no optimizer */
    bptt_model *model;
    bptt_batch batch; /* batch 0 */
    bptt_units u;
    size_t hb, sb; /* hidden and internal state bytes */
    int64_t full_peak; /* full BPTT's peak, units */
    bptt_plan *full;   /* full BPTT's plan, where a test keeps one */
} rig;

static void rig_open(rig *r, const config *c)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    snprintf(r->name, sizeof r->name, "%s L%zu %s T%zu", c->cell, c->L,
             c->task, c->T);
    r->mem = bptt_mem_alloc();
    ck_assert_ptr_nonnull(r->mem);
    const bptt_session_spec sp = {.cell = bptt_cell_find(c->cell),
                                  .layers = c->L, .hidden = c->H,
                                  .batch = c->B, .length = c->T,
                                  .input = c->X, .task = c->task,
                                  .seed = c->seed};
    ck_assert_ptr_nonnull(sp.cell);
    char why[256] = "";
    int rc = bptt_session_open(&r->session, &sp, r->mem, why, sizeof why);
    ck_assert_msg(rc == BPTT_OK, "%s: session: %s (%s)", r->name,
                  bptt_strerror(rc), why);
    ck_assert_uint_eq(bptt_session_input(r->session), c->X);
    r->model = bptt_session_model(r->session);
    rc = bptt_session_fetch(r->session, 0);
    ck_assert_int_eq(rc, BPTT_OK);
    r->batch = *bptt_session_batch(r->session);
    r->hb = bptt_model_hidden_bytes(r->model);
    r->sb = bptt_model_internal_bytes(r->model);
    rc = bptt_units_from_bytes(&r->u, (int64_t)r->hb, (int64_t)r->sb);
    ck_assert_int_eq(rc, BPTT_OK);
    r->full_peak = bptt_full_peak(c->T, r->u.hidden_units,
                                  r->u.internal_units);
}

static void rig_close(rig *r)
{
    bptt_plan_free(r->full);
    bptt_session_close(r->session);
    const bptt_mem_stats *st = bptt_mem_stats_get(r->mem);
    ck_assert_msg(st->total_current == 0, "%s: %zu bytes still held",
                  r->name, st->total_current);
    bptt_mem_free(r->mem);
}

#endif
