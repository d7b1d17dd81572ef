/* sweep_read.c: what `bptt sweep` reads back and trusts nothing of: its
 * --config file, FILE.partial, the parts of FILE.parts and a finished
 * FILE.  Every such file is read whole through bptt_readback (regular
 * files only, bounded, no NUL), with its errors said here; every record
 * in it is then checked against the grid before it is kept
 * (bptt_record_check, records.h, says what is checked). */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "io/readback.h"
#include "json.h"
#include "sweep.h"

#define CMD SWEEP_CMD

int sweep_readback(const char *opt, const char *path, int fd, size_t max,
                   int code, const char *hint, char **text, size_t *len)
{
    int err = 0;
    bptt_text_where at = {0, 0, 0};
    const int why = bptt_readback(path, fd, max, text, len, &err, &at);
    /* "--config: 'FILE' is ..." or "FILE is ..." */
    char pre[64];
    snprintf(pre, sizeof pre, "%s%s", opt ? opt : "", opt ? ": " : "");
    const char *q = opt ? "'" : "";
    const int fail = code == SWEEP_MISSING_OK ? 1 : code;
    switch (why) {
    case BPTT_READBACK_OK: return 0;
    case BPTT_READBACK_ERRNO:
        if (err == ENOENT && code == SWEEP_MISSING_OK)
            return SWEEP_MISSING_OK;
        if (err == EISDIR)
            return cli_error(EXIT_USAGE, CMD, "%s%s%s%s is a directory, not "
                             "a file; %s", pre, q, path, q, hint);
        return cli_error(fail, CMD, "%scannot read %s%s%s (%s); %s", pre, q,
                         path, q, strerror(err), hint);
    case BPTT_READBACK_NOTFILE:
        return cli_error(EXIT_USAGE, CMD, "%s%s%s%s is %s, not a file; %s",
                         pre, q, path, q, cli_file_kind(path, fd), hint);
    case BPTT_READBACK_TOOBIG:
        return cli_error(EXIT_USAGE, CMD, "%s%s%s%s holds more than %zu "
                         "bytes, more than any such file of this sweep; %s",
                         pre, q, path, q, max, hint);
    case BPTT_READBACK_NUL:
        return cli_error(EXIT_USAGE, CMD, "%s%s:%zu:%zu holds a NUL byte; "
                         "%s", pre, path, at.line, at.column, hint);
    default:
        cli_error(1, CMD, "out of memory");
        exit(1);
    }
}
