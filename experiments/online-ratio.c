/* online-ratio.c: the table of doc/online.md 3, online msm against the
 * offline msm optimum.
 *
 * For alpha in 1, 2, 3, 4, 8 and budgets holding n = 3, 5, 8, 12, 20, 40
 * internal states beside h(0) (n alpha + 1 units, a hidden state 1), the
 * largest ratio of online msm's forward ops (the last step announced) to
 * the offline msm optimum over every T from 1 to TOP, where it is, and the
 * ratio at TOP; and the lengths where online msm passes online hsm at the
 * same budget (the table's last line).  One bptt_online_curve per planner
 * and budget.  Writes a Markdown table to stdout.  Not a test.
 *
 * usage: online-ratio [-t TOP]     TOP: longest length (default 10000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "online.h"

int main(int argc, char **argv)
{
    size_t top = 10000;
    if (argc == 3 && strcmp(argv[1], "-t") == 0)
        top = (size_t)strtoull(argv[2], NULL, 10);
    else if (argc != 1)
        top = 0;
    if (top < 1 || top > 1000000) {
        fprintf(stderr, "usage: online-ratio [-t TOP]   (1 <= TOP <= 1000000)\n");
        return 2;
    }
    const int64_t alphas[] = {1, 2, 3, 4, 8}, states[] = {3, 5, 8, 12, 20, 40};
    int64_t *ms = malloc(top * sizeof *ms), *off = malloc(top * sizeof *off),
            *hs = malloc(top * sizeof *hs);
    if (!ms || !off || !hs)
        return 1;
    size_t above_hsm = 0;
    printf("| alpha |");
    for (size_t b = 0; b < 6; b++)
        printf(" %lld states |", (long long)states[b]);
    printf("\n|---|---|---|---|---|---|---|\n");
    for (size_t a = 0; a < 5; a++) {
        printf("| %lld |", (long long)alphas[a]);
        for (size_t b = 0; b < 6; b++) {
            const int64_t m = states[b] * alphas[a] + 1;
            int rc = bptt_online_curve("msm", 1, alphas[a], m, top, 1, ms, off);
            if (rc == BPTT_OK)
                rc = bptt_online_curve("hsm", 1, alphas[a], m, top, 1, hs,
                                       NULL);
            if (rc != BPTT_OK) {
                printf(" %s |", bptt_strerror(rc));
                continue;
            }
            double worst = 0;
            size_t at = 0;
            for (size_t T = 1; T <= top; T++) {
                const double r = (double)ms[T - 1] / (double)off[T - 1];
                if (r > worst) {
                    worst = r;
                    at = T;
                }
                above_hsm += ms[T - 1] > hs[T - 1];
            }
            printf(" %.3f (T = %zu); %.3f |", worst, at,
                   (double)ms[top - 1] / (double)off[top - 1]);
            fflush(stdout);
        }
        printf("\n");
    }
    printf("\nOnline msm above online hsm at the same budget: %zu of %zu "
           "points.\n", above_hsm, (size_t)30 * top);
    free(ms);
    free(off);
    free(hs);
    return 0;
}
