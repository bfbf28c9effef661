"""The CUDA issue's GPU goals, ampgrad and torch side by side in one run (ratio = ampgrad / torch).

Rows (issue 15, half 2): the AMP MLP step at an overhead-bound size (width 1024, depth 4, batch 256) and a
GEMM-bound one (width 4096, depth 8, batch 4096), fp16 autocast + GradScaler + SGD; a tiny op forward and
forward + backward; GradScaler.unscale_ (+ update) over 256 x 1M float32 gradients (GB/s against a device copy);
fp16 / bf16 GEMM 8192^3 (TFLOP/s); fp32 add (GB/s against the copy); the AMP step's peak memory.
Times are medians of device-synchronized repeats; each library runs the same shapes on fresh random data.
`--device cpu --small` is a smoke test of the script itself on any machine.

    python benchmarks/bench_gpu.py [--json out.json] [--device cuda] [--small] [--only mlp,gemm,...]
"""
import argparse
import json
import statistics
import sys
import time


def sync(m, device):
    if device == "cuda":
        m.cuda.synchronize()


def timeit(m, device, fn, warmup=3, iters=10, repeat=5):
    """Median seconds per call of fn over `repeat` blocks of `iters` calls, synchronized."""
    for _ in range(warmup):
        fn()
    sync(m, device)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        sync(m, device)
        ts.append((time.perf_counter() - t0) / iters)
    return statistics.median(ts)


def mlp_step(m, device, width, depth, batch, small):
    """One AMP training step: fp16 autocast (bf16 on CPU), GradScaler, SGD; returns (seconds, peak bytes)."""
    m.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [m.nn.Linear(width, width), m.nn.ReLU()]
    model = m.nn.Sequential(*layers, m.nn.Linear(width, 10)).to(device)
    opt = m.optim.SGD(model.parameters(), lr=1e-3)
    scaler = m.amp.GradScaler(device, enabled=device == "cuda")
    x = m.randn(batch, width, device=device)
    y = m.randint(0, 10, (batch,), device=device)
    dt = m.float16 if device == "cuda" else m.bfloat16

    def step():
        opt.zero_grad(set_to_none=True)
        with m.autocast(device, dtype=dt):
            loss = m.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    peak = None
    if device == "cuda":
        step()
        m.cuda.synchronize()
        m.cuda.reset_peak_memory_stats()
        step()
        m.cuda.synchronize()
        peak = m.cuda.max_memory_allocated()
    return timeit(m, device, step, iters=2 if small else 10), peak


def tiny_ops(m, device):
    x = m.randn(4, device=device)
    xg = m.randn(4, device=device, requires_grad=True)

    def fw():
        return x * 2.0

    def fb():
        (xg * 2.0).sum().backward()
        xg.grad = None
    return timeit(m, device, fw, iters=200), timeit(m, device, fb, iters=100)


def unscale(m, device, n_tensors, numel):
    p = [m.nn.Parameter(m.zeros(numel, device=device)) for _ in range(n_tensors)]
    for q in p:
        q.grad = m.randn(numel, device=device)
    opt = m.optim.SGD(p, lr=0.1)
    scaler = m.amp.GradScaler(device, init_scale=1.0, growth_interval=1 << 30)
    scaler.scale(m.ones((), device=device))  # the scale tensor is made lazily by the first scale()

    def run():  # unscale_ (the multi-tensor pass) and update (one small kernel), as a step does
        scaler.unscale_(opt)
        scaler.update()
    src = m.randn(n_tensors * numel, device=device)
    dst = m.empty_like(src)
    t_copy = timeit(m, device, lambda: dst.copy_(src), iters=5)
    t = timeit(m, device, run, iters=5)
    bytes_moved = 2 * 4 * n_tensors * numel  # each gradient read and written once
    return t, bytes_moved / t, bytes_moved / t_copy


def gemm(m, device, n, dtype_name):
    dt = getattr(m, dtype_name)
    a, b = m.randn(n, n, device=device).to(dt), m.randn(n, n, device=device).to(dt)
    t = timeit(m, device, lambda: a @ b, iters=5)
    return t, 2 * n ** 3 / t


def add_bw(m, device, numel):
    a, b = m.randn(numel, device=device), m.randn(numel, device=device)
    out = m.empty_like(a)
    t = timeit(m, device, lambda: a + b, iters=20)  # a fresh output each call, from the caching allocator
    t_copy = timeit(m, device, lambda: out.copy_(a), iters=20)
    return t, 12 * numel / t, 8 * numel / t_copy


def run_all(m, device, small, only):
    rows = {
        "mlp": lambda: dict(zip(("mlp_small_s", "mlp_small_peak"),
                                mlp_step(m, device, *((64, 2, 32) if small else (1024, 4, 256)), small)))
        | dict(zip(("mlp_large_s", "mlp_large_peak"),
                   mlp_step(m, device, *((128, 2, 64) if small else (4096, 8, 4096)), small))),
        "tiny": lambda: dict(zip(("tiny_fw_s", "tiny_fb_s"), tiny_ops(m, device))),
        "unscale": lambda: dict(zip(("unscale_s", "unscale_Bps", "copy_Bps"),
                                    unscale(m, device, *((8, 1 << 12) if small else (256, 1 << 20))))),
        "gemm": lambda: {k: v for d in ("float16", "bfloat16")
                         for k, v in zip((f"gemm_{d}_s", f"gemm_{d}_flops"), gemm(m, device, 256 if small else 8192, d))},
        "add": lambda: dict(zip(("add_s", "add_Bps", "add_copy_Bps"), add_bw(m, device, 1 << 16 if small else 1 << 28))),
    }
    r = {}
    for key, fn in rows.items():
        if only and key not in only:
            continue
        try:
            r.update(fn())
        except Exception as e:  # noqa: BLE001 -- a failed row is reported, the others still run
            r[f"{key}_error"] = f"{type(e).__name__}: {e}"
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--small", action="store_true", help="tiny sizes: a smoke test of the script")
    ap.add_argument("--only", default="", help="comma-separated: mlp,tiny,unscale,gemm,add")
    ap.add_argument("--json", default="")
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args()
    only = {s for s in a.only.split(",") if s}
    import ampgrad
    mods = [("ampgrad", ampgrad)]
    if not a.no_torch:
        import torch
        mods.append(("torch", torch))
    res = {}
    for name, m in mods:
        if a.device == "cuda" and not m.cuda.is_available():
            print(f"{name}: no CUDA device", file=sys.stderr)
            continue
        try:
            res[name] = run_all(m, a.device, a.small, only)
        except Exception as e:  # noqa: BLE001 -- a failure is a row of the report, not the end of the run
            res[name] = {"error": f"{type(e).__name__}: {e}"}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    ag, th = res.get("ampgrad", {}), res.get("torch", {})
    print(f"device {a.device}{' (small)' if a.small else ''}; ratio = ampgrad / torch (times), ampgrad / torch (rates)")
    for k in sorted(set(ag) | set(th)):
        va, vt = ag.get(k), th.get(k)
        ratio = f"{va / vt:.3f}" if isinstance(va, (int, float)) and isinstance(vt, (int, float)) and vt else "-"
        print(f"{k:22s} {va!s:>24.24} {vt!s:>24.24} {ratio:>8}")


if __name__ == "__main__":
    main()
