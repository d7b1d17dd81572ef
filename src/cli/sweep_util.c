/* sweep_util.c: the shelf the files of `bptt sweep` share (sweep.h):
 * allocation that ends the command when memory runs out, the grid's texts,
 * files written whole with their errors said, and the signals that stop a
 * sweep.  It calls nothing of the other sweep files. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/filewrite.h"
#include "sweep.h"

#define CMD SWEEP_CMD

/* ---- memory ------------------------------------------------------------- */

void sweep_out_of_memory(void)
{
    cli_error(1, CMD, "out of memory");
    exit(1);
}

char *sweep_take(bptt_strbuf *b)
{
    char *p = bptt_strbuf_take(b);
    if (!p)
        sweep_out_of_memory();
    return p;
}

void *sweep_alloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        sweep_out_of_memory();
    return p;
}

char *sweep_dup(const char *s)
{
    const size_t n = strlen(s) + 1;
    return memcpy(sweep_alloc(n), s, n);
}

char *sweep_cat(const char *a, const char *b)
{
    bptt_strbuf s = {0};
    bptt_strbuf_puts(&s, a);
    bptt_strbuf_puts(&s, b);
    return sweep_take(&s);
}

char *sweep_header(const sweep *s)
{
    char *h = bptt_grid_header(&s->g);
    if (!h)
        sweep_out_of_memory();
    return h;
}

char *sweep_point_text(const sweep *s, size_t k)
{
    char *d = bptt_grid_point_text(&s->g, k);
    if (!d)
        sweep_out_of_memory();
    return d;
}

void sweep_free_records(char **rec, size_t n)
{
    if (!rec)
        return;
    for (size_t k = 0; k < n; k++)
        free(rec[k]);
    free(rec);
}

/* ---- files written whole ------------------------------------------------ */

void sweep_sync_dir(const char *path)
{
    if (bptt_sync_dir(path) == ENOMEM)
        sweep_out_of_memory();
}

int sweep_write_atomic(const char *path, const char *text, size_t n)
{
    const int err = bptt_write_replace(path, text, n);
    if (err)
        return cli_error(1, CMD, "cannot write %s: %s", path, strerror(err));
    return 0;
}

int sweep_write_new(const char *path, const char *text, size_t n, int force)
{
    if (force)
        return sweep_write_atomic(path, text, n);
    const int err = bptt_write_new(path, text, n);
    if (err == EEXIST)
        return cli_error(EXIT_USAGE, CMD, "%s exists (it appeared while this "
                         "was written); give another name, or --force to "
                         "replace it", path);
    if (err)
        return cli_error(1, CMD, "cannot write %s: %s", path, strerror(err));
    return 0;
}

/* ---- signals ------------------------------------------------------------ */

volatile sig_atomic_t sweep_signal;

/* A pipe the handler writes a byte to, so that run mode's poll for a
 * child's output wakes up however late the signal comes (even between its
 * check of sweep_signal and the poll), on whichever thread it lands. */
static int wake_fd[2] = {-1, -1};

int sweep_wake_fd(void) { return wake_fd[0]; }

static void on_signal(int sig)
{
    if (sweep_signal) { /* a second one: stop at once (a run child dies with
                       * this process: see sweep_run.c's spawn) */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    sweep_signal = sig;
    if (wake_fd[1] >= 0) {
        const int e = errno;
        if (write(wake_fd[1], "", 1) < 0) {
            /* the pipe is full: a wake-up is waiting already */
        }
        errno = e;
    }
}

void sweep_catch_signals(void)
{
    int p[2];
    if (wake_fd[0] < 0 && pipe(p) == 0) {
        for (int i = 0; i < 2; i++) {
            fcntl(p[i], F_SETFD, FD_CLOEXEC);
            fcntl(p[i], F_SETFL, O_NONBLOCK);
        }
        wake_fd[0] = p[0];
        wake_fd[1] = p[1];
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
