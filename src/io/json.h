/* json.h: strings as JSON string literals, for every JSON writer of bptt
 * (the metadata of meta.c, the records of `bptt run` and `bptt sweep`),
 * and the one JSON reader (records, sweep headers, plans given as JSON).
 *
 * Promises: the output is one valid JSON string literal (RFC 8259), quotes
 * included, whatever the bytes: '"' and '\' are escaped, control
 * characters (below 0x20) become \n, \t, \r, \b, \f or \u00XX, and a byte
 * that does not begin a valid UTF-8 sequence (a stray continuation byte,
 * an overlong form, a surrogate, a code point above U+10FFFF, a sequence
 * cut short) becomes \ufffd, one per byte; valid UTF-8 is copied as it is.
 * Nothing is cut: the return value is the whole length, and a buffer of
 * that length plus one holds it all.  Library code: no output, no
 * allocation.
 */
#ifndef BPTT_JSON_H
#define BPTT_JSON_H

#include <stddef.h>

/* The bytes of s up to its first NUL or its n-th byte, whichever comes
 * first (n = (size_t)-1: the whole C string), as a JSON string literal
 * into buf[cap], NUL-terminated, like snprintf: buf holds what fits (buf
 * may be NULL when cap is 0), and the return value is the length of the
 * whole literal, without the NUL.  Every byte of s takes at most 6 bytes
 * of output ("\ufffd", "\u001f"), so 6 n + 3 bytes always suffice. */
size_t bptt_json_string(char *buf, size_t cap, const char *s, size_t n);

/* ---- reading --------------------------------------------------------
 *
 * bptt_json_parse reads one JSON value (RFC 8259, strict: no comments, no
 * trailing commas, no bare words but true, false and null) into a tree
 * that the caller frees with bptt_json_free.  Strings are decoded to
 * UTF-8: every escape, surrogate pairs joined; a lone surrogate and
 * \u0000 become U+FFFD, so a decoded string is a C string holding all of
 * the value.  Raw control characters inside strings are refused, bytes
 * of 0x80 and up are copied as they are.  Numbers keep their text as
 * written (so that a writer can copy them whole) and its value as a
 * double.  Nesting deeper than BPTT_JSON_MAX_DEPTH is refused, so any
 * input, however hostile, takes bounded stack.  An object that gives a
 * key twice is refused (readers disagree on which one counts), and so is
 * one of more than BPTT_JSON_MAX_KEYS members (the check for a key given
 * twice is quadratic).  Library code: no output.
 *
 * A plan given as JSON actions, [{"op":"advance","step":1}, ...], reads
 * as an array of objects: bptt_json_get(item, "op")->text and
 * bptt_json_get(item, "step")->number. */

#define BPTT_JSON_MAX_DEPTH 64
#define BPTT_JSON_MAX_KEYS 4096

enum bptt_json_type {
    BPTT_JSON_NULL,
    BPTT_JSON_FALSE,
    BPTT_JSON_TRUE,
    BPTT_JSON_NUMBER,
    BPTT_JSON_STRING,
    BPTT_JSON_ARRAY,
    BPTT_JSON_OBJECT
};

typedef struct bptt_json bptt_json;
struct bptt_json {
    int type;        /* enum bptt_json_type */
    char *text;      /* STRING: decoded; NUMBER: as written; TRUE, FALSE:
                      * "true", "false"; NULL: NULL */
    double number;   /* NUMBER */
    size_t n;        /* ARRAY, OBJECT: items */
    char **keys;     /* OBJECT: the n keys, decoded, in input order */
    bptt_json *items; /* ARRAY, OBJECT: the n values */
};

/* One value from text[0..len) (it need not be NUL-terminated), white
 * space around it allowed.  *end (may be NULL) gets the offset after the
 * value and its trailing white space; with end NULL anything after that is
 * an error.  Returns BPTT_OK with *out set, BPTT_EINVAL (not JSON; *end
 * then holds the offset of the error) or BPTT_ENOMEM, with *out NULL. */
int bptt_json_parse(const char *text, size_t len, bptt_json **out,
                    size_t *end);
void bptt_json_free(bptt_json *v); /* accepts NULL */

/* The value of the first member named key of an object, or NULL (not an
 * object, or no such member). */
const bptt_json *bptt_json_get(const bptt_json *object, const char *key);

/* The JSON string literal at text[0..len) (starting at its quote) decoded
 * into buf[cap] as bptt_json_parse decodes strings, NUL-terminated and cut
 * to fit; returns the literal's length in text (quotes included), or 0 if
 * text does not start with a whole valid string literal. */
size_t bptt_json_read_string(const char *text, size_t len, char *buf,
                             size_t cap);

#endif
