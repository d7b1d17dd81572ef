/* test_cli_online.c: `bptt plan --online` and `bptt run --online`.
 *
 * Online hsm is the offline optimum up to C(S + 2, 2) steps; online msm's
 * plans, read back by `bptt validate`, are valid with the counts printed
 * and never below the optimum (nor, with lookahead, above the plan
 * without); the curve is the single plans' at each length; and `bptt run
 * --online` over the lines of a text gives full BPTT's losses and gradient
 * dump, byte for byte, within its budget.
 *
 * The runner itself uses no OpenMP or BLAS, so Check forks it freely. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include "cli_util.h"

/* ---- bptt plan --online ---------------------------------------------------- */

/* The online plan of `bptt plan --online` args... --format json (one
 * line) into r; fails unless it exits 0. */
static void online_json(result *r, const char *const *args)
{
    const char *argv[40] = {"plan", "--online", "--format", "json"};
    size_t n = 4;
    for (; *args && n < 38; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    run(r, argv);
    ck_assert_msg(r->status == 0, "%s %s: exit %d: %s", argv[4], argv[5],
                  r->status, r->err);
}

/* Online hsm with one step of lookahead is the offline optimum for every
 * T <= C(S + 2, 2) (S slots, h(0)'s included): at 5 slots, every T <= 21,
 * against both the record's offline_forward_ops and a plain offline plan;
 * a step past it, still valid, never below the optimum. */
START_TEST(test_online_hsm_optimal)
{
    static result r, q, v;
    char dir[256], path[512];
    make_scratch(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/online.json", dir);
    for (int t = 1; t <= 22; t++) {
        char len[16];
        snprintf(len, sizeof len, "%d", t);
        online_json(&r, (const char *[]){"--strategy", "hsm", "--length",
                                         len, "--memory", "5", "--actions",
                                         NULL});
        /* the counts printed are the validator's of the actions printed */
        write_path(path, r.out, strlen(r.out));
        run(&v, (const char *[]){"validate", path, "--format", "json", NULL});
        ck_assert_msg(v.status == 0, "T %d: %s%s", t, v.out, v.err);
        ck_assert_msg(json_num(v.out, "forward_ops") ==
                          json_num(r.out, "forward_ops"),
                      "T %d: %s / %s", t, v.out, r.out);
        run(&q, (const char *[]){"plan", "--strategy", "hsm", "--length",
                                 len, "--memory", "5", "--format", "json",
                                 NULL});
        ck_assert_int_eq(q.status, 0);
        const double on = json_num(r.out, "forward_ops");
        const double off = json_num(q.out, "forward_ops");
        ck_assert_msg(json_num(r.out, "offline_forward_ops") == off,
                      "T %d: %s / %s", t, r.out, q.out);
        if (t <= 21)
            ck_assert_msg(on == off, "T %d: online %.0f, offline %.0f", t, on,
                          off);
        else
            ck_assert_msg(on >= off, "T %d: online %.0f below the optimum "
                          "%.0f", t, on, off);
        ck_assert_msg(json_num(r.out, "online_offline_ratio") * off - on <
                          1e-5 * on,
                      "T %d: %s", t, r.out);
        ck_assert_msg(json_num(r.out, "peak_slots") <= 5, "T %d: %s", t,
                      r.out);
        ck_assert_ptr_nonnull(strstr(r.out, "\"online\":true"));
        ck_assert_ptr_nonnull(strstr(r.out, "\"lookahead\":true"));
    }
    remove_scratch(dir);
}
END_TEST

/* Online msm at alpha 1..8, several budgets and lengths: the printed
 * plan, read back by bptt validate, is valid under its budget with the
 * counts the record printed (so they are the validator's); it never costs
 * less than the offline optimum, and without lookahead never less than
 * with it. */
START_TEST(test_online_msm_valid)
{
    char dir[256], path[512];
    make_scratch(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/online.json", dir);
    static result r, v, nl;
    static const char *const budgets[] = {"1", "A+1", "2A+2", "3A+5",
                                          "100%"};
    static const char *const lengths[] = {"1", "2", "17", "60"};
    for (int alpha = 1; alpha <= 8; alpha++) {
        char al[8];
        snprintf(al, sizeof al, "%d", alpha);
        for (size_t b = 0; b < sizeof budgets / sizeof budgets[0]; b++) {
            char mem[16];
            if (strcmp(budgets[b], "A+1") == 0)
                snprintf(mem, sizeof mem, "%d", alpha + 1);
            else if (strcmp(budgets[b], "2A+2") == 0)
                snprintf(mem, sizeof mem, "%d", 2 * alpha + 2);
            else if (strcmp(budgets[b], "3A+5") == 0)
                snprintf(mem, sizeof mem, "%d", 3 * alpha + 5);
            else
                snprintf(mem, sizeof mem, "%s", budgets[b]);
            for (size_t k = 0; k < sizeof lengths / sizeof lengths[0]; k++) {
                const char *len = lengths[k];
                online_json(&r, (const char *[]){"--strategy", "msm",
                                                 "--length", len, "--alpha",
                                                 al, "--memory", mem,
                                                 "--actions", NULL});
                ck_assert_int_eq(count_lines(r.out), 1);
                write_path(path, r.out, strlen(r.out));
                run(&v, (const char *[]){"validate", path, "--format",
                                         "json", NULL});
                ck_assert_msg(v.status == 0 &&
                                  strstr(v.out, "\"valid\":true"),
                              "alpha %d, memory %s, T %s: %s%s", alpha, mem,
                              len, v.out, v.err);
                static const char *const keys[] = {
                    "forward_ops", "recompute_ops", "backward_ops",
                    "peak_slots", "actions"};
                for (size_t i = 0; i < 5; i++)
                    ck_assert_msg(json_num(v.out, keys[i]) ==
                                      json_num(r.out, keys[i]),
                                  "alpha %d, memory %s, T %s, %s: %s / %s",
                                  alpha, mem, len, keys[i], v.out, r.out);
                ck_assert(json_num(r.out, "peak_slots") <=
                          json_num(r.out, "memory"));
                const double on = json_num(r.out, "forward_ops");
                ck_assert(on >= json_num(r.out, "offline_forward_ops"));
                ck_assert(json_num(r.out, "prefix_actions") <=
                          json_num(r.out, "actions"));
                online_json(&nl, (const char *[]){"--strategy", "msm",
                                                  "--length", len, "--alpha",
                                                  al, "--memory", mem,
                                                  "--no-lookahead", NULL});
                ck_assert_ptr_nonnull(strstr(nl.out, "\"lookahead\":false"));
                ck_assert_msg(json_num(nl.out, "forward_ops") >= on,
                              "alpha %d, memory %s, T %s: without lookahead "
                              "%s, with %.0f", alpha, mem, len, nl.out, on);
            }
        }
    }
    remove_scratch(dir);
}
END_TEST

/* The curve: one record per length, each the single plan's at that length
 * (online and offline forward ops), lookahead never worse; --points N gives
 * N rising lengths from 1 to T; text has a header and a row per length. */
START_TEST(test_online_curve)
{
    static result c, cn, r;
    static const char *const strategies[] = {"hsm", "msm"};
    for (size_t s = 0; s < 2; s++) {
        const char *st = strategies[s];
        online_json(&c, (const char *[]){"--strategy", st, "--length", "40",
                                         "--alpha", "2", "--memory", "7",
                                         "--curve", NULL});
        online_json(&cn, (const char *[]){"--strategy", st, "--length", "40",
                                          "--alpha", "2", "--memory", "7",
                                          "--curve", "--no-lookahead", NULL});
        ck_assert_int_eq(count_lines(c.out), 40);
        ck_assert_int_eq(count_lines(cn.out), 40);
        const char *line = c.out, *nline = cn.out;
        for (int t = 1; t <= 40; t++) {
            char want[32], one[512], none[512];
            const char *end = strchr(line, '\n'), *nend = strchr(nline, '\n');
            snprintf(one, sizeof one, "%.*s", (int)(end - line), line);
            snprintf(none, sizeof none, "%.*s", (int)(nend - nline), nline);
            snprintf(want, sizeof want, "\"length\":%d,", t);
            ck_assert_msg(strstr(one, want), "%s: line %d: %s", st, t, one);
            ck_assert_msg(json_num(none, "forward_ops") >=
                              json_num(one, "forward_ops"),
                          "%s T %d: %s / %s", st, t, none, one);
            if (t % 13 == 1 || t == 40) {
                char len[16];
                snprintf(len, sizeof len, "%d", t);
                online_json(&r, (const char *[]){"--strategy", st, "--length",
                                                 len, "--alpha", "2",
                                                 "--memory", "7", NULL});
                ck_assert_msg(json_num(r.out, "forward_ops") ==
                                      json_num(one, "forward_ops") &&
                                  json_num(r.out, "offline_forward_ops") ==
                                      json_num(one, "offline_forward_ops"),
                              "%s T %d: plan %s, curve %s", st, t, r.out,
                              one);
                online_json(&r, (const char *[]){"--strategy", st, "--length",
                                                 len, "--alpha", "2",
                                                 "--memory", "7",
                                                 "--no-lookahead", NULL});
                ck_assert_msg(json_num(r.out, "forward_ops") ==
                                  json_num(none, "forward_ops"),
                              "%s T %d: plan %s, curve %s", st, t, r.out,
                              none);
            }
            line = end + 1;
            nline = nend + 1;
        }
    }
    /* --points: 7 rising lengths, 1 and T among them */
    online_json(&c, (const char *[]){"--strategy", "hsm", "--length", "1000",
                                     "--memory", "4", "--curve", "--points",
                                     "7", NULL});
    ck_assert_int_eq(count_lines(c.out), 7);
    double last = 0;
    for (const char *line = c.out; *line; line = strchr(line, '\n') + 1) {
        const double t = json_num(line, "length");
        ck_assert_msg(t > last, "%s", c.out);
        ck_assert(last > 0 || t == 1);
        last = t;
    }
    ck_assert(last == 1000);
    /* more points than lengths: every length */
    online_json(&c, (const char *[]){"--strategy", "hsm", "--length", "5",
                                     "--curve", "--points", "100", NULL});
    ck_assert_int_eq(count_lines(c.out), 5);
    /* text: the header, a row per length */
    run(&c, (const char *[]){"plan", "--online", "--strategy", "hsm",
                             "--length", "21", "--memory", "5", "--curve",
                             NULL});
    ck_assert_int_eq(c.status, 0);
    ck_assert_int_eq(count_lines(c.out), 22);
    ck_assert_msg(strncmp(c.out, "         T       online      offline     "
                                 "ratio\n", 47) == 0, "%s", c.out);
    ck_assert_ptr_nonnull(strstr(c.out, "\n        21           56           "
                                        "56    1.0000\n"));
}
END_TEST

/* --online: lines of a text as sequences of unknown length; hsm and msm
 * planned online give, iteration after iteration, full BPTT's losses and
 * the same gradient dump, byte for byte, each iteration's measured peak
 * within the budget, and hsm at 2 slots recomputes (so the comparison is
 * not of identical work). */
static void online_rows(const char *out, int64_t budget, int *recomputed,
                        int *rows, double *losses)
{
    *rows = 0;
    for (const char *p = strstr(out, "\nonline "); p;
         p = strstr(p + 1, "\nonline ")) {
        long long it, steps, fwd, pfwd, peak;
        double loss;
        if (sscanf(p + 1, "online %lld %lld %lld %lld %lld %lf", &it, &steps,
                   &fwd, &pfwd, &peak, &loss) != 6)
            continue;
        ck_assert_int_eq(fwd, pfwd);
        ck_assert_int_le(peak, budget);
        ck_assert_int_ge(fwd, steps);
        if (fwd > steps)
            *recomputed = 1;
        losses[(*rows)++] = loss;
    }
}

START_TEST(test_run_online_matches_full)
{
    char dir[256];
    make_scratch(dir, sizeof dir);
    write_file(dir, "lines.txt", "the cat sat on the mat\nhello world\n\n"
                                 "online planning of sequences\nab\n"
                                 "a longer line of this little text, with "
                                 "more words in it\nlast line, no end");
    char text[512], d[3][300];
    snprintf(text, sizeof text, "text:%s/lines.txt", dir);
    const char *strat[] = {"full", "hsm", "msm"};
    const char *mem[] = {"100%", "2slots", "30%"};
    double losses[3][16];
    int rows[3];
    for (int k = 0; k < 3; k++) {
        snprintf(d[k], sizeof d[k], "%s/g%d", dir, k);
        const char *args[] = {"run", "--online", "--task", text, "--cell",
                              "lstm", "--hidden", "6", "--iters", "7",
                              "--threads", "1", "--strategy", strat[k],
                              "--memory", mem[k], "--dump-grads", d[k],
                              NULL};
        result r;
        run(&r, args);
        ck_assert_msg(r.status == 0, "%s: %s", strat[k], r.err);
        const char *b = strstr(r.out, "memory_budget_bytes");
        ck_assert_ptr_nonnull(b);
        const int64_t budget = strtoll(b + 19, NULL, 10);
        int recomputed = 0;
        online_rows(r.out, budget, &recomputed, &rows[k], losses[k]);
        ck_assert_int_eq(rows[k], 7);
        if (k == 1)
            ck_assert_msg(recomputed, "hsm at 2 slots recomputed nothing");
        ck_assert_int_eq(memcmp(losses[k], losses[0], sizeof losses[0]), 0);
    }
    static char a[1 << 16], b[1 << 16];
    const char *files[] = {"grad_W0.npy", "grad_b0.npy", "grad_Wo.npy",
                           "grad_bo.npy", "param_W0.npy", "inputs.npy",
                           "targets.npy"};
    char path[600];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        for (int k = 1; k < 3; k++) {
            snprintf(path, sizeof path, "%s/%s", d[0], files[i]);
            const long na = slurp(path, a, sizeof a);
            snprintf(path, sizeof path, "%s/%s", d[k], files[i]);
            const long nb = slurp(path, b, sizeof b);
            ck_assert_msg(na > 128 && na == nb &&
                              memcmp(a, b, (size_t)na) == 0,
                          "%s differs between full and %s", files[i],
                          strat[k]);
        }
    /* the last iteration's sequence: the 7th of 6 non-empty lines,
     * cyclically the first, "the cat sat on the mat", 22 steps */
    snprintf(path, sizeof path, "%s/index.txt", d[1]);
    ck_assert_int_gt(slurp(path, a, sizeof a), 0);
    ck_assert_ptr_nonnull(strstr(a, "targets.npy targets (22, 1) int32"));
    remove_scratch(dir);
}
END_TEST

static Suite *cli_online_suite(void)
{
    Suite *s = suite_create("cli online");
    TCase *tc = tcase_create("outputs");
    tcase_add_test(tc, test_online_hsm_optimal);
    tcase_add_test(tc, test_online_msm_valid);
    tcase_add_test(tc, test_online_curve);
    tcase_add_test(tc, test_run_online_matches_full);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_online_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
