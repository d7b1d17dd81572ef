"""bptt_msm.torch: a recurrent step run under an exact checkpointing plan.

    carry, ys = bptt_msm.torch.scan(step, init, xs, memory="5%")

scan has the shape of jax.lax.scan: step(carry, x_t) -> (carry, y_t), carry
a tensor or a tuple of tensors, xs a tensor or a tuple of tensors whose
first dimension is time; it returns the final carry and the y_t stacked
along a new first dimension.  Its value and its gradients (of xs, init and
every parameter the step uses) are those of the written-out loop

    for t in range(len(xs)):
        carry, y = step(carry, xs[t])

while only the states the plan stores are held between the forward and
the backward pass.  doc/pytorch.md describes the model and the API.

How a plan's actions (doc/design.md 2.1) map onto PyTorch:
  advance i           step i once: under no_grad, or with its autograd graph
                      when the plan keeps s(i) (save_internal i follows, or
                      backward i uses it while working), continuing the
                      graph of the stored s(i-1) where _compile links them
  save_hidden i       keep the carry h(i) (its tensors, detached)
  save_internal i     keep step i's graph with its output carry
  restore_hidden i    running carry := the kept h(i)
  restore_internal i  running carry := the output carry kept with s(i)
  backward i          one engine run through step i's graph and the linked
                      ones below it: the gradient of the lowest one's input
                      carry, of their xs and of the parameters
  free_hidden/free_internal i   drop what was kept
The sizes the planner needs are measured on the first step: the carry's
bytes (the hidden state) and the bytes that step saves for backward,
seen through torch.autograd.graph.saved_tensors_hooks, with its output
carry (the internal state).  Parameters and xs are not counted: they are
held whatever the plan."""
import torch

import bptt_msm as _planner

__all__ = ["scan", "Sizes"]


# ---- bytes held by tensors ---------------------------------------------------

def _storage_key(t):
    """(identity, bytes) of the memory a tensor lives in."""
    try:
        s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
        return (t.device.type, t.device.index, s.data_ptr()), s.nbytes()
    except (RuntimeError, NotImplementedError, AttributeError):
        return ("tensor", id(t)), t.numel() * t.element_size()


class _Packed:
    """What the pack hook keeps for autograd: the tensor, and the ledger it
    is counted in while the graph holds it."""
    __slots__ = ("tensor", "ledger", "key", "__weakref__")

    def __init__(self, tensor, ledger):
        self.tensor = tensor
        self.ledger = ledger
        self.key, size = _storage_key(tensor)
        live = ledger.live
        if self.key in live:
            live[self.key][0] += 1
        else:
            live[self.key] = [1, size]

    def __del__(self):
        live = self.ledger.live
        entry = live.get(self.key)
        if entry is not None:
            entry[0] -= 1
            if entry[0] <= 0:
                del live[self.key]


class _Ledger:
    """The saved tensors one graph holds: storage key -> [count, bytes]."""
    __slots__ = ("live",)

    def __init__(self):
        self.live = {}


def _hooks(ledger):
    return torch.autograd.graph.saved_tensors_hooks(
        lambda t: _Packed(t, ledger), lambda p: p.tensor)


# ---- structures --------------------------------------------------------------

def _flatten(value, what):
    """A tensor or a tuple/list of tensors as (tuple of tensors, is_tuple)."""
    if isinstance(value, torch.Tensor):
        return (value,), False
    if isinstance(value, (tuple, list)) and value and \
            all(isinstance(v, torch.Tensor) for v in value):
        return tuple(value), True
    raise TypeError("bptt_msm.torch.scan: %s must be a tensor or a non-empty "
                    "tuple of tensors, not %s" % (what, _describe(value)))


def _describe(value):
    if isinstance(value, (tuple, list)):
        return "%s of (%s)" % (type(value).__name__,
                               ", ".join(type(v).__name__ for v in value))
    return type(value).__name__


def _unflatten(flat, is_tuple):
    return tuple(flat) if is_tuple else flat[0]


def _needs_grad(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


class Sizes:
    """What one step of a model measures: hidden_bytes (its carry) and
    internal_bytes (what it saves for backward, with its output carry)."""

    def __init__(self, hidden_bytes, internal_bytes, saved_bytes):
        self.hidden_bytes = hidden_bytes
        self.internal_bytes = internal_bytes
        self.saved_bytes = saved_bytes

    @property
    def alpha(self):
        return self.internal_bytes / self.hidden_bytes

    def __repr__(self):
        return ("Sizes(hidden_bytes=%d, internal_bytes=%d, saved_bytes=%d, "
                "alpha=%.4g)" % (self.hidden_bytes, self.internal_bytes,
                                 self.saved_bytes, self.alpha))


# ---- one step --------------------------------------------------------------

class _Graph:
    """Step i run with its autograd graph: the leaves it was run from, its
    outputs, the carry it made (detached) and the saved tensors' ledger."""
    __slots__ = ("step", "carry_in", "carry_use", "x_in", "carry_out",
                 "y_out", "carry", "ledger", "prev")


class _Runner:
    """One scan: the plan, the running state, what is stored, the gradients
    so far.  Built by scan(), executed by _Scan.forward then backward."""

    def __init__(self, step, n_carry, carry_tuple, n_xs, xs_tuple, length,
                 memory, strategy, segment, trace):
        self.step = step
        self.n_carry = n_carry
        self.carry_tuple = carry_tuple
        self.n_xs = n_xs
        self.xs_tuple = xs_tuple
        self.length = length
        self.memory = memory
        self.strategy = strategy
        self.segment = segment
        self.trace = trace
        self.y_tuple = None
        self.n_y = None
        self.y_meta = None
        self.params = ()
        self.aliased_carry = set()
        self.aliased_y = {}
        self.final = None
        self.info = None
        self.calls = 0
        self.done = False

    # -- calling the step -------------------------------------------------
    def call(self, i, carry, xs, graph, ledger=None, prev=None):
        """Step i (1-based) from carry (a tuple) and the xs (tuples of full
        sequences), with grad mode off.  graph: run with autograd from fresh
        leaves and return a _Graph; else return (carry, y) tuples.  prev:
        the stored graph of step i-1 whose output carry this step continues
        (its backward then runs with prev's, as one).  This runs once per
        forward op, so it does no more than it must."""
        x = tuple([s[i - 1] for s in xs])
        if not graph:
            return self._invoke(i, carry, x)
        g = _Graph()
        g.step = i
        g.prev = prev
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
        g.x_in = tuple([v.detach().requires_grad_() if s.requires_grad and
                        _needs_grad(v) else v for v, s in zip(x, xs)]) \
            if self.x_grad else x
        # the pack hooks count what the graph saves: on the first step (the
        # sizes) and, when info asks for the trace, on every one
        if ledger is None and self.trace is not None:
            ledger = _Ledger()
        g.ledger = ledger
        if ledger is None:
            with torch.enable_grad():
                g.carry_out, g.y_out = self._invoke(i, g.carry_use, g.x_in)
        else:
            with torch.enable_grad(), _hooks(ledger):
                g.carry_out, g.y_out = self._invoke(i, g.carry_use, g.x_in)
        g.carry = tuple([c.detach() for c in g.carry_out])
        return g

    def _invoke(self, i, carry, x):
        self.calls += 1
        out = self.step(carry if self.carry_tuple else carry[0],
                        x if self.xs_tuple else x[0])
        # the common case, checked quickly: a pair of the carry's structure
        # whose tensors keep their shapes, dtypes and devices, and a y like
        # step 1's; anything else goes through _checked
        if type(out) is tuple and len(out) == 2 and self.y_meta is not None:
            c, y = out
            c = c if self.carry_tuple else (c,)
            y = y if self.y_tuple else (y,)
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
        """step i's output as (carry, y) tuples, or the error that says
        what is wrong with it."""
        if not isinstance(out, tuple) or len(out) != 2:
            raise TypeError("bptt_msm.torch.scan: step must return a pair "
                            "(carry, y), not %s" % _describe(out))
        c, ct = _flatten(out[0], "the carry step returns")
        y, yt = _flatten(out[1], "the y step returns")
        if ct != self.carry_tuple or len(c) != self.n_carry:
            raise TypeError("bptt_msm.torch.scan: step %d returned a carry "
                            "of %d tensor(s)%s where init has %d%s"
                            % (i, len(c), " in a tuple" if ct else "",
                               self.n_carry,
                               " in a tuple" if self.carry_tuple else ""))
        for k, (a, b) in enumerate(zip(c, carry)):
            if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
                raise ValueError("bptt_msm.torch.scan: step %d changed carry "
                                 "tensor %d from %s %s on %s to %s %s on %s: "
                                 "a carry keeps its shape, dtype and device"
                                 % (i, k, tuple(b.shape), b.dtype, b.device,
                                    tuple(a.shape), a.dtype, a.device))
        if self.y_meta is None:
            self.y_tuple, self.n_y = yt, len(y)
            self.y_meta = tuple((v.shape, v.dtype, v.device) for v in y)
        elif yt != self.y_tuple or len(y) != self.n_y or any(
                (v.shape, v.dtype, v.device) != m
                for v, m in zip(y, self.y_meta)):
            raise ValueError("bptt_msm.torch.scan: step %d returned a y "
                             "unlike step 1's: every y_t must have the same "
                             "structure, shapes, dtypes and device" % i)
        return c, y

    # -- what is held ------------------------------------------------------
    def held_bytes(self):
        """Bytes held by the stored states: the saved tensors (counted by the
        pack hooks) of the stored graphs with their output carries, and the
        stored carries; each memory block once, parameters and xs left out."""
        seen = {}
        for carry in self.hstore.values():
            for c in carry:
                k, n = _storage_key(c)
                seen[k] = n
        for g in self.sstore.values():
            for k, (_, n) in g.ledger.live.items():
                seen[k] = n
            for c in g.carry:
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

    # -- the first step: sizes, parameters, plan ------------------------------
    def start(self, init, xs, params):
        self.xs = xs
        self.x_grad = any(s.requires_grad and _needs_grad(s) for s in xs)
        ledger = _Ledger()
        probe = self.call(1, init, xs, graph=True, ledger=ledger)
        leaves = {id(t) for t in probe.carry_in + probe.x_in}
        found = list(params)
        ids = {id(p) for p in found}
        for p in _leaves(probe.carry_out + probe.y_out):
            if id(p) not in leaves and id(p) not in ids:
                ids.add(id(p))
                found.append(p)
        self.params = tuple(found)
        # y tensors that are carry tensors (y = h): {y index: carry index}
        for n, y in enumerate(probe.y_out):
            for m, c in enumerate(probe.carry_out):
                if y is c and _needs_grad(c):
                    self.aliased_y[n] = m
        self.aliased_carry = set(self.aliased_y.values())
        self.outside = {_storage_key(t)[0] for t in self.params + xs}
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
        hb = sum(n for k, n in hidden.items() if k not in self.outside)
        if hb < 1:
            raise ValueError("bptt_msm.torch.scan: the carry takes no memory "
                             "(empty tensors?): nothing to plan")
        self.sizes = Sizes(hb, max(hb, sum(internal.values())),
                           sum(saved.values()))
        self.plan = _plan(self.length, self.sizes.hidden_bytes,
                          self.sizes.internal_bytes, self.memory,
                          self.strategy, self.segment)
        self.probe = probe
        self._prepare()

    def _prepare(self):
        if not hasattr(self.plan, "_torch_actions"):
            self.plan._torch_actions = _compile(self.plan)
        self.actions, self.keep, self.first_backward, self.link = \
            self.plan._torch_actions
        self.k = 0
        self.hstore = {0: self.init}
        self.sstore = {}
        self.working = None
        self.running = self.init
        self.computed = [False] * (self.length + 1)
        self.ys = [None] * self.length
        self.grad_x = [None] * self.length
        self.grad_params = [None] * len(self.params)
        self.grad_carry = None
        self.joined = set()  # steps whose backward ran with a later one's
        self.engine_runs = 0

    # -- executing the actions ---------------------------------------------
    def run(self, stop):
        """Actions self.k .. stop-1, with grad mode off (as it is in an
        autograd.Function's forward and backward); call turns it on for the
        steps that keep their graph."""
        if torch.is_grad_enabled():
            with torch.no_grad():
                return self.run(stop)
        acts, keep, link = self.actions, self.keep, self.link
        hstore, sstore, xs = self.hstore, self.sstore, self.xs
        trace = self.trace
        k = self.k
        while k < stop:
            op, i = acts[k]
            if op == _ADVANCE:
                if i == 1 and self.probe is not None:
                    g, self.probe = self.probe, None
                    if not keep[k]:
                        carry, y, g = g.carry, tuple(
                            v.detach() for v in g.y_out), None
                    else:
                        carry, y = g.carry, g.y_out
                elif keep[k]:
                    g = self.call(i, self.running, xs, True, None,
                                  sstore[i - 1] if link[k] else None)
                    carry, y = g.carry, g.y_out
                else:
                    g = None
                    carry, y = self.call(i, self.running, xs, False)
                if not self.computed[i]:
                    # kept without a graph: a y holds none after a no_grad
                    # step, and one from a graph must not keep it alive
                    self.ys[i - 1] = y if g is None else \
                        tuple([v.detach() for v in y])
                    self.computed[i] = True
                    if i == self.length:
                        self.final = carry
                self.running = carry
                self.working = g
            elif op == _SAVE_INTERNAL:
                sstore[i] = self.working
            elif op == _FREE_INTERNAL:
                del sstore[i]
            elif op == _BACKWARD:
                if i in self.joined:
                    self.joined.discard(i)
                else:
                    self._backward(sstore.get(i) or self.working)
                self.running = None
                self.working = None
            elif op == _SAVE_HIDDEN:
                hstore[i] = self.running
            elif op == _RESTORE_HIDDEN:
                self.running = hstore[i]
                self.working = None
            elif op == _RESTORE_INTERNAL:
                self.running = sstore[i].carry
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
                    grads.append(d[low.step - 2])
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
                    grads.append(d[i - 1])
        # the parameters' sums so far are outputs too: autograd's root hands
        # them to the parameters before any node of the steps runs, and then
        # adds the steps' uses to them one by one, latest first, as it adds
        # the loop's uses over all steps into one running sum
        for p, a in zip(self.params, self.grad_params):
            if a is not None:
                outs.append(p)
                grads.append(a)
        # the engine runs without `inputs` (which would cost it a pass over
        # the whole graph to find the paths to them): every node reached is
        # one the gradients need, and each leaf's sum lands in its .grad:
        # the lowest step's carry, the xs' leaves, and the parameters,
        # whose .grad scan's backward keeps None until it hands them back
        if outs:
            torch.autograd.backward(outs, grads)
            self.engine_runs += 1
        self.grad_carry = tuple([_take_grad(t) for t in low.carry_in])
        for g in chain:
            self.grad_x[g.step - 1] = tuple([_take_grad(t) for t in g.x_in])
            g.prev = None
            if g is not top:
                self.joined.add(g.step)
        for n, p in enumerate(self.params):
            d = _take_grad(p)
            if d is not None:
                self.grad_params[n] = d


def _take_grad(t):
    """t's .grad, left None: what the engine run just summed into it."""
    if not t.requires_grad:
        return None
    d = t.grad
    t.grad = None
    return d


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
    run of autograd's engine, as in the written-out loop."""
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
    if len(_CACHE) >= 16:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = p
    return p


def _leaves(tensors):
    """The leaf tensors requiring grad that the graph of tensors reaches."""
    out, seen = [], set()
    stack = [t.grad_fn for t in tensors if t.grad_fn is not None]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        var = getattr(fn, "variable", None)
        if var is not None:
            out.append(var)
            continue
        stack.extend(f for f, _ in fn.next_functions)
    return out


class _Scan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, runner, *flat):
        ctx.set_materialize_grads(False)
        ctx.runner = runner
        runner.run(runner.first_backward)
        ys = []
        for n in range(runner.n_y):
            ys.append(torch.stack([y[n] for y in runner.ys]))
        runner.ys = None
        return tuple(runner.final) + tuple(ys)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        r = ctx.runner
        if r.done:
            raise RuntimeError("bptt_msm.torch.scan: backward through one "
                               "scan twice; its states are gone (call scan "
                               "again)")
        r.done = True
        nc = r.n_carry
        r.grad_carry = tuple(grads[:nc])
        r.grad_ys = tuple(grads[nc:])
        # the parameters' .grad is where each engine run below leaves its
        # sum; what they held is put back before autograd adds scan's
        # gradients to it, as it adds the loop's
        held = [p.grad for p in r.params]
        try:
            for p in r.params:
                p.grad = None
            r.run(len(r.actions))
        finally:
            for p, d in zip(r.params, held):
                p.grad = d
        out = [None]  # the runner
        for t, d in zip(r.init, r.grad_carry):
            out.append(d if t.requires_grad else None)
        for n, s in enumerate(r.xs):
            if not s.requires_grad or not _needs_grad(s):
                out.append(None)
                continue
            parts = [g[n] if g is not None and g[n] is not None
                     else torch.zeros_like(s[i])
                     for i, g in enumerate(r.grad_x)]
            out.append(torch.stack(parts))
        out.extend(r.grad_params)
        r.sstore.clear()
        r.hstore.clear()
        if r.info is not None:
            r.info["calls"] = r.calls
            r.info["engine_runs"] = r.engine_runs
        return tuple(out)


def scan(step, init, xs, memory="100%", strategy="msm", params=(),
         segment=None, info=None):
    """Run step over the first dimension of xs under the plan of `strategy`
    at `memory`, returning (final carry, stacked ys).

    step      callable(carry, x_t) -> (carry, y_t): an nn.Module or any
              function; the parameters it uses are found from its graph
              (leaf tensors requiring grad; params adds others).  It must
              be deterministic (no dropout): it is recomputed.
    init      the carry before step 1: a tensor or a tuple of tensors.
    xs        a tensor or a tuple of tensors, time first (length >= 1).
    memory    the budget for stored states: an int (bytes) or "5%" (of
              full BPTT's memory), "200slots" or "200" (a slot being the
              carry's bytes), "64MiB", "100000B" (bptt plan's forms).
    strategy  full, chen, hsm, ism, msm, ism-paper or msm-paper.
    segment   Chen's segment length (chen only).
    info      a dict, filled with the plan ("plan"), the measured sizes
              ("sizes"), and, after backward, the step's calls ("calls")
              the runs of autograd's engine its backward took
              ("engine_runs": backward ops of consecutive stored steps
              share one), and after every action (op, step, held bytes,
              working bytes) ("trace"): held is what the stored states hold, measured
              through the saved-tensor hooks (the plan's budget governs
              it), working the graph of the step just run, not stored.

    Raises bptt_msm.InfeasibleBudget (naming the smallest feasible budget)
    when memory is too small, TypeError or ValueError for bad arguments."""
    if not callable(step):
        raise TypeError("bptt_msm.torch.scan: step must be callable, not %s"
                        % type(step).__name__)
    carry, carry_tuple = _flatten(init, "init")
    xs_flat, xs_tuple = _flatten(xs, "xs")
    for k, s in enumerate(xs_flat):
        if s.dim() < 1 or s.shape[0] < 1:
            raise ValueError("bptt_msm.torch.scan: xs tensor %d has no time "
                             "dimension with at least one step (shape %s)"
                             % (k, tuple(s.shape)))
    length = xs_flat[0].shape[0]
    if any(s.shape[0] != length for s in xs_flat):
        raise ValueError("bptt_msm.torch.scan: the xs tensors differ in "
                         "length (%s)" % ", ".join(str(s.shape[0])
                                                   for s in xs_flat))
    if isinstance(params, torch.Tensor):
        params = (params,)
    params = tuple(params)
    if not all(isinstance(p, torch.Tensor) for p in params):
        raise TypeError("bptt_msm.torch.scan: params must be tensors")
    if info is not None and not isinstance(info, dict):
        raise TypeError("bptt_msm.torch.scan: info must be a dict or None, "
                        "not %s" % type(info).__name__)
    if isinstance(step, torch.nn.Module):
        own = [p for p in step.parameters() if p.requires_grad]
        params = params + tuple(p for p in own
                                if all(p is not q for q in params))
    trace = [] if info is not None else None
    r = _Runner(step, len(carry), carry_tuple, len(xs_flat), xs_tuple,
                length, memory, strategy, segment, trace)
    r.init = carry
    r.start(carry, xs_flat, params)
    if info is not None:
        info["plan"] = r.plan
        info["sizes"] = r.sizes
        info["trace"] = trace
    flat = tuple(carry) + tuple(xs_flat) + r.params
    r.info = info
    out = _Scan.apply(r, *flat)
    if info is not None:
        info["calls"] = r.calls  # so far: the forward pass
    nc = len(carry)
    return _unflatten(out[:nc], carry_tuple), _unflatten(out[nc:], r.y_tuple)
