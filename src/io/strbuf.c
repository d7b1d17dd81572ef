/* strbuf.c: a growing string (see strbuf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "strbuf.h"

/* Room for n more bytes and the NUL. */
static int reserve(bptt_strbuf *b, size_t n)
{
    if (b->failed)
        return -1;
    if (n > ((size_t)-1) / 4 - b->n) {
        b->failed = 1;
        return -1;
    }
    if (b->n + n + 1 <= b->cap)
        return 0;
    const size_t cap = 2 * (b->n + n + 1) + 64;
    char *q = realloc(b->p, cap);
    if (!q) {
        b->failed = 1;
        return -1;
    }
    b->p = q;
    b->cap = cap;
    return 0;
}

int bptt_strbuf_add(bptt_strbuf *b, const char *s, size_t n)
{
    if (reserve(b, n) != 0)
        return -1;
    if (n)
        memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
    return 0;
}

int bptt_strbuf_puts(bptt_strbuf *b, const char *s)
{
    return bptt_strbuf_add(b, s, strlen(s));
}

int bptt_strbuf_printf(bptt_strbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n) != 0) {
        b->failed = 1;
        return -1;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
    return 0;
}

int bptt_strbuf_json(bptt_strbuf *b, const char *s)
{
    const size_t n = bptt_json_string(NULL, 0, s, (size_t)-1);
    if (reserve(b, n) != 0)
        return -1;
    bptt_json_string(b->p + b->n, n + 1, s, (size_t)-1);
    b->n += n;
    return 0;
}

char *bptt_strbuf_take(bptt_strbuf *b)
{
    char *p = b->p;
    if (b->failed) {
        free(p);
        p = NULL;
    } else if (!p) {
        p = calloc(1, 1);
    }
    b->p = NULL;
    b->n = b->cap = 0;
    b->failed = 0;
    return p;
}

void bptt_strbuf_free(bptt_strbuf *b)
{
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    b->failed = 0;
}

/* The length of the valid UTF-8 sequence at s (n bytes left), 0 if none:
 * no overlong form, no surrogate, nothing above U+10FFFF. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t k;
    unsigned cp;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        k = 2, cp = s[0] & 0x1fu;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        k = 3, cp = s[0] & 0x0fu;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        k = 4, cp = s[0] & 0x07u;
    else
        return 0;
    if (n < k)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3fu);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    /* C1 controls (U+0080 to U+009F) are control codes to a terminal */
    if (cp >= 0x80 && cp <= 0x9f)
        return 0;
    return k;
}

int bptt_strbuf_escaped(bptt_strbuf *b, const char *text, size_t n)
{
    const unsigned char *s = (const unsigned char *)text;
    for (size_t i = 0; i < n;) {
        const unsigned char c = s[i];
        const size_t k = c >= 0x20 && c != 0x7f ? utf8_len(s + i, n - i) : 0;
        if (k > 0) {
            bptt_strbuf_add(b, (const char *)s + i, k);
            i += k;
            continue;
        }
        if (c == '\n')
            bptt_strbuf_puts(b, "\\n");
        else if (c == '\t')
            bptt_strbuf_puts(b, "\\t");
        else if (c == '\r')
            bptt_strbuf_puts(b, "\\r");
        else
            bptt_strbuf_printf(b, "\\x%02x", c);
        i++;
        /* a C1 control written as UTF-8: both of its bytes escaped */
        if (c == 0xc2 && i < n && s[i] >= 0x80 && s[i] <= 0x9f)
            bptt_strbuf_printf(b, "\\x%02x", s[i++]);
    }
    return b->failed ? -1 : 0;
}
