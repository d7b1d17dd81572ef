/* team.c: threads held for a whole run of steps (team.h).
 *
 * The holding thread (thread 0 of an OpenMP region) runs the body; the
 * others loop in serve(), waiting for `go` to move.  A part is handed
 * over by writing its function and argument and then moving `go` (a
 * release store: whoever sees the new value sees them too); each helper
 * adds one to `done` when its part returns, and thread 0, after its own
 * part, waits until all have.  The barrier counts arrivals and moves a
 * generation number, which the others wait on.  Every wait spins on one
 * cache line, pausing between looks, and after a while gives its core
 * away at each look (sched_yield), sooner where there are more threads
 * than processors, so that a thread that must run is not kept off its
 * core for long. */
#define _GNU_SOURCE /* sched_yield in <sched.h> under -std=c11 */
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "budget.h" /* BPTT_THREADS_MAX */
#include "team.h"

typedef struct {
    /* written by thread 0 only: a new part (or the end) per move of go */
    _Alignas(64) atomic_uint go;
    bptt_team_fn fn;
    void *arg;
    int quit;
    /* helpers whose part has returned */
    _Alignas(64) atomic_uint done;
    /* the barrier: threads arrived, and how many times it has opened */
    _Alignas(64) atomic_uint arrived;
    atomic_uint opened;
    int P;        /* the team's size */
    unsigned spin; /* looks at a line before each yields its core */
} team;

/* the team this thread holds or serves, inside bptt_team_hold */
static _Thread_local team *held;
/* 1 while this thread runs a part alone (bptt_team_run with par 0) */
static _Thread_local int alone;

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* returns the value of *a once it is no longer old */
static unsigned wait_while(atomic_uint *a, unsigned old, unsigned spin)
{
    unsigned v, looks = 0;
    while ((v = atomic_load_explicit(a, memory_order_acquire)) == old) {
        if (looks < spin) {
            looks++;
            relax();
        } else {
            sched_yield();
        }
    }
    return v;
}

static void serve(team *t, int q)
{
    unsigned seen = 0;
    for (;;) {
        seen = wait_while(&t->go, seen, t->spin);
        if (t->quit)
            return;
        t->fn(t->arg, q, t->P);
        atomic_fetch_add_explicit(&t->done, 1, memory_order_release);
    }
}

void bptt_team_hold(void (*body)(void *), void *arg)
{
#ifdef _OPENMP
    const int P = omp_get_max_threads();
    if (held || P < 2 || omp_in_parallel()) {
        body(arg);
        return;
    }
    team t = {.P = 1};
    atomic_init(&t.go, 0);
    atomic_init(&t.done, 0);
    atomic_init(&t.arrived, 0);
    atomic_init(&t.opened, 0);
    _Pragma("omp parallel num_threads(P)")
    {
        _Pragma("omp single")
        {
            t.P = omp_get_num_threads(); /* may be fewer than asked */
            t.spin = t.P > omp_get_num_procs() ? 64 : 16384;
        } /* the single's barrier: every thread sees P */
        held = &t;
        if (omp_get_thread_num() == 0) {
            body(arg);
            t.quit = 1;
            atomic_fetch_add_explicit(&t.go, 1, memory_order_release);
        } else {
            serve(&t, omp_get_thread_num());
        }
        held = NULL;
    }
#else
    body(arg);
#endif
}

/* 1 where a region opened here would have one thread: OpenMP's usual
 * size is 1, or this thread is inside as many active regions as may be
 * nested (one, unless the environment allows more) */
static int one_thread(void)
{
#ifdef _OPENMP
    return omp_get_max_threads() < 2 ||
           omp_get_active_level() >= omp_get_max_active_levels();
#else
    return 1;
#endif
}

int bptt_team_alone(int par)
{
    return !par || alone || (!held && one_thread());
}

void bptt_team_run(bptt_team_fn fn, void *arg, int par)
{
    /* a part given one thread runs here, without a region: a region of
       one thread and its barriers are pure overhead, a few percent of a
       short step (results/performance-log.md, "One thread opens no
       region") */
    if (bptt_team_alone(par)) {
        const int was = alone;
        alone = 1;
        fn(arg, 0, 1);
        alone = was;
        return;
    }
    team *t = held;
    if (t) {
        if (t->P > 1) {
            t->fn = fn;
            t->arg = arg;
            atomic_fetch_add_explicit(&t->go, 1, memory_order_release);
        }
        fn(arg, 0, t->P);
        const unsigned helpers = (unsigned)t->P - 1;
        unsigned d;
        while ((d = atomic_load_explicit(&t->done, memory_order_acquire)) <
               helpers)
            (void)wait_while(&t->done, d, t->spin);
        atomic_store_explicit(&t->done, 0, memory_order_relaxed);
        return;
    }
#ifdef _OPENMP
    _Pragma("omp parallel") fn(arg, omp_get_thread_num(), omp_get_num_threads());
#else
    fn(arg, 0, 1);
#endif
}

void bptt_team_barrier(void)
{
    if (alone)
        return;
    team *t = held;
    if (!t) {
#ifdef _OPENMP
        _Pragma("omp barrier")
#endif
        return;
    }
    const unsigned gen = atomic_load_explicit(&t->opened, memory_order_acquire);
    if (atomic_fetch_add_explicit(&t->arrived, 1, memory_order_acq_rel) + 1 ==
        (unsigned)t->P) {
        atomic_store_explicit(&t->arrived, 0, memory_order_relaxed);
        atomic_store_explicit(&t->opened, gen + 1, memory_order_release);
    } else {
        (void)wait_while(&t->opened, gen, t->spin);
    }
}

int bptt_threads_cap(void)
{
#ifdef _OPENMP
    const int n = omp_get_max_threads();
    if (n > BPTT_THREADS_MAX)
        omp_set_num_threads(BPTT_THREADS_MAX);
    return n;
#else
    return 1;
#endif
}
