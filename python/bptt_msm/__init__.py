"""bptt_msm: the bptt-msm planner from Python (doc/pytorch.md).

    >>> import bptt_msm
    >>> p = bptt_msm.plan(1000, hidden_bytes=1, internal_bytes=4, memory="199slots")
    >>> p.forward_ops, p.peak_bytes
    (1950, 196)

Pure Python over the installed core library, libbpttcore (libc and libm
only: no BLAS is loaded), through ctypes: the plans come from its planner
(bptt_plan_make, include/bptt/bptt.h), budgets are read by its parser
(bptt_budget_parse, include/bptt/budget.h), the same code `bptt plan
--memory` uses.  Nothing here plans by itself.

Where the library is found, first match wins:
  1. BPTT_MSM_LIBDIR, a directory holding libbpttcore.so (in a build tree:
     its .libs directory);
  2. the libdir this package was installed for (make install);
  3. the dynamic linker's search path (ctypes.util.find_library).

bptt_msm.torch runs a recurrent step under a plan in PyTorch."""
import ctypes
import ctypes.util
import os
import warnings

__all__ = ["plan", "Plan", "PlanError", "InfeasibleBudget", "STRATEGIES",
           "OPS", "OnlinePlanner", "ONLINE_STRATEGIES"]

# enum bptt_op, in the header's order
OPS = ("advance", "save_hidden", "save_internal", "restore_hidden",
       "restore_internal", "backward", "free_hidden", "free_internal")
ADVANCE, SAVE_HIDDEN, SAVE_INTERNAL, RESTORE_HIDDEN, RESTORE_INTERNAL, \
    BACKWARD, FREE_HIDDEN, FREE_INTERNAL = range(8)

STRATEGIES = ("full", "chen", "hsm", "ism", "msm", "ism-paper", "msm-paper")

_OK, _EINVAL, _ENOMEM, _EINFEASIBLE, _EBADPLAN, _ETOOBIG = range(6)
_INT64_MAX = 2 ** 63 - 1


class PlanError(ValueError):
    """A plan that cannot be made: bad arguments, or sizes too big."""


class InfeasibleBudget(PlanError):
    """The budget is below the strategy's smallest feasible one, which
    min_memory_bytes holds (None when it is more than 2**63 bytes)."""

    def __init__(self, message, min_memory_bytes):
        super().__init__(message)
        self.min_memory_bytes = min_memory_bytes


# ---- the C structures --------------------------------------------------------

class _Action(ctypes.Structure):
    _fields_ = [("op", ctypes.c_uint32), ("step", ctypes.c_uint32)]


class _Plan(ctypes.Structure):
    _fields_ = [("length", ctypes.c_size_t),
                ("hidden_units", ctypes.c_int64),
                ("internal_units", ctypes.c_int64),
                ("budget", ctypes.c_int64),
                ("n_actions", ctypes.c_size_t),
                ("capacity", ctypes.c_size_t),
                ("actions", ctypes.POINTER(_Action))]


class _Stats(ctypes.Structure):
    _fields_ = [("forward_ops", ctypes.c_int64),
                ("recompute_ops", ctypes.c_int64),
                ("backward_ops", ctypes.c_int64),
                ("peak_units", ctypes.c_int64),
                ("n_actions", ctypes.c_size_t),
                ("violation", ctypes.c_int),
                ("bad_action", ctypes.c_size_t),
                ("peak_bytes", ctypes.c_int64),
                # the slow level of a two-level plan (bptt.h): the C side
                # fills the whole struct, so it must be as long
                ("slow_peak_units", ctypes.c_int64),
                ("slow_writes", ctypes.c_int64),
                ("slow_reads", ctypes.c_int64),
                ("slow_write_units", ctypes.c_int64),
                ("slow_read_units", ctypes.c_int64)]


class _Options(ctypes.Structure):
    _fields_ = [("chen_segment", ctypes.c_size_t),
                ("threads", ctypes.c_int),
                ("min_budget", ctypes.c_int64),
                ("reference", ctypes.c_int)]


class _Units(ctypes.Structure):
    _fields_ = [("quantum", ctypes.c_int64),
                ("hidden_units", ctypes.c_int64),
                ("internal_units", ctypes.c_int64)]


class _Budget(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int),
                ("unit", ctypes.c_char_p),
                ("slots", ctypes.c_int64),
                ("slots_scaled", ctypes.c_int64),
                ("slots_scale", ctypes.c_int64),
                ("percent", ctypes.c_double),
                ("percent_whole", ctypes.c_int64),
                ("bytes", ctypes.c_int64)]


class _Sizes(ctypes.Structure):  # bptt_budget_sizes
    _fields_ = [("length", ctypes.c_size_t),
                ("hidden_units", ctypes.c_int64),
                ("internal_units", ctypes.c_int64),
                ("quantum", ctypes.c_int64)]


class _Resolved(ctypes.Structure):  # bptt_budget_resolved
    _fields_ = [("given", _Budget),
                ("units", ctypes.c_int64),
                ("bytes", ctypes.c_int64),
                ("full_units", ctypes.c_int64),
                ("held_units", ctypes.c_int64),
                ("held_bytes", ctypes.c_int64)]


# ---- loading ---------------------------------------------------------------

_libs = None


def _candidates(name):
    """Paths (or names) to try for lib<name>.so, in order."""
    out = []
    env = os.environ.get("BPTT_MSM_LIBDIR")
    if env:
        return [os.path.join(env, "lib%s.so" % name)]
    try:
        from . import _paths
        out.append(os.path.join(_paths.LIBDIR, "lib%s.so" % name))
    except ImportError:
        pass
    found = ctypes.util.find_library(name)
    if found:
        out.append(found)
    out.append("lib%s.so.0" % name)
    return out


def _load(name):
    errors = []
    for path in _candidates(name):
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            errors.append(str(e))
    raise ImportError(
        "bptt_msm: cannot load lib%s (%s); install bptt-msm (make install) "
        "or set BPTT_MSM_LIBDIR to the directory that holds lib%s.so "
        "(a build tree's .libs)" % (name, "; ".join(errors), name))


def _library():
    """libbpttcore, loaded once, its signatures declared."""
    global _libs
    if _libs is not None:
        return _libs
    lib = _load("bpttcore")
    i64, sz = ctypes.c_int64, ctypes.c_size_t
    f = lib.bptt_plan_make
    f.restype = ctypes.c_int
    f.argtypes = [ctypes.c_char_p, sz, i64, i64, i64,
                  ctypes.POINTER(_Options), ctypes.POINTER(ctypes.POINTER(_Plan)),
                  ctypes.POINTER(_Stats), ctypes.POINTER(i64)]
    lib.bptt_plan_free.restype = None
    lib.bptt_plan_free.argtypes = [ctypes.POINTER(_Plan)]
    lib.bptt_strerror.restype = ctypes.c_char_p
    lib.bptt_strerror.argtypes = [ctypes.c_int]
    lib.bptt_units_from_bytes.restype = ctypes.c_int
    lib.bptt_units_from_bytes.argtypes = [ctypes.POINTER(_Units), i64, i64]
    lib.bptt_full_peak.restype = i64
    lib.bptt_full_peak.argtypes = [sz, i64, i64]
    lib.bptt_budget_resolve.restype = ctypes.c_int
    lib.bptt_budget_resolve.argtypes = [ctypes.c_char_p,
                                        ctypes.POINTER(_Sizes), ctypes.c_int,
                                        ctypes.POINTER(_Resolved),
                                        ctypes.c_char_p, sz]
    # the online planner (include/bptt/online.h)
    vp = ctypes.c_void_p
    lib.bptt_online_new.restype = ctypes.c_int
    lib.bptt_online_new.argtypes = [ctypes.POINTER(vp), ctypes.c_char_p, i64,
                                    i64, i64, ctypes.POINTER(i64)]
    lib.bptt_online_free.restype = None
    lib.bptt_online_free.argtypes = [vp]
    lib.bptt_online_next.restype = ctypes.c_int
    lib.bptt_online_next.argtypes = [vp, ctypes.c_int,
                                     ctypes.POINTER(_Action),
                                     ctypes.POINTER(sz)]
    lib.bptt_online_finish.restype = ctypes.c_int
    lib.bptt_online_finish.argtypes = [vp,
                                       ctypes.POINTER(ctypes.POINTER(_Plan)),
                                       ctypes.POINTER(sz)]
    lib.bptt_online_held.restype = i64
    lib.bptt_online_held.argtypes = [vp]
    lib.bptt_online_steps.restype = sz
    lib.bptt_online_steps.argtypes = [vp]
    lib.bptt_online_units.restype = ctypes.c_int
    lib.bptt_online_units.argtypes = [vp, ctypes.POINTER(_Units),
                                      ctypes.POINTER(i64)]
    lib.bptt_plan_validate.restype = ctypes.c_int
    lib.bptt_plan_validate.argtypes = [ctypes.POINTER(_Plan),
                                       ctypes.POINTER(_Stats)]
    lib.bptt_planner_threads.restype = ctypes.c_int
    lib.bptt_planner_threads.argtypes = [ctypes.POINTER(ctypes.c_int)]
    lib.bptt_threads_max.restype = ctypes.c_int
    lib.bptt_threads_max.argtypes = []
    global THREADS_MAX
    THREADS_MAX = lib.bptt_threads_max()
    _libs = lib
    _cap_threads()
    return _libs


# The most threads the library runs (BPTT_THREADS_MAX, budget.h; what
# `bptt plan --threads` takes), read from the library when it loads.
THREADS_MAX = None
# What OMP_NUM_THREADS asked for when the planner capped it (above
# THREADS_MAX), else None.
threads_capped_from = None


def _cap_threads():
    """The planner builds its tables on its own threads (no OpenMP
    runtime is loaded), as many as OMP_NUM_THREADS asks, at most
    THREADS_MAX: a RuntimeWarning the first time it asks for more."""
    global threads_capped_from
    asked = ctypes.c_int(0)
    if _libs:
        _libs.bptt_planner_threads(ctypes.byref(asked))
    asked = asked.value
    if asked > THREADS_MAX and threads_capped_from is None:
        threads_capped_from = asked
        warnings.warn("bptt_msm: OMP_NUM_THREADS asks for %d threads; using "
                      "%d, the most bptt's --threads takes"
                      % (asked, THREADS_MAX), RuntimeWarning, stacklevel=3)


def _strerror(rc):
    return _library().bptt_strerror(rc).decode()


# ---- arguments ---------------------------------------------------------------

def _whole(name, value, least):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("bptt_msm: %s must be an int, not %s"
                        % (name, type(value).__name__))
    if value < least or value > _INT64_MAX // 4:
        raise ValueError("bptt_msm: %s must be between %d and %d, not %d"
                         % (name, least, _INT64_MAX // 4, value))
    return value


def memory_bytes(memory, length, hidden_bytes, internal_bytes):
    """A budget as bytes.  memory: an int (bytes), or a string as `bptt plan
    --memory` and `bptt run --memory` take it: "200" or "200slots" (a slot
    is a hidden state), "5%" (of full BPTT's peak), "64MiB", "100000B".
    A share and slots are rounded down to whole planner units."""
    lib = _library()
    length = _whole("length", length, 1)
    hidden_bytes = _whole("hidden_bytes", hidden_bytes, 1)
    internal_bytes = _whole("internal_bytes", internal_bytes, 1)
    if internal_bytes < hidden_bytes:
        raise ValueError("bptt_msm: internal_bytes (%d) must be at least "
                         "hidden_bytes (%d)" % (internal_bytes, hidden_bytes))
    if isinstance(memory, bool):
        raise TypeError("bptt_msm: memory must be an int (bytes) or a string "
                        "such as '5%', '200slots' or '64MiB', not a bool")
    if isinstance(memory, int):
        return _whole("memory (bytes)", memory, 0)
    if not isinstance(memory, str):
        raise TypeError("bptt_msm: memory must be an int (bytes) or a string "
                        "such as '5%%', '200slots' or '64MiB', not %s"
                        % type(memory).__name__)
    try:
        text = memory.encode("ascii")
    except UnicodeEncodeError:
        text = b"\xff"  # not a budget either way
    if b"\0" in text:
        text = b"\xff"
    u = _Units()
    rc = lib.bptt_units_from_bytes(ctypes.byref(u), hidden_bytes,
                                   internal_bytes)
    if rc != _OK:
        raise PlanError("bptt_msm: sizes %d and %d bytes: %s"
                        % (hidden_bytes, internal_bytes, _strerror(rc)))
    # the one resolution of a budget, bptt plan's and bptt run's
    z = _Sizes(length, u.hidden_units, u.internal_units, u.quantum)
    r = _Resolved()
    why = ctypes.create_string_buffer(512)
    rc = lib.bptt_budget_resolve(text, ctypes.byref(z), 0, ctypes.byref(r),
                                 why, len(why))
    if rc != _OK:
        raise ValueError("bptt_msm: memory %r: %s"
                         % (memory, why.value.decode("utf-8", "replace")))
    return r.bytes


# ---- plans ----------------------------------------------------------------

class Plan:
    """One training iteration's plan, checked by the library's validator.

    actions: a tuple of (op, step) pairs, op one of OPS (doc/design.md 2.1);
    forward_ops (every advance, the first sweep included), recompute_ops,
    backward_ops; memory_bytes (the budget), peak_bytes (the most bytes
    stored at any moment, h(0) included); the sizes in bytes and in the
    planner's units (quantum bytes each)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    @property
    def alpha(self):
        return self.internal_bytes / self.hidden_bytes

    def __repr__(self):
        return ("Plan(strategy=%r, length=%d, hidden_bytes=%d, "
                "internal_bytes=%d, memory_bytes=%d, forward_ops=%d, "
                "peak_bytes=%d, actions=%d)"
                % (self.strategy, self.length, self.hidden_bytes,
                   self.internal_bytes, self.memory_bytes, self.forward_ops,
                   self.peak_bytes, len(self.actions)))


def plan(length, hidden_bytes, internal_bytes, memory="100%", strategy="msm",
         segment=None):
    """The optimal plan of `strategy` for `length` steps whose hidden state
    (what one step passes to the next) takes hidden_bytes and whose internal
    state (what its backward op needs) internal_bytes, under `memory` (see
    memory_bytes: an int of bytes, or "5%", "200slots", "64MiB").  segment:
    Chen's segment length (chen only; default ceil(sqrt(length))).
    Raises InfeasibleBudget naming the smallest feasible budget, PlanError,
    TypeError or ValueError for bad arguments."""
    lib = _library()
    if not isinstance(strategy, str):
        raise TypeError("bptt_msm: strategy must be a string (%s), not %s"
                        % (", ".join(STRATEGIES), type(strategy).__name__))
    if strategy not in STRATEGIES:
        raise ValueError("bptt_msm: unknown strategy %r: give one of %s"
                         % (strategy, ", ".join(STRATEGIES)))
    budget = memory_bytes(memory, length, hidden_bytes, internal_bytes)
    opts = None
    if segment is not None:
        if strategy != "chen":
            raise ValueError("bptt_msm: segment is Chen's segment length; "
                             "strategy %r takes none" % strategy)
        opts = _Options(chen_segment=_whole("segment", segment, 1),
                        threads=0, min_budget=0, reference=0)
        if segment > length:
            raise ValueError("bptt_msm: segment %d is longer than length %d"
                             % (segment, length))
    _cap_threads()  # the threads that build the table
    out = ctypes.POINTER(_Plan)()
    st = _Stats()
    least = ctypes.c_int64(-1)
    rc = lib.bptt_plan_make(strategy.encode(), length, hidden_bytes,
                                 internal_bytes, budget,
                                 ctypes.byref(opts) if opts else None,
                                 ctypes.byref(out), ctypes.byref(st),
                                 ctypes.byref(least))
    if rc == _EINFEASIBLE:
        need = least.value
        raise InfeasibleBudget(
            "bptt_msm: a budget of %d bytes is infeasible for %s at length %d "
            "(hidden state %d bytes, internal state %d bytes); the smallest "
            "feasible budget is %s"
            % (budget, strategy, length, hidden_bytes, internal_bytes,
               "%d bytes (%.6g slots)" % (need, need / hidden_bytes)
               if need >= 0 else "more than 2**63 bytes, too big to state"),
            need if need >= 0 else None)
    if rc != _OK:
        raise PlanError("bptt_msm: no %s plan for length %d, sizes %d and %d "
                        "bytes, budget %d bytes: %s"
                        % (strategy, length, hidden_bytes, internal_bytes,
                           budget, _strerror(rc)))
    try:
        p = out.contents
        q = hidden_bytes // p.hidden_units
        acts = p.actions
        actions = tuple((OPS[acts[k].op], acts[k].step)
                        for k in range(p.n_actions))
        full = lib.bptt_full_peak(length, p.hidden_units,
                                       p.internal_units)
        return Plan(strategy=strategy, length=length,
                    hidden_bytes=hidden_bytes, internal_bytes=internal_bytes,
                    quantum=q, hidden_units=p.hidden_units,
                    internal_units=p.internal_units, memory_bytes=budget,
                    actions=actions, forward_ops=st.forward_ops,
                    recompute_ops=st.recompute_ops,
                    backward_ops=st.backward_ops,
                    peak_bytes=st.peak_bytes,
                    full_peak_bytes=full * q if full >= 0 else None)
    finally:
        lib.bptt_plan_free(out)


# ---- plans for sequences of unknown length (include/bptt/online.h) ----------

ONLINE_STRATEGIES = ("msm", "hsm")
_ONLINE_ACTIONS_MAX = 8  # BPTT_ONLINE_ACTIONS_MAX, online.h


def online_memory_bytes(memory, hidden_bytes, internal_bytes):
    """A budget for a sequence whose length is unknown, as bytes: an int,
    "64MiB", "100000B", "150slots" (a slot is a hidden state) or "150" (as
    `bptt plan` reads it: slots).  A share ("5%") is of full BPTT's peak,
    which needs the length: refused (ValueError), saying what works."""
    if isinstance(memory, str) and "%" in memory:
        raise ValueError(
            "bptt_msm: memory %r is a share of full BPTT's stored bytes, "
            "which needs the length; the length of this sequence is known "
            "only at its end: give bytes (an int, '64MiB') or slots "
            "('150slots')" % memory)
    return memory_bytes(memory, 1, hidden_bytes, internal_bytes)


class OnlinePlanner:
    """The core's online planner (bptt_online_*, include/bptt/online.h):
    told step by step that one more step runs, it answers what to store
    before it, within the budget at every moment; finish() gives the
    whole plan for the length the sequence had, whose first `prefix`
    actions are those handed out and whose rest reverses the sequence.

        o = OnlinePlanner("msm", hidden_bytes, internal_bytes, "150slots")
        acts = o.next(last=False)  # before each step: frees, saves, advance
        p = o.finish()             # a Plan; p.prefix, p.online

    strategy: "msm" (hidden and internal states) or "hsm" (hidden
    only).  memory: see online_memory_bytes.  last: True when the caller
    knows, before the step, that it is the last one (one step of
    lookahead): the planner then stores nothing for it."""

    def __init__(self, strategy, hidden_bytes, internal_bytes, memory):
        lib = _library()
        if not isinstance(strategy, str):
            raise TypeError("bptt_msm: strategy must be a string (%s), not %s"
                            % (", ".join(ONLINE_STRATEGIES),
                               type(strategy).__name__))
        if strategy not in ONLINE_STRATEGIES:
            raise ValueError("bptt_msm: strategy %r has no online planner: "
                             "give one of %s"
                             % (strategy, ", ".join(ONLINE_STRATEGIES)))
        budget = online_memory_bytes(memory, hidden_bytes, internal_bytes)
        self._o = None
        o = ctypes.c_void_p()
        least = ctypes.c_int64(-1)
        rc = lib.bptt_online_new(ctypes.byref(o), strategy.encode(),
                                 hidden_bytes, internal_bytes, budget,
                                 ctypes.byref(least))
        if rc == _EINFEASIBLE:
            raise InfeasibleBudget(
                "bptt_msm: a budget of %d bytes is infeasible for online %s "
                "(hidden state %d bytes, internal state %d bytes); the "
                "smallest feasible budget is %d bytes (1 slot)"
                % (budget, strategy, hidden_bytes, internal_bytes,
                   least.value), least.value)
        if rc != _OK:
            raise PlanError("bptt_msm: no online %s planner for sizes %d and "
                            "%d bytes, budget %d bytes: %s"
                            % (strategy, hidden_bytes, internal_bytes, budget,
                               _strerror(rc)))
        self._o = o
        self._lib = lib
        self.strategy = strategy
        self.hidden_bytes = hidden_bytes
        self.internal_bytes = internal_bytes
        self.memory_bytes = budget
        u = _Units()
        m = ctypes.c_int64()
        lib.bptt_online_units(o, ctypes.byref(u), ctypes.byref(m))
        self.quantum = u.quantum
        self.hidden_units = u.hidden_units
        self.internal_units = u.internal_units
        self.budget_units = m.value
        self.lookahead_used = False
        self._acts = (_Action * _ONLINE_ACTIONS_MAX)()

    def _live(self):
        if self._o is None:
            raise ValueError("bptt_msm: this online planner is finished")
        return self._o

    def next(self, last=False):
        """The actions to run before and as the next step: frees, saves of
        the current state, then ("advance", i + 1)."""
        o = self._live()
        n = ctypes.c_size_t()
        rc = self._lib.bptt_online_next(o, 1 if last else 0, self._acts,
                                        ctypes.byref(n))
        if rc != _OK:
            raise PlanError("bptt_msm: online planner, step %d: %s"
                            % (self.steps + 1, _strerror(rc)))
        if last:
            self.lookahead_used = True
        a = self._acts
        return tuple((OPS[a[k].op], a[k].step) for k in range(n.value))

    @property
    def steps(self):
        return self._lib.bptt_online_steps(self._o) if self._o else 0

    @property
    def held_bytes(self):
        """Bytes stored now, as the planner counts them (h(0) included)."""
        return self._lib.bptt_online_held(self._live()) * self.quantum

    def finish(self):
        """The sequence ended after the steps run so far: the whole plan
        (a Plan, checked by the library's validator), with prefix (how
        many of its actions next() handed out) and online=True.  The
        planner takes no more steps."""
        o = self._live()
        lib = self._lib
        out = ctypes.POINTER(_Plan)()
        prefix = ctypes.c_size_t()
        rc = lib.bptt_online_finish(o, ctypes.byref(out), ctypes.byref(prefix))
        if rc != _OK:
            raise PlanError("bptt_msm: online planner, finish after %d steps: "
                            "%s" % (self.steps, _strerror(rc)))
        try:
            st = _Stats()
            rc = lib.bptt_plan_validate(out, ctypes.byref(st))
            if rc != _OK:
                raise PlanError(
                    "bptt_msm: the online planner's plan fails the validator "
                    "at action %d (violation %d): %s"
                    % (st.bad_action, st.violation, _strerror(rc)))
            p = out.contents
            acts = p.actions
            actions = tuple((OPS[acts[k].op], acts[k].step)
                            for k in range(p.n_actions))
            q = self.quantum
            full = lib.bptt_full_peak(p.length, p.hidden_units,
                                      p.internal_units)
            plan = Plan(strategy=self.strategy, length=p.length,
                        hidden_bytes=self.hidden_bytes,
                        internal_bytes=self.internal_bytes, quantum=q,
                        hidden_units=p.hidden_units,
                        internal_units=p.internal_units,
                        memory_bytes=self.memory_bytes, actions=actions,
                        forward_ops=st.forward_ops,
                        recompute_ops=st.recompute_ops,
                        backward_ops=st.backward_ops,
                        peak_bytes=st.peak_units * q,
                        full_peak_bytes=full * q if full >= 0 else None,
                        online=True, prefix=prefix.value,
                        lookahead=self.lookahead_used)
        finally:
            lib.bptt_plan_free(out)
            self.close()
        return plan

    def close(self):
        if self._o is not None:
            self._lib.bptt_online_free(self._o)
            self._o = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
