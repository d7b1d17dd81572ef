/* lines.h: counting the lines a child `bptt` wrote, for the tests that run
 * it as a process (test_cli_*, test_sweep). */
#ifndef BPTT_TESTS_LINES_H
#define BPTT_TESTS_LINES_H

#include <string.h>

/* Lines of s (newlines). */
static inline int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The lines on stderr that bptt itself wrote ("bptt CMD: ..."): what the
 * tests count, so that a note from a library (OpenBLAS, the C library) on
 * some machine cannot change a count. */
static inline int own_lines(const char *s)
{
    int n = 0;
    for (const char *line = s; *line;) {
        n += strncmp(line, "bptt", 4) == 0 &&
             (line[4] == ' ' || line[4] == ':');
        const char *nl = strchr(line, '\n');
        if (!nl)
            break;
        line = nl + 1;
    }
    return n;
}

#endif
