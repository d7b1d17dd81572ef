/* fields.c: a record of named values in JSON, csv or text (fields.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "fields.h"
#include "records.h"

static bptt_field *next(bptt_fields *fs, const char *key)
{
    if (fs->n == BPTT_FIELDS_MAX) {
        fs->lost++;
        return NULL;
    }
    bptt_field *f = &fs->f[fs->n++];
    f->key = key;
    f->str = NULL;
    f->num[0] = '\0';
    f->finite = 1;
    return f;
}

void bptt_fields_str(bptt_fields *fs, const char *key, const char *value)
{
    bptt_field *f = next(fs, key);
    if (f)
        f->str = value;
}

void bptt_fields_int(bptt_fields *fs, const char *key, int64_t value)
{
    bptt_field *f = next(fs, key);
    if (f)
        snprintf(f->num, sizeof f->num, "%" PRId64, value);
}

void bptt_fields_real(bptt_fields *fs, const char *key, double value)
{
    bptt_field *f = next(fs, key);
    if (f) {
        f->finite = isfinite(value) != 0;
        snprintf(f->num, sizeof f->num, "%.9g", value);
    }
}

/* The value as text and csv show it. */
static const char *text_of(const bptt_field *f)
{
    return f->str ? f->str : f->num;
}

int bptt_fields_write(const bptt_fields *fs, int format,
                      const bptt_meta *meta, bptt_strbuf *out)
{
    char mj[BPTT_META_JSON_MAX] = "";
    if (meta)
        bptt_meta_json(meta, mj, sizeof mj);
    if (format == BPTT_FIELDS_JSON) {
        bptt_strbuf_puts(out, "{");
        for (size_t i = 0; i < fs->n; i++) {
            const bptt_field *f = &fs->f[i];
            bptt_strbuf_printf(out, "%s\"%s\":", i ? "," : "", f->key);
            if (f->str)
                bptt_strbuf_json(out, f->str);
            else
                bptt_strbuf_puts(out, f->finite ? f->num : "null");
        }
        bptt_strbuf_printf(out, "%s%s}\n", *mj && fs->n ? "," : "", mj);
    } else if (format == BPTT_FIELDS_CSV) {
        if (meta)
            bptt_strbuf_printf(out, "# {\"meta\":{%s}}\n", mj);
        for (size_t i = 0; i < fs->n; i++)
            bptt_strbuf_printf(out, "%s%s", i ? "," : "", fs->f[i].key);
        bptt_strbuf_puts(out, "\n");
        for (size_t i = 0; i < fs->n; i++) {
            if (i)
                bptt_strbuf_puts(out, ",");
            bptt_csv_field(out, text_of(&fs->f[i]));
        }
        bptt_strbuf_puts(out, "\n");
    } else {
        for (size_t i = 0; i < fs->n; i++)
            bptt_strbuf_printf(out, "%-32s %s\n", fs->f[i].key,
                               text_of(&fs->f[i]));
        if (meta) {
            char blas[160];
            bptt_meta_blas_text(meta, blas, sizeof blas);
            bptt_strbuf_printf(out, "%-32s %s\n", "blas_core", blas);
            bptt_strbuf_printf(out, "%-32s %s (git %s), %s, %s\n", "build",
                               meta->version, meta->git_revision,
                               meta->compiler, meta->cpu_model);
        }
    }
    return out->failed ? -1 : 0;
}
