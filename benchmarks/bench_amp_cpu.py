"""MLP training step with nn.Linear/ReLU, CrossEntropyLoss and SGD(momentum) on CPU: fp32, and
autocast bf16 + GradScaler, ampgrad vs torch with the same shapes in one run.

    python benchmarks/bench_amp_cpu.py
"""
import ampgrad
from _common import bench, table

try:
    import torch
except ImportError:
    torch = None


def make_step(lib, width, depth, batch, amp):
    lib.manual_seed(0)
    nn = lib.nn
    layers = [nn.Linear(64, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*layers, nn.Linear(width, 10))
    opt = lib.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", enabled=amp)
    loss_fn = nn.CrossEntropyLoss()
    x = lib.randn(batch, 64)
    y = lib.randint(0, 10, (batch,))

    def step():
        opt.zero_grad(set_to_none=True)
        with lib.autocast("cpu", dtype=lib.bfloat16, enabled=amp):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    return step


def main():
    if torch:
        torch.set_num_threads(int(__import__("os").environ.get("AG_BENCH_THREADS", "2")))
    rows = []
    for w, d, b in [(256, 3, 64), (1024, 4, 256)]:
        for amp in (False, True):
            name = f"w{w} d{d} b{b} {'autocast bf16 + scaler' if amp else 'fp32'}"
            a = bench(make_step(ampgrad, w, d, b, amp), warmup=3, iters=10, repeat=3)
            t = bench(make_step(torch, w, d, b, amp), warmup=3, iters=10, repeat=3) if torch else None
            rows.append((name, a, t))
    table(rows, unit="us")


if __name__ == "__main__":
    main()
