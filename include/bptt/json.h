/* json.h: strings as JSON string literals, for every JSON writer of bptt
 * (the metadata of meta.c, the records of `bptt run` and `bptt sweep`).
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

#endif
