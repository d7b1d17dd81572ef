/* aslimit.c: bptt under an address-space limit (aslimit.h).  Everything
 * here may run before main, before any library has started (the command's
 * preinit, src/cli/main.c), so it uses system calls and the stack only: no
 * allocation, no stdio. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "train/aslimit.h"

/* The leading decimal number of s, or 0. */
static int leading_number(const char *s)
{
    int v = 0;
    for (; s && *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > 100000)
            return 100000;
    }
    return v;
}

/* The value of variable name in envp, or NULL. */
static const char *env_value(char **envp, const char *name)
{
    const size_t n = strlen(name);
    for (char **e = envp; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

int bptt_blas_start_threads(char **envp)
{
    int cpus = 1;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        cpus = CPU_COUNT(&set);
    if (cpus < 1)
        cpus = 1;
    static const char *const vars[] = {"OPENBLAS_NUM_THREADS",
                                       "GOTO_NUM_THREADS", "OMP_NUM_THREADS"};
    int n = 0;
    for (size_t i = 0; i < 3 && n == 0; i++)
        n = leading_number(env_value(envp, vars[i]));
    if (n == 0 || n > cpus)
        n = cpus;
    return n > 64 ? 64 : n;
}

/* Bytes mapped now (the first field of /proc/self/statm, in pages). */
static int64_t mapped_bytes(void)
{
    const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[64];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    int64_t pages = 0;
    for (const char *p = buf; *p >= '0' && *p <= '9'; p++)
        pages = pages * 10 + (*p - '0');
    return pages * (int64_t)sysconf(_SC_PAGESIZE);
}

int bptt_address_space_left(int64_t *left, int64_t *limit)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur > (rlim_t)INT64_MAX)
        return 0;
    *limit = (int64_t)rl.rlim_cur;
    const int64_t used = mapped_bytes();
    *left = *limit > used ? *limit - used : 0;
    return 1;
}

int bptt_address_space_fits(int64_t bytes)
{
    if (bytes <= 0)
        return 0;
    void *p = mmap(NULL, (size_t)bytes, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    munmap(p, (size_t)bytes);
    return 0;
}

long long bptt_address_space_advice(int64_t used, int64_t need)
{
    const int64_t step = (int64_t)16 << 20;
    const int64_t want = used + need + ((int64_t)64 << 20);
    return (long long)((want + step - 1) / step * step / 1024);
}
