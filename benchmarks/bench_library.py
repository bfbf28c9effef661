"""Per-call cost of a custom op (ampgrad.library vs torch.library) in one process, same thread count: an
8x8 matmul op with register_autograd and a CPU register_autocast rule, called without grad, with grad,
forward + backward, and inside autocast (the rule casts). Median of 15 batches of calls.

    python benchmarks/bench_library.py
"""
import os
import statistics
import time

import ampgrad

try:
    import torch
except ImportError:
    torch = None


def median_us(fn, calls=2000, batches=15):
    for _ in range(100):
        fn()
    per = calls // batches
    times = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per):
            fn()
        times.append((time.perf_counter() - t0) / per * 1e6)
    return statistics.median(times)


def cases(M):
    @M.library.custom_op("benchlib::mm", mutates_args=())
    def mm(x: M.Tensor, y: M.Tensor) -> M.Tensor:
        return x @ y

    mm.register_autograd(lambda ctx, g: (g @ ctx.y.t(), ctx.x.t() @ g),
                         setup_context=lambda ctx, inputs, output: ctx.__dict__.update(x=inputs[0], y=inputs[1]))
    mm.register_autocast("cpu", M.bfloat16)
    a, b, w = M.randn(8, 8), M.randn(8, 8), M.randn(8, 8, requires_grad=True)

    def fwd_bwd():
        mm(a, w).sum().backward()

    def in_autocast():
        with M.autocast("cpu"):
            return mm(a, b)

    return {"built-in a @ b": lambda: a @ b, "custom op, no grad": lambda: mm(a, b),
            "custom op, input requires grad": lambda: mm(a, w), "custom op forward + backward": fwd_bwd,
            "custom op in autocast (rule casts)": in_autocast}


def main():
    threads = int(os.environ.get("AG_BENCH_THREADS", "2"))
    ampgrad.set_num_threads(threads)
    if torch:
        torch.set_num_threads(threads)
    ag = cases(ampgrad)
    tc = cases(torch) if torch else {}
    print(f"{'case':40s} {'ampgrad':>9s} {'torch':>9s} {'ratio':>6s}  (us per call, median, {threads} threads)")
    for name in ag:
        a = median_us(ag[name])
        t = median_us(tc[name]) if torch else None
        ts = f"{t:9.1f}" if t else f"{'-':>9s}"
        print(f"{name:40s} {a:9.1f} {ts} {a / t if t else float('nan'):6.2f}")


if __name__ == "__main__":
    main()
