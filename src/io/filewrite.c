/* filewrite.c: files written whole (filewrite.h): a temporary file beside
 * the result, fsynced, then renamed or linked into place. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/filewrite.h"
#include "strbuf.h"

int bptt_write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        const ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

int bptt_sync_dir(const char *path)
{
    const size_t len = strlen(path) + 1;
    char *d = malloc(len);
    if (!d)
        return ENOMEM;
    memcpy(d, path, len);
    char *slash = strrchr(d, '/');
    const char *dir = ".";
    if (slash == d)
        dir = "/";
    else if (slash) {
        *slash = '\0';
        dir = d;
    }
    const int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(d);
    return 0;
}

/* text into a new path.tmp.PID (one left by a killed process of the same
 * pid is removed first: never written through), fsynced: 0 with *tmp set,
 * or errno. */
static int write_temp(const char *path, const char *text, size_t n,
                      bptt_strbuf *tmp)
{
    bptt_strbuf_printf(tmp, "%s.tmp.%ld", path, (long)getpid());
    if (tmp->failed)
        return ENOMEM;
    int fd = open(tmp->p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST && unlink(tmp->p) == 0)
        fd = open(tmp->p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return errno;
    int err = bptt_write_all(fd, text, n);
    if (!err && fsync(fd) != 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (err)
        unlink(tmp->p);
    return err;
}

int bptt_write_replace(const char *path, const char *text, size_t n)
{
    bptt_strbuf tmp = {0};
    int err = write_temp(path, text, n, &tmp);
    if (!err && rename(tmp.p, path) != 0) {
        err = errno;
        unlink(tmp.p);
    }
    bptt_strbuf_free(&tmp);
    return err ? err : bptt_sync_dir(path);
}

int bptt_write_new(const char *path, const char *text, size_t n)
{
    bptt_strbuf tmp = {0};
    int err = write_temp(path, text, n, &tmp);
    if (!err) {
        /* link, unlike rename, fails when path exists */
        struct stat sb;
        if (link(tmp.p, path) != 0) {
            err = errno;
            /* a file system without hard links: the check and the rename
             * are two steps there */
            if ((err == EPERM || err == ENOTSUP || err == EOPNOTSUPP ||
                 err == EMLINK) && lstat(path, &sb) != 0 && errno == ENOENT)
                err = rename(tmp.p, path) == 0 ? 0 : errno;
        }
        unlink(tmp.p);
    }
    bptt_strbuf_free(&tmp);
    return err ? err : bptt_sync_dir(path);
}

/* The directory part of path ("." when it has none) into buf. */
static void dir_of(const char *path, char *buf, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, cap, ".");
    else if (slash == path)
        snprintf(buf, cap, "/");
    else
        snprintf(buf, cap, "%.*s", (int)(slash - path), path);
}

/* Whether the directory path holds nothing but . and .. */
static int empty_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d)
        return 0;
    struct dirent *e;
    int empty = 1;
    while (empty && (e = readdir(d)) != NULL)
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    closedir(d);
    return empty;
}

int bptt_output_checked(const char *path, int is_dir, bptt_output_check *c)
{
    c->name_max = 255;
    c->err = 0;
    dir_of(path, c->dir, sizeof c->dir);
    if (!*path)
        return BPTT_OUTPUT_EMPTY;
    if (path[strlen(path) - 1] == '/' && !is_dir)
        return BPTT_OUTPUT_SLASH;
    /* NAME.tmp.PID (a sweep: NAME.partial.tmp.PID) is written beside it
     * first: a name that the file system cannot hold with that suffix is
     * refused now, not after the work */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const long name_max = pathconf(c->dir, _PC_NAME_MAX);
    if (name_max > 0)
        c->name_max = name_max;
    if (strlen(base) + BPTT_OUTPUT_SUFFIX > (size_t)c->name_max)
        return BPTT_OUTPUT_NAME_LONG;
    if (strlen(path) + BPTT_OUTPUT_SUFFIX >= 4096)
        return BPTT_OUTPUT_PATH_LONG;
    struct stat sb;
    if (stat(path, &sb) != 0 && errno == ENAMETOOLONG)
        return BPTT_OUTPUT_DIR_NAME_LONG;
    /* a link where the output goes, dangling or not: stat() follows it
     * (a dangling one looks absent), and the output would fail on it only
     * at the end (link(): EEXIST, mkdir: EEXIST, a directory's rename:
     * ENOTDIR) or replace the link (rename) rather than write the file
     * the user meant; lstat() of the name without trailing slashes, which
     * would make it follow the link */
    char name[4096];
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    memcpy(name, path, len);
    name[len] = '\0';
    if (lstat(name, &sb) == 0 && S_ISLNK(sb.st_mode))
        return BPTT_OUTPUT_LINK;
    if (stat(path, &sb) == 0) {
        if (is_dir && !(S_ISDIR(sb.st_mode) && empty_dir(path)))
            return BPTT_OUTPUT_NOT_EMPTY;
        /* it is replaced by a rename: never a directory or a device */
        if (!is_dir && !S_ISREG(sb.st_mode))
            return BPTT_OUTPUT_NOT_FILE;
    }
    if (stat(c->dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return BPTT_OUTPUT_NO_DIR;
    if (access(c->dir, W_OK | X_OK) != 0) {
        c->err = errno;
        return BPTT_OUTPUT_NO_WRITE;
    }
    return BPTT_OUTPUT_OK;
}
