/* fuzz_planmake.c: libFuzzer target for the planner's one call,
 * bptt_plan_make, and the closed forms (bptt.h), over the whole range of
 * sizes they accept.
 *
 * Checked: no crash, no signed overflow (the target builds with UBSan);
 * a status among BPTT_OK, BPTT_EINFEASIBLE and BPTT_ETOOBIG, never
 * BPTT_EBADPLAN for a plan of the planner's own; a plan returned passes
 * the validator again within the budget; BPTT_EINFEASIBLE states a
 * smallest budget above the one asked (for the DP strategies: one hidden
 * state); full BPTT's peak is (t-1) s or h exactly, computed again in
 * 128 bits, or -1 when it does not fit; the closed forms return (bounded
 * time) and Chen's default segment is the least k with k^2 >= t.
 *
 * Input layout (45 bytes at least):
 *   byte 0      strategy: index into bptt_strategies (mod their count)
 *   byte 1      t - 1 (t = 1..64)
 *   bytes 2-4   right shifts (mod 64) of the three words below, so that
 *               small sizes are as likely as huge ones
 *   bytes 5-28  three little-endian 64-bit words, each shifted: hidden
 *               bytes 1 + w % INT64_MAX, internal bytes hidden + w (mod
 *               what keeps them <= INT64_MAX, so s >= h), budget bytes
 *               w % (INT64_MAX + 1)
 *   bytes 29-44 two words for the closed forms: a length and a budget
 * Where the table is built at one's own units (a budget of one internal
 * state or more, not hsm), the planner's allocations at their peak stay
 * within what it counts (bptt_table_bytes_needed, the actions, the
 * unrolling scratch), and every byte is given back.
 * Inputs whose table would be large (more than 2^16 columns: budgets, or
 * sums a h + b s on the compressed axis where s is far above t h) are
 * skipped: the fuzzer's memory limit is not the planner's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "plan/alloc.h"
#include "fuzz.h"

static uint64_t word(const uint8_t *p)
{
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--)
        w = w << 8 | p[i];
    return w;
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        const int64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 45)
        return 0;
    size_t n_st = 0;
    while (bptt_strategies[n_st])
        n_st++;
    const bptt_strategy *st = bptt_strategies[data[0] % n_st];
    const size_t t = 1 + (size_t)(data[1] % 64);
    const uint64_t top = (uint64_t)INT64_MAX;
    const int64_t hb = (int64_t)(1 + (word(data + 5) >> (data[2] % 64)) % top);
    const uint64_t ds = (word(data + 13) >> (data[3] % 64)) % (top - (uint64_t)hb + 1);
    const int64_t sb = hb + (int64_t)ds;
    const int64_t mb = (int64_t)((word(data + 21) >> (data[4] % 64)) % (top + 1));

    /* the closed forms, on any sizes */
    const int64_t ct = (int64_t)(word(data + 29) % (top + 1));
    const int64_t cm = (int64_t)(word(data + 37) % (top + 1));
    const int64_t hc = bptt_hsm_closed_cost(ct, cm);
    FUZZ_CHECK(hc >= -1);
    if (cm >= 1 && ct >= 1 && hc >= 0) /* one sweep and t backward steps */
        FUZZ_CHECK((__int128)hc >= 2 * (__int128)ct - 1);
    const size_t k = bptt_chen_default_segment((size_t)word(data + 29));
    {
        const size_t tt = (size_t)word(data + 29);
        size_t sq;
        FUZZ_CHECK(k >= 1);
        FUZZ_CHECK(__builtin_mul_overflow(k, k, &sq) || sq >= tt);
        FUZZ_CHECK(k == 1 || (!__builtin_mul_overflow(k - 1, k - 1, &sq) &&
                              sq < tt));
    }

    bptt_units u;
    FUZZ_CHECK(bptt_units_from_bytes(&u, hb, sb) == BPTT_OK);
    const int64_t h = u.hidden_units, s = u.internal_units, m = mb / u.quantum;
    {
        const __int128 want = (__int128)(t - 1) * s > h ? (__int128)(t - 1) * s
                                                        : (__int128)h;
        const int64_t fp = bptt_full_peak(t, h, s);
        FUZZ_CHECK(want > INT64_MAX ? fp == -1 : fp == (int64_t)want);
    }
    const int dp = st != bptt_strategy_find("full") &&
                   st != bptt_strategy_find("chen");
    const int wide = dp && m >= s && strcmp(st->name, "hsm") != 0;
    if (wide) {
        /* a table over min(m, t s + h) budgets, or over the sums
         * a h + b s (a + b <= t + 1) below that when they are fewer (the
         * compressed axis, s far above t h): skip the big ones */
        const __int128 sat = (__int128)t * s + h;
        const __int128 top = m < sat ? (__int128)m : sat;
        __int128 pairs = 0;
        for (int64_t b = 0; b <= (int64_t)t + 1 && (__int128)b * s <= top;
             b++) {
            const __int128 rest = (top - (__int128)b * s) / h;
            const __int128 n = (int64_t)t + 1 - b;
            pairs += (rest < n ? rest : n) + 1;
        }
        if ((top < pairs ? top : pairs) > ((__int128)1 << 16))
            return 0;
    }

    bptt_plan *plan = NULL;
    bptt_plan_stats stats;
    int64_t least = 0;
    const size_t held_before = bptt_alloc_bytes();
    bptt_alloc_reset_peak();
    const int rc = bptt_plan_make(st->name, t, hb, sb, mb, NULL, &plan,
                                  &stats, &least);
    const size_t peak = bptt_alloc_peak_bytes() - held_before;
    if (rc == BPTT_OK && wide) {
        /* what the planner held at its peak is what it counted: the
         * table's build, then the table with the plan's actions (an array
         * of exactly their number) and the unrolling scratch */
        const bptt_table_options one = {.min_budget = m};
        const size_t build = bptt_table_bytes_needed(st, t, h, s, m, &one);
        FUZZ_CHECK(build > 0 && build < SIZE_MAX);
        FUZZ_CHECK(plan->capacity == plan->n_actions);
        FUZZ_CHECK((double)peak <=
                   (double)build + (double)plan->n_actions *
                                       sizeof(bptt_action) +
                       (double)bptt_plan_scratch_bytes(st, t));
    }
    FUZZ_CHECK(rc == BPTT_OK || rc == BPTT_EINFEASIBLE ||
               rc == BPTT_ETOOBIG);
    if (rc == BPTT_OK) {
        bptt_plan_stats again;
        FUZZ_CHECK(plan != NULL);
        FUZZ_CHECK(bptt_plan_validate(plan, &again) == BPTT_OK);
        FUZZ_CHECK(again.peak_units <= m && plan->budget == m);
        FUZZ_CHECK(again.forward_ops == stats.forward_ops);
        FUZZ_CHECK(again.backward_ops == (int64_t)t);
        FUZZ_CHECK(plan->hidden_units == h && plan->internal_units == s);
        if (dp) /* never worse than recomputing from h(0) */
            FUZZ_CHECK(stats.forward_ops <= (int64_t)(t * (t + 1) / 2));
    } else {
        FUZZ_CHECK(plan == NULL);
    }
    if (rc == BPTT_EINFEASIBLE) {
        FUZZ_CHECK(least > mb);
        FUZZ_CHECK(least % gcd64(hb, sb) == 0);
        if (dp)
            FUZZ_CHECK(least == hb);
    }
    if (st == bptt_strategy_find("full")) {
        const int64_t fp = bptt_full_peak(t, h, s);
        if (rc == BPTT_OK)
            FUZZ_CHECK(fp >= 0 && fp <= m);
        if (rc == BPTT_ETOOBIG) /* in units, or in bytes */
            FUZZ_CHECK(fp == -1 || fp > INT64_MAX / u.quantum);
        if (rc == BPTT_EINFEASIBLE)
            FUZZ_CHECK(fp > m && fp <= INT64_MAX / u.quantum &&
                       least == fp * u.quantum);
    }
    bptt_plan_free(plan);
    FUZZ_CHECK(bptt_alloc_bytes() == held_before); /* all given back */
    return 0;
}
