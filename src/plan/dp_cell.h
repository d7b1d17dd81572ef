/* dp_cell.h: one cell of the dynamic programme (dp_cell.c), shared by the
 * plain scan (table.c) and the fast build (fast.c).  Not part of the
 * public interface. */
#ifndef BPTT_PLAN_DP_CELL_H
#define BPTT_PLAN_DP_CELL_H

#include <stddef.h>
#include <stdint.h>

#include "costs.h"

/* m is a column of the table (its budget: col_budget, costs.h).
 * The cheap options of cell (kind, len >= 1, m), first, in the order that
 * settles ties: internal y = 1, hidden y = 1, nothing stored (y = len); the
 * later ones only while the best is above lb.  *best gets the least cost
 * (INF if none), *choice its split. */
void planner_cheap_options(const bptt_table *tb, int kind, size_t len,
                           int64_t m, int64_t lb, int64_t *best,
                           int32_t *choice);

/* The plain scan's cell (kind, len, m): every split tried after the cheap
 * options, until one reaches the lower bound; writes its cost and choice
 * into tb. */
void planner_dp_cell(bptt_table *tb, int kind, size_t len, int64_t m);

#endif
