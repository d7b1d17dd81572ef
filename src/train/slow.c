/* slow.c: the slow level's store (slow.h): one unlinked file, slots
 * placed by a free list of holes, whole-state pwrite and pread, with
 * O_DIRECT through an aligned bounce buffer where asked. */
#define _GNU_SOURCE /* O_DIRECT, statx */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "bptt.h"
#include "slow.h"

/* Names the store file may take in a folder: "bptt-slow-PID-K", the first
 * K from 0 that is free.  A name already taken (a file, a link, a
 * folder) is skipped, never opened. */
#define STORE_TRIES 64

static double now(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int failed(bptt_slow_store *z, int err)
{
    if (!z->err)
        z->err = err ? err : EIO;
    return BPTT_EIO;
}

/* The store file, new, in the folder open as dfd, unlinked at once: its
 * descriptor, or -1 with *err set. */
static int make_store(int dfd, int *err)
{
    for (int k = 0; k < STORE_TRIES; k++) {
        char name[64];
        snprintf(name, sizeof name, "bptt-slow-%ld-%d", (long)getpid(), k);
        const int fd = openat(dfd, name,
                              O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
                                  O_CLOEXEC,
                              S_IRUSR | S_IWUSR);
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0) {
            *err = errno;
            return -1;
        }
        if (unlinkat(dfd, name, 0) != 0) {
            *err = errno;
            close(fd);
            return -1;
        }
        return fd;
    }
    *err = EEXIST;
    return -1;
}

/* The file in dir, or in a fresh temporary folder removed at once. */
static int open_file(bptt_slow_store *z, const char *dir)
{
    char tmp[4096];
    int made = 0, err = 0;
    if (!dir) {
        const char *base = getenv("TMPDIR");
        if (!base || !*base)
            base = "/tmp";
        const int n = snprintf(tmp, sizeof tmp, "%s/bptt-slow-XXXXXX", base);
        if (n < 0 || (size_t)n >= sizeof tmp)
            return failed(z, ENAMETOOLONG);
        if (!mkdtemp(tmp))
            return failed(z, errno);
        made = 1;
        dir = tmp;
    }
    const int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int fd = -1;
    if (dfd < 0)
        err = errno;
    else {
        fd = make_store(dfd, &err);
        close(dfd);
    }
    if (made && rmdir(tmp) != 0 && fd >= 0) {
        err = errno;
        close(fd);
        fd = -1;
    }
    if (fd < 0)
        return failed(z, err);
    z->fd = fd;
    return BPTT_OK;
}

/* Direct I/O alignments above this are refused (EINVAL): no
 * filesystem asks that much, and the bounce buffer would be wasteful. */
#define ALIGN_MAX ((size_t)1 << 20)

/* fd switched to O_DIRECT, with the alignment of slots (*align) and of
 * buffers the kernel takes as they are (*mem_align): 0, or the errno
 * (EINVAL where the filesystem refuses direct I/O). */
static int direct_fd(int fd, size_t *align, size_t *mem_align)
{
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT) != 0)
        return errno ? errno : EINVAL;
    *align = *mem_align = BPTT_SLOW_DIRECT_ALIGN;
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN)) {
        const size_t off_a = sx.stx_dio_offset_align;
        const size_t mem_a = sx.stx_dio_mem_align;
        if (off_a == 0 || mem_a == 0 || (off_a & (off_a - 1)) ||
            (mem_a & (mem_a - 1)) || off_a > ALIGN_MAX || mem_a > ALIGN_MAX)
            return EINVAL; /* no direct I/O on this file */
        if (off_a > *align)
            *align = off_a;
        if (mem_a > *align)
            *align = mem_a;
        *mem_align = mem_a;
    }
#endif
    return 0;
}

int bptt_steps_slow_direct(int fd, size_t *align)
{
    size_t a, m;
    const int err = direct_fd(fd, &a, &m);
    if (align)
        *align = err ? 0 : a;
    return err;
}

/* The open file switched to O_DIRECT, its alignments found and the bounce
 * buffer taken for states of max_bytes: 0, or the errno (EINVAL where the
 * filesystem refuses direct I/O, ENOMEM where the buffer is not there). */
static int go_direct(bptt_slow_store *z, bptt_mem *mem, size_t max_bytes)
{
    size_t align, mem_align;
    const int err = direct_fd(z->fd, &align, &mem_align);
    if (err)
        return err;
    if (max_bytes > SIZE_MAX - 2 * align)
        return ENOMEM;
    const size_t len = (max_bytes + align - 1) / align * align;
    z->bounce_block = bptt_mem_get(mem, BPTT_MEM_WORKING, len + align - 64);
    if (!z->bounce_block)
        return ENOMEM;
    const uintptr_t p = (uintptr_t)z->bounce_block;
    z->bounce = (unsigned char *)((p + align - 1) & ~(uintptr_t)(align - 1));
    z->bounce_len = len;
    z->align = align;
    z->mem_align = mem_align;
    z->direct = 1;
    return 0;
}

static void put_bounce(bptt_slow_store *z, bptt_mem *mem)
{
    if (z->bounce_block)
        bptt_mem_put(mem, z->bounce_block);
    z->bounce_block = NULL;
    z->bounce = NULL;
}

int bptt_slow_open(bptt_slow_store *z, bptt_mem *mem, size_t t,
                   const char *dir, int direct, size_t max_bytes)
{
    memset(z, 0, sizeof *z);
    z->fd = -1;
    if (t >= SIZE_MAX / 48 - 1)
        return BPTT_ENOMEM;
    const size_t n = t + 1;
    z->block = bptt_mem_get(mem, BPTT_MEM_WORKING, BPTT_SLOW_TABLE_BYTES(t));
    if (!z->block)
        return BPTT_ENOMEM;
    z->off[0] = z->block;
    z->off[1] = z->off[0] + n;
    z->hole = (bptt_slow_hole *)(z->off[1] + n);
    z->cap_holes = 2 * n;
    z->t = t;
    for (size_t i = 0; i < n; i++)
        z->off[0][i] = z->off[1][i] = -1;
    int rc = open_file(z, dir);
    if (rc == BPTT_OK && direct) {
        const int err = go_direct(z, mem, max_bytes);
        if (err) {
            put_bounce(z, mem);
            close(z->fd);
            z->fd = -1;
            rc = err == ENOMEM ? BPTT_ENOMEM : failed(z, err);
        }
    }
    if (rc != BPTT_OK) {
        bptt_mem_put(mem, z->block);
        z->block = NULL;
        return rc;
    }
    z->live = 1;
    return BPTT_OK;
}

void bptt_slow_close(bptt_slow_store *z, bptt_mem *mem)
{
    if (!z->live)
        return;
    close(z->fd); /* nothing to keep: an error here loses nothing */
    z->fd = -1;
    put_bounce(z, mem);
    bptt_mem_put(mem, z->block);
    z->block = NULL;
    z->live = 0;
}

/* ---- slots -------------------------------------------------------------- */

/* A slot of len bytes: the smallest hole that holds it (the lowest of
 * equal ones), else room at the end; -1 past what a file offset holds. */
static int64_t place(bptt_slow_store *z, int64_t len)
{
    size_t best = z->n_holes;
    for (size_t k = 0; k < z->n_holes; k++)
        if (z->hole[k].len >= len &&
            (best == z->n_holes || z->hole[k].len < z->hole[best].len))
            best = k;
    if (best < z->n_holes) {
        bptt_slow_hole *h = &z->hole[best];
        const int64_t at = h->at;
        h->at += len;
        h->len -= len;
        if (h->len == 0) {
            memmove(h, h + 1, (z->n_holes - best - 1) * sizeof *h);
            z->n_holes--;
        }
        return at;
    }
    if (len > INT64_MAX - z->end || (int64_t)(off_t)(z->end + len) !=
                                        z->end + len)
        return -1;
    const int64_t at = z->end;
    z->end += len;
    if (z->end > z->size)
        z->size = z->end;
    return at;
}

/* [at, at + len) free again: merged with the holes beside it, and given
 * back to the end where it reaches it. */
static void release(bptt_slow_store *z, int64_t at, int64_t len)
{
    size_t k = 0; /* the first hole past at */
    while (k < z->n_holes && z->hole[k].at < at)
        k++;
    bptt_slow_hole *h = z->hole;
    if (k > 0 && h[k - 1].at + h[k - 1].len == at) {
        k--; /* grows the hole before */
        h[k].len += len;
    } else {
        /* a hole for every slot at most, and at most one a slot: room */
        memmove(h + k + 1, h + k, (z->n_holes - k) * sizeof *h);
        h[k] = (bptt_slow_hole){at, len};
        z->n_holes++;
    }
    if (k + 1 < z->n_holes && h[k].at + h[k].len == h[k + 1].at) {
        h[k].len += h[k + 1].len;
        memmove(h + k + 1, h + k + 2, (z->n_holes - k - 2) * sizeof *h);
        z->n_holes--;
    }
    if (k + 1 == z->n_holes && h[k].at + h[k].len == z->end) {
        z->end = h[k].at;
        z->n_holes--;
    }
}

static int put_all(int fd, const unsigned char *p, size_t n, int64_t at)
{
    while (n > 0) {
        const ssize_t k = pwrite(fd, p, n, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno ? errno : EIO;
        if (k == 0)
            return EIO;
        p += k;
        n -= (size_t)k;
        at += k;
    }
    return 0;
}

static int get_all(int fd, unsigned char *p, size_t n, int64_t at)
{
    while (n > 0) {
        const ssize_t k = pread(fd, p, n, (off_t)at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno ? errno : EIO;
        if (k == 0)
            return EIO; /* the file ends before the slot does */
        p += k;
        n -= (size_t)k;
        at += k;
    }
    return 0;
}

/* The bytes a slot of a state of bytes takes: bytes, or with direct I/O
 * bytes rounded up to the alignment (bytes <= INT64_MAX / 2). */
static int64_t slot_len(const bptt_slow_store *z, size_t bytes)
{
    if (!z->direct)
        return (int64_t)bytes;
    return (int64_t)((bytes + z->align - 1) / z->align * z->align);
}

/* A whole state written from `from` (non-NULL) or read into `into`, at
 * the slot at at: 0 or the errno.  With direct I/O, straight from or into
 * the caller's buffer where it and bytes are aligned, else through the
 * bounce buffer (its padding written as zero bytes). */
static int move(bptt_slow_store *z, const void *from, void *into,
                size_t bytes, int64_t at)
{
    const size_t len = (size_t)slot_len(z, bytes);
    const uintptr_t p = from ? (uintptr_t)from : (uintptr_t)into;
    if (!z->direct || (len == bytes && p % z->mem_align == 0))
        return from ? put_all(z->fd, from, bytes, at)
                    : get_all(z->fd, into, bytes, at);
    if (len > z->bounce_len)
        return EINVAL; /* a state past the size the store was opened for */
    if (from) {
        memcpy(z->bounce, from, bytes);
        memset(z->bounce + bytes, 0, len - bytes);
        return put_all(z->fd, z->bounce, len, at);
    }
    const int err = get_all(z->fd, z->bounce, len, at);
    if (!err)
        memcpy(into, z->bounce, bytes);
    return err;
}

int bptt_slow_write(bptt_slow_store *z, int kind, size_t i, const void *buf,
                    size_t bytes)
{
    if (!z->live || i > z->t || z->off[kind][i] >= 0 ||
        bytes > (size_t)INT64_MAX / 2)
        return BPTT_EBADPLAN;
    const int64_t len = slot_len(z, bytes);
    const int64_t at = place(z, len);
    if (at < 0)
        return failed(z, EFBIG);
    const double t0 = now();
    const int err = move(z, buf, NULL, bytes, at);
    z->seconds += now() - t0;
    if (err) {
        release(z, at, len);
        return failed(z, err);
    }
    z->off[kind][i] = at;
    z->held += bytes;
    if (z->held > z->peak)
        z->peak = z->held;
    z->writes++;
    z->bytes_written += bytes;
    return BPTT_OK;
}

int bptt_slow_read(bptt_slow_store *z, int kind, size_t i, void *buf,
                   size_t bytes)
{
    if (!z->live || i > z->t || z->off[kind][i] < 0)
        return BPTT_EBADPLAN;
    const double t0 = now();
    const int err = move(z, NULL, buf, bytes, z->off[kind][i]);
    z->seconds += now() - t0;
    if (err)
        return failed(z, err);
    z->reads++;
    z->bytes_read += bytes;
    return BPTT_OK;
}

int bptt_slow_drop(bptt_slow_store *z, int kind, size_t i, size_t bytes)
{
    if (!z->live || i > z->t || z->off[kind][i] < 0)
        return BPTT_EBADPLAN;
    release(z, z->off[kind][i], slot_len(z, bytes));
    z->off[kind][i] = -1;
    z->held -= bytes;
    return BPTT_OK;
}

/* ---- a folder tried before a run ------------------------------------------ */

int bptt_steps_slow_check(const char *dir, int direct, uint64_t *free_bytes,
                          int *err)
{
    if (err)
        *err = 0;
    if (free_bytes)
        *free_bytes = 0;
    bptt_mem *mem = bptt_mem_alloc();
    if (!mem)
        return BPTT_ENOMEM;
    bptt_slow_store z;
    const int rc = bptt_slow_open(&z, mem, 0, dir, direct, 1);
    if (rc == BPTT_EIO && err)
        *err = z.err;
    struct statvfs v; /* the room where the file was made */
    if (rc == BPTT_OK && free_bytes && fstatvfs(z.fd, &v) == 0)
        *free_bytes = (uint64_t)v.f_bavail * (uint64_t)v.f_frsize;
    bptt_slow_close(&z, mem);
    bptt_mem_free(mem);
    return rc;
}
