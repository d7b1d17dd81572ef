"""The pieces scan and the online entries share: the check of a memory
argument, the autograd node whose backward runs a plan's reversal, and
the ys of a loop of no steps.  (torch.py's scan and _online.py's iterable
scan and while_loop both use them; neither imports the other for them.)
"""
import math

import torch

from ._common import _NAME
from ._nest import _build, _describe, _flatten
from ._replay import _Autocast, _Replay, _autocast_state, _state_candidates


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


def _armed_replay(r, holder, tensors):
    """The run's autocast (r.amp where it is on) and the replay of the
    random states, buffers and CUDA devices the step may touch, the
    devices read from tensors (the carry, the inputs, the parameters)."""
    r.autocast = _autocast_state()
    if r.autocast[0] or r.autocast[2]:
        r.amp = _Autocast(r.autocast)
    devices = sorted({t.device.index or 0 for t in tensors
                      if t.device.type == "cuda"})
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        devices = sorted(set(devices) | {torch.cuda.current_device()})
    return _Replay(_state_candidates(holder, ()), devices)


class _Scan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, runner, *flat):
        ctx.set_materialize_grads(False)
        ctx.runner = runner
        # the inputs are saved only so that autograd checks, at backward,
        # that none was changed in place since: scan reads them again
        ctx.save_for_backward(*flat)
        # handed over, not kept: the runner holding its own outputs (whose
        # node holds ctx, which holds the runner) would be a cycle through
        # autograd's graph that Python's collector cannot see, and the
        # runner, its stored states with it, would never be freed
        out, runner.outputs = runner.outputs, None
        return out

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
            r.close_slow()
        out = [None]  # the runner
        for t, d in zip(r.init, r.grad_carry):
            out.append(d if t.requires_grad else None)
        out.extend(r.x_input_grads())
        out.extend(r.grad_params)
        if r.info is not None:
            r.info["calls"] = r.calls
            r.info["engine_runs"] = r.engine_runs
        return tuple(out)


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
