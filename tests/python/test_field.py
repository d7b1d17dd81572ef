"""tests/python/test_field.py: bptt_msm.torch.scan under the conditions of
real training, against the written-out loop.

Every case runs a step through scan and through the plain loop

    carry = init; ys = []
    for t in range(T):        # reverse=True: T-1 down to 0, ys[t] from xs[t]
        carry, y = step(carry, xs[t])
        ys.append(y)              # then stacked, leaf by leaf

with the same seeds, and compares the final carry, the ys, every gradient
and whatever state the case is about (the generators after the backward
pass, BatchNorm's statistics, a counter buffer, hook calls) bit for bit
with torch.equal, unless the case says otherwise (autocast's cached loop).
The plans are small ("3slots", hsm) so that steps are recomputed, and each
case shows that what it checks matters (another seed gives other numbers,
a plan recomputed).  Cases: dropout (a module's and F.dropout), BatchNorm,
a counter buffer, LayerNorm with dropout, autocast, register_hook (calls
and a scaling hook), gradient accumulation, torch.autograd.grad, DDP over
two processes (tests/python/ddp_worker.py), two threads, a parameter used
from step 3 on, an unused one, in-place changes between forward and
backward, integer and boolean carries changed in place, the three cells
given as they are, nests (dicts, namedtuples, lists, None), y None, T = 0,
xs=None with length, reverse, the memory argument's forms and errors, the
default budget, a captured non-leaf, a carry that is x_t, every strategy.
Exit 0 with a one-line summary, or 1 with each failure on stderr."""
import collections
import copy
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

import bptt_msm
import bptt_msm.torch as bt
from expect import FAILS, check, raises

CASES = []
T, B, X, H = 12, 3, 4, 6


def case(fn):
    CASES.append(fn)
    return fn


# ---- nests, the loop, the comparison ----------------------------------------

def is_nt(v):
    return isinstance(v, tuple) and hasattr(type(v), "_fields")


def tmap(fn, tree):
    if isinstance(tree, torch.Tensor):
        return fn(tree)
    if tree is None:
        return None
    if is_nt(tree):
        return type(tree)(*[tmap(fn, v) for v in tree])
    if isinstance(tree, tuple):
        return tuple(tmap(fn, v) for v in tree)
    if isinstance(tree, list):
        return [tmap(fn, v) for v in tree]
    if isinstance(tree, dict):
        return {k: tmap(fn, v) for k, v in tree.items()}
    raise TypeError("not a nest of tensors: %r" % (tree,))


def tzip(fn, trees):
    """fn over the lists of corresponding leaves of trees (one structure)."""
    t0 = trees[0]
    if isinstance(t0, torch.Tensor):
        return fn(list(trees))
    if t0 is None:
        return None
    if is_nt(t0):
        return type(t0)(*[tzip(fn, [t[k] for t in trees])
                          for k in range(len(t0))])
    if isinstance(t0, tuple):
        return tuple(tzip(fn, [t[k] for t in trees]) for k in range(len(t0)))
    if isinstance(t0, list):
        return [tzip(fn, [t[k] for t in trees]) for k in range(len(t0))]
    if isinstance(t0, dict):
        return {k: tzip(fn, [t[k] for t in trees]) for k in t0}
    raise TypeError("not a nest of tensors: %r" % (t0,))


def leaves(tree):
    if isinstance(tree, torch.Tensor):
        return [tree]
    if tree is None:
        return []
    if isinstance(tree, dict):
        return [v for k in sorted(tree) for v in leaves(tree[k])]
    return [v for t in tree for v in leaves(t)]


def loop(step, init, xs=None, length=None, reverse=False):
    """The written-out loop scan stands for."""
    n = length if xs is None else leaves(xs)[0].shape[0]
    carry, ys = init, [None] * n
    for t in (range(n - 1, -1, -1) if reverse else range(n)):
        x = None if xs is None else tmap(lambda a: a[t], xs)
        carry, ys[t] = step(carry, x)
    return carry, tzip(torch.stack, ys)


def same_tree(a, b):
    """One structure (container types, keys, namedtuple classes), each
    leaf equal: dtype, shape and every bit."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) \
            and a.dtype == b.dtype and a.shape == b.shape and \
            torch.equal(a.detach(), b.detach())
    if a is None or b is None:
        return a is None and b is None
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return sorted(a) == sorted(b) and all(same_tree(a[k], b[k])
                                              for k in a)
    return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))


def weights(v):
    return torch.arange(v.numel(), dtype=torch.float32).reshape(v.shape) \
        .mul(0.7).sin()


def loss_of(carry, ys):
    """A loss on every floating leaf of the final carry and the ys."""
    total = 0
    for v in leaves(carry) + leaves(ys):
        if v.dtype.is_floating_point:
            total = total + (v.float() * weights(v)).sum()
    return total


def detach(tree):
    return tmap(lambda t: t.detach().clone(), tree)


def outcome(fn, named, loss=loss_of, extra=None):
    """fn() -> (carry, ys); backward() of the loss: the carry, the ys, each
    named leaf's .grad ("grad NAME"), and extra()'s entries, computed after
    the backward pass."""
    for _, p in named:
        p.grad = None
    carry, ys = fn()
    loss(carry, ys).backward()
    out = {"carry": detach(carry), "ys": detach(ys)}
    for n, p in named:
        out["grad " + n] = None if p.grad is None else p.grad.clone()
        p.grad = None
    if extra is not None:
        out.update(extra())
    return out


def compare(what, ref, got):
    if not check(sorted(ref) == sorted(got), "%s: entries %s, the loop's %s"
                 % (what, sorted(got), sorted(ref))):
        return False
    bad = [k for k in sorted(ref) if not same_tree(ref[k], got[k])]
    return check(not bad, "%s: differs from the loop in %s"
                 % (what, ", ".join(bad)))


def same(a, b):
    """Two lists of gradients equal, None where the other is None."""
    return len(a) == len(b) and all(
        (x is None and y is None) or
        (x is not None and y is not None and torch.equal(x, y))
        for x, y in zip(a, b))


def all_grads(what, ref):
    """The loop's side: every named leaf got a gradient (so that equal
    means something)."""
    none = [k for k in ref if k.startswith("grad ") and ref[k] is None]
    check(not none, "%s: the loop gives no gradient for %s" % (what, none))


def named_module(m, **leaves_):
    return sorted(leaves_.items()) + list(m.named_parameters())


SWEEP = [("full", "100%"), ("chen", "100%"), ("chen", "30%"),
         ("hsm", "30%"), ("hsm", "3slots"), ("msm", "100%"), ("msm", "30%"),
         ("msm", "3slots")]
SMALL = [("hsm", "3slots"), ("msm", "3slots"), ("chen", "30%"),
         ("full", "100%")]


def sweep(what, ref, run, length, plans=SWEEP, least=3):
    """run(strategy, memory, info) -> outcome, under each plan (infeasible
    ones skipped): equal to ref, the step called the plan's forward ops
    times; at least `least` plans ran and one recomputed."""
    ran = recomputed = 0
    for strat, mem in plans:
        info = {}
        tag = "%s, %s %s" % (what, strat, mem)
        try:
            got = run(strat, mem, info)
        except bptt_msm.InfeasibleBudget:
            continue
        except Exception as e:
            check(False, "%s: raised %s: %s" % (tag, type(e).__name__, e))
            continue
        ran += 1
        compare(tag, ref, got)
        p = info.get("plan")
        if check(p is not None, tag + ": info has no plan"):
            check(info.get("calls") == p.forward_ops,
                  "%s: step called %s times, the plan has %d forward ops"
                  % (tag, info.get("calls"), p.forward_ops))
            recomputed += p.forward_ops > length
    check(ran >= least, "%s: only %d plans ran" % (what, ran))
    check(recomputed > 0, "%s: no plan recomputed a step" % what)


def data(seed, T_=T, grad=True):
    torch.manual_seed(seed)
    xs = torch.randn(T_, B, X).requires_grad_(grad)
    h0 = torch.randn(B, H).requires_grad_(grad)
    return xs, h0


# ---- random numbers, module state, autocast ---------------------------------

class DropStep(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.inp = nn.Linear(X, H)
        self.rec = nn.Linear(H, H)
        self.drop = nn.Dropout(p)

    def forward(self, h, x):
        h = torch.tanh(self.inp(x) + self.rec(self.drop(h)))
        return h, self.drop(h)


@case
def dropout_module():
    """nn.Dropout(0.3) in a module step: the masks of the first run
    replayed, and the generator after the backward pass the loop's."""
    xs, h0 = data(1)
    base = DropStep(0.3)

    def go(fn_of, seed=7):
        m = copy.deepcopy(base)

        def fn():
            torch.manual_seed(seed)
            return fn_of(m)
        return outcome(fn, named_module(m, xs=xs, h0=h0),
                       extra=lambda: {"rng after": torch.rand(4)})
    ref = go(lambda m: loop(m, h0, xs))
    all_grads("dropout module", ref)
    other = go(lambda m: loop(m, h0, xs), seed=8)
    check(not same_tree(ref["ys"], other["ys"]) and
          not same_tree(ref["grad rec.weight"], other["grad rec.weight"]),
          "dropout module: the seed does not matter (the case proves nothing)")
    sweep("dropout module", ref, lambda s, m_, info: go(
        lambda m: bt.scan(m, h0, xs, memory=m_, strategy=s, info=info)), T)


@case
def dropout_closure():
    """F.dropout(p=0.5) in a closure over captured leaves."""
    xs, h0 = data(2)
    torch.manual_seed(3)
    W = (torch.randn(H, H) * 0.5).requires_grad_()
    U = torch.randn(X, H).requires_grad_()

    def f(h, x):
        h = torch.tanh(F.dropout(h, 0.5, training=True) @ W + x @ U)
        return h, h
    named = [("xs", xs), ("h0", h0), ("W", W), ("U", U)]

    def go(fn, seed=11):
        def run():
            torch.manual_seed(seed)
            return fn()
        return outcome(run, named, extra=lambda: {"rng after": torch.rand(4)})
    ref = go(lambda: loop(f, h0, xs))
    all_grads("F.dropout", ref)
    check(not same_tree(ref["grad W"], go(lambda: loop(f, h0, xs),
                                          seed=12)["grad W"]),
          "F.dropout: the seed does not matter")
    sweep("F.dropout closure", ref, lambda s, m, info: go(
        lambda: bt.scan(f, h0, xs, memory=m, strategy=s, info=info)), T)


class BNStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(X, H)
        self.rec = nn.Linear(H, H, bias=False)
        self.bn = nn.BatchNorm1d(H)

    def forward(self, h, x):
        h = torch.tanh(self.bn(self.inp(x) + self.rec(h)))
        return h, h


def buffers_of(m):
    return {"buffer " + n: b.clone() for n, b in m.named_buffers()}


@case
def batchnorm():
    """BatchNorm1d in training mode: gradients, and running_mean,
    running_var, num_batches_tracked after forward and backward those of
    the loop (updated once per step, never by a recomputation)."""
    xs, h0 = data(4)
    torch.manual_seed(5)
    base = BNStep()

    def go(fn_of):
        m = copy.deepcopy(base)
        return outcome(lambda: fn_of(m), named_module(m, xs=xs, h0=h0),
                       extra=lambda: buffers_of(m))
    ref = go(lambda m: loop(m, h0, xs))
    all_grads("batchnorm", ref)
    check(int(ref["buffer bn.num_batches_tracked"]) == T and
          not torch.equal(ref["buffer bn.running_mean"], torch.zeros(H)),
          "batchnorm: the loop's statistics %s" % ref)
    sweep("batchnorm", ref, lambda s, mem, info: go(
        lambda m: bt.scan(m, h0, xs, memory=mem, strategy=s, info=info)), T)


class CountStep(nn.Module):
    """A counter buffer incremented in place at every step, and read."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(X, H)
        self.rec = nn.Linear(H, H)
        self.register_buffer("count", torch.zeros((), dtype=torch.long))

    def forward(self, h, x):
        self.count += 1
        h = torch.tanh(self.inp(x) + self.rec(h) + 0.3 * self.count)
        return h, h


@case
def counter_buffer():
    """A buffer the step increments in place: T after forward and backward,
    and each recomputed step reads the value its first run read."""
    xs, h0 = data(6)
    torch.manual_seed(6)
    base = CountStep()

    def go(fn_of, start=0):
        m = copy.deepcopy(base)
        m.count.fill_(start)
        return outcome(lambda: fn_of(m), named_module(m, xs=xs, h0=h0),
                       extra=lambda: buffers_of(m))
    ref = go(lambda m: loop(m, h0, xs))
    all_grads("counter", ref)
    check(int(ref["buffer count"]) == T, "counter: the loop's count")
    check(not same_tree(ref["grad rec.weight"],
                        go(lambda m: loop(m, h0, xs), 3)["grad rec.weight"]),
          "counter: the count does not matter")
    sweep("counter buffer", ref, lambda s, mem, info: go(
        lambda m: bt.scan(m, h0, xs, memory=mem, strategy=s, info=info)), T)


class LNDropStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(X, H)
        self.ln = nn.LayerNorm(H)
        self.drop = nn.Dropout(0.25)

    def forward(self, h, x):
        h = self.ln(self.cell(self.drop(x), h))
        return h, self.drop(h)


@case
def layernorm_dropout():
    """A GRUCell, LayerNorm and dropout on the input and on y."""
    xs, h0 = data(8)
    torch.manual_seed(9)
    base = LNDropStep()

    def go(fn_of):
        m = copy.deepcopy(base)

        def fn():
            torch.manual_seed(21)
            return fn_of(m)
        return outcome(fn, named_module(m, xs=xs, h0=h0),
                       extra=lambda: {"rng after": torch.rand(4)})
    ref = go(lambda m: loop(m, h0, xs))
    all_grads("layernorm", ref)
    sweep("layernorm and dropout", ref, lambda s, mem, info: go(
        lambda m: bt.scan(m, h0, xs, memory=mem, strategy=s, info=info)), T)


class AmpStep(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(X, H)
        self.rec = nn.Linear(H, H)

    def forward(self, h, x):
        h = torch.tanh(self.rec(h) + self.inp(x)).float()
        return h, h


@case
def autocast_bf16():
    """Forward inside torch.autocast("cpu", bfloat16), backward outside:
    the carry, the ys and the gradients of xs and init those of the loop
    as written, bit for bit.  The parameters' gradients bit for bit those
    of the loop as written or of the loop with cache_enabled=False: with
    the cast cache (the default) the loop casts a parameter once and sums
    its bfloat16 gradient over the steps in bfloat16, which a plan that
    casts per step cannot reproduce (doc/pytorch.md, "Not bit for bit")."""
    xs, h0 = data(10, T_=16)
    torch.manual_seed(11)
    base = AmpStep()

    def go(fn_of, cache=True, amp=True):
        m = copy.deepcopy(base)

        def fn():
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp,
                                cache_enabled=cache):
                return fn_of(m)
        return outcome(fn, named_module(m, xs=xs, h0=h0))
    ref = go(lambda m: loop(m, h0, xs))
    nocache = go(lambda m: loop(m, h0, xs), cache=False)
    fp32 = go(lambda m: loop(m, h0, xs), amp=False)
    all_grads("autocast", ref)
    check(not same_tree(ref["ys"], fp32["ys"]) and
          not same_tree(ref["grad xs"], fp32["grad xs"]),
          "autocast: the loop in bfloat16 computes what it does in float32")
    exact = ["carry", "ys", "grad xs", "grad h0"]
    check(all(same_tree(ref[k], nocache[k]) for k in exact),
          "autocast: the loop's values differ with the cache off")
    params = [k for k in ref if k not in exact]
    ran = 0
    for strat, mem in [("hsm", "3slots"), ("msm", "3slots"), ("msm", "30%"),
                       ("full", "100%")]:
        info = {}
        tag = "autocast %s %s" % (strat, mem)
        try:
            got = go(lambda m: bt.scan(m, h0, xs, memory=mem, strategy=strat,
                                       info=info))
        except bptt_msm.InfeasibleBudget:
            continue
        ran += 1
        bad = [k for k in exact if not same_tree(ref[k], got.get(k))]
        check(not bad, "%s: %s differ from the loop's" % (tag, bad))
        bad = [k for k in params if not same_tree(ref[k], got.get(k)) and
               not same_tree(nocache[k], got.get(k))]
        check(not bad, "%s: %s differ from the loop's, with the cast cache "
              "and without" % (tag, bad))
        check(info["calls"] == info["plan"].forward_ops,
              tag + ": calls and forward ops")
        if strat == "hsm":
            check(info["plan"].forward_ops > len(xs), tag + ": no recompute")
    check(ran >= 3, "autocast: only %d plans ran" % ran)


# ---- gradients: hooks, accumulation, autograd.grad --------------------------

def gru_setup(seed, T_=T):
    xs, h0 = data(seed, T_)
    cell = nn.GRUCell(X, H)

    def step(h, x):
        h = cell(x, h)
        return h, h
    return cell, step, xs, h0


@case
def hook_count():
    """A hook on every parameter fires once per backward, as in the loop,
    though the plan runs autograd's engine once per recomputed step."""
    cell, step, xs, h0 = gru_setup(12)
    calls = collections.Counter()
    handles = [p.register_hook(lambda g, n=n: calls.update([n]))
               for n, p in cell.named_parameters()]
    try:
        named = list(cell.named_parameters())
        ref = outcome(lambda: loop(step, h0, xs), named)
        loop_calls = dict(calls)
        check(loop_calls == {n: 1 for n, _ in named},
              "hooks: the loop's calls %s" % loop_calls)
        for strat, mem in [("hsm", "3slots"), ("msm", "3slots"),
                           ("full", "100%")]:
            calls.clear()
            info = {}
            got = outcome(lambda: bt.scan(step, h0, xs, memory=mem,
                                          strategy=strat, info=info), named)
            compare("hooks %s %s" % (strat, mem), ref, got)
            check(dict(calls) == loop_calls, "hooks %s %s: called %s, the "
                  "loop's %s" % (strat, mem, dict(calls), loop_calls))
    finally:
        for h in handles:
            h.remove()


@case
def hook_scale():
    """A hook scaling a parameter's gradient (g * 3): the loop's .grad."""
    cell, step, xs, h0 = gru_setup(13)
    named = list(cell.named_parameters())
    plain = outcome(lambda: loop(step, h0, xs), named)
    handles = [cell.weight_hh.register_hook(lambda g: g * 3),
               cell.bias_ih.register_hook(lambda g: g * 3)]
    try:
        ref = outcome(lambda: loop(step, h0, xs), named)
        check(torch.equal(ref["grad weight_hh"], plain["grad weight_hh"] * 3),
              "scaling hook: the loop's .grad is not 3 times")
        for strat, mem in [("hsm", "3slots"), ("msm", "30%")]:
            got = outcome(lambda: bt.scan(step, h0, xs, memory=mem,
                                          strategy=strat), named)
            compare("scaling hook %s %s" % (strat, mem), ref, got)
    finally:
        for h in handles:
            h.remove()


@case
def grad_accumulation():
    """Two forward and backward passes (other inputs, dropout in the step)
    without zeroing: the loop's accumulated .grad."""
    torch.manual_seed(14)
    m = LNDropStep()
    batches = [data(15), data(16)]
    leaves_ = [p for _, p in sorted(m.named_parameters())] + \
        [t for b in batches for t in b]

    def twice(fn):
        for p in leaves_:
            p.grad = None
        torch.manual_seed(3)
        for xs, h0 in batches:
            loss_of(*fn(xs, h0)).backward()
        out = [None if p.grad is None else p.grad.clone() for p in leaves_]
        for p in leaves_:
            p.grad = None
        return out
    ref = twice(lambda xs, h0: loop(m, h0, xs))
    for strat, mem in [("hsm", "3slots"), ("msm", "30%")]:
        got = twice(lambda xs, h0: bt.scan(m, h0, xs, memory=mem,
                                           strategy=strat))
        check(same(ref, got),
              "gradient accumulation %s %s: .grad differs from the loop's"
              % (strat, mem))


@case
def autograd_grad():
    """torch.autograd.grad through scan: the loop's gradients, and no
    parameter's .grad (preset to 7) touched."""
    cell, step, xs, h0 = gru_setup(17)
    params = list(cell.parameters())
    wrt = [xs, h0] + params
    ref = torch.autograd.grad(loss_of(*loop(step, h0, xs)), wrt)
    for p in params:
        p.grad = torch.full_like(p, 7.0)
    got = torch.autograd.grad(loss_of(*bt.scan(step, h0, xs, memory="3slots",
                                               strategy="hsm")), wrt)
    check(same(ref, got), "autograd.grad: gradients differ from the loop's")
    check(all(p.grad is not None and torch.equal(p.grad, torch.full_like(
        p, 7.0)) for p in params) and xs.grad is None and h0.grad is None,
          "autograd.grad: a .grad changed")
    for p in params:
        p.grad = None


# ---- DistributedDataParallel, threads ---------------------------------------

@case
def ddp_two_processes():
    """DDP (gloo, CPU, two processes) around a model whose forward calls
    scan: the averaged .grad of each rank is the same DDP model's with the
    plain loop, bit for bit."""
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "ddp_worker.py")
    tmp = tempfile.mkdtemp(prefix="bptt-ddp-")
    procs = []
    try:
        env = dict(os.environ)
        if "GLOO_SOCKET_IFNAME" not in env and \
                os.path.isdir("/sys/class/net/lo"):
            env["GLOO_SOCKET_IFNAME"] = "lo"
        for rank in range(2):
            err = open(os.path.join(tmp, "err%d" % rank), "w")
            procs.append(subprocess.Popen(
                [sys.executable, worker, str(rank), "2",
                 os.path.join(tmp, "init"), os.path.join(tmp, "out%d" % rank)],
                stdout=err, stderr=subprocess.STDOUT, env=env))
            err.close()
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            codes = [p.poll() for p in procs]
            if all(c is not None for c in codes) or \
                    any(c not in (None, 0) for c in codes):
                break
            time.sleep(0.05)
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        codes = [p.returncode for p in procs]

        def tail(rank):
            with open(os.path.join(tmp, "err%d" % rank)) as f:
                return f.read()[-1500:]
        if not check(codes == [0, 0], "ddp: the workers exited %s:\n%s"
                     % (codes, "\n".join(tail(r) for r in range(2)))):
            return
        res = [torch.load(os.path.join(tmp, "out%d" % r)) for r in range(2)]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    for r in range(2):
        loop_g, scan_g = res[r]["loop"], res[r]["scan"]
        check(all(loop_g[n] is not None for n in loop_g),
              "ddp: rank %d: the loop leaves a parameter without .grad" % r)
        bad = [n for n in loop_g if not same_tree(loop_g[n], scan_g.get(n))]
        check(not bad, "ddp: rank %d: averaged .grad of %s differs from the "
              "loop's under DDP" % (r, bad))
        check(torch.equal(res[r]["loop rng"], res[r]["scan rng"]),
              "ddp: rank %d: the generator after backward differs" % r)
    check(all(same_tree(res[0]["loop"][n], res[1]["loop"][n])
              for n in res[0]["loop"]), "ddp: the ranks' loop .grad differ "
          "(not averaged?)")
    check(not same_tree(res[0]["local"]["cell.weight_hh"],
                        res[0]["loop"]["cell.weight_hh"]) and
          not same_tree(res[0]["local"]["cell.weight_hh"],
                        res[1]["local"]["cell.weight_hh"]),
          "ddp: the ranks' own gradients are not different from the "
          "average (the case proves nothing)")


@case
def two_threads():
    """Two threads, one module, their own inputs, scan and
    torch.autograd.grad at the same time: each gets the loop's gradients
    for its inputs, and the module's .grad (preset) stays."""
    torch.manual_seed(18)
    cell = nn.GRUCell(X, H)
    params = list(cell.parameters())

    def step(h, x):
        h = cell(x, h)
        return h, h
    inputs = [data(19, 20), data(20, 20)]

    def grads_are(want):
        return all(p.grad is not None and torch.equal(p.grad, w)
                   for p, w in zip(params, want))

    def grads(fn, xs, h0):
        return torch.autograd.grad(loss_of(*fn()), [xs, h0] + params)
    refs = [grads(lambda: loop(step, h0, xs), xs, h0) for xs, h0 in inputs]
    check(not same(*refs),
          "threads: the two inputs give one gradient")
    seven = [torch.full_like(p, 7.0) for p in params]
    for p, s in zip(params, seven):
        p.grad = s.clone()
    barrier = threading.Barrier(2)
    results = [[], []]
    errors = []

    def work(k):
        xs, h0 = inputs[k]
        try:
            barrier.wait(timeout=30)
            for it in range(4):
                # the closure, then the cell itself as the step
                strat, mem = [("hsm", "3slots"), ("msm", "3slots")][it % 2]
                fn = step if it < 2 else cell
                g = grads(lambda: bt.scan(fn, h0, xs, memory=mem,
                                          strategy=strat), xs, h0)
                results[k].append((same(refs[k], g), grads_are(seven)))
        except Exception as e:
            errors.append("thread %d: %s: %s" % (k, type(e).__name__, e))
    threads = [threading.Thread(target=work, args=(k,), daemon=True)
               for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    check(not any(t.is_alive() for t in threads), "threads: still running")
    check(not errors, "threads: %s" % errors)
    for k in range(2):
        check(len(results[k]) == 4 and all(r[0] for r in results[k]),
              "threads: thread %d's gradients differ from the loop's (%s)"
              % (k, results[k]))
        check(all(r[1] for r in results[k]),
              "threads: thread %d saw a .grad changed" % k)
    check(grads_are(seven), "threads: a .grad changed")
    for p in params:
        p.grad = None


# ---- parameters -------------------------------------------------------------

@case
def late_param():
    """A captured parameter used from step 3 on only."""
    torch.manual_seed(22)
    x = torch.randn(T, B, H, requires_grad=True)
    tidx = torch.arange(T)
    W = (torch.randn(H, H) * 0.5).requires_grad_()
    V = (torch.randn(H, H) * 0.5).requires_grad_()
    h0 = torch.randn(B, H, requires_grad=True)

    def f(h, xt):
        x_, t = xt
        h = torch.tanh(h @ W + x_)
        if int(t) >= 2:
            h = h + 0.5 * torch.tanh(h @ V)
        return h, h
    named = [("x", x), ("h0", h0), ("W", W), ("V", V)]
    ref = outcome(lambda: loop(f, h0, (x, tidx)), named)
    all_grads("late parameter", ref)
    sweep("a parameter used from step 3", ref, lambda s, m, info: outcome(
        lambda: bt.scan(f, h0, (x, tidx), memory=m, strategy=s, info=info),
        named), T)


@case
def unused_param():
    """A tensor in params that no step uses: torch.autograd.grad raises
    the loop's "not used in the graph" error, or with allow_unused=True
    gives None."""
    cell, step, xs, h0 = gru_setup(23)
    U = torch.randn(H, H, requires_grad=True)
    W = cell.weight_hh
    needle = "used in the graph"
    for name, fn in [("loop", lambda: loop(step, h0, xs)),
                     ("scan", lambda: bt.scan(step, h0, xs, params=(U,),
                                              memory="3slots",
                                              strategy="hsm"))]:
        raises(RuntimeError, lambda: torch.autograd.grad(
            loss_of(*fn()), [W, U]), "unused parameter, %s" % name, needle)
    ref = torch.autograd.grad(loss_of(*loop(step, h0, xs)), [W, U],
                              allow_unused=True)
    got = torch.autograd.grad(loss_of(*bt.scan(
        step, h0, xs, params=(U,), memory="3slots", strategy="hsm")), [W, U],
        allow_unused=True)
    check(ref[1] is None and got[1] is None and same(ref[:1], got[:1]),
          "unused parameter, allow_unused: %s" % (got[1],))


def inplace_setup(seed):
    torch.manual_seed(seed)
    W = (torch.randn(H, H) * 0.5).requires_grad_()
    U = torch.randn(X, H).requires_grad_()

    def f(h, x):
        h = torch.tanh(h @ W + x @ U)
        return h, h
    return W, U, f


def inplace_error(what, fn, change):
    """fn() -> (carry, ys); change() between forward and backward: the
    loop's backward raises, and scan's must (a RuntimeError that says it
    was a change in place)."""
    for name in ("loop", "scan", "scan with info"):
        carry, ys = fn(name)
        change()
        e = raises(RuntimeError, lambda: loss_of(carry, ys).backward(),
                   "%s, %s" % (what, name))
        if e is not None:
            msg = str(e).lower()
            check(any(w in msg for w in ("inplace", "in place", "in-place")),
                  "%s, %s: the error does not say what happened: %s"
                  % (what, name, e))


def scan_or_loop(f, h0, xs):
    # info asks for the trace, which runs the steps under pack hooks (then
    # autograd does not check the versions of what the graphs save)
    return lambda name: loop(f, h0, xs) if name == "loop" else \
        bt.scan(f, h0, xs, memory="3slots", strategy="hsm",
                info={} if name.endswith("info") else None)


@case
def inplace_init():
    W, U, f = inplace_setup(24)
    xs, h0 = data(25)

    def change():
        with torch.no_grad():
            h0.add_(1)
    inplace_error("init changed in place", scan_or_loop(f, h0, xs), change)


@case
def inplace_xs():
    W, U, f = inplace_setup(26)
    xs, h0 = data(27)

    # only xs[0]: step 1 is recomputed from h(0) under hsm, so that no
    # graph kept from the forward pass sees the change
    def change():
        with torch.no_grad():
            xs[0].mul_(2)
    inplace_error("xs (requiring grad) changed in place",
                  scan_or_loop(f, h0, xs), change)
    xs2 = torch.randn(T, B, X)
    inplace_error("xs (no grad) changed in place",
                  scan_or_loop(f, h0, xs2), lambda: xs2[0].mul_(2))


@case
def inplace_param():
    W, U, f = inplace_setup(28)
    xs, h0 = data(29)

    def change():
        with torch.no_grad():
            W.add_(1)
    inplace_error("a parameter changed in place", scan_or_loop(f, h0, xs),
                  change)


# ---- carries ----------------------------------------------------------------

@case
def int_carry():
    """An int64 counter in the carry, advanced with k += 1, k.add_(1) or
    k = k + 1, read by the step: the loop's carry and gradients, the
    stored checkpoints intact (recomputed steps read their k)."""
    torch.manual_seed(30)
    W = (torch.randn(H, H) * 0.5).requires_grad_()
    xs, h0 = data(31, grad=True)
    U = torch.randn(X, H).requires_grad_()
    named = [("xs", xs), ("h0", h0), ("W", W), ("U", U)]
    for how in ("iadd", "add_", "new"):
        def f(c, x, how=how):
            h, k = c
            if how == "iadd":
                k += 1
            elif how == "add_":
                k.add_(1)
            else:
                k = k + 1
            h = torch.tanh(h @ W + x @ U) * (1 + 0.05 * k)
            return (h, k), h
        k0 = torch.full((B, 1), 2, dtype=torch.long)
        ref = outcome(lambda: loop(f, (h0, k0.clone()), xs), named)
        all_grads("int carry", ref)
        check(torch.equal(ref["carry"][1], torch.full((B, 1), T + 2)),
              "int carry %s: the loop's k" % how)
        other = outcome(lambda: loop(f, (h0, k0.clone() + 5), xs), named)
        check(not same_tree(ref["grad W"], other["grad W"]),
              "int carry: k does not matter")
        sweep("int carry (%s)" % how, ref, lambda s, m, info: outcome(
            lambda: bt.scan(f, (h0, k0.clone()), xs, memory=m, strategy=s,
                            info=info), named), T, SMALL, 2)


@case
def bool_carry():
    """A boolean flag in the carry, flipped in place (logical_not_) or
    not, choosing the step's branch."""
    torch.manual_seed(32)
    W = (torch.randn(H, H) * 0.5).requires_grad_()
    xs, h0 = data(33)
    U = torch.randn(X, H).requires_grad_()
    named = [("xs", xs), ("h0", h0), ("W", W), ("U", U)]
    for how in ("inplace", "new"):
        def f(c, x, how=how):
            h, b = c
            if how == "inplace":
                b.logical_not_()
            else:
                b = ~b
            # b.float() is a new tensor: the graph saves no reference to
            # b, which the next step changes in place (torch.where(b, ...)
            # would save b, and the loop itself would fail)
            m = b.float()
            a = h @ W
            h = m * torch.tanh(a + x @ U) + \
                (1 - m) * 0.5 * torch.tanh(a - x @ U)
            return (h, b), h
        b0 = torch.tensor([[True], [False], [True]])
        ref = outcome(lambda: loop(f, (h0, b0.clone()), xs), named)
        all_grads("bool carry", ref)
        check(torch.equal(ref["carry"][1], b0 if T % 2 == 0 else ~b0),
              "bool carry %s: the loop's flag" % how)
        check(not same_tree(ref["grad W"], outcome(
            lambda: loop(f, (h0, ~b0), xs), named)["grad W"]),
            "bool carry: the flag does not matter")
        sweep("bool carry (%s)" % how, ref, lambda s, m, info: outcome(
            lambda: bt.scan(f, (h0, b0.clone()), xs, memory=m, strategy=s,
                            info=info), named), T, SMALL, 2)


def cell_case(kind):
    xs, h0 = data(34)
    torch.manual_seed(35)
    cell = {"lstm": nn.LSTMCell, "gru": nn.GRUCell,
            "rnn": nn.RNNCell}[kind](X, H)
    named = [("xs", xs), ("h0", h0)] + list(cell.named_parameters())
    if kind == "lstm":
        c0 = torch.randn(B, H, requires_grad=True)
        named.append(("c0", c0))
        init = (h0, c0)

        def plain():
            h, c = h0, c0
            ys = []
            for t in range(T):
                h, c = cell(xs[t], (h, c))
                ys.append(h)
            return (h, c), torch.stack(ys)
    else:
        init = h0

        def plain():
            h = h0
            ys = []
            for t in range(T):
                h = cell(xs[t], h)
                ys.append(h)
            return h, torch.stack(ys)
    ref = outcome(plain, named)
    all_grads(kind, ref)
    sweep("nn.%sCell given as the step" % kind.upper(), ref,
          lambda s, m, info: outcome(lambda: bt.scan(
              cell, init, xs, memory=m, strategy=s, info=info), named),
          T, SMALL, 2)


@case
def lstm_cell_direct():
    cell_case("lstm")


@case
def gru_cell_direct():
    cell_case("gru")


@case
def rnn_cell_direct():
    cell_case("rnn")


def two_weights(seed):
    torch.manual_seed(seed)
    return (torch.randn(H, H) * 0.5).requires_grad_(), \
        torch.randn(X, H).requires_grad_()


@case
def dict_carry():
    """A dict carry and a dict y."""
    W, U = two_weights(36)
    xs, h0 = data(37)
    m0 = torch.randn(B, H, requires_grad=True)

    def f(c, x):
        h = torch.tanh(c["h"] @ W + x @ U)
        m = c["m"] * 0.9 + h * 0.1
        return {"m": m, "h": h}, {"out": h * 2, "norm": m.sum(1)}
    named = [("xs", xs), ("h0", h0), ("m0", m0), ("W", W), ("U", U)]
    ref = outcome(lambda: loop(f, {"h": h0, "m": m0}, xs), named)
    all_grads("dict carry", ref)
    sweep("dict carry, dict y", ref, lambda s, m, info: outcome(
        lambda: bt.scan(f, {"h": h0, "m": m0}, xs, memory=m, strategy=s,
                        info=info), named), T, SMALL, 2)


@case
def nested_none():
    """A carry (h, [m, None]), xs {"a": ..., "b": (..., None)}, a y
    (sum, None, [m * 2]): tuples, lists, dicts, None leaves."""
    W, U = two_weights(38)
    xs, h0 = data(39)
    xb = torch.randn(T, B, H, requires_grad=True)
    m0 = torch.randn(B, H, requires_grad=True)

    def f(c, x):
        h, (m, nothing) = c
        if nothing is not None or x["b"][1] is not None:
            raise AssertionError("a None leaf came in as %r, %r"
                                 % (nothing, x["b"][1]))
        h = torch.tanh(h @ W + x["a"] @ U + x["b"][0])
        m = m * 0.5 + h
        return (h, [m, None]), (h.sum(1), None, [m * 2])
    named = [("xa", xs), ("xb", xb), ("h0", h0), ("m0", m0), ("W", W),
             ("U", U)]
    seq = {"a": xs, "b": (xb, None)}
    ref = outcome(lambda: loop(f, (h0, [m0, None]), seq), named)
    all_grads("nested", ref)
    sweep("nested carry with None leaves", ref, lambda s, m, info: outcome(
        lambda: bt.scan(f, (h0, [m0, None]), seq, memory=m, strategy=s,
                        info=info), named), T, SMALL, 2)


State = collections.namedtuple("State", "h c")
Out = collections.namedtuple("Out", "h gate")


@case
def namedtuple_carry():
    W, U = two_weights(40)
    xs, h0 = data(41)
    c0 = torch.randn(B, H, requires_grad=True)

    def f(s, x):
        g = torch.sigmoid(s.h @ W + x @ U)
        c = s.c * g + (1 - g) * torch.tanh(x @ U)
        h = torch.tanh(c) * g
        return State(h, c), Out(h, g)
    named = [("xs", xs), ("h0", h0), ("c0", c0), ("W", W), ("U", U)]
    ref = outcome(lambda: loop(f, State(h0, c0), xs), named)
    all_grads("namedtuple", ref)
    sweep("namedtuple carry and y", ref, lambda s, m, info: outcome(
        lambda: bt.scan(f, State(h0, c0), xs, memory=m, strategy=s,
                        info=info), named), T, SMALL, 2)


@case
def y_none():
    """A step whose y is None: ys is None, the carry's gradients the
    loop's."""
    W, U = two_weights(42)
    xs, h0 = data(43)

    def f(h, x):
        return torch.tanh(h @ W + x @ U), None
    named = [("xs", xs), ("h0", h0), ("W", W), ("U", U)]
    ref = outcome(lambda: loop(f, h0, xs), named)
    check(ref["ys"] is None, "y None: the loop's ys")
    all_grads("y None", ref)
    sweep("y None", ref, lambda s, m, info: outcome(
        lambda: bt.scan(f, h0, xs, memory=m, strategy=s, info=info), named),
        T, SMALL, 2)


class StateStep(nn.Module):
    """Dropout, BatchNorm and a counter: every kind of state a step can
    change."""

    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(X, H)
        self.bn = nn.BatchNorm1d(H)
        self.drop = nn.Dropout(0.5)
        self.register_buffer("count", torch.zeros((), dtype=torch.long))

    def forward(self, h, x):
        self.count += 1
        if x is None:
            x = torch.ones(h.shape[0], X)
        h = torch.tanh(self.bn(self.inp(self.drop(x))) + h)
        return h, {"h": h, "s": h.sum(1)}


def untouched(what, m, h0, fn):
    """fn() -> (carry, ys) at T = 0: init, ys of length 0, and no state the
    user sees changed (generator, buffers, .grad, init)."""
    h_before = h0.detach().clone()
    state = {k: v.clone() for k, v in m.state_dict().items()}
    torch.manual_seed(44)
    rng = torch.get_rng_state()
    carry, ys = fn()
    check(torch.equal(torch.get_rng_state(), rng),
          what + ": the generator moved")
    check(all(torch.equal(v, m.state_dict()[k]) for k, v in state.items()),
          what + ": a buffer changed")
    check(all(p.grad is None for p in m.parameters()) and h0.grad is None,
          what + ": a .grad changed")
    check(torch.equal(h0.detach(), h_before), what + ": init changed")
    check(isinstance(carry, torch.Tensor) and torch.equal(carry.detach(),
                                                          h_before),
          what + ": the carry is not init")
    check(isinstance(ys, dict) and sorted(ys) == ["h", "s"] and
          tuple(ys["h"].shape) == (0, B, H) and
          tuple(ys["s"].shape) == (0, B) and
          ys["h"].dtype == torch.float32,
          what + ": ys %s" % (tmap(lambda t: tuple(t.shape), ys)
                              if isinstance(ys, dict) else ys,))


@case
def t0_xs():
    """xs with a first dimension of 0."""
    torch.manual_seed(45)
    m = StateStep()
    h0 = torch.randn(B, H, requires_grad=True)
    xs = torch.randn(0, B, X, requires_grad=True)
    for strat in ("msm", "hsm"):
        untouched("T = 0 (xs) %s" % strat, m, h0,
                  lambda: bt.scan(m, h0, xs, strategy=strat))
    # an integer carry the step changes in place, y None
    k0 = torch.zeros(B, 1, dtype=torch.long)

    def f(c, x):
        h, k = c
        k += 1
        return (h * 2, k), None
    carry, ys = bt.scan(f, (h0, k0), xs)
    check(torch.equal(k0, torch.zeros(B, 1, dtype=torch.long)) and
          torch.equal(carry[1], k0) and torch.equal(carry[0], h0) and
          ys is None, "T = 0, an integer carry changed in place, y None: "
          "k0 %s, carry %s, ys %s" % (k0.flatten().tolist(), carry, ys))


@case
def t0_length():
    """xs=None, length=0."""
    torch.manual_seed(46)
    m = StateStep()
    h0 = torch.randn(B, H, requires_grad=True)
    untouched("T = 0 (length=0)", m, h0, lambda: bt.scan(m, h0, length=0))


@case
def length_without_xs():
    """xs=None, length=T: the step gets x_t = None."""
    torch.manual_seed(47)
    W = (torch.randn(H, H) * 0.5).requires_grad_()
    b = torch.randn(H, requires_grad=True)
    h0 = torch.randn(B, H, requires_grad=True)
    seen = set()

    def f(h, x):
        seen.add(type(x).__name__)
        h = torch.tanh(h @ W + b)
        return h, h * 2
    named = [("h0", h0), ("W", W), ("b", b)]
    ref = outcome(lambda: loop(f, h0, None, length=T), named)
    all_grads("length", ref)
    seen.clear()
    sweep("xs None, length=T", ref, lambda s, m, info: outcome(
        lambda: bt.scan(f, h0, length=T, memory=m, strategy=s, info=info),
        named), T)
    check(seen == {"NoneType"}, "xs None: the step got %s" % sorted(seen))
    try:
        bt.scan(f, h0)
        check(False, "xs None without length: no error")
    except (TypeError, ValueError) as e:
        check("length" in str(e), "xs None without length: %s" % e)


@case
def reverse():
    """reverse=True: from xs[T-1] down to xs[0], ys[t] from xs[t]."""
    W, U = two_weights(48)
    xs, h0 = data(49)

    def f(h, x):
        h = torch.tanh(h @ W + x @ U)
        return h, (h * x.sum(1, keepdim=True), x.mean())
    named = [("xs", xs), ("h0", h0), ("W", W), ("U", U)]
    ref = outcome(lambda: loop(f, h0, xs, reverse=True), named)
    all_grads("reverse", ref)
    check(not same_tree(ref["ys"], outcome(lambda: loop(f, h0, xs),
                                           named)["ys"]),
          "reverse: the loop's ys are those without reverse")
    sweep("reverse", ref, lambda s, m, info: outcome(
        lambda: bt.scan(f, h0, xs, memory=m, strategy=s, info=info,
                        reverse=True), named), T)


# ---- memory -----------------------------------------------------------------

def long_setup(seed, T_=30):
    cell, step, xs, h0 = gru_setup(seed, T_)
    return step, xs, h0, [("xs", xs), ("h0", h0)] + \
        list(cell.named_parameters())


@case
def memory_forms():
    """Bytes (int, "100000B", "64MiB"), "50%", "5%", "150slots": each the
    loop's gradients, bytes taken as given ("5%" may be infeasible)."""
    step, xs, h0, named = long_setup(50)
    ref = outcome(lambda: loop(step, h0, xs), named)
    for mem, nbytes in [(100000, 100000), ("100000B", 100000),
                        ("64MiB", 64 << 20), ("50%", None),
                        ("150slots", None), ("5%", None)]:
        info = {}
        try:
            got = outcome(lambda: bt.scan(step, h0, xs, memory=mem,
                                          info=info), named)
        except bptt_msm.InfeasibleBudget as e:
            check(mem == "5%", "memory %r: infeasible: %s" % (mem, e))
            continue
        compare("memory %r" % (mem,), ref, got)
        if nbytes is not None:
            check(info["plan"].memory_bytes == nbytes,
                  "memory %r: a budget of %d bytes"
                  % (mem, info["plan"].memory_bytes))
    info = {}
    bt.scan(step, h0, xs, memory="150slots", info=info)
    check(info["plan"].memory_bytes == 150 * info["sizes"].hidden_bytes,
          "memory '150slots': %d bytes, a carry %d" %
          (info["plan"].memory_bytes, info["sizes"].hidden_bytes))


@case
def memory_errors():
    """A bare number in a string is a ValueError naming it; an infeasible
    budget an InfeasibleBudget (a ValueError) echoing it and naming the
    smallest feasible budget."""
    step, xs, h0, _ = long_setup(51)
    for bad in ("150", "0.05"):
        e = raises(ValueError, lambda: bt.scan(step, h0, xs, memory=bad),
                   "memory %r" % bad, bad)
        check(not isinstance(e, bptt_msm.InfeasibleBudget),
              "memory %r: taken for a budget" % bad)
    # the smallest feasible budget is one carry (hsm's h(0)): 72 bytes here
    for mem, echo in (("0.1%", "0.1%"), (31, "31")):
        e = raises(bptt_msm.InfeasibleBudget,
                   lambda: bt.scan(step, h0, xs, memory=mem),
                   "memory %r" % (mem,), "smallest feasible budget")
        check(e is None or (isinstance(e, ValueError) and echo in str(e)),
              "memory %r: the message does not echo it: %s" % (mem, e))


@case
def default_memory():
    """memory=None at T = 30: less stored than full BPTT, the loop's
    gradients."""
    step, xs, h0, named = long_setup(52)
    ref = outcome(lambda: loop(step, h0, xs), named)
    info = {}
    got = outcome(lambda: bt.scan(step, h0, xs, info=info), named)
    compare("default memory", ref, got)
    p = info["plan"]
    check(p.peak_bytes < p.full_peak_bytes,
          "default memory: peak %d bytes, full BPTT's %d"
          % (p.peak_bytes, p.full_peak_bytes))
    check(info["calls"] == p.forward_ops, "default memory: calls")
    # short sequences, where 10% of full BPTT's is below the smallest
    # feasible budget: raised to it, not refused
    for n in (1, 2, 3):
        step, xs, h0, named = long_setup(57 + n, n)
        ref = outcome(lambda: loop(step, h0, xs), named)
        try:
            got = outcome(lambda: bt.scan(step, h0, xs), named)
        except bptt_msm.InfeasibleBudget as e:
            check(False, "default memory at T = %d: %s" % (n, e))
            continue
        compare("default memory at T = %d" % n, ref, got)


@case
def strategies():
    """full, chen, hsm, msm at 100%, 30%, 3slots (where feasible), ism and
    auto: the loop's values and gradients, the step called the plan's
    forward ops; info holds plan, sizes, calls and trace."""
    step, xs, h0, named = long_setup(53, 16)
    ref = outcome(lambda: loop(step, h0, xs), named)
    plans = [(s, m) for s in ("full", "chen", "hsm", "msm")
             for m in ("100%", "30%", "3slots")] + \
        [("ism", "30%"), ("ism", "3slots"), ("auto", "30%")]
    sweep("strategies", ref, lambda s, m, info: outcome(
        lambda: bt.scan(step, h0, xs, memory=m, strategy=s, info=info),
        named), 16, plans, 7)
    info = {}
    bt.scan(step, h0, xs, memory="30%", info=info)
    check({"plan", "sizes", "calls", "trace"} <= set(info),
          "info holds %s" % sorted(info))


# ---- captured non-leaves, aliasing ------------------------------------------

@case
def nonleaf_capture():
    """W2 = W * 2 computed before scan, captured by the step: the loop's
    gradient of W, or an error naming params=; with params=(W2,) the
    loop's gradient of W."""
    torch.manual_seed(54)
    W = (torch.randn(H, H) * 0.3).requires_grad_()
    U = torch.randn(X, H).requires_grad_()
    xs, h0 = data(55)
    named = [("xs", xs), ("h0", h0), ("W", W), ("U", U)]

    def go(fn):
        W2 = W * 2

        def f(h, x):
            h = torch.tanh(h @ W2 + x @ U)
            return h, h
        return outcome(lambda: fn(f, W2), named)
    ref = go(lambda f, W2: loop(f, h0, xs))
    all_grads("non-leaf", ref)
    try:
        got = go(lambda f, W2: bt.scan(f, h0, xs, memory="3slots",
                                       strategy="hsm"))
        compare("a captured non-leaf", ref, got)
    except (ValueError, RuntimeError) as e:
        check("params=" in str(e), "a captured non-leaf: the error does not "
              "name params=: %s" % e)
    for strat, mem in [("hsm", "3slots"), ("msm", "30%"), ("full", "100%")]:
        got = go(lambda f, W2: bt.scan(f, h0, xs, memory=mem, strategy=strat,
                                       params=(W2,)))
        compare("a captured non-leaf in params, %s %s" % (strat, mem), ref,
                got)


@case
def carry_is_x():
    """A step returning x_t as its carry: the loop's values and gradients,
    or a clear error of scan's."""
    torch.manual_seed(56)
    W = (torch.randn(H, H) * 0.5).requires_grad_()
    xs = torch.randn(T, B, H, requires_grad=True)
    h0 = torch.randn(B, H, requires_grad=True)

    def f(h, x):
        return x, torch.tanh(h @ W)
    named = [("xs", xs), ("h0", h0), ("W", W)]
    ref = outcome(lambda: loop(f, h0, xs), named)
    all_grads("carry x_t", ref)
    for strat, mem in [("hsm", "3slots"), ("msm", "30%"), ("full", "100%")]:
        tag = "a carry that is x_t, %s %s" % (strat, mem)
        try:
            got = outcome(lambda: bt.scan(f, h0, xs, memory=mem,
                                          strategy=strat), named)
        except bptt_msm.InfeasibleBudget:
            continue
        except (ValueError, RuntimeError, TypeError) as e:
            check("scan" in str(e), "%s: an error not of scan's: %s: %s"
                  % (tag, type(e).__name__, e))
            continue
        compare(tag, ref, got)


def main():
    start = time.monotonic()
    for fn in CASES:
        try:
            fn()
        except Exception as e:
            tb = traceback.format_exc().rstrip().splitlines()
            check(False, "%s: raised %s: %s (%s)" % (fn.__name__,
                                                     type(e).__name__, e,
                                                     tb[-3].strip()))
    took = time.monotonic() - start
    if FAILS:
        sys.stderr.write("test_field: %d failure(s) in %d cases (%.1f s)\n"
                         % (len(FAILS), len(CASES), took))
        return 1
    print("test_field: all passed (%d cases against the loop, %.1f s)"
          % (len(CASES), took))
    return 0


if __name__ == "__main__":
    sys.exit(main())
