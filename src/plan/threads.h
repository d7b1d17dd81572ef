/* threads.h: the planner's threads, plain POSIX threads, so that the core
 * library needs no OpenMP runtime (libc and libm only).
 *
 * How many: planner_threads(asked) is asked where it is 1 or more, else
 * the first number of OMP_NUM_THREADS where that is set (the knob the
 * command line and the training library read too), else the CPUs online;
 * never more than BPTT_THREADS_MAX (budget.h) and never less than 1.
 *
 * Running: planner_run(n, fn, arg) calls fn(arg) on n threads, the
 * calling thread one of them, and returns when every call has.  The work
 * is shared through arg (a counter the calls take from), so a thread the
 * system refuses to start only makes it slower: the caller's own call
 * does what no other thread took. */
#ifndef BPTT_PLAN_THREADS_H
#define BPTT_PLAN_THREADS_H

int planner_threads(int asked);
void planner_run(int n, void (*fn)(void *arg), void *arg);

#endif
