/* test_session.c: the training session (session.h).
 *
 * - What bptt_session_size announces before anything is allocated is what
 *   the session takes: the tracked bytes of parameters, gradients,
 *   optimizer state, data and working set after an iteration equal
 *   fixed_bytes (the kept copy of the parameters, from malloc, aside), and
 *   the checkpoint sizes are the model's; for every cell, both optimizers
 *   and a text task, whose file is held.
 * - An iteration of a session is bptt_exec_run and the optimizer's step:
 *   its loss and parameters equal those of the same calls made by hand,
 *   bit for bit.
 * - A NaN in the parameters stops the iteration with BPTT_ENONFINITE and
 *   names the loss; an infinite learning rate makes the update's
 *   parameters infinite or NaN and names the parameter arena.
 * - A two-level plan runs through it with the default slow folder, its
 *   gradients and loss those of full BPTT, bit for bit.
 * - Descriptions that cannot be made give BPTT_EINVAL with a sentence, and
 *   nothing allocated; every allocation made to fail gives BPTT_ENOMEM
 *   with every byte released.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, rmdir */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "real_impl.h"
#include "bptt.h"
#include "optim.h"
#include "session.h"
#include "twolevel.h"

void openblas_set_num_threads(int);

static void fixed_threads(void)
{
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    openblas_set_num_threads(2);
}

static const char *text_path = "test_session_text.txt";

static void write_text(void)
{
    FILE *f = fopen(text_path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 40; i++)
        fputs("the quick brown fox jumps over the lazy dog. ", f);
    ck_assert_int_eq(fclose(f), 0);
}

/* a session without its cell: the loop tests run each on every cell of
 * bptt_cells[] (case i: cell i % n, configuration i / n) */
typedef struct {
    const char *task, *optimizer;
    size_t L, X, keep;
} sconf;

static const sconf confs[] = {
    {"copy", "adam", 2, 0, 1},
    {"copy", "sgd", 1, 8, 0},
    {"adding", "sgd", 1, 0, 0},
    {"text:test_session_text.txt", "adam", 2, 0, 1},
    {"copy", NULL, 3, 5, 0},
};
#define N_CONFS (sizeof confs / sizeof confs[0])

static int n_cells(void)
{
    int n = 0;
    while (bptt_cells[n])
        n++;
    return n;
}

static bptt_session_spec spec_of(const sconf *c, int cell)
{
    bptt_session_spec sp = {.cell = bptt_cells[cell],
                            .layers = c->L, .hidden = 12, .batch = 3,
                            .length = 24, .input = c->X, .task = c->task,
                            .optimizer = c->optimizer, .lr = 0.01,
                            .seed = 7, .keep_last_params = (int)c->keep};
    return sp;
}

/* The full BPTT plan for the session's model. */
static bptt_plan *full_plan(const bptt_session_sizes *z, size_t T)
{
    bptt_plan *p = NULL;
    bptt_plan_stats st;
    const int rc = bptt_plan_make("full", T, (int64_t)z->hidden_bytes,
                                  (int64_t)z->internal_bytes,
                                  (int64_t)(z->full_checkpoint_bytes +
                                            z->hidden_bytes),
                                  NULL, &p, &st, NULL);
    ck_assert_int_eq(rc, BPTT_OK);
    return p;
}

START_TEST(test_sizes_announced)
{
    write_text();
    const sconf *c = &confs[_i / n_cells()];
    const bptt_session_spec sp = spec_of(c, _i % n_cells());
    bptt_session_sizes z;
    char why[200];
    ck_assert_int_eq(bptt_session_size(&sp, &z, why, sizeof why), BPTT_OK);
    bptt_mem *mem = bptt_mem_alloc();
    bptt_session *s = NULL;
    ck_assert_int_eq(bptt_session_open(&s, &sp, mem, why, sizeof why),
                     BPTT_OK);
    bptt_model *m = bptt_session_model(s);
    /* text: the vocabulary is only bounded before the file is read */
    if (strncmp(c->task, "text:", 5) == 0) {
        ck_assert_uint_ge(z.input, bptt_session_input(s));
        ck_assert_uint_ge(z.classes, bptt_session_classes(s));
    } else {
        ck_assert_uint_eq(z.input, bptt_session_input(s));
        ck_assert_uint_eq(z.classes, bptt_session_classes(s));
    }
    ck_assert_uint_eq((size_t)z.hidden_bytes, bptt_model_hidden_bytes(m));
    ck_assert_uint_eq((size_t)z.internal_bytes,
                      bptt_model_internal_bytes(m));
    bptt_plan *p = full_plan(&z, sp.length);
    bptt_exec_stats ex;
    bptt_session_fault f;
    ck_assert_int_eq(bptt_session_gradients(s, p, 0, &ex, &f), BPTT_OK);
    ck_assert_int_eq(bptt_session_update(s, &f), BPTT_OK);
    ck_assert_int_eq(!bptt_session_last_params(s), !c->keep);
    const bptt_mem_stats *st = bptt_mem_stats_get(mem);
    double held = 0;
    for (int k = 0; k < BPTT_MEM_N; k++)
        if (k != BPTT_MEM_CHECKPOINT)
            held += (double)st->peak[k];
    const double copy =
        c->keep ? (double)(m->n_params * sizeof(real)) : 0;
    if (strncmp(c->task, "text:", 5) == 0) {
        /* the announced bound counts the largest vocabulary */
        ck_assert_msg(held + copy <= z.fixed_bytes, "held %.0f + %.0f, "
                      "announced %.0f", held, copy, z.fixed_bytes);
    } else {
        ck_assert_msg(held + copy == z.fixed_bytes, "held %.0f + %.0f, "
                      "announced %.0f", held, copy, z.fixed_bytes);
    }
    /* full BPTT's checkpoints, as announced (h(0) is freed at step 1) */
    ck_assert_uint_eq(st->peak[BPTT_MEM_CHECKPOINT],
                      (size_t)z.full_checkpoint_bytes);
    bptt_plan_free(p);
    bptt_session_close(s);
    ck_assert_uint_eq(st->total_current, 0);
    bptt_mem_free(mem);
}
END_TEST

/* The session's iteration against the same calls by hand. */
START_TEST(test_iteration_is_exec_and_step)
{
    const sconf *c = &confs[0];
    const bptt_session_spec sp = spec_of(c, _i);
    bptt_session_sizes z;
    ck_assert_int_eq(bptt_session_size(&sp, &z, NULL, 0), BPTT_OK);
    bptt_mem *ma = bptt_mem_alloc(), *mb = bptt_mem_alloc();
    bptt_session *s = NULL;
    ck_assert_int_eq(bptt_session_open(&s, &sp, ma, NULL, 0), BPTT_OK);
    bptt_task *task = NULL;
    bptt_model *m = NULL;
    bptt_optimizer *o = NULL;
    ck_assert_int_eq(bptt_task_alloc(&task, sp.task, sp.length, sp.batch,
                                     sp.input, sp.seed, mb),
                     BPTT_OK);
    ck_assert_int_eq(bptt_model_alloc(&m, sp.cell, sp.layers, sp.batch,
                                      bptt_task_input_width(task), sp.hidden,
                                      bptt_task_classes(task), sp.seed, mb),
                     BPTT_OK);
    ck_assert_int_eq(bptt_optimizer_alloc(&o, sp.optimizer, sp.lr, m, mb),
                     BPTT_OK);
    bptt_plan *p = NULL;
    bptt_plan_stats pst;
    ck_assert_int_eq(bptt_plan_make("msm", sp.length,
                                    (int64_t)z.hidden_bytes,
                                    (int64_t)z.internal_bytes,
                                    (int64_t)(z.full_checkpoint_bytes / 5),
                                    NULL, &p, &pst, NULL),
                     BPTT_OK);
    for (size_t k = 0; k < 3; k++) {
        bptt_exec_stats ea, eb;
        bptt_session_fault f;
        bptt_batch b;
        ck_assert_int_eq(bptt_session_gradients(s, p, k, &ea, &f), BPTT_OK);
        ck_assert_int_eq(bptt_session_update(s, &f), BPTT_OK);
        ck_assert_int_eq(bptt_task_batch(task, k, &b), BPTT_OK);
        ck_assert_int_eq(bptt_exec_run(p, m, &b, mb, &eb), BPTT_OK);
        bptt_optimizer_step(o, m);
        ck_assert(ea.loss == eb.loss);
        ck_assert_int_eq(ea.forward_ops, eb.forward_ops);
        const bptt_model *ms = bptt_session_model(s);
        ck_assert_int_eq(memcmp(ms->params, m->params,
                                m->n_params * sizeof(real)),
                         0);
    }
    bptt_plan_free(p);
    bptt_optimizer_free(o, mb);
    bptt_model_free(m);
    bptt_task_free(task);
    bptt_session_close(s);
    bptt_mem_free(ma);
    bptt_mem_free(mb);
}
END_TEST

START_TEST(test_nonfinite_named)
{
    bptt_session_spec sp = spec_of(&confs[1], 0);
    bptt_session_sizes z;
    ck_assert_int_eq(bptt_session_size(&sp, &z, NULL, 0), BPTT_OK);
    bptt_plan *p = full_plan(&z, sp.length);
    bptt_mem *mem = bptt_mem_alloc();
    bptt_session *s = NULL;
    bptt_exec_stats ex;
    bptt_session_fault f;
    /* a NaN parameter: the loss is NaN */
    ck_assert_int_eq(bptt_session_open(&s, &sp, mem, NULL, 0), BPTT_OK);
    bptt_session_model(s)->params[3] = NAN;
    ck_assert_int_eq(bptt_session_gradients(s, p, 0, &ex, &f),
                     BPTT_ENONFINITE);
    ck_assert_str_eq(f.arena, "loss");
    ck_assert_int_eq(f.status, BPTT_ENAN);
    bptt_session_close(s);
    /* an infinite learning rate: the update is not finite */
    sp.lr = INFINITY;
    ck_assert_int_eq(bptt_session_open(&s, &sp, mem, NULL, 0), BPTT_OK);
    ck_assert_int_eq(bptt_session_gradients(s, p, 0, &ex, &f), BPTT_OK);
    ck_assert_int_eq(bptt_session_update(s, &f), BPTT_ENONFINITE);
    ck_assert_str_eq(f.arena, "parameter");
    ck_assert_int_ne(f.status, BPTT_OK);
    ck_assert_uint_ge(f.where.count, 1);
    bptt_session_close(s);
    bptt_plan_free(p);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    bptt_mem_free(mem);
}
END_TEST

START_TEST(test_bad_descriptions)
{
    static const struct {
        const char *task, *optimizer;
        size_t input, length;
        const char *says;
    } bad[] = {
        {"copy", "sgd", 1, 10, "does not suit the copy task"},
        {"adding", "sgd", 3, 10, "does not suit the adding task"},
        {"adding", "sgd", 0, 1, "length of 2 or more"},
        {"bogus", "sgd", 0, 10, "unknown task 'bogus'"},
        {"text:", "sgd", 0, 10, "names no file"},
        {"text:/nonexistent/x", "sgd", 0, 10, "cannot read"},
        {"text:/dev/null", "sgd", 0, 10, "not a regular file"},
        {"copy", "rmsprop", 0, 10, "unknown optimizer"},
        {"copy", "sgd", 0, 0, "length"},
    };
    bptt_mem *mem = bptt_mem_alloc();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bptt_session_spec sp = spec_of(&confs[1], 0);
        sp.task = bad[i].task;
        sp.optimizer = bad[i].optimizer;
        sp.input = bad[i].input;
        sp.length = bad[i].length;
        char why[300];
        bptt_session_sizes z;
        ck_assert_int_eq(bptt_session_size(&sp, &z, why, sizeof why),
                         BPTT_EINVAL);
        ck_assert_msg(strstr(why, bad[i].says), "case %zu: '%s' lacks '%s'",
                      i, why, bad[i].says);
        bptt_session *s = (bptt_session *)&z; /* must be reset to NULL */
        ck_assert_int_eq(bptt_session_open(&s, &sp, mem, why, sizeof why),
                         BPTT_EINVAL);
        ck_assert_ptr_null(s);
        ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    }
    bptt_mem_free(mem);
}
END_TEST

START_TEST(test_enomem)
{
    const bptt_session_spec sp = spec_of(&confs[0], 0);
    bptt_mem *mem = bptt_mem_alloc();
    bptt_session *s = NULL;
    size_t f = 1;
    for (;; f++) {
        bptt_mem_fail_at(mem, f);
        const int rc = bptt_session_open(&s, &sp, mem, NULL, 0);
        bptt_mem_fail_at(mem, 0);
        if (rc == BPTT_OK)
            break;
        ck_assert_int_eq(rc, BPTT_ENOMEM);
        ck_assert_ptr_null(s);
        ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    }
    ck_assert_uint_ge(f, 5); /* task, model and adam's moments each failed */
    bptt_session_close(s);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    bptt_mem_free(mem);
}
END_TEST

/* A two-level plan (twolevel.h) runs through the session, its slow level
 * in a temporary folder under $TMPDIR that is gone afterwards: gradients
 * and loss equal full BPTT's bit for bit, the slow level's counts the
 * validator's. */
START_TEST(test_session_two_level)
{
    const bptt_session_spec sp = spec_of(&confs[4], _i);
    char tmp[] = "test_session_tmp-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(tmp));
    ck_assert_int_eq(setenv("TMPDIR", tmp, 1), 0);
    bptt_mem *mem = bptt_mem_alloc();
    bptt_session *s = NULL;
    char why[200] = "";
    ck_assert_msg(bptt_session_open(&s, &sp, mem, why, sizeof why) ==
                      BPTT_OK,
                  "%s", why);
    bptt_model *m = bptt_session_model(s);
    const size_t hb = bptt_model_hidden_bytes(m);
    const size_t sb = bptt_model_internal_bytes(m);
    bptt_units u;
    ck_assert_int_eq(bptt_units_from_bytes(&u, (int64_t)hb, (int64_t)sb),
                     BPTT_OK);
    bptt_plan *full = NULL;
    bptt_plan_stats fs;
    ck_assert_int_eq(bptt_plan_make("full", sp.length, (int64_t)hb,
                                    (int64_t)sb, INT64_MAX / 4, NULL, &full,
                                    &fs, NULL),
                     BPTT_OK);
    bptt_exec_stats ea, eb;
    bptt_session_fault f;
    ck_assert_int_eq(bptt_session_gradients(s, full, 0, &ea, &f), BPTT_OK);
    const size_t bytes = m->n_params * sizeof(real);
    real *g = malloc(bytes);
    ck_assert_ptr_nonnull(g);
    memcpy(g, m->grads, bytes);
    for (int k = 0; k < 2; k++) {
        const bptt_slow_level slow = {k ? 3 * u.internal_units
                                        : BPTT_SLOW_UNLIMITED,
                                      0.5, 0.5};
        bptt_twolevel *tl = NULL;
        ck_assert_int_eq(bptt_twolevel_alloc(&tl, k ? "hsm" : "msm",
                                             sp.length, u.hidden_units,
                                             u.internal_units,
                                             u.hidden_units + u.internal_units,
                                             &slow),
                         BPTT_OK);
        bptt_plan *p = NULL;
        ck_assert_int_eq(bptt_twolevel_plan(tl, &p), BPTT_OK);
        bptt_twolevel_free(tl);
        bptt_plan_stats vs;
        ck_assert_int_eq(bptt_plan_validate(p, &vs), BPTT_OK);
        ck_assert_int_gt(vs.slow_writes, 0);
        ck_assert_int_eq(bptt_session_gradients(s, p, 0, &eb, &f), BPTT_OK);
        ck_assert(ea.loss == eb.loss);
        ck_assert_int_eq(memcmp(g, m->grads, bytes), 0);
        ck_assert_int_eq(eb.slow_writes, vs.slow_writes);
        ck_assert_int_eq(eb.slow_reads, vs.slow_reads);
        ck_assert_uint_eq(eb.slow_bytes_written,
                          (uint64_t)vs.slow_write_units *
                              (uint64_t)u.quantum);
        ck_assert_uint_eq(eb.slow_bytes_read,
                          (uint64_t)vs.slow_read_units * (uint64_t)u.quantum);
        ck_assert_uint_eq(eb.slow_peak_bytes,
                          (size_t)(vs.slow_peak_units * u.quantum));
        ck_assert_uint_eq(eb.checkpoint_peak_bytes,
                          (size_t)(vs.peak_units * u.quantum));
        bptt_plan_free(p);
    }
    free(g);
    bptt_plan_free(full);
    bptt_session_close(s);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    bptt_mem_free(mem);
    ck_assert_int_eq(rmdir(tmp), 0); /* left empty */
}
END_TEST

int main(void)
{
    Suite *su = suite_create("session");
    TCase *tc = tcase_create("session");
    tcase_add_checked_fixture(tc, fixed_threads, NULL);
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_sizes_announced, 0,
                        (int)N_CONFS * n_cells());
    tcase_add_loop_test(tc, test_iteration_is_exec_and_step, 0, n_cells());
    tcase_add_test(tc, test_nonfinite_named);
    tcase_add_test(tc, test_bad_descriptions);
    tcase_add_test(tc, test_enomem);
    tcase_add_loop_test(tc, test_session_two_level, 0, n_cells());
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    remove(text_path);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
