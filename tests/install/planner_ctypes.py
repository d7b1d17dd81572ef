"""planner_ctypes.py: the installed shared planner, loaded from Python with
ctypes (tests/installcheck.sh).

    python3 planner_ctypes.py LIBBPTTPLAN_SO STRATEGY T ALPHA BUDGET

prints "forward_ops peak_units actions", as tests/install/use-planner.c
does, or "infeasible MIN_BUDGET".  Only the standard library is used."""
import ctypes
import sys


class PlanStats(ctypes.Structure):
    """bptt_plan_stats of <bptt/bptt.h>"""
    _fields_ = [("forward_ops", ctypes.c_int64),
                ("recompute_ops", ctypes.c_int64),
                ("backward_ops", ctypes.c_int64),
                ("peak_units", ctypes.c_int64),
                ("n_actions", ctypes.c_size_t),
                ("violation", ctypes.c_int),
                ("bad_action", ctypes.c_size_t),
                ("peak_bytes", ctypes.c_int64),
                ("slow_peak_units", ctypes.c_int64),
                ("slow_writes", ctypes.c_int64),
                ("slow_reads", ctypes.c_int64),
                ("slow_write_units", ctypes.c_int64),
                ("slow_read_units", ctypes.c_int64)]


def main(argv):
    if len(argv) != 6:
        sys.stderr.write("usage: planner_ctypes.py LIB STRATEGY T ALPHA BUDGET\n")
        return 2
    lib = ctypes.CDLL(argv[1])
    make = lib.bptt_plan_make
    make.restype = ctypes.c_int
    make.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int64,
                     ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                     ctypes.POINTER(ctypes.c_void_p),
                     ctypes.POINTER(PlanStats),
                     ctypes.POINTER(ctypes.c_int64)]
    lib.bptt_plan_free.argtypes = [ctypes.c_void_p]
    lib.bptt_strerror.restype = ctypes.c_char_p
    lib.bptt_strerror.argtypes = [ctypes.c_int]

    plan = ctypes.c_void_p()
    stats = PlanStats()
    least = ctypes.c_int64(-1)
    rc = make(argv[2].encode(), int(argv[3]), 1, int(argv[4]), int(argv[5]),
              None, ctypes.byref(plan), ctypes.byref(stats),
              ctypes.byref(least))
    infeasible = 3  # BPTT_EINFEASIBLE
    if rc == infeasible:
        print("infeasible %d" % least.value)
        return 0
    if rc != 0:
        sys.stderr.write("planner_ctypes: %s\n"
                         % lib.bptt_strerror(rc).decode())
        return 1
    print("%d %d %d" % (stats.forward_ops, stats.peak_units,
                        stats.n_actions))
    lib.bptt_plan_free(plan)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
