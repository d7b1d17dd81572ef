/* exhaustive_slow.c: shortest path over every schedule of the two-level
 * cost model (exhaustive_slow.h).
 *
 * Promises: exslow_solve is the exact optimum for t <= EXSLOW_MAX_T,
 * written from the model of include/bptt/twolevel.h and the validator's
 * rules for the slow level's ops, independently of src/plan/twolevel.c
 * (no recursion over segments: a plain search over whole states).
 *
 * A state of a schedule is
 *   b   the backward op due next (t down to 1; 0: all done, the goal),
 *   p   the position of the running state h(p), or none,
 *   w   whether s(p) is the working internal state,
 *   HF, SF  the hidden and internal states in fast memory,
 *   HS, SS  the hidden and internal states on the slow level.
 * Moves, with their scaled costs (exhaustive_slow.h):
 *   advance p -> p+1 (h; w := 1);
 *   save h(p) or, if w, s(p) in fast memory (0; fast units <= m);
 *   restore from a fast h(j) or s(j) (0; p := j, w := 0);
 *   free a fast state (0);
 *   write h(p) or, if w, s(p) to the slow level (wd x its units; slow
 *     units <= d);
 *   read h(j) (rd x h; p := j, w := 0) or s(j) (rd x s; p := j, w := 1)
 *     from the slow level;
 *   drop a slow state (0);
 *   backward b, if s(b) is in fast memory or w and p == b (0; b := b-1,
 *     the running state consumed).
 * Freeing and dropping cost nothing, so each state is replaced by its
 * canonical form, which lets go of what can never be used again: h(j)
 * with j >= b and s(j) with j > b on either level, and a running state
 * past b, or at b without its working s(b).  The goal is the single
 * state b = 0.  No schedule needs more than recomputing from h(0) before
 * each backward op (t(t+1)/2 forward ops, which fits any m >= h), so
 * states dearer than that are not kept.
 *
 * Search: A*, Dijkstra's algorithm steered by a consistent lower bound on
 * the cost still to come (lower(), below), with a binary heap (lazy
 * deletion) over an open-addressing hash map of the states reached, each with its best cost
 * and the move that reached it, from which the schedule is rebuilt and
 * replayed with the frees and drops that the canonical form made.
 */
#include <stdlib.h>
#include <string.h>

#include "exhaustive_slow.h"

typedef struct {
    int b, p, w;
    unsigned hf, sf, hs, ss; /* h(j): bit j; s(j): bit j-1 */
} xstate;

typedef struct {
    uint64_t key;    /* the state's code + 1; 0: empty */
    int64_t dist;
    uint64_t parent; /* the code of the state it was reached from */
    uint8_t op, step, done;
} entry;

typedef struct {
    int64_t f;    /* cost so far + the lower bound of what remains */
    int64_t dist; /* cost so far */
    uint64_t code;
} hnode;

typedef struct {
    const exslow_problem *pb;
    int64_t bound; /* the most a useful state may cost */
    entry *tab;
    size_t cap, used;
    hnode *heap;
    size_t hn, hcap;
    int oom;
} search;

/* ---- states --------------------------------------------------------- */

static int pop(unsigned x) { return __builtin_popcount(x); }

static void canon(xstate *x)
{
    const unsigned below = (1u << x->b) - 1u; /* h(j), j < b; s(j), j <= b */
    x->hf &= below;
    x->sf &= below;
    x->hs &= below;
    x->ss &= below;
    if (x->p < 0 || x->p > x->b || (x->p == x->b && !x->w)) {
        x->p = -1;
        x->w = 0;
    }
}

static uint64_t code_of(int t, const xstate *x)
{
    uint64_t c = (uint64_t)x->b;
    c = c << 4 | (uint64_t)(x->p + 1);
    c = c << 1 | (uint64_t)x->w;
    c = c << t | x->hf;
    c = c << t | x->sf;
    c = c << t | x->hs;
    c = c << t | x->ss;
    return c;
}

static xstate state_of(int t, uint64_t c)
{
    const uint64_t mask = (1u << t) - 1u;
    xstate x;
    x.ss = (unsigned)(c & mask);
    c >>= t;
    x.hs = (unsigned)(c & mask);
    c >>= t;
    x.sf = (unsigned)(c & mask);
    c >>= t;
    x.hf = (unsigned)(c & mask);
    c >>= t;
    x.w = (int)(c & 1u);
    c >>= 1;
    x.p = (int)(c & 15u) - 1;
    x.b = (int)(c >> 4);
    return x;
}

/* ---- the map and the heap ------------------------------------------- */

static size_t slot_of(uint64_t code, size_t cap)
{
    uint64_t z = code + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (size_t)(z ^ (z >> 31)) & (cap - 1);
}

static entry *find(const search *se, uint64_t code)
{
    size_t i = slot_of(code, se->cap);
    while (se->tab[i].key && se->tab[i].key != code + 1)
        i = (i + 1) & (se->cap - 1);
    return &se->tab[i];
}

static int grow(search *se)
{
    const size_t cap = se->cap ? 2 * se->cap : (size_t)1 << 12;
    entry *tab = calloc(cap, sizeof *tab);
    if (!tab)
        return -1;
    entry *old = se->tab;
    const size_t ocap = se->cap;
    se->tab = tab;
    se->cap = cap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].key)
            *find(se, old[i].key - 1) = old[i];
    free(old);
    return 0;
}

/* Pop order: least f first; among equal f, the dearest so far (the
 * nearest the goal). */
static int before(const hnode *a, const hnode *b)
{
    return a->f < b->f || (a->f == b->f && a->dist > b->dist);
}

static void heap_push(search *se, hnode x)
{
    if (se->hn == se->hcap) {
        const size_t cap = se->hcap ? 2 * se->hcap : 1024;
        hnode *v = realloc(se->heap, cap * sizeof *v);
        if (!v) {
            se->oom = 1;
            return;
        }
        se->heap = v;
        se->hcap = cap;
    }
    size_t i = se->hn++;
    while (i > 0 && before(&x, &se->heap[(i - 1) / 2])) {
        se->heap[i] = se->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    se->heap[i] = x;
}

static hnode heap_pop(search *se)
{
    const hnode top = se->heap[0];
    const hnode last = se->heap[--se->hn];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= se->hn)
            break;
        if (c + 1 < se->hn && before(&se->heap[c + 1], &se->heap[c]))
            c++;
        if (!before(&se->heap[c], &last))
            break;
        se->heap[i] = se->heap[c];
        i = c;
    }
    if (se->hn)
        se->heap[i] = last;
    return top;
}

/* ---- the search ------------------------------------------------------ */

/* A lower bound on what a schedule from x still costs: each s(j), j <= b,
 * that is neither in fast memory nor working needs an advance to step j
 * (h), or, when it is on the slow level, a read of it (rd x s) or that
 * advance, whichever is cheaper.  Distinct steps need distinct moves, and
 * no move lowers the bound by more than it costs (an advance makes one
 * s(j) working, a read one), so the bound is consistent: the search
 * settles each state at its optimum, as Dijkstra's algorithm would. */
static int64_t lower(const search *se, const xstate *x)
{
    const exslow_problem *pb = se->pb;
    const int64_t rs = pb->rd * pb->s;
    const int64_t from_slow = rs < pb->h ? rs : pb->h;
    int64_t lb = 0;
    for (int j = 1; j <= x->b; j++) {
        const unsigned sj = 1u << (j - 1);
        if ((x->sf & sj) || (x->w && x->p == j))
            continue;
        lb += (x->ss & sj) ? from_slow : pb->h;
    }
    return lb;
}

/* Reach y (a move op at step from the state `from`) at cost dist. */
static void reach(search *se, xstate y, int64_t dist, uint64_t from, int op,
                  int step)
{
    if (se->oom)
        return;
    canon(&y);
    const int64_t f = dist + lower(se, &y);
    if (f > se->bound)
        return;
    const uint64_t code = code_of(se->pb->t, &y);
    if (2 * (se->used + 1) > se->cap && grow(se) != 0) {
        se->oom = 1;
        return;
    }
    entry *e = find(se, code);
    if (e->key) {
        if (e->dist <= dist)
            return;
    } else {
        e->key = code + 1;
        se->used++;
    }
    e->dist = dist;
    e->parent = from;
    e->op = (uint8_t)op;
    e->step = (uint8_t)step;
    heap_push(se, (hnode){f, dist, code});
}

/* Every move out of x (canonical, b >= 1), reached at cost c. */
static void expand(search *se, const xstate *x, uint64_t from, int64_t c)
{
    const exslow_problem *pb = se->pb;
    const int64_t h = pb->h, s = pb->s;
    const int64_t fast = pop(x->hf) * h + pop(x->sf) * s;
    const int64_t slow = pop(x->hs) * h + pop(x->ss) * s;
    const int p = x->p;
    const unsigned hbit = p >= 0 ? 1u << p : 0u;
    const unsigned sbit = p >= 1 ? 1u << (p - 1) : 0u;
    xstate y;

    if (p >= 0 && p < x->b) {
        y = *x;
        y.p = p + 1;
        y.w = 1;
        reach(se, y, c + h, from, BPTT_ADVANCE, p + 1);
        if (!(x->hf & hbit) && fast + h <= pb->m) {
            y = *x;
            y.hf |= hbit;
            reach(se, y, c, from, BPTT_SAVE_HIDDEN, p);
        }
        if (!(x->hs & hbit) && h <= pb->d - slow) {
            y = *x;
            y.hs |= hbit;
            reach(se, y, c + pb->wd * h, from, BPTT_WRITE_HIDDEN, p);
        }
    }
    if (pb->internal && x->w && p >= 1) { /* p <= b: canonical */
        if (!(x->sf & sbit) && fast + s <= pb->m) {
            y = *x;
            y.sf |= sbit;
            reach(se, y, c, from, BPTT_SAVE_INTERNAL, p);
        }
        if (!(x->ss & sbit) && s <= pb->d - slow) {
            y = *x;
            y.ss |= sbit;
            reach(se, y, c + pb->wd * s, from, BPTT_WRITE_INTERNAL, p);
        }
    }
    for (int j = 0; j <= x->b; j++) {
        const unsigned hj = 1u << j, sj = j >= 1 ? 1u << (j - 1) : 0u;
        if (x->hf & hj) {
            y = *x;
            y.p = j;
            y.w = 0;
            reach(se, y, c, from, BPTT_RESTORE_HIDDEN, j);
            y = *x;
            y.hf &= ~hj;
            reach(se, y, c, from, BPTT_FREE_HIDDEN, j);
        }
        if (x->hs & hj) {
            y = *x;
            y.p = j;
            y.w = 0;
            reach(se, y, c + pb->rd * h, from, BPTT_READ_HIDDEN, j);
            y = *x;
            y.hs &= ~hj;
            reach(se, y, c, from, BPTT_DROP_HIDDEN, j);
        }
        if (x->sf & sj) {
            y = *x;
            y.p = j;
            y.w = 0;
            reach(se, y, c, from, BPTT_RESTORE_INTERNAL, j);
            y = *x;
            y.sf &= ~sj;
            reach(se, y, c, from, BPTT_FREE_INTERNAL, j);
        }
        if (x->ss & sj) {
            y = *x;
            y.p = j;
            y.w = 1;
            reach(se, y, c + pb->rd * s, from, BPTT_READ_INTERNAL, j);
            y = *x;
            y.ss &= ~sj;
            reach(se, y, c, from, BPTT_DROP_INTERNAL, j);
        }
    }
    if ((x->sf >> (x->b - 1) & 1u) || (x->w && p == x->b)) {
        y = *x;
        y.b = x->b - 1;
        y.p = -1;
        y.w = 0;
        reach(se, y, c, from, BPTT_BACKWARD, x->b);
    }
}

/* ---- the schedule ---------------------------------------------------- */

typedef struct {
    bptt_action *v;
    size_t n, cap;
} actions;

static int put(actions *a, int op, int step)
{
    if (a->n == a->cap) {
        const size_t cap = a->cap ? 2 * a->cap : 64;
        bptt_action *v = realloc(a->v, cap * sizeof *v);
        if (!v)
            return -1;
        a->v = v;
        a->cap = cap;
    }
    a->v[a->n++] = (bptt_action){(uint32_t)op, (uint32_t)step};
    return 0;
}

/* Release, as actions, what the canonical form of *x lets go of. */
static int releases(actions *a, const xstate *x)
{
    int rc = 0;
    for (int j = 0; j < 32 && rc == 0; j++) {
        if (x->hf >> j & 1u && j >= x->b)
            rc = put(a, BPTT_FREE_HIDDEN, j);
        if (rc == 0 && x->hs >> j & 1u && j >= x->b)
            rc = put(a, BPTT_DROP_HIDDEN, j);
        if (rc == 0 && x->sf >> j & 1u && j + 1 > x->b)
            rc = put(a, BPTT_FREE_INTERNAL, j + 1);
        if (rc == 0 && x->ss >> j & 1u && j + 1 > x->b)
            rc = put(a, BPTT_DROP_INTERNAL, j + 1);
    }
    return rc;
}

/* Apply one move to a raw state (the moves of expand, unchecked). */
static void apply(xstate *x, int op, int j)
{
    const unsigned hj = 1u << j, sj = j >= 1 ? 1u << (j - 1) : 0u;
    switch (op) {
    case BPTT_ADVANCE: x->p = j; x->w = 1; break;
    case BPTT_SAVE_HIDDEN: x->hf |= hj; break;
    case BPTT_SAVE_INTERNAL: x->sf |= sj; break;
    case BPTT_WRITE_HIDDEN: x->hs |= hj; break;
    case BPTT_WRITE_INTERNAL: x->ss |= sj; break;
    case BPTT_RESTORE_HIDDEN:
    case BPTT_RESTORE_INTERNAL:
    case BPTT_READ_HIDDEN: x->p = j; x->w = 0; break;
    case BPTT_READ_INTERNAL: x->p = j; x->w = 1; break;
    case BPTT_FREE_HIDDEN: x->hf &= ~hj; break;
    case BPTT_FREE_INTERNAL: x->sf &= ~sj; break;
    case BPTT_DROP_HIDDEN: x->hs &= ~hj; break;
    case BPTT_DROP_INTERNAL: x->ss &= ~sj; break;
    case BPTT_BACKWARD: x->b = j - 1; x->p = -1; x->w = 0; break;
    default: break;
    }
}

/* Rebuild the moves from the goal back to the start, then replay them
 * forwards with the releases, counting what they cost. */
static int rebuild(search *se, uint64_t start, uint64_t goal,
                   exslow_result *out, int want_path)
{
    const int t = se->pb->t;
    const int64_t s = se->pb->s, h = se->pb->h;
    size_t n = 0;
    for (uint64_t c = goal; c != start; c = find(se, c)->parent)
        n++;
    uint8_t *ops = malloc(n + 1), *steps = malloc(n + 1);
    actions a = {NULL, 0, 0};
    int rc = ops && steps ? 0 : -1;
    size_t k = n;
    for (uint64_t c = goal; rc == 0 && c != start;) {
        const entry *e = find(se, c);
        k--;
        ops[k] = e->op;
        steps[k] = e->step;
        c = e->parent;
    }
    xstate x = state_of(t, start);
    for (k = 0; rc == 0 && k < n; k++) {
        const int op = ops[k], j = steps[k];
        out->forward += op == BPTT_ADVANCE;
        out->wunits += op == BPTT_WRITE_HIDDEN     ? h
                       : op == BPTT_WRITE_INTERNAL ? s
                                                   : 0;
        out->runits += op == BPTT_READ_HIDDEN     ? h
                       : op == BPTT_READ_INTERNAL ? s
                                                  : 0;
        apply(&x, op, j);
        if (want_path) {
            rc = put(&a, op, j);
            if (rc == 0)
                rc = releases(&a, &x);
        }
        canon(&x);
    }
    free(ops);
    free(steps);
    if (rc != 0 || !want_path) {
        free(a.v);
        return rc;
    }
    out->path = a.v;
    out->n_path = a.n;
    return 0;
}

int exslow_solve(const exslow_problem *pb, int want_path, exslow_result *out)
{
    if (!pb || !out || pb->t < 1 || pb->t > EXSLOW_MAX_T || pb->h < 1 ||
        pb->s < pb->h || pb->m < 0 || pb->d < 0 || pb->wd < 0 || pb->rd < 0)
        return -1;
    memset(out, 0, sizeof *out);
    out->cost = -1;
    if (pb->m < pb->h)
        return 0; /* h(0) alone passes the fast budget */
    const int t = pb->t;
    search se = {.pb = pb, .bound = pb->h * t * (t + 1) / 2};
    if (grow(&se) != 0)
        return -1;
    const xstate start = {.b = t, .p = 0, .w = 0, .hf = 1u};
    const xstate goal = {.b = 0, .p = -1};
    const uint64_t start_c = code_of(t, &start), goal_c = code_of(t, &goal);
    reach(&se, start, 0, start_c, BPTT_N_OPS, 0);
    int rc = 0;
    while (se.hn > 0 && !se.oom) {
        const hnode top = heap_pop(&se);
        entry *e = find(&se, top.code);
        if (e->done || e->dist != top.dist)
            continue; /* reached more cheaply since */
        e->done = 1;
        if (top.code == goal_c) {
            out->cost = top.dist;
            break;
        }
        const xstate x = state_of(t, top.code);
        expand(&se, &x, top.code, top.dist);
    }
    out->states = se.used;
    if (se.oom)
        rc = -1;
    else if (out->cost >= 0)
        rc = rebuild(&se, start_c, goal_c, out, want_path);
    free(se.tab);
    free(se.heap);
    return rc;
}
