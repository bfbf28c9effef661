"""nn.LSTM / nn.GRU forward + backward on CPU, ampgrad vs torch with the same weights, shapes and
thread count (AG_BENCH_THREADS, default 2). torch's float32 CPU LSTM runs on oneDNN; ampgrad's is a
Python time loop over a GEMM and the fused cell op per step (csrc/ops/rnn.cpp).

    python benchmarks/bench_rnn_cpu.py
"""
import os
import statistics
import time

import ampgrad

try:
    import torch
except ImportError:
    torch = None


def make_step(lib, kind, size, layers, seq, batch, amp=False):
    lib.manual_seed(0)
    m = getattr(lib.nn, kind)(size, size, layers)
    x = lib.randn(seq, batch, size)

    def step():
        m.zero_grad(set_to_none=True)
        with lib.autocast("cpu", dtype=lib.bfloat16, enabled=amp):
            out, _ = m(x)
        out.float().sum().backward()

    return step


def median_time(fn, warmup=2, iters=9):
    for _ in range(warmup):
        fn()
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    n = int(os.environ.get("AG_BENCH_THREADS", "2"))
    ampgrad.set_num_threads(n)
    if torch:
        torch.set_num_threads(n)
    print(f"threads {n}; median ms per forward + backward")
    print(f"{'case':44s} {'ampgrad':>10s} {'torch':>10s} {'ratio':>7s}")
    for kind, size, layers, seq, batch, amp in [("LSTM", 256, 2, 64, 32, False), ("GRU", 256, 2, 64, 32, False),
                                                ("LSTM", 256, 2, 64, 32, True)]:
        name = f"{kind}({size},{size},{layers}) seq{seq} b{batch}{' autocast bf16' if amp else ''}"
        a = median_time(make_step(ampgrad, kind, size, layers, seq, batch, amp))
        t = median_time(make_step(torch, kind, size, layers, seq, batch, amp)) if torch else None
        ts = f"{t * 1e3:10.2f}" if t else f"{'-':>10s}"
        print(f"{name:44s} {a * 1e3:10.2f} {ts} {a / t if t else float('nan'):7.2f}")


if __name__ == "__main__":
    main()
