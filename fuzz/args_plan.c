/* args_plan.c: the argument parser of `bptt plan` for fuzz_args.c,
 * through the command's own entry point (src/cli/plan.h): what is fuzzed
 * is the code the command runs. */
#include <string.h>

#include "cli/plan.h"
#include "plan/alloc.h"
#include "twolevel.h"

#include "fuzz.h"

int fuzz_plan_args(int argc, char **argv)
{
    plan_args a;
    int help;
    const int rc = plan_parse_args(argc, argv, &a, &help);
    if (help)
        return 0;
    FUZZ_CHECK(rc == 0 || rc == EXIT_USAGE);
    if (rc)
        return rc;
    /* what a successful parse promises */
    FUZZ_CHECK(a.n_strategies >= 1 && a.n_strategies <= MAX_STRATEGIES);
    for (int k = 0; k < a.n_strategies; k++)
        FUZZ_CHECK(a.strategies[k] != NULL);
    FUZZ_CHECK(a.length >= 1 && a.length <= INT32_MAX - 1);
    FUZZ_CHECK(a.h >= 1 && a.s >= a.h);
    FUZZ_CHECK(a.cell || (a.s / a.h <= BPTT_ALPHA_MAX && !a.quantum));
    FUZZ_CHECK(a.n_budgets >= 1 && a.n_budgets <= MAX_BUDGETS);
    FUZZ_CHECK(!(a.actions && a.curve));
    FUZZ_CHECK(!((a.actions || a.curve) && a.n_budgets > 1));
    /* --disk: a two-level plan, of strategies that have one, alone */
    FUZZ_CHECK(a.disk_text || (a.write_cost == 1 && a.read_cost == 1));
    if (a.disk_text) {
        FUZZ_CHECK(!a.online && !a.curve);
        FUZZ_CHECK(a.disk >= 0);
        FUZZ_CHECK(a.write_cost >= 0 && a.write_cost <= BPTT_SLOW_COST_MAX);
        FUZZ_CHECK(a.read_cost >= 0 && a.read_cost <= BPTT_SLOW_COST_MAX);
        for (int k = 0; k < a.n_strategies; k++)
            FUZZ_CHECK(cli_twolevel_takes(a.strategies[k]->name));
    }
    int64_t top = 0;
    const int64_t full = bptt_full_peak((size_t)a.length, a.h, a.s);
    for (int i = 0; i < a.n_budgets; i++) {
        FUZZ_CHECK(a.budget[i] >= 0 && a.budget[i] <= INT64_MAX / 4);
        if (a.budget[i] > top)
            top = a.budget[i];
        /* a whole percentage P% is floor(full * P / 100) units, exactly */
        const char *b = a.budget_text[i];
        const size_t n = strlen(b);
        if (n > 1 && b[n - 1] == '%' && strspn(b, "0123456789") == n - 1) {
            __int128 want = 0;
            for (size_t j = 0; j + 1 < n; j++)
                want = want * 10 + (b[j] - '0');
            want = want * full / 100;
            FUZZ_CHECK(want <= INT64_MAX / 4 && a.budget[i] == (int64_t)want);
        }
    }
    /* Small enough to run whole (a table of at most 64 x 4096 cells; a
     * two-level one of at most 4 x 17 x 17 x 33): the command, which
     * parses the same arguments again, must end in 0 or 3 (infeasible),
     * or 1 (out of memory) when the test hook --fail-alloc made an
     * allocation fail; the hook is process-wide, so it is disarmed for the
     * next input.  (This build has no OpenMP: --threads is parsed but runs
     * nothing in parallel.) */
    const int small = a.disk_text ? a.length <= 32 && top <= 16 &&
                                        (a.disk <= 16 ||
                                         a.disk == BPTT_SLOW_UNLIMITED)
                                  : a.length <= 64 && top <= 4096;
    if (small) {
        fuzz_getopt_reset();
        const int r = cli_plan(argc, argv);
        bptt_alloc_fail_at(0);
        FUZZ_CHECK(r == 0 || r == EXIT_INFEASIBLE ||
                   (r == 1 && a.fail_alloc));
    }
    return 0;
}
