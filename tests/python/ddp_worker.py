"""tests/python/ddp_worker.py: one of the two processes of test_field.py's
DistributedDataParallel case (not a test by itself).

    ddp_worker.py RANK WORLD INIT_FILE OUT_FILE

Joins a gloo process group (CPU, init_method file://INIT_FILE), builds one
model (the same on every rank: seed 0) whose forward runs a GRUCell with
dropout over a sequence, either as the written-out loop or through
bptt_msm.torch.scan, as doc/pytorch.md's contract says: DDP wraps the model
that calls scan, not the step.  Each rank has its own inputs and dropout
seed.  Three runs from copies of that model, each one forward and one
backward: "loop" (DDP, the loop), "scan" (DDP, scan under a plan that
recomputes) and "local" (no DDP, the loop: the rank's own gradients,
not averaged).  Writes {run: {parameter name: .grad}, run + " rng": the
next torch.rand(3) after the backward} to OUT_FILE with torch.save.  Exit
0, or 1 with the error on stderr."""
import copy
import datetime
import sys
import traceback

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

import bptt_msm.torch as bt

T, B, X, H = 10, 3, 4, 6


class Model(nn.Module):
    """A GRU over the sequence with dropout on its input, a readout on the
    ys (outside the scan); the loss is computed inside forward."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(X, H)
        self.drop = nn.Dropout(0.3)
        self.out = nn.Linear(H, 2)
        self.use_scan = False

    def step(self, h, x):
        h = self.cell(self.drop(x), h)
        return h, h

    def forward(self, h0, xs):
        if self.use_scan:
            h, ys = bt.scan(self.step, h0, xs, memory="3slots",
                            strategy="hsm")
        else:
            h, ys = h0, []
            for t in range(xs.shape[0]):
                h, y = self.step(h, xs[t])
                ys.append(y)
            ys = torch.stack(ys)
        return self.out(ys).pow(2).mean() + h.pow(2).sum()


def main():
    rank, world, init_file, out = (int(sys.argv[1]), int(sys.argv[2]),
                                   sys.argv[3], sys.argv[4])
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + init_file,
                            rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    torch.manual_seed(0)
    base = Model()
    gen = torch.Generator().manual_seed(100 + rank)
    xs = torch.randn(T, B, X, generator=gen)
    h0 = torch.randn(B, H, generator=gen)
    result = {}
    for run in ("loop", "scan", "local"):
        model = copy.deepcopy(base)
        model.use_scan = run == "scan"
        net = model if run == "local" else DistributedDataParallel(model)
        torch.manual_seed(1000 + rank)
        loss = net(h0, xs)
        loss.backward()
        result[run] = {n: None if p.grad is None else p.grad.clone()
                       for n, p in model.named_parameters()}
        result[run + " rng"] = torch.rand(3)
        dist.barrier()
    torch.save(result, out)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:  # the parent shows this and kills the other rank
        traceback.print_exc()
        sys.stderr.flush()
        sys.exit(1)
