"""Per-op throughput of the CPU elementwise and reduction kernels on large tensors (1M elements by
default): the per-element math and loops of the CPU kernels, not the per-call overhead that
bench_overhead.py measures. ampgrad only (a before/after check of the kernels); set
OMP_NUM_THREADS=1 for steadier numbers on a shared machine.

    OMP_NUM_THREADS=1 python benchmarks/bench_elementwise_cpu.py [--n 1048576] [--filter gelu] [--repeat 3]
"""
import argparse
import statistics

import ampgrad as ag
from _common import bench

F = ag.nn.functional


def cases(n):
    ag.manual_seed(0)
    x = ag.randn(n)
    y = ag.randn(n)
    z = ag.randn(n)
    pos = x.abs() + 0.5
    unit = ag.rand(n) * 1.8 - 0.9
    xh = x.to(ag.bfloat16)
    yh = y.to(ag.bfloat16)
    xi = ag.randint(-1000, 1000, (n,), dtype=ag.int32)
    yi = ag.randint(1, 1000, (n,), dtype=ag.int32)
    xs = ag.randn(1024, n // 1024)
    xt = xs.t()  # strided operand
    rows = ag.randn(n // 1024, 1024)
    c = {
        # unary, fp32
        "neg": lambda: -x, "exp": lambda: x.exp(), "exp2": lambda: ag.exp2(x), "expm1": lambda: x.expm1(),
        "log": lambda: pos.log(), "log1p": lambda: pos.log1p(), "sqrt": lambda: pos.sqrt(),
        "rsqrt": lambda: pos.rsqrt(), "reciprocal": lambda: pos.reciprocal(), "abs": lambda: x.abs(),
        "sign": lambda: x.sign(), "sin": lambda: x.sin(), "tanh": lambda: x.tanh(),
        "sigmoid": lambda: x.sigmoid(), "relu": lambda: x.relu(), "gelu": lambda: F.gelu(x),
        "gelu_tanh": lambda: F.gelu(x, approximate="tanh"), "silu": lambda: F.silu(x),
        "softplus": lambda: F.softplus(x), "erf": lambda: x.erf(), "erfinv": lambda: unit.erfinv(),
        "floor": lambda: x.floor(), "round": lambda: x.round(), "round_dec2": lambda: ag.round(x, decimals=2),
        "frac": lambda: x.frac(), "clamp": lambda: x.clamp(-0.5, 0.5), "nan_to_num": lambda: ag.nan_to_num(x),
        "isnan": lambda: x.isnan(), "isfinite": lambda: x.isfinite(), "bitwise_not_i32": lambda: ~xi,
        "copy_f32_to_bf16": lambda: x.to(ag.bfloat16), "copy_strided": lambda: xt.contiguous(),
        # unary, bf16 / in place / strided
        "exp_bf16": lambda: xh.exp(), "gelu_bf16": lambda: F.gelu(xh), "relu_inplace": lambda: z.relu_(),
        "sigmoid_strided": lambda: xt.sigmoid(),
        # binary
        "add": lambda: x + y, "add_alpha": lambda: ag.add(x, y, alpha=2.0), "add_scalar": lambda: x + 2.0,
        "sub": lambda: x - y, "mul": lambda: x * y, "mul_scalar": lambda: x * 2.0, "div": lambda: x / pos,
        "add_bf16": lambda: xh + yh, "mul_bf16": lambda: xh * yh, "add_strided": lambda: xt + xt,
        "div_floor": lambda: ag.floor_divide(x, pos),
        "div_trunc": lambda: ag.div(x, pos, rounding_mode="trunc"),
        "div_floor_i32": lambda: ag.floor_divide(xi, yi), "remainder": lambda: ag.remainder(x, pos),
        "remainder_i32": lambda: ag.remainder(xi, yi), "fmod": lambda: ag.fmod(x, pos), "pow": lambda: pos**y,
        "pow_i32": lambda: yi**2, "atan2": lambda: ag.atan2(x, y), "maximum": lambda: ag.maximum(x, y),
        "minimum": lambda: ag.minimum(x, y), "lt": lambda: x < y, "eq": lambda: x == y,
        "logical_and": lambda: ag.logical_and(x, y), "bitwise_xor_i32": lambda: xi ^ yi,
        # ternary
        "where": lambda: ag.where(x > 0, x, y), "lerp": lambda: ag.lerp(x, y, z),
        "addcmul": lambda: ag.addcmul(x, y, z, value=0.5), "addcdiv": lambda: ag.addcdiv(x, y, pos, value=0.5),
        # creation
        "arange": lambda: ag.arange(n, dtype=ag.float32), "linspace": lambda: ag.linspace(0, 1, n),
        # reductions
        "sum": lambda: x.sum(), "mean_dim": lambda: xs.mean(0), "max": lambda: x.max(),
        "amax_rows": lambda: rows.amax(1), "var": lambda: x.var(), "norm2": lambda: x.norm(),
        "norm3": lambda: x.norm(3), "norm_inf": lambda: x.norm(float("inf")),
        "logsumexp_rows": lambda: rows.logsumexp(1), "softmax_rows": lambda: rows.softmax(1),
        "softmax_cols": lambda: rows.softmax(0), "log_softmax_bf16": lambda: rows.to(ag.bfloat16).log_softmax(1),
        "cumsum_rows": lambda: rows.cumsum(1),
    }
    return c


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--filter", default="")
    p.add_argument("--repeat", type=int, default=3, help="independent timings per op; the median is printed")
    a = p.parse_args()
    print(f"{'case':24s} {'us (median)':>12s}   all runs")
    for name, fn in cases(a.n).items():
        if a.filter and a.filter not in name:
            continue
        runs = [bench(fn, warmup=3, iters=20, repeat=3) * 1e6 for _ in range(a.repeat)]
        print(f"{name:24s} {statistics.median(runs):12.1f}   " + " ".join(f"{r:.1f}" for r in runs), flush=True)


if __name__ == "__main__":
    main()
