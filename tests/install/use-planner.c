/* use-planner.c: a program of a library user, built against the installed
 * planner with `pkg-config --cflags --libs bpttcore` (tests/installcheck.sh).
 *
 *   use-planner STRATEGY T ALPHA BUDGET
 *
 * prints "forward_ops peak_units actions" of the plan, or "infeasible
 * MIN_BUDGET"; exit 0, or 1 on any other status. */
#include <stdio.h>
#include <stdlib.h>

#include <bptt/bptt.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: use-planner STRATEGY T ALPHA BUDGET\n");
        return 2;
    }
    bptt_plan *plan = NULL;
    bptt_plan_stats st;
    int64_t least = -1;
    const int rc = bptt_plan_make(argv[1], strtoul(argv[2], NULL, 10), 1,
                                  strtoll(argv[3], NULL, 10),
                                  strtoll(argv[4], NULL, 10), NULL, &plan,
                                  &st, &least);
    if (rc == BPTT_EINFEASIBLE) {
        printf("infeasible %lld\n", (long long)least);
        return 0;
    }
    if (rc != BPTT_OK) {
        fprintf(stderr, "use-planner: %s\n", bptt_strerror(rc));
        return 1;
    }
    printf("%lld %lld %zu\n", (long long)st.forward_ops,
           (long long)st.peak_units, plan->n_actions);
    bptt_plan_free(plan);
    return 0;
}
