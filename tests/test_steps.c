/* test_steps.c: Check suite of the executor (steps.h) on counting
 * stand-ins, as Revolve's tests check its schedules: an ops table whose
 * ops compute nothing and record every call.
 *
 * Each state a stand-in writes says who wrote it: a tag (hidden,
 * internal, gradient), the step and the number of the forward call that
 * made it, and every other byte a pattern of those three, so a state that
 * is stale, of the wrong kind, of the wrong step or partly overwritten
 * does not read back as a valid one.  The expected calls are derived from
 * the plan's actions alone, by following what each action holds (the
 * running state, the working internal state, each stored state, the
 * gradient) as names, not bytes.
 *
 * Promises: for every strategy of bptt_strategies[], lengths 1..20 and a
 * few longer ones, alpha 1, 2, 4 and 3.5 (h = 2, s = 7 units), and every
 * feasible budget up to full BPTT's peak and beyond (a spread of them at
 * the longer lengths), bptt_steps_run
 *   - calls the ops in plan order, one forward op per advance, one
 *     hidden_from_internal per restore_internal and one backward op per
 *     backward, and nothing else;
 *   - gives each forward op the running state the actions say (h0, or the
 *     one a given forward op or restore made), each backward op an s(i)
 *     made by a forward op of step i that the plan still holds, and the
 *     gradient the previous backward op wrote (zero at step t);
 *   - hands out 64-byte aligned, pairwise distinct buffers and the user's
 *     context;
 *   - counts forward ops, recomputations, backward ops and restores as
 *     the validator does, holds at its checkpoint peak exactly the
 *     validator's peak in bytes (the tracked allocator agreeing), takes
 *     exactly bptt_exec_working_bytes of working memory, records one
 *     point per action, and releases every byte;
 * it refuses NULL arguments, bad sizes, mismatched units (BPTT_EINVAL)
 * and broken plans (BPTT_EBADPLAN) without calling an op; an op's error
 * stops the run at that call and is returned; an allocation failure at
 * any of its allocations gives BPTT_ENOMEM with every byte released.
 * Hand-written valid plans that no planner makes are held to the same.
 * The comparison itself is shown to catch a wrong state, step or order.
 *
 * Legend: t length, h and s hidden and internal units, q bytes per unit,
 * m budget in units.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bptt.h"
#include "mem.h"
#include "online.h"
#include "steps.h"
#include "twolevel.h"
#include "tiny.h"

#define Q 16 /* bytes per unit: room for a state's 12-byte name */

/* ---- states that say who wrote them ------------------------------------- */

enum { ZERO = 0, HID = 'h', INT = 's', GRAD = 'g', BAD = '?' };

typedef struct {
    int tag;         /* ZERO: all zero bytes; BAD: no valid state */
    uint32_t step;   /* the step the state belongs to */
    uint32_t serial; /* the forward call that made it (0: h0, gradients) */
} name;

static int same(name a, name b)
{
    return a.tag == b.tag && (a.tag == ZERO || a.tag == BAD ||
                              (a.step == b.step && a.serial == b.serial));
}

static unsigned char fill(name n, size_t j)
{
    return (unsigned char)(1 + (n.tag * 7 + n.step * 31 + n.serial * 131 +
                                j * 17) % 251);
}

static void write_state(void *buf, size_t bytes, name n)
{
    unsigned char *p = buf;
    const uint32_t head[3] = {(uint32_t)n.tag, n.step, n.serial};
    memcpy(p, head, sizeof head);
    for (size_t j = sizeof head; j < bytes; j++)
        p[j] = fill(n, j);
}

static name read_state(const void *buf, size_t bytes)
{
    const unsigned char *p = buf;
    size_t zeros = 0;
    for (size_t j = 0; j < bytes; j++)
        zeros += p[j] == 0;
    if (zeros == bytes)
        return (name){ZERO, 0, 0};
    uint32_t head[3];
    memcpy(head, p, sizeof head);
    name n = {(int)head[0], head[1], head[2]};
    if (n.tag != HID && n.tag != INT && n.tag != GRAD)
        return (name){BAD, 0, 0};
    for (size_t j = sizeof head; j < bytes; j++)
        if (p[j] != fill(n, j))
            return (name){BAD, 0, 0};
    return n;
}

/* ---- the stand-in ops --------------------------------------------------- */

enum { FWD = 'F', BWD = 'B', REC = 'R' };

typedef struct {
    int kind;       /* FWD, BWD, REC */
    uint32_t step;
    name in;        /* FWD: h_in; BWD, REC: s */
    name grad;      /* BWD: dh on entry */
    int buffers_ok; /* aligned, distinct, the right context */
} call;

typedef struct {
    size_t hb, sb;
    call *calls;
    size_t n_calls, cap;
    uint32_t forwards;  /* forward calls so far: the next one's serial */
    size_t fail_at;     /* the call (1-based) that returns fail_rc; 0: none */
    int fail_rc;
    void *self;         /* what ctx must be */
    /* 0, or 1 + the byte offset at which the forward op copies h(i) into
     * s(i) (a table with hidden_in_internal) */
    size_t embed;
} recorder;

static int aligned(const void *p)
{
    return ((uintptr_t)p & 63) == 0;
}

/* [a, a+na) and [b, b+nb) do not overlap */
static int apart(const void *a, size_t na, const void *b, size_t nb)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x + na <= y || y + nb <= x;
}

static int record(recorder *r, call c)
{
    if (r->n_calls == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->calls = realloc(r->calls, r->cap * sizeof *r->calls);
        ck_assert_ptr_nonnull(r->calls);
    }
    r->calls[r->n_calls++] = c;
    return r->fail_at && r->n_calls == r->fail_at ? r->fail_rc : 0;
}

/* s(i) as the stand-in reads it: with r->embed, the bytes at the offset
 * must be h(i) of the same forward call (else it is garbage), and are
 * read as the internal state's own pattern. */
static name read_internal(const recorder *r, const void *s)
{
    if (!r->embed)
        return read_state(s, r->sb);
    const size_t off = r->embed - 1;
    unsigned char *copy = malloc(r->sb);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, s, r->sb);
    const name h = read_state(copy + off, r->hb);
    name n = {BAD, 0, 0};
    uint32_t head[3];
    memcpy(head, copy, sizeof head);
    const name said = {(int)head[0], head[1], head[2]};
    if (h.tag == HID && said.tag == INT && h.step == said.step &&
        h.serial == said.serial) {
        for (size_t j = off; j < off + r->hb; j++)
            copy[j] = fill(said, j);
        n = read_state(copy, r->sb);
    }
    free(copy);
    return n;
}

static int rec_forward(void *ctx, size_t i, const void *h_in, void *s_out,
                       void *h_out)
{
    recorder *r = ctx;
    call c = {FWD, (uint32_t)i, read_state(h_in, r->hb), {0, 0, 0}, 0};
    c.buffers_ok = r->self == ctx && aligned(h_in) && aligned(s_out) &&
                   aligned(h_out) && apart(h_in, r->hb, h_out, r->hb) &&
                   apart(h_in, r->hb, s_out, r->sb) &&
                   apart(h_out, r->hb, s_out, r->sb);
    const uint32_t serial = ++r->forwards;
    write_state(h_out, r->hb, (name){HID, (uint32_t)i, serial});
    write_state(s_out, r->sb, (name){INT, (uint32_t)i, serial});
    if (r->embed) /* the header (12 bytes) stays outside the copy */
        memcpy((unsigned char *)s_out + r->embed - 1, h_out, r->hb);
    return record(r, c);
}

static int rec_backward(void *ctx, size_t i, const void *s, void *dh)
{
    recorder *r = ctx;
    call c = {BWD, (uint32_t)i, read_internal(r, s), read_state(dh, r->hb),
              0};
    c.buffers_ok = r->self == ctx && aligned(s) && aligned(dh) &&
                   apart(s, r->sb, dh, r->hb);
    write_state(dh, r->hb, (name){GRAD, (uint32_t)i - 1, 0});
    return record(r, c);
}

static int rec_from_internal(void *ctx, size_t i, const void *s, void *h)
{
    recorder *r = ctx;
    call c = {REC, (uint32_t)i, read_internal(r, s), {0, 0, 0}, 0};
    c.buffers_ok = r->self == ctx && aligned(s) && aligned(h) &&
                   apart(s, r->sb, h, r->hb);
    /* h(i) as the forward op that made s(i) wrote it */
    write_state(h, r->hb, (name){HID, (uint32_t)i, c.in.serial});
    return record(r, c);
}

static bptt_steps stand_in(recorder *r, int64_t h, int64_t s)
{
    memset(r, 0, sizeof *r);
    r->hb = (size_t)(Q * h);
    r->sb = (size_t)(Q * s);
    r->self = r;
    return (bptt_steps){.name = "stand-in", .hidden_bytes = r->hb,
                        .internal_bytes = r->sb, .h0 = NULL,
                        .forward = rec_forward, .backward = rec_backward,
                        .hidden_from_internal = rec_from_internal,
                        .ctx = r};
}

/* ---- the calls a plan asks for ------------------------------------------ */

/* One expected call: kind, step, the input it must be given (a backward op
 * may be given either of two names for s(i): both hold s(i)) and, for a
 * backward op, the gradient. */
typedef struct {
    int kind;
    uint32_t step;
    name in, in_alt;
    name grad;
} want;

/* The calls plan asks for, following the actions with names for states
 * (h0: the name of the initial state).  Returns their number; *out
 * (malloc'd) holds them. */
static size_t expected_calls_as(const bptt_plan *p, name h0, int rec_calls,
                                want **out)
{
    const size_t t = p->length;
    const name none = {BAD, 0, 0};
    name *hs = malloc((t + 1) * sizeof *hs);
    name *ss = malloc((t + 1) * sizeof *ss);
    want *w = malloc((p->n_actions + 1) * sizeof *w);
    ck_assert(hs && ss && w);
    for (size_t i = 0; i <= t; i++)
        hs[i] = ss[i] = none;
    name running = h0, working = none, grad = {ZERO, 0, 0};
    hs[0] = h0;
    uint32_t forwards = 0;
    size_t n = 0;
    for (size_t k = 0; k < p->n_actions; k++) {
        const uint32_t i = p->actions[k].step;
        switch (p->actions[k].op) {
        case BPTT_ADVANCE:
            forwards++;
            w[n++] = (want){FWD, i, running, running, none};
            running = (name){HID, i, forwards};
            working = (name){INT, i, forwards};
            break;
        case BPTT_SAVE_HIDDEN:
            hs[i] = running;
            break;
        case BPTT_SAVE_INTERNAL:
            ss[i] = working;
            break;
        case BPTT_RESTORE_HIDDEN:
            running = hs[i];
            working = none;
            break;
        case BPTT_RESTORE_INTERNAL:
            if (rec_calls)
                w[n++] = (want){REC, i, ss[i], ss[i], none};
            running = (name){HID, i, ss[i].serial};
            working = none;
            break;
        case BPTT_BACKWARD: {
            const name a = ss[i].tag == INT ? ss[i] : working;
            const name b = working.tag == INT && working.step == i ? working
                                                                   : a;
            w[n++] = (want){BWD, i, a, b, grad};
            grad = (name){GRAD, i - 1, 0};
            working = none;
            break;
        }
        case BPTT_FREE_HIDDEN:
            hs[i] = none;
            break;
        case BPTT_FREE_INTERNAL:
            ss[i] = none;
            break;
        default:
            ck_abort_msg("action %zu: op %u", k, p->actions[k].op);
        }
    }
    free(hs);
    free(ss);
    *out = w;
    return n;
}

static size_t expected_calls(const bptt_plan *p, name h0, want **out)
{
    return expected_calls_as(p, h0, 1, out);
}

/* The last forward call of step t in the calls, as the state it wrote. */
static name last_h(const recorder *r, size_t t)
{
    name n = {BAD, 0, 0};
    uint32_t serial = 0;
    for (size_t k = 0; k < r->n_calls; k++) {
        serial += r->calls[k].kind == FWD;
        if (r->calls[k].kind == FWD && r->calls[k].step == t)
            n = (name){HID, (uint32_t)t, serial};
    }
    return n;
}

static const char *name_str(name n, char *buf, size_t cap)
{
    if (n.tag == ZERO || n.tag == BAD)
        snprintf(buf, cap, "%s", n.tag == ZERO ? "zero" : "garbage");
    else
        snprintf(buf, cap, "%c(%u)#%u", n.tag, n.step, n.serial);
    return buf;
}

/* Index of the first call that is not the wanted one (n_want when all
 * are and there are as many); why says what differs. */
static size_t first_wrong(const call *got, size_t n_got, const want *w,
                          size_t n_want, char *why, size_t cap)
{
    char a[32], b[32];
    for (size_t k = 0; k < n_got && k < n_want; k++) {
        const call *c = &got[k];
        const char *bad = NULL;
        if (c->kind != w[k].kind || c->step != w[k].step)
            bad = "kind or step";
        else if (!same(c->in, w[k].in) && !same(c->in, w[k].in_alt))
            bad = "input state";
        else if (c->kind == BWD && !same(c->grad, w[k].grad))
            bad = "gradient";
        else if (!c->buffers_ok)
            bad = "buffers (alignment, overlap or context)";
        if (bad) {
            snprintf(why, cap, "call %zu: %s: got %c %u in %s, want %c %u "
                     "in %s", k, bad, c->kind, c->step,
                     name_str(c->in, a, sizeof a), w[k].kind, w[k].step,
                     name_str(w[k].in, b, sizeof b));
            return k;
        }
    }
    if (n_got != n_want) {
        snprintf(why, cap, "%zu calls, the plan asks for %zu", n_got, n_want);
        return n_got < n_want ? n_got : n_want;
    }
    return n_want;
}

/* ---- a run held to its plan --------------------------------------------- */

static size_t count_ops(const bptt_plan *p, int op1, int op2)
{
    size_t n = 0;
    for (size_t k = 0; k < p->n_actions; k++)
        n += p->actions[k].op == (uint32_t)op1 ||
             p->actions[k].op == (uint32_t)op2;
    return n;
}

/* How check_run sets up the table: h(0) given, h(i) stated to lie inside
 * s(i) (no hidden_from_internal), the executor's own allocator. */
enum { WITH_H0 = 1, EMBED = 2, OWN_MEM = 4 };

/* Run plan on a stand-in (as mode says) and hold every call, count,
 * point, byte and output (h(t), dL/dh(0)) to the plan. */
static void check_run(const bptt_plan *p, const char *what, int mode)
{
    const int64_t h = p->hidden_units, s = p->internal_units;
    bptt_plan_stats vs;
    ck_assert_msg(bptt_plan_validate(p, &vs) == BPTT_OK, "%s: invalid plan",
                  what);
    const int with_h0 = mode & WITH_H0;
    recorder r;
    bptt_steps ops = stand_in(&r, h, s);
    if ((mode & EMBED) && r.sb - r.hb >= 12) {
        /* h(i) at the end of s(i), past its 12-byte header */
        r.embed = 1 + (r.sb - r.hb);
        ops.hidden_in_internal = 1;
        ops.hidden_offset = r.sb - r.hb;
        ops.hidden_from_internal = NULL;
    }
    unsigned char *h_last = malloc(r.hb), *dh0 = malloc(r.hb);
    ck_assert(h_last && dh0);
    ops.h_last = h_last;
    ops.dh0 = dh0;
    unsigned char *h0 = NULL;
    name h0_name = {ZERO, 0, 0};
    if (with_h0) {
        h0 = malloc(r.hb);
        ck_assert_ptr_nonnull(h0);
        h0_name = (name){HID, 0, 0};
        write_state(h0, r.hb, h0_name);
        ops.h0 = h0;
    }
    bptt_mem *mem = bptt_mem_alloc();
    ck_assert_ptr_nonnull(mem);
    bptt_exec_point *pt = calloc(p->n_actions, sizeof *pt);
    ck_assert_ptr_nonnull(pt);
    bptt_steps_stats st;
    const int rc = bptt_steps_run(p, &ops, (mode & OWN_MEM) ? NULL : mem, &st,
                                  pt);
    ck_assert_msg(rc == BPTT_OK, "%s: %s", what, bptt_strerror(rc));
    ck_assert_int_eq(st.failed_action, -1);
    ck_assert_int_eq(st.op_status, 0);

    want *w;
    const size_t n_want = expected_calls_as(p, h0_name, !r.embed, &w);
    char why[256] = "";
    const size_t k = first_wrong(r.calls, r.n_calls, w, n_want, why,
                                 sizeof why);
    ck_assert_msg(k == n_want, "%s: %s", what, why);

    /* the counts, as the validator and the actions have them */
    ck_assert_msg(st.forward_ops == vs.forward_ops &&
                      st.forward_ops ==
                          (int64_t)count_ops(p, BPTT_ADVANCE, BPTT_ADVANCE) &&
                      (int64_t)r.forwards == st.forward_ops,
                  "%s: %lld forward ops, %u calls, validator %lld", what,
                  (long long)st.forward_ops, r.forwards,
                  (long long)vs.forward_ops);
    ck_assert_msg(st.recompute_ops == vs.recompute_ops,
                  "%s: %lld recomputations, validator %lld", what,
                  (long long)st.recompute_ops, (long long)vs.recompute_ops);
    ck_assert_msg(st.backward_ops == vs.backward_ops &&
                      st.backward_ops == (int64_t)p->length,
                  "%s: %lld backward ops", what, (long long)st.backward_ops);
    ck_assert_int_eq(st.restores, (int64_t)count_ops(p, BPTT_RESTORE_HIDDEN,
                                                     BPTT_RESTORE_INTERNAL));
    ck_assert_int_eq(st.restore_hidden_ops,
                     (int64_t)count_ops(p, BPTT_RESTORE_HIDDEN,
                                        BPTT_RESTORE_HIDDEN));
    ck_assert_int_eq(st.restore_internal_ops,
                     (int64_t)count_ops(p, BPTT_RESTORE_INTERNAL,
                                        BPTT_RESTORE_INTERNAL));
    /* what the run hands back: h(t) as its forward op wrote it, and the
     * gradient the backward op of step 1 left (the stand-in's dL/dh(0)) */
    char got[32], wanted[32];
    ck_assert_msg(same(read_state(h_last, r.hb), last_h(&r, p->length)),
                  "%s: h_last is %s, not %s", what,
                  name_str(read_state(h_last, r.hb), got, sizeof got),
                  name_str(last_h(&r, p->length), wanted, sizeof wanted));
    ck_assert_msg(same(read_state(dh0, r.hb), (name){GRAD, 0, 0}),
                  "%s: dh0 is %s", what,
                  name_str(read_state(dh0, r.hb), got, sizeof got));

    /* the peak, in the executor's count and the allocator's (its own
     * allocator is gone with the run: the points and the stats stay) */
    const bptt_mem_stats *ms = bptt_mem_stats_get(mem);
    if (mode & OWN_MEM) {
        ck_assert_uint_eq(ms->total_peak, 0); /* mem untouched */
        ck_assert_msg(st.checkpoint_peak_bytes == (size_t)vs.peak_units *
                                                      (r.hb / (size_t)h),
                      "%s: own allocator: peak %zu", what,
                      st.checkpoint_peak_bytes);
        goto points;
    }
    const size_t q = r.hb / (size_t)h;
    ck_assert_msg(st.checkpoint_peak_bytes == (size_t)vs.peak_units * q &&
                      ms->peak[BPTT_MEM_CHECKPOINT] ==
                          st.checkpoint_peak_bytes,
                  "%s: checkpoint peak %zu bytes (allocator %zu), plan %lld "
                  "units of %zu", what, st.checkpoint_peak_bytes,
                  ms->peak[BPTT_MEM_CHECKPOINT], (long long)vs.peak_units, q);
    ck_assert(st.checkpoint_peak_bytes <= (size_t)p->budget * q);
    ck_assert_msg((double)ms->peak[BPTT_MEM_WORKING] ==
                      bptt_exec_working_bytes(p->length, (double)r.hb,
                                              (double)r.sb),
                  "%s: %zu working bytes", what, ms->peak[BPTT_MEM_WORKING]);
    ck_assert_uint_eq(ms->total_current, 0);

points:
    /* one point per action, in plan order, its counts and bytes */
    int64_t fwd = 0;
    size_t top = 0;
    for (size_t a = 0; a < p->n_actions; a++) {
        fwd += p->actions[a].op == BPTT_ADVANCE;
        ck_assert_uint_eq(pt[a].op, p->actions[a].op);
        ck_assert_uint_eq(pt[a].step, p->actions[a].step);
        ck_assert_int_eq(pt[a].forward_ops, fwd);
        ck_assert(pt[a].checkpoint_bytes <= st.checkpoint_peak_bytes);
        if (pt[a].checkpoint_bytes > top)
            top = pt[a].checkpoint_bytes;
    }
    /* the peak is reached at some action (the run starts with h(0)) */
    ck_assert(top == st.checkpoint_peak_bytes || p->n_actions == 0);

    free(w);
    free(pt);
    free(r.calls);
    free(h0);
    free(h_last);
    free(dh0);
    bptt_mem_free(mem);
}

/* ---- every strategy, length and budget ---------------------------------- */

static const int64_t UNITS[][2] = {{1, 1}, {1, 2}, {1, 4}, {2, 7}};
#define N_UNITS (sizeof UNITS / sizeof UNITS[0])

/* Every plan of strategy st for length t in units hs, at every feasible
 * budget up to a little over full BPTT's peak (at most `spread` of them,
 * evenly, when there are more). */
static size_t check_strategy(const bptt_strategy *st, size_t t,
                             const int64_t hs[2], int64_t spread)
{
    const int64_t h = hs[0], s = hs[1];
    const int64_t top = bptt_full_peak(t, h, s) + s + 1;
    bptt_table *tb = NULL;
    int rc = bptt_table_alloc(&tb, st, t, h, s, top, NULL);
    ck_assert_msg(rc == BPTT_OK, "%s t=%zu: %s", st->name, t,
                  bptt_strerror(rc));
    const int64_t lo = bptt_table_min_budget(tb);
    ck_assert_msg(lo >= 0 && lo <= top, "%s t=%zu h=%lld s=%lld: min %lld",
                  st->name, t, (long long)h, (long long)s, (long long)lo);
    /* the budgets lo..top, or `spread` of them from lo to top */
    const int64_t n = top - lo + 1;
    const int64_t k_max = n > spread ? spread : n;
    size_t runs = 0;
    for (int64_t k = 0; k < k_max; k++) {
        const int64_t m =
            k_max == n ? lo + k : lo + k * (n - 1) / (k_max - 1);
        bptt_plan *p = NULL;
        rc = bptt_table_plan(tb, m, &p, NULL);
        ck_assert_msg(rc == BPTT_OK, "%s t=%zu m=%lld: %s", st->name, t,
                      (long long)m, bptt_strerror(rc));
        char what[96];
        snprintf(what, sizeof what, "%s t=%zu h=%lld s=%lld m=%lld",
                 st->name, t, (long long)h, (long long)s, (long long)m);
        check_run(p, what, (int)(m & 7)); /* h0, embedded h, allocator */
        bptt_plan_free(p);
        runs++;
    }
    bptt_table_free(tb);
    return runs;
}

START_TEST(test_every_strategy_short)
{
    const int64_t *hs = UNITS[_i];
    for (size_t k = 0; bptt_strategies[k]; k++) {
        size_t runs = 0;
        for (size_t t = 1; t <= 20; t++)
            runs += check_strategy(bptt_strategies[k], t, hs, INT64_MAX);
        ck_assert_uint_gt(runs, 0);
    }
}
END_TEST

START_TEST(test_every_strategy_long)
{
    const int64_t *hs = UNITS[_i];
    static const size_t lengths[] = {33, 64, 101};
    for (size_t k = 0; bptt_strategies[k]; k++)
        for (size_t j = 0; j < sizeof lengths / sizeof lengths[0]; j++)
            ck_assert_uint_gt(
                check_strategy(bptt_strategies[k], lengths[j], hs, 24), 0);
}
END_TEST

/* Valid plans no planner makes, written out: the working s(i) living on
 * after its checkpoint is freed (the executor's copy back, when the
 * forward op wrote straight into the checkpoint), a backward op on a
 * recomputed s(i) after the stored one is freed, and a recomputation
 * from a restored internal state while s(2) is still stored. */
START_TEST(test_plans_by_hand)
{
    static const struct {
        size_t t;
        const char *actions;
    } plans[] = {
        {1, "advance 1, save_internal 1, free_internal 1, free_hidden 0, "
            "backward 1"},
        {2, "advance 1, save_internal 1, free_hidden 0, advance 2, "
            "save_internal 2, free_internal 2, backward 2, backward 1, "
            "free_internal 1"},
        {2, "advance 1, save_hidden 1, save_internal 1, advance 2, "
            "backward 2, restore_hidden 0, advance 1, free_internal 1, "
            "backward 1, free_hidden 1, free_hidden 0"},
        {2, "advance 1, save_internal 1, advance 2, save_internal 2, "
            "free_hidden 0, restore_internal 1, advance 2, "
            "free_internal 2, backward 2, backward 1, free_internal 1"},
    };
    for (size_t k = 0; k < sizeof plans / sizeof plans[0]; k++) {
        bptt_plan *p = NULL;
        ck_assert_int_eq(bptt_plan_alloc(&p, plans[k].t, 1, 3, 100),
                         BPTT_OK);
        char buf[512];
        snprintf(buf, sizeof buf, "%s", plans[k].actions);
        for (char *a = strtok(buf, ","); a; a = strtok(NULL, ",")) {
            char op[32];
            unsigned step;
            ck_assert_int_eq(sscanf(a, " %31s %u", op, &step), 2);
            const int o = bptt_op_parse(op);
            ck_assert_int_ge(o, 0);
            ck_assert_int_eq(bptt_plan_push(p, o, step), BPTT_OK);
        }
        char what[32];
        snprintf(what, sizeof what, "plan %zu by hand", k);
        for (int mode = 0; mode < 8; mode++)
            check_run(p, what, mode);
        bptt_plan_free(p);
    }
}
END_TEST

/* ---- the comparison catches what it should ------------------------------ */

/* A plan of length t (msm at its smallest budget, so that it restores and
 * recomputes) with its stand-in's calls. */
static bptt_plan *small_plan(size_t t, int64_t h, int64_t s)
{
    bptt_plan *p = NULL;
    bptt_table *tb = NULL;
    ck_assert_int_eq(bptt_table_alloc(&tb, bptt_strategy_find("msm"), t, h,
                                      s, bptt_full_peak(t, h, s), NULL),
                     BPTT_OK);
    ck_assert_int_eq(bptt_table_plan(tb, bptt_table_min_budget(tb), &p,
                                     NULL),
                     BPTT_OK);
    bptt_table_free(tb);
    return p;
}

/* An msm plan of length t that restores from an internal state: the
 * first budget from the smallest up whose plan has such a restore. */
static bptt_plan *plan_restoring_internal(size_t t, int64_t h, int64_t s)
{
    bptt_table *tb = NULL;
    const int64_t top = bptt_full_peak(t, h, s);
    ck_assert_int_eq(bptt_table_alloc(&tb, bptt_strategy_find("msm"), t, h,
                                      s, top, NULL),
                     BPTT_OK);
    for (int64_t m = bptt_table_min_budget(tb); m <= top; m++) {
        bptt_plan *p = NULL;
        ck_assert_int_eq(bptt_table_plan(tb, m, &p, NULL), BPTT_OK);
        if (count_ops(p, BPTT_RESTORE_INTERNAL, BPTT_RESTORE_INTERNAL)) {
            bptt_table_free(tb);
            return p;
        }
        bptt_plan_free(p);
    }
    ck_abort_msg("no msm plan of length %zu restores an internal state", t);
    return NULL;
}

START_TEST(test_comparison_can_fail)
{
    bptt_plan *p = small_plan(12, 1, 2);
    bptt_plan_stats vs;
    ck_assert_int_eq(bptt_plan_validate(p, &vs), BPTT_OK);
    ck_assert_int_gt(vs.recompute_ops, 0);
    recorder r;
    const bptt_steps ops = stand_in(&r, 1, 2);
    bptt_mem *mem = bptt_mem_alloc();
    bptt_steps_stats st;
    ck_assert_int_eq(bptt_steps_run(p, &ops, mem, &st, NULL), BPTT_OK);
    want *w;
    const size_t n = expected_calls(p, (name){ZERO, 0, 0}, &w);
    char why[256];
    ck_assert_uint_eq(first_wrong(r.calls, r.n_calls, w, n, why, sizeof why),
                      n);
    /* each kind of wrong call is caught at the call that is wrong */
    for (size_t k = 0; k < n; k++) {
        for (int how = 0; how < 4; how++) {
            call c = r.calls[k];
            if (how == 0)
                r.calls[k].step++;
            else if (how == 1 && c.in.tag == ZERO)
                r.calls[k].in.tag = HID;
            else if (how == 1)
                r.calls[k].in.serial += 1000;
            else if (how == 2)
                r.calls[k].kind = c.kind == FWD ? BWD : FWD;
            else
                r.calls[k].buffers_ok = 0;
            ck_assert_uint_eq(
                first_wrong(r.calls, r.n_calls, w, n, why, sizeof why), k);
            r.calls[k] = c;
        }
    }
    /* one call missing, one too many */
    ck_assert_uint_eq(first_wrong(r.calls, n - 1, w, n, why, sizeof why),
                      n - 1);
    ck_assert_uint_eq(first_wrong(r.calls, n, w, n - 1, why, sizeof why),
                      n - 1);
    /* a state with one byte changed, or of another kind, is no valid one */
    unsigned char buf[4 * Q];
    const name a = {INT, 5, 9};
    write_state(buf, sizeof buf, a);
    ck_assert(same(read_state(buf, sizeof buf), a));
    buf[sizeof buf - 1] ^= 1;
    ck_assert_int_eq(read_state(buf, sizeof buf).tag, BAD);
    write_state(buf, sizeof buf, (name){HID, 5, 9});
    ck_assert(!same(read_state(buf, sizeof buf), a));
    free(w);
    free(r.calls);
    bptt_mem_free(mem);
    bptt_plan_free(p);
}
END_TEST

/* ---- refusals, an op's error, allocation failure ------------------------ */

START_TEST(test_refusals)
{
    const int64_t h = 2, s = 7;
    bptt_plan *p = small_plan(9, h, s);
    bptt_mem *mem = bptt_mem_alloc();
    recorder r;
    const bptt_steps good = stand_in(&r, h, s);
    bptt_steps_stats st;
    /* NULL arguments and ops */
    ck_assert_int_eq(bptt_steps_run(NULL, &good, mem, &st, NULL), BPTT_EINVAL);
    ck_assert_int_eq(bptt_steps_run(p, NULL, mem, &st, NULL), BPTT_EINVAL);
    ck_assert_int_eq(bptt_steps_run(p, &good, mem, NULL, NULL), BPTT_EINVAL);
    for (int k = 0; k < 2; k++) {
        bptt_steps b = good;
        if (k == 0)
            b.forward = NULL;
        else
            b.backward = NULL;
        ck_assert_int_eq(bptt_steps_run(p, &b, mem, &st, NULL), BPTT_EINVAL);
    }
    ck_assert_uint_eq(r.n_calls, 0);
    /* no hidden_from_internal: refused, before any op, exactly when the
     * plan restores from an internal state */
    bptt_plan *ri = plan_restoring_internal(9, h, s);
    bptt_steps no_rec = good;
    no_rec.hidden_from_internal = NULL;
    ck_assert_int_eq(bptt_steps_run(ri, &no_rec, mem, &st, NULL),
                     BPTT_EINVAL);
    ck_assert_uint_eq(r.n_calls, 0);
    bptt_plan_free(ri);
    bptt_plan *full = NULL;
    bptt_plan_stats fs;
    int64_t least;
    ck_assert_int_eq(bptt_plan_make("full", 9, h, s, 1000, NULL, &full, &fs,
                                    &least),
                     BPTT_OK);
    ck_assert_int_eq(bptt_steps_run(full, &no_rec, mem, &st, NULL), BPTT_OK);
    ck_assert_uint_eq(r.n_calls, 18);
    bptt_plan_free(full);
    free(r.calls);
    r.calls = NULL;
    r.n_calls = r.cap = 0;
    /* a stated offset past the internal state */
    bptt_steps past = good;
    past.hidden_in_internal = 1;
    past.hidden_offset = good.internal_bytes - good.hidden_bytes + 1;
    ck_assert_int_eq(bptt_steps_run(p, &past, mem, &st, NULL), BPTT_EINVAL);
    past.hidden_offset = SIZE_MAX;
    ck_assert_int_eq(bptt_steps_run(p, &past, mem, &st, NULL), BPTT_EINVAL);
    ck_assert_uint_eq(r.n_calls, 0);
    /* sizes: zero, internal below hidden, units of another ratio */
    const size_t sizes[][2] = {{0, good.internal_bytes},
                               {good.hidden_bytes, good.hidden_bytes - 1},
                               {good.hidden_bytes, good.internal_bytes + 1},
                               {good.hidden_bytes + 1, good.internal_bytes},
                               {good.hidden_bytes, good.hidden_bytes}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        bptt_steps b = good;
        b.hidden_bytes = sizes[k][0];
        b.internal_bytes = sizes[k][1];
        ck_assert_msg(bptt_steps_run(p, &b, mem, &st, NULL) == BPTT_EINVAL,
                      "sizes %zu, %zu accepted", sizes[k][0], sizes[k][1]);
    }
    /* the same ratio in bytes of another unit is the same plan */
    bptt_steps x3 = good;
    x3.hidden_bytes *= 3;
    x3.internal_bytes *= 3;
    r.hb *= 3;
    r.sb *= 3;
    ck_assert_int_eq(bptt_steps_run(p, &x3, mem, &st, NULL), BPTT_OK);
    ck_assert_uint_gt(r.n_calls, 0);
    free(r.calls);
    /* a broken plan: over its own budget; no op is called */
    const bptt_steps again = stand_in(&r, h, s);
    bptt_plan_stats vs;
    ck_assert_int_eq(bptt_plan_validate(p, &vs), BPTT_OK);
    p->budget = vs.peak_units - 1;
    ck_assert_int_eq(bptt_steps_run(p, &again, mem, &st, NULL),
                     BPTT_EBADPLAN);
    ck_assert_uint_eq(r.n_calls, 0);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    bptt_mem_free(mem);
    bptt_plan_free(p);
}
END_TEST

/* A two-level plan (twolevel.h) with the slow level's ops runs (its
 * results are held to full BPTT's in test_steps_slow); the same planner's
 * plan that uses no slow level runs too, its slow budget aside. */
START_TEST(test_slow_level_runs)
{
    const int64_t h = 2, s = 7;
    bptt_mem *mem = bptt_mem_alloc();
    recorder r;
    bptt_steps ops = stand_in(&r, h, s);
    bptt_steps_stats st;
    const bptt_slow_level free_moves = {BPTT_SLOW_UNLIMITED, 0, 0};
    bptt_twolevel *tl = NULL;
    ck_assert_int_eq(bptt_twolevel_alloc(&tl, "msm", 12, h, s, h, &free_moves),
                     BPTT_OK);
    bptt_plan *p = NULL;
    ck_assert_int_eq(bptt_twolevel_plan(tl, &p), BPTT_OK);
    bptt_twolevel_free(tl);
    ck_assert_uint_gt(bptt_plan_slow_actions(p), 0);
    ck_assert_int_eq(bptt_twolevel_plan_actions(NULL), -1);
    ck_assert_int_eq(bptt_steps_run(p, &ops, mem, &st, NULL), BPTT_OK);
    ck_assert_uint_gt(r.n_calls, 0);
    ck_assert_int_gt(st.slow_writes, 0);
    free(r.calls);
    r.calls = NULL;
    bptt_plan_free(p);
    ops = stand_in(&r, h, s);
    /* a slow level it does not use: an ordinary plan */
    const bptt_slow_level dear = {4 * s, 1e6, 1e6};
    ck_assert_int_eq(bptt_twolevel_alloc(&tl, "hsm", 12, h, s, 3 * h, &dear),
                     BPTT_OK);
    const int64_t n = bptt_twolevel_plan_actions(tl);
    ck_assert_int_eq(bptt_twolevel_plan(tl, &p), BPTT_OK);
    bptt_twolevel_free(tl);
    ck_assert_int_eq(n, (int64_t)p->n_actions);
    ck_assert_int_eq(p->slow_budget, 4 * s);
    ck_assert_uint_eq(bptt_plan_slow_actions(p), 0);
    ck_assert_int_eq(bptt_steps_run(p, &ops, mem, &st, NULL), BPTT_OK);
    ck_assert_uint_gt(r.n_calls, 0);
    free(r.calls);
    bptt_plan_free(p);
    bptt_mem_free(mem);
}
END_TEST

START_TEST(test_op_error_stops)
{
    bptt_plan *p = small_plan(10, 1, 3);
    bptt_mem *mem = bptt_mem_alloc();
    recorder r;
    bptt_steps ops = stand_in(&r, 1, 3);
    bptt_steps_stats st;
    ck_assert_int_eq(bptt_steps_run(p, &ops, mem, &st, NULL), BPTT_OK);
    const size_t n = r.n_calls;
    free(r.calls);
    for (size_t f = 1; f <= n; f++) {
        ops = stand_in(&r, 1, 3);
        r.fail_at = f;
        r.fail_rc = 1000 + (int)f; /* not a bptt_status: passed on as is */
        const int rc = bptt_steps_run(p, &ops, mem, &st, NULL);
        ck_assert_int_eq(rc, 1000 + (int)f);
        ck_assert_uint_eq(r.n_calls, f); /* nothing after it */
        int64_t fwd = 0;
        for (size_t k = 0; k < f; k++)
            fwd += r.calls[k].kind == FWD;
        ck_assert_int_eq(st.forward_ops, fwd);
        ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
        free(r.calls);
    }
    bptt_mem_free(mem);
    bptt_plan_free(p);
}
END_TEST

/* Ops' own statuses: passed on as they are from BPTT_OP_STATUS_MIN up
 * and below 0, BPTT_EOP inside the library's range; the op's value and the
 * action that failed in the stats; no output written. */
START_TEST(test_op_status_range)
{
    bptt_plan *p = small_plan(10, 1, 3);
    recorder r;
    static const int given[] = {1, BPTT_ENOMEM, BPTT_EBADPLAN, 255, 256,
                                4000, -1, -300};
    for (size_t g = 0; g < sizeof given / sizeof *given; g++) {
        bptt_steps ops = stand_in(&r, 1, 3);
        unsigned char h_last[Q], dh0[Q];
        memset(h_last, 0xee, sizeof h_last);
        memcpy(dh0, h_last, sizeof dh0);
        ops.h_last = h_last;
        ops.dh0 = dh0;
        r.fail_at = 12; /* a forward op of the first sweep, or later */
        r.fail_rc = given[g];
        bptt_steps_stats st;
        const int rc = bptt_steps_run(p, &ops, NULL, &st, NULL);
        const int expect = given[g] < 0 || given[g] >= BPTT_OP_STATUS_MIN
                               ? given[g]
                               : BPTT_EOP;
        ck_assert_int_eq(rc, expect);
        ck_assert_int_eq(st.op_status, given[g]);
        /* the failed action is the fail_at-th op call's */
        ck_assert_int_ge(st.failed_action, 0);
        size_t calls = 0, k = 0;
        for (; k < p->n_actions; k++) {
            const uint32_t op = p->actions[k].op;
            calls += op == BPTT_ADVANCE || op == BPTT_BACKWARD ||
                     op == BPTT_RESTORE_INTERNAL;
            if (calls == 12)
                break;
        }
        ck_assert_int_eq(st.failed_action, (int64_t)k);
        /* no gradient handed back; h(t) only if step t ran */
        ck_assert_uint_eq(dh0[0], 0xee);
        int t_ran = 0;
        for (size_t c = 0; c < r.n_calls; c++)
            t_ran |= r.calls[c].kind == FWD && r.calls[c].step == 10 &&
                     c + 1 < r.n_calls;
        ck_assert_int_eq(h_last[0] != 0xee, t_ran);
        free(r.calls);
    }
    bptt_plan_free(p);
}
END_TEST

/* h(i) stated at an offset where the forward op does not put it: the run
 * stops at the first forward op with BPTT_ESTEPS, never a gradient from
 * the wrong bytes. */
START_TEST(test_wrong_offset_stops)
{
    bptt_plan *p = small_plan(10, 1, 3);
    recorder r;
    bptt_steps ops = stand_in(&r, 1, 3);
    r.embed = 1 + 16; /* the op copies h(i) to byte 16 */
    ops.hidden_in_internal = 1;
    ops.hidden_from_internal = NULL;
    bptt_steps_stats st;
    for (size_t off = 0; off + r.hb <= r.sb; off += 8) {
        ops.hidden_offset = off;
        r.n_calls = 0;
        r.forwards = 0;
        const int rc = bptt_steps_run(p, &ops, NULL, &st, NULL);
        if (off == 16) {
            ck_assert_int_eq(rc, BPTT_OK);
            continue;
        }
        ck_assert_msg(rc == BPTT_ESTEPS, "offset %zu: %s", off,
                      bptt_strerror(rc));
        ck_assert_uint_eq(r.n_calls, 1);
        ck_assert_int_eq(st.failed_action, 0);
        ck_assert_int_eq(st.op_status, 0);
        ck_assert_int_eq(st.backward_ops, 0);
    }
    free(r.calls);
    bptt_plan_free(p);
}
END_TEST

START_TEST(test_enomem)
{
    bptt_plan *p = small_plan(14, 2, 7);
    bptt_mem *mem = bptt_mem_alloc();
    recorder r;
    bptt_steps ops = stand_in(&r, 2, 7);
    bptt_steps_stats st;
    const size_t a0 = bptt_mem_stats_get(mem)->allocations;
    ck_assert_int_eq(bptt_steps_run(p, &ops, mem, &st, NULL), BPTT_OK);
    const size_t n_alloc = bptt_mem_stats_get(mem)->allocations - a0;
    /* h(0), one block per save, and a working set */
    const size_t saves = count_ops(p, BPTT_SAVE_HIDDEN, BPTT_SAVE_INTERNAL);
    ck_assert_uint_gt(n_alloc, saves + 1);
    free(r.calls);
    for (size_t f = 1; f <= n_alloc + 1; f++) {
        ops = stand_in(&r, 2, 7);
        bptt_mem_fail_at(mem, f);
        const int rc = bptt_steps_run(p, &ops, mem, &st, NULL);
        bptt_mem_fail_at(mem, 0);
        ck_assert_msg(rc == (f <= n_alloc ? BPTT_ENOMEM : BPTT_OK),
                      "allocation %zu of %zu failed: %s", f, n_alloc,
                      bptt_strerror(rc));
        ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
        free(r.calls);
    }
    bptt_mem_free(mem);
    bptt_plan_free(p);
}
END_TEST

/* ---- online: a real model, sequences of unknown length ------------------- */

/* the model: tiny.h */

/* more: the sequence has T steps; lookahead: step T is announced last;
 * fail_at: a failure status at that step (0: none) */
typedef struct {
    size_t T;
    int lookahead;
    size_t fail_at;
    size_t asked;
} seq;

static int seq_more(void *ctx, size_t i, int *last)
{
    seq *q = ctx;
    q->asked++;
    if (q->fail_at && i + 1 == q->fail_at)
        return 300;
    if (i >= q->T)
        return 0;
    *last = q->lookahead && i + 1 == q->T;
    return 1;
}

/* One online run against full BPTT on the same length: gradients, h(T)
 * and dL/dh(0) bit for bit, peak within budget and the plan's, and the
 * actions run those of the finished plan.  Returns whether the gradients
 * were equal (the rest is asserted). */
static int check_online(const char *strategy, size_t sb, int64_t budget,
                        size_t T, int lookahead, int perturb)
{
    const size_t hb = N * sizeof(double);
    tiny ref, on;
    tiny_init(&ref);
    tiny_init(&on);
    on.perturb = perturb;
    double hl_ref[N], dh0_ref[N], hl_on[N], dh0_on[N];
    bptt_steps ops = tiny_ops(&ref, sb, hl_ref, dh0_ref);
    bptt_plan *full = NULL;
    bptt_plan_stats ps;
    ck_assert_int_eq(bptt_plan_make("full", T, (int64_t)hb, (int64_t)sb,
                                    INT64_MAX / 4, NULL, &full, &ps, NULL),
                     BPTT_OK);
    bptt_steps_stats st;
    ck_assert_int_eq(bptt_steps_run(full, &ops, NULL, &st, NULL), BPTT_OK);
    bptt_plan_free(full);

    bptt_online *o = NULL;
    ck_assert_int_eq(bptt_online_new(&o, strategy, (int64_t)hb, (int64_t)sb,
                                     budget, NULL),
                     BPTT_OK);
    bptt_mem *mem = bptt_mem_alloc();
    const size_t cap = 1 << 17;
    bptt_exec_point *pts = calloc(cap, sizeof *pts);
    ck_assert_ptr_nonnull(pts);
    seq q = {T, lookahead, 0, 0};
    bptt_plan *plan = NULL;
    ops = tiny_ops(&on, sb, hl_on, dh0_on);
    const int rc = bptt_steps_run_online(o, &ops, mem, seq_more, &q, &st,
                                         &plan, pts, cap);
    ck_assert_msg(rc == BPTT_OK, "%s budget %lld T %zu: %s", strategy,
                  (long long)budget, T, bptt_strerror(rc));
    ck_assert_uint_eq(q.asked, lookahead ? T : T + 1);
    ck_assert_uint_eq(plan->length, T);
    ck_assert_uint_le(plan->n_actions, cap);
    /* the actions run are the plan's, in order */
    for (size_t k = 0; k < plan->n_actions; k++)
        ck_assert_msg(pts[k].op == plan->actions[k].op &&
                          pts[k].step == plan->actions[k].step,
                      "%s T %zu action %zu: ran %s %u, plan %s %u", strategy,
                      T, k, bptt_op_name((int)pts[k].op), pts[k].step,
                      bptt_op_name((int)plan->actions[k].op),
                      plan->actions[k].step);
    bptt_plan_stats vs;
    ck_assert_int_eq(bptt_plan_validate(plan, &vs), BPTT_OK);
    bptt_units u;
    ck_assert_int_eq(bptt_units_from_bytes(&u, (int64_t)hb, (int64_t)sb),
                     BPTT_OK);
    ck_assert_int_eq(st.forward_ops, vs.forward_ops);
    ck_assert_int_eq(st.recompute_ops, vs.forward_ops - (int64_t)T);
    ck_assert_int_eq(st.backward_ops, (int64_t)T);
    /* measured peak: the plan's, within the budget; the allocator agrees */
    ck_assert_uint_eq(st.checkpoint_peak_bytes,
                      (size_t)(vs.peak_units * u.quantum));
    ck_assert_uint_le(st.checkpoint_peak_bytes, (size_t)budget);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->peak[BPTT_MEM_CHECKPOINT],
                      st.checkpoint_peak_bytes);
    size_t most = 0;
    for (size_t k = 0; k < plan->n_actions; k++)
        if (pts[k].checkpoint_bytes > most)
            most = pts[k].checkpoint_bytes;
    ck_assert_uint_le(most, (size_t)budget);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    ck_assert_int_eq(memcmp(hl_ref, hl_on, sizeof hl_on), 0);
    const int same_grads =
        memcmp(ref.gW, on.gW, sizeof on.gW) == 0 &&
        memcmp(ref.gu, on.gu, sizeof on.gu) == 0 &&
        memcmp(ref.gb, on.gb, sizeof on.gb) == 0 &&
        memcmp(ref.gw, on.gw, sizeof on.gw) == 0 &&
        memcmp(dh0_ref, dh0_on, sizeof dh0_on) == 0;
    bptt_plan_free(plan);
    bptt_online_free(o);
    bptt_mem_free(mem);
    free(pts);
    return same_grads;
}

/* internal sizes: alpha 1, 2 and 3.5 (16, 32 and 56 bytes) */
static const size_t ONLINE_SB[] = {16, 32, 56};

START_TEST(test_online_bit_identical)
{
    const size_t sb = ONLINE_SB[_i];
    const size_t hb = N * sizeof(double);
    const size_t lengths[] = {1, 2, 3, 7, 20, 57, 130};
    const char *strategies[] = {"hsm", "msm"};
    /* budgets: 1, 2, 3, 5 hidden states, some internal ones besides */
    const int64_t budgets[] = {(int64_t)hb, 2 * (int64_t)hb, 3 * (int64_t)hb,
                               5 * (int64_t)hb, 2 * (int64_t)(hb + sb),
                               (int64_t)(hb + 6 * sb), 40 * (int64_t)sb};
    for (size_t a = 0; a < 2; a++)
        for (size_t b = 0; b < sizeof budgets / sizeof *budgets; b++)
            for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++)
                for (int la = 0; la <= 1; la++)
                    ck_assert_msg(check_online(strategies[a], sb, budgets[b],
                                               lengths[l], la, 0),
                                  "%s sb %zu budget %lld T %zu lookahead %d: "
                                  "gradients differ from full BPTT's",
                                  strategies[a], sb, (long long)budgets[b],
                                  lengths[l], la);
}
END_TEST

/* The comparison catches a model whose recomputations differ. */
START_TEST(test_online_comparison_can_fail)
{
    const size_t hb = N * sizeof(double);
    ck_assert(!check_online("hsm", 16, 2 * (int64_t)hb, 20, 1, 1));
    ck_assert(!check_online("msm", 32, 3 * (int64_t)hb, 20, 0, 1));
    /* with room for every state nothing is recomputed: equal */
    ck_assert(check_online("hsm", 16, 40 * (int64_t)hb, 20, 1, 1));
}
END_TEST

START_TEST(test_online_refusals_and_errors)
{
    const size_t hb = N * sizeof(double), sb = 32;
    tiny m;
    tiny_init(&m);
    bptt_steps ops = tiny_ops(&m, sb, NULL, NULL);
    bptt_steps_stats st;
    bptt_plan *plan = (bptt_plan *)&m; /* must come back NULL */
    bptt_mem *mem = bptt_mem_alloc();
    bptt_online *o = NULL;
    seq q = {10, 1, 0, 0};
    ck_assert_int_eq(bptt_online_new(&o, "msm", (int64_t)hb, (int64_t)sb,
                                     4 * (int64_t)sb, NULL),
                     BPTT_OK);
    ck_assert_int_eq(bptt_steps_run_online(NULL, &ops, mem, seq_more, &q,
                                           &st, &plan, NULL, 0),
                     BPTT_EINVAL);
    ck_assert_ptr_null(plan);
    ck_assert_int_eq(bptt_steps_run_online(o, NULL, mem, seq_more, &q, &st,
                                           NULL, NULL, 0),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_steps_run_online(o, &ops, mem, NULL, &q, &st, NULL,
                                           NULL, 0),
                     BPTT_EINVAL);
    ck_assert_int_eq(bptt_steps_run_online(o, &ops, mem, seq_more, &q, NULL,
                                           NULL, NULL, 0),
                     BPTT_EINVAL);
    bptt_steps other = tiny_ops(&m, 40, NULL, NULL); /* not the planner's */
    ck_assert_int_eq(bptt_steps_run_online(o, &other, mem, seq_more, &q, &st,
                                           NULL, NULL, 0),
                     BPTT_EINVAL);
    ck_assert_uint_eq(q.asked, 0);
    /* more's failure stops the run, its status as an op's */
    q.fail_at = 6;
    ck_assert_int_eq(bptt_steps_run_online(o, &ops, mem, seq_more, &q, &st,
                                           &plan, NULL, 0),
                     300);
    ck_assert_ptr_null(plan);
    ck_assert_int_eq(st.op_status, 300);
    ck_assert_int_eq(st.failed_action, -1);
    ck_assert_int_eq(st.forward_ops, 5);
    ck_assert_int_eq(st.backward_ops, 0);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    /* a used planner is refused */
    ck_assert_int_eq(bptt_steps_run_online(o, &ops, mem, seq_more, &q, &st,
                                           NULL, NULL, 0),
                     BPTT_EINVAL);
    bptt_online_free(o);
    /* an empty sequence */
    ck_assert_int_eq(bptt_online_new(&o, "hsm", (int64_t)hb, (int64_t)sb,
                                     4 * (int64_t)sb, NULL),
                     BPTT_OK);
    q = (seq){0, 0, 0, 0};
    ck_assert_int_eq(bptt_steps_run_online(o, &ops, mem, seq_more, &q, &st,
                                           NULL, NULL, 0),
                     BPTT_ESHORT);
    bptt_online_free(o);
    /* every allocation failing in turn: ENOMEM, everything given back */
    for (size_t f = 1; f < 64; f++) {
        ck_assert_int_eq(bptt_online_new(&o, "msm", (int64_t)hb,
                                         (int64_t)sb, 3 * (int64_t)sb, NULL),
                         BPTT_OK);
        tiny_init(&m);
        q = (seq){150, 0, 0, 0};
        bptt_mem_fail_at(mem, f);
        const int rc = bptt_steps_run_online(o, &ops, mem, seq_more, &q, &st,
                                             NULL, NULL, 0);
        bptt_mem_fail_at(mem, 0);
        ck_assert(rc == BPTT_ENOMEM || rc == BPTT_OK);
        ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
        bptt_online_free(o);
    }
    bptt_mem_free(mem);
}
END_TEST

static Suite *steps_suite(void)
{
    Suite *su = suite_create("steps");
    TCase *tc = tcase_create("plans");
    tcase_add_loop_test(tc, test_every_strategy_short, 0, N_UNITS);
    tcase_add_loop_test(tc, test_every_strategy_long, 0, N_UNITS);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(su, tc);
    tc = tcase_create("checks");
    tcase_add_test(tc, test_plans_by_hand);
    tcase_add_test(tc, test_comparison_can_fail);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_slow_level_runs);
    tcase_add_test(tc, test_op_error_stops);
    tcase_add_test(tc, test_op_status_range);
    tcase_add_test(tc, test_wrong_offset_stops);
    tcase_add_test(tc, test_enomem);
    suite_add_tcase(su, tc);
    tc = tcase_create("online");
    tcase_add_loop_test(tc, test_online_bit_identical, 0, 3);
    tcase_add_test(tc, test_online_comparison_can_fail);
    tcase_add_test(tc, test_online_refusals_and_errors);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(su, tc);
    return su;
}

int main(void)
{
    SRunner *sr = srunner_create(steps_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
