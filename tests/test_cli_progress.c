/* test_cli_progress.c: a `bptt run` as it goes.
 *
 * SIGINT and SIGTERM stop a long run with one line and the trace whole; a
 * terminal on stderr shows one progress line, cleared at the end; the
 * measurement fields (times, CPU shares, steal, op times) there in every
 * format and consistent with each other and with the trace; and
 * --memory-trace, one row per action of the plan the run made.
 *
 * The runner itself uses no OpenMP or BLAS, so Check forks it freely. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include "cli_util.h"

#include "bptt.h"

/* ---- a run as it goes: trace, signals, progress, measurements ----------- */

/* Starts $BPTT with args in dir, stdout and stderr into the files out and
 * err there, SIGINT and SIGTERM at their default actions (a shell may have
 * started this test ignoring them); stderr on the descriptor tty instead
 * when tty >= 0.  Returns the child's pid. */
static pid_t start_in(const char *dir, const char *const *args, int tty)
{
    const char *bptt = getenv("BPTT");
    ck_assert_msg(bptt != NULL, "BPTT is not set (run through make check)");
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const char *argv[64];
        child_argv(bptt, args, argv);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        if (chdir(dir) != 0)
            _exit(126);
        const int out = open("out", O_WRONLY | O_CREAT | O_TRUNC, 0666);
        const int err = tty >= 0 ? tty
                                 : open("err", O_WRONLY | O_CREAT | O_TRUNC,
                                        0666);
        if (out < 0 || err < 0)
            _exit(126);
        dup2(out, 1);
        dup2(err, 2);
        execv(bptt, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* The exit code of pid as a shell reports it (128 + a signal). */
static int wait_status(pid_t pid)
{
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Complete rows in the trace at path so far (0 if it does not exist). */
static int rows_so_far(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int c, lines = 0;
    while ((c = fgetc(f)) != EOF)
        lines += c == '\n';
    fclose(f);
    return lines > 0 ? lines - 1 : 0;
}

/* A long run stopped by SIGINT (loop 0) or SIGTERM (loop 1) once its trace
 * has a row: exit 130 or 143, one line naming the iteration and what was
 * kept, nothing on stdout, the trace whole (rows 1..k, no partial row), no
 * gradient dump. */
START_TEST(test_run_signal)
{
    const int sig = _i == 0 ? SIGINT : SIGTERM;
    const char *name = _i == 0 ? "SIGINT" : "SIGTERM";
    char dir[64], path[512];
    make_scratch(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/t.csv", dir);
    const pid_t pid = start_in(
        dir,
        (const char *[]){"run", "--cell", "rnn", "--length", "20", "--hidden",
                         "8", "--batch", "2", "--iters", "1000000",
                         "--threads", "1", "--trace", "t.csv", "--dump-grads",
                         "d", NULL},
        -1);
    /* wait for the first row: no time limit but the test's own */
    while (rows_so_far(path) < 1) {
        int st = 0;
        const pid_t w = waitpid(pid, &st, WNOHANG);
        ck_assert_msg(w == 0, "bptt ended before its first row (status %d)",
                      st);
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    ck_assert_int_eq(kill(pid, sig), 0);
    const int status = wait_status(pid);
    static result r;
    char file[512];
    snprintf(file, sizeof file, "%s/err", dir);
    ck_assert_int_ge(slurp(file, r.err, sizeof r.err - 1), 0);
    snprintf(file, sizeof file, "%s/out", dir);
    const long out = slurp(file, r.out, sizeof r.out - 1);
    ck_assert_msg(status == 128 + sig, "%s: exit %d: %s", name, status,
                  r.err);
    ck_assert_msg(out == 0, "%s: stdout: %.200s", name, r.out);
    ck_assert_msg(own_lines(r.err) == 1, "%s: %s", name, r.err);
    char want[64];
    snprintf(want, sizeof want, "bptt run: interrupted (%s) after iteration ",
             name);
    const char *line = strstr(r.err, want);
    ck_assert_msg(line != NULL, "%s: %s", name, r.err);
    int it = 0, of = 0;
    ck_assert_msg(sscanf(line + strlen(want), "%d of %d;", &it, &of) == 2 &&
                      it >= 1 && of == 1000000,
                  "%s: %s", name, r.err);
    const int k = kept_trace(dir, r.err); /* whole, k rows, as the line says */
    ck_assert_msg(k == it, "%s: %d rows after iteration %d", name, k, it);
    snprintf(file, sizeof file, "%s/d", dir);
    ck_assert_msg(access(file, F_OK) != 0, "%s: a gradient dump", name);
    remove_scratch(dir);
}
END_TEST

/* With stderr on a terminal (a pseudo-terminal here) the run shows one
 * progress line, redrawn with carriage returns and never a newline, and
 * clears it at the end; the result goes to stdout as always.  (That nothing
 * shows when stderr is not a terminal, every other test checks.) */
START_TEST(test_run_progress_tty)
{
    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    ck_assert_int_ge(master, 0);
    ck_assert_int_eq(grantpt(master), 0);
    ck_assert_int_eq(unlockpt(master), 0);
    const char *name = ptsname(master);
    ck_assert_ptr_nonnull(name);
    /* held open here too, so that the terminal outlives the child */
    const int slave = open(name, O_RDWR | O_NOCTTY);
    ck_assert_int_ge(slave, 0);
    char dir[64];
    make_scratch(dir, sizeof dir);
    const pid_t pid = start_in(
        dir,
        (const char *[]){"run", "--cell", "rnn", "--length", "20", "--hidden",
                         "8", "--batch", "2", "--iters", "3", "--threads",
                         "1", "--format", "json", NULL},
        slave);
    static char tty[1 << 14];
    size_t n = 0;
    int done = 0, st = 0;
    while (!done || n < sizeof tty - 1) {
        struct pollfd p = {.fd = master, .events = POLLIN};
        const int ready = poll(&p, 1, done ? 0 : 100);
        if (ready > 0) {
            const ssize_t got = read(master, tty + n, sizeof tty - 1 - n);
            if (got <= 0)
                break;
            n += (size_t)got;
        } else if (done) {
            break; /* ended, and everything read */
        }
        if (!done && waitpid(pid, &st, WNOHANG) == pid)
            done = 1;
    }
    tty[n] = '\0';
    if (!done)
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    close(slave);
    close(master);
    static char out[1 << 16];
    char file[512];
    snprintf(file, sizeof file, "%s/out", dir);
    const long olen = slurp(file, out, sizeof out - 1);
    remove_scratch(dir);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st,
                  tty);
    ck_assert_msg(olen > 0 && strstr(out, "\"seconds_per_iter\":"),
                  "stdout: %s", out);
    const char *want[] = {"\rbptt run: iteration 1 of 3, loss ",
                          "\rbptt run: iteration 3 of 3, loss ", " s/iter, ",
                          " left"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        ck_assert_msg(strstr(tty, want[i]), "no '%s' in the terminal's '%s'",
                      want[i] + (want[i][0] == '\r'), tty);
    ck_assert_msg(strchr(tty, '\n') == NULL, "a newline on the terminal: %s",
                  tty);
    /* cleared at the end: after the last line, only blanks over it */
    const char *last = strstr(tty, " left");
    for (const char *p; (p = strstr(last + 1, " left")) != NULL;)
        last = p;
    const char *rest = last + 5;
    rest += strspn(rest, " "); /* blanks over a longer line before */
    const size_t blanks = rest[0] == '\r' ? strspn(rest + 1, " ") : 0;
    ck_assert_msg(blanks > 0 && strcmp(rest + 1 + blanks, "\r") == 0,
                  "not cleared: '%s'", tty);
}
END_TEST

static const char *const timing_fields[] = {
    "seconds_per_iter", "seconds_first_iter", "seconds_min", "seconds_max",
    "seconds_trend", "cpu_share_median", "cpu_share_min", "steal_seconds",
    "disturbed_iters", "forward_seconds", "backward_seconds",
    "forward_step_seconds", "backward_step_seconds"};

/* The measurement fields of a run: there in every format and consistent
 * with each other and with the trace (no timing thresholds: a loaded
 * machine changes the values, not their relations). */
START_TEST(test_run_measurements)
{
    const char *iters[] = {"1", "3", "9"};
    const char *threads[] = {"1", "2", "2"};
    for (int c = 0; c < 3; c++) {
        char dir[64], path[512];
        make_scratch(dir, sizeof dir);
        snprintf(path, sizeof path, "%s/t.csv", dir);
        static result r;
        run_in(&r, dir, NULL,
               (const char *[]){"run", "--cell", "lstm", "--length", "30",
                                "--hidden", "16", "--batch", "4", "--iters",
                                iters[c], "--threads", threads[c], "--trace",
                                "t.csv", "--format", "json", NULL});
        ck_assert_msg(r.status == 0, "%s", r.err);
        const int n = atoi(iters[c]), th = atoi(threads[c]);
        trace_row rows[16];
        ck_assert_int_eq(check_trace(path, rows, 16), n);
        remove_scratch(dir);
        const double med = json_num(r.out, "seconds_per_iter");
        const double lo = json_num(r.out, "seconds_min");
        const double hi = json_num(r.out, "seconds_max");
        const double trend = json_num(r.out, "seconds_trend");
        const double sh_med = json_num(r.out, "cpu_share_median");
        const double sh_min = json_num(r.out, "cpu_share_min");
        const double steal = json_num(r.out, "steal_seconds");
        const double dist = json_num(r.out, "disturbed_iters");
        ck_assert_msg(0 < lo && lo <= med && med <= hi, "%s", r.out);
        ck_assert_msg(0 < sh_min && sh_min <= sh_med && sh_med <= 1.05,
                      "%s", r.out);
        ck_assert_msg(steal >= 0 && trend > 0, "%s", r.out);
        /* the op times: positive, within the iterations' wall time (a
         * median each: within one iteration's when one is timed), and
         * per step the medians over the ops */
        const double fs = json_num(r.out, "forward_seconds");
        const double bs = json_num(r.out, "backward_seconds");
        const double fops = json_num(r.out, "forward_ops");
        const double bops = json_num(r.out, "backward_ops");
        ck_assert_msg(fs > 0 && bs > 0 && fs <= hi && bs <= hi, "%s", r.out);
        if (n <= 2)
            ck_assert_msg(fs + bs <= med, "%s", r.out);
        ck_assert_msg(fabs(json_num(r.out, "forward_step_seconds") * fops -
                           fs) <= 1e-7 * fs &&
                          fabs(json_num(r.out, "backward_step_seconds") *
                                   bops - bs) <= 1e-7 * bs,
                      "%s", r.out);
        const int timed = n > 1 ? n - 1 : 1;
        ck_assert_msg(dist == floor(dist) && dist >= 0 && dist <= timed,
                      "%s", r.out);
        if (timed < 4)
            ck_assert_msg(trend == 1, "%s", r.out);
        if (n == 1)
            ck_assert_msg(lo == med && med == hi, "%s", r.out);
        /* the trace's rows (6 decimals) agree with the summary */
        double tlo = 1e300, thi = 0, tsteal = 0;
        for (int i = n > 1 ? 1 : 0; i < n; i++) {
            tlo = fmin(tlo, rows[i].seconds);
            thi = fmax(thi, rows[i].seconds);
            tsteal += rows[i].steal_seconds;
            ck_assert_msg(rows[i].cpu_seconds <=
                              rows[i].seconds * th * 1.05 + 2e-6,
                          "row %d: cpu %g s in %g s", i + 1,
                          rows[i].cpu_seconds, rows[i].seconds);
        }
        ck_assert_msg(fabs(tlo - lo) < 2e-6 && fabs(thi - hi) < 2e-6 &&
                          fabs(tsteal - steal) < 1e-5 * n,
                      "trace %g..%g steal %g, result %s", tlo, thi, tsteal,
                      r.out);
        ck_assert_msg(fabs(rows[0].seconds -
                           json_num(r.out, "seconds_first_iter")) < 2e-6,
                      "%s", r.out);
        /* two timed iterations: their mean, never the larger one (the
         * trace's 6 decimals: within 1e-6) */
        if (n == 3)
            ck_assert_msg(fabs(med - 0.5 * (rows[1].seconds +
                                            rows[2].seconds)) <= 1.01e-6,
                          "median %.9g of %.6f and %.6f", med,
                          rows[1].seconds, rows[2].seconds);
    }
    /* csv and text carry the same fields */
    static result r;
    const char *fmt[] = {"csv", "text"};
    for (int f = 0; f < 2; f++) {
        run(&r, (const char *[]){"run", "--cell", "rnn", "--length", "10",
                                 "--hidden", "4", "--batch", "2", "--iters",
                                 "2", "--threads", "1", "--format", fmt[f],
                                 NULL});
        ck_assert_msg(r.status == 0, "%s", r.err);
        for (size_t i = 0; i < sizeof timing_fields / sizeof *timing_fields;
             i++) {
            char pat[64];
            snprintf(pat, sizeof pat, f == 0 ? ",%s," : "\n%s ",
                     timing_fields[i]);
            ck_assert_msg(strstr(r.out, pat), "%s: no %s in %s", fmt[f],
                          timing_fields[i], r.out);
        }
        /* one timed iteration: text says its median is not robust */
        ck_assert_msg((strstr(r.out, "\nnote ") != NULL) == (f == 1),
                      "%s: %s", fmt[f], r.out);
    }
    /* the default: a warm-up and five timed iterations, no note */
    static const char *const counts[][3] = {
        {NULL, "6", "5"}, {"5", "5", "4"}, {"6", "6", "5"}, {"1", "1", "1"}};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        const char *argv[16] = {"run", "--cell", "rnn", "--length", "10",
                                "--hidden", "4", "--batch", "2",
                                "--threads", "1", "--format", "text"};
        size_t k = 13;
        if (counts[c][0]) {
            argv[k++] = "--iters";
            argv[k++] = counts[c][0];
        }
        argv[k] = NULL;
        run(&r, argv);
        ck_assert_msg(r.status == 0, "%s", r.err);
        char want[160];
        snprintf(want, sizeof want, "\n%-32s %s\n%-32s %s\n", "iters",
                 counts[c][1], "timed_iters", counts[c][2]);
        ck_assert_msg(strstr(r.out, want), "no '%s' in %s", want, r.out);
        const int few = atoi(counts[c][2]) < 5;
        ck_assert_msg((strstr(r.out, "\nnote ") != NULL) == few, "%s",
                      r.out);
    }
}
END_TEST

/* --memory-trace: the last iteration's actions, one row each, exactly the
 * plan's (bptt_plan_make with the run's sizes and budget makes it again);
 * checkpoint bytes within the budget, reaching the run's measured peak and
 * never passing it, rising through full BPTT's forward sweep; forward ops
 * ending at the plan's count, the recomputations of a small budget
 * included; an existing file refused and left as it was. */
START_TEST(test_run_memory_trace)
{
    static const char *const cases[][2] = {
        {"full", "100%"}, {"chen", "100%"}, {"hsm", "20%"}, {"msm", "10%"}};
    char dir[64], path[512];
    make_scratch(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/m.csv", dir);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        static result r;
        run_in(&r, dir, NULL,
               (const char *[]){"run", "--cell", "lstm", "--length", "40",
                                "--hidden", "8", "--batch", "2", "--iters",
                                "3", "--threads", "1", "--strategy",
                                cases[c][0], "--memory", cases[c][1],
                                "--memory-trace", "m.csv", "--format",
                                "json", NULL});
        ck_assert_msg(r.status == 0 && !*r.err, "%s: %s", cases[c][0],
                      r.err);
        const int64_t hb = (int64_t)json_num(r.out, "hidden_state_bytes");
        const int64_t sb = (int64_t)json_num(r.out, "internal_state_bytes");
        const int64_t budget = (int64_t)json_num(r.out, "memory_budget_bytes");
        const size_t peak = (size_t)json_num(r.out, "checkpoint_peak_bytes");
        const int64_t fops = (int64_t)json_num(r.out, "forward_ops");
        bptt_plan *plan = NULL;
        bptt_plan_stats ps;
        ck_assert_int_eq(bptt_plan_make(cases[c][0], 40, hb, sb, budget,
                                        NULL, &plan, &ps, NULL),
                         BPTT_OK);
        ck_assert_int_eq(ps.forward_ops, fops);
        if (strcmp(cases[c][0], "msm") == 0)
            ck_assert_int_gt(fops, 40); /* recomputations */
        size_t len;
        char *buf = read_all(path, &len);
        const char *header = "action,kind,step,checkpoint_bytes,total_bytes,"
                             "forward_ops_so_far,seconds\n";
        ck_assert_msg(strncmp(buf, header, strlen(header)) == 0, "%.200s",
                      buf);
        ck_assert(len > 0 && buf[len - 1] == '\n');
        size_t k = 0, most = 0, prev = 0;
        long long so_far = 0;
        int backward_seen = 0;
        for (const char *line = buf + strlen(header); *line; k++) {
            size_t action, ck, total;
            unsigned step;
            long long f;
            double sec;
            char kind[32];
            int used = 0;
            ck_assert_msg(sscanf(line, "%zu,%31[a-z_],%u,%zu,%zu,%lld,%lf%n",
                                 &action, kind, &step, &ck, &total, &f, &sec,
                                 &used) == 7 &&
                              line[used] == '\n',
                          "%s: row %zu: %.100s", cases[c][0], k, line);
            ck_assert_msg(k < plan->n_actions, "%s: more rows than the "
                          "plan's %zu actions", cases[c][0], plan->n_actions);
            const int op = (int)plan->actions[k].op;
            ck_assert_msg(action == k && strcmp(kind, bptt_op_name(op)) == 0 &&
                              step == plan->actions[k].step,
                          "%s: row %zu: %.100s, the plan's action is %s %u",
                          cases[c][0], k, line, bptt_op_name(op),
                          plan->actions[k].step);
            ck_assert_msg(ck <= peak && ck <= total &&
                              (int64_t)ck <= budget,
                          "%s: row %zu: %zu bytes, peak %zu, budget %lld",
                          cases[c][0], k, ck, peak, (long long)budget);
            ck_assert_int_eq(f, so_far + (op == BPTT_ADVANCE));
            so_far = f;
            ck_assert(sec >= 0 && (sec == 0 || op == BPTT_ADVANCE ||
                                   op == BPTT_BACKWARD));
            backward_seen |= op == BPTT_BACKWARD;
            if (strcmp(cases[c][0], "full") == 0 && k > 0 && !backward_seen &&
                !(op == BPTT_FREE_HIDDEN && step == 0))
                ck_assert_msg(ck >= prev, "full: row %zu drops to %zu bytes",
                              k, ck);
            most = ck > most ? ck : most;
            prev = ck;
            line += used + 1;
        }
        ck_assert_uint_eq(k, plan->n_actions);
        ck_assert_uint_eq(most, peak);
        ck_assert_uint_eq(prev, 0);
        ck_assert_int_eq(so_far, fops);
        /* an existing file is refused, and left as it was */
        static result again;
        run_in(&again, dir, NULL,
               (const char *[]){"run", "--length", "40", "--hidden", "8",
                                "--memory-trace", "m.csv", NULL});
        ck_assert_int_eq(again.status, 2);
        ck_assert_msg(strstr(again.err, "'m.csv' exists") &&
                          own_lines(again.err) == 1 && !*again.out,
                      "%s", again.err);
        size_t len2;
        char *buf2 = read_all(path, &len2);
        ck_assert(len2 == len && memcmp(buf, buf2, len) == 0);
        free(buf2);
        free(buf);
        bptt_plan_free(plan);
        ck_assert_int_eq(unlink(path), 0);
    }
    remove_scratch(dir);
}
END_TEST

static Suite *cli_progress_suite(void)
{
    Suite *s = suite_create("cli progress");
    TCase *tc = tcase_create("a run as it goes");
    tcase_add_loop_test(tc, test_run_signal, 0, 2);
    tcase_add_test(tc, test_run_progress_tty);
    tcase_add_test(tc, test_run_measurements);
    tcase_add_test(tc, test_run_memory_trace);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_progress_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
