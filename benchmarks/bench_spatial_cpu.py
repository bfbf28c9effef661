"""Spatial nn ops on the CPU, ampgrad and torch side by side in one process with the same inputs and
thread count: reflect pad 2d, bilinear x2 interpolation and unfold 3x3 on [8, 64, 64, 64], forward and
forward + backward (autograd.grad with a fixed random gradient). Prints the median microseconds per call
and the ratio ampgrad / torch (< 1: ampgrad faster).

    python benchmarks/bench_spatial_cpu.py [--threads 2] [--dtype float32|bfloat16]
"""
import argparse
import statistics
import time

import numpy as np

import ampgrad
import torch


def timeit(fn, min_time=0.3, blocks=7):
    fn()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < 0.05:
        fn()
        n += 1
    n = max(1, int(n * min_time / 0.05 / blocks))
    times = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n)
    return statistics.median(times)


CASES = {
    "pad reflect 2d (3,3,3,3)": lambda F, x: F.pad(x, [3, 3, 3, 3], mode="reflect"),
    "interpolate bilinear x2": lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False),
    "unfold 3x3 pad 1": lambda F, x: F.unfold(x, 3, padding=1),
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", default="float32")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    ampgrad.set_num_threads(args.threads)
    arr = np.random.default_rng(0).standard_normal((8, 64, 64, 64)).astype(np.float32)
    print(f"threads={args.threads} dtype={args.dtype} input [8, 64, 64, 64]")
    print(f"{'case':36s} {'pass':8s} {'ampgrad us':>11s} {'torch us':>11s} {'ratio':>6s}")
    for name, f in CASES.items():
        xa = ampgrad.tensor(arr).to(getattr(ampgrad, args.dtype)).requires_grad_(True)
        xt = torch.tensor(arr).to(getattr(torch, args.dtype)).requires_grad_(True)
        ga = ampgrad.tensor(np.random.default_rng(1).standard_normal(tuple(f(ampgrad.nn.functional, xa).shape)).astype(np.float32)).to(xa.dtype)
        gt = torch.tensor(ga.float().numpy()).to(xt.dtype)

        def fa():
            with ampgrad.no_grad():
                f(ampgrad.nn.functional, xa)

        def ft():
            with torch.no_grad():
                f(torch.nn.functional, xt)

        def ba():
            ampgrad.autograd.grad(f(ampgrad.nn.functional, xa), xa, ga)

        def bt():
            torch.autograd.grad(f(torch.nn.functional, xt), xt, gt)

        for label, a, t in (("fwd", fa, ft), ("fwd+bwd", ba, bt)):
            ta, tt = timeit(a), timeit(t)
            print(f"{name:36s} {label:8s} {ta * 1e6:11.1f} {tt * 1e6:11.1f} {ta / tt:6.2f}")


if __name__ == "__main__":
    main()
