/* records.h: the records of a sweep file, one JSON object a line, each
 * starting with "point":K, written for a grid's points, checked against
 * the grid when read back (record_check.c), and their csv form.
 *
 * Promises: bptt_records_csv writes RFC 4180 csv: a header row, then one
 * row per record; a field with a comma, quote, CR or LF, or starting with
 * a space or '#' (which a reader could take for a comment), is quoted,
 * quotes doubled; null is an empty field, a number is written as its JSON
 * text.  A record read back is parsed whole and checked against the grid
 * before any of it is used.  Library code: no output, no exit.
 */
#ifndef BPTT_RECORDS_H
#define BPTT_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "grid.h"
#include "strbuf.h"

/* The point index of a record line ({"point":K,...), or -1. */
int64_t bptt_record_point(const char *line);

/* One csv field (v NULL: empty) onto b. */
int bptt_csv_field(bptt_strbuf *b, const char *v);

/* The records rec[0..n) (each one flat JSON object: no arrays or objects
 * as values) as csv rows after a header row onto b: the columns are the
 * keys of the record with the most members, then any others in the order
 * they first appear.  BPTT_OK; BPTT_EINVAL when a record is not a flat
 * object (*bad gets its index); BPTT_ENOMEM. */
int bptt_records_csv(char *const *rec, size_t n, bptt_strbuf *b,
                     size_t *bad);

/* ---- the records of a grid's points -------------------------------------- */

/* Onto b, the start every record of point k has: {"point":K,
 * "memory_spec":"<the point's budget as written>" (no closing brace). */
void bptt_record_start(bptt_strbuf *b, const bptt_grid *g, size_t k);
/* Point k's record in run mode from obj[0..n), the one-line JSON object
 * `bptt run --format json` printed (with its newline): BPTT_OK, or
 * BPTT_EINVAL when obj is not one object on one line. */
int bptt_record_run(bptt_strbuf *b, const bptt_grid *g, size_t k,
                    const char *obj, size_t n);
/* Point k's record in run mode when its run was infeasible: the point's
 * value of every axis given, and "error": message. */
void bptt_record_run_error(bptt_strbuf *b, const bptt_grid *g, size_t k,
                           const char *message);

/* ---- records read back ---------------------------------------------------- */

/* The bounds of a file of a sweep (FILE.partial, a part, a finished FILE)
 * read back: BPTT_RECORDS_HEADER_MAX for the header (8 MiB: the metadata
 * and the grid's description, which lists every value of every axis, at
 * most about 110,000 values of a few dozen bytes) and
 * BPTT_RECORDS_RECORD_MAX a point (32 KiB: a run record is about 2 KiB,
 * plus --task's path, at most PATH_MAX bytes and 6 bytes of JSON each at
 * worst).  More is not a file of this sweep. */
#define BPTT_RECORDS_HEADER_MAX ((size_t)8 << 20)
#define BPTT_RECORDS_RECORD_MAX ((size_t)32 << 10)
/* The most a whole file of g's sweep may hold. */
size_t bptt_records_file_cap(const bptt_grid *g);

/* Whether line[0..len) (no newline) is a record of g: one flat JSON
 * object, parsed whole, starting with "point" (a point of the grid; want,
 * unless want is SIZE_MAX) and "memory_spec" (that point's budget as
 * written), holding that point's value of every axis the mode writes
 * (strategy, length, alpha in plan mode; every axis given in run mode),
 * and the members the mode always writes (plan: memory, full_peak_slots,
 * min_memory, forward_ops, peak_slots; run: rss_peak_bytes, or error for
 * an infeasible point).  BPTT_OK with *point set; BPTT_EINVAL with
 * why[cap] saying what is wrong; BPTT_ENOMEM. */
int bptt_record_check(const bptt_grid *g, const char *line, size_t len,
                      size_t want, size_t *point, char *why, size_t cap);
/* line[0..len) (no newline) as point k's record in rec (with a newline):
 * BPTT_OK; BPTT_EINVAL if rec[k] holds a different record already;
 * BPTT_ENOMEM. */
int bptt_record_keep(char **rec, size_t k, const char *line, size_t len);
/* Whether text (a file whose header is of g) is whole: jsonl: every
 * point's record in order (each checked as above) and nothing more; csv:
 * the header row and one row a point, each starting with its point.
 * BPTT_OK; BPTT_EINVAL with why[cap] set; BPTT_ENOMEM.  *records gets how
 * many of the points' records it holds in order. */
int bptt_records_whole(const bptt_grid *g, const char *text, size_t len,
                       size_t *records, char *why, size_t cap);

#endif
