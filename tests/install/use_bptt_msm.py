"""tests/install/use_bptt_msm.py: the installed Python package, as a user
imports it (make installcheck): bptt_msm finds the installed libraries by
itself and plans what `bptt plan` plans; where python3 has torch,
bptt_msm.torch imports and a small scan gives the loop's gradients.

    python3 use_bptt_msm.py EXPECTED_FILE_PREFIX

EXPECTED_FILE_PREFIX: where bptt_msm must have been imported from (the
installed pythondir).  Exit 0, or 1 with the failure on stderr."""
import os
import sys


def fail(msg):
    sys.stderr.write("use_bptt_msm: %s\n" % msg)
    sys.exit(1)


def main():
    import bptt_msm
    where = os.path.realpath(bptt_msm.__file__)
    if not where.startswith(os.path.realpath(sys.argv[1])):
        fail("bptt_msm imported from %s, not from %s" % (where, sys.argv[1]))
    p = bptt_msm.plan(1000, 1, 4, "199slots")
    if (p.forward_ops, p.peak_bytes, len(p.actions)) != (1950, 196, 4922):
        fail("plan: %s (bptt plan: 1950 forward ops, peak 196, 4922 actions)"
             % p)
    try:
        import torch
    except ImportError:
        print("use_bptt_msm: planner ok; no torch here, bptt_msm.torch not tried")
        return 0
    import bptt_msm.torch as bt
    torch.manual_seed(0)
    cell = torch.nn.GRUCell(3, 4)
    xs = torch.randn(6, 2, 3)

    def step(h, x):
        h = cell(x, h)
        return h, h
    h, ys = bt.scan(step, torch.zeros(2, 4), xs, memory="3slots")
    ys.sum().backward()
    got = [q.grad.clone() for q in cell.parameters()]
    cell.zero_grad(set_to_none=True)
    h, out = torch.zeros(2, 4), []
    for t in range(6):
        h, y = step(h, xs[t])
        out.append(y)
    torch.stack(out).sum().backward()
    if not all(torch.equal(a, q.grad) for a, q in zip(got, cell.parameters())):
        fail("bptt_msm.torch.scan: gradients differ from the loop's")
    print("use_bptt_msm: planner and bptt_msm.torch ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
