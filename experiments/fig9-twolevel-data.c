/* fig9-twolevel-data.c: data of figure 9 (experiments/fig9-twolevel).
 *
 * The cost of one training iteration (forward ops + wd x writes + rd x
 * reads, in forward ops) against the fast memory, in hidden-state slots,
 * for one level (no slow level), and two levels with 10 slots or an
 * unlimited slow level: hsm (hidden states only: H-Revolve's model) and
 * msm (internal states alpha slots).  One two-level table per series
 * serves every budget (bptt_twolevel_cost_at).  With -r, H-Revolve's
 * optimum as computed by checkpoint_schedules (lines "N mem disk wd rd
 * cost", results/hrevolve-twolevel.tsv) joins at the points it has, and
 * the summary says whether hsm equals it there.
 *
 * Writes CSV to stdout ('#' lines first).  Not a test.
 *
 * usage: fig9-twolevel-data [-t T] [-m MAX] [-a ALPHA] [-w WD] [-d RD]
 *                           [-r FILE]
 *   T      length (default 1000)
 *   MAX    largest fast memory in slots (default 40)
 *   ALPHA  an internal state in slots (default 4)
 *   WD RD  write and read costs per hidden state (default 2 and 2)
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "expt.h"
#include "twolevel.h"

#define DISK_SLOTS 10

/* H-Revolve's rows of FILE at length t and costs (wd, rd): each compared
 * with the hsm table of the same slow level; prints them as CSV rows. */
static int hrevolve_points(const char *path, size_t t, double wd, double rd,
                           bptt_twolevel *const *hsm, int64_t max_m,
                           size_t *equal, size_t *points)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "fig9-twolevel-data: cannot read the -r file\n");
        return -1;
    }
    char line[256];
    unsigned long lineno = 0;
    int rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        long long n, mem, disk;
        double w, r, cost;
        if (sscanf(line, "%lld %lld %lld %lf %lf %lf", &n, &mem, &disk, &w,
                   &r, &cost) != 6 ||
            n < 1 || mem < 1 || disk < -1 || !(cost >= 0) || !isfinite(w) ||
            !isfinite(r)) {
            fprintf(stderr, "fig9-twolevel-data: -r line %lu: not \"N mem "
                            "disk wd rd cost\"\n",
                    lineno);
            rc = -1;
            break;
        }
        if ((size_t)n != t || w != wd || r != rd || mem > max_m ||
            (disk != DISK_SLOTS && disk != -1))
            continue;
        const int k = disk == -1;
        const double ours = bptt_twolevel_cost_at(
            hsm[k], t, mem, k ? BPTT_SLOW_UNLIMITED : DISK_SLOTS);
        (*points)++;
        *equal += fabs(ours - cost) < 1e-6;
        printf("hrevolve,%lld,%s,%.6f,%.6f\n", mem, k ? "inf" : "10", cost,
               cost / (double)t);
    }
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    size_t t = 1000;
    int64_t max_m = 40, alpha = 4;
    double wd = 2, rd = 2;
    const char *rfile = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            goto usage;
        if (strcmp(argv[i], "-t") == 0)
            t = (size_t)strtoull(v, NULL, 10);
        else if (strcmp(argv[i], "-m") == 0)
            max_m = strtoll(v, NULL, 10);
        else if (strcmp(argv[i], "-a") == 0)
            alpha = strtoll(v, NULL, 10);
        else if (strcmp(argv[i], "-w") == 0)
            wd = strtod(v, NULL);
        else if (strcmp(argv[i], "-d") == 0)
            rd = strtod(v, NULL);
        else if (strcmp(argv[i], "-r") == 0)
            rfile = v;
        else
            goto usage;
        i++;
    }
    if (t < 2 || t > 100000 || max_m < 2 || max_m > 1000 || alpha < 1 ||
        alpha > 64 || !(wd >= 0 && wd <= 1e6) || !(rd >= 0 && rd <= 1e6))
        goto usage;

    /* [strategy][slow level]: 10 slots, unlimited; one level is d' = 0 of
     * the first */
    bptt_twolevel *tl[2][2];
    const char *strat[2] = {"hsm", "msm"};
    double secs[2][2];
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 2; k++) {
            const bptt_slow_level sl = {k ? BPTT_SLOW_UNLIMITED : DISK_SLOTS,
                                        wd, rd};
            const double t0 = expt_now();
            const int rc = bptt_twolevel_alloc(&tl[s][k], strat[s], t, 1,
                                               s ? alpha : 1, max_m, &sl);
            if (rc != BPTT_OK) {
                fprintf(stderr, "fig9-twolevel-data: %s: %s\n", strat[s],
                        bptt_strerror(rc));
                return 1;
            }
            secs[s][k] = expt_now() - t0;
        }
    printf("# fig9-twolevel: t = %zu, alpha = %" PRId64
           " (msm), wd = %g, rd = %g per hidden state; slow level of %d "
           "slots or unlimited\n",
           t, alpha, wd, rd, DISK_SLOTS);
    for (int s = 0; s < 2; s++)
        printf("# %s tables: %.2f s (10 slots), %.2f s (unlimited)\n",
               strat[s], secs[s][0], secs[s][1]);
    printf("kind,fast_slots,slow_slots,cost,cost_per_step\n");
    for (int s = 0; s < 2; s++)
        for (int k = -1; k < 2; k++)
            for (int64_t m = 1; m <= max_m; m++) {
                const double c = bptt_twolevel_cost_at(
                    tl[s][k < 0 ? 0 : k], t, m,
                    k < 0 ? 0 : k ? BPTT_SLOW_UNLIMITED : DISK_SLOTS);
                if (c < 0)
                    continue;
                printf("%s-%s,%" PRId64 ",%s,%.6f,%.6f\n", strat[s],
                       k < 0 ? "one" : "two", m,
                       k < 0 ? "0" : k ? "inf" : "10", c, c / (double)t);
            }
    size_t equal = 0, points = 0;
    int rc = 0;
    if (rfile)
        rc = hrevolve_points(rfile, t, wd, rd, tl[0], max_m, &equal, &points);
    if (rfile && rc == 0)
        printf("# hsm equals H-Revolve at %zu of its %zu points here\n",
               equal, points);
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 2; k++)
            bptt_twolevel_free(tl[s][k]);
    return rc ? 1 : 0;
usage:
    fprintf(stderr, "usage: fig9-twolevel-data [-t T] [-m MAX] [-a ALPHA] "
                    "[-w WD] [-d RD] [-r FILE]\n");
    return 2;
}
