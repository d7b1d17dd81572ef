/* cli.h: the bptt command-line front end.  Only this part of the program
 * prints or chooses exit codes; the library (bptt.h) returns status codes. */
#ifndef BPTT_CLI_H
#define BPTT_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "bptt.h"
#include "budget.h"
#include "fields.h"

/* Exit codes. */
enum {
    EXIT_USAGE = 2,      /* bad input: what is wrong and what would work */
    EXIT_INFEASIBLE = 3  /* the budget is below the smallest feasible one */
};

/* The formats of the outputs, as the library's writers number them
 * (fields.h). */
enum output_format {
    FORMAT_TEXT = BPTT_FIELDS_TEXT,
    FORMAT_JSON = BPTT_FIELDS_JSON,
    FORMAT_CSV = BPTT_FIELDS_CSV
};

/* One line on stderr, "bptt CMD: message", then the exit code to return.
 * The message is always one line: whatever the values it quotes hold, a
 * control byte (newline, carriage return, escape, DEL, a C1 control) or a
 * byte of invalid UTF-8 is shown escaped (\n, \t, \r, \xHH), so no
 * value can add a line or send a terminal a control sequence. */
int cli_error(int code, const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same line for a message that is not an error ("FILE is complete"). */
void cli_note(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* text[0..n) onto f with cli_error's escapes. */
void cli_put_escaped(FILE *f, const char *text, size_t n);

/* Strict parsers: the whole string must be a number in [lo, hi].  On
 * failure they print the error for option `opt` and return EXIT_USAGE. */
int cli_parse_int(const char *cmd, const char *opt, const char *text,
                  int64_t lo, int64_t hi, int64_t *out);
int cli_parse_format(const char *cmd, const char *text,
                     enum output_format *out);

/* A memory budget as written, resolved against sizes z (budget.h:
 * bptt_budget_resolve, the one resolution): 0 with *r, or the library's
 * refusal for option opt and EXIT_USAGE. */
int cli_budget(const char *cmd, const char *opt, const char *text,
               const bptt_budget_sizes *z, int flags,
               bptt_budget_resolved *r);

/* A two-level plan's write or read cost (twolevel.h: forward ops a hidden
 * state), a decimal number from 0 to BPTT_SLOW_COST_MAX ("2", "0.5",
 * "1e-3"): 0 with *out, or the error for option opt and EXIT_USAGE.  One
 * parser for `plan --disk` and `compare`. */
int cli_parse_cost(const char *cmd, const char *opt, const char *text,
                   double *out);

/* A subcommand's usage text onto f, with "@STRATEGIES@", "@CELLS@",
 * "@ONLINE@" and "@TWOLEVEL@" replaced by the library's lists ("full,
 * chen, ... or msm-paper"; the online planner's and the two-level
 * planner's: "hsm or msm"), and "@COSTMAX@" by the largest write or read
 * cost (twolevel.h), so that no help text names them itself. */
void cli_usage(FILE *f, const char *text);
/* The strategies the online planner (online.h) takes, as
 * bptt_strategy_names writes them; returns the whole length. */
size_t cli_online_strategy_names(char *buf, size_t cap, const char *last);
/* The same for the two-level planner (twolevel.h), and whether it takes
 * strategy `name` (1 or 0). */
size_t cli_twolevel_strategy_names(char *buf, size_t cap, const char *last);
int cli_twolevel_takes(const char *name);
/* The one-line errors for an unknown --strategy or --cell, naming the
 * library's choices; they return EXIT_USAGE. */
int cli_unknown_strategy(const char *cmd, const char *opt, const char *name);
int cli_unknown_cell(const char *cmd, const char *opt, const char *name);

/* After getopt_long returned ':' (missing value) or '?' (unknown option):
 * the one-line error, and EXIT_USAGE. */
int cli_option_error(const char *cmd, int c, char **argv);
/* The end of an option loop: rc (the loop's status) when not 0, else
 * EXIT_USAGE (with the error) if arguments remain after the options. */
int cli_no_operands(const char *cmd, int rc, int argc, char **argv);
/* 0, or EXIT_USAGE with the error when --length was not given (0). */
int cli_length_given(const char *cmd, int64_t length);

/* getopt_long over opts (short options: -h only) with the checks every
 * subcommand wants: a missing value, an unknown or ambiguous option, a
 * value that is itself an option ("--length --memory 5"), and an option
 * given twice with different values are errors.  seen (CLI_MAX_OPTIONS
 * entries, zeroed before the first call) remembers the values given.
 * Returns the option's code, -1 after the last, or CLI_OPT_ERROR with the
 * error printed and *rc = EXIT_USAGE. */
struct option;
#define CLI_MAX_OPTIONS 64
#define CLI_OPT_ERROR (-2)
int cli_getopt(const char *cmd, int argc, char **argv,
               const struct option *opts, const char **seen, int *rc);



/* An output that is written at the end of the work and renamed into place
 * (a file, or with is_dir a directory), checked before any work
 * (bptt_output_checked, filewrite.h): 0, or the error and EXIT_USAGE. */
int cli_check_output(const char *cmd, const char *opt, const char *path,
                     int is_dir);

double cli_seconds(void); /* monotonic clock */

/* What path is (the open fd when >= 0), for a message: "a directory", "a
 * FIFO (named pipe)", "a device", "a socket", "a regular file", "not
 * there". */
const char *cli_file_kind(const char *path, int fd);

/* dir, an option's folder that must exist and take new files (opt as
 * "--disk-dir"; a link to a folder will do): 0, or the one-line refusal
 * (empty name, not there, not a folder, not writable) and EXIT_USAGE. */
int cli_check_folder(const char *cmd, const char *opt, const char *dir);

/* A slow level's budget as written (--disk, an item's /DISK): "inf" or a
 * budget's form (budget.h), checked before the sizes are known: 0, or the
 * one-line error for opt and EXIT_USAGE. */
int cli_disk_form(const char *cmd, const char *opt, const char *text);

/* The plan of tb at budget m, checked by the validator: 0, with *plan (the
 * caller frees it) and *st filled; or the error printed for `cmd` and its
 * exit code.  *plan_seconds (may be NULL) gets the planning time alone. */
int cli_plan_at(const char *cmd, const bptt_table *tb, int64_t m,
                bptt_plan **plan, bptt_plan_stats *st, double *plan_seconds);

/* Whether the plan of tb at budget m (feasible) fits in memory before it
 * is made (bptt_plan_bytes_bound): 0, or the error (the bytes it would
 * need and the machine's memory) and EXIT_USAGE when that is more than
 * half of physical memory. */
int cli_plan_fits(const char *cmd, const bptt_table *tb, int64_t m);
/* The same for the plan of strategy `name`, length t, budget m and a cost
 * of c forward ops known without a table. */
int cli_plan_cost_fits(const char *cmd, const char *name, size_t t,
                       int64_t m, int64_t c);

/* The error for a failed bptt_table_alloc(strategy, t, h, s, max_m): for
 * BPTT_ETOOBIG (more than half of physical memory) EXIT_USAGE and a line
 * with the machine's memory and what a plain table of those sizes would
 * hold; otherwise 1.  budget says what was asked ("budgets up to 10
 * slots"). */
int cli_table_error(const char *cmd, int status, const bptt_strategy *st,
                    size_t t, int64_t h, int64_t s, int64_t max_m,
                    const char *budget);

int cli_plan(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_compare(int argc, char **argv);
int cli_sweep(int argc, char **argv);
int cli_validate(int argc, char **argv);
int cli_calibrate(int argc, char **argv);

#endif
