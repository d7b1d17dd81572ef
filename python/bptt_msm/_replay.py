"""What a recomputed step must see as its first run did: the random
number generators, the buffers it changes, the autocast state; and the
caller's hooks kept out of scan's own engine runs."""
import torch

from ._common import _BUFFER_COPY_LIMIT, _NAME, _TENSOR_COPY_LIMIT, _TORCH2


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
