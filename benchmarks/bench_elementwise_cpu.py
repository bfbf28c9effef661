"""Per-op throughput of the CPU elementwise and reduction kernels on large tensors (1M elements by
default), ampgrad and torch side by side in one process at the same thread count: forward, and
forward + backward (a fixed upstream gradient) for the differentiable rows. The per-element math and
loops of the kernels, not the per-call overhead that bench_overhead.py measures.

    python benchmarks/bench_elementwise_cpu.py [--n 1048576] [--threads 2] [--filter gelu] [--repeat 5] [--no-torch]

ratio = ampgrad time / torch time; "-" where a row has no backward.
"""
import argparse
import statistics

import ampgrad as ag
from _common import bench

try:
    import torch
except ImportError:  # ampgrad-only timings
    torch = None


def cases(m, n):
    """name -> (inputs builder, forward fn(m, *inputs), differentiable). Built once per module."""
    F = m.nn.functional
    rows, cols = n // 1024, 1024
    c = {
        # unary, fp32 (the rows the vectorized math covers first)
        "exp": (lambda: [m.randn(n)], lambda x: x.exp(), True),
        "expm1": (lambda: [m.randn(n)], lambda x: x.expm1(), True),
        "log": (lambda: [m.rand(n) + 0.5], lambda x: x.log(), True),
        "log1p": (lambda: [m.rand(n) + 0.5], lambda x: x.log1p(), True),
        "tanh": (lambda: [m.randn(n)], lambda x: x.tanh(), True),
        "sigmoid": (lambda: [m.randn(n)], lambda x: x.sigmoid(), True),
        "gelu": (lambda: [m.randn(n)], lambda x: F.gelu(x), True),
        "gelu_tanh": (lambda: [m.randn(n)], lambda x: F.gelu(x, approximate="tanh"), True),
        "silu": (lambda: [m.randn(n)], lambda x: F.silu(x), True),
        "softplus": (lambda: [m.randn(n)], lambda x: F.softplus(x), True),
        "erf": (lambda: [m.randn(n)], lambda x: x.erf(), True),
        "gelu_bf16": (lambda: [m.randn(n).to(m.bfloat16)], lambda x: F.gelu(x), True),
        "sigmoid_strided": (lambda: [m.randn(cols, rows).t()], lambda x: x.sigmoid(), True),
        # other elementwise
        "relu": (lambda: [m.randn(n)], lambda x: x.relu(), True),
        "sqrt": (lambda: [m.rand(n) + 0.5], lambda x: x.sqrt(), True),
        "sin": (lambda: [m.randn(n)], lambda x: x.sin(), True),
        "add": (lambda: [m.randn(n), m.randn(n)], lambda x, y: x + y, True),
        "mul": (lambda: [m.randn(n), m.randn(n)], lambda x, y: x * y, True),
        "div": (lambda: [m.randn(n), m.rand(n) + 0.5], lambda x, y: x / y, True),
        # reductions
        "sum": (lambda: [m.randn(n)], lambda x: x.sum(), True),
        "mean": (lambda: [m.randn(n)], lambda x: x.mean(), True),
        "sum_bf16": (lambda: [m.randn(n).to(m.bfloat16)], lambda x: x.sum(), True),
        "mean_dim_rows": (lambda: [m.randn(rows, cols)], lambda x: x.mean(1), True),
        "mean_dim_cols": (lambda: [m.randn(rows, cols)], lambda x: x.mean(0), True),
        "sum_dim_cols": (lambda: [m.randn(rows, cols)], lambda x: x.sum(0), True),
        "softmax_rows": (lambda: [m.randn(rows, cols)], lambda x: x.softmax(1), True),
        "log_softmax_rows": (lambda: [m.randn(rows, cols)], lambda x: x.log_softmax(1), True),
        "logsumexp_rows": (lambda: [m.randn(rows, cols)], lambda x: x.logsumexp(1), True),
        "var": (lambda: [m.randn(n)], lambda x: x.var(), True),
        "norm2": (lambda: [m.randn(n)], lambda x: x.norm(), True),
        "amax_rows": (lambda: [m.randn(rows, cols)], lambda x: x.amax(1), False),
    }
    return c


def runners(m, n, name):
    """(forward fn, forward + backward fn or None) for one row on module m."""
    make, fn, diff = cases(m, n)[name]
    m.manual_seed(0)
    xs = make()
    fw = lambda: fn(*xs)  # noqa: E731
    if not diff:
        return fw, None
    xg = [x.detach().requires_grad_(True) for x in xs]
    y = fn(*xs)
    gout = m.randn(y.shape).to(y.dtype)

    def fb():
        fn(*xg).backward(gout)
        for x in xg:
            x.grad = None
    return fw, fb


def timings(mods, n, name, repeat):
    """Per module: (forward seconds, forward + backward seconds or None), medians of `repeat` timings
    taken in turns (ampgrad, torch, ampgrad, ...) so that a busy machine's drift hits both alike."""
    fns = [runners(m, n, name) for m in mods]
    t = [([], []) for _ in mods]
    for _ in range(repeat):
        for k, (fw, fb) in enumerate(fns):
            t[k][0].append(bench(fw, warmup=2, iters=10, repeat=3))
            if fb is not None:
                t[k][1].append(bench(fb, warmup=2, iters=10, repeat=3))
    return [(statistics.median(a), statistics.median(b) if b else None) for a, b in t]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--filter", default="", help="comma-separated substrings of row names")
    p.add_argument("--repeat", type=int, default=5, help="independent timings per op; the median is printed")
    p.add_argument("--no-torch", action="store_true")
    a = p.parse_args()
    names = [k for k in cases(ag, a.n) if not a.filter or any(f in k for f in a.filter.split(","))]
    ag.set_num_threads(a.threads)
    mods = [ag]
    if torch is not None and not a.no_torch:
        torch.set_num_threads(a.threads)
        mods.append(torch)
    print(f"n={a.n} threads={a.threads}  (us, median of {a.repeat}; ratio = ampgrad / torch)")
    print(f"{'case':20s} {'fw ag':>9s} {'fw torch':>9s} {'ratio':>6s}   {'fw+bw ag':>9s} {'fw+bw torch':>11s} {'ratio':>6s}")
    for name in names:
        res = timings(mods, a.n, name, a.repeat)
        fa, ba = res[0]
        ft, bt = res[1] if len(res) > 1 else (None, None)
        fr = f"{fa / ft:6.2f}" if ft else f"{'-':>6s}"
        br = f"{ba / bt:6.2f}" if ba and bt else f"{'-':>6s}"
        bas = f"{ba * 1e6:9.1f}" if ba else f"{'-':>9s}"
        bts = f"{bt * 1e6:11.1f}" if bt else f"{'-':>11s}"
        fts = f"{ft * 1e6:9.1f}" if ft else f"{'-':>9s}"
        print(f"{name:20s} {fa * 1e6:9.1f} {fts} {fr}   {bas} {bts} {br}", flush=True)


if __name__ == "__main__":
    main()
