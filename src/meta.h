/* meta.h: the metadata every output carries (DESIGN.md 6): version and git
 * revision, compiler and flags, BLAS configuration and thread counts, CPU
 * model, date (UTC). */
#ifndef BPTT_META_H
#define BPTT_META_H

#include <stddef.h>

typedef struct {
    char version[32];
    char git_revision[64];
    char compiler[128];
    char cflags[256];
    char blas[256];   /* openblas_get_config() */
    char blas_core[32]; /* openblas_get_corename(): the kernels it chose */
    int blas_core_generic; /* 1: those are pre-AVX2 kernels on a CPU with
                              AVX2 (an OpenBLAS older than the CPU) */
    int blas_threads; /* openblas_get_num_threads() */
    char gemm_kernel[16]; /* the cells' per-step GEMMs: "avx512" or "cblas" */
    int omp_threads;  /* omp_get_max_threads() (1 without OpenMP) */
    char cpu_model[128];
    int cpu_cores;    /* online processors */
    char date[32];    /* 2026-11-29T18:00:00Z */
} bptt_meta;

void bptt_meta_collect(bptt_meta *m);

/* 1 if OpenBLAS's kernel set `core` (openblas_get_corename) predates AVX2
 * (Prescott, Core2, Nehalem, Sandybridge, ...) while the CPU has AVX2
 * (cpu_avx2 != 0): a DYNAMIC_ARCH OpenBLAS that does not know a newer CPU
 * falls back to them, and its SGEMM runs 2-3 times slower (seen: OpenBLAS
 * 0.3.21 on Intel family 6 model 207 chose Prescott; OPENBLAS_CORETYPE=
 * SkylakeX fixed it).  0 for an unknown name. */
int bptt_blas_core_generic(const char *core, int cpu_avx2);

/* The fields as JSON members without braces ("version":"...",...), escaped;
 * returns the length snprintf would write (output truncated at cap).  A
 * buffer of BPTT_META_JSON_MAX bytes always suffices (every field byte
 * escaped as \u00XX); real metadata takes a few hundred. */
#define BPTT_META_JSON_MAX 6144
int bptt_meta_json(const bptt_meta *m, char *buf, size_t cap);

#endif
