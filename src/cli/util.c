/* cli_util.c: parsing and error reporting shared by the subcommands. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "numbers.h"
#include "online.h"
#include "twolevel.h"
#include "cell.h"
#include "cli.h"
#include "run.h"
#include "io/filewrite.h"

void cli_put_escaped(FILE *f, const char *text, size_t n)
{
    bptt_strbuf b = {0};
    bptt_strbuf_escaped(&b, text, n);
    if (b.p)
        fwrite(b.p, 1, b.n, f);
    bptt_strbuf_free(&b);
}

/* "bptt CMD: " and the message, escaped, as one line on stderr. */
static void say(const char *cmd, const char *fmt, va_list ap)
{
    char small[1024];
    va_list copy;
    va_copy(copy, ap);
    const int n = vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    char *text = small;
    if (n >= (int)sizeof small && (text = malloc((size_t)n + 1)) != NULL)
        vsnprintf(text, (size_t)n + 1, fmt, ap);
    if (!text) /* no memory for a long message: its start */
        text = small;
    fprintf(stderr, "bptt%s%s: ", *cmd ? " " : "", cmd);
    cli_put_escaped(stderr, text, n < 0 ? 0 : strlen(text));
    fputc('\n', stderr);
    if (text != small)
        free(text);
}

int cli_error(int code, const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, fmt, ap);
    va_end(ap);
    return code;
}

void cli_note(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(cmd, fmt, ap);
    va_end(ap);
}

int cli_option_error(const char *cmd, int c, char **argv)
{
    if (c == ':')
        return cli_error(EXIT_USAGE, cmd, "%s needs a value (see bptt %s "
                         "--help)", argv[optind - 1], cmd);
    return cli_error(EXIT_USAGE, cmd, "unknown option '%s' (see bptt %s "
                     "--help)", argv[optind - 1], cmd);
}

/* After '?': the error.  A short option in a cluster ("-xy") leaves optind
 * on the cluster, one at its end moves past it; a long one ("--xyz[=v]")
 * moves past it, and the options it abbreviates are named when there are
 * several, or when it gives a value to an option that takes none. */
static int unknown_option(const char *cmd, int argc, char **argv,
                          const struct option *opts)
{
    const char *text = argv[optind - 1];
    const int in_cluster = optind < argc && argv[optind][0] == '-' &&
                           argv[optind][1] != '-' && optopt > 0 &&
                           optopt < 128 && strchr(argv[optind], optopt);
    if (strncmp(text, "--", 2) != 0 || in_cluster)
        return cli_error(EXIT_USAGE, cmd, "unknown option '-%c' (options are "
                         "long, e.g. --length; see bptt %s --help)",
                         optopt > 0 && optopt < 128 ? optopt : '?', cmd);
    const char *name = text + 2;
    const size_t n = strcspn(name, "=");
    char list[256] = "";
    int hits = 0;
    const struct option *hit = NULL;
    for (const struct option *o = opts; o->name; o++)
        if (n > 0 && strncmp(o->name, name, n) == 0) {
            if (strlen(o->name) == n) { /* an exact name wins */
                hits = 1;
                hit = o;
                break;
            }
            const size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s--%s",
                     hits ? ", " : "", o->name);
            hits++;
            hit = o;
        }
    if (hits > 1)
        return cli_error(EXIT_USAGE, cmd, "option '%.*s' is ambiguous: it "
                         "abbreviates %s (give more of the name)",
                         (int)(n + 2), text, list);
    if (hits == 1 && name[n] == '=' && hit->has_arg == no_argument)
        return cli_error(EXIT_USAGE, cmd, "--%s takes no value ('%s'; give "
                         "--%s alone)", hit->name, text, hit->name);
    return cli_error(EXIT_USAGE, cmd, "unknown option '%s' (see bptt %s "
                     "--help)", text, cmd);
}

int cli_getopt(const char *cmd, int argc, char **argv,
               const struct option *opts, const char **seen, int *rc)
{
    int idx = -1;
    optopt = 0;
    const int c = getopt_long(argc, argv, ":h", opts, &idx);
    if (c == -1)
        return -1;
    if (c == ':') {
        *rc = cli_option_error(cmd, c, argv);
        return CLI_OPT_ERROR;
    }
    if (c == '?') {
        *rc = unknown_option(cmd, argc, argv, opts);
        return CLI_OPT_ERROR;
    }
    if (idx < 0 || opts[idx].has_arg != required_argument)
        return c;
    const char *name = opts[idx].name;
    /* "--length --memory 5": the value is the next option */
    if (optarg[0] == '-' && optarg[1] == '-' &&
        isalpha((unsigned char)optarg[2])) {
        *rc = cli_error(EXIT_USAGE, cmd, "--%s needs a value, not the option "
                        "'%s' (e.g. --%s VALUE; see bptt %s --help)", name,
                        optarg, name, cmd);
        return CLI_OPT_ERROR;
    }
    if (idx < CLI_MAX_OPTIONS) {
        if (seen[idx] && strcmp(seen[idx], optarg) != 0) {
            *rc = cli_error(EXIT_USAGE, cmd, "--%s is given twice ('%s', "
                            "then '%s'); give it once", name, seen[idx],
                            optarg);
            return CLI_OPT_ERROR;
        }
        seen[idx] = optarg;
    }
    return c;
}

int cli_no_operands(const char *cmd, int rc, int argc, char **argv)
{
    if (rc)
        return rc;
    if (optind < argc)
        return cli_error(EXIT_USAGE, cmd, "unexpected argument '%s' (options "
                         "start with --; see bptt %s --help)", argv[optind],
                         cmd);
    return 0;
}

int cli_length_given(const char *cmd, int64_t length)
{
    if (length == 0)
        return cli_error(EXIT_USAGE, cmd, "--length is required (e.g. "
                         "--length 1000)");
    return 0;
}

int cli_parse_int(const char *cmd, const char *opt, const char *text,
                  int64_t lo, int64_t hi, int64_t *out)
{
    int64_t v;
    int rc = bptt_parse_whole(text, strlen(text), &v);
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

size_t cli_online_strategy_names(char *buf, size_t cap, const char *last)
{
    /* the strategies the online planner takes: those it does not call
     * unknown (a budget of 0 is refused before anything is allocated) */
    const char *names[16];
    size_t n = 0;
    for (size_t i = 0; bptt_strategies[i] && n < 16; i++) {
        bptt_online *o = NULL;
        const int rc = bptt_online_new(&o, bptt_strategies[i]->name, 1, 1, 0,
                                       NULL);
        bptt_online_free(o);
        if (rc != BPTT_EUNKNOWN && rc != BPTT_EINVAL)
            names[n++] = bptt_strategies[i]->name;
    }
    return bptt_names_text(buf, cap, names, n, last);
}

int cli_twolevel_takes(const char *name)
{
    /* the library sizes a table of the strategies it plans, and no other */
    const bptt_slow_level none = {0, 0, 0};
    return bptt_twolevel_bytes_needed(name, 1, 1, 1, 1, &none) != 0;
}

size_t cli_twolevel_strategy_names(char *buf, size_t cap, const char *last)
{
    const char *names[16];
    size_t n = 0;
    for (size_t i = 0; bptt_strategies[i] && n < 16; i++)
        if (cli_twolevel_takes(bptt_strategies[i]->name))
            names[n++] = bptt_strategies[i]->name;
    return bptt_names_text(buf, cap, names, n, last);
}

void cli_usage(FILE *f, const char *text)
{
    static const char *const keys[] = {"@STRATEGIES@", "@CELLS@",
                                       "@ONLINE@", "@TWOLEVEL@",
                                       "@COSTMAX@"};
    enum { N_KEYS = sizeof keys / sizeof keys[0] };
    char list[N_KEYS][256];
    bptt_strategy_names(list[0], sizeof list[0], " or ");
    bptt_cell_names(list[1], sizeof list[1], " or ");
    cli_online_strategy_names(list[2], sizeof list[2], " or ");
    cli_twolevel_strategy_names(list[3], sizeof list[3], " or ");
    snprintf(list[4], sizeof list[4], "%.0f", BPTT_SLOW_COST_MAX);
    while (*text) {
        const char *at = strchr(text, '@');
        int k = -1;
        for (int i = 0; at && i < N_KEYS; i++)
            if (strncmp(at, keys[i], strlen(keys[i])) == 0)
                k = i;
        if (k < 0) {
            const size_t n = at ? (size_t)(at - text) + 1 : strlen(text);
            fwrite(text, 1, n, f);
            text += n;
            continue;
        }
        fwrite(text, 1, (size_t)(at - text), f);
        fputs(list[k], f);
        text = at + strlen(keys[k]);
    }
}

int cli_unknown_strategy(const char *cmd, const char *opt, const char *name)
{
    char list[256];
    bptt_strategy_names(list, sizeof list, " or ");
    return cli_error(EXIT_USAGE, cmd, "%s: unknown strategy '%s' (use %s)",
                     opt, name, list);
}

int cli_unknown_cell(const char *cmd, const char *opt, const char *name)
{
    char list[256];
    bptt_cell_names(list, sizeof list, " or ");
    return cli_error(EXIT_USAGE, cmd, "%s: unknown cell '%s' (use %s)", opt,
                     name, list);
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

int cli_budget(const char *cmd, const char *opt, const char *text,
               const bptt_budget_sizes *z, int flags,
               bptt_budget_resolved *r)
{
    char why[512];
    if (bptt_budget_resolve(text, z, flags, r, why, sizeof why) == BPTT_OK)
        return 0;
    return cli_error(EXIT_USAGE, cmd, "%s: %s", opt, why);
}

double cli_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *cli_file_kind(const char *path, int fd)
{
    struct stat sb;
    if ((fd >= 0 ? fstat(fd, &sb) : stat(path, &sb)) != 0)
        return "not there";
    if (S_ISDIR(sb.st_mode))
        return "a directory";
    if (S_ISFIFO(sb.st_mode))
        return "a FIFO (named pipe)";
    if (S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode))
        return "a device";
    if (S_ISSOCK(sb.st_mode))
        return "a socket";
    return S_ISREG(sb.st_mode) ? "a regular file" : "not a regular file";
}

int cli_check_output(const char *cmd, const char *opt, const char *path,
                     int is_dir)
{
    bptt_output_check c;
    const size_t suffix = BPTT_OUTPUT_SUFFIX;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    switch (bptt_output_checked(path, is_dir, &c)) {
    case BPTT_OUTPUT_OK:
        return 0;
    case BPTT_OUTPUT_EMPTY:
        return cli_error(EXIT_USAGE, cmd, "%s: empty %s name", opt,
                         is_dir ? "directory" : "file");
    case BPTT_OUTPUT_SLASH:
        return cli_error(EXIT_USAGE, cmd, "%s: '%s' names a directory; give "
                         "a file name, e.g. %sout.csv", opt, path, path);
    case BPTT_OUTPUT_NAME_LONG:
        return cli_error(EXIT_USAGE, cmd, "%s: the name '%.40s...' is %zu "
                         "bytes; a file name here holds at most %ld, and bptt "
                         "adds up to %zu while writing it (give a name of at "
                         "most %zu bytes)", opt, base, strlen(base),
                         c.name_max, suffix, (size_t)c.name_max - suffix);
    case BPTT_OUTPUT_PATH_LONG:
        return cli_error(EXIT_USAGE, cmd, "%s: the path '%.40s...' is %zu "
                         "bytes, too long for this system with the %zu bptt "
                         "adds (give a path of at most %zu bytes)", opt, path,
                         strlen(path), suffix, (size_t)4095 - suffix);
    case BPTT_OUTPUT_DIR_NAME_LONG:
        return cli_error(EXIT_USAGE, cmd, "%s: a directory name in '%.60s...' "
                         "is too long for this file system (give shorter "
                         "names)", opt, path);
    case BPTT_OUTPUT_NOT_EMPTY:
        return cli_error(EXIT_USAGE, cmd, "%s: '%s' exists and is not an "
                         "empty directory (remove it or name another)", opt,
                         path);
    case BPTT_OUTPUT_NOT_FILE:
        return cli_error(EXIT_USAGE, cmd, "%s: '%s' exists and is not a "
                         "regular file (name a file to write)", opt, path);
    case BPTT_OUTPUT_LINK:
        return cli_error(EXIT_USAGE, cmd, "%s: '%s' is a symbolic link, "
                         "which bptt neither writes through nor replaces; "
                         "name a %s that is not a link, or remove the link",
                         opt, path, is_dir ? "directory" : "file");
    case BPTT_OUTPUT_NO_DIR:
        return cli_error(EXIT_USAGE, cmd, "%s: the directory of '%s' does not "
                         "exist (make it first)", opt, path);
    default:
        return cli_error(EXIT_USAGE, cmd, "%s: cannot write in '%s' (%s); "
                         "name a %s in a writable directory", opt, c.dir,
                         strerror(c.err), is_dir ? "directory" : "file");
    }
}

/* run.h: need bytes against this machine's memory, for run, compare and
 * run --online (here, beside the other shared checks, so that none of
 * them calls into another's file) */
int run_fits(const char *cmd, const char *what, double need,
             const char *advice)
{
    double have;
    if (bptt_memory_fits(need, 1, &have) == BPTT_OK)
        return 0;
    char n[32], h[32];
    return cli_error(EXIT_USAGE, cmd, "%s %s, more than this machine's %s; %s",
                     what, bptt_bytes_text(n, sizeof n, need),
                     bptt_bytes_text(h, sizeof h, have), advice);
}

int cli_parse_cost(const char *cmd, const char *opt, const char *text,
                   double *out)
{
    const char *why = bptt_number_trouble(text);
    if (why && strcmp(why, "exponents are not read") == 0)
        why = NULL; /* "1e-3" is read here */
    double v = 0;
    if (bptt_parse_real(text, &v) != 0 || !(v >= 0) ||
        !(v <= BPTT_SLOW_COST_MAX))
        return cli_error(EXIT_USAGE, cmd, "%s: '%s' is not a cost (give a "
                         "number of forward ops a hidden state from 0 to "
                         "%.0f, e.g. 2 or 0.5)%s%s", opt, text,
                         BPTT_SLOW_COST_MAX, why ? ": " : "", why ? why : "");
    *out = v;
    return 0;
}

int cli_check_folder(const char *cmd, const char *opt, const char *dir)
{
    struct stat sb;
    if (!*dir)
        return cli_error(EXIT_USAGE, cmd, "%s: empty folder name (give an "
                         "existing folder, or leave %s out for a temporary "
                         "one)", opt, opt);
    if (stat(dir, &sb) != 0) {
        const int e = errno;
        if (e == ENOENT)
            return cli_error(EXIT_USAGE, cmd, "%s: '%s' does not exist (give "
                             "an existing folder, or leave %s out for a "
                             "temporary one)", opt, dir, opt);
        return cli_error(EXIT_USAGE, cmd, "%s: cannot reach '%s': %s (give "
                         "a folder you can write)", opt, dir, strerror(e));
    }
    if (!S_ISDIR(sb.st_mode))
        return cli_error(EXIT_USAGE, cmd, "%s: '%s' is %s, not a folder (give "
                         "an existing folder)", opt, dir,
                         cli_file_kind(dir, -1));
    if (access(dir, W_OK | X_OK) != 0)
        return cli_error(EXIT_USAGE, cmd, "%s: '%s' does not take new files: "
                         "%s (give a folder you can write)", opt, dir,
                         strerror(errno));
    return 0;
}

int cli_disk_form(const char *cmd, const char *opt, const char *text)
{
    if (strcmp(text, "inf") == 0)
        return 0;
    const bptt_budget_sizes one = {1, 1, 1, 1}; /* the form alone */
    bptt_budget_resolved r;
    char why[512];
    if (bptt_budget_resolve(text, &one, BPTT_BUDGET_UNIT_REQUIRED, &r, why,
                            sizeof why) == BPTT_OK)
        return 0;
    return cli_error(EXIT_USAGE, cmd, "%s: %s; or give inf, no bound", opt,
                     why);
}
