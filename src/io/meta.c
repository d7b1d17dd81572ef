/* meta.c: the metadata every output carries (see meta.h).
 *
 * Promises: bptt_meta_collect fills every field (a string it cannot learn
 * is "unknown"); bptt_meta_json writes valid JSON members whatever the
 * fields hold (strings through bptt_json_string, json.h): quotes,
 * backslashes and control characters are escaped, a byte that is not part
 * of valid UTF-8 (e.g. a multi-byte character cut by a field's size)
 * becomes U+FFFD, and a field that fills its array without a terminating
 * NUL is read only up to the array's end.
 *
 * Does not promise: that the cflags are all the flags of the build (they
 * are configure's CFLAGS and OpenMP flags, not the per-target ones).
 */
#define _POSIX_C_SOURCE 200809L

#include "config.h"
#include "git-revision.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "blascore.h"
#include "cell.h"
#include "json.h"
#include "meta.h"

#if defined(__clang__) && defined(__VERSION__)
#define META_COMPILER __VERSION__ /* "Clang 14.0.6 ..." names itself */
#elif defined(__GNUC__) && defined(__VERSION__)
#define META_COMPILER "gcc " __VERSION__
#elif defined(__VERSION__)
#define META_COMPILER __VERSION__
#else
#define META_COMPILER "unknown"
#endif

#ifndef BPTT_CFLAGS
#define BPTT_CFLAGS "unknown"
#endif
#ifndef BPTT_GIT_REVISION
#define BPTT_GIT_REVISION "unknown"
#endif
#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

/* ---- collect --------------------------------------------------------- */

/* Copies src into dst[cap], truncating; "unknown" for NULL or "". */
static void set_field(char *dst, size_t cap, const char *src)
{
    if (!src || !*src)
        src = "unknown";
    const size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* The value of the first "model name" line of /proc/cpuinfo. */
static void cpu_model(char *dst, size_t cap)
{
    set_field(dst, cap, NULL);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char *line = NULL;
    size_t line_cap = 0;
    const char key[] = "model name";
    while (getline(&line, &line_cap, f) != -1) {
        if (strncmp(line, key, sizeof key - 1) != 0)
            continue;
        const char *colon = strchr(line, ':');
        if (!colon)
            continue;
        const char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t n = strlen(v);
        while (n > 0 && (v[n - 1] == '\n' || v[n - 1] == '\r' ||
                         v[n - 1] == ' ' || v[n - 1] == '\t'))
            n--;
        if (n == 0)
            continue;
        if (n > cap - 1)
            n = cap - 1;
        memcpy(dst, v, n);
        dst[n] = '\0';
        break;
    }
    free(line);
    fclose(f);
}

int bptt_meta_blas_text(const bptt_meta *m, char *buf, size_t cap)
{
    const char *src = m->blas_core_source;
    const char *who = strcmp(src, "bptt") == 0 ? "chosen by bptt"
                      : strcmp(src, "user") == 0
                          ? "OPENBLAS_CORETYPE from the environment"
                          : "OpenBLAS's own choice";
    if (m->blas_core_slow)
        return snprintf(buf, cap, "%s (%s), older than this CPU's %s: GEMMs "
                        "run %s", m->blas_core, who, m->cpu_isa,
                        bptt_blas_core_isa(m->blas_core) == BPTT_ISA_OLD
                            ? "2-3x slower"
                            : "slower than they could");
    return snprintf(buf, cap, "%s (%s; the CPU offers %s)", m->blas_core, who,
                    m->cpu_isa);
}

void bptt_meta_collect(bptt_meta *m)
{
    memset(m, 0, sizeof *m);
    set_field(m->version, sizeof m->version, PACKAGE_VERSION);
    set_field(m->git_revision, sizeof m->git_revision, BPTT_GIT_REVISION);
    set_field(m->compiler, sizeof m->compiler, META_COMPILER);
    set_field(m->cflags, sizeof m->cflags, BPTT_CFLAGS);
    set_field(m->blas, sizeof m->blas, openblas_get_config());
    set_field(m->blas_core, sizeof m->blas_core, openblas_get_corename());
    set_field(m->blas_core_source, sizeof m->blas_core_source,
              bptt_blas_core_source(getenv("OPENBLAS_CORETYPE"),
                                    getenv(BPTT_BLAS_MARKER)));
    const int isa = bptt_cpu_isa(), core_isa = bptt_blas_core_isa(m->blas_core);
    set_field(m->cpu_isa, sizeof m->cpu_isa, bptt_isa_name(isa));
    m->blas_core_slow = core_isa != BPTT_ISA_UNKNOWN && core_isa < isa;
    m->blas_threads = openblas_get_num_threads();
    set_field(m->gemm_kernel, sizeof m->gemm_kernel, bptt_cell_kernel());
#ifdef _OPENMP
    m->omp_threads = omp_get_max_threads();
#else
    m->omp_threads = 1;
#endif
    cpu_model(m->cpu_model, sizeof m->cpu_model);
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    m->cpu_cores = cores > 0 && cores <= INT_MAX ? (int)cores : 0;

    set_field(m->date, sizeof m->date, NULL);
    const time_t now = time(NULL);
    struct tm tm;
    if (now != (time_t)-1 && gmtime_r(&now, &tm))
        strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- JSON ------------------------------------------------------------ */

/* snprintf-like output: len counts every byte, buf holds what fits. */
typedef struct {
    char *buf;
    size_t cap, len;
} json_out;

static void out_char(json_out *o, char c)
{
    if (o->len + 1 < o->cap)
        o->buf[o->len] = c;
    o->len++;
}

static void out_str(json_out *o, const char *s)
{
    while (*s)
        out_char(o, *s++);
}

/* s (at most max bytes) as a JSON string, quotes included (json.h). */
static void out_json_string(json_out *o, const char *s, size_t max)
{
    const size_t room = o->len < o->cap ? o->cap - o->len : 0;
    o->len += bptt_json_string(room ? o->buf + o->len : NULL, room, s, max);
}

static void out_member_string(json_out *o, const char *key, const char *s,
                              size_t max)
{
    if (o->len > 0)
        out_char(o, ',');
    out_char(o, '"');
    out_str(o, key);
    out_str(o, "\":");
    out_json_string(o, s, max);
}

static void out_member_int(json_out *o, const char *key, int v)
{
    char num[32];
    snprintf(num, sizeof num, "%d", v);
    if (o->len > 0)
        out_char(o, ',');
    out_char(o, '"');
    out_str(o, key);
    out_str(o, "\":");
    out_str(o, num);
}

#define MEMBER_STRING(o, m, field)                                          \
    out_member_string(o, #field, (m)->field, sizeof (m)->field)

int bptt_meta_json(const bptt_meta *m, char *buf, size_t cap)
{
    json_out o = {buf, buf ? cap : 0, 0};
    out_member_int(&o, "record_format", BPTT_RECORD_FORMAT);
    MEMBER_STRING(&o, m, version);
    MEMBER_STRING(&o, m, git_revision);
    MEMBER_STRING(&o, m, compiler);
    MEMBER_STRING(&o, m, cflags);
    MEMBER_STRING(&o, m, blas);
    MEMBER_STRING(&o, m, blas_core);
    MEMBER_STRING(&o, m, blas_core_source);
    out_member_int(&o, "blas_core_slow", m->blas_core_slow);
    MEMBER_STRING(&o, m, cpu_isa);
    out_member_int(&o, "blas_threads", m->blas_threads);
    MEMBER_STRING(&o, m, gemm_kernel);
    out_member_int(&o, "omp_threads", m->omp_threads);
    MEMBER_STRING(&o, m, cpu_model);
    out_member_int(&o, "cpu_cores", m->cpu_cores);
    MEMBER_STRING(&o, m, date);
    if (o.cap > 0)
        o.buf[o.len < o.cap ? o.len : o.cap - 1] = '\0';
    return o.len > INT_MAX ? -1 : (int)o.len;
}
