"""tests/python/test_bptt_msm.py: the Python package (tests/test_python.sh).

The planner against `bptt plan` (same counts, same smallest budget), bad
input refused; bptt_msm.torch.scan against the written-out loop for
nn.LSTMCell, nn.GRUCell, nn.RNNCell and a LIF spiking neuron over full,
chen, hsm and msm at several budgets: outputs and every gradient equal bit
for bit (torch.equal), the step called exactly the plan's forward ops, the
stored bytes measured after every action never above the planned peak.
Exit 0, or 1 with each failure on stderr."""
import json
import os
import subprocess
import sys

import torch

import bptt_msm
import bptt_msm.torch as bt
import models
from expect import FAILS, check, raises

CASES = []


# ---- the planner -------------------------------------------------------------

def cli_plan(*args):
    out = subprocess.run([os.environ["BPTT"], "plan", "--format", "json"]
                         + list(args), capture_output=True, text=True)
    return out.returncode, out.stdout, out.stderr


def test_planner():
    for strat, t, alpha, mem in [("msm", 1000, 4, "5%"), ("msm", 1000, 4, "155"),
                                 ("chen", 100, 3, "100%"), ("hsm", 50, 2, "7"),
                                 ("full", 20, 5, "100%"), ("ism", 30, 2, "20")]:
        rc, out, err = cli_plan("--strategy", strat, "--length", str(t),
                                "--alpha", str(alpha), "--memory", mem)
        check(rc == 0, "bptt plan %s %s: %s" % (strat, mem, err))
        want = json.loads(out)
        p = bptt_msm.plan(t, 1, alpha, mem, strategy=strat)
        check((p.forward_ops, p.peak_bytes, len(p.actions), p.memory_bytes)
              == (want["forward_ops"], want["peak_slots"], want["actions"],
                  want["memory"]),
              "plan %s t=%d alpha %d %s: %s, bptt plan says %s"
              % (strat, t, alpha, mem, p, want))
        check(p.actions[-1][0].startswith("free") and
              sum(op == "advance" for op, _ in p.actions) == p.forward_ops,
              "plan %s: actions do not add up" % strat)
    # bytes: sizes 6 and 21 bytes (quantum 3, alpha 3.5)
    p = bptt_msm.plan(100, 6, 21, "5%")
    rc, out, _ = cli_plan("--length", "100", "--alpha", "3.5", "--memory", "5%")
    want = json.loads(out)
    check(p.peak_bytes == round(want["peak_slots"] * 6) and
          p.forward_ops == want["forward_ops"],
          "plan in bytes at alpha 3.5: %s, bptt plan says %s" % (p, want))
    check(bptt_msm.plan(100, 6, 21, 1200).memory_bytes == 1200 and
          bptt_msm.plan(100, 6, 21, "1200B").memory_bytes == 1200 and
          bptt_msm.plan(100, 6, 21, "1KiB").memory_bytes == 1024 and
          bptt_msm.plan(100, 6, 21, "20slots").memory_bytes == 120,
          "bytes, units and slots")
    # infeasible: the smallest budget named, as bptt plan names it
    rc, _, err = cli_plan("--strategy", "chen", "--length", "1000",
                          "--alpha", "4", "--memory", "100")
    check(rc == 3 and "155 slots" in err, "bptt plan infeasible: %s" % err)
    e = raises(bptt_msm.InfeasibleBudget,
               lambda: bptt_msm.plan(1000, 1, 4, "100", strategy="chen"),
               "infeasible chen", "smallest feasible budget is 155 bytes")
    check(e is not None and e.min_memory_bytes == 155, "min_memory_bytes")
    check(bptt_msm.plan(1000, 1, 4, 155, strategy="chen").forward_ops > 0,
          "the named budget is feasible")
    # bad input
    for bad in ["5 %", "", "x", "-3", "1e5", "5%%", "12.5.1", "\0", "\u00e9",
                "9" * 40]:
        raises(ValueError, lambda: bptt_msm.plan(100, 1, 4, bad),
               "memory %r" % bad, "memory")
    for bad in [3.5, None, True, [5], b"5%"]:
        raises(TypeError, lambda: bptt_msm.plan(100, 1, 4, bad),
               "memory %r" % (bad,), "memory must be")
    raises(ValueError, lambda: bptt_msm.plan(100, 1, 4, -1), "memory -1")
    raises(ValueError, lambda: bptt_msm.plan(0, 1, 4), "length 0", "length")
    raises(TypeError, lambda: bptt_msm.plan(10.0, 1, 4), "length 10.0",
           "length")
    raises(ValueError, lambda: bptt_msm.plan(10, 4, 1), "internal < hidden",
           "internal_bytes")
    raises(ValueError, lambda: bptt_msm.plan(10, 0, 1), "hidden 0",
           "hidden_bytes")
    raises(ValueError, lambda: bptt_msm.plan(10, 1, 4, strategy="fast"),
           "unknown strategy", "unknown strategy")
    raises(TypeError, lambda: bptt_msm.plan(10, 1, 4, strategy=None),
           "strategy None", "strategy")
    raises(ValueError, lambda: bptt_msm.plan(10, 1, 4, segment=2),
           "segment for msm", "segment")
    check(bptt_msm.plan(16, 1, 4, strategy="chen", segment=2).forward_ops
          == bptt_msm.plan(16, 1, 4, strategy="chen", segment=2).forward_ops,
          "segment")
    # sizes near the limits: what is wrong said in words, with the value
    check(bptt_msm.THREADS_MAX == 4096, "THREADS_MAX read from the library: "
          "%r" % bptt_msm.THREADS_MAX)
    raises(ValueError,
           lambda: bptt_msm.plan(1000, 1, 2 ** 61 - 1, "100%"),
           "a share of a full peak beyond 64 bits", "more than 2^63 units")
    e = raises(ValueError,
               lambda: bptt_msm.plan(10, 1, 2 ** 50, "1000000%"),
               "a share beyond the largest budget",
               "is more than the 2305843009213693951 units a plan can take")
    check(e is None or "unknown name" not in str(e), "status named: %s" % e)
    big = bptt_msm.plan(10, 1, 2 ** 40, "200000%")
    check(big.full_peak_bytes == 9 * 2 ** 40 and
          big.peak_bytes == big.full_peak_bytes,
          "full_peak_bytes at 2**40-byte states: %r" % big.full_peak_bytes)


# ---- scan against the loop ---------------------------------------------------

def leaves_of(step, init, xs):
    init = init if isinstance(init, tuple) else (init,)
    return [xs] + [c for c in init if c.requires_grad] + list(step.parameters())


def loss_of(carry, ys):
    carry = carry if isinstance(carry, tuple) else (carry,)
    w = torch.arange(ys.numel(), dtype=ys.dtype).reshape(ys.shape).sin()
    return (ys * w).sum() + sum((c * c).sum() for c in carry)


def grads(leaves, fn, loss=loss_of):
    for p in leaves:
        p.grad = None
    carry, ys = fn()
    loss(carry, ys).backward()
    out = [p.grad for p in leaves]
    carry = carry if isinstance(carry, tuple) else (carry,)
    return out, [c.detach() for c in carry], ys.detach()


def same(a, b):
    return all((x is None and y is None) or
               (x is not None and y is not None and torch.equal(x, y))
               for x, y in zip(a, b)) and len(a) == len(b)


def setup(kind, T=9, B=3, X=4, H=5, seed=1):
    torch.manual_seed(seed)
    step, init = models.make(kind, X, H, B)
    xs = (2 * torch.randn(T, B, X)).requires_grad_()
    if kind == "lif":  # potentials from a random start, no spikes yet
        init = (torch.randn(B, H).requires_grad_(), init[1])
    elif isinstance(init, tuple):
        init = tuple(torch.randn_like(c).requires_grad_() for c in init)
    else:
        init = torch.randn_like(init).requires_grad_()
    return step, init, xs


def test_scan():
    cases = 0
    for kind in ["lstm", "gru", "rnn", "lif"]:
        step, init, xs = setup(kind)
        leaves = leaves_of(step, init, xs)
        ref, rcarry, rys = grads(leaves, lambda: models.plain(step, init, xs))
        check(all(g is not None for g in ref), "%s: a leaf has no gradient"
              % kind)
        for strat in ["full", "chen", "hsm", "msm"]:
            for mem in ["100%", "60%", "35%", "20%", "4slots", "2slots"]:
                info = {}
                try:
                    got, carry, ys = grads(leaves, lambda: bt.scan(
                        step, init, xs, memory=mem, strategy=strat, info=info))
                except bptt_msm.InfeasibleBudget:
                    continue
                cases += 1
                p = info["plan"]
                what = "%s %s %s" % (kind, strat, mem)
                check(same(ref, got), what + ": gradients differ from the loop's")
                check(same(rcarry, carry) and torch.equal(rys, ys),
                      what + ": outputs differ from the loop's")
                check(info["calls"] == p.forward_ops,
                      what + ": step called %d times, the plan has %d forward ops"
                      % (info["calls"], p.forward_ops))
                held = [a[2] for a in info["trace"]]
                check(len(held) == len(p.actions) and max(held) <= p.peak_bytes,
                      what + ": stored bytes peaked at %d, the plan's peak is %d"
                      % (max(held), p.peak_bytes))
                check(max(held) > 0 and held[-1] == 0,
                      what + ": stored bytes not measured (%s)" % held[-3:])
    check(cases >= 60, "only %d cases ran" % cases)
    CASES.append(cases)
    # backward ops of consecutive stored steps share one run of autograd's
    # engine: full BPTT is one run, HSM (no internal state is stored) one per
    # step, MSM in between
    step, init, xs = setup("lstm", T=40)
    runs = {}
    for strat, mem in [("full", "100%"), ("hsm", "40%"), ("msm", "40%")]:
        info = {}
        carry, ys = bt.scan(step, init, xs, memory=mem, strategy=strat,
                            info=info)
        loss_of(carry, ys).backward()
        runs[strat] = info["engine_runs"]
    check(runs["full"] == 1 and runs["hsm"] == 40 and
          1 < runs["msm"] < 40, "engine runs per backward: %s" % runs)
    # gradients accumulate: a parameter's .grad from before is added to, as
    # the loop adds to it, and the sum is the same to the bit
    for kind in ["lstm", "lif"]:
        step, init, xs = setup(kind, T=12)
        leaves = leaves_of(step, init, xs)
        sums = []
        for fn in [lambda: models.plain(step, init, xs),
                   lambda: bt.scan(step, init, xs, memory="30%")]:
            for p in leaves:
                p.grad = None
            for _ in range(2):
                carry, ys = fn()
                loss_of(carry, ys).backward()
            sums.append([p.grad.clone() for p in leaves])
        check(same(sums[0], sums[1]), "%s: gradients accumulated over two "
              "backward passes differ from the loop's" % kind)
    # torch.autograd.grad instead of backward: the same gradients, and the
    # .grad of every leaf left as it was
    step, init, xs = setup("gru", T=12)
    leaves = leaves_of(step, init, xs)
    for p in leaves:
        p.grad = torch.full_like(p, 7.0)
    got = [torch.autograd.grad(loss_of(*fn()), leaves) for fn in
           [lambda: models.plain(step, init, xs),
            lambda: bt.scan(step, init, xs, memory="30%")]]
    check(same(got[0], got[1]) and
          all(torch.equal(p.grad, torch.full_like(p, 7.0)) for p in leaves),
          "torch.autograd.grad through scan: gradients differ or a .grad "
          "changed")
    # the loss on the ys alone (no gradient for the final carry), xs
    # without gradient, init without gradient
    step, init, xs = setup("gru")
    xs.requires_grad_(False)
    init.requires_grad_(False)
    leaves = list(step.parameters())
    only_ys = lambda c, ys: (ys ** 3).sum()
    ref, _, _ = grads(leaves, lambda: models.plain(step, init, xs), only_ys)
    got, _, _ = grads(leaves, lambda: bt.scan(step, init, xs, memory="30%"),
                      only_ys)
    check(same(ref, got), "gru, loss on ys alone: gradients differ")
    # a closure over a leaf tensor, carry a tensor, ys a tuple
    torch.manual_seed(3)
    W = torch.randn(4, 4, requires_grad=True)
    xs = torch.randn(7, 2, 4)

    def f(h, x):
        h = torch.tanh(h @ W + x)
        return h, (h.sum(1), h * 2)
    h0 = torch.zeros(2, 4)
    hs, ys = h0, []
    for t in range(7):
        hs, y = f(hs, xs[t])
        ys.append(y)
    (hs.sum() + torch.stack([y[0] for y in ys]).sum()
     + torch.stack([y[1] for y in ys]).pow(2).sum()).backward()
    ref = W.grad.clone()
    W.grad = None
    hs2, (ya, yb) = bt.scan(f, h0, xs, memory="3slots", strategy="hsm")
    (hs2.sum() + ya.sum() + yb.pow(2).sum()).backward()
    check(torch.equal(ref, W.grad) and torch.equal(hs.detach(), hs2.detach()),
          "a closure: the gradient of its captured leaf differs")
    # a parameter used three times a step, the carry twice, x twice
    torch.manual_seed(5)
    V = torch.randn(5, 5, requires_grad=True)
    xs = torch.randn(15, 3, 5, requires_grad=True)

    def u(h, x):
        h = torch.tanh(h @ V + (x @ V) * 0.3 + torch.sin(h) @ V + x.cos())
        return h, h
    leaves = [V, xs]
    ref, _, _ = grads(leaves, lambda: models.plain(u, torch.zeros(3, 5), xs))
    for strat, mem in [("msm", "3slots"), ("hsm", "2slots"), ("chen", "100%"),
                       ("msm", "40%")]:
        got, _, _ = grads(leaves, lambda: bt.scan(u, torch.zeros(3, 5), xs,
                                                  memory=mem, strategy=strat))
        check(same(ref, got), "a parameter used three times a step, %s %s: "
              "gradients differ" % (strat, mem))
    # xs a tuple of two sequences, one without gradient
    torch.manual_seed(4)
    cell = torch.nn.RNNCell(3, 4)
    xa = torch.randn(8, 2, 3, requires_grad=True)
    xb = torch.randn(8, 2, 4)

    def g(h, x):
        h = cell(x[0], h) * x[1]
        return h, h
    h, ys = torch.zeros(2, 4), []
    for t in range(8):
        h, y = g(h, (xa[t], xb[t]))
        ys.append(y)
    torch.stack(ys).pow(2).sum().backward()
    ref = [xa.grad.clone()] + [q.grad.clone() for q in cell.parameters()]
    xa.grad = None
    cell.zero_grad(set_to_none=True)
    _, ys2 = bt.scan(g, torch.zeros(2, 4), (xa, xb), memory="2slots",
                     strategy="msm")
    ys2.pow(2).sum().backward()
    check(same(ref, [xa.grad] + [q.grad for q in cell.parameters()]),
          "xs a tuple: gradients differ")
    # the check can fail: a different model's gradients are not equal
    a_step, a_init, a_xs = setup("lstm", seed=1)
    b_step, b_init, b_xs = setup("lstm", seed=2)
    ga, _, _ = grads(leaves_of(a_step, a_init, a_xs),
                     lambda: bt.scan(a_step, a_init, a_xs, memory="40%"))
    gb, _, _ = grads(leaves_of(b_step, b_init, b_xs),
                     lambda: models.plain(b_step, b_init, b_xs))
    check(not same(ga, gb), "the comparison cannot tell two models apart")


def test_auto():
    """strategy="auto": Chen's segments where their forward ops are within
    15% of MSM's at the budget, MSM elsewhere; gradients the loop's."""
    step, init, xs = setup("lstm", T=200)
    leaves = leaves_of(step, init, xs)
    ref, _, _ = grads(leaves, lambda: models.plain(step, init, xs))
    picked = set()
    for mem in ["5%", "10%", "40%", "80%"]:
        info = {}
        got, _, _ = grads(leaves, lambda: bt.scan(step, init, xs, memory=mem,
                                                  strategy="auto", info=info))
        s = info["sizes"]
        ops = {}
        for st in ("msm", "chen"):
            try:
                ops[st] = bptt_msm.plan(200, s.hidden_bytes, s.internal_bytes,
                                        mem, st).forward_ops
            except bptt_msm.InfeasibleBudget:
                ops[st] = None  # chen needs more than a small share
        want = "chen" if ops["chen"] is not None and \
            ops["chen"] <= 1.15 * ops["msm"] else "msm"
        check(info["strategy"] == want and
              info["plan"].forward_ops == ops[want],
              "auto at %s: ran %s (%d forward ops); msm plans %s, chen %s"
              % (mem, info["strategy"], info["plan"].forward_ops,
                 ops["msm"], ops["chen"]))
        check(same(ref, got), "auto at %s: gradients differ" % mem)
        picked.add(info["strategy"])
    check(picked == {"msm", "chen"}, "auto picked only %s" % picked)


def test_recomputing():
    """bptt_msm.torch.recomputing(): False on each step's first run, True
    on every recomputation, so a step's own effects can happen once per
    step; a tensor step 1 leaves alone and a later step changes is
    refused."""
    step, init, xs = setup("gru", T=20)
    firsts, again = [], [0]

    def f(h, x):
        if bt.recomputing():
            again[0] += 1
        else:
            firsts.append(x)
        return step(h, x)
    info = {}
    carry, ys = bt.scan(f, init, xs, memory="3slots", strategy="msm",
                        info=info)
    ys.pow(2).sum().backward()
    check(len(firsts) == 20 and all(torch.equal(a, xs[t].detach())
                                    for t, a in enumerate(firsts)),
          "recomputing(): %d first runs for 20 steps" % len(firsts))
    check(again[0] == info["calls"] - 20 and again[0] > 0,
          "recomputing(): %d recomputations, the plan ran %d calls"
          % (again[0], info["calls"]))
    check(not bt.recomputing(), "recomputing() True after the scan")
    late = torch.zeros(3)

    def g(h, x):
        if x[0, 0] > 50:
            late.add_(1)
        return step(h, x)
    xs2 = xs.detach().clone()
    xs2[5:, 0, 0] = 100
    raises(RuntimeError, lambda: bt.scan(g, init, xs2, memory="3slots"),
           "a tensor changed from step 6 on", "step 1 left alone")


def test_scan_refuses():
    # what the module says it exports is there
    names = {}
    exec("from bptt_msm.torch import *", names)
    check({"scan", "Sizes"} <= set(names), "bptt_msm.torch's __all__: %s"
          % sorted(n for n in names if not n.startswith("__")))
    step, init, xs = setup("lstm")
    raises(bptt_msm.InfeasibleBudget,
           lambda: bt.scan(step, init, xs, memory=10),
           "scan at 10 bytes", "smallest feasible budget")
    raises(ValueError, lambda: bt.scan(step, init, xs, memory="lots"),
           "scan memory 'lots'", "not a budget")
    raises(TypeError, lambda: bt.scan(step, init, xs, memory=2.5),
           "scan memory 2.5", "memory must be")
    raises(ValueError, lambda: bt.scan(step, init, xs, strategy="best"),
           "scan strategy", "unknown strategy")
    raises(TypeError, lambda: bt.scan(step, [1, 2], xs), "init a list of ints",
           "init holds a int at [0]")
    raises(TypeError, lambda: bt.scan(step, init, "abc"), "xs a string",
           "xs holds a str")
    raises(TypeError, lambda: bt.scan(42, init, xs), "step 42", "callable")
    raises(ValueError, lambda: bt.scan(step, init, torch.zeros(())),
           "xs of no dimension", "time dimension")
    raises(ValueError, lambda: bt.scan(step, init, (xs, xs[:3])),
           "xs of two lengths", "differ in length")
    raises(TypeError, lambda: bt.scan(lambda c, x: c[0], init, xs),
           "step returning one thing", "pair")
    raises(TypeError, lambda: bt.scan(lambda c, x: (c[0], c[0]), init, xs),
           "step changing the carry's structure", "carry")
    raises(ValueError,
           lambda: bt.scan(lambda c, x: ((c[0][:1], c[1]), c[0]), init, xs),
           "step changing a carry's shape", "shape")
    raises(TypeError, lambda: bt.scan(step, init, xs, info=[]), "info a list",
           "info")
    carry, ys = bt.scan(step, init, xs, memory="50%")
    raises(RuntimeError, lambda: torch.autograd.grad(ys.sum(), xs,
                                                     create_graph=True)[0]
           .sum().backward(), "double backward")
    carry, ys = bt.scan(step, init, xs, memory="50%")
    loss = ys.sum()
    loss.backward(retain_graph=True)
    raises(RuntimeError, lambda: loss.backward(), "backward twice", "twice")


# ---- hostile environments -----------------------------------------------------

def python_run(program, **env):
    """program run by this Python with env added: (exit, stdout, stderr)."""
    e = dict(os.environ)
    e.update(env)
    out = subprocess.run([sys.executable, "-c", program], env=e,
                         capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout, out.stderr


def test_hostile_env():
    """OMP_NUM_THREADS=100000 (libgomp ended the interpreter), garbage in
    it, and a German locale set by the program: plan works, the thread
    count is capped with a RuntimeWarning, "2.5%" is read as 2.5%."""
    program = ("import bptt_msm\n"
               "p = bptt_msm.plan(100, 8, 8, memory='5%')\n"
               "print(p.forward_ops, bptt_msm.threads_capped_from)\n")
    want = "%d" % bptt_msm.plan(100, 8, 8, memory="5%").forward_ops
    for omp in ("100000", "abc", "1,2,3"):
        what = "OMP_NUM_THREADS=%s: bptt_msm.plan" % omp
        rc, out, err = python_run(program, OMP_NUM_THREADS=omp)
        check(rc == 0, "%s: exit %d: %s" % (what, rc, err[-300:]))
        if rc != 0:
            continue
        capped = "100000" if omp == "100000" else "None"
        check(out.split() == [want, capped],
              "%s: printed %r, not %s %s" % (what, out, want, capped))
        if omp == "100000":
            check("RuntimeWarning: bptt_msm: OMP_NUM_THREADS asks for 100000 "
                  "threads; using 4096" in err,
                  "%s: no warning of the cap: %r" % (what, err))
    # the locale: the system's, or one built with localedef into LOCPATH
    env = {}
    tmp = None
    names = subprocess.run(["locale", "-a"], capture_output=True,
                           text=True).stdout.lower().split()
    if "de_de.utf8" not in names and "de_de.utf-8" not in names:
        import tempfile
        tmp = tempfile.mkdtemp(prefix="bptt-locale-")
        made = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8",
                               os.path.join(tmp, "de_DE.UTF-8")],
                              capture_output=True).returncode == 0
        env["LOCPATH"] = tmp
        if not made:
            env = None
    if env is None:
        print("SKIP: test_bptt_msm: de_DE locale: none installed, and "
              "localedef could not build one")
    else:
        program = ("import locale, bptt_msm\n"
                   "locale.setlocale(locale.LC_ALL, 'de_DE.UTF-8')\n"
                   "assert locale.localeconv()['decimal_point'] == ','\n"
                   "print(bptt_msm.plan(100, 8, 8, memory='2.5%').memory_bytes,"
                   " bptt_msm.memory_bytes('1.5KiB', 100, 8, 8),"
                   " bptt_msm.memory_bytes('0.5KiB', 100, 8, 8))\n")
        rc, out, err = python_run(program, **env)
        check(rc == 0 and out.split() == ["16", "1536", "512"],
              "de_DE locale: plan(memory='2.5%%'): exit %d, %r, %s"
              % (rc, out, err[-300:]))
    if tmp:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    # hex, exponents, inf and nan are no budgets
    for bad in ("0x10KiB", "0x1p10B", "1e3B", "inf%", "nan%"):
        raises(ValueError, lambda: bptt_msm.plan(100, 8, 8, memory=bad),
               "memory=%r" % bad)


def main():
    test_planner()
    test_hostile_env()
    test_scan()
    test_auto()
    test_recomputing()
    test_scan_refuses()
    if FAILS:
        sys.stderr.write("test_bptt_msm: %d failure(s)\n" % len(FAILS))
        return 1
    print("test_bptt_msm: all passed (%d model, strategy and budget cases "
          "against the loop)" % sum(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
