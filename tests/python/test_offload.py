"""tests/python/test_offload.py: two-level plans (doc/twolevel.md) from
Python, and bptt_msm.torch.scan(..., offload=...) running them
(tests/test_python.sh).

The planner through bptt_msm.plan_two_level (no torch needed): the ctypes
structures field by field against include/bptt/bptt.h and twolevel.h,
H-Revolve's numbers of doc/twolevel.md 4, no slow level equal to the
one-level plan, bad arguments refused.

scan with offload="cpu" and offload="disk:DIR", strategies hsm and msm, at
fast budgets small enough that the plan writes to the slow level (each
case asserts it does; msm's cases include internal states written and
read back), for an LSTMCell and a GRUCell step, plain, with dropout (on
the input and the carry), under torch.autocast("cpu", bfloat16) and with
BatchNorm: the final carry, the ys, every gradient (parameters, init,
xs), the generator after the backward pass and BatchNorm's statistics,
bit for bit (torch.equal) those of the
written-out loop (under autocast the loop with its cast cache off, as
test_field's autocast case explains) and of scan without offload; the
step called the plan's forward ops; the states and bytes written and read,
and the slow level's peak, those the validator counts for the plan; the
fast level's bytes within the plan's peak after every action; the folder
made inside DIR gone afterwards, DIR's own files untouched, and gone too
after an error in the forward pass, in the backward pass, and when the
scan is dropped without a backward pass.  Refusals: strategies other than
hsm and msm, bad offload, costs and slow budgets, an iterable xs.  On a
CUDA device (when there is one), the same on it with pinned host memory,
and less fast memory held than without offload.  Exit 0 with a one-line
summary, or 1 with each failure on stderr."""
import ctypes
import gc
import os
import re
import shutil
import sys
import tempfile
import time

import bptt_msm
from expect import FAILS, check, raises

try:
    import torch
    import torch.nn as nn
    import bptt_msm.torch  # noqa: F401 (bptt_msm.torch.scan)
except ImportError:  # the planner part runs; the rest is skipped by name
    torch = None

RAN = []
HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.join(HERE, "..", "..", "include", "bptt")


# ---- the planner ------------------------------------------------------------

_C_SIZES = {"int64_t": 8, "size_t": 8, "int": 4, "double": 8,
            "uint32_t": 4}


def c_fields(header, name):
    """[(field, bytes)] of `typedef struct { ... } name;` in a header."""
    text = open(os.path.join(INCLUDE, header)).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    m = re.search(r"typedef struct \{([^}]*)\}\s*%s;" % name, text)
    out = []
    for decl in m.group(1).split(";"):
        decl = decl.strip()
        if not decl:
            continue
        words = decl.replace(",", " , ").split()
        ctype = words[0] if words[0] != "const" else words[1]
        names = " ".join(words[1:]).split(",")
        for n in names:
            n = n.strip()
            out.append((n.lstrip("*").strip(),
                        8 if "*" in n or "*" in ctype else _C_SIZES[ctype]))
    return out


def layouts():
    """The ctypes structures hold the C fields, in order, of their sizes."""
    from bptt_msm import _twolevel
    for header, name, cls in [
            ("bptt.h", "bptt_plan", bptt_msm._Plan),
            ("bptt.h", "bptt_plan_stats", bptt_msm._Stats),
            ("twolevel.h", "bptt_slow_level", _twolevel._SlowLevel),
            ("twolevel.h", "bptt_twolevel_cost", _twolevel._TwoLevelCost)]:
        want = c_fields(header, name)
        got = [(f, ctypes.sizeof(t)) for f, t in cls._fields_]
        check(want == got, "%s: ctypes fields %s, the header's %s"
              % (name, got, want))
        RAN.append("layout " + name)


def planner():
    P = bptt_msm.plan_two_level
    # doc/twolevel.md 4: N = 1000, 10 memory slots, wd = rd = 2
    p = P(1000, 1, 1, "10slots", "hsm", slow_memory="10slots", write_cost=2,
          read_cost=2)
    check((p.forward_ops, p.slow_writes, p.slow_reads, p.cost) ==
          (3797, 10, 15, 3847.0), "hsm 10/10 slots: %s"
          % ((p.forward_ops, p.slow_writes, p.slow_reads, p.cost),))
    check(p.slow_peak_bytes <= 10 and p.peak_bytes <= 10,
          "hsm 10/10 slots: peaks %d and %d" % (p.peak_bytes,
                                                 p.slow_peak_bytes))
    p = P(1000, 1, 1, "10slots", "hsm", slow_memory="inf", write_cost=2,
          read_cost=2)
    check((p.forward_ops, p.cost) == (2903, 3243.0),
          "hsm 10 slots, unlimited: %s" % ((p.forward_ops, p.cost),))
    check(p.slow_memory_bytes is None, "'inf': no bound")
    RAN.append("H-Revolve's points")
    # no slow level: the one-level plan's cost; bytes as plan() counts them
    for strat in bptt_msm.TWO_LEVEL_STRATEGIES:
        for h, s, mem in [(8, 36, "3slots"), (6, 21, 200), (1, 4, "30%")]:
            for T in (1, 5, 30):
                try:
                    one = bptt_msm.plan(T, h, s, mem, strat)
                except bptt_msm.InfeasibleBudget:
                    raises(bptt_msm.InfeasibleBudget, lambda: P(
                        T, h, s, mem, strat, slow_memory=0),
                        "%s %s T=%d: feasible on two levels" % (strat, mem, T))
                    continue
                two = P(T, h, s, mem, strat, slow_memory=0)
                check(two.forward_ops == one.forward_ops and
                      two.slow_writes == 0 and two.memory_bytes ==
                      one.memory_bytes and two.peak_bytes <= two.memory_bytes,
                      "%s %d %d %s T=%d: no slow level, %d forward ops, one "
                      "level %d" % (strat, h, s, mem, T, two.forward_ops,
                                    one.forward_ops))
                RAN.append("no slow level %s %s T=%d" % (strat, mem, T))
    # free moves to an unlimited slow level: hsm 2t - 1, msm t
    for strat, want in (("hsm", 39), ("msm", 20)):
        p = P(20, 8, 36, "1slots", strat, write_cost=0, read_cost=0)
        check(p.forward_ops == want, "%s, free moves: %d forward ops, not %d"
              % (strat, p.forward_ops, want))
        check(p.slow_write_bytes == sum(
            8 if a == "write_hidden" else 36 for a, _ in p.actions
            if a.startswith("write")), strat + ": bytes written")
    raises(ValueError, lambda: P(10, 1, 4, "3slots", "chen"),
           "two-level chen", "hsm or msm")
    for bad in (-1, float("nan"), float("inf"), 2e6):
        raises(ValueError, lambda: P(10, 1, 4, "3slots", "hsm",
                                     write_cost=bad), "write cost %r" % bad)
        raises(ValueError, lambda: P(10, 1, 4, "3slots", "hsm",
                                     read_cost=bad), "read cost %r" % bad)
    raises(TypeError, lambda: P(10, 1, 4, "3slots", "hsm", write_cost=True),
           "write cost True")
    raises(ValueError, lambda: P(10, 1, 4, "3slots", "hsm",
                                 slow_memory="lots"), "slow_memory 'lots'",
           "slow_memory")
    e = raises(bptt_msm.InfeasibleBudget, lambda: P(10, 8, 32, 7, "msm"),
               "below one carry", "smallest feasible budget is 8")
    check(e is None or e.min_memory_bytes == 8, "min_memory_bytes")


# ---- the models -------------------------------------------------------------

T, B, X, H = 12, 3, 4, 6


class Step(nn.Module if torch else object):
    """An LSTMCell or a GRUCell as a scan step, with dropout on the input
    and the carry when p > 0, BatchNorm on the output with bn (its running
    statistics: buffers scan replays); the carry kept in float32 (under
    autocast the cell's outputs are bfloat16)."""

    def __init__(self, kind, p, bn=False):
        super().__init__()
        self.kind = kind
        cell = nn.LSTMCell if kind == "lstm" else nn.GRUCell
        self.cell = cell(X, H)
        self.drop = nn.Dropout(p)
        self.bn = nn.BatchNorm1d(H) if bn else nn.Identity()

    def forward(self, carry, x):
        x = self.drop(x)
        if self.kind == "lstm":
            h, c = self.cell(x, (self.drop(carry[0]), carry[1]))
            h = self.bn(h.float())
            return (h, c.float()), h
        h = self.bn(self.cell(x, self.drop(carry)).float())
        return h, h


def loop(step, init, xs):
    carry, ys = init, []
    for t in range(xs.shape[0]):
        carry, y = step(carry, xs[t])
        ys.append(y)
    return carry, torch.stack(ys)


def run(kind, variant, fn):
    """fn(step, init, xs) -> (carry, ys) under the variant (dropout: the
    seed set; amp: inside autocast, its cast cache off), then backward of a
    loss on all of them: every value and gradient, the generator after."""
    torch.manual_seed(5)
    step = Step(kind, 0.3 if variant == "dropout" else 0.0,
                variant == "batchnorm")
    xs = torch.randn(T, B, X).requires_grad_()
    h0 = torch.randn(B, H).requires_grad_()
    init = (h0, torch.zeros(B, H)) if kind == "lstm" else h0
    torch.manual_seed(9)
    with torch.autocast("cpu", dtype=torch.bfloat16,
                        enabled=variant == "amp", cache_enabled=False):
        carry, ys = fn(step, init, xs)
    flat = list(carry) if kind == "lstm" else [carry]
    w = torch.linspace(-1, 1, ys.numel()).reshape(ys.shape)
    loss = (ys.float() * w).sum() + sum((c.float() ** 2).sum() for c in flat)
    loss.backward()
    out = {"carry": [c.detach() for c in flat], "ys": ys.detach(),
           "grad xs": xs.grad, "grad h0": h0.grad,
           "rng after": torch.rand(3)}
    for n, p in step.named_parameters():
        out["grad " + n] = p.grad
    for n, b in step.named_buffers():
        out["buffer " + n] = b
    return out


def differ(a, b):
    """The entries of two outcomes that are not equal bit for bit."""
    bad = []
    for k in sorted(a):
        x, y = a[k], b.get(k)
        xs, ys = (x, y) if isinstance(x, list) else ([x], [y])
        if y is None or len(xs) != len(ys) or not all(
                u is not None and v is not None and u.dtype == v.dtype and
                torch.equal(u, v) for u, v in zip(xs, ys)):
            bad.append(k)
    return bad


# (strategy, fast memory, slow memory, write cost, read cost): each writes
# to the slow level; the msm ones write internal states, and the last two
# (dropout, and the plain LSTM) advance from one read back (read_internal
# then advance).  msm with a bounded slow level is left out with dropout:
# the generator's state (5056 bytes) makes the units 8 bytes and the table
# O(t m d) in them, seconds where the rest take milliseconds
CONFIGS = [("hsm", "2slots", "inf", 0.5, 0.5),
           ("hsm", "3slots", "2slots", 0.2, 0.3),
           ("msm", "3slots", "inf", 0.0, 0.0),
           ("msm", "2slots", "inf", 0.05, 0.05),
           ("msm", "1slots", "inf", 1.0, 0.1),
           ("msm", "3slots", "6slots", 0.0, 0.0)]


VARIANTS = ("plain", "dropout", "amp", "batchnorm")


def listing(d):
    return sorted(os.listdir(d))


def cells(tmp):
    """Every model, variant, configuration and slow level against the loop
    and against scan without offload."""
    internal, onward = set(), set()
    for kind in ("lstm", "gru"):
        for variant in VARIANTS:
            ref = run(kind, variant, loop)
            for strat, mem, slow, wd, rd in CONFIGS:
                if variant == "dropout" and strat == "msm" and slow != "inf":
                    continue
                one = run(kind, variant, lambda s, i, x: bptt_msm.torch.scan(
                    s, i, x, memory=mem, strategy=strat))
                bad = differ(ref, one)
                check(not bad, "%s %s %s %s without offload: %s differ from "
                      "the loop" % (kind, variant, strat, mem, bad))
                for where in ("cpu", "disk"):
                    tag = "%s %s %s %s slow %s wd %g rd %g %s" % (
                        kind, variant, strat, mem, slow, wd, rd, where)
                    off = "cpu" if where == "cpu" else "disk:" + tmp
                    info = {}
                    before = listing(tmp)
                    got = run(kind, variant,
                              lambda s, i, x: bptt_msm.torch.scan(
                                  s, i, x, memory=mem, strategy=strat,
                                  offload=off, slow_memory=slow,
                                  write_cost=wd, read_cost=rd, info=info))
                    RAN.append(tag)
                    bad = differ(ref, got)
                    check(not bad, tag + ": %s differ from the loop" % bad)
                    bad = differ(one, got)
                    check(not bad, tag + ": %s differ from scan without "
                          "offload" % bad)
                    moved(tag, info)
                    p = info["plan"]
                    a = p.actions
                    if any(op == "write_internal" for op, _ in a):
                        internal.add((kind, variant, where))
                    if any(a[k][0] == "read_internal" and
                           a[k + 1][0] == "advance" for k in range(len(a))):
                        onward.add((kind, variant))
                    o = info["offload"]
                    if where == "disk":
                        check(o["dir"] is not None and
                              os.path.dirname(o["dir"]) == tmp and
                              not os.path.exists(o["dir"]),
                              tag + ": the folder %r not made in %s, or not "
                              "removed" % (o["dir"], tmp))
                    check(listing(tmp) == before, tag + ": %s left %s"
                          % (tmp, listing(tmp)))
    want = {(k, v, w) for k in ("lstm", "gru")
            for v in VARIANTS for w in ("cpu", "disk")}
    check(internal == want, "msm wrote no internal state in %s"
          % sorted(want - internal))
    want = {("lstm", "dropout"), ("gru", "dropout"), ("lstm", "plain")}
    check(want <= onward, "no plan advanced from a state read back in %s"
          % sorted(want - onward))


def moved(tag, info):
    """What the slow level saw is what the validator counts for the plan;
    the fast level within the plan's peak after every action."""
    p, o = info["plan"], info["offload"]
    check(p.slow_writes > 0, tag + ": the plan writes nothing")
    check(info["calls"] == p.forward_ops, "%s: step called %d times, the "
          "plan has %d forward ops" % (tag, info["calls"], p.forward_ops))
    got = (o["writes"], o["reads"], o["written_bytes"], o["read_bytes"],
           o["peak_bytes"], o["held_bytes"])
    want = (p.slow_writes, p.slow_reads, p.slow_write_bytes,
            p.slow_read_bytes, p.slow_peak_bytes, 0)
    check(got == want, "%s: moved (writes, reads, bytes written, bytes "
          "read, peak, held at the end) %s, the plan's %s"
          % (tag, got, want))
    s = info["sizes"]
    held = max(h for _, _, h, _ in info["trace"])
    work = max(w for _, _, _, w in info["trace"])
    check(held <= p.peak_bytes and work <= s.internal_bytes,
          "%s: fast level held %d bytes (plan's peak %d), working %d "
          "(internal state %d)" % (tag, held, p.peak_bytes, work,
                                   s.internal_bytes))


def frees(tmp):
    """A written graph's tensors leave fast memory once it is no longer in
    use: at the end of the forward pass of a plan that writes every
    internal state (msm, moves free), the tensors the steps saved are gone
    from every step but the last (whose backward op follows), where
    without offload, keeping them all, none is."""
    import weakref
    torch.manual_seed(2)
    W = (torch.randn(H, H) * 0.5).requires_grad_()
    U = torch.randn(X, H).requires_grad_()
    xs = torch.randn(T, B, X)
    h0 = torch.randn(B, H).requires_grad_()
    saved = []

    def step(h, x):
        a = x @ U + h @ W
        saved.append(weakref.ref(a))  # mul saves a itself
        h = a * torch.sigmoid(a)
        return h, h
    for off, most in ((None, None), ("cpu", 1), ("disk:" + tmp, 1)):
        saved.clear()
        kw = {} if off is None else dict(offload=off, write_cost=0,
                                         read_cost=0)
        info = {}
        c, ys = bptt_msm.torch.scan(step, h0, xs, memory="100%" if off is
                                    None else "1slots", strategy="msm",
                                    info=info, **kw)
        alive = sum(r() is not None for r in saved)
        if off is None:
            check(alive == T, "without offload %d of %d steps' saved "
                  "tensors alive" % (alive, T))
        else:
            check(info["plan"].slow_writes == T - 1 and alive <= most,
                  "%s: %d writes, %d of %d steps' saved tensors still in "
                  "fast memory" % (off, info["plan"].slow_writes, alive, T))
        ys.sum().backward()
        del c, ys
    RAN.append("frees")


# ---- errors, refusals -------------------------------------------------------

class Boom(Exception):
    pass


def cleanup(tmp):
    """The folder goes after an error forward and backward, and with a
    scan dropped before its backward pass; DIR's files stay as they were."""
    keep = os.path.join(tmp, "keep.txt")
    with open(keep, "w") as f:
        f.write("mine")
    torch.manual_seed(1)
    cell = nn.GRUCell(X, H)
    xs = torch.randn(T, B, X)
    h0 = torch.randn(B, H).requires_grad_()
    kw = dict(memory="2slots", strategy="hsm", offload="disk:" + tmp,
              write_cost=0.1, read_cost=0.1)
    calls = [0]

    def step(h, x, fail_at=None):
        calls[0] += 1
        if calls[0] == fail_at:
            raise Boom()
        h = cell(x, h)
        return h, h
    for fail_at, where in ((6, "forward"), (T + 3, "backward")):
        calls[0] = 0

        def go():
            c, ys = bptt_msm.torch.scan(
                lambda h, x: step(h, x, fail_at), h0, xs, **kw)
            ys.sum().backward()
        raises(Boom, go, "an error in the " + where)
        check(listing(tmp) == ["keep.txt"], "after an error in the %s: %s "
              "holds %s" % (where, tmp, listing(tmp)))
    info = {}
    c, ys = bptt_msm.torch.scan(lambda h, x: step(h, x), h0, xs, info=info,
                                **kw)
    check(info["offload"]["dir"] is not None and
          os.path.isdir(info["offload"]["dir"]),
          "before the backward pass: no folder")
    del c, ys
    gc.collect()
    check(listing(tmp) == ["keep.txt"], "a scan dropped: %s holds %s"
          % (tmp, listing(tmp)))
    with open(keep) as f:
        check(f.read() == "mine", "DIR's own file changed")
    os.remove(keep)
    RAN.append("cleanup")


def refusals(tmp):
    scan = bptt_msm.torch.scan
    cell = nn.GRUCell(X, H)
    xs = torch.randn(T, B, X)
    h0 = torch.randn(B, H).requires_grad_()
    for strat in ("chen", "full", "ism", "auto", "msm-paper"):
        raises(ValueError, lambda: scan(cell, h0, xs, strategy=strat,
                                        offload="cpu"),
               "offload with " + strat, "hsm")
    e = raises(ValueError, lambda: scan(cell, h0, xs, strategy="chen",
                                        offload="cpu"), "offload with chen")
    check(e is None or "msm" in str(e), "the refusal names msm")
    raises(ValueError, lambda: scan(cell, h0, xs, offload="gpu"),
           "offload 'gpu'", "'cpu' or 'disk:DIR'")
    raises(TypeError, lambda: scan(cell, h0, xs, offload=1), "offload 1")
    raises(ValueError, lambda: scan(cell, h0, xs, offload="disk:"),
           "offload 'disk:'", "no directory")
    missing = os.path.join(tmp, "missing")
    raises(ValueError, lambda: scan(cell, h0, xs, offload="disk:" + missing),
           "a missing DIR", "not an existing directory")
    check(not os.path.exists(missing), "a missing DIR was made")
    a_file = os.path.join(tmp, "file")
    open(a_file, "w").close()
    raises(ValueError, lambda: scan(cell, h0, xs, offload="disk:" + a_file),
           "DIR a file", "not an existing directory")
    os.remove(a_file)
    for name in ("write_cost", "read_cost"):
        for bad in (-1.0, float("nan"), float("inf")):
            raises(ValueError, lambda: scan(cell, h0, xs, offload="cpu",
                                            **{name: bad}),
                   "%s %r" % (name, bad), name)
        raises(TypeError, lambda: scan(cell, h0, xs, offload="cpu",
                                       **{name: "1"}), name + " '1'")
    for name, v in (("slow_memory", "1MiB"), ("write_cost", 1.0),
                    ("read_cost", 2.0)):
        raises(ValueError, lambda: scan(cell, h0, xs, **{name: v}),
               name + " without offload", "offload")
    raises(ValueError, lambda: scan(cell, h0, xs, offload="cpu",
                                    slow_memory="12"),
           "slow_memory '12'", "slow_memory")
    raises(ValueError, lambda: scan(cell, h0, iter(list(xs)), memory="3slots",
                                    offload="cpu"),
           "offload over an iterable", "length")
    raises(bptt_msm.InfeasibleBudget, lambda: scan(cell, h0, xs, memory=8,
                                                   offload="cpu"),
           "offload below one carry", "smallest feasible budget")
    # no gradient: the loop, nothing written
    info = {}
    with torch.no_grad():
        scan(cell, h0, xs, offload="disk:" + tmp, info=info)
    check(info.get("plan") is None and listing(tmp) == [],
          "under no_grad: a plan, or files")
    RAN.append("refusals")


def cuda(tmp):
    """On a CUDA device: bit for bit with scan without offload, the bytes
    moved the plan's, and, with every internal state on the slow level,
    less fast memory held at the peak than without offload."""
    dev = torch.device("cuda")
    torch.manual_seed(3)
    cell = nn.LSTMCell(64, 256).to(dev)
    xs = torch.randn(40, 32, 64, device=dev).requires_grad_()
    h0 = torch.randn(32, 256, device=dev).requires_grad_()
    init = (h0, torch.zeros_like(h0))

    def go(**kw):
        cell.zero_grad(set_to_none=True)
        xs.grad = h0.grad = None
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        info = {}
        c, ys = bptt_msm.torch.scan(cell, init, xs, info=info, **kw)
        (ys.sum() + c[1].sum()).backward()
        torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() - base
        grads = [xs.grad, h0.grad] + [p.grad for p in cell.parameters()]
        return [ys.detach(), c[0].detach()] + [g.clone() for g in grads], \
            info, peak
    ref, _, peak_one = go(memory="100%", strategy="full")
    for strat, mem, wd in (("msm", "3slots", 0.0), ("hsm", "3slots", 0.2),
                           ("msm", "5slots", 0.05)):
        for off in ("cpu", "disk:" + tmp):
            tag = "cuda %s %s %s" % (strat, mem, off[:4])
            got, info, peak = go(memory=mem, strategy=strat, offload=off,
                                 write_cost=wd, read_cost=wd)
            RAN.append(tag)
            check(all(torch.equal(a, b) for a, b in zip(ref, got)),
                  tag + ": differs from full BPTT")
            moved(tag, info)
            if wd == 0.0:
                check(peak < peak_one / 2, "%s: peak %d bytes, full BPTT's "
                      "%d" % (tag, peak, peak_one))
    check(listing(tmp) == [], "cuda: %s holds %s" % (tmp, listing(tmp)))


def main():
    start = time.monotonic()
    cases = [layouts, planner]
    tmp = tempfile.mkdtemp(prefix="test-offload-")
    if torch is None:
        print("SKIP: test_offload: scan with offload: python3 cannot import "
              "torch (apt-get install python3-torch)")
    else:
        cases += [lambda: cells(tmp), lambda: frees(tmp), lambda: cleanup(tmp),
                  lambda: refusals(tmp)]
        if torch.cuda.is_available():
            cases.append(lambda: cuda(tmp))
    try:
        for fn in cases:
            t0 = time.monotonic()
            try:
                fn()
            except Exception as e:
                import traceback
                tb = traceback.format_exc().rstrip().splitlines()
                check(False, "%s: raised %s: %s (%s)"
                      % (getattr(fn, "__name__", "case"), type(e).__name__,
                         e, tb[-3].strip()))
            if "-v" in sys.argv:
                print("case %d: %.1f s" % (cases.index(fn),
                                           time.monotonic() - t0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    took = time.monotonic() - start
    if FAILS:
        sys.stderr.write("test_offload: %d failure(s) (%.1f s)\n"
                         % (len(FAILS), took))
        return 1
    print("test_offload: all passed (%d runs, %.1f s)" % (len(RAN), took))
    return 0


if __name__ == "__main__":
    sys.exit(main())
