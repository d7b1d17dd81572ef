/* timing.c: measuring iterations and writing the trace (timing.h).
 *
 * The disturbance threshold (BPTT_SHARE_DISTURBED) was chosen by
 * measurement; see the comment above it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

/* ---- measurement -------------------------------------------------------- */

/* The machine's steal in seconds: the 8th number of the "cpu " line of
 * /proc/stat, in ticks of _SC_CLK_TCK; 0 when it cannot be read. */
static double steal_seconds(void)
{
    const int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char buf[512];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    unsigned long long v[8];
    if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
               &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
        return 0;
    const long tck = sysconf(_SC_CLK_TCK);
    return tck > 0 ? (double)v[7] / (double)tck : 0;
}

static double clock_seconds(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bptt_clock_start(bptt_clock *c)
{
    c->steal = steal_seconds();
    c->wall = clock_seconds(CLOCK_MONOTONIC);
    c->cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

void bptt_clock_stop(bptt_clock *c)
{
    c->cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
    c->wall = clock_seconds(CLOCK_MONOTONIC);
    c->steal = steal_seconds();
}

void bptt_sample_between(const bptt_clock *start, const bptt_clock *end,
                         bptt_sample *s)
{
    s->forward = s->backward = s->slow = 0;
    s->wall = end->wall - start->wall;
    s->cpu = end->cpu - start->cpu;
    /* the counter only grows; a reading that failed is 0 */
    s->steal = end->steal >= start->steal && start->steal > 0
                   ? end->steal - start->steal
                   : 0;
}

static int cmp_double(const void *x, const void *y)
{
    const double p = *(const double *)x, q = *(const double *)y;
    return (p > q) - (p < q);
}

/* The median of v[0..n) (n >= 1): the middle value, or of an even count
 * the mean of the two middle ones (never the larger of two); sorts v. */
static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double share(const bptt_sample *s, int threads)
{
    return s->wall > 0 ? s->cpu / (s->wall * threads) : 1;
}

/* The threshold of disturbance, BPTT_SHARE_DISTURBED = 0.90: an iteration
 * whose CPU share (CPU seconds over wall seconds x threads) falls below it
 * shared its cores with other work.  It lies in the gap, measured with
 * `bptt run`, between the shares of iterations on a quiet machine and
 * those of 2-thread iterations beside other processes' load (the runs:
 * doc/run.md, "Timing and its disturbance").  A
 * 1-thread run that other processes slow through the shared caches and
 * memory (or a hyperthread sibling) keeps its CPU and its share: no share
 * threshold tells it apart, seconds_trend and seconds_min/max do.  A
 * problem too small for OpenBLAS to thread runs one thread at --threads 2
 * (share near 0.5: every iteration counts as disturbed). */
#define BPTT_SHARE_DISTURBED 0.90
/* ... and so is one whose steal exceeded this share of wall x threads. */
#define LIVE_STEAL_DISTURBED 0.10

int bptt_timing_summarize(const bptt_sample *s, size_t n, int threads,
                   bptt_timing *out)
{
    memset(out, 0, sizeof *out);
    out->seconds_trend = 1;
    if (n == 0)
        return 0;
    if (threads < 1)
        threads = 1;
    const bptt_sample *t = n > 1 ? s + 1 : s; /* the timed iterations */
    const size_t m = n > 1 ? n - 1 : 1;
    double *v = malloc(m * sizeof *v);
    if (!v)
        return ENOMEM;
    out->timed_iters = (int64_t)m;
    out->seconds_min = out->seconds_max = t[0].wall;
    out->cpu_share_min = share(&t[0], threads);
    for (size_t i = 0; i < m; i++) {
        const double w = t[i].wall, sh = share(&t[i], threads);
        out->seconds_min = fmin(out->seconds_min, w);
        out->seconds_max = fmax(out->seconds_max, w);
        out->cpu_share_min = fmin(out->cpu_share_min, sh);
        out->steal_seconds += t[i].steal;
        out->disturbed_iters +=
            sh < BPTT_SHARE_DISTURBED ||
            t[i].steal > LIVE_STEAL_DISTURBED * w * threads;
        v[i] = sh;
    }
    out->cpu_share_median = median(v, m);
    if (m >= 4) {
        const size_t q = m / 4;
        for (size_t i = 0; i < q; i++)
            v[i] = t[i].wall;
        const double first = median(v, q);
        for (size_t i = 0; i < q; i++)
            v[i] = t[m - q + i].wall;
        const double last = median(v, q);
        out->seconds_trend = first > 0 ? last / first : 1;
    }
    for (size_t i = 0; i < m; i++)
        v[i] = t[i].forward;
    out->forward_seconds_median = median(v, m);
    for (size_t i = 0; i < m; i++)
        v[i] = t[i].backward;
    out->backward_seconds_median = median(v, m);
    for (size_t i = 0; i < m; i++)
        v[i] = t[i].slow;
    out->slow_seconds_median = median(v, m);
    for (size_t i = 0; i < m; i++)
        v[i] = t[i].wall;
    out->seconds_median = median(v, m);
    free(v);
    return 0;
}

/* ---- the trace ---------------------------------------------------------- */

/* Writes all of buf (len bytes) at the end of the trace, or cuts a partial
 * write off again: 0 or an errno value. */
static int trace_append(bptt_trace *t, const char *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        const ssize_t w = write(t->fd, buf + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            const int err = w < 0 ? errno : EIO;
            if (done && ftruncate(t->fd, (off_t)t->end) == 0)
                lseek(t->fd, (off_t)t->end, SEEK_SET);
            return err;
        }
        done += (size_t)w;
    }
    t->end += (long long)len;
    return 0;
}

int bptt_trace_open(bptt_trace *t, const char *path)
{
    t->rows = 0;
    t->end = 0;
    t->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (t->fd < 0)
        return errno;
    const int err = trace_append(t, BPTT_TRACE_HEADER,
                                 strlen(BPTT_TRACE_HEADER));
    if (err) {
        close(t->fd);
        t->fd = -1;
        unlink(path);
    }
    return err;
}

int bptt_trace_row(bptt_trace *t, int64_t iteration, double loss,
                   double grad_norm, const bptt_sample *s)
{
    char row[256];
    const int n = snprintf(row, sizeof row, "%lld,%.9g,%.9g,%.6f,%.6f,%.6f\n",
                           (long long)iteration, loss, grad_norm, s->wall,
                           s->cpu, s->steal);
    if (n < 0 || (size_t)n >= sizeof row)
        return EOVERFLOW;
    const int err = trace_append(t, row, (size_t)n);
    if (!err)
        t->rows++;
    return err;
}

int bptt_trace_close(bptt_trace *t, const char *path, int keep)
{
    if (t->fd < 0)
        return 0;
    keep = keep && t->rows > 0;
    if (close(t->fd) != 0)
        keep = 0;
    t->fd = -1;
    if (!keep)
        unlink(path);
    return keep;
}

/* ---- the memory trace ----------------------------------------------------- */

int bptt_memtrace_write(const char *path, const bptt_exec_point *p, size_t n)
{
    const size_t len = strlen(path);
    char *tmp = malloc(len + 32);
    if (!tmp)
        return ENOMEM;
    snprintf(tmp, len + 32, "%s.tmp.%ld", path, (long)getpid());
    int err = 0;
    FILE *f = fopen(tmp, "wx");
    if (!f) {
        err = errno;
        free(tmp);
        return err;
    }
    errno = 0;
    if (fputs(BPTT_MEMTRACE_HEADER, f) == EOF)
        err = errno ? errno : EIO;
    for (size_t k = 0; k < n && !err; k++)
        if (fprintf(f, "%zu,%s,%lu,%zu,%zu,%lld,%.9g\n", k,
                    bptt_op_name((int)p[k].op), (unsigned long)p[k].step,
                    p[k].checkpoint_bytes, p[k].total_bytes,
                    (long long)p[k].forward_ops, p[k].seconds) < 0)
            err = errno ? errno : EIO;
    if (!err && fflush(f) != 0)
        err = errno ? errno : EIO;
    if (!err && fsync(fileno(f)) != 0)
        err = errno;
    if (fclose(f) != 0 && !err)
        err = errno ? errno : EIO;
    if (!err && link(tmp, path) != 0)
        err = errno;
    unlink(tmp);
    free(tmp);
    return err;
}
