"""GEMM throughput on the shapes of the GPT benchmark's step (benchmarks/bench_gpt_cpu.py: B*T = 1024 rows,
width 256, MLP 1024, qkv 768), ampgrad and torch side by side in one run, fp32 and bf16, ms and GFLOP/s.
`T` rows are X^T @ dY (the weight gradients); the others X @ W^T (forward and input gradients)."""
import argparse
import statistics
import time

import numpy as np

import ampgrad

SHAPES = [(1024, 256, 768, "qkv fwd"), (1024, 256, 1024, "fc fwd"), (1024, 1024, 256, "proj2 fwd"),
          (1024, 768, 256, "qkv dX"), ("T", 256, 1024, 768, "qkv dW"), ("T", 1024, 1024, 256, "fc2 dW"),
          (1024, 256, 256, "proj fwd")]


def bench(f, n):
    for _ in range(3):
        f()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    ampgrad.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"threads={args.threads}  (ms, median of {args.repeat}; GFLOP/s; ratio = ampgrad / torch)")
    print(f"{'case':12s} {'dtype':5s} {'M':>5s} {'K':>5s} {'N':>5s} {'ampgrad':>9s} {'GF/s':>6s} {'torch':>9s} {'GF/s':>6s} {'ratio':>6s}")
    for s in SHAPES:
        tr = s[0] == "T"
        M, K, N, name = s[1:] if tr else s
        a = rng.standard_normal((K, M) if tr else (M, K)).astype(np.float32)
        b = rng.standard_normal((K, N) if tr else (N, K)).astype(np.float32)
        for dt in ("float32", "bfloat16"):
            ops = []
            for m in (ampgrad, torch):
                x, y = m.from_numpy(a).to(getattr(m, dt)), m.from_numpy(b).to(getattr(m, dt))
                ops.append((lambda x=x, y=y: x.t() @ y) if tr else (lambda x=x, y=y: x @ y.t()))
            ta, tt = bench(ops[0], args.repeat), bench(ops[1], args.repeat)
            fl = 2 * M * K * N
            flag = "  slower" if ta > tt * 1.05 else ""
            print(f"{name:12s} {dt[:4]:5s} {M:5d} {K:5d} {N:5d} {ta * 1e3:9.3f} {fl / ta / 1e9:6.0f} {tt * 1e3:9.3f} "
                  f"{fl / tt / 1e9:6.0f} {ta / tt:6.2f}{flag}")


if __name__ == "__main__":
    main()
