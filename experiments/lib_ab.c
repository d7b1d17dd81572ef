/* lib_ab.c: two versions of the library (planner and training) side by
 * side in one process.  experiments/lib-ab builds it: each version's
 * library objects and lib_ab_side.c, linked into one object whose global
 * symbols carry a prefix of the version's (libab_old_, libab_new_), so
 * that this program calls both through the entry points declared in
 * lib_ab_side.c.
 *
 * For each cell, hidden width H and thread count it sets up the same
 * training on each version (bptt_session_open: copy task, seed 1, batch
 * 0), runs one iteration of each to warm up, then ROUNDS rounds of one
 * iteration of each, the side that goes first alternating.  The ratio is
 * old over new within a round, so that the machine's drift between rounds
 * does not enter it.  The two versions' gradients and losses of the last
 * round are compared bit by bit.
 *
 * Arguments are checked here too (the script checks them before it
 * compiles anything), and every point's sizes and plan before anything
 * is printed: one line on stderr and exit 2 for bad ones, as for a side
 * that fails to run.  Exits 1 when some point's bits differ (unless -d),
 * 0 otherwise.  The environment gives the header's names: LAB_OLD_NAME
 * (the old version), LAB_NEW_NAME and LAB_BUILD. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* OpenBLAS's own, not in every cblas.h */
void openblas_set_num_threads(int threads);

/* both sides' entry points, named as the script renamed them */
#define LAB_DECLARATIONS_ONLY
#define LAB_FN(name) libab_old_##name
#include "lib_ab_side.c"
#define LAB_FN(name) libab_new_##name
#include "lib_ab_side.c"

typedef struct {
    const char *name;
    const char *(*kernel)(void);
    int (*kernel_has)(const char *);
    int (*kernel_use)(const char *);
    int (*check)(const char *, unsigned long, unsigned long, unsigned long,
                 unsigned long, unsigned long, int, double *, char *,
                 unsigned long);
    void *(*open)(const char *, unsigned long, unsigned long, unsigned long,
                  unsigned long, unsigned long, int, char *, unsigned long);
    int (*run)(void *, double *, char *, unsigned long);
    const void *(*grads)(void *, unsigned long *, unsigned long *);
    double (*loss)(void *);
    double (*grad_at)(void *, unsigned long);
    void (*close)(void *);
} side_api;

#define SIDE_API(p, n)                                                    \
    {                                                                     \
        n, p##lab_kernel, p##lab_kernel_has, p##lab_kernel_use,           \
            p##lab_check, p##lab_open, p##lab_run, p##lab_grads,          \
            p##lab_loss, p##lab_grad_at, p##lab_close                     \
    }
static const side_api sides[2] = {SIDE_API(libab_old_, "old"),
                                  SIDE_API(libab_new_, "new")};

enum { MAX_LIST = 8, MAX_ROUNDS = 1000, WHY = 512 };

static const char usage[] =
    "usage: lib_ab [-c CELL,...] [-H H,...] [-j THREADS,...] [-T T] [-B B] "
    "[-X X] [-L L] [-p PERCENT] [-g cblas|avx2|avx512] [-n ROUNDS] [-d] [-v]";

/* text with every byte outside printable ASCII (and '\') as \xNN, cut to
 * fit buf[cap] (cap >= 8) */
static const char *vis(char *buf, size_t cap, const char *text)
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        const int plain = *p >= 0x20 && *p < 0x7f && *p != '\\';
        if (k + (plain ? 1 : 4) + 4 > cap) {
            memcpy(buf + k, "...", 4);
            return buf;
        }
        if (plain) {
            buf[k++] = (char)*p;
        } else {
            buf[k++] = '\\', buf[k++] = 'x';
            buf[k++] = hex[*p >> 4], buf[k++] = hex[*p & 15];
        }
    }
    buf[k] = 0;
    return buf;
}

static void die(int code, const char *what, const char *text,
                const char *rest)
{
    char v[200];
    fprintf(stderr, "lib-ab: %s%s%s\n", what,
            text ? vis(v, sizeof v, text) : "", rest ? rest : "");
    exit(code);
}

/* a whole decimal number in [lo, hi], or -1 */
static long number(const char *s, long lo, long hi)
{
    if (!*s || strspn(s, "0123456789") != strlen(s) || strlen(s) > 9)
        return -1;
    const long v = strtol(s, NULL, 10);
    return v >= lo && v <= hi ? v : -1;
}

/* splits a comma list into at most MAX_LIST items (text is changed) */
static int split(char *text, char **item)
{
    int n = 0;
    char *p = text;
    for (;;) {
        if (n == MAX_LIST)
            return -1;
        item[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            return n;
        *c = 0;
        p = c + 1;
    }
}

static int numbers(char *text, long lo, long hi, long *v)
{
    char *item[MAX_LIST];
    const int n = split(text, item);
    for (int i = 0; i < n; i++)
        if ((v[i] = number(item[i], lo, hi)) < 0)
            return -1;
    return n;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* the median of v[0..n) (v is left as it was) */
static double median(const double *v, int n)
{
    double w[MAX_ROUNDS];
    memcpy(w, v, (size_t)n * sizeof *v);
    qsort(w, (size_t)n, sizeof *w, cmp_double);
    return n % 2 ? w[n / 2] : 0.5 * (w[n / 2 - 1] + w[n / 2]);
}

/* About 95% confidence bounds on the median of v (n values), from the
 * order statistics (ranks n/2 -+ 0.98 sqrt(n), the normal approximation
 * to the binomial): they hold whatever the rounds' distribution. */
static void median_bounds(const double *v, int n, double *lo, double *hi)
{
    double w[MAX_ROUNDS];
    memcpy(w, v, (size_t)n * sizeof *v);
    qsort(w, (size_t)n, sizeof *w, cmp_double);
    const double d = 0.98 * sqrt((double)n);
    long a = lround(n / 2.0 - d), b = lround(1 + n / 2.0 + d); /* 1-based */
    a = a < 1 ? 1 : a;
    b = b > n ? n : b;
    *lo = w[a - 1];
    *hi = w[b - 1];
}

static void set_threads(int threads)
{
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    openblas_set_num_threads(threads);
}

static struct {
    char *cell[MAX_LIST];
    long H[MAX_LIST], threads[MAX_LIST];
    int n_cell, n_H, n_threads;
    long T, B, X, L, percent, rounds;
    const char *kernel;
    int differ_ok, verbose;
} opt = {.T = 1000, .B = 32, .X = 64, .L = 1, .rounds = 10};

static void parse(int argc, char **argv)
{
    static char cells_default[] = "lstm,rnn";
    opt.n_cell = split(cells_default, opt.cell);
    opt.H[0] = 128, opt.H[1] = 256, opt.n_H = 2;
    const long procs = sysconf(_SC_NPROCESSORS_ONLN);
    opt.threads[0] = 1, opt.threads[1] = 2;
    opt.n_threads = procs >= 2 ? 2 : 1;
    int o;
    while ((o = getopt(argc, argv, ":c:H:j:T:B:X:L:p:g:n:dv")) != -1) {
        char *a = optarg, shown[200];
        if (a) /* shown as given, before a list is split */
            vis(shown, sizeof shown, a);
        switch (o) {
        case 'c':
            if ((opt.n_cell = split(a, opt.cell)) < 0)
                die(2, "-c holds more than 8 cells: ", shown, NULL);
            for (int i = 0; i < opt.n_cell; i++)
                if (strcmp(opt.cell[i], "lstm") && strcmp(opt.cell[i], "gru") &&
                    strcmp(opt.cell[i], "rnn"))
                    die(2, "-c: no cell named '", opt.cell[i],
                        "'; give lstm, gru or rnn, comma-separated");
            break;
        case 'H':
            if ((opt.n_H = numbers(a, 1, 4096, opt.H)) < 0)
                die(2, "-H is not a list of at most 8 widths in 1..4096 "
                       "such as 128,256: ", shown, NULL);
            break;
        case 'j':
            if ((opt.n_threads = numbers(a, 1, 256, opt.threads)) < 0)
                die(2, "-j is not a list of at most 8 thread counts in "
                       "1..256 such as 1,2: ", shown, NULL);
            break;
        case 'T': case 'B': case 'X': case 'L': case 'p': case 'n': {
            static const char *const names = "TBXLpn";
            static const long hi[] = {100000, 4096, 4096, 16, 100, MAX_ROUNDS};
            long *const dst[] = {&opt.T, &opt.B, &opt.X, &opt.L, &opt.percent,
                                 &opt.rounds};
            const int k = (int)(strchr(names, o) - names);
            if ((*dst[k] = number(a, 1, hi[k])) < 0) {
                char what[80];
                snprintf(what, sizeof what, "-%c is not a number in 1..%ld: ",
                         o, hi[k]);
                die(2, what, a, NULL);
            }
            break;
        }
        case 'g':
            if (strcmp(a, "cblas") && strcmp(a, "avx2") && strcmp(a, "avx512"))
                die(2, "-g names no kernel of ours: ", a,
                    "; give cblas, avx2 or avx512");
            opt.kernel = a;
            break;
        case 'd':
            opt.differ_ok = 1;
            break;
        case 'v':
            opt.verbose = 1;
            break;
        default:
            die(2, "", NULL, usage);
        }
    }
    if (optind < argc)
        die(2, "not an option: ", argv[optind], NULL);
}

/* the largest relative difference of the two sides' gradients,
 * |g_old - g_new|_2 / |g_old|_2, and whether all bits agree (gradients
 * and loss) */
static int same_bits(void *h[2], double *grad_diff, double *loss_diff)
{
    unsigned long n[2], size[2];
    const void *g[2];
    for (int s = 0; s < 2; s++)
        g[s] = sides[s].grads(h[s], &n[s], &size[s]);
    const double l0 = sides[0].loss(h[0]), l1 = sides[1].loss(h[1]);
    *loss_diff = l0 == l1 ? 0 : fabs(l0 - l1) / fabs(l0);
    if (n[0] != n[1]) {
        *grad_diff = INFINITY;
        return 0;
    }
    int same = size[0] == size[1] && memcmp(g[0], g[1], n[0] * size[0]) == 0 &&
               memcmp(&l0, &l1, sizeof l0) == 0;
    double d2 = 0, o2 = 0;
    for (unsigned long i = 0; i < n[0]; i++) {
        const double a = sides[0].grad_at(h[0], i);
        const double b = sides[1].grad_at(h[1], i);
        d2 += (a - b) * (a - b), o2 += a * a;
    }
    *grad_diff = d2 == 0 ? 0 : sqrt(d2) / sqrt(o2);
    return same;
}

/* Both sides opened, first the side `first`, then the other. */
static void open_both(void *h[2], int first, const char *cell, long H)
{
    char why[WHY];
    for (int k = 0; k < 2; k++) {
        const int s = k ? 1 - first : first;
        h[s] = sides[s].open(cell, (unsigned long)opt.L, (unsigned long)H,
                             (unsigned long)opt.B, (unsigned long)opt.T,
                             (unsigned long)opt.X, (int)opt.percent, why,
                             sizeof why);
        if (!h[s]) {
            fprintf(stderr, "lib-ab: the %s side, %s at H=%ld: %s\n",
                    sides[s].name, cell, H, why);
            exit(2);
        }
    }
}

/* Rounds [r0, r1) on the sides h, after one warm-up iteration each: the
 * side that goes first alternates. */
static void timed(void *h[2], int r0, int r1, double sec[2][MAX_ROUNDS],
                  const char *cell, long H)
{
    char why[WHY];
    for (int r = r0 - 1; r < r1; r++) /* r = r0 - 1: the warm-up */
        for (int k = 0; k < 2; k++) {
            const int s = r & 1 ? 1 - k : k; /* old first in even rounds */
            double t;
            if (sides[s].run(h[s], &t, why, sizeof why)) {
                fprintf(stderr, "lib-ab: the %s side, %s at H=%ld: %s\n",
                        sides[s].name, cell, H, why);
                exit(2);
            }
            if (r >= r0)
                sec[s][r] = t;
        }
}

/* One point: both sides opened (the old one first), warmed and timed for
 * the first half of the rounds, then closed and opened again the other
 * way round for the second half, so that neither side always has the
 * memory of the side opened first; then compared.  1 when their bits
 * differ. */
static int point(const char *cell, long H, long threads)
{
    void *h[2];
    set_threads((int)threads);
    double sec[2][MAX_ROUNDS], ratio[MAX_ROUNDS];
    const int R = (int)opt.rounds, half = (R + 1) / 2;
    open_both(h, 0, cell, H);
    timed(h, 0, half, sec, cell, H);
    if (half < R) {
        for (int s = 0; s < 2; s++)
            sides[s].close(h[s]);
        open_both(h, 1, cell, H);
        timed(h, half, R, sec, cell, H);
    }
    for (int r = 0; r < R; r++)
        ratio[r] = sec[0][r] / sec[1][r];
    double lo = ratio[0], hi = ratio[0];
    for (int r = 1; r < R; r++)
        lo = ratio[r] < lo ? ratio[r] : lo, hi = ratio[r] > hi ? ratio[r] : hi;
    double gd, ld;
    const int same = same_bits(h, &gd, &ld);
    double c_lo, c_hi;
    median_bounds(ratio, R, &c_lo, &c_hi);
    printf("%-5s %5ld %3ld %9.6f %9.6f %6.3f %6.3f %6.3f %6.3f %6.3f %4s "
           "%8.1e %8.1e ",
           cell, H, threads, median(sec[0], R), median(sec[1], R),
           median(ratio, R), c_lo, c_hi, lo, hi, same ? "yes" : "NO", gd,
           ld);
    for (int r = 0; r < R; r++)
        printf("%s%.2f", r ? "," : "", ratio[r]);
    printf("\n");
    if (opt.verbose)
        for (int r = 0; r < R; r++)
            printf("#   round %d (%s first, %s opened first): old %.6f s, "
                   "new %.6f s, old/new %.4f\n", r + 1,
                   r & 1 ? "new" : "old", r < half ? "old" : "new",
                   sec[0][r], sec[1][r], ratio[r]);
    fflush(stdout);
    for (int s = 0; s < 2; s++)
        sides[s].close(h[s]);
    return !same;
}

static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : "unknown";
}

int main(int argc, char **argv)
{
    parse(argc, argv);
    char why[WHY], v[3][200];
    if (opt.kernel) {
        for (int s = 1; s >= 0; s--)
            if (!sides[s].kernel_has(opt.kernel)) {
                printf("SKIP: the %s kernel: %s\n", opt.kernel,
                       s ? "this CPU lacks it" : "the old side lacks it");
                return 0;
            }
        for (int s = 0; s < 2; s++)
            if (sides[s].kernel_use(opt.kernel))
                die(2, "the kernel could not be chosen: ", opt.kernel, NULL);
    }
    /* every point sized before anything is printed: both sides held at
     * once must fit in memory */
    const double phys = (double)sysconf(_SC_PHYS_PAGES) *
                        (double)sysconf(_SC_PAGESIZE);
    for (int c = 0; c < opt.n_cell; c++)
        for (int i = 0; i < opt.n_H; i++) {
            double total = 0;
            for (int s = 0; s < 2; s++) {
                double b;
                if (sides[s].check(opt.cell[c], (unsigned long)opt.L,
                                   (unsigned long)opt.H[i],
                                   (unsigned long)opt.B, (unsigned long)opt.T,
                                   (unsigned long)opt.X, (int)opt.percent, &b,
                                   why, sizeof why)) {
                    fprintf(stderr, "lib-ab: the %s side, %s at H=%ld: %s\n",
                            sides[s].name, vis(v[0], sizeof v[0], opt.cell[c]),
                            opt.H[i], vis(v[1], sizeof v[1], why));
                    return 2;
                }
                total += b;
            }
            if (phys > 0 && total > 0.6 * phys) {
                fprintf(stderr, "lib-ab: %s at H=%ld would hold %.1f GiB "
                        "(both sides), more than 60%% of this machine's "
                        "%.1f GiB; give a smaller -T, -B, -H or -L\n",
                        opt.cell[c], opt.H[i], total / 1073741824.0,
                        phys / 1073741824.0);
                return 2;
            }
        }
    printf("# lib-ab: two versions of the library in one process\n");
    printf("# old: %s\n", vis(v[0], sizeof v[0], env("LAB_OLD_NAME")));
    printf("# new: %s\n", vis(v[1], sizeof v[1], env("LAB_NEW_NAME")));
    printf("# build: %s\n", vis(v[2], sizeof v[2], env("LAB_BUILD")));
    printf("# kernel: old %s, new %s; plan: ", sides[0].kernel(),
           sides[1].kernel());
    if (opt.percent)
        printf("MSM at %ld%% of full BPTT's memory", opt.percent);
    else
        printf("full BPTT");
    printf("; T=%ld B=%ld X=%ld L=%ld, copy task; %ld rounds, one "
           "iteration of each side a round, the first side alternating; "
           "the first half with the old side opened first, the second "
           "with the new\n",
           opt.T, opt.B, opt.X, opt.L, opt.rounds);
    printf("# old_s, new_s: median seconds of an iteration; ratio: median "
           "of the rounds' old/new (> 1: the new is faster); ci_lo, ci_hi: "
           "about 95%% confidence bounds on that median (order statistics; "
           "a change is measured where they both lie on one side of 1); "
           "min, max: of the rounds' ratios; same: gradients and loss the "
           "same bits; grad_diff: |g_old-g_new|_2/|g_old|_2; loss_diff: "
           "relative; rounds: each round's old/new\n");
    printf("%-5s %5s %3s %9s %9s %6s %6s %6s %6s %6s %4s %8s %8s %s\n",
           "cell", "H", "thr", "old_s", "new_s", "ratio", "ci_lo", "ci_hi",
           "min", "max", "same", "grad_diff", "loss_diff", "rounds");
    fflush(stdout);
    int differ = 0;
    for (int c = 0; c < opt.n_cell; c++)
        for (int i = 0; i < opt.n_H; i++)
            for (int j = 0; j < opt.n_threads; j++)
                differ |= point(opt.cell[c], opt.H[i], opt.threads[j]);
    return differ && !opt.differ_ok ? 1 : 0;
}
