"""bptt_msm.torch: a recurrent step run under an exact checkpointing plan.

    carry, ys = bptt_msm.torch.scan(step, init, xs, memory="5%")

xs may also be an iterable of per-step items whose length is known only
at its end, and while_loop(cond, step, init, memory=...) runs a step while
cond holds: both under the core's online planner (_online.py).

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
  write_hidden i      (offload) copy the running carry and state to the
                      slow level
  write_internal i    (offload) copy what the working graph holds (its
                      saved tensors, carry and state) to the slow level;
                      the fast copies go when the graph is no longer in
                      use (_slow.py)
  read_hidden i       (offload) running carry and state := new tensors
                      read from the slow level
  read_internal i     (offload) the graph's tensors read back: it is the
                      working graph again, its carry the running one
  drop_hidden/drop_internal i   let go of a state on the slow level
The forward sweep (the actions up to the first backward) runs when scan
is called, and finds every tensor the steps reach that needs a gradient
(the parameters); the rest runs in the backward of one autograd Function
whose inputs are the init, the xs and those parameters, so autograd hands
each parameter its gradient once, summed, as it does the loop's."""

import os

import torch

import bptt_msm as _planner

from ._common import _LOCAL, _NAME
from ._nest import _build, _describe, _flatten
from ._held import Sizes
from ._runner import _Runner, _plan
from ._scanfn import _Scan, _armed_replay, _check_memory, _empty
from ._twolevel import move_cost
from . import _online
from ._online import while_loop

__all__ = ["scan", "while_loop", "Sizes", "recomputing"]


def recomputing():
    """True while scan calls the step again for a step it has run before
    (a recomputation), in this thread: a step with effects outside what
    scan replays (appending to a list, a Python counter, logging) can skip
    them then, and so have them once per step, as in the loop."""
    return getattr(_LOCAL, "again", False)


# ---- budgets and strategies ---------------------------------------------------

STRATEGIES = ("auto",) + _planner.STRATEGIES
DEFAULT_MEMORY = "10%"
# strategy="auto" runs Chen's segments where their forward ops are at
# most this many times MSM's at the same budget: measured side by side
# (doc/pytorch.md, "Choosing a strategy"), scan took the same time under
# either there, and Chen's segments store less
_CHEN_OPS_RATIO = 1.15


def _choose(runner, memory, strategy, segment, slow=None):
    """The plan: strategy's at memory (None: the default), or, for "auto",
    the cheaper of msm's and chen's; slow: (slow_memory, write_cost,
    read_cost), a two-level plan.  InfeasibleBudget names memory as it was
    given."""
    s = runner.sizes
    given = memory if memory is not None else _default_memory(runner)
    names = ("msm", "chen") if strategy == "auto" else (strategy,)
    plans, errors = [], []
    for name in names:
        seg = segment if name == "chen" else None
        try:
            plans.append(_plan(runner.length, s.hidden_bytes,
                               s.internal_bytes, given, name, seg, slow))
        except _planner.InfeasibleBudget as e:
            errors.append(e)
    if not plans:
        e = min(errors, key=_least)
        if e.min_memory_bytes is None:
            raise e  # its smallest budget is more than 2**63 bytes
    if not plans and memory is None:
        # the default where even that is too small for the strategy asked
        return _choose(runner, e.min_memory_bytes, strategy, segment,
                       slow)
    if not plans:
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


def _offload_args(offload, slow_memory, write_cost, read_cost, strategy):
    """scan's offload arguments checked: (where, slow) for the runner and
    the planner, (None, None) without offload."""
    if offload is None:
        given = [n for n, v in (("slow_memory", slow_memory),
                                ("write_cost", write_cost),
                                ("read_cost", read_cost)) if v is not None]
        if given:
            raise ValueError("%s: %s describe%s the slow level of offload; "
                             "give offload='cpu' or offload='disk:DIR' too"
                             % (_NAME, " and ".join(given),
                                "" if len(given) > 1 else "s"))
        return None, None
    if not isinstance(offload, str):
        raise TypeError("%s: offload must be None, 'cpu' or 'disk:DIR', not "
                        "%s" % (_NAME, _describe(offload)))
    if offload == "cpu":
        where = "cpu"
    elif offload.startswith("disk:"):
        where = offload[len("disk:"):]
        if not where:
            raise ValueError("%s: offload 'disk:' names no directory: give "
                             "'disk:DIR', DIR an existing directory" % _NAME)
        if not os.path.isdir(where):
            raise ValueError("%s: offload %r: %r is not an existing "
                             "directory (scan makes a folder of its own "
                             "inside it, and makes no directory above it)"
                             % (_NAME, offload, where))
        where = os.path.abspath(where)
    else:
        raise ValueError("%s: offload %r: give 'cpu' or 'disk:DIR'"
                         % (_NAME, offload))
    if strategy not in _planner.TWO_LEVEL_STRATEGIES:
        raise ValueError(
            "%s: offload plans with the two-level planner, whose strategies "
            "are hsm and msm; strategy %r has none: give strategy='hsm' or "
            "strategy='msm'" % (_NAME, strategy))
    wd = move_cost("write_cost", 1.0 if write_cost is None else write_cost)
    rd = move_cost("read_cost", 1.0 if read_cost is None else read_cost)
    if slow_memory is None:
        slow_memory = "inf"
    if isinstance(slow_memory, float) and slow_memory == float("inf"):
        slow_memory = "inf"
    if not (isinstance(slow_memory, str) and
            slow_memory.strip().lower() in ("inf", "infinity", "unlimited")):
        try:
            _check_memory(slow_memory)
        except (TypeError, ValueError) as e:
            raise type(e)(str(e).replace("memory", "slow_memory", 1) +
                          "; or 'inf' for no bound") from None
    return where, (slow_memory, wd, rd)


def _least(e):
    """An InfeasibleBudget's smallest budget, for min(); None (too big to
    state) sorts last."""
    return e.min_memory_bytes if e.min_memory_bytes is not None \
        else float("inf")


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
        if e.min_memory_bytes is None:
            raise
        chen = e.min_memory_bytes
    return max(share, chen)


# ---- the autograd node ----------------------------------------------------------

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
         segment=None, info=None, *, length=None, reverse=False,
         lookahead=True, offload=None, slow_memory=None, write_cost=None,
         read_cost=None):
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
    xs        a nest of tensors, time first, or None (then give length);
              or an iterable of per-step items (nests of tensors: a
              generator, iter(a_list), a DataLoader; not a tuple, list or
              dict, which are nests of time-first tensors) whose length is
              known only at its end: the forward runs as items come,
              storing what the online planner says (strategy msm or hsm,
              memory in bytes or slots, required), the items kept for the
              backward pass (doc/pytorch.md, "Sequences of unknown
              length").
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
    lookahead for an iterable xs: take item t + 1 before step t runs, so
              that the last step is known before it runs (the planner
              stores nothing for it); False takes each item after the step
              before it, as the loop does (for an iterable whose items
              depend on what the steps did), the plan at most one stored
              state's use worse.
    offload   None (one level), "cpu" or "disk:DIR": a two-level plan
              (doc/twolevel.md) whose slow level is host memory (pinned
              where the carry is on a CUDA device) or files in a fresh
              folder made inside DIR (an existing directory), removed
              after the backward pass.  strategy hsm or msm only (others
              are refused); memory is then the fast level's budget.  Hidden
              states move as their tensors; an internal state (a step's
              autograd graph) as the tensors it saved, its carry and its
              replayed state, the graph's nodes staying where they are: the
              values and gradients are those without offload, bit for bit
              (doc/pytorch.md, "Offload").  info["offload"] counts the
              writes, reads and bytes moved.
    slow_memory  the slow level's budget (offload only): "inf" (the
              default: no bound), an int of bytes, "64MiB", "150slots".
    write_cost, read_cost  (offload only) what writing and reading a hidden
              state's worth costs, in forward steps of the model (an
              internal state alpha times that): finite numbers >= 0,
              default 1.0 each (not measured); the plan minimises forward
              steps + write_cost x states' worth written + read_cost x
              those read.

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
    where, slow = _offload_args(offload, slow_memory, write_cost, read_cost,
                                strategy)
    if isinstance(holder, torch.nn.Module):
        params = params + tuple(p for p in holder.parameters()
                                if p.requires_grad)
    if _online.is_iterable(xs):
        if where is not None:
            raise ValueError("%s: offload needs the length before the "
                             "first step (its planner plans the whole "
                             "sequence); xs is an iterable of unknown length"
                             % _NAME)
        return _online.scan_iterable(step, holder, init, xs, memory,
                                     strategy, params, info, length, reverse,
                                     lookahead)
    if lookahead is not True:
        raise ValueError("%s: lookahead is for xs an iterable of unknown "
                         "length; the length of these xs is known" % _NAME)
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
    r.offload = where
    if where is not None and info is not None:
        info["offload"] = r.offload_counts
    replay = _armed_replay(r, holder,
                           list(carry) + list(xs_flat) + list(params))
    r.first(carry, params, replay)
    if not r.params and not any(c.requires_grad for c in carry) and \
            not r.x_grad:
        # nothing needs a gradient: the loop, with step 1's results
        return _rest_plain(r, init, info)
    plan = _choose(r, memory, strategy, segment, slow)
    if info is not None:
        info["plan"] = plan
        info["strategy"] = plan.strategy
        info["sizes"] = r.sizes
        info["trace"] = trace
    try:
        r.prepare(plan, carry)
        r.run(r.first_backward)
    except BaseException:
        r.close_slow()  # the slow level's folder goes with the error
        raise
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
