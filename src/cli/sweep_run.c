/* sweep_run.c: `bptt sweep --mode run`: one child `bptt run` process a
 * point (so that each point's RSS peak is its own), its JSON object the
 * point's record, a child never outliving the sweep (the signals that
 * stop one are sweep_util.c's); and the dispatch of a sweep's points to
 * their mode. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "records.h"
#include "sweep.h"

#define CMD SWEEP_CMD

/* ---- run mode: one child `bptt run` per point --------------------------- */

/* Runs argv (the bptt binary itself) with stdout and stderr captured.
 *
 * Promises: the child never outlives this process, however it ends.  On
 * SIGINT or SIGTERM (sweep_signal) the child gets SIGTERM and is waited for,
 * even when the signal comes between the fork and the child's exec (the
 * forking thread blocks it across the fork, and the child unblocks it with
 * the default action, not this process's handler).  On Linux the child
 * also gets SIGKILL when this process dies, SIGKILL and a second signal
 * included (PR_SET_PDEATHSIG; a child whose parent died before that was
 * set exits at once).  The kernel sends it when the thread that forked
 * exits, not the process: spawn runs on the main thread (compute_run is
 * called from the command's code, never from a worker thread), which ends
 * only when the process does.
 * Elsewhere a child may outlive a sweep killed by SIGKILL. */
static int spawn(char *const *argv, bptt_strbuf *out, bptt_strbuf *err,
                 int *status)
{
    int po[2], pe[2];
    if (pipe(po) != 0)
        return errno;
    if (pipe(pe) != 0) {
        const int e = errno;
        close(po[0]);
        close(po[1]);
        return e;
    }
    sigset_t stop, old;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, &old);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid == 0) {
#ifdef __linux__
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0)
            _exit(127);
#endif
        if (getppid() != parent) /* the sweep died before the line above */
            _exit(127);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        sigprocmask(SIG_SETMASK, &old, NULL); /* a pending one ends it */
        dup2(po[1], 1);
        dup2(pe[1], 2);
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    const int fork_err = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (pid < 0) {
        close(po[0]), close(po[1]), close(pe[0]), close(pe[1]);
        return fork_err;
    }
    close(po[1]);
    close(pe[1]);
    struct pollfd fds[3] = {
        {po[0], POLLIN, 0}, {pe[0], POLLIN, 0}, {sweep_wake_fd(), POLLIN, 0}};
    bptt_strbuf *dst[2] = {out, err};
    int open_fds = 2, killed = 0;
    while (open_fds > 0) {
        if (sweep_signal && !killed) {
            kill(pid, SIGTERM); /* abandon the point */
            killed = 1;
        }
        if (poll(fds, 3, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[2].revents) { /* a signal came (seen above): empty it */
            char buf[64];
            while (read(fds[2].fd, buf, sizeof buf) > 0)
                ;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !fds[i].revents)
                continue;
            char buf[65536];
            const ssize_t r = read(fds[i].fd, buf, sizeof buf);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            } else {
                bptt_strbuf_add(dst[i], buf, (size_t)r);
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    while (waitpid(pid, status, 0) < 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* The child's error line, without its newline. */
static const char *last_line(bptt_strbuf *err)
{
    if (!err->p)
        return "(no message)";
    while (err->n > 0 && err->p[err->n - 1] == '\n')
        err->p[--err->n] = '\0';
    const char *nl = strrchr(err->p, '\n');
    return nl ? nl + 1 : err->p;
}

static int compute_run(const sweep *s, const size_t *todo, size_t n,
                       sweep_sink sink, void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        if (sweep_signal)
            return SWEEP_INTERRUPTED;
        size_t idx[BPTT_GRID_AXES];
        bptt_grid_decode(&s->g, todo[i], idx);
        char *argv[2 * (BPTT_GRID_AXES + 8) + 4];
        int c = 0;
        argv[c++] = "bptt";
        argv[c++] = "run";
        char opt[BPTT_GRID_AXES + 8][24];
        for (int k = 0; k < BPTT_GRID_AXES; k++)
            if (s->g.applies[k] && s->g.ax[k].n) {
                snprintf(opt[k], sizeof opt[k], "--%s",
                         bptt_grid_keys[k].name);
                argv[c++] = opt[k];
                argv[c++] = (char *)bptt_grid_value(&s->g, idx, k);
            }
        for (int k = BPTT_GK_ITERS; k <= BPTT_GK_LR; k++)
            if (s->g.text[k]) {
                snprintf(opt[BPTT_GRID_AXES + k - BPTT_GK_ITERS],
                         sizeof opt[0], "--%s",
                         bptt_grid_keys[k].name);
                argv[c++] = opt[BPTT_GRID_AXES + k - BPTT_GK_ITERS];
                argv[c++] = s->g.text[k];
            }
        argv[c++] = "--format";
        argv[c++] = "json";
        argv[c] = NULL;

        bptt_strbuf out = {0}, err = {0};
        int status = 0;
        const int e = spawn(argv, &out, &err, &status);
        int rc = 0;
        char *line = NULL;
        if (e) {
            rc = cli_error(1, CMD, "cannot run bptt run: %s", strerror(e));
        } else if (sweep_signal) {
            rc = SWEEP_INTERRUPTED;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
            bptt_strbuf b = {0};
            if (bptt_record_run(&b, &s->g, todo[i], out.p, out.n) ==
                BPTT_OK) {
                line = sweep_take(&b);
            } else {
                char *d = sweep_point_text(s, todo[i]);
                rc = cli_error(1, CMD, "%s: bptt run printed no JSON object",
                               d);
                free(d);
            }
        } else if (WIFEXITED(status) &&
                   WEXITSTATUS(status) == EXIT_INFEASIBLE &&
                   s->g.record_infeasible) {
            bptt_strbuf b = {0};
            bptt_record_run_error(&b, &s->g, todo[i], last_line(&err));
            line = sweep_take(&b);
        } else {
            char *d = sweep_point_text(s, todo[i]);
            const int code = !WIFEXITED(status) ? 1
                             : WEXITSTATUS(status) == EXIT_USAGE ||
                                     WEXITSTATUS(status) == EXIT_INFEASIBLE
                                 ? WEXITSTATUS(status)
                                 : 1;
            if (WIFSIGNALED(status))
                rc = cli_error(code, CMD, "%s: bptt run was killed by signal "
                               "%d", d, WTERMSIG(status));
            else if (code == EXIT_INFEASIBLE)
                rc = cli_error(code, CMD, "%s: %s; drop this budget from "
                               "the grid, or rerun with --infeasible record "
                               "to keep such points as records", d,
                               last_line(&err));
            else
                rc = cli_error(code, CMD, "%s: %s", d, last_line(&err));
            free(d);
        }
        bptt_strbuf_free(&out);
        bptt_strbuf_free(&err);
        if (line) {
            rc = sink(ctx, todo[i], line, strlen(line));
            free(line);
        }
        if (rc)
            return rc;
    }
    return 0;
}

int sweep_compute(const sweep *s, const size_t *todo, size_t n,
                  sweep_sink sink, void *ctx)
{
    return s->g.mode == BPTT_GRID_PLAN
               ? sweep_compute_plan(s, todo, n, sink, ctx)
               : compute_run(s, todo, n, sink, ctx);
}

