"""fp32 MLP training step on CPU (linear+relu layers, log_softmax NLL loss, SGD update),
ampgrad vs torch in one run with the same shapes. Ratio < 1 means ampgrad is faster.

    python benchmarks/bench_mlp_cpu.py [--width 256] [--depth 3] [--batch 64]
"""
import argparse

import numpy as np

import ampgrad
from _common import bench, table

try:
    import torch
except ImportError:
    torch = None


def make_step(lib, width, depth, batch, n_in=64, n_out=10):
    rng = np.random.default_rng(0)
    dims = [n_in] + [width] * depth + [n_out]
    params = []
    for i, o in zip(dims[:-1], dims[1:]):
        params.append(lib.tensor(rng.standard_normal((o, i)).astype(np.float32) * (2 / i) ** 0.5, requires_grad=True))
        params.append(lib.zeros(o, requires_grad=True))
    x = lib.tensor(rng.standard_normal((batch, n_in)).astype(np.float32))
    y = lib.tensor(rng.integers(0, n_out, batch))
    F = lib.nn.functional

    def step():
        h = x
        for k in range(0, len(params), 2):
            h = F.linear(h, params[k], params[k + 1])
            if k + 2 < len(params):
                h = h.relu()
        loss = -F.log_softmax(h, dim=1).gather(1, y.unsqueeze(1)).mean()
        for p in params:
            p.grad = None
        loss.backward()
        with lib.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=0.01)
        return loss

    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--depth", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    args = ap.parse_args()
    if torch:
        torch.set_num_threads(2)
    rows = []
    for w, d, b in [(args.width, args.depth, args.batch), (64, 2, 32), (1024, 4, 256)]:
        a = bench(make_step(ampgrad, w, d, b), warmup=5, iters=20, repeat=3)
        t = bench(make_step(torch, w, d, b), warmup=5, iters=20, repeat=3) if torch else None
        rows.append((f"MLP step width {w} depth {d} batch {b}", a, t))
    table(rows, unit="us")


if __name__ == "__main__":
    main()
