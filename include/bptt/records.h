/* records.h: the records of a sweep file, one JSON object a line, each
 * starting with "point":K, and their csv form.
 *
 * Promises: bptt_records_csv writes RFC 4180 csv: a header row, then one
 * row per record; a field with a comma, quote, CR or LF, or starting with
 * a space or '#' (which a reader could take for a comment), is quoted,
 * quotes doubled; null is an empty field, a number is written as its JSON
 * text.  Library code: no output, no exit.
 */
#ifndef BPTT_RECORDS_H
#define BPTT_RECORDS_H

#include <stddef.h>
#include <stdint.h>

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

#endif
