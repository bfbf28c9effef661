"""Convolution and pooling on the CPU: ampgrad and torch side by side in one process, same inputs and
thread count. Forward, and forward + backward (grads of input and weight/bias), median of several timed
blocks; ratio = ampgrad / torch (< 1: ampgrad faster).

    python benchmarks/bench_conv_cpu.py [--threads 2] [--blocks 7] [--dtype float32|bfloat16]
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


def cases(N=16):
    # (name, functional name, input shape, weight shape or None, bias, kwargs)
    return [
        ("conv2d 3x3 [16,32,32,32]->32", "conv2d", (N, 32, 32, 32), (32, 32, 3, 3), True, {"padding": 1}),
        ("conv2d 1x1 [16,64,32,32]->64", "conv2d", (N, 64, 32, 32), (64, 64, 1, 1), True, {}),
        ("conv2d 3x3 stride 2 [16,32,32,32]->64", "conv2d", (N, 32, 32, 32), (64, 32, 3, 3), True, {"stride": 2, "padding": 1}),
        ("conv1d k5 [16,64,256]->64", "conv1d", (N, 64, 256), (64, 64, 5), True, {"padding": 2}),
        ("conv_transpose2d 4x4 s2 [16,32,16,16]->32", "conv_transpose2d", (N, 32, 16, 16), (32, 32, 4, 4), True,
         {"stride": 2, "padding": 1}),
        ("max_pool2d 2x2 [16,32,32,32]", "max_pool2d", (N, 32, 32, 32), None, False, {"kernel_size": 2}),
        ("max_pool2d 3x3 s2 p1 [16,32,32,32]", "max_pool2d", (N, 32, 32, 32), None, False,
         {"kernel_size": 3, "stride": 2, "padding": 1}),
        ("avg_pool2d 2x2 [16,32,32,32]", "avg_pool2d", (N, 32, 32, 32), None, False, {"kernel_size": 2}),
        ("adaptive_avg_pool2d ->(7,7) [16,32,32,32]", "adaptive_avg_pool2d", (N, 32, 32, 32), None, False,
         {"output_size": (7, 7)}),
    ]


def make(lib, shape, wshape, bias, dtype, rng_seed):
    rng = np.random.default_rng(rng_seed)
    dt = getattr(lib, dtype)
    x = lib.tensor(rng.standard_normal(shape).astype(np.float32)).to(dt).requires_grad_(True)
    ps = [x]
    if wshape is not None:
        fan = int(np.prod(wshape[1:]))
        w = lib.tensor((rng.standard_normal(wshape) / np.sqrt(fan)).astype(np.float32)).to(dt).requires_grad_(True)
        ps.append(w)
        if bias:
            ps.append(lib.tensor(rng.standard_normal(wshape[1] if False else wshape[0]).astype(np.float32)).to(dt).requires_grad_(True))
    return ps


def timed_pair(fa, ft, blocks, min_time=0.1):
    """Median seconds per call of fa and ft, timed in alternating blocks (a busy machine slows both alike)."""
    fns = [f for f in (fa, ft) if f is not None]
    iters = []
    for f in fns:
        f()
        f()
        t0 = time.perf_counter()
        f()
        iters.append(max(1, int(min_time / max(time.perf_counter() - t0, 1e-6))))
    out = [[] for _ in fns]
    for _ in range(blocks):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(iters[i]):
                f()
            out[i].append((time.perf_counter() - t0) / iters[i])
    med = [statistics.median(o) for o in out]
    return med + [None] * (2 - len(med))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--blocks", type=int, default=7)
    ap.add_argument("--dtype", default="float32")
    a = ap.parse_args()
    ampgrad.set_num_threads(a.threads)
    libs = [("ampgrad", ampgrad)]
    if torch is not None:
        torch.set_num_threads(a.threads)
        libs.append(("torch", torch))
    print(f"threads={a.threads} dtype={a.dtype}; median of {a.blocks} blocks; times in ms")
    print(f"{'case':44s} {'pass':8s} {'ampgrad':>9s} {'torch':>9s} {'ratio':>6s}")
    for name, fname, shape, wshape, bias, kw in cases():
        fns = {}
        for lname, lib in libs:
            F = lib.nn.functional
            ps = make(lib, shape, wshape, bias, a.dtype, 0)
            f = getattr(F, fname)

            def fwd(lib=lib, f=f, ps=ps):
                with lib.no_grad():
                    return f(*ps, **kw)

            def fwdbwd(lib=lib, f=f, ps=ps):
                y = f(*ps, **kw)
                lib.autograd.grad(y, ps, lib.ones_like(y))

            fns[lname] = (fwd, fwdbwd)
        res = {"ampgrad": [], "torch": []}
        for i in range(2):
            ta, tt = timed_pair(fns["ampgrad"][i], fns["torch"][i] if "torch" in fns else None, a.blocks)
            res["ampgrad"].append(ta)
            res["torch"].append(tt)
        if "torch" not in fns:
            del res["torch"]
        for i, pas in enumerate(("fwd", "fwd+bwd")):
            ag_t = res["ampgrad"][i] * 1e3
            if "torch" in res:
                t_t = res["torch"][i] * 1e3
                print(f"{name:44s} {pas:8s} {ag_t:9.3f} {t_t:9.3f} {ag_t / t_t:6.2f}")
            else:
                print(f"{name:44s} {pas:8s} {ag_t:9.3f} {'-':>9s}")


if __name__ == "__main__":
    main()
