/* run_online.c: `bptt run --online`: the text's lines as sequences whose
 * end the data decides, and one iteration's gradients under the online
 * planner (online.h) through the session (session.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bptt.h"
#include "online.h"
#include "session.h"
#include "io/runrec.h"
#include "run.h"
#include "run_online.h"

#define CMD "run"

void run_text_free(struct run_text *t)
{
    if (!t)
        return;
    free(t->bytes);
    free(t->lines);
    free(t);
}

/* FILE of --task text:FILE split at the separator into its non-empty
 * lines, each cut at max steps: 0 with *out, or the error and its exit
 * code.  Before any work (the task reads the file again). */
int run_text_load(const run_args *a, size_t max, struct run_text **out)
{
    const char *path = a->task + 5;
    *out = NULL;
    struct run_text *t = calloc(1, sizeof *t);
    FILE *f = t ? fopen(path, "rb") : NULL;
    if (!t)
        return cli_error(1, CMD, "out of memory");
    if (!f) {
        const int e = errno;
        free(t);
        return cli_error(EXIT_USAGE, CMD, "--task %s: %s", a->task,
                         strerror(e));
    }
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode)) {
        fclose(f);
        free(t);
        return cli_error(EXIT_USAGE, CMD, "--task %s: not a regular file "
                         "(--online reads its lines before the run; give a "
                         "text file)", a->task);
    }
    /* its bytes and the lines' table, at most a line per byte */
    const int fits = run_fits(CMD, "--online: the text and its lines",
                              (double)sb.st_size * (1.0 + sizeof(run_line)),
                              "use a shorter text");
    if (fits != 0) {
        fclose(f);
        free(t);
        return fits;
    }
    size_t cap = 0;
    for (;;) {
        if (t->n_bytes == cap) {
            cap = cap ? 2 * cap : 65536;
            unsigned char *b = realloc(t->bytes, cap);
            if (!b) {
                fclose(f);
                run_text_free(t);
                return cli_error(1, CMD, "out of memory");
            }
            t->bytes = b;
        }
        const size_t got = fread(t->bytes + t->n_bytes, 1, cap - t->n_bytes,
                                 f);
        t->n_bytes += got;
        if (got == 0 || t->n_bytes >= (size_t)sb.st_size)
            break; /* a file that grows as it is read: what it had */
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad) {
        run_text_free(t);
        return cli_error(EXIT_USAGE, CMD, "--task %s: cannot be read",
                         a->task);
    }
    const unsigned char sep = (unsigned char)a->separator;
    int seen[256] = {0};
    size_t n = 0;
    for (size_t j = 0; j < t->n_bytes; j++) {
        seen[t->bytes[j]] = 1;
        n += t->bytes[j] == sep;
    }
    if (!seen[sep]) {
        run_text_free(t);
        return cli_error(EXIT_USAGE, CMD, "--separator: byte 0x%02x does "
                         "not occur in %s (every line's last target is the "
                         "separator)", sep, a->task + 5);
    }
    for (int c = 0; c < 256; c++)
        t->class_of[c] = seen[c] ? (int32_t)t->classes++ : -1;
    t->lines = calloc(n + 1, sizeof *t->lines);
    if (!t->lines) {
        run_text_free(t);
        return cli_error(1, CMD, "out of memory");
    }
    for (size_t j = 0; j < t->n_bytes;) {
        size_t e = j;
        while (e < t->n_bytes && t->bytes[e] != sep)
            e++;
        if (e > j) {
            run_line *l = &t->lines[t->n_lines++];
            l->at = t->bytes + j;
            l->len = e - j < max ? e - j : max;
            l->end = l->len < e - j ? l->at[l->len] : sep;
            if (l->len > t->longest)
                t->longest = l->len;
        }
        j = e + 1;
    }
    if (t->n_lines == 0) {
        run_text_free(t);
        return cli_error(EXIT_USAGE, CMD, "--online: %s has no non-empty "
                         "line (lines end at byte 0x%02x)", a->task + 5, sep);
    }
    *out = t;
    return 0;
}

/* more (steps.h) over one line: step i + 1's input (one-hot of byte i)
 * and target (the next byte) into row i of the session's batch. */
typedef struct {
    const run_line *line;
    const struct run_text *text;
    bptt_real *x;
    int32_t *y;
    size_t X;
} line_reader;

static int line_more(void *ctx, size_t i, int *last)
{
    line_reader *r = ctx;
    const run_line *l = r->line;
    if (i >= l->len)
        return 0;
    bptt_real *x = r->x + i * r->X;
    memset(x, 0, r->X * sizeof *x);
    x[r->text->class_of[l->at[i]]] = 1;
    r->y[i] = r->text->class_of[i + 1 < l->len ? l->at[i + 1] : l->end];
    *last = i + 1 == l->len; /* the byte after it says so */
    return 1;
}

int run_online_gradients(const run_args *a, bptt_run_report *r,
                         bptt_session *session, const struct run_text *text,
                         int64_t budget_bytes, int64_t quantum, int64_t it,
                         struct run_row *w, bptt_session_fault *f)
{
    const bptt_batch *b = bptt_session_batch(session);
    line_reader rd = {&text->lines[(size_t)it % text->n_lines], text, b->x,
                      b->y, b->X};
    bptt_online *o = NULL;
    int rc = BPTT_OK;
    if (strcmp(a->strategy->name, "full") != 0)
        rc = bptt_online_new(&o, a->strategy->name, (int64_t)r->hidden_bytes,
                             (int64_t)r->internal_bytes, budget_bytes, NULL);
    bptt_plan *plan = NULL;
    if (rc == BPTT_OK)
        rc = bptt_session_gradients_online(session, o, line_more, &rd,
                                           &r->ex, &plan, f);
    bptt_online_free(o);
    bptt_plan_stats vs;
    if (rc == BPTT_OK && bptt_plan_validate(plan, &vs) != BPTT_OK)
        rc = BPTT_EBADPLAN;
    if (rc == BPTT_OK) {
        r->plan_forward_ops = vs.forward_ops;
        r->predicted_peak_bytes = vs.peak_units * quantum;
        w->steps = (int64_t)plan->length;
        w->forward_ops = r->ex.forward_ops;
        w->plan_forward_ops = vs.forward_ops;
        w->peak_bytes = r->ex.checkpoint_peak_bytes;
        w->loss = r->ex.loss;
        if (w->peak_bytes > (size_t)budget_bytes)
            rc = BPTT_EBADPLAN; /* the executor holds it: never */
    }
    bptt_plan_free(plan);
    return rc;
}
