/* json.c: strings as JSON string literals (see json.h). */
#define _POSIX_C_SOURCE 200809L /* strnlen */

#include <string.h>

#include "json.h"

/* snprintf-like output: len counts every byte, buf holds what fits. */
typedef struct {
    char *buf;
    size_t cap, len;
} out;

static void put(out *o, char c)
{
    if (o->len + 1 < o->cap)
        o->buf[o->len] = c;
    o->len++;
}

static void puts_(out *o, const char *s)
{
    while (*s)
        put(o, *s++);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    const unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlong forms */
        if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return len;
}

size_t bptt_json_string(char *buf, size_t cap, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    out o = {buf, buf ? cap : 0, 0};
    const unsigned char *p = (const unsigned char *)s;
    n = strnlen(s, n);
    put(&o, '"');
    for (size_t i = 0; i < n;) {
        const unsigned char c = p[i];
        size_t len = 1;
        if (c == '"' || c == '\\') {
            put(&o, '\\');
            put(&o, (char)c);
        } else if (c == '\n') {
            puts_(&o, "\\n");
        } else if (c == '\t') {
            puts_(&o, "\\t");
        } else if (c == '\r') {
            puts_(&o, "\\r");
        } else if (c == '\b') {
            puts_(&o, "\\b");
        } else if (c == '\f') {
            puts_(&o, "\\f");
        } else if (c < 0x20) {
            puts_(&o, "\\u00");
            put(&o, hex[c >> 4]);
            put(&o, hex[c & 0xF]);
        } else if ((len = utf8_len(p + i, n - i)) == 0) {
            puts_(&o, "\\ufffd");
            len = 1;
        } else {
            for (size_t j = 0; j < len; j++)
                put(&o, (char)p[i + j]);
        }
        i += len;
    }
    put(&o, '"');
    if (o.cap > 0)
        o.buf[o.len < o.cap ? o.len : o.cap - 1] = '\0';
    return o.len;
}
