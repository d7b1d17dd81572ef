/* cli.h: the bptt command-line front end.  Only this part of the program
 * prints or chooses exit codes; the library (bptt.h) returns status codes. */
#ifndef BPTT_CLI_H
#define BPTT_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "bptt.h"

/* Exit codes. */
enum {
    EXIT_USAGE = 2,      /* bad input: what is wrong and what would work */
    EXIT_INFEASIBLE = 3  /* the budget is below the smallest feasible one */
};

enum output_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };

/* One line on stderr, "bptt CMD: message", then the exit code to return. */
int cli_error(int code, const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Strict parsers: the whole string must be a number in [lo, hi].  On
 * failure they print the error for option `opt` and return EXIT_USAGE. */
int cli_parse_int(const char *cmd, const char *opt, const char *text,
                  int64_t lo, int64_t hi, int64_t *out);
int cli_parse_format(const char *cmd, const char *text,
                     enum output_format *out);

/* A memory budget: "N" or "Nslots" (slots), "P%" (of `full`, rounded
 * down).  Values are units in [0, INT64_MAX / 4]. */
int cli_parse_budget(const char *cmd, const char *text, int64_t full,
                     int64_t *out);

/* After getopt_long returned ':' (missing value) or '?' (unknown option):
 * the one-line error, and EXIT_USAGE. */
int cli_option_error(const char *cmd, int c, char **argv);
/* EXIT_USAGE (with the error) if arguments remain after the options. */
int cli_no_operands(const char *cmd, int argc, char **argv);

double cli_seconds(void); /* monotonic clock */

/* One record of `bptt plan`: the plan of one (strategy, length, alpha,
 * budget) as the validator counted it.  st is NULL for an infeasible budget
 * (`bptt sweep --infeasible record`): the counts are then null. */
typedef struct {
    const char *strategy;
    int64_t length, alpha, memory; /* memory: the budget in slots */
    int64_t full_peak, min_memory; /* full BPTT's peak, least feasible */
    const bptt_plan_stats *st;
} cli_plan_record;

/* The record's JSON members without braces, in the order and format of
 * `bptt plan --format json` (strategy ... actions: no timings); returns
 * what snprintf returns. */
int cli_plan_record_json(const cli_plan_record *r, char *buf, size_t cap);

/* The plan of tb at budget m, checked by the validator: 0, with *plan (the
 * caller frees it) and *st filled; or the error printed for `cmd` and its
 * exit code.  *plan_seconds (may be NULL) gets the planning time alone. */
int cli_plan_at(const char *cmd, const bptt_table *tb, int64_t m,
                bptt_plan **plan, bptt_plan_stats *st, double *plan_seconds);

int cli_plan(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_sweep(int argc, char **argv);

#endif
