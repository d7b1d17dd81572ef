/* aslimit.h: bptt under an address-space limit (ulimit -v, RLIMIT_AS), as
 * batch systems set it.  OpenBLAS reserves a buffer of 128 MiB per thread
 * (its BUFFER_SIZE on x86-64): at its start, before main, for every CPU
 * it may use, and later for each further thread that calls it; when the
 * limit leaves no room, its allocator retries without end and the process
 * spins at 100% CPU.  These measure the room first, so that a caller can
 * refuse (bptt: one line, exit 2, naming the limit that would do; main.c
 * and run.c) instead of spinning.  Library code: no output, no exit, no
 * allocation.
 *
 * Measured on x86-64 with Debian's OpenBLAS 0.3.21 (openmp): bptt needs
 * about 47 MiB plus 128.5 MiB for every OpenBLAS thread; the checks below
 * reserve 129 MiB a thread and 32 MiB more. */
#ifndef BPTT_TRAIN_ASLIMIT_H
#define BPTT_TRAIN_ASLIMIT_H

#include <stdint.h>

/* The address space one OpenBLAS thread reserves, with room to spare. */
#define BPTT_BLAS_THREAD_BYTES ((int64_t)129 << 20)
/* What the process needs beside them, with room to spare. */
#define BPTT_AS_SLACK_BYTES ((int64_t)32 << 20)

/* The threads OpenBLAS starts with: the first number of
 * OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS or OMP_NUM_THREADS (the first
 * set in envp, the environment: before main, getenv cannot be trusted
 * yet), at most the CPUs this process may run on, which it is otherwise
 * (1 to 64). */
int bptt_blas_start_threads(char **envp);

/* Whether an address-space limit is set: 1 with *left the bytes it still
 * leaves (the limit less what is mapped now), else 0. */
int bptt_address_space_left(int64_t *left, int64_t *limit);

/* 0 when bytes more of address space can be mapped now (a probe mapping
 * of that size is made and removed), -1 when not. */
int bptt_address_space_fits(int64_t bytes);

/* The ulimit -v (KiB) to advise when used bytes are mapped and need more
 * are wanted: with 64 MiB to spare (what a process maps before it checks
 * grows with the room it has), rounded up to 16 MiB. */
long long bptt_address_space_advice(int64_t used, int64_t need);

#endif
