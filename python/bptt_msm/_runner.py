"""The executor of bptt_msm.torch.scan: one scan's plan, running state,
stored checkpoints and gradients so far (doc/pytorch.md, "How the plan
runs")."""
import torch

import bptt_msm as _planner

from ._common import _LOCAL, _NAME
from ._nest import (_build, _describe, _flat_tuple, _flatten, _needs_grad, _spec_text)
from ._held import Sizes, _Ledger, _drop_hooks, _hooks, _storage_key
from ._replay import _QuietHooks, _snap_tensors


# ---- one step --------------------------------------------------------------

class _Graph:
    """Step i run with its autograd graph: the leaves it was run from, its
    outputs, the carry it made (detached), the saved tensors' ledger and
    the replayed state after it."""
    __slots__ = ("step", "carry_in", "carry_use", "x_in", "carry_out",
                 "y_out", "carry", "ledger", "prev", "snap")


_TAG = "bptt_msm.seen"


class _Runner:
    """One scan: the plan, the running state, what is stored, the gradients
    so far.  Built by scan(), which runs the forward sweep; _Scan.backward
    runs the rest."""

    def __init__(self, step, carry_spec, n_carry, xs, xs_spec, length,
                 reverse, trace):
        self.step = step
        self.carry_spec = carry_spec
        self.n_carry = n_carry
        self.xs = xs
        self.xs_spec = xs_spec
        self.length = length
        self.reverse = reverse
        self.trace = trace
        self.y_spec = None
        self.y_meta = None
        self.n_y = 0
        self.params = []
        self.param_ids = {}
        self.stop_nodes = {}
        self.aliased_y = {}
        self.aliased_carry = set()
        self.mutated = ()
        self.final = None
        self.calls = 0
        self.done = False
        self.sweep = True
        self.amp = None
        self.walked = 0
        self.fast = None
        self.computed = [False] * (length + 1)
        self.x_grad = any(s.requires_grad and _needs_grad(s) for s in xs)
        self._x_req = None
        # graphs dropped without a backward let go of their counted saved
        # tensors (_Ledger.release): the online forward drops some
        self.releasable = False

    def pos(self, i):
        """The index into xs (and ys) of step i (1-based)."""
        return self.length - i if self.reverse else i - 1

    # -- calling the step -------------------------------------------------
    def x_of(self, i):
        if self.xs_spec is None:
            return ()
        p = self.pos(i)
        return tuple([s[p] for s in self.xs])

    def x_req(self, i):
        """For each x leaf of step i, whether it gets a gradient (a leaf
        of its own in the step's graph)."""
        req = self._x_req
        if req is None:
            req = self._x_req = tuple([s.requires_grad and _needs_grad(s)
                                       for s in self.xs])
        return req

    def x_input_grads(self):
        """The gradients _Scan.backward hands back for the xs (one per
        sequence, time first), after the backward pass."""
        out = []
        for n, s in enumerate(self.xs):
            if not s.requires_grad or not _needs_grad(s):
                out.append(None)
                continue
            parts = [g[n] if g is not None and g[n] is not None
                     else torch.zeros_like(s[p])
                     for p, g in enumerate(self.grad_x)]
            out.append(torch.stack(parts))
        return out

    def call(self, i, carry, graph, ledger=None, prev=None):
        """Step i from carry (a tuple of tensors), with grad mode off.
        graph: run with autograd from fresh leaves and return a _Graph;
        else return (carry, y) tuples.  prev: the stored graph of step i-1
        whose output carry this step continues.  In the forward sweep a
        step without a graph still builds one, keeping none of its saved
        tensors, to see the tensors it reaches (_walk)."""
        x = self.x_of(i)
        if not graph:
            if not self.sweep:
                return self._invoke(i, carry, x)
            x = tuple([v.detach() for v in x])
            with torch.enable_grad(), _drop_hooks():
                c, y = self._invoke(i, carry, x)
            self._walk(i, c + y, ())
            return tuple([t.detach() for t in c]), \
                tuple([t.detach() for t in y])
        g = _Graph()
        g.step = i
        g.prev = prev
        g.snap = None
        if prev is not None:
            g.carry_in = g.carry_use = prev.carry_out
        else:
            g.carry_in = tuple([c.detach().requires_grad_(_needs_grad(c))
                                for c in carry])
            # a carry tensor that step i-1 also returned as its y goes in
            # through a view (made with grad mode on, so that it is in the
            # graph): its gradient then gathers that y's gradient first and
            # this step's uses after, in the order the written-out loop's
            # backward adds them (see _backward)
            if self.aliased_carry:
                with torch.enable_grad():
                    g.carry_use = tuple([
                        c.view_as(c) if m in self.aliased_carry else c
                        for m, c in enumerate(g.carry_in)])
            else:
                g.carry_use = g.carry_in
        # an x whose sequence needs no gradient goes in as it is (a view
        # without a graph); one that needs it, as a leaf of its own
        g.x_in = tuple([v.detach().requires_grad_() if r else v
                        for v, r in zip(x, self.x_req(i))]) \
            if self.x_grad else x
        # the pack hooks count what the graph saves: on the first step (the
        # sizes) and, when info asks for the trace, on every one
        if ledger is None and self.trace is not None:
            ledger = _Ledger(self.releasable)
        g.ledger = ledger
        try:
            if ledger is None:
                with torch.enable_grad():
                    g.carry_out, g.y_out = self._invoke(i, g.carry_use, g.x_in)
            else:
                with torch.enable_grad(), _hooks(ledger):
                    g.carry_out, g.y_out = self._invoke(i, g.carry_use, g.x_in)
        except RuntimeError as e:
            if "in-place" in str(e) or "inplace" in str(e):
                raise RuntimeError(
                    "%s: step %d changed in place a tensor that needs a "
                    "gradient (%s); scan hands the step its carry as leaves "
                    "of the step's own graph, which autograd does not let "
                    "change: write h = h * 0.5, not h.mul_(0.5)"
                    % (_NAME, i, str(e).splitlines()[0])) from e
            raise
        if self.sweep:
            stop = {t.grad_fn for t in g.carry_use if t.grad_fn is not None
                    and prev is not None}
            self._walk(i, g.carry_out + g.y_out,
                       [id(t) for t in g.carry_in + g.x_in], stop)
        g.carry = tuple([c.detach() for c in g.carry_out])
        return g

    def _invoke(self, i, carry, x):
        self.calls += 1
        if self.mutated:
            # carry tensors the step changes in place get a copy, so that
            # what scan stores stays as it was
            carry = tuple([c.clone() if m in self.mutated else c
                           for m, c in enumerate(carry)])
        c_in = _build(self.carry_spec, carry)
        x_in = _build(self.xs_spec, x) if self.xs_spec is not None else None
        local = _LOCAL
        outer = getattr(local, "again", False)
        local.again = self.computed[i] or outer
        try:
            if self.amp is not None:
                with self.amp:
                    out = self.step(c_in, x_in)
            else:
                out = self.step(c_in, x_in)
        finally:
            local.again = outer
        # the common case, checked quickly: a tensor or a tuple of tensors
        # for the carry and for y, keeping the carry's shapes, dtypes and
        # devices and step 1's y's; anything else goes through _checked
        fast = self.fast
        if fast is not None and type(out) is tuple and len(out) == 2:
            c, y = out
            c = (c,) if fast[0] else c
            y = (y,) if fast[1] else y
            if type(c) is tuple and len(c) == self.n_carry and \
                    type(y) is tuple and len(y) == self.n_y and \
                    all([type(a) is torch.Tensor and a.shape == b.shape and
                         a.dtype == b.dtype and a.device == b.device
                         for a, b in zip(c, carry)]) and \
                    all([type(v) is torch.Tensor and
                         (v.shape, v.dtype, v.device) == m
                         for v, m in zip(y, self.y_meta)]):
                return c, y
        return self._checked(i, out, carry)

    def _checked(self, i, out, carry):
        """step i's output as (carry, y) tuples of tensors, or the error
        that says what is wrong with it."""
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("%s: step must return a pair (carry, y), not %s"
                            % (_NAME, _describe(out)))
        c, cspec = _flatten(out[0], "the carry step %d returned" % i)
        if cspec != self.carry_spec:
            raise TypeError("%s: step %d returned a carry shaped %s where "
                            "init is %s: the carry keeps its structure"
                            % (_NAME, i, _spec_text(cspec),
                               _spec_text(self.carry_spec)))
        for k, (a, b) in enumerate(zip(c, carry)):
            # step 1 may turn a float carry into another float type (a
            # float32 init through a cell that autocast runs in float16),
            # as the loop lets it; from then on the carry keeps its types
            if a.shape != b.shape or a.device != b.device or (
                    a.dtype != b.dtype and not (
                        i == 1 and a.dtype.is_floating_point and
                        b.dtype.is_floating_point)):
                raise ValueError("%s: step %d changed carry tensor %d from "
                                 "%s %s on %s to %s %s on %s: a carry keeps "
                                 "its shape, dtype and device"
                                 % (_NAME, i, k, tuple(b.shape), b.dtype,
                                    b.device, tuple(a.shape), a.dtype,
                                    a.device))
        y, yspec = _flatten(out[1], "the y step %d returned" % i)
        if self.y_meta is None:
            self.y_spec, self.n_y = yspec, len(y)
            self.y_meta = tuple((v.shape, v.dtype, v.device) for v in y)
            flat = [_flat_tuple(sp) for sp in (self.carry_spec, yspec)]
            self.fast = None if None in flat else tuple(flat)
        elif yspec != self.y_spec or any(
                (v.shape, v.dtype, v.device) != m
                for v, m in zip(y, self.y_meta)):
            raise ValueError("%s: step %d returned a y unlike step 1's: every "
                             "y_t has the same structure, shapes, dtypes and "
                             "device (step 1: %s; step %d: %s)"
                             % (_NAME, i, self._y_text(self.y_spec,
                                                       self.y_meta),
                                i, self._y_text(yspec, [
                                    (v.shape, v.dtype, v.device) for v in y])))
        return tuple(c), tuple(y)

    @staticmethod
    def _y_text(spec, meta):
        return "%s of %s" % (_spec_text(spec), ", ".join(
            "%s %s" % (tuple(m[0]), m[1]) for m in meta) or "no tensors")

    # -- the tensors the steps reach ------------------------------------------
    def _walk(self, i, outs, own, stop=()):
        """Add to the parameters every leaf needing a gradient that the
        graph of outs reaches, other than the step's own leaves (own: ids)
        and beyond none of stop (nodes of a stored graph it continues).  A
        node that an earlier step's walk saw is not this step's: a tensor
        computed before scan (a captured non-leaf), which is refused unless
        params names it (then it is a parameter: the walk stops there)."""
        todo = [t.grad_fn for t in outs if t.grad_fn is not None]
        seen = set(stop)
        params, ids = self.params, self.param_ids
        while todo:
            fn = todo.pop()
            if fn is None or fn in seen:
                continue
            seen.add(fn)
            var = getattr(fn, "variable", None)
            if var is not None:
                if id(var) not in ids and id(var) not in own:
                    ids[id(var)] = len(params)
                    params.append(var)
                continue
            if fn in self.stop_nodes:
                continue
            meta = fn.metadata
            if _TAG in meta:
                raise RuntimeError(
                    "%s: step %d uses a tensor computed before scan that "
                    "needs a gradient (made by %s): scan's backward would "
                    "run through the graph that made it at every engine "
                    "run; pass it in params=(...) (it is then an input of "
                    "scan, its gradient handed back once), or compute it "
                    "inside the step" % (_NAME, i, fn.name()))
            meta[_TAG] = True
            todo.extend(f for f, _ in fn.next_functions)
        self.walked += 1

    # -- what is held ------------------------------------------------------
    def held_bytes(self):
        """Bytes held by the stored states: the saved tensors (counted by the
        pack hooks) of the stored graphs with their output carries, and the
        stored carries; each memory block once, parameters and xs left out."""
        seen = {}
        for entry in self.hstore.values():
            for c in entry[0] + _snap_tensors(entry[1]):
                k, n = _storage_key(c)
                seen[k] = n
        for g in self.sstore.values():
            for k, (_, n) in g.ledger.live.items():
                seen[k] = n
            for c in g.carry + _snap_tensors(g.snap):
                k, n = _storage_key(c)
                seen[k] = n
        for k in self.outside:
            seen.pop(k, None)
        return sum(seen.values())

    def working_bytes(self):
        """Bytes the working graph's saved tensors hold, when it is not
        stored (then held_bytes counts it)."""
        w = self.working
        if w is None or any(g is w for g in self.sstore.values()):
            return 0
        return sum(n for k, (_, n) in w.ledger.live.items()
                   if k not in self.outside)

    # -- the first step: sizes, parameters ----------------------------------
    def first(self, init, params, replay):
        """Step 1 with its graph, its saved tensors counted: the sizes; the
        parameters it reaches; the state it changes."""
        self.replay = replay
        for p in params:
            if id(p) not in self.param_ids:
                self.param_ids[id(p)] = len(self.params)
                self.params.append(p)
                if p.grad_fn is not None:
                    self.stop_nodes[p.grad_fn] = True
        # a carry tensor that needs no gradient (an integer, a boolean)
        # goes in as a copy: a step that changes it in place is seen doing
        # so, and the caller's init stays as it was
        start = tuple([c if _needs_grad(c) else c.clone() for c in init])
        versions = [c._version for c in start]
        xs_versions = [s._version for s in self.xs]
        ledger = _Ledger(self.releasable)
        probe = self.call(1, start, graph=True, ledger=ledger)
        self.mutated = frozenset(
            m for m, c in enumerate(start)
            if not _needs_grad(c) and c._version != versions[m])
        for k, s in enumerate(self.xs):
            if s._version != xs_versions[k]:
                raise RuntimeError("%s: step 1 changed xs tensor %d in place; "
                                   "scan reads the xs again to recompute: "
                                   "leave them as they are" % (_NAME, k))
        replay.after_first()
        # y tensors that are carry tensors (y = h): {y index: carry index}
        for n, y in enumerate(probe.y_out):
            for m, c in enumerate(probe.carry_out):
                if y is c and _needs_grad(c):
                    self.aliased_y[n] = m
        self.aliased_carry = set(self.aliased_y.values())
        self.outside = {_storage_key(t)[0] for t in list(self.params) +
                        list(self.xs)}
        hidden = {}
        for c in probe.carry:
            k, n = _storage_key(c)
            hidden[k] = n
        internal = dict(hidden)
        saved = {}
        for k, (_, n) in ledger.live.items():
            if k not in self.outside:
                internal[k] = n
                saved[k] = n
        state = replay.bytes()
        # a carry held by the parameters or the xs (a step returning x_t)
        # costs nothing to store; the planner counts in whole bytes
        hb = max(1, sum(n for k, n in hidden.items()
                        if k not in self.outside) + state)
        self.sizes = Sizes(hb, max(hb, sum(internal.values()) + state),
                           sum(saved.values()), state)
        self.probe = probe
        probe.snap = replay.snap()

    def prepare(self, plan, init):
        self.plan = plan
        if not hasattr(plan, "_torch_actions"):
            plan._torch_actions = _compile(plan)
        self.actions, self.keep, self.first_backward, self.link = \
            plan._torch_actions
        self.k = 0
        self.init = tuple(init)
        self.hstore = {0: (self.init, self.replay.start, None)}
        self.sstore = {}
        self.working = None
        self.running = self.init
        self.computed = [False] * (self.length + 1)
        self.ys = [None] * self.length
        self.grad_x = [None] * self.length
        self.grad_params = None
        self.grad_carry = None
        self.joined = set()  # steps whose backward ran with a later one's
        self.engine_runs = 0

    # -- executing the actions ---------------------------------------------
    def run(self, stop):
        """Actions self.k .. stop-1, with grad mode off (as it is in an
        autograd.Function's backward); call turns it on for the steps that
        keep their graph."""
        if torch.is_grad_enabled():
            with torch.no_grad():
                return self.run(stop)
        acts, keep, link = self.actions, self.keep, self.link
        hstore, sstore = self.hstore, self.sstore
        replay = self.replay
        trace = self.trace
        sweep = self.sweep
        k = self.k
        while k < stop:
            op, i = acts[k]
            if op == _ADVANCE:
                # the graph of the step before, unless stored, goes before
                # this step runs: at most one working graph at a time
                w = self.working
                if self.releasable and w is not None and \
                        w.ledger is not None and sstore.get(w.step) is not w:
                    w.ledger.release()
                g = self.working = w = None
                if i == 1 and self.probe is not None:
                    g, self.probe = self.probe, None
                    if not keep[k]:
                        carry, y, g = g.carry, tuple(
                            v.detach() for v in g.y_out), None
                    else:
                        carry, y = g.carry, g.y_out
                elif keep[k]:
                    g = self.call(i, self.running, True, None,
                                  sstore[i - 1] if link[k] else None)
                    carry, y = g.carry, g.y_out
                else:
                    g = None
                    carry, y = self.call(i, self.running, False)
                if sweep and i > 1:
                    replay.check(i)
                if not self.computed[i]:
                    # kept without a graph: a y holds none after a no_grad
                    # step, and one from a graph must not keep it alive
                    self.ys[self.pos(i)] = y if g is None else \
                        tuple([v.detach() for v in y])
                    self.computed[i] = True
                    if i == self.length:
                        self.final = carry
                self.running = carry
                self.working = g
            elif op == _SAVE_INTERNAL:
                g = self.working
                if g.snap is None:
                    g.snap = replay.snap()
                sstore[i] = g
            elif op == _FREE_INTERNAL:
                w = sstore.pop(i)
                if self.releasable and w.ledger is not None and \
                        w is not self.working:
                    w.ledger.release()
                w = None
            elif op == _BACKWARD:
                if i in self.joined:
                    self.joined.discard(i)
                else:
                    self._backward(sstore.get(i) or self.working)
                self.running = None
                self.working = None
            elif op == _SAVE_HIDDEN:
                carry = self.running
                hstore[i] = (carry, replay.snap(),
                             [c._version for c in carry])
            elif op == _RESTORE_HIDDEN:
                carry, snap, versions = hstore[i]
                if versions is not None and \
                        [c._version for c in carry] != versions:
                    raise RuntimeError(
                        "%s: the carry stored after step %d was changed in "
                        "place after it was stored (by the step that read "
                        "it, or by the caller); scan recomputes from it: "
                        "have the step return new tensors" % (_NAME, i))
                replay.restore(snap)
                self.running = carry
                self.working = None
            elif op == _RESTORE_INTERNAL:
                g = sstore[i]
                replay.restore(g.snap)
                self.running = g.carry
                self.working = None
            elif op == _FREE_HIDDEN:
                del hstore[i]
            k += 1
            self.k = k
            if trace is not None:
                trace.append((_planner.OPS[op], i, self.held_bytes(),
                              self.working_bytes()))

    def _backward(self, top):
        """backward top.step, and with it, as one run of autograd's engine,
        those of the stored steps its graph continues (top.prev, its prev,
        ...; _compile joins only steps whose backward ops follow each other
        in the plan): the gradients of the lowest step's carry input, of
        every x and of the parameters, from those of top's carry output
        (self.grad_carry) and of the ys (self.grad_ys)."""
        chain = [top]
        while chain[-1].prev is not None:
            chain.append(chain[-1].prev)
        low = chain[-1]
        outs, grads = [], []
        # the gradient of y(i-1) where it is a carry tensor (y = h) enters
        # through the lowest step's view of it, first: the written-out loop
        # adds it before this step's contributions (its stack's backward
        # runs before any step's)
        if low.step > 1:
            for n, m in self.aliased_y.items():
                d = self.grad_ys[n]
                if d is not None:
                    outs.append(low.carry_use[m])
                    grads.append(d[self.pos(low.step - 1)])
        gc = self.grad_carry or (None,) * self.n_carry
        for o, d in zip(top.carry_out, gc):
            if d is not None and o.requires_grad:
                outs.append(o)
                grads.append(d)
        for g in chain:
            i = g.step
            for n, (o, d) in enumerate(zip(g.y_out, self.grad_ys)):
                # an aliased y of the top step is added to the carry's
                # gradient by step i+1; one of a step below it, which is the
                # carry the step above continues, enters here as a root,
                # before the step above adds its uses, as in the loop
                if n in self.aliased_y and g is top and i < self.length:
                    continue
                if d is not None and o.requires_grad:
                    outs.append(o)
                    grads.append(d[self.pos(i)])
        # the parameters' sums so far are outputs too: the engine hands them
        # to the parameters before any node of the steps runs, and then adds
        # the steps' uses to them one by one, latest first, as it adds the
        # loop's uses over all steps into one running sum
        params = self.params
        for p, a in zip(params, self.grad_params):
            if a is not None:
                outs.append(p)
                grads.append(a)
        # what the run's gradients are wanted of: the lowest step's carry
        # leaves, each step's x leaves, the parameters.  torch.autograd.grad
        # captures them without accumulating into any .grad and without
        # running the parameters' accumulators (whose hooks, DDP's among
        # them, fire once, when autograd adds scan's summed gradient)
        carry_in = [t for t in low.carry_in if t.requires_grad]
        x_in = [[t for t in g.x_in if t.requires_grad and t.grad_fn is None]
                for g in chain]
        inputs = carry_in + [t for xs in x_in for t in xs] + params
        if outs and inputs:
            with _QuietHooks(params):
                got = torch.autograd.grad(outs, inputs, grads,
                                          allow_unused=True)
            self.engine_runs += 1
        else:
            got = [None] * len(inputs)
        it = iter(got)
        grad_in = {id(t): next(it) for t in carry_in}
        self.grad_carry = tuple([grad_in.get(id(t)) for t in low.carry_in])
        for g, xs in zip(chain, x_in):
            grad_x = {id(t): next(it) for t in xs}
            self.grad_x[self.pos(g.step)] = tuple([grad_x.get(id(t))
                                                   for t in g.x_in])
            g.prev = None
            if g is not top:
                self.joined.add(g.step)
        self.grad_params = list(it)


_OPS = {name: n for n, name in enumerate(_planner.OPS)}
_ADVANCE, _SAVE_HIDDEN, _SAVE_INTERNAL, _RESTORE_HIDDEN, _RESTORE_INTERNAL, \
    _BACKWARD, _FREE_HIDDEN, _FREE_INTERNAL = (
        _OPS[name] for name in ("advance", "save_hidden", "save_internal",
                                "restore_hidden", "restore_internal",
                                "backward", "free_hidden", "free_internal"))


def _compile(plan):
    """A plan's actions as (op number, step); which advances keep their
    graph (s(i) is saved, or backward i uses it while it is working); the
    index of the first backward (where the forward pass stops); and which
    advances continue the graph of the stored s(i-1) (link).

    An advance of step i is linked when the running carry is the output of
    the stored s(i-1), its graph is the one backward i uses, and backward
    i-1 comes next after backward i, through the same s(i-1), with only
    frees between: the two backward ops, and any run of such, are then one
    run of autograd's engine, as in the written-out loop.

    A plan with a slow level's ops (a two-level plan) is refused, a
    PlanError, before anything runs: they are not run here yet."""
    for k, (op, i) in enumerate(plan.actions):
        if op in _planner.SLOW_OPS:
            raise _planner.PlanError(
                "bptt_msm: action %d (%s %d) uses a slow level; a two-level "
                "plan is not run yet (plan with one level)" % (k, op, i))
    acts = [(_OPS[op], i) for op, i in plan.actions]
    P = _planner
    keep = [False] * len(acts)
    for k, (op, i) in enumerate(acts):
        if op != P.ADVANCE:
            continue
        for j in range(k + 1, len(acts)):
            op2, i2 = acts[j]
            if op2 == P.SAVE_INTERNAL and i2 == i:
                keep[k] = True
                break
            if op2 == P.BACKWARD:
                keep[k] = i2 == i
                break
            if op2 in (P.ADVANCE, P.RESTORE_HIDDEN, P.RESTORE_INTERNAL):
                break
    first = next(k for k, (op, _) in enumerate(acts) if op == P.BACKWARD)
    # which advance made the graph each backward uses, and from which
    # stored graph each kept advance's carry came
    stored = {}       # step -> the advance that made the stored s(step)
    working = None    # the advance that made the working graph
    running = None    # the advance whose graph's output is the running carry
    source = {}       # kept advance -> the stored advance it continues
    used = []         # (backward index, step, advance whose graph it uses)
    for k, (op, i) in enumerate(acts):
        if op == P.ADVANCE:
            if keep[k]:
                r = running
                if r is not None and acts[r][1] == i - 1 and \
                        stored.get(i - 1) == r:
                    source[k] = r
                working = running = k
            else:
                working = running = None
        elif op == P.SAVE_INTERNAL:
            stored[i] = working
        elif op == P.RESTORE_INTERNAL:
            running = stored.get(i)
            working = None
        elif op == P.RESTORE_HIDDEN:
            running = working = None
        elif op == P.BACKWARD:
            used.append((k, i, stored.get(i, working)))
            running = working = None
        elif op == P.FREE_INTERNAL:
            stored.pop(i, None)
    link = [False] * len(acts)
    for n in range(len(used) - 1):
        kb, i, made = used[n]
        kb2, i2, made2 = used[n + 1]
        if made in source and source[made] == made2 and i2 == i - 1 and \
                all(acts[j][0] in (P.FREE_INTERNAL, P.FREE_HIDDEN)
                    for j in range(kb + 1, kb2)):
            link[made] = True
    return acts, keep, first, link


_CACHE = {}


def _plan(length, hidden_bytes, internal_bytes, memory, strategy, segment):
    """bptt_msm.plan, remembered: every iteration of a training loop asks
    for the same plan (the last 16 asked are kept)."""
    key = (length, hidden_bytes, internal_bytes, type(memory), memory,
           strategy, segment)
    try:
        return _CACHE[key]
    except (KeyError, TypeError):
        pass
    p = _planner.plan(length, hidden_bytes, internal_bytes, memory, strategy,
                      segment)
    p._torch_actions = _compile(p)
    if len(_CACHE) >= 16:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = p
    return p
