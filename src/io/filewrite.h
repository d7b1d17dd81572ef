/* filewrite.h: files written whole: a result that appears complete or not
 * at all (a sweep's FILE, its parts and job list), and the two steps that
 * make it last (every byte written, the directory synced).
 *
 * Promises: bptt_write_replace and bptt_write_new write the text into a
 * new file beside path (path.tmp.PID; one a killed process of the same
 * pid left is removed first, never written through), fsync it, and put
 * it in place: bptt_write_replace by rename (an existing path is
 * replaced), bptt_write_new by link, which fails with EEXIST when path
 * exists, so that no race can clobber a file that appeared meanwhile (on
 * a file system without hard links, a check and a rename).  Either way
 * the temporary file is gone afterwards and the directory is synced on
 * success.  Library code: no output, no exit; errors are errno values.
 */
#ifndef BPTT_FILEWRITE_H
#define BPTT_FILEWRITE_H

#include <stddef.h>

/* All of buf[0..n) to fd, across short writes and EINTR: 0 or errno. */
int bptt_write_all(int fd, const char *buf, size_t n);

/* fsync of the directory holding path, so that a rename or link in it
 * lasts: 0, or ENOMEM (nothing synced); other failures are ignored. */
int bptt_sync_dir(const char *path);

/* text[0..n) as path, replacing it: 0 or errno. */
int bptt_write_replace(const char *path, const char *text, size_t n);

/* text[0..n) as path, which must not exist: 0, EEXIST, or another errno
 * value. */
int bptt_write_new(const char *path, const char *text, size_t n);

#endif
