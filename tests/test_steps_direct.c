/* test_steps_direct.c: Check suite of the executor's slow level under
 * O_DIRECT (bptt_steps.slow_direct; steps.h), beside test_steps_slow.c,
 * which runs the same plans through the page cache.
 *
 * Promises: in a folder under the current one (the build folder: a real
 * filesystem, not tmpfs), for hsm and msm two-level plans (lengths 1 to
 * 64 at alpha 1, 2 and 3.5, 1 to 5 at alpha 512, several fast and slow
 * budgets), a run with slow_direct = 1
 *   - computes gradients, dL/dh(0) and h(T) equal to full BPTT's and to
 *     the same run's through the page cache, memcmp for memcmp;
 *   - counts forward, recomputed and backward ops, restores, the fast
 *     peak, the slow writes and reads, their bytes and the slow peak as
 *     that run does (the plan's state bytes, not the padded ones);
 *   - grows a file of whole aligned slots (a multiple of the alignment,
 *     at least the slow peak, at most a slot per write);
 *   - takes exactly the documented working memory: the page cache run's
 *     plus the bounce buffer (internal bytes rounded up to the alignment
 *     A, plus A - 64);
 *   - leaves the folder as it was, no descriptor open, no byte held;
 * every allocation failed in turn (the bounce buffer's too) stops a
 * direct run with BPTT_ENOMEM, everything given back.
 * Where the folder's filesystem refuses O_DIRECT the program says
 * SKIPPED with the reason and exits 77 (automake's skip).  A folder on a
 * filesystem that refuses it (tried: /dev/shm, tmpfs) stops the run
 * before any op with BPTT_EIO and slow_errno EINVAL, leaving nothing;
 * where this kernel's tmpfs takes O_DIRECT (Linux 6.6 and later) that
 * check says SKIPPED and the folder is held to the promises above. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bptt.h"
#include "mem.h"
#include "steps.h"
#include "tiny.h"
#include "twolevel.h"

#define HB (N * sizeof(double))

static char dir[512]; /* the slow folder, under the current one */

static int entries(const char *d)
{
    DIR *f = opendir(d);
    ck_assert_msg(f != NULL, "%s: %s", d, strerror(errno));
    int n = 0;
    for (struct dirent *e; (e = readdir(f));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(f);
    return n;
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;
}

/* The alignment the store uses in folder d, found as it finds it: 4096,
 * or more where statx says the filesystem asks more; 0 where a file in d
 * refuses O_DIRECT. */
static size_t alignment_in(const char *d) /* called outside tests too */
{
    char name[600];
    snprintf(name, sizeof name, "%s/probe-XXXXXX", d);
    const int fd = mkstemp(name);
    if (fd < 0) {
        perror(name);
        return 0;
    }
    unlink(name);
    size_t a = BPTT_SLOW_DIRECT_ALIGN;
    const int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT) != 0)
        a = 0;
#ifdef STATX_DIOALIGN
    struct statx sx;
    if (a && statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 &&
        (sx.stx_mask & STATX_DIOALIGN)) {
        if (sx.stx_dio_offset_align == 0)
            a = 0;
        if (sx.stx_dio_offset_align > a)
            a = sx.stx_dio_offset_align;
        if (sx.stx_dio_mem_align > a)
            a = sx.stx_dio_mem_align;
    }
#endif
    close(fd);
    return a;
}

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

static bptt_steps table_of(outcome *o, size_t sb, const char *d, int direct)
{
    tiny_init(&o->m);
    o->m.pad_to = sb;
    bptt_steps ops = tiny_ops(&o->m, sb, o->h_last, o->dh0);
    ops.slow_dir = d;
    ops.slow_direct = direct;
    return ops;
}

/* p run on the tiny model in folder d: its outcome, stats and the peak
 * of working memory. */
static int run_in(const bptt_plan *p, size_t sb, const char *d, int direct,
                  outcome *o, bptt_steps_stats *st, size_t *working)
{
    const bptt_steps ops = table_of(o, sb, d, direct);
    bptt_mem *mem = bptt_mem_alloc();
    ck_assert_ptr_nonnull(mem);
    const int rc = bptt_steps_run(p, &ops, mem, st, NULL);
    const bptt_mem_stats *ms = bptt_mem_stats_get(mem);
    *working = ms->peak[BPTT_MEM_WORKING];
    ck_assert_uint_eq(ms->total_current, 0);
    bptt_mem_free(mem);
    return rc;
}

static bptt_plan *two_level(const char *strategy, size_t t, size_t sb,
                            int64_t m, int64_t d)
{
    bptt_units u;
    ck_assert_int_eq(bptt_units_from_bytes(&u, (int64_t)HB, (int64_t)sb),
                     BPTT_OK);
    const bptt_slow_level slow = {d, 0.5, 0.5};
    bptt_twolevel *tl = NULL;
    if (bptt_twolevel_alloc(&tl, strategy, t, u.hidden_units,
                            u.internal_units, m, &slow) != BPTT_OK)
        return NULL;
    bptt_plan *p = NULL;
    const int rc = bptt_twolevel_plan(tl, &p);
    bptt_twolevel_free(tl);
    return rc == BPTT_OK ? p : NULL;
}

/* p through the page cache and direct, held to each other and to ref. */
static void check_plan(const bptt_plan *p, size_t sb, const outcome *ref,
                       size_t align, const char *what)
{
    const int before = entries(dir), fds = open_fds();
    outcome a, b;
    bptt_steps_stats sa, sd;
    size_t wa, wd;
    ck_assert_int_eq(run_in(p, sb, dir, 0, &a, &sa, &wa), BPTT_OK);
    const int rc = run_in(p, sb, dir, 1, &b, &sd, &wd);
    ck_assert_msg(rc == BPTT_OK, "%s: %s (errno %d)", what,
                  bptt_strerror(rc), sd.slow_errno);
    ck_assert_msg(same_outcome(&a, ref) && same_outcome(&b, ref),
                  "%s: not full BPTT's gradients", what);
    ck_assert_int_eq(sd.forward_ops, sa.forward_ops);
    ck_assert_int_eq(sd.recompute_ops, sa.recompute_ops);
    ck_assert_int_eq(sd.backward_ops, sa.backward_ops);
    ck_assert_int_eq(sd.restores, sa.restores);
    ck_assert_uint_eq(sd.checkpoint_peak_bytes, sa.checkpoint_peak_bytes);
    ck_assert_int_eq(sd.slow_writes, sa.slow_writes);
    ck_assert_int_eq(sd.slow_reads, sa.slow_reads);
    ck_assert_uint_eq(sd.slow_bytes_written, sa.slow_bytes_written);
    ck_assert_uint_eq(sd.slow_bytes_read, sa.slow_bytes_read);
    ck_assert_uint_eq(sd.slow_peak_bytes, sa.slow_peak_bytes);
    ck_assert_int_eq(sd.slow_errno, 0);
    /* whole slots: each state's bytes rounded up to the alignment */
    const uint64_t slot_h = (HB + align - 1) / align * align;
    const uint64_t slot_s = (sb + align - 1) / align * align;
    ck_assert_uint_eq(sd.slow_file_bytes % align, 0);
    ck_assert_uint_ge(sd.slow_file_bytes, sd.slow_peak_bytes);
    ck_assert_uint_le(sd.slow_file_bytes,
                      (uint64_t)sd.slow_writes * slot_s);
    if (sd.slow_writes)
        ck_assert_uint_ge(sd.slow_file_bytes, slot_h);
    /* working memory: the page cache run's, and the bounce buffer */
    const size_t bounce = sd.slow_writes ? slot_s + align - 64 : 0;
    ck_assert_msg(wd == wa + bounce, "%s: working %zu, page cache %zu, "
                  "bounce %zu", what, wd, wa, bounce);
    ck_assert_int_eq(entries(dir), before);
    ck_assert_int_eq(open_fds(), fds);
}

static const size_t SB[] = {16, 32, 56, 8192}; /* alpha 1, 2, 3.5, 512 */

START_TEST(test_same_as_page_cache)
{
    const size_t align = alignment_in(dir), sb = SB[_i];
    ck_assert_uint_gt(align, 0);
    bptt_units u;
    ck_assert_int_eq(bptt_units_from_bytes(&u, (int64_t)HB, (int64_t)sb),
                     BPTT_OK);
    const int64_t h = u.hidden_units, s = u.internal_units;
    const int64_t ms[] = {h, 2 * h + s, 2 * h + 2 * s};
    const int64_t ds[] = {s, 2 * s + h, BPTT_SLOW_UNLIMITED};
    static const size_t lengths[] = {1, 2, 5, 13, 30, 64};
    static const char *const strategies[] = {"hsm", "msm"};
    size_t runs = 0;
    /* alpha 512 makes the planner's budgets hundreds of units: short
     * lengths only */
    const size_t n_lengths = sb > 64 ? 3 : sizeof lengths / sizeof *lengths;
    for (size_t l = 0; l < n_lengths; l++) {
        const size_t t = lengths[l];
        bptt_plan *full = NULL;
        bptt_plan_stats ps;
        ck_assert_int_eq(bptt_plan_make("full", t, (int64_t)HB, (int64_t)sb,
                                        INT64_MAX / 4, NULL, &full, &ps,
                                        NULL),
                         BPTT_OK);
        outcome ref;
        bptt_steps_stats st;
        size_t w;
        ck_assert_int_eq(run_in(full, sb, NULL, 0, &ref, &st, &w), BPTT_OK);
        bptt_plan_free(full);
        for (size_t a = 0; a < 2; a++)
            for (size_t i = 0; i < 3; i++)
                for (size_t j = 0; j < 3; j++) {
                    bptt_plan *p = two_level(strategies[a], t, sb, ms[i],
                                             ds[j]);
                    if (!p)
                        continue;
                    char what[128];
                    snprintf(what, sizeof what, "%s t=%zu sb=%zu m=%lld "
                             "d=%lld", strategies[a], t, sb,
                             (long long)ms[i], (long long)ds[j]);
                    check_plan(p, sb, &ref, align, what);
                    runs += bptt_plan_slow_actions(p) > 0;
                    bptt_plan_free(p);
                }
    }
    ck_assert_uint_gt(runs, 0);
}
END_TEST

/* Every allocation of a direct run failed in turn, the bounce buffer's
 * among them: BPTT_ENOMEM, nothing held, nothing left. */
START_TEST(test_enomem)
{
    bptt_plan *p = two_level("msm", 8, 32, 4, BPTT_SLOW_UNLIMITED);
    ck_assert_ptr_nonnull(p);
    outcome o;
    const bptt_steps ops = table_of(&o, 32, dir, 1);
    bptt_mem *mem = bptt_mem_alloc();
    ck_assert_ptr_nonnull(mem);
    bptt_steps_stats st;
    const size_t a0 = bptt_mem_stats_get(mem)->allocations;
    ck_assert_int_eq(bptt_steps_run(p, &ops, mem, &st, NULL), BPTT_OK);
    const size_t n = bptt_mem_stats_get(mem)->allocations - a0;
    const int fds = open_fds(), before = entries(dir);
    for (size_t f = 1; f <= n + 1; f++) {
        outcome q;
        const bptt_steps again = table_of(&q, 32, dir, 1);
        bptt_mem_fail_at(mem, f);
        const int rc = bptt_steps_run(p, &again, mem, &st, NULL);
        bptt_mem_fail_at(mem, 0);
        ck_assert_int_eq(rc, f <= n ? BPTT_ENOMEM : BPTT_OK);
        ck_assert_uint_eq(bptt_mem_stats_get(mem)->total_current, 0);
        ck_assert_int_eq(open_fds(), fds);
        ck_assert_int_eq(entries(dir), before);
    }
    bptt_mem_free(mem);
    bptt_plan_free(p);
}
END_TEST

/* A folder on a filesystem that refuses O_DIRECT: BPTT_EIO, EINVAL, no
 * op run, nothing left; said SKIPPED where none refuses it here. */
START_TEST(test_refused)
{
    static const char shm[] = "/dev/shm";
    struct stat sb;
    if (stat(shm, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
        access(shm, W_OK) != 0) {
        printf("SKIPPED test_refused: no writable %s\n", shm);
        fflush(stdout);
        return;
    }
    char d[64];
    snprintf(d, sizeof d, "%s/bptt-test-direct-XXXXXX", shm);
    ck_assert_ptr_nonnull(mkdtemp(d));
    bptt_plan *p = two_level("msm", 8, 32, 4, BPTT_SLOW_UNLIMITED);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_gt(bptt_plan_slow_actions(p), 0);
    const int fds = open_fds();
    outcome o;
    bptt_steps_stats st;
    size_t w;
    const int rc = run_in(p, 32, d, 1, &o, &st, &w);
    if (alignment_in(d) == 0) {
        ck_assert_int_eq(rc, BPTT_EIO);
        ck_assert_int_eq(st.slow_errno, EINVAL);
        ck_assert_int_eq(st.forward_ops, 0);
        ck_assert_int_eq(st.slow_writes, 0);
    } else {
        printf("SKIPPED test_refused: %s takes O_DIRECT on this kernel "
               "(tmpfs does from Linux 6.6); the run there must pass\n",
               shm);
        ck_assert_msg(rc == BPTT_OK, "%s: %s (errno %d)", d,
                      bptt_strerror(rc), st.slow_errno);
    }
    fflush(stdout);
    ck_assert_int_eq(entries(d), 0);
    ck_assert_int_eq(open_fds(), fds);
    rmdir(d);
    bptt_plan_free(p);
}
END_TEST

int main(void)
{
    snprintf(dir, sizeof dir, "bptt-test-direct-XXXXXX");
    if (!mkdtemp(dir)) {
        perror(dir);
        return EXIT_FAILURE;
    }
    const size_t align = alignment_in(dir);
    if (align == 0) {
        printf("SKIPPED test_steps_direct: the filesystem of %s refuses "
               "O_DIRECT\n", dir);
        rmdir(dir);
        return 77;
    }
    printf("test_steps_direct: %s, alignment %zu\n", dir, align);
    fflush(stdout);
    Suite *su = suite_create("steps-direct");
    TCase *tc = tcase_create("direct");
    tcase_add_loop_test(tc, test_same_as_page_cache, 0,
                        (int)(sizeof SB / sizeof *SB));
    tcase_add_test(tc, test_enomem);
    tcase_add_test(tc, test_refused);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(su, tc);
    SRunner *sr = srunner_create(su);
    srunner_run_all(sr, CK_NORMAL);
    const int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    const int left = rmdir(dir) != 0; /* not empty: a file left */
    if (left)
        perror(dir);
    return failed || left ? EXIT_FAILURE : EXIT_SUCCESS;
}
