/* fuzz_planjson.c: libFuzzer target for the reader of plans given as JSON
 * actions, bptt_plan_from_json (src/io/planjson.c), which `bptt validate`
 * feeds any file.
 *
 * The input is the file's bytes, as they come.  The reader must never
 * crash and answer BPTT_OK, BPTT_EINVAL (with a sentence saying why) or
 * BPTT_ENOMEM.  A plan it returns has one action per element of the
 * input's actions, every step within its length, and units of a state
 * size from 1 to BPTT_ALPHA_MAX, and a slow level (twolevel.h) wherever
 * an action uses one; the validator then runs on it (and must not crash
 * either), and a plan it accepts costs at least its length and keeps both
 * levels within their budgets.
 * Seed inputs: tests/fuzz-corpus/fuzz_planjson/: plans printed by `bptt
 * plan --actions --format json` (with --disk too) and broken ones. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "fuzz.h"
#include "planjson.h"
#include "twolevel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[256];
    memset(why, 0, sizeof why);
    bptt_plan *plan = NULL;
    bptt_plan_json_stated stated;
    const int rc = bptt_plan_read_json((const char *)data, size, NULL, &plan,
                                       &stated, why, sizeof why);
    FUZZ_CHECK(rc == BPTT_OK || rc == BPTT_EINVAL || rc == BPTT_ENOMEM);
    if (rc != BPTT_OK) {
        FUZZ_CHECK(plan == NULL);
        FUZZ_CHECK(rc != BPTT_EINVAL || why[0] != '\0');
        return 0;
    }
    FUZZ_CHECK(plan != NULL && plan->length >= 1);
    FUZZ_CHECK(plan->hidden_units >= 1 &&
               plan->internal_units >= plan->hidden_units);
    for (size_t i = 0; i < plan->n_actions; i++) {
        FUZZ_CHECK(plan->actions[i].op < BPTT_N_OPS);
        FUZZ_CHECK(plan->actions[i].step <= plan->length);
    }
    FUZZ_CHECK(plan->slow_budget >= 0);
    FUZZ_CHECK(plan->slow_budget > 0 || bptt_plan_slow_actions(plan) == 0);
    bptt_plan_stats st;
    const int v = bptt_plan_validate(plan, &st);
    FUZZ_CHECK(v == BPTT_OK || v == BPTT_EBADPLAN || v == BPTT_ENOMEM);
    if (v == BPTT_OK) {
        FUZZ_CHECK(st.forward_ops >= (int64_t)plan->length &&
                   st.backward_ops == (int64_t)plan->length &&
                   st.peak_units <= plan->budget &&
                   st.slow_peak_units <= plan->slow_budget);
        /* the stated counts: equal or a sentence naming the field */
        why[0] = '\0';
        const int c = bptt_plan_json_check(plan, &st, &stated, why, sizeof why);
        FUZZ_CHECK(c == BPTT_OK ||
                   (c == BPTT_EINVAL &&
                    strncmp(why, "the file says", 13) == 0));
    }
    bptt_plan_free(plan);
    return 0;
}
