"""The main job: trains a small character-level GPT on Shakespeare (bundled in examples/data) with
autocast + GradScaler — CUDA fp16 when a GPU is there, CPU bf16 otherwise — then prints a sample of
generated text and saves a figure (loss and loss scale per step, fp32 vs AMP throughput).

    python examples/train_amp.py [--steps 1500] [--plot examples/amp_gpt.png] [--torch]

A tqdm progress bar (tokens/s, loss, scale) and the matplotlib figure come with
`pip install ".[examples]"`; without tqdm / matplotlib the script still trains and logs plain lines.
`--torch` runs the same script on PyTorch (the code is written against torch's API: `import ampgrad
as torch`), for a side-by-side check of loss and speed.
"""
import argparse
import gzip
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

if "--torch" not in sys.argv:
    import ampgrad as torch
else:  # the side-by-side check on PyTorch (type-checked against ampgrad's API)
    import torch  # type: ignore[no-redef]
nn = torch.nn
F = torch.nn.functional

try:
    from tqdm import tqdm
except ImportError:  # optional extra
    tqdm = None


# ----------------------------------------------------------------------------------------- data

def load_corpus():
    with gzip.open(os.path.join(HERE, "data", "shakespeare.txt.gz"), "rt", encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    return data[:n], data[n:], chars


def get_batch(data, block, batch, gen, device):
    ix = torch.randint(len(data) - block - 1, (batch,), generator=gen)
    x = torch.stack([data[i:i + block] for i in ix.tolist()])
    y = torch.stack([data[i + 1:i + 1 + block] for i in ix.tolist()])
    return x.to(device), y.to(device)


# ---------------------------------------------------------------------------------------- model

class Block(nn.Module):
    def __init__(self, d, heads, dropout):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d), nn.Dropout(dropout))
        self.dropout = dropout

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block, d=128, layers=4, heads=4, dropout=0.1):
        super().__init__()
        self.block = block
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(d, heads, dropout) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.tok.weight = self.head.weight  # weight tying, as GPT-2
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * layers) if name.endswith("proj.weight") else 0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets=None):
        T = idx.shape[1]
        x = self.drop(self.tok(idx) + self.pos(torch.arange(T, device=idx.device)))
        for b in self.blocks:
            x = b(x)
        logits = self.head(self.ln_f(x))
        if targets is None:
            return logits, None
        return logits, F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, n, temperature=0.8, gen=None):
        for _ in range(n):
            logits, _ = self(idx[:, -self.block:])
            probs = F.softmax(logits[:, -1, :].float() / temperature, dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, 1, generator=gen)], dim=1)
        return idx


# ------------------------------------------------------------------------------------- training

@torch.no_grad()
def evaluate(model, data, args, device, amp_dtype, batches=8):
    model.eval()
    gen = torch.Generator().manual_seed(1234)  # the same validation batches every time
    losses = []
    for _ in range(batches):
        x, y = get_batch(data, args.block, args.batch, gen, device)
        with torch.autocast(device, dtype=amp_dtype):
            losses.append(model(x, y)[1].item())
    model.train()
    return sum(losses) / len(losses)


def throughput(model_fn, args, train, device, amp_dtype, steps):
    """tokens/s of `steps` training steps (after one warm-up step) with or without autocast."""
    model = model_fn()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)
    gen = torch.Generator().manual_seed(7)
    times = []
    for i in range(steps + 1):
        x, y = get_batch(train, args.block, args.batch, gen, device)
        t0 = time.perf_counter()
        with torch.autocast(device, dtype=amp_dtype, enabled=amp_dtype is not None):
            loss = model(x, y)[1]
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss.item()
        if i:
            times.append(time.perf_counter() - t0)
    times.sort()
    return args.batch * args.block / times[len(times) // 2]


def save_figure(path, hist, tput, val, label):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install \".[examples]\"): no figure")
        return
    fig, (a1, a3) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [2.2, 1]})
    steps = list(range(1, len(hist["loss"]) + 1))
    a1.plot(steps, hist["loss"], color="tab:blue", lw=0.8, label="training loss")
    if val:
        a1.plot([s for s, _ in val], [v for _, v in val], "o-", color="tab:green", label="validation loss")
    a1.set_xlabel("step")
    a1.set_ylabel("cross-entropy (nats/char)")
    a1.set_title(f"char-level GPT on Shakespeare, autocast {label}")
    a2 = a1.twinx()
    a2.semilogy(steps, hist["scale"], color="tab:red", lw=1.2, label="GradScaler scale")
    a2.set_ylabel("loss scale")
    h1, l1 = a1.get_legend_handles_labels()
    h2, l2 = a2.get_legend_handles_labels()
    a1.legend(h1 + h2, l1 + l2, loc="upper right")
    names = list(tput)
    bars = a3.bar(names, [tput[n] for n in names], color=["tab:gray", "tab:orange"][:len(names)])
    a3.bar_label(bars, fmt="%.0f")
    a3.set_ylabel("tokens / s (median step)")
    a3.set_title("training throughput")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"figure saved to {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--tput-steps", type=int, default=10, help="steps timed for the fp32 vs AMP comparison")
    ap.add_argument("--plot", default=os.path.join(HERE, "amp_gpt.png"))
    ap.add_argument("--torch", action="store_true", help="run on PyTorch instead (side-by-side check)")
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    amp_dtype = torch.float16 if device == "cuda" else torch.bfloat16
    label = "fp16" if amp_dtype == torch.float16 else "bf16"
    print(f"{torch.__name__} {getattr(torch, '__version__', '')} on {device}, autocast {label}")
    torch.manual_seed(0)
    train, val_data, chars = load_corpus()
    make = lambda: GPT(len(chars), args.block).to(device)  # noqa: E731
    model = make()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{len(train) + len(val_data)} characters, vocabulary {len(chars)}, model {n_params / 1e6:.2f}M parameters")

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.99), weight_decay=0.1)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.steps, pct_start=0.1)
    # fp16 needs the scaler; bf16 has fp32's range and does not, but one loop serves both. A short
    # growth interval lets a short run show the scale adapting (it backs off on any inf gradient).
    scaler = torch.amp.GradScaler(device, init_scale=2.0 ** 16, growth_interval=100)
    gen = torch.Generator().manual_seed(0)
    hist = {"loss": [], "scale": []}
    val = [(0, evaluate(model, val_data, args, device, amp_dtype))]
    print(f"step 0: validation loss {val[0][1]:.3f}")
    bar = tqdm(total=args.steps, unit="step", dynamic_ncols=True) if tqdm else None
    tokens, t_start = 0, time.perf_counter()
    for step in range(1, args.steps + 1):
        x, y = get_batch(train, args.block, args.batch, gen, device)
        with torch.autocast(device, dtype=amp_dtype):
            _, loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        sched.step()
        tokens += x.numel()
        hist["loss"].append(loss.item())
        hist["scale"].append(scaler.get_scale())
        rate = tokens / (time.perf_counter() - t_start)
        if bar:
            bar.set_postfix(loss=f"{hist['loss'][-1]:.3f}", scale=f"{hist['scale'][-1]:g}", tok_s=f"{rate:.0f}")
            bar.update(1)
        elif step % 20 == 0 or step == args.steps:
            print(f"step {step}/{args.steps} loss {hist['loss'][-1]:.3f} scale {hist['scale'][-1]:g} {rate:.0f} tok/s")
        if step % args.eval_every == 0 or step == args.steps:
            val.append((step, evaluate(model, val_data, args, device, amp_dtype)))
            msg = f"step {step}: validation loss {val[-1][1]:.3f}"
            bar.write(msg) if bar else print(msg)
    if bar:
        bar.close()
    elapsed = time.perf_counter() - t_start
    print(f"trained {args.steps} steps in {elapsed:.1f} s ({tokens / elapsed:.0f} tokens/s); "
          f"validation loss {val[0][1]:.3f} -> {val[-1][1]:.3f}")

    ctx = torch.tensor([[chars.index("\n")]], device=device)
    out = model.eval().generate(ctx, 300, gen=torch.Generator().manual_seed(3))[0].tolist()
    print("---- sample ----")
    print("".join(chars[i] for i in out).strip())
    print("----------------")

    tput = {}
    if args.tput_steps > 0:
        tput["fp32"] = throughput(make, args, train, device, None, args.tput_steps)
        tput[f"AMP {label}"] = throughput(make, args, train, device, amp_dtype, args.tput_steps)
        print("throughput (median step): " + ", ".join(f"{k} {v:.0f} tokens/s" for k, v in tput.items()))
    if args.plot:
        save_figure(args.plot, hist, tput, val, label)


if __name__ == "__main__":
    main()
