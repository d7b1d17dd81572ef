/* cli_util.c: parsing and error reporting shared by the subcommands. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

int cli_error(int code, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "bptt%s%s: ", *cmd ? " " : "", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return code;
}

int cli_option_error(const char *cmd, int c, char **argv)
{
    if (c == ':')
        return cli_error(EXIT_USAGE, cmd, "%s needs a value (see bptt %s "
                         "--help)", argv[optind - 1], cmd);
    return cli_error(EXIT_USAGE, cmd, "unknown option '%s' (see bptt %s "
                     "--help)", argv[optind - 1], cmd);
}

int cli_no_operands(const char *cmd, int argc, char **argv)
{
    if (optind < argc)
        return cli_error(EXIT_USAGE, cmd, "unexpected argument '%s' (options "
                         "start with --; see bptt %s --help)", argv[optind],
                         cmd);
    return 0;
}

/* Parses a decimal integer filling the whole of text; 0 on success. */
static int parse_whole(const char *text, size_t n, int64_t *out)
{
    if (n == 0 || n > 30)
        return -1;
    char buf[32];
    memcpy(buf, text, n);
    buf[n] = '\0';
    if (buf[0] == '+' || buf[0] == ' ' || buf[0] == '\t')
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno == ERANGE)
        return -2;
    if (*end != '\0' || end == buf)
        return -1;
    *out = (int64_t)v;
    return 0;
}

int cli_parse_int(const char *cmd, const char *opt, const char *text,
                  int64_t lo, int64_t hi, int64_t *out)
{
    int64_t v;
    int rc = parse_whole(text, strlen(text), &v);
    if (rc == 0 && v >= lo && v <= hi) {
        *out = v;
        return 0;
    }
    if (rc == -1)
        return cli_error(EXIT_USAGE, cmd,
                         "%s: '%s' is not an integer (give a whole number "
                         "from %" PRId64 " to %" PRId64 ")",
                         opt, text, lo, hi);
    return cli_error(EXIT_USAGE, cmd,
                     "%s: %s is out of range (give a whole number from "
                     "%" PRId64 " to %" PRId64 ")",
                     opt, text, lo, hi);
}

int cli_parse_format(const char *cmd, const char *text,
                     enum output_format *out)
{
    if (strcmp(text, "text") == 0)
        *out = FORMAT_TEXT;
    else if (strcmp(text, "json") == 0)
        *out = FORMAT_JSON;
    else if (strcmp(text, "csv") == 0)
        *out = FORMAT_CSV;
    else
        return cli_error(EXIT_USAGE, cmd,
                         "--format: unknown format '%s' (use text, json or "
                         "csv)",
                         text);
    return 0;
}

int cli_parse_budget(const char *cmd, const char *text, int64_t full,
                     int64_t *out)
{
    const int64_t hi = INT64_MAX / 4;
    size_t n = strlen(text);
    int64_t v;
    if (n > 1 && text[n - 1] == '%') {
        /* a percentage, possibly with decimals: 5%, 2.5% */
        char buf[32];
        char *end;
        if (n - 1 >= sizeof buf)
            goto bad;
        memcpy(buf, text, n - 1);
        buf[n - 1] = '\0';
        if (buf[0] == '-' || buf[0] == '+' || buf[0] == ' ')
            goto bad;
        errno = 0;
        double p = strtod(buf, &end);
        if (*end != '\0' || end == buf || errno == ERANGE || !(p >= 0) ||
            p > 1e6)
            goto bad;
        /* exact for the common whole percentages: full * p / 100 */
        double units = (double)full * p / 100.0;
        int64_t whole;
        if (parse_whole(buf, strlen(buf), &whole) == 0)
            v = (int64_t)((__int128)full * whole / 100);
        else
            v = (int64_t)units;
        if (v > hi)
            goto range;
        *out = v;
        return 0;
    }
    if (n > 5 && strcmp(text + n - 5, "slots") == 0)
        n -= 5;
    int rc = parse_whole(text, n, &v);
    if (rc == -2 || (rc == 0 && (v < 0 || v > hi)))
        goto range;
    if (rc != 0)
        goto bad;
    *out = v;
    return 0;
bad:
    return cli_error(EXIT_USAGE, cmd,
                     "--memory: '%s' is not a budget (give slots, e.g. 200 "
                     "or 200slots, or a share of full BPTT's memory, e.g. "
                     "5%%; lists: 5%%,10%%)",
                     text);
range:
    return cli_error(EXIT_USAGE, cmd,
                     "--memory: %s is out of range (give 0 to %" PRId64
                     " slots, or a percentage up to 1000000%%)",
                     text, hi);
}

double cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
