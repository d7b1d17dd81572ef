/* cli_util.c: the helpers the tests of the `bptt` command share
 * (cli_util.h): $BPTT run as a child process in a directory, its output
 * captured or sent to a file, under a CPU limit when one is set; other
 * programs run with their output in a file; the scratch directory with
 * the fixture files the bad inputs name (sweep's config files among them)
 * and a listing of what a directory holds; whole files read and written;
 * the trace a run writes, checked row by row; string and number fields of
 * one-line JSON; and the check of one bad input. */
#define _XOPEN_SOURCE 700 /* POSIX 2008 and the pseudo-terminals */
#include "cli_util.h"

/* ---- running bptt ------------------------------------------------------- */

static void drain(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd, buf + n, cap - 1 - n)) > 0) {
        n += (size_t)r;
        if (n == cap - 1) { /* keep the first part, discard the rest */
            char sink[4096];
            while (read(fd, sink, sizeof sink) > 0)
                ;
            break;
        }
    }
    buf[n] = '\0';
}

/* argv[64] for execv: bptt, then args (NULL-terminated; at most 62). */
void child_argv(const char *bptt, const char *const *args,
                const char **argv)
{
    int n = 0;
    argv[n++] = bptt;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
}

/* The child's CPU limit in seconds (0: none), for the next run_in. */
rlim_t child_cpu_limit;

/* Runs $BPTT with args (NULL-terminated) in directory dir (NULL: here);
 * stdout goes to the file out_file when given (r->out stays empty), else
 * both are captured.  The captures are read one after the other, so
 * outputs stay small here. */
void run_in(result *r, const char *dir, const char *out_file,
            const char *const *args)
{
    const char *bptt = getenv("BPTT");
    ck_assert_msg(bptt != NULL, "BPTT is not set (run through make check)");
    int po[2], pe[2];
    ck_assert_int_eq(pipe(po), 0);
    ck_assert_int_eq(pipe(pe), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const char *argv[64];
        child_argv(bptt, args, argv);
        if (dir && chdir(dir) != 0)
            _exit(126);
        if (child_cpu_limit) {
            const struct rlimit cpu = {child_cpu_limit, child_cpu_limit};
            if (setrlimit(RLIMIT_CPU, &cpu) != 0)
                _exit(126);
        }
        if (out_file) {
            const int fd = open(out_file, O_WRONLY);
            if (fd < 0)
                _exit(126);
            dup2(fd, 1);
        } else {
            dup2(po[1], 1);
        }
        dup2(pe[1], 2);
        close(po[0]);
        close(pe[0]);
        execv(bptt, (char *const *)argv);
        _exit(127);
    }
    close(po[1]);
    close(pe[1]);
    drain(po[0], r->out, sizeof r->out);
    drain(pe[0], r->err, sizeof r->err);
    close(po[0]);
    close(pe[0]);
    int st;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void run(result *r, const char *const *args)
{
    run_in(r, NULL, NULL, args);
}

/* ---- a scratch directory with fixtures ---------------------------------- */

void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* A fresh directory under /tmp with the files the bad inputs name. */
void make_scratch(char *dir, size_t cap)
{
    snprintf(dir, cap, "/tmp/bptt-cli-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[512];
    snprintf(path, sizeof path, "%s/adir", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof path, "%s/full", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    write_file(dir, "full/f", "x");
    write_file(dir, "empty.txt", "");
    write_file(dir, "short.txt", "ab");
    write_file(dir, "text.txt", "the quick brown fox jumps over the lazy "
                                "dog, again and again and again.\n");
    /* sweep config files */
    write_file(dir, "blank.txt", "\n\n\n");
    write_file(dir, "empty.conf", "");
    write_file(dir, "comment.conf", "# nothing set here\n\n   # nor here\n");
    write_file(dir, "badkey.conf", "lenght = 10\n");
    write_file(dir, "noeq.conf", "length 10\n");
    write_file(dir, "novalue.conf", "length =\n");
    write_file(dir, "twice.conf", "length = 10\nlength = 20\n");
    write_file(dir, "badlen.conf", "length = ten\n");
    write_file(dir, "overflow.conf", "length = 99999999999999999999\n");
    write_file(dir, "range.conf", "length = 10:1\n");
    write_file(dir, "badmem.conf", "length = 10\nmemory = lots\n");
    write_file(dir, "badstrat.conf", "length = 10\nstrategy = magic\n");
    write_file(dir, "badalpha.conf", "length = 10\nalpha = 0\n");
    write_file(dir, "badthreads.conf", "length = 10\nthreads = -1\n");
    write_file(dir, "badmode.conf", "length = 10\nmode = walk\n");
    write_file(dir, "badformat.conf", "length = 10\nformat = xml\n");
    write_file(dir, "badinf.conf", "length = 10\ninfeasible = maybe\n");
    write_file(dir, "badout.conf", "length = 10\nout = adir\n");
    write_file(dir, "badcell.conf", "mode = run\nlength = 10\ncell = qrnn\n");
    write_file(dir, "badlayers.conf", "mode = run\nlength = 10\n"
                                      "layers = 17\n");
    write_file(dir, "badinput.conf", "mode = run\nlength = 10\ninput = 0\n");
    write_file(dir, "badhidden.conf", "mode = run\nlength = 10\n"
                                      "hidden = x\n");
    write_file(dir, "badbatch.conf", "mode = run\nlength = 10\n"
                                     "batch = -3\n");
    write_file(dir, "badseed.conf", "mode = run\nlength = 10\nseed = -1\n");
    write_file(dir, "baditers.conf", "mode = run\nlength = 10\niters = 0\n");
    write_file(dir, "badtask.conf", "mode = run\nlength = 10\n"
                                    "task = text:adir\n");
    write_file(dir, "badopt.conf", "mode = run\nlength = 10\n"
                                   "optimizer = rmsprop\n");
    write_file(dir, "badlr.conf", "mode = run\nlength = 10\nlr = 0\n");
    write_file(dir, "infeasible.conf", "length = 10\nmemory = 0\n");
}

void remove_scratch(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* The names in dir (and in its subdirectories), sorted, into buf. */
void list_tree(const char *dir, const char *prefix, char *buf,
               size_t cap)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    static char names[128][256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 128)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strlen(e->d_name) < sizeof names[0])
            strcpy(names[n++], e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0],
          (int (*)(const void *, const void *))strcmp);
    char (*mine)[256] = malloc((size_t)n * sizeof *mine + 1);
    ck_assert_ptr_nonnull(mine);
    memcpy(mine, names, (size_t)n * sizeof *mine); /* names is reused below */
    for (int i = 0; i < n; i++) {
        size_t used = strlen(buf);
        if (snprintf(buf + used, cap - used, "%s%s\n", prefix, mine[i]) < 0)
            break;
        char sub[4096], pre[1024];
        struct stat sb;
        if (snprintf(sub, sizeof sub, "%s/%s", dir, mine[i]) <
                (int)sizeof sub &&
            stat(sub, &sb) == 0 && S_ISDIR(sb.st_mode) &&
            snprintf(pre, sizeof pre, "%s%s/", prefix, mine[i]) <
                (int)sizeof pre)
            list_tree(sub, pre, buf, cap);
    }
    free(mine);
}

/* ---- the trace ---------------------------------------------------------- */

/* A whole file, NUL-terminated, in memory the caller frees. */
char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s", path);
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    while ((got = fread(buf + n, 1, cap - 1 - n, f)) > 0) {
        n += got;
        if (n == cap - 1) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Checks the trace at path: the header, then complete rows of six fields
 * for iterations 1..k in order, and nothing after the last newline (no
 * partial row).  Returns k; the rows go to rows[0..max) when given. */
int check_trace(const char *path, trace_row *rows, int max)
{
    size_t n;
    char *buf = read_all(path, &n);
    const size_t h = strlen(TRACE_HEADER);
    ck_assert_msg(strncmp(buf, TRACE_HEADER, h) == 0, "%s: header: %.200s",
                  path, buf);
    ck_assert_msg(buf[n - 1] == '\n', "%s: a partial last row", path);
    int k = 0;
    for (const char *line = buf + h; *line; k++) {
        trace_row t;
        int used = 0;
        ck_assert_msg(sscanf(line, "%ld,%lf,%lf,%lf,%lf,%lf%n", &t.iteration,
                             &t.loss, &t.grad_norm, &t.seconds,
                             &t.cpu_seconds, &t.steal_seconds, &used) == 6 &&
                          line[used] == '\n',
                      "%s: row %d: %.100s", path, k + 1, line);
        ck_assert_msg(t.iteration == k + 1, "%s: row %d is iteration %ld",
                      path, k + 1, t.iteration);
        ck_assert_msg(isfinite(t.loss) && t.grad_norm >= 0 && t.seconds >= 0 &&
                          t.cpu_seconds >= 0 && t.steal_seconds >= 0,
                      "%s: row %d: %.100s", path, k + 1, line);
        if (rows && k < max)
            rows[k] = t;
        line += used + 1;
    }
    free(buf);
    return k;
}

/* After a run that stopped early with --trace t.csv (in dir) and
 * --dump-grads: the trace, when the line says it was kept, is whole with
 * as many rows as the line says, and it is removed here (so that the
 * directory can be compared with what it held before); otherwise there is
 * none.  Returns the rows kept. */
int kept_trace(const char *dir, const char *err)
{
    char path[512];
    snprintf(path, sizeof path, "%s/t.csv", dir);
    const char *kept = strstr(err, "kept: the trace of ");
    if (!kept) {
        ck_assert_msg(access(path, F_OK) != 0, "a trace is left: %s", err);
        return 0;
    }
    int said = -1;
    ck_assert_msg(sscanf(kept, "kept: the trace of %d iteration", &said) == 1,
                  "%s", err);
    ck_assert_msg(strstr(kept, " in t.csv; not written: the result, the "
                               "gradient dump\n"),
                  "%s", err);
    const int k = check_trace(path, NULL, 0);
    ck_assert_msg(k == said && k >= 1, "%d rows in the trace: %s", k, err);
    ck_assert_int_eq(unlink(path), 0);
    return k;
}

/* ---- small files and one-line JSON -------------------------------------- */

/* Reads a whole small file; returns its length or -1. */
long slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    const size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return (long)n;
}

/* The string value of "key" in a one-line JSON object (no escapes in the
 * values read here) into buf; "" when absent. */
const char *json_str(const char *json, const char *key, char *buf,
                     size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    buf[0] = '\0';
    const char *p = strstr(json, pat);
    if (!p)
        return buf;
    p += strlen(pat);
    const int quoted = *p == '"';
    p += quoted;
    size_t n = 0;
    while (p[n] && (quoted ? p[n] != '"' : p[n] != ',' && p[n] != '}'))
        n++;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

/* The value of a number field of a one-line JSON object; fails if absent. */
double json_num(const char *json, const char *key)
{
    char buf[64];
    json_str(json, key, buf, sizeof buf);
    char *end;
    const double v = strtod(buf, &end);
    ck_assert_msg(buf[0] && *end == '\0', "no number %s in %s", key, json);
    return v;
}

/* ---- other programs, files of any name ---------------------------------- */

/* Runs argv (argv[0] found on PATH) with stdout and stderr to the file
 * log (made anew); its exit status, 127 when it could not be started. */
int run_prog(const char *const *argv, const char *log)
{
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        const int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* text to the file path (any bytes in its name). */
void write_path(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- bad input ---------------------------------------------------------- */

void check_refusal(const bad_case *c, int i)
{
    char dir[64], before[8192] = "", after[8192] = "";
    make_scratch(dir, sizeof dir);
    list_tree(dir, "", before, sizeof before);
    static result r;
    child_cpu_limit = REFUSAL_CPU_SECONDS;
    run_in(&r, dir, NULL, c->args);
    child_cpu_limit = 0;
    list_tree(dir, "", after, sizeof after);
    remove_scratch(dir);
    const char *cmd = c->args[0] ? c->args[0] : "";
    ck_assert_msg(r.status != 128 + SIGXCPU, "case %d (%s): still working "
                  "after %d CPU seconds: the input was not refused before the "
                  "work (%s)", i, cmd, REFUSAL_CPU_SECONDS, r.err);
    ck_assert_msg(r.status == c->status, "case %d (%s): exit %d, want %d (%s)",
                  i, cmd, r.status, c->status, r.err);
    ck_assert_msg(own_lines(r.err) == 1, "case %d (%s): %d stderr lines: %s",
                  i, cmd, own_lines(r.err), r.err);
    ck_assert_msg(strstr(r.err, c->says) != NULL,
                  "case %d (%s): stderr lacks '%s': %s", i, cmd, c->says,
                  r.err);
    ck_assert_msg(r.out[0] == '\0', "case %d (%s): stdout not empty: %s", i,
                  cmd, r.out);
    ck_assert_msg(strcmp(before, after) == 0,
                  "case %d (%s): files written: before\n%s\nafter\n%s", i,
                  cmd, before, after);
}
