/* fields.h: one record as named values, written as JSON, csv or text: the
 * result of `bptt run` (and of any caller with a record to write).
 *
 * Promises: JSON is one object on one line, strings escaped (json.h),
 * numbers that are not finite as null, then the metadata's members; csv is
 * the metadata as one line "# {"meta":{...}}" (one JSON object after
 * "# ", as sweep files write it), a header row and a row, fields quoted as
 * RFC 4180 wants them (records.h); text is one "key value" line per field,
 * values as they are, then the kernels and build lines of the metadata.
 * Values are kept whole, whatever their length.  Library code: no output
 * but into the buffer.
 */
#ifndef BPTT_FIELDS_H
#define BPTT_FIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "meta.h"
#include "strbuf.h"

#define BPTT_FIELDS_MAX 96

typedef struct {
    const char *key;
    const char *str; /* a string value (not copied), or NULL: a number */
    char num[40];    /* the number as text: "%" PRId64 or "%.9g" */
    int finite;      /* numbers: 0 for NaN and infinity (JSON null) */
} bptt_field;

typedef struct {
    bptt_field f[BPTT_FIELDS_MAX];
    size_t n; /* fields past BPTT_FIELDS_MAX are dropped and counted in
                 lost, which a caller's test keeps at 0 */
    size_t lost;
} bptt_fields;

void bptt_fields_str(bptt_fields *fs, const char *key, const char *value);
void bptt_fields_int(bptt_fields *fs, const char *key, int64_t value);
void bptt_fields_real(bptt_fields *fs, const char *key, double value);

enum bptt_fields_format {
    BPTT_FIELDS_TEXT,
    BPTT_FIELDS_JSON,
    BPTT_FIELDS_CSV
};

/* The record in format, followed by meta's fields (meta may be NULL),
 * appended to out.  0, or -1 when an allocation failed (out->failed). */
int bptt_fields_write(const bptt_fields *fs, int format,
                      const bptt_meta *meta, bptt_strbuf *out);

#endif
