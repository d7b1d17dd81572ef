/* fuzz_config.c: libFuzzer target for the parser of `bptt sweep --config`
 * files: any text goes through cli_sweep_check_config (src/cli/sweep.c),
 * the code --config runs: the `key = value` lines, then every value, list,
 * range and budget of the grid they describe.  It must answer 0 or
 * EXIT_USAGE (with its one-line message), never crash, leak or hang.
 * Seed inputs: tests/fuzz-corpus/fuzz_config/. */
#include <stdint.h>

#include "cli/cli.h"
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
    /* (task = text:FILE only asks access(2) about FILE: no reads) */
    const int rc = cli_sweep_check_config("fuzz.conf", (const char *)data,
                                          size);
    FUZZ_CHECK(rc == 0 || rc == EXIT_USAGE);
    return 0;
}
