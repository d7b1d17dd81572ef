/* data.c: seeded training data (see data.h).
 *
 * Promises: batch k of a task is a pure function of (spec, T, B, X, seed, k):
 * the generator is reseeded for every batch from a mix of (seed, k), so
 * batches can be drawn in any order, any number of times.  The bytes this
 * file takes from the tracked allocator (category BPTT_MEM_DATA) are exactly
 * the batch, T*B*X*sizeof(real) + T*B*sizeof(int32_t), plus, for text, the
 * file's size; the task's bookkeeping and GSL's generator state (a few KiB)
 * come from malloc.
 *
 * Does not promise: the same batches across versions of this file (the
 * order of draws is an implementation detail), or anything about files that
 * change while they are being read.
 *
 * Legend: T steps, B sequences per batch, X input width, V classes.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "real_impl.h"
#include "data.h"
#include "data_impl.h"
#include "why.h"

enum task_kind { TASK_COPY, TASK_ADDING, TASK_TEXT };

#define COPY_DEFAULT_WIDTH 16
#define ADDING_WIDTH 2
#define ADDING_CLASSES 16
#define TEXT_PREFIX "text:"

struct bptt_task {
    int kind; /* enum task_kind */
    size_t T, B, X, V;
    size_t lag; /* copy: target i is input i - lag */
    unsigned long seed;
    bptt_mem *mem;
    gsl_rng *rng;
    real *x;    /* (T, B, X) */
    int32_t *y; /* (T, B) */
    size_t x_len, y_len;  /* elements of x and y */
    unsigned char *text;  /* (n) the file's bytes, text only */
    size_t text_len;      /* n */
    int32_t class_of[256]; /* byte -> vocabulary index, -1 if absent */
};

/* ---- random numbers -------------------------------------------------- */

/* splitmix64 (Steele, Lea, Flood 2014): a bijective, well-mixing step. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* The seed of batch k.  GSL's mt19937 uses the low 32 bits of its seed, so
 * the 64 mixed bits are folded into 32. */
static unsigned long batch_seed(unsigned long seed, size_t k)
{
    uint64_t s = (uint64_t)seed;
    uint64_t t = splitmix64(&s) ^ (uint64_t)k;
    const uint64_t z = splitmix64(&t);
    return (unsigned long)((z ^ (z >> 32)) & UINT64_C(0xFFFFFFFF));
}

/* 32 random bits: GSL's mt19937 returns integers in [0, 2^32 - 1]. */
static uint64_t draw32(gsl_rng *r)
{
    return (uint64_t)gsl_rng_get(r) & UINT64_C(0xFFFFFFFF);
}

/* Uniform in [0, n), n >= 1, without bias (rejection), for any n that fits
 * 64 bits (gsl_rng_uniform_int stops at 2^32 and aborts beyond it). */
static uint64_t draw_below(gsl_rng *r, uint64_t n)
{
    if (n <= UINT64_C(0x100000000)) {
        const uint64_t range = UINT64_C(0x100000000);
        const uint64_t limit = range - range % n; /* a multiple of n */
        uint64_t v;
        do
            v = draw32(r);
        while (v >= limit);
        return v % n;
    }
    const uint64_t rem = (UINT64_MAX % n + 1) % n; /* 2^64 mod n */
    uint64_t v;
    do
        v = (draw32(r) << 32) | draw32(r);
    while (rem != 0 && v > UINT64_MAX - rem);
    return v % n;
}

/* ---- sizes ----------------------------------------------------------- */

static int mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a)
        return 0;
    *out = a * b;
    return 1;
}

/* ---- text files ------------------------------------------------------ */

/* Reads the whole of path into a block from mem (exactly *len bytes; NULL
 * when the file is empty).  Returns an bptt status code. */
static int read_file(bptt_mem *mem, const char *path, unsigned char **bytes,
                     size_t *len)
{
    *bytes = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return BPTT_EFILE;

    /* A regular file is read into one block of its size; pipes and the
     * like into blocks that double. */
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || S_ISDIR(st.st_mode)) {
        fclose(f);
        return BPTT_EFILE;
    }
    size_t cap = 4096;
    if (S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uintmax_t)st.st_size <= SIZE_MAX)
        cap = (size_t)st.st_size;

    unsigned char *buf = bptt_mem_get(mem, BPTT_MEM_DATA, cap);
    if (!buf) {
        fclose(f);
        return BPTT_ENOMEM;
    }
    size_t n = 0;
    int status = BPTT_OK;
    for (;;) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break; /* end of file or error */
        const int c = fgetc(f); /* full: is there more? */
        if (c == EOF)
            break;
        if (cap > SIZE_MAX / 2) {
            status = BPTT_ETOOBIG;
            break;
        }
        unsigned char *bigger = bptt_mem_get(mem, BPTT_MEM_DATA, 2 * cap);
        if (!bigger) {
            status = BPTT_ENOMEM;
            break;
        }
        memcpy(bigger, buf, n);
        bptt_mem_put(mem, buf);
        buf = bigger;
        cap *= 2;
        buf[n++] = (unsigned char)c;
    }
    if (status == BPTT_OK && ferror(f))
        status = BPTT_EFILE;
    fclose(f);
    if (status == BPTT_OK && n != cap && n > 0) {
        /* Keep exactly n tracked bytes. */
        unsigned char *exact = bptt_mem_get(mem, BPTT_MEM_DATA, n);
        if (!exact) {
            status = BPTT_ENOMEM;
        } else {
            memcpy(exact, buf, n);
            bptt_mem_put(mem, buf);
            buf = exact;
        }
    }
    if (status != BPTT_OK || n == 0) {
        bptt_mem_put(mem, buf);
        return status;
    }
    *bytes = buf;
    *len = n;
    return BPTT_OK;
}

/* ---- alloc and free -------------------------------------------------- */

void bptt_task_free(bptt_task *task)
{
    if (!task)
        return;
    bptt_mem_put(task->mem, task->text);
    bptt_mem_put(task->mem, task->y);
    bptt_mem_put(task->mem, task->x);
    if (task->rng)
        gsl_rng_free(task->rng);
    free(task);
}

/* Fills kind, X, V (and lag) from the spec; reads the file for text.  A
 * refusal of the text (known only once it is read) is said in why[cap]. */
static int task_setup(bptt_task *task, const char *spec, size_t input_width,
                      char *why, size_t cap)
{
    if (strcmp(spec, "copy") == 0) {
        task->kind = TASK_COPY;
        task->X = input_width ? input_width : COPY_DEFAULT_WIDTH;
        if (task->X < 2 || task->X > INT32_MAX)
            return BPTT_EINVAL;
        task->V = task->X;
        task->lag = task->T / 4 > 1 ? task->T / 4 : 1;
        return BPTT_OK;
    }
    if (strcmp(spec, "adding") == 0) {
        task->kind = TASK_ADDING;
        if (input_width != 0 && input_width != ADDING_WIDTH)
            return BPTT_EINVAL;
        if (task->T < 2)
            return BPTT_EINVAL;
        task->X = ADDING_WIDTH;
        task->V = ADDING_CLASSES;
        return BPTT_OK;
    }
    if (strncmp(spec, TEXT_PREFIX, strlen(TEXT_PREFIX)) == 0) {
        task->kind = TASK_TEXT;
        const char *path = spec + strlen(TEXT_PREFIX);
        const int rc =
            read_file(task->mem, path, &task->text, &task->text_len);
        if (rc == BPTT_ETOOBIG)
            return bptt_why(rc, why, cap, "'%s' is too big to hold", path);
        if (rc != BPTT_OK && rc != BPTT_ESHORT)
            return bptt_why(rc, why, cap, "'%s' could not be read: %s", path,
                            bptt_strerror(rc));
        if (rc != BPTT_OK || task->text_len == 0)
            return bptt_why(BPTT_ESHORT, why, cap,
                            "'%s' was empty when read (give a text of at "
                            "least length + 1 = %.0f bytes)",
                            path, (double)task->T + 1);
        if (task->text_len == 0 || task->text_len - 1 < task->T)
            return bptt_why(BPTT_ESHORT, why, cap,
                            "'%s' has %zu bytes as read, fewer than length + "
                            "1 = %.0f (give a longer text or a smaller "
                            "length)",
                            path, task->text_len, (double)task->T + 1);
        int present[256] = {0};
        for (size_t i = 0; i < task->text_len; i++)
            present[task->text[i]] = 1;
        int32_t v = 0;
        for (int c = 0; c < 256; c++)
            task->class_of[c] = present[c] ? v++ : -1;
        task->V = (size_t)v;
        task->X = task->V;
        /* One class: the softmax's loss is 0 whatever the weights, so a
         * run would "train" to nothing without a word. */
        if (task->V < 2)
            return bptt_why(BPTT_EINVAL, why, cap,
                            "'%s' holds one distinct byte (0x%02x), so there "
                            "is nothing to predict (give a text of 2 or more "
                            "distinct bytes)",
                            path, task->text[0]);
        if (input_width != 0 && input_width != task->V)
            return bptt_why(BPTT_EINVAL, why, cap,
                            "input width %zu does not suit '%s': a text's "
                            "input width is its number of distinct bytes, "
                            "%zu here (give --input %zu or leave it out)",
                            input_width, path, task->V, task->V);
        return BPTT_OK;
    }
    return BPTT_EUNKNOWN;
}

int bptt_task_check(const char *spec, size_t T, size_t input_width,
                    size_t *X, size_t *V, double *file_bytes, char *why,
                    size_t cap)
{
    if (why && cap)
        why[0] = '\0';
    *X = *V = 0;
    *file_bytes = 0;
    if (strcmp(spec, "copy") == 0) {
        *X = *V = input_width ? input_width : COPY_DEFAULT_WIDTH;
        if (*X < 2 || *X > INT32_MAX)
            return bptt_why(BPTT_EINVAL, why, cap,
                            "input width %zu does not suit the copy task "
                            "(it needs 2 or more: the blank and at least one "
                            "symbol)",
                            input_width);
        return BPTT_OK;
    }
    if (strcmp(spec, "adding") == 0) {
        if (input_width && input_width != ADDING_WIDTH)
            return bptt_why(BPTT_EINVAL, why, cap,
                            "input width %zu does not suit the adding task "
                            "(its input is %d wide, a value and a marker)",
                            input_width, ADDING_WIDTH);
        if (T < 2)
            return bptt_why(BPTT_EINVAL, why, cap,
                            "the adding task needs a length of 2 or more "
                            "(two steps are marked)");
        *X = ADDING_WIDTH;
        *V = ADDING_CLASSES;
        return BPTT_OK;
    }
    const size_t np = strlen(TEXT_PREFIX);
    if (strncmp(spec, TEXT_PREFIX, np) != 0)
        return bptt_why(BPTT_EUNKNOWN, why, cap,
                        "unknown task '%s' (use copy, adding or text:FILE)",
                        spec);
    const char *path = spec + np;
    struct stat sb;
    if (!*path)
        return bptt_why(BPTT_EFILE, why, cap,
                        "task text: names no file (give text:FILE)");
    if (stat(path, &sb) != 0 || access(path, R_OK) != 0)
        return bptt_why(BPTT_EFILE, why, cap, "cannot read '%s' (%s)", path,
                        strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return bptt_why(BPTT_EFILE, why, cap,
                        "'%s' is a directory (give a text file)", path);
    if (!S_ISREG(sb.st_mode) && !S_ISFIFO(sb.st_mode))
        return bptt_why(BPTT_EFILE, why, cap,
                        "'%s' is not a regular file or a pipe (give a text "
                        "file)",
                        path);
    double vocab = 256;
    if (S_ISREG(sb.st_mode)) {
        if (sb.st_size == 0)
            return bptt_why(BPTT_ESHORT, why, cap,
                            "'%s' is empty (give a text of at least length "
                            "+ 1 = %.0f bytes)",
                            path, (double)T + 1);
        if ((double)sb.st_size < (double)T + 1)
            return bptt_why(BPTT_ESHORT, why, cap,
                            "'%s' has %lld bytes, fewer than length + 1 = "
                            "%.0f (give a longer text or a smaller length)",
                            path, (long long)sb.st_size, (double)T + 1);
        *file_bytes = (double)sb.st_size;
        if (*file_bytes < vocab)
            vocab = *file_bytes;
    }
    if (input_width && (double)input_width > vocab)
        return bptt_why(BPTT_EINVAL, why, cap,
                        "input width %zu does not suit the text task (its "
                        "input width is the number of distinct bytes of the "
                        "text, at most %.0f)",
                        input_width, vocab);
    *X = *V = input_width ? input_width : (size_t)vocab;
    return BPTT_OK;
}

int bptt_task_alloc(bptt_task **out, const char *spec, size_t T, size_t B,
                    size_t input_width, unsigned long seed, bptt_mem *mem)
{
    return bptt_task_alloc_why(out, spec, T, B, input_width, seed, mem, NULL,
                               0);
}

int bptt_task_alloc_why(bptt_task **out, const char *spec, size_t T,
                        size_t B, size_t input_width, unsigned long seed,
                        bptt_mem *mem, char *why, size_t cap)
{
    if (why && cap)
        why[0] = '\0';
    if (!out)
        return BPTT_EINVAL;
    *out = NULL;
    if (!spec)
        return BPTT_EUNKNOWN;
    if (!mem || T == 0 || B == 0)
        return BPTT_EINVAL;

    bptt_task *task = calloc(1, sizeof *task);
    if (!task)
        return BPTT_ENOMEM;
    task->T = T;
    task->B = B;
    task->seed = seed;
    task->mem = mem;

    int rc = task_setup(task, spec, input_width, why, cap);
    if (rc != BPTT_OK)
        goto fail;

    size_t tb, x_bytes, y_bytes;
    if (!mul_ok(T, B, &tb) || !mul_ok(tb, task->X, &task->x_len) ||
        !mul_ok(task->x_len, sizeof(real), &x_bytes) ||
        !mul_ok(tb, sizeof(int32_t), &y_bytes)) {
        rc = BPTT_ETOOBIG;
        goto fail;
    }
    task->y_len = tb;

    rc = BPTT_ENOMEM;
    task->x = bptt_mem_get(mem, BPTT_MEM_DATA, x_bytes);
    if (!task->x)
        goto fail;
    task->y = bptt_mem_get(mem, BPTT_MEM_DATA, y_bytes);
    if (!task->y)
        goto fail;
    /* gsl_rng_alloc calls GSL's error handler (by default: abort) if malloc
     * fails; it is the one allocation here that cannot report NOMEM. */
    task->rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!task->rng)
        goto fail;

    *out = task;
    return BPTT_OK;

fail:
    bptt_task_free(task);
    return rc;
}

/* ---- queries --------------------------------------------------------- */

size_t bptt_task_input_width(const bptt_task *task) { return task->X; }

size_t bptt_task_classes(const bptt_task *task) { return task->V; }

const char *bptt_task_name(const bptt_task *task)
{
    switch (task->kind) {
    case TASK_COPY:
        return "copy";
    case TASK_ADDING:
        return "adding";
    case TASK_TEXT:
        return "text";
    }
    return "unknown";
}

/* ---- batches --------------------------------------------------------- */

/* x one-hot of symbols 1..X-1; y first holds the symbols, then, from the
 * last step down (so that y[t - lag] is still a symbol), the lagged copy. */
static void fill_copy(bptt_task *task)
{
    const size_t T = task->T, B = task->B, X = task->X, lag = task->lag;
    real *x = task->x;
    int32_t *y = task->y;
    for (size_t t = 0; t < T; t++)
        for (size_t b = 0; b < B; b++) {
            const size_t sym = 1 + (size_t)draw_below(task->rng, X - 1);
            x[(t * B + b) * X + sym] = 1;
            y[t * B + b] = (int32_t)sym;
        }
    for (size_t t = T; t-- > 0;)
        for (size_t b = 0; b < B; b++)
            y[t * B + b] = t >= lag ? y[(t - lag) * B + b] : 0;
}

static void fill_adding(bptt_task *task)
{
    const size_t T = task->T, B = task->B;
    real *x = task->x; /* (T, B, 2) */
    int32_t *y = task->y;
    for (size_t t = 0; t < T; t++)
        for (size_t b = 0; b < B; b++)
            x[(t * B + b) * 2] =
                (real)((double)(draw32(task->rng) >> 8) * 0x1p-24);
    for (size_t b = 0; b < B; b++) {
        const size_t m1 = (size_t)draw_below(task->rng, T);
        size_t m2 = (size_t)draw_below(task->rng, T - 1);
        if (m2 >= m1)
            m2++;
        x[(m1 * B + b) * 2 + 1] = 1;
        x[(m2 * B + b) * 2 + 1] = 1;
        /* Values are multiples of 2^-24 below 1: the sum is exact in double
         * and below 2, so floor(8 * sum) is in 0..15. */
        double sum = 0;
        for (size_t t = 0; t < T; t++) {
            const real *xt = x + (t * B + b) * 2;
            if (xt[1] != 0)
                sum += (double)xt[0];
            y[t * B + b] = (int32_t)(sum * 8.0);
        }
    }
}

static void fill_text(bptt_task *task)
{
    const size_t T = task->T, B = task->B, X = task->X;
    real *x = task->x;
    int32_t *y = task->y;
    const unsigned char *text = task->text;
    for (size_t b = 0; b < B; b++) {
        /* Offsets 0..n-T-1: bytes off..off+T exist. */
        const size_t off =
            (size_t)draw_below(task->rng, (uint64_t)(task->text_len - T));
        for (size_t t = 0; t < T; t++) {
            const int32_t in = task->class_of[text[off + t]];
            x[(t * B + b) * X + (size_t)in] = 1;
            y[t * B + b] = task->class_of[text[off + t + 1]];
        }
    }
}

int bptt_task_batch(bptt_task *task, size_t k, bptt_batch *out)
{
    if (!task || !out)
        return BPTT_EINVAL;
    gsl_rng_set(task->rng, batch_seed(task->seed, k));
    memset(task->x, 0, task->x_len * sizeof(real));
    memset(task->y, 0, task->y_len * sizeof(int32_t));
    switch (task->kind) {
    case TASK_COPY:
        fill_copy(task);
        break;
    case TASK_ADDING:
        fill_adding(task);
        break;
    case TASK_TEXT:
        fill_text(task);
        break;
    }
    out->T = task->T;
    out->B = task->B;
    out->X = task->X;
    out->x = task->x;
    out->y = task->y;
    return BPTT_OK;
}
