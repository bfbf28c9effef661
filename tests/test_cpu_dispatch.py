"""CPU dispatch (Note [CPU dispatch], CMakeLists.txt): a default build has one engine module per CPU capability
(_C: any x86-64, _C-avx2: x86-64-v3, _C-avx512: x86-64-v4); the loader picks the best the machine has, and
AMPGRAD_CPU_CAPABILITY asks for a lower one. Each module present is loaded in a subprocess and must compute
the same numbers (against float64 NumPy references, and against each other where the results are exact)."""
import importlib.machinery
import json
import os
import platform
import shutil
import subprocess
import sys

import numpy as np
import pytest

import ampgrad
from ampgrad import _cpuinfo

_ORDER = ["DEFAULT", "AVX2", "AVX512"]
_FILES = {"DEFAULT": "_C", "AVX2": "_C-avx2", "AVX512": "_C-avx512"}
_PKG_DIR = os.path.dirname(ampgrad.__file__)
_TREE = os.path.dirname(_PKG_DIR)


def _present():
    out = []
    for cap, stem in _FILES.items():
        if any(os.path.isfile(os.path.join(_PKG_DIR, stem + s)) for s in importlib.machinery.EXTENSION_SUFFIXES):
            out.append(cap)
    return out


def _runnable():
    machine = _ORDER.index(_cpuinfo.capability())
    return [c for c in _present() if _ORDER.index(c) <= machine]


def test_capability_in_use():
    cap = ampgrad.backends.cpu.get_cpu_capability()
    assert cap in _ORDER
    assert cap == ampgrad._C._cpu_capability()
    machine = _cpuinfo.capability()
    assert machine in _ORDER
    assert _ORDER.index(cap) <= _ORDER.index(machine)  # never a module the CPU cannot run
    if len(_present()) > 1 and not os.environ.get("AMPGRAD_CPU_CAPABILITY"):
        # a dispatch build loads the best module this machine runs
        assert cap == max(_runnable(), key=_ORDER.index)


# The panel each module computes in its own process: fixed inputs, results as lists.
_PANEL = r"""
import json, os, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import ampgrad as ag
out = {"cap": ag.backends.cpu.get_cpu_capability(), "file": os.path.basename(ag._C.__file__)}
rng = np.random.default_rng(0)
x = rng.standard_normal(4099).astype(np.float32) * 4
t = ag.from_numpy(x)
for name in ["exp", "log1p", "tanh", "sigmoid", "sin", "cos", "erf", "sqrt", "rsqrt"]:
    v = getattr(ag, name)(t.abs() if name in ("sqrt", "rsqrt", "log1p") else t)
    out[name] = v.numpy().astype(np.float64).tolist()
out["gelu"] = ag.nn.functional.gelu(t).numpy().astype(np.float64).tolist()
m = ag.from_numpy(rng.standard_normal((37, 129)).astype(np.float32))
out["softmax"] = ag.softmax(m, -1).numpy().astype(np.float64).tolist()
out["logsumexp"] = ag.logsumexp(m, 1).numpy().astype(np.float64).tolist()
out["var"] = m.var(1).numpy().astype(np.float64).tolist()
out["sum"] = m.sum().item()
a = rng.standard_normal((67, 131)).astype(np.float32)
b = rng.standard_normal((131, 45)).astype(np.float32)
out["mm"] = (ag.from_numpy(a) @ ag.from_numpy(b)).numpy().astype(np.float64).tolist()
out["mm_bf16"] = (ag.from_numpy(a).bfloat16() @ ag.from_numpy(b).bfloat16()).float().numpy().astype(np.float64).tolist()
out["to_bf16"] = t.bfloat16().float().numpy().astype(np.float64).tolist()
out["to_fp16"] = t.half().float().numpy().astype(np.float64).tolist()
w = ag.from_numpy(rng.standard_normal((16, 3, 3, 3)).astype(np.float32)).requires_grad_()
img = ag.from_numpy(rng.standard_normal((2, 3, 9, 9)).astype(np.float32))
y = ag.nn.functional.conv2d(img, w, padding=1)
y.square().mean().backward()
out["conv"] = y.detach().numpy().astype(np.float64).ravel().tolist()
out["conv_wgrad"] = w.grad.numpy().astype(np.float64).ravel().tolist()
with ag.autocast("cpu", dtype=ag.bfloat16):
    z = ag.nn.functional.linear(ag.from_numpy(a), ag.from_numpy(b.T.copy()))
out["autocast_dtype"] = str(z.dtype)
out["autocast_linear"] = z.float().numpy().astype(np.float64).tolist()
# ulp errors over a sweep (the vector math at this module's width: 16, 8 or 4 lanes; float64 references)
xs = np.linspace(-87.0, 88.0, 262147, dtype=np.float32)
xd = xs.astype(np.float64)
def ulp(got, ref):
    ref32 = ref.astype(np.float32)
    return float(np.max(np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(ref32)).astype(np.float64)))
xt = ag.from_numpy(xs)
out["ulp_exp"] = ulp(xt.exp().numpy(), np.exp(xd))
out["ulp_sin"] = ulp(xt.sin().numpy(), np.sin(xd))
out["ulp_cos"] = ulp(xt.cos().numpy(), np.cos(xd))
out["ulp_tanh"] = ulp(xt.tanh().numpy(), np.tanh(xd))
out["ulp_sigmoid"] = ulp(xt.sigmoid().numpy(), 1 / (1 + np.exp(-xd)))
out["ulp_expm1"] = ulp(xt.expm1().numpy(), np.expm1(xd))
posf = np.abs(xs) + np.float32(1e-3)
out["ulp_log"] = ulp(ag.from_numpy(posf).log().numpy(), np.log(posf.astype(np.float64)))
print(json.dumps(out))
"""


def _run_panel(cap, emulate=None):
    env = dict(os.environ, AMPGRAD_CPU_CAPABILITY=cap.lower()) if cap else dict(os.environ)
    prefix = [shutil.which("qemu-x86_64"), "-cpu", emulate] if emulate else []
    proc = subprocess.run(prefix + [os.path.realpath(sys.executable), "-c", _PANEL, _TREE], capture_output=True, text=True,
                          env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def panels():
    if len(_present()) < 2:  # one module (AMPGRAD_CPU=native or one -march): the one in use
        return {ampgrad._C._cpu_capability(): _run_panel(None)}
    return {cap: _run_panel(cap) for cap in _runnable()}


def _bf16_rne(x):
    """float32 -> bfloat16 -> float32, round to nearest even, in NumPy (NaN-free inputs)."""
    bits = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


def _check_panel(cap, out):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(4099).astype(np.float32) * 4).astype(np.float64)
    m = rng.standard_normal((37, 129)).astype(np.float32).astype(np.float64)
    a = rng.standard_normal((67, 131)).astype(np.float32).astype(np.float64)
    b = rng.standard_normal((131, 45)).astype(np.float32).astype(np.float64)
    from math import erf
    refs = {"exp": np.exp(x), "log1p": np.log1p(np.abs(x)), "tanh": np.tanh(x), "sigmoid": 1 / (1 + np.exp(-x)),
            "sin": np.sin(x), "cos": np.cos(x), "erf": np.array([erf(v) for v in x]), "sqrt": np.sqrt(np.abs(x)),
            "rsqrt": 1 / np.sqrt(np.abs(x)), "gelu": 0.5 * x * (1 + np.array([erf(v / np.sqrt(2)) for v in x]))}
    e = np.exp(m - m.max(1, keepdims=True))
    refs["softmax"] = e / e.sum(1, keepdims=True)
    refs["logsumexp"] = m.max(1) + np.log(e.sum(1))
    refs["var"] = m.var(1, ddof=1)
    refs["mm"] = a @ b
    # conv2d (padding 1) and its weight gradient under mean(y^2), direct float64 sums
    w = rng.standard_normal((16, 3, 3, 3)).astype(np.float32).astype(np.float64)
    img = rng.standard_normal((2, 3, 9, 9)).astype(np.float32).astype(np.float64)
    patches = np.lib.stride_tricks.sliding_window_view(np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), (2, 3))
    y = np.einsum("ncijkl,ockl->noij", patches, w)
    refs["conv"] = y.ravel()
    refs["conv_wgrad"] = np.einsum("noij,ncijkl->ockl", 2 * y / y.size, patches).ravel()
    assert out["cap"] == cap
    assert out["file"].startswith((_FILES[cap] if len(_present()) > 1 else "_C") + ".")
    for name, ref in refs.items():
        got = np.array(out[name])
        # float32 results: a few ulps of the float64 reference (sums: relative to the summands' size)
        # (gelu's tail, 1 + erf(x/sqrt 2) near x = -5, cancels in float32 as torch's does: absolute there)
        tol = 2e-6 if name not in ("mm", "var", "logsumexp", "conv", "conv_wgrad") else 1e-5
        atol = {"mm": tol * np.abs(ref).max(), "conv": tol * np.abs(ref).max(), "conv_wgrad": tol * np.abs(ref).max(),
                "gelu": 1e-6}.get(name, tol * 1e-3)
        np.testing.assert_allclose(got, ref, rtol=tol, atol=atol, err_msg=f"{cap} {name}")
    assert abs(out["sum"] - m.sum()) <= 1e-5 * np.abs(m).sum()
    # the documented bounds of Note [Vector math] (kernels/cpu/vec_math.h), at every vector width
    for name, bound in {"exp": 1, "sin": 1, "cos": 1, "tanh": 3, "sigmoid": 3, "expm1": 1.5, "log": 1}.items():
        assert out["ulp_" + name] <= bound, (cap, name, out["ulp_" + name])
    # conversions are exact and identical everywhere
    np.testing.assert_array_equal(np.array(out["to_bf16"]), _bf16_rne(x.astype(np.float32)), err_msg=cap)
    np.testing.assert_array_equal(np.array(out["to_fp16"]), x.astype(np.float16).astype(np.float64), err_msg=cap)
    # bf16 GEMM: bf16 inputs, float32 accumulation, one rounding to bf16
    ab = _bf16_rne(a.astype(np.float32)) @ _bf16_rne(b.astype(np.float32))
    got = np.array(out["mm_bf16"])
    assert np.all(np.abs(got - ab) <= 2 ** -7 * np.abs(ab) + 1e-3), cap
    assert out["autocast_dtype"] == "ampgrad.bfloat16"
    assert np.all(np.abs(np.array(out["autocast_linear"]) - ab) <= 2 ** -7 * np.abs(ab) + 1e-3), cap


def test_each_module_loads_and_computes(panels):
    for cap, out in panels.items():
        _check_panel(cap, out)


# Older CPUs, emulated by qemu-user (apt-get install qemu-user): the module a wheel built here would load on
# them must run there. (A -march=native build dies of SIGILL on the first of these.)
@pytest.mark.skipif(shutil.which("qemu-x86_64") is None or platform.machine() != "x86_64",
                    reason="needs qemu-user on x86-64")
# (Nehalem, 2008: SSE4.2 and no AVX, the oldest CPU NumPy 2 runs on; Haswell, 2013: AVX2 and FMA, no AVX-512)
@pytest.mark.parametrize("cpu,cap", [("Nehalem", "DEFAULT"), ("Haswell", "AVX2")])
def test_runs_on_an_older_cpu(cpu, cap):
    if len(_present()) < 2:
        pytest.skip("one engine module built for this machine (AMPGRAD_CPU=native or one -march)")
    if cap not in _present():
        pytest.skip(f"no {cap} module in this build")
    out = _run_panel(None, emulate=cpu)
    _check_panel(cap, out)


def test_modules_agree(panels):
    if len(panels) < 2:
        pytest.skip("one engine module in this build (AMPGRAD_CPU=native or one -march)")
    caps = sorted(panels, key=_ORDER.index)
    base = panels[caps[0]]
    for cap in caps[1:]:
        for name in ["exp", "tanh", "sin", "softmax", "mm", "conv", "conv_wgrad", "mm_bf16"]:
            np.testing.assert_allclose(np.array(panels[cap][name]), np.array(base[name]), rtol=1e-5, atol=1e-5,
                                       err_msg=f"{cap} vs {caps[0]}: {name}")


def test_bad_capability_value_warns():
    code = ("import sys, warnings; sys.path.insert(0, sys.argv[1]); warnings.simplefilter('always')\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    import ampgrad\n"
            "print(ampgrad.backends.cpu.get_cpu_capability(), [str(x.message) for x in w])")
    env = dict(os.environ, AMPGRAD_CPU_CAPABILITY="sse9")
    proc = subprocess.run([sys.executable, "-c", code, _TREE], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    if len(_present()) > 1:
        assert "AMPGRAD_CPU_CAPABILITY='sse9'" in proc.stdout
        assert proc.stdout.split()[0] == max(_runnable(), key=_ORDER.index)


def test_capability_is_capped_at_the_machine():
    if len(_present()) < 2:
        pytest.skip("one engine module in this build")
    # asking for more than the machine has gives the machine's best (never a module that would fault)
    out = _run_panel("AVX512")
    assert out["cap"] == max(_runnable(), key=_ORDER.index)


def test_import_leaves_the_openmp_wait_policy_to_libgomp():
    # Note [OpenMP wake-ups]: a PASSIVE default made every parallel region pay a futex wake-up (2 threads
    # ran small GEMMs 2x slower than 1); ampgrad sets neither variable, and keeps the user's.
    code = "import os, ampgrad; print(os.environ.get('OMP_WAIT_POLICY'), os.environ.get('GOMP_SPINCOUNT'))"
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["None", "None"]
    env["OMP_WAIT_POLICY"] = "PASSIVE"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["PASSIVE", "None"]
