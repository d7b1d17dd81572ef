"""bptt_msm.torch.scan over an iterable whose length is known only at its
end, and bptt_msm.torch.while_loop: the forward runs step by step as the
items come (or as long as cond holds), storing what the core's online
planner (include/bptt/online.h) answers before each step; the backward
runs the reversal of the plan it gives at the end.  Executed by the one
executor of scan (_runner.py), with its replay of random numbers, buffers
and autocast (_replay.py); doc/pytorch.md, "Sequences of unknown
length"."""
import torch

import bptt_msm as _planner

from ._common import _NAME
from ._nest import _build, _describe, _flatten, _needs_grad, _spec_text
from ._held import _storage_key
from ._runner import _ADVANCE, _OPS, _Runner, _compile
from ._scanfn import _Scan, _armed_replay, _check_memory, _empty

_END = object()  # what a source gives after its last item


class _Flags(dict):
    """computed[i] for a length not known yet: False until set."""

    def __missing__(self, key):
        return False


class _OnlineRunner(_Runner):
    """The executor of scan for a plan that grows: the forward runs the
    actions the online planner hands out, a step at a time; finish() adds
    the reversal.  The x of each step is an item kept as it came (xs as
    tensors are kept by the caller; these by scan, outside the budget as
    those are)."""

    def __init__(self, step, carry_spec, n_carry, x_spec, trace):
        super().__init__(step, carry_spec, n_carry, [], x_spec, 0, False,
                         trace)
        self.length = None  # known at the end
        self.items = []     # per step: the x's leaves
        self.item_req = []  # per step: which leaves get a gradient
        self.x_grad = x_spec is not None
        self.computed = _Flags()
        self.releasable = True

    def __del__(self):
        # a forward whose backward never ran (the outputs dropped): its
        # counted graphs let go of their saved tensors (_Ledger.release)
        try:
            graphs = list(getattr(self, "sstore", {}).values()) + [
                getattr(self, "working", None), getattr(self, "probe", None)]
            for g in graphs:
                if g is not None and g.ledger is not None:
                    g.ledger.release()
        except Exception:
            pass

    def add_item(self, leaves):
        leaves = tuple(leaves)
        self.items.append(leaves)
        self.item_req.append(tuple([v.requires_grad and _needs_grad(v)
                                    for v in leaves]))
        outside = getattr(self, "outside", None)
        if outside is not None:
            for v in leaves:
                outside.add(_storage_key(v)[0])

    def x_of(self, i):
        return self.items[i - 1] if self.xs_spec is not None else ()

    def x_req(self, i):
        return self.item_req[i - 1]

    def x_input_grads(self):
        out = []
        for t, (leaves, req) in enumerate(zip(self.items, self.item_req)):
            g = self.grad_x[t]
            for n in range(len(leaves)):
                out.append(g[n] if req[n] and g is not None else None)
        return out

    def first_online(self, init, params, replay):
        """Step 1 with its graph (the sizes, as scan's first), the items
        so far taken as its xs (step 1 must leave them alone; their bytes
        are not the carry's)."""
        self.xs = [v for leaves in self.items for v in leaves]
        self.first(init, params, replay)
        self.xs = []
        for leaves in self.items:
            for v in leaves:
                self.outside.add(_storage_key(v)[0])

    def prepare_online(self, init):
        self.plan = None
        self.actions, self.keep, self.link = [], [], []
        self.first_backward = None
        self.k = 0
        self.init = tuple(init)
        self.hstore = {0: (self.init, self.replay.start, None)}
        self.sstore = {}
        self.working = None
        self.running = self.init
        self.computed = _Flags()
        self.ys = []
        self.grad_x = None
        self.grad_params = None
        self.grad_carry = None
        self.joined = set()
        self.engine_runs = 0

    def advance(self, acts):
        """Run what the planner handed out before step i + 1 and the step:
        every advance with its graph (whether s(i + 1) is stored is told
        only before step i + 2; until then it is the working graph, outside
        the budget, at most one), none continuing another's (a stored
        graph may be freed before its backward)."""
        self.ys.append(None)
        for op, i in acts:
            self.actions.append((_OPS[op], i))
            self.keep.append(_OPS[op] == _ADVANCE)
            self.link.append(False)
        self.run(len(self.actions))

    def finish(self, plan):
        """The whole plan: its first plan.prefix actions are those run."""
        acts, keep, first, link = _compile(plan)
        n = plan.prefix
        if n != len(self.actions) or acts[:n] != self.actions or first != n:
            raise RuntimeError(
                "%s: the online planner's plan does not begin with the %d "
                "actions it handed out (prefix %d, first backward at %d)"
                % (_NAME, len(self.actions), n, first))
        self.plan = plan
        self.actions = acts
        self.keep = self.keep + keep[n:]
        self.link = self.link + link[n:]
        self.first_backward = n
        self.length = plan.length
        self.grad_x = [None] * plan.length
        self.final = self.running


# ---- the sources of steps ------------------------------------------------------

class _Between:
    """Calls made between steps (taking an item from the iterable, cond):
    made in the loop's order, and watched for random draws.  scan
    recomputes a run of steps without calling them again, so draws of
    theirs between steps that draw too would give a recomputed step other
    numbers: refused.  Draws of theirs alone are kept out of the replay's
    view (its starting state moves with them)."""

    def __init__(self, what):
        self.what = what
        self.drew = False
        self.replay = None

    def __call__(self, fn, *args):
        rp = self.replay
        rng = rp.rng if rp is not None else _all_rng
        before = rng()
        out = fn(*args)
        after = rng()
        if not (torch.equal(before[0], after[0]) and
                all(torch.equal(a, b) for a, b in zip(before[1], after[1]))):
            self.drew = True
            if rp is not None and not rp.live:
                rp.rng0 = after
        return out

    def check(self):
        if self.drew and self.replay is not None and self.replay.live:
            raise RuntimeError(
                "%s: %s draws random numbers between steps, and so does the "
                "step; scan recomputes runs of steps without %s again, so a "
                "recomputed step would draw other numbers than its first run "
                "(than the loop): draw inside the step, or before the loop"
                % (_NAME, self.what, self.what))


def _all_rng():
    """The generators' states before scan knows its devices (the item
    taken ahead of step 1): the CPU's and every CUDA device's in use."""
    cuda = ()
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        cuda = tuple(torch.cuda.get_rng_state(d)
                     for d in range(torch.cuda.device_count()))
    return torch.get_rng_state(), cuda


def _item(value, spec, t):
    leaves, s = _flatten(value, "the item xs yielded at step %d" % t)
    if spec is not None and s != spec:
        raise ValueError("%s: the item xs yielded at step %d is shaped %s, "
                         "step 1's %s: every item has one structure"
                         % (_NAME, t, _spec_text(s), _spec_text(spec)))
    return leaves, s


def _cond(cond, carry):
    with torch.no_grad():
        v = cond(carry)
    if isinstance(v, torch.Tensor):
        if v.numel() != 1:
            raise TypeError("%s: cond returned a tensor of shape %s; it must "
                            "return a bool (or a one-element tensor)"
                            % (_WNAME, tuple(v.shape)))
        v = v.item()
    return bool(v)


_WNAME = "bptt_msm.torch.while_loop"


# ---- the checks of the arguments -------------------------------------------------

def _budget(memory, strategy, what):
    """memory and strategy for the online planner, or the error that says
    what works."""
    if memory is None:
        raise TypeError(
            "%s: %s: give memory as bytes (an int, '64MiB') or slots "
            "('150slots'); there is no default share, the length being "
            "unknown" % (_NAME, what))
    if isinstance(memory, str) and "%" in memory:
        raise ValueError(
            "%s: memory %r is a share of full BPTT's stored bytes, which "
            "needs the length; %s: give bytes (an int, '64MiB') or slots "
            "('150slots')" % (_NAME, memory, what))
    if strategy not in _planner.ONLINE_STRATEGIES:
        raise ValueError(
            "%s: strategy %r plans for a known length; %s: give one of %s"
            % (_NAME, strategy, what, ", ".join(_planner.ONLINE_STRATEGIES)))


def _planner_for(r, memory, strategy):
    s = r.sizes
    try:
        return _planner.OnlinePlanner(strategy, s.hidden_bytes,
                                      s.internal_bytes, memory)
    except _planner.InfeasibleBudget as e:
        need = e.min_memory_bytes
        raise _planner.InfeasibleBudget(
            "%s: memory %r is below the smallest feasible budget for online "
            "%s (a step's carry takes %d bytes, its internal state %d); the "
            "smallest feasible budget is %d bytes (1 slot: the initial "
            "carry)" % (_NAME, memory, strategy, s.hidden_bytes,
                        s.internal_bytes, need), need) from None


# ---- the sources of steps: an iterable, a condition --------------------------

class _Items:
    """The items of an iterable, taken in the loop's order: item t + 1 after
    step t (lookahead off), or one ahead, item t + 1 before step t (on), so
    that each step is announced last or not before it runs."""

    def __init__(self, xs, lookahead):
        self.it = iter(xs)
        self.lookahead = lookahead
        self.between = _Between("the iterable xs (taking an item)")
        self.spec = None
        self.nxt = _END
        self.what = "xs is an iterable, whose length is known only at its end"

    def pull(self, t):
        # item 1 comes before any step, in the loop as here: not watched
        v = next(self.it, _END) if t == 1 else \
            self.between(next, self.it, _END)
        if v is _END:
            return _END
        leaves, self.spec = _item(v, self.spec, t)
        return leaves

    def start(self, r):
        if self.lookahead:
            self.nxt = self.pull(2)

    def announce(self, T):
        return self.lookahead and self.nxt is _END

    def more(self, T, r):
        if self.lookahead:
            if self.nxt is _END:
                return False
            r.add_item(self.nxt)
            self.nxt = self.pull(T + 2)
            return True
        v = self.pull(T + 1)
        if v is _END:
            return False
        r.add_item(v)
        return True


class _Cond:
    """while cond(carry): the end is learnt after the step (cond reads the
    carry it made), so a step is announced last only where max_steps
    makes it so."""

    def __init__(self, cond, max_steps):
        self.cond = cond
        self.max_steps = max_steps
        self.between = _Between("cond")
        self.what = "while_loop"

    def start(self, r):
        pass

    def announce(self, T):
        return self.max_steps is not None and T + 1 >= self.max_steps

    def more(self, T, r):
        return self.between(_cond, self.cond, _build(r.carry_spec, r.running))


# ---- the driver -----------------------------------------------------------------

def _run(step, holder, init, first_item, x_spec, params, memory, strategy,
         info, src):
    """Step 1 (the sizes), the online planner, the forward pass a step at a
    time (src.announce(T): is step T + 1 the last, known before it runs;
    src.more(T): after step T, does step T + 1 run), the whole plan, and
    the node whose backward runs its reversal.  (final carry, ys), ys
    None where the step returns none."""
    carry, carry_spec = _flatten(init, "init")
    trace = [] if info is not None else None
    r = _OnlineRunner(step, carry_spec, len(carry), x_spec, trace)
    r.info = info
    r.add_item(first_item)
    src.start(r)
    replay = _armed_replay(r, holder,
                           list(carry) + list(first_item) + list(params))
    src.between.replay = replay
    r.first_online(carry, params, replay)
    src.between.check()
    if not r.params and not any(c.requires_grad for c in carry) and \
            not any(any(q) for q in r.item_req):
        return _rest_plain(r, src, info)
    planner = _planner_for(r, memory, strategy)
    r.prepare_online(carry)
    T = 0
    while True:
        last = src.announce(T)
        r.advance(planner.next(last))
        T += 1
        src.between.check()
        if last or not src.more(T, r):
            break
        src.between.check()
    plan = planner.finish()
    r.finish(plan)
    r.sweep = False
    if info is not None:
        info["plan"] = plan
        info["strategy"] = plan.strategy
        info["sizes"] = r.sizes
        info["trace"] = trace
        info["length"] = T
        info["lookahead"] = plan.lookahead
    r.outputs = tuple(c.detach() for c in r.final) + tuple(
        torch.stack([y[n] for y in r.ys]) for n in range(r.n_y))
    r.ys = None
    if info is not None:
        info["calls"] = r.calls
        info["walked"] = r.walked
    flat_items = [v for leaves in r.items for v in leaves]
    out = _Scan.apply(r, *(tuple(carry) + tuple(flat_items) +
                           tuple(r.params)))
    nc = len(carry)
    return _build(carry_spec, out[:nc]), \
        _build(r.y_spec, out[nc:]) if r.y_spec is not None else None


def _rest_plain(r, src, info):
    """Steps 2.. as the plain loop, after step 1 showed that nothing needs
    a gradient."""
    probe, r.probe = r.probe, None
    ys = [tuple(v.detach() for v in probe.y_out)]
    carry = probe.carry
    r.sweep = False
    T = 1
    r.running = carry
    with torch.no_grad():
        last = src.announce(0)
        while not last and src.more(T, r):
            if r.item_req and any(r.item_req[-1]):
                raise RuntimeError(
                    "%s: the item for step %d needs a gradient, but step 1 "
                    "showed that nothing else does, and scan runs the loop "
                    "without a plan then: let the first item need one too "
                    "(or none)" % (_NAME, T + 1))
            last = src.announce(T)
            T += 1
            carry, y = r.call(T, carry, False)
            r.running = carry
            ys.append(y)
    if info is not None:
        info.update(plan=None, strategy=None, calls=r.calls, sizes=r.sizes,
                    length=T)
    return _build(r.carry_spec, carry), _build(r.y_spec, [
        torch.stack([y[n] for y in ys]) for n in range(r.n_y)]) \
        if r.y_spec is not None else None


# ---- the entries ------------------------------------------------------------------

def is_iterable(xs):
    """xs for the online path: an iterable that is no nest of time-first
    tensors (a tensor, tuple, list, dict) and no string."""
    if xs is None or isinstance(xs, (torch.Tensor, tuple, list, dict, str,
                                     bytes)):
        return False
    try:
        iter(xs)
    except TypeError:
        return False
    return True


def scan_iterable(step, holder, init, xs, memory, strategy, params, info,
                  length, reverse, lookahead):
    what = "xs is an iterable, whose length is known only at its end"
    if reverse:
        raise ValueError("%s: reverse=True needs the last item first; %s: "
                         "give xs as time-first tensors" % (_NAME, what))
    if length is not None:
        raise ValueError("%s: length is for xs=None; %s (it is what the "
                         "iterable yields)" % (_NAME, what))
    if not isinstance(lookahead, bool):
        raise TypeError("%s: lookahead must be True or False, not %s"
                        % (_NAME, _describe(lookahead)))
    _budget(memory, strategy, what)
    src = _Items(xs, lookahead)
    first = src.pull(1)
    if first is _END:
        raise ValueError("%s: xs yielded no item: the loop runs no step and "
                         "has no ys to stack (an empty iterable is not a "
                         "sequence of length 0 here)" % _NAME)
    if not torch.is_grad_enabled():
        return _plain_items(step, init, first, src)
    return _run(step, holder, init, first, src.spec, params, memory,
                strategy, info, src)


def _plain_items(step, carry, first, src):
    """The loop itself, under no_grad."""
    ys, y_spec, leaves, t = [], None, first, 1
    while leaves is not _END:
        out = step(carry, _build(src.spec, leaves))
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("%s: step must return a pair (carry, y), not %s"
                            % (_NAME, _describe(out)))
        carry = out[0]
        y, spec = _flatten(out[1], "the y step %d returned" % t)
        y_spec = spec if y_spec is None else y_spec
        ys.append(y)
        t += 1
        leaves = src.pull(t)
    return carry, _build(y_spec, [torch.stack([y[n] for y in ys])
                                  for n in range(len(ys[0]))])


def while_loop(cond, step, init, memory=None, strategy="msm", max_steps=None,
               params=(), info=None):
    """The loop

        n = 0
        while (max_steps is None or n < max_steps) and cond(carry):
            carry = step(carry)        # or: carry, y = step(carry)
            n += 1

    with its values and gradients (of init and of every parameter the step
    uses), storing between the forward and the backward pass only what the
    online planner says (doc/pytorch.md).  Returns the final carry, or
    (final carry, ys stacked) where step returns (carry, y).

    cond      callable(carry) -> bool (or a one-element tensor), called
              under no_grad on the carry before each step, as in the loop
              (not once max_steps steps ran); it is never called again
              when a step is recomputed.
    step      callable(carry) -> carry, or -> (carry, y): which one is
              read from step 1's result (the carry keeps init's structure).
    init      the carry before step 1: a nest of tensors.
    memory    the budget for stored states: an int (bytes), "64MiB",
              "150slots" (a slot being a carry); required (a share needs
              the length).
    strategy  msm (default) or hsm.
    max_steps at most this many steps (None: no limit).  Lookahead: the
              loop learns that a step was the last only after it (cond
              reads the carry it made), so steps are announced last only
              where max_steps makes it so; the plan is valid and within
              the budget either way, at most one stored state's use worse.
    params    tensors needing a gradient besides those the step reaches.
    info      a dict: as scan's, and "length" (the steps run)."""
    if not callable(cond):
        raise TypeError("%s: cond must be callable, not %s"
                        % (_WNAME, _describe(cond)))
    if isinstance(step, torch.nn.RNNCellBase) or not callable(step):
        raise TypeError("%s: step must be callable(carry) -> carry or "
                        "(carry, y), not %s" % (_WNAME, _describe(step)))
    if max_steps is not None and (isinstance(max_steps, bool) or
                                  not isinstance(max_steps, int) or
                                  max_steps < 0):
        raise ValueError("%s: max_steps must be None or an int >= 0, not %r"
                         % (_WNAME, max_steps))
    if info is not None and not isinstance(info, dict):
        raise TypeError("%s: info must be a dict or None, not %s"
                        % (_WNAME, _describe(info)))
    if not isinstance(strategy, str):
        raise TypeError("%s: strategy must be a string, not %s"
                        % (_WNAME, _describe(strategy)))
    _check_memory(memory)
    _budget(memory, strategy, "while_loop runs to an end not known before")
    carry, carry_spec = _flatten(init, "init")
    if isinstance(params, torch.Tensor):
        params = (params,)
    params = tuple(params)
    if not all(isinstance(p, torch.Tensor) for p in params):
        raise TypeError("%s: params must be tensors" % _WNAME)
    if isinstance(step, torch.nn.Module):
        params = params + tuple(step.parameters())
    params = tuple(p for p in params if p.requires_grad)
    mode = []  # [True]: step returns (carry, y); [False]: the carry

    def body(c, x):
        out = step(c)
        if not mode:
            try:
                spec = _flatten(out, "")[1]
            except TypeError:
                spec = None
            if spec == carry_spec:
                mode.append(False)
            elif isinstance(out, (tuple, list)) and len(out) == 2 and \
                    _flatten(out[0], "the carry step 1 returned")[1] == \
                    carry_spec:
                mode.append(True)
            else:
                raise TypeError(
                    "%s: step must return the carry (shaped as init: %s) or "
                    "a pair (carry, y), not %s"
                    % (_WNAME, _spec_text(carry_spec), _describe(out)))
        if mode[0]:
            return out[0], out[1]
        return out, None

    def result(c, ys):
        return (c, ys) if mode[0] else c
    if (max_steps == 0) or not _cond(cond, init):
        # no step: init, and (where the step returns y) ys of length 0,
        # shaped from one call of the step whose effects are undone
        c, ys = _empty(body, init, carry, [], None, step, info)
        if info is not None:
            info["length"] = 0
        return result(c, ys)
    if not torch.is_grad_enabled():
        n, ys = 0, []
        c = init
        while (max_steps is None or n < max_steps) and (n == 0 or
                                                         _cond(cond, c)):
            c, y = body(c, None)
            ys.append(_flatten(y, "the y step %d returned" % (n + 1)))
            n += 1
        if info is not None:
            info.update(plan=None, strategy=None, calls=n, length=n)
        return result(c, _build(ys[0][1], [torch.stack([y[0][k] for y in ys])
                                           for k in range(len(ys[0][0]))]))
    src = _Cond(cond, max_steps)
    c, ys = _run(body, step, init, (), None, params, memory, strategy, info,
                 src)
    return result(c, ys)
