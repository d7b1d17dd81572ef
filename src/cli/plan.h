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

#endif
