/* readback.c: bounded, whole reads of untrusted files (readback.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/readback.h"

void bptt_text_place(const char *text, size_t off, bptt_text_where *where)
{
    if (!where)
        return;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    where->line = line;
    where->column = col;
    where->byte = (unsigned char)text[off];
}

int bptt_text_check(const char *text, size_t len, bptt_text_where *where)
{
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)text[i];
        const int crlf = c == '\r' && i + 1 < len && text[i + 1] == '\n';
        if ((c < 0x20 && c != '\t' && c != '\n' && !crlf) || c == 0x7f) {
            bptt_text_place(text, i, where);
            return -1;
        }
    }
    return 0;
}

/* The rest of fd, at most max bytes (one more is read to tell). */
static int read_bounded(int fd, size_t max, char **text, size_t *len,
                        int *err)
{
    size_t cap = max < 65536 ? max + 1 : 65536, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf)
        return BPTT_READBACK_NOMEM;
    for (;;) {
        if (n == cap) {
            if (cap > max) { /* max + 1 bytes are there: too big */
                free(buf);
                return BPTT_READBACK_TOOBIG;
            }
            size_t next = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *nb = realloc(buf, next + 1);
            if (!nb) {
                free(buf);
                return BPTT_READBACK_NOMEM;
            }
            buf = nb;
            cap = next;
        }
        const ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            *err = errno;
            free(buf);
            return BPTT_READBACK_ERRNO;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > max) {
        free(buf);
        return BPTT_READBACK_TOOBIG;
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return BPTT_READBACK_OK;
}

int bptt_readback(const char *path, int fd, size_t max, char **text,
                  size_t *len, int *err, bptt_text_where *where)
{
    *text = NULL;
    *len = 0;
    *err = 0;
    int own = -1;
    if (fd < 0) {
        /* O_NONBLOCK: opening a FIFO with no writer must not wait */
        own = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (own < 0) {
            *err = errno;
            return BPTT_READBACK_ERRNO;
        }
        fd = own;
    }
    struct stat sb;
    int rc;
    if (fstat(fd, &sb) != 0) {
        *err = errno;
        rc = BPTT_READBACK_ERRNO;
    } else if (own >= 0 ? !S_ISREG(sb.st_mode) : S_ISDIR(sb.st_mode)) {
        rc = BPTT_READBACK_NOTFILE;
    } else if (S_ISREG(sb.st_mode) && (uintmax_t)sb.st_size > (uintmax_t)max) {
        rc = BPTT_READBACK_TOOBIG;
    } else {
        if (own >= 0) { /* a regular file: reads block as files do */
            const int fl = fcntl(fd, F_GETFL);
            if (fl >= 0)
                fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        }
        rc = read_bounded(fd, max, text, len, err);
    }
    if (own >= 0)
        close(own);
    if (rc == BPTT_READBACK_OK) {
        const char *nul = memchr(*text, '\0', *len);
        if (nul) {
            bptt_text_place(*text, (size_t)(nul - *text), where);
            free(*text);
            *text = NULL;
            *len = 0;
            rc = BPTT_READBACK_NUL;
        }
    }
    return rc;
}
