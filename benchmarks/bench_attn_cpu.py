"""Attention, embedding, dropout and elementwise losses on the CPU: ampgrad and torch side by side in
one process, same thread count, forward and forward+backward; median of several timed blocks. The
ratio is ampgrad / torch (< 1: ampgrad faster).

    python benchmarks/bench_attn_cpu.py [--threads 2] [--quick]
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


def timeit(fn, iters, blocks=7, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - t0) / iters)
    return statistics.median(times)


_ONES = {}


def cases(lib, dt_name):
    F = lib.nn.functional
    dt = getattr(lib, dt_name)
    rng = np.random.RandomState(0)

    def t(*shape, grad=True, dtype=None, low=-1.0, high=1.0):
        x = lib.tensor(rng.uniform(low, high, size=shape).astype(np.float32)).to(dtype or dt)
        return x.requires_grad_(grad) if grad else x

    out = {}
    q, k, v = t(8, 4, 128, 64), t(8, 4, 128, 64), t(8, 4, 128, 64)
    out["sdpa causal B8 H4 L128 E64"] = (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), (q, k, v))
    out["sdpa B8 H4 L128 E64"] = (lambda: F.scaled_dot_product_attention(q, k, v), (q, k, v))
    if dt_name == "float32":
        idx = lib.tensor(rng.randint(0, 65, size=(8, 128)).astype(np.int64))
        w1 = t(65, 256)
        out["embedding [8,128] from 65x256"] = (lambda: F.embedding(idx, w1), (w1,))
        idx2 = lib.tensor(rng.randint(0, 50304, size=(8, 128)).astype(np.int64))
        w2 = t(50304, 256)
        out["embedding [8,128] from 50304x256"] = (lambda: F.embedding(idx2, w2), (w2,))
        x = t(1 << 20)
        out["dropout 1M p=0.1"] = (lambda: F.dropout(x, 0.1), (x,))
        a, b = t(1 << 20), t(1 << 20, grad=False)
        out["mse_loss 1M"] = (lambda: F.mse_loss(a, b), (a,))
        tg = t(1 << 20, grad=False, low=0.0)
        out["bce_with_logits 1M"] = (lambda: F.binary_cross_entropy_with_logits(a, tg), (a,))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    ampgrad.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    iters = 3 if args.quick else 10
    print(f"threads={args.threads}; times in ms (median of blocks); ratio = ampgrad / torch")
    print(f"{'case':46s} {'pass':8s} {'ampgrad':>9s} {'torch':>9s} {'ratio':>6s}")
    for dt in ("float32", "bfloat16"):
        ag = cases(ampgrad, dt)
        th = cases(torch, dt) if torch is not None else {}
        for name, (fn, leaves) in ag.items():
            for kind in ("fwd", "fwd+bwd"):
                def run(f=fn, ls=leaves, k=kind, lib=ampgrad, tag=name + dt):
                    if k == "fwd":
                        with lib.no_grad():
                            f()
                    else:  # backward from a gradient of ones made once (no .sum() in the timing)
                        y = f()
                        key = (lib.__name__, tag, tuple(y.shape))  # not id(f): ids of freed closures are reused
                        if key not in _ONES:
                            _ONES[key] = lib.ones_like(y)
                        y.backward(_ONES[key])
                        for x in ls:
                            x.grad = None
                ta = timeit(run, iters)
                tt = None
                if name in th:
                    f2, l2 = th[name]
                    tt = timeit(lambda: run(f2, l2, kind, torch, name + dt), iters)
                r = f"{ta / tt:6.2f}" if tt else "     -"
                ts = f"{tt * 1e3:9.3f}" if tt else "        -"
                print(f"{name + ' ' + dt:46s} {kind:8s} {ta * 1e3:9.3f} {ts} {r}")


if __name__ == "__main__":
    main()
