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

void openblas_set_num_threads(int);

#define THREADS 2

typedef struct {
    const char *cell;
    size_t L;
    const char *task;
    size_t T, B, X, H;
    unsigned long seed;
} config;

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
    bptt_task *task;
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
    int rc = bptt_task_alloc(&r->task, c->task, c->T, c->B, c->X, c->seed,
                             r->mem);
    ck_assert_msg(rc == BPTT_TASK_OK, "%s: task: %s", r->name,
                  bptt_task_strerror(rc));
    const size_t X = bptt_task_input_width(r->task);
    const size_t V = bptt_task_classes(r->task);
    ck_assert_uint_eq(X, c->X);
    const bptt_cell_type *cell = bptt_cell_find(c->cell);
    ck_assert_ptr_nonnull(cell);
    rc = bptt_model_alloc(&r->model, cell, c->L, c->B, X, c->H, V, c->seed,
                          r->mem);
    ck_assert_msg(rc == BPTT_OK, "%s: model: %s", r->name, bptt_strerror(rc));
    rc = bptt_task_batch(r->task, 0, &r->batch);
    ck_assert_int_eq(rc, BPTT_TASK_OK);
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
    bptt_model_free(r->model);
    bptt_task_free(r->task);
    const bptt_mem_stats *st = bptt_mem_stats_get(r->mem);
    ck_assert_msg(st->total_current == 0, "%s: %zu bytes still held",
                  r->name, st->total_current);
    bptt_mem_free(r->mem);
}

#endif
