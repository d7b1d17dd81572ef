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
