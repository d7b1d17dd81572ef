/* test_cli_plan.c: `bptt plan` and `bptt validate` as a user meets them.
 *
 * --help and --version of every command, usage lines that name every
 * option; the plan's records (json fields, csv rows, budget lists and
 * percentages, --curve, --actions), the optimum the paper's recursion
 * misses, plans sized by a network as `bptt run` trains it, several
 * strategies at once; `bptt validate` reading the printed plans back (and
 * refusing a broken one or bad input); and `bptt plan --disk`, the
 * two-level plans, their costs and the validator's counts of them.
 *
 * The runner itself uses no OpenMP or BLAS, so Check forks it freely. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include "cli_util.h"

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
    static char top[sizeof r.out];
    memcpy(top, r.out, sizeof top);
    /* every subcommand answers --version with the same line, doing
     * nothing else (not even checking the other arguments) */
    static const char *const cmds[] = {"plan", "run", "sweep", "compare"};
    for (size_t i = 0; i < 4; i++) {
        run(&r, (const char *[]){cmds[i], "--version", NULL});
        ck_assert_int_eq(r.status, 0);
        ck_assert_str_eq(r.out, top);
        ck_assert_str_eq(r.err, "");
        run(&r, (const char *[]){cmds[i], "--length", "0", "--version",
                                 NULL});
        ck_assert_int_eq(r.status, 0);
        ck_assert_str_eq(r.out, top);
    }
}
END_TEST

/* Usage lines name every option: each --option the help text describes
 * appears in the usage block (the lines before the first blank line). */
START_TEST(test_usage_names_every_option)
{
    static const char *const cmds[] = {"plan", "run", "validate", "sweep",
                                       "compare", "calibrate"};
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        result r;
        run(&r, (const char *[]){cmds[i], "--help", NULL});
        ck_assert_int_eq(r.status, 0);
        const char *body = strstr(r.out, "\n\n");
        ck_assert_ptr_nonnull(body);
        const size_t usage_len = (size_t)(body - r.out);
        int options = 0;
        for (const char *p = body; (p = strstr(p, "\n  --")) != NULL;) {
            p += 3;
            const size_t n = strspn(p, "abcdefghijklmnopqrstuvwxyz-");
            char opt[64];
            snprintf(opt, sizeof opt, "%.*s", (int)n, p);
            int found = 0;
            for (const char *u = r.out; u < r.out + usage_len; u++)
                if (strncmp(u, opt, n) == 0 && !isalpha((unsigned char)u[n]) &&
                    u[n] != '-')
                    found = 1;
            ck_assert_msg(found, "bptt %s: %s is not in the usage lines",
                          cmds[i], opt);
            options++;
        }
        ck_assert_int_ge(options, 4);
    }
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

/* bptt plan plans what bptt run trains: a fractional alpha (3.5, the
 * LSTM's) plans as the network's sizes do, the bytes it announces are the
 * run's predicted and measured checkpoint peak, several strategies give
 * each one's own records, and the new options refuse what does not go
 * together; an infeasible budget of any strategy prints nothing. */
START_TEST(test_plan_sizes_and_strategies)
{
    result r, q;
    run(&r, (const char *[]){"plan", "--length", "200", "--alpha", "3.5",
                             "--memory", "5%", "--format", "json", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"alpha\":3.5,"));
    run(&q, (const char *[]){"plan", "--length", "200", "--cell", "lstm",
                             "--hidden", "32", "--batch", "4", "--memory",
                             "5%", "--format", "json", NULL});
    ck_assert_msg(q.status == 0, "%s", q.err);
    ck_assert(json_num(r.out, "forward_ops") == json_num(q.out,
                                                         "forward_ops"));
    ck_assert(json_num(r.out, "peak_slots") == json_num(q.out,
                                                        "peak_slots"));
    const double peak = json_num(q.out, "peak_bytes");
    /* 1.5 slots: the peak of an internal state and a hidden one */
    ck_assert(json_num(r.out, "peak_slots") != floor(json_num(r.out,
                                                             "peak_slots")));
    result t;
    run(&t, (const char *[]){"run", "--length", "200", "--cell", "lstm",
                             "--hidden", "32", "--batch", "4", "--memory",
                             "5%", "--iters", "1", "--threads", "1",
                             "--format", "json", NULL});
    ck_assert_msg(t.status == 0, "%s", t.err);
    ck_assert(json_num(t.out, "predicted_checkpoint_peak_bytes") == peak);
    ck_assert(json_num(t.out, "checkpoint_peak_bytes") == peak);
    ck_assert(json_num(t.out, "plan_forward_ops") ==
              json_num(q.out, "forward_ops"));

    /* several strategies: each record as its own call prints it */
    run(&r, (const char *[]){"plan", "--length", "300", "--alpha", "2",
                             "--strategy", "chen,msm", "--memory", "60,10%",
                             "--format", "csv", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_int_eq(count_lines(r.out), 5); /* header and 2 x 2 rows */
    run(&q, (const char *[]){"plan", "--length", "300", "--alpha", "2",
                             "--strategy", "msm", "--memory", "60,10%",
                             "--format", "csv", NULL});
    ck_assert_msg(q.status == 0, "%s", q.err);
    const char *second = strstr(q.out, "\nmsm,300,2,60,");
    ck_assert_ptr_nonnull(second);
    /* the row up to its timing (plan_seconds, the 14th field) */
    const char *cut = second + 1;
    for (int k = 0; k < 13 && cut; k++)
        cut = strchr(cut + 1, ',');
    ck_assert_ptr_nonnull(cut);
    char row[300];
    snprintf(row, sizeof row, "%.*s", (int)(cut - second), second);
    ck_assert_ptr_nonnull(strstr(r.out, "\nchen,300,2,60,"));
    ck_assert_ptr_nonnull(strstr(r.out, row));
    /* chen at 10 slots is infeasible: nothing printed, exit 3 */
    run(&r, (const char *[]){"plan", "--length", "300", "--strategy",
                             "msm,chen", "--memory", "10", NULL});
    ck_assert_int_eq(r.status, 3);
    ck_assert_str_eq(r.out, "");
    ck_assert_ptr_nonnull(strstr(r.err, "infeasible for chen"));

    static const struct {
        const char *args[9];
        const char *says;
    } bad[] = {
        {{"--memory", "64MiB"}, "is in bytes"},
        {{"--hidden", "8"}, "give --cell too"},
        {{"--cell", "lstm", "--alpha", "2"}, "exclude each other"},
        {{"--alpha", "3.1234567"}, "at most 6 decimals"},
        {{"--alpha", "0.5"}, "not a state size"},
        {{"--alpha", "-2"}, "not a state size"},
        {{"--cell", "xyz"}, "unknown cell 'xyz'"},
        {{"--strategy", "msm,full", "--actions"}, "one strategy"},
        {{"--strategy", "msm,"}, "unknown strategy ''"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *args[16] = {"plan", "--length", "100"};
        size_t n = 3;
        for (size_t k = 0; bad[i].args[k]; k++)
            args[n++] = bad[i].args[k];
        args[n] = NULL;
        run(&r, args);
        ck_assert_msg(r.status == 2, "case %zu: exit %d", i, r.status);
        ck_assert_msg(strstr(r.err, bad[i].says), "case %zu: %s", i, r.err);
        ck_assert_int_eq(own_lines(r.err), 1);
    }
}
END_TEST

/* bptt validate: the plans bptt plan prints, read back as JSON, have the
 * counts bptt plan gave, for every strategy and a fractional alpha; a plan
 * with two actions swapped is refused at the first of them, exit 1; bad
 * input is one line and exit 2. */
START_TEST(test_validate)
{
    char dir[256];
    make_scratch(dir, sizeof dir);
    static const char *const strategies[] = {"full", "chen", "hsm", "ism",
                                             "msm", "msm-paper"};
    result r, v;
    char path[512];
    snprintf(path, sizeof path, "%s/plan.json", dir);
    for (size_t k = 0; k < 6; k++) {
        const char *alpha = k % 2 ? "3.5" : "2";
        run(&r, (const char *[]){"plan", "--length", "40", "--alpha", alpha,
                                 "--strategy", strategies[k], "--memory",
                                 k == 0 ? "100%" : "40%", "--actions",
                                 "--format", "json",
                                 NULL});
        ck_assert_msg(r.status == 0, "%s: %s", strategies[k], r.err);
        write_path(path, r.out, strlen(r.out));
        run(&v, (const char *[]){"validate", path, "--format", "json", NULL});
        ck_assert_msg(v.status == 0, "%s: %s%s", strategies[k], v.out, v.err);
        ck_assert_ptr_nonnull(strstr(v.out, "\"valid\":true"));
        static const char *const keys[] = {"forward_ops", "recompute_ops",
                                           "backward_ops", "peak_slots"};
        for (size_t i = 0; i < 4; i++)
            ck_assert_msg(json_num(v.out, keys[i]) == json_num(r.out, keys[i]),
                          "%s %s: %s / %s", strategies[k], keys[i], v.out,
                          r.out);
    }
    /* the last plan (msm-paper, alpha 3.5) with actions 0 and 1 swapped:
     * its second action (a save of step 1, or the free of h(0)) comes
     * before the advance of step 1 that makes or needs it */
    char *two = strstr(r.out, "\"schedule\":[");
    ck_assert_ptr_nonnull(two);
    two += strlen("\"schedule\":[");
    char *end1 = strchr(two, '}') + 1, *end2 = strchr(end1 + 1, '}') + 1;
    char first[64], second[64];
    snprintf(first, sizeof first, "%.*s", (int)(end1 - two), two);
    snprintf(second, sizeof second, "%.*s", (int)(end2 - end1 - 1), end1 + 1);
    ck_assert_ptr_nonnull(strstr(first, "advance"));
    char swapped[1 << 16];
    snprintf(swapped, sizeof swapped, "%.*s%s,%s%s", (int)(two - r.out), r.out,
             second, first, end2);
    write_path(path, swapped, strlen(swapped));
    run(&v, (const char *[]){"validate", path, NULL});
    ck_assert_int_eq(v.status, 1);
    ck_assert_msg(strstr(v.out, "invalid plan: action 0 (") ||
                      strstr(v.out, "invalid plan: action 1 (advance 1)"),
                  "%s", v.out);
    /* the same from stdin, with a budget below its peak */
    run(&r, (const char *[]){"plan", "--length", "30", "--memory", "8",
                             "--actions", "--format", "json", NULL});
    write_path(path, r.out, strlen(r.out));
    result s;
    run_in(&s, dir, NULL, (const char *[]){"validate", "plan.json",
                                           "--memory", "5", NULL});
    ck_assert_int_eq(s.status, 1);
    ck_assert_ptr_nonnull(strstr(s.out, "exceed the budget"));
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"", "not JSON"},
        {"{\"schedule\":[", "not JSON"},
        {"[{\"op\":\"jump\",\"step\":1}]", "unknown op 'jump'"},
        {"[{\"op\":\"advance\",\"step\":-1}]", "not a whole number"},
        {"[{\"op\":\"advance\",\"step\":1.5}]", "not a whole number"},
        {"[{\"step\":1}]", "no op"},
        {"{\"length\":3}", "no actions"},
        {"{\"length\":2,\"schedule\":[{\"op\":\"advance\",\"step\":3}]}",
         "beyond the length"},
        {"{\"alpha\":0.5,\"schedule\":[]}", "not a state size"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_path(path, bad[i].text, strlen(bad[i].text));
        run(&v, (const char *[]){"validate", path, NULL});
        ck_assert_msg(v.status == 2, "case %zu: exit %d", i, v.status);
        ck_assert_msg(strstr(v.err, bad[i].says), "case %zu: %s", i, v.err);
        ck_assert_int_eq(own_lines(v.err), 1);
        ck_assert_str_eq(v.out, "");
    }
    run(&v, (const char *[]){"validate", NULL});
    ck_assert_int_eq(v.status, 2);
    run(&v, (const char *[]){"validate", "/nonexistent/plan.json", NULL});
    ck_assert_int_eq(v.status, 2);
    ck_assert_ptr_nonnull(strstr(v.err, "cannot read"));
    remove_scratch(dir);
}
END_TEST

/* bptt plan --disk: the two-level plan's record holds the validator's
 * counts of the plan it prints (bptt validate reads it back, the slow
 * level's budget with it, and agrees field by field; the cost is the
 * forward ops and the states moved at the costs given); --disk 0 costs
 * what the one-level plan does; with no bound and free moves hsm needs
 * 2T - 1 forward ops and msm T; H-Revolve's example costs what its paper
 * says; the schedule names the slow level's ops. */
START_TEST(test_plan_disk)
{
    char dir[256], path[512];
    make_scratch(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/plan.json", dir);
    static result r, v, q;
    static const struct {
        const char *strategy, *alpha, *memory, *disk, *wc, *rc;
    } cases[] = {
        {"hsm", "1", "3", "4", "1", "1"},
        {"msm", "1", "4", "6", "0.5", "2"},
        {"msm", "3.5", "5", "7", "0.25", "0.125"},
        {"hsm", "2", "3", "inf", "3", "1"},
        {"msm", "1", "2", "inf", "0", "0"},
        {"msm", "1", "5", "0", "1", "1"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        run(&r, (const char *[]){"plan", "--length", "40", "--strategy",
                                 cases[k].strategy, "--alpha", cases[k].alpha,
                                 "--memory", cases[k].memory, "--disk",
                                 cases[k].disk, "--write-cost", cases[k].wc,
                                 "--read-cost", cases[k].rc, "--actions",
                                 "--format", "json", NULL});
        ck_assert_msg(r.status == 0, "case %zu: %s", k, r.err);
        write_path(path, r.out, strlen(r.out));
        run(&v, (const char *[]){"validate", path, "--format", "json", NULL});
        ck_assert_msg(v.status == 0, "case %zu: %s%s", k, v.out, v.err);
        static const char *const keys[] = {"forward_ops", "recompute_ops",
                                           "backward_ops", "peak_slots",
                                           "slow_writes", "slow_reads",
                                           "slow_peak_slots"};
        const int two = strcmp(cases[k].disk, "0") != 0;
        for (size_t i = 0; i < (two ? 7u : 4u); i++)
            ck_assert_msg(json_num(v.out, keys[i]) == json_num(r.out, keys[i]),
                          "case %zu %s: %s / %s", k, keys[i], v.out, r.out);
        char disk[32];
        json_str(r.out, "disk", disk, sizeof disk);
        ck_assert_str_eq(disk, cases[k].disk);
        ck_assert_msg(json_num(r.out, "slow_peak_slots") <=
                          (strcmp(disk, "inf") ? atof(disk) : 1e300),
                      "case %zu: %s", k, r.out);
        ck_assert_msg(json_num(r.out, "peak_slots") <= atof(cases[k].memory),
                      "case %zu: %s", k, r.out);
        if (strcmp(cases[k].alpha, "1") == 0) /* a state, a slot */
            ck_assert_msg(json_num(r.out, "cost") ==
                              json_num(r.out, "forward_ops") +
                                  atof(cases[k].wc) *
                                      json_num(r.out, "slow_writes") +
                                  atof(cases[k].rc) *
                                      json_num(r.out, "slow_reads"),
                          "case %zu: %s", k, r.out);
        ck_assert_msg(json_num(r.out, "write_cost") == atof(cases[k].wc) &&
                          json_num(r.out, "read_cost") == atof(cases[k].rc),
                      "case %zu: %s", k, r.out);
        if (two && json_num(r.out, "slow_writes") > 0) {
            /* without its slow level the plan is refused as read */
            run(&q, (const char *[]){"validate", path, "--disk", "0", NULL});
            ck_assert_msg(q.status == 2 && own_lines(q.err) == 1 &&
                              strstr(q.err, "uses a slow level, and the plan "
                                            "has none"),
                          "case %zu: %d %s", k, q.status, q.err);
            ck_assert_ptr_nonnull(strstr(r.out, "\"op\":\"write_"));
        }
    }
    /* --disk 0 is the one-level optimum; no bound and free moves: each
     * step once (msm: s(i) read back whole), hsm a recomputation a step */
    static const char *const lengths[] = {"1", "7", "30", "101"};
    static const char *const memories[] = {"1", "2", "5"};
    for (size_t i = 0; i < 4; i++)
        for (size_t j = 0; j < 3; j++)
            for (int s = 0; s < 2; s++) {
                const char *st = s ? "msm" : "hsm";
                run(&q, (const char *[]){"plan", "--length", lengths[i],
                                         "--strategy", st, "--memory",
                                         memories[j], "--alpha", "2",
                                         "--format", "json", NULL});
                ck_assert_msg(q.status == 0, "%s", q.err);
                run(&r, (const char *[]){"plan", "--length", lengths[i],
                                         "--strategy", st, "--memory",
                                         memories[j], "--alpha", "2",
                                         "--disk", "0", "--format", "json",
                                         NULL});
                ck_assert_msg(r.status == 0, "%s", r.err);
                ck_assert_msg(json_num(r.out, "forward_ops") ==
                                  json_num(q.out, "forward_ops") &&
                              json_num(r.out, "cost") ==
                                  json_num(q.out, "forward_ops") &&
                              json_num(r.out, "slow_writes") == 0,
                              "%s T %s M %s: %s / %s", st, lengths[i],
                              memories[j], r.out, q.out);
                run(&r, (const char *[]){"plan", "--length", lengths[i],
                                         "--strategy", st, "--memory",
                                         memories[j], "--disk", "inf",
                                         "--write-cost", "0", "--read-cost",
                                         "0", "--format", "json", NULL});
                ck_assert_msg(r.status == 0, "%s", r.err);
                const double t = atof(lengths[i]);
                ck_assert_msg(json_num(r.out, "forward_ops") ==
                                  (s ? t : 2 * t - 1),
                              "%s T %s M %s: %s", st, lengths[i],
                              memories[j], r.out);
            }
    /* H-Revolve's example: N = 1000, 10 slots, wd = rd = 2 */
    run(&r, (const char *[]){"plan", "--strategy", "hsm", "--length", "1000",
                             "--memory", "10", "--disk", "10", "--write-cost",
                             "2", "--read-cost", "2", "--format", "json",
                             NULL});
    ck_assert_msg(r.status == 0 && json_num(r.out, "cost") == 3847, "%s%s",
                  r.out, r.err);
    run(&r, (const char *[]){"plan", "--strategy", "hsm", "--length", "1000",
                             "--memory", "10", "--disk", "inf",
                             "--write-cost", "2", "--read-cost", "2",
                             "--format", "json", NULL});
    ck_assert_msg(r.status == 0 && json_num(r.out, "cost") == 3243, "%s%s",
                  r.out, r.err);
    /* the table, the csv and the schedule */
    run(&r, (const char *[]){"plan", "--length", "20", "--memory", "3,4",
                             "--strategy", "hsm,msm", "--disk", "5", NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_int_eq(count_lines(r.out), 5);
    ck_assert_ptr_nonnull(strstr(r.out, "slow_writes"));
    ck_assert_ptr_nonnull(strstr(r.out, "slow_peak"));
    run(&r, (const char *[]){"plan", "--length", "20", "--memory", "3",
                             "--disk", "5", "--format", "csv", NULL});
    ck_assert_msg(r.status == 0 && count_lines(r.out) == 2, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, ",disk,write_cost,read_cost,"));
    run(&r, (const char *[]){"plan", "--length", "20", "--memory", "3",
                             "--disk", "5", "--actions", "--format", "csv",
                             NULL});
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "index,op,step,stored_slots,"
                                        "forward_ops,slow_slots\n"));
    ck_assert_ptr_nonnull(strstr(r.out, ",write_"));
    ck_assert_ptr_nonnull(strstr(r.out, ",read_"));
    ck_assert_ptr_nonnull(strstr(r.out, ",drop_"));
    remove_scratch(dir);
}
END_TEST

static Suite *cli_plan_suite(void)
{
    Suite *s = suite_create("cli plan");
    TCase *tc = tcase_create("outputs");
    tcase_add_test(tc, test_help_and_version);
    tcase_add_test(tc, test_usage_names_every_option);
    tcase_add_test(tc, test_json_fields);
    tcase_add_test(tc, test_optimal_beats_paper);
    tcase_add_test(tc, test_plan_sizes_and_strategies);
    tcase_add_test(tc, test_validate);
    tcase_add_test(tc, test_plan_disk);
    tcase_add_test(tc, test_budget_list_and_percent);
    tcase_add_test(tc, test_curve);
    tcase_add_test(tc, test_actions);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_plan_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
