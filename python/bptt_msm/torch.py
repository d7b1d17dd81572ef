"""bptt_msm.torch: a recurrent step run under an exact checkpointing plan.

    carry, ys = bptt_msm.torch.scan(step, init, xs, memory="5%")

scan has the shape of jax.lax.scan: step(carry, x_t) -> (carry, y_t), the
carry, the xs and the y_t any nest of tuples, lists, dicts and namedtuples
of tensors (None allowed), the xs' tensors time first; it returns the
final carry and the y_t stacked along a new first dimension.  Its value
and its gradients (of xs, init, and every parameter the step uses) are
those of the written-out loop

    for t in range(len(xs)):
        carry, y = step(carry, xs[t])

while only the states the plan stores are held between the forward and
the backward pass.  A recomputed step sees what its first run saw: the
random number generators' states, the module state it changes (buffers
such as BatchNorm's running statistics, which only the first run
changes), the autocast state.  doc/pytorch.md describes the model, the
API and what is exact.

How a plan's actions (doc/design.md 2.1) map onto PyTorch:
  advance i           step i once: without a graph, or with its autograd
                      graph when the plan keeps s(i) (save_internal i
                      follows, or backward i uses it while working),
                      continuing the graph of the stored s(i-1) where
                      _compile links them
  save_hidden i       keep the carry h(i) (its tensors, detached) and the
                      replayed state after step i
  save_internal i     keep step i's graph with its output carry and state
  restore_hidden i    running carry and state := the kept h(i)'s
  restore_internal i  running carry and state := those kept with s(i)
  backward i          one engine run (torch.autograd.grad) through step
                      i's graph and the linked ones below it: the gradient
                      of the lowest one's input carry, of their xs and of
                      the parameters
  free_hidden/free_internal i   drop what was kept
The forward sweep (the actions up to the first backward) runs when scan
is called, and finds every tensor the steps reach that needs a gradient
(the parameters); the rest runs in the backward of one autograd Function
whose inputs are the init, the xs and those parameters, so autograd hands
each parameter its gradient once, summed, as it does the loop's."""
import math
import threading

import torch

import bptt_msm as _planner

__all__ = ["scan", "Sizes", "recomputing"]

_NAME = "bptt_msm.torch.scan"
_TORCH2 = int(torch.__version__.split(".")[0]) >= 2
# buffers up to this many bytes are copied before step 1 so that a change
# the step makes to them can be seen and replayed; a larger buffer the
# step changes is refused (scan says so) rather than copied every call
_BUFFER_COPY_LIMIT = 64 << 20
_TENSOR_COPY_LIMIT = 64 << 10


_LOCAL = threading.local()


def recomputing():
    """True while scan calls the step again for a step it has run before
    (a recomputation), in this thread: a step with effects outside what
    scan replays (appending to a list, a Python counter, logging) can skip
    them then, and so have them once per step, as in the loop."""
    return getattr(_LOCAL, "again", False)


# ---- nests of tensors ---------------------------------------------------------
# A nest's structure (its "spec") is "T" for a tensor, "N" for None, or a
# tuple (kind, ...) for a tuple, list, namedtuple or dict of nests.  Dicts
# go by sorted keys (their order is not part of the structure), as
# jax.lax.scan's.

def _flatten(value, what, out=None, path=""):
    """value's tensors in order (appended to out) and its spec."""
    if out is None:
        out = []
        return out, _flatten(value, what, out, path)
    if isinstance(value, torch.Tensor):
        out.append(value)
        return "T"
    if value is None:
        return "N"
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return ("nt", type(value), tuple(
            _flatten(v, what, out, "%s.%s" % (path, f))
            for f, v in zip(type(value)._fields, value)))
    if isinstance(value, (tuple, list)):
        return ("list" if isinstance(value, list) else "tuple", tuple(
            _flatten(v, what, out, "%s[%d]" % (path, k))
            for k, v in enumerate(value)))
    if isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:
            keys = sorted(value, key=repr)
        return ("dict", type(value) if type(value) is not dict else dict,
                tuple(keys), tuple(_flatten(value[k], what, out,
                                            "%s[%r]" % (path, k))
                                   for k in keys))
    raise TypeError("%s: %s holds %s at %s: a nest's leaves must be tensors "
                    "or None, in tuples, lists, dicts or namedtuples"
                    % (_NAME, what, _describe(value), path or "its top"))


def _unflatten(spec, it):
    if spec == "T":
        return next(it)
    if spec == "N":
        return None
    kind = spec[0]
    if kind == "tuple":
        return tuple([_unflatten(s, it) for s in spec[1]])
    if kind == "list":
        return [_unflatten(s, it) for s in spec[1]]
    if kind == "nt":
        return spec[1](*[_unflatten(s, it) for s in spec[2]])
    return spec[1](zip(spec[2], [_unflatten(s, it) for s in spec[3]]))


def _flat_tuple(spec):
    """For a spec of a tensor, True; of a tuple of tensors, False; else
    None."""
    if spec == "T":
        return True
    if spec[0] == "tuple" and all(s == "T" for s in spec[1]):
        return False
    return None


def _build(spec, leaves):
    return _unflatten(spec, iter(leaves))


def _describe(value):
    if isinstance(value, (tuple, list)):
        return "a %s of (%s)" % (type(value).__name__,
                                 ", ".join(type(v).__name__ for v in value))
    if isinstance(value, torch.Tensor):
        return "a tensor of shape %s" % (tuple(value.shape),)
    return "a %s" % type(value).__name__


def _spec_text(spec):
    if spec == "T":
        return "tensor"
    if spec == "N":
        return "None"
    kind = spec[0]
    if kind in ("tuple", "list"):
        return "%s(%s)" % (kind, ", ".join(_spec_text(s) for s in spec[1]))
    if kind == "nt":
        return "%s(%s)" % (spec[1].__name__,
                           ", ".join(_spec_text(s) for s in spec[2]))
    return "{%s}" % ", ".join("%r: %s" % (k, _spec_text(s))
                              for k, s in zip(spec[2], spec[3]))


def _needs_grad(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


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


def _dropped(_):
    raise RuntimeError("%s: a graph of the forward sweep was backpropagated "
                       "through; its saved tensors were never kept" % _NAME)


def _drop_hooks():
    """The forward sweep builds each step's graph only to see which tensors
    needing a gradient it reaches: nothing it would save is kept."""
    return torch.autograd.graph.saved_tensors_hooks(lambda t: None, _dropped)


class Sizes:
    """What one step of a model measures: hidden_bytes (its carry, with the
    state scan replays: the random number generators' states when the step
    draws, the buffers it changes) and internal_bytes (what it saves for
    backward, with its output carry and that state)."""

    def __init__(self, hidden_bytes, internal_bytes, saved_bytes,
                 state_bytes=0):
        self.hidden_bytes = hidden_bytes
        self.internal_bytes = internal_bytes
        self.saved_bytes = saved_bytes
        self.state_bytes = state_bytes

    @property
    def alpha(self):
        return self.internal_bytes / self.hidden_bytes

    def __repr__(self):
        return ("Sizes(hidden_bytes=%d, internal_bytes=%d, saved_bytes=%d, "
                "state_bytes=%d, alpha=%.4g)"
                % (self.hidden_bytes, self.internal_bytes, self.saved_bytes,
                   self.state_bytes, self.alpha))


# ---- what a recomputation replays --------------------------------------------

def _state_candidates(step, extra):
    """Tensors that need no gradient and that the step can reach through
    the objects it holds: buffers of the modules it is, is bound to, or
    holds in its closure, defaults, partial arguments or the globals its
    code names; tensors held there directly.  A bounded search: what it
    does not find, scan cannot replay (doc/pytorch.md)."""
    found, seen_obj, seen_t = [], set(), set()
    todo = [step] + list(extra)
    budget = 20000
    while todo and budget > 0:
        budget -= 1
        o = todo.pop()
        if id(o) in seen_obj:
            continue
        seen_obj.add(id(o))
        if isinstance(o, torch.Tensor):
            if not o.requires_grad and id(o) not in seen_t:
                seen_t.add(id(o))
                found.append((o, False))
            continue
        if isinstance(o, torch.nn.Module):
            for b in o.buffers():
                if b is not None and id(b) not in seen_t:
                    seen_t.add(id(b))
                    found.append((b, True))
            for v in vars(o).values():
                if not isinstance(v, (dict, torch.nn.Module)):
                    todo.append(v)
            continue
        if isinstance(o, (list, tuple, set, frozenset)):
            todo.extend(o)
            continue
        if isinstance(o, dict):
            todo.extend(o.values())
            continue
        func = getattr(o, "__func__", None)
        if func is not None:  # a bound method
            todo.append(getattr(o, "__self__", None))
            todo.append(func)
            continue
        if hasattr(o, "func") and hasattr(o, "keywords"):  # functools.partial
            todo.append(o.func)
            todo.extend(o.args)
            todo.extend((o.keywords or {}).values())
            continue
        code = getattr(o, "__code__", None)
        if code is not None:  # a Python function
            todo.extend(c.cell_contents for c in (o.__closure__ or ())
                        if _cell_full(c))
            todo.extend(o.__defaults__ or ())
            g = getattr(o, "__globals__", {})
            for name in _code_names(code):
                if name in g:
                    todo.append(g[name])
            continue
        if callable(o) and hasattr(o, "__dict__") and \
                not isinstance(o, type):  # an object with __call__
            todo.append(type(o).__call__)
            todo.extend(v for v in vars(o).values()
                        if not isinstance(v, type))
    return found


def _cell_full(cell):
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            names |= _code_names(c)
    return names


class _Replay:
    """The state outside the carry that a step reads and changes: the
    random number generators (CPU, and each CUDA device the scan's tensors
    are on) and the tensors step 1 was seen to change in place (buffers:
    BatchNorm's statistics, a counter).  A snapshot is taken with each
    stored checkpoint and put back when the plan restores it, so that a
    recomputed step draws the numbers and reads the buffers its first run
    did; the caller's state is put back after the backward pass."""

    def __init__(self, candidates, devices):
        self.devices = devices
        self.rng0 = self.rng()
        self.live = False            # has a step drawn random numbers?
        self.cands = [c for c, _ in candidates]
        self.versions = [c._version for c in self.cands]
        # a module's buffers are compared by value too (BatchNorm changes
        # its running statistics without a new version); other tensors by
        # their version, copied only when small
        self.copies = [c.clone() if c.numel() * c.element_size() <=
                       (_BUFFER_COPY_LIMIT if buf else _TENSOR_COPY_LIMIT)
                       else None for c, buf in candidates]
        self.tracked = ()
        self.start = None

    def rng(self):
        return (torch.get_rng_state(),
                tuple(torch.cuda.get_rng_state(d) for d in self.devices))

    def set_rng(self, s):
        torch.set_rng_state(s[0])
        for d, st in zip(self.devices, s[1]):
            torch.cuda.set_rng_state(st, d)

    def _rng_moved(self):
        now = self.rng()
        return not (torch.equal(now[0], self.rng0[0]) and
                    all(torch.equal(a, b) for a, b in zip(now[1], self.rng0[1])))

    def after_first(self):
        """After step 1: did it draw, which candidates did it change."""
        self.live = self._rng_moved()
        tracked = []
        for k, c in enumerate(self.cands):
            if c._version != self.versions[k] or (
                    self.copies[k] is not None and
                    not _same(c, self.copies[k])):
                if self.copies[k] is None:
                    raise RuntimeError(
                        "%s: step 1 changed in place a tensor of %d bytes "
                        "(shape %s) that scan would have to copy with every "
                        "checkpoint to replay; keep such state out of the "
                        "step, or in its carry"
                        % (_NAME, c.numel() * c.element_size(),
                           tuple(c.shape)))
                tracked.append(k)
        self.tracked = tuple(tracked)
        self.start = (None, tuple(self.copies[k] for k in tracked))
        self.copies = None
        self.versions = [c._version for c in self.cands]

    def bytes(self):
        n = sum(self.cands[k].numel() * self.cands[k].element_size()
                for k in self.tracked)
        if self.live:
            s = self.rng0
            n += s[0].numel() + sum(t.numel() for t in s[1])
        return n

    def check(self, i):
        """After step i of the forward sweep: a step that starts drawing
        makes the generators part of every checkpoint from then on (those
        before it have the state scan started with); a tensor changed in
        place that step 1 did not change cannot be replayed."""
        if not self.live and self._rng_moved():
            self.live = True
        tracked = self.tracked
        for k, c in enumerate(self.cands):
            if c._version != self.versions[k] and k not in tracked:
                raise RuntimeError(
                    "%s: step %d changed in place a tensor (shape %s, %s) "
                    "that step 1 left alone; scan replays only the state "
                    "step 1 changes: change it at every step, or carry it"
                    % (_NAME, i, tuple(c.shape), c.dtype))
            self.versions[k] = c._version

    def snap(self):
        if not self.live and not self.tracked:
            return None
        return (self.rng() if self.live else None,
                tuple(self.cands[k].clone() for k in self.tracked))

    def restore(self, snap):
        if snap is None:
            snap = self.start
        if self.live:
            self.set_rng(snap[0] if snap[0] is not None else self.rng0)
        for k, v in zip(self.tracked, snap[1]):
            # through .data: putting a value back is not a change autograd
            # should see (the buffer's version stays)
            self.cands[k].data.copy_(v)

    def caller(self):
        """The caller's state, before the backward pass replays anything."""
        return (self.rng(), tuple(self.cands[k].clone() for k in self.tracked))

    def give_back(self, saved):
        self.set_rng(saved[0])
        for k, v in zip(self.tracked, saved[1]):
            self.cands[k].data.copy_(v)


def _same(a, b):
    """Equal values (NaN equal to NaN, so an untouched buffer holding one
    is not taken for changed)."""
    return torch.equal(a, b) or (a.dtype.is_floating_point and
                                 bool(((a == b) | (a.isnan() & b.isnan()))
                                      .all()))


def _snap_tensors(snap):
    """The tensors a replayed state's snapshot holds (held_bytes counts
    them: the plan counts them in every stored state)."""
    if snap is None:
        return ()
    rng, bufs = snap
    return ((rng[0],) + tuple(rng[1]) if rng is not None else ()) + \
        tuple(bufs)


def _autocast_state():
    return (torch.is_autocast_enabled(), torch.get_autocast_gpu_dtype(),
            torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype(),
            torch.is_autocast_cache_enabled())


class _Autocast:
    """The autocast state scan was called in, entered around every call of
    the step, with autocast's cache of cast parameters off: each step casts
    its parameters itself, so that no cast made by one step is shared with
    another's graph (the loop's cast, made once, would be a node outside
    every step; doc/pytorch.md says what this changes in the last bits)."""

    def __init__(self, state):
        self.state = state
        self.ctxs = None

    def __enter__(self):
        gpu, gpu_dtype, cpu, cpu_dtype, _ = self.state
        self.ctxs = []
        if torch.cuda.is_available():
            self.ctxs.append(torch.autocast("cuda", dtype=gpu_dtype,
                                            enabled=gpu, cache_enabled=False))
        self.ctxs.append(torch.autocast("cpu", dtype=cpu_dtype, enabled=cpu,
                                        cache_enabled=False))
        for c in self.ctxs:
            c.__enter__()

    def __exit__(self, *exc):
        for c in reversed(self.ctxs):
            c.__exit__(*exc)
        return False


class _QuietHooks:
    """PyTorch 2 calls a leaf's tensor hooks on the gradient
    torch.autograd.grad captures for it; scan's engine runs capture partial
    sums, which the caller's hooks must not see (they see the sum, once,
    when autograd accumulates scan's gradient).  PyTorch 1 calls no hooks
    there, and this does nothing."""

    def __init__(self, params):
        self.params = params
        self.saved = []

    def __enter__(self):
        if _TORCH2:
            for p in self.params:
                h = getattr(p, "_backward_hooks", None)
                if h:
                    self.saved.append((h, list(h.items())))
                    h.clear()

    def __exit__(self, *exc):
        for h, items in self.saved:
            h.update(items)
        self.saved = []
        return False


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

    def pos(self, i):
        """The index into xs (and ys) of step i (1-based)."""
        return self.length - i if self.reverse else i - 1

    # -- calling the step -------------------------------------------------
    def x_of(self, i):
        if self.xs_spec is None:
            return ()
        p = self.pos(i)
        return tuple([s[p] for s in self.xs])

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
        g.x_in = tuple([v.detach().requires_grad_() if s.requires_grad and
                        _needs_grad(v) else v for v, s in zip(x, self.xs)]) \
            if self.x_grad else x
        # the pack hooks count what the graph saves: on the first step (the
        # sizes) and, when info asks for the trace, on every one
        if ledger is None and self.trace is not None:
            ledger = _Ledger()
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
        ledger = _Ledger()
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
                del sstore[i]
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
    p._torch_actions = _compile(p)
    if len(_CACHE) >= 16:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = p
    return p


# ---- budgets and strategies ---------------------------------------------------

STRATEGIES = ("auto",) + _planner.STRATEGIES
DEFAULT_MEMORY = "10%"
# strategy="auto" runs Chen's segments where their forward ops are at
# most this many times MSM's at the same budget: measured side by side
# (doc/pytorch.md, "Choosing a strategy"), scan took the same time under
# either there, and Chen's segments store less
_CHEN_OPS_RATIO = 1.15


def _check_memory(memory):
    if memory is None:
        return
    if isinstance(memory, bool) or not isinstance(memory, (int, str)):
        raise TypeError("%s: memory must be an int (bytes) or a string such "
                        "as '64MiB', '5%%' or '150slots', not %s"
                        % (_NAME, _describe(memory)))
    if isinstance(memory, str):
        text = memory.strip()
        try:
            value = float(text)
        except ValueError:
            return
        if value == int(value) if math.isfinite(value) else False:
            n = int(value)
            raise ValueError(
                "%s: memory %r is a bare number: write bytes as an int (%d) "
                "or with a unit ('%dB', '64MiB'), slots (carries) as "
                "'%dslots', or a share of full BPTT's stored bytes as '5%%'"
                % (_NAME, memory, n, n, n))
        raise ValueError(
            "%s: memory %r is a bare number: write a share of full BPTT's "
            "stored bytes as a percentage ('%g%%'), bytes as an int or with "
            "a unit ('64MiB'), slots (carries) as '150slots'"
            % (_NAME, memory, 100 * value if 0 < value < 1 else 5))


def _choose(runner, memory, strategy, segment):
    """The plan: strategy's at memory (None: the default), or, for "auto",
    the cheaper of msm's and chen's.  InfeasibleBudget names memory as it
    was given."""
    s = runner.sizes
    given = memory if memory is not None else _default_memory(runner)
    names = ("msm", "chen") if strategy == "auto" else (strategy,)
    plans, errors = [], []
    for name in names:
        seg = segment if name == "chen" else None
        try:
            plans.append(_plan(runner.length, s.hidden_bytes,
                               s.internal_bytes, given, name, seg))
        except _planner.InfeasibleBudget as e:
            errors.append(e)
    if not plans and memory is None:
        # the default where even that is too small for the strategy asked
        least = min(e.min_memory_bytes for e in errors)
        return _choose(runner, least, strategy, segment)
    if not plans:
        e = min(errors, key=lambda e: e.min_memory_bytes)
        need = e.min_memory_bytes
        p_full = _planner.plan(runner.length, s.hidden_bytes,
                               s.internal_bytes, "100%", "full")
        raise _planner.InfeasibleBudget(
            "%s: memory %r is %s for %s at length %d (a step's carry takes "
            "%d bytes, its internal state %d); the smallest feasible budget "
            "is %d bytes (%.3g%% of full BPTT's %d, %.4g slots)"
            % (_NAME, memory, "below the smallest feasible budget"
               if need >= 0 else "infeasible", strategy, runner.length,
               s.hidden_bytes, s.internal_bytes, need,
               100.0 * need / max(1, p_full.peak_bytes),
               p_full.peak_bytes, need / s.hidden_bytes), need)
    if len(plans) == 2 and \
            plans[1].forward_ops <= _CHEN_OPS_RATIO * plans[0].forward_ops:
        return plans[1]
    return plans[0]


def _default_memory(runner):
    """10% of full BPTT's stored bytes, or, where that is less (short
    sequences), what Chen's sqrt(T) segments store: no default plan then
    runs more than about two forward steps a step."""
    s = runner.sizes
    share = _planner.memory_bytes(DEFAULT_MEMORY, runner.length,
                                  s.hidden_bytes, s.internal_bytes)
    try:
        chen = _plan(runner.length, s.hidden_bytes, s.internal_bytes,
                     "100%", "chen", None).peak_bytes
    except _planner.InfeasibleBudget as e:  # very short: chen needs more
        chen = e.min_memory_bytes
    return max(share, chen)


# ---- the autograd node ----------------------------------------------------------

class _Scan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, runner, *flat):
        ctx.set_materialize_grads(False)
        ctx.runner = runner
        # the inputs are saved only so that autograd checks, at backward,
        # that none was changed in place since: scan reads them again
        ctx.save_for_backward(*flat)
        return runner.outputs

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        ctx.saved_tensors  # autograd's check: an input changed in place
        r = ctx.runner
        if r.done:
            raise RuntimeError("%s: backward through one scan twice; its "
                               "states are gone (call scan again)" % _NAME)
        r.done = True
        nc = r.n_carry
        r.grad_carry = tuple(grads[:nc])
        r.grad_ys = tuple(grads[nc:])
        r.grad_params = [None] * len(r.params)
        r.sweep = False
        if r.amp is None and _autocast_state() != r.autocast:
            r.amp = _Autocast(r.autocast)
        replay = r.replay
        saved = replay.caller()
        try:
            r.run(len(r.actions))
        finally:
            replay.give_back(saved)
            r.sstore.clear()
            r.hstore.clear()
        out = [None]  # the runner
        for t, d in zip(r.init, r.grad_carry):
            out.append(d if t.requires_grad else None)
        for n, s in enumerate(r.xs):
            if not s.requires_grad or not _needs_grad(s):
                out.append(None)
                continue
            parts = [g[n] if g is not None and g[n] is not None
                     else torch.zeros_like(s[p])
                     for p, g in enumerate(r.grad_x)]
            out.append(torch.stack(parts))
        out.extend(r.grad_params)
        if r.info is not None:
            r.info["calls"] = r.calls
            r.info["engine_runs"] = r.engine_runs
        return tuple(out)


def _cell_step(cell):
    """nn.RNNCell, nn.GRUCell, nn.LSTMCell as a step: carry h ((h, c) for
    the LSTM), y = h."""
    if isinstance(cell, torch.nn.LSTMCell):
        def lstm(carry, x):
            h, c = cell(x, tuple(carry))
            return (h, c), h
        return lstm

    def rnn(h, x):
        h = cell(x, h)
        return h, h
    return rnn


def _plain(step, carry, xs, xs_spec, length, reverse, x_index=None):
    """The written-out loop (under no_grad, or where nothing needs a
    gradient): the final carry and the ys' leaves per step."""
    ys, y_spec = [None] * length, None
    for t in range(length):
        p = length - 1 - t if reverse else t
        x = _build(xs_spec, [s[p] for s in xs]) if xs_spec is not None \
            else None
        out = step(carry, x)
        if not isinstance(out, (tuple, list)) or len(out) != 2:
            raise TypeError("%s: step must return a pair (carry, y), not %s"
                            % (_NAME, _describe(out)))
        carry = out[0]
        ys[p], spec = _flatten(out[1], "the y step %d returned" % (t + 1))
        if y_spec is None:
            y_spec = spec
        elif spec != y_spec:
            raise ValueError("%s: step %d returned a y unlike step 1's"
                             % (_NAME, t + 1))
    return carry, ys, y_spec


def _stack(y_spec, ys, n_y):
    return _build(y_spec, [torch.stack([y[n] for y in ys])
                           for n in range(n_y)])


def scan(step, init, xs=None, memory=None, strategy="msm", params=(),
         segment=None, info=None, *, length=None, reverse=False):
    """Run step over the first dimension of xs under the plan of `strategy`
    at `memory`, returning (final carry, stacked ys): the written-out
    loop's values and gradients (doc/pytorch.md says what is bit for bit).

    step      callable(carry, x_t) -> (carry, y_t): a function or an
              nn.Module; nn.RNNCell, nn.GRUCell and nn.LSTMCell may be
              given as they are (carry h, or (h, c); y_t = h).  The tensors
              needing a gradient that it reaches are found from its graphs
              (parameters, captured leaves; params adds others).  Dropout
              and other random draws, buffers it changes (BatchNorm) and
              autocast are replayed exactly when a step is recomputed.
    init      the carry before step 1: a nest (tuples, lists, dicts,
              namedtuples) of tensors, None allowed.
    xs        a nest of tensors, time first, or None (then give length).
    memory    the budget for stored states: an int (bytes), "64MiB",
              "100000B", "5%" (of full BPTT's stored bytes), "150slots" (a
              slot being a carry); default 10%, or the smallest feasible
              budget where 10% is not.
    strategy  msm (default), auto (the cheaper of msm and chen), full,
              chen, hsm, ism, ism-paper or msm-paper.
    params    tensors needing a gradient to treat as the step's parameters
              besides those found (a captured non-leaf must be named here).
    segment   Chen's segment length (chen only).
    info      a dict, filled with the plan ("plan"), the strategy used
              ("strategy"), the measured sizes ("sizes"), the step's calls
              ("calls"; after backward, all of them), the runs of
              autograd's engine its backward took ("engine_runs"), and
              after every action (op, step, held bytes, working bytes)
              ("trace"): held is what the stored states hold, working the
              graph of the step just run, not stored.
    length    the number of steps: xs's length, or, with xs None, required.
    reverse   run from the last x to the first (ys[t] still from xs[t]).

    Under torch.no_grad(), or where nothing needs a gradient, it is the
    plain loop.  Raises bptt_msm.InfeasibleBudget (naming the smallest
    feasible budget) when memory is too small, TypeError or ValueError for
    bad arguments."""
    if isinstance(step, torch.nn.RNNCellBase):
        cell_params = tuple(p for p in step.parameters() if p.requires_grad)
        holder, step = step, _cell_step(step)
    else:
        cell_params, holder = (), step
        if isinstance(step, torch.nn.modules.rnn.RNNBase):
            raise TypeError(
                "%s: %s runs a whole sequence; scan runs one step: give %sCell "
                "(or a function such as lambda carry, x: ...)"
                % (_NAME, type(step).__name__, type(step).__name__))
    if not callable(step):
        raise TypeError("%s: step must be callable, not %s"
                        % (_NAME, _describe(step)))
    carry, carry_spec = _flatten(init, "init")
    if xs is None:
        xs_flat, xs_spec = [], None
        if length is None:
            raise TypeError("%s: with xs None, give length=T" % _NAME)
    else:
        xs_flat, xs_spec = _flatten(xs, "xs")
        if not xs_flat:
            raise TypeError("%s: xs holds no tensor; for a scan without "
                            "inputs give xs=None and length=T" % _NAME)
    if length is not None and (isinstance(length, bool) or
                               not isinstance(length, int) or length < 0):
        raise ValueError("%s: length must be an int >= 0, not %r"
                         % (_NAME, length))
    for k, s in enumerate(xs_flat):
        if s.dim() < 1:
            raise ValueError("%s: xs tensor %d has no time dimension (shape "
                             "%s)" % (_NAME, k, tuple(s.shape)))
    if xs_flat:
        n = xs_flat[0].shape[0]
        if any(s.shape[0] != n for s in xs_flat):
            raise ValueError("%s: the xs tensors differ in length (%s)"
                             % (_NAME, ", ".join(str(s.shape[0])
                                                 for s in xs_flat)))
        if length is not None and length != n:
            raise ValueError("%s: length=%d but xs has %d steps"
                             % (_NAME, length, n))
        length = n
    if isinstance(params, torch.Tensor):
        params = (params,)
    params = tuple(params) + cell_params
    if not all(isinstance(p, torch.Tensor) for p in params):
        raise TypeError("%s: params must be tensors" % _NAME)
    params = tuple(p for p in params if p.requires_grad)
    if info is not None and not isinstance(info, dict):
        raise TypeError("%s: info must be a dict or None, not %s"
                        % (_NAME, _describe(info)))
    if not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise ValueError("%s: unknown strategy %r: give one of %s"
                         % (_NAME, strategy, ", ".join(STRATEGIES)))
    if segment is not None and strategy not in ("chen", "auto"):
        raise ValueError("%s: segment is Chen's segment length; strategy %r "
                         "takes none" % (_NAME, strategy))
    _check_memory(memory)
    if isinstance(holder, torch.nn.Module):
        params = params + tuple(p for p in holder.parameters()
                                if p.requires_grad)
    if length == 0:
        return _empty(step, init, carry, xs_flat, xs_spec, holder, info)
    if not torch.is_grad_enabled():
        c, ys, y_spec = _plain(step, init, xs_flat, xs_spec, length, reverse)
        if info is not None:
            info.update(plan=None, strategy=None, calls=length)
        return c, _stack(y_spec, ys, len(ys[0]))

    trace = [] if info is not None else None
    r = _Runner(step, carry_spec, len(carry), xs_flat, xs_spec, length,
                reverse, trace)
    r.info = info
    r.autocast = _autocast_state()
    if r.autocast[0] or r.autocast[2]:
        r.amp = _Autocast(r.autocast)
    devices = sorted({t.device.index or 0 for t in
                      list(carry) + list(xs_flat) + list(params)
                      if t.device.type == "cuda"})
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        devices = sorted(set(devices) | {torch.cuda.current_device()})
    replay = _Replay(_state_candidates(holder, ()), devices)
    r.first(carry, params, replay)
    if not r.params and not any(c.requires_grad for c in carry) and \
            not r.x_grad:
        # nothing needs a gradient: the loop, with step 1's results
        return _rest_plain(r, init, info)
    plan = _choose(r, memory, strategy, segment)
    if info is not None:
        info["plan"] = plan
        info["strategy"] = plan.strategy
        info["sizes"] = r.sizes
        info["trace"] = trace
    r.prepare(plan, carry)
    r.run(r.first_backward)
    r.sweep = False
    # the final carry through new tensor objects: autograd marks the
    # outputs of its node, and the stored states must stay unmarked
    r.outputs = tuple(c.detach() for c in r.final) + tuple(
        torch.stack([y[n] for y in r.ys]) for n in range(r.n_y))
    r.ys = None
    if info is not None:
        info["calls"] = r.calls  # so far: the forward sweep
        info["walked"] = r.walked
    out = _Scan.apply(r, *(tuple(carry) + tuple(xs_flat) + tuple(r.params)))
    nc = len(carry)
    return _build(carry_spec, out[:nc]), \
        _build(r.y_spec, out[nc:]) if r.y_spec is not None else None


def _rest_plain(r, init, info):
    """Steps 2..T as the plain loop, after step 1 showed that nothing needs
    a gradient."""
    probe = r.probe
    ys = [None] * r.length
    ys[r.pos(1)] = tuple(v.detach() for v in probe.y_out)
    carry = probe.carry
    with torch.no_grad():
        r.sweep = False
        for i in range(2, r.length + 1):
            carry, ys[r.pos(i)] = r.call(i, carry, False)
    if info is not None:
        info.update(plan=None, strategy=None, calls=r.calls, sizes=r.sizes)
    return _build(r.carry_spec, carry), _stack(r.y_spec, ys, r.n_y) \
        if r.y_spec is not None else None


def _empty(step, init, carry, xs, xs_spec, holder, info):
    """T = 0: init, and ys with no step.  The ys' structure and shapes come
    from one call of the step on zeros, whose effects (random draws,
    buffers it changes) are undone."""
    x = _build(xs_spec, [torch.zeros(s.shape[1:], dtype=s.dtype,
                                     device=s.device) for s in xs]) \
        if xs_spec is not None else None
    replay = _Replay(_state_candidates(holder, ()), [])
    saved = replay.rng()
    spec = _flatten(init, "init")[1]
    try:
        with torch.no_grad():
            out = step(_build(spec, [c.clone() for c in carry]), x)
    finally:
        replay.set_rng(saved)
        replay.after_first()
        replay.restore(None)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError("%s: step must return a pair (carry, y), not %s"
                        % (_NAME, _describe(out)))
    y, y_spec = _flatten(out[1], "the y step returned")
    if info is not None:
        info.update(plan=None, strategy=None, calls=0)
    return init, _build(y_spec, [v.new_empty((0,) + tuple(v.shape))
                                 for v in y])
