/* fuzz.h: what the libFuzzer targets of fuzz/ share: quiet output, an
 * argument vector split from the input, a clean getopt state, and the
 * parse entry points of args_*.c.
 *
 * The targets build with clang -fsanitize=fuzzer,address,undefined (fuzz/run,
 * `make fuzz`); they are not part of the gcc build or of `make check`. */
#ifndef BPTT_FUZZ_H
#define BPTT_FUZZ_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A failed check: a line on descriptor 2 (the real stderr, whatever
 * fuzz_quiet did), then abort, which libFuzzer reports as a crash, with the
 * input saved and a stack. */
#define FUZZ_CHECK(cond)                                                      \
    do {                                                                      \
        if (!(cond))                                                          \
            fuzz_fail(#cond, __FILE__, __LINE__);                             \
    } while (0)

static inline void fuzz_fail(const char *what, const char *file, int line)
{
    char msg[512];
    const int n = snprintf(msg, sizeof msg, "fuzz check failed: %s (%s:%d)\n",
                           what, file, line);
    if (n > 0 && write(2, msg, (size_t)n < sizeof msg ? (size_t)n
                                                        : sizeof msg - 1) < 0)
        abort();
    abort();
}

/* The targets' own output (the one-line errors of bad input, the tables of
 * `bptt plan`) goes to /dev/null unless FUZZ_VERBOSE is set.  The stdout
 * and stderr streams are replaced, not descriptors 1 and 2: libFuzzer keeps
 * its own copy of the stderr stream and the sanitizers write to descriptor
 * 2, so the fuzzer's progress and every crash report still show. */
static inline void fuzz_quiet(void)
{
    if (getenv("FUZZ_VERBOSE"))
        return;
    FILE *null = fopen("/dev/null", "w");
    if (!null)
        abort();
    stdout = null;
    stderr = null;
}

/* getopt keeps state between calls (glibc: the rest of a cluster of short
 * options such as "-hx", which points into the last argument vector); the
 * parsers set optind = 1, which does not clear it, so a parse that stopped
 * in the middle of a cluster would leave the next one reading freed memory.
 * One process parses once, so only a fuzzer needs this: optind = 0 is
 * glibc's full reset. */
static inline void fuzz_getopt_reset(void)
{
    static char name[] = "fuzz";
    char *argv[] = {name, NULL};
    optind = 0;
    opterr = 0;
    while (getopt(1, argv, "") != -1)
        ;
}

#define FUZZ_MAX_ARGS 64

/* Splits data (size bytes) at NUL and newline bytes into at most
 * FUZZ_MAX_ARGS arguments, kept in buf (size + 1 bytes); a separator at the
 * very end ends the last argument rather than starting an empty one.
 * argv needs FUZZ_MAX_ARGS + 1 entries; argv[argc] = NULL. */
static inline int fuzz_argv(const uint8_t *data, size_t size, char *buf,
                            char **argv)
{
    int argc = 0;
    if (size)
        memcpy(buf, data, size);
    buf[size] = '\0';
    for (size_t i = 0; i < size; i++)
        if (buf[i] == '\n')
            buf[i] = '\0';
    for (size_t i = 0; i < size && argc < FUZZ_MAX_ARGS;) {
        argv[argc++] = buf + i;
        i += strlen(buf + i) + 1;
    }
    argv[argc] = NULL;
    return argc;
}

/* The parsers read files (--config), look at paths (--out, --task) and may
 * run a small plan; a device or /proc file could hang them.  Such inputs
 * are skipped. */
static inline int fuzz_paths_ok(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (strstr(argv[i], "/dev") || strstr(argv[i], "/proc") ||
            strstr(argv[i], "/sys"))
            return 0;
    return 1;
}

/* args_plan.c, args_run.c: the static parse_args of each subcommand (its
 * file included whole); args_sweep.c: sweep_parse_args (src/cli/sweep.h);
 * then the checks of fuzz_args.c.
 * argv[0] is the subcommand's name, as main passes it. */
int fuzz_plan_args(int argc, char **argv);
int fuzz_run_args(int argc, char **argv);
int fuzz_sweep_args(int argc, char **argv);

#endif
