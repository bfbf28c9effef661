"""Normalizations, softmax and classification losses on the CPU, ampgrad and torch side by side in one
process with the same inputs and thread count: forward, and forward + backward (autograd.grad of the
output with a fixed random gradient for the norms and softmax, of the loss itself for the losses). Prints the median
microseconds per call of several timed blocks and the ratio ampgrad / torch (< 1: ampgrad faster).

    python benchmarks/bench_nn_cpu.py [--threads 2] [--dtype float32|bfloat16] [--only layer_norm,softmax]
"""
import argparse
import statistics
import time

import numpy as np

import ampgrad

try:
    import torch
except ImportError:
    torch = None


def timeit(fn, min_time=0.15, blocks=7):
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


def cases(dtype):
    rng = np.random.default_rng(0)

    def arr(*shape, lo=-2.0, hi=2.0):
        return rng.uniform(lo, hi, shape).astype(np.float32)

    def lab(n, c, shape=None):
        return rng.integers(0, c, shape or (n,))

    rng_g = np.random.default_rng(1)
    # (name, make(lib) -> (fwd callable, fwd+bwd callable))
    def norm_case(name, xs, f, params):
        x = arr(*xs)
        ps = [arr(*p) for p in params]

        def make(lib):
            dt = getattr(lib, dtype)
            xt = lib.tensor(x).to(dt).requires_grad_(True)
            pt = [lib.tensor(p).requires_grad_(True) for p in ps]
            F = lib.nn.functional

            def fwd():
                with lib.no_grad():
                    f(F, xt, *pt)

            leaves = [xt] + pt
            gout = lib.tensor(rng_g.uniform(-1, 1, xs).astype(np.float32)).to(dt)

            def fb():
                lib.autograd.grad([f(F, xt, *pt)], leaves, [gout])
            return fwd, fb
        return name, make

    out = [
        norm_case("layer_norm [8,128,256]", (8, 128, 256), lambda F, x, w, b: F.layer_norm(x, (256,), w, b), [(256,), (256,)]),
        norm_case("rms_norm [8,128,256]", (8, 128, 256), lambda F, x, w: F.rms_norm(x, (256,), w), [(256,)]),
        norm_case("group_norm [8,64,32,32] G=8", (8, 64, 32, 32), lambda F, x, w, b: F.group_norm(x, 8, w, b), [(64,), (64,)]),
        norm_case("batch_norm [16,64,32,32] train", (16, 64, 32, 32),
                  lambda F, x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(64,), (64,)]),
        norm_case("softmax [8,4,128,128] last", (8, 4, 128, 128), lambda F, x: F.softmax(x, -1), []),
        norm_case("log_softmax [8,4,128,128] last", (8, 4, 128, 128), lambda F, x: F.log_softmax(x, -1), []),
    ]
    for n, c in ((1024, 65), (1024, 50304)):
        logits = arr(n, c)
        t = lab(n, c)

        def make(lib, logits=logits, t=t, fn="cross_entropy"):
            dt = getattr(lib, dtype)
            xt = lib.tensor(logits).to(dt).requires_grad_(True)
            tt = lib.tensor(t)
            F = lib.nn.functional
            f = getattr(F, fn)
            if fn == "nll_loss":
                with lib.no_grad():
                    xt = F.log_softmax(xt, 1)
                xt.requires_grad_(True)

            def fwd():
                with lib.no_grad():
                    f(xt, tt)

            def fb():
                lib.autograd.grad([f(xt, tt)], [xt])
            return fwd, fb
        out.append((f"cross_entropy [{n},{c}]", make))
        out.append((f"nll_loss [{n},{c}]", lambda lib, make=make: make(lib, fn="nll_loss")))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    ampgrad.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    print(f"threads={args.threads} dtype={args.dtype}  (microseconds per call, median)")
    print(f"{'case':36s} {'fwd ag':>9s} {'fwd torch':>9s} {'ratio':>6s}   {'f+b ag':>9s} {'f+b torch':>9s} {'ratio':>6s}")
    for name, make in cases(args.dtype):
        if args.only and not any(k in name for k in args.only.split(",")):
            continue
        af, ab = make(ampgrad)
        a1, a2 = timeit(af) * 1e6, timeit(ab) * 1e6
        if torch is not None:
            tf, tb = make(torch)
            t1, t2 = timeit(tf) * 1e6, timeit(tb) * 1e6
            print(f"{name:36s} {a1:9.1f} {t1:9.1f} {a1 / t1:6.2f}   {a2:9.1f} {t2:9.1f} {a2 / t2:6.2f}")
        else:
            print(f"{name:36s} {a1:9.1f} {'-':>9s} {'-':>6s}   {a2:9.1f} {'-':>9s} {'-':>6s}")


if __name__ == "__main__":
    main()
