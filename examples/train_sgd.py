"""Fits a 2-layer MLP to the UCI digits with ampgrad's autograd and a hand-written SGD loop, printing
the loss as it goes down and the test accuracy at the end.

    python examples/train_sgd.py [--epochs 30] [--lr 0.1]
"""
import argparse
import time

import ampgrad as torch
from digits import load_digits


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--lr", type=float, default=0.1)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--hidden", type=int, default=128)
    args = p.parse_args()

    torch.manual_seed(0)
    xtr, ytr, xte, yte = load_digits()
    xtr, ytr, xte, yte = (torch.from_numpy(a) for a in (xtr, ytr, xte, yte))
    n, d = xtr.shape
    w1 = (torch.randn(d, args.hidden) * (2.0 / d) ** 0.5).requires_grad_()
    b1 = torch.zeros(args.hidden, requires_grad=True)
    w2 = (torch.randn(args.hidden, 10) * (1.0 / args.hidden) ** 0.5).requires_grad_()
    b2 = torch.zeros(10, requires_grad=True)
    params = [w1, b1, w2, b2]

    def forward(x):
        return (x @ w1 + b1).relu() @ w2 + b2

    def nll(logits, y):  # cross entropy: -log_softmax at the target class
        return -torch.log_softmax(logits, dim=1).gather(1, y.unsqueeze(1)).mean()

    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        perm = torch.randperm(n)
        total = 0.0
        for i in range(0, n, args.batch):
            idx = perm[i:i + args.batch]
            loss = nll(forward(xtr[idx]), ytr[idx])
            for p_ in params:
                p_.grad = None
            loss.backward()
            with torch.no_grad():
                for p_ in params:
                    p_ -= args.lr * p_.grad
            total += loss.item() * len(idx)
        if epoch % 5 == 0 or epoch == args.epochs - 1:
            print(f"epoch {epoch:3d}  train loss {total / n:.4f}")
    with torch.no_grad():
        acc = (forward(xte).argmax(dim=1) == yte).float().mean().item()
    print(f"test accuracy {acc * 100:.1f}%  ({time.perf_counter() - t0:.1f} s)")


if __name__ == "__main__":
    main()
