"""What the AMP inspector (ampgrad.amp.debug) costs on bench_gpt_cpu.py's bf16 training step: the step alone,
under debug.inspect() without a model (the op table: the autocast gate's records and the kernel watch, which
scans every forward kernel's operands for the first inf/NaN), with the model (module paths, first inf/NaN per
module) and with per-module statistics; torch's plain step for scale. Ratios are to ampgrad's plain step.

    python benchmarks/bench_amp_debug.py [--threads 2] [--steps 3] [--blocks 5] (and bench_gpt_cpu.py's shape flags)
"""
import argparse

import ampgrad
from ampgrad.amp import debug

from bench_gpt_cpu import build, time_step

try:
    import torch
except ImportError:
    torch = None


def make_step(lib, cfg, mode):
    model, opt, idx, tgt = build(lib, cfg)
    model.train()

    def plain():
        with lib.autocast("cpu", dtype=lib.bfloat16):
            loss = model(idx, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    if mode == "off":
        return plain
    args = {"ops": (None, False), "model": (model, False), "stats": (model, True)}[mode]

    def inspected():
        with debug.inspect(args[0], module_stats=args[1]):
            plain()
    return inspected


def main():
    p = argparse.ArgumentParser()
    for name, default in (("layers", 4), ("width", 256), ("heads", 4), ("block", 128), ("batch", 8), ("vocab", 65),
                          ("threads", 2), ("steps", 3), ("blocks", 5)):
        p.add_argument(f"--{name}", type=int, default=default)
    p.add_argument("--dropout", type=float, default=0.0)
    cfg = p.parse_args()
    ampgrad.set_num_threads(cfg.threads)
    print(f"GPT {cfg.layers}L x {cfg.width}, block {cfg.block}, batch {cfg.batch}, bf16 autocast, {cfg.threads} threads; "
          f"ms per training step (median of {cfg.blocks} blocks of {cfg.steps})")
    base = None
    for mode, label in (("off", "ampgrad, inspector off"), ("ops", "inspect(): op table + kernel watch"),
                        ("model", "inspect(model, module_stats=False)"), ("stats", "inspect(model) with module stats")):
        t = time_step(make_step(ampgrad, cfg, mode), cfg.steps, cfg.blocks)
        base = base or t
        print(f"{label:40s} {t * 1e3:9.2f}  {t / base:5.2f}x", flush=True)
    if torch is not None:
        torch.set_num_threads(cfg.threads)
        t = time_step(make_step(torch, cfg, "off"), cfg.steps, cfg.blocks)
        print(f"{'torch, plain step':40s} {t * 1e3:9.2f}  {t / base:5.2f}x")


if __name__ == "__main__":
    main()
