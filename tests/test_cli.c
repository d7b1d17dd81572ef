/* test_cli.c: the `bptt` command as a user meets it.
 *
 * Runs the built binary ($BPTT, set by `make check`) as a child process:
 * a table of bad inputs, each of which must give exit 2 (usage) or 3
 * (infeasible budget), exactly one line on stderr that names the problem,
 * and nothing on stdout; then the outputs of good runs (formats, fields,
 * --curve, --actions). */
#define _POSIX_C_SOURCE 200809L
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    int status;
    char out[1 << 16];
    char err[1 << 12];
} result;

static void drain(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd, buf + n, cap - 1 - n)) > 0) {
        n += (size_t)r;
        if (n == cap - 1) { /* keep the first part, discard the rest */
            char sink[4096];
            while (read(fd, sink, sizeof sink) > 0)
                ;
            break;
        }
    }
    buf[n] = '\0';
}

/* Runs $BPTT with args (NULL-terminated); stdout and stderr captured.  The
 * captures are read one after the other, so outputs stay small here. */
static void run(result *r, const char *const *args)
{
    const char *bptt = getenv("BPTT");
    ck_assert_msg(bptt != NULL, "BPTT is not set (run through make check)");
    int po[2], pe[2];
    ck_assert_int_eq(pipe(po), 0);
    ck_assert_int_eq(pipe(pe), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const char *argv[64];
        int n = 0;
        argv[n++] = bptt;
        for (; args[n - 1] && n < 63; n++)
            argv[n] = args[n - 1];
        argv[n] = NULL;
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        execv(bptt, (char *const *)argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    drain(po[0], r->out, sizeof r->out);
    drain(pe[0], r->err, sizeof r->err);
    close(po[0]);
    close(pe[0]);
    int st;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- bad input ---------------------------------------------------------- */

typedef struct {
    const char *args[12];
    int status;
    const char *says; /* a phrase the one error line must contain */
} bad_case;

static const bad_case bad_cases[] = {
    {{NULL}, 2, "usage"},
    {{"frobnicate", NULL}, 2, "unknown command"},
    {{"plan", NULL}, 2, "--length is required"},
    {{"plan", "--length", "0", NULL}, 2, "from 1"},
    {{"plan", "--length", "-5", NULL}, 2, "out of range"},
    {{"plan", "--length", "abc", NULL}, 2, "not an integer"},
    {{"plan", "--length", "", NULL}, 2, "not an integer"},
    {{"plan", "--length", "12x", NULL}, 2, "not an integer"},
    {{"plan", "--length", "99999999999999999999999", NULL}, 2, "out of range"},
    {{"plan", "--length", NULL}, 2, "needs a value"},
    {{"plan", "--length", "10", "--strategy", "magic", NULL}, 2,
     "unknown strategy"},
    {{"plan", "--length", "10", "--memory", "", NULL}, 2, "budget"},
    {{"plan", "--length", "10", "--memory", "lots", NULL}, 2,
     "is not a budget"},
    {{"plan", "--length", "10", "--memory", "-3", NULL}, 2, "out of range"},
    {{"plan", "--length", "10", "--memory", "x%", NULL}, 2, "is not a budget"},
    {{"plan", "--length", "10", "--memory", "-5%", NULL}, 2,
     "is not a budget"},
    {{"plan", "--length", "10", "--alpha", "0", NULL}, 2, "--alpha"},
    {{"plan", "--length", "10", "--alpha", "1.5", NULL}, 2, "not an integer"},
    {{"plan", "--length", "10", "--format", "xml", NULL}, 2, "unknown format"},
    {{"plan", "--length", "10", "--actions", "--curve", NULL}, 2,
     "exclude each other"},
    {{"plan", "--length", "10", "--actions", "--memory", "3,4", NULL}, 2,
     "one budget"},
    {{"plan", "--length", "10", "--segment", "3", NULL}, 2, "chen only"},
    {{"plan", "--length", "10", "--bogus", NULL}, 2, "unknown option"},
    {{"plan", "--length", "10", "extra", NULL}, 2, "unexpected argument"},
    {{"plan", "--length", "10", "--threads", "0", NULL}, 2, "--threads"},
    {{"plan", "--length", "10", "--memory", "0", NULL}, 3,
     "smallest feasible budget is 1 slots"},
    {{"plan", "--strategy", "chen", "--length", "1000", "--alpha", "4",
      "--memory", "10", NULL},
     3, "smallest feasible budget is 155 slots"},
    {{"plan", "--strategy", "full", "--length", "1000", "--alpha", "4",
      "--memory", "50%", NULL},
     3, "smallest feasible budget is 3996 slots"},
};

START_TEST(test_bad_input)
{
    const bad_case *c = &bad_cases[_i];
    result r;
    run(&r, c->args);
    ck_assert_msg(r.status == c->status, "case %d: exit %d, want %d (%s)", _i,
                  r.status, c->status, r.err);
    ck_assert_msg(count_lines(r.err) == 1, "case %d: %d stderr lines: %s", _i,
                  count_lines(r.err), r.err);
    ck_assert_msg(strstr(r.err, c->says) != NULL,
                  "case %d: stderr lacks '%s': %s", _i, c->says, r.err);
    ck_assert_msg(r.out[0] == '\0', "case %d: stdout not empty: %s", _i,
                  r.out);
}
END_TEST

/* ---- good runs ---------------------------------------------------------- */

START_TEST(test_help_and_version)
{
    result r;
    run(&r, (const char *[]){"--help", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "plan"));
    run(&r, (const char *[]){"plan", "--help", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "--memory"));
    run(&r, (const char *[]){"--version", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "bptt 0."));
}
END_TEST

START_TEST(test_json_fields)
{
    result r;
    run(&r, (const char *[]){"plan", "--strategy", "msm", "--length", "100",
                             "--memory", "10", "--alpha", "2", "--format",
                             "json", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(count_lines(r.out), 1);
    const char *fields[] = {
        "\"strategy\":\"msm\"", "\"length\":100", "\"alpha\":2",
        "\"memory\":10", "\"forward_ops\":", "\"backward_ops\":100",
        "\"peak_slots\":", "\"forward_ops_per_step\":"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        ck_assert_msg(strstr(r.out, fields[i]), "missing %s in %s", fields[i],
                      r.out);
}
END_TEST

/* The case the paper's recursion misses: alpha 2, t 2, m 2. */
START_TEST(test_optimal_beats_paper)
{
    result r;
    run(&r, (const char *[]){"plan", "--strategy", "msm", "--length", "2",
                             "--memory", "2", "--alpha", "2", "--format",
                             "json", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"forward_ops\":2,"));
    run(&r, (const char *[]){"plan", "--strategy", "msm-paper", "--length",
                             "2", "--memory", "2", "--alpha", "2", "--format",
                             "json", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "\"forward_ops\":3,"));
}
END_TEST

START_TEST(test_budget_list_and_percent)
{
    result r;
    /* full BPTT at t = 1000, alpha 4 keeps 3996 slots: 5% is 199 */
    run(&r, (const char *[]){"plan", "--length", "1000", "--alpha", "4",
                             "--memory", "5%,199slots,199", "--format", "csv",
                             NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(count_lines(r.out), 4);
    char *l1 = strchr(r.out, '\n') + 1;
    char *l2 = strchr(l1, '\n') + 1;
    char *l3 = strchr(l2, '\n') + 1;
    /* the three rows agree but for timing fields: compare up to them */
    ck_assert_int_eq(strncmp(l1, l2, 60), 0);
    ck_assert_int_eq(strncmp(l2, l3, 60), 0);
    ck_assert_int_eq(strncmp(l1, "msm,1000,4,199,1950,", 20), 0);
}
END_TEST

START_TEST(test_curve)
{
    result r;
    run(&r, (const char *[]){"plan", "--strategy", "hsm", "--length", "10",
                             "--memory", "12", "--curve", "--format", "csv",
                             NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(count_lines(r.out), 13); /* header + budgets 1..12 */
    ck_assert_ptr_nonnull(strstr(r.out, "\nhsm,10,1,1,55,"));  /* t(t+1)/2 */
    ck_assert_ptr_nonnull(strstr(r.out, "\nhsm,10,1,3,25,"));  /* pinned */
    ck_assert_ptr_nonnull(strstr(r.out, "\nhsm,10,1,12,19,")); /* 2t - 1 */
}
END_TEST

START_TEST(test_actions)
{
    result r;
    run(&r, (const char *[]){"plan", "--strategy", "full", "--length", "3",
                             "--alpha", "2", "--actions", "--format", "csv",
                             NULL});
    ck_assert_int_eq(r.status, 0);
    const char *want = "index,op,step,stored_slots,forward_ops\n"
                       "0,advance,1,1,1\n"
                       "1,free_hidden,0,0,1\n"
                       "2,save_internal,1,2,1\n"
                       "3,advance,2,2,2\n"
                       "4,save_internal,2,4,2\n"
                       "5,advance,3,4,3\n"
                       "6,backward,3,4,3\n"
                       "7,backward,2,4,3\n"
                       "8,free_internal,2,2,3\n"
                       "9,backward,1,2,3\n"
                       "10,free_internal,1,0,3\n";
    ck_assert_str_eq(r.out, want);
    run(&r, (const char *[]){"plan", "--strategy", "msm", "--length", "3",
                             "--actions", "--format", "json", NULL});
    ck_assert_int_eq(r.status, 0);
    ck_assert_int_eq(count_lines(r.out), 1);
    ck_assert_ptr_nonnull(strstr(r.out, "\"schedule\":[{\"op\":\"advance\""));
}
END_TEST

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("bad input");
    tcase_add_loop_test(tc, test_bad_input, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("outputs");
    tcase_add_test(tc, test_help_and_version);
    tcase_add_test(tc, test_json_fields);
    tcase_add_test(tc, test_optimal_beats_paper);
    tcase_add_test(tc, test_budget_list_and_percent);
    tcase_add_test(tc, test_curve);
    tcase_add_test(tc, test_actions);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
