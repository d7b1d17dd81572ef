/* team.h: inside src/train only: threads held for a whole run of steps.
 *
 * Opening an OpenMP parallel region, and meeting at an OpenMP barrier,
 * costs a sizeable share of a training step on the kernel's path, which
 * is one short region: too much to pay at every step (the figures:
 * results/performance-log.md, "A team held for the run").  So
 * bptt_team_hold opens one region for a whole run of steps: the calling
 * thread runs the body (the executor), while the others wait, spinning,
 * for the parts the body hands them with bptt_team_run, and meet at
 * bptt_team_barrier; both are a store and a load on one cache line each.
 * Where no team is held, bptt_team_run opens an OpenMP region as before,
 * so the parts run the same code with the same thread numbers either
 * way, and their results have the same bits (results/performance-log.md,
 * "A team held for the run"). */
#ifndef BPTT_TRAIN_TEAM_H
#define BPTT_TRAIN_TEAM_H

/* Caps the calling thread's OpenMP thread count (OMP_NUM_THREADS, or
 * omp_set_num_threads) at BPTT_THREADS_MAX and returns what it was: above
 * the cap when it capped (the caller may say so); 1 without OpenMP. */
int bptt_threads_cap(void);

/* One thread's part of a step: q of P threads. */
typedef void (*bptt_team_fn)(void *arg, int q, int P);

/* Runs body(arg) on this thread while the other threads of an OpenMP
 * region of the usual size (omp_get_max_threads) wait for bptt_team_run;
 * returns when body has returned and they have left.  Just body(arg)
 * where that would be one thread (a build without OpenMP, one thread,
 * or a call from inside a parallel region) or where this thread holds a
 * team already. */
void bptt_team_hold(void (*body)(void *), void *arg);

/* fn(arg, q, P) on every thread of the team this thread holds (q = 0
 * here), returning when every part has returned; where it holds none, in
 * an OpenMP parallel region (q its thread number).  With par 0, or
 * where such a region would have one thread (one thread asked for, or
 * no more regions may nest here), just fn(arg, 0, 1) on this thread,
 * whose barriers then return at once. */
void bptt_team_run(bptt_team_fn fn, void *arg, int par);

/* 1 when bptt_team_run(fn, arg, par) here would run the part alone, as
 * fn(arg, 0, 1) on this thread; else 0 (its P may still come out 1 where
 * OpenMP gives a region fewer threads than asked). */
int bptt_team_alone(int par);

/* Inside a part: returns when every thread of its team has reached it
 * (an OpenMP barrier where the part runs in a plain region). */
void bptt_team_barrier(void);

#endif
