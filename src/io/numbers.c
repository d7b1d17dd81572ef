/* numbers.c: numbers as people write them, read the same in every locale
 * (see numbers.h). */
#define _GNU_SOURCE /* strtod_l */
#include <errno.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numbers.h"

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* The C locale's numbers, made once (glibc hands out its static C locale
 * object: no allocation); (locale_t)0 when it cannot be had. */
static locale_t c_numeric(void)
{
    static locale_t c;
    if (!c)
        c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    return c;
}

int bptt_parse_real(const char *text, double *out)
{
    /* digits with at most one point, then an optional exponent: e or E,
     * an optional sign, digits; nothing else (no hex, "inf", "nan", sign
     * or space) */
    const char *q = text;
    size_t mant = 0;
    while (is_digit(*q) || *q == '.')
        q++, mant++;
    double m;
    if (bptt_parse_decimal(text, mant, &m) != 0)
        return -1;
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-')
            q++;
        if (!is_digit(*q))
            return -1;
        while (is_digit(*q))
            q++;
    }
    if (*q || q - text > 60)
        return -1;
    const locale_t c = c_numeric();
    if (!c)
        return -1;
    errno = 0;
    const double v = strtod_l(text, NULL, c);
    if (errno == ERANGE || !(v == v) || v > 1.7e308)
        return -1;
    *out = v;
    return 0;
}

int bptt_parse_decimal(const char *text, size_t n, double *out)
{
    /* digits and at most one point, read here and not by strtod: strtod
     * follows LC_NUMERIC (a German locale wants "2,5") and reads hex,
     * exponents, "inf" and "nan" */
    uint64_t mant = 0;
    int digits = 0, points = 0, scale = 0, sig = 0, dropped = 0;
    for (size_t i = 0; i < n; i++) {
        const char c = text[i];
        if (c == '.') {
            if (++points > 1)
                return -1;
            continue;
        }
        if (!is_digit(c))
            return -1;
        digits++;
        if (sig == 0 && c == '0') { /* leading zeros count for nothing */
            scale += points;
            continue;
        }
        if (sig < 19) {
            mant = mant * 10 + (uint64_t)(c - '0');
            sig++;
            scale += points;
        } else if (!points) {
            dropped++; /* a whole digit beyond 19: the value * 10 */
        }
    }
    if (!digits)
        return -1;
    /* correctly rounded by strtod in the C locale, whatever the caller's */
    const locale_t c = c_numeric();
    if (c && n < 64) {
        char buf[64];
        memcpy(buf, text, n);
        buf[n] = '\0';
        *out = strtod_l(buf, NULL, c);
        return 0;
    }
    double v = (double)mant;
    for (; dropped > 0; dropped--)
        v *= 10;
    /* 10^k is exact in a double up to k = 22: one rounding then */
    double p = 1;
    for (int k = 0; k < scale; k++)
        p *= 10;
    *out = v / p;
    return 0;
}

const char *bptt_number_trouble(const char *text)
{
    if (!text)
        return NULL;
    for (const char *q = text; *q; q++) {
        if (*q == '0' && (q[1] == 'x' || q[1] == 'X'))
            return "hexadecimal is not read";
        if (*q == ',')
            return "a comma is no decimal point";
    }
    for (const char *q = text; *q; q++) {
        const char c = (char)(*q | 0x20);
        if ((c == 'i' && (q[1] | 0x20) == 'n' && (q[2] | 0x20) == 'f') ||
            (c == 'n' && (q[1] | 0x20) == 'a' && (q[2] | 0x20) == 'n'))
            return "infinity and NaN are not numbers here";
        if (c == 'e' && q > text && is_digit(q[-1]) &&
            (is_digit(q[1]) || q[1] == '-' || q[1] == '+'))
            return "exponents are not read";
    }
    /* a fraction past what a byte budget reads (trailing zeros aside) */
    const char *point = strchr(text, '.');
    if (point) {
        size_t fn = 0, last = 0;
        for (const char *q = point + 1; is_digit(*q); q++) {
            fn++;
            if (*q != '0')
                last = fn;
        }
        if (last > BPTT_NUMBER_MAX_DECIMALS)
            return "more than 19 decimals are not read";
    }
    return NULL;
}

int bptt_parse_whole(const char *text, size_t n, int64_t *out)
{
    if (n == 0 || n > 30)
        return -1;
    char buf[32];
    memcpy(buf, text, n);
    buf[n] = '\0';
    if (buf[0] == '+' || buf[0] == ' ' || buf[0] == '\t')
        return -1;
    char *end;
    errno = 0;
    const long long v = strtoll(buf, &end, 10);
    if (errno == ERANGE)
        return -2;
    if (*end != '\0' || end == buf)
        return -1;
    *out = (int64_t)v;
    return 0;
}

const char *bptt_real_text(char *buf, size_t cap, double v)
{
    /* printf's point follows LC_NUMERIC: the C locale's, for this thread,
     * while printing */
    const locale_t c = c_numeric();
    const locale_t was = c ? uselocale(c) : (locale_t)0;
    if (!(v >= 0) || v > 1.7e308) { /* NaN, negative, inf: as they are */
        snprintf(buf, cap, "%.17g", v);
    } else if (v < 9007199254740992.0 && v == (double)(int64_t)v) {
        snprintf(buf, cap, "%.0f", v);
    } else {
        for (int p = 1; p <= 17; p++) {
            snprintf(buf, cap, "%.*g", p, v);
            double back;
            if (bptt_parse_real(buf, &back) == 0 && back == v)
                break;
        }
    }
    if (c)
        uselocale(was);
    return buf;
}
