/* run.h: `bptt run`'s arguments, parsed (src/cli/run_args.c), for the command
 * and for the fuzz target of its parser (fuzz/args_run.c). */
#ifndef BPTT_CLI_RUN_H
#define BPTT_CLI_RUN_H

#include <stdint.h>
#include <stdio.h>

#include "bptt.h"
#include "cell.h"
#include "cli.h"

typedef struct {
    const bptt_cell_type *cell;
    const bptt_strategy *strategy;
    int64_t layers, input, hidden, batch, length, iters, seed, threads;
    const char *memory;
    const char *task;
    const char *optimizer;
    double lr;
    enum output_format format;
    const char *dump_dir;
    const char *trace;
    const char *memory_trace; /* --memory-trace FILE, or NULL */
    int64_t fail_alloc; /* test hook: the tracked allocation to fail */
} run_args;

/* The usage text (--help), onto f. */
void run_usage(FILE *f);

/* The arguments into *a, checked: 0, *help set for --help, or the
 * one-line error printed and EXIT_USAGE. */
int run_parse_args(int argc, char **argv, run_args *a, int *help);

/* A --memory value in bytes, given full BPTT's checkpoint bytes and a
 * hidden state's (for slots): 0, or the one-line error and EXIT_USAGE. */
int run_parse_memory(const char *text, int64_t full_bytes,
                     int64_t hidden_bytes, int64_t *out);

#endif
