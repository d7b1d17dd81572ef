/* grid_points.c: a built grid's points (decoded from their index, as
 * values, as text, as a plan), its identity (the header line that opens
 * its files, the checks of a header read back) and the command that runs
 * it again (see grid.h). */
#define _XOPEN_SOURCE 700
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bptt.h"
#include "budget.h"
#include "numbers.h"
#include "grid.h"
#include "json.h"
#include "meta.h"

/* ---- points ------------------------------------------------------------- */

void bptt_grid_decode(const bptt_grid *g, size_t k,
                      size_t idx[BPTT_GRID_AXES])
{
    for (int a = BPTT_GRID_AXES - 1; a >= 0; a--) {
        idx[a] = 0;
        if (g->applies[a] && g->ax[a].n) {
            idx[a] = k % g->ax[a].n;
            k /= g->ax[a].n;
        }
    }
}

const char *bptt_grid_value(const bptt_grid *g, const size_t *idx, int a)
{
    return g->ax[a].n ? g->ax[a].text[idx[a]] : NULL;
}

char *bptt_grid_point_text(const bptt_grid *g, size_t k)
{
    size_t idx[BPTT_GRID_AXES];
    bptt_grid_decode(g, k, idx);
    bptt_strbuf b = {0};
    bptt_strbuf_printf(&b, "point %zu of %zu (", k, g->n_points);
    int first = 1;
    for (int a = 0; a < BPTT_GRID_AXES; a++)
        if (g->applies[a] && g->ax[a].n) {
            bptt_strbuf_printf(&b, "%s%s=%s", first ? "" : " ",
                               bptt_grid_keys[a].name,
                               bptt_grid_value(g, idx, a));
            first = 0;
        }
    bptt_strbuf_puts(&b, ")");
    return bptt_strbuf_take(&b);
}

/* ---- the header line ---------------------------------------------------- */

char *bptt_grid_header(const bptt_grid *g)
{
    bptt_meta m;
    bptt_meta_collect(&m);
    /* reproducible dates (https://reproducible-builds.org/specs/) */
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    int64_t secs;
    if (epoch && bptt_parse_whole(epoch, strlen(epoch), &secs) == 0 && secs >= 0) {
        const time_t t = (time_t)secs;
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(m.date, sizeof m.date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    char meta[BPTT_META_JSON_MAX];
    bptt_meta_json(&m, meta, sizeof meta);
    bptt_strbuf b = {0};
    bptt_strbuf_printf(&b, "{\"meta\":{%s,\"sweep\":{\"mode\":\"%s\","
                       "\"points\":%zu,\"axes\":\"", meta,
                       bptt_grid_mode_name(g->mode), g->n_points);
    int first = 1;
    for (int k = 0; k < BPTT_GRID_AXES; k++)
        if (g->applies[k]) {
            bptt_strbuf_printf(&b, "%s%s", first ? "" : ",",
                               bptt_grid_keys[k].name);
            first = 0;
        }
    bptt_strbuf_puts(&b, "\",\"grid\":");
    bptt_strbuf_json(&b, g->desc);
    bptt_strbuf_printf(&b, ",\"grid_hash\":\"%s\"}}}\n", g->hash);
    return bptt_strbuf_take(&b);
}

int bptt_grid_header_matches(const bptt_grid *g, const char *line,
                             char other_hash[17])
{
    if (strncmp(line, "# ", 2) == 0)
        line += 2;
    if (strncmp(line, "{\"meta\":{", 9) != 0)
        return -1;
    const char *nl = strchr(line, '\n');
    const size_t len = nl ? (size_t)(nl - line) : strlen(line);
    const char *h = strstr(line, "\"grid_hash\":\"");
    if (!h || h > line + len)
        return -1;
    snprintf(other_hash, 17, "%.16s", h + 13);
    bptt_strbuf want = {0};
    bptt_strbuf_puts(&want, "\"grid\":");
    bptt_strbuf_json(&want, g->desc);
    bptt_strbuf_puts(&want, ",");
    const char *at = want.failed ? NULL : strstr(line, want.p);
    const int ok = at && at + want.n <= line + len;
    bptt_strbuf_free(&want);
    return ok;
}

/* The value of "key":"..." in a header line, decoded ("" if absent or not
 * a whole JSON string; cut to cap). */
static void header_string(const char *line, const char *key, char *out,
                          size_t cap)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":\"", key);
    const char *p = strstr(line, k);
    out[0] = '\0';
    if (p) {
        p += strlen(k) - 1; /* at the value's opening quote */
        bptt_json_read_string(p, strlen(p), out, cap);
    }
}

int bptt_grid_header_same_build(const char *line, char *was, size_t cap)
{
    bptt_meta m;
    bptt_meta_collect(&m);
    char v[64], g[128];
    header_string(line, "version", v, sizeof v);
    header_string(line, "git_revision", g, sizeof g);
    snprintf(was, cap, "%s (git %s)", v, g);
    return strcmp(v, m.version) == 0 && strcmp(g, m.git_revision) == 0;
}

/* ---- a plan point, and the command of a grid ----------------------------- */

int bptt_grid_plan_point(const bptt_grid *g, size_t k, bptt_grid_plan *p)
{
    size_t idx[BPTT_GRID_AXES];
    bptt_grid_decode(g, k, idx);
    p->strategy = bptt_strategy_find(bptt_grid_value(g, idx,
                                                     BPTT_GK_STRATEGY));
    p->length = (size_t)g->ax[BPTT_GK_LENGTH].num[idx[BPTT_GK_LENGTH]];
    /* alpha as written (3.5): a slot of h units, an internal state of
     * alpha units (checked when the grid was built) */
    p->alpha_text = bptt_grid_value(g, idx, BPTT_GK_ALPHA);
    bptt_units u;
    bptt_units_from_alpha(p->alpha_text, &u);
    p->h = u.hidden_units;
    p->alpha = u.internal_units;
    p->spec = bptt_grid_value(g, idx, BPTT_GK_MEMORY);
    p->full = bptt_full_peak(p->length, p->h, p->alpha);
    p->min = bptt_strategy_min_budget(p->strategy, p->length, p->h, p->alpha,
                                      NULL);
    p->budget = 0;
    /* a plan has no bytes: slots and shares only */
    const bptt_budget_sizes z = {p->length, p->h, p->alpha, 0};
    bptt_budget_resolved r;
    const int rc = bptt_budget_resolve(p->spec, &z, 0, &r, NULL, 0);
    if (rc == BPTT_OK)
        p->budget = r.units;
    return rc;}

/* s for a POSIX shell, in single quotes. */
static void shell_word(bptt_strbuf *b, const char *s)
{
    bptt_strbuf_puts(b, "'");
    for (; *s; s++) {
        if (*s == '\'')
            bptt_strbuf_puts(b, "'\\''");
        else
            bptt_strbuf_add(b, s, 1);
    }
    bptt_strbuf_puts(b, "'");
}

void bptt_grid_command(bptt_strbuf *b, const bptt_grid *g, const char *cwd,
                       const char *exe, const char *out)
{
    bptt_strbuf_puts(b, "cd ");
    shell_word(b, cwd);
    bptt_strbuf_puts(b, " && ");
    shell_word(b, exe);
    bptt_strbuf_printf(b, " sweep --mode %s", bptt_grid_mode_name(g->mode));
    for (int k = 0; k < BPTT_GRID_KEYS; k++) {
        if (!g->text[k] || k == BPTT_GK_MODE || k == BPTT_GK_OUT ||
            k == BPTT_GK_FORMAT || k == BPTT_GK_INFEASIBLE)
            continue;
        bptt_strbuf_printf(b, " --%s ", bptt_grid_keys[k].name);
        shell_word(b, g->text[k]);
    }
    bptt_strbuf_printf(b, " --format %s", g->csv ? "csv" : "jsonl");
    if (g->record_infeasible)
        bptt_strbuf_puts(b, " --infeasible record");
    bptt_strbuf_puts(b, " --out ");
    shell_word(b, out);
}
