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
    /* bptt run */
    {{"run", NULL}, 2, "--length is required"},
    {{"run", "--length", "20", "--cell", "gru", NULL}, 2, "unknown cell"},
    {{"run", "--length", "20", "--hidden", "0", NULL}, 2, "--hidden"},
    {{"run", "--length", "20", "--batch", "-1", NULL}, 2, "--batch"},
    {{"run", "--length", "20", "--layers", "17", NULL}, 2, "--layers"},
    {{"run", "--length", "-20", NULL}, 2, "--length"},
    {{"run", "--length", "20", "--iters", "0", NULL}, 2, "--iters"},
    {{"run", "--length", "20", "--task", "bogus", NULL}, 2, "unknown task"},
    {{"run", "--length", "20", "--task", "text:/nonexistent/file", NULL}, 2,
     "text file"},
    {{"run", "--length", "20", "--task", "adding", "--input", "3", NULL}, 2,
     "do not suit the task"},
    {{"run", "--length", "20", "--memory", "12", NULL}, 2, "is not a budget"},
    {{"run", "--length", "20", "--memory", "lots", NULL}, 2,
     "is not a budget"},
    {{"run", "--length", "20", "--optimizer", "rmsprop", NULL}, 2,
     "unknown optimizer"},
    {{"run", "--length", "20", "--lr", "0", NULL}, 2, "--lr"},
    {{"run", "--length", "20", "--format", "yaml", NULL}, 2,
     "unknown format"},
    {{"run", "--length", "1000000000", "--hidden", "8", NULL}, 2,
     "more than this machine's"},
    {{"run", "--length", "20", "--hidden", "1000000", "--batch", "100000",
      NULL},
     2, "more than this machine's"},
    {{"run", "--length", "20", "--hidden", "8", "--batch", "2", "--memory",
      "1B", NULL},
     3, "smallest feasible budget is 128 bytes"},
    {{"run", "--length", "20", "--hidden", "8", "--batch", "2", "--strategy",
      "full", "--memory", "5%", NULL},
     3, "smallest feasible budget is"},
    {{"run", "--length", "20", "--dump-grads", "/dev/null", NULL}, 2,
     "not an empty directory"},
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

START_TEST(test_run_json)
{
    result r;
    run(&r, (const char *[]){"run", "--cell", "rnn", "--length", "30",
                             "--hidden", "8", "--batch", "2", "--iters", "2",
                             "--memory", "10%", "--threads", "1", "--format",
                             "json", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_int_eq(count_lines(r.out), 1);
    const char *fields[] = {
        "\"cell\":\"rnn\"", "\"layers\":1", "\"hidden\":8",
        "\"batch\":2", "\"length\":30", "\"strategy\":\"msm\"",
        "\"memory_budget_bytes\":", "\"alpha\":2,", "\"forward_ops\":",
        "\"backward_ops\":30", "\"checkpoint_peak_bytes\":",
        "\"full_checkpoint_bytes\":", "\"working_peak_bytes\":",
        "\"total_tracked_peak_bytes\":", "\"rss_peak_bytes\":",
        "\"seconds_per_iter\":", "\"loss_first\":", "\"loss_last\":",
        "\"grad_norm\":", "\"threads\":1", "\"seed\":1",
        "\"git_revision\":", "\"cpu_model\":", "\"date\":"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        ck_assert_msg(strstr(r.out, fields[i]), "missing %s in %s", fields[i],
                      r.out);
}
END_TEST

/* Reads a whole small file; returns its length or -1. */
static long slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    const size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return (long)n;
}

/* Two runs at the same thread count give the same bytes, and a plan with
 * recomputation gives full BPTT's gradients; the dump appears whole. */
START_TEST(test_run_deterministic_dump)
{
    char dir[] = "/tmp/bptt-cli-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char d1[256], d2[256], d3[256];
    snprintf(d1, sizeof d1, "%s/a", dir);
    snprintf(d2, sizeof d2, "%s/b", dir);
    snprintf(d3, sizeof d3, "%s/c", dir);
    const char *base[] = {"run", "--cell", "lstm", "--layers", "2",
                          "--length", "40", "--hidden", "6", "--batch", "3",
                          "--iters", "2", "--threads", "2", "--format",
                          "csv", "--memory"};
    const char *mem[] = {"100%", "100%", "7%"};
    const char *strat[] = {"full", "full", "msm"};
    const char *dirs[] = {d1, d2, d3};
    result r;
    for (int k = 0; k < 3; k++) {
        const char *args[32];
        int n = 0;
        for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
            args[n++] = base[i];
        args[n++] = mem[k];
        args[n++] = "--strategy";
        args[n++] = strat[k];
        args[n++] = "--dump-grads";
        args[n++] = dirs[k];
        args[n] = NULL;
        run(&r, args);
        ck_assert_msg(r.status == 0, "%s", r.err);
    }
    static char a[1 << 16], b[1 << 16];
    char path[512];
    snprintf(path, sizeof path, "%s/index.txt", d1);
    ck_assert_int_gt(slurp(path, a, sizeof a), 0);
    ck_assert_ptr_nonnull(strstr(a, "grad_W1.npy grad_W1 (24, 12) float32"));
    ck_assert_ptr_nonnull(strstr(a, "targets.npy targets (40, 3) int32"));
    const char *files[] = {"grad_W0.npy", "grad_b0.npy", "grad_W1.npy",
                           "grad_b1.npy", "grad_Wo.npy", "grad_bo.npy",
                           "param_W0.npy", "inputs.npy", "targets.npy"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        for (int k = 1; k < 3; k++) {
            snprintf(path, sizeof path, "%s/%s", d1, files[i]);
            const long na = slurp(path, a, sizeof a);
            snprintf(path, sizeof path, "%s/%s", dirs[k], files[i]);
            const long nb = slurp(path, b, sizeof b);
            ck_assert_msg(na > 128 && na == nb && memcmp(a, b, (size_t)na) == 0,
                          "%s differs between %s and %s", files[i], d1,
                          dirs[k]);
        }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
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
    tcase_add_test(tc, test_run_json);
    tcase_add_test(tc, test_run_deterministic_dump);
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
