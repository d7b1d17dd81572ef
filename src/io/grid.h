/* grid.h: the grid of a sweep (`bptt sweep`): its settings as given (on a
 * command line or in a config file of `key = value` lines), every axis
 * expanded from a value, a list a,b,c or a range (start:stop:step,
 * start:stop:*factor, start:stop), the points in row-major order, and the
 * grid's identity (a canonical text and its hash) that the header line of
 * a sweep file carries.
 *
 * Promises: a grid is checked whole by bptt_grid_build before any point is
 * used: every value in its interval, every name known to the library,
 * every budget a budget of the mode (budget.h), at most
 * BPTT_GRID_MAX_VALUES values an axis and BPTT_GRID_MAX_POINTS points.
 * Errors come back as BPTT_EINVAL with one line in *err that names where
 * the value came from ("--length" or "FILE:LINE: length") and what would
 * work; BPTT_ENOMEM when an allocation failed.  Library code: no output,
 * no exit.  Point k decodes the same way everywhere (the last axis
 * fastest), so a point index names one configuration for every process
 * that builds the same grid.
 */
#ifndef BPTT_GRID_H
#define BPTT_GRID_H

#include <stddef.h>
#include <stdint.h>

#include "bptt.h"
#include "strbuf.h"

/* Every key of a grid.  The axes come first, in grid order. */
enum bptt_grid_key {
    BPTT_GK_STRATEGY,
    BPTT_GK_CELL,
    BPTT_GK_LAYERS,
    BPTT_GK_INPUT,
    BPTT_GK_HIDDEN,
    BPTT_GK_BATCH,
    BPTT_GK_LENGTH,
    BPTT_GK_ALPHA,
    BPTT_GK_MEMORY,
    BPTT_GK_THREADS,
    BPTT_GK_SEED,
    BPTT_GRID_AXES,
    BPTT_GK_MODE = BPTT_GRID_AXES, /* fixed keys: one value each */
    BPTT_GK_OUT,
    BPTT_GK_FORMAT,
    BPTT_GK_INFEASIBLE,
    BPTT_GK_ITERS, /* ITERS..LR: passed to every `bptt run` */
    BPTT_GK_TASK,
    BPTT_GK_OPTIMIZER,
    BPTT_GK_LR,
    BPTT_GRID_KEYS
};

/* The modes (bit flags in bptt_grid_key_def.modes). */
enum { BPTT_GRID_PLAN = 1, BPTT_GRID_RUN = 2 };
/* What a key holds. */
enum { BPTT_GRID_NAME, BPTT_GRID_INT, BPTT_GRID_BUDGET, BPTT_GRID_FIXED };

typedef struct {
    const char *name; /* also the option (--name) and the config key */
    int kind;         /* BPTT_GRID_NAME ... */
    int modes;        /* axes: the modes the axis applies to */
    int64_t lo, hi;   /* BPTT_GRID_INT (and iters): the interval */
} bptt_grid_key_def;

extern const bptt_grid_key_def bptt_grid_keys[BPTT_GRID_KEYS];
/* The key of that name, or -1. */
int bptt_grid_key_find(const char *name);
const char *bptt_grid_mode_name(int mode); /* "plan" or "run" */

#define BPTT_GRID_MAX_POINTS 1000000
#define BPTT_GRID_MAX_VALUES 100000

typedef struct {
    size_t n;
    char **text;  /* canonical texts: integers in decimal, budgets as given */
    int64_t *num; /* BPTT_GRID_INT: the values */
} bptt_grid_axis;

typedef struct {
    /* settings: each key's text as given and where (NULL: unset) */
    char *text[BPTT_GRID_KEYS];
    char *label[BPTT_GRID_KEYS];
    /* after bptt_grid_build */
    int mode;              /* BPTT_GRID_PLAN or BPTT_GRID_RUN */
    int csv;               /* format csv (else jsonl) */
    int record_infeasible; /* infeasible = record */
    bptt_grid_axis ax[BPTT_GRID_AXES];
    int applies[BPTT_GRID_AXES]; /* the axis varies (or is passed) */
    size_t n_points;
    char *desc;    /* canonical description: the grid's identity */
    char hash[17]; /* FNV-1a of desc, 16 hex digits */
} bptt_grid;

/* Sets key k to text (copied), label saying where it came from. */
int bptt_grid_set(bptt_grid *g, int k, const char *text, const char *label);

/* Whether a config text holds any setting (a line that is neither blank
 * nor a comment). */
int bptt_grid_config_has_settings(const char *text, size_t len);
/* Reads the `key = value` lines of a config file's text (len bytes; path
 * names it in errors) into the keys of g, but for those with locked[k]
 * set (given on the command line, which wins; locked may be NULL).  A #
 * at the start of a line or after white space starts a comment. */
int bptt_grid_config(bptt_grid *g, const char *path, const char *text,
                     size_t len, const int *locked, bptt_strbuf *err);

/* Checks every key, fills in the defaults, expands the axes and describes
 * the grid (desc, hash, n_points). */
int bptt_grid_build(bptt_grid *g, bptt_strbuf *err);

/* A config text parsed and its grid built, nothing computed: for tests
 * and fuzzing. */
int bptt_grid_check_config(const char *path, const char *text, size_t len,
                           bptt_strbuf *err);

/* The value index of every axis at point k (row-major, the last axis
 * fastest); axes without values get 0. */
void bptt_grid_decode(const bptt_grid *g, size_t k,
                      size_t idx[BPTT_GRID_AXES]);
/* Axis a's text at the indices (NULL if the axis has no values). */
const char *bptt_grid_value(const bptt_grid *g, const size_t *idx, int a);
/* "point 3 of 8 (strategy=msm length=100 memory=5%)", allocated; NULL
 * when out of memory. */
char *bptt_grid_point_text(const bptt_grid *g, size_t k);

/* The header line of a sweep file: this machine's metadata (meta.h; the
 * date from SOURCE_DATE_EPOCH when set) and the grid, ending in a newline;
 * allocated, NULL when out of memory. */
char *bptt_grid_header(const bptt_grid *g);
/* 1 if a header line (a leading "# " allowed) is of this grid, 0 if of
 * another grid (its hash into other_hash), -1 if not a sweep header. */
int bptt_grid_header_matches(const bptt_grid *g, const char *line,
                             char other_hash[17]);
/* Whether a header line was written by this build (the same version and
 * git revision); *was gets the header's "VERSION (git REVISION)". */
int bptt_grid_header_same_build(const char *line, char *was, size_t cap);

/* A point of a plan grid as the planner takes it: its strategy, length,
 * the units of a slot (h) and of an internal state (alpha, as written in
 * alpha_text), the budget as written (spec) and in units, and full BPTT's
 * peak and the least feasible budget, in units. */
typedef struct {
    const bptt_strategy *strategy;
    size_t length;
    int64_t h, alpha, budget, full, min;
    const char *spec, *alpha_text;
} bptt_grid_plan;
/* Point k of a plan grid into *p: BPTT_OK, or the status of a budget that
 * is no number of units (budget.h; *p filled but for the budget). */
int bptt_grid_plan_point(const bptt_grid *g, size_t k, bptt_grid_plan *p);

/* Onto b, the command that runs g's sweep again from directory cwd with
 * the bptt binary exe, writing out: "cd CWD && EXE sweep --mode M --KEY
 * VALUE ... --format F [--infeasible record] --out OUT", every path and
 * value quoted for a POSIX shell. */
void bptt_grid_command(bptt_strbuf *b, const bptt_grid *g, const char *cwd,
                       const char *exe, const char *out);

void bptt_grid_free(bptt_grid *g);

#endif
