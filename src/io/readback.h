/* readback.h: the one way bptt reads back a file it did not just write
 * itself: a sweep's config file, its FILE.partial and FILE.parts/K.jsonl,
 * a finished FILE, a plan given as JSON.  Every such file is untrusted
 * (doc/guarantees.md, the threat model): it may be huge, endless (a FIFO,
 * /dev/zero), a directory, cut short, or hold NUL and control bytes.
 *
 * Promises: bptt_readback takes only a regular file by name (fstat on the
 * opened descriptor, so a file swapped in after a check is still judged;
 * a descriptor the caller opened itself, such as stdin, may also be a
 * pipe or a terminal, never a directory), reads
 * at most max bytes of it and refuses it whole if it holds more, so the
 * time and memory spent are bounded by max; the text it returns is
 * NUL-terminated and holds no NUL.  bptt_text_check finds the first byte
 * that no bptt text file holds (NUL, a control byte other than tab,
 * newline and the CR of a CRLF, DEL) with its line and column, counted from 1.  Library code:
 * no output, no exit.
 */
#ifndef BPTT_READBACK_H
#define BPTT_READBACK_H

#include <stddef.h>

/* Where a text check stopped: the line and column (from 1) of the first
 * bad byte, and the byte. */
typedef struct {
    size_t line, column;
    unsigned char byte;
} bptt_text_where;

/* Why bptt_readback refused, for the caller's message. */
enum bptt_readback_why {
    BPTT_READBACK_OK = 0,
    BPTT_READBACK_ERRNO,    /* open or read failed: *err holds errno */
    BPTT_READBACK_NOTFILE,  /* a directory, a FIFO, a device, a socket */
    BPTT_READBACK_TOOBIG,   /* more than max bytes */
    BPTT_READBACK_NUL,      /* a NUL byte (*where says where) */
    BPTT_READBACK_NOMEM
};

/* path (or, when fd >= 0, the open descriptor fd, read from its current
 * offset) whole into *text (NUL-terminated, the caller frees it) and
 * *len.  Returns BPTT_READBACK_OK, or a reason with *text NULL: *err gets
 * errno for BPTT_READBACK_ERRNO, *where (may be NULL) the place of a NUL. */
int bptt_readback(const char *path, int fd, size_t max, char **text,
                  size_t *len, int *err, bptt_text_where *where);

/* 0 when text[0..len) holds only bytes a text file of bptt holds (tab,
 * newline, a carriage return right before a newline (a file written on
 * Windows), and 0x20 and up but DEL; bytes of 0x80 and up are left to the
 * parsers, which treat invalid UTF-8 as they document); else -1 with
 * *where (may be NULL) set to the first other byte. */
int bptt_text_check(const char *text, size_t len, bptt_text_where *where);

/* The line (from 1) holding offset off of text, and its column. */
void bptt_text_place(const char *text, size_t off, bptt_text_where *where);

#endif
