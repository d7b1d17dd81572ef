/* expt.h: small helpers shared by the experiment drivers and benchmarks
 * in experiments/ (not part of the library): a monotonic clock, medians,
 * and log-spaced lengths. */
#ifndef BPTT_EXPT_H
#define BPTT_EXPT_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numbers.h" /* bptt_parse_whole */

static inline double expt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int expt_cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static inline double expt_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, expt_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* text for a one-line message: control bytes and bytes past ASCII as
 * \xNN, '\' as "\\", cut with "..." to fit buf[cap] (cap >= 8) */
static inline void expt_escape(char *buf, size_t cap, const char *text)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        const int plain = *p >= 0x20 && *p < 0x7f && *p != '\\';
        const size_t need = plain ? 1 : *p == '\\' ? 2 : 4;
        if (k + need + 4 > cap) {
            memcpy(buf + k, "...", 4);
            return;
        }
        if (plain) {
            buf[k++] = (char)*p;
        } else if (*p == '\\') {
            buf[k++] = '\\';
            buf[k++] = '\\';
        } else {
            buf[k++] = '\\';
            buf[k++] = 'x';
            buf[k++] = hex[*p >> 4];
            buf[k++] = hex[*p & 15];
        }
    }
    buf[k] = 0;
}

/* Log-spaced lengths first..top, n per decade, rounded, distinct, top
 * last; at most max of them.  Returns how many. */
static inline size_t expt_log_lengths(size_t *len, size_t max, double first,
                                      size_t top, int n)
{
    size_t k = 0;
    for (int i = 0; k + 1 < max; i++) {
        const size_t v = (size_t)llround(first * pow(10.0, (double)i / n));
        if (v >= top)
            break;
        if (k == 0 || v != len[k - 1])
            len[k++] = v;
    }
    len[k++] = top;
    return k;
}

/* "a,b,c" -> up to max integers into v; returns how many. */
static inline int expt_parse_list(const char *text, int64_t *v, int max)
{
    int n = 0;
    char *copy = strdup(text), *save = NULL;
    if (!copy)
        return 0;
    for (char *tok = strtok_r(copy, ",", &save); tok && n < max;
         tok = strtok_r(NULL, ",", &save))
        v[n++] = strtoll(tok, NULL, 10);
    free(copy);
    return n;
}

/* "a,b,c": 1 to max whole numbers (bptt_parse_whole: no sign but '-',
 * no space, no empty item), each in [lo, hi], into v; returns how many,
 * or -1 when text is not such a list. */
static inline int expt_parse_sizes(const char *text, int64_t *v, int max,
                                   int64_t lo, int64_t hi)
{
    int n = 0;
    for (const char *p = text;; p++) {
        const size_t len = strcspn(p, ",");
        if (n == max || bptt_parse_whole(p, len, &v[n]) != 0 || v[n] < lo ||
            v[n] > hi)
            return -1;
        n++;
        p += len;
        if (!*p)
            return n;
    }
}

#endif
