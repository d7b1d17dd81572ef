/* threads.c: the planner's threads (see threads.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "bptt.h"
#include "budget.h"
#include "threads.h"

/* OMP_NUM_THREADS as OpenMP reads it: its first number ("4" or "4,2"),
 * 0 for anything else; at most INT_MAX. */
static long env_threads(void)
{
    const char *env = getenv("OMP_NUM_THREADS");
    if (!env || *env < '0' || *env > '9')
        return 0;
    errno = 0;
    char *end;
    const long n = strtol(env, &end, 10);
    if (errno == ERANGE || n > INT_MAX)
        return INT_MAX;
    return *end && *end != ',' ? 0 : n;
}

int planner_threads(int asked)
{
    long n = asked;
    if (n < 1)
        n = env_threads();
    if (n < 1)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > BPTT_THREADS_MAX)
        n = BPTT_THREADS_MAX;
    return n < 1 ? 1 : (int)n;
}

int bptt_planner_threads(int *asked)
{
    if (asked)
        *asked = (int)env_threads();
    return planner_threads(0);
}

typedef struct {
    void (*fn)(void *);
    void *arg;
} job;

static void *start(void *p)
{
    const job *j = p;
    j->fn(j->arg);
    return NULL;
}

void planner_run(int n, void (*fn)(void *arg), void *arg)
{
    if (n <= 1) {
        fn(arg);
        return;
    }
    pthread_t *tid = malloc((size_t)(n - 1) * sizeof *tid);
    job j = {fn, arg};
    int started = 0;
    if (tid)
        while (started < n - 1 &&
               pthread_create(&tid[started], NULL, start, &j) == 0)
            started++;
    fn(arg); /* the caller's share, and whatever no other thread took */
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
}
