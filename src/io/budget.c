/* budget.c: memory budgets as people write them (see budget.h). */
#define _GNU_SOURCE /* strtod_l */
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bptt.h"
#include "budget.h"
#include "numbers.h"
#include "why.h"

static int is_digit(char c) { return c >= '0' && c <= '9'; }

int bptt_threads_max(void) { return BPTT_THREADS_MAX; }

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
    if (fn > BPTT_NUMBER_MAX_DECIMALS)
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

/* The forms a budget may take here, for the end of a refusal. */
static const char *forms(const bptt_budget_sizes *z, int flags)
{
    if (!z->quantum)
        return "give slots, e.g. 200 or 200slots, or a share of full "
               "BPTT's memory, e.g. 5%";
    if (flags & BPTT_BUDGET_UNIT_REQUIRED)
        return "give bytes with a unit, e.g. 64MiB or 100000B, a share of "
               "full BPTT's checkpoint bytes, e.g. 5%, or slots, e.g. "
               "200slots";
    return "give slots, e.g. 200, bytes with a unit, e.g. 64MiB, or a "
           "share of full BPTT's memory, e.g. 5%";
}

/* Whether text is two or more budgets with commas between ("5%,10%",
 * "64MiB,128MiB"), where one is taken.  A comma between two digits is
 * taken for a decimal comma ("2,5%"), which bptt_number_trouble names. */
static int is_list(const char *text)
{
    const char *c = strchr(text, ',');
    if (!c)
        return 0;
    for (; c; c = strchr(c + 1, ','))
        if (c > text && is_digit(c[-1]) && is_digit(c[1]))
            return 0;
    char piece[64];
    for (const char *p = text;;) {
        const size_t n = strcspn(p, ",");
        if (n == 0 || n >= sizeof piece)
            return 0;
        memcpy(piece, p, n);
        piece[n] = '\0';
        bptt_budget b;
        if (bptt_budget_parse(piece, &b) != BPTT_OK)
            return 0;
        if (!p[n])
            return 1;
        p += n + 1;
    }
}

/* A budget whose text parsed as b (parse status prc), in units. */
static int resolve_units(const char *text, const bptt_budget_sizes *z,
                         int flags, const bptt_budget *b, int prc,
                         int64_t *units, char *why, size_t cap)
{
    const int64_t hi = BPTT_BUDGET_MAX_SLOTS, full = bptt_full_peak(
                                                  z->length, z->hidden_units,
                                                  z->internal_units);
    if (b->kind == BPTT_BUDGET_BYTES && !z->quantum)
        return bptt_why(
            BPTT_EINVAL, why, cap,
            "'%s' is in bytes, which needs the "
            "network's sizes (give --cell), or give slots (200) or a "
            "share (5%%)",
            text);
    if (prc == BPTT_EINVAL && is_list(text))
        return bptt_why(BPTT_EINVAL, why, cap,
                        "'%s' is a list of budgets; give "
                        "one budget, not a list (e.g. '%.*s')",
                        text, (int)strcspn(text, ","), text);
    if (prc == BPTT_EINVAL) {
        const char *trouble = bptt_number_trouble(text);
        if (trouble)
            return bptt_why(
                BPTT_EINVAL, why, cap,
                "'%s' is not a budget: %s "
                "(write numbers in decimal digits with a point, e.g. "
                "200, 2.5%% or 1.5MiB)",
                text, trouble);
        return bptt_why(BPTT_EINVAL, why, cap, "'%s' is not a budget (%s)",
                        text, forms(z, flags));
    }
    if (b->kind == BPTT_BUDGET_SLOTS && !*b->unit &&
        (flags & BPTT_BUDGET_UNIT_REQUIRED))
        return bptt_why(BPTT_EINVAL, why, cap,
                        "'%s' is not a budget: a bare "
                        "number could be slots or bytes (%s)",
                        text, forms(z, flags));
    if (b->kind == BPTT_BUDGET_BYTES) {
        if (prc == BPTT_ETOOBIG)
            return bptt_why(BPTT_ETOOBIG, why, cap,
                            "%s is out of range (give at "
                            "most %" PRId64 " bytes, e.g. 64MiB)",
                            text, (int64_t)BPTT_BUDGET_MAX_BYTES);
        *units = b->bytes / z->quantum;
        return BPTT_OK;
    }
    if (b->kind == BPTT_BUDGET_SLOTS) {
        if (prc == BPTT_ETOOBIG)
            return bptt_why(BPTT_ETOOBIG, why, cap,
                            "%s is out of range (give 0 "
                            "to %" PRId64 " slots)",
                            text, hi / z->hidden_units);
        const int rc = bptt_budget_units(b, z->hidden_units, 0, units);
        if (rc == BPTT_ETOOBIG)
            return bptt_why(rc, why, cap,
                            "%s is out of range (give at most "
                            "%" PRId64 " slots)",
                            text, hi / z->hidden_units);
        if (rc != BPTT_OK) { /* not a whole number of units */
            int64_t lo, up;
            bptt_budget_units_near(b, z->hidden_units, &lo, &up);
            char step[32], below[32], above[32], alpha[32];
            bptt_slots_text(step, sizeof step, 1, z->hidden_units);
            bptt_slots_text(below, sizeof below, lo, z->hidden_units);
            bptt_slots_text(above, sizeof above, up, z->hidden_units);
            bptt_slots_text(alpha, sizeof alpha, z->internal_units,
                            z->hidden_units);
            return bptt_why(
                rc, why, cap,
                "%s slots is not a budget at alpha %s, "
                "whose budgets go in steps of %s slot (give %s or %s)",
                text, alpha, step, below, above);
        }
        return BPTT_OK;
    }
    /* a share of full BPTT's peak */
    if (prc == BPTT_ETOOBIG)
        return bptt_why(BPTT_ETOOBIG, why, cap,
                        "%s is out of range (give a "
                        "percentage up to 1000000%%)",
                        text);
    if (full < 0)
        return bptt_why(BPTT_ETOOBIG, why, cap,
                        "%s is a share of full BPTT's "
                        "memory, which at this length and state size is more "
                        "than 2^63 units and cannot be planned (give slots)",
                        text);
    if (bptt_budget_units(b, z->hidden_units, full, units) != BPTT_OK) {
        /* the largest share that plans, rounded down to 6 decimals */
        const double most = floor((double)hi / (double)full * 1e8) / 1e6;
        return bptt_why(BPTT_ETOOBIG, why, cap,
                        "%s of full BPTT's memory (%" PRId64
                        " units) is more than the %" PRId64
                        " units a plan can "
                        "take (give at most %.6f%%, or slots)",
                        text, full, hi, most);
    }
    return BPTT_OK;
}

int bptt_budget_resolve(const char *text, const bptt_budget_sizes *z,
                        int flags, bptt_budget_resolved *out, char *why,
                        size_t cap)
{
    if (why && cap)
        why[0] = '\0';
    if (out)
        memset(out, 0, sizeof *out);
    if (!text || !z || !out || z->length < 1 || z->hidden_units < 1 ||
        z->internal_units < z->hidden_units || z->quantum < 0)
        return bptt_why(BPTT_EINVAL, why, cap,
                        "no budget, or no sizes to "
                        "resolve it against");
    const int prc = bptt_budget_parse(text, &out->given);
    int rc = resolve_units(text, z, flags, &out->given, prc, &out->units,
                           why, cap);
    if (rc != BPTT_OK)
        return rc;
    out->full_units =
        bptt_full_peak(z->length, z->hidden_units, z->internal_units);
    out->bytes = -1;
    if (z->quantum) {
        __int128 bytes = (__int128)out->units * z->quantum;
        if (out->given.kind == BPTT_BUDGET_BYTES)
            bytes = out->given.bytes; /* as written, not rounded to units */
        if (bytes > BPTT_BUDGET_MAX_BYTES)
            return bptt_why(BPTT_ETOOBIG, why, cap,
                            "%s comes to more than "
                            "%" PRId64
                            " bytes, the largest budget (give less)",
                            text, (int64_t)BPTT_BUDGET_MAX_BYTES);
        out->bytes = (int64_t)bytes;
    }
    out->held_units = out->units;
    if (out->full_units >= 0 &&
        out->full_units <= INT64_MAX - z->hidden_units &&
        out->full_units + z->hidden_units < out->units)
        out->held_units = out->full_units + z->hidden_units;
    out->held_bytes = -1;
    if (z->quantum) /* at most the budget's bytes, which fit */
        out->held_bytes = out->held_units < out->units
                              ? out->held_units * z->quantum
                              : out->bytes;
    return BPTT_OK;
}

int64_t bptt_phys_bytes(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (int64_t)pages * psize : INT64_MAX;
}

int bptt_memory_fits(double need, int share, double *have)
{
    const double room = (double)bptt_phys_bytes() / (share > 1 ? share : 1);
    if (have)
        *have = room;
    return need <= room ? BPTT_OK : BPTT_ETOOBIG; /* NaN: too big */
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
