/* budget.h: memory budgets as people write them, one parser for every
 * command: "200" or "200slots" (slots: a hidden state is one), "5%" or
 * "2.5%" (a share of full BPTT's memory), "64MiB", "512KiB", "3GB",
 * "100000B" (bytes; units KiB MiB GiB TiB, kB KB MB GB, B).
 *
 * Promises: bptt_budget_parse accepts exactly those forms: slots are
 * decimal numbers (no sign, no space) up to INT64_MAX / 4, whole or with
 * up to 6 decimals ("174.5", as `bptt plan` prints a budget when alpha is
 * not whole), a fraction kept exactly; a share has
 * decimal digits and at most one point, up to 1000000%; bytes are a
 * non-negative decimal number (it may have a fraction of up to 19 decimals,
 * trailing zeros aside) times the unit, up to BPTT_BUDGET_MAX_BYTES, read
 * exactly (no double on the way).  Resolving gives slots (plan) or bytes (run) as an integer,
 * rounded down, never wrapping.  Amounts are written back the same way:
 * slots as `bptt plan` prints them, bytes in words; and this machine's
 * memory, which every size is checked against.  Library code: no output,
 * no allocation (the C locale numbers are read in is glibc's static one).
 */
#ifndef BPTT_BUDGET_H
#define BPTT_BUDGET_H

#include <stddef.h>
#include <stdint.h>

/* what the library exports: everything declared here (the rest of it
 * is hidden; tests/test_exports.sh holds the two equal) */
#pragma GCC visibility push(default)

enum bptt_budget_kind {
    BPTT_BUDGET_SLOTS,   /* "200", "200slots" */
    BPTT_BUDGET_PERCENT, /* "5%", "2.5%" */
    BPTT_BUDGET_BYTES    /* "64MiB", "100000B" */
};

typedef struct {
    int kind;           /* enum bptt_budget_kind */
    const char *unit;   /* as written: "", "slots", "%", "MiB", ... (static) */
    int64_t slots;      /* BPTT_BUDGET_SLOTS: the whole part */
    int64_t slots_scaled, slots_scale; /* BPTT_BUDGET_SLOTS: exactly
                                          slots_scaled / slots_scale
                                          (scale 1 for whole slots, else
                                          10 to 10^6) */
    double percent;     /* BPTT_BUDGET_PERCENT */
    int64_t percent_whole; /* the share when whole ("5%"), else -1 */
    int64_t bytes;      /* BPTT_BUDGET_BYTES, rounded down */
} bptt_budget;

/* The largest slot count a budget may give (a bound every caller can add
 * a few of without overflow). */
#define BPTT_BUDGET_MAX_SLOTS (INT64_MAX / 4)
/* The largest budget in bytes (2 EiB less a byte).  A byte budget's number
 * may have up to 19 decimals (0.5KiB, 1.25MiB: 19 are exact at any
 * unit). */
#define BPTT_BUDGET_MAX_BYTES BPTT_BUDGET_MAX_SLOTS

/* The most threads anything runs (--threads, and OMP_NUM_THREADS, which
 * is capped to it: a huge value would end the process in libgomp). */
#define BPTT_THREADS_MAX 4096


/* BPTT_THREADS_MAX, for callers that cannot read a macro (Python). */
int bptt_threads_max(void);

/* Parses text (the whole string) into *b: BPTT_OK; BPTT_EINVAL when it is
 * not a budget; BPTT_ETOOBIG when it is one but out of range (slots above
 * BPTT_BUDGET_MAX_SLOTS or negative, a share above 1000000%, more than
 * BPTT_BUDGET_MAX_BYTES bytes).  *b is filled as far as the text was understood: its kind
 * and unit are set whenever the unit was recognized. */
int bptt_budget_parse(const char *text, bptt_budget *b);

/* The number of a budget in units, a slot being unit units (plan: the
 * hidden state's units, 2 at alpha 3.5): slots as given times unit, a
 * share of full_units (full BPTT's peak, in units), rounded down.
 * BPTT_EINVAL for bytes (only a run knows the byte sizes) and for slots
 * that are not a whole number of units (174.3 slots at unit 2);
 * BPTT_ETOOBIG above BPTT_BUDGET_MAX_SLOTS. */
int bptt_budget_units(const bptt_budget *b, int64_t unit, int64_t full_units,
                      int64_t *out);
/* For slots that are not a whole number of units: the whole numbers of
 * units just below and just above them (equal when they are whole). */
void bptt_budget_units_near(const bptt_budget *b, int64_t unit, int64_t *below,
                            int64_t *above);
/* bptt_budget_units with unit 1. */
int bptt_budget_slots(const bptt_budget *b, int64_t full_slots,
                      int64_t *out);

/* The number of a budget in bytes (run): bytes as given, a share of
 * full_bytes, or slots of slot_bytes each (a hidden state's bytes, >= 1).
 * BPTT_EINVAL for a bare number without a unit ("200": slots or bytes?),
 * BPTT_ETOOBIG above BPTT_BUDGET_MAX_SLOTS bytes. */
int bptt_budget_bytes(const bptt_budget *b, int64_t full_bytes,
                      int64_t slot_bytes, int64_t *out);

/* ---- a budget resolved: the one resolution of every command and of
 * Python ---------------------------------------------------------------- */

/* What a budget is resolved against: the plan's length, the units of its
 * two states (a slot, a hidden state, is hidden_units units), and the
 * bytes of a unit where the byte sizes are known (bptt_units_from_bytes);
 * quantum 0 where they are not (`bptt plan --alpha`), and a budget in
 * bytes is then refused. */
typedef struct {
    size_t length;
    int64_t hidden_units, internal_units;
    int64_t quantum;
} bptt_budget_sizes;

/* Flags of bptt_budget_resolve: a bare number ("200") refused (is it
 * slots or bytes?), as `bptt run` wants a unit. */
#define BPTT_BUDGET_UNIT_REQUIRED 1

/* Everything a caller needs of one budget. */
typedef struct {
    bptt_budget given;   /* the text as parsed */
    int64_t units;       /* the budget in units, rounded down */
    int64_t bytes;       /* in bytes: as written for a budget in bytes, else
                            units * quantum; -1 without a quantum */
    int64_t full_units;  /* full BPTT's peak in units (bptt_full_peak) */
    /* The most a plan under the budget ever stores, in units: the budget,
     * or full BPTT's peak and a hidden state where the budget is more;
     * and in bytes (-1 without a quantum) */
    int64_t held_units, held_bytes;
} bptt_budget_resolved;

/* Resolves the budget text (`--memory`, a sweep's memory value, Python's
 * memory=) against z: BPTT_OK and *out; else BPTT_EINVAL (not a budget
 * here: its form, bytes without byte sizes, slots that are no whole number
 * of units, a bare number where a unit is required) or BPTT_ETOOBIG (one,
 * but beyond what can be planned), with why[cap] (cap > 0) saying what is
 * wrong and what would work, the text as given quoted, in words for a
 * person: a caller puts the option's name in front.  out->given holds the
 * text as parsed on a refusal too (its kind where a unit was read). */
int bptt_budget_resolve(const char *text, const bptt_budget_sizes *z,
                        int flags, bptt_budget_resolved *out, char *why,
                        size_t cap);

/* units as slots of unit units each: "12", or "3496.5" when not whole
 * (at most 6 decimals, no trailing zeros), into buf; returns buf. */
const char *bptt_slots_text(char *buf, size_t cap, int64_t units,
                            int64_t unit);

/* Physical memory of this machine in bytes (INT64_MAX when unknown): what
 * every budget and size is checked against. */
int64_t bptt_phys_bytes(void);
/* The one check of a size against this machine: BPTT_OK when need bytes
 * fit in 1/share of its physical memory (share 1: all of it, for what a
 * run holds; 2: half, for a table or a plan built beside what already
 * runs), else BPTT_ETOOBIG (a need that is not a number too); *have (may
 * be NULL): that share of memory, in bytes. */
int bptt_memory_fits(double need, int share, double *have);
/* bytes as "512 bytes", "3.5 MiB", "246 GiB" into buf; returns buf. */
const char *bptt_bytes_text(char *buf, size_t cap, double bytes);

#pragma GCC visibility pop

#endif
