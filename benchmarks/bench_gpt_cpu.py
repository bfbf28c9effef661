"""Training step of a small GPT shaped like karpathy/nanoGPT's model.py (token + position embeddings,
pre-LN blocks of causal self-attention through scaled_dot_product_attention and a GELU MLP, a final
layer norm, a weight-tied head, cross entropy, AdamW with decayed/undecayed groups, grad clipping), run
by ampgrad and torch in one process with the same weights, shapes and thread count. Prints both step
times (median of several timed blocks) and the ratio; < 1 means ampgrad is faster.

    python benchmarks/bench_gpt_cpu.py [--layers 4] [--width 256] [--heads 4] [--block 128] [--batch 8]
                                       [--vocab 65] [--threads 2] [--steps 5] [--amp both|fp32|bf16]
"""
import argparse
import math
import statistics
import time

import numpy as np

import ampgrad

try:
    import torch
except ImportError:
    torch = None


def build(lib, cfg, seed=0):
    nn, F = lib.nn, lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(cfg.width, 3 * cfg.width)
            self.c_proj = nn.Linear(cfg.width, cfg.width)
            self.drop = nn.Dropout(cfg.dropout)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(cfg.width, dim=2)
            k = k.view(B, T, cfg.heads, C // cfg.heads).transpose(1, 2)
            q = q.view(B, T, cfg.heads, C // cfg.heads).transpose(1, 2)
            v = v.view(B, T, cfg.heads, C // cfg.heads).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=cfg.dropout if self.training else 0,
                                               is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.drop(self.c_proj(y))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(cfg.width, 4 * cfg.width)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * cfg.width, cfg.width)
            self.drop = nn.Dropout(cfg.dropout)

        def forward(self, x):
            return self.drop(self.c_proj(self.gelu(self.c_fc(x))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(cfg.width)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(cfg.width)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(cfg.vocab, cfg.width), wpe=nn.Embedding(cfg.block, cfg.width),
                drop=nn.Dropout(cfg.dropout), h=nn.ModuleList([Block() for _ in range(cfg.layers)]),
                ln_f=nn.LayerNorm(cfg.width)))
            self.lm_head = nn.Linear(cfg.width, cfg.vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets):
            b, t = idx.size()
            pos = lib.arange(0, t, dtype=lib.long)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)

    model = GPT()
    # Same weights in both libraries: nanoGPT's init (normal 0.02, scaled c_proj), drawn by NumPy.
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                a = np.zeros(p.shape, np.float32)
            elif "ln" in name:
                a = np.ones(p.shape, np.float32)
            else:
                std = 0.02 / math.sqrt(2 * cfg.layers) if name.endswith("c_proj.weight") else 0.02
                a = (rng.standard_normal(p.shape) * std).astype(np.float32)
            p.copy_(lib.from_numpy(a))
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": 0.1},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    opt = lib.optim.AdamW(groups, lr=1e-3, betas=(0.9, 0.95))
    idx = lib.from_numpy(rng.integers(0, cfg.vocab, (cfg.batch, cfg.block)))
    tgt = lib.from_numpy(rng.integers(0, cfg.vocab, (cfg.batch, cfg.block)))
    return model, opt, idx, tgt


def make_step(lib, cfg, amp):
    model, opt, idx, tgt = build(lib, cfg)
    model.train()

    def step():
        if amp:
            with lib.autocast("cpu", dtype=lib.bfloat16):
                loss = model(idx, tgt)
        else:
            loss = model(idx, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    return step


def time_step(step, steps, blocks):
    for _ in range(2):
        step()
    times = []
    for _ in range(blocks):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        times.append((time.perf_counter() - t0) / steps)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--block", type=int, default=128)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--vocab", type=int, default=65)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--amp", default="both", choices=["both", "fp32", "bf16"])
    cfg = p.parse_args()
    ampgrad.set_num_threads(cfg.threads)
    if torch is not None:
        torch.set_num_threads(cfg.threads)
    modes = {"both": [False, True], "fp32": [False], "bf16": [True]}[cfg.amp]
    print(f"GPT {cfg.layers}L x {cfg.width}, {cfg.heads} heads, block {cfg.block}, batch {cfg.batch}, vocab {cfg.vocab}, "
          f"{cfg.threads} threads; ms per training step (median of {cfg.blocks} blocks of {cfg.steps})")
    print(f"{'case':28s} {'ampgrad':>10s} {'torch':>10s} {'ratio':>7s}")
    for amp in modes:
        name = "step bf16 autocast" if amp else "step fp32"
        a = time_step(make_step(ampgrad, cfg, amp), cfg.steps, cfg.blocks)
        t = time_step(make_step(torch, cfg, amp), cfg.steps, cfg.blocks) if torch is not None else None
        ts = f"{t * 1e3:10.2f}" if t else f"{'-':>10s}"
        r = f"{a / t:7.2f}" if t else f"{'-':>7s}"
        print(f"{name:28s} {a * 1e3:10.2f} {ts} {r}", flush=True)


if __name__ == "__main__":
    main()
