/* args_sweep.c: the argument parser of `bptt sweep` for fuzz_args.c.  It
 * includes src/cli/sweep.c whole, to reach its static parse_args (options,
 * --config file, grid): what is fuzzed is the code the command runs.  For
 * grids of at most 1000 points it also runs what comes before any work
 * (plan mode: every budget against its point's smallest feasible one) or
 * --list. */
#include "cli/sweep.c"

#include "fuzz.h"

int fuzz_sweep_args(int argc, char **argv)
{
    sweep s;
    memset(&s, 0, sizeof s);
    int help;
    int rc = parse_args(argc, argv, &s, &help);
    FUZZ_CHECK(rc == 0 || rc == EXIT_USAGE);
    if (!help && rc == 0) {
        FUZZ_CHECK(s.n_points >= 1 && s.n_points <= MAX_POINTS);
        FUZZ_CHECK(s.grid != NULL && strlen(s.grid_hash) == 16);
        FUZZ_CHECK(s.action == ACT_LIST || (s.out && *s.out));
        for (int k = 0; k < N_AXES; k++)
            FUZZ_CHECK(!s.applies[k] || s.ax[k].n <= MAX_AXIS_VALUES);
        if (s.n_points <= 1000) {
            if (s.mode == IN_PLAN && s.action != ACT_LIST)
                rc = plan_preflight(&s);
            else if (s.action == ACT_LIST)
                list_points(&s);
        }
    }
    FUZZ_CHECK(rc == 0 || rc == EXIT_USAGE || rc == EXIT_INFEASIBLE);
    sweep_free(&s);
    return rc;
}
