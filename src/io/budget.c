/* budget.c: memory budgets as people write them (see budget.h). */
#define _GNU_SOURCE /* strtod_l */
#include <locale.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bptt.h"
#include "budget.h"

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
        if (last > BPTT_BUDGET_MAX_DECIMALS)
            return "more than 19 decimals are not read";
    }
    return NULL;
}

int bptt_threads_cap(void)
{
#ifdef _OPENMP
    const int n = omp_get_max_threads();
    if (n > BPTT_THREADS_MAX)
        omp_set_num_threads(BPTT_THREADS_MAX);
    return n;
#else
    return 1;
#endif
}

int bptt_threads_max(void) { return BPTT_THREADS_MAX; }

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

static int parse_percent(const char *text, size_t n, bptt_budget *b)
{
    char buf[32];
    if (n >= sizeof buf)
        return BPTT_EINVAL;
    memcpy(buf, text, n);
    buf[n] = '\0';
    /* decimal digits and one point only: no sign, space, exponent, hex,
     * "nan" or "inf" */
    int digits = 0, points = 0;
    for (const char *q = buf; *q; q++) {
        if (!is_digit(*q) && *q != '.')
            return BPTT_EINVAL;
        digits += is_digit(*q);
        points += *q == '.';
    }
    double p;
    if (!digits || points > 1 || bptt_parse_decimal(buf, n, &p) != 0)
        return BPTT_EINVAL;
    if (p > 1e6)
        return BPTT_ETOOBIG;
    b->percent = p;
    int64_t w;
    b->percent_whole = bptt_parse_whole(buf, n, &w) == 0 ? w : -1;
    return BPTT_OK;
}

static const struct {
    const char *suffix;
    int64_t mult;
} byte_units[] = {{"KiB", 1LL << 10}, {"MiB", 1LL << 20},
                  {"GiB", 1LL << 30}, {"TiB", 1LL << 40},
                  {"kB", 1000LL},     {"KB", 1000LL},
                  {"MB", 1000000LL},  {"GB", 1000000000LL},
                  {"B", 1}};

static int parse_bytes(const char *text, size_t n, int64_t mult,
                       bptt_budget *b)
{
    /* floor(value * mult) exactly: the whole and the fraction read as
     * integers (128 bits hold 2^61 * 2^60), never through a double */
    const char *point = memchr(text, '.', n);
    const size_t wn = point ? (size_t)(point - text) : n;
    size_t fn = point ? n - wn - 1 : 0;
    if (wn + fn == 0)
        return BPTT_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (!is_digit(text[i]) && text + i != point)
            return BPTT_EINVAL; /* a sign, a space, a second point, hex */
    unsigned __int128 whole = 0;
    int too_big = 0;
    for (size_t i = 0; i < wn && !too_big; i++) {
        whole = whole * 10 + (unsigned)(text[i] - '0');
        too_big = whole > BPTT_BUDGET_MAX_BYTES;
    }
    while (fn > 0 && point[fn] == '0') /* trailing zeros say nothing */
        fn--;
    if (fn > BPTT_BUDGET_MAX_DECIMALS)
        return BPTT_EINVAL; /* bptt_number_trouble says so */
    if (too_big)
        return BPTT_ETOOBIG;
    unsigned __int128 frac = 0, scale = 1;
    for (size_t i = 0; i < fn; i++) {
        frac = frac * 10 + (unsigned)(point[1 + i] - '0');
        scale *= 10;
    }
    const unsigned __int128 m = (unsigned __int128)mult;
    const unsigned __int128 bytes = whole * m + frac * m / scale;
    if (bytes > BPTT_BUDGET_MAX_BYTES)
        return BPTT_ETOOBIG;
    b->bytes = (int64_t)bytes;
    return BPTT_OK;
}

int bptt_budget_parse(const char *text, bptt_budget *b)
{
    memset(b, 0, sizeof *b);
    b->percent_whole = -1;
    b->unit = "";
    if (!text)
        return BPTT_EINVAL;
    const size_t n = strlen(text);
    if (n > 1 && text[n - 1] == '%') {
        b->kind = BPTT_BUDGET_PERCENT;
        b->unit = "%";
        return parse_percent(text, n - 1, b);
    }
    size_t k = 0;
    if (n > 5 && strcmp(text + n - 5, "slots") == 0) {
        k = 5;
        b->unit = "slots";
    } else {
        for (size_t u = 0; u < sizeof byte_units / sizeof *byte_units; u++) {
            const size_t m = strlen(byte_units[u].suffix);
            if (n > m && strcmp(text + n - m, byte_units[u].suffix) == 0) {
                b->kind = BPTT_BUDGET_BYTES;
                b->unit = byte_units[u].suffix;
                return parse_bytes(text, n - m, byte_units[u].mult, b);
            }
        }
    }
    b->kind = BPTT_BUDGET_SLOTS;
    b->slots_scale = 1;
    /* whole slots, or slots with up to 6 decimals ("174.5", as bptt plan
     * prints a budget at a fractional alpha) */
    const char *point = memchr(text, '.', n - k);
    int64_t v;
    if (point) {
        const size_t wn = (size_t)(point - text), fn = n - k - wn - 1;
        if (wn == 0 || fn == 0 || fn > 6)
            return BPTT_EINVAL;
        for (size_t i = 0; i < fn; i++)
            if (!is_digit(point[1 + i]))
                return BPTT_EINVAL;
        if (!is_digit(text[0]))
            return BPTT_EINVAL;
        const int rc = bptt_parse_whole(text, wn, &v);
        if (rc == -2 || (rc == 0 && v > BPTT_BUDGET_MAX_SLOTS / 1000000))
            return BPTT_ETOOBIG;
        if (rc != 0 || v < 0)
            return BPTT_EINVAL;
        int64_t frac = 0;
        for (size_t i = 0; i < fn; i++) {
            frac = frac * 10 + (point[1 + i] - '0');
            b->slots_scale *= 10;
        }
        b->slots = v;
        b->slots_scaled = v * b->slots_scale + frac;
        return BPTT_OK;
    }
    const int rc = bptt_parse_whole(text, n - k, &v);
    if (rc == -2 || (rc == 0 && (v < 0 || v > BPTT_BUDGET_MAX_SLOTS)))
        return BPTT_ETOOBIG;
    if (rc != 0)
        return BPTT_EINVAL;
    b->slots = v;
    b->slots_scaled = v;
    return BPTT_OK;
}

/* The share of full, rounded down: exact for whole percentages. */
static int share(const bptt_budget *b, int64_t full, int64_t *out)
{
    const int64_t hi = BPTT_BUDGET_MAX_SLOTS;
    if (full < 0) /* full BPTT's own size did not fit (bptt_full_peak) */
        return BPTT_ETOOBIG;
    if (b->percent_whole >= 0) {
        /* compared before the conversion, which would wrap */
        const __int128 w = (__int128)full * b->percent_whole / 100;
        if (w > hi)
            return BPTT_ETOOBIG;
        *out = (int64_t)w;
        return BPTT_OK;
    }
    const double units = (double)full * b->percent / 100.0;
    if (!(units <= (double)hi))
        return BPTT_ETOOBIG;
    const int64_t v = (int64_t)units;
    if (v > hi)
        return BPTT_ETOOBIG;
    *out = v;
    return BPTT_OK;
}

int bptt_budget_units(const bptt_budget *b, int64_t unit, int64_t full_units,
                      int64_t *out)
{
    if (unit < 1)
        return BPTT_EINVAL;
    switch (b->kind) {
    case BPTT_BUDGET_SLOTS: {
        const __int128 scaled = (__int128)b->slots_scaled * unit;
        if (scaled % b->slots_scale != 0)
            return BPTT_EINVAL; /* not a whole number of units */
        const __int128 units = scaled / b->slots_scale;
        if (units > BPTT_BUDGET_MAX_SLOTS)
            return BPTT_ETOOBIG;
        *out = (int64_t)units;
        return BPTT_OK;
    }
    case BPTT_BUDGET_PERCENT: return share(b, full_units, out);
    default: return BPTT_EINVAL;
    }
}

void bptt_budget_units_near(const bptt_budget *b, int64_t unit, int64_t *below,
                            int64_t *above)
{
    const __int128 scaled = (__int128)b->slots_scaled * (unit < 1 ? 1 : unit);
    const __int128 lo = scaled / b->slots_scale;
    *below = lo > BPTT_BUDGET_MAX_SLOTS ? BPTT_BUDGET_MAX_SLOTS : (int64_t)lo;
    *above = *below + (scaled % b->slots_scale != 0);
}

int bptt_budget_slots(const bptt_budget *b, int64_t full_slots, int64_t *out)
{
    return bptt_budget_units(b, 1, full_slots, out);
}

int bptt_budget_bytes(const bptt_budget *b, int64_t full_bytes,
                      int64_t slot_bytes, int64_t *out)
{
    switch (b->kind) {
    case BPTT_BUDGET_BYTES: *out = b->bytes; return BPTT_OK;
    case BPTT_BUDGET_PERCENT: return share(b, full_bytes, out);
    case BPTT_BUDGET_SLOTS: {
        if (!*b->unit || slot_bytes < 1)
            return BPTT_EINVAL;
        /* a fraction of a slot rounds down to whole bytes */
        const __int128 bytes =
            (__int128)b->slots_scaled * slot_bytes / b->slots_scale;
        if (bytes > BPTT_BUDGET_MAX_SLOTS)
            return BPTT_ETOOBIG;
        *out = (int64_t)bytes;
        return BPTT_OK;
    }
    default: return BPTT_EINVAL;
    }
}

const char *bptt_slots_text(char *buf, size_t cap, int64_t units,
                            int64_t unit)
{
    if (unit <= 1 || units % unit == 0) {
        snprintf(buf, cap, "%" PRId64, unit > 1 ? units / unit : units);
        return buf;
    }
    snprintf(buf, cap, "%.6f", (double)units / (double)unit);
    char *end = buf + strlen(buf) - 1;
    while (*end == '0')
        *end-- = '\0';
    return buf;
}

int64_t bptt_phys_bytes(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (int64_t)pages * psize : INT64_MAX;
}

const char *bptt_bytes_text(char *buf, size_t cap, double bytes)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB",
                                       "PiB", "EiB"};
    int u = 0;
    double v = bytes;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, cap, "%.0f bytes", v);
    else
        snprintf(buf, cap, "%.3g %s", v, unit[u]);
    return buf;
}
