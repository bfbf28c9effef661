"""The main job: trains an MLP classifier on the UCI handwritten digits with autocast + GradScaler
(CUDA fp16 when a GPU is there, CPU bf16 otherwise), shows a progress bar, prints the test
accuracy, and saves a plot of the loss and the loss scale per step.

    python examples/train_amp.py [--epochs 20] [--plot examples/amp_curves.png]
"""
import argparse
import os
import sys
import time

import ampgrad as torch
from ampgrad import nn
from digits import load_digits
from plot_png import save_curves


def progress(i, n, loss, scale, t0, width=30):
    done = int(width * (i + 1) / n)
    rate = (i + 1) / max(time.perf_counter() - t0, 1e-9)
    sys.stdout.write(f"\r[{'#' * done}{'.' * (width - done)}] {i + 1}/{n} loss {loss:.4f} scale {scale:g} {rate:.0f} it/s")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--plot", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "amp_curves.png"))
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    amp_dtype = torch.float16 if device == "cuda" else torch.bfloat16
    print(f"device {device}, autocast dtype {amp_dtype}")
    torch.manual_seed(0)
    xtr, ytr, xte, yte = load_digits()
    xtr, ytr = torch.tensor(xtr, device=device), torch.tensor(ytr, device=device)
    xte, yte = torch.tensor(xte, device=device), torch.tensor(yte, device=device)

    model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    # fp16 needs the scaler; bf16 (CPU) has fp32's range and does not, but running it keeps one loop
    # for both. A short growth interval lets a short run show the scale adapting.
    scaler = torch.amp.GradScaler(device, init_scale=2.0**16, growth_interval=100)
    loss_fn = nn.CrossEntropyLoss()

    n = xtr.shape[0]
    steps_per_epoch = (n + args.batch - 1) // args.batch
    total = args.epochs * steps_per_epoch
    losses, scales, step = [], [], 0
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        perm = torch.randperm(n, device=device)
        for i in range(0, n, args.batch):
            idx = perm[i:i + args.batch]
            opt.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device, dtype=amp_dtype):
                out = model(xtr[idx])
                loss = loss_fn(out, ytr[idx])
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            losses.append(loss.item())
            scales.append(scaler.get_scale())
            if step % 10 == 0 or step == total - 1:
                progress(step, total, losses[-1], scales[-1], t0)
            step += 1
    print()
    model.eval()
    with torch.no_grad(), torch.autocast(device_type=device, dtype=amp_dtype):
        acc = (model(xte).argmax(dim=1) == yte).float().mean().item()
    print(f"test accuracy {acc * 100:.1f}%   final loss {sum(losses[-steps_per_epoch:]) / steps_per_epoch:.4f}   "
          f"{time.perf_counter() - t0:.1f} s")
    save_curves(args.plot, losses, scales)
    print(f"saved loss and loss-scale curves to {args.plot}")


if __name__ == "__main__":
    main()
