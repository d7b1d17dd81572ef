/* fig8-online-data.c: data of figure 8 (experiments/fig8-online).
 *
 * Forward ops per step against the length T a sequence turns out to have,
 * at one budget of S slots (a hidden state 1 slot, an internal state
 * alpha slots), for the online planners (online.h: hsm and msm, each step
 * announced last or not when it begins: one step of lookahead) and the
 * offline optimum of hsm and msm at the same budget, which knows T in
 * advance.  With -r, the forward ops Revolve's online mode counts at S
 * snapshots (a file of lines "S T forward_ops ...", S matching) join as a
 * fifth series.
 *
 * One sweep per online planner (bptt_online_curve) serves every T; the
 * offline msm optimum comes from one table of length TOP.
 *
 * Writes CSV to stdout ('#' lines first).  Not a test.
 *
 * usage: fig8-online-data [-t TOP] [-m S] [-a ALPHA] [-p N] [-r FILE]
 *   TOP    longest length (default 10000)
 *   S      budget in slots (default 10)
 *   ALPHA  an internal state in slots (default 1)
 *   N      lengths per decade (default 40)
 *   FILE   Revolve's online counts
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "online.h"
#include "expt.h"

#define MAX_LENGTHS 1024

/* Revolve's counts for snapshots S from FILE into rev[T - 1] (-1 where
 * absent); lines that do not parse are refused. */
static int read_revolve(const char *path, int64_t S, size_t top,
                        int64_t *rev)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "fig8-online-data: cannot read the -r file\n");
        return -1;
    }
    char line[256];
    int rc = 0;
    unsigned long lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        long long s, t, ops;
        if (sscanf(line, "%lld %lld %lld", &s, &t, &ops) != 3 || t < 1 ||
            ops < t) {
            fprintf(stderr, "fig8-online-data: -r line %lu: not \"S T "
                            "forward_ops\" with forward_ops >= T >= 1\n",
                    lineno);
            rc = -1;
            break;
        }
        if (s == S && (size_t)t <= top)
            rev[t - 1] = ops;
    }
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    size_t top = 10000;
    int64_t S = 10, alpha = 1;
    int per_decade = 40;
    const char *rfile = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            goto usage;
        if (strcmp(argv[i], "-t") == 0)
            top = (size_t)strtoull(v, NULL, 10);
        else if (strcmp(argv[i], "-m") == 0)
            S = strtoll(v, NULL, 10);
        else if (strcmp(argv[i], "-a") == 0)
            alpha = strtoll(v, NULL, 10);
        else if (strcmp(argv[i], "-p") == 0)
            per_decade = atoi(v);
        else if (strcmp(argv[i], "-r") == 0)
            rfile = v;
        else
            goto usage;
        i++;
    }
    if (top < 1 || top > 1000000 || S < 1 || alpha < 1 || per_decade < 1)
        goto usage;

    const char *names[] = {"online-hsm", "online-msm", "offline-hsm",
                           "offline-msm", "revolve-online"};
    int64_t *v[5];
    for (int k = 0; k < 5; k++) {
        v[k] = malloc(top * sizeof *v[k]);
        if (!v[k])
            return 1;
        for (size_t T = 0; T < top; T++)
            v[k][T] = -1;
    }
    double secs[2];
    for (int k = 0; k < 2; k++) {
        const double t0 = expt_now();
        const int rc = bptt_online_curve(k ? "msm" : "hsm", 1, alpha, S, top,
                                         1, v[k], v[2 + k]);
        if (rc != BPTT_OK) {
            fprintf(stderr, "fig8-online-data: %s: %s\n", names[k],
                    bptt_strerror(rc));
            return 1;
        }
        secs[k] = expt_now() - t0;
    }
    if (rfile && read_revolve(rfile, S, top, v[4]) != 0)
        return 1;

    size_t len[MAX_LENGTHS];
    const size_t n_len =
        expt_log_lengths(len, MAX_LENGTHS, 1.0, top, per_decade);
    /* summary: the largest online/offline ratio of each planner, and
     * where online hsm passes Revolve's count (none expected) */
    double worst[2] = {0, 0};
    size_t at[2] = {0, 0}, above_revolve = 0, revolve_points = 0;
    for (size_t T = 1; T <= top; T++)
        for (int k = 0; k < 2; k++) {
            const double r = (double)v[k][T - 1] / (double)v[2 + k][T - 1];
            if (r > worst[k]) {
                worst[k] = r;
                at[k] = T;
            }
        }
    for (size_t T = 1; T <= top; T++)
        if (v[4][T - 1] >= 0) {
            revolve_points++;
            above_revolve += v[0][T - 1] > v[4][T - 1];
        }
    printf("# fig8-online: S = %" PRId64 " slots, alpha = %" PRId64
           ", T = 1..%zu, the last step announced\n",
           S, alpha, top);
    for (int k = 0; k < 2; k++)
        printf("# %s / offline: at most %.4f (T = %zu); sweep %.2f s\n",
               names[k], worst[k], at[k], secs[k]);
    if (rfile)
        printf("# online-hsm above revolve-online at %zu of %zu lengths\n",
               above_revolve, revolve_points);
    printf("kind,memory_slots,alpha,length,forward_ops,forward_ops_per_step\n");
    for (int k = 0; k < 5; k++)
        for (size_t j = 0; j < n_len; j++) {
            const size_t T = len[j];
            if (v[k][T - 1] < 0)
                continue;
            printf("%s,%" PRId64 ",%" PRId64 ",%zu,%" PRId64 ",%.6f\n",
                   names[k], S, alpha, T, v[k][T - 1],
                   (double)v[k][T - 1] / (double)T);
        }
    for (int k = 0; k < 5; k++)
        free(v[k]);
    return 0;
usage:
    fprintf(stderr, "usage: fig8-online-data [-t TOP] [-m S] [-a ALPHA] "
                    "[-p N] [-r FILE]\n");
    return 2;
}
