"""The steps the tests and experiments/torch-scan run: PyTorch's cells, and
a step of a user's own, a leaky integrate-and-fire (LIF) spiking neuron
whose spike has a surrogate gradient."""
import torch


class SpikeFn(torch.autograd.Function):
    """Heaviside step forward; backward the derivative of a fast sigmoid,
    1 / (1 + k |v|)^2 (a surrogate gradient)."""
    K = 10.0

    @staticmethod
    def forward(ctx, v):
        ctx.save_for_backward(v)
        return (v > 0).to(v.dtype)

    @staticmethod
    def backward(ctx, grad):
        v, = ctx.saved_tensors
        return grad / (1 + SpikeFn.K * v.abs()) ** 2


class LIF(torch.nn.Module):
    """carry (v, s): membrane potential and last spikes; input current
    W x + U s; v' = beta v (1 - s) + current (reset by the spike), spikes
    s' = H(v' - 1); y = s'."""

    def __init__(self, n_in, n):
        super().__init__()
        self.inp = torch.nn.Linear(n_in, n)
        self.rec = torch.nn.Linear(n, n, bias=False)
        self.beta = torch.nn.Parameter(torch.full((n,), 0.8))

    def forward(self, carry, x):
        v, s = carry
        v = self.beta * v * (1 - s) + self.inp(x) + self.rec(s)
        s = SpikeFn.apply(v - 1.0)
        return (v, s), s


class Cell(torch.nn.Module):
    """A PyTorch cell as a scan step: (carry, x) -> (carry, y)."""

    def __init__(self, kind, n_in, n):
        super().__init__()
        self.kind = kind
        self.cell = {"lstm": torch.nn.LSTMCell, "gru": torch.nn.GRUCell,
                     "rnn": torch.nn.RNNCell}[kind](n_in, n)

    def forward(self, carry, x):
        if self.kind == "lstm":
            h, c = self.cell(x, carry)
            return (h, c), h
        h = self.cell(x, carry)
        return h, h


def make(kind, n_in, n, batch, device="cpu"):
    """(step, init) for a model kind: lstm, gru, rnn or lif."""
    if kind == "lif":
        step = LIF(n_in, n).to(device)
        init = (torch.zeros(batch, n, device=device),
                torch.zeros(batch, n, device=device))
        return step, init
    step = Cell(kind, n_in, n).to(device)
    h = torch.zeros(batch, n, device=device)
    return step, ((h, torch.zeros_like(h)) if kind == "lstm" else h)


def plain(step, init, xs):
    """The written-out loop scan stands for."""
    carry, ys = init, []
    for t in range(xs.shape[0]):
        carry, y = step(carry, xs[t])
        ys.append(y)
    return carry, torch.stack(ys)
