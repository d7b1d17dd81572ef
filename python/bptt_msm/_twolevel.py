"""Two-level plans from Python: the core's planner over a fast memory and a
slow level (bptt_twolevel_*, include/bptt/twolevel.h; the model is
doc/twolevel.md), through ctypes, as bptt_msm.plan is for one level.

    >>> import bptt_msm
    >>> p = bptt_msm.plan_two_level(1000, 1, 1, "10slots", "hsm",
    ...                             slow_memory="10slots", write_cost=2,
    ...                             read_cost=2)
    >>> p.forward_ops, p.slow_writes, p.slow_reads, p.cost
    (3797, 10, 15, 3847.0)

The budgets and sizes go in in bytes and are turned into the planner's
units as bptt_plan_make turns them (include/bptt/bptt.h): msm counts in
quanta q = gcd(hidden bytes, internal bytes); hsm, which stores hidden
states only, in hidden states (its plan is the same whatever the units,
and its table h times smaller)."""
import ctypes
import math

from . import (InfeasibleBudget, Plan, PlanError, OPS, _Plan, _Stats,
               _Units, _library, _strerror, _whole, memory_bytes, _OK,
               _EINFEASIBLE, _ETOOBIG)

TWO_LEVEL_STRATEGIES = ("hsm", "msm")
SLOW_UNLIMITED = 2 ** 63 - 1  # BPTT_SLOW_UNLIMITED
SLOW_COST_MAX = 1e6           # BPTT_SLOW_COST_MAX


class _SlowLevel(ctypes.Structure):  # bptt_slow_level
    _fields_ = [("budget", ctypes.c_int64),
                ("write_cost", ctypes.c_double),
                ("read_cost", ctypes.c_double)]


class _TwoLevelCost(ctypes.Structure):  # bptt_twolevel_cost
    _fields_ = [("forward_ops", ctypes.c_int64),
                ("slow_writes", ctypes.c_int64),
                ("slow_reads", ctypes.c_int64),
                ("slow_write_units", ctypes.c_int64),
                ("slow_read_units", ctypes.c_int64),
                ("cost", ctypes.c_double)]


_declared = None


def _lib():
    """libbpttcore with the two-level functions' signatures declared."""
    global _declared
    if _declared is not None:
        return _declared
    lib = _library()
    i64, sz, vp = ctypes.c_int64, ctypes.c_size_t, ctypes.c_void_p
    slow = ctypes.POINTER(_SlowLevel)
    lib.bptt_twolevel_alloc.restype = ctypes.c_int
    lib.bptt_twolevel_alloc.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p,
                                        sz, i64, i64, i64, slow]
    lib.bptt_twolevel_free.restype = None
    lib.bptt_twolevel_free.argtypes = [vp]
    lib.bptt_twolevel_bytes_needed.restype = sz
    lib.bptt_twolevel_bytes_needed.argtypes = [ctypes.c_char_p, sz, i64, i64,
                                               i64, slow]
    lib.bptt_twolevel_cost_of.restype = ctypes.c_int
    lib.bptt_twolevel_cost_of.argtypes = [vp, ctypes.POINTER(_TwoLevelCost)]
    lib.bptt_twolevel_plan.restype = ctypes.c_int
    lib.bptt_twolevel_plan.argtypes = [vp,
                                       ctypes.POINTER(ctypes.POINTER(_Plan))]
    _declared = lib
    return lib


def move_cost(name, value):
    """A write or read cost: a number of forward steps per hidden state's
    worth moved, finite, 0 to SLOW_COST_MAX."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError("bptt_msm: %s must be a number (forward steps per "
                        "hidden state moved), not %s"
                        % (name, type(value).__name__))
    value = float(value)
    if not math.isfinite(value) or value < 0 or value > SLOW_COST_MAX:
        raise ValueError("bptt_msm: %s must be a finite number from 0 to %g "
                         "(forward steps per hidden state moved), not %r"
                         % (name, SLOW_COST_MAX, value))
    return value


def slow_memory_bytes(slow_memory, length, hidden_bytes, internal_bytes):
    """The slow level's budget as bytes, None for no bound: "inf" (or
    float("inf")), or what memory_bytes takes (an int of bytes, "64MiB",
    "150slots", "5%" of full BPTT's stored bytes)."""
    if isinstance(slow_memory, float) and slow_memory == math.inf:
        return None
    if isinstance(slow_memory, str) and slow_memory.strip().lower() in (
            "inf", "infinity", "unlimited"):
        return None
    try:
        return memory_bytes(slow_memory, length, hidden_bytes, internal_bytes)
    except (TypeError, ValueError) as e:
        raise type(e)(str(e).replace("memory", "slow_memory", 1) +
                      " (or 'inf': no bound)") from None


def _units(strategy, length, hidden_bytes, internal_bytes, budget, slow):
    """(quantum, h, s, m, d) as the planner takes them (see the module's
    comment); d SLOW_UNLIMITED where slow is None or holds every state the
    plan could put there."""
    lib = _library()
    u = _Units()
    rc = lib.bptt_units_from_bytes(ctypes.byref(u), hidden_bytes,
                                   internal_bytes)
    if rc != _OK:
        raise PlanError("bptt_msm: sizes %d and %d bytes: %s"
                        % (hidden_bytes, internal_bytes, _strerror(rc)))
    if strategy == "hsm":
        q, h, s = hidden_bytes, 1, 1
        most = length  # h(0), ..., h(t-1): all a plan can hold on a level
    else:
        q, h, s = u.quantum, u.hidden_units, u.internal_units
        most = length * (h + s)
    m = min(budget // q, most)
    d = SLOW_UNLIMITED if slow is None or slow // q >= most else slow // q
    return q, h, s, m, d


def plan_two_level(length, hidden_bytes, internal_bytes, memory="100%",
                   strategy="msm", slow_memory="inf", write_cost=1.0,
                   read_cost=1.0):
    """The optimal two-level plan (doc/twolevel.md) of strategy "hsm" or
    "msm" for `length` steps whose states take hidden_bytes and
    internal_bytes, with `memory` of fast memory (as plan() takes it; h(0)
    counted) and `slow_memory` on the slow level ("inf": no bound), where
    writing costs write_cost and reading read_cost forward steps per hidden
    state's worth.  The Plan's actions may include the slow level's ops
    (write_hidden, write_internal, read_hidden, read_internal, drop_hidden,
    drop_internal); besides plan()'s fields it holds slow_memory_bytes
    (None: no bound), slow_peak_bytes, slow_writes, slow_reads,
    slow_write_bytes, slow_read_bytes (the validator's counts), write_cost,
    read_cost and cost (forward ops + write_cost x hidden states' worth
    written + read_cost x those read).  Raises InfeasibleBudget below one
    hidden state of fast memory, PlanError where the table is too big,
    TypeError or ValueError for bad arguments."""
    lib = _lib()
    if not isinstance(strategy, str) or strategy not in TWO_LEVEL_STRATEGIES:
        raise ValueError("bptt_msm: strategy %r has no two-level planner: "
                         "give hsm or msm" % (strategy,))
    length = _whole("length", length, 1)
    wd = move_cost("write_cost", write_cost)
    rd = move_cost("read_cost", read_cost)
    budget = memory_bytes(memory, length, hidden_bytes, internal_bytes)
    slow = slow_memory_bytes(slow_memory, length, hidden_bytes,
                             internal_bytes)
    q, h, s, m, d = _units(strategy, length, hidden_bytes, internal_bytes,
                           budget, slow)
    if m < h:
        raise InfeasibleBudget(
            "bptt_msm: a budget of %d bytes is infeasible for two-level %s "
            "at length %d (hidden state %d bytes, internal state %d bytes): "
            "h(0) starts in fast memory; the smallest feasible budget is %d "
            "bytes (1 slot)" % (budget, strategy, length, hidden_bytes,
                                internal_bytes, h * q), h * q)
    level = _SlowLevel(d, wd, rd)
    name = strategy.encode()
    need = lib.bptt_twolevel_bytes_needed(name, length, h, s, m,
                                          ctypes.byref(level))
    tl = ctypes.c_void_p()
    rc = lib.bptt_twolevel_alloc(ctypes.byref(tl), name, length, h, s, m,
                                 ctypes.byref(level))
    if rc == _ETOOBIG:
        raise PlanError(
            "bptt_msm: the two-level %s table for length %d, %d fast and %s "
            "slow units of %d bytes would take %d bytes, more than half of "
            "physical memory: give the slow level no bound (slow_memory="
            "'inf'), less memory, or hsm" % (strategy, length, m,
            "unlimited" if d == SLOW_UNLIMITED else d, q, need))
    if rc != _OK:
        raise PlanError("bptt_msm: no two-level %s table for length %d, "
                        "units h=%d s=%d, budgets %d and %s: %s"
                        % (strategy, length, h, s, m, d, _strerror(rc)))
    out = ctypes.POINTER(_Plan)()
    try:
        cost = _TwoLevelCost()
        rc = lib.bptt_twolevel_cost_of(tl, ctypes.byref(cost))
        if rc == _OK:
            rc = lib.bptt_twolevel_plan(tl, ctypes.byref(out))
    finally:
        lib.bptt_twolevel_free(tl)
    if rc == _EINFEASIBLE:
        raise InfeasibleBudget("bptt_msm: no two-level %s plan fits %d bytes "
                               "of fast memory" % (strategy, budget), h * q)
    if rc != _OK:
        raise PlanError("bptt_msm: no two-level %s plan: %s"
                        % (strategy, _strerror(rc)))
    try:
        st = _Stats()
        rc = lib.bptt_plan_validate(out, ctypes.byref(st))
        if rc != _OK:
            raise PlanError("bptt_msm: the two-level plan fails the "
                            "validator at action %d (violation %d)"
                            % (st.bad_action, st.violation))
        p = out.contents
        acts = p.actions
        actions = tuple((OPS[acts[k].op], acts[k].step)
                        for k in range(p.n_actions))
        if st.forward_ops != cost.forward_ops or \
                st.slow_write_units != cost.slow_write_units or \
                st.slow_read_units != cost.slow_read_units:
            raise PlanError("bptt_msm: the two-level planner's optimum and "
                            "its plan's counts differ")
        u = _Units()
        lib.bptt_units_from_bytes(ctypes.byref(u), hidden_bytes,
                                  internal_bytes)
        full = lib.bptt_full_peak(length, u.hidden_units, u.internal_units)
        return Plan(strategy=strategy, length=length,
                    hidden_bytes=hidden_bytes, internal_bytes=internal_bytes,
                    quantum=q, hidden_units=h, internal_units=s,
                    memory_bytes=budget, actions=actions,
                    forward_ops=st.forward_ops,
                    recompute_ops=st.recompute_ops,
                    backward_ops=st.backward_ops,
                    peak_bytes=st.peak_units * q,
                    full_peak_bytes=full * u.quantum if full >= 0 else None,
                    two_level=True, slow_memory_bytes=slow,
                    slow_peak_bytes=st.slow_peak_units * q,
                    slow_writes=st.slow_writes, slow_reads=st.slow_reads,
                    slow_write_bytes=st.slow_write_units * q,
                    slow_read_bytes=st.slow_read_units * q,
                    write_cost=wd, read_cost=rd, cost=cost.cost)
    finally:
        lib.bptt_plan_free(out)
