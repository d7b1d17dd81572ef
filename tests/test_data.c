/* test_data.c: Check suite of the data tasks, the .npy writer and the
 * metadata.
 *
 * Promises: every task's batches are a pure function of (seed, k) and
 * differ across k and seeds; each task's batches are checked against its
 * definition in data.h (copy: lagged symbols; adding: two markers and the
 * quantised running sum; text: a substring of the file mapped through its
 * sorted vocabulary); every error code of bptt_task_alloc is produced and
 * leaves nothing allocated; the tracked bytes are exactly what data.c says,
 * also when an allocation fails; .npy files are read back byte by byte;
 * bptt_meta_json escapes what it must.  The exit status carries the
 * failures.
 *
 * Legend: T steps, B sequences, X input width, V classes.
 *
 * main only builds the suite and runs it: no math, no BLAS and no OpenMP
 * before Check forks.  Files go to a fresh directory under $TMPDIR (or
 * /tmp), removed after each test case, also when a test fails.
 */
#define _POSIX_C_SOURCE 200809L

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "real_impl.h"
#include "data.h"
#include "train/data_impl.h"
#include "mem.h"
#include "blascore.h"
#include "meta.h"
#include "npy.h"

/* ---- fixture: a tracked allocator and a scratch directory ------------- */

static bptt_mem *g_mem;
static char g_base[PATH_MAX / 2]; /* per test case, made by the runner */
static char g_dir[PATH_MAX];      /* per test, inside g_base */

static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                    continue;
                char sub[PATH_MAX];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                remove_tree(sub);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Unchecked: run by the runner itself, so that the directory is removed
 * even when a forked test fails before its own teardown. */
static void base_setup(void)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    const int n =
        snprintf(g_base, sizeof g_base, "%s/bptt-test-data-XXXXXX", tmp);
    ck_assert(n > 0 && (size_t)n < sizeof g_base);
    ck_assert_msg(mkdtemp(g_base) != NULL, "mkdtemp(%s): %s", g_base,
                  strerror(errno));
}

static void base_teardown(void) { remove_tree(g_base); }

static void setup(void)
{
    g_mem = bptt_mem_alloc();
    ck_assert_ptr_nonnull(g_mem);
    snprintf(g_dir, sizeof g_dir, "%s/t-XXXXXX", g_base);
    ck_assert_msg(mkdtemp(g_dir) != NULL, "mkdtemp(%s): %s", g_dir,
                  strerror(errno));
}

static void teardown(void)
{
    remove_tree(g_dir);
    bptt_mem_free(g_mem);
    g_mem = NULL;
}

/* g_dir/name */
static void path_in(char *out, size_t cap, const char *name)
{
    const int n = snprintf(out, cap, "%s/%s", g_dir, name);
    ck_assert(n > 0 && (size_t)n < cap);
}

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "fopen(%s): %s", path, strerror(errno));
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* Whole file into a malloc'd block. */
static unsigned char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "fopen(%s): %s", path, strerror(errno));
    size_t cap = 1024, len = 0;
    unsigned char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            ck_assert_ptr_nonnull(buf);
        }
    }
    fclose(f);
    *n = len;
    return buf;
}

/* Names in g_dir, sorted, joined by '|'. */
static void dir_listing(char *out, size_t cap)
{
    char names[32][256];
    int n = 0;
    DIR *d = opendir(g_dir);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        ck_assert_int_lt(n, 32);
        snprintf(names[n++], sizeof names[0], "%s", e->d_name);
    }
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort */
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char t[256];
            memcpy(t, names[j], sizeof t);
            memcpy(names[j], names[j - 1], sizeof t);
            memcpy(names[j - 1], t, sizeof t);
        }
    out[0] = '\0';
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "|" : "",
                                names[i]);
}

static size_t data_bytes(void)
{
    return bptt_mem_stats_get(g_mem)->current[BPTT_MEM_DATA];
}

static size_t total_bytes(void)
{
    return bptt_mem_stats_get(g_mem)->total_current;
}

/* ---- batch helpers ---------------------------------------------------- */

typedef struct {
    size_t T, B, X;
    real *x;
    int32_t *y;
} batch_copy;

static batch_copy take_batch(bptt_task *task, size_t k)
{
    bptt_batch b;
    ck_assert_int_eq(bptt_task_batch(task, k, &b), BPTT_OK);
    batch_copy c = {b.T, b.B, b.X, NULL, NULL};
    c.x = malloc(b.T * b.B * b.X * sizeof(real));
    c.y = malloc(b.T * b.B * sizeof(int32_t));
    ck_assert(c.x && c.y);
    memcpy(c.x, b.x, b.T * b.B * b.X * sizeof(real));
    memcpy(c.y, b.y, b.T * b.B * sizeof(int32_t));
    return c;
}

static void drop_batch(batch_copy *c)
{
    free(c->x);
    free(c->y);
}

static int batches_equal(const batch_copy *a, const batch_copy *b)
{
    return a->T == b->T && a->B == b->B && a->X == b->X &&
           !memcmp(a->x, b->x, a->T * a->B * a->X * sizeof(real)) &&
           !memcmp(a->y, b->y, a->T * a->B * sizeof(int32_t));
}

/* Index of the single 1 of a one-hot row; fails unless the row is one-hot
 * (entries 0 or 1, summing to 1). */
static size_t one_hot_index(const real *row, size_t X)
{
    size_t idx = X;
    double sum = 0;
    for (size_t c = 0; c < X; c++) {
        ck_assert_msg(row[c] == 0 || row[c] == 1, "entry %zu is %g", c,
                      (double)row[c]);
        sum += (double)row[c];
        if (row[c] == 1)
            idx = c;
    }
    ck_assert_msg(sum == 1, "one-hot row sums to %g", sum);
    return idx;
}

static bptt_task *make_task(const char *spec, size_t T, size_t B, size_t X,
                            unsigned long seed)
{
    bptt_task *task = NULL;
    const int rc = bptt_task_alloc(&task, spec, T, B, X, seed, g_mem);
    ck_assert_msg(rc == BPTT_OK, "bptt_task_alloc(%s, T=%zu, B=%zu, "
                  "X=%zu): %s", spec, T, B, X, bptt_strerror(rc));
    ck_assert_ptr_nonnull(task);
    return task;
}

static const char TEXT[] =
    "It was the best of times, it was the worst of times,\n"
    "it was the age of wisdom, it was the age of foolishness;\n"
    "zebra QUARTZ 0123456789 ~!\t\"\\'\n";

/* Writes TEXT (n bytes of it) to g_dir/name; "text:PATH" into spec. */
static void text_spec(char *spec, size_t cap, const char *name, size_t n)
{
    char path[PATH_MAX];
    path_in(path, sizeof path, name);
    write_file(path, TEXT, n);
    snprintf(spec, cap, "text:%s", path);
}

/* ---- determinism ------------------------------------------------------ */

static void check_determinism(const char *spec, size_t T, size_t B)
{
    bptt_task *a = make_task(spec, T, B, 0, 42);
    bptt_task *b = make_task(spec, T, B, 0, 42);
    bptt_task *c = make_task(spec, T, B, 0, 43);

    batch_copy a3 = take_batch(a, 3);
    batch_copy a0 = take_batch(a, 0);
    batch_copy a3again = take_batch(a, 3); /* out of order, repeated */
    batch_copy b3 = take_batch(b, 3);      /* another task, same seed */
    batch_copy c3 = take_batch(c, 3);      /* another seed */
    batch_copy a4 = take_batch(a, 4);

    ck_assert_msg(batches_equal(&a3, &a3again), "%s: batch 3 repeated differs",
                  spec);
    ck_assert_msg(batches_equal(&a3, &b3), "%s: same seed, same k differ",
                  spec);
    ck_assert_msg(!batches_equal(&a3, &a0), "%s: k = 3 and k = 0 equal", spec);
    ck_assert_msg(!batches_equal(&a3, &a4), "%s: k = 3 and k = 4 equal", spec);
    ck_assert_msg(!batches_equal(&a3, &c3), "%s: seeds 42 and 43 equal", spec);

    drop_batch(&a3);
    drop_batch(&a0);
    drop_batch(&a3again);
    drop_batch(&b3);
    drop_batch(&c3);
    drop_batch(&a4);
    bptt_task_free(a);
    bptt_task_free(b);
    bptt_task_free(c);
    ck_assert_uint_eq(total_bytes(), 0);
}

START_TEST(test_determinism_copy) { check_determinism("copy", 20, 4); }
END_TEST

START_TEST(test_determinism_adding) { check_determinism("adding", 20, 4); }
END_TEST

START_TEST(test_determinism_text)
{
    char spec[PATH_MAX + 8];
    text_spec(spec, sizeof spec, "t.txt", sizeof TEXT - 1);
    check_determinism(spec, 20, 4);
}
END_TEST

/* ---- copy ------------------------------------------------------------- */

START_TEST(test_copy_definition)
{
    static const size_t Ts[] = {1, 2, 3, 4, 7, 8, 9, 20, 33};
    static const size_t Xs[] = {2, 3, 16};
    for (size_t it = 0; it < sizeof Ts / sizeof Ts[0]; it++)
        for (size_t ix = 0; ix < sizeof Xs / sizeof Xs[0]; ix++) {
            const size_t T = Ts[it], B = 3, X = Xs[ix];
            const size_t lag = T / 4 > 1 ? T / 4 : 1;
            bptt_task *task = make_task("copy", T, B, X, 7);
            ck_assert_uint_eq(bptt_task_input_width(task), X);
            ck_assert_uint_eq(bptt_task_classes(task), X);
            ck_assert_str_eq(bptt_task_name(task), "copy");
            for (size_t k = 0; k < 3; k++) {
                bptt_batch bt;
                ck_assert_int_eq(bptt_task_batch(task, k, &bt), BPTT_OK);
                ck_assert_uint_eq(bt.T, T);
                ck_assert_uint_eq(bt.B, B);
                ck_assert_uint_eq(bt.X, X);
                for (size_t t = 0; t < T; t++)
                    for (size_t b = 0; b < B; b++) {
                        const size_t sym =
                            one_hot_index(bt.x + (t * B + b) * X, X);
                        ck_assert_msg(sym >= 1 && sym < X,
                                      "input symbol %zu (blank or out of range)",
                                      sym);
                        const int32_t want =
                            t >= lag ? (int32_t)one_hot_index(
                                           bt.x + ((t - lag) * B + b) * X, X)
                                     : 0;
                        ck_assert_msg(bt.y[t * B + b] == want,
                                      "T=%zu X=%zu t=%zu b=%zu: target %d, "
                                      "want %d (lag %zu)",
                                      T, X, t, b, (int)bt.y[t * B + b],
                                      (int)want, lag);
                    }
            }
            bptt_task_free(task);
        }
    ck_assert_uint_eq(total_bytes(), 0);
}
END_TEST

/* The documented lag at one length, stated as a number. */
START_TEST(test_copy_lag_20)
{
    bptt_task *task = make_task("copy", 20, 1, 4, 1);
    bptt_batch bt;
    ck_assert_int_eq(bptt_task_batch(task, 0, &bt), BPTT_OK);
    for (size_t t = 0; t < 5; t++)
        ck_assert_int_eq(bt.y[t], 0);
    for (size_t t = 5; t < 20; t++)
        ck_assert_int_eq(bt.y[t], (int)one_hot_index(bt.x + (t - 5) * 4, 4));
    bptt_task_free(task);
}
END_TEST

START_TEST(test_copy_default_width)
{
    bptt_task *task = make_task("copy", 8, 2, 0, 1);
    ck_assert_uint_eq(bptt_task_input_width(task), 16);
    ck_assert_uint_eq(bptt_task_classes(task), 16);
    bptt_task_free(task);
}
END_TEST

/* ---- adding ----------------------------------------------------------- */

START_TEST(test_adding_definition)
{
    static const size_t Ts[] = {2, 3, 10, 50};
    for (size_t it = 0; it < sizeof Ts / sizeof Ts[0]; it++) {
        const size_t T = Ts[it], B = 5;
        bptt_task *task = make_task("adding", T, B, 2, 99);
        ck_assert_uint_eq(bptt_task_input_width(task), 2);
        ck_assert_uint_eq(bptt_task_classes(task), 16);
        ck_assert_str_eq(bptt_task_name(task), "adding");
        for (size_t k = 0; k < 5; k++) {
            bptt_batch bt;
            ck_assert_int_eq(bptt_task_batch(task, k, &bt), BPTT_OK);
            ck_assert_uint_eq(bt.X, 2);
            for (size_t b = 0; b < B; b++) {
                int markers = 0;
                double sum = 0;
                for (size_t t = 0; t < T; t++) {
                    const real *xt = bt.x + (t * B + b) * 2;
                    ck_assert_msg(xt[0] >= 0 && xt[0] < 1, "value %g",
                                  (double)xt[0]);
                    /* a multiple of 2^-24, as data.h says */
                    const double scaled = (double)xt[0] * 16777216.0;
                    ck_assert(scaled == (double)(long)scaled);
                    ck_assert(xt[1] == 0 || xt[1] == 1);
                    if (xt[1] == 1) {
                        markers++;
                        sum += (double)xt[0];
                    }
                    int32_t want = (int32_t)(sum * 8);
                    ck_assert_int_le(want, 15);
                    ck_assert_msg(bt.y[t * B + b] == want,
                                  "T=%zu t=%zu b=%zu: target %d, want %d "
                                  "(sum %.9f)", T, t, b, (int)bt.y[t * B + b],
                                  (int)want, sum);
                }
                ck_assert_int_eq(markers, 2);
            }
        }
        bptt_task_free(task);
    }
    ck_assert_uint_eq(total_bytes(), 0);
}
END_TEST

/* ---- text ------------------------------------------------------------- */

/* Checks every sequence of a batch: its T + 1 bytes (inputs, then the last
 * target), mapped back through the sorted vocabulary, are a substring of
 * text, and target t is input t + 1. */
static void check_text_batch(const bptt_batch *bt, const unsigned char *text,
                             size_t n)
{
    int present[256] = {0};
    for (size_t i = 0; i < n; i++)
        present[text[i]] = 1;
    unsigned char vocab[256];
    size_t V = 0;
    for (int c = 0; c < 256; c++)
        if (present[c])
            vocab[V++] = (unsigned char)c;
    ck_assert_uint_eq(bt->X, V);

    const size_t T = bt->T, B = bt->B;
    unsigned char *seq = malloc(T + 1);
    ck_assert_ptr_nonnull(seq);
    for (size_t b = 0; b < B; b++) {
        for (size_t t = 0; t < T; t++) {
            const size_t in = one_hot_index(bt->x + (t * B + b) * V, V);
            seq[t] = vocab[in];
            const int32_t y = bt->y[t * B + b];
            ck_assert(y >= 0 && (size_t)y < V);
            if (t + 1 < T)
                ck_assert_uint_eq(
                    (size_t)y, one_hot_index(bt->x + ((t + 1) * B + b) * V, V));
            else
                seq[T] = vocab[y];
        }
        int found = 0;
        for (size_t off = 0; off + T + 1 <= n && !found; off++)
            found = !memcmp(text + off, seq, T + 1);
        ck_assert_msg(found, "sequence %zu is not a substring of the file", b);
    }
    free(seq);
}

START_TEST(test_text_definition)
{
    const size_t n = sizeof TEXT - 1;
    char spec[PATH_MAX + 8];
    text_spec(spec, sizeof spec, "t.txt", n);
    int present[256] = {0};
    size_t V = 0;
    for (size_t i = 0; i < n; i++)
        if (!present[(unsigned char)TEXT[i]]++)
            V++;

    bptt_task *task = make_task(spec, 16, 6, 0, 5);
    ck_assert_uint_eq(bptt_task_input_width(task), V);
    ck_assert_uint_eq(bptt_task_classes(task), V);
    ck_assert_str_eq(bptt_task_name(task), "text");
    for (size_t k = 0; k < 10; k++) {
        bptt_batch bt;
        ck_assert_int_eq(bptt_task_batch(task, k, &bt), BPTT_OK);
        check_text_batch(&bt, (const unsigned char *)TEXT, n);
    }
    bptt_task_free(task);

    /* X given explicitly: the vocabulary size is accepted. */
    task = make_task(spec, 16, 6, V, 5);
    bptt_task_free(task);
    ck_assert_uint_eq(total_bytes(), 0);
}
END_TEST

/* A file of exactly T + 1 bytes: every sequence is the whole file. */
START_TEST(test_text_exact_length)
{
    char spec[PATH_MAX + 8];
    text_spec(spec, sizeof spec, "exact.txt", 11);
    bptt_task *task = make_task(spec, 10, 3, 0, 1);
    bptt_batch bt;
    ck_assert_int_eq(bptt_task_batch(task, 0, &bt), BPTT_OK);
    check_text_batch(&bt, (const unsigned char *)TEXT, 11);
    for (size_t b = 1; b < 3; b++)
        ck_assert_int_eq(bt.y[9 * 3 + b], bt.y[9 * 3]);
    bptt_task_free(task);
}
END_TEST

/* A pipe: no size known in advance, read in growing blocks; the tracked
 * bytes still end at exactly the file's size. */
START_TEST(test_text_pipe)
{
    char path[PATH_MAX];
    path_in(path, sizeof path, "fifo");
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    const size_t n = 10000;
    unsigned char *bytes = malloc(n);
    ck_assert_ptr_nonnull(bytes);
    for (size_t i = 0; i < n; i++)
        bytes[i] = (unsigned char)('a' + (i * 7 + i / 13) % 26);

    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        alarm(20); /* never outlive a failed parent for long */
        FILE *f = fopen(path, "wb");
        int ok = f && fwrite(bytes, 1, n, f) == n;
        if (f && fclose(f) != 0)
            ok = 0;
        free(bytes);
        _exit(ok ? 0 : 1);
    }
    char spec[PATH_MAX + 8];
    snprintf(spec, sizeof spec, "text:%s", path);
    bptt_task *task = make_task(spec, 50, 4, 0, 3);
    int wstatus = 0;
    ck_assert_int_eq(waitpid(pid, &wstatus, 0), pid);
    /* The exit status is not checked: under valgrind the child reports
     * the heap it inherited; the byte count below shows what arrived. */
    ck_assert(WIFEXITED(wstatus));

    ck_assert_uint_eq(bptt_task_input_width(task), 26);
    ck_assert_uint_eq(data_bytes(),
                      n + 50 * 4 * 26 * sizeof(real) + 50 * 4 * 4);
    bptt_batch bt;
    ck_assert_int_eq(bptt_task_batch(task, 0, &bt), BPTT_OK);
    check_text_batch(&bt, bytes, n);
    bptt_task_free(task);
    free(bytes);
    ck_assert_uint_eq(total_bytes(), 0);
}
END_TEST

/* ---- errors ----------------------------------------------------------- */

static void expect_error(const char *spec, size_t T, size_t B, size_t X,
                         int want)
{
    static char sentinel;
    bptt_task *task = (bptt_task *)(void *)&sentinel; /* must become NULL */
    const int rc = bptt_task_alloc(&task, spec, T, B, X, 1, g_mem);
    ck_assert_msg(rc == want, "%s T=%zu B=%zu X=%zu: got %d (%s), want %d",
                  spec ? spec : "(null)", T, B, X, rc, bptt_strerror(rc),
                  want);
    ck_assert_ptr_null(task);
    ck_assert_uint_eq(total_bytes(), 0);
}

START_TEST(test_errors)
{
    expect_error("cpy", 10, 2, 0, BPTT_EUNKNOWN);
    expect_error("", 10, 2, 0, BPTT_EUNKNOWN);
    expect_error("text", 10, 2, 0, BPTT_EUNKNOWN);
    expect_error("Copy", 10, 2, 0, BPTT_EUNKNOWN);
    expect_error(NULL, 10, 2, 0, BPTT_EUNKNOWN);

    expect_error("adding", 10, 2, 3, BPTT_EINVAL);
    expect_error("adding", 10, 2, 1, BPTT_EINVAL);
    expect_error("adding", 1, 2, 0, BPTT_EINVAL); /* two markers */
    expect_error("copy", 10, 2, 1, BPTT_EINVAL);
    expect_error("copy", 0, 2, 0, BPTT_EINVAL);
    expect_error("copy", 10, 0, 0, BPTT_EINVAL);
    expect_error("adding", 0, 2, 0, BPTT_EINVAL);

    expect_error("copy", SIZE_MAX / 2, 4, 0, BPTT_ETOOBIG);
    expect_error("copy", SIZE_MAX / 32, 1, 16, BPTT_ETOOBIG);
    expect_error("adding", SIZE_MAX / 4, 1, 0, BPTT_ETOOBIG);

    char spec[PATH_MAX + 8], path[PATH_MAX];
    path_in(path, sizeof path, "missing.txt");
    snprintf(spec, sizeof spec, "text:%s", path);
    expect_error(spec, 10, 2, 0, BPTT_EFILE);
    snprintf(spec, sizeof spec, "text:%s", g_dir); /* a directory */
    expect_error(spec, 10, 2, 0, BPTT_EFILE);
    expect_error("text:", 10, 2, 0, BPTT_EFILE);

    text_spec(spec, sizeof spec, "short.txt", 10); /* T + 1 = 11 needed */
    expect_error(spec, 10, 2, 0, BPTT_ESHORT);
    text_spec(spec, sizeof spec, "empty.txt", 0);
    expect_error(spec, 10, 2, 0, BPTT_ESHORT);
    expect_error(spec, 1, 1, 0, BPTT_ESHORT);

    text_spec(spec, sizeof spec, "t.txt", sizeof TEXT - 1);
    expect_error(spec, 10, 2, 2, BPTT_EINVAL); /* X != V */

    /* one distinct byte: one class, a loss of 0 whatever is learned */
    path_in(path, sizeof path, "one.txt");
    write_file(path, "aaaaaaaaaaaaaaaaaaaa", 20);
    snprintf(spec, sizeof spec, "text:%s", path);
    expect_error(spec, 10, 2, 0, BPTT_EINVAL);

    /* NULL arguments */
    ck_assert_int_eq(bptt_task_alloc(NULL, "copy", 4, 1, 0, 1, g_mem),
                     BPTT_EINVAL);
    bptt_task *task = NULL;
    ck_assert_int_eq(bptt_task_alloc(&task, "copy", 4, 1, 0, 1, NULL),
                     BPTT_EINVAL);
    ck_assert_ptr_null(task);
    task = make_task("copy", 4, 1, 0, 1);
    ck_assert_int_eq(bptt_task_batch(task, 0, NULL), BPTT_EINVAL);
    bptt_task_free(task);
    bptt_task_free(NULL);

    /* one to-string for every status, each its own text */
    for (int e = BPTT_OK; e <= BPTT_EIO; e++) {
        const char *s = bptt_strerror(e);
        ck_assert(s != NULL && *s != '\0');
        ck_assert_str_ne(s, "unknown status");
        for (int f = BPTT_OK; f < e; f++)
            ck_assert_str_ne(s, bptt_strerror(f));
    }
    ck_assert_str_eq(bptt_strerror(-1), "unknown status");
    ck_assert_str_eq(bptt_strerror(BPTT_EIO + 1), "unknown status");
}
END_TEST

/* What only reading a text finds is said, with the numbers that would
 * work: its one distinct byte, its number of distinct bytes. */
START_TEST(test_text_refusals_say_why)
{
    char spec[PATH_MAX + 8], path[PATH_MAX], why[512];
    bptt_task *task = NULL;
    path_in(path, sizeof path, "one.txt");
    write_file(path, "zzzzzzzzzzzzzzzzzzzz", 20);
    snprintf(spec, sizeof spec, "text:%s", path);
    ck_assert_int_eq(bptt_task_alloc_why(&task, spec, 10, 2, 0, 1, g_mem, why,
                                         sizeof why),
                     BPTT_EINVAL);
    ck_assert_ptr_null(task);
    ck_assert_msg(strstr(why, "one distinct byte (0x7a)"), "%s", why);

    unsigned char all[512];
    for (size_t i = 0; i < sizeof all; i++)
        all[i] = (unsigned char)i;
    path_in(path, sizeof path, "all.txt");
    write_file(path, all, sizeof all);
    snprintf(spec, sizeof spec, "text:%s", path);
    ck_assert_int_eq(bptt_task_alloc_why(&task, spec, 10, 2, 255, 1, g_mem,
                                         why, sizeof why),
                     BPTT_EINVAL);
    ck_assert_msg(strstr(why, "256 here (give --input 256"), "%s", why);
    ck_assert_int_eq(bptt_task_alloc_why(&task, spec, 10, 2, 256, 1, g_mem,
                                         why, sizeof why),
                     BPTT_OK);
    ck_assert_str_eq(why, "");
    ck_assert_uint_eq(bptt_task_classes(task), 256);
    bptt_task_free(task);
    ck_assert_uint_eq(total_bytes(), 0);
}
END_TEST

/* ---- tracked memory ---------------------------------------------------- */

START_TEST(test_memory_exact)
{
    bptt_task *task = make_task("copy", 12, 5, 7, 1);
    ck_assert_uint_eq(data_bytes(), 12 * 5 * 7 * sizeof(real) + 12 * 5 * 4);
    ck_assert_uint_eq(total_bytes(), data_bytes());
    bptt_batch bt;
    ck_assert_int_eq(bptt_task_batch(task, 0, &bt), BPTT_OK);
    ck_assert_uint_eq(data_bytes(), 12 * 5 * 7 * sizeof(real) + 12 * 5 * 4);
    bptt_task_free(task);
    ck_assert_uint_eq(total_bytes(), 0);

    char spec[PATH_MAX + 8];
    const size_t n = sizeof TEXT - 1;
    text_spec(spec, sizeof spec, "t.txt", n);
    task = make_task(spec, 9, 2, 0, 1);
    const size_t V = bptt_task_classes(task);
    ck_assert_uint_eq(data_bytes(), n + 9 * 2 * V * sizeof(real) + 9 * 2 * 4);
    bptt_task_free(task);
    ck_assert_uint_eq(total_bytes(), 0);
}
END_TEST

/* Every allocation of bptt_task_alloc fails in turn: each failure gives
 * NOMEM and leaves nothing; then it succeeds. */
static void check_alloc_failures(const char *spec, size_t T, size_t B)
{
    for (size_t n = 1;; n++) {
        ck_assert_uint_lt(n, 100);
        bptt_mem_fail_at(g_mem, n);
        bptt_task *task = NULL;
        const int rc = bptt_task_alloc(&task, spec, T, B, 0, 1, g_mem);
        bptt_mem_fail_at(g_mem, 0);
        if (rc == BPTT_OK) {
            ck_assert_uint_ge(n, 3); /* x, y and (text) the file at least */
            bptt_task_free(task);
            ck_assert_uint_eq(total_bytes(), 0);
            return;
        }
        ck_assert_msg(rc == BPTT_ENOMEM, "%s, allocation %zu fails: %s",
                      spec, n, bptt_strerror(rc));
        ck_assert_ptr_null(task);
        ck_assert_uint_eq(total_bytes(), 0);
    }
}

START_TEST(test_memory_failures)
{
    check_alloc_failures("copy", 8, 2);
    check_alloc_failures("adding", 8, 2);
    char spec[PATH_MAX + 8];
    text_spec(spec, sizeof spec, "t.txt", sizeof TEXT - 1);
    check_alloc_failures(spec, 8, 2);
}
END_TEST

/* ---- npy -------------------------------------------------------------- */

/* Reads path back and checks magic, version, the 64-byte alignment, the
 * header text (dict, spaces, '\n') and the data bytes. */
static void check_npy(const char *path, const char *dict, const void *data,
                      size_t data_len)
{
    size_t n;
    unsigned char *f = read_all(path, &n);
    ck_assert_uint_ge(n, 10);
    ck_assert_mem_eq(f, "\x93NUMPY", 6);
    ck_assert_int_eq(f[6], 1);
    ck_assert_int_eq(f[7], 0);
    const size_t hlen = (size_t)f[8] | (size_t)f[9] << 8;
    ck_assert_uint_eq((10 + hlen) % 64, 0);
    ck_assert_uint_eq(n, 10 + hlen + data_len);
    const size_t dlen = strlen(dict);
    ck_assert_uint_le(dlen + 1, hlen);
    ck_assert_mem_eq(f + 10, dict, dlen);
    for (size_t i = 10 + dlen; i < 10 + hlen - 1; i++)
        ck_assert_int_eq(f[i], ' ');
    ck_assert_int_eq(f[10 + hlen - 1], '\n');
    /* the padding is the least that aligns */
    ck_assert_uint_lt(hlen - dlen - 1, 64);
    /* data: little-endian, as the bytes are built here */
    ck_assert_mem_eq(f + 10 + hlen, data, data_len);
    free(f);
}

START_TEST(test_npy_write)
{
    char p1[PATH_MAX], p2[PATH_MAX], p3[PATH_MAX], listing[4096];

    /* (2, 3) float32: 0.5 * i, bytes built little-endian by hand */
    float a[6];
    unsigned char a_le[24];
    for (int i = 0; i < 6; i++) {
        a[i] = 0.5f * (float)i - 1.0f;
        uint32_t u;
        memcpy(&u, &a[i], 4);
        for (int j = 0; j < 4; j++)
            a_le[4 * i + j] = (unsigned char)(u >> (8 * j));
    }
    const size_t s23[] = {2, 3};
    path_in(p1, sizeof p1, "a.npy");
    ck_assert_int_eq(bptt_npy_write(p1, a, BPTT_NPY_F4, s23, 2), 0);
    check_npy(p1,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
              a_le, sizeof a_le);

    /* (5,) int32, negative values included */
    const int32_t b[5] = {-2, -1, 0, 1, 0x12345678};
    unsigned char b_le[20];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j < 4; j++)
            b_le[4 * i + j] = (unsigned char)((uint32_t)b[i] >> (8 * j));
    const size_t s5[] = {5};
    path_in(p2, sizeof p2, "b.npy");
    ck_assert_int_eq(bptt_npy_write(p2, b, BPTT_NPY_I4, s5, 1), 0);
    check_npy(p2, "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }",
              b_le, sizeof b_le);

    /* 0-d float64 */
    const double c = 3.25;
    unsigned char c_le[8];
    uint64_t u;
    memcpy(&u, &c, 8);
    for (int j = 0; j < 8; j++)
        c_le[j] = (unsigned char)(u >> (8 * j));
    path_in(p3, sizeof p3, "c.npy");
    ck_assert_int_eq(bptt_npy_write(p3, &c, BPTT_NPY_F8, NULL, 0), 0);
    check_npy(p3, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
              c_le, sizeof c_le);

    /* no temporary file left */
    dir_listing(listing, sizeof listing);
    ck_assert_str_eq(listing, "a.npy|b.npy|c.npy");

    /* overwrite in place */
    ck_assert_int_eq(bptt_npy_write(p2, a, BPTT_NPY_F4, s23, 2), 0);
    check_npy(p2,
              "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
              a_le, sizeof a_le);
    dir_listing(listing, sizeof listing);
    ck_assert_str_eq(listing, "a.npy|b.npy|c.npy");

    /* a link planted at the temporary name (its pid guessed) is not
     * written through: the victim keeps its bytes, the file is written */
    char victim[PATH_MAX], tmp[PATH_MAX + 32];
    path_in(victim, sizeof victim, "victim");
    write_file(victim, "keep", 4);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", p2, (long)getpid());
    ck_assert_int_eq(symlink(victim, tmp), 0);
    ck_assert_int_eq(bptt_npy_write(p2, b, BPTT_NPY_I4, s5, 1), 0);
    char kept[8] = "";
    FILE *v = fopen(victim, "rb");
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(fread(kept, 1, sizeof kept, v), 4);
    fclose(v);
    ck_assert(memcmp(kept, "keep", 4) == 0);
    struct stat sb;
    ck_assert_int_eq(lstat(tmp, &sb), -1); /* the link is gone too */
    ck_assert_int_eq(lstat(p2, &sb), 0);
    ck_assert(S_ISREG(sb.st_mode));
    ck_assert_int_eq(unlink(victim), 0);
}
END_TEST

START_TEST(test_npy_shapes)
{
    char p[PATH_MAX];
    path_in(p, sizeof p, "e.npy");
    /* empty array: no data, data may be NULL */
    const size_t s0[] = {4, 0};
    ck_assert_int_eq(bptt_npy_write(p, NULL, BPTT_NPY_F4, s0, 2), 0);
    check_npy(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 0), }",
              "", 0);
    /* a header longer than 64 bytes still aligns */
    const size_t s6[] = {1, 1, 1, 1, 1, 1};
    const float one = 1;
    ck_assert_int_eq(bptt_npy_write(p, &one, BPTT_NPY_F4, s6, 6), 0);
    check_npy(p,
              "{'descr': '<f4', 'fortran_order': False, "
              "'shape': (1, 1, 1, 1, 1, 1), }",
              "\0\0\x80\x3f", 4);
    /* a dict that fills 128 bytes with its '\n': no padding at all */
    size_t s21[21];
    float ten[10];
    char dict[256];
    size_t len = (size_t)snprintf(
        dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, "
                           "'shape': (10");
    for (int i = 0; i < 21; i++) {
        s21[i] = i ? 1 : 10;
        if (i)
            len += (size_t)snprintf(dict + len, sizeof dict - len, ", 1");
    }
    snprintf(dict + len, sizeof dict - len, "), }");
    ck_assert_uint_eq(10 + strlen(dict) + 1, 128);
    for (int i = 0; i < 10; i++)
        ten[i] = 0;
    ck_assert_int_eq(bptt_npy_write(p, ten, BPTT_NPY_F4, s21, 21), 0);
    check_npy(p, dict, ten, sizeof ten);
}
END_TEST

START_TEST(test_npy_errors)
{
    char p[PATH_MAX], listing[4096];
    const float a[2] = {1, 2};
    const size_t s2[] = {2};

    /* missing directory: an error, nothing created */
    path_in(p, sizeof p, "no/such/dir/a.npy");
    ck_assert_int_eq(bptt_npy_write(p, a, BPTT_NPY_F4, s2, 1), ENOENT);
    dir_listing(listing, sizeof listing);
    ck_assert_str_eq(listing, "");

    /* the target is a directory: the rename fails after the temporary file
     * is written, which must be removed */
    path_in(p, sizeof p, "adir");
    ck_assert_int_eq(mkdir(p, 0700), 0);
    ck_assert_int_ne(bptt_npy_write(p, a, BPTT_NPY_F4, s2, 1), 0);
    dir_listing(listing, sizeof listing);
    ck_assert_str_eq(listing, "adir");

    /* bad arguments */
    path_in(p, sizeof p, "x.npy");
    ck_assert_int_eq(bptt_npy_write(p, a, 99, s2, 1), EINVAL);
    ck_assert_int_eq(bptt_npy_write(NULL, a, BPTT_NPY_F4, s2, 1), EINVAL);
    ck_assert_int_eq(bptt_npy_write(p, a, BPTT_NPY_F4, s2, -1), EINVAL);
    ck_assert_int_eq(bptt_npy_write(p, a, BPTT_NPY_F4, NULL, 1), EINVAL);
    ck_assert_int_eq(bptt_npy_write(p, NULL, BPTT_NPY_F4, s2, 1), EINVAL);
    const size_t huge[] = {SIZE_MAX / 2, 3};
    ck_assert_int_eq(bptt_npy_write(p, a, BPTT_NPY_F4, huge, 2), EOVERFLOW);
    dir_listing(listing, sizeof listing);
    ck_assert_str_eq(listing, "adir");
}
END_TEST

/* ---- meta ------------------------------------------------------------- */

static void utc_now(char *out, size_t cap)
{
    const time_t now = time(NULL);
    struct tm tm;
    ck_assert_ptr_nonnull(gmtime_r(&now, &tm));
    ck_assert_uint_gt(strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm), 0);
}

START_TEST(test_meta_collect)
{
    char before[32], after[32];
    utc_now(before, sizeof before);
    bptt_meta m;
    bptt_meta_collect(&m);
    utc_now(after, sizeof after);
    ck_assert_uint_gt(strlen(m.version), 0);
    ck_assert_uint_gt(strlen(m.git_revision), 0);
    ck_assert_uint_gt(strlen(m.compiler), 0);
    ck_assert_uint_gt(strlen(m.cflags), 0);
    ck_assert_uint_gt(strlen(m.blas), 0);
    ck_assert_uint_gt(strlen(m.blas_core), 0);
    ck_assert_msg(!strcmp(m.gemm_kernel, "avx512") ||
                      !strcmp(m.gemm_kernel, "avx2") ||
                      !strcmp(m.gemm_kernel, "cblas"),
                  "gemm_kernel '%s'", m.gemm_kernel);
    ck_assert_uint_gt(strlen(m.cpu_model), 0);
#if defined(__GNUC__) && !defined(__clang__)
    ck_assert_msg(!strncmp(m.compiler, "gcc ", 4), "compiler '%s'",
                  m.compiler);
#endif
    ck_assert_int_ge(m.blas_threads, 1);
    ck_assert_int_ge(m.omp_threads, 1);
    ck_assert_int_ge(m.cpu_cores, 1);

    /* date: YYYY-MM-DDTHH:MM:SSZ, UTC, now (ISO dates sort as strings) */
    ck_assert_uint_eq(strlen(m.date), 20);
    static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
    for (size_t i = 0; i < 20; i++) {
        if (shape[i] == 'd')
            ck_assert_msg(m.date[i] >= '0' && m.date[i] <= '9', "date %s",
                          m.date);
        else
            ck_assert_msg(m.date[i] == shape[i], "date %s", m.date);
    }
    ck_assert_msg(strcmp(before, m.date) <= 0 && strcmp(m.date, after) <= 0,
                  "date %s not in [%s, %s]", m.date, before, after);

    char json[4096];
    const int len = bptt_meta_json(&m, json, sizeof json);
    ck_assert_int_gt(len, 0);
    ck_assert_uint_eq((size_t)len, strlen(json));
    static const char *const keys[] = {
        "\"version\":\"",  "\"git_revision\":\"", "\"compiler\":\"",
        "\"cflags\":\"",   "\"blas\":\"",         "\"blas_threads\":",
        "\"blas_core\":\"", "\"gemm_kernel\":\"",
        "\"blas_core_source\":\"", "\"blas_core_slow\":",
        "\"cpu_isa\":\"",
        "\"omp_threads\":", "\"cpu_model\":\"",   "\"cpu_cores\":",
        "\"date\":\""};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(strstr(json, keys[i]) != NULL, "%s not in %s", keys[i],
                      json);
    ck_assert_int_eq(json[0], '"');
    ck_assert_int_ne(json[len - 1], ',');
}
END_TEST

static void fill(char *dst, size_t cap, const char *src)
{
    ck_assert_uint_lt(strlen(src), cap);
    strcpy(dst, src);
}

/* Kernel-set levels, the decision to start again, and the source. */
START_TEST(test_meta_blas_core_choice)
{
    static const char *const old[] = {"Prescott", "Core2", "Nehalem",
                                      "Sandybridge", "Atom", "Bulldozer"};
    static const char *const avx2[] = {"Haswell", "Zen"};
    static const char *const avx512[] = {"SkylakeX", "Cooperlake",
                                         "SapphireRapids"};
    static const char *const unknown[] = {"unknown", "", "prescott",
                                          "ARMV8", "SkylakeXX"};
    for (size_t i = 0; i < sizeof old / sizeof old[0]; i++)
        ck_assert_int_eq(bptt_blas_core_isa(old[i]), BPTT_ISA_OLD);
    for (size_t i = 0; i < sizeof avx2 / sizeof avx2[0]; i++)
        ck_assert_int_eq(bptt_blas_core_isa(avx2[i]), BPTT_ISA_AVX2);
    for (size_t i = 0; i < sizeof avx512 / sizeof avx512[0]; i++)
        ck_assert_int_eq(bptt_blas_core_isa(avx512[i]), BPTT_ISA_AVX512);
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        ck_assert_int_eq(bptt_blas_core_isa(unknown[i]), BPTT_ISA_UNKNOWN);
    ck_assert_int_eq(bptt_blas_core_isa(NULL), BPTT_ISA_UNKNOWN);

    /* the names asked for are the ones OpenBLAS's table knows, at the
     * level asked for */
    ck_assert_int_eq(bptt_blas_core_isa(bptt_blas_core_for_isa(
                         BPTT_ISA_AVX512)), BPTT_ISA_AVX512);
    ck_assert_int_eq(bptt_blas_core_isa(bptt_blas_core_for_isa(
                         BPTT_ISA_AVX2)), BPTT_ISA_AVX2);
    ck_assert_ptr_null(bptt_blas_core_for_isa(BPTT_ISA_OLD));

    /* unset, and OpenBLAS below the CPU: start again with the CPU's best */
    ck_assert_str_eq(bptt_blas_core_advice(NULL, "Prescott", BPTT_ISA_AVX512),
                     "SkylakeX");
    ck_assert_str_eq(bptt_blas_core_advice("", "Prescott", BPTT_ISA_AVX2),
                     "Haswell");
    ck_assert_str_eq(bptt_blas_core_advice(NULL, "Haswell", BPTT_ISA_AVX512),
                     "SkylakeX");
    /* valgrind hides AVX-512: OpenBLAS's old choice becomes AVX2 */
    ck_assert_str_eq(bptt_blas_core_advice(NULL, "Sandybridge",
                                           BPTT_ISA_AVX2), "Haswell");
    /* OpenBLAS at or above the CPU's level, an unknown set, an old CPU */
    ck_assert_ptr_null(bptt_blas_core_advice(NULL, "Cooperlake",
                                             BPTT_ISA_AVX512));
    ck_assert_ptr_null(bptt_blas_core_advice(NULL, "Haswell", BPTT_ISA_AVX2));
    ck_assert_ptr_null(bptt_blas_core_advice(NULL, "ARMV8", BPTT_ISA_AVX512));
    ck_assert_ptr_null(bptt_blas_core_advice(NULL, "Prescott", BPTT_ISA_OLD));
    ck_assert_ptr_null(bptt_blas_core_advice(NULL, "Prescott",
                                             BPTT_ISA_UNKNOWN));
    /* a user's OPENBLAS_CORETYPE is never overridden, whatever it names */
    ck_assert_ptr_null(bptt_blas_core_advice("Prescott", "Prescott",
                                             BPTT_ISA_AVX512));
    ck_assert_ptr_null(bptt_blas_core_advice("Haswell", "Haswell",
                                             BPTT_ISA_AVX512));

    /* kernels above the CPU's level cannot run; unknown names pass */
    ck_assert_int_eq(bptt_blas_core_runnable("SkylakeX", BPTT_ISA_AVX2), -1);
    ck_assert_int_eq(bptt_blas_core_runnable("Haswell", BPTT_ISA_OLD), -1);
    ck_assert_int_eq(bptt_blas_core_runnable("SkylakeX", BPTT_ISA_AVX512), 0);
    ck_assert_int_eq(bptt_blas_core_runnable("Haswell", BPTT_ISA_AVX512), 0);
    ck_assert_int_eq(bptt_blas_core_runnable("Prescott", BPTT_ISA_OLD), 0);
    ck_assert_int_eq(bptt_blas_core_runnable("ARMV8", BPTT_ISA_OLD), 0);
    ck_assert_int_eq(bptt_blas_core_runnable("SkylakeX", BPTT_ISA_UNKNOWN), 0);

    ck_assert_str_eq(bptt_blas_core_source(NULL, NULL), "openblas");
    ck_assert_str_eq(bptt_blas_core_source("", "SkylakeX"), "openblas");
    ck_assert_str_eq(bptt_blas_core_source("SkylakeX", "SkylakeX"), "bptt");
    ck_assert_str_eq(bptt_blas_core_source("Haswell", NULL), "user");
    /* a marker left from another choice does not make the user's ours */
    ck_assert_str_eq(bptt_blas_core_source("Haswell", "SkylakeX"), "user");

    /* this process: the metadata agrees with the functions */
    bptt_meta m;
    bptt_meta_collect(&m);
    ck_assert_str_eq(m.blas_core_source,
                     bptt_blas_core_source(getenv("OPENBLAS_CORETYPE"),
                                           getenv(BPTT_BLAS_MARKER)));
    ck_assert_str_eq(m.cpu_isa, bptt_isa_name(bptt_cpu_isa()));
    const int core = bptt_blas_core_isa(m.blas_core);
    ck_assert_int_eq(m.blas_core_slow,
                     core != BPTT_ISA_UNKNOWN && core < bptt_cpu_isa());
    char text[256];
    ck_assert_int_lt(bptt_meta_blas_text(&m, text, sizeof text),
                     (int)sizeof text);
    ck_assert_msg(strncmp(text, m.blas_core, strlen(m.blas_core)) == 0, "%s",
                  text);
    ck_assert_msg((strstr(text, "slower") != NULL) == m.blas_core_slow, "%s",
                  text);
}
END_TEST

START_TEST(test_meta_json_escaping)
{
    bptt_meta m;
    memset(&m, 0, sizeof m);
    fill(m.version, sizeof m.version, "1.0 \"beta\"");
    fill(m.git_revision, sizeof m.git_revision, "back\\slash");
    fill(m.compiler, sizeof m.compiler, "tab\there\nnl\x01\x1f");
    fill(m.cflags, sizeof m.cflags, "-O2 -DNAME=\"x\"");
    fill(m.blas, sizeof m.blas, "caf\xc3\xa9 bad\xff end\xe2\x82");
    fill(m.blas_core, sizeof m.blas_core, "Sky\\lake");
    fill(m.blas_core_source, sizeof m.blas_core_source, "us\"er");
    fill(m.cpu_isa, sizeof m.cpu_isa, "avx512");
    m.blas_core_slow = 1;
    m.blas_threads = 4;
    fill(m.gemm_kernel, sizeof m.gemm_kernel, "k\"1");
    m.omp_threads = -1;
    fill(m.cpu_model, sizeof m.cpu_model, "");
    m.cpu_cores = 16;
    /* a field with no NUL in its array is read up to the array's end */
    memset(m.date, 'Z', sizeof m.date);

    static const char want[] =
        "\"record_format\":1,\"version\":\"1.0 \\\"beta\\\"\","
        "\"git_revision\":\"back\\\\slash\","
        "\"compiler\":\"tab\\there\\nnl\\u0001\\u001f\","
        "\"cflags\":\"-O2 -DNAME=\\\"x\\\"\","
        "\"blas\":\"caf\xc3\xa9 bad\\ufffd end\\ufffd\\ufffd\","
        "\"blas_core\":\"Sky\\\\lake\","
        "\"blas_core_source\":\"us\\\"er\","
        "\"blas_core_slow\":1,"
        "\"cpu_isa\":\"avx512\","
        "\"blas_threads\":4,"
        "\"gemm_kernel\":\"k\\\"1\","
        "\"omp_threads\":-1,"
        "\"cpu_model\":\"\","
        "\"cpu_cores\":16,"
        "\"date\":\"ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ\"";
    char json[1024];
    const int len = bptt_meta_json(&m, json, sizeof json);
    ck_assert_str_eq(json, want);
    ck_assert_int_eq(len, (int)strlen(want));

    /* snprintf semantics: the length without a buffer, truncation */
    ck_assert_int_eq(bptt_meta_json(&m, NULL, 0), len);
    char small[10];
    memset(small, 'x', sizeof small);
    ck_assert_int_eq(bptt_meta_json(&m, small, sizeof small), len);
    ck_assert_str_eq(small, "\"record_f");
}
END_TEST

/* The worst case, every byte of every field escaped into six, fits in
 * BPTT_META_JSON_MAX. */
START_TEST(test_meta_json_max)
{
    bptt_meta m;
    memset(&m, 0x01, sizeof m);
    m.blas_threads = m.omp_threads = m.cpu_cores = INT_MIN;
    static char json[BPTT_META_JSON_MAX];
    const int len = bptt_meta_json(&m, json, sizeof json);
    ck_assert_int_gt(len, 5000);
    ck_assert_int_lt(len, BPTT_META_JSON_MAX);
    ck_assert_uint_eq(strlen(json), (size_t)len);
}
END_TEST

/* ---- suite ------------------------------------------------------------ */

static Suite *data_suite(void)
{
    Suite *s = suite_create("data");
    struct {
        const char *name;
        const TTest *tests[8];
    } cases[] = {
        {"determinism",
         {test_determinism_copy, test_determinism_adding,
          test_determinism_text}},
        {"copy", {test_copy_definition, test_copy_lag_20,
                  test_copy_default_width}},
        {"adding", {test_adding_definition}},
        {"text", {test_text_definition, test_text_exact_length,
                  test_text_pipe}},
        {"errors", {test_errors, test_text_refusals_say_why}},
        {"memory", {test_memory_exact, test_memory_failures}},
        {"npy", {test_npy_write, test_npy_shapes, test_npy_errors}},
        {"meta", {test_meta_collect, test_meta_blas_core_choice,
                  test_meta_json_escaping,
                  test_meta_json_max}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_unchecked_fixture(tc, base_setup, base_teardown);
        tcase_add_checked_fixture(tc, setup, teardown);
        for (size_t j = 0; j < 8 && cases[i].tests[j]; j++)
            tcase_add_test(tc, cases[i].tests[j]);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(data_suite());
    srunner_run_all(sr, CK_ENV);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
