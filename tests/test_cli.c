/* test_cli.c: the `bptt` command as a user meets it.
 *
 * Runs the built binary ($BPTT, set by `make check`) as a child process,
 * each in a fresh directory under /tmp that holds a few fixture files:
 * a table of bad inputs that names every option of every subcommand
 * (plan, run, sweep, and sweep's config keys) with several bad values,
 * each of which must give exit 2 (usage) or 3 (infeasible budget), exactly
 * one line on stderr that names the problem, nothing on stdout, no file
 * written, and no work done (sizes that would take hours or not fit in
 * memory are refused before anything is allocated; the child may use at
 * most REFUSAL_CPU_SECONDS of CPU, far more than checking takes on any
 * build and far less than the work would: a case that starts working is
 * killed by SIGXCPU and fails on its exit status, however fast the
 * machine); then the NaN and infinity scan
 * (src/train/finite.c) and a run it stops, every allocation of small runs made
 * to fail in turn, an output that cannot be written, and the outputs of
 * good runs (formats, fields, --curve, --actions, gradient dumps).
 *
 * The runner itself uses no OpenMP or BLAS, so Check forks it freely. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "real_impl.h"
#include "lines.h"

#include "blascore.h"

/* The NaN and infinity scan of `bptt run` is a pure function of an arena
 * and the model's tensor table, compiled in here and tested directly. */
#include "train/finite.c"

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

/* argv[64] for execv: bptt, then args (NULL-terminated; at most 62). */
static void child_argv(const char *bptt, const char *const *args,
                       const char **argv)
{
    int n = 0;
    argv[n++] = bptt;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
}

/* CPU seconds a refusal may take (test_bad_input): checking an input is
 * milliseconds even under valgrind; the work it refuses is hours. */
#define REFUSAL_CPU_SECONDS 60

/* The child's CPU limit in seconds (0: none), for the next run_in. */
static rlim_t child_cpu_limit;

/* Runs $BPTT with args (NULL-terminated) in directory dir (NULL: here);
 * stdout goes to the file out_file when given (r->out stays empty), else
 * both are captured.  The captures are read one after the other, so
 * outputs stay small here. */
static void run_in(result *r, const char *dir, const char *out_file,
                   const char *const *args)
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
        child_argv(bptt, args, argv);
        if (dir && chdir(dir) != 0)
            _exit(126);
        if (child_cpu_limit) {
            const struct rlimit cpu = {child_cpu_limit, child_cpu_limit};
            if (setrlimit(RLIMIT_CPU, &cpu) != 0)
                _exit(126);
        }
        if (out_file) {
            const int fd = open(out_file, O_WRONLY);
            if (fd < 0)
                _exit(126);
            dup2(fd, 1);
        } else {
            dup2(po[1], 1);
        }
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
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void run(result *r, const char *const *args)
{
    run_in(r, NULL, NULL, args);
}

/* ---- a scratch directory with fixtures ---------------------------------- */

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* A fresh directory under /tmp with the files the bad inputs name. */
static void make_scratch(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/bptt-cli-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/adir", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/full", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    write_file(dir, "full/f", "x");
    write_file(dir, "empty.txt", "");
    write_file(dir, "short.txt", "ab");
    write_file(dir, "text.txt", "the quick brown fox jumps over the lazy "
                                "dog, again and again and again.\n");
    /* sweep config files */
    write_file(dir, "blank.txt", "\n\n\n");
    write_file(dir, "empty.conf", "");
    write_file(dir, "comment.conf", "# nothing set here\n\n   # nor here\n");
    write_file(dir, "badkey.conf", "lenght = 10\n");
    write_file(dir, "noeq.conf", "length 10\n");
    write_file(dir, "novalue.conf", "length =\n");
    write_file(dir, "twice.conf", "length = 10\nlength = 20\n");
    write_file(dir, "badlen.conf", "length = ten\n");
    write_file(dir, "overflow.conf", "length = 99999999999999999999\n");
    write_file(dir, "range.conf", "length = 10:1\n");
    write_file(dir, "badmem.conf", "length = 10\nmemory = lots\n");
    write_file(dir, "badstrat.conf", "length = 10\nstrategy = magic\n");
    write_file(dir, "badalpha.conf", "length = 10\nalpha = 0\n");
    write_file(dir, "badthreads.conf", "length = 10\nthreads = -1\n");
    write_file(dir, "badmode.conf", "length = 10\nmode = walk\n");
    write_file(dir, "badformat.conf", "length = 10\nformat = xml\n");
    write_file(dir, "badinf.conf", "length = 10\ninfeasible = maybe\n");
    write_file(dir, "badout.conf", "length = 10\nout = adir\n");
    write_file(dir, "badcell.conf", "mode = run\nlength = 10\ncell = qrnn\n");
    write_file(dir, "badlayers.conf", "mode = run\nlength = 10\n"
                                      "layers = 17\n");
    write_file(dir, "badinput.conf", "mode = run\nlength = 10\ninput = 0\n");
    write_file(dir, "badhidden.conf", "mode = run\nlength = 10\n"
                                      "hidden = x\n");
    write_file(dir, "badbatch.conf", "mode = run\nlength = 10\n"
                                     "batch = -3\n");
    write_file(dir, "badseed.conf", "mode = run\nlength = 10\nseed = -1\n");
    write_file(dir, "baditers.conf", "mode = run\nlength = 10\niters = 0\n");
    write_file(dir, "badtask.conf", "mode = run\nlength = 10\n"
                                    "task = text:adir\n");
    write_file(dir, "badopt.conf", "mode = run\nlength = 10\n"
                                   "optimizer = rmsprop\n");
    write_file(dir, "badlr.conf", "mode = run\nlength = 10\nlr = 0\n");
    write_file(dir, "infeasible.conf", "length = 10\nmemory = 0\n");
}

static void remove_scratch(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The names in dir (and in its subdirectories), sorted, into buf. */
static void list_tree(const char *dir, const char *prefix, char *buf,
                      size_t cap)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    static char names[128][256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 128)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strlen(e->d_name) < sizeof names[0])
            strcpy(names[n++], e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0],
          (int (*)(const void *, const void *))strcmp);
    char (*mine)[256] = malloc((size_t)n * sizeof *mine + 1);
    ck_assert_ptr_nonnull(mine);
    memcpy(mine, names, (size_t)n * sizeof *mine); /* names is reused below */
    for (int i = 0; i < n; i++) {
        size_t used = strlen(buf);
        if (snprintf(buf + used, cap - used, "%s%s\n", prefix, mine[i]) < 0)
            break;
        char sub[4096], pre[1024];
        struct stat sb;
        if (snprintf(sub, sizeof sub, "%s/%s", dir, mine[i]) <
                (int)sizeof sub &&
            stat(sub, &sb) == 0 && S_ISDIR(sb.st_mode) &&
            snprintf(pre, sizeof pre, "%s%s/", prefix, mine[i]) <
                (int)sizeof pre)
            list_tree(sub, pre, buf, cap);
    }
    free(mine);
}

/* ---- bad input ---------------------------------------------------------- */

typedef struct {
    const char *args[24];
    int status;
    const char *says; /* a phrase the one error line must contain */
} bad_case;

#define PLAN(st, says, ...) {{"plan", __VA_ARGS__, NULL}, st, says}
#define RUN(st, says, ...) {{"run", __VA_ARGS__, NULL}, st, says}
#define SWEEP(st, says, ...) {{"sweep", __VA_ARGS__, NULL}, st, says}
#define CMP(st, says, ...) {{"compare", __VA_ARGS__, NULL}, st, says}
#define CAL(st, says, ...)                                                   \
    {{"calibrate", "--hidden", "4", "--batch", "2", __VA_ARGS__, NULL},      \
     st, says}
#define SW(st, says, ...) \
    {{"sweep", "--length", "10", "--out", "x", __VA_ARGS__, NULL}, st, says}
#define SWR(st, says, ...)                                                   \
    {{"sweep", "--mode", "run", "--length", "10", "--out", "x", __VA_ARGS__, \
      NULL},                                                                 \
     st, says}
#define BIG "99999999999999999999"
/* a small run: bad inputs that slip through would still end soon */
#define R(...) "--length", "20", "--hidden", "4", "--batch", "2", __VA_ARGS__

static const bad_case bad_cases[] = {
    {{NULL}, 2, "usage"},
    {{"frobnicate", NULL}, 2, "unknown command"},
    {{"", NULL}, 2, "unknown command"},
    {{"--bogus", NULL}, 2, "unknown command"},

    /* ---- bptt plan ---- */
    {{"plan", NULL}, 2, "--length is required"},
    /* --length */
    PLAN(2, "needs a value", "--length"),
    PLAN(2, "'0x10KiB' is not a budget: hexadecimal is not read", "--length",
         "100", "--cell", "lstm", "--memory", "0x10KiB"),
    PLAN(2, "'0x1p10B' is not a budget: hexadecimal is not read", "--length",
         "100", "--cell", "lstm", "--memory", "0x1p10B"),
    PLAN(2, "'nan%' is not a budget: infinity and NaN", "--length", "100",
         "--memory", "nan%"),
    PLAN(2, "'0x10' is not a budget: hexadecimal", "--length", "100",
         "--memory", "0x10"),
    PLAN(2, "not an integer", "--length", ""),
    PLAN(2, "not an integer", "--length="),
    PLAN(2, "not an integer", "--length", "abc"),
    PLAN(2, "not an integer", "--length", "12x"),
    PLAN(2, "not an integer", "--length", "1e3"),
    PLAN(2, "not an integer", "--length", " 10"),
    PLAN(2, "not an integer", "--length", "0x10"),
    PLAN(2, "out of range", "--length", "-5"),
    PLAN(2, "from 1", "--length", "0"),
    PLAN(2, "out of range", "--length", "2147483647"),
    PLAN(2, "out of range", "--length", BIG),
    PLAN(2, "needs a value, not the option '--memory'", "--length",
         "--memory", "5"),
    PLAN(2, "given twice ('10', then '20')", "--length", "10", "--length",
         "20"),
    /* --strategy */
    PLAN(2, "needs a value", "--length", "10", "--strategy"),
    PLAN(2, "unknown strategy ''", "--length", "10", "--strategy", ""),
    PLAN(2, "unknown strategy", "--length", "10", "--strategy", "magic"),
    PLAN(2, "unknown strategy", "--length", "10", "--strategy", "MSM"),
    PLAN(2, "unknown strategy", "--length", "10", "--strategy", "-1"),
    PLAN(2, "given twice", "--length", "10", "--strategy", "hsm",
         "--strategy", "msm"),
    /* --memory */
    PLAN(2, "needs a value", "--length", "10", "--memory"),
    PLAN(2, "empty budget", "--length", "10", "--memory", ""),
    PLAN(2, "empty budget", "--length", "10", "--memory", ","),
    PLAN(2, "empty budget", "--length", "10", "--memory", "5,,6"),
    PLAN(2, "empty budget", "--length", "10", "--memory", "5,"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "lots"),
    PLAN(2, "out of range", "--length", "10", "--memory", "-3"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "x%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "-5%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "nan%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "1e3%"),
    PLAN(2, "is not a budget", "--length", "10", "--memory", "slots"),
    PLAN(2, "is in bytes", "--length", "10", "--memory", "64MiB"),
    PLAN(2, "out of range", "--length", "10", "--memory", BIG),
    PLAN(2, "out of range", "--length", "10", "--memory", BIG "%"),
    PLAN(2, "out of range", "--length", "10", "--memory", "1000001%"),
    PLAN(2, "more than 64 budgets", "--length", "10", "--memory",
         "1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,"
         "1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10,"
         "1,2,3,4,5"),
    PLAN(3, "smallest feasible budget is 1 slots", "--length", "10",
         "--memory", "0"),
    PLAN(3, "smallest feasible budget is 155 slots", "--strategy", "chen",
         "--length", "1000", "--alpha", "4", "--memory", "10"),
    PLAN(3, "smallest feasible budget is 3996 slots", "--strategy", "full",
         "--length", "1000", "--alpha", "4", "--memory", "50%"),
    PLAN(3, "smallest feasible budget is", "--strategy", "hsm", "--length",
         "10", "--memory", "3,0"),
    /* --alpha */
    PLAN(2, "needs a value", "--length", "10", "--alpha"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", ""),
    PLAN(2, "--alpha", "--length", "10", "--alpha", "0"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", "-1"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", "1.5e0"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", "x"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", "1000001"),
    PLAN(2, "not a state size", "--length", "10", "--alpha", BIG),
    /* --segment */
    PLAN(2, "chen only", "--length", "10", "--segment", "3"),
    PLAN(2, "needs a value", "--strategy", "chen", "--length", "10",
         "--segment"),
    PLAN(2, "not an integer", "--strategy", "chen", "--length", "10",
         "--segment", ""),
    PLAN(2, "not an integer", "--strategy", "chen", "--length", "10",
         "--segment", "x"),
    PLAN(2, "out of range", "--strategy", "chen", "--length", "10",
         "--segment", "0"),
    PLAN(2, "out of range", "--strategy", "chen", "--length", "10",
         "--segment", "-3"),
    PLAN(2, "out of range", "--strategy", "chen", "--length", "10",
         "--segment", BIG),
    PLAN(3, "smallest feasible budget is 10 slots", "--strategy", "chen",
         "--length", "10", "--segment", "11"),
    /* --format */
    PLAN(2, "needs a value", "--length", "10", "--format"),
    PLAN(2, "unknown format ''", "--length", "10", "--format", ""),
    PLAN(2, "unknown format", "--length", "10", "--format", "xml"),
    PLAN(2, "unknown format", "--length", "10", "--format", "JSON"),
    /* --threads */
    PLAN(2, "needs a value", "--length", "10", "--threads"),
    PLAN(2, "not an integer", "--length", "10", "--threads", ""),
    PLAN(2, "--threads", "--length", "10", "--threads", "0"),
    PLAN(2, "out of range", "--length", "10", "--threads", "-1"),
    PLAN(2, "not an integer", "--length", "10", "--threads", "two"),
    PLAN(2, "out of range", "--length", "10", "--threads", "4097"),
    PLAN(2, "out of range", "--length", "10", "--threads", BIG),
    /* --actions, --curve, --help: flags */
    PLAN(2, "exclude each other", "--length", "10", "--actions", "--curve"),
    PLAN(2, "one budget", "--length", "10", "--actions", "--memory", "3,4"),
    PLAN(2, "one budget", "--length", "10", "--curve", "--memory", "3,4"),
    PLAN(2, "--actions takes no value", "--length", "10", "--actions=yes"),
    PLAN(2, "--curve takes no value", "--length", "10", "--curve=1"),
    PLAN(2, "--help takes no value", "--length", "10", "--help=x"),
    PLAN(2, "more than 10000000 lines", "--length", "10", "--curve",
         "--memory", "99999999999"),
    /* --online, --no-lookahead, --points */
    PLAN(2, "--points applies to --online --curve (add --online)",
         "--length", "10", "--curve", "--points", "5"),
    PLAN(2, "--points applies to --online --curve (add --online --curve)",
         "--length", "10", "--points", "5"),
    PLAN(2, "--points applies to --online --curve (add --curve)", "--length",
         "10", "--online", "--points", "5"),
    PLAN(2, "--points: 0 is out of range (give a whole number from 2",
         "--length", "10", "--online", "--curve", "--points", "0"),
    PLAN(2, "out of range", "--length", "10", "--online", "--curve",
         "--points", "1"),
    PLAN(2, "out of range", "--length", "10", "--online", "--curve",
         "--points", "-3"),
    PLAN(2, "out of range", "--length", "10", "--online", "--curve",
         "--points", BIG),
    PLAN(2, "--points: 'abc' is not an integer", "--length", "10", "--online",
         "--curve", "--points", "abc"),
    PLAN(2, "not an integer", "--length", "10", "--online", "--curve",
         "--points", ""),
    PLAN(2, "needs a value", "--length", "10", "--online", "--curve",
         "--points"),
    PLAN(2, "given twice", "--length", "10", "--online", "--curve",
         "--points", "3", "--points", "4"),
    PLAN(2, "--no-lookahead applies to online plans (add --online)",
         "--length", "10", "--no-lookahead"),
    PLAN(2, "--no-lookahead applies to online plans", "--length", "10",
         "--curve", "--no-lookahead"),
    PLAN(2, "--online takes no value", "--length", "10", "--online=yes"),
    PLAN(2, "--no-lookahead takes no value", "--length", "10", "--online",
         "--no-lookahead=1"),
    PLAN(2, "strategy chen has no online planner (give --strategy hsm or "
            "msm)", "--length", "10", "--online", "--strategy", "chen"),
    PLAN(2, "strategy full has no online planner", "--length", "10",
         "--online", "--strategy", "full"),
    PLAN(2, "strategy msm-paper has no online planner", "--length", "10",
         "--online", "--strategy", "msm-paper", "--curve"),
    PLAN(2, "--online takes one strategy", "--length", "10", "--online",
         "--strategy", "hsm,msm"),
    PLAN(2, "--online takes one budget", "--length", "10", "--online",
         "--memory", "3,4"),
    PLAN(2, "not csv", "--length", "10", "--online", "--format", "csv"),
    PLAN(2, "--infeasible applies to offline plans", "--length", "10",
         "--online", "--infeasible", "record"),
    PLAN(2, "exclude each other", "--length", "10", "--online", "--actions",
         "--curve"),
    PLAN(2, "is in bytes", "--length", "10", "--online", "--memory",
         "64MiB"),
    PLAN(2, "more than 10000000 lines (give --points N", "--length",
         "20000000", "--online", "--curve"),
    PLAN(2, "more than half of this machine's", "--length", "2000000000",
         "--online", "--curve", "--points", "10"),
    PLAN(2, "more than half of this machine's", "--strategy", "msm",
         "--length", "2000000000", "--online", "--memory", "10"),
    PLAN(2, "more than half of this machine's", "--strategy", "hsm",
         "--length", "2000000000", "--online", "--memory", "10"),
    PLAN(3, "infeasible for online msm at any length, alpha 1; the smallest "
            "feasible budget is 1 slots", "--length", "10", "--online",
         "--memory", "0"),
    PLAN(3, "the smallest feasible budget is 1 slots", "--length", "10",
         "--online", "--strategy", "hsm", "--alpha", "3.5", "--memory",
         "0.5", "--curve"),
    PLAN(3, "smallest feasible budget is 1 slots (", "--length", "10",
         "--online", "--cell", "lstm", "--memory", "1KiB"),
    /* --disk, --write-cost, --read-cost */
#define DISK(st, says, ...) \
    PLAN(st, says, "--length", "10", "--memory", "3", __VA_ARGS__)
    DISK(2, "--disk: strategy chen has no two-level planner (give --strategy "
            "hsm or msm)", "--disk", "5", "--strategy", "chen"),
    DISK(2, "strategy full has no two-level planner", "--disk", "5",
         "--strategy", "hsm,full"),
    DISK(2, "strategy ism-paper has no two-level planner", "--disk", "inf",
         "--strategy", "ism-paper", "--actions"),
    DISK(2, "--write-cost applies to two-level plans (add --disk D",
         "--write-cost", "2"),
    DISK(2, "--read-cost applies to two-level plans (add --disk D",
         "--read-cost", "2", "--write-cost", "1"),
    DISK(2, "--disk and --online exclude each other", "--disk", "5",
         "--online", "--strategy", "hsm"),
    DISK(2, "--disk and --curve exclude each other", "--disk", "5",
         "--curve"),
    DISK(2, "--infeasible applies to one-level plans' records, not to --disk",
         "--disk", "5", "--infeasible", "record"),
    PLAN(2, "--disk needs --memory M", "--length", "10", "--disk", "5"),
    DISK(2, "needs a value", "--disk"),
    DISK(2, "--disk needs a value, not the option '--memory'", "--disk",
         "--memory", "5"),
    DISK(2, "--disk is given twice", "--disk", "5", "--disk", "inf"),
    DISK(2, "--disk: '' is not a budget", "--disk", ""),
    DISK(2, "--disk: 'lots' is not a budget", "--disk", "lots"),
    DISK(2, "--disk: -1 is out of range", "--disk", "-1"),
    DISK(2, "out of range", "--disk", BIG),
    DISK(2, "'nan' is not a budget: infinity and NaN", "--disk", "nan"),
    DISK(2, "'INF' is not a budget: infinity and NaN", "--disk", "INF"),
    DISK(2, "exponents are not read", "--disk", "1e3"),
    DISK(2, "; or give inf, no bound", "--disk", "0x10"),
    DISK(2, "--disk: '64MiB' is in bytes, which needs the network's sizes",
         "--disk", "64MiB"),
    DISK(2, "--disk: 1.2 slots is not a budget at alpha 3.5", "--disk",
         "1.2", "--alpha", "3.5"),
    DISK(2, "--write-cost: 'nan' is not a cost (give a number of forward ops "
            "a hidden state from 0 to 1000000", "--disk", "5",
         "--write-cost", "nan"),
    DISK(2, "--write-cost: 'inf' is not a cost", "--disk", "5",
         "--write-cost", "inf"),
    DISK(2, "--write-cost: '-1' is not a cost", "--disk", "5",
         "--write-cost", "-1"),
    DISK(2, "--write-cost: '1000001' is not a cost", "--disk", "5",
         "--write-cost", "1000001"),
    DISK(2, "--write-cost: '2x' is not a cost", "--disk", "5",
         "--write-cost", "2x"),
    DISK(2, "--write-cost: '' is not a cost", "--disk", "5", "--write-cost",
         ""),
    DISK(2, "hexadecimal is not read", "--disk", "5", "--write-cost",
         "0x10"),
    DISK(2, "a comma is no decimal point", "--disk", "5", "--write-cost",
         "1,5"),
    DISK(2, "--read-cost: ' 1' is not a cost", "--disk", "5", "--read-cost",
         " 1"),
    DISK(2, "--read-cost: '1e400' is not a cost", "--disk", "5",
         "--read-cost", "1e400"),
    DISK(2, "--read-cost: '+2' is not a cost", "--disk", "5", "--read-cost",
         "+2"),
    DISK(2, "--read-cost is given twice", "--disk", "5", "--read-cost", "1",
         "--read-cost", "2"),
    DISK(2, "--write-cost needs a value", "--disk", "5", "--write-cost"),
    PLAN(3, "is infeasible for msm at length 10, alpha 1; the smallest "
            "feasible budget is 1 slots", "--length", "10", "--memory", "0",
         "--disk", "5"),
    PLAN(3, "the smallest feasible budget is 1 slots", "--length", "10",
         "--memory", "1,0", "--disk", "inf", "--strategy", "hsm,msm"),
    PLAN(2, "the two-level msm table for length 100000000 with budget 3 "
            "slots and disk 3 slots would hold", "--length", "100000000",
         "--memory", "3", "--disk", "3"),
    /* (hsm's columns are the multiples of h a plan can hold, at most
     * t + 2 of them however large the budget: the length makes it big) */
    PLAN(2, "more than half of this machine's", "--length", "1000000",
         "--memory", "99999999", "--disk", "inf", "--strategy", "hsm"),
    PLAN(2, "more than half of this machine's", "--length", "100000",
         "--memory", "3,10", "--disk", "99999"),
    PLAN(2, "the two-level hsm planner does not take length 2000000000",
         "--length", "2000000000", "--memory", "3", "--disk", "3",
         "--strategy", "hsm"),
#undef DISK
    /* options in general */
    PLAN(2, "unknown option '--bogus'", "--length", "10", "--bogus"),
    PLAN(2, "unknown option '--bogus=3'", "--length", "10", "--bogus=3"),
    PLAN(2, "ambiguous", "--length", "10", "--s", "msm"),
    PLAN(2, "unknown option '-x'", "-x"),
    PLAN(2, "unknown option '-x'", "-xy"),
    PLAN(2, "unexpected argument", "--length", "10", "extra"),
    PLAN(2, "unexpected argument '-'", "--length", "10", "-"),
    PLAN(2, "unexpected argument '--length'", "--", "--length", "10"),
    /* sizes that do not fit: refused before anything is allocated */
    PLAN(2, "more than half of this machine's", "--length", "1000000000",
         "--memory", "10"),
    PLAN(2, "more than half of this machine's", "--strategy", "hsm",
         "--length", "2000000000", "--memory", "10"),
    PLAN(2, "more than half of this machine's", "--strategy", "hsm",
         "--length", "100000", "--memory", "1"),
    PLAN(2, "more than half of this machine's", "--strategy", "full",
         "--length", "2000000000"),
    PLAN(2, "more than half of this machine's", "--strategy", "chen",
         "--length", "2000000000"),
    PLAN(2, "more than half of this machine's", "--strategy", "full",
         "--length", "2000000000", "--actions"),

    /* ---- bptt run ---- */
    {{"run", NULL}, 2, "--length is required"},
    /* --length */
    RUN(2, "needs a value", "--length"),
    RUN(2, "not an integer", "--length", ""),
    RUN(2, "not an integer", "--length", "x"),
    RUN(2, "--length", "--length", "-20"),
    RUN(2, "out of range", "--length", "0"),
    RUN(2, "out of range", "--length", BIG),
    RUN(2, "given twice", "--length", "20", "--length", "30"),
    RUN(2, "needs a value, not the option", "--length", "--hidden", "8"),
    /* --cell */
    RUN(2, "needs a value", R("--cell")),
    RUN(2, "unknown cell ''", R("--cell", "")),
    RUN(2, "unknown cell", R("--cell", "qrnn")),
    RUN(2, "unknown cell", R("--cell", "LSTM")),
    RUN(2, "given twice", R("--cell", "rnn", "--cell", "lstm")),
    /* --layers */
    RUN(2, "needs a value", R("--layers")),
    RUN(2, "not an integer", R("--layers", "")),
    RUN(2, "out of range", R("--layers", "0")),
    RUN(2, "out of range", R("--layers", "-1")),
    RUN(2, "not an integer", R("--layers", "two")),
    RUN(2, "--layers", R("--layers", "17")),
    RUN(2, "out of range", R("--layers", BIG)),
    /* --input */
    RUN(2, "needs a value", R("--input")),
    RUN(2, "not an integer", R("--input", "")),
    RUN(2, "out of range", R("--input", "0")),
    RUN(2, "out of range", R("--input", "-2")),
    RUN(2, "not an integer", R("--input", "x")),
    RUN(2, "out of range", R("--input", "16777216")),
    RUN(2, "out of range", R("--input", BIG)),
    RUN(2, "does not suit the copy task", R("--input", "1")),
    RUN(2, "does not suit the adding task", R("--task", "adding", "--input",
                                              "3")),
    RUN(2, "does not suit the text task", R("--task", "text:text.txt",
                                            "--input", "300")),
    /* --hidden */
    RUN(2, "needs a value", "--length", "20", "--hidden"),
    RUN(2, "not an integer", "--length", "20", "--hidden", ""),
    RUN(2, "--hidden", "--length", "20", "--hidden", "0"),
    RUN(2, "out of range", "--length", "20", "--hidden", "-8"),
    RUN(2, "not an integer", "--length", "20", "--hidden", "8.5"),
    RUN(2, "out of range", "--length", "20", "--hidden", "16777216"),
    RUN(2, "out of range", "--length", "20", "--hidden", BIG),
    /* --batch */
    RUN(2, "needs a value", "--length", "20", "--batch"),
    RUN(2, "not an integer", "--length", "20", "--batch", ""),
    RUN(2, "out of range", "--length", "20", "--batch", "0"),
    RUN(2, "--batch", "--length", "20", "--batch", "-1"),
    RUN(2, "not an integer", "--length", "20", "--batch", "x"),
    RUN(2, "out of range", "--length", "20", "--batch", "16777216"),
    RUN(2, "out of range", "--length", "20", "--batch", BIG),
    /* --strategy */
    RUN(2, "needs a value", R("--strategy")),
    RUN(2, "unknown strategy ''", R("--strategy", "")),
    RUN(2, "unknown strategy", R("--strategy", "magic")),
    /* --memory */
    RUN(2, "needs a value", R("--memory")),
    RUN(2, "is not a budget", R("--memory", "")),
    RUN(2, "is not a budget", R("--memory", "12")),
    RUN(2, "is not a budget", R("--memory", "lots")),
    RUN(2, "is not a budget", R("--memory", "-1B")),
    RUN(2, "is not a budget", R("--memory", "-5%")),
    RUN(2, "is not a budget", R("--memory", "MiB")),
    RUN(2, "is not a budget", R("--memory", "nanMiB")),
    RUN(2, "is not a budget", R("--memory", "infMiB")),
    RUN(2, "one budget, not a list", R("--memory", "5%,10%")),
    /* decimal only: hex and hex floats were read by strtod */
    RUN(2, "'0x10KiB' is not a budget: hexadecimal is not read",
        R("--memory", "0x10KiB")),
    RUN(2, "'0x1p10B' is not a budget: hexadecimal is not read",
        R("--memory", "0x1p10B")),
    RUN(2, "infinity and NaN are not numbers here", R("--memory", "inf%")),
    RUN(2, "exponents are not read", R("--memory", "1e3B")),
    RUN(2, "a comma is no decimal point", R("--memory", "1,5MiB")),
    RUN(2, "--lr: '0x1' is not a number in [1e-12, 1e+38]: hexadecimal",
        R("--lr", "0x1")),
    RUN(2, "--lr: 'inf' is not a number", R("--lr", "inf")),
    RUN(2, "out of range", R("--memory", BIG "B")),
    RUN(2, "out of range", R("--memory", BIG "slots")),
    RUN(2, "out of range", R("--memory", BIG "%")),
    RUN(3, "smallest feasible budget is 128 bytes", "--length", "20",
        "--hidden", "8", "--batch", "2", "--memory", "1B"),
    RUN(2, "is not a budget", R("--memory", "0")),
    RUN(3, "smallest feasible budget is", R("--memory", "0%")),
    RUN(3, "smallest feasible budget is", R("--memory", "0slots")),
    RUN(3, "smallest feasible budget is", "--length", "20", "--hidden", "8",
        "--batch", "2", "--strategy", "full", "--memory", "5%"),
    RUN(3, "smallest feasible budget is", R("--strategy", "chen", "--memory",
                                           "1KiB")),
    /* --iters */
    RUN(2, "needs a value", R("--iters")),
    RUN(2, "not an integer", R("--iters", "")),
    RUN(2, "--iters", R("--iters", "0")),
    RUN(2, "out of range", R("--iters", "-1")),
    RUN(2, "not an integer", R("--iters", "3x")),
    RUN(2, "out of range", R("--iters", "1000001")),
    RUN(2, "out of range", R("--iters", BIG)),
    /* --seed */
    RUN(2, "needs a value", R("--seed")),
    RUN(2, "not an integer", R("--seed", "")),
    RUN(2, "out of range", R("--seed", "-1")),
    RUN(2, "not an integer", R("--seed", "x")),
    RUN(2, "out of range", R("--seed", BIG)),
    /* --threads */
    RUN(2, "needs a value", R("--threads")),
    RUN(2, "not an integer", R("--threads", "")),
    RUN(2, "out of range", R("--threads", "0")),
    RUN(2, "out of range", R("--threads", "-2")),
    RUN(2, "not an integer", R("--threads", "all")),
    RUN(2, "out of range", R("--threads", BIG)),
    /* --task */
    RUN(2, "needs a value", R("--task")),
    RUN(2, "unknown task ''", R("--task", "")),
    RUN(2, "unknown task", R("--task", "bogus")),
    RUN(2, "unknown task", R("--task", "COPY")),
    RUN(2, "names no file", R("--task", "text:")),
    RUN(2, "cannot read '/nonexistent/file'", R("--task",
                                               "text:/nonexistent/file")),
    RUN(2, "is empty", R("--task", "text:empty.txt")),
    RUN(2, "fewer than length + 1", R("--task", "text:short.txt")),
    RUN(2, "is a directory", R("--task", "text:adir")),
    RUN(2, "not a regular file or a pipe", R("--task", "text:/dev/zero")),
    RUN(2, "adding task needs a length of 2", "--length", "1", "--task",
        "adding"),
    /* --optimizer */
    RUN(2, "needs a value", R("--optimizer")),
    RUN(2, "unknown optimizer ''", R("--optimizer", "")),
    RUN(2, "unknown optimizer", R("--optimizer", "rmsprop")),
    RUN(2, "unknown optimizer", R("--optimizer", "SGD")),
    /* --lr */
    RUN(2, "needs a value", R("--lr")),
    RUN(2, "--lr", R("--lr", "")),
    RUN(2, "--lr", R("--lr", "0")),
    RUN(2, "--lr", R("--lr", "-1")),
    RUN(2, "--lr", R("--lr", "fast")),
    RUN(2, "--lr", R("--lr", "nan")),
    RUN(2, "--lr", R("--lr", "inf")),
    RUN(2, "--lr", R("--lr", " 0.1")),
    RUN(2, "--lr", R("--lr", "1e39")),
    RUN(2, "--lr", R("--lr", "1e999")),
    RUN(2, "--lr", R("--lr", "1e-999")),
    /* --format */
    RUN(2, "needs a value", R("--format")),
    RUN(2, "unknown format ''", R("--format", "")),
    RUN(2, "unknown format", R("--format", "yaml")),
    RUN(2, "unknown format", R("--format", "jsonl")),
    /* --online, --separator */
    RUN(2, "--separator needs --online", R("--separator", ",")),
    RUN(2, "give --task text:FILE", R("--online")),
    RUN(2, "is not one byte", R("--online", "--task", "text:text.txt",
                                "--separator", "ab")),
    RUN(2, "is not one byte", R("--online", "--task", "text:text.txt",
                                "--separator", "")),
    RUN(2, "is not one byte", R("--online", "--task", "text:text.txt",
                                "--separator", "0x1g")),
    RUN(2, "--batch must be 1", R("--online", "--task", "text:text.txt")),
    RUN(2, "hsm or msm online", "--online", "--task", "text:text.txt",
        "--strategy", "chen"),
    RUN(2, "is not kept with --online", "--online", "--task",
        "text:text.txt", "--memory-trace", "m.csv"),
    RUN(2, "does not occur in", "--online", "--task", "text:text.txt",
        "--separator", "#"),
    RUN(2, "has no non-empty line", "--online", "--task", "text:blank.txt"),
    RUN(2, "No such file", "--online", "--task", "text:nothere.txt"),
    /* --dump-grads */
    RUN(2, "needs a value", R("--dump-grads")),
    RUN(2, "empty directory name", R("--dump-grads", "")),
    RUN(2, "not an empty directory", R("--dump-grads", "/dev/null")),
    RUN(2, "not an empty directory", R("--dump-grads", "empty.txt")),
    RUN(2, "not an empty directory", R("--dump-grads", "full")),
    RUN(2, "does not exist", R("--dump-grads", "/nonexistent/dir")),
    RUN(2, "does not exist", R("--dump-grads", "adir/sub/d")),
    /* --trace */
    RUN(2, "needs a value", R("--trace")),
    RUN(2, "empty file name", R("--trace", "")),
    RUN(2, "not a regular file", R("--trace", "adir")),
    RUN(2, "not a regular file", R("--trace", "/dev/null")),
    RUN(2, "names a directory", R("--trace", "t/")),
    RUN(2, "does not exist", R("--trace", "/nonexistent/dir/t.csv")),
    RUN(2, "both name 't.csv'", R("--trace", "t.csv", "--dump-grads",
                                  "t.csv")),
    RUN(2, "'text.txt' exists (remove it", R("--trace", "text.txt")),
    /* --memory-trace */
    RUN(2, "needs a value", R("--memory-trace")),
    RUN(2, "empty file name", R("--memory-trace", "")),
    RUN(2, "not a regular file", R("--memory-trace", "adir")),
    RUN(2, "not a regular file", R("--memory-trace", "/dev/null")),
    RUN(2, "does not exist", R("--memory-trace", "/nonexistent/m.csv")),
    RUN(2, "'text.txt' exists (remove it", R("--memory-trace", "text.txt")),
    RUN(2, "--memory-trace and --trace both name 'm.csv'",
        R("--trace", "m.csv", "--memory-trace", "m.csv")),
    RUN(2, "--memory-trace and --dump-grads both name 'm'",
        R("--dump-grads", "m", "--memory-trace", "m")),
    /* --fail-alloc (a hidden test hook) */
    RUN(2, "needs a value", R("--fail-alloc")),
    RUN(2, "not an integer", R("--fail-alloc", "")),
    RUN(2, "out of range", R("--fail-alloc", "0")),
    RUN(2, "out of range", R("--fail-alloc", "-1")),
    RUN(2, "out of range", R("--fail-alloc", BIG)),
    /* --help and options in general */
    RUN(2, "--help takes no value", R("--help=1")),
    RUN(2, "unknown option '--bogus'", R("--bogus")),
    RUN(2, "ambiguous", R("--s", "1")),
    RUN(2, "unknown option '-t'", "-t", "20"),
    RUN(2, "unexpected argument", R("extra")),
    /* sizes that do not fit: refused before anything is allocated */
    RUN(2, "more than this machine's", "--length", "1000000000", "--hidden",
        "8"),
    RUN(2, "more than this machine's", "--length", "20", "--hidden",
        "1000000"),
    RUN(2, "more than this machine's", "--length", "20", "--hidden",
        "1000000", "--batch", "100000"),
    RUN(2, "more than this machine's", "--length", "20", "--batch",
        "16777215"),
    RUN(2, "more than this machine's", "--length", "20", "--layers", "16",
        "--hidden", "60000"),
    RUN(2, "more than this machine's", "--length", "20", "--input",
        "16777215"),
    /* (the plan's own refusals, sized to this machine's memory:
     * test_run_refused_plans) */
    RUN(2, "more than half of this machine's", "--length", "1000000",
        "--task", "adding", "--batch", "1", "--hidden", "1", "--strategy",
        "hsm", "--memory", "10%"),

    /* ---- bptt compare ---- */
    CMP(2, "--length is required", "--plans", "full:100%"),
    CMP(2, "unknown strategy 'magic'", R("--plans", "full:100%,magic:5%")),
    CMP(2, "unknown strategy ''", R("--plans", ":5%")),
    CMP(2, "'lots' is not a budget", R("--plans", "msm:lots")),
    CMP(2, "'200' is not a budget", R("--plans", "msm:200")),
    CMP(2, "'' is not a budget", R("--plans", "msm:")),
    CMP(2, "'-5%' is not a budget", R("--plans", "msm:-5%")),
    CMP(2, "out of range", R("--plans", "msm:" BIG "B")),
    CMP(2, "item 1 is empty", R("--plans", "")),
    CMP(2, "item 2 is empty", R("--plans", "full:100%,")),
    CMP(2, "item 2 is empty", R("--plans", "full:100%,,msm:5%")),
    CMP(2, "item 1 is empty", R("--plans", ",msm:5%")),
    CMP(2, "is not strategy:budget", R("--plans", "msm5%")),
    CMP(2, "unknown strategy 'msm\\x1b[2J'", R("--plans",
                                               "msm\x1b[2J:5%")),
    CMP(2, "'5%\\nx' is not a budget", R("--plans", "msm:5%\nx")),
    CMP(2, "'\\r' is not strategy:budget", R("--plans", "full:100%,\r")),
    CMP(2, "more than 16 items",
        R("--plans", "full:100%,msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,"
                     "msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,msm:5%,"
                     "msm:5%,msm:5%,msm:5%")),
    CMP(2, "--rounds", R("--rounds", "0")),
    CMP(2, "--rounds", R("--rounds", "x")),
    CMP(2, "--warmup", R("--warmup", "-1")),
    CMP(2, "--format", R("--format", "xml")),
    CMP(2, "unknown cell 'qrnn'", R("--cell", "qrnn")),
    CMP(2, "--layers", R("--layers", "17")),
    CMP(2, "--task text:adir", R("--task", "text:adir")),
    CMP(2, "unexpected argument", R("extra")),
    CMP(2, "unknown option '--memory'", R("--memory", "5%")),
    CMP(3, "the smallest feasible budget is 64 bytes",
        R("--plans", "full:100%,msm:1%")),
    CMP(3, "item 1 (full:50%)", R("--plans", "full:50%,msm:5%")),
    /* two-level items: STRATEGY:BUDGET/DISK */
    CMP(2, "item 2 disk: 'lots' is not a budget",
        R("--plans", "full:100%,msm:5%/lots")),
    CMP(2, "item 2 disk: '' is not a budget",
        R("--plans", "full:100%,msm:5%/")),
    CMP(2, "item 2 disk: '200' is not a budget",
        R("--plans", "full:100%,msm:5%/200")),
    CMP(2, "item 2 disk: 'inf/2' is not a budget",
        R("--plans", "full:100%,msm:5%/inf/2")),
    CMP(2, "item 2 disk: '\\x1b[2J' is not a budget",
        R("--plans", "full:100%,msm:5%/\x1b[2J")),
    CMP(2, "strategy chen has no two-level planner",
        R("--plans", "full:100%,chen:5%/inf")),
    CMP(2, "--write-cost applies to two-level plans", R("--write-cost", "2")),
    CMP(2, "--read-cost applies to two-level plans",
        R("--plans", "full:100%,msm:5%", "--read-cost", "0.5")),
    CMP(2, "--read-cost: 'x' is not a cost",
        R("--plans", "full:100%,msm:5%/inf", "--read-cost", "x")),
    CMP(2, "--write-cost: '-1' is not a cost",
        R("--plans", "full:100%,msm:5%/inf", "--write-cost", "-1")),
    CMP(3, "infeasible for the two-level msm planner",
        R("--plans", "full:100%,msm:1B/inf")),

    /* ---- bptt calibrate (small sizes: a slip would still end soon) ---- */
    CAL(2, "does not exist", "--disk-dir", "nope"),
    CAL(2, "does not exist", "--disk-dir", "nope/deeper"),
    CAL(2, "is a regular file, not a folder", "--disk-dir", "text.txt"),
    CAL(2, "empty folder name", "--disk-dir", ""),
    CAL(2, "needs a value", "--disk-dir"),
    CAL(2, "from 1 to 100000", "--repeats", "0"),
    CAL(2, "from 1 to 100000", "--repeats", "100001"),
    CAL(2, "out of range", "--repeats", "-1"),
    CAL(2, "out of range", "--repeats", BIG),
    CAL(2, "not an integer", "--repeats", "3x"),
    CAL(2, "--sync takes no value", "--sync=1"),
    CAL(2, "unknown cell 'qrnn'", "--cell", "qrnn"),
    CAL(2, "--format", "--format", "xml"),
    CAL(2, "--task text:adir", "--task", "text:adir"),
    CAL(2, "unknown option '--memory'", "--memory", "5%"),
    CAL(2, "unexpected argument", "extra"),

    /* ---- bptt sweep ---- */
    {{"sweep", NULL}, 2, "--length is required"},
    SWEEP(2, "--out FILE is required", "--length", "10"),
    SWEEP(2, "--length is required", "--out", "x"),
    /* --length (an axis: lists and ranges) */
    SWEEP(2, "needs a value, not the option '--out'", "--length", "--out",
          "x"),
    SWEEP(2, "needs a value", "--out", "x", "--length"),
    SWEEP(2, "empty value", "--length", "", "--out", "x"),
    SWEEP(2, "empty value", "--length", "5,", "--out", "x"),
    SWEEP(2, "not a whole number", "--length", "ten", "--out", "x"),
    SWEEP(2, "out of range", "--length", "0", "--out", "x"),
    SWEEP(2, "out of range", "--length", "-1", "--out", "x"),
    SWEEP(2, "out of range", "--length", BIG, "--out", "x"),
    SWEEP(2, "whole-number ends", "--length", "1:" BIG, "--out", "x"),
    SWEEP(2, "bad step", "--length", "1:10:" BIG, "--out", "x"),
    SWEEP(2, "bad step", "--length", "1:10:*" BIG, "--out", "x"),
    SWEEP(2, "runs downwards", "--length", "10:1", "--out", "x"),
    SWEEP(2, "given twice", "--length", "10", "--out", "x", "--length", "20"),
    /* --strategy */
    SW(2, "needs a value", "--strategy"),
    SW(2, "empty value", "--strategy", ""),
    SW(2, "empty value", "--strategy", ","),
    SW(2, "unknown strategy 'magic'", "--strategy", "hsm,magic"),
    SW(2, "unknown strategy", "--strategy", "msm:hsm"),
    /* --cell */
    SWR(2, "needs a value", "--cell"),
    SWR(2, "empty value", "--cell", ""),
    SWR(2, "unknown cell 'qrnn'", "--cell", "lstm,qrnn"),
    SW(2, "does not apply in plan mode", "--cell", "rnn,lstm"),
    /* --layers */
    SWR(2, "needs a value", "--layers"),
    SWR(2, "out of range", "--layers", "0"),
    SWR(2, "out of range", "--layers", "17"),
    SWR(2, "out of range", "--layers", "-1"),
    SWR(2, "not a whole number", "--layers", "x"),
    SWR(2, "out of range", "--layers", BIG),
    SWR(2, "leaves 1..16", "--layers", "1:20"),
    /* --input */
    SWR(2, "needs a value", "--input"),
    SWR(2, "empty value", "--input", ""),
    SWR(2, "out of range", "--input", "0"),
    SWR(2, "out of range", "--input", "-1"),
    SWR(2, "not a whole number", "--input", "wide"),
    SWR(2, "out of range", "--input", "16777216"),
    /* --hidden */
    SWR(2, "needs a value", "--hidden"),
    SWR(2, "out of range", "--hidden", "0"),
    SWR(2, "not a whole number", "--hidden", "x"),
    SWR(2, "out of range", "--hidden", BIG),
    SW(2, "does not apply in plan mode", "--hidden", "4,8"),
    /* --batch */
    SWR(2, "needs a value", "--batch"),
    SWR(2, "out of range", "--batch", "0"),
    SWR(2, "out of range", "--batch", "-5"),
    SWR(2, "out of range", "--batch", BIG),
    /* --alpha */
    SW(2, "needs a value", "--alpha"),
    SW(2, "out of range", "--alpha", "0"),
    SW(2, "not a state size", "--alpha", "x"),
    SW(2, "out of range", "--alpha", BIG),
    SWR(2, "does not apply in run mode", "--alpha", "2,3"),
    /* --memory */
    SW(2, "needs a value", "--memory"),
    SW(2, "empty value", "--memory", ""),
    SW(2, "is not a budget", "--memory", "-1"),
    SW(2, "is not a budget", "--memory", "lots"),
    SW(2, "is not a budget", "--memory", BIG),
    SW(2, "is not a budget", "--memory", BIG "%"),
    SW(2, "in bytes", "--memory", "64MiB"),
    SW(2, "whole-number ends", "--memory", "1:" BIG),
    SW(2, "one unit", "--memory", "1MiB:4%:1"),
    SWR(2, "has no unit", "--memory", "12"),
    SWR(2, "is not a budget", "--memory", BIG "B"),
    SW(3, "smallest feasible one, 1 slots", "--memory", "0"),
    /* --threads */
    SW(2, "needs a value", "--threads"),
    SW(2, "out of range", "--threads", "0"),
    SW(2, "not a whole number", "--threads", "x"),
    SW(2, "out of range", "--threads", BIG),
    SW(2, "one thread count", "--threads", "1,2"),
    /* --seed */
    SWR(2, "needs a value", "--seed"),
    SWR(2, "out of range", "--seed", "-1"),
    SWR(2, "not a whole number", "--seed", "x"),
    SWR(2, "out of range", "--seed", BIG),
    /* --mode */
    SW(2, "needs a value", "--mode"),
    SW(2, "unknown mode ''", "--mode", ""),
    SW(2, "unknown mode", "--mode", "walk"),
    SW(2, "unknown mode", "--mode", "RUN"),
    /* --out */
    SWEEP(2, "needs a value", "--length", "10", "--out"),
    SWEEP(2, "--out FILE is required", "--length", "10", "--out", ""),
    SWEEP(2, "not a regular file", "--length", "10", "--out", "adir"),
    SWEEP(2, "not a regular file", "--length", "10", "--out", "adir",
          "--force"),
    SWEEP(2, "not a regular file", "--length", "10", "--out", "/dev/null",
          "--force"),
    SWEEP(2, "names a directory", "--length", "10", "--out", "adir/"),
    SWEEP(2, "does not exist", "--length", "10", "--out", "/nonexistent/x"),
    SWEEP(2, "is not a bptt sweep file", "--length", "10", "--out",
          "text.txt"),
    /* --format */
    SW(2, "needs a value", "--format"),
    SW(2, "unknown format ''", "--format", ""),
    SW(2, "unknown format", "--format", "xml"),
    /* --infeasible */
    SW(2, "needs a value", "--infeasible"),
    SW(2, "unknown policy ''", "--infeasible", ""),
    SW(2, "unknown policy", "--infeasible", "maybe"),
    /* --iters */
    SWR(2, "needs a value", "--iters"),
    SWR(2, "--iters", "--iters", ""),
    SWR(2, "--iters", "--iters", "0"),
    SWR(2, "--iters", "--iters", "-1"),
    SWR(2, "--iters", "--iters", "x"),
    SWR(2, "--iters", "--iters", BIG),
    SWR(2, "--iters", "--iters", "1,2"),
    /* --task */
    SWR(2, "needs a value", "--task"),
    SWR(2, "unknown task ''", "--task", ""),
    SWR(2, "unknown task", "--task", "bogus"),
    SWR(2, "cannot read '/nonexistent'", "--task", "text:/nonexistent"),
    SWR(2, "names no file", "--task", "text:"),
    SWR(2, "'adir' is a directory", "--task", "text:adir"),
    SWR(2, "is not a regular file or a pipe", "--task", "text:/dev/zero"),
    SWR(2, "is empty", "--task", "text:empty.txt"),
    /* --optimizer */
    SWR(2, "needs a value", "--optimizer"),
    SWR(2, "unknown optimizer ''", "--optimizer", ""),
    SWR(2, "unknown optimizer", "--optimizer", "rmsprop"),
    /* --lr */
    SWR(2, "needs a value", "--lr"),
    SWR(2, "--lr", "--lr", ""),
    SWR(2, "--lr", "--lr", "0"),
    SWR(2, "--lr", "--lr", "-1"),
    SWR(2, "--lr", "--lr", "x"),
    SWR(2, "--lr", "--lr", "nan"),
    SWR(2, "--lr", "--lr", " 1"),
    SWR(2, "--lr", "--lr", "1e999"),
    /* --config and the keys of a config file */
    SW(2, "needs a value", "--config"),
    SW(2, "cannot read ''", "--config", ""),
    SW(2, "cannot read", "--config", "/nonexistent"),
    SW(2, "--config: 'adir' is a directory", "--config", "adir"),
    SW(2, "holds no settings", "--config", "empty.conf"),
    SW(2, "holds no settings", "--config", "comment.conf"),
    SW(2, "'/dev/null' is a device", "--config", "/dev/null"),
    SW(2, "unknown key 'lenght'", "--config", "badkey.conf"),
    SW(2, "is not 'key = value'", "--config", "noeq.conf"),
    SW(2, "length has no value", "--config", "novalue.conf"),
    SW(2, "set twice", "--config", "twice.conf"),
    SWEEP(2, "badlen.conf:1: length: 'ten' is not a whole number", "--out",
          "x", "--config", "badlen.conf"),
    SWEEP(2, "overflow.conf:1: length: " BIG " is out of range", "--out",
          "x", "--config", "overflow.conf"),
    SWEEP(2, "runs downwards", "--out", "x", "--config", "range.conf"),
    SWEEP(2, "badmem.conf:2: memory: 'lots' is not a budget", "--out", "x",
          "--config", "badmem.conf"),
    SWEEP(2, "unknown strategy 'magic'", "--out", "x", "--config",
          "badstrat.conf"),
    SWEEP(2, "badalpha.conf:2: alpha: 0 is out of range", "--out", "x",
          "--config", "badalpha.conf"),
    SWEEP(2, "threads: -1 is out of range", "--out", "x", "--config",
          "badthreads.conf"),
    SWEEP(2, "unknown mode 'walk'", "--out", "x", "--config",
          "badmode.conf"),
    SWEEP(2, "unknown format 'xml'", "--out", "x", "--config",
          "badformat.conf"),
    SWEEP(2, "unknown policy 'maybe'", "--out", "x", "--config",
          "badinf.conf"),
    SWEEP(2, "--out: 'adir' exists and is not a regular file", "--config",
          "badout.conf"),
    SWEEP(2, "unknown cell 'qrnn'", "--out", "x", "--config", "badcell.conf"),
    SWEEP(2, "layers: 17 is out of range", "--out", "x", "--config",
          "badlayers.conf"),
    SWEEP(2, "input: 0 is out of range", "--out", "x", "--config",
          "badinput.conf"),
    SWEEP(2, "hidden: 'x' is not a whole number", "--out", "x", "--config",
          "badhidden.conf"),
    SWEEP(2, "batch: -3 is out of range", "--out", "x", "--config",
          "badbatch.conf"),
    SWEEP(2, "seed: -1 is out of range", "--out", "x", "--config",
          "badseed.conf"),
    SWEEP(2, "iters: '0' is not a whole number", "--out", "x", "--config",
          "baditers.conf"),
    SWEEP(2, "'adir' is a directory", "--out", "x", "--config",
          "badtask.conf"),
    SWEEP(2, "unknown optimizer 'rmsprop'", "--out", "x", "--config",
          "badopt.conf"),
    SWEEP(2, "lr: '0' is not a number", "--out", "x", "--config",
          "badlr.conf"),
    SWEEP(3, "smallest feasible one, 1 slots", "--out", "x", "--config",
          "infeasible.conf"),
    /* --jobs */
    SW(2, "needs a value", "--jobs"),
    SW(2, "--jobs: empty file name", "--jobs", ""),
    SW(2, "not a regular file", "--jobs", "adir"),
    SW(2, "not a regular file", "--jobs", "/dev/null"),
    SW(2, "does not exist", "--jobs", "/nonexistent/j"),
    SW(2, "both name 'x'", "--jobs", "x"),
    /* --only */
    SW(2, "needs a value", "--only"),
    SW(2, "not an integer", "--only", ""),
    SW(2, "not an integer", "--only", "x"),
    SW(2, "--only", "--only", "-1"),
    SW(2, "out of range", "--only", BIG),
    SW(2, "not in the grid", "--only", "1"),
    /* --merge, --force, --list, --help: flags */
    SW(2, "exclude each other", "--list", "--merge"),
    SW(2, "exclude each other", "--only", "0", "--jobs", "j"),
    SW(2, "--merge takes no value", "--merge=1"),
    SW(2, "--force takes no value", "--force=1"),
    SW(2, "--list takes no value", "--list=1"),
    SW(2, "--help takes no value", "--help=1"),
    /* options in general */
    SW(2, "unknown option '--bogus'", "--bogus"),
    SW(2, "ambiguous", "--m", "run"),
    SW(2, "unknown option '-x'", "-xy"),
    SW(2, "unexpected argument", "extra"),
    /* infeasible budgets and sizes that do not fit, before any work */
    SWEEP(3, "smallest feasible one, 396 slots", "--strategy", "msm,full",
          "--length", "100", "--alpha", "4", "--memory", "5%,100%", "--out",
          "x"),
    SWEEP(3, "smallest feasible one, 155 slots", "--strategy", "chen",
          "--length", "1000", "--alpha", "4", "--memory", "154", "--out",
          "x", "--jobs", "j"),
    SWEEP(2, "more than half of this machine's", "--strategy", "hsm",
          "--length", "100000", "--memory", "1", "--out", "x"),
    SWEEP(2, "more than half of this machine's", "--strategy", "full",
          "--length", "2000000000", "--out", "x", "--jobs", "j"),
    SWEEP(2, "more than half of this machine's", "--length", "1000000000",
          "--memory", "10", "--out", "x"),
};

START_TEST(test_bad_input)
{
    const bad_case *c = &bad_cases[_i];
    char dir[64], before[8192] = "", after[8192] = "";
    make_scratch(dir, sizeof dir);
    list_tree(dir, "", before, sizeof before);
    static result r;
    child_cpu_limit = REFUSAL_CPU_SECONDS;
    run_in(&r, dir, NULL, c->args);
    child_cpu_limit = 0;
    list_tree(dir, "", after, sizeof after);
    remove_scratch(dir);
    const char *cmd = c->args[0] ? c->args[0] : "";
    ck_assert_msg(r.status != 128 + SIGXCPU, "case %d (%s): still working "
                  "after %d CPU seconds: the input was not refused before the "
                  "work (%s)", _i, cmd, REFUSAL_CPU_SECONDS, r.err);
    ck_assert_msg(r.status == c->status, "case %d (%s): exit %d, want %d (%s)",
                  _i, cmd, r.status, c->status, r.err);
    ck_assert_msg(own_lines(r.err) == 1, "case %d (%s): %d stderr lines: %s",
                  _i, cmd, own_lines(r.err), r.err);
    ck_assert_msg(strstr(r.err, c->says) != NULL,
                  "case %d (%s): stderr lacks '%s': %s", _i, cmd, c->says,
                  r.err);
    ck_assert_msg(r.out[0] == '\0', "case %d (%s): stdout not empty: %s", _i,
                  cmd, r.out);
    ck_assert_msg(strcmp(before, after) == 0,
                  "case %d (%s): files written: before\n%s\nafter\n%s", _i,
                  cmd, before, after);
}
END_TEST

/* ---- the trace ---------------------------------------------------------- */

#define TRACE_HEADER \
    "iteration,loss,grad_norm,seconds,cpu_seconds,steal_seconds\n"

/* A whole file, NUL-terminated, in memory the caller frees. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    while ((got = fread(buf + n, 1, cap - 1 - n, f)) > 0) {
        n += got;
        if (n == cap - 1) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* One row of a trace. */
typedef struct {
    long iteration;
    double loss, grad_norm, seconds, cpu_seconds, steal_seconds;
} trace_row;

/* Checks the trace at path: the header, then complete rows of six fields
 * for iterations 1..k in order, and nothing after the last newline (no
 * partial row).  Returns k; the rows go to rows[0..max) when given. */
static int check_trace(const char *path, trace_row *rows, int max)
{
    size_t n;
    char *buf = read_all(path, &n);
    const size_t h = strlen(TRACE_HEADER);
    ck_assert_msg(strncmp(buf, TRACE_HEADER, h) == 0, "%s: header: %.200s",
                  path, buf);
    ck_assert_msg(buf[n - 1] == '\n', "%s: a partial last row", path);
    int k = 0;
    for (const char *line = buf + h; *line; k++) {
        trace_row t;
        int used = 0;
        ck_assert_msg(sscanf(line, "%ld,%lf,%lf,%lf,%lf,%lf%n", &t.iteration,
                             &t.loss, &t.grad_norm, &t.seconds,
                             &t.cpu_seconds, &t.steal_seconds, &used) == 6 &&
                          line[used] == '\n',
                      "%s: row %d: %.100s", path, k + 1, line);
        ck_assert_msg(t.iteration == k + 1, "%s: row %d is iteration %ld",
                      path, k + 1, t.iteration);
        ck_assert_msg(isfinite(t.loss) && t.grad_norm >= 0 && t.seconds >= 0 &&
                          t.cpu_seconds >= 0 && t.steal_seconds >= 0,
                      "%s: row %d: %.100s", path, k + 1, line);
        if (rows && k < max)
            rows[k] = t;
        line += used + 1;
    }
    free(buf);
    return k;
}

/* After a run that stopped early with --trace t.csv (in dir) and
 * --dump-grads: the trace, when the line says it was kept, is whole with
 * as many rows as the line says, and it is removed here (so that the
 * directory can be compared with what it held before); otherwise there is
 * none.  Returns the rows kept. */
static int kept_trace(const char *dir, const char *err)
{
    char path[512];
    snprintf(path, sizeof path, "%s/t.csv", dir);
    const char *kept = strstr(err, "kept: the trace of ");
    if (!kept) {
        ck_assert_msg(access(path, F_OK) != 0, "a trace is left: %s", err);
        return 0;
    }
    int said = -1;
    ck_assert_msg(sscanf(kept, "kept: the trace of %d iteration", &said) == 1,
                  "%s", err);
    ck_assert_msg(strstr(kept, " in t.csv; not written: the result, the "
                               "gradient dump\n"),
                  "%s", err);
    const int k = check_trace(path, NULL, 0);
    ck_assert_msg(k == said && k >= 1, "%d rows in the trace: %s", k, err);
    ck_assert_int_eq(unlink(path), 0);
    return k;
}

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

/* The string value of "key" in a one-line JSON object (no escapes in the
 * values read here) into buf; "" when absent. */
static const char *json_str(const char *json, const char *key, char *buf,
                            size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    buf[0] = '\0';
    const char *p = strstr(json, pat);
    if (!p)
        return buf;
    p += strlen(pat);
    const int quoted = *p == '"';
    p += quoted;
    size_t n = 0;
    while (p[n] && (quoted ? p[n] != '"' : p[n] != ',' && p[n] != '}'))
        n++;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

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

/* ---- hostile values in the outputs: escaped, quoted, never cut ---------- */

/* Runs argv (argv[0] found on PATH) with stdout and stderr to the file
 * log (made anew); its exit status, 127 when it could not be started. */
static int run_prog(const char *const *argv, const char *log)
{
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* text to the file path (any bytes in its name). */
static void write_path(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

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
    "    got = json.loads(lines[0])['task']\n"
    "    want = raw.decode('utf-8', 'replace')\n"
    "    assert got == want, (jf, got, want)\n"
    "    text = open(cf, 'rb').read().decode('latin-1')\n"
    "    assert text.startswith('# {'), (cf, text[:40])\n"
    "    meta = json.loads(text[2:text.index('\\n')])['meta']\n"
    "    assert meta['record_format'] == 1, (cf, meta)\n"
    "    body = text[text.index('\\n') + 1:]\n"
    "    rows = list(csv.reader(io.StringIO(body, newline='')))\n"
    "    assert len(rows) == 2, (cf, rows)\n"
    "    assert len(rows[0]) == len(rows[1]) == 54, (cf, rows)\n"
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

/* The value of a number field of a one-line JSON object; fails if absent. */
static double json_num(const char *json, const char *key)
{
    char buf[64];
    json_str(json, key, buf, sizeof buf);
    char *end;
    const double v = strtod(buf, &end);
    ck_assert_msg(buf[0] && *end == '\0', "no number %s in %s", key, json);
    return v;
}

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

static Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("bad input");
    tcase_add_loop_test(tc, test_bad_input, 0,
                        (int)(sizeof bad_cases / sizeof bad_cases[0]));
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("failures while running");
    tcase_add_test(tc, test_finite_scan);
    tcase_add_test(tc, test_run_diverges);
    tcase_add_test(tc, test_run_fail_alloc);
    tcase_add_test(tc, test_run_refused_plans);
    tcase_add_loop_test(tc, test_plan_fail_alloc, 0, 5);
    tcase_add_loop_test(tc, test_online_fail_alloc, 0, 4);
    tcase_add_test(tc, test_unwritable_stdout);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tc = tcase_create("outputs");
    tcase_add_test(tc, test_help_and_version);
    tcase_add_test(tc, test_usage_names_every_option);
    tcase_add_test(tc, test_json_fields);
    tcase_add_test(tc, test_optimal_beats_paper);
    tcase_add_test(tc, test_plan_sizes_and_strategies);
    tcase_add_test(tc, test_validate);
    tcase_add_test(tc, test_plan_disk);
    tcase_add_test(tc, test_budget_list_and_percent);
    tcase_add_test(tc, test_curve);
    tcase_add_test(tc, test_online_hsm_optimal);
    tcase_add_test(tc, test_online_msm_valid);
    tcase_add_test(tc, test_online_curve);
    tcase_add_test(tc, test_actions);
    tcase_add_test(tc, test_run_json);
    tcase_add_test(tc, test_blas_core_choice);
    tcase_add_test(tc, test_run_deterministic_dump);
    tcase_add_test(tc, test_run_online_matches_full);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("hostile values and shapes");
    tcase_add_test(tc, test_run_hostile_task);
    tcase_add_test(tc, test_dump_shapes);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tc = tcase_create("a run as it goes");
    tcase_add_loop_test(tc, test_run_signal, 0, 2);
    tcase_add_test(tc, test_run_progress_tty);
    tcase_add_test(tc, test_run_measurements);
    tcase_add_test(tc, test_run_memory_trace);
    tcase_add_test(tc, test_compare_outputs);
    tcase_add_test(tc, test_compare_twolevel);
    tcase_add_test(tc, test_calibrate);
    tcase_set_timeout(tc, 120);
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
