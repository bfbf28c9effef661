"""Timing helpers shared by the benchmarks: best-of-N wall time per call, and a side-by-side table."""
import time


def bench(fn, warmup=20, iters=200, repeat=5):
    """Returns the best mean seconds per call over `repeat` runs of `iters` calls."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        best = min(best, (time.perf_counter() - t0) / iters)
    return best


def table(rows, unit="us", scale=1e6):
    """rows: (name, ampgrad_seconds, torch_seconds or None). Prints both and the ratio."""
    print(f"{'case':44s} {'ampgrad':>10s} {'torch':>10s} {'ratio':>7s}")
    for name, a, t in rows:
        ts = f"{t * scale:10.2f}" if t is not None else f"{'-':>10s}"
        r = f"{a / t:7.2f}" if t else f"{'-':>7s}"
        print(f"{name:44s} {a * scale:10.2f} {ts} {r}   ({unit})")
