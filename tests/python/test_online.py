"""tests/python/test_online.py: sequences whose length is known only at
their end (tests/test_python.sh).

The core's online planner through bptt_msm.OnlinePlanner (no torch
needed): the actions handed out are the finished plan's first ones, the
planner's stored bytes never above the budget, bad input refused.

bptt_msm.torch.scan over a generator and bptt_msm.torch.while_loop
against the written-out loops

    for x in items:  carry, y = step(carry, x)
    while (max_steps is None or n < max_steps) and cond(carry): ...

with the same seeds: the final carry, the ys, every gradient (parameters,
init, the items) and the state the case is about (the generator after the
backward pass, BatchNorm's statistics, hook calls) bit for bit with
torch.equal; the step called exactly the plan's forward ops; the stored
bytes measured after every action (info["trace"]) never above the plan's
peak, itself within the budget, and the working graph at most one step's
internal state.  Lengths 1, 2, 7, 40 and 150, unknown to scan; hsm and msm
at several budgets; lookahead on and off.  Without torch the planner part
runs and the rest is skipped by name.  Exit 0 with a one-line summary, or
1 with each failure on stderr."""
import sys
import time

import bptt_msm
from expect import FAILS, check, raises

try:
    import torch
except ImportError:  # the planner part runs; the rest is skipped by name
    torch = None

RAN = []


# ---- the planner ------------------------------------------------------------

def planner_cases():
    for strat in bptt_msm.ONLINE_STRATEGIES:
        for h, s, mem in [(1, 4, "3slots"), (1, 4, "12slots"), (8, 36, 100),
                          (6, 21, "1KiB")]:
            for T in (1, 2, 7, 40, 150):
                for look in (True, False):
                    tag = "online %s h=%d s=%d %s T=%d lookahead %s" % (
                        strat, h, s, mem, T, look)
                    o = bptt_msm.OnlinePlanner(strat, h, s, mem)
                    out, held = [], []
                    for t in range(T):
                        out.extend(o.next(look and t == T - 1))
                        held.append(o.held_bytes)
                    p = o.finish()
                    RAN.append(tag)
                    check(p.actions[:p.prefix] == tuple(out),
                          tag + ": the plan's first actions are not those "
                          "handed out")
                    check(p.length == T and p.online and
                          p.lookahead == (look and T >= 1),
                          tag + ": length %d, online %s, lookahead %s"
                          % (p.length, p.online, p.lookahead))
                    check(max(held) <= p.memory_bytes and
                          p.peak_bytes <= p.memory_bytes,
                          tag + ": held %d, peak %d, over the budget %d"
                          % (max(held), p.peak_bytes, p.memory_bytes))
                    check(sum(a == "advance" for a, _ in out) == T and
                          out[-1] == ("advance", T),
                          tag + ": the forward is not one advance a step")
    # lookahead costs no more than announcing nothing
    for T in (5, 20, 60):
        ops = []
        for look in (True, False):
            o = bptt_msm.OnlinePlanner("hsm", 1, 1, "4slots")
            for t in range(T):
                o.next(look and t == T - 1)
            ops.append(o.finish().forward_ops)
        check(ops[0] <= ops[1], "hsm T=%d: lookahead %d forward ops, none %d"
              % (T, ops[0], ops[1]))
    e = raises(ValueError, lambda: bptt_msm.OnlinePlanner("msm", 1, 4, "5%"),
               "online share", "give bytes")
    check(e is None or "slots" in str(e), "online share: no slots named")
    e = raises(bptt_msm.InfeasibleBudget,
               lambda: bptt_msm.OnlinePlanner("hsm", 8, 32, 7),
               "online below one carry", "smallest feasible budget is 8")
    check(e is None or e.min_memory_bytes == 8, "online min_memory_bytes")
    raises(ValueError, lambda: bptt_msm.OnlinePlanner("chen", 1, 4, 10),
           "online chen", "no online planner")
    o = bptt_msm.OnlinePlanner("hsm", 1, 4, 10)
    raises(bptt_msm.PlanError, lambda: o.finish(), "finish before a step")
    o = bptt_msm.OnlinePlanner("hsm", 1, 4, 10)
    o.next(True)
    raises(bptt_msm.PlanError, lambda: o.next(False), "a step after the last")
    o.finish()
    raises(ValueError, lambda: o.next(False), "a step after finish",
           "finished")


def planner_prefix():
    """Plans for lengths T and T + k share what was handed out before
    step T began (all of it, advance T included, without the lookahead)."""
    for strat in bptt_msm.ONLINE_STRATEGIES:
        for h, s, mem in [(1, 4, "3slots"), (1, 1, "10slots"), (1, 2, 41)]:
            for look in (True, False):
                plans = {}
                for T in (1, 6, 25, 90):
                    o = bptt_msm.OnlinePlanner(strat, h, s, mem)
                    handed, kept = [], 0
                    for t in range(T):
                        if t == T - 1:
                            kept = len(handed)
                        handed.extend(o.next(look and t == T - 1))
                    plans[T] = (o.finish(), kept if look else len(handed))
                RAN.append("prefix %s %s lookahead %s" % (strat, mem, look))
                for a in plans:
                    for b in plans:
                        if a < b:
                            pa, same = plans[a]
                            pb = plans[b][0]
                            check(pa.actions[:same] == pb.actions[:same],
                                  "online %s %s lookahead %s: T=%d and "
                                  "T=%d differ within the first %d actions"
                                  % (strat, mem, look, a, b, same))


# ---- against the loops ----------------------------------------------------------

def gen_loop(step, init, items):
    """The written-out loop over an iterable."""
    from test_field import tzip
    carry, ys = init, []
    for x in items:
        carry, y = step(carry, x)
        ys.append(y)
    return carry, tzip(torch.stack, ys)


def while_plain(cond, step, init, max_steps=None, with_y=False):
    """The written-out while loop: (carry, ys or None, steps)."""
    from test_field import tzip
    carry, ys, n = init, [], 0
    while (max_steps is None or n < max_steps) and cond(carry):
        if with_y:
            carry, y = step(carry)
            ys.append(y)
        else:
            carry = step(carry)
        n += 1
    return carry, (tzip(torch.stack, ys) if ys else None), n


def checked(tag, info, T, budget=None):
    """What every online run promises, from info."""
    p = info.get("plan")
    if not check(p is not None, tag + ": info has no plan"):
        return None
    check(p.length == T and info.get("length") == T,
          "%s: ran %s steps (plan %d), the loop %d"
          % (tag, info.get("length"), p.length, T))
    check(info["calls"] == p.forward_ops,
          "%s: step called %d times, the plan has %d forward ops"
          % (tag, info["calls"], p.forward_ops))
    held = [a[2] for a in info["trace"]]
    work = [a[3] for a in info["trace"]]
    check(len(held) == len(p.actions), tag + ": trace of %d actions, plan %d"
          % (len(held), len(p.actions)))
    check(max(held) <= p.peak_bytes <= p.memory_bytes,
          "%s: stored bytes peaked at %d, the plan's peak %d, the budget %d"
          % (tag, max(held), p.peak_bytes, p.memory_bytes))
    check(max(held[:p.prefix]) <= p.memory_bytes,
          "%s: the forward held %d bytes, over the budget %d"
          % (tag, max(held[:p.prefix]), p.memory_bytes))
    if budget is not None:
        check(p.memory_bytes <= budget, "%s: budget %d bytes, asked %d"
              % (tag, p.memory_bytes, budget))
    check(max(work) <= info["sizes"].internal_bytes,
          "%s: the working graph held %d bytes, over one internal state %d"
          % (tag, max(work), info["sizes"].internal_bytes))
    check(held[-1] == 0, tag + ": states left stored (%d bytes)" % held[-1])
    check(all(op == "advance" or op.startswith("save") or
              op.startswith("free") for op, _, _, _ in
              info["trace"][:p.prefix]) and
          sum(op == "advance" for op, _, _, _ in info["trace"][:p.prefix])
          == T, tag + ": the forward is not one advance a step")
    return p


PLANS = [("msm", "2slots", True), ("msm", "5slots", True),
         ("msm", "5slots", False), ("hsm", "3slots", True),
         ("hsm", "3slots", False), ("msm", "big", True), ("hsm", "big", False)]


def cells():
    """nn.LSTMCell and nn.GRUCell (in the test's Cell, and the GRUCell as
    it is), lengths 1 to 150 from a generator: the loop's values and
    gradients of the parameters, init and every item."""
    import models
    import bptt_msm.torch as bt
    from test_field import compare, outcome
    B, X, H = 3, 4, 5
    for kind in ("lstm", "gru", "gru-cell"):
        torch.manual_seed(31)
        m = models.Cell("lstm" if kind == "lstm" else "gru", X, H)
        step = m.cell if kind == "gru-cell" else m
        h = torch.randn(B, H)
        init = (h.clone().requires_grad_(), torch.randn(B, H).requires_grad_()) \
            if kind == "lstm" else h.requires_grad_()
        # the sizes, for budgets in bytes: three internal states and a carry
        info = {}
        bt.scan(step, init, iter([torch.zeros(B, X)] * 2), memory="100slots",
                info=info)
        s = info["sizes"]
        big = 3 * s.internal_bytes + s.hidden_bytes
        recomputed = 0
        for T in (1, 2, 7, 40, 150):
            xs = torch.randn(T, B, X, requires_grad=True)
            named = [("xs", xs)] + ([("h0", init[0]), ("c0", init[1])]
                                    if kind == "lstm" else [("h0", init)]) \
                + list(m.named_parameters())
            ref = outcome(lambda: gen_loop(m, init, (xs[t] for t in range(T))),
                          named)
            for strat, mem, look in PLANS:
                mem = big if mem == "big" else mem
                tag = "%s T=%d %s %s lookahead %s" % (kind, T, strat, mem, look)
                info = {}
                try:
                    got = outcome(lambda: bt.scan(
                        step, init, (xs[t] for t in range(T)), memory=mem,
                        strategy=strat, info=info, lookahead=look), named)
                except Exception as e:
                    check(False, "%s: raised %s: %s" % (tag, type(e).__name__,
                                                       e))
                    continue
                RAN.append(tag)
                compare(tag, ref, got)
                p = checked(tag, info, T, mem if isinstance(mem, int) else None)
                if p is not None:
                    recomputed += p.forward_ops > T
                    check(p.lookahead == (look and True),
                          "%s: plan.lookahead %s" % (tag, p.lookahead))
        check(recomputed >= 10, "%s: only %d runs recomputed a step"
              % (kind, recomputed))
    # what the forward really holds (every saved tensor alive, found by the
    # garbage collector, not by scan's own count): the budget and one
    # step's internal state, not 150 steps' graphs
    import gc
    from bptt_msm._held import _Packed, _storage_key
    torch.manual_seed(33)
    m = models.Cell("lstm", X, H)
    xs = torch.randn(150, B, X, requires_grad=True)
    init = (torch.randn(B, H), torch.randn(B, H))
    outside = {_storage_key(t)[0] for t in [xs] + list(m.parameters())}
    def alive():
        import warnings
        gc.collect()
        out = {}
        with warnings.catch_warnings():  # objects of torch's that warn
            warnings.simplefilter("ignore")
            objs = [o for o in gc.get_objects() if type(o) is _Packed]
        for o in objs:
            if o.tensor is not None:
                k, n = _storage_key(o.tensor)
                if k not in outside:
                    out[k] = n
        return out
    for strat, mem in [("hsm", "3slots"), ("msm", "6slots")]:
        info = {}
        before = alive()
        carry, ys = bt.scan(m, init, (xs[t] for t in range(150)), memory=mem,
                            strategy=strat, info=info)
        s = info["sizes"]
        held = sum(n for k, n in alive().items() if k not in before)
        RAN.append("alive " + strat)
        check(held <= info["plan"].memory_bytes + s.internal_bytes and
              held < 10 * s.internal_bytes,
              "%s %s: the forward keeps %d bytes of saved tensors alive; the "
              "budget is %d, a step's internal state %d"
              % (strat, mem, held, info["plan"].memory_bytes,
                 s.internal_bytes))
        ys.sum().backward()
    # the comparison can tell: another init gives other gradients
    torch.manual_seed(32)
    m = models.Cell("gru", X, H)
    xs = torch.randn(7, B, X, requires_grad=True)
    h0 = torch.randn(B, H, requires_grad=True)
    named = [("xs", xs), ("h0", h0)] + list(m.named_parameters())
    a = outcome(lambda: gen_loop(m, h0, iter(xs)), named)
    b = outcome(lambda: bt.scan(m, h0 * 1.01, iter(xs), memory="2slots"),
                named)
    from test_field import same_tree
    check(not same_tree(a["grad weight_hh"] if "grad weight_hh" in a else
                        a["grad cell.weight_hh"],
                        b["grad weight_hh"] if "grad weight_hh" in b else
                        b["grad cell.weight_hh"]),
          "the comparison cannot tell two inits apart")


def state_cases():
    """Dropout (the generator replayed, and after the backward pass the
    loop's), BatchNorm's statistics, a counter buffer each step reads,
    hooks, autocast, items computed with
    a gradient of their own."""
    import copy
    import collections
    import bptt_msm.torch as bt
    from test_field import (DropStep, BNStep, AmpStep, CountStep, compare,
                            outcome, named_module, buffers_of, same_tree,
                            data)
    for name, base_of, seeded in [("dropout", lambda: DropStep(0.3), True),
                                  ("batchnorm", BNStep, False),
                                  ("counter", CountStep, False)]:
        for T in (7, 40):
            xs, h0 = data(41, T_=T)
            torch.manual_seed(42)
            base = base_of()

            def go(fn_of, seed=7):
                mod = copy.deepcopy(base)

                def fn():
                    torch.manual_seed(seed)
                    return fn_of(mod)

                def extra():
                    out = buffers_of(mod)
                    out["rng after"] = torch.rand(4)
                    return out
                return outcome(fn, named_module(mod, xs=xs, h0=h0),
                               extra=extra)
            ref = go(lambda mod: gen_loop(mod, h0, iter(xs)))
            if seeded:
                check(not same_tree(ref["ys"], go(lambda mod: gen_loop(
                    mod, h0, iter(xs)), seed=8)["ys"]),
                      "dropout: the seed does not matter")
            elif name == "batchnorm":
                check(int(ref["buffer bn.num_batches_tracked"]) == T,
                      "batchnorm: the loop's counter")
            else:  # read by each step: a recomputation must see its own
                check(int(ref["buffer count"]) == T, "counter: the loop's")
            for strat, mem, look in [("hsm", "3slots", True),
                                     ("msm", "4slots", True),
                                     ("msm", "4slots", False)]:
                tag = "%s T=%d %s %s lookahead %s" % (name, T, strat, mem,
                                                      look)
                info = {}
                got = go(lambda mod: bt.scan(mod, h0, iter(xs), memory=mem,
                                             strategy=strat, info=info,
                                             lookahead=look))
                RAN.append(tag)
                compare(tag, ref, got)
                p = checked(tag, info, T)
                check(p is None or p.forward_ops > T, tag + ": no recompute")
    # hooks: once per backward, as in the loop
    xs, h0 = data(43, T_=20)
    cell = torch.nn.GRUCell(xs.shape[2], h0.shape[1])

    def step(h, x):
        h = cell(x, h)
        return h, h
    calls = collections.Counter()
    handles = [p.register_hook(lambda g, n=n: calls.update([n]))
               for n, p in cell.named_parameters()]
    try:
        named = list(cell.named_parameters()) + [("xs", xs), ("h0", h0)]
        ref = outcome(lambda: gen_loop(step, h0, iter(xs)), named)
        want = dict(calls)
        for strat in ("hsm", "msm"):
            calls.clear()
            got = outcome(lambda: bt.scan(step, h0, iter(xs),
                                          memory="3slots", strategy=strat),
                          named)
            RAN.append("hooks " + strat)
            compare("hooks " + strat, ref, got)
            check(dict(calls) == want, "hooks %s: called %s, the loop's %s"
                  % (strat, dict(calls), want))
    finally:
        for hd in handles:
            hd.remove()
    # autocast: the loop with the cast cache off, bit for bit (as scan's)
    xs, h0 = data(44, T_=16)
    torch.manual_seed(45)
    base = AmpStep()

    def go_amp(fn_of, cache):
        mod = copy.deepcopy(base)

        def fn():
            with torch.autocast("cpu", dtype=torch.bfloat16,
                                cache_enabled=cache):
                return fn_of(mod)
        return outcome(fn, named_module(mod, xs=xs, h0=h0))
    ref = go_amp(lambda mod: gen_loop(mod, h0, iter(xs)), False)
    for strat in ("hsm", "msm"):
        info = {}
        got = go_amp(lambda mod: bt.scan(mod, h0, iter(xs), memory="3slots",
                                         strategy=strat, info=info), True)
        RAN.append("autocast " + strat)
        compare("autocast " + strat, ref, got)
        checked("autocast " + strat, info, 16)
    # items computed from a parameter (an encoder applied as items come):
    # the items' gradients the loop's, the encoder's within float rounding
    # (autograd adds the items' gradients into it, not the loop's order)
    torch.manual_seed(46)
    enc = torch.nn.Linear(3, 4)
    raw = torch.randn(25, 2, 3)
    cell = torch.nn.GRUCell(4, 5)
    h0 = torch.randn(2, 5, requires_grad=True)

    def step2(h, x):
        h = cell(x, h)
        return h, h
    named = [("h0", h0)] + list(cell.named_parameters()) + \
        [("enc." + n, p) for n, p in enc.named_parameters()]
    ref = outcome(lambda: gen_loop(step2, h0, (enc(r) for r in raw)), named)
    got = outcome(lambda: bt.scan(step2, h0, (enc(r) for r in raw),
                                  memory="3slots"), named)
    RAN.append("encoder items")
    exact = [k for k in ref if not k.startswith("grad enc.")]
    compare("encoder items", {k: ref[k] for k in exact},
            {k: got[k] for k in exact})
    check(all(torch.allclose(ref[k], got[k], rtol=1e-5, atol=1e-6)
              for k in ref if k.startswith("grad enc.")),
          "encoder items: the encoder's gradients differ beyond rounding")
    # a generator drawing random numbers (noise on the inputs) with a step
    # that draws none: the loop's values
    xs, h0 = data(47, T_=30)
    named = list(cell.named_parameters()) + [("h0", h0)]
    cellx = torch.nn.GRUCell(xs.shape[2], h0.shape[1])

    def step3(h, x):
        h = cellx(x, h)
        return h, h
    named = list(cellx.named_parameters()) + [("h0", h0)]

    def noisy():
        for x in xs:
            yield x + 0.1 * torch.randn_like(x)

    def seeded(fn):
        def run():
            torch.manual_seed(5)
            return fn()
        return outcome(run, named, extra=lambda: {"rng": torch.rand(3)})
    ref = seeded(lambda: gen_loop(step3, h0, noisy()))
    for look in (True, False):
        info = {}
        got = seeded(lambda: bt.scan(step3, h0, noisy(), memory="3slots",
                                     info=info, lookahead=look))
        tag = "noisy items, lookahead %s" % look
        RAN.append(tag)
        compare(tag, ref, got)
        checked(tag, info, 30)


class Growing(torch.nn.Module if torch is not None else object):
    """carry (h, total): total adds |h| each step; an episode ends when it
    passes a limit."""

    def __init__(self, n, drop=0.0):
        super().__init__()
        self.lin = torch.nn.Linear(n, n)
        self.drop = torch.nn.Dropout(drop)

    def forward(self, carry):
        h, total = carry
        h = torch.tanh(self.lin(self.drop(h)) + h)
        return (h, total + h.abs().mean()), h * 2


def while_cases():
    """while_loop against the written-out loop: an episode ending by a rule
    on the state (a running total over a limit, a norm threshold), with and
    without max_steps, with dropout in the step, with and without ys."""
    import copy
    import bptt_msm.torch as bt
    from test_field import compare, same_tree
    torch.manual_seed(51)
    n = 6
    for drop in (0.0, 0.3):
        base = Growing(n, drop)
        h0 = (torch.randn(4, n) * 0.3).requires_grad_()
        for limit, max_steps in [(0.0, None), (0.4, None), (3.0, None),
                                 (12.0, None), (1e9, 45), (3.0, 1),
                                 (3.0, 2)]:
            def go(run, seed=3):
                mod = copy.deepcopy(base)
                for p in mod.parameters():
                    p.grad = None
                h0.grad = None
                torch.manual_seed(seed)
                out = run(mod, lambda c: c[1] < limit)
                (carry, ys), steps = out[:2], out[2]
                loss = (carry[0] * carry[0]).sum() + carry[1] * 3
                if ys is not None:
                    loss = loss + (ys * ys.detach().cos()).sum()
                loss.backward()
                res = {"carry": [c.detach() for c in carry],
                       "ys": None if ys is None else ys.detach(),
                       "grad h0": h0.grad.clone(),
                       "rng after": torch.rand(3)}
                for k, p in mod.named_parameters():
                    res["grad " + k] = None if p.grad is None else \
                        p.grad.clone()
                return res, steps
            init = (h0, torch.zeros(()))
            ref, steps = go(lambda mod, cond: while_plain(
                cond, mod, init, max_steps, True))
            for strat, mem in [("hsm", "3slots"), ("msm", "4slots"),
                               ("msm", "20slots")]:
                tag = "while_loop drop=%s limit=%s max_steps=%s (%d steps) " \
                    "%s %s" % (drop, limit, max_steps, steps, strat, mem)
                info = {}

                def run(mod, cond):
                    out = bt.while_loop(cond, mod, init, memory=mem,
                                        strategy=strat,
                                        max_steps=max_steps, info=info)
                    return out[0], out[1], info.get("length")
                try:
                    got, got_steps = go(run)
                except Exception as e:
                    check(False, "%s: raised %s: %s" % (tag, type(e).__name__,
                                                       e))
                    continue
                RAN.append(tag)
                check(got_steps == steps, "%s: %s steps" % (tag, got_steps))
                if steps == 0:  # the loop stacks nothing: ys of length 0
                    ys = got.pop("ys")
                    check(ys is not None and ys.shape[0] == 0 and
                          ref["ys"] is None, "%s: ys %s" % (tag, ys))
                    got["ys"] = None
                compare(tag, ref, got)
                if steps > 0:
                    p = checked(tag, info, steps)
                    if p is not None:
                        check(p.lookahead == (max_steps is not None and
                                              steps == max_steps),
                              "%s: plan.lookahead %s" % (tag, p.lookahead))
            if drop > 0 and steps > 3:
                other, _ = go(lambda mod, cond: while_plain(
                    cond, mod, init, max_steps, True), seed=4)
                check(not same_tree(ref["grad lin.weight"],
                                    other["grad lin.weight"]),
                      "while_loop: the dropout seed does not matter")
    # a carry alone (no ys), ending on a norm threshold
    torch.manual_seed(52)
    cell = torch.nn.GRUCell(3, 5)
    x = torch.randn(2, 3)
    h0 = (torch.randn(2, 5) * 0.1).requires_grad_()

    def step(h):
        return h * 1.15 + 0.05 * cell(x, h)

    def cond(h):
        return h.norm() < 2.5
    named = [("h0", h0)] + list(cell.named_parameters())

    def go(run):
        for _, p in named:
            p.grad = None
        c = run()
        (c * c).sum().backward()
        return {"carry": c.detach(),
                **{"grad " + k: p.grad.clone() for k, p in named}}
    c_ref, _, steps = while_plain(cond, step, h0, 500)
    ref = go(lambda: while_plain(cond, step, h0, 500)[0])
    check(10 < steps < 500, "while_loop norm: %d steps" % steps)
    for strat, mem in [("hsm", "2slots"), ("msm", "6slots")]:
        info = {}
        got = go(lambda: bt.while_loop(cond, step, h0, memory=mem,
                                       strategy=strat, max_steps=500,
                                       info=info))
        tag = "while_loop norm threshold %s %s" % (strat, mem)
        RAN.append(tag)
        compare(tag, ref, got)
        checked(tag, info, steps)
    # no step: init itself, and ys of length 0 where the step returns y
    mod = Growing(n)
    init = (torch.randn(4, n), torch.zeros(()))
    c, ys = bt.while_loop(lambda c: False, mod, init, memory="4slots")
    check(c is init and tuple(ys.shape) == (0, 4, n),
          "while_loop with no step: %s, ys %s" % (c is init, tuple(ys.shape)))
    check(bt.while_loop(cond, step, h0, memory="4slots", max_steps=0) is h0,
          "while_loop max_steps=0 is not init")


def refusals():
    import bptt_msm.torch as bt
    from test_field import DropStep, data
    xs, h0 = data(61, T_=5)
    m = DropStep(0.0)
    gen = lambda: iter(xs)  # noqa: E731
    e = raises(ValueError, lambda: bt.scan(m, h0, gen(), memory="5%"),
               "scan of an iterable at 5%", "needs the length")
    check(e is None or ("slots" in str(e) and "64MiB" in str(e)),
          "the share refused without saying what works: %s" % e)
    raises(TypeError, lambda: bt.scan(m, h0, gen()), "scan of an iterable "
           "without memory", "give memory")
    raises(ValueError, lambda: bt.scan(m, h0, gen(), memory="4slots",
                                       strategy="chen"),
           "chen for an iterable", "msm, hsm")
    raises(ValueError, lambda: bt.scan(m, h0, gen(), memory="4slots",
                                       reverse=True), "reverse", "reverse")
    raises(ValueError, lambda: bt.scan(m, h0, gen(), memory="4slots",
                                       length=5), "length", "length")
    raises(ValueError, lambda: bt.scan(m, h0, iter([]), memory="4slots"),
           "an empty iterable", "no item")
    raises(ValueError, lambda: bt.scan(m, h0, iter([xs[0], (xs[1],)]),
                                       memory="4slots"),
           "items of two structures", "one structure")
    raises(ValueError, lambda: bt.scan(m, h0, xs, memory="4slots",
                                       lookahead=False),
           "lookahead with tensor xs", "lookahead")
    raises(bptt_msm.InfeasibleBudget,
           lambda: bt.scan(m, h0, gen(), memory=1), "scan of an iterable "
           "at 1 byte", "smallest feasible budget")
    # nothing needs a gradient at step 1 (the loop without a plan), and a
    # later item does: refused, not its gradient lost
    plain = torch.nn.Linear(4, 4).requires_grad_(False)
    late = [torch.randn(2, 4), torch.randn(2, 4, requires_grad=True)]
    raises(RuntimeError, lambda: bt.scan(lambda h, x: (plain(h) + x, h),
                                         torch.zeros(2, 4), iter(late),
                                         memory="3slots"),
           "a later item needing a gradient", "needs a gradient")
    # a generator that draws and a step that draws: the loop's order cannot
    # be kept by a recomputation, refused
    drop = DropStep(0.5)

    def noisy():
        for x in xs:
            yield x + torch.randn_like(x)
    def noisy2():  # two items: the one taken ahead of step 1 draws
        for x in xs[:2]:
            yield x + torch.randn_like(x)
    raises(RuntimeError, lambda: bt.scan(drop, h0, noisy2(), memory="3slots"),
           "a drawing generator of two items and a drawing step",
           "random numbers")
    for look in (True, False):
        raises(RuntimeError, lambda: bt.scan(drop, h0, noisy(),
                                             memory="3slots",
                                             lookahead=look),
               "a drawing generator and a drawing step", "random numbers")
    raises(RuntimeError, lambda: bt.while_loop(
        lambda c: torch.rand(()) >= 0, lambda h: drop(h, xs[0]), h0,
        memory="3slots", max_steps=20), "a drawing cond and a drawing step",
        "random numbers")
    raises(TypeError, lambda: bt.while_loop(None, lambda h: h, h0,
                                            memory="3slots"), "cond None",
           "cond")
    raises(ValueError, lambda: bt.while_loop(lambda h: True, lambda h: h, h0,
                                             memory="3slots", max_steps=-1),
           "max_steps -1", "max_steps")
    raises(ValueError, lambda: bt.while_loop(lambda h: True, lambda h: h, h0,
                                             memory="10%"),
           "while_loop at 10%", "needs the length")
    raises(TypeError, lambda: bt.while_loop(
        lambda h: True, lambda h: (h, h, h), h0, memory="3slots",
        max_steps=3), "a step returning three things", "pair (carry, y)")


def main():
    start = time.monotonic()
    cases = [planner_cases, planner_prefix]
    if torch is None:
        print("SKIP: test_online: scan over an iterable and while_loop: "
              "python3 cannot import torch (apt-get install python3-torch)")
    else:
        cases += [cells, state_cases, while_cases, refusals]
    for fn in cases:
        t0 = time.monotonic()
        try:
            fn()
        except Exception as e:
            import traceback
            tb = traceback.format_exc().rstrip().splitlines()
            check(False, "%s: raised %s: %s (%s)" % (fn.__name__,
                                                     type(e).__name__, e,
                                                     tb[-3].strip()))
        if "-v" in sys.argv:
            print("%s: %.1f s" % (fn.__name__, time.monotonic() - t0))
    took = time.monotonic() - start
    if FAILS:
        sys.stderr.write("test_online: %d failure(s) (%.1f s)\n"
                         % (len(FAILS), took))
        return 1
    print("test_online: all passed (%d runs against the loops and the "
          "planner, %.1f s)" % (len(RAN), took))
    return 0


if __name__ == "__main__":
    sys.exit(main())
