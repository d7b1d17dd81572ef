/* test_io.c: the library's input/output pieces that the commands share:
 * budgets (budget.h), the grid of a sweep (grid.h), the JSON reader
 * (json.h), records and csv (records.h), the growing string (strbuf.h),
 * and the planner facts the command line asks for (bptt.h: known costs,
 * strategy flags, the plan-size bound). */
#define _GNU_SOURCE /* mkdtemp, setenv */
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bptt.h"
#include "budget.h"
#include "numbers.h"
#include "grid.h"
#include "json.h"
#include "records.h"
#include "strbuf.h"
#include "team.h" /* bptt_threads_cap */
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- budgets -------------------------------------------------------------- */

static int64_t slots_of(const char *text, int64_t full, int *rc)
{
    bptt_budget b;
    int64_t v = -1;
    *rc = bptt_budget_parse(text, &b);
    if (*rc == BPTT_OK)
        *rc = bptt_budget_slots(&b, full, &v);
    return v;
}

static int64_t bytes_of(const char *text, int64_t full, int64_t slot,
                        int *rc)
{
    bptt_budget b;
    int64_t v = -1;
    *rc = bptt_budget_parse(text, &b);
    if (*rc == BPTT_OK)
        *rc = bptt_budget_bytes(&b, full, slot, &v);
    return v;
}

START_TEST(test_budget_forms)
{
    int rc;
    ck_assert_int_eq(slots_of("200", 1000, &rc), 200);
    ck_assert_int_eq(rc, BPTT_OK);
    ck_assert_int_eq(slots_of("200slots", 1000, &rc), 200);
    ck_assert_int_eq(slots_of("5%", 1000, &rc), 50);
    ck_assert_int_eq(slots_of("2.5%", 1000, &rc), 25);
    ck_assert_int_eq(slots_of("0%", 1000, &rc), 0);
    ck_assert_int_eq(slots_of("100%", 7, &rc), 7);
    ck_assert_int_eq(slots_of("33%", 10, &rc), 3); /* rounded down */
    ck_assert_int_eq(slots_of(".5%", 1000, &rc), 5);
    ck_assert_int_eq(bytes_of("64MiB", 0, 1, &rc), 64LL << 20);
    ck_assert_int_eq(rc, BPTT_OK);
    ck_assert_int_eq(bytes_of("100000B", 0, 1, &rc), 100000);
    ck_assert_int_eq(bytes_of("3GB", 0, 1, &rc), 3000000000LL);
    ck_assert_int_eq(bytes_of("1.5KiB", 0, 1, &rc), 1536);
    ck_assert_int_eq(bytes_of("2kB", 0, 1, &rc), 2000);
    ck_assert_int_eq(bytes_of("200slots", 0, 1024, &rc), 200 * 1024);
    ck_assert_int_eq(bytes_of("5%", 2000, 1, &rc), 100);

    bptt_budget b;
    ck_assert_int_eq(bptt_budget_parse("64MiB", &b), BPTT_OK);
    ck_assert_int_eq(b.kind, BPTT_BUDGET_BYTES);
    ck_assert_str_eq(b.unit, "MiB");
    ck_assert_int_eq(bptt_budget_parse("7", &b), BPTT_OK);
    ck_assert_int_eq(b.kind, BPTT_BUDGET_SLOTS);
    ck_assert_str_eq(b.unit, "");
    ck_assert_int_eq(bptt_budget_parse("7slots", &b), BPTT_OK);
    ck_assert_str_eq(b.unit, "slots");
    ck_assert_int_eq(bptt_budget_parse("7.5%", &b), BPTT_OK);
    ck_assert_int_eq(b.kind, BPTT_BUDGET_PERCENT);
    ck_assert_int_eq(b.percent_whole, -1);
}
END_TEST

START_TEST(test_budget_edges)
{
    static const char *const not_budgets[] = {
        "", "%", "slots", "lots", "x%", "-5%", "+5", " 5", "5 ", "nan%",
        "1e3%", "1.2.3%", "0x10%", "MiB", "nanMiB", "infMiB", "-1B", "+1B",
        "5TB", "5%%", "5 %", "12ab"};
    bptt_budget b;
    for (size_t i = 0; i < sizeof not_budgets / sizeof *not_budgets; i++)
        ck_assert_msg(bptt_budget_parse(not_budgets[i], &b) == BPTT_EINVAL,
                      "'%s' was taken for a budget", not_budgets[i]);
    static const char *const too_big[] = {
        "-3", "-3slots", "99999999999999999999", "99999999999999999999slots",
        "1000001%", "2305843009213693952", "5000000000GB",
        "99999999999999999999B"};
    for (size_t i = 0; i < sizeof too_big / sizeof *too_big; i++)
        ck_assert_msg(bptt_budget_parse(too_big[i], &b) == BPTT_ETOOBIG,
                      "'%s' was not out of range", too_big[i]);
    /* the largest slot count, and one more */
    char max[32];
    snprintf(max, sizeof max, "%lld", (long long)BPTT_BUDGET_MAX_SLOTS);
    ck_assert_int_eq(bptt_budget_parse(max, &b), BPTT_OK);
    int rc;
    /* a share never wraps: 1000000% of a huge full peak */
    slots_of("1000000%", INT64_MAX / 8, &rc);
    ck_assert_int_eq(rc, BPTT_ETOOBIG);
    slots_of("999999.5%", INT64_MAX / 8, &rc);
    ck_assert_int_eq(rc, BPTT_ETOOBIG);
    /* slots times their bytes never wraps either */
    bytes_of("1000000000000slots", 0, 1 << 30, &rc);
    ck_assert_int_eq(rc, BPTT_ETOOBIG);
    /* bytes are not slots; a bare number is not bytes */
    slots_of("64MiB", 100, &rc);
    ck_assert_int_eq(rc, BPTT_EINVAL);
    bytes_of("200", 100, 8, &rc);
    ck_assert_int_eq(rc, BPTT_EINVAL);
    ck_assert_int_eq(bptt_budget_parse(NULL, &b), BPTT_EINVAL);
    /* a full peak too big for 64 bits (bptt_full_peak's -1): no share of
     * it is a budget, not 0 slots */
    slots_of("5%", -1, &rc);
    ck_assert_int_eq(rc, BPTT_ETOOBIG);
}
END_TEST

/* Bytes are read exactly, as integers: the largest budget and one byte
 * more, fractions at the largest unit, nineteen decimals and no more. */
START_TEST(test_budget_bytes_exact)
{
    char text[64];
    int rc;
    snprintf(text, sizeof text, "%lldB", (long long)BPTT_BUDGET_MAX_BYTES);
    ck_assert_int_eq(bytes_of(text, 0, 1, &rc), BPTT_BUDGET_MAX_BYTES);
    ck_assert_int_eq(rc, BPTT_OK);
    snprintf(text, sizeof text, "%lldB",
             (long long)BPTT_BUDGET_MAX_BYTES + 1);
    bytes_of(text, 0, 1, &rc);
    ck_assert_int_eq(rc, BPTT_ETOOBIG);
    /* 2^61 - 1 = 2 EiB less a byte: 2048 PiB would be 2^61 */
    ck_assert_int_eq(bytes_of("2097151.9999999999999999999TiB", 0, 1, &rc),
                     BPTT_BUDGET_MAX_BYTES); /* 19 decimals, rounded down */
    ck_assert_int_eq(bytes_of("2097151.99999999999999999999TiB", 0, 1, &rc),
                     -1); /* 20 decimals: refused, said by trouble */
    ck_assert_int_eq(rc, BPTT_EINVAL);
    ck_assert_str_eq(bptt_number_trouble("2097151.99999999999999999999TiB"),
                     "more than 19 decimals are not read");
    ck_assert_ptr_null(bptt_number_trouble("2097151.9999999999999999999TiB"));
    bytes_of("2097152TiB", 0, 1, &rc); /* 2^61 */
    ck_assert_int_eq(rc, BPTT_ETOOBIG);
    ck_assert_int_eq(bytes_of("2097151.9999999999TiB", 0, 1, &rc),
                     (int64_t)2097151 * (1LL << 40) +
                         (int64_t)((unsigned __int128)9999999999 *
                                   (1ULL << 40) / 10000000000ULL));
    ck_assert_int_eq(rc, BPTT_OK);
    /* a double would round these; integers do not */
    ck_assert_int_eq(bytes_of("2305843009213693949B", 0, 1, &rc),
                     2305843009213693949LL);
    ck_assert_int_eq(bytes_of("0.1B", 0, 1, &rc), 0);
    ck_assert_int_eq(bytes_of("1.0000000000000000001KiB", 0, 1, &rc), 1024);
    ck_assert_int_eq(bytes_of("0.0009765625KiB", 0, 1, &rc), 1);
    ck_assert_int_eq(bytes_of("0.0009765624KiB", 0, 1, &rc), 0);
    /* trailing zeros are no decimals */
    ck_assert_int_eq(bytes_of("1.50000000000000000000000000MiB", 0, 1, &rc),
                     3 << 19);
    ck_assert_int_eq(rc, BPTT_OK);
}
END_TEST

/* bptt_budget_resolve, the one resolution: units, bytes, full, held, and
 * a refusal that says what is wrong, for every form and its limits. */
START_TEST(test_budget_resolve)
{
    /* alpha 3.5: a slot of 2 units, an internal state of 7, 16 bytes a
     * unit; length 10: full BPTT holds 9 internal states, 63 units */
    const bptt_budget_sizes z = {10, 2, 7, 16};
    bptt_budget_resolved r;
    char why[512];
    ck_assert_int_eq(bptt_budget_resolve("5slots", &z, 0, &r, why,
                                         sizeof why),
                     BPTT_OK);
    ck_assert_int_eq(r.units, 10);
    ck_assert_int_eq(r.bytes, 160);
    ck_assert_int_eq(r.full_units, 63);
    ck_assert_int_eq(r.held_units, 10);
    ck_assert_int_eq(r.held_bytes, 160);
    ck_assert_str_eq(why, "");
    /* a share rounds down to whole units; held stops at full + a slot */
    ck_assert_int_eq(bptt_budget_resolve("50%", &z, 0, &r, why, sizeof why),
                     BPTT_OK);
    ck_assert_int_eq(r.units, 31);
    ck_assert_int_eq(r.bytes, 31 * 16);
    ck_assert_int_eq(bptt_budget_resolve("1000%", &z, 0, &r, why, sizeof why),
                     BPTT_OK);
    ck_assert_int_eq(r.units, 630);
    ck_assert_int_eq(r.held_units, 63 + 2);
    ck_assert_int_eq(r.held_bytes, 65 * 16);
    /* bytes as written, units rounded down */
    ck_assert_int_eq(bptt_budget_resolve("100B", &z, 0, &r, why, sizeof why),
                     BPTT_OK);
    ck_assert_int_eq(r.bytes, 100);
    ck_assert_int_eq(r.units, 6);
    /* half slots are whole units at alpha 3.5; a third is not */
    ck_assert_int_eq(bptt_budget_resolve("2.5", &z, 0, &r, why, sizeof why),
                     BPTT_OK);
    ck_assert_int_eq(r.units, 5);
    ck_assert_int_eq(bptt_budget_resolve("2.3", &z, 0, &r, why, sizeof why),
                     BPTT_EINVAL);
    ck_assert_msg(strstr(why, "steps of 0.5 slot (give 2 or 2.5)"), "%s",
                  why);
    /* the refusals, each saying what would work */
    static const struct {
        const char *text;
        int flags, status;
        const char *says;
    } bad[] = {
        {"200", BPTT_BUDGET_UNIT_REQUIRED, BPTT_EINVAL, "slots or bytes"},
        {"5%,10%", 0, BPTT_EINVAL, "give one budget, not a list (e.g. '5%')"},
        {"2,5%", 0, BPTT_EINVAL, "a comma is no decimal point"},
        {"0x10KiB", 0, BPTT_EINVAL, "hexadecimal is not read"},
        {"lots", 0, BPTT_EINVAL, "'lots' is not a budget (give slots"},
        {"1000001%", 0, BPTT_ETOOBIG, "a percentage up to 1000000%"},
        {"2305843009213693952B", 0, BPTT_ETOOBIG,
         "give at most 2305843009213693951 bytes"},
        {"99999999999999999999", 0, BPTT_ETOOBIG, "is out of range"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        ck_assert_msg(bptt_budget_resolve(bad[i].text, &z, bad[i].flags, &r,
                                          why, sizeof why) == bad[i].status,
                      "%s: %s", bad[i].text, why);
        ck_assert_msg(strstr(why, bad[i].says), "%s: %s", bad[i].text, why);
    }
    /* without byte sizes a budget in bytes is refused, with its reason */
    const bptt_budget_sizes slots = {10, 1, 4, 0};
    ck_assert_int_eq(bptt_budget_resolve("64MiB", &slots, 0, &r, why,
                                         sizeof why),
                     BPTT_EINVAL);
    ck_assert_msg(strstr(why, "is in bytes"), "%s", why);
    ck_assert_int_eq(bptt_budget_resolve("7", &slots, 0, &r, NULL, 0),
                     BPTT_OK);
    ck_assert_int_eq(r.bytes, -1);
    ck_assert_int_eq(r.held_bytes, -1);
    /* a share of a full peak past 64 bits, and one past the largest */
    const bptt_budget_sizes huge = {(size_t)1 << 31, 1000000, 999999999999,
                                    0};
    ck_assert_int_eq(bptt_budget_resolve("5%", &huge, 0, &r, why, sizeof why),
                     BPTT_ETOOBIG);
    ck_assert_msg(strstr(why, "more than 2^63 units"), "%s", why);
    const bptt_budget_sizes big = {2147483646, 1, 1000000, 0};
    ck_assert_int_eq(bptt_budget_resolve("1000000%", &big, 0, &r, why,
                                         sizeof why),
                     BPTT_ETOOBIG);
    ck_assert_msg(strstr(why, "give at most 107374.182550%"), "%s", why);
    /* no text, no sizes */
    ck_assert_int_eq(bptt_budget_resolve(NULL, &z, 0, &r, NULL, 0),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_budget_resolve("5%", NULL, 0, &r, NULL, 0),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_budget_resolve("5%", &z, 0, NULL, NULL, 0),
                     BPTT_EINVAL);
}
END_TEST

/* ---- the grid ------------------------------------------------------------- */

static int grid_of(bptt_grid *g, const char *config, bptt_strbuf *err)
{
    memset(g, 0, sizeof *g);
    int rc = bptt_grid_config(g, "t.conf", config, strlen(config), NULL, err);
    if (rc == BPTT_OK)
        rc = bptt_grid_build(g, err);
    return rc;
}

START_TEST(test_grid_ranges)
{
    bptt_grid g;
    bptt_strbuf err = {0};
    ck_assert_int_eq(grid_of(&g, "length = 100:1000:300,7\n"
                                 "memory = 5%:20%:5 # shares\n"
                                 "strategy = hsm,msm\n", &err), BPTT_OK);
    const bptt_grid_axis *len = &g.ax[BPTT_GK_LENGTH];
    ck_assert_uint_eq(len->n, 5);
    ck_assert_int_eq(len->num[0], 100);
    ck_assert_int_eq(len->num[3], 1000);
    ck_assert_int_eq(len->num[4], 7);
    const bptt_grid_axis *mem = &g.ax[BPTT_GK_MEMORY];
    ck_assert_uint_eq(mem->n, 4);
    ck_assert_str_eq(mem->text[0], "5%");
    ck_assert_str_eq(mem->text[3], "20%");
    ck_assert_uint_eq(g.n_points, 2 * 5 * 4);
    ck_assert_str_eq(g.desc, "mode=plan; strategy=hsm,msm; "
                             "length=100,400,700,1000,7; alpha=1; "
                             "memory=5%,10%,15%,20%");
    ck_assert_uint_eq(strlen(g.hash), 16);
    /* the last axis fastest */
    size_t idx[BPTT_GRID_AXES];
    bptt_grid_decode(&g, 6, idx);
    ck_assert_str_eq(bptt_grid_value(&g, idx, BPTT_GK_STRATEGY), "hsm");
    ck_assert_str_eq(bptt_grid_value(&g, idx, BPTT_GK_LENGTH), "400");
    ck_assert_str_eq(bptt_grid_value(&g, idx, BPTT_GK_MEMORY), "15%");
    char *d = bptt_grid_point_text(&g, 39);
    ck_assert_str_eq(d, "point 39 of 40 (strategy=msm length=7 alpha=1 "
                        "memory=20%)");
    free(d);
    char *h = bptt_grid_header(&g);
    char other[17];
    ck_assert_int_eq(bptt_grid_header_matches(&g, h, other), 1);
    char was[200];
    ck_assert(bptt_grid_header_same_build(h, was, sizeof was));
    bptt_json *v;
    ck_assert_int_eq(bptt_json_parse(h, strlen(h), &v, NULL), BPTT_OK);
    const bptt_json *sw = bptt_json_get(bptt_json_get(v, "meta"), "sweep");
    ck_assert_str_eq(bptt_json_get(sw, "grid")->text, g.desc);
    ck_assert_str_eq(bptt_json_get(sw, "grid_hash")->text, g.hash);
    bptt_json_free(v);
    free(h);
    bptt_grid_free(&g);

    /* geometric, and budgets in bytes keep their unit */
    ck_assert_int_eq(grid_of(&g, "mode = run\nlength = 10:10000:*10\n"
                                 "memory = 1MiB:8MiB:*2\nhidden = 4\n",
                             &err), BPTT_OK);
    ck_assert_uint_eq(g.ax[BPTT_GK_LENGTH].n, 4);
    ck_assert_int_eq(g.ax[BPTT_GK_LENGTH].num[3], 10000);
    ck_assert_uint_eq(g.ax[BPTT_GK_MEMORY].n, 4);
    ck_assert_str_eq(g.ax[BPTT_GK_MEMORY].text[3], "8MiB");
    ck_assert(!g.csv);
    bptt_grid_free(&g);
    bptt_strbuf_free(&err);
}
END_TEST

START_TEST(test_grid_errors)
{
    static const struct {
        const char *config, *message;
    } bad[] = {
        {"length = 1:10:-2", "bad step"},
        {"length = 1:10:*1", "bad step"},
        {"length = 0:10:*2", "start at 1"},
        {"length = 10:1", "runs downwards"},
        {"length = 1:2:3:4", "not a range"},
        {"length = 5,", "empty value"},
        {"length = x", "not a whole number"},
        {"length = 0", "out of range"},
        {"length = 1:1000000", "more than 100000 values"},
        {"length = 10\nmemory = 1MiB:4%", "one unit"},
        {"length = 10\nmemory = 64MiB", "in bytes"},
        {"length = 10\nmemory = lots", "not a budget"},
        {"mode = run\nlength = 10\nmemory = 12", "has no unit"},
        {"length = 10\nhidden = 4,8", "does not apply in plan mode"},
        {"length = 10\nstrategy = magic", "unknown strategy 'magic'"},
        {"length = 10\nmode = walk", "unknown mode"},
        {"length = 10\nlr = -1", "not a number"},
        {"length = 10\ntask = text:/nonexistent/x", "cannot read"},
        {"memory = 5%", "--length is required"},
        {"length 10", "t.conf:1: 'length 10' is not 'key = value'"},
        {"colour = red", "t.conf:1: unknown key 'colour'"},
        {"length =", "has no value"},
        {"length = 1\n# c\nlength = 2", "t.conf:3: length is set twice "
                                        "(first on line 1)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bptt_grid g;
        bptt_strbuf err = {0};
        ck_assert_int_eq(grid_of(&g, bad[i].config, &err), BPTT_EINVAL);
        ck_assert_msg(err.p && strstr(err.p, bad[i].message),
                      "'%s': got '%s'", bad[i].config, err.p ? err.p : "");
        ck_assert(!strchr(err.p, '\n'));
        bptt_grid_free(&g);
        bptt_strbuf_free(&err);
    }
    const char *none = "# only\n\n  # comments\n", *one = "\n length = 1";
    ck_assert(!bptt_grid_config_has_settings(none, strlen(none)));
    ck_assert(bptt_grid_config_has_settings(one, strlen(one)));
    bptt_strbuf err = {0};
    ck_assert_int_eq(bptt_grid_check_config("c", "length = 5", 10, &err),
                     BPTT_OK);
    bptt_strbuf_free(&err);
}
END_TEST

START_TEST(test_grid_locked)
{
    /* the command line wins over the file */
    bptt_grid g;
    memset(&g, 0, sizeof g);
    int locked[BPTT_GRID_KEYS] = {0};
    ck_assert_int_eq(bptt_grid_set(&g, BPTT_GK_LENGTH, "9", "--length"),
                     BPTT_OK);
    locked[BPTT_GK_LENGTH] = 1;
    bptt_strbuf err = {0};
    const char *conf = "length = 5\nout = r.csv\n";
    ck_assert_int_eq(bptt_grid_config(&g, "f", conf, strlen(conf), locked,
                                      &err), BPTT_OK);
    ck_assert_int_eq(bptt_grid_build(&g, &err), BPTT_OK);
    ck_assert_int_eq(g.ax[BPTT_GK_LENGTH].num[0], 9);
    ck_assert(g.csv); /* by the extension of out */
    ck_assert_str_eq(g.label[BPTT_GK_OUT], "f:2: out");
    bptt_grid_free(&g);
    bptt_strbuf_free(&err);
}
END_TEST

/* ---- JSON ----------------------------------------------------------------- */

static bptt_json *parse(const char *s)
{
    bptt_json *v = NULL;
    const int rc = bptt_json_parse(s, strlen(s), &v, NULL);
    ck_assert_msg(rc == BPTT_OK, "'%s' did not parse", s);
    return v;
}

/* A key given twice is refused, at any depth, even with equal values;
 * keys that differ in a byte are not; an object of BPTT_JSON_MAX_KEYS
 * members parses, one more does not. */
START_TEST(test_json_duplicate_keys)
{
    static const char *twice[] = {
        "{\"a\":1,\"a\":2}", "{\"a\":1,\"b\":2,\"a\":1}",
        "[{\"x\":{\"k\":1,\"k\":1}}]", "{\"\\u0061\":1,\"a\":2}"};
    for (size_t k = 0; k < sizeof twice / sizeof *twice; k++) {
        bptt_json *v = NULL;
        ck_assert_msg(bptt_json_parse(twice[k], strlen(twice[k]), &v,
                                      NULL) == BPTT_EINVAL,
                      "'%s' parsed", twice[k]);
        ck_assert_ptr_null(v);
    }
    bptt_json_free(parse("{\"a\":1,\"A\":2,\"a \":3,\"b\":{\"a\":4}}"));
    char *big = malloc(16 * (BPTT_JSON_MAX_KEYS + 2));
    ck_assert_ptr_nonnull(big);
    for (int extra = 0; extra < 2; extra++) {
        size_t n = 0;
        big[n++] = '{';
        for (int k = 0; k < BPTT_JSON_MAX_KEYS + extra; k++)
            n += (size_t)sprintf(big + n, "%s\"k%d\":0", k ? "," : "", k);
        big[n++] = '}';
        bptt_json *v = NULL;
        ck_assert_int_eq(bptt_json_parse(big, n, &v, NULL),
                         extra ? BPTT_EINVAL : BPTT_OK);
        bptt_json_free(v);
    }
    free(big);
}
END_TEST

START_TEST(test_json_values)
{
    bptt_json *v = parse(" {\"a\":1,\"b\":[true,false,null,-2.5e3],"
                         "\"c\":{\"d\":\"x\"},\"e\":\"\"} ");
    ck_assert_int_eq(v->type, BPTT_JSON_OBJECT);
    ck_assert_uint_eq(v->n, 4);
    ck_assert_str_eq(bptt_json_get(v, "a")->text, "1");
    const bptt_json *b = bptt_json_get(v, "b");
    ck_assert_int_eq(b->type, BPTT_JSON_ARRAY);
    ck_assert_uint_eq(b->n, 4);
    ck_assert_int_eq(b->items[0].type, BPTT_JSON_TRUE);
    ck_assert_int_eq(b->items[1].type, BPTT_JSON_FALSE);
    ck_assert_int_eq(b->items[2].type, BPTT_JSON_NULL);
    ck_assert_ptr_null(b->items[2].text);
    ck_assert(b->items[3].number == -2500.0);
    ck_assert_str_eq(b->items[3].text, "-2.5e3");
    ck_assert_str_eq(bptt_json_get(bptt_json_get(v, "c"), "d")->text, "x");
    ck_assert_str_eq(bptt_json_get(v, "e")->text, "");
    ck_assert_ptr_null(bptt_json_get(v, "z"));
    ck_assert_ptr_null(bptt_json_get(b, "a"));
    bptt_json_free(v);

    /* a plan as JSON actions, as `bptt validate` will read it */
    v = parse("[{\"op\":\"advance\",\"step\":1},"
              "{\"op\":\"backward\",\"step\":1}]");
    ck_assert_uint_eq(v->n, 2);
    ck_assert_int_eq(bptt_op_parse(bptt_json_get(&v->items[1], "op")->text),
                     BPTT_BACKWARD);
    ck_assert(bptt_json_get(&v->items[0], "step")->number == 1);
    bptt_json_free(v);

    /* *end: one value of a longer text */
    size_t end = 0;
    ck_assert_int_eq(bptt_json_parse("[1] [2]", 7, &v, &end), BPTT_OK);
    ck_assert_uint_eq(end, 4);
    bptt_json_free(v);
    /* not NUL-terminated: len bounds the reading */
    ck_assert_int_eq(bptt_json_parse("123456", 3, &v, NULL), BPTT_OK);
    ck_assert_str_eq(v->text, "123");
    bptt_json_free(v);
}
END_TEST

START_TEST(test_json_escapes)
{
    bptt_json *v = parse("\"q\\\" b\\\\ s\\/ \\n\\t\\r\\b\\f \\u00e9 "
                         "\\ud83d\\ude00 \\u0000 \\ud800x \\udc00\"");
    ck_assert_str_eq(v->text, "q\" b\\ s/ \n\t\r\b\f \xc3\xa9 "
                              "\xf0\x9f\x98\x80 \xef\xbf\xbd "
                              "\xef\xbf\xbdx \xef\xbf\xbd");
    bptt_json_free(v);
    /* the writer's output reads back to the bytes it was given */
    const char *hostile = "a\"b\\c\n\x01\x1f\xc3\xa9";
    char lit[128];
    bptt_json_string(lit, sizeof lit, hostile, (size_t)-1);
    v = parse(lit);
    ck_assert_str_eq(v->text, hostile);
    bptt_json_free(v);
    /* bptt_json_read_string: a literal at the start of a longer text */
    char out[8];
    ck_assert_uint_eq(bptt_json_read_string("\"abc\\n\",x", 9, out,
                                            sizeof out), 7);
    ck_assert_str_eq(out, "abc\n");
    ck_assert_uint_eq(bptt_json_read_string("\"abcdefghijk\"", 13, out,
                                            sizeof out), 13);
    ck_assert_str_eq(out, "abcdefg"); /* cut to fit */
    ck_assert_uint_eq(bptt_json_read_string("\"abc", 4, out, sizeof out), 0);
    ck_assert_uint_eq(bptt_json_read_string("abc\"", 4, out, sizeof out), 0);
}
END_TEST

START_TEST(test_json_hostile)
{
    static const char *const bad[] = {
        "", " ", "{", "}", "[", "[1,]", "[,1]", "{\"a\"}", "{\"a\":}",
        "{\"a\":1,}", "{a:1}", "{'a':1}", "\"abc", "\"a\\x\"", "\"a\\u12\"",
        "\"a\\u12g4\"", "\"tab\there\"", "\"nl\nhere\"", "01", "1.", ".5",
        "-", "1e", "+1", "tru", "nul", "NaN", "Infinity", "[1] x", "1 2",
        "// c\n1", "[1]]", "{\"a\":1}}", "\"\\"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bptt_json *v = (bptt_json *)1;
        ck_assert_msg(bptt_json_parse(bad[i], strlen(bad[i]), &v, NULL) ==
                          BPTT_EINVAL,
                      "'%s' was taken for JSON", bad[i]);
        ck_assert_ptr_null(v);
    }
    /* nesting: the limit holds, one less passes */
    char deep[2 * BPTT_JSON_MAX_DEPTH + 8];
    for (int extra = 0; extra < 2; extra++) {
        const int n = BPTT_JSON_MAX_DEPTH + extra;
        for (int i = 0; i < n; i++)
            deep[i] = '[', deep[2 * n - 1 - i] = ']';
        bptt_json *v;
        ck_assert_int_eq(bptt_json_parse(deep, (size_t)(2 * n), &v, NULL),
                         extra ? BPTT_EINVAL : BPTT_OK);
        bptt_json_free(v);
    }
    /* a million unclosed brackets: refused, no stack overflow */
    const size_t big = 1000001; /* odd: '[', 0 ,0 ... ,0 ']' */
    char *many = malloc(big);
    ck_assert_ptr_nonnull(many);
    memset(many, '[', big);
    bptt_json *v;
    ck_assert_int_eq(bptt_json_parse(many, big, &v, NULL), BPTT_EINVAL);
    /* and a wide flat array is fine */
    for (size_t i = 0; i < big; i++)
        many[i] = i == 0 ? '[' : i == big - 1 ? ']' : i % 2 ? '0' : ',';
    ck_assert_int_eq(bptt_json_parse(many, big, &v, NULL), BPTT_OK);
    ck_assert_uint_eq(v->n, (big - 1) / 2);
    bptt_json_free(v);
    free(many);
    /* a NUL inside the text is not JSON */
    ck_assert_int_eq(bptt_json_parse("\"a\0b\"", 5, &v, NULL), BPTT_EINVAL);
    bptt_json_free(NULL);
}
END_TEST

/* ---- records and csv ------------------------------------------------------ */

START_TEST(test_csv_quoting)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "plain"},       {"a,b", "\"a,b\""},
        {"say \"hi\"", "\"say \"\"hi\"\"\""},
        {"two\nlines", "\"two\nlines\""}, {"cr\r", "\"cr\r\""},
        {" lead", "\" lead\""},   {"#hash", "\"#hash\""},
        {"in#side", "in#side"},   {"", ""},
        {"\"", "\"\"\"\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        bptt_strbuf b = {0};
        ck_assert_int_eq(bptt_csv_field(&b, cases[i].in), 0);
        ck_assert_str_eq(b.p ? b.p : "", cases[i].out);
        bptt_strbuf_free(&b);
    }
    bptt_strbuf b = {0};
    ck_assert_int_eq(bptt_csv_field(&b, NULL), 0);
    ck_assert_uint_eq(b.n, 0);
}
END_TEST

START_TEST(test_records_csv)
{
    char *rec[] = {
        "{\"point\":0,\"memory_spec\":\"5%\",\"x\":1.50}\n",
        "{\"point\":1,\"memory_spec\":\"a,\\\"b\\\"\",\"x\":null,"
        "\"err\":\"no\\nway\"}\n",
        "{\"point\":2,\"y\":true}\n",
    };
    bptt_strbuf b = {0};
    size_t bad = 99;
    ck_assert_int_eq(bptt_records_csv(rec, 3, &b, &bad), BPTT_OK);
    ck_assert_str_eq(b.p, "point,memory_spec,x,err,y\n"
                          "0,5%,1.50,,\n"
                          "1,\"a,\"\"b\"\"\",,\"no\nway\",\n"
                          "2,,,,true\n");
    bptt_strbuf_free(&b);
    char *nested[] = {"{\"point\":0}", "{\"point\":1,\"a\":[1]}"};
    ck_assert_int_eq(bptt_records_csv(nested, 2, &b, &bad), BPTT_EINVAL);
    ck_assert_uint_eq(bad, 1);
    bptt_strbuf_free(&b);
    char *broken[] = {"{\"point\":0,"};
    ck_assert_int_eq(bptt_records_csv(broken, 1, &b, &bad), BPTT_EINVAL);
    bptt_strbuf_free(&b);

    ck_assert_int_eq(bptt_record_point("{\"point\":12,\"a\":1}"), 12);
    ck_assert_int_eq(bptt_record_point("{\"point\":3}"), 3);
    ck_assert_int_eq(bptt_record_point("{\"point\":-1}"), -1);
    ck_assert_int_eq(bptt_record_point("{\"point\":1x}"), -1);
    ck_assert_int_eq(bptt_record_point("{\"pt\":1}"), -1);
    ck_assert_int_eq(bptt_record_point("{\"point\":99999999999999999999}"),
                     -1);
}
END_TEST

START_TEST(test_strbuf)
{
    bptt_strbuf b = {0};
    char *empty = bptt_strbuf_take(&b);
    ck_assert_str_eq(empty, "");
    free(empty);
    for (int i = 0; i < 1000; i++)
        bptt_strbuf_printf(&b, "%d,", i);
    bptt_strbuf_json(&b, "q\"");
    ck_assert(!b.failed);
    ck_assert_uint_eq(b.n, strlen(b.p));
    ck_assert(strstr(b.p, "999,\"q\\\"\""));
    bptt_strbuf_free(&b);
}
END_TEST

/* ---- planner facts the commands ask for ----------------------------------- */

START_TEST(test_strategy_facts)
{
    const bptt_strategy *full = bptt_strategy_find("full");
    const bptt_strategy *chen = bptt_strategy_find("chen");
    const bptt_strategy *hsm = bptt_strategy_find("hsm");
    const bptt_strategy *msm = bptt_strategy_find("msm");
    ck_assert_int_eq(bptt_strategy_known_cost(full, 100, 1, 1, 200), 100);
    ck_assert_int_eq(bptt_strategy_known_cost(chen, 100, 1, 1, 30),
                     bptt_chen_cost(100, bptt_chen_default_segment(100)));
    ck_assert_int_eq(bptt_strategy_known_cost(hsm, 10, 1, 1, 1), 55);
    ck_assert_int_eq(bptt_strategy_known_cost(hsm, 60, 1, 1, 4),
                     bptt_hsm_closed_cost(60, 4));
    ck_assert_int_eq(bptt_strategy_known_cost(msm, 100, 1, 1, 20), -1);
    ck_assert_int_eq(bptt_strategy_known_cost(NULL, 100, 1, 1, 20), -1);
    /* the known costs are the tables' */
    static const char *const names[] = {"full", "chen", "hsm"};
    for (size_t i = 0; i < 3; i++) {
        const bptt_strategy *st = bptt_strategy_find(names[i]);
        const size_t t = 40;
        const int64_t m = 41;
        bptt_table *tb;
        ck_assert_int_eq(bptt_table_alloc(&tb, st, t, 1, 1, m, NULL),
                         BPTT_OK);
        ck_assert_int_eq(bptt_table_cost(tb, m),
                         bptt_strategy_known_cost(st, t, 1, 1, m));
        bptt_table_free(tb);
    }
    ck_assert(chen->flags & BPTT_STRATEGY_SEGMENT);
    ck_assert(!(msm->flags & BPTT_STRATEGY_SEGMENT));
    ck_assert(full->flags & BPTT_STRATEGY_FIXED_COST);
    ck_assert(!(hsm->flags & BPTT_STRATEGY_FIXED_COST));
    char names_buf[64];
    bptt_strategy_names_with(names_buf, sizeof names_buf,
                             BPTT_STRATEGY_SEGMENT, " or ");
    ck_assert_str_eq(names_buf, "chen");
    ck_assert(bptt_plan_bytes_bound(10, 20) ==
              (4.0 * 20 + 10 + 3) * sizeof(bptt_action));
    /* the bound holds for a real plan */
    bptt_plan *p;
    bptt_plan_stats st;
    ck_assert_int_eq(bptt_plan_make("msm", 50, 1, 2, 12, NULL, &p, &st,
                                    NULL), BPTT_OK);
    ck_assert(p->n_actions * sizeof(bptt_action) <=
              bptt_plan_bytes_bound(50, st.forward_ops));
    bptt_plan_free(p);
}
END_TEST

/* Hex, hex floats, exponents, "inf" and "nan" are not decimal budgets
 * (strtod took "0x10KiB" as 16 KiB), and each says why in words. */
START_TEST(test_budget_decimal_only)
{
    static const char *const bad[] = {"0x10KiB", "0x1p10B", "0X10%",
                                      "1e3B",    "1e3%",    "infB",
                                      "nanMiB",  "inf%",    "nan%",
                                      "1,5MiB",  "-1B",     "+1B",
                                      " 1B",     "1.2.3B",  ".B"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        bptt_budget b;
        ck_assert_msg(bptt_budget_parse(bad[i], &b) == BPTT_EINVAL,
                      "'%s' was taken as a budget", bad[i]);
    }
    ck_assert_str_eq(bptt_number_trouble("0x10KiB"), "hexadecimal is not read");
    ck_assert_str_eq(bptt_number_trouble("0x1p10B"), "hexadecimal is not read");
    ck_assert_str_eq(bptt_number_trouble("1,5MiB"),
                     "a comma is no decimal point");
    ck_assert_str_eq(bptt_number_trouble("inf%"),
                     "infinity and NaN are not numbers here");
    ck_assert_str_eq(bptt_number_trouble("1e3B"), "exponents are not read");
    ck_assert(bptt_number_trouble("64MiB") == NULL);
    ck_assert(bptt_number_trouble("abc") == NULL);
    double v;
    ck_assert_int_eq(bptt_parse_decimal("2.5", 3, &v), 0);
    ck_assert(v == 2.5);
    ck_assert_int_eq(bptt_parse_decimal("0.05", 4, &v), 0);
    ck_assert(v == 0.05);
    ck_assert_int_eq(bptt_parse_decimal("3.", 2, &v), 0);
    ck_assert(v == 3);
    ck_assert_int_eq(bptt_parse_decimal("007", 3, &v), 0);
    ck_assert(v == 7);
    ck_assert_int_eq(bptt_parse_decimal("12345678901234567890123", 23, &v), 0);
    ck_assert(fabs(v - 12345678901234567890123.0) < 1e8);
    ck_assert_int_eq(bptt_parse_decimal("0x10", 4, &v), -1);
    ck_assert_int_eq(bptt_parse_decimal("", 0, &v), -1);
    ck_assert_int_eq(bptt_parse_decimal(".", 1, &v), -1);
}
END_TEST

/* A comma-decimal locale set by the caller (LC_NUMERIC, as a German
 * desktop has it), from the system or built with localedef into dir (a
 * temporary LOCPATH; *made set when dir was made): 1 when one is in
 * force, else 0 with the case's SKIP line printed by name. */
static int comma_locale(const char *name, char *dir, int *made)
{
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE",
                                        "fr_FR.UTF-8", "fr_FR.utf8"};
    const char *got = NULL;
    *made = 0;
    for (size_t i = 0; i < sizeof names / sizeof *names && !got; i++)
        got = setlocale(LC_NUMERIC, names[i]);
    if (!got && mkdtemp(dir)) {
        *made = 1;
        char cmd[256];
        snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 "
                 ">/dev/null 2>&1", dir);
        if (system(cmd) == 0 && setenv("LOCPATH", dir, 1) == 0)
            got = setlocale(LC_NUMERIC, "de_DE.UTF-8");
    }
    if (got && strcmp(localeconv()->decimal_point, ",") == 0)
        return 1;
    printf("SKIP: test_io %s: no comma-decimal locale here (none installed, "
           "and localedef could not build de_DE)\n", name);
    return 0;
}

static void comma_locale_end(const char *dir, int made)
{
    setlocale(LC_NUMERIC, "C");
    if (made) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ck_assert_int_eq(system(cmd), 0);
    }
}

/* Under a comma-decimal locale, "2.5%" and "1.5MiB" are read as in the C
 * locale. */
START_TEST(test_budget_locale)
{
    char dir[] = "/tmp/bptt-locale-XXXXXX";
    int made;
    if (comma_locale("budget_locale", dir, &made)) {
        /* the locale is in force: strtod reads a comma now */
        ck_assert(strtod("2,5", NULL) == 2.5);
        int rc;
        ck_assert_int_eq(slots_of("2.5%", 1000, &rc), 25);
        ck_assert_int_eq(rc, BPTT_OK);
        ck_assert_int_eq(bytes_of("1.5MiB", 0, 1, &rc), 3 << 19);
        ck_assert_int_eq(rc, BPTT_OK);
        ck_assert_int_eq(bytes_of("1.5KiB", 0, 1, &rc), 1536);
        ck_assert_int_eq(slots_of("174.5", 1000, &rc), -1); /* not whole */
        bptt_budget b;
        ck_assert_int_eq(bptt_budget_parse("2,5%", &b), BPTT_EINVAL);
        ck_assert_int_eq(bptt_budget_parse("1,5MiB", &b), BPTT_EINVAL);
    }
    comma_locale_end(dir, made);
}
END_TEST

/* The value of the JSON number text, parsed whole. */
static double json_number(const char *text)
{
    bptt_json *v = NULL;
    ck_assert_int_eq(bptt_json_parse(text, strlen(text), &v, NULL), BPTT_OK);
    ck_assert_int_eq(v->type, BPTT_JSON_NUMBER);
    ck_assert_str_eq(v->text, text); /* the text kept as written */
    const double x = v->number;
    bptt_json_free(v);
    return x;
}

/* JSON numbers mean the same in every locale (a record's "2.5" is not 2
 * under LC_NUMERIC=de_DE), however long or far out of range. */
static void json_numbers_check(void)
{
    ck_assert(json_number("2.5") == 2.5);
    ck_assert(json_number("-0.125") == -0.125);
    ck_assert(json_number("1.5e3") == 1500.0);
    ck_assert(json_number("25E-1") == 2.5);
    ck_assert(json_number("0") == 0.0);
    ck_assert(json_number("-0") == 0.0 && signbit(json_number("-0")));
    ck_assert(json_number("123456789012345678") == 123456789012345678.0);
    ck_assert(json_number("1.7976931348623157e308") == 1.7976931348623157e308);
    ck_assert(json_number("1.75e308") == 1.75e308);
    ck_assert(json_number("5e-324") == 5e-324);
    ck_assert(json_number("2.2250738585072014e-308") ==
              2.2250738585072014e-308);
    ck_assert(isinf(json_number("1e400")) && json_number("1e400") > 0);
    ck_assert(isinf(json_number("-1e99999999999999999999")));
    ck_assert(json_number("1e-400") == 0.0);
    ck_assert(json_number("1e30") == 1e30);
    /* longer than 60 bytes: 2.5 with 70 zeros after it, and written with
     * 70 leading zeros as 0.000...25e71 */
    char t[200];
    snprintf(t, sizeof t, "2.5%070d", 0);
    ck_assert(json_number(t) == 2.5);
    snprintf(t, sizeof t, "0.%070d25e71", 0);
    ck_assert(json_number(t) == 2.5);
    snprintf(t, sizeof t, "-1.5%080d", 0);
    ck_assert(json_number(t) == -1.5);
    /* in a record, a member's value */
    bptt_json *r = NULL;
    const char *rec = "{\"a\":2.5,\"b\":[0.5,1e-1]}";
    ck_assert_int_eq(bptt_json_parse(rec, strlen(rec), &r, NULL), BPTT_OK);
    ck_assert(bptt_json_get(r, "a")->number == 2.5);
    ck_assert(bptt_json_get(r, "b")->items[0].number == 0.5);
    ck_assert(bptt_json_get(r, "b")->items[1].number == 0.1);
    bptt_json_free(r);
}

START_TEST(test_json_numbers)
{
    json_numbers_check();
}
END_TEST

START_TEST(test_json_locale)
{
    char dir[] = "/tmp/bptt-locale-XXXXXX";
    int made;
    if (comma_locale("json_locale", dir, &made)) {
        ck_assert(strtod("2.5", NULL) == 2.0); /* the locale is in force */
        json_numbers_check();
    }
    comma_locale_end(dir, made);
}
END_TEST

/* OMP_NUM_THREADS=100000 (libgomp takes it) would end the process: the
 * count is capped at BPTT_THREADS_MAX, and what was asked is returned. */
START_TEST(test_threads_cap)
{
#ifdef _OPENMP
    omp_set_num_threads(100000);
    ck_assert_int_eq(bptt_threads_cap(), 100000);
    ck_assert_int_eq(omp_get_max_threads(), BPTT_THREADS_MAX);
    omp_set_num_threads(3);
    ck_assert_int_eq(bptt_threads_cap(), 3);
    ck_assert_int_eq(omp_get_max_threads(), 3);
#else
    ck_assert_int_eq(bptt_threads_cap(), 1);
#endif
}
END_TEST

/* The planner's own threads: OMP_NUM_THREADS's first number, capped at
 * BPTT_THREADS_MAX (what it asked said), else the CPUs online. */
START_TEST(test_planner_threads)
{
    const char *was = getenv("OMP_NUM_THREADS");
    char keep[64] = "";
    if (was)
        snprintf(keep, sizeof keep, "%s", was);
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int asked = -1;
    setenv("OMP_NUM_THREADS", "100000", 1);
    ck_assert_int_eq(bptt_planner_threads(&asked), BPTT_THREADS_MAX);
    ck_assert_int_eq(asked, 100000);
    setenv("OMP_NUM_THREADS", "3,2", 1);
    ck_assert_int_eq(bptt_planner_threads(&asked), 3);
    ck_assert_int_eq(asked, 3);
    setenv("OMP_NUM_THREADS", "99999999999999999999", 1);
    ck_assert_int_eq(bptt_planner_threads(&asked), BPTT_THREADS_MAX);
    ck_assert_int_gt(asked, BPTT_THREADS_MAX);
    static const char *const junk[] = {"abc", "", "-4", "0", "4x", " 4"};
    for (size_t i = 0; i < sizeof junk / sizeof *junk; i++) {
        setenv("OMP_NUM_THREADS", junk[i], 1);
        ck_assert_int_eq(bptt_planner_threads(&asked),
                         cpus < 1 ? 1
                         : cpus > BPTT_THREADS_MAX ? BPTT_THREADS_MAX
                                                   : (int)cpus);
        ck_assert_int_eq(asked, 0);
    }
    unsetenv("OMP_NUM_THREADS");
    ck_assert_int_ge(bptt_planner_threads(NULL), 1);
    if (was)
        setenv("OMP_NUM_THREADS", keep, 1);
}
END_TEST

static Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    struct {
        const char *name;
        const TTest *tests[6];
    } cases[] = {
        {"budget", {test_budget_forms, test_budget_edges,
                    test_budget_bytes_exact, test_budget_resolve,
                    test_budget_decimal_only, test_budget_locale}},
        {"threads", {test_threads_cap, test_planner_threads}},
        {"grid", {test_grid_ranges, test_grid_errors, test_grid_locked}},
        {"json", {test_json_values, test_json_escapes, test_json_hostile,
                  test_json_duplicate_keys}},
        {"json_numbers", {test_json_numbers, test_json_locale}},
        {"records", {test_csv_quoting, test_records_csv, test_strbuf}},
        {"strategy", {test_strategy_facts}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_set_timeout(tc, 60); /* under the sanitizers, on a busy
                                      machine */
        for (size_t j = 0; j < sizeof cases[i].tests / sizeof
                                   *cases[i].tests && cases[i].tests[j];
             j++)
            tcase_add_test(tc, cases[i].tests[j]);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(io_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
