"""GradScaler unscale + gradient-norm clipping on CPU, side by side in one process with the same
thread count: torch's scaler.unscale_(opt) + clip_grad_norm_ (three passes over the gradients:
unscale read+write, norm read, clip read+write) against ampgrad's scaler.unscale_and_clip_(opt,
max_norm) (two: norm + non-finite check read, one multiply read+write), and ampgrad's own
unscale_ + clip_grad_norm_. Median of the per-call times.

    python benchmarks/bench_unscale_clip_cpu.py        # AG_BENCH_THREADS=2 by default
"""
import os
import statistics
import time

import numpy as np

import ampgrad

try:
    import torch
except ImportError:
    torch = None


def median_time(fn, warmup=5, iters=30):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def make(lib, shapes, dtype, mode):
    """Parameters with fixed gradients; init_scale=1 and a huge max_norm keep the gradients unchanged
    from call to call while every pass still runs (both libraries always multiply)."""
    rng = np.random.default_rng(0)
    params = []
    for s in shapes:
        p = lib.zeros(s, dtype=getattr(lib, dtype), requires_grad=True)
        p.grad = lib.tensor(rng.standard_normal(s).astype(np.float32)).to(getattr(lib, dtype))
        params.append(p)
    opt = lib.optim.SGD(params, lr=0.0)
    scaler = lib.amp.GradScaler("cpu", init_scale=1.0, growth_interval=10**9)
    scaler.scale(lib.ones(()))  # creates the scale tensor

    if mode == "fused":
        def step():
            scaler.unscale_and_clip_(opt, 1e30)
            scaler.update()
    else:
        def step():
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(params, 1e30)
            scaler.update()
    return step


def main():
    threads = int(os.environ.get("AG_BENCH_THREADS", "2"))
    if torch:
        torch.set_num_threads(threads)
    if hasattr(ampgrad, "set_num_threads"):
        ampgrad.set_num_threads(threads)
    cases = {
        "MLP 4x1024 (4.2M params)": [(1024, 1024)] * 4 + [(1024,)] * 4,
        "GPT-ish 12 blocks d512 (38M params)": [(512, 1536), (1536,), (512, 512), (512,), (512, 2048), (2048,),
                                                 (2048, 512), (512,), (512,), (512,), (512,), (512,)] * 12
                                                + [(32000, 512)],
    }
    print(f"threads={threads}; median ms per call (ratio < 1: the fused call is faster)")
    print(f"{'case':40s} {'dtype':9s} {'torch 3-pass':>13s} {'ag 3-pass':>10s} {'ag fused':>9s} "
          f"{'fused/torch':>11s}")
    for name, shapes in cases.items():
        for dtype in ("float32", "bfloat16"):
            nbytes = sum(int(np.prod(s)) for s in shapes) * (4 if dtype == "float32" else 2)
            t_t = median_time(make(torch, shapes, dtype, "plain")) if torch else None
            t_a = median_time(make(ampgrad, shapes, dtype, "plain"))
            t_f = median_time(make(ampgrad, shapes, dtype, "fused"))
            tt = f"{t_t * 1e3:10.2f} ms" if t_t else f"{'-':>13s}"
            print(f"{name:40s} {dtype:9s} {tt} {t_a * 1e3:7.2f} ms {t_f * 1e3:6.2f} ms "
                  f"{(t_f / t_t if t_t else float('nan')):11.2f}   fused moves 3x the gradient bytes: "
                  f"{3 * nbytes / t_f / 1e9:.1f} GB/s; torch 5x: "
                  f"{(5 * nbytes / t_t / 1e9 if t_t else float('nan')):.1f} GB/s")


if __name__ == "__main__":
    main()
