/* test_cli_fail.c: `bptt` failing cleanly while it works.
 *
 * The NaN and infinity scan (src/train/finite.c, compiled in here) and a
 * diverging run it stops (the trace of the iterations before kept, nothing
 * else written); plans too large for this machine refused by `bptt run`;
 * every allocation of small `bptt run`s, `bptt plan`s (one- and two-level)
 * and `bptt plan --online`s made to fail in turn (--fail-alloc): one line,
 * exit 1, nothing on stdout, no file left; and an output that cannot be
 * written (/dev/full; skipped where there is none).
 *
 * The runner itself uses no OpenMP or BLAS, so Check forks it freely. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include "cli_util.h"

/* The NaN and infinity scan of `bptt run` is a pure function of an arena
 * and the model's tensor table, compiled in here and tested directly. */
#include "train/finite.c"

/* ---- NaN and infinity, failing allocations, unwritable output ----------- */

/* A run whose learning rate makes the weights overflow stops at the first
 * iteration with a NaN or an infinity and names it; the trace of the
 * iterations before it is kept (and the line says so), the result and the
 * gradient dump are not written. */
START_TEST(test_run_diverges)
{
    /* sgd: the loss overflows at iteration 3, adam: it is NaN at 2 (here,
     * and under valgrind; wherever it shows, the line names it) */
    const char *opt[] = {"sgd", "adam"};
    const char *lr[] = {"1e38", "1e38"};
    for (int k = 0; k < 2; k++) {
        char dir[64], before[8192] = "", after[8192] = "";
        make_scratch(dir, sizeof dir);
        list_tree(dir, "", before, sizeof before);
        static result r;
        run_in(&r, dir, NULL,
               (const char *[]){"run", "--cell", "rnn", "--length", "20",
                                "--hidden", "8", "--batch", "4", "--iters",
                                "10", "--threads", "1", "--optimizer",
                                opt[k], "--lr", lr[k], "--trace", "t.csv",
                                "--dump-grads", "d", "--format", "json",
                                NULL});
        const int kept = kept_trace(dir, r.err);
        list_tree(dir, "", after, sizeof after);
        remove_scratch(dir);
        ck_assert_msg(r.status == 1, "%s: exit %d (%s)", opt[k], r.status,
                      r.err);
        ck_assert_msg(own_lines(r.err) == 1, "%s: %s", opt[k], r.err);
        ck_assert_msg(r.out[0] == '\0', "%s: stdout: %s", opt[k], r.out);
        ck_assert_msg(strcmp(before, after) == 0, "%s: files written:\n%s",
                      opt[k], after);
        int it, of;
        ck_assert_msg(sscanf(r.err, "bptt run: iteration %d of %d:", &it,
                             &of) == 2 &&
                          it >= 1 && it <= 10 && of == 10,
                      "%s: %s", opt[k], r.err);
        ck_assert_msg(strstr(r.err, "the training diverged"), "%s: %s",
                      opt[k], r.err);
        ck_assert_msg(kept == it - 1, "%s: %d rows kept: %s", opt[k], kept,
                      r.err);
        ck_assert_msg(kept > 0 || strstr(r.err, "; nothing was written\n"),
                      "%s: %s", opt[k], r.err);
        const char *what = strstr(r.err, ": ") + 2;
        what = strstr(what, ": ") + 2; /* after "iteration K of N: " */
        char tensor[16];
        size_t row, col;
        if (strncmp(what, "the loss is ", 12) == 0) {
            ck_assert_msg(strncmp(what + 12, "NaN;", 4) == 0 ||
                              strncmp(what + 12, "infinite;", 9) == 0,
                          "%s: %s", opt[k], r.err);
        } else {
            const char *name = strncmp(what, "gradient ", 9) == 0 ? what + 9
                               : strncmp(what, "after the update, parameter ",
                                         28) == 0
                                   ? what + 28
                                   : NULL;
            ck_assert_msg(name != NULL, "%s: %s", opt[k], r.err);
            ck_assert_msg(sscanf(name, "%15[A-Za-z0-9][%zu, %zu] is", tensor,
                                 &row, &col) == 3,
                          "%s: no tensor named: %s", opt[k], r.err);
            ck_assert_msg(strchr("Wb", tensor[0]) != NULL, "%s: %s", opt[k],
                          r.err);
        }
    }
}
END_TEST

/* The scan itself (src/train/finite.c, compiled in above): the first value that
 * is not finite, named by tensor, row and column, and the count. */
START_TEST(test_finite_scan)
{
    bptt_model m;
    memset(&m, 0, sizeof m);
    const struct {
        const char *name;
        size_t rows, cols;
    } t[] = {{"W0", 3, 4}, {"b0", 3, 1}, {"Wo", 2, 3}, {"bo", 2, 1}};
    for (size_t k = 0; k < 4; k++) {
        bptt_tensor *x = &m.tensor[m.n_tensors++];
        snprintf(x->name, sizeof x->name, "%s", t[k].name);
        x->offset = m.n_params;
        x->rows = t[k].rows;
        x->cols = t[k].cols;
        m.n_params += t[k].rows * t[k].cols;
    }
    ck_assert_uint_eq(m.n_params, 23);
    real a[23];
    for (size_t i = 0; i < 23; i++)
        a[i] = (real)i - (real)11.5;
    bptt_nonfinite w;
    ck_assert_int_eq(bptt_finite_scan(&m, a, &w), BPTT_OK);
    ck_assert_uint_eq(bptt_finite_first(a, 23), 23);
    a[13] = (real)NAN;    /* b0[1] */
    a[20] = (real)-INFINITY; /* Wo[1, 2] */
    ck_assert_int_eq(bptt_finite_scan(&m, a, &w), BPTT_ENAN);
    ck_assert_str_eq(w.tensor, "b0");
    ck_assert_uint_eq(w.offset, 13);
    ck_assert_uint_eq(w.row, 1);
    ck_assert_uint_eq(w.col, 0);
    ck_assert_uint_eq(w.count, 2);
    ck_assert(isnan(w.value));
    a[13] = 0;
    ck_assert_int_eq(bptt_finite_scan(&m, a, &w), BPTT_EINF);
    ck_assert_str_eq(w.tensor, "Wo");
    ck_assert_uint_eq(w.row, 1);
    ck_assert_uint_eq(w.col, 2);
    ck_assert_uint_eq(w.count, 1);
    ck_assert(w.value < 0);
    a[0] = (real)INFINITY; /* W0[0, 0] */
    ck_assert_int_eq(bptt_finite_scan(&m, a, NULL), BPTT_EINF);
    ck_assert_int_eq(bptt_finite_scan(&m, a, &w), BPTT_EINF);
    ck_assert_str_eq(w.tensor, "W0");
    ck_assert_uint_eq(w.count, 2);
    ck_assert_int_eq(bptt_finite_value(1e300), BPTT_OK);
    ck_assert_int_eq(bptt_finite_value(INFINITY), BPTT_EINF);
    ck_assert_int_eq(bptt_finite_value(NAN), BPTT_ENAN);
    ck_assert_str_eq(bptt_strerror(BPTT_ENAN), "NaN");
}
END_TEST

/* Every tracked allocation of a small run, made to fail in turn: each ends
 * in one line, exit 1 and no result or dump (a trace only of the
 * iterations before, as the line says); one past the last, the run
 * succeeds. */
static void walk_allocations(const char *const *base, int min_allocs)
{
    char dir[64], before[8192] = "", after[8192] = "";
    make_scratch(dir, sizeof dir);
    list_tree(dir, "", before, sizeof before);
    static result r;
    int n, traced = 0, kept = 0;
    for (int k = 0; base[k]; k++)
        traced |= strcmp(base[k], "--trace") == 0;
    for (n = 1; n < 5000; n++) {
        const char *args[48];
        int k = 0;
        for (; base[k]; k++)
            args[k] = base[k];
        char num[24];
        snprintf(num, sizeof num, "%d", n);
        args[k++] = "--fail-alloc";
        args[k++] = num;
        args[k] = NULL;
        run_in(&r, dir, NULL, args);
        if (r.status == 0)
            break;
        if (traced)
            kept += kept_trace(dir, r.err) > 0;
        after[0] = '\0';
        list_tree(dir, "", after, sizeof after);
        ck_assert_msg(r.status == 1, "allocation %d: exit %d: %s", n,
                      r.status, r.err);
        ck_assert_msg(own_lines(r.err) == 1, "allocation %d: %s", n, r.err);
        ck_assert_msg(strstr(r.err, "out of memory (--fail-alloc)"),
                      "allocation %d: %s", n, r.err);
        ck_assert_msg(r.out[0] == '\0', "allocation %d: stdout: %s", n,
                      r.out);
        ck_assert_msg(strcmp(before, after) == 0,
                      "allocation %d: files written:\n%s", n, after);
    }
    remove_scratch(dir);
    ck_assert_msg(r.status == 0, "the run never succeeded: %s", r.err);
    ck_assert_msg(n > min_allocs, "only %d tracked allocations", n - 1);
    ck_assert_int_eq(count_lines(r.out), 1); /* json */
    /* the executor allocates in every iteration: the second one's failures
     * keep the first one's row */
    ck_assert_msg(!traced || kept > 0, "no failure kept a trace");
}

/* bptt run's refusals of a plan too large for this machine, at lengths
 * sized from its physical memory P so that every check before the one
 * tested passes: an LSTM of H = 8 on the adding task with B = 1 holds
 * about 29 bytes a step besides its checkpoints (data, the executor's step
 * tables) and 224 bytes a step of full BPTT's checkpoints; a plan of c
 * forward ops takes up to (4 c + t + 3) 8-byte actions.
 * - full BPTT (c = t) at t = P / 273: the run (253 t) fits, the plan (40 t)
 *   is under half of P, both together (293 t) do not: "with its plan";
 * - chen at 1% (c about 2 t) at t = P / 50: the run (about 31 t) fits, the
 *   plan (about 72 t) is more than half of P. */
START_TEST(test_run_refused_plans)
{
    const double phys = (double)sysconf(_SC_PHYS_PAGES) *
                        (double)sysconf(_SC_PAGESIZE);
    char t1[32], t2[32];
    snprintf(t1, sizeof t1, "%.0f", phys / 273);
    snprintf(t2, sizeof t2, "%.0f", phys / 50);
    result r;
    run(&r, (const char *[]){"run", "--length", t1, "--task", "adding",
                             "--batch", "1", "--hidden", "8", "--memory",
                             "100%", "--strategy", "full", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "with its plan"), "t = %s: %s", t1, r.err);
    run(&r, (const char *[]){"run", "--length", t2, "--task", "adding",
                             "--batch", "1", "--hidden", "8", "--strategy",
                             "chen", "--memory", "1%", NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "more than half of this machine's"),
                  "t = %s: %s", t2, r.err);
}
END_TEST

START_TEST(test_run_fail_alloc)
{
    walk_allocations(
        (const char *[]){"run", "--cell", "lstm", "--layers", "2", "--length",
                         "6", "--hidden", "3", "--batch", "2", "--iters", "2",
                         "--memory", "40%", "--optimizer", "adam",
                         "--threads", "1", "--format", "json", "--trace",
                         "t.csv", "--dump-grads", "d", NULL},
        20);
    walk_allocations(
        (const char *[]){"run", "--cell", "rnn", "--length", "8", "--hidden",
                         "2", "--batch", "1", "--iters", "1", "--strategy",
                         "chen", "--threads", "1", "--task", "text:text.txt",
                         "--format", "json", NULL},
        10);
    /* a two-level plan, its slow level's file in the scratch folder:
     * every failure leaves the folder as it was */
    walk_allocations(
        (const char *[]){"run", "--cell", "gru", "--length", "12",
                         "--hidden", "3", "--batch", "2", "--iters", "2",
                         "--memory", "2slots", "--disk", "inf", "--disk-dir",
                         ".", "--threads", "1", "--format", "json", NULL},
        10);
}
END_TEST

/* Every allocation of the planner in a small `bptt plan`, made to fail in
 * turn (threads 2: the wavefront build allocates in both; a budget below
 * where the closed form takes over, so that a table is built; and the
 * two-level planner's, --disk): one line, exit 1, nothing on stdout; one
 * past the last, the plan is printed. */
START_TEST(test_plan_fail_alloc)
{
    static const char *const strategies[] = {"msm", "hsm", "msm-paper",
                                             "hsm", "msm"};
    static const char *const disks[] = {NULL, NULL, NULL, "4", "inf"};
    static result r;
    int n;
    for (n = 1; n < 5000; n++) {
        char num[24];
        snprintf(num, sizeof num, "%d", n);
        run(&r, (const char *[]){"plan", "--strategy", strategies[_i],
                                 "--length", "150", "--alpha", "4",
                                 "--memory", "5%", "--threads", "2",
                                 "--format", "json", "--actions",
                                 "--fail-alloc", num,
                                 disks[_i] ? "--disk" : NULL, disks[_i],
                                 NULL});
        if (r.status == 0)
            break;
        ck_assert_msg(r.status == 1, "allocation %d: exit %d: %s", n,
                      r.status, r.err);
        ck_assert_msg(own_lines(r.err) == 1, "allocation %d: %s", n, r.err);
        ck_assert_msg(strstr(r.err, "out of memory"), "allocation %d: %s", n,
                      r.err);
        ck_assert_msg(r.out[0] == '\0', "allocation %d: stdout: %s", n,
                      r.out);
    }
    ck_assert_msg(r.status == 0, "the plan never succeeded: %s", r.err);
    ck_assert_msg(n > 4, "only %d planner allocations", n - 1);
    ck_assert_int_eq(count_lines(r.out), 1);
}
END_TEST

/* Output that cannot be written (a full disk) is a failure, not a
 * success. */
START_TEST(test_unwritable_stdout)
{
    if (access("/dev/full", W_OK) != 0)
        return;
    static result r;
    run_in(&r, NULL, "/dev/full",
           (const char *[]){"plan", "--length", "10", NULL});
    ck_assert_int_eq(r.status, 1);
    ck_assert_int_eq(own_lines(r.err), 1);
    ck_assert_ptr_nonnull(strstr(r.err, "cannot write the output"));
    run_in(&r, NULL, "/dev/full", (const char *[]){"--help", NULL});
    ck_assert_int_eq(r.status, 1);
}
END_TEST

/* Every allocation of the online planner, the offline optimum beside it
 * and the validator in a small `bptt plan --online` (and its curve), made
 * to fail in turn: one line, exit 1, nothing on stdout; one past the
 * last, the output is printed. */
START_TEST(test_online_fail_alloc)
{
    static const char *const strategies[] = {"msm", "hsm", "msm", "hsm"};
    static result r;
    int n;
    for (n = 1; n < 5000; n++) {
        char num[24];
        snprintf(num, sizeof num, "%d", n);
        run(&r, (const char *[]){"plan", "--online", "--strategy",
                                 strategies[_i], "--length", "150",
                                 "--alpha", "4", "--memory", "5%",
                                 "--format", "json",
                                 _i < 2 ? "--actions" : "--curve",
                                 "--fail-alloc", num, NULL});
        if (r.status == 0)
            break;
        ck_assert_msg(r.status == 1, "allocation %d: exit %d: %s", n,
                      r.status, r.err);
        ck_assert_msg(own_lines(r.err) == 1, "allocation %d: %s", n, r.err);
        ck_assert_msg(strstr(r.err, "out of memory"), "allocation %d: %s", n,
                      r.err);
        ck_assert_msg(r.out[0] == '\0', "allocation %d: stdout: %s", n,
                      r.out);
    }
    ck_assert_msg(r.status == 0, "never succeeded: %s", r.err);
    ck_assert_msg(n > 2, "only %d allocations", n - 1);
    ck_assert_int_eq(count_lines(r.out), _i < 2 ? 1 : 150);
}
END_TEST

static Suite *cli_fail_suite(void)
{
    Suite *s = suite_create("cli failures");
    TCase *tc = tcase_create("failures while running");
    tcase_add_test(tc, test_finite_scan);
    tcase_add_test(tc, test_run_diverges);
    tcase_add_test(tc, test_run_fail_alloc);
    tcase_add_test(tc, test_run_refused_plans);
    tcase_add_loop_test(tc, test_plan_fail_alloc, 0, 5);
    tcase_add_loop_test(tc, test_online_fail_alloc, 0, 4);
    tcase_add_test(tc, test_unwritable_stdout);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_fail_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
