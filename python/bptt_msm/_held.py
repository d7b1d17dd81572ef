"""The bytes a graph's saved tensors hold, counted through
saved_tensors_hooks, and the sizes scan measures on its first step."""
import weakref

import torch

from ._common import _NAME


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
        if ledger.packed is not None:
            ledger.packed.append(weakref.ref(self))
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
    """The saved tensors one graph holds: storage key -> [count, bytes].
    With releasable, it keeps its _Packed too, so that release() can let
    go of them: a _Packed holds its tensor, and a saved output holds the
    graph's node, which holds the _Packed, a cycle the garbage collector
    cannot see; a graph that runs no backward (one dropped) would stay."""
    __slots__ = ("live", "packed")

    def __init__(self, releasable=False):
        self.live = {}
        self.packed = [] if releasable else None

    def release(self):
        """Let go of the saved tensors of a graph no backward will use."""
        for ref in self.packed or ():
            p = ref()
            if p is not None:
                p.tensor = None
        self.packed = []
        self.live.clear()


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
