/* blascore.c: OpenBLAS's kernel set, its source, and the one new start
 * with a better one (see blascore.h).
 *
 * Promises: the decision is a pure function of (OPENBLAS_CORETYPE,
 * OpenBLAS's choice, the CPU's level), tested as such; a set
 * OPENBLAS_CORETYPE is never changed; the program starts again at most
 * once (the new image finds the variable set); when the new start fails,
 * the variables are restored and the process goes on.
 *
 * Does not promise: that OpenBLAS honours the name (an OpenBLAS built
 * without that kernel set keeps its own choice; the outputs record what it
 * runs, openblas_get_corename, not what was asked). */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "blascore.h"

static int in_list(const char *core, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(core, list[i]) == 0)
            return 1;
    return 0;
}

int bptt_blas_core_isa(const char *core)
{
    /* OpenBLAS's x86 kernel sets as openblas_get_corename spells them
     * (driver/others/dynamic.c) */
    static const char *const old[] = {
        "Katmai",    "Coppermine", "Northwood",   "Prescott", "Banias",
        "Core2",     "Penryn",     "Dunnington",  "Nehalem",  "Atom",
        "Opteron",   "Opteron(SSE3)", "Barcelona", "Nano",    "Bobcat",
        "Bulldozer", "Piledriver", "Steamroller", "Excavator",
        "Sandybridge", "generic",  "Generic"};
    static const char *const avx2[] = {"Haswell", "Zen", "Skylake"};
    static const char *const avx512[] = {"SkylakeX", "Cooperlake",
                                         "SapphireRapids"};
    if (!core)
        return BPTT_ISA_UNKNOWN;
    if (in_list(core, avx512, sizeof avx512 / sizeof avx512[0]))
        return BPTT_ISA_AVX512;
    if (in_list(core, avx2, sizeof avx2 / sizeof avx2[0]))
        return BPTT_ISA_AVX2;
    if (in_list(core, old, sizeof old / sizeof old[0]))
        return BPTT_ISA_OLD;
    return BPTT_ISA_UNKNOWN;
}

int bptt_cpu_isa(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    /* libgcc checks both cpuid and the registers the OS saves (XCR0) */
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return BPTT_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return BPTT_ISA_AVX2;
    return BPTT_ISA_OLD;
#else
    return BPTT_ISA_UNKNOWN;
#endif
}

const char *bptt_isa_name(int isa)
{
    switch (isa) {
    case BPTT_ISA_OLD: return "old";
    case BPTT_ISA_AVX2: return "avx2";
    case BPTT_ISA_AVX512: return "avx512";
    default: return "unknown";
    }
}

const char *bptt_blas_core_for_isa(int isa)
{
    switch (isa) {
    case BPTT_ISA_AVX2: return "Haswell";
    case BPTT_ISA_AVX512: return "SkylakeX";
    default: return NULL;
    }
}

const char *bptt_blas_core_advice(const char *env_core, const char *chosen,
                                  int cpu_isa)
{
    if (env_core && *env_core)
        return NULL; /* the user's choice stands */
    const int have = bptt_blas_core_isa(chosen);
    if (have == BPTT_ISA_UNKNOWN || have >= cpu_isa)
        return NULL;
    return bptt_blas_core_for_isa(cpu_isa);
}

int bptt_blas_core_runnable(const char *core, int cpu_isa)
{
    const int need = bptt_blas_core_isa(core);
    if (need == BPTT_ISA_UNKNOWN || cpu_isa == BPTT_ISA_UNKNOWN)
        return 0;
    return need > cpu_isa ? -1 : 0;
}

const char *bptt_blas_core_source(const char *env_core, const char *marker)
{
    if (!env_core || !*env_core)
        return "openblas";
    if (marker && strcmp(marker, env_core) == 0)
        return "bptt";
    return "user";
}

int bptt_blas_reexec(char **argv)
{
    /* BPTT_BLAS_TEST_CHOSEN: a test hook standing in for OpenBLAS's own
     * choice (tests/test_cli_run), so that the new start can be tested on a
     * machine whose OpenBLAS knows its CPU */
    const char *chosen = getenv("BPTT_BLAS_TEST_CHOSEN");
    if (!chosen || !*chosen)
        chosen = openblas_get_corename();
    const char *core = bptt_blas_core_advice(getenv("OPENBLAS_CORETYPE"),
                                             chosen, bptt_cpu_isa());
    if (!core || !argv || !argv[0])
        return 0;
    /* this very program: under valgrind, readlink is answered with the
     * client's path, so the new start stays under valgrind when valgrind
     * follows children */
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return errno ? errno : ENOENT;
    self[n] = '\0';
    if (setenv("OPENBLAS_CORETYPE", core, 1) != 0 ||
        setenv(BPTT_BLAS_MARKER, core, 1) != 0) {
        const int e = errno;
        unsetenv("OPENBLAS_CORETYPE");
        unsetenv(BPTT_BLAS_MARKER);
        return e;
    }
    execv(self, argv);
    const int e = errno;
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(BPTT_BLAS_MARKER);
    return e;
}
