/* plan.h: `bptt plan`'s arguments, parsed (src/cli/plan.c), for the
 * command and for the fuzz target of its parser (fuzz/args_plan.c). */
#ifndef BPTT_CLI_PLAN_H
#define BPTT_CLI_PLAN_H

#include <stdint.h>

#include "bptt.h"
#include "cell.h"
#include "cli.h"

#define MAX_BUDGETS 64
#define MAX_STRATEGIES 16

/* What a budget below a strategy's smallest feasible one does. */
enum plan_infeasible {
    PLAN_INFEASIBLE_FAIL,   /* exit 3 before anything is printed */
    PLAN_INFEASIBLE_RECORD, /* a record without counts, naming the least */
    PLAN_INFEASIBLE_SKIP    /* no record; one line on stderr counts them */
};

typedef struct {
    const bptt_strategy *strategy; /* the one being planned */
    const bptt_strategy *strategies[MAX_STRATEGIES];
    int n_strategies;
    int64_t length, segment, threads;
    const char *alpha_text;
    int64_t h, s, quantum; /* units of a hidden and an internal state, and
                              bytes per unit (--cell; else 0) */
    const bptt_cell_type *cell; /* --cell: sizes of a network */
    int64_t hidden, batch, layers;
    const char *sized;          /* the first of --hidden, --batch, --layers
                                   given, or NULL */
    int alpha_given;
    int n_budgets;
    const char *budget_text[MAX_BUDGETS];
    int64_t budget[MAX_BUDGETS];
    enum output_format format;
    int actions, curve;
    int online;        /* --online: planned as if the length were unknown */
    int no_lookahead;  /* --no-lookahead: the end learned after step T */
    int64_t points;    /* --points N (--online --curve): 0, every length */
    int infeasible; /* enum plan_infeasible: --infeasible */
    /* --disk: a slow level (twolevel.h) of disk units (BPTT_SLOW_UNLIMITED
     * for inf), written and read at write_cost and read_cost forward ops
     * a hidden state (default 1 each); disk_text NULL: one level, no
     * two-level planner */
    const char *disk_text;
    int64_t disk;
    double write_cost, read_cost;
    const char *cost_given; /* the first of --write-cost, --read-cost
                               given, or NULL */
    int64_t fail_alloc; /* test hook: the planner allocation to fail */
} plan_args;

/* The arguments into *a, checked (budgets in units): 0, *help set for
 * --help, or the one-line error printed and EXIT_USAGE. */
int plan_parse_args(int argc, char **argv, plan_args *a, int *help);

/* The usage text (--help), onto f. */
void plan_usage(FILE *f);

/* The most lines --curve prints. */
#define MAX_CURVE 10000000

/* `bptt plan --online` (plan_online.c), its arguments parsed: 0 or the
 * exit status, the error said. */
int plan_online(const plan_args *a);

/* `bptt plan --disk` (plan_disk.c), the same. */
int plan_disk(const plan_args *a);

/* The smallest feasible budget of a->strategy (opts: Chen's segment) into
 * *min_mem; for a budget of a's below it, with --infeasible fail, the
 * error (nothing printed yet) and EXIT_INFEASIBLE; else 0 (plan_shared.c). */
int plan_check_feasible(const plan_args *a, const bptt_table_options *opts,
                        int64_t *min_mem);

#endif
