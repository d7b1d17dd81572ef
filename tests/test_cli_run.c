/* test_cli_run.c: the outputs of good `bptt run`s.
 *
 * The json record's fields; OpenBLAS's kernels as the run chooses and
 * records them (OPENBLAS_CORETYPE as the environment has it, never changed
 * here); gradient dumps the same bytes run after run and plan after plan;
 * hostile --task paths (quotes, control bytes, invalid UTF-8, long names)
 * escaped, quoted and never cut in json, csv and text (parsed back by
 * python3; skipped, with a message, where it does not run); and the dumps'
 * .npy shapes when sizes are 1.
 *
 * The runner itself uses no OpenMP or BLAS, so Check forks it freely. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include "cli_util.h"

#include "blascore.h"

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
        "\"memory_given\":\"10%\",", "\"record_format\":1,",
        "\"memory_budget_bytes\":", "\"alpha\":2,", "\"forward_ops\":",
        "\"backward_ops\":30", "\"checkpoint_peak_bytes\":",
        "\"full_checkpoint_bytes\":", "\"working_peak_bytes\":",
        "\"total_tracked_peak_bytes\":", "\"rss_peak_bytes\":",
        "\"seconds_per_iter\":", "\"loss_first\":", "\"loss_last\":",
        "\"grad_norm\":", "\"threads\":1", "\"seed\":1",
        "\"git_revision\":", "\"cpu_model\":", "\"date\":",
        "\"blas_core\":\"", "\"gemm_kernel\":\"",
        "\"packed_weight_bytes\":", "\"wgrad_block_bytes\":"};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        ck_assert_msg(strstr(r.out, fields[i]), "missing %s in %s", fields[i],
                      r.out);
}
END_TEST

/* OpenBLAS's kernels as the run records them, with OPENBLAS_CORETYPE as the
 * environment has it (never changed here): a user's value stands and is
 * recorded as theirs; unset, bptt runs the CPU's best kernels whenever
 * OpenBLAS chose older ones (started again: source "bptt"), so that no run
 * is slow for that reason; and the new start itself, shown by telling bptt
 * (BPTT_BLAS_TEST_CHOSEN, a test hook) that OpenBLAS chose Prescott.  No
 * line of bptt's on stderr in any case. */
START_TEST(test_blas_core_choice)
{
    const char *const args[] = {"run", "--length", "20", "--hidden", "8",
                                "--batch", "2", "--iters", "1", "--format",
                                "json", NULL};
    const char *env = getenv("OPENBLAS_CORETYPE");
    const char *marker = getenv(BPTT_BLAS_MARKER);
    const int env_set = env && *env;
    const int cpu = bptt_cpu_isa();
    char core[64], source[64], isa[64], slow[16];
    result r;
    for (int pretend = 1; pretend >= 0; pretend--) { /* plain run last */
        if (pretend)
            ck_assert_int_eq(setenv("BPTT_BLAS_TEST_CHOSEN", "Prescott", 1),
                             0);
        run(&r, args);
        unsetenv("BPTT_BLAS_TEST_CHOSEN");
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(own_lines(r.err) == 0, "stderr: %s", r.err);
        json_str(r.out, "blas_core", core, sizeof core);
        json_str(r.out, "blas_core_source", source, sizeof source);
        json_str(r.out, "cpu_isa", isa, sizeof isa);
        json_str(r.out, "blas_core_slow", slow, sizeof slow);
        ck_assert_str_eq(isa, bptt_isa_name(cpu));
        const int core_isa = bptt_blas_core_isa(core);
        ck_assert_int_eq(atoi(slow),
                         core_isa != BPTT_ISA_UNKNOWN && core_isa < cpu);
        if (env_set) { /* the user's choice, whatever OpenBLAS did */
            ck_assert_str_eq(source, marker && strcmp(marker, env) == 0
                                         ? "bptt"
                                         : "user");
            if (strstr(r.out, "DYNAMIC_ARCH"))
                ck_assert_str_eq(core, env);
        } else if (pretend && bptt_blas_core_for_isa(cpu)) {
            ck_assert_str_eq(source, "bptt");
            ck_assert_str_eq(core, bptt_blas_core_for_isa(cpu));
        } else {
            ck_assert_msg(!strcmp(source, "openblas") ||
                              !strcmp(source, "bptt"),
                          "%s", source);
            if (!strcmp(source, "bptt"))
                ck_assert_str_eq(core, bptt_blas_core_for_isa(cpu));
            ck_assert_msg(atoi(slow) == 0, "%s runs slow kernels: %s", core,
                          r.out);
        }
    }
    /* the text output says it in words */
    const char *const text[] = {"run", "--length", "20", "--hidden", "8",
                                "--batch", "2", "--iters", "1", NULL};
    run(&r, text);
    ck_assert_msg(r.status == 0, "%s", r.err);
    const char *line = strstr(r.out, "\nblas_core ");
    ck_assert_msg(line != NULL, "%s", r.out);
    ck_assert_msg(strstr(line, core) != NULL, "%s", r.out);
    ck_assert_msg((strstr(line, "slower") != NULL) == atoi(slow), "%s",
                  r.out);
}
END_TEST

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

/* ---- hostile values in the outputs: escaped, quoted, never cut ---------- */

/* Python's checks of the outputs of each case, given as three arguments:
 * the json output, the csv output, the --task value (bytes as given).
 * json: the file is UTF-8 and one line, a JSON object whose "task" is the
 * value with each invalid UTF-8 byte as U+FFFD; csv: after the "# "
 * metadata line (one JSON object, {"meta":{...}}, as sweeps write it), a
 * header row and one row of as many fields (RFC 4180),
 * the "task" field the value's bytes. */
static const char py_check[] =
    "import csv, io, json, os, sys\n"
    "a = sys.argv[1:]\n"
    "for i in range(0, len(a), 3):\n"
    "    jf, cf, task = a[i:i + 3]\n"
    "    raw = os.fsencode(task)\n"
    "    text = open(jf, 'rb').read().decode('utf-8')\n"
    "    lines = text.split('\\n')\n"
    "    assert len(lines) == 2 and lines[1] == '', (jf, lines)\n"
    "    rec = json.loads(lines[0])\n"
    "    got = rec['task']\n"
    "    want = raw.decode('utf-8', 'replace')\n"
    "    assert got == want, (jf, got, want)\n"
    "    text = open(cf, 'rb').read().decode('latin-1')\n"
    "    assert text.startswith('# {'), (cf, text[:40])\n"
    "    meta = json.loads(text[2:text.index('\\n')])['meta']\n"
    "    assert meta['record_format'] == 1, (cf, meta)\n"
    "    body = text[text.index('\\n') + 1:]\n"
    "    rows = list(csv.reader(io.StringIO(body, newline='')))\n"
    "    assert len(rows) == 2, (cf, rows)\n"
    "    assert len(rows[0]) == len(rows[1]), (cf, rows)\n"
    "    assert set(rows[0]) <= set(rec), (cf, set(rows[0]) - set(rec))\n"
    "    got = rows[1][rows[0].index('task')]\n"
    "    want = raw.decode('latin-1')\n"
    "    assert got == want, (cf, got, want)\n";

#define N_HOSTILE 9

/* `bptt run --task text:PATH` with PATH holding a quote, a backslash, a
 * newline, a tab, control bytes, UTF-8, invalid UTF-8 bytes, or over 200
 * bytes: the JSON result holds exactly the escaped form expected here, and
 * parses (python3 -m json.tool, and json.loads of the file as UTF-8) with
 * "task" equal to the value (invalid bytes as U+FFFD); the csv row has as
 * many fields as the header (RFC 4180), the task field whole; text shows
 * the value as it is.  Without python3 the parsing is skipped, with a
 * message. */
START_TEST(test_run_hostile_task)
{
    char dir[64];
    make_scratch(dir, sizeof dir);
    char longname[232];
    memset(longname, 'L', 226);
    memcpy(longname + 226, ".txt", 5);
    const struct {
        const char *name;    /* the file, in dir */
        const char *escaped; /* its name as a JSON string holds it */
    } cases[N_HOSTILE] = {
        {"q\"uote.txt", "q\\\"uote.txt"},
        {"back\\slash.txt", "back\\\\slash.txt"},
        {"new\nline.txt", "new\\nline.txt"},
        {"tab\there.txt", "tab\\there.txt"},
        {"ctl\001\037byte.txt", "ctl\\u0001\\u001fbyte.txt"},
        {"utf8-\xc3\xa9-\xe2\x82\xac.txt", "utf8-\xc3\xa9-\xe2\x82\xac.txt"},
        {"bad\xff-\xc3.txt", "bad\\ufffd-\\ufffd.txt"},
        {"all\"\\\n\t\001\xc3\xa9\xff,.txt",
         "all\\\"\\\\\\n\\t\\u0001\xc3\xa9\\ufffd,.txt"},
        {longname, longname},
    };
    const char text[] = "the quick brown fox jumps over the lazy dog\n";
    static char task[N_HOSTILE][520], files[N_HOSTILE][2][128];
    char all[128], log[128];
    snprintf(all, sizeof all, "%s/all.jsonl", dir);
    snprintf(log, sizeof log, "%s/python.log", dir);
    FILE *lines = fopen(all, "wb");
    ck_assert_ptr_nonnull(lines);
    const char *py[4 + 3 * N_HOSTILE] = {"python3", "-c", py_check};
    int np = 3;
    for (size_t k = 0; k < N_HOSTILE; k++) {
        char path[512], want[1024];
        snprintf(path, sizeof path, "%s/%s", dir, cases[k].name);
        write_path(path, text, sizeof text - 1);
        snprintf(task[k], sizeof task[k], "text:%s", path);
        if (k == N_HOSTILE - 1)
            ck_assert_uint_gt(strlen(path), 200);
        const char *fmt[] = {"json", "csv", "text"};
        for (int f = 0; f < 3; f++) {
            static result r;
            run(&r, (const char *[]){"run", "--cell", "rnn", "--length", "10",
                                     "--hidden", "4", "--batch", "2",
                                     "--iters", "1", "--threads", "1",
                                     "--task", task[k], "--format", fmt[f],
                                     NULL});
            ck_assert_msg(r.status == 0, "case %zu %s: %s", k, fmt[f], r.err);
            ck_assert_msg(own_lines(r.err) == 0, "case %zu: %s", k, r.err);
            if (f == 0) {
                snprintf(want, sizeof want, "\"task\":\"text:%s/%s\",", dir,
                         cases[k].escaped);
                ck_assert_msg(strstr(r.out, want) != NULL,
                              "case %zu: %s not in %s", k, want, r.out);
                ck_assert_int_eq(count_lines(r.out), 1);
                fputs(r.out, lines);
            }
            if (f == 2) {
                snprintf(want, sizeof want, "\ntask%*s%.520s\n", 29, "",
                         task[k]);
                ck_assert_msg(strstr(r.out, want) != NULL,
                              "case %zu: task not shown whole: %s", k, r.out);
                continue;
            }
            snprintf(files[k][f], sizeof files[k][f], "%s/out%zu.%s", dir, k,
                     fmt[f]);
            write_path(files[k][f], r.out, strlen(r.out));
        }
        py[np++] = files[k][0];
        py[np++] = files[k][1];
        py[np++] = task[k];
    }
    py[np] = NULL;
    ck_assert_int_eq(fclose(lines), 0);
    /* python3 parses them all at once (each start takes a while) */
    const int st = run_prog((const char *[]){"python3", "-c", "pass", NULL},
                            log);
    if (st != 0) {
        fprintf(stderr, "test_run_hostile_task: python3 does not run here "
                        "(status %d): the outputs are not parsed\n", st);
    } else {
        static char msg[1 << 14];
        memset(msg, 0, sizeof msg);
        ck_assert_msg(run_prog((const char *[]){"python3", "-m", "json.tool",
                                                "--json-lines", all, NULL},
                               log) == 0,
                      "python3 -m json.tool refuses %s: %s", all,
                      slurp(log, msg, sizeof msg - 1) >= 0 ? msg : "");
        memset(msg, 0, sizeof msg);
        ck_assert_msg(run_prog(py, log) == 0, "the outputs differ from the "
                      "values: %s",
                      slurp(log, msg, sizeof msg - 1) >= 0 ? msg : "");
    }
    remove_scratch(dir);
}
END_TEST

/* The .npy header's shape of path, e.g. "(2, 1)", into buf. */
static void npy_shape(const char *path, char *buf, size_t cap)
{
    char head[256];
    const long n = slurp(path, head, sizeof head - 1);
    ck_assert_msg(n >= 64, "%s: %ld bytes", path, n);
    head[n] = '\0';
    ck_assert_msg(memcmp(head, "\x93NUMPY\x01\x00", 8) == 0, "%s", path);
    const char *s = strstr(head + 10, "'shape': (");
    ck_assert_msg(s != NULL, "%s: no shape", path);
    s += 9;
    const char *e = strchr(s, ')');
    ck_assert_msg(e != NULL && (size_t)(e - s) + 2 <= cap, "%s", path);
    memcpy(buf, s, (size_t)(e - s) + 1);
    buf[e - s + 1] = '\0';
}

/* --dump-grads keeps every tensor's rank when sizes are 1: weights are
 * 2-D ((1, 1) Wo of a one-symbol text at --hidden 1; (2, 1) Wo at
 * --hidden 1), biases 1-D, in the .npy headers and in index.txt alike. */
START_TEST(test_dump_shapes)
{
    char dir[64];
    make_scratch(dir, sizeof dir);
    char text[128], task[160];
    snprintf(text, sizeof text, "%s/a.txt", dir);
    write_path(text, "abababababababababababababababab", 32);
    snprintf(task, sizeof task, "text:%s", text);
    const struct {
        const char *cell, *layers, *task, *input;
        const char *shapes[12][2]; /* tensor, shape */
    } cases[] = {
        {"lstm", "1", task, NULL,
         {{"W0", "(4, 3)"}, {"b0", "(4,)"}, {"Wo", "(2, 1)"}, {"bo", "(2,)"},
          {"inputs", "(8, 1, 2)"}, {"targets", "(8, 1)"}}},
        {"rnn", "2", "copy", "2",
         {{"W0", "(1, 3)"}, {"b0", "(1,)"}, {"W1", "(1, 2)"}, {"b1", "(1,)"},
          {"Wo", "(2, 1)"}, {"bo", "(2,)"}, {"inputs", "(8, 1, 2)"},
          {"targets", "(8, 1)"}}},
        /* the GRU's four row blocks [r, z, n_x, n_h] (cell.h) */
        {"gru", "2", "copy", "2",
         {{"W0", "(4, 3)"}, {"b0", "(4,)"}, {"W1", "(4, 2)"}, {"b1", "(4,)"},
          {"Wo", "(2, 1)"}, {"bo", "(2,)"}, {"inputs", "(8, 1, 2)"},
          {"targets", "(8, 1)"}}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char d[128];
        snprintf(d, sizeof d, "%s/dump%u", dir, (unsigned)k);
        const char *args[32] = {"run", "--cell", cases[k].cell, "--layers",
                                cases[k].layers, "--length", "8", "--hidden",
                                "1", "--batch", "1", "--iters", "1",
                                "--threads", "1", "--task", cases[k].task,
                                "--dump-grads", d, "--format", "json"};
        int n = 21;
        if (cases[k].input) {
            args[n++] = "--input";
            args[n++] = cases[k].input;
        }
        args[n] = NULL;
        static result r;
        run(&r, args);
        ck_assert_msg(r.status == 0, "case %zu: %s", k, r.err);
        char path[256], shape[64], line[256];
        static char index[1 << 14];
        snprintf(path, sizeof path, "%s/index.txt", d);
        ck_assert_int_gt(slurp(path, index, sizeof index - 1), 0);
        for (size_t i = 0; i < 12 && cases[k].shapes[i][0]; i++) {
            const char *t = cases[k].shapes[i][0], *want = cases[k].shapes[i][1];
            const int data = strcmp(t, "inputs") == 0 ||
                             strcmp(t, "targets") == 0;
            for (int g = 0; g < (data ? 1 : 2); g++) {
                const char *prefix = data ? "" : g ? "grad_" : "param_";
                snprintf(path, sizeof path, "%s/%s%s.npy", d, prefix, t);
                npy_shape(path, shape, sizeof shape);
                ck_assert_msg(strcmp(shape, want) == 0,
                              "case %zu: %s%s.npy has shape %s, not %s", k,
                              prefix, t, shape, want);
                snprintf(line, sizeof line, "\n%s%s.npy %s%s %s ", prefix, t,
                         prefix, t, want);
                ck_assert_msg(strstr(index, line) != NULL,
                              "case %zu: index.txt lacks '%s':\n%s", k,
                              line + 1, index);
            }
        }
    }
    remove_scratch(dir);
}
END_TEST

static Suite *cli_run_suite(void)
{
    Suite *s = suite_create("cli run");
    TCase *tc = tcase_create("outputs");
    tcase_add_test(tc, test_run_json);
    tcase_add_test(tc, test_blas_core_choice);
    tcase_add_test(tc, test_run_deterministic_dump);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("hostile values and shapes");
    tcase_add_test(tc, test_run_hostile_task);
    tcase_add_test(tc, test_dump_shapes);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(cli_run_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
