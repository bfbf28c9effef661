"""Per-op overhead on tiny tensors (16 elements), ampgrad vs torch CPU in one run: forward only,
and forward + backward (per op in a chain), plus a few cases again with the autograd profiler
recording. Ratios < 1 mean ampgrad is faster.

    python benchmarks/bench_overhead.py
"""
import ampgrad
from _common import bench, table

try:
    import torch
except ImportError:
    torch = None


def cases(lib):
    a = lib.randn(16)
    b = lib.randn(16)
    ag = lib.randn(16, requires_grad=True)
    bg = lib.randn(16, requires_grad=True)

    def chain_backward():
        y = ag + bg
        y = y * bg
        y = y.relu()
        y.sum().backward()

    return {
        "add (a + b), forward": lambda: a + b,
        "mul (a * 2.0), forward": lambda: a * 2.0,
        "exp, forward": lambda: a.exp(),
        "sum, forward": lambda: a.sum(),
        "matmul 4x4, forward": (lambda m=a.reshape(4, 4): m @ m),
        "add, forward with grad recording": lambda: ag + bg,
        "add+mul+relu+sum, fwd+bwd (per op)": chain_backward,
    }


def profiled(lib, fn):
    """Seconds per call while the autograd profiler records every op (~1000 calls' events)."""
    with lib.autograd.profiler.profile():
        return bench(fn)


def main():
    torch.set_num_threads(2) if torch else None
    ours = cases(ampgrad)
    theirs = cases(torch) if torch else {}
    rows = []
    for name, fn in ours.items():
        per = 4 if "per op" in name else 1
        a = bench(fn) / per
        t = bench(theirs[name]) / per if name in theirs else None
        rows.append((name, a, t))
    for name in ["add (a + b), forward", "add+mul+relu+sum, fwd+bwd (per op)"]:
        per = 4 if "per op" in name else 1
        a = profiled(ampgrad, ours[name]) / per
        t = profiled(torch, theirs[name]) / per if torch else None
        rows.append((name + ", profiler on", a, t))
    table(rows)


if __name__ == "__main__":
    main()
