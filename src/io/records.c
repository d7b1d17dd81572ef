/* records.c: the records of a sweep file and their csv form (see
 * records.h). */
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "json.h"
#include "records.h"

int64_t bptt_record_point(const char *line)
{
    if (strncmp(line, "{\"point\":", 9) != 0)
        return -1;
    const char *p = line + 9;
    int64_t k = 0;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (k > INT64_MAX / 10 - 10)
            return -1;
        k = 10 * k + (*p - '0');
    }
    return *p == ',' || *p == '}' ? k : -1;
}

int bptt_csv_field(bptt_strbuf *b, const char *v)
{
    if (!v)
        return b->failed ? -1 : 0;
    if (!strpbrk(v, ",\"\r\n") && v[0] != ' ' && v[0] != '#')
        return bptt_strbuf_puts(b, v);
    bptt_strbuf_puts(b, "\"");
    for (const char *q; (q = strchr(v, '"')) != NULL; v = q + 1) {
        bptt_strbuf_add(b, v, (size_t)(q + 1 - v)); /* a quote doubled */
        bptt_strbuf_puts(b, "\"");
    }
    bptt_strbuf_puts(b, v);
    return bptt_strbuf_puts(b, "\"");
}

/* A record as a flat object: 0, or -1 (not one; *nomem on allocation). */
static int flat(const char *line, bptt_json **out, int *nomem)
{
    const int rc = bptt_json_parse(line, strlen(line), out, NULL);
    if (rc == BPTT_ENOMEM)
        *nomem = 1;
    if (rc != BPTT_OK)
        return -1;
    if ((*out)->type != BPTT_JSON_OBJECT)
        return -1;
    for (size_t i = 0; i < (*out)->n; i++)
        if ((*out)->items[i].type == BPTT_JSON_ARRAY ||
            (*out)->items[i].type == BPTT_JSON_OBJECT)
            return -1;
    return 0;
}

int bptt_records_csv(char *const *rec, size_t n, bptt_strbuf *b, size_t *bad)
{
    bptt_json **m = calloc(n ? n : 1, sizeof *m);
    const char **col = NULL;
    size_t ncol = 0;
    int nomem = !m, rc = BPTT_OK;
    for (size_t k = 0; k < n && rc == BPTT_OK && !nomem; k++)
        if (flat(rec[k], &m[k], &nomem) != 0) {
            rc = nomem ? BPTT_ENOMEM : BPTT_EINVAL;
            if (bad)
                *bad = k;
        }
    if (nomem)
        rc = BPTT_ENOMEM;
    if (rc == BPTT_OK) {
        size_t widest = 0;
        for (size_t k = 1; k < n; k++)
            if (m[k]->n > m[widest]->n)
                widest = k;
        for (size_t pass = 0; pass < 2 && n && rc == BPTT_OK; pass++)
            for (size_t k = pass ? 0 : widest; k < (pass ? n : widest + 1);
                 k++)
                for (size_t i = 0; i < m[k]->n && rc == BPTT_OK; i++) {
                    size_t c = 0;
                    while (c < ncol && strcmp(col[c], m[k]->keys[i]) != 0)
                        c++;
                    if (c < ncol)
                        continue;
                    const char **more = realloc(col, (ncol + 1) * sizeof *col);
                    if (!more) {
                        rc = BPTT_ENOMEM;
                        break;
                    }
                    col = more;
                    col[ncol++] = m[k]->keys[i];
                }
    }
    if (rc == BPTT_OK) {
        for (size_t c = 0; c < ncol; c++) {
            if (c)
                bptt_strbuf_puts(b, ",");
            bptt_csv_field(b, col[c]);
        }
        bptt_strbuf_puts(b, "\n");
        for (size_t k = 0; k < n; k++) {
            size_t hint = 0;
            const bptt_json *r = m[k];
            for (size_t c = 0; c < ncol; c++) {
                if (c)
                    bptt_strbuf_puts(b, ",");
                size_t i = hint < r->n && strcmp(r->keys[hint], col[c]) == 0
                               ? hint
                               : 0;
                while (i < r->n && strcmp(r->keys[i], col[c]) != 0)
                    i++;
                if (i < r->n) {
                    bptt_csv_field(b, r->items[i].text);
                    hint = i + 1;
                }
            }
            bptt_strbuf_puts(b, "\n");
        }
        if (b->failed)
            rc = BPTT_ENOMEM;
    }
    for (size_t k = 0; m && k < n; k++)
        bptt_json_free(m[k]);
    free(m);
    free(col);
    return rc;
}

/* ---- the records of a grid's points -------------------------------------- */

void bptt_record_start(bptt_strbuf *b, const bptt_grid *g, size_t k)
{
    size_t idx[BPTT_GRID_AXES];
    bptt_grid_decode(g, k, idx);
    bptt_strbuf_printf(b, "{\"point\":%zu,\"memory_spec\":", k);
    bptt_strbuf_json(b, bptt_grid_value(g, idx, BPTT_GK_MEMORY));
}

int bptt_record_run(bptt_strbuf *b, const bptt_grid *g, size_t k,
                    const char *obj, size_t n)
{
    if (n < 3 || obj[0] != '{' || obj[n - 1] != '\n' || obj[n - 2] != '}' ||
        memchr(obj, '\n', n - 1))
        return BPTT_EINVAL;
    bptt_record_start(b, g, k);
    bptt_strbuf_puts(b, ",");
    bptt_strbuf_add(b, obj + 1, n - 1);
    return BPTT_OK;
}

void bptt_record_run_error(bptt_strbuf *b, const bptt_grid *g, size_t k,
                           const char *message)
{
    size_t idx[BPTT_GRID_AXES];
    bptt_grid_decode(g, k, idx);
    bptt_record_start(b, g, k);
    for (int a = 0; a < BPTT_GRID_AXES; a++)
        if (g->applies[a] && g->ax[a].n && a != BPTT_GK_MEMORY) {
            bptt_strbuf_printf(b, ",\"%s\":", bptt_grid_keys[a].name);
            if (bptt_grid_keys[a].kind == BPTT_GRID_INT)
                bptt_strbuf_puts(b, bptt_grid_value(g, idx, a));
            else
                bptt_strbuf_json(b, bptt_grid_value(g, idx, a));
        }
    bptt_strbuf_puts(b, ",\"error\":");
    bptt_strbuf_json(b, message);
    bptt_strbuf_puts(b, "}\n");
}
