/* fuzz_args.c: libFuzzer target for the command-line parsers of `bptt
 * plan`, `bptt run` and `bptt sweep`.
 *
 * The input is an argument vector, split at NUL and newline bytes; the
 * first argument names the subcommand (plan, run or sweep; anything else
 * is skipped), as main passes it.  Each subcommand's own parser (reached
 * through args_*.c and the commands' headers src/cli/plan.h, run.h and
 * sweep.h) parses it, and what a successful parse promises is checked (see
 * args_*.c).  The work itself is not run, except where it is small enough
 * to be sound in a fuzzer: `bptt plan` whole when the length and budgets
 * are small, a sweep's checks of its plan budgets (before any work) and
 * --list for small grids.  Inputs naming /dev, /proc or /sys are skipped
 * (a config file there could be endless).
 * Seed inputs: tests/fuzz-corpus/fuzz_args/, dictionary fuzz/args.dict. */
#include <stdint.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    char *argv[FUZZ_MAX_ARGS + 1];
    FUZZ_CHECK(buf);
    const int argc = fuzz_argv(data, size, buf, argv);
    if (argc >= 1 && fuzz_paths_ok(argc, argv)) {
        fuzz_getopt_reset();
        if (strcmp(argv[0], "plan") == 0)
            fuzz_plan_args(argc, argv);
        else if (strcmp(argv[0], "run") == 0)
            fuzz_run_args(argc, argv);
        else if (strcmp(argv[0], "sweep") == 0)
            fuzz_sweep_args(argc, argv);
    }
    free(buf);
    return 0;
}
