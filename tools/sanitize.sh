#!/usr/bin/env bash
# ASan + UBSan build of ampgrad._C and the test suite run against it (tools/SANITIZERS.md).
#   tools/sanitize.sh                    build/sanitize, then pytest tests -q
#   tools/sanitize.sh tests/test_ops.py -x -q    other pytest arguments
#   AMPGRAD_SANITIZE=address,undefined,float-cast-overflow tools/sanitize.sh   other -fsanitize= lists
#   AMPGRAD_SANITIZE_BUILD=build/san2   another build directory
#   tools/sanitize.sh --stress [N] [SEED]    tools/asan_stress.py instead of the tests
# The module goes to <build>/python/ampgrad next to links to python/ampgrad's sources, and the tests
# import it from there (AMPGRAD_TEST_TREE, tests/conftest.py): the normal build is not touched.
set -euo pipefail
cd "$(dirname "$0")/.."
san=${AMPGRAD_SANITIZE:-address,undefined}
bdir=${AMPGRAD_SANITIZE_BUILD:-build/sanitize}
tree="$PWD/$bdir/python"
py=$(python -c 'import sys; print(sys.executable)')  # not a pyenv shim: the preload is for Python

launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B "$bdir" -G Ninja -DAMPGRAD_CUDA=OFF -DAMPGRAD_CPU=native -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DAMPGRAD_SANITIZE="$san" -DAMPGRAD_MODULE_DIR="$tree/ampgrad" -DPython_EXECUTABLE="$py" >/dev/null
cmake --build "$bdir" -j"${AMPGRAD_SANITIZE_JOBS:-2}"

# The package's Python sources, linked (not copied) beside the sanitized _C.
mkdir -p "$tree/ampgrad"
find "$tree/ampgrad" -maxdepth 1 -type l -delete
for f in python/ampgrad/*; do
  case "$(basename "$f")" in _C*.so|_cpuinfo*.so|__pycache__) continue ;; esac
  ln -s "$PWD/$f" "$tree/ampgrad/"
done

# Python is not instrumented, so the runtime must be loaded first; leaks off (CPython and pybind11
# keep objects alive until exit by design); a huge allocation fails as an error (the tests expect
# one) instead of a report; UBSan findings abort with a stack.
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$bdir/CMakeCache.txt")
preload=""
case ",$san," in *,address,*) preload=$("${cxx:-g++}" -print-file-name=libasan.so) ;; esac
case ",$san," in *,undefined,*) [ -n "$preload" ] || preload=$("${cxx:-g++}" -print-file-name=libubsan.so) ;; esac
# libstdc++ too: Python does not link it, and ASan resolves the real __cxa_throw when it starts
# (else the first C++ exception stops with "CHECK failed: ... real___cxa_throw").
preload="$preload:$("${cxx:-g++}" -print-file-name=libstdc++.so)"
export LD_PRELOAD="$preload${LD_PRELOAD:+:$LD_PRELOAD}"
export ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0:allocator_may_return_null=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export AMPGRAD_TEST_TREE="$tree" PYTHONPATH="$tree${PYTHONPATH:+:$PYTHONPATH}"

"$py" -c "import sys, ampgrad._C as c; sys.exit(0 if c.__file__.startswith(sys.argv[1]) else 'imported ' + c.__file__)" "$tree"
if [ "${1:-}" = "--stress" ]; then shift; exec "$py" tools/asan_stress.py "$@"; fi
if [ $# -eq 0 ]; then set -- tests -q; fi
# --capture=sys: pytest's default capture of fd 2 would swallow a report that stops the process.
exec "$py" -m pytest --capture=sys "$@"
