#!/usr/bin/python3
"""python/examples/char_lstm.py: a character-level LSTM trained on a text
(default: the GPL-3, /usr/share/common-licenses/GPL-3 on every Debian
system) twice from the same start: with the plain loop, and with
bptt_msm.torch.scan under MSM at 5% of full BPTT's memory.  The two loss
curves are printed side by side; scan's gradients are the loop's bit for
bit, so the curves are the same to the last digit.

    python3 python/examples/char_lstm.py [-n ITERS] [-t LENGTH] [-f TEXT]

From a build tree: PYTHONPATH=python BPTT_MSM_LIBDIR=.libs python3 ...
(doc/pytorch.md).  Small by default (60 iterations of 16 sequences of 50
characters, 64 hidden units): seconds on a CPU."""
import argparse
import copy
import sys

import torch

import bptt_msm.torch as bt


class CharStep(torch.nn.Module):
    """One character: one-hot in, an LSTMCell, logits out."""

    def __init__(self, vocab, hidden):
        super().__init__()
        self.vocab = vocab
        self.cell = torch.nn.LSTMCell(vocab, hidden)
        self.out = torch.nn.Linear(hidden, vocab)

    def forward(self, carry, x):
        h, c = self.cell(torch.nn.functional.one_hot(x, self.vocab).float(),
                         carry)
        return (h, c), self.out(h)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-f", default="/usr/share/common-licenses/GPL-3",
                    help="the text (default: the GPL-3)")
    ap.add_argument("-n", type=int, default=60, help="iterations (60)")
    ap.add_argument("-t", type=int, default=50, help="sequence length (50)")
    ap.add_argument("-B", type=int, default=16, help="batch (16)")
    ap.add_argument("-H", type=int, default=64, help="hidden units (64)")
    ap.add_argument("--memory", default="5%", help="scan's budget (5%%)")
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    if min(a.n, a.t, a.B, a.H) < 1:
        ap.error("-n, -t, -B and -H must be at least 1")
    try:
        with open(a.f, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.exit("char_lstm: cannot read %s: %s" % (a.f, e.strerror))
    if len(data) < a.t + 2:
        sys.exit("char_lstm: %s has %d bytes, fewer than the length + 2"
                 % (a.f, len(data)))
    dev = torch.device(a.device)
    chars = sorted(set(data))
    index = {c: i for i, c in enumerate(chars)}
    text = torch.tensor([index[c] for c in data], device=dev)
    torch.manual_seed(1)
    nets = [CharStep(len(chars), a.H).to(dev)]
    nets.append(copy.deepcopy(nets[0]))
    opts = [torch.optim.Adam(n.parameters(), lr=0.01) for n in nets]
    gen = torch.Generator().manual_seed(2)
    print("# char_lstm: %s (%d bytes, %d symbols), t=%d B=%d H=%d; loss "
          "(nats) of the plain loop and of scan (msm at %s)"
          % (a.f, len(data), len(chars), a.t, a.B, a.H, a.memory))
    print("iteration,plain,msm,forward_ops_per_step")
    worst = 0.0
    for it in range(1, a.n + 1):
        start = torch.randint(0, len(text) - a.t - 1, (a.B,), generator=gen)
        rows = torch.stack([text[s:s + a.t + 1] for s in start.tolist()], 1)
        xs, target = rows[:-1], rows[1:]
        losses = []
        for k, (net, opt) in enumerate(zip(nets, opts)):
            h0 = torch.zeros(a.B, a.H, device=dev)
            init = (h0, h0.clone())
            opt.zero_grad()
            if k == 0:
                carry, ys = init, []
                for i in range(a.t):
                    carry, y = net(carry, xs[i])
                    ys.append(y)
                ys = torch.stack(ys)
            else:
                info = {}
                carry, ys = bt.scan(net, init, xs, memory=a.memory,
                                    strategy="msm", info=info)
            loss = torch.nn.functional.cross_entropy(
                ys.reshape(-1, len(chars)), target.reshape(-1))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        worst = max(worst, abs(losses[0] - losses[1]))
        print("%d,%.6f,%.6f,%.3f" % (it, losses[0], losses[1],
                                     info["plan"].forward_ops / a.t))
    same = all(torch.equal(p, q) for p, q in zip(nets[0].parameters(),
                                                 nets[1].parameters()))
    print("# largest loss difference %.3g; parameters after training %s"
          % (worst, "identical" if same else "DIFFERENT"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
