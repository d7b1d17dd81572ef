/* dp_cell.c: one cell of the dynamic programme (table.c's comment gives
 * the recursions): the cheap options in the order that settles ties, which
 * the plain scan and the fast build (fast.c) share so that both break ties
 * alike, and the plain scan's whole cell, the reference the fast build
 * matches (tests/test_planner.c compares them). */
#include <stdint.h>
#include <stdlib.h>

#include "bptt.h"
#include "dp_cell.h"
#include "costs.h"

void planner_cheap_options(const bptt_table *tb, int kind, size_t len,
                           int64_t m, int64_t lb, int64_t *best,
                           int32_t *choice)
{
    const unsigned rules = tb->rules;
    const int paper = (rules & RULE_PAPER) != 0;
    int64_t v;
    *best = INF;
    *choice = 0;
    if ((rules & RULE_INTERNAL) && len >= 2) {
        /* y = 1: the paper keeps its start (left part P(0, m) = 0);
         * ours frees an H start, so H and S both give S(len-1, m-s). */
        *best = 1 + at(tb, paper ? KIND_H : KIND_S, col_minus(tb, m, DEP_S), len - 1);
        *choice = 1;
    }
    if ((rules & RULE_HIDDEN) && len >= 2 && *best > lb) {
        const int64_t mr = (kind == KIND_S) ? m : col_minus(tb, m, DEP_H);
        v = 1 + at(tb, KIND_H, mr, len - 1) + at(tb, kind, m, 1);
        if (v < *best) {
            *best = v;
            *choice = -1;
        }
    }
    if (*best > lb) {
        v = (int64_t)len + at(tb, kind, m, len - 1);
        if (v < *best) {
            *best = v;
            *choice = (int32_t)len;
        }
    }
}

void planner_dp_cell(bptt_table *tb, int kind, size_t len, int64_t m)
{
    const unsigned rules = tb->rules;
    const int paper = (rules & RULE_PAPER) != 0;
    const int64_t h = tb->h, mb = col_budget(tb, m);
    const size_t T1 = tb->t + 1;
    const size_t idx = (size_t)m * T1 + len;
    int64_t best = INF;
    int32_t choice = 0;

    if (len == 0) {
        tb->cost[kind][idx] = (kind == KIND_H && mb < h) ? INF : 0;
        tb->choice[kind][idx] = 0;
        return;
    }
    if (kind == KIND_H && mb < h) {
        tb->cost[kind][idx] = INF;
        tb->choice[kind][idx] = 0;
        return;
    }
    const int64_t L = (int64_t)len;
    const int64_t lb = (rules & RULE_INTERNAL) ? L : 2 * L - 1;

    /* Cheap options first: at generous budgets they reach the bound. */
    planner_cheap_options(tb, kind, len, m, lb, &best, &choice);

    if (best > lb && len >= 3 && (rules & RULE_INTERNAL)) {
        /* internal y = 2 .. len-1 */
        int rk;
        int64_t mr;
        if (paper) {
            rk = KIND_H;
            mr = col_minus(tb, m, DEP_S);
        } else if (kind == KIND_H) {
            rk = KIND_S;
            mr = col_minus(tb, m, DEP_HS);
        } else {
            rk = KIND_S;
            mr = col_minus(tb, m, DEP_S);
        }
        if (mr >= 0) {
            const int64_t *right = tb->cost[rk] + (size_t)mr * T1;
            const int64_t *left = tb->cost[kind] + (size_t)m * T1;
            for (size_t y = 2; y < len; y++) {
                const int64_t v = (int64_t)y + right[len - y] + left[y - 1];
                if (v < best) {
                    best = v;
                    choice = (int32_t)y;
                }
            }
        }
    }
    if (best > lb && len >= 3 && (rules & RULE_HIDDEN)) {
        /* hidden y = 2 .. len-1 */
        const int64_t mr = (kind == KIND_S) ? m : col_minus(tb, m, DEP_H);
        if (mr >= 0) {
            const int64_t *right = tb->cost[KIND_H] + (size_t)mr * T1;
            const int64_t *left = tb->cost[kind] + (size_t)m * T1;
            for (size_t y = 2; y < len; y++) {
                const int64_t v = (int64_t)y + right[len - y] + left[y];
                if (v < best) {
                    best = v;
                    choice = -(int32_t)y;
                }
            }
        }
    }
    if (best >= INF) {
        best = INF;
        choice = 0;
    }
    tb->cost[kind][idx] = best;
    tb->choice[kind][idx] = choice;
}
