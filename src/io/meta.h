/* meta.h: the metadata every output carries (doc/design.md 6): version and git
 * revision, compiler and flags, BLAS configuration and thread counts, CPU
 * model, date (UTC). */
#ifndef BPTT_META_H
#define BPTT_META_H

#include <stddef.h>

/* The format of bptt's records (bptt run's result, bptt sweep's files),
 * carried by every one as "record_format" in its metadata: raised when a
 * field is renamed, removed or changes meaning (adding a field does not
 * raise it), so that a reader can refuse what it does not know. */
#define BPTT_RECORD_FORMAT 1

typedef struct {
    char version[32];
    char git_revision[64];
    char compiler[128];
    char cflags[256];
    char blas[256];   /* openblas_get_config() */
    char blas_core[32]; /* openblas_get_corename(): the kernels it runs */
    char blas_core_source[16]; /* who chose them: "openblas", "bptt" (a new
                                  start, blascore.h) or "user"
                                  (OPENBLAS_CORETYPE from the environment) */
    char cpu_isa[16];   /* what the CPU offers: "avx512", "avx2", "old" */
    int blas_core_slow; /* 1: the kernels need less than the CPU offers
                           (older than the CPU: slower GEMMs) */
    int blas_threads; /* openblas_get_num_threads() */
    char gemm_kernel[16]; /* the cells' per-step GEMMs: "avx512", "avx2" or "cblas" */
    int omp_threads;  /* omp_get_max_threads() (1 without OpenMP) */
    char cpu_model[128];
    int cpu_cores;    /* online processors */
    char date[32];    /* 2026-11-29T18:00:00Z */
} bptt_meta;

void bptt_meta_collect(bptt_meta *m);

/* OpenBLAS's kernels in words, for text outputs and table footers:
 * "SkylakeX (chosen by bptt; the CPU offers avx512)", and for a slow set
 * "Prescott (OPENBLAS_CORETYPE from the environment), older than this
 * CPU's avx512: GEMMs run 2-3x slower".  Returns what snprintf
 * returns. */
int bptt_meta_blas_text(const bptt_meta *m, char *buf, size_t cap);

/* The fields as JSON members without braces ("record_format":1,
 * "version":"...",...), escaped;
 * returns the length snprintf would write (output truncated at cap).  A
 * buffer of BPTT_META_JSON_MAX bytes always suffices (every field byte
 * escaped as \u00XX); real metadata takes a few hundred. */
#define BPTT_META_JSON_MAX 6144
int bptt_meta_json(const bptt_meta *m, char *buf, size_t cap);

#endif
