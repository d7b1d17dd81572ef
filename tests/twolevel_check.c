/* twolevel_check.c: what the two-level tests share (twolevel_check.h). */
#include <check.h>
#include <stdint.h>

#include "bptt.h"
#include "twolevel.h"
#include "twolevel_check.h"

double checked_cost(const bptt_twolevel *tl, size_t t, int64_t h, int64_t s,
                    int64_t m, int64_t d, double wd, double rd)
{
    bptt_twolevel_cost c;
    ck_assert_int_eq(bptt_twolevel_cost_of(tl, &c), BPTT_OK);
    bptt_plan *p = NULL;
    ck_assert_int_eq(bptt_twolevel_plan(tl, &p), BPTT_OK);
    ck_assert_uint_eq(p->length, t);
    ck_assert_int_eq(p->hidden_units, h);
    ck_assert_int_eq(p->internal_units, s);
    ck_assert_int_eq(p->budget, m);
    ck_assert_int_eq(p->slow_budget, d);
    bptt_plan_stats st;
    const int rc = bptt_plan_validate(p, &st);
    ck_assert_msg(rc == BPTT_OK, "t=%zu m=%lld: plan invalid (%s at %zu)",
                  t, (long long)m, bptt_violation_str(st.violation),
                  st.bad_action);
    bptt_plan_free(p);
    ck_assert_int_le(st.peak_units, m);
    ck_assert_int_le(st.slow_peak_units, d);
    ck_assert_int_eq(st.backward_ops, (int64_t)t);
    if (d == 0)
        ck_assert_int_eq(st.slow_writes + st.slow_reads, 0);
    ck_assert_int_eq(st.forward_ops, c.forward_ops);
    ck_assert_int_eq(st.slow_writes, c.slow_writes);
    ck_assert_int_eq(st.slow_reads, c.slow_reads);
    ck_assert_int_eq(st.slow_write_units, c.slow_write_units);
    ck_assert_int_eq(st.slow_read_units, c.slow_read_units);
    const double mine = (double)st.forward_ops +
                        wd * (double)st.slow_write_units / (double)h +
                        rd * (double)st.slow_read_units / (double)h;
    ck_assert_msg(mine == c.cost, "validator's cost %.17g, cost_of %.17g",
                  mine, c.cost);
    return c.cost;
}
