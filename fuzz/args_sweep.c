/* args_sweep.c: the argument parser of `bptt sweep` for fuzz_args.c,
 * through the command's own entry points (src/cli/sweep.h): the options,
 * the --config file and the grid (grid.h) exactly as the command parses
 * them.  For grids of at most 1000 points it also runs what comes before
 * any work (plan mode: every budget against its point's smallest feasible
 * one) or --list. */
#include "cli/sweep.h"

#include "fuzz.h"

int fuzz_sweep_args(int argc, char **argv)
{
    sweep s;
    memset(&s, 0, sizeof s);
    int help;
    int rc = sweep_parse_args(argc, argv, &s, &help);
    FUZZ_CHECK(rc == 0 || rc == EXIT_USAGE);
    if (!help && rc == 0) {
        const bptt_grid *g = &s.g;
        FUZZ_CHECK(g->n_points >= 1 && g->n_points <= BPTT_GRID_MAX_POINTS);
        FUZZ_CHECK(g->desc != NULL && strlen(g->hash) == 16);
        FUZZ_CHECK(s.action == ACT_LIST || (s.out && *s.out));
        for (int k = 0; k < BPTT_GRID_AXES; k++)
            FUZZ_CHECK(!g->applies[k] || g->ax[k].n <= BPTT_GRID_MAX_VALUES);
        if (g->n_points <= 1000) {
            if (g->mode == BPTT_GRID_PLAN && s.action != ACT_LIST)
                rc = sweep_plan_preflight(&s);
            else if (s.action == ACT_LIST)
                sweep_list(&s);
        }
    }
    FUZZ_CHECK(rc == 0 || rc == EXIT_USAGE || rc == EXIT_INFEASIBLE);
    sweep_free(&s);
    return rc;
}
