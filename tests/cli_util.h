/* cli_util.h: what the tests of the `bptt` command (tests/test_cli_*.c)
 * share: running the built binary ($BPTT, set by `make check`) as a child
 * process with its output captured, a scratch directory under /tmp with
 * the fixture files the bad inputs name, the trace a run writes, small
 * readers of files and of one-line JSON records, and the form of a bad
 * input (bad_case) with the check each one gets.  The functions are in
 * cli_util.c, where each is described. */
#ifndef BPTT_TESTS_CLI_UTIL_H
#define BPTT_TESTS_CLI_UTIL_H

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

/* ---- running bptt ------------------------------------------------------- */

typedef struct {
    int status;
    char out[1 << 16];
    char err[1 << 12];
} result;

/* CPU seconds a refusal may take (check_refusal): checking an input is
 * milliseconds even under valgrind; the work it refuses is hours. */
#define REFUSAL_CPU_SECONDS 60

/* The child's CPU limit in seconds (0: none), for the next run_in. */
extern rlim_t child_cpu_limit;

void child_argv(const char *bptt, const char *const *args, const char **argv);
void run_in(result *r, const char *dir, const char *out_file,
            const char *const *args);
void run(result *r, const char *const *args);
int run_prog(const char *const *argv, const char *log);

/* ---- a scratch directory with fixtures, files --------------------------- */

void write_file(const char *dir, const char *name, const char *text);
void make_scratch(char *dir, size_t cap);
void remove_scratch(const char *dir);
void list_tree(const char *dir, const char *prefix, char *buf, size_t cap);
char *read_all(const char *path, size_t *len);
long slurp(const char *path, char *buf, size_t cap);
void write_path(const char *path, const char *text, size_t len);

/* ---- the trace ---------------------------------------------------------- */

#define TRACE_HEADER \
    "iteration,loss,grad_norm,seconds,cpu_seconds,steal_seconds\n"

/* One row of a trace. */
typedef struct {
    long iteration;
    double loss, grad_norm, seconds, cpu_seconds, steal_seconds;
} trace_row;

int check_trace(const char *path, trace_row *rows, int max);
int kept_trace(const char *dir, const char *err);

/* ---- one-line JSON records ---------------------------------------------- */

const char *json_str(const char *json, const char *key, char *buf,
                     size_t cap);
double json_num(const char *json, const char *key);

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

/* Case i of a table of bad inputs, run in a fresh scratch directory: its
 * exit status, one line on stderr saying c->says, nothing on stdout, no
 * file written, and no more than REFUSAL_CPU_SECONDS of CPU. */
void check_refusal(const bad_case *c, int i);

#endif
