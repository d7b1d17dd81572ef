/* blascore.h: which of OpenBLAS's kernel sets runs, where that choice came
 * from, and choosing a better one before any work.
 *
 * A DYNAMIC_ARCH OpenBLAS picks its kernels from cpuid when it loads.  An
 * OpenBLAS older than the CPU does not know it and falls back to old
 * kernels (Debian 12's 0.3.21 runs its SSE3 "Prescott" set on Intel family
 * 6 model 207, far below that CPU's rate: doc/performance.md, "What limits
 * it").  The environment variable
 * OPENBLAS_CORETYPE overrides its choice, and is read only when the library
 * loads: a program that wants other kernels must start again with it set.
 * bptt_blas_reexec does that, once, when nobody set it and OpenBLAS chose
 * kernels older than what the CPU offers; a user's OPENBLAS_CORETYPE is
 * never overridden (on some machines it is set because other kernel sets
 * crash there).
 *
 * Levels are the x86 vector extensions a kernel set needs, or a CPU offers
 * (with the operating system keeping their registers), as cpuid reports
 * them: a CPU that valgrind emulates reports no AVX-512. */
#ifndef BPTT_BLASCORE_H
#define BPTT_BLASCORE_H

#include <stddef.h>

enum {
    BPTT_ISA_UNKNOWN = -1, /* a kernel set this table does not know */
    BPTT_ISA_OLD = 0,      /* without AVX2 (SSE2, SSE3, AVX) */
    BPTT_ISA_AVX2 = 1,     /* AVX2 and FMA */
    BPTT_ISA_AVX512 = 2    /* AVX-512 F, CD, BW, DQ and VL */
};

/* The level OpenBLAS's kernel set `core` (openblas_get_corename's
 * spelling) needs; BPTT_ISA_UNKNOWN for NULL or a name not known here. */
int bptt_blas_core_isa(const char *core);

/* The level this CPU offers, as cpuid tells this process. */
int bptt_cpu_isa(void);

/* "avx512", "avx2" or "old" (anything else: "unknown"). */
const char *bptt_isa_name(int isa);

/* The kernel set bptt asks for on a CPU of level isa: "SkylakeX" for
 * AVX-512, "Haswell" for AVX2; NULL below. */
const char *bptt_blas_core_for_isa(int isa);

/* The decision, as a pure function: the kernel set to start again with, or
 * NULL to go on.  env_core: OPENBLAS_CORETYPE (NULL or "" when unset);
 * chosen: OpenBLAS's choice; cpu_isa: bptt_cpu_isa().  Non-NULL only when
 * env_core is unset and chosen is known and below the CPU's level. */
const char *bptt_blas_core_advice(const char *env_core, const char *chosen,
                                  int cpu_isa);

/* 0 when the kernel set `core` can run on a CPU of level cpu_isa; -1 when
 * it needs more (OPENBLAS_CORETYPE=SkylakeX on a CPU without AVX-512, or
 * under valgrind, whose CPU has none: OpenBLAS would stop on an illegal
 * instruction).  An unknown name or level: 0. */
int bptt_blas_core_runnable(const char *core, int cpu_isa);

/* Where the kernels came from: "openblas" (OpenBLAS's own choice: the
 * variable unset), "bptt" (set by bptt_blas_reexec: marker, the variable
 * BPTT_BLAS_CORE_CHOSEN, holds the same name), "user" (set by anyone
 * else). */
const char *bptt_blas_core_source(const char *env_core, const char *marker);

/* Start this program again (argv as given to main) with the kernel set
 * that bptt_blas_core_advice names for this process, before any work.
 * Returns only when it does not: 0 when there is nothing to do, or an errno
 * when the new start failed (the process then goes on with OpenBLAS's own
 * choice, which its outputs record).  Sets OPENBLAS_CORETYPE and
 * BPTT_BLAS_CORE_CHOSEN for the new image (and so for its children). */
int bptt_blas_reexec(char **argv);

#define BPTT_BLAS_MARKER "BPTT_BLAS_CORE_CHOSEN"

#endif
