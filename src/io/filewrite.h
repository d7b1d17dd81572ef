/* filewrite.h: files written whole: a result that appears complete or not
 * at all (a sweep's FILE, its parts and job list), the two steps that make
 * it last (every byte written, the directory synced), and whether a path
 * can take such an output, checked before any work.
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

/* ---- before the work ------------------------------------------------------ */

/* The most the writers add to an output's name while writing it:
 * ".partial.tmp." and a process id of up to 10 digits. */
#define BPTT_OUTPUT_SUFFIX 23

/* What keeps path from taking an output written whole at the end. */
enum bptt_output_problem {
    BPTT_OUTPUT_OK,
    BPTT_OUTPUT_EMPTY,         /* the name is empty */
    BPTT_OUTPUT_SLASH,         /* a file's name ends in '/' */
    BPTT_OUTPUT_NAME_LONG,     /* the name with BPTT_OUTPUT_SUFFIX is past
                                  the file system's name_max */
    BPTT_OUTPUT_PATH_LONG,     /* the path with it is past 4095 bytes */
    BPTT_OUTPUT_DIR_NAME_LONG, /* a directory's name in it is too long */
    BPTT_OUTPUT_NOT_EMPTY,     /* is_dir: exists, not an empty directory */
    BPTT_OUTPUT_NOT_FILE,      /* exists, not a regular file (a rename
                                  would replace a directory or a device) */
    BPTT_OUTPUT_LINK,          /* a symbolic link, dangling or not: never
                                  written through nor replaced, even where
                                  --force replaces a regular file */
    BPTT_OUTPUT_NO_DIR,        /* its directory does not exist */
    BPTT_OUTPUT_NO_WRITE       /* its directory is not writable (err) */
};

typedef struct {
    long name_max;  /* the file system's longest name (255 when unknown) */
    int err;        /* BPTT_OUTPUT_NO_WRITE: errno */
    char dir[4096]; /* path's directory ("." when it names none) */
} bptt_output_check;

/* Whether path (with is_dir: a directory, else a file) can take an output
 * written whole at the end, checked before any work: the name is not
 * empty; it is not a symbolic link (dangling or not: the final rename or
 * link would fail on it, or replace a link the user made, only after the
 * work); if it exists it is a regular file (is_dir: an empty directory);
 * its directory exists and is writable; the name, with what the writers
 * add to it (BPTT_OUTPUT_SUFFIX), fits the file system's limits.  Returns
 * BPTT_OUTPUT_OK or the first problem, with *c filled. */
int bptt_output_checked(const char *path, int is_dir, bptt_output_check *c);

#endif
