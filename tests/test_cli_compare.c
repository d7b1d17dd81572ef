/* test_cli_compare.c: `bptt compare` and `bptt calibrate`.
 *
 * compare's json, csv and text outputs for one-level plans (the json
 * parsed back by python3, skipped by name where /usr/bin/python3 is
 * absent) and two-level ones beside them, gradients identical; calibrate's
 * record finite and positive, its folder left as it was, a planted scratch
 * file refused.
 *
 * The runner itself uses no OpenMP or BLAS, so Check forks it freely. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include "cli_util.h"

/* ---- bptt compare's outputs ------------------------------------------------ */

/* A good comparison of three plans: json has one object per plan and line,
 * each with the fields the command promises, gradients identical, the
 * plans in the order given, and it parses (python3 json.loads, line by
 * line; skipped by name where /usr/bin/python3 is absent); csv is the
 * meta line, the header and one row per plan; text has a row per plan
 * and says once that RSS is per process (json and csv on stderr, in one
 * line).  Nothing is asserted of the
 * seconds but that they are numbers. */
START_TEST(test_compare_outputs)
{
    static result r;
    char dir[64];
    make_scratch(dir, sizeof dir);
    run(&r, (const char *[]){"compare", R("--plans",
                             "full:100%,msm:5%,chen:100%", "--rounds", "5",
                             "--warmup", "0", "--format", "json"), NULL});
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(count_lines(r.out), 3);
    ck_assert_int_eq(own_lines(r.err), 1);
    ck_assert_ptr_nonnull(strstr(r.err, "RSS is per process, not per plan"));
    static const char *const fields[] = {
        "\"strategy\":", "\"memory_given\":", "\"memory_budget_bytes\":",
        "\"forward_ops\":", "\"checkpoint_peak_bytes\":",
        "\"total_tracked_peak_bytes\":", "\"seconds_median\":",
        "\"seconds_min\":", "\"ratio_median\":", "\"ratio_lo\":",
        "\"ratio_hi\":", "\"ratio_coverage\":0.9375", "\"rounds\":5",
        "\"gradients_identical\":1", "\"record_format\":",
        "\"forward_step_seconds\":", "\"predicted_ratio\":",
        "\"full_checkpoint_bytes\":"};
    static const char *const names[] = {"\"strategy\":\"full\"",
                                        "\"strategy\":\"msm\"",
                                        "\"strategy\":\"chen\""};
    const char *line = r.out;
    for (size_t p = 0; p < 3; p++) {
        const char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        char one[8192];
        snprintf(one, sizeof one, "%.*s", (int)(end - line), line);
        for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
            ck_assert_msg(strstr(one, fields[i]), "plan %zu lacks %s: %s", p,
                          fields[i], one);
        ck_assert_msg(strstr(one, names[p]), "plan %zu: %s", p, one);
        ck_assert_msg(!strstr(one, "rss"), "plan %zu reports RSS: %s", p,
                      one);
        line = end + 1;
    }
    char path[256], log[256];
    snprintf(path, sizeof path, "%s/compare.json", dir);
    snprintf(log, sizeof log, "%s/python.log", dir);
    write_path(path, r.out, strlen(r.out));
    if (access("/usr/bin/python3", X_OK) != 0) {
        fprintf(stderr, "test_compare_outputs: /usr/bin/python3 is absent: "
                        "the json is not parsed\n");
    } else {
        static const char py[] =
            "import json, sys\n"
            "rows = [json.loads(l) for l in open(sys.argv[1])]\n"
            "assert len(rows) == 3, len(rows)\n"
            "for i, r in enumerate(rows):\n"
            "    assert r['plan'] == i and r['gradients_identical'] == 1\n"
            "    assert r['ratio_lo'] <= r['ratio_median'] <= r['ratio_hi']\n"
            "    assert r['ratio_lo'] > 0 and r['forward_ops'] >= 20\n"
            "assert rows[0]['reference'] == 1 and rows[1]['reference'] == 0\n"
            "assert rows[0]['predicted_ratio'] == 1\n"
            "assert rows[0]['checkpoint_peak_bytes'] == "
            "rows[0]['full_checkpoint_bytes']\n"
            "assert rows[1]['checkpoint_peak_bytes'] < "
            "rows[0]['checkpoint_peak_bytes']\n";
        ck_assert_msg(run_prog((const char *[]){"/usr/bin/python3", "-c", py,
                                                path, NULL},
                               log) == 0,
                      "python3 refuses the json of bptt compare: %s", r.out);
    }
    /* csv: the meta line, the header, a row per plan */
    run(&r, (const char *[]){"compare", R("--plans", "full:100%,msm:5%",
                             "--rounds", "3", "--format", "csv"), NULL});
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(count_lines(r.out), 4);
    ck_assert_int_eq(own_lines(r.err), 1);
    ck_assert_ptr_nonnull(strstr(r.err, "RSS is per process, not per plan"));
    ck_assert_msg(strncmp(r.out, "# {\"meta\":{\"record_format\":", 27) == 0,
                  "%s", r.out);
    const char *header = strchr(r.out, '\n') + 1;
    ck_assert_msg(strncmp(header, "plan,reference,strategy,memory_given,"
                                  "memory_budget_bytes,forward_ops,", 55) == 0,
                  "%s", header);
    const char *row1 = strchr(header, '\n') + 1;
    ck_assert_msg(strncmp(row1, "0,1,full,100%,", 14) == 0, "%s", row1);
    const char *row2 = strchr(row1, '\n') + 1;
    ck_assert_msg(strncmp(row2, "1,0,msm,5%,", 11) == 0, "%s", row2);
    /* text: a row per plan, the note once */
    run(&r, (const char *[]){"compare", R("--plans", "full:100%,msm:5%",
                             "--rounds", "3"), NULL});
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.err, "");
    const char *note = strstr(r.out, "RSS is per process, not per plan");
    ck_assert_ptr_nonnull(note);
    ck_assert_ptr_null(strstr(note + 1, "RSS is per process"));
    ck_assert_ptr_nonnull(strstr(r.out, "\nfull "));
    ck_assert_ptr_nonnull(strstr(r.out, "\nmsm "));
    ck_assert_ptr_nonnull(strstr(r.out, "coverage 75.00%"));
    ck_assert_ptr_nonnull(strstr(r.out, "too few rounds for 95%"));
    remove_scratch(dir);
}
END_TEST

/* The integer after "key": in line (up to its newline), or -1. */
static long long field_int(const char *line, const char *key)
{
    const char *end = strchr(line, '\n');
    const char *at = strstr(line, key);
    if (!at || (end && at > end))
        return -1;
    return strtoll(at + strlen(key), NULL, 10);
}

/* Two-level plans side by side: full, msm one-level and msm two-level
 * (STRATEGY:BUDGET/DISK) on a small LSTM; every plan's gradients are the
 * reference's (bptt_compare_run compares them byte for byte after every
 * iteration), the two-level plan wrote to and read from its slow level,
 * the one-level ones did not, and each has its predicted cost (forward
 * ops + WD x W + RD x R; one level: its forward ops).  Text: the row of
 * the two-level plan names its disk. */
START_TEST(test_compare_twolevel)
{
    static result r;
    run(&r, (const char *[]){"compare", "--cell", "lstm", "--hidden", "16",
                             "--batch", "2", "--length", "40", "--rounds",
                             "2", "--plans",
                             "full:100%,msm:5%,msm:5%/inf", "--write-cost",
                             "0.5", "--read-cost", "0.25", "--format",
                             "json", NULL});
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_int_eq(count_lines(r.out), 3);
    const char *line = r.out;
    for (int p = 0; p < 3; p++) {
        ck_assert_msg(field_int(line, "\"gradients_identical\":") == 1,
                      "plan %d: %s", p, line);
        const long long w = field_int(line, "\"slow_writes\":");
        const long long rd = field_int(line, "\"slow_reads\":");
        const long long bw = field_int(line, "\"slow_bytes_written\":");
        const long long f = field_int(line, "\"forward_ops\":");
        ck_assert_msg(strstr(line, "\"write_cost\":0.5,\"read_cost\":0.25"),
                      "plan %d: %s", p, line);
        if (p < 2) {
            ck_assert_msg(w == 0 && rd == 0 && bw == 0, "plan %d: %s", p,
                          line);
            ck_assert_msg(strstr(line, "\"disk_given\":\"\""), "%s", line);
            char want[64];
            snprintf(want, sizeof want, "\"predicted_cost\":%lld,", f);
            ck_assert_msg(strstr(line, want), "plan %d: %s", p, line);
        } else {
            ck_assert_msg(w > 0 && rd > 0 && bw > 0, "%s", line);
            ck_assert_msg(strstr(line, "\"disk_given\":\"inf\""), "%s", line);
            ck_assert_msg(strstr(line, "\"slow_seconds\":"), "%s", line);
            ck_assert_msg(!strstr(line, "\"predicted_cost\":null"), "%s",
                          line);
        }
        line = strchr(line, '\n') + 1;
    }
    run(&r, (const char *[]){"compare", "--cell", "lstm", "--hidden", "16",
                             "--batch", "2", "--length", "40", "--rounds",
                             "2", "--plans",
                             "full:100%,hsm:10slots/20slots", NULL});
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\nhsm        10slots/20slots "));
    ck_assert_ptr_nonnull(strstr(r.out, "pred_cost"));
    ck_assert_ptr_null(strstr(r.out, " NO"));
}
END_TEST

/* bptt calibrate: its record's times and costs are finite and positive
 * (no golden numbers: they vary), a folder given is left as it was, and
 * a file of the scratch file's name planted there is refused, not
 * replaced. */
START_TEST(test_calibrate)
{
    static const char *const fields[] = {
        "forward_seconds", "write_seconds_hidden", "read_seconds_hidden",
        "write_seconds_internal", "read_seconds_internal", "write_cost",
        "read_cost", "hidden_bytes", "internal_bytes", "alpha", "repeats"};
    char dir[64], sub[128], path[192], got[64];
    make_scratch(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/cal", dir);
    ck_assert_int_eq(mkdir(sub, 0777), 0);
    static result r;
    for (int given = 0; given < 2; given++) {
        run(&r, (const char *[]){"calibrate", "--hidden", "16", "--batch",
                                 "2", "--repeats", "3", "--format", "json",
                                 given ? "--disk-dir" : NULL, sub, NULL});
        ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
        ck_assert_int_eq(count_lines(r.out), 1);
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
            const double v = json_num(r.out, fields[i]);
            ck_assert_msg(isfinite(v) && v > 0, "%s = %g", fields[i], v);
        }
        ck_assert_str_eq(json_str(r.out, "disk_dir_kind", got, sizeof got),
                         given ? "given" : "temporary");
        ck_assert_int_eq((int)json_num(r.out, "repeats"), 3);
        ck_assert_int_eq((int)json_num(r.out, "hidden_bytes"),
                         2 * 2 * 16 * (int)sizeof(bptt_real));
        ck_assert(json_num(r.out, "alpha") == 3.5);
    }
    char names[1024] = "";
    list_tree(sub, "", names, sizeof names);
    ck_assert_msg(names[0] == '\0', "left in the folder: %s", names);
    snprintf(path, sizeof path, "%s/bptt-calibrate.scratch", sub);
    write_file(sub, "bptt-calibrate.scratch", "precious\n");
    run(&r, (const char *[]){"calibrate", "--hidden", "16", "--batch", "2",
                             "--repeats", "3", "--disk-dir", sub, NULL});
    ck_assert_int_eq(r.status, 2);
    ck_assert_int_eq(own_lines(r.err), 1);
    ck_assert_ptr_nonnull(strstr(r.err, "exists"));
    ck_assert_str_eq(r.out, "");
    size_t kept_len;
    char *kept = read_all(path, &kept_len);
    ck_assert_str_eq(kept, "precious\n");
    free(kept);
    remove_scratch(dir);
}
END_TEST

static Suite *cli_compare_suite(void)
{
    Suite *s = suite_create("cli compare");
    TCase *tc = tcase_create("compare and calibrate");
    tcase_add_test(tc, test_compare_outputs);
    tcase_add_test(tc, test_compare_twolevel);
    tcase_add_test(tc, test_calibrate);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_compare_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
