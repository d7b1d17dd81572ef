/* test_sweep.c: `bptt sweep` as a user meets it.
 *
 * Runs the built binary ($BPTT, set by `make check`) and the batch scripts
 * ($srcdir/scripts) as child processes, in a fresh directory under /tmp per
 * test: range and config parsing (and the one-line errors of bad ones),
 * plan-mode output (header, record count, grid order, no timings), sweeps
 * killed with SIGKILL at many moments and rerun (the final file must equal
 * an uninterrupted sweep's byte for byte), SIGINT, a tiny run-mode sweep,
 * and the batch path: --jobs, --only, --merge, scripts/sweep-parallel (GNU
 * parallel; skipped with a message if it is not installed) and
 * scripts/slurm-sweep's array tasks; and that nothing a killed sweep or
 * sweep-parallel started outlives it (found by a tag in the environment).
 *
 * Every child gets SOURCE_DATE_EPOCH, so that headers written at different
 * times carry the same date and whole files can be compared.  This runner
 * uses no OpenMP or BLAS: Check forks it freely. */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lines.h"

/* ---- running children -------------------------------------------------- */

typedef struct {
    int status;  /* exit status, or 128 + signal */
    char *out;   /* stdout, NUL-terminated */
    char err[1 << 13];
} result;

static const char *bptt(void)
{
    const char *b = getenv("BPTT");
    ck_assert_msg(b != NULL, "BPTT is not set (run through make check)");
    return b;
}

/* Reads both pipes to their ends (poll-free: stderr is small and read
 * after stdout, which the children never fill while stderr blocks). */
static void drain(int fd, char **buf, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    ck_assert_ptr_nonnull(b);
    ssize_t r;
    while ((r = read(fd, b + n, cap - 1 - n)) != 0) {
        if (r < 0) {
            ck_assert_int_eq(errno, EINTR);
            continue;
        }
        n += (size_t)r;
        if (n + 1 == cap) {
            cap *= 2;
            b = realloc(b, cap);
            ck_assert_ptr_nonnull(b);
        }
    }
    b[n] = '\0';
    *buf = b;
    if (len)
        *len = n;
}

/* Starts argv (argv[0] a path) with an optional "NAME=VALUE" in its
 * environment, stdout and stderr to pipes; returns the pid. */
static pid_t start(const char *const *argv, const char *env, int *po,
                   int *pe)
{
    int o[2], e[2];
    ck_assert_int_eq(pipe(o), 0);
    ck_assert_int_eq(pipe(e), 0);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (env)
            putenv((char *)env);
        dup2(o[1], 1);
        dup2(e[1], 2);
        close(o[0]), close(o[1]), close(e[0]), close(e[1]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(o[1]);
    close(e[1]);
    *po = o[0];
    *pe = e[0];
    return pid;
}

static int wait_status(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ck_assert_int_eq(errno, EINTR);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void finish(result *r, pid_t pid, int po, int pe)
{
    drain(po, &r->out, NULL);
    char *err;
    drain(pe, &err, NULL);
    snprintf(r->err, sizeof r->err, "%s", err);
    free(err);
    close(po);
    close(pe);
    r->status = wait_status(pid);
}

/* Runs `bptt sweep ARGS...` (NULL-terminated) with env ("NAME=VALUE" or
 * NULL). */
static void sweep_env(result *r, const char *env, const char *const *args)
{
    const char *argv[96];
    int n = 0;
    argv[n++] = bptt();
    argv[n++] = "sweep";
    for (int i = 0; args[i]; i++) {
        ck_assert_int_lt(n, 94);
        argv[n++] = args[i];
    }
    argv[n] = NULL;
    int po, pe;
    const pid_t pid = start(argv, env, &po, &pe);
    finish(r, pid, po, pe);
}

#define SWEEP(r, ...)                                                       \
    sweep_env((r), NULL, (const char *const[]){__VA_ARGS__, NULL})

/* Runs a shell command line; returns its status. */
static void shell(result *r, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
    int po, pe;
    const pid_t pid = start(argv, NULL, &po, &pe);
    finish(r, pid, po, pe);
}

static void result_free(result *r)
{
    free(r->out);
    r->out = NULL;
}

/* ---- files ------------------------------------------------------------- */

static char *slurp(const char *path, size_t *len)
{
    const int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    char *b;
    drain(fd, &b, len);
    close(fd);
    return b;
}

static int exists(const char *path) { return access(path, F_OK) == 0; }

static void same_files(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    ck_assert_msg(x != NULL, "%s is missing", a);
    ck_assert_msg(y != NULL, "%s is missing", b);
    ck_assert_msg(na == nb && memcmp(x, y, na) == 0,
                  "%s and %s differ (%zu and %zu bytes)", a, b, na, nb);
    free(x);
    free(y);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* A fresh directory per test, entered; removed by leave(). */
static char tmpdir[64];

static void enter(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/bptt-sweep-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
    ck_assert_int_eq(chdir(tmpdir), 0);
}

static void leave(void)
{
    char cmd[128];
    ck_assert_int_eq(chdir("/"), 0);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The values of `key` in --list output, comma-joined. */
static void listed(const char *out, const char *key, char *buf, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\t%s=", key);
    buf[0] = '\0';
    size_t n = 0;
    for (const char *p = strstr(out, pat); p; p = strstr(p + 1, pat)) {
        p += strlen(pat);
        const size_t len = strcspn(p, "\t\n");
        n += (size_t)snprintf(buf + n, cap - n, "%s%.*s", n ? "," : "",
                              (int)len, p);
        ck_assert_uint_lt(n, cap);
    }
}

/* ---- ranges ------------------------------------------------------------ */

typedef struct {
    const char *mode, *key, *text, *want;
} range_case;

static const range_case ranges[] = {
    {"plan", "length", "7", "7"},
    {"plan", "length", "3,1,2", "3,1,2"},
    {"plan", "length", "5:12:3", "5,8,11"},
    {"plan", "length", "5:11:3", "5,8,11"},
    {"plan", "length", "4:6", "4,5,6"},
    {"plan", "length", "10:10000:*10", "10,100,1000,10000"},
    {"plan", "length", "2:20:*3", "2,6,18"},
    {"plan", "length", "1:10:*2,100", "1,2,4,8,100"},
    {"plan", "alpha", "1:4", "1,2,3,4"},
    {"plan", "memory", "5%,10%,64", "5%,10%,64"},
    {"plan", "memory", "5%:20%:5", "5%,10%,15%,20%"},
    {"plan", "memory", "100:400:*2,2.5%", "100,200,400,2.5%"},
    {"plan", "memory", "10slots:30slots:10", "10slots,20slots,30slots"},
    {"run", "memory", "1MiB:8MiB:*2,5%", "1MiB,2MiB,4MiB,8MiB,5%"},
    {"run", "seed", "0:3", "0,1,2,3"},
    {"run", "hidden", "16:64:*2", "16,32,64"},
};

START_TEST(test_ranges)
{
    const range_case *c = &ranges[_i];
    char opt[32];
    snprintf(opt, sizeof opt, "--%s", c->key);
    result r;
    if (strcmp(c->key, "length") == 0)
        SWEEP(&r, "--mode", c->mode, "--length", c->text, "--list");
    else
        SWEEP(&r, "--mode", c->mode, "--length", "10", opt, c->text,
              "--list");
    ck_assert_msg(r.status == 0, "%s %s: %s", c->key, c->text, r.err);
    char got[512];
    listed(r.out, c->key, got, sizeof got);
    ck_assert_msg(strcmp(got, c->want) == 0, "--%s %s: got %s, want %s",
                  c->key, c->text, got, c->want);
    result_free(&r);
}
END_TEST

/* The grid is row-major over the axes in their documented order. */
START_TEST(test_grid_order)
{
    result r;
    SWEEP(&r, "--mode", "run", "--seed", "1,2", "--length", "10,20",
          "--cell", "rnn,lstm", "--strategy", "hsm,msm", "--list");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_int_eq(count_lines(r.out), 16);
    const char *want =
        "0\tstrategy=hsm\tcell=rnn\tlength=10\tmemory=100%\tseed=1\n"
        "1\tstrategy=hsm\tcell=rnn\tlength=10\tmemory=100%\tseed=2\n"
        "2\tstrategy=hsm\tcell=rnn\tlength=20\tmemory=100%\tseed=1\n";
    ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0, "%s", r.out);
    ck_assert_ptr_nonnull(
        strstr(r.out, "\n15\tstrategy=msm\tcell=lstm\tlength=20\t"
                      "memory=100%\tseed=2\n"));
    result_free(&r);
}
END_TEST

/* ---- bad input ---------------------------------------------------------- */

typedef struct {
    const char *args[16];
    int status;
    const char *says;
} bad_case;

static const bad_case bad_cases[] = {
    {{"--out", "x.jsonl", NULL}, 2, "--length is required"},
    {{"--length", "10", NULL}, 2, "--out FILE is required"},
    {{"--length", "10:1", "--out", "x", NULL}, 2, "runs downwards"},
    {{"--length", "10:1:*2", "--out", "x", NULL}, 2, "runs downwards"},
    {{"--length", "1:10:0", "--out", "x", NULL}, 2, "bad step"},
    {{"--length", "1:10:-2", "--out", "x", NULL}, 2, "bad step"},
    {{"--length", "1:10:*1", "--out", "x", NULL}, 2, "bad step"},
    {{"--length", "1:10:*1.5", "--out", "x", NULL}, 2, "bad step"},
    {{"--length", "0:10:*2", "--out", "x", NULL}, 2, "start at 1"},
    {{"--length", "0:10", "--out", "x", NULL}, 2, "leaves 1.."},
    {{"--length", "a:b", "--out", "x", NULL}, 2, "whole-number ends"},
    {{"--length", "1::2", "--out", "x", NULL}, 2, "whole-number ends"},
    {{"--length", ":5", "--out", "x", NULL}, 2, "whole-number ends"},
    {{"--length", "1:2:3:4", "--out", "x", NULL}, 2, "not a range"},
    {{"--length", "5,", "--out", "x", NULL}, 2, "empty value"},
    {{"--length", "1,,2", "--out", "x", NULL}, 2, "empty value"},
    {{"--length", "x", "--out", "x", NULL}, 2, "not a whole number"},
    {{"--length", "0", "--out", "x", NULL}, 2, "out of range"},
    {{"--length", "1:1000000", "--out", "x", NULL}, 2, "more than 100000"},
    /* one past the cap, whether the range comes alone or after a list;
     * and a range far past it, refused before any value is made */
    {{"--length", "1:100001", "--out", "x", NULL}, 2, "more than 100000"},
    {{"--length", "1,2,3,4:100001", "--out", "x", NULL}, 2,
     "more than 100000"},
    {{"--length", "1:2147483642", "--out", "x", NULL}, 2, "more than 100000"},
    {{"--length", "2:200002:2", "--out", "x", NULL}, 2, "more than 100000"},
    {{"--length", "1:100000", "--memory", "1:20", "--out", "x", NULL}, 2,
     "more than 1000000 points"},
    {{"--length", "10", "--memory", "1MiB:4%:1", "--out", "x", NULL}, 2,
     "one unit"},
    {{"--length", "10", "--memory", "1.5:3", "--out", "x", NULL}, 2,
     "whole-number ends"},
    {{"--length", "10", "--memory", "lots", "--out", "x", NULL}, 2,
     "is not a budget"},
    {{"--length", "10", "--memory", "64MiB", "--out", "x", NULL}, 2,
     "in bytes"},
    {{"--mode", "run", "--length", "10", "--memory", "12", "--out", "x",
      NULL},
     2, "has no unit"},
    {{"--length", "10", "--hidden", "4,8", "--out", "x", NULL}, 2,
     "does not apply in plan mode"},
    {{"--mode", "run", "--length", "10", "--alpha", "2,3", "--out", "x",
      NULL},
     2, "does not apply in run mode"},
    {{"--length", "10", "--threads", "1,2", "--out", "x", NULL}, 2,
     "one thread count"},
    {{"--length", "10", "--strategy", "hsm,magic", "--out", "x", NULL}, 2,
     "unknown strategy 'magic'"},
    {{"--mode", "run", "--length", "10", "--cell", "qrnn", "--out", "x", NULL},
     2, "unknown cell"},
    {{"--mode", "walk", "--length", "10", "--out", "x", NULL}, 2,
     "unknown mode"},
    {{"--length", "10", "--format", "xml", "--out", "x", NULL}, 2,
     "unknown format"},
    {{"--length", "10", "--infeasible", "maybe", "--out", "x", NULL}, 2,
     "unknown policy"},
    {{"--mode", "run", "--length", "10", "--iters", "0", "--out", "x", NULL},
     2, "--iters"},
    {{"--mode", "run", "--length", "10", "--lr", "-1", "--out", "x", NULL},
     2, "--lr"},
    {{"--mode", "run", "--length", "10", "--optimizer", "rmsprop", "--out",
      "x", NULL},
     2, "unknown optimizer"},
    {{"--mode", "run", "--length", "10", "--task", "text:/nonexistent",
      "--out", "x", NULL},
     2, "cannot read '/nonexistent'"},
    {{"--length", "10", "--list", "--merge", NULL}, 2, "exclude each other"},
    {{"--length", "10", "--out", "x", "--only", "1", NULL}, 2,
     "not in the grid"},
    {{"--length", "10", "--out", "x", "--only", "-1", NULL}, 2, "--only"},
    {{"--length", "10", "--out", "x", "--bogus", NULL}, 2, "unknown option"},
    {{"--length", "10", "--out", "x", "extra", NULL}, 2,
     "unexpected argument"},
    {{"--length", "10", "--out", "x", "--config", "/nonexistent", NULL}, 2,
     "cannot read"},
    {{"--length", "10", "--out", NULL}, 2, "needs a value"},
    /* infeasible budgets: before any work */
    {{"--strategy", "msm,full", "--length", "100", "--alpha", "4",
      "--memory", "5%,100%", "--out", "x", NULL},
     3, "point 2 of 4 (strategy=full length=100 alpha=4 memory=5%): budget "
        "19 slots is below the smallest feasible one, 396 slots"},
    {{"--strategy", "chen", "--length", "1000", "--alpha", "4", "--memory",
      "154", "--out", "x", "--jobs", "j", NULL},
     3, "smallest feasible one, 155 slots"},
    {{"--length", "10", "--memory", "0", "--out", "x", NULL}, 3,
     "smallest feasible one, 1 slots"},
};

START_TEST(test_bad_input)
{
    enter();
    const bad_case *c = &bad_cases[_i];
    result r;
    sweep_env(&r, NULL, c->args);
    ck_assert_msg(r.status == c->status, "case %d: exit %d, want %d (%s)", _i,
                  r.status, c->status, r.err);
    ck_assert_msg(own_lines(r.err) == 1, "case %d: %d stderr lines: %s", _i,
                  own_lines(r.err), r.err);
    ck_assert_msg(strstr(r.err, c->says) != NULL,
                  "case %d: stderr lacks '%s': %s", _i, c->says, r.err);
    ck_assert_msg(r.out[0] == '\0', "case %d: stdout not empty", _i);
    ck_assert_msg(!exists("x") && !exists("x.partial") && !exists("j"),
                  "case %d: files written", _i);
    result_free(&r);
    leave();
}
END_TEST

/* ---- the config file ---------------------------------------------------- */

START_TEST(test_config)
{
    enter();
    write_text("s.conf", "# a plan sweep\n"
                         "mode = plan\n"
                         "\n"
                         "strategy = hsm,msm   # two strategies\n"
                         "  length=10:30:10\n"
                         "memory = 10%,50%\n"
                         "alpha = 2\n"
                         "out = conf.jsonl\n");
    result r;
    SWEEP(&r, "--config", "s.conf", "--list");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_int_eq(count_lines(r.out), 12);
    char got[256];
    listed(r.out, "length", got, sizeof got);
    ck_assert_str_eq(got, "10,10,20,20,30,30,10,10,20,20,30,30");
    listed(r.out, "alpha", got, sizeof got);
    ck_assert_str_eq(got, "2,2,2,2,2,2,2,2,2,2,2,2");
    result_free(&r);

    /* the command line wins */
    SWEEP(&r, "--config", "s.conf", "--alpha", "3", "--length", "7",
          "--list");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(r.out, "0\tstrategy=hsm\tlength=7\talpha=3\tmemory=10%\n"
                            "1\tstrategy=hsm\tlength=7\talpha=3\tmemory=50%\n"
                            "2\tstrategy=msm\tlength=7\talpha=3\tmemory=10%\n"
                            "3\tstrategy=msm\tlength=7\talpha=3\t"
                            "memory=50%\n");
    result_free(&r);

    /* out from the file */
    SWEEP(&r, "--config", "s.conf");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert(exists("conf.jsonl"));
    result_free(&r);

    static const struct {
        const char *text, *says;
    } bad[] = {
        {"lenght = 5\n", "bad.conf:1: unknown key 'lenght'"},
        {"--length = 5\n", "bad.conf:1: unknown key '--length'"},
        {"jobs = x\n", "bad.conf:1: unknown key 'jobs'"},
        {"length 5\n", "bad.conf:1: 'length 5' is not 'key = value'"},
        {"length =\n", "bad.conf:1: length has no value"},
        {"length = 5\n# c\nlength = 6\n",
         "bad.conf:3: length is set twice (first on line 1)"},
        {"length = x\n", "bad.conf:1: length: 'x' is not a whole number"},
        {"\n\nmemory = 5%:x\nlength = 4\n",
         "bad.conf:3: memory: range '5%:x'"},
        {"length = 4\nmode = fast\n", "bad.conf:2: mode: unknown mode"},
        {"length = 4\nhidden = 1,2\n",
         "bad.conf:2: hidden: hidden does not apply in plan mode"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text("bad.conf", bad[i].text);
        SWEEP(&r, "--config", "bad.conf", "--out", "x");
        ck_assert_msg(r.status == 2, "config %zu: exit %d (%s)", i, r.status,
                      r.err);
        ck_assert_msg(own_lines(r.err) == 1 && strstr(r.err, bad[i].says),
                      "config %zu: stderr lacks '%s': %s", i, bad[i].says,
                      r.err);
        result_free(&r);
    }
    leave();
}
END_TEST

/* ---- plan-mode output --------------------------------------------------- */

#define PLAN_GRID                                                           \
    "--strategy", "hsm,msm,ism", "--length", "10:50:10", "--memory",          \
        "3,5%,8", "--alpha", "3"
#define PLAN_POINTS 45

START_TEST(test_plan_output)
{
    enter();
    result r;
    SWEEP(&r, PLAN_GRID, "--out", "a.jsonl");
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(own_lines(r.err) == 0, "%s", r.err); /* quiet: stderr is
                                                          not a terminal */
    result_free(&r);
    ck_assert(!exists("a.jsonl.partial"));
    size_t n;
    char *text = slurp("a.jsonl", &n);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(count_lines(text), 1 + PLAN_POINTS);
    ck_assert_msg(strncmp(text, "{\"meta\":{\"record_format\":1,"
                                "\"version\":", 36) == 0,
                  "%.80s", text);
    const char *header_fields[] = {
        "\"git_revision\":", "\"compiler\":", "\"cflags\":", "\"blas\":",
        "\"blas_threads\":", "\"cpu_model\":", "\"date\":\"2023-11-14T22:13:20Z\"",
        "\"sweep\":{\"mode\":\"plan\",\"points\":45,"
        "\"axes\":\"strategy,length,alpha,memory\",\"grid\":\"mode=plan; "
        "strategy=hsm,msm,ism; length=10,20,30,40,50; alpha=3; "
        "memory=3,5%,8\",\"grid_hash\":\""};
    char *nl = strchr(text, '\n');
    for (size_t i = 0; i < sizeof header_fields / sizeof *header_fields; i++)
        ck_assert_msg(strstr(text, header_fields[i]) &&
                          strstr(text, header_fields[i]) < nl,
                      "header lacks %s", header_fields[i]);
    /* grid order: strategy, length, memory (alpha fixed) */
    static const char *const strat[] = {"hsm", "msm", "ism"};
    static const char *const mem[] = {"3", "5%", "8"};
    const char *line = nl + 1;
    for (int k = 0; k < PLAN_POINTS; k++) {
        char want[160];
        snprintf(want, sizeof want,
                 "{\"point\":%d,\"memory_spec\":\"%s\",\"strategy\":\"%s\","
                 "\"length\":%d,\"alpha\":3,\"memory\":",
                 k, mem[k % 3], strat[k / 15], 10 * (k / 3 % 5 + 1));
        ck_assert_msg(strncmp(line, want, strlen(want)) == 0,
                      "line %d: %.120s, want %s", k + 2, line, want);
        const char *end = strchr(line, '\n');
        ck_assert_msg(!strstr(line, "seconds") || strstr(line, "seconds") > end,
                      "a plan record holds a timing: %.200s", line);
        line = end + 1;
    }
    /* a record is `bptt plan --format json` without its timings */
    {
        const char *argv[] = {bptt(), "plan", "--strategy", "msm",
                              "--length", "30", "--alpha", "3", "--memory",
                              "5%", "--format", "json", NULL};
        int po, pe;
        const pid_t pid = start(argv, NULL, &po, &pe);
        finish(&r, pid, po, pe);
        ck_assert_int_eq(r.status, 0);
        char *cut = strstr(r.out, ",\"plan_seconds\"");
        ck_assert_ptr_nonnull(cut);
        strcpy(cut, "}\n");
        char want[1024];
        snprintf(want, sizeof want,
                 "\n{\"point\":22,\"memory_spec\":\"5%%\",%s", r.out + 1);
        ck_assert_msg(strstr(text, want), "no record %s", want);
        result_free(&r);
    }
    free(text);

    /* done: a rerun says so and does nothing */
    SWEEP(&r, PLAN_GRID, "--out", "a.jsonl");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "is complete"));
    result_free(&r);
    /* another grid into the same file: refused; --force replaces it */
    SWEEP(&r, "--length", "10", "--out", "a.jsonl");
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "holds another sweep"));
    result_free(&r);
    write_text("b.jsonl", "not a sweep\n");
    SWEEP(&r, "--length", "10", "--out", "b.jsonl");
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "is not a bptt sweep file"));
    result_free(&r);
    SWEEP(&r, PLAN_GRID, "--out", "c.jsonl", "--force");
    ck_assert_int_eq(r.status, 0);
    result_free(&r);
    same_files("a.jsonl", "c.jsonl");

    /* csv: "# {meta}", the header row, a row per point */
    SWEEP(&r, PLAN_GRID, "--out", "a.csv");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    text = slurp("a.csv", &n);
    ck_assert_int_eq(count_lines(text), 2 + PLAN_POINTS);
    ck_assert(strncmp(text, "# {\"meta\":{", 11) == 0);
    line = strchr(text, '\n') + 1;
    const char *cols = "point,memory_spec,strategy,length,alpha,memory,"
                       "forward_ops,recompute_ops,backward_ops,peak_slots,"
                       "forward_ops_per_step,full_peak_slots,memory_fraction,"
                       "min_memory,actions\n0,3,hsm,10,3,3,";
    ck_assert_msg(strncmp(line, cols, strlen(cols)) == 0, "%.300s", line);
    free(text);
    leave();
}
END_TEST

/* Infeasible points kept as records with --infeasible record. */
START_TEST(test_infeasible_record)
{
    enter();
    result r;
    SWEEP(&r, "--strategy", "full,chen", "--length", "100", "--alpha", "4",
          "--memory", "5%,100%", "--infeasible", "record", "--out", "i.csv");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    size_t n;
    char *text = slurp("i.csv", &n);
    ck_assert_ptr_nonnull(
        strstr(text, "\n0,5%,full,100,4,19,,,,,,396,,396,\n"));
    ck_assert_ptr_nonnull(
        strstr(text, "\n2,5%,chen,100,4,19,,,,,,396,,46,\n"));
    ck_assert_ptr_nonnull(strstr(text, "\n3,100%,chen,100,4,396,200,"));
    free(text);
    leave();
}
END_TEST

/* The notes a sweep prints when there is nothing to do ("FILE is
 * complete", "point K is done already") are one line with the name's
 * control bytes escaped, as every message is: an --out holding an escape
 * sequence and a carriage return never reaches the terminal raw. */
START_TEST(test_notes_one_line)
{
    enter();
    const char *out = "n\033[2J\rx.jsonl";
    result r;
    for (int k = 0; k < 2; k++) {
        SWEEP(&r, "--length", "10,20", "--out", out);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(k == 0 || strstr(r.err, "is complete"), "%s", r.err);
        ck_assert_msg(own_lines(r.err) == k && count_lines(r.err) == k, "%s",
                      r.err);
        ck_assert_msg(!strpbrk(r.err, "\033\r"), "a raw control byte: %s",
                      r.err);
        ck_assert_msg(k == 0 || strstr(r.err, "n\\x1b[2J\\rx.jsonl"), "%s",
                      r.err);
        result_free(&r);
    }
    for (int k = 0; k < 2; k++) {
        SWEEP(&r, "--length", "10,20", "--out", out, "--only", "1");
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(own_lines(r.err) == k && count_lines(r.err) == k, "%s",
                      r.err);
        ck_assert_msg(k == 0 || strstr(r.err, "point 1 is done already"),
                      "%s", r.err);
        ck_assert_msg(!strpbrk(r.err, "\033\r"), "a raw control byte: %s",
                      r.err);
        result_free(&r);
    }
    leave();
}
END_TEST

/* ---- interrupted sweeps ------------------------------------------------- */

/* The reference: an uninterrupted sweep of PLAN_GRID into ref.jsonl. */
static void reference(void)
{
    result r;
    SWEEP(&r, PLAN_GRID, "--out", "ref.jsonl");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
}

/* Killed by the test hook after N records (N.5: in the middle of the
 * next line), several times over, then finished: the same file. */
START_TEST(test_killed_by_hook)
{
    enter();
    reference();
    static const char *const plans[][4] = {
        {"0", NULL},
        {"1", NULL},
        {"7.5", NULL},
        {"44", NULL},
        {"44.5", NULL},
        {"3", "0.5", "10.5", "5"},
        {"20.5", "20.5", "4", NULL},
    };
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++) {
        unlink("k.jsonl");
        long done = 0;
        for (int j = 0; j < 4 && plans[p][j]; j++) {
            char env[64];
            snprintf(env, sizeof env, "BPTT_SWEEP_DIE_AFTER=%s", plans[p][j]);
            result r;
            sweep_env(&r, env, (const char *const[]){PLAN_GRID, "--out",
                                                     "k.jsonl", NULL});
            ck_assert_msg(r.status == 128 + SIGKILL, "plan %zu: exit %d (%s)",
                          p, r.status, r.err);
            result_free(&r);
            done += atol(plans[p][j]);
            size_t n;
            char *part = slurp("k.jsonl.partial", &n);
            ck_assert_ptr_nonnull(part);
            ck_assert_int_eq(count_lines(part), 1 + done);
            const int halfway = strchr(plans[p][j], '.') != NULL;
            ck_assert_msg(halfway == (part[n - 1] != '\n'),
                          "plan %zu: the partial file %s a whole line", p,
                          halfway ? "ends with" : "does not end with");
            free(part);
            ck_assert(!exists("k.jsonl"));
        }
        result r;
        SWEEP(&r, PLAN_GRID, "--out", "k.jsonl");
        ck_assert_msg(r.status == 0, "plan %zu: %s", p, r.err);
        result_free(&r);
        ck_assert(!exists("k.jsonl.partial"));
        same_files("k.jsonl", "ref.jsonl");
    }
    /* a partial file of another grid is refused, and --force starts over */
    unlink("k.jsonl");
    result r;
    sweep_env(&r, "BPTT_SWEEP_DIE_AFTER=2",
              (const char *const[]){"--length", "10,20,30", "--out", "k.jsonl",
                                    NULL});
    ck_assert_int_eq(r.status, 128 + SIGKILL);
    result_free(&r);
    SWEEP(&r, PLAN_GRID, "--out", "k.jsonl");
    ck_assert_int_eq(r.status, 2);
    ck_assert_int_eq(own_lines(r.err), 1);
    ck_assert_ptr_nonnull(strstr(r.err, "k.jsonl.partial belongs to another "
                                        "sweep"));
    result_free(&r);
    SWEEP(&r, PLAN_GRID, "--out", "k.jsonl", "--force");
    ck_assert_int_eq(r.status, 0);
    result_free(&r);
    same_files("k.jsonl", "ref.jsonl");

    /* records of two builds never share a file */
    unlink("k.jsonl");
    sweep_env(&r, "BPTT_SWEEP_DIE_AFTER=5",
              (const char *const[]){PLAN_GRID, "--out", "k.jsonl", NULL});
    ck_assert_int_eq(r.status, 128 + SIGKILL);
    result_free(&r);
    shell(&r, "sed -i '1s/\"git_revision\":\"[^\"]*\"/\"git_revision\":"
              "\"0ther\"/' k.jsonl.partial");
    ck_assert_int_eq(r.status, 0);
    result_free(&r);
    SWEEP(&r, PLAN_GRID, "--out", "k.jsonl");
    ck_assert_int_eq(r.status, 2);
    ck_assert_int_eq(own_lines(r.err), 1);
    ck_assert_msg(strstr(r.err, "was started by bptt ") &&
                      strstr(r.err, "(git 0ther), not by this build"),
                  "%s", r.err);
    result_free(&r);

    /* killed between the rename and the removal of the partial file: the
     * complete file stands, the partial one goes */
    shell(&r, "cp ref.jsonl k.jsonl");
    result_free(&r);
    SWEEP(&r, PLAN_GRID, "--out", "k.jsonl");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "is complete"));
    result_free(&r);
    ck_assert(!exists("k.jsonl.partial"));
    same_files("k.jsonl", "ref.jsonl");
    leave();
}
END_TEST

/* SIGKILL at random moments, until a sweep ends by itself: the same file
 * as the uninterrupted one. */
START_TEST(test_killed_at_random)
{
    enter();
    const char *grid[] = {"--strategy", "msm,hsm", "--length", "200:400:50",
                          "--memory", "5%:50%:5", "--alpha", "4",
                          "--threads", "1", "--out", NULL, NULL};
    grid[11] = "ref.jsonl";
    result r;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    sweep_env(&r, NULL, grid);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    /* the window grows by 5 ms a round, or faster where the whole sweep
     * is slow (a sanitizer build, a busy machine): by round 40 it spans
     * the uninterrupted sweep's time */
    const long ref_ms = (long)(t1.tv_sec - t0.tv_sec) * 1000 +
                        (t1.tv_nsec - t0.tv_nsec) / 1000000;
    const long step_ms = ref_ms / 40 > 5 ? ref_ms / 40 : 5;
    grid[11] = "k.jsonl";
    srand(12345);
    int kills = 0, rounds = 0;
    for (; rounds < 200; rounds++) {
        const char *argv[20] = {bptt(), "sweep"};
        for (int i = 0; grid[i]; i++)
            argv[2 + i] = grid[i];
        int po, pe;
        const pid_t pid = start(argv, NULL, &po, &pe);
        /* 0 to 20 + step r ms in round r: a round long enough for the
         * slowest table comes in time */
        const long ms = rand() % (20 + step_ms * rounds);
        const struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        finish(&r, pid, po, pe);
        result_free(&r);
        if (r.status == 0)
            break;
        ck_assert_msg(r.status == 128 + SIGKILL, "exit %d: %s", r.status,
                      r.err);
        kills++;
    }
    ck_assert_msg(rounds < 200, "the sweep never finished");
    fprintf(stderr, "test_killed_at_random: %d kills, then a whole run\n",
            kills);
    ck_assert_msg(kills >= 3, "only %d kills landed", kills);
    ck_assert(!exists("k.jsonl.partial"));
    same_files("k.jsonl", "ref.jsonl");
    leave();
}
END_TEST

/* SIGINT: the point in progress is finished or dropped, the rest kept;
 * exit 130 with a line saying how to resume; the rerun completes it. */
START_TEST(test_sigint)
{
    enter();
    const char *grid[] = {"--strategy", "msm,hsm", "--length", "200:400:50",
                          "--memory", "5%:50%:5", "--alpha", "4",
                          "--threads", "1", "--out", NULL, NULL};
    grid[11] = "ref.jsonl";
    result r;
    sweep_env(&r, NULL, grid);
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    grid[11] = "k.jsonl";
    const char *argv[20] = {bptt(), "sweep"};
    for (int i = 0; grid[i]; i++)
        argv[2 + i] = grid[i];
    int po, pe;
    const pid_t pid = start(argv, NULL, &po, &pe);
    const struct timespec ts = {0, 150000000L};
    nanosleep(&ts, NULL);
    kill(pid, SIGINT);
    finish(&r, pid, po, pe);
    if (r.status == 0) {
        fprintf(stderr, "test_sigint: the sweep ended before SIGINT\n");
    } else {
        ck_assert_msg(r.status == 130, "exit %d: %s", r.status, r.err);
        ck_assert_int_eq(own_lines(r.err), 1);
        ck_assert_ptr_nonnull(strstr(r.err, "run the same command again to "
                                            "resume"));
        ck_assert(exists("k.jsonl.partial"));
        ck_assert(!exists("k.jsonl"));
        result_free(&r);
        sweep_env(&r, NULL, grid);
        ck_assert_msg(r.status == 0, "%s", r.err);
    }
    result_free(&r);
    same_files("k.jsonl", "ref.jsonl");
    leave();
}
END_TEST

/* ---- run mode ----------------------------------------------------------- */

START_TEST(test_run_mode)
{
    enter();
    result r;
    SWEEP(&r, "--mode", "run", "--cell", "rnn", "--length", "20", "--hidden",
          "4", "--batch", "2", "--memory", "50%", "--seed", "1,2",
          "--threads", "1", "--iters", "2", "--out", "r.jsonl");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    size_t n;
    char *text = slurp("r.jsonl", &n);
    ck_assert_int_eq(count_lines(text), 3);
    ck_assert_ptr_nonnull(
        strstr(text, "\"sweep\":{\"mode\":\"run\",\"points\":2"));
    const char *line = strchr(text, '\n') + 1;
    for (int k = 0; k < 2; k++) {
        char want[64];
        snprintf(want, sizeof want, "{\"point\":%d,\"memory_spec\":\"50%%\",",
                 k);
        ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "%.100s", line);
        const char *end = strchr(line, '\n');
        char seed[32];
        snprintf(seed, sizeof seed, "\"seed\":%d,", k + 1);
        const char *fields[] = {"\"rss_peak_bytes\":",
                                "\"checkpoint_peak_bytes\":",
                                "\"predicted_checkpoint_peak_bytes\":",
                                "\"seconds_per_iter\":",
                                "\"cell\":\"rnn\"",
                                "\"length\":20,",
                                "\"hidden\":4,",
                                "\"batch\":2,",
                                "\"threads\":1,",
                                "\"iters\":2,",
                                seed,
                                "\"git_revision\":"};
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
            const char *f = strstr(line, fields[i]);
            ck_assert_msg(f && f < end, "record %d lacks %s: %.300s", k,
                          fields[i], line);
        }
        const char *rss = strstr(line, "\"rss_peak_bytes\":") + 17;
        ck_assert_msg(atol(rss) > 0, "rss %ld", atol(rss));
        line = end + 1;
    }
    free(text);
    /* an infeasible budget stops a run sweep (exit 3), or is recorded */
    SWEEP(&r, "--mode", "run", "--strategy", "full", "--length", "20",
          "--hidden", "4", "--batch", "2", "--memory", "5%", "--threads", "1",
          "--iters", "1", "--out", "f.jsonl");
    ck_assert_int_eq(r.status, 3);
    ck_assert_int_eq(own_lines(r.err), 1);
    ck_assert_ptr_nonnull(strstr(r.err, "point 0 of 1 (strategy=full"));
    ck_assert_ptr_nonnull(strstr(r.err, "smallest feasible budget"));
    result_free(&r);
    SWEEP(&r, "--mode", "run", "--strategy", "full", "--length", "20",
          "--hidden", "4", "--batch", "2", "--memory", "5%", "--threads", "1",
          "--iters", "1", "--out", "f.jsonl", "--infeasible", "record");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    text = slurp("f.jsonl", &n);
    ck_assert_ptr_nonnull(strstr(text, "\n{\"point\":0,\"memory_spec\":\"5%\","
                                       "\"strategy\":\"full\",\"hidden\":4,"
                                       "\"batch\":2,\"length\":20,"
                                       "\"threads\":1,\"error\":\"bptt run: "));
    free(text);
    leave();
}
END_TEST

/* A run sweep whose --task names a file with a quote, a backslash, a
 * newline, a tab, a control byte, a comma, UTF-8 and an invalid UTF-8
 * byte: every jsonl line parses (python3 -m json.tool --json-lines, and
 * json.loads of the file as UTF-8), each record's "task" and the header's
 * grid hold the value (invalid bytes as U+FFFD); a rerun finds the file
 * complete; the csv file's rows have as many fields as its header (RFC
 * 4180), the task field the value as the records hold it.  Without python3 the parsing is
 * skipped, with a message. */
static const char py_sweep[] =
    "import csv, io, json, os, sys\n"
    "jf, cf, task = sys.argv[1:4]\n"
    "raw = os.fsencode(task)\n"
    "want = raw.decode('utf-8', 'replace')\n"
    "lines = open(jf, 'rb').read().decode('utf-8').split('\\n')\n"
    "assert len(lines) == 4 and lines[3] == '', lines\n"
    "head = json.loads(lines[0])\n"
    "assert '; task=' + want + ';' in head['meta']['sweep']['grid'], head\n"
    "for k in (1, 2):\n"
    "    d = json.loads(lines[k])\n"
    "    assert d['point'] == k - 1 and d['task'] == want, (d, want)\n"
    "text = open(cf, 'rb').read().decode('utf-8')\n"
    "assert text.startswith('# {'), text[:40]\n"
    "body = text[text.index('\\n') + 1:]\n"
    "rows = list(csv.reader(io.StringIO(body, newline='')))\n"
    "assert len(rows) == 3, rows\n"
    "assert len(rows[0]) == len(rows[1]) == len(rows[2]) > 40, rows\n"
    "for r in rows[1:]:\n"
    "    got = r[rows[0].index('task')]\n"
    "    assert got == want, (got, want)\n";

/* Runs argv (argv[0] a path) to its end. */
static void run_argv(result *r, const char *const *argv)
{
    int po, pe;
    const pid_t pid = start(argv, NULL, &po, &pe);
    finish(r, pid, po, pe);
}

START_TEST(test_run_mode_hostile_task)
{
    enter();
    const char name[] = "q\"b\\s\nn\tt\001c,\xc3\xa9\xff.txt";
    write_text(name, "the quick brown fox jumps over the lazy dog\n");
    char task[128];
    snprintf(task, sizeof task, "text:%s/%s", tmpdir, name);
    result r;
    const char *outs[] = {"r.jsonl", "r.csv", "r.jsonl"};
    char *first = NULL;
    for (int k = 0; k < 3; k++) {
        SWEEP(&r, "--mode", "run", "--cell", "rnn", "--length", "10",
              "--hidden", "4", "--batch", "2", "--seed", "1,2", "--threads",
              "1", "--iters", "1", "--task", task, "--out", outs[k]);
        ck_assert_msg(r.status == 0, "%s: %s", outs[k], r.err);
        /* the rerun knows its grid in the header: nothing to do */
        ck_assert_msg(own_lines(r.err) == (k == 2), "%s: %s", outs[k],
                      r.err);
        ck_assert_msg(k < 2 || strstr(r.err, "nothing to do"), "%s", r.err);
        result_free(&r);
        size_t n;
        char *text = slurp(outs[k], &n);
        ck_assert_ptr_nonnull(text);
        if (k == 0)
            first = text; /* the rerun (k = 2) leaves it as it was */
        else if (k == 2)
            ck_assert_msg(strcmp(first, text) == 0, "the rerun changed "
                          "r.jsonl:\n%s\n%s", first, text);
        if (k == 0)
            ck_assert_int_eq(count_lines(text), 3);
        if (k != 0)
            free(text);
    }
    free(first);
    const char *probe[] = {"/usr/bin/env", "python3", "-c", "pass", NULL};
    run_argv(&r, probe);
    result_free(&r);
    if (r.status != 0) {
        fprintf(stderr, "test_run_mode_hostile_task: python3 does not run "
                        "here (status %d): the outputs are not parsed\n",
               r.status);
        leave();
        return;
    }
    const char *tool[] = {"/usr/bin/env", "python3", "-m", "json.tool",
                          "--json-lines", "r.jsonl", NULL};
    run_argv(&r, tool);
    ck_assert_msg(r.status == 0, "python3 -m json.tool refuses r.jsonl: %s",
                  r.err);
    result_free(&r);
    const char *check[] = {"/usr/bin/env", "python3", "-c", py_sweep,
                           "r.jsonl", "r.csv", task, NULL};
    run_argv(&r, check);
    ck_assert_msg(r.status == 0, "the records differ from the values: %s",
                  r.err);
    result_free(&r);
    leave();
}
END_TEST

/* ---- batch: --jobs, --only, --merge, the scripts ------------------------ */

static const char *srcdir(void)
{
    const char *s = getenv("srcdir");
    return s && *s ? s : ".";
}

static char start_dir[1024]; /* where the runner started (main) */

/* Absolute path of $srcdir/scripts/NAME (the tests run in /tmp). */
static void script(char *buf, size_t cap, const char *name)
{
    const char *s = srcdir();
    if (s[0] == '/')
        snprintf(buf, cap, "%s/scripts/%s", s, name);
    else
        snprintf(buf, cap, "%s/%s/scripts/%s", start_dir, s, name);
}

START_TEST(test_only_merge)
{
    enter();
    reference();
    result r;
    SWEEP(&r, PLAN_GRID, "--out", "m.jsonl", "--jobs", "jobs.txt");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    size_t n;
    char *jobs = slurp("jobs.txt", &n);
    ck_assert_ptr_nonnull(jobs);
    ck_assert_ptr_nonnull(strstr(jobs, "\n# merge: cd "));
    ck_assert_ptr_nonnull(strstr(jobs, " --only 44\n"));
    int n_jobs = 0;
    for (const char *l = jobs; *l; l = strchr(l, '\n') + 1)
        n_jobs += *l != '#';
    ck_assert_int_eq(n_jobs, PLAN_POINTS);
    free(jobs);
    /* every point but 7 and 30, in some order */
    for (int k = PLAN_POINTS - 1; k >= 0; k--) {
        if (k == 7 || k == 30)
            continue;
        char only[16];
        snprintf(only, sizeof only, "%d", k);
        SWEEP(&r, PLAN_GRID, "--out", "m.jsonl", "--only", only);
        ck_assert_msg(r.status == 0, "point %d: %s", k, r.err);
        result_free(&r);
    }
    SWEEP(&r, PLAN_GRID, "--out", "m.jsonl", "--merge");
    ck_assert_int_eq(r.status, 1);
    ck_assert_int_eq(own_lines(r.err), 1);
    ck_assert_ptr_nonnull(strstr(r.err, "2 of 45 points are missing from "
                                        "m.jsonl.parts: 7, 30"));
    ck_assert(!exists("m.jsonl"));
    result_free(&r);
    /* the rest through the job list's own lines */
    shell(&r, "grep -e '--only 7$' -e '--only 30$' jobs.txt | sh");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    /* a point done already is not done again */
    SWEEP(&r, PLAN_GRID, "--out", "m.jsonl", "--only", "30");
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.err, "point 30 is done already"));
    result_free(&r);
    shell(&r, "sh -c \"$(sed -n 's/^# merge: //p' jobs.txt)\"");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    same_files("m.jsonl", "ref.jsonl");
    leave();
}
END_TEST

START_TEST(test_sweep_parallel)
{
    result r;
    shell(&r, "command -v parallel");
    const int have = r.status == 0;
    result_free(&r);
    if (!have) {
        fprintf(stderr, "test_sweep_parallel: SKIPPED: GNU parallel is not "
                        "installed (Debian: apt-get install parallel)\n");
        return;
    }
    enter();
    reference();
    char sp[1200];
    script(sp, sizeof sp, "sweep-parallel");
    SWEEP(&r, PLAN_GRID, "--out", "p.jsonl", "--jobs", "jobs.txt");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    /* a first run stopped early: two jobs only, no merge */
    shell(&r, "'%s' -j 2 --no-merge jobs.txt -- --halt now,done=2", sp);
    result_free(&r);
    ck_assert(!exists("p.jsonl"));
    shell(&r, "'%s' -j 2 --sshlogin : jobs.txt", sp);
    ck_assert_msg(r.status == 0, "sweep-parallel: %s", r.err);
    result_free(&r);
    same_files("p.jsonl", "ref.jsonl");
    ck_assert_int_eq(system("ls jobs.txt.*.joblog > /dev/null"), 0);
    /* again: nothing to do */
    shell(&r, "'%s' -j 2 jobs.txt", sp);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "is complete"));
    result_free(&r);
    leave();
}
END_TEST

START_TEST(test_slurm_tasks)
{
    enter();
    reference();
    char ss[1200];
    script(ss, sizeof ss, "slurm-sweep");
    result r;
    SWEEP(&r, PLAN_GRID, "--out", "s.jsonl", "--jobs", "jobs.txt");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    /* 45 jobs, 4 rows per task: tasks 0..11, as Slurm would run them */
    for (int t = 11; t >= 0; t--) {
        shell(&r, "SLURM_ARRAY_TASK_ID=%d sh '%s' jobs.txt 4", t, ss);
        ck_assert_msg(r.status == 0, "task %d: %s", t, r.err);
        ck_assert_int_eq(count_lines(r.out), t == 11 ? 1 : 4);
        result_free(&r);
    }
    shell(&r, "sh -c \"$(sed -n 's/^# merge: //p' jobs.txt)\"");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    same_files("s.jsonl", "ref.jsonl");
    /* --submit: the array size and a merge job after it (sbatch faked) */
    mkdir("bin", 0777);
    write_text("bin/sbatch", "#!/bin/sh\necho \"$*\" >> sbatch.log\n"
                             "echo \"$$;cluster\"\n");
    write_text("bin/scontrol", "#!/bin/sh\necho 'MaxArraySize = 1001'\n");
    chmod("bin/sbatch", 0755);
    chmod("bin/scontrol", 0755);
    shell(&r, "PATH=$PWD/bin:$PATH sh '%s' --submit jobs.txt 4 --time=10",
          ss);
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    size_t n;
    char *log = slurp("sbatch.log", &n);
    ck_assert_ptr_nonnull(log);
    ck_assert_msg(strstr(log, "--parsable --array=0-11 --time=10 ") &&
                      strstr(log, "jobs.txt 4\n"),
                  "%s", log);
    ck_assert_msg(strstr(log, "--dependency=afterok:") &&
                      strstr(log, "--wrap cd ") && strstr(log, " --merge\n"),
                  "%s", log);
    free(log);
    leave();
}
END_TEST

/* ---- no orphans: what a killed sweep started dies with it --------------- */

/* A run-mode grid of two LSTM points whose `bptt run` takes about ITERS / 60
 * seconds on an idle 2-core machine (longer under load): long enough to
 * outlive the checks below by far when a child is left behind. */
#define SLOW_RUN_GRID(iters)                                                \
    "--mode", "run", "--cell", "lstm", "--length", "200", "--input", "32",  \
        "--hidden", "128", "--batch", "16", "--threads", "1", "--seed",     \
        "1:2", "--iters", iters

/* How long the processes of a killed sweep may take to die (far less than
 * the points above take: a child left behind is seen). */
#define GONE_WITHIN_S 3.0

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void nap_ms(long ms)
{
    const struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
    nanosleep(&ts, NULL);
}

/* /proc/PID/NAME whole, NUL-terminated; NULL if unreadable (gone, another
 * user's).  No assertions: processes come and go while it reads. */
static char *proc_read(const char *pid, const char *name, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/%s", pid, name);
    const int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (!b)
            break;
        const ssize_t r = read(fd, b + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            free(b);
            b = NULL;
            break;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n + 1 == cap) {
            cap *= 2;
            char *c = realloc(b, cap);
            if (!c)
                free(b);
            b = c;
        }
    }
    close(fd);
    if (b) {
        b[n] = '\0';
        *len = n;
    }
    return b;
}

static const char *base_name(const char *s)
{
    const char *slash = strrchr(s, '/');
    return slash ? slash + 1 : s;
}

/* The live processes (not zombies) whose environment holds tag
 * ("NAME=VALUE"): children inherit it, so these are what a test's child
 * started, however deep, but for a process that cleared its environment. */
typedef struct {
    int n;
    pid_t pid[64];
    int runs;        /* of them `bptt run` */
    pid_t parallel;  /* GNU parallel among them (not a fork of it), or 0 */
    char what[1024]; /* "PID ARGV0 ARGV1; ..." */
} census;

static void census_take(const char *tag, census *c)
{
    memset(c, 0, sizeof *c);
    DIR *d = opendir("/proc");
    ck_assert_ptr_nonnull(d);
    const size_t tag_len = strlen(tag);
    size_t w = 0;
    pid_t par[64], par_parent[64]; /* parallel, and its forks for jobs */
    int n_par = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        size_t n;
        char *env = proc_read(e->d_name, "environ", &n);
        int found = 0;
        for (size_t i = 0; env && i < n; i += strlen(env + i) + 1)
            found |= strlen(env + i) == tag_len &&
                     memcmp(env + i, tag, tag_len) == 0;
        free(env);
        if (!found)
            continue;
        char *stat = proc_read(e->d_name, "stat", &n);
        const char *paren = stat ? strrchr(stat, ')') : NULL;
        const int live = paren && paren[1] == ' ' && paren[2] != 'Z' &&
                         paren[2] != 'X';
        const pid_t ppid = live ? (pid_t)atol(paren + 4) : 0;
        free(stat);
        if (!live)
            continue;
        char *cmd = proc_read(e->d_name, "cmdline", &n);
        const char *a0 = cmd && n ? cmd : "?";
        const char *a1 = cmd && strlen(a0) + 1 < n ? a0 + strlen(a0) + 1 : "";
        const pid_t pid = (pid_t)atol(e->d_name);
        c->runs += strcmp(base_name(a0), "bptt") == 0 && strcmp(a1, "run") == 0;
        if ((strcmp(base_name(a0), "parallel") == 0 ||
             strcmp(base_name(a1), "parallel") == 0) &&
            n_par < 64) {
            par[n_par] = pid;
            par_parent[n_par++] = ppid;
        }
        if (c->n < 64)
            c->pid[c->n] = pid;
        c->n++;
        if (w < sizeof c->what)
            w += (size_t)snprintf(c->what + w, sizeof c->what - w,
                                  "%s%ld %.40s %.40s", w ? "; " : "",
                                  (long)pid, a0, a1);
        free(cmd);
    }
    closedir(d);
    for (int i = 0; i < n_par; i++) { /* the one not forked by another */
        int forked = 0;
        for (int j = 0; j < n_par; j++)
            forked |= par_parent[i] == par[j];
        if (!forked)
            c->parallel = par[i];
    }
}

/* Kills what census found (cleanup before an assertion can end the test). */
static void census_kill(const census *c)
{
    for (int i = 0; i < c->n && i < 64; i++)
        kill(c->pid[i], SIGKILL);
}

/* Waits until a `bptt run` tagged so runs; 0, or -1 if `pid` (the
 * process started) ended first or none came within a minute. */
static int await_run(const char *tag, pid_t pid, census *c)
{
    const double t0 = now_s();
    for (;;) {
        census_take(tag, c);
        if (c->runs > 0)
            return 0;
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid || now_s() - t0 > 60)
            return -1;
        nap_ms(10);
    }
}

/* Waits up to GONE_WITHIN_S for every process tagged so to end; returns
 * how many were left then (and kills them, so that no test leaves any),
 * with what they were in c. */
static int await_gone(const char *tag, census *c, double *took)
{
    const double t0 = now_s();
    for (;;) {
        census_take(tag, c);
        *took = now_s() - t0;
        if (c->n == 0)
            return 0;
        if (*took > GONE_WITHIN_S) {
            census_kill(c);
            return c->n;
        }
        nap_ms(10);
    }
}

/* A run-mode sweep killed with SIGKILL while a `bptt run` child works:
 * the child dies with it (it would go on for many seconds otherwise).
 * SIGTERM: the sweep stops its child and waits for it before it ends. */
START_TEST(test_sweep_killed_children)
{
    enter();
    static const int sigs[] = {SIGKILL, SIGTERM};
    for (int k = 0; k < 2; k++) {
        char tag[96];
        snprintf(tag, sizeof tag, "BPTT_TEST_TAG=sweep-%ld-%d",
                 (long)getpid(), k);
        const char *argv[] = {bptt(), "sweep", SLOW_RUN_GRID("3000"),
                              "--out", "o.jsonl", NULL};
        int po, pe;
        const pid_t pid = start(argv, tag, &po, &pe);
        census c;
        const int started = await_run(tag, pid, &c);
        if (started != 0)
            census_kill(&c);
        ck_assert_msg(started == 0, "signal %d: no bptt run came", sigs[k]);
        const double t0 = now_s();
        kill(pid, sigs[k]);
        const int status = wait_status(pid);
        const double exited = now_s() - t0;
        double took;
        const int left = await_gone(tag, &c, &took);
        result r;
        drain(po, &r.out, NULL);
        char *err;
        drain(pe, &err, NULL);
        snprintf(r.err, sizeof r.err, "%s", err);
        free(err);
        close(po);
        close(pe);
        r.status = status;
        fprintf(stderr, "test_sweep_killed_children: signal %d: the sweep "
                        "ended after %.3f s, its processes %.3f s later\n",
                sigs[k], exited, took);
        ck_assert_msg(left == 0, "signal %d: %d processes of the sweep "
                      "still ran %.1f s later: %s", sigs[k], left,
                      GONE_WITHIN_S, c.what);
        if (sigs[k] == SIGKILL) {
            ck_assert_int_eq(r.status, 128 + SIGKILL);
        } else {
            ck_assert_msg(r.status == 143, "exit %d: %s", r.status, r.err);
            ck_assert_msg(took < 0.5, "the child outlived the sweep");
            ck_assert_int_eq(own_lines(r.err), 1);
            ck_assert_ptr_nonnull(strstr(r.err, "interrupted after 0 of 2 "
                                                "points"));
        }
        result_free(&r);
        ck_assert(!exists("o.jsonl"));
    }
    leave();
}
END_TEST

/* scripts/sweep-parallel killed with SIGKILL, and then GNU parallel under
 * it, while jobs run: no job (`bptt sweep --only K`, its `bptt run`, the
 * shell around it) is left; run again, it completes the sweep. */
START_TEST(test_sweep_parallel_killed)
{
    result r;
    shell(&r, "command -v parallel");
    const int have = r.status == 0;
    result_free(&r);
    if (!have) {
        fprintf(stderr, "test_sweep_parallel_killed: SKIPPED: GNU parallel "
                        "is not installed (Debian: apt-get install "
                        "parallel)\n");
        return;
    }
    enter();
    char sp[1200];
    script(sp, sizeof sp, "sweep-parallel");
    SWEEP(&r, SLOW_RUN_GRID("200"), "--out", "p.jsonl", "--jobs",
          "jobs.txt");
    ck_assert_msg(r.status == 0, "%s", r.err);
    result_free(&r);
    for (int round = 0; round < 3; round++) {
        static const char *const victim[] = {"the script", "parallel",
                                             "nothing"};
        char tag[96];
        snprintf(tag, sizeof tag, "BPTT_TEST_TAG=parallel-%ld-%d",
                 (long)getpid(), round);
        const char *argv[] = {sp, "-j", "2", "jobs.txt", NULL};
        int po, pe;
        const double t0 = now_s();
        const pid_t pid = start(argv, tag, &po, &pe);
        census c;
        if (round < 2) {
            const int started = await_run(tag, pid, &c);
            if (started != 0 || (round == 1 && !c.parallel))
                census_kill(&c);
            ck_assert_msg(started == 0, "round %d: no bptt run came", round);
            ck_assert_msg(round == 0 || c.parallel,
                          "GNU parallel not found among %s", c.what);
            kill(round == 0 ? pid : c.parallel, SIGKILL);
        }
        /* not finish(): the pipes stay open while a job is left */
        const int status = wait_status(pid);
        const double ran = now_s() - t0;
        double took;
        const int left = await_gone(tag, &c, &took);
        result out;
        drain(po, &out.out, NULL);
        char *err;
        drain(pe, &err, NULL);
        snprintf(out.err, sizeof out.err, "%s", err);
        free(err);
        close(po);
        close(pe);
        fprintf(stderr, "test_sweep_parallel_killed: %s killed: the script "
                        "ran %.3f s, its processes ended %.3f s later\n",
                victim[round], ran, took);
        ck_assert_msg(left == 0, "%s killed: %d processes still ran %.1f s "
                      "after the script ended: %s", victim[round], left,
                      GONE_WITHIN_S, c.what);
        if (round == 0) {
            ck_assert_int_eq(status, 128 + SIGKILL);
        } else if (round == 1) {
            ck_assert_msg(status == 1, "exit %d: %s", status, out.err);
            ck_assert_msg(strstr(out.err, "parallel stopped with status"),
                          "%s", out.err);
        } else {
            ck_assert_msg(status == 0, "exit %d: %s", status, out.err);
        }
        result_free(&out);
        if (round < 2)
            ck_assert(!exists("p.jsonl"));
    }
    /* the records an uninterrupted sweep has: points 0 and 1, seeds 1, 2 */
    size_t n;
    char *text = slurp("p.jsonl", &n);
    ck_assert_ptr_nonnull(text);
    ck_assert_int_eq(count_lines(text), 3);
    ck_assert_ptr_nonnull(
        strstr(text, "\"sweep\":{\"mode\":\"run\",\"points\":2"));
    const char *line = strchr(text, '\n') + 1;
    for (int k = 0; k < 2; k++) {
        char want[64], seed[32];
        snprintf(want, sizeof want, "{\"point\":%d,\"memory_spec\":\"100%%\",",
                 k);
        snprintf(seed, sizeof seed, "\"seed\":%d,", k + 1);
        const char *end = strchr(line, '\n');
        ck_assert_msg(strncmp(line, want, strlen(want)) == 0, "%.100s", line);
        const char *f = strstr(line, seed);
        ck_assert_msg(f && f < end, "record %d: %.200s", k, line);
        f = strstr(line, "\"iters\":200,");
        ck_assert_msg(f && f < end, "record %d: %.200s", k, line);
        line = end + 1;
    }
    free(text);
    leave();
}
END_TEST

static Suite *sweep_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("parsing");
    tcase_add_loop_test(tc, test_ranges, 0,
                        (int)(sizeof ranges / sizeof ranges[0]));
    tcase_add_test(tc, test_grid_order);
    tcase_add_loop_test(tc, test_bad_input, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_add_test(tc, test_config);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("outputs");
    tcase_add_test(tc, test_plan_output);
    tcase_add_test(tc, test_infeasible_record);
    tcase_add_test(tc, test_notes_one_line);
    tcase_add_test(tc, test_run_mode);
    tcase_add_test(tc, test_run_mode_hostile_task);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tc = tcase_create("interrupted");
    tcase_add_test(tc, test_killed_by_hook);
    tcase_add_test(tc, test_killed_at_random);
    tcase_add_test(tc, test_sigint);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    tc = tcase_create("batch");
    tcase_add_test(tc, test_only_merge);
    tcase_add_test(tc, test_sweep_parallel);
    tcase_add_test(tc, test_slurm_tasks);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    tc = tcase_create("orphans");
    tcase_add_test(tc, test_sweep_killed_children);
    tcase_add_test(tc, test_sweep_parallel_killed);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    if (!getcwd(start_dir, sizeof start_dir))
        return EXIT_FAILURE;
    /* one date for every header: whole files compare byte for byte */
    setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
    SRunner *sr = srunner_create(sweep_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
