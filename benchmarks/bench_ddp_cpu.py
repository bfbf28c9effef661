"""DistributedDataParallel on CPU: training-step time of the GPT of bench_gpt_cpu.py with 1 and 2
processes (same per-rank batch, so 2 processes do twice the work per step), ampgrad (MPI, started by
python -m ampgrad.distributed.run) side by side with torch DDP (gloo, started by torchrun) in the same
run. Each rank uses --threads threads (default 1: 2 ranks x 1 thread fill a 2-core machine).
Scaling efficiency = t(1 process) / t(2 processes): 1.0 is perfect weak scaling.

    python benchmarks/bench_ddp_cpu.py [--layers 4] [--width 256] [--batch 4] [--block 128] [--amp fp32|bf16]
                                       [--steps 3] [--blocks 5] [--threads 1] [--libs ampgrad,torch]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(cfg):
    sys.path.insert(0, HERE)
    from bench_gpt_cpu import build
    if cfg.worker == "torch":
        import torch as lib
    else:
        import ampgrad as lib
    dist = lib.distributed
    lib.set_num_threads(cfg.threads)
    dist.init_process_group("gloo" if cfg.worker == "torch" else "mpi")
    rank = dist.get_rank()
    cfg.dropout = 0.0
    model, opt, idx, tgt = build(lib, cfg, seed=rank)  # different per rank: DDP broadcasts rank 0's
    ddp = lib.nn.parallel.DistributedDataParallel(model)
    del opt
    params = [p for p in ddp.parameters() if p.requires_grad]
    opt = lib.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.95))

    def step():
        if cfg.amp == "bf16":
            with lib.autocast("cpu", dtype=lib.bfloat16):
                loss = ddp(idx, tgt)
        else:
            loss = ddp(idx, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    for _ in range(2):
        step()
    times, cpu = [], []
    for _ in range(cfg.blocks):
        dist.barrier()
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(cfg.steps):
            step()
        times.append((time.perf_counter() - t0) / cfg.steps)
        cpu.append((time.process_time() - c0) / cfg.steps)
    # every rank's median; the step time is the slowest rank's. CPU time per step (this process's, all its
    # threads) says how much work a step was when the machine is shared with other jobs.
    med = lib.tensor([statistics.median(times), statistics.median(cpu)], dtype=lib.float64)
    dist.all_reduce(med, op=dist.ReduceOp.MAX)
    if rank == 0:
        print("RESULT " + json.dumps({"ms": med[0].item() * 1e3, "cpu_ms": med[1].item() * 1e3}), flush=True)
    dist.destroy_process_group()


def launch(lib, nproc, cfg, passthrough):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(cfg.threads)
    root = os.path.dirname(HERE)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(root, "python")] + ([env["PYTHONPATH"]] if "PYTHONPATH" in env else []))
    script = [os.path.abspath(__file__), "--worker", lib] + passthrough
    if lib == "torch":
        torchrun = shutil.which("torchrun")
        cmd = ([torchrun] if torchrun else [sys.executable, "-m", "torch.distributed.run"])
        cmd += ["--nproc-per-node", str(nproc), "--master-port", str(29600 + nproc)] + script
    else:
        cmd = [sys.executable, "-m", "ampgrad.distributed.run", "--nproc-per-node", str(nproc)] + script
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    for line in p.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    sys.stderr.write(f"{lib} x{nproc} failed (rc {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}\n")
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--block", type=int, default=128)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--vocab", type=int, default=65)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--blocks", type=int, default=5)
    p.add_argument("--amp", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--libs", default="ampgrad,torch")
    p.add_argument("--worker", default=None)
    cfg = p.parse_args()
    if cfg.worker:
        return worker(cfg)
    passthrough = []
    for k in ("layers", "width", "heads", "block", "batch", "vocab", "threads", "steps", "blocks", "amp"):
        passthrough += [f"--{k}", str(getattr(cfg, k))]
    print(f"GPT {cfg.layers}L x {cfg.width}, block {cfg.block}, batch {cfg.batch} per rank, {cfg.amp}, "
          f"{cfg.threads} thread(s) per rank, {os.cpu_count()} CPUs; ms per DDP training step (median of "
          f"{cfg.blocks} blocks of {cfg.steps}, slowest rank)")
    libs = cfg.libs.split(",")
    res = {}
    for nproc in (1, 2):  # interleaved, so that a change in the machine's load hits both libraries
        for lib in libs:
            res[lib, nproc] = launch(lib, nproc, cfg, passthrough)
    print(f"{'library':10s} {'1 proc':>9s} {'2 procs':>9s} {'efficiency':>11s}   "
          f"{'cpu/step 1 proc':>15s} {'cpu/step 2 procs':>16s}")
    f = lambda r, k, w=9: f"{r[k]:{w}.1f}" if r else f"{'-':>{w}s}"  # noqa: E731
    for lib in libs:
        r1, r2 = res[lib, 1], res[lib, 2]
        eff = f"{r1['ms'] / r2['ms']:11.2f}" if r1 and r2 else f"{'-':>11s}"
        print(f"{lib:10s} {f(r1, 'ms')} {f(r2, 'ms')} {eff}   {f(r1, 'cpu_ms', 15)} {f(r2, 'cpu_ms', 16)}", flush=True)


if __name__ == "__main__":
    main()
