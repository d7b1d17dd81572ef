/* slow.h: inside src/train only: the slow level of a two-level run
 * (twolevel.h), the store behind the executor's write_*, read_* and
 * drop_* actions (steps.c).
 *
 * The store is one file, made new in a folder (the caller's, or a fresh
 * temporary one) with O_CREAT | O_EXCL | O_NOFOLLOW, so that nothing
 * already there, a planted link included, is ever written to, and
 * unlinked at once (a temporary folder is removed at once too): nothing
 * is left behind however the run ends, and the open descriptor is the
 * only way to the bytes.  States are slots of the file, hidden_bytes or
 * internal_bytes long, placed by a free list of holes (best fit, holes
 * merged, a hole at the end given back), so a plan that drops its slow
 * states last-written first, as the two-level planner's do, never makes
 * the file longer than the most bytes it holds at once.  Every read and
 * write moves a whole state, looping over short transfers and EINTR.
 * The bookkeeping is one block of the tracked allocator
 * (BPTT_MEM_WORKING, BPTT_SLOW_TABLE_BYTES of it).
 *
 * Direct I/O (bptt_slow_open's direct): the file is switched to O_DIRECT
 * once made and unlinked (fcntl, so that a filesystem refusing it leaves
 * no file behind), and every slot starts and ends on the filesystem's
 * direct I/O alignment (statx STATX_DIOALIGN where the kernel says it,
 * never less than BPTT_SLOW_DIRECT_ALIGN of steps.h, which is a page and
 * a multiple of every sector size in use): a state is moved straight
 * from or into the caller's buffer where the buffer (to the kernel's
 * memory alignment) and its length are aligned, else through an aligned
 * bounce buffer, a second tracked block (BPTT_MEM_WORKING: the largest
 * state rounded up to the alignment A, plus A - 64 to align a 64-byte
 * aligned block), whose padding past the state is written as zero
 * bytes. */
#ifndef BPTT_TRAIN_SLOW_H
#define BPTT_TRAIN_SLOW_H

#include <stddef.h>
#include <stdint.h>

#include "mem.h"
#include "steps.h"

/* The working bytes of the store's tables for a plan of length t: a file
 * offset per step for h(i) and for s(i), and up to 2 (t + 1) holes of
 * two 8-byte numbers each. */
#define BPTT_SLOW_TABLE_BYTES(t) (48 * ((size_t)(t) + 1))

typedef struct {
    int64_t at, len;
} bptt_slow_hole;

typedef struct {
    int live;        /* a file is open (fd) and the tables taken */
    int fd;
    int direct;      /* the file is open with O_DIRECT */
    size_t align;    /* direct: slots' alignment (offsets, lengths) */
    size_t mem_align; /* direct: a buffer's alignment for the kernel */
    void *bounce_block;     /* direct: the tracked block of the bounce */
    unsigned char *bounce;  /* direct: in it, aligned to align */
    size_t bounce_len;      /* direct: its usable bytes, aligned */
    void *block;     /* the tracked block of off[] and hole[] */
    int64_t *off[2]; /* (t+1) each: where h(i) [0] and s(i) [1] lie in
                        the file; -1 for a state not there */
    bptt_slow_hole *hole; /* free ranges below end, by offset */
    size_t n_holes, cap_holes;
    size_t t;
    int64_t end;  /* bytes of the file in use: every slot lies below */
    int64_t size; /* the file's length: end at its most */
    size_t held, peak; /* bytes in slots now and at most */
    /* what the run moved, and the time spent in pwrite and pread */
    int64_t writes, reads;
    uint64_t bytes_written, bytes_read;
    double seconds;
    int err; /* errno of the first failure, 0 if none */
} bptt_slow_store;

/* Takes the tables from mem and makes the file in dir (NULL: a fresh
 * folder made by mkdtemp under $TMPDIR, or /tmp where it is unset or
 * empty, and removed before this returns); direct nonzero: with O_DIRECT
 * and a bounce buffer for states of at most max_bytes.  BPTT_OK;
 * BPTT_ENOMEM; or BPTT_EIO with z->err set (the folder cannot be opened,
 * is no folder, cannot be written, ...; EINVAL where the filesystem
 * refuses O_DIRECT).  On failure nothing is held and nothing is left in
 * any folder. */
int bptt_slow_open(bptt_slow_store *z, bptt_mem *mem, size_t t,
                   const char *dir, int direct, size_t max_bytes);

/* Writes the bytes of state i of kind (0 hidden, 1 internal) to a new
 * slot.  BPTT_EIO with z->err on failure (the slot is then given back);
 * BPTT_EBADPLAN when the state is there already. */
int bptt_slow_write(bptt_slow_store *z, int kind, size_t i, const void *buf,
                    size_t bytes);

/* Reads state i of kind back into buf.  BPTT_EIO with z->err on failure;
 * BPTT_EBADPLAN when the state is not there. */
int bptt_slow_read(bptt_slow_store *z, int kind, size_t i, void *buf,
                   size_t bytes);

/* Gives the slot of state i of kind back; BPTT_EBADPLAN when the state
 * is not there. */
int bptt_slow_drop(bptt_slow_store *z, int kind, size_t i, size_t bytes);

/* Closes the file and gives the tables back to mem; nothing when the
 * store is not live.  The counts stay. */
void bptt_slow_close(bptt_slow_store *z, bptt_mem *mem);

#endif
