/* fuzz_validate.c: libFuzzer target for the plan validator,
 * bptt_plan_validate (src/plan/plan.c).
 *
 * The input is a plan, any sequence of actions, valid or not.  The
 * validator must never crash, and its verdict, violation, first bad action
 * and every count must equal those of reference() below: the rules of
 * doc/design.md 2.3 written again from the text, with another representation
 * (stored states as two flag arrays whose units are summed anew after every
 * action, in 128-bit integers, so that no sum can overflow).  Accepted
 * plans are checked once more for what a plan promises: backward ops t,
 * t-1, ..., 1, each once; every step computed (forward ops minus
 * recomputations = t); the peak within the budget, and the slow level's
 * within its own.
 *
 * Input layout:
 *   byte 0      t - 1 (t = 1..256)
 *   byte 1      sizes: below 0x80, h = 1 + (b & 3), s = h + (b >> 2 & 7)
 *               and the budget m is byte 2; from 0x80, h, s and m come from
 *               the next 24 bytes (three little-endian 64-bit words), over
 *               the whole range 1 <= h <= s, m >= 0.  The slow level's
 *               budget (twolevel.h): by bits 5-6 of byte 1 below 0x80, by
 *               bits 0-1 from 0x80: 0 none (a plan of one level), 1 m, 2
 *               m / 4, 3 no bound (BPTT_SLOW_UNLIMITED)
 *   then        two bytes per action: op (below 0xF0: op % BPTT_N_OPS,
 *               the codes of enum bptt_op, the slow level's 8..13
 *               included; from 0xF0: an unknown op) and step (below 0xF0:
 *               step % (t + 2), so t + 1 is out of range; from 0xF0: a
 *               huge step)
 * Seed inputs: tests/fuzz-corpus/fuzz_validate/: plans of every strategy
 * (`bptt plan --actions --format csv`, encoded as above; two-level ones of
 * `bptt plan --disk` among them, twolevel-*), broken ones, and
 * the crashes found so far. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "fuzz.h"
#include "twolevel.h"

typedef __int128 wide;

typedef struct {
    int violation; /* enum bptt_violation */
    size_t bad;    /* first bad action; n_actions when none */
    int64_t fwd, rec, bwd;
    wide peak;
    /* the slow level: its peak, the states written and read, their units */
    wide slow_peak, wrote_units, read_units;
    int64_t writes, reads;
} verdict;

/* Units stored: h(i) costs h, s(i) costs s. */
static wide units(size_t t, const unsigned char *hid, const unsigned char *in,
                  int64_t h, int64_t s)
{
    wide u = 0;
    for (size_t i = 0; i <= t; i++)
        u += (wide)hid[i] * h + (wide)in[i] * s;
    return u;
}

/* The cost model, action by action:
 *   - at the start h(0) is stored (h units) and is the running state;
 *   - advance i: the running state must be h(i-1); it becomes h(i), and
 *     s(i) becomes the working internal state (free); a forward op, a
 *     recomputation when step i ran before;
 *   - save_hidden i: the running state must be h(i); save_internal i: and
 *     s(i) must be working (reached by an advance); not stored already; the
 *     stored units after it within the budget;
 *   - restore i: h(i) (or s(i)) must be stored; the running state becomes
 *     h(i), with no working internal state;
 *   - backward i: i must be the one due (t first, down to 1) and s(i)
 *     stored or working; afterwards there is no running state;
 *   - free: the state must be stored;
 *   - the slow level (twolevel.h) holds states apart from the budget, under
 *     its own: write_hidden i and write_internal i as the saves (the
 *     running state h(i), s(i) working; not on the slow level already; its
 *     units after it within the slow budget); read_hidden i: h(i) must be
 *     there, and becomes the running state, with no working internal
 *     state; read_internal i: s(i) must be there, h(i) becomes the running
 *     state and s(i) the working one; drop: it must be there;
 *   - at the end every backward op has run and nothing is stored on
 *     either level.
 * When an action breaks two rules, the first in the order above counts. */
static void reference(const bptt_plan *p, verdict *r)
{
    const size_t t = p->length, n = p->n_actions;
    const int64_t h = p->hidden_units, s = p->internal_units, m = p->budget;
    unsigned char *hid = calloc(t + 1, 1), *in = calloc(t + 1, 1);
    unsigned char *ran = calloc(t + 1, 1);
    unsigned char *shid = calloc(t + 1, 1), *sin = calloc(t + 1, 1);
    FUZZ_CHECK(hid && in && ran && shid && sin);
    memset(r, 0, sizeof *r);
    hid[0] = 1;
    ran[0] = 1;
    int64_t running = 0; /* -1: none */
    int working = 0;
    size_t due = t;
    int v = BPTT_V_NONE;
    size_t k = 0;
    r->peak = units(t, hid, in, h, s);
    if (r->peak > m)
        v = BPTT_V_OVER_BUDGET;
    for (; v == BPTT_V_NONE && k < n; k++) {
        const uint32_t op = p->actions[k].op, i = p->actions[k].step;
        if (op >= BPTT_N_OPS || i > t) {
            v = BPTT_V_BAD_OP;
            break;
        }
        switch (op) {
        case BPTT_ADVANCE:
            if (i < 1 || running != (int64_t)i - 1) {
                v = BPTT_V_NO_RUNNING_STATE;
                break;
            }
            r->fwd++;
            r->rec += ran[i];
            ran[i] = 1;
            running = i;
            working = 1;
            break;
        case BPTT_SAVE_HIDDEN:
            if (running != (int64_t)i)
                v = BPTT_V_NO_RUNNING_STATE;
            else if (hid[i])
                v = BPTT_V_ALREADY_STORED;
            else if (units(t, hid, in, h, s) + h > m)
                v = BPTT_V_OVER_BUDGET;
            else
                hid[i] = 1;
            break;
        case BPTT_SAVE_INTERNAL:
            if (running != (int64_t)i)
                v = BPTT_V_NO_RUNNING_STATE;
            else if (!working)
                v = BPTT_V_NO_WORKING;
            else if (in[i])
                v = BPTT_V_ALREADY_STORED;
            else if (units(t, hid, in, h, s) + s > m)
                v = BPTT_V_OVER_BUDGET;
            else
                in[i] = 1;
            break;
        case BPTT_RESTORE_HIDDEN:
        case BPTT_RESTORE_INTERNAL:
            if (!(op == BPTT_RESTORE_HIDDEN ? hid[i] : in[i]))
                v = BPTT_V_NOT_STORED;
            else {
                running = i;
                working = 0;
            }
            break;
        case BPTT_BACKWARD:
            if (i == 0 || i != due)
                v = BPTT_V_BACKWARD_ORDER;
            else if (!in[i] && !(working && running == (int64_t)i))
                v = BPTT_V_BACKWARD_NO_STATE;
            else {
                r->bwd++;
                due--;
                running = -1;
                working = 0;
            }
            break;
        case BPTT_FREE_HIDDEN:
            if (!hid[i])
                v = BPTT_V_NOT_STORED;
            else
                hid[i] = 0;
            break;
        case BPTT_FREE_INTERNAL:
            if (!in[i])
                v = BPTT_V_NOT_STORED;
            else
                in[i] = 0;
            break;
        case BPTT_WRITE_HIDDEN:
        case BPTT_WRITE_INTERNAL: {
            const int internal = op == BPTT_WRITE_INTERNAL;
            unsigned char *on = internal ? sin : shid;
            if (running != (int64_t)i)
                v = BPTT_V_NO_RUNNING_STATE;
            else if (internal && !working)
                v = BPTT_V_NO_WORKING;
            else if (on[i])
                v = BPTT_V_ALREADY_STORED;
            else if (units(t, shid, sin, h, s) + (internal ? s : h) >
                     p->slow_budget)
                v = BPTT_V_SLOW_OVER_BUDGET;
            else {
                on[i] = 1;
                r->writes++;
                r->wrote_units += internal ? s : h;
            }
            break;
        }
        case BPTT_READ_HIDDEN:
        case BPTT_READ_INTERNAL:
            if (!(op == BPTT_READ_HIDDEN ? shid[i] : sin[i]))
                v = BPTT_V_NOT_STORED;
            else {
                running = i;
                working = op == BPTT_READ_INTERNAL;
                r->reads++;
                r->read_units += op == BPTT_READ_HIDDEN ? h : s;
            }
            break;
        case BPTT_DROP_HIDDEN:
        case BPTT_DROP_INTERNAL: {
            unsigned char *on = op == BPTT_DROP_HIDDEN ? shid : sin;
            if (!on[i])
                v = BPTT_V_NOT_STORED;
            else
                on[i] = 0;
            break;
        }
        }
        if (v != BPTT_V_NONE)
            break;
        const wide u = units(t, hid, in, h, s);
        if (u > r->peak)
            r->peak = u;
        const wide su = units(t, shid, sin, h, s);
        if (su > r->slow_peak)
            r->slow_peak = su;
    }
    if (v == BPTT_V_NONE) {
        k = n;
        if (due != 0)
            v = BPTT_V_INCOMPLETE;
        else if (units(t, hid, in, h, s) != 0 ||
                 units(t, shid, sin, h, s) != 0)
            v = BPTT_V_LEAK;
    }
    r->violation = v;
    r->bad = v == BPTT_V_NONE ? n : k;
    free(hid);
    free(in);
    free(ran);
    free(shid);
    free(sin);
}

/* The slow budget of code c (0..3, the layout above) at fast budget m. */
static int64_t slow_budget(unsigned c, int64_t m)
{
    return c == 0 ? 0 : c == 1 ? m : c == 2 ? m / 4 : BPTT_SLOW_UNLIMITED;
}

static uint64_t word(const uint8_t *p)
{
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--)
        w = w << 8 | p[i];
    return w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    bptt_plan p = {0};
    p.length = (size_t)data[0] + 1;
    size_t at;
    if (data[1] < 0x80) {
        p.hidden_units = 1 + (data[1] & 3);
        p.internal_units = p.hidden_units + (data[1] >> 2 & 7);
        p.budget = data[2];
        p.slow_budget = slow_budget(data[1] >> 5 & 3, p.budget);
        at = 3;
    } else {
        if (size < 26)
            return 0;
        const uint64_t top = (uint64_t)INT64_MAX;
        const uint64_t h = 1 + word(data + 2) % top; /* 1..top */
        p.hidden_units = (int64_t)h;
        p.internal_units = (int64_t)(h + word(data + 10) % (top - h + 1));
        p.budget = (int64_t)(word(data + 18) % (top + 1)); /* 0..top */
        p.slow_budget = slow_budget(data[1] & 3, p.budget);
        at = 26;
    }
    p.n_actions = p.capacity = (size - at) / 2;
    if (p.n_actions) {
        p.actions = malloc(p.n_actions * sizeof *p.actions);
        FUZZ_CHECK(p.actions);
    }
    for (size_t k = 0; k < p.n_actions; k++) {
        const uint8_t o = data[at + 2 * k], x = data[at + 2 * k + 1];
        p.actions[k].op = o < 0xF0 ? o % BPTT_N_OPS
                                   : BPTT_N_OPS + (o - 0xF0) * 0x11111111u;
        p.actions[k].step = x < 0xF0 ? x % (uint32_t)(p.length + 2)
                                     : UINT32_MAX - (uint32_t)(x - 0xF0);
    }

    bptt_plan_stats st;
    const int rc = bptt_plan_validate(&p, &st);
    verdict ref;
    reference(&p, &ref);

    FUZZ_CHECK(rc == BPTT_OK || rc == BPTT_EBADPLAN);
    FUZZ_CHECK((rc == BPTT_OK) == (ref.violation == BPTT_V_NONE));
    FUZZ_CHECK(st.violation == ref.violation);
    FUZZ_CHECK(st.bad_action == ref.bad);
    FUZZ_CHECK(st.n_actions == p.n_actions);
    FUZZ_CHECK(st.forward_ops == ref.fwd);
    FUZZ_CHECK(st.recompute_ops == ref.rec);
    FUZZ_CHECK(st.backward_ops == ref.bwd);
    FUZZ_CHECK((wide)st.peak_units == ref.peak);
    FUZZ_CHECK((wide)st.slow_peak_units == ref.slow_peak);
    FUZZ_CHECK(st.slow_writes == ref.writes && st.slow_reads == ref.reads);
    /* the units moved, saturated at INT64_MAX (bptt.h) */
    const wide top = INT64_MAX;
    FUZZ_CHECK((wide)st.slow_write_units ==
                   (ref.wrote_units < top ? ref.wrote_units : top) &&
               (wide)st.slow_read_units ==
                   (ref.read_units < top ? ref.read_units : top));
    if (rc == BPTT_OK) {
        FUZZ_CHECK(st.backward_ops == (int64_t)p.length);
        FUZZ_CHECK(st.forward_ops - st.recompute_ops == (int64_t)p.length);
        FUZZ_CHECK(st.peak_units <= p.budget);
        FUZZ_CHECK(st.slow_peak_units <= p.slow_budget);
        FUZZ_CHECK((st.slow_writes > 0) == (bptt_plan_slow_actions(&p) > 0));
        /* backward t, t-1, ..., 1, each once, in that order */
        size_t due = p.length;
        for (size_t k = 0; k < p.n_actions; k++)
            if (p.actions[k].op == BPTT_BACKWARD) {
                FUZZ_CHECK(p.actions[k].step == due);
                due--;
            }
        FUZZ_CHECK(due == 0);
    }
    free(p.actions);
    return 0;
}
