#!/usr/bin/python3
"""experiments/pytorch_compare.py: bptt-msm beside PyTorch.

Run through experiments/pytorch-compare, which checks that Debian's
python3-torch is there.  Two parts:

1. Gradient check.  `bptt run --dump-grads DIR` writes the parameters
   before its last iteration, that iteration's inputs and targets, and its
   gradients (src/cli/run.c).  The same LSTM (or GRU, --cell gru) is built
   in PyTorch from those parameters (nn.LSTM, an LSTMCell loop, and the
   LSTMCell loop under torch.utils.checkpoint; nn.GRU and GRUCell alike),
   its mean cross-entropy and gradients are computed in float32, mapped
   back to our layout, and compared tensor by tensor:
   max|g_ours - g_torch| / max(max|g_torch|, tiny) < 1e-4.

2. Timing at the same thread count: seconds per iteration (forward +
   backward, no optimizer step; median after a warm-up) of the three
   PyTorch implementations, each in a child process of its own (so its
   peak RSS is its own), and of `bptt run` full, chen and msm 5%.

Parameter layout (include/bptt/cell.h, doc/design.md 7): W0 (G H, X+H) acts
on [x, h]; b0 (G H); Wo (V, H); bo (V).
LSTM: G = 4, gate blocks [i, f, o, g].  PyTorch's LSTM: weight_ih (4H, X),
weight_hh (4H, H), bias_ih, bias_hh, gates [i, f, g, o].
GRU: G = 4, row blocks [r, z, n_x, n_h]: r and z act on [x, h] with one bias
each (b_ir + b_hr, b_iz + b_hz); n_x is [W_in, 0] with b_in, n_h is
[0, W_hn] with b_hn.  PyTorch's GRU: weight_ih (3H, X) and weight_hh (3H, H)
in the order [r, z, n], bias_ih, bias_hh; n = tanh(W_in x + b_in +
r (W_hn h + b_hn)), h' = (1 - z) n + z h.
"""
import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

TOL = 1e-4
TINY = 1e-30


class new_beside:
    """A file written whole as path: a temporary that mkstemp makes beside
    it (a fresh name, made exclusively: a link planted at a name guessed in
    that folder is never written through), given the mode a new file gets
    under the umask, and renamed over path when the with-block ends
    without an exception (removed when it raises)."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        fd, self.tmp = tempfile.mkstemp(
            dir=os.path.dirname(self.path) or ".",
            prefix="." + os.path.basename(self.path) + ".", suffix=".tmp")
        try:
            mask = os.umask(0)
            os.umask(mask)
            os.fchmod(fd, 0o666 & ~mask)
            self.f = os.fdopen(fd, "w")
        except BaseException:
            os.close(fd)
            os.unlink(self.tmp)
            raise
        return self.f

    def __exit__(self, kind, value, tb):
        try:
            self.f.close()
            if kind is None:
                os.replace(self.tmp, self.path)
        finally:
            if os.path.lexists(self.tmp):
                os.unlink(self.tmp)
        return False


def perm_rows(H):
    """Rows of our LSTM W0 in PyTorch's gate order: [i, f, g, o] <- [i, f,
    o, g].  The block permutation swaps blocks 2 and 3, so it is its own
    inverse."""
    blocks = [0, 1, 3, 2]
    return [b * H + j for b in blocks for j in range(H)]


# ---- the models -------------------------------------------------------------

def to_torch_params(cell_name, W0, b0, X, H):
    """weight_ih, weight_hh, bias_ih, bias_hh of PyTorch's layer from our W0
    and b0 (torch tensors)."""
    import torch
    if cell_name == "lstm":
        p = torch.tensor(perm_rows(H))
        return W0[p, :X], W0[p, X:], b0[p], torch.zeros_like(b0)
    # GRU: the zero blocks of n_x and n_h are exactly zero in ours
    assert not W0[2 * H:3 * H, X:].any() and not W0[3 * H:, :X].any(), \
        "the GRU's zero blocks of W0 are not zero"
    w_ih = W0[:3 * H, :X]
    w_hh = torch.cat([W0[:2 * H, X:], W0[3 * H:, X:]])
    b_ih = b0[:3 * H]
    b_hh = torch.cat([torch.zeros(2 * H, dtype=b0.dtype), b0[3 * H:]])
    return w_ih, w_hh, b_ih, b_hh


def build(torch, cell_name, X, H, V, params=None):
    """nn.LSTM, nn.LSTMCell and nn.Linear (nn.GRU and nn.GRUCell for the
    GRU) sharing one set of parameters (from our layout when params is
    given)."""
    nn = torch.nn
    if cell_name == "lstm":
        rnn, cell = nn.LSTM(X, H, num_layers=1), nn.LSTMCell(X, H)
    else:
        rnn, cell = nn.GRU(X, H, num_layers=1), nn.GRUCell(X, H)
    out = nn.Linear(H, V)
    if params is not None:
        W0, b0, Wo, bo = (torch.from_numpy(params[k]) for k in
                          ("W0", "b0", "Wo", "bo"))
        w_ih, w_hh, b_ih, b_hh = to_torch_params(cell_name, W0, b0, X, H)
        with torch.no_grad():
            rnn.weight_ih_l0.copy_(w_ih)
            rnn.weight_hh_l0.copy_(w_hh)
            rnn.bias_ih_l0.copy_(b_ih)
            rnn.bias_hh_l0.copy_(b_hh)
            out.weight.copy_(Wo)
            out.bias.copy_(bo)
    else:
        # ours has one bias where PyTorch adds two (the LSTM's gates, the
        # GRU's r and z): the second starts at zero
        with torch.no_grad():
            if cell_name == "lstm":
                rnn.bias_hh_l0.zero_()
            else:
                rnn.bias_hh_l0[:2 * H].zero_()
    # the cell shares the layer's tensors, so every implementation trains
    # the same parameters
    cell.weight_ih = rnn.weight_ih_l0
    cell.weight_hh = rnn.weight_hh_l0
    cell.bias_ih = rnn.bias_ih_l0
    cell.bias_hh = rnn.bias_hh_l0
    return rnn, cell, out


def zero_state(cell, x):
    """The zero state of the cell's loop: (h, c) for an LSTMCell, h for a
    GRUCell."""
    B = x.shape[1]
    h = x.new_zeros(B, cell.hidden_size)
    if isinstance(cell, __import__("torch").nn.LSTMCell):
        return (h, x.new_zeros(B, cell.hidden_size))
    return h


def step(cell, x, state):
    """One step of the loop: (new state, h)."""
    state = cell(x, state)
    return state, state[0] if isinstance(state, tuple) else state


def loss_fused(torch, rnn, cell, out, x, y):
    T, B, _ = x.shape
    h, _ = rnn(x)  # zero initial state
    z = out(h.reshape(T * B, -1))
    return torch.nn.functional.cross_entropy(z, y.reshape(-1))


def loss_cell(torch, rnn, cell, out, x, y):
    T, B, _ = x.shape
    state = zero_state(cell, x)
    hs = []
    for t in range(T):
        state, h = step(cell, x[t], state)
        hs.append(h)
    z = out(torch.cat(hs))
    return torch.nn.functional.cross_entropy(z, y.reshape(-1))


def loss_checkpoint(torch, rnn, cell, out, x, y, seg=None):
    """Chen's method: the cell loop in segments of about sqrt(T) steps, each
    under torch.utils.checkpoint with the output layer and loss inside, so
    only every segment's state ((h, c) or h) and partial loss are kept."""
    from torch.utils.checkpoint import checkpoint
    T, B, _ = x.shape
    seg = seg or max(1, math.ceil(math.sqrt(T)))
    f = torch.nn.functional

    def run(xs, ys, *state):
        state = state if len(state) > 1 else state[0]
        hs = []
        for t in range(xs.shape[0]):
            state, h = step(cell, xs[t], state)
            hs.append(h)
        z = out(torch.cat(hs))
        part = f.cross_entropy(z, ys.reshape(-1), reduction="sum")
        return (part,) + (state if isinstance(state, tuple) else (state,))

    state = zero_state(cell, x)
    total = 0
    for s in range(0, T, seg):
        flat = state if isinstance(state, tuple) else (state,)
        res = checkpoint(run, x[s:s + seg], y[s:s + seg], *flat,
                         use_reentrant=False)
        total = total + res[0]
        state = tuple(res[1:]) if len(res) > 2 else res[1]
    return total / (T * B)


IMPLS = {"fused": loss_fused, "cell": loss_cell, "checkpoint": loss_checkpoint}


def label(cell_name, impl):
    c = cell_name.upper()
    return {"fused": "pytorch nn.%s (fused)" % c,
            "cell": "pytorch %sCell loop" % c,
            "checkpoint": "pytorch %sCell + checkpoint sqrt(t)" % c}[impl]


def ours_grads(torch, cell_name, rnn, out, X, H):
    """PyTorch's gradients in our layout."""
    import numpy as np
    gih = rnn.weight_ih_l0.grad.numpy()
    ghh = rnn.weight_hh_l0.grad.numpy()
    if cell_name == "lstm":
        p = perm_rows(H)
        W0 = np.concatenate([gih, ghh], axis=1)[p]  # p is its own inverse
        b0 = rnn.bias_ih_l0.grad.numpy()[p]
    else:
        W0 = np.zeros((4 * H, X + H), dtype=gih.dtype)
        W0[:3 * H, :X] = gih          # r, z, n_x: W_i*
        W0[:2 * H, X:] = ghh[:2 * H]  # r, z: W_hr, W_hz
        W0[3 * H:, X:] = ghh[2 * H:]  # n_h: W_hn
        b0 = np.concatenate([rnn.bias_ih_l0.grad.numpy(),
                             rnn.bias_hh_l0.grad.numpy()[2 * H:]])
    return {"W0": W0, "b0": b0, "Wo": out.weight.grad.numpy(),
            "bo": out.bias.grad.numpy()}


def shared_biases(torch, cell_name, rnn, H):
    """The rows where PyTorch has two biases to our one (bias_hh zero
    there): bias_hh's gradient equals bias_ih's, up to rounding in the
    fused kernel."""
    n = 4 * H if cell_name == "lstm" else 2 * H
    return torch.allclose(rnn.bias_hh_l0.grad[:n], rnn.bias_ih_l0.grad[:n],
                          rtol=1e-5, atol=1e-7)


# ---- part 1: gradient check --------------------------------------------------

def gradcheck(a):
    import numpy as np
    import torch
    torch.set_num_threads(a.threads)
    with tempfile.TemporaryDirectory(prefix="pytorch-compare.") as tmp:
        d = os.path.join(tmp, "grads")
        cmd = [a.bptt, "run", "--cell", a.cell, "--length", str(a.gt),
               "--hidden", str(a.gH), "--batch", str(a.gB), "--input",
               str(a.gX), "--iters", "1", "--strategy", "msm", "--memory",
               "5%", "--threads", str(a.threads), "--dump-grads", d,
               "--format", "json"]
        print("gradient check: " + " ".join(cmd[1:]), flush=True)
        res = json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                                        text=True).stdout)
        ld = lambda n: np.load(os.path.join(d, n + ".npy"))
        params = {k: ld("param_" + k) for k in ("W0", "b0", "Wo", "bo")}
        grads = {k: ld("grad_" + k) for k in ("W0", "b0", "Wo", "bo")}
        x = torch.from_numpy(ld("inputs"))
        y = torch.from_numpy(ld("targets").astype(np.int64))
    X, H, V = a.gX, a.gH, params["Wo"].shape[0]
    assert params["W0"].shape == (4 * H, X + H), params["W0"].shape
    ok = True
    print("%-12s %-7s %12s %12s %12s  %s" % ("torch impl", "tensor",
          "max|g_ours|", "max|diff|", "rel diff", "(< %g)" % TOL), flush=True)
    for impl in ("fused", "cell", "checkpoint"):
        rnn, cell, out = build(torch, a.cell, X, H, V, params)
        loss = IMPLS[impl](torch, rnn, cell, out, x, y)
        loss.backward()
        g = ours_grads(torch, a.cell, rnn, out, X, H)
        # where bias_hh is zero with no counterpart of ours, it has
        # bias_ih's gradient
        assert shared_biases(torch, a.cell, rnn, H)
        for k in ("W0", "b0", "Wo", "bo"):
            diff = float(np.max(np.abs(grads[k].astype(np.float64) - g[k])))
            rel = diff / max(float(np.max(np.abs(g[k]))), TINY)
            good = rel < TOL
            ok &= good
            print("%-12s %-7s %12.4e %12.4e %12.4e  %s" % (
                impl, k, float(np.max(np.abs(grads[k]))), diff, rel,
                "PASS" if good else "FAIL"))
        lt, lo = float(loss), float(res["loss_last"])
        rel = abs(lo - lt) / max(abs(lt), TINY)
        good = rel < TOL
        ok &= good
        print("%-12s %-7s %12.9f %12.9f %12.4e  %s   (ours, torch)" % (
            impl, "loss", lo, lt, rel, "PASS" if good else "FAIL"))
    print("gradient check: %s (%s t=%d H=%d B=%d X=%d V=%d, float32, %d "
          "threads)" % ("PASS" if ok else "FAIL", a.cell, a.gt, H, a.gB, X,
                        V, a.threads),
          flush=True)
    return ok


# ---- part 2: timing ----------------------------------------------------------

def child(a):
    """One PyTorch implementation, timed in this process; prints JSON."""
    import torch
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    T, B, X, H = a.t, a.B, a.X, a.H
    V = X
    rnn, cell, out = build(torch, a.cell, X, H, V)
    params = list(rnn.parameters()) + list(out.parameters())
    x = torch.randn(T, B, X)
    y = torch.randint(0, V, (T, B))
    fn = IMPLS[a.child]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    secs = []
    for it in range(a.iters + 1):
        for p in params:
            p.grad = None
        t0 = time.perf_counter()
        loss = fn(torch, rnn, cell, out, x, y)
        loss.backward()
        secs.append(time.perf_counter() - t0)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"impl": a.child, "seconds_per_iter":
                      statistics.median(secs[1:] or secs), "seconds_first_iter":
                      secs[0], "rss_peak_bytes": rss,
                      "rss_before_bytes": rss0, "loss": float(loss),
                      "threads": torch.get_num_threads()}))


def spawn(cmd, env=None):
    """Run cmd and parse its JSON.  Linux carries a process's peak RSS
    across execve, so a child forked straight from this process (torch
    imported: some 240 MiB) would report at least ours as its peak; a shell
    in between forks it afresh ('; exit' keeps the shell from exec'ing it)."""
    sh = ["/bin/sh", "-c", '"$0" "$@"; exit $?'] + cmd
    return json.loads(subprocess.run(sh, check=True, stdout=subprocess.PIPE,
                                     text=True, env=env).stdout)


def run_torch(a, impl, iters=None, env=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--child", impl,
           "--cell", a.cell, "-t", str(a.t), "-H", str(a.H), "-B", str(a.B), "-X", str(a.X),
           "-j", str(a.threads), "-i", str(a.iters if iters is None else iters)]
    return spawn(cmd, env)


def run_ours(a, strategy, memory):
    cmd = [a.bptt, "run", "--cell", a.cell, "--length", str(a.t), "--hidden",
           str(a.H), "--batch", str(a.B), "--input", str(a.X), "--iters",
           str(a.iters + 1), "--strategy", strategy, "--memory", memory,
           "--threads", str(a.threads), "--format", "json"]
    return spawn(cmd)


def steal():
    """CPU time stolen by the hypervisor so far, all CPUs, in seconds
    (/proc/stat; 0 where there is none).  A shared VM loses whole time
    slices to its neighbours, and with OpenMP threads that meet at a barrier
    several times a step, a stolen slice on one core stalls them all: it
    made single rows here 10-40 times slower."""
    try:
        with open("/proc/stat") as f:
            v = f.readline().split()
        return int(v[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def timing(a):
    import torch
    MiB = 1 << 20
    rows = []
    for strategy, memory in (("full", "100%"), ("chen", "100%"),
                             ("msm", "5%")):
        print("timing: ours %s %s ..." % (strategy, memory), flush=True)
        s0, w0 = steal(), time.time()
        r = run_ours(a, strategy, memory)
        rows.append({"impl": "ours %s" % strategy +
                     (" %s" % memory if strategy == "msm" else ""),
                     "s": r["seconds_per_iter"],
                     "rss": r["rss_peak_bytes"],
                     "ckpt": r["checkpoint_peak_bytes"],
                     "tracked": r["total_tracked_peak_bytes"],
                     "fwd": r["forward_ops"] / a.t,
                     "steal": steal() - s0, "wall": time.time() - w0})
    for impl in ("fused", "cell", "checkpoint"):
        print("timing: %s ..." % label(a.cell, impl), flush=True)
        s0, w0 = steal(), time.time()
        r = run_torch(a, impl)
        st, wall = steal() - s0, time.time() - w0
        # memory apart: one iteration with glibc's mmap threshold fixed at
        # 64 KiB, so that freed blocks go back to the system and the peak
        # RSS is what PyTorch holds (with the default, dynamic threshold the
        # heap keeps freed blocks and Chen's method showed as much growth
        # as the plain loop); not used for timing, as it adds page faults
        env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="65536")
        m = run_torch(a, impl, iters=0, env=env)
        rows.append({"impl": label(a.cell, impl), "s": r["seconds_per_iter"],
                     "rss": r["rss_peak_bytes"],
                     "rss_growth": m["rss_peak_bytes"] - m["rss_before_bytes"],
                     "fwd": 2.0 if impl == "checkpoint" else 1.0,
                     "steal": st, "wall": wall})
    ref = rows[0]["s"]
    ver = subprocess.run([a.bptt, "--version"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    comment = ("# pytorch-compare: %s t=%d batch=%d input=%d hidden=%d "
               "classes=%d, float32, %d threads, median of %d iterations "
               "after a warm-up (forward + backward, no optimizer step); "
               "torch %s; %s; python %s" % (
                   a.cell.upper(), a.t, a.B, a.X, a.H, a.X, a.threads, a.iters,
                   torch.__version__, ver, sys.version.split()[0]))
    hdr = ["implementation", "seconds_per_iter", "vs_ours_full",
           "forward_ops_per_step", "rss_peak_bytes", "rss_growth_bytes",
           "checkpoint_peak_bytes", "total_tracked_peak_bytes",
           "cpu_steal_seconds", "wall_seconds"]
    os.makedirs(a.outdir, exist_ok=True)
    path = os.path.join(a.outdir, "pytorch-compare.csv" if a.cell == "lstm"
                        else "pytorch-compare-%s.csv" % a.cell)
    with new_beside(path) as f:
        f.write(comment + "\n" + ",".join(hdr) + "\n")
        for r in rows:
            f.write("%s,%.6f,%.4f,%.3f,%d,%s,%s,%s,%.2f,%.2f\n" % (
                r["impl"], r["s"], r["s"] / ref, r["fwd"], r["rss"],
                r.get("rss_growth", ""), r.get("ckpt", ""),
                r.get("tracked", ""), r["steal"], r["wall"]))
    print()
    print(comment)
    print("%-38s %8s %8s %8s %9s %9s %9s %7s" % (
        "implementation", "s/iter", "vs full", "fwd/step", "RSS MiB",
        "+RSS MiB", "ckpt MiB", "steal"))
    for r in rows:
        g = r.get("rss_growth")
        c = r.get("ckpt")
        print("%-38s %8.3f %7.2fx %8.3f %9.1f %9s %9s %6.1fs" % (
            r["impl"], r["s"], r["s"] / ref, r["fwd"], r["rss"] / MiB,
            "%.1f" % (g / MiB) if g is not None else "-",
            "%.1f" % (c / MiB) if c is not None else "-", r["steal"]))
    print("RSS: peak resident set of the timing process (PyTorch's includes "
          "its libraries, about 240 MiB);\n+RSS: PyTorch's growth over one "
          "iteration, in a run of its own with MALLOC_MMAP_THRESHOLD_=65536;\n"
          "ckpt: our measured checkpoint peak (ours' total tracked peak is in "
          "the CSV);\nsteal: CPU time the hypervisor took during that row "
          "(/proc/stat)")
    ncpu = os.cpu_count() or 1
    bad = [r["impl"] for r in rows
           if r["steal"] > 1.0 or r["steal"] > 0.05 * ncpu * r["wall"]]
    if bad:
        print("WARNING: the hypervisor took CPU time (over 1 s or 5%%) "
              "during: %s; those times are not trustworthy (on the 2-core "
              "VM such rows ran 10-40x slower), rerun on a quiet machine"
              % "; ".join(bad))
    print("wrote %s" % path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("-t", type=int, default=1000)
    p.add_argument("-H", type=int, default=256)
    p.add_argument("-B", type=int, default=32)
    p.add_argument("-X", type=int, default=64)
    p.add_argument("-j", dest="threads", type=int, default=os.cpu_count())
    p.add_argument("-i", dest="iters", type=int, default=3)
    p.add_argument("-b", dest="bptt", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "bptt"))
    p.add_argument("-o", dest="outdir", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "results"))
    p.add_argument("--cell", choices=("lstm", "gru"), default="lstm",
                   help="the cell compared (default lstm)")
    p.add_argument("--grad-sizes", default="50,32,4,16",
                   help="T,H,B,X of the gradient check (default 50,32,4,16)")
    p.add_argument("--no-timing", action="store_true")
    p.add_argument("--no-gradcheck", action="store_true")
    p.add_argument("--child", choices=sorted(IMPLS), help=argparse.SUPPRESS)
    a = p.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    if a.child:
        return child(a)
    a.gt, a.gH, a.gB, a.gX = (int(v) for v in a.grad_sizes.split(","))
    t0 = time.time()
    ok = True
    if not a.no_gradcheck:
        ok = gradcheck(a)
        print()
    if not a.no_timing:
        timing(a)
    print("pytorch-compare: %.0f s" % (time.time() - t0))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
