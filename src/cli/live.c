/* live.c: what `bptt run` does while it runs, besides measuring and the
 * trace (timing.h): the progress line, SIGINT and SIGTERM (live.h). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "live.h"

/* ---- the progress line -------------------------------------------------- */

void live_progress_start(live_progress *p)
{
    memset(p, 0, sizeof *p);
    p->on = isatty(2);
    /* a line longer than the terminal would wrap and never be redrawn */
    struct winsize ws;
    p->width = 80;
    if (p->on && ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
        p->width = ws.ws_col - 1;
}

/* "1:02:03", "2:03" or "4s" */
static void duration_text(char *buf, size_t cap, double s)
{
    if (!(s >= 0) || s > 3.6e8)
        snprintf(buf, cap, "?");
    else if (s < 60)
        snprintf(buf, cap, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, cap, "%d:%02d", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, cap, "%d:%02d:%02d", (int)(s / 3600),
                 (int)fmod(s / 60, 60), (int)fmod(s, 60));
}

void live_progress_show(live_progress *p, int64_t k, int64_t n, double loss,
                        double seconds)
{
    if (!p->on)
        return;
    if (k > 1 || n == 1)
        p->timed += seconds;
    const double now = cli_seconds();
    if (k > 1 && k < n && now - p->last < 0.1)
        return;
    p->last = now;
    /* seconds per iteration: the mean of the timed ones so far */
    const double per = k > 1 ? p->timed / (double)(k - 1) : seconds;
    char left[32], line[160];
    duration_text(left, sizeof left, per * (double)(n - k));
    int len = snprintf(line + 1, sizeof line - 1,
                       "bptt run: iteration %lld of %lld, loss %.4g, "
                       "%.3g s/iter, %s left",
                       (long long)k, (long long)n, loss, per, left);
    if (len < 0)
        return;
    if ((size_t)len > sizeof line - 2)
        len = (int)sizeof line - 2;
    if (len > (int)p->width)
        len = (int)p->width;
    line[0] = '\r';
    /* spaces over what a longer line before left on the terminal */
    size_t total = (size_t)len + 1;
    while ((size_t)len < p->shown && total < sizeof line - 1) {
        line[total++] = ' ';
        len++;
    }
    line[total] = '\0';
    fputs(line, stderr);
    fflush(stderr);
    p->shown = (size_t)len;
}

void live_progress_clear(live_progress *p)
{
    if (!p->on || p->shown == 0)
        return;
    char line[160];
    size_t n = p->shown < sizeof line - 3 ? p->shown : sizeof line - 3;
    line[0] = '\r';
    memset(line + 1, ' ', n);
    line[n + 1] = '\r';
    line[n + 2] = '\0';
    fputs(line, stderr);
    fflush(stderr);
    p->shown = 0;
}

/* ---- SIGINT and SIGTERM ------------------------------------------------- */

static volatile sig_atomic_t caught;
static struct sigaction old_int, old_term;
static int catching;

static void on_signal(int sig)
{
    /* SA_RESETHAND has already put back the default action: a second
     * signal of this kind ends the process */
    if (!caught)
        caught = sig;
}

/* A signal the process was started ignoring (nohup, a background job)
 * stays ignored. */
static void catch_one(int sig, struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    if (sigaction(sig, NULL, old) == 0 && old->sa_handler != SIG_IGN)
        sigaction(sig, &sa, NULL);
}

void live_signals_catch(void)
{
    caught = 0;
    catch_one(SIGINT, &old_int);
    catch_one(SIGTERM, &old_term);
    catching = 1;
}

int live_signal_caught(void)
{
    return caught;
}

void live_signals_restore(void)
{
    if (!catching)
        return;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    catching = 0;
}
