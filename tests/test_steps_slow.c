/* test_steps_slow.c: Check suite of the executor's slow level (steps.h:
 * two-level plans of twolevel.h run for real, their states in a file).
 *
 * Promises: for hsm and msm two-level plans (lengths 1 to 400, fast
 * budgets of a few states, slow budgets of none, a few states and
 * unlimited, several write and read costs, alpha 1, 2 and 3.5, h(i) given
 * by hidden_from_internal or at a stated offset), bptt_steps_run
 *   - computes gradients, dL/dh(0) and h(T) equal to full BPTT's bit for
 *     bit on the tiny model (tiny.h);
 *   - counts forward ops as the validator, holds the validator's peak in
 *     fast memory (within the budget) and in the slow level (within its
 *     budget), writes and reads exactly the validator's units times the
 *     unit's bytes, and its file grows no longer than the slow peak;
 *   - calls hidden_from_internal once per restore_internal and
 *     read_internal, never with a stated offset;
 *   - leaves every folder as it was (the given one, $TMPDIR), no
 *     descriptor open, no tracked byte held;
 * it refuses, before any op runs, a plan whose slow ops break a slow
 * budget of 0 (BPTT_EBADPLAN) and a folder that is missing, no folder or
 * not writable, or whose every store name is taken (BPTT_EIO, errno in
 * the stats); it never opens a file or link planted under the store's
 * name; a failed allocation (BPTT_ENOMEM), a failed write (a file size
 * limit) and a failed read (the file cut short by a hostile op) stop the
 * run with everything given back.  (Sessions: test_session.c.)
 *
 * Legend: t length, h and s hidden and internal units, q bytes per unit,
 * m fast budget, d slow budget (units).
 */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bptt.h"
#include "mem.h"
#include "steps.h"
#include "tiny.h"
#include "twolevel.h"

#define HB (N * sizeof(double))

/* ---- folders and descriptors -------------------------------------------- */

static char root[512];   /* this program's scratch, removed at the end */
static char tmpdir[600]; /* $TMPDIR for the runs: must stay empty */

/* Names in dir (not . and ..). */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s: %s", dir, strerror(errno));
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* Open descriptors (-1 where /proc/self/fd cannot tell). */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the one opendir holds */
}

/* A fresh folder under root. */
static void fresh_dir(char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/dir-XXXXXX", root);
    ck_assert_ptr_nonnull(mkdtemp(buf));
}

/* ---- the reference: full BPTT on the tiny model ------------------------- */

typedef struct {
    tiny m;
    double h_last[N], dh0[N];
} outcome;

static int same_outcome(const outcome *a, const outcome *b)
{
    return memcmp(a->m.gW, b->m.gW, sizeof a->m.gW) == 0 &&
           memcmp(a->m.gu, b->m.gu, sizeof a->m.gu) == 0 &&
           memcmp(a->m.gb, b->m.gb, sizeof a->m.gb) == 0 &&
           memcmp(a->m.gw, b->m.gw, sizeof a->m.gw) == 0 &&
           memcmp(a->h_last, b->h_last, sizeof a->h_last) == 0 &&
           memcmp(a->dh0, b->dh0, sizeof a->dh0) == 0;
}

/* The table of o's model with internal states of sb bytes (embed: h(i)
 * stated at TINY_EMBED_AT, no hidden_from_internal). */
static bptt_steps table_of(outcome *o, size_t sb, int embed,
                           const char *dir)
{
    tiny_init(&o->m);
    o->m.pad_to = sb;
    o->m.embed = embed;
    bptt_steps ops = tiny_ops(&o->m, sb, o->h_last, o->dh0);
    if (embed) {
        ops.hidden_in_internal = 1;
        ops.hidden_offset = TINY_EMBED_AT;
        ops.hidden_from_internal = NULL;
    }
    ops.slow_dir = dir;
    return ops;
}

static void reference(outcome *o, size_t t, size_t sb)
{
    bptt_plan *full = NULL;
    bptt_plan_stats ps;
    ck_assert_int_eq(bptt_plan_make("full", t, (int64_t)HB, (int64_t)sb,
                                    INT64_MAX / 4, NULL, &full, &ps, NULL),
                     BPTT_OK);
    const bptt_steps ops = table_of(o, sb, 0, NULL);
    bptt_steps_stats st;
    ck_assert_int_eq(bptt_steps_run(full, &ops, NULL, &st, NULL), BPTT_OK);
    bptt_plan_free(full);
}

/* ---- one plan run and held to its validator and to full BPTT ------------- */

static size_t count_op(const bptt_plan *p, int op)
{
    size_t n = 0;
    for (size_t k = 0; k < p->n_actions; k++)
        n += p->actions[k].op == (uint32_t)op;
    return n;
}

/* What the plans run so far held: counts of each slow op, and of reads of
 * s(i) that a backward op of step i read next. */
static size_t seen[BPTT_N_OPS], read_then_backward;

/* Runs p (units q bytes each, internal states sb bytes) on the tiny model
 * and holds everything to ref and the validator; dir: the slow folder;
 * exact: the file must be exactly the slow peak (else longer). */
static void check_plan(const bptt_plan *p, size_t sb, int embed,
                       const char *dir, const outcome *ref, const char *what,
                       int exact)
{
    bptt_plan_stats vs;
    ck_assert_msg(bptt_plan_validate(p, &vs) == BPTT_OK, "%s: invalid plan",
                  what);
    const size_t q = HB / (size_t)p->hidden_units;
    const int before_tmp = entries(tmpdir), fds = open_fds();
    const int before_dir = dir ? entries(dir) : 0;
    outcome o;
    const bptt_steps ops = table_of(&o, sb, embed, dir);
    bptt_mem *mem = bptt_mem_alloc();
    ck_assert_ptr_nonnull(mem);
    bptt_steps_stats st;
    const int rc = bptt_steps_run(p, &ops, mem, &st, NULL);
    ck_assert_msg(rc == BPTT_OK, "%s: %s (errno %d)", what, bptt_strerror(rc),
                  st.slow_errno);
    ck_assert_msg(same_outcome(&o, ref), "%s: not full BPTT's gradients",
                  what);
    /* the calls and the fast level, as the validator has them */
    ck_assert_int_eq(st.forward_ops, vs.forward_ops);
    ck_assert_int_eq((int64_t)o.m.forwards, vs.forward_ops);
    ck_assert_int_eq(st.recompute_ops, vs.recompute_ops);
    ck_assert_int_eq(st.backward_ops, (int64_t)p->length);
    const size_t from_internal = count_op(p, BPTT_RESTORE_INTERNAL) +
                                 count_op(p, BPTT_READ_INTERNAL);
    ck_assert_uint_eq(o.m.from_internal_calls, embed ? 0 : from_internal);
    const bptt_mem_stats *ms = bptt_mem_stats_get(mem);
    ck_assert_msg(st.checkpoint_peak_bytes == (size_t)vs.peak_units * q &&
                      ms->peak[BPTT_MEM_CHECKPOINT] ==
                          st.checkpoint_peak_bytes,
                  "%s: fast peak %zu bytes, plan %lld units of %zu", what,
                  st.checkpoint_peak_bytes, (long long)vs.peak_units, q);
    ck_assert_uint_le(st.checkpoint_peak_bytes, (size_t)p->budget * q);
    /* the slow level: states and bytes moved, the peak, the file */
    ck_assert_int_eq(st.slow_writes, vs.slow_writes);
    ck_assert_int_eq(st.slow_reads, vs.slow_reads);
    ck_assert_msg(st.slow_bytes_written ==
                          (uint64_t)vs.slow_write_units * q &&
                      st.slow_bytes_read == (uint64_t)vs.slow_read_units * q,
                  "%s: %llu bytes written, %llu read; plan %lld and %lld "
                  "units of %zu", what,
                  (unsigned long long)st.slow_bytes_written,
                  (unsigned long long)st.slow_bytes_read,
                  (long long)vs.slow_write_units,
                  (long long)vs.slow_read_units, q);
    ck_assert_uint_eq(st.slow_peak_bytes, (size_t)vs.slow_peak_units * q);
    if (p->slow_budget != BPTT_SLOW_UNLIMITED)
        ck_assert_uint_le(st.slow_peak_bytes, (size_t)p->slow_budget * q);
    ck_assert_uint_le(st.slow_file_bytes, (uint64_t)vs.slow_write_units * q);
    if (exact)
        ck_assert_msg(st.slow_file_bytes == st.slow_peak_bytes,
                      "%s: a file of %llu bytes for a peak of %zu", what,
                      (unsigned long long)st.slow_file_bytes,
                      st.slow_peak_bytes);
    else
        ck_assert_uint_gt(st.slow_file_bytes, st.slow_peak_bytes);
    ck_assert_int_eq(st.slow_errno, 0);
    ck_assert(st.slow_seconds >= 0);
    /* working memory: the tables' 48 (t + 1) bytes only with slow ops */
    const double working =
        bptt_exec_working_bytes(p->length, (double)HB, (double)sb) +
        (vs.slow_writes ? 48.0 * ((double)p->length + 1) : 0);
    ck_assert((double)ms->peak[BPTT_MEM_WORKING] == working);
    ck_assert_uint_eq(ms->total_current, 0);
    bptt_mem_free(mem);
    /* nothing left anywhere */
    ck_assert_int_eq(entries(tmpdir), before_tmp);
    if (dir)
        ck_assert_int_eq(entries(dir), before_dir);
    ck_assert_int_eq(open_fds(), fds);
    for (int op = 0; op < BPTT_N_OPS; op++)
        seen[op] += count_op(p, op);
    for (size_t k = 0; k + 1 < p->n_actions; k++)
        read_then_backward +=
            p->actions[k].op == BPTT_READ_INTERNAL &&
            p->actions[k + 1].op == BPTT_BACKWARD &&
            p->actions[k + 1].step == p->actions[k].step;
}

/* The two-level plan of strategy for t steps, fast budget m and slow
 * level d, wd, rd (units of hidden_bytes HB and internal sb); NULL when
 * infeasible. */
static bptt_plan *two_level(const char *strategy, size_t t, size_t sb,
                            int64_t m, int64_t d, double wd, double rd)
{
    bptt_units u;
    ck_assert_int_eq(bptt_units_from_bytes(&u, (int64_t)HB, (int64_t)sb),
                     BPTT_OK);
    const bptt_slow_level slow = {d, wd, rd};
    bptt_twolevel *tl = NULL;
    int rc = bptt_twolevel_alloc(&tl, strategy, t, u.hidden_units,
                                 u.internal_units, m, &slow);
    if (rc == BPTT_EINFEASIBLE)
        return NULL;
    ck_assert_msg(rc == BPTT_OK, "%s t=%zu m=%lld d=%lld: %s", strategy, t,
                  (long long)m, (long long)d, bptt_strerror(rc));
    bptt_plan *p = NULL;
    rc = bptt_twolevel_plan(tl, &p);
    bptt_twolevel_free(tl);
    if (rc == BPTT_EINFEASIBLE)
        return NULL;
    ck_assert_msg(rc == BPTT_OK, "%s t=%zu m=%lld d=%lld: %s", strategy, t,
                  (long long)m, (long long)d, bptt_strerror(rc));
    return p;
}

/* ---- the planner's plans ------------------------------------------------- */

static const size_t SB[] = {16, 32, 56}; /* alpha 1, 2, 3.5 */
static const double COSTS[][2] = {{0, 0}, {0.5, 0.5}, {1, 3}, {4, 0.25}};
#define N_COSTS (sizeof COSTS / sizeof COSTS[0])

/* Every strategy, fast budget, slow budget and cost at length t. */
static void sweep_length(size_t t, size_t sb, const char *dir)
{
    bptt_units u;
    ck_assert_int_eq(bptt_units_from_bytes(&u, (int64_t)HB, (int64_t)sb),
                     BPTT_OK);
    const int64_t h = u.hidden_units, s = u.internal_units;
    const int64_t ms[] = {h, 2 * h, 3 * h, h + s, 2 * h + 2 * s};
    const int64_t ds[] = {0, s, 3 * h, 2 * s + h, BPTT_SLOW_UNLIMITED};
    static const char *const strategies[] = {"hsm", "msm"};
    outcome ref;
    reference(&ref, t, sb);
    for (size_t a = 0; a < 2; a++)
        for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
            for (size_t j = 0; j < sizeof ds / sizeof *ds; j++)
                for (size_t c = 0; c < N_COSTS; c++) {
                    bptt_plan *p = two_level(strategies[a], t, sb, ms[i],
                                             ds[j], COSTS[c][0],
                                             COSTS[c][1]);
                    if (!p)
                        continue;
                    char what[128];
                    snprintf(what, sizeof what,
                             "%s t=%zu sb=%zu m=%lld d=%lld wd=%g rd=%g",
                             strategies[a], t, sb, (long long)ms[i],
                             (long long)ds[j], COSTS[c][0], COSTS[c][1]);
                    const int embed = sb >= 2 * HB && (i + j + c) % 2;
                    check_plan(p, sb, embed, dir, &ref, what, 1);
                    bptt_plan_free(p);
                }
}

START_TEST(test_short_bit_identical)
{
    const size_t sb = SB[_i];
    memset(seen, 0, sizeof seen);
    read_then_backward = 0;
    static const size_t lengths[] = {1, 2, 3, 4, 5, 8, 13, 21, 30};
    for (size_t l = 0; l < sizeof lengths / sizeof *lengths; l++)
        sweep_length(lengths[l], sb, NULL);
    /* the plans wrote and read both kinds, and backward ops read s(i)
     * straight from the slow level (msm at alpha 1 stores no hidden
     * states: internal ones hold them) */
    if (sb > HB) {
        ck_assert_uint_gt(seen[BPTT_WRITE_HIDDEN], 0);
        ck_assert_uint_gt(seen[BPTT_READ_HIDDEN], 0);
    }
    ck_assert_uint_gt(seen[BPTT_WRITE_INTERNAL], 0);
    ck_assert_uint_gt(seen[BPTT_READ_INTERNAL], 0);
    ck_assert_uint_gt(read_then_backward, 0);
}
END_TEST

START_TEST(test_medium_given_folder)
{
    char dir[600];
    fresh_dir(dir, sizeof dir);
    char mark[700];
    snprintf(mark, sizeof mark, "%s/keep-me", dir);
    FILE *f = fopen(mark, "w");
    ck_assert_ptr_nonnull(f);
    fputs("mine\n", f);
    fclose(f);
    static const size_t lengths[] = {64, 150};
    for (size_t l = 0; l < 2; l++)
        sweep_length(lengths[l], SB[_i], dir);
    ck_assert_int_eq(entries(dir), 1);
}
END_TEST

/* A long one: the file stays at the slow peak through many slots. */
START_TEST(test_long)
{
    const size_t t = 400, sb = 56;
    outcome ref;
    reference(&ref, t, sb);
    for (int k = 0; k < 2; k++) {
        const char *st = k ? "msm" : "hsm";
        bptt_plan *p = two_level(st, t, sb, 4 + 7, k ? 6 * 7 : 10 * 2, 0.5,
                                 0.5);
        ck_assert_ptr_nonnull(p);
        check_plan(p, sb, k, NULL, &ref, st, 1);
        bptt_plan_free(p);
    }
}
END_TEST

/* ---- plans written out --------------------------------------------------- */

static bptt_plan *plan_of(size_t t, int64_t h, int64_t s, int64_t m,
                          int64_t d, const char *actions)
{
    bptt_plan *p = NULL;
    ck_assert_int_eq(bptt_plan_alloc(&p, t, h, s, m), BPTT_OK);
    p->slow_budget = d;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", actions);
    char *save = NULL;
    for (char *a = strtok_r(buf, ",", &save); a;
         a = strtok_r(NULL, ",", &save)) {
        char op[32];
        unsigned step;
        ck_assert_int_eq(sscanf(a, " %31s %u", op, &step), 2);
        const int o = bptt_op_parse(op);
        ck_assert_msg(o >= 0, "%s", op);
        ck_assert_int_eq(bptt_plan_push(p, o, step), BPTT_OK);
    }
    return p;
}

/* Valid plans no planner makes: a write of the working s(i) that the
 * forward op wrote straight into its checkpoint; a read s(i) saved to the
 * fast level and used later; a read h(i) saved and stepped from; h(0)
 * written first; a slot given back and taken again (the file no longer
 * than the peak); holes a larger state does not fit. */
static const struct {
    size_t t;
    const char *actions;
    int exact_file; /* the file is exactly the slow peak */
} BY_HAND[] = {
    {2, "advance 1, save_internal 1, write_internal 1, free_internal 1, "
        "free_hidden 0, advance 2, backward 2, read_internal 1, "
        "backward 1, drop_internal 1", 1},
    {3, "advance 1, write_internal 1, advance 2, advance 3, backward 3, "
        "read_internal 1, save_internal 1, drop_internal 1, advance 2, "
        "backward 2, free_hidden 0, backward 1, free_internal 1", 1},
    {3, "write_hidden 0, free_hidden 0, advance 1, advance 2, "
        "write_hidden 2, advance 3, backward 3, read_hidden 2, "
        "save_hidden 2, drop_hidden 2, advance 3, restore_hidden 2, "
        "free_hidden 2, read_hidden 0, advance 1, advance 2, backward 2, "
        "read_hidden 0, advance 1, backward 1, drop_hidden 0", 1},
    {3, "write_hidden 0, advance 1, write_hidden 1, drop_hidden 0, "
        "advance 2, write_hidden 2, advance 3, backward 3, read_hidden 1, "
        "advance 2, backward 2, drop_hidden 2, restore_hidden 0, "
        "advance 1, drop_hidden 1, write_internal 1, free_hidden 0, "
        "read_internal 1, backward 1, drop_internal 1", 1},
    {4, "write_hidden 0, advance 1, write_hidden 1, advance 2, "
        "write_hidden 2, drop_hidden 1, advance 3, write_internal 3, "
        "advance 4, backward 4, read_internal 3, backward 3, "
        "drop_internal 3, drop_hidden 2, read_hidden 0, advance 1, "
        "advance 2, backward 2, read_hidden 0, advance 1, backward 1, "
        "drop_hidden 0, free_hidden 0", 0},
};

START_TEST(test_plans_by_hand)
{
    const size_t sb = 48; /* h = 1, s = 3 units of 16 bytes */
    for (size_t k = 0; k < sizeof BY_HAND / sizeof *BY_HAND; k++) {
        bptt_plan *p = plan_of(BY_HAND[k].t, 1, 3, 8, 20, BY_HAND[k].actions);
        bptt_plan_stats vs;
        ck_assert_msg(bptt_plan_validate(p, &vs) == BPTT_OK,
                      "plan %zu: %s at action %zu", k,
                      bptt_violation_str(vs.violation), vs.bad_action);
        outcome ref;
        reference(&ref, p->length, sb);
        char what[32];
        snprintf(what, sizeof what, "plan %zu by hand", k);
        for (int embed = 0; embed < 2; embed++)
            check_plan(p, sb, embed, NULL, &ref, what, BY_HAND[k].exact_file);
        bptt_plan_free(p);
    }
}
END_TEST

/* ---- refusals and failures ----------------------------------------------- */

/* A plan that writes and reads: msm, 12 steps, every state written. */
static bptt_plan *writing_plan(void)
{
    bptt_plan *p = two_level("msm", 12, 32, 1 + 2, BPTT_SLOW_UNLIMITED, 0, 0);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_gt(count_op(p, BPTT_WRITE_INTERNAL), 3);
    return p;
}

/* Runs p with the slow folder dir; asserts the status, that no op ran
 * when none may, and that nothing is left; returns slow_errno. */
static int refused(const bptt_plan *p, const char *dir, int want, int no_op)
{
    const int fds = open_fds(), tmp = entries(tmpdir);
    outcome o;
    const bptt_steps ops = table_of(&o, 32, 0, dir);
    bptt_mem *mem = bptt_mem_alloc();
    bptt_steps_stats st;
    const int rc = bptt_steps_run(p, &ops, mem, &st, NULL);
    ck_assert_msg(rc == want, "%s: %s, not %s", dir ? dir : "(default)",
                  bptt_strerror(rc), bptt_strerror(want));
    if (no_op) {
        ck_assert_uint_eq(o.m.forwards, 0);
        ck_assert_int_eq(st.failed_action, -1);
    }
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    bptt_mem_free(mem);
    ck_assert_int_eq(open_fds(), fds);
    ck_assert_int_eq(entries(tmpdir), tmp);
    return st.slow_errno;
}

START_TEST(test_refusals)
{
    bptt_plan *p = writing_plan();
    /* no slow budget: the validator's refusal, no file, no op */
    p->slow_budget = 0;
    ck_assert_int_eq(refused(p, NULL, BPTT_EBADPLAN, 1), 0);
    p->slow_budget = BPTT_SLOW_UNLIMITED;
    /* reads of s(i) need a way to h(i) inside it */
    outcome o;
    bptt_steps ops = table_of(&o, 32, 0, NULL);
    ops.hidden_from_internal = NULL;
    bptt_steps_stats st;
    ck_assert_int_eq(bptt_steps_run(p, &ops, NULL, &st, NULL), BPTT_EINVAL);
    ck_assert_uint_eq(o.m.forwards, 0);
    /* folders that cannot take the file: before any op */
    char dir[600], path[700];
    fresh_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/missing", dir);
    ck_assert_int_eq(refused(p, path, BPTT_EIO, 1), ENOENT);
    snprintf(path, sizeof path, "%s/file", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    ck_assert_int_eq(refused(p, path, BPTT_EIO, 1), ENOTDIR);
    if (geteuid() != 0) { /* root writes anywhere */
        ck_assert_int_eq(chmod(dir, 0500), 0);
        ck_assert_int_eq(refused(p, dir, BPTT_EIO, 1), EACCES);
        ck_assert_int_eq(chmod(dir, 0700), 0);
    }
    ck_assert_int_eq(entries(dir), 1);
    /* the default folder under a $TMPDIR that is missing or too long */
    char saved[sizeof tmpdir];
    snprintf(saved, sizeof saved, "%s", tmpdir);
    snprintf(path, sizeof path, "%s/missing", dir);
    ck_assert_int_eq(setenv("TMPDIR", path, 1), 0);
    ck_assert_int_eq(refused(p, NULL, BPTT_EIO, 1), ENOENT);
    char *longer = malloc(5000);
    ck_assert_ptr_nonnull(longer);
    memset(longer, 'x', 4999);
    longer[0] = '/';
    longer[4999] = '\0';
    ck_assert_int_eq(setenv("TMPDIR", longer, 1), 0);
    ck_assert_int_eq(refused(p, NULL, BPTT_EIO, 1), ENAMETOOLONG);
    free(longer);
    ck_assert_int_eq(setenv("TMPDIR", saved, 1), 0);
    /* a plan without slow ops never looks at the folder */
    bptt_plan *one = NULL;
    bptt_plan_stats ps;
    ck_assert_int_eq(bptt_plan_make("msm", 12, 16, 32, 200, NULL, &one, &ps,
                                    NULL),
                     BPTT_OK);
    one->slow_budget = BPTT_SLOW_UNLIMITED;
    snprintf(path, sizeof path, "%s/missing", dir);
    ck_assert_int_eq(refused(one, path, BPTT_OK, 0), 0);
    bptt_plan_free(one);
    bptt_plan_free(p);
}
END_TEST

/* Files and links planted under the store's names are never opened: the
 * run takes the next free name, or fails when all are taken. */
START_TEST(test_planted_names)
{
    bptt_plan *p = writing_plan();
    char dir[600], target[700], path[700];
    fresh_dir(dir, sizeof dir);
    snprintf(target, sizeof target, "%s-target", dir);
    FILE *f = fopen(target, "w");
    ck_assert_ptr_nonnull(f);
    fputs("target\n", f);
    fclose(f);
    const long pid = (long)getpid();
    for (int k = 0; k < 64; k++) {
        snprintf(path, sizeof path, "%s/bptt-slow-%ld-%d", dir, pid, k);
        if (k % 2) {
            ck_assert_int_eq(symlink(target, path), 0);
        } else {
            f = fopen(path, "w");
            ck_assert_ptr_nonnull(f);
            fputs("planted\n", f);
            fclose(f);
        }
        if (k == 1 || k == 63) { /* two names taken, then all of them */
            outcome ref;
            reference(&ref, p->length, 32);
            if (k == 1)
                check_plan(p, 32, 0, dir, &ref, "planted", 1);
            else
                ck_assert_int_eq(refused(p, dir, BPTT_EIO, 1), EEXIST);
        }
    }
    ck_assert_int_eq(entries(dir), 64);
    struct stat sb;
    ck_assert_int_eq(stat(target, &sb), 0);
    ck_assert_int_eq(sb.st_size, 7); /* "target\n", untouched */
    for (int k = 0; k < 64; k += 2) {
        snprintf(path, sizeof path, "%s/bptt-slow-%ld-%d", dir, pid, k);
        ck_assert_int_eq(stat(path, &sb), 0);
        ck_assert_int_eq(sb.st_size, 8); /* "planted\n" */
    }
    bptt_plan_free(p);
}
END_TEST

START_TEST(test_enomem)
{
    bptt_plan *p = writing_plan();
    outcome o;
    const bptt_steps ops = table_of(&o, 32, 0, NULL);
    bptt_mem *mem = bptt_mem_alloc();
    bptt_steps_stats st;
    const size_t a0 = bptt_mem_stats_get(mem)->allocations;
    ck_assert_int_eq(bptt_steps_run(p, &ops, mem, &st, NULL), BPTT_OK);
    const size_t n = bptt_mem_stats_get(mem)->allocations - a0;
    const int fds = open_fds();
    for (size_t f = 1; f <= n + 1; f++) {
        outcome q;
        const bptt_steps again = table_of(&q, 32, 0, NULL);
        bptt_mem_fail_at(mem, f);
        const int rc = bptt_steps_run(p, &again, mem, &st, NULL);
        bptt_mem_fail_at(mem, 0);
        ck_assert_int_eq(rc, f <= n ? BPTT_ENOMEM : BPTT_OK);
        ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
        ck_assert_int_eq(open_fds(), fds);
        ck_assert_int_eq(entries(tmpdir), 0);
    }
    bptt_mem_free(mem);
    bptt_plan_free(p);
}
END_TEST

/* A write past a file size limit (limit bytes) in a child: 0 when the
 * run stopped at a write with BPTT_EIO and EFBIG, everything given back;
 * else the check that failed. */
static int write_past_limit(const bptt_plan *p, rlim_t limit)
{
    signal(SIGXFSZ, SIG_IGN);
    const struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 2;
    const int fds = open_fds();
    outcome o;
    const bptt_steps ops = table_of(&o, 32, 0, NULL);
    bptt_mem *mem = bptt_mem_alloc();
    bptt_steps_stats st;
    const int rc = bptt_steps_run(p, &ops, mem, &st, NULL);
    const size_t held = bptt_mem_stats_get(mem)->total_current;
    bptt_mem_free(mem);
    if (rc != BPTT_EIO || st.slow_errno != EFBIG)
        return 3;
    if (st.failed_action < 0 ||
        (p->actions[st.failed_action].op != BPTT_WRITE_HIDDEN &&
         p->actions[st.failed_action].op != BPTT_WRITE_INTERNAL))
        return 4;
    if (st.slow_bytes_written > limit)
        return 5;
    if (held != 0)
        return 6;
    if (open_fds() != fds || entries(tmpdir) != 0)
        return 7;
    return 0;
}

START_TEST(test_write_fails)
{
    bptt_plan *p = writing_plan();
    /* at the first write, inside one (a short write first), later on */
    static const rlim_t limits[] = {0, 5, 32, 40, 100, 200};
    for (size_t k = 0; k < sizeof limits / sizeof *limits; k++) {
        const pid_t child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
            const int r = write_past_limit(p, limits[k]);
            bptt_plan_free(p);
            _exit(r);
        }
        int status = 0;
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "file size limit %llu: check %d failed",
                      (unsigned long long)limits[k],
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    bptt_plan_free(p);
}
END_TEST

/* A hostile forward op that cuts the store file short at its call cut_at
 * (found through /proc/self/fd): the next read meets its end. */
typedef struct {
    tiny m; /* first: the tiny ops take the context as a tiny */
    size_t cut_at;
} hostile;

static int cut_store(void)
{
    int cut = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        char link[300], where[1024];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        const ssize_t n = readlink(link, where, sizeof where - 1);
        if (n <= 0)
            continue;
        where[n] = '\0';
        if (strstr(where, "/bptt-slow-") && strstr(where, "(deleted)"))
            cut += ftruncate(atoi(e->d_name), 0) == 0;
    }
    closedir(d);
    return cut;
}

static int hostile_forward(void *ctx, size_t i, const void *h_in,
                           void *s_out, void *h_out)
{
    hostile *x = ctx;
    const int rc = tiny_forward(ctx, i, h_in, s_out, h_out);
    if (x->m.forwards == x->cut_at)
        ck_assert_int_eq(cut_store(), 1);
    return rc;
}

START_TEST(test_read_fails)
{
    if (open_fds() < 0)
        return; /* no /proc: nothing to cut the file with */
    /* s(1) written, cut away at the forward op of step 2, read back */
    bptt_plan *p = plan_of(2, 1, 2, 4, 10,
                           "advance 1, write_internal 1, free_hidden 0, "
                           "advance 2, backward 2, read_internal 1, "
                           "backward 1, drop_internal 1");
    hostile x;
    tiny_init(&x.m);
    x.m.pad_to = 32;
    x.cut_at = 2;
    bptt_steps ops = tiny_ops(&x.m, 32, NULL, NULL);
    ops.forward = hostile_forward;
    ops.ctx = &x;
    bptt_mem *mem = bptt_mem_alloc();
    bptt_steps_stats st;
    const int fds = open_fds();
    ck_assert_int_eq(bptt_steps_run(p, &ops, mem, &st, NULL), BPTT_EIO);
    ck_assert_int_eq(st.slow_errno, EIO);
    ck_assert_int_eq(st.failed_action, 5);
    ck_assert_int_eq(st.slow_reads, 0);
    ck_assert_int_eq(st.backward_ops, 1);
    ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
    ck_assert_int_eq(open_fds(), fds);
    ck_assert_int_eq(entries(tmpdir), 0);
    bptt_mem_free(mem);
    bptt_plan_free(p);
}
END_TEST

static Suite *slow_suite(void)
{
    Suite *su = suite_create("steps-slow");
    TCase *tc = tcase_create("plans");
    tcase_add_loop_test(tc, test_short_bit_identical, 0, 3);
    tcase_add_loop_test(tc, test_medium_given_folder, 0, 3);
    tcase_add_test(tc, test_long);
    tcase_add_test(tc, test_plans_by_hand);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(su, tc);
    tc = tcase_create("failures");
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_planted_names);
    tcase_add_test(tc, test_enomem);
    tcase_add_test(tc, test_write_fails);
    tcase_add_test(tc, test_read_fails);
    suite_add_tcase(su, tc);
    return su;
}

static int remove_one(const char *path, const struct stat *sb, int flag,
                      struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/bptt-test-slow-XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(root)) {
        perror(root);
        return EXIT_FAILURE;
    }
    snprintf(tmpdir, sizeof tmpdir, "%s/tmp", root);
    if (mkdir(tmpdir, 0700) != 0 || setenv("TMPDIR", tmpdir, 1) != 0) {
        perror(tmpdir);
        return EXIT_FAILURE;
    }
    SRunner *sr = srunner_create(slow_suite());
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    chmod(root, 0700);
    nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
