/* slow_cache.c: how much of the page cache a two-level run's slow level
 * holds, with and without bptt_steps.slow_direct (doc/twolevel.md 6).
 *
 * Runs the msm two-level plan of T = 64 steps (fast budget two hidden
 * states and an internal one, unlimited slow level, write and read cost
 * C forward steps) on a table of hidden states of M MiB and internal
 * states of 4 M MiB whose ops only fill and copy bytes, the slow level's
 * file in DIR; each backward op reads the kernel's Cached (/proc/meminfo)
 * and the largest growth over the value before the run is printed with
 * the run's slow-level stats.  Built on demand, in the build folder:
 *
 *   make experiments/slow-cache
 *   experiments/slow-cache M DIR C DIRECT  (DIRECT 0: page cache, 1: O_DIRECT)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bptt.h"
#include "steps.h"
#include "twolevel.h"

static size_t hb, sb;  /* state bytes */
static long base, most; /* Cached before the run, its largest growth (kB) */

static long cached_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Cached: %ld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

static int forward(void *ctx, size_t i, const void *h_in, void *s_out,
                   void *h_out)
{
    (void)ctx;
    memcpy(h_out, h_in, hb);
    ((unsigned char *)h_out)[0] += (unsigned char)i;
    memset(s_out, (int)(i & 0xff), sb);
    memcpy(s_out, h_out, hb); /* h(i) at offset 0 of s(i) */
    return 0;
}

static int backward(void *ctx, size_t i, const void *s, void *dh)
{
    (void)ctx;
    (void)i;
    (void)s;
    (void)dh;
    const long k = cached_kb() - base;
    if (k > most)
        most = k;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: slow_cache MIB DIR COST DIRECT\n");
        return 2;
    }
    const size_t t = 64;
    hb = (size_t)atol(argv[1]) << 20;
    sb = 4 * hb;
    bptt_units u;
    if (hb == 0 ||
        bptt_units_from_bytes(&u, (int64_t)hb, (int64_t)sb) != BPTT_OK) {
        fprintf(stderr, "slow_cache: bad size %s\n", argv[1]);
        return 2;
    }
    const double cost = atof(argv[3]);
    const bptt_slow_level slow = {BPTT_SLOW_UNLIMITED, cost, cost};
    bptt_twolevel *tl = NULL;
    bptt_plan *p = NULL;
    int rc = bptt_twolevel_alloc(&tl, "msm", t, u.hidden_units,
                                 u.internal_units,
                                 2 * u.hidden_units + u.internal_units, &slow);
    if (rc == BPTT_OK)
        rc = bptt_twolevel_plan(tl, &p);
    bptt_twolevel_free(tl);
    if (rc != BPTT_OK) {
        fprintf(stderr, "slow_cache: plan: %s\n", bptt_strerror(rc));
        return 1;
    }
    const bptt_steps ops = {.name = "slow_cache",
                            .hidden_bytes = hb,
                            .internal_bytes = sb,
                            .forward = forward,
                            .backward = backward,
                            .hidden_in_internal = 1,
                            .slow_dir = argv[2],
                            .slow_direct = atoi(argv[4])};
    bptt_steps_stats st;
    struct timespec a, b;
    base = cached_kb();
    clock_gettime(CLOCK_MONOTONIC, &a);
    rc = bptt_steps_run(p, &ops, NULL, &st, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    bptt_plan_free(p);
    printf("slow_direct %s, states %zu and %zu MiB: %s (errno %d); %lld "
           "writes, %lld reads, slow peak %.0f MiB, file %.0f MiB; Cached "
           "grew by %.0f MiB at most; slow_seconds %.3f, run %.3f s\n",
           argv[4], hb >> 20, sb >> 20, bptt_strerror(rc), st.slow_errno,
           (long long)st.slow_writes, (long long)st.slow_reads,
           (double)st.slow_peak_bytes / 1048576.0,
           (double)st.slow_file_bytes / 1048576.0, (double)most / 1024.0,
           st.slow_seconds,
           (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec -
                                                           a.tv_nsec));
    return rc != BPTT_OK;
}
