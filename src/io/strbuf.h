/* strbuf.h: a growing, NUL-terminated string for the library's writers
 * (grids, records, csv) and their callers.
 *
 * Promises: after any call p is NULL or a NUL-terminated string of n
 * bytes; an allocation that fails sets `failed` and stops every later
 * addition (so a writer checks once, at the end), never printing or
 * exiting.  Zero-initialize a bptt_strbuf before use ({0}).
 */
#ifndef BPTT_STRBUF_H
#define BPTT_STRBUF_H

#include <stddef.h>

typedef struct {
    char *p;
    size_t n, cap;
    int failed; /* an allocation failed: the contents are incomplete */
} bptt_strbuf;

/* Each returns 0, or -1 once `failed` is set. */
int bptt_strbuf_add(bptt_strbuf *b, const char *s, size_t n);
int bptt_strbuf_puts(bptt_strbuf *b, const char *s);
int bptt_strbuf_printf(bptt_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* s (a C string) as a JSON string literal (bptt_json_string, json.h). */
int bptt_strbuf_json(bptt_strbuf *b, const char *s);
/* text[0..n) as one line of text that is safe on a terminal: valid UTF-8
 * is kept, but a control byte (newline, carriage return, escape, DEL, a C1
 * control) or a byte of invalid UTF-8 is shown escaped (\n, \t, \r,
 * \xHH), so that no value can add a line or send a terminal a control
 * sequence. */
int bptt_strbuf_escaped(bptt_strbuf *b, const char *text, size_t n);
/* The string (the caller frees it), "" when empty, or NULL when an
 * allocation failed; b is empty afterwards. */
char *bptt_strbuf_take(bptt_strbuf *b);
void bptt_strbuf_free(bptt_strbuf *b);

#endif
