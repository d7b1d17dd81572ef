/* args_run.c: the argument parser of `bptt run` for fuzz_args.c, through
 * the command's own entry points (src/cli/run.h): what is fuzzed is the
 * code the command runs.  The run itself (a training) is not. */
#include "cli/run.h"
#include "model.h"

#include "fuzz.h"

int fuzz_run_args(int argc, char **argv)
{
    run_args a;
    int help;
    const int rc = run_parse_args(argc, argv, &a, &help);
    if (help)
        return 0;
    FUZZ_CHECK(rc == 0 || rc == EXIT_USAGE);
    if (rc)
        return rc;
    /* what a successful parse promises */
    FUZZ_CHECK(a.cell != NULL && a.strategy != NULL);
    FUZZ_CHECK(a.length >= 1 && a.length <= INT32_MAX - 1);
    FUZZ_CHECK(a.layers >= 1 && a.layers <= BPTT_MAX_LAYERS);
    FUZZ_CHECK(a.hidden >= 1 && a.batch >= 1 && a.input >= 0);
    FUZZ_CHECK(a.iters >= 1 && a.iters <= 1000000);
    FUZZ_CHECK(a.lr >= 1e-12 && a.lr <= 1e6);
    FUZZ_CHECK(a.memory != NULL && a.task != NULL && a.optimizer != NULL);
    /* The budget, as bptt run resolves it once the sizes are known:
     * against a few (a hidden and an internal state's bytes), from the
     * smallest to the largest a machine could hold. */
    static const double sizes[][2] = {{4, 4},
                                      {4096, 3 * 4096},
                                      {(double)(1 << 20), 0x1p40},
                                      {0x1p40, 0x1p60}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        bptt_session_sizes z = {0};
        z.hidden_bytes = sizes[i][0];
        z.internal_bytes = sizes[i][1];
        bptt_budget_resolved r;
        const int rc = run_budget("run", "--memory", a.memory,
                                  (size_t)a.length, &z, &r);
        FUZZ_CHECK(rc == 0 || rc == EXIT_USAGE);
        FUZZ_CHECK(rc != 0 || (r.bytes >= 0 && r.bytes <= BPTT_BUDGET_MAX_BYTES &&
                               r.held_bytes >= 0 && r.held_bytes <= r.bytes));
    }
    return 0;
}
