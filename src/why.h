/* why.h: the one way library code says why it refused: a message into the
 * caller's buffer why[cap] (nothing when cap is 0 or why NULL), as printf
 * would, and the status returned.  Private to the libraries (a static
 * function in each file that includes it; no symbol is exported). */
#ifndef BPTT_WHY_H
#define BPTT_WHY_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

__attribute__((format(printf, 4, 5), unused)) static int
bptt_why(int status, char *why, size_t cap, const char *fmt, ...)
{
    if (why && cap) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, cap, fmt, ap);
        va_end(ap);
    }
    return status;
}

#endif
