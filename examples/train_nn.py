"""Trains a small conv net on the UCI digits with the training kit (nn.Module, Adam, StepLR,
gradient clipping), written against torch's API; --torch runs the same script under torch.

    python examples/train_nn.py [--epochs 5] [--torch]
"""
import argparse
import time

import numpy as np

from digits import load_digits


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--torch", action="store_true", help="run under torch instead of ampgrad")
    args = p.parse_args()
    if args.torch:
        import torch
    else:
        import ampgrad as torch
    nn, F = torch.nn, torch.nn.functional

    torch.manual_seed(0)
    xtr, ytr, xte, yte = load_digits()
    xtr, xte = (torch.tensor(a.reshape(-1, 1, 8, 8)) for a in (xtr, xte))
    ytr, yte = torch.tensor(ytr), torch.tensor(yte)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.GroupNorm(2, 8), nn.ReLU(),
        nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.GELU(), nn.Flatten(),
        nn.Dropout(0.1), nn.Linear(16 * 4 * 4, 10))
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        order = rng.permutation(len(ytr))
        total = 0.0
        for i in range(0, len(order), args.batch):
            idx = torch.tensor(order[i:i + args.batch])
            opt.zero_grad()
            loss = F.cross_entropy(model(xtr[idx]), ytr[idx], label_smoothing=0.05)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += loss.item() * len(idx)
        sched.step()
        model.eval()
        with torch.no_grad():
            acc = (model(xte).argmax(1) == yte).float().mean().item()
        print(f"epoch {epoch + 1}: loss {total / len(ytr):.4f}  test accuracy {acc:.3f}  lr {sched.get_last_lr()[0]:.4g}")
    print(f"{time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
