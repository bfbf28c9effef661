"""Layering of the C++ sources (issue 11, "Files by concern"): scans csrc/** and kernels/** for
`#include "..."` lines and CUDA preprocessor tests, and checks who may include whom.

    core/      the tensor, storage, dtypes, promotion: includes nothing from autograd/, ops/, amp/
               or bindings/ (autograd hooks into it: Note [Autograd meta], Note [Allocation hook])
    kernels/   compute only: nothing from autograd/ or ops/ except the Op list (ops/op_list.h, .def);
               the profiler is reached through kernels/profiler_hooks.h (Note [Profiled kernels])
    autograd/  headers include no ops/ header except the Op list (its .cpp files may use ops)

and CUDA: the build switch AMPGRAD_WITH_CUDA is tested only by the CUDA backend (kernels/cuda/**),
the stub (kernels/cuda_stub.cpp) and the bindings; the compiler macros __CUDACC__ / __CUDA_ARCH__
only by code that nvcc compiles (kernels/cuda/**, and the host/device headers in kernels/common/).
"""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".def", ".inc"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# The Op enum (and the X-macro list it is generated from) is the one thing below ops/ that others need.
OP_LIST = {"ops/op_list.h", "ops/op_list.def"}
CUDA_SWITCH = re.compile(r"^\s*#\s*(?:if|ifdef|ifndef|elif)\b.*\bAMPGRAD_WITH_CUDA\b", re.M)
CUDA_COMPILER = re.compile(r"^\s*#\s*(?:if|ifdef|ifndef|elif)\b.*\b__CUDA(?:CC|_ARCH)__\b", re.M)


def sources():
    for top in ("csrc", "kernels"):
        for p in sorted((ROOT / top).rglob("*")):
            if p.is_file() and p.suffix in SOURCE_SUFFIXES:
                yield p.relative_to(ROOT).as_posix(), p.read_text(encoding="utf-8", errors="replace")


def includes():
    for path, text in sources():
        for m in INCLUDE.finditer(text):
            inc = m.group(1)
            # csrc/ is an include root: "autograd/node.h" is csrc/autograd/node.h.
            yield path, inc, text[: m.start()].count("\n") + 1


def violations(rule):
    return [f"{path}:{line}: #include \"{inc}\"" for path, inc, line in includes() if rule(path, inc)]


def test_sources_found():
    files = dict(sources())
    assert "csrc/core/tensor.h" in files and "kernels/kernels.h" in files
    assert sum(1 for _ in includes()) > 100


def test_core_includes_no_upper_layer():
    bad = violations(lambda path, inc: path.startswith("csrc/core/") and inc.split("/")[0] in
                     {"autograd", "ops", "amp", "bindings"})
    assert not bad, "csrc/core must not include autograd/, ops/, amp/ or bindings/:\n" + "\n".join(bad)


def test_kernels_include_no_autograd_or_ops():
    bad = violations(lambda path, inc: path.startswith("kernels/") and inc.split("/")[0] in {"autograd", "ops", "amp", "bindings"}
                     and inc not in OP_LIST)
    assert not bad, "kernels/ may include only the op list (ops/op_list.h, .def) from the layers above:\n" + "\n".join(bad)


def test_autograd_headers_include_no_ops():
    bad = violations(lambda path, inc: path.startswith("csrc/autograd/") and not path.endswith((".cpp", ".cu"))
                     and inc.startswith("ops/") and inc not in OP_LIST)
    assert not bad, "headers under csrc/autograd must not include ops/ headers (ops/op_list.h aside):\n" + "\n".join(bad)


def _cuda_build_switch_allowed(path):
    return path.startswith(("kernels/cuda/", "csrc/bindings/")) or path == "kernels/cuda_stub.cpp" or \
        pathlib.PurePosixPath(path).stem.startswith("registration")


def test_cuda_ifdefs_only_in_backend_stub_and_bindings():
    bad = []
    for path, text in sources():
        for m in CUDA_SWITCH.finditer(text):
            if not _cuda_build_switch_allowed(path):
                bad.append(f"{path}:{text[: m.start()].count(chr(10)) + 1}: {m.group(0).strip()}")
        for m in CUDA_COMPILER.finditer(text):
            if not path.startswith(("kernels/cuda/", "kernels/common/")):
                bad.append(f"{path}:{text[: m.start()].count(chr(10)) + 1}: {m.group(0).strip()}")
    assert not bad, ("CUDA #ifdefs belong in kernels/cuda, kernels/cuda_stub.cpp, registration and the bindings "
                     "(__CUDACC__ / __CUDA_ARCH__ also in kernels/common's host/device headers):\n" + "\n".join(bad))


@pytest.mark.parametrize("pattern, ok", [
    ('#include "autograd/node.h"', False), ('#include "ops/ops.h"', False),
    ('#include "ops/op_list.h"', True), ('#include "core/tensor.h"', True),
])
def test_include_scanner(pattern, ok):
    # The scanner itself: what a kernels/ file may include.
    m = INCLUDE.search(pattern)
    inc = m.group(1)
    assert (inc.split("/")[0] not in {"autograd", "ops"} or inc in OP_LIST) == ok
