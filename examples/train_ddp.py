"""Trains a small GPT (nanoGPT's shape: token + position embeddings, pre-LN causal self-attention
blocks, GELU MLP, weight-tied head) as a character model of this repository's README with
DistributedDataParallel, autocast (bf16 on CPU, fp16 on CUDA) and GradScaler, one process per rank.
Written against torch's API (backend=None picks the CPU default: MPI here, gloo in torch).

    python -m ampgrad.distributed.run --nproc-per-node 2 examples/train_ddp.py [--steps 60]
    mpiexec -n 2 python examples/train_ddp.py           # plain MPI works too
    python examples/train_ddp.py                        # a single process (no process group)
"""
import argparse
import math
import os
import time

import ampgrad as torch
import ampgrad.distributed as dist
from ampgrad import nn
from ampgrad.nn import functional as F
from ampgrad.nn.parallel import DistributedDataParallel as DDP
from ampgrad.utils.data import DataLoader, Dataset, DistributedSampler


class CharWindows(Dataset):
    def __init__(self, text, block):
        chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(chars)}
        self.vocab = len(chars)
        self.data = torch.tensor([self.stoi[c] for c in text], dtype=torch.long)
        self.block = block

    def __len__(self):
        return len(self.data) - self.block - 1

    def __getitem__(self, i):
        chunk = self.data[i:i + self.block + 1]
        return chunk[:-1], chunk[1:]


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block, width, layers, heads):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(block, width)
        self.h = nn.ModuleList([Block(width, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets):
        pos = torch.arange(idx.size(1), dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--batch", type=int, default=8, help="sequences per rank and step")
    ap.add_argument("--block", type=int, default=64)
    ap.add_argument("--width", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--out", default=None, help="save the trained weights here (rank 0)")
    ap.add_argument("--log-every", type=int, default=10)
    args = ap.parse_args()

    distributed = "RANK" in os.environ or "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ
    if distributed:
        dist.init_process_group()
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    device = "cuda" if torch.cuda.is_available() and not distributed else "cpu"
    amp_dtype = torch.float16 if device == "cuda" else torch.bfloat16

    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()[:60000]
    data = CharWindows(text, args.block)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(data, batch_size=args.batch, sampler=sampler, drop_last=True)

    torch.manual_seed(1234 + rank)  # different on purpose: DDP broadcasts rank 0's weights
    model = GPT(data.vocab, args.block, args.width, args.layers, args.heads).to(device)
    ddp = DDP(model) if distributed else model
    opt = torch.optim.AdamW(ddp.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1)
    scaler = torch.amp.GradScaler(device)
    if rank == 0:
        n = sum(p.numel() for p in model.parameters())
        print(f"{world} rank(s), {n / 1e6:.2f}M parameters, vocab {data.vocab}, autocast {amp_dtype}, "
              f"global batch {args.batch * world} x {args.block}")

    step, epoch, t0 = 0, 0, time.perf_counter()
    while step < args.steps:
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            with torch.autocast(device, dtype=amp_dtype):
                loss = ddp(x, y)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            if step % args.log_every == 0 or step == args.steps - 1:
                avg = loss.detach().float()
                if distributed:
                    dist.all_reduce(avg, op=dist.ReduceOp.AVG)
                if rank == 0:
                    ms = (time.perf_counter() - t0) * 1e3 / (step + 1)
                    print(f"step {step:4d}  loss {avg.item():.4f}  scale {scaler.get_scale():g}  {ms:.0f} ms/step",
                          flush=True)
            step += 1
            if step >= args.steps:
                break
        epoch += 1
    if rank == 0 and args.out:
        torch.save(model.state_dict(), args.out)
    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
