"""The slow level of bptt_msm.torch.scan(..., offload=...): where a
two-level plan's write_hidden and write_internal ops put a state and its
read ops take it back from (doc/pytorch.md, "Offload"; the model is
doc/twolevel.md).

"cpu" keeps each state as CPU tensors (pinned where the state is on a CUDA
device, the copies then asynchronous on the current stream, which orders
them before anything that uses the state); "disk:DIR" writes each state's
raw bytes into a file of its own in a fresh folder made inside DIR,
removed with its files when the scan is done (after the backward pass, on
an error, or when the scan is dropped without one).

A state is moved memory block by memory block: every storage its tensors
live in (counted once, as the sizes scan plans with count them), except
those of the parameters and the xs, which stay where they are.  A read
builds new tensors over new blocks, with each tensor's dtype, offset,
shape and strides: the same bits.

A step's internal state is its autograd graph.  The graph itself (its
nodes, a few hundred bytes each) stays where it is; what moves is what it
holds: the tensors it saved (through the saved-tensor hooks scan runs every
kept step under, _held._Packed), its output carry and the replayed state
after it.  Once the fast copy is no longer in use, the graph's references
to the moved blocks are let go: the saved tensors' slots emptied, and the
tensors the graph is entered and left through (its carry in and out, its
ys), which autograd needs for their identity and shape only, pointed at
one zero element each.  A read fills the slots again before backward runs.
"""
import ctypes
import os
import shutil
import tempfile
import weakref

import torch

from ._held import _storage_key


def _untyped(t):
    """The untyped storage a tensor lives in (PyTorch 1.13 and 2)."""
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage()
    return t.storage().untyped()


def _raw(t):
    """The whole block t lives in, as a flat uint8 tensor over it."""
    return torch.empty(0, dtype=torch.uint8, device=t.device).set_(
        _untyped(t))


def _buffer(t):
    """A ctypes view of a contiguous CPU uint8 tensor's bytes."""
    return (ctypes.c_ubyte * t.numel()).from_address(t.data_ptr())


def snap_tensors(snap):
    """A replayed state's snapshot (_replay._Replay.snap) as its shape and
    its tensors."""
    if snap is None:
        return None, []
    rng, bufs = snap
    if rng is None:
        return (False, 0), list(bufs)
    return (True, len(rng[1])), [rng[0]] + list(rng[1]) + list(bufs)


def build_snap(spec, ts):
    if spec is None:
        return None
    has_rng, n_cuda = spec
    if not has_rng:
        return None, tuple(ts)
    return (ts[0], tuple(ts[1:1 + n_cuda])), tuple(ts[1 + n_cuda:])


class _Record:
    """One state on the slow level: where each tensor's bytes are, and, for
    an internal state, its graph."""
    __slots__ = ("layout", "blobs", "file", "bytes", "graph", "packs",
                 "n_carry", "snap_spec", "moved", "event", "__weakref__")


class SlowLevel:
    """One scan's slow level: put() writes a state, get() reads it back as
    new tensors, drop() lets it go; counts of both ways in `counts` (the
    dict info["offload"] shows)."""

    def __init__(self, where, outside, counts):
        self.where = where  # "cpu", or the directory of "disk:DIR"
        self.outside = outside
        self.counts = counts
        counts.update(where="cpu" if where == "cpu" else "disk",
                      dir=None, writes=0, reads=0, written_bytes=0,
                      read_bytes=0, held_bytes=0, peak_bytes=0)
        self.folder = None
        self.serial = 0
        self._cleanup = None
        self._zeros = {}

    # -- the folder of "disk:DIR" -----------------------------------------
    def _folder(self):
        if self.folder is None:
            self.folder = tempfile.mkdtemp(prefix="bptt-msm-", dir=self.where)
            self.counts["dir"] = self.folder
            self._cleanup = weakref.finalize(self, shutil.rmtree,
                                             self.folder, True)
        return self.folder

    def close(self):
        """Let go of every state; remove the folder (disk)."""
        if self._cleanup is not None:
            self._cleanup()
        self.folder = None

    # -- writing and reading ------------------------------------------------
    def put(self, tensors):
        """Write tensors (None allowed) to the slow level: a record."""
        rec = _Record()
        rec.graph = rec.packs = rec.snap_spec = rec.event = None
        rec.moved = False
        layout, blocks, where = [], [], {}
        for t in tensors:
            if t is None:
                layout.append(None)
                continue
            key, n = _storage_key(t)
            if key in self.outside:
                layout.append(t)  # a parameter's or an x's: not moved
                continue
            if key not in where:
                try:
                    raw = _raw(t)
                except (RuntimeError, NotImplementedError, TypeError):
                    # no plain block (sparse, MKL-DNN): it stays in place
                    layout.append(t)
                    continue
                where[key] = len(blocks)
                blocks.append(raw)
            layout.append((where[key], t.dtype, t.storage_offset(),
                           tuple(t.shape), t.stride()))
        rec.layout = layout
        rec.bytes = sum(b.numel() for b in blocks)
        if self.where == "cpu":
            rec.file = None
            rec.blobs = [(b.device, self._to_host(b, rec)) for b in blocks]
        else:
            rec.blobs = [(b.device, b.numel()) for b in blocks]
            self.serial += 1
            rec.file = os.path.join(self._folder(), "state-%d.bin"
                                    % self.serial)
            # a new file, never an existing one (O_EXCL)
            fd = os.open(rec.file, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                         0o600)
            with os.fdopen(fd, "wb") as f:
                for b in blocks:
                    host = b if b.device.type == "cpu" else b.to("cpu")
                    if host.numel():
                        f.write(_buffer(host))
        c = self.counts
        c["writes"] += 1
        c["written_bytes"] += rec.bytes
        c["held_bytes"] += rec.bytes
        c["peak_bytes"] = max(c["peak_bytes"], c["held_bytes"])
        return rec

    @staticmethod
    def _to_host(b, rec):
        if b.device.type == "cpu":
            return b.clone()
        dst = torch.empty(b.numel(), dtype=torch.uint8, pin_memory=True)
        dst.copy_(b, non_blocking=True)
        rec.event = torch.cuda.Event()
        rec.event.record()
        return dst

    def get(self, rec):
        """The tensors a record holds, new ones over new blocks (those of
        the parameters and the xs as they were)."""
        if rec.event is not None:  # the writes were asynchronous
            torch.cuda.current_stream().wait_event(rec.event)
        blocks = []
        if rec.file is None:
            for dev, host in rec.blobs:
                blocks.append(host.clone() if dev.type == "cpu" else
                              host.to(dev, non_blocking=True))
        else:
            with open(rec.file, "rb") as f:
                for dev, n in rec.blobs:
                    pin = dev.type == "cuda"
                    host = torch.empty(n, dtype=torch.uint8, pin_memory=pin)
                    if n and f.readinto(_buffer(host)) != n:
                        raise RuntimeError("bptt_msm.torch.scan: %s is "
                                           "shorter than written" % rec.file)
                    blocks.append(host.to(dev, non_blocking=True)
                                  if pin else host)
        out = []
        for entry in rec.layout:
            if entry is None or isinstance(entry, torch.Tensor):
                out.append(entry)
                continue
            k, dtype, offset, shape, stride = entry
            b = blocks[k]
            out.append(torch.empty(0, dtype=dtype, device=b.device).set_(
                _untyped(b), offset, shape, stride))
        c = self.counts
        c["reads"] += 1
        c["read_bytes"] += rec.bytes
        return out

    def drop(self, rec):
        if rec.file is not None:
            os.remove(rec.file)
            rec.file = None
        rec.blobs = rec.layout = None
        self.counts["held_bytes"] -= rec.bytes

    # -- hidden states: a carry and the replayed state after it ------------
    def put_hidden(self, carry, snap):
        spec, ts = snap_tensors(snap)
        rec = self.put(list(carry) + ts)
        rec.n_carry, rec.snap_spec = len(carry), spec
        return rec

    def get_hidden(self, rec):
        ts = self.get(rec)
        n = rec.n_carry
        return tuple(ts[:n]), build_snap(rec.snap_spec, ts[n:])

    # -- internal states: a step's graph (see the module's comment) --------
    def put_graph(self, g):
        packs = [p for p in (r() for r in g.ledger.packed)
                 if p is not None and p.tensor is not None]
        spec, ts = snap_tensors(g.snap)
        rec = self.put([p.tensor for p in packs] + list(g.carry) + ts)
        rec.graph, rec.packs = g, packs
        rec.n_carry, rec.snap_spec = len(g.carry), spec
        return rec

    def vacate(self, rec):
        """The fast copy of a written graph is no longer in use: let go of
        the blocks the slow level holds."""
        g = rec.graph
        if rec.moved:
            return
        rec.moved = True
        for p, entry in zip(rec.packs, rec.layout):
            if not isinstance(entry, torch.Tensor):
                p.tensor = None
        ends = list(g.carry_out) + list(g.y_out)
        if g.prev is None:  # a linked graph's carry in is its prev's output
            ends += list(g.carry_in) + list(g.carry_use)
        for t in ends:
            t.data = self._zero(t)
        g.carry = None
        g.snap = None
        _recount(g.ledger)

    def _zero(self, t):
        key = (t.dtype, t.device)
        z = self._zeros.get(key)
        if z is None:
            z = self._zeros[key] = torch.zeros((), dtype=t.dtype,
                                               device=t.device)
        return z.expand(t.shape)

    def get_graph(self, rec):
        """The graph's blocks back in fast memory, where they were."""
        if not rec.moved:
            self.vacate(rec)
        ts = self.get(rec)
        n = len(rec.packs)
        for p, t in zip(rec.packs, ts[:n]):
            p.tensor = t
        g = rec.graph
        g.carry = tuple(ts[n:n + rec.n_carry])
        g.snap = build_snap(rec.snap_spec, ts[n + rec.n_carry:])
        _recount(g.ledger)
        rec.moved = False
        return g


def _recount(ledger):
    """A ledger's count again after its saved tensors moved."""
    live = {}
    for ref in ledger.packed or ():
        p = ref()
        if p is None:
            continue
        if p.tensor is None:
            p.key = None
            continue
        p.key, n = _storage_key(p.tensor)
        if p.key in live:
            live[p.key][0] += 1
        else:
            live[p.key] = [1, n]
    ledger.live.clear()
    ledger.live.update(live)
