/* json.c: strings as JSON string literals (see json.h). */
#define _POSIX_C_SOURCE 200809L /* strnlen */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "numbers.h"
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

/* ---- reading ------------------------------------------------------------ */

typedef struct {
    const char *s;
    size_t len, at;
    int depth, nomem;
} reader;

/* A growing decoded string; NULL buf: length counted only. */
typedef struct {
    char *buf;
    size_t n, cap;
    int nomem;
} text;

static void text_add(text *t, const char *s, size_t n)
{
    if (t->nomem)
        return;
    if (t->n + n + 1 > t->cap) {
        const size_t cap = 2 * (t->n + n + 1) + 16;
        char *q = realloc(t->buf, cap);
        if (!q) {
            t->nomem = 1;
            return;
        }
        t->buf = q;
        t->cap = cap;
    }
    memcpy(t->buf + t->n, s, n);
    t->n += n;
    t->buf[t->n] = '\0';
}

static void text_cp(text *t, unsigned cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp, n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | cp >> 6), u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | cp >> 12);
        u[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | cp >> 18);
        u[1] = (char)(0x80 | (cp >> 12 & 0x3F));
        u[2] = (char)(0x80 | (cp >> 6 & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    text_add(t, u, n);
}

static int hex4(const char *p, size_t left, unsigned *res)
{
    unsigned v = 0;
    if (left < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        const char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *res = v;
    return 0;
}

/* The string literal at s[0..len) (at its quote) into t; its length in s,
 * or 0 if it is not a whole valid literal. */
static size_t decode_string(const char *s, size_t len, text *t)
{
    size_t i = 1;
    if (len == 0 || s[0] != '"')
        return 0;
    text_add(t, "", 0);
    while (i < len && s[i] != '"') {
        const unsigned char c = (unsigned char)s[i];
        if (c < 0x20)
            return 0;
        if (c != '\\') {
            size_t j = i + 1;
            while (j < len && s[j] != '"' && s[j] != '\\' &&
                   (unsigned char)s[j] >= 0x20)
                j++;
            text_add(t, s + i, j - i);
            i = j;
            continue;
        }
        if (++i >= len)
            return 0;
        unsigned cp, lo;
        switch (s[i]) {
        case '"': text_add(t, "\"", 1); break;
        case '\\': text_add(t, "\\", 1); break;
        case '/': text_add(t, "/", 1); break;
        case 'n': text_add(t, "\n", 1); break;
        case 't': text_add(t, "\t", 1); break;
        case 'r': text_add(t, "\r", 1); break;
        case 'b': text_add(t, "\b", 1); break;
        case 'f': text_add(t, "\f", 1); break;
        case 'u':
            if (hex4(s + i + 1, len - i - 1, &cp) != 0)
                return 0;
            i += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && i + 2 < len &&
                s[i + 1] == '\\' && s[i + 2] == 'u' &&
                hex4(s + i + 3, len - i - 3, &lo) == 0 && lo >= 0xDC00 &&
                lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                i += 6;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD; /* a lone surrogate */
            }
            if (cp == 0) /* decoded strings are C strings */
                cp = 0xFFFD;
            text_cp(t, cp);
            break;
        default: return 0;
        }
        i++;
    }
    return i < len ? i + 1 : 0;
}

size_t bptt_json_read_string(const char *s, size_t len, char *buf,
                             size_t cap)
{
    text t = {0};
    const size_t n = decode_string(s, len, &t);
    if (cap > 0)
        buf[0] = '\0';
    if (n && !t.nomem && cap > 0) {
        const size_t k = t.n < cap ? t.n : cap - 1;
        memcpy(buf, t.buf, k);
        buf[k] = '\0';
    }
    free(t.buf);
    return t.nomem ? 0 : n;
}

static void skip_space(reader *r)
{
    while (r->at < r->len && (r->s[r->at] == ' ' || r->s[r->at] == '\t' ||
                              r->s[r->at] == '\n' || r->s[r->at] == '\r'))
        r->at++;
}

static void free_value(bptt_json *v)
{
    free(v->text);
    for (size_t i = 0; i < v->n; i++) {
        if (v->keys)
            free(v->keys[i]);
        if (v->items)
            free_value(&v->items[i]);
    }
    free(v->keys);
    free(v->items);
    memset(v, 0, sizeof *v);
}

void bptt_json_free(bptt_json *v)
{
    if (!v)
        return;
    free_value(v);
    free(v);
}

static int parse_value(reader *r, bptt_json *v);

static int parse_str(reader *r, char **res)
{
    text t = {0};
    const size_t n = decode_string(r->s + r->at, r->len - r->at, &t);
    if (!n || t.nomem) {
        free(t.buf);
        r->nomem |= t.nomem;
        return -1;
    }
    r->at += n;
    *res = t.buf;
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The value of t, a number of JSON's grammar (checked by parse_number),
 * the same in every locale: strtod would follow the caller's LC_NUMERIC
 * (a German locale reads "2.5" as 2), so the digits go through
 * bptt_parse_real (budget.h: strtod_l in the C locale).  That reader
 * takes at most 60 bytes and no sign: a longer number is first written
 * as 0.DDDDeE with its first 50 significant digits (more than a double
 * tells apart); beyond a double's range a number is +-HUGE_VAL, below
 * it 0, as strtod has them. */
static double number_value(const char *t)
{
    const int neg = t[0] == '-';
    const char *p = t + neg;
    double v;
    if (strlen(p) <= 60 && bptt_parse_real(p, &v) == 0)
        return neg ? -v : v;
    char d[51];
    size_t nd = 0;
    int64_t point = 0; /* the value is 0.d * 10^(point + exp) */
    int seen = 0, frac = 0;
    for (; is_digit(*p) || *p == '.'; p++) {
        if (*p == '.') {
            frac = 1;
            continue;
        }
        if (!seen && *p == '0') { /* a leading zero */
            point -= frac;
            continue;
        }
        seen = 1;
        point += !frac;
        if (nd < 50)
            d[nd++] = *p;
    }
    d[nd] = '\0';
    int64_t e = 0;
    if (*p == 'e' || *p == 'E') {
        p++;
        const int eneg = *p == '-';
        p += *p == '+' || *p == '-';
        for (; is_digit(*p); p++)
            if (e < 1000000000)
                e = 10 * e + (*p - '0');
        e = eneg ? -e : e;
    }
    while (nd > 0 && d[nd - 1] == '0')
        d[--nd] = '\0';
    if (nd == 0)
        return neg ? -0.0 : 0.0;
    const int64_t x = point + e;
    if (x > 400)
        return neg ? -HUGE_VAL : HUGE_VAL;
    if (x < -400)
        return neg ? -0.0 : 0.0;
    /* near the ends of a double's range, read scaled and scaled back
     * (the reader refuses an underflow, and values above 1.7e308) */
    const int low = x < -290, high = x > 300;
    char buf[64];
    snprintf(buf, sizeof buf, "0.%se%lld", d,
             (long long)(low ? x + 300 : high ? x - 10 : x));
    if (bptt_parse_real(buf, &v) != 0)
        v = x > 0 ? HUGE_VAL : 0.0;
    if (low)
        v *= 1e-300;
    if (high)
        v *= 1e10;
    return neg ? -v : v;
}

static int parse_number(reader *r, bptt_json *v)
{
    const char *s = r->s;
    size_t i = r->at;
    if (i < r->len && s[i] == '-')
        i++;
    if (i >= r->len || !is_digit(s[i]))
        return -1;
    if (s[i] == '0')
        i++;
    else
        while (i < r->len && is_digit(s[i]))
            i++;
    if (i < r->len && s[i] == '.') {
        if (++i >= r->len || !is_digit(s[i]))
            return -1;
        while (i < r->len && is_digit(s[i]))
            i++;
    }
    if (i < r->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < r->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= r->len || !is_digit(s[i]))
            return -1;
        while (i < r->len && is_digit(s[i]))
            i++;
    }
    const size_t n = i - r->at;
    v->text = malloc(n + 1);
    if (!v->text) {
        r->nomem = 1;
        return -1;
    }
    memcpy(v->text, s + r->at, n);
    v->text[n] = '\0';
    v->number = number_value(v->text);
    v->type = BPTT_JSON_NUMBER;
    r->at = i;
    return 0;
}

/* The items of an array or object after its opening bracket. */
static int parse_items(reader *r, bptt_json *v, int object)
{
    const char close = object ? '}' : ']';
    size_t cap = 0;
    v->type = object ? BPTT_JSON_OBJECT : BPTT_JSON_ARRAY;
    skip_space(r);
    if (r->at < r->len && r->s[r->at] == close) {
        r->at++;
        return 0;
    }
    for (;;) {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 8;
            bptt_json *items = realloc(v->items, cap * sizeof *items);
            if (items)
                v->items = items;
            char **keys = object ? realloc(v->keys, cap * sizeof *keys)
                                 : NULL;
            if (keys)
                v->keys = keys;
            if (!items || (object && !keys)) {
                r->nomem = 1;
                return -1;
            }
        }
        memset(&v->items[v->n], 0, sizeof v->items[v->n]);
        if (object)
            v->keys[v->n] = NULL;
        v->n++; /* counted now: freed whole on any error */
        skip_space(r);
        if (object) {
            if (r->at >= r->len || r->s[r->at] != '"' ||
                parse_str(r, &v->keys[v->n - 1]) != 0)
                return -1;
            /* a key given twice is refused (readers differ on which one
             * counts: Python's json keeps the last, a lookup the first);
             * the check is quadratic, so objects are held to
             * BPTT_JSON_MAX_KEYS members, far more than any we write */
            if (v->n > BPTT_JSON_MAX_KEYS)
                return -1;
            for (size_t k = 0; k + 1 < v->n; k++)
                if (strcmp(v->keys[k], v->keys[v->n - 1]) == 0)
                    return -1;
            skip_space(r);
            if (r->at >= r->len || r->s[r->at] != ':')
                return -1;
            r->at++;
        }
        if (parse_value(r, &v->items[v->n - 1]) != 0)
            return -1;
        skip_space(r);
        if (r->at < r->len && r->s[r->at] == ',') {
            r->at++;
            continue;
        }
        if (r->at < r->len && r->s[r->at] == close) {
            r->at++;
            return 0;
        }
        return -1;
    }
}

static int word(reader *r, const char *w)
{
    const size_t n = strlen(w);
    if (r->len - r->at < n || memcmp(r->s + r->at, w, n) != 0)
        return 0;
    r->at += n;
    return 1;
}

static int parse_value(reader *r, bptt_json *v)
{
    skip_space(r);
    if (r->at >= r->len)
        return -1;
    const char c = r->s[r->at];
    if (c == '{' || c == '[') {
        if (r->depth >= BPTT_JSON_MAX_DEPTH)
            return -1;
        r->depth++;
        r->at++;
        const int rc = parse_items(r, v, c == '{');
        r->depth--;
        return rc;
    }
    if (c == '"') {
        v->type = BPTT_JSON_STRING;
        return parse_str(r, &v->text);
    }
    if (c == '-' || is_digit(c))
        return parse_number(r, v);
    static const struct {
        const char *w;
        int type;
    } words[] = {{"true", BPTT_JSON_TRUE},
                 {"false", BPTT_JSON_FALSE},
                 {"null", BPTT_JSON_NULL}};
    for (size_t i = 0; i < 3; i++)
        if (word(r, words[i].w)) {
            v->type = words[i].type;
            if (v->type != BPTT_JSON_NULL) {
                v->text = malloc(strlen(words[i].w) + 1);
                if (!v->text) {
                    r->nomem = 1;
                    return -1;
                }
                strcpy(v->text, words[i].w);
            }
            return 0;
        }
    return -1;
}

int bptt_json_parse(const char *s, size_t len, bptt_json **res, size_t *end)
{
    *res = NULL;
    reader r = {s, s ? len : 0, 0, 0, 0};
    bptt_json *v = calloc(1, sizeof *v);
    if (!v)
        return BPTT_ENOMEM;
    int rc = parse_value(&r, v);
    if (rc == 0) {
        skip_space(&r);
        if (!end && r.at != r.len)
            rc = -1;
    }
    if (end)
        *end = r.at;
    if (rc != 0) {
        bptt_json_free(v);
        return r.nomem ? BPTT_ENOMEM : BPTT_EINVAL;
    }
    *res = v;
    return 0;
}

const bptt_json *bptt_json_get(const bptt_json *o, const char *key)
{
    if (!o || o->type != BPTT_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return &o->items[i];
    return NULL;
}
