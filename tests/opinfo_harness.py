"""Runs torch's own OpInfo database (op_db) against ampgrad as a user would (`import ampgrad as torch`).

Shared by tests/test_opinfo.py (one pytest item per OpInfo x dtype) and tools/opinfo_coverage.py.
An OpInfo *resolves* when ampgrad has its name (ampgrad.<name>, ampgrad.nn.functional.<name>,
ampgrad.linalg.<name>, ...) or, for method-only ops, ampgrad.Tensor.<name>. Samples are converted
torch -> numpy -> ampgrad; values are compared with per-dtype tolerances and, for OpInfos that
support autograd, the gradients of a fixed random cotangent in float32/float64."""
import functools
import sys
import types
import unittest
import warnings

import numpy as np

try:
    import torch
except ImportError:  # the harness is inert without torch (tests skip)
    torch = None

import ampgrad

MAX_SAMPLES = 8  # per OpInfo and dtype: keeps the sweep in CI's budget
DTYPE_NAMES = ("float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool")
GRAD_DTYPES = ("float32", "float64")
# (rtol, atol) for values; atol is scaled by max(1, max|expected|) so sums that cancel do not fail on
# rounding. float32: ampgrad's kernels differ from torch's in summation order and vector math.
VALUE_TOL = {"float64": (1e-7, 1e-7), "float32": (1e-5, 1e-5), "bfloat16": (1.6e-2, 1e-5)}
GRAD_TOL = {"float64": (1e-6, 1e-6), "float32": (1e-4, 1e-4)}


class SampleSkip(Exception):
    """A sample that needs something out of scope (complex, sparse, channels_last, a generator)."""


def load_op_db():
    """torch's op_db; common_utils imports expecttest, which the torch wheel does not require."""
    if torch is None:
        return []
    if "expecttest" not in sys.modules:
        try:
            import expecttest  # noqa: F401
        except ImportError:
            stub = types.ModuleType("expecttest")
            stub.TestCase = unittest.TestCase
            stub.ACCEPT = False
            sys.modules["expecttest"] = stub
    from torch.testing._internal.common_methods_invocations import op_db
    return list(op_db)


def op_id(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def family(op):
    n = op.name
    if "." in n:
        return n.rsplit(".", 1)[0]
    return "method" if n.startswith("_") else "torch"


# ------------------------------------------------------------------------------------ resolution
# OpInfos named after a distribution whose op is the in-place Tensor method (torch has no torch.<name>)
_INPLACE_METHOD_OPS = {"uniform": "uniform_", "exponential": "exponential_", "cauchy": "cauchy_",
                       "geometric": "geometric_", "log_normal": "log_normal_"}


def resolve(op):
    """The ampgrad object an OpInfo names, or None (the op is 'missing')."""
    if op.name in _INPLACE_METHOD_OPS:
        return getattr(ampgrad.Tensor, _INPLACE_METHOD_OPS[op.name], None)
    if type(op.op).__module__ == "torch._ops" and not hasattr(torch, op.name) and \
            (getattr(op.op, "namespace", None) == "aten" or getattr(op.op, "_qualified_op_name", "").startswith("aten::")):
        # an aten-only op: torch.ops.aten.<name>
        return getattr(ampgrad.ops.aten, op.op.__name__.split(".")[0], None)
    if op.name == "max_pool2d_with_indices_backward":  # a test-module function calling torch.ops.aten.<name>
        return getattr(ampgrad.ops.aten, op.name, None)
    parts = op.name.split(".")
    if op.name.startswith("__"):
        return getattr(ampgrad.Tensor, op.name, None)
    if len(parts) > 1:
        mod = ampgrad
        for p in parts[:-1]:
            mod = getattr(mod, p, None)
            if mod is None or not isinstance(mod, types.ModuleType):
                return None
        obj = getattr(mod, parts[-1], None)
        return obj if callable(obj) else None
    obj = getattr(ampgrad, op.name, None)
    if callable(obj) and not isinstance(obj, type) and not isinstance(obj, ampgrad.dtype):
        return obj
    meth = getattr(ampgrad.Tensor, op.name, None)  # method-only (x.contiguous(), x.T, x.bfloat16())
    return meth


_AG_DTYPES = {}


def ag_dtype(td):
    name = str(td).split(".")[-1]
    if td.is_complex or name in ("complex32", "chalf"):
        raise SampleSkip("complex dtype")
    d = getattr(ampgrad, name, None)
    if d is None:
        raise SampleSkip(f"dtype {name} not in ampgrad")
    return d


def dtype_name(d):
    return str(d).split(".")[-1]


# ---------------------------------------------------------------------- torch -> ampgrad mapping
@functools.lru_cache(maxsize=None)
def _torch_object_index():
    """id(torch callable) -> (module path, name) for torch's public namespaces."""
    index = {}
    for path in ("", "nn.functional", "linalg", "special", "fft"):
        mod = torch
        for p in filter(None, path.split(".")):
            mod = getattr(mod, p)
        for n in dir(mod):
            if not n.startswith("__"):
                index.setdefault(id(getattr(mod, n)), (path, n))
    return index


def _ag_module(mod):
    """ampgrad's module for a torch module (torch.nn.functional -> ampgrad.nn.functional)."""
    name = mod.__name__
    if name == "torch":
        return ampgrad
    if not name.startswith("torch."):
        return mod
    target = ampgrad
    for p in name.split(".")[1:]:
        nxt = getattr(target, p, None)
        if nxt is None:
            return _Missing(name)
        target = nxt
    return target


class _Missing:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, attr):
        raise AttributeError(f"ampgrad has no {self._name.replace('torch', 'ampgrad', 1)}.{attr}")


def _map_value(v, depth):
    if torch is None:
        return v
    if isinstance(v, types.ModuleType):
        return _ag_module(v)
    if v is torch.Tensor:
        return ampgrad.Tensor
    if isinstance(v, types.FunctionType) and (v.__module__ or "").startswith("torch.testing") and depth < 3:
        if v.__name__ == "wrapper_set_seed":
            return _ag_wrapper_set_seed
        return rebind(v, depth + 1)
    if callable(v) and not isinstance(v, type):
        hit = _torch_object_index().get(id(v))
        if hit is not None:
            mod = ampgrad
            for p in filter(None, hit[0].split(".")):
                mod = getattr(mod, p, None)
                if mod is None:
                    return v
            return getattr(mod, hit[1], v)
    if isinstance(v, torch.dtype):
        return ag_dtype(v)
    return v


def _ag_wrapper_set_seed(op, *args, **kwargs):
    ampgrad.manual_seed(42)
    return op(*args, **kwargs)


def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return names


_rebound = {}


def rebind(f, depth=0):
    """A copy of a test-module lambda whose globals and closure name ampgrad instead of torch."""
    if f in _rebound:
        return _rebound[f]
    g = {"__builtins__": f.__globals__.get("__builtins__", __builtins__)}
    _rebound[f] = None  # recursion guard
    for n in _code_names(f.__code__):
        if n in f.__globals__:
            try:
                g[n] = _map_value(f.__globals__[n], depth)
            except SampleSkip:
                g[n] = f.__globals__[n]
    closure = None
    if f.__closure__:
        cells = []
        for c in f.__closure__:
            try:
                cells.append(types.CellType(_map_value(c.cell_contents, depth)))
            except (ValueError, SampleSkip):
                cells.append(c)
        closure = tuple(cells)
    new = types.FunctionType(f.__code__, g, f.__name__, f.__defaults__, closure)
    new.__kwdefaults__ = f.__kwdefaults__
    _rebound[f] = new
    return new


def ag_callable(op, resolved):
    """What to call with the converted sample: torch builtins map to the resolved ampgrad object,
    the test module's lambdas are rebound (their torch.* names become ampgrad.*)."""
    f = op.op
    if type(resolved).__name__ == "_AtenPacket" and type(f).__module__ == "torch._ops":  # ampgrad.ops.aten.<name>
        return resolved
    if isinstance(f, types.FunctionType) and (f.__module__ or "").startswith("torch.testing"):
        return rebind(f)
    if op.name.startswith("__") or "." not in op.name and not callable(getattr(ampgrad, op.name, None)) \
            or isinstance(getattr(ampgrad, op.name, None), ampgrad.dtype):
        name = op.name

        def method(self, *args, **kwargs):  # method-only op: x.contiguous(), x.__rsub__(y)
            return getattr(self, name)(*args, **kwargs)
        return method
    return resolved


# -------------------------------------------------------------------------------- conversion
# The device ampgrad runs the samples on (test_opinfo's device axis): torch's CPU results stay the
# oracle; ampgrad's inputs are moved there and its outputs read back.
DEVICE = "cpu"


def set_device(device):
    global DEVICE
    DEVICE = device


def _to_device(t):
    return t if DEVICE == "cpu" else t.to(DEVICE)


def to_ag(obj, memo):
    if isinstance(obj, torch.Tensor):
        if id(obj) in memo:
            return memo[id(obj)]
        if obj.layout != torch.strided:
            raise SampleSkip("sparse layout")
        if obj.is_complex():
            raise SampleSkip("complex dtype")
        if obj.device.type != "cpu":
            raise SampleSkip("non-CPU device")
        d = ag_dtype(obj.dtype)
        t = obj.detach()
        n_storage = t.untyped_storage().nbytes() // max(t.element_size(), 1)
        if t.numel() and (t.storage_offset() != 0 or n_storage != t.numel()):
            # A view into a larger buffer (as_strided reads beyond it): rebuild the whole buffer and take
            # the same view of it, so storage_offset and the elements outside the view carry over.
            base = to_ag(torch.as_strided(t, (n_storage,), (1,), 0).clone(), {}).detach()
            out = ampgrad.as_strided(base, tuple(t.shape), tuple(t.stride()), t.storage_offset()).detach()
            if obj.requires_grad:
                out.requires_grad_(True)
            memo[id(obj)] = out
            return out
        if t.dtype in (torch.bfloat16, torch.float16):
            out = ampgrad.tensor(t.float().numpy().copy()).to(d)
        else:
            out = ampgrad.tensor(t.numpy().copy())
            if out.dtype != d:
                out = out.to(d)
        out = _to_device(out)
        if obj.requires_grad:
            out.requires_grad_(True)
        memo[id(obj)] = out
        return out
    if isinstance(obj, torch.dtype):
        return ag_dtype(obj)
    if isinstance(obj, torch.Size):
        return tuple(obj)
    if isinstance(obj, torch.device):
        if obj.type != "cpu":
            raise SampleSkip("non-CPU device")
        return ampgrad.device(DEVICE)
    if isinstance(obj, torch.memory_format):
        if obj in (torch.contiguous_format, torch.preserve_format):
            name = str(obj).split(".")[-1]
            if hasattr(ampgrad, name):
                return getattr(ampgrad, name)
            raise SampleSkip(f"memory_format {name} not in ampgrad")
        raise SampleSkip("channels_last")
    if isinstance(obj, torch.layout):
        raise SampleSkip("layout argument")
    if isinstance(obj, torch.Generator):
        raise SampleSkip("torch.Generator argument")
    if isinstance(obj, complex):
        raise SampleSkip("complex scalar")
    if isinstance(obj, list):
        return [to_ag(o, memo) for o in obj]
    if isinstance(obj, tuple):
        vals = [to_ag(o, memo) for o in obj]
        return type(obj)(*vals) if hasattr(obj, "_fields") else tuple(vals)
    if isinstance(obj, dict):
        return {k: to_ag(v, memo) for k, v in obj.items()}
    if isinstance(obj, (torch.nn.Module,)) or (callable(obj) and not isinstance(obj, type)):
        raise SampleSkip("callable argument")
    return obj


def flatten(obj, out):
    if isinstance(obj, (list, tuple)) and not isinstance(obj, (torch.Size, ampgrad.Size)):
        for o in obj:
            flatten(o, out)
    else:
        out.append(obj)
    return out


def ag_numpy(t):
    if t.device.type != "cpu":
        t = t.detach().cpu()
    if t.dtype in (ampgrad.bfloat16, ampgrad.float16):
        return t.detach().float().numpy()
    return t.detach().numpy()


def torch_numpy(t):
    t = t.detach()
    if t._is_zerotensor():  # torch's efficient zero gradients
        return np.zeros(tuple(t.shape), dtype=torch.empty(0, dtype=t.dtype).float().numpy().dtype
                        if t.dtype in (torch.bfloat16, torch.float16) else torch.empty(0, dtype=t.dtype).numpy().dtype)
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.float().numpy()
    return t.resolve_conj().resolve_neg().numpy()


def _close(expected, actual, rtol, atol, what):
    if expected.shape != actual.shape:
        return f"{what}: shape {actual.shape} != torch {expected.shape}"
    if expected.dtype.kind in "biu" and actual.dtype.kind in "biu":
        if not np.array_equal(expected, actual):
            bad = np.argwhere(expected != actual)[0]
            return f"{what}: at {tuple(bad)} {actual[tuple(bad)]} != torch {expected[tuple(bad)]}"
        return None
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    finite = np.isfinite(e)
    scale = max(1.0, float(np.max(np.abs(e[finite]))) if finite.any() else 1.0)
    ok = np.isclose(a, e, rtol=rtol, atol=atol * scale, equal_nan=True)
    if not ok.all():
        idx = tuple(np.argwhere(~ok)[0])
        return f"{what}: at {idx} {a[idx]!r} != torch {e[idx]!r} ({int((~ok).sum())} of {ok.size} differ)"
    return None


def compare(expected, actual, dname, what, tol):
    """None when equal, else a message. expected from torch, actual from ampgrad."""
    rtol, atol = tol.get(dname, (1e-5, 1e-5))
    if isinstance(expected, torch.Tensor) and expected.layout == torch.sparse_coo:
        # a COO result (Note [Sparse COO]): the same pattern and values once coalesced
        if not isinstance(actual, ampgrad.sparse.SparseCooTensor):
            return f"{what}: got {type(actual).__name__}, torch gives a sparse COO tensor"
        e, a = expected.coalesce(), actual.coalesce()
        return (compare(e._indices(), a._indices(), dname, what + " indices", tol)
                or compare(e._values(), a._values(), dname, what + " values", tol))
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, ampgrad.Tensor):
            return f"{what}: got {type(actual).__name__}, torch gives a Tensor"
        if dtype_name(actual.dtype) != dtype_name(expected.dtype):
            return f"{what}: dtype {dtype_name(actual.dtype)} != torch {dtype_name(expected.dtype)}"
        if tuple(actual.shape) != tuple(expected.shape):
            return f"{what}: shape {tuple(actual.shape)} != torch {tuple(expected.shape)}"
        rt, at = tol.get(dtype_name(expected.dtype), (rtol, atol))
        return _close(torch_numpy(expected), ag_numpy(actual), rt, at, what)
    if isinstance(expected, torch.Size):
        return None if tuple(actual) == tuple(expected) else f"{what}: {tuple(actual)} != torch {tuple(expected)}"
    if isinstance(expected, torch.dtype):
        return None if dtype_name(actual) == dtype_name(expected) else f"{what}: {actual} != torch {expected}"
    if isinstance(expected, (bool, int, float)) and not isinstance(expected, type):
        if isinstance(actual, ampgrad.Tensor):
            return f"{what}: got a Tensor, torch gives {type(expected).__name__}"
        if isinstance(expected, float) or isinstance(actual, float):
            return _close(np.array(expected), np.array(actual, dtype=np.float64), rtol, atol, what)
        return None if actual == expected else f"{what}: {actual!r} != torch {expected!r}"
    if expected is None:
        return None if actual is None else f"{what}: got {type(actual).__name__}, torch gives None"
    return None


# ----------------------------------------------------------------------------------- running
def _leaves(obj, out):
    if isinstance(obj, torch.Tensor):
        if obj.requires_grad and obj.is_leaf and obj.is_floating_point() and all(o is not obj for o in out):
            out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _leaves(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _leaves(o, out)
    return out


def samples_for(op, tdtype, requires_grad):
    try:
        it = op.sample_inputs("cpu", tdtype, requires_grad=requires_grad)
    except Exception as e:  # noqa: BLE001 - torch's own generator failing is not ampgrad's problem
        raise SampleSkip(f"torch cannot build samples: {type(e).__name__}")
    out = []
    for s in it:
        out.append(s)
        if len(out) >= MAX_SAMPLES:
            break
    return out


# Ops whose int64 outputs are indices into ties when the input has repeated values: torch does not
# define which of the tied indices is returned (unstable sort), so those outputs are compared only
# when the input has no repeated values (the values output is always compared).
# Outputs unique only up to the sign of each column (torch's docs: "eigenvectors ... are unique only up to
# sign"): op name -> output index. ampgrad's column is flipped to torch's (the sign of their dot product)
# before comparing, so the values, not LAPACK's arbitrary sign choice, are checked.
SIGN_AMBIGUOUS_COLUMNS = {"linalg.eigh": 1}

TIE_INDEX_OPS = {"sort", "argsort", "topk", "kthvalue", "mode", "median", "nanmedian", "msort", "cummax",
                 "cummin", "max", "min"}


def _has_ties(t):
    if not isinstance(t, torch.Tensor) or t.numel() < 2:
        return False
    a = torch_numpy(t).ravel()
    return np.unique(a).size < a.size


def _bf16_to_f32(obj):
    """A sample with its bfloat16 tensors and dtype arguments in float32: torch's op in opmath."""
    if isinstance(obj, torch.Tensor):
        return obj.detach().float() if obj.dtype == torch.bfloat16 else obj
    if obj is torch.bfloat16:
        return torch.float32
    if isinstance(obj, list):
        return [_bf16_to_f32(o) for o in obj]
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return tuple(_bf16_to_f32(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _bf16_to_f32(v) for k, v in obj.items()}
    return obj


def _bf16_opmath_agrees(op, sample, act_flat):
    """Whether ampgrad's bfloat16 result equals torch's computed in float32 and rounded once (the
    opmath rule ampgrad follows; torch's CPU kernels round some intermediates to bfloat16)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)
            ref = op(_bf16_to_f32(sample.input), *_bf16_to_f32(tuple(sample.args)), **_bf16_to_f32(dict(sample.kwargs)))
    except Exception:  # noqa: BLE001
        return False
    ref_flat = [r.to(torch.bfloat16) if isinstance(r, torch.Tensor) and r.dtype == torch.float32 else r
                for r in flatten(ref, [])]
    if len(ref_flat) != len(act_flat):
        return False
    return all(compare(e, a, "bfloat16", "", VALUE_TOL) is None for e, a in zip(ref_flat, act_flat))


def run_sample(op, fn, sample, dname, check_grad, undefined_values=False):
    """None when ampgrad agrees with torch, raises SampleSkip, else returns a failure message.
    undefined_values: the op's values are unspecified (torch.empty): only types and shapes count."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _run_sample(op, fn, sample, dname, check_grad, undefined_values)


def _run_sample(op, fn, sample, dname, check_grad, undefined_values):
    memo = {}
    ag_in = to_ag(sample.input, memo)
    ag_args = to_ag(tuple(sample.args), memo)
    ag_kwargs = to_ag(dict(sample.kwargs), memo)
    t_leaves = _leaves([sample.input, list(sample.args), sample.kwargs], [])
    ag_leaves = [memo[id(t)] for t in t_leaves]
    torch.manual_seed(0)
    try:
        expected = op(sample.input, *sample.args, **sample.kwargs)
    except Exception as e:  # noqa: BLE001
        raise SampleSkip(f"torch raises {type(e).__name__}")
    ampgrad.manual_seed(0)
    try:
        actual = fn(ag_in, *ag_args, **ag_kwargs)
    except SampleSkip:
        raise
    except Exception as e:  # noqa: BLE001
        return f"ampgrad raises {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    exp_flat = flatten(expected, [])
    act_flat = flatten(actual, [])
    if len(exp_flat) != len(act_flat):
        return f"{len(act_flat)} outputs, torch gives {len(exp_flat)}"
    ties = op.name in TIE_INDEX_OPS and _has_ties(sample.input) and not sample.kwargs.get("stable", False)
    for i, (e, a) in enumerate(zip(exp_flat, act_flat)):
        if undefined_values and isinstance(e, torch.Tensor) and isinstance(a, ampgrad.Tensor):
            e = torch.zeros_like(e)
            a = ampgrad.zeros(tuple(a.shape), dtype=a.dtype)
        if ties and isinstance(e, torch.Tensor) and e.dtype == torch.int64 and isinstance(a, ampgrad.Tensor) \
                and a.dtype == ampgrad.int64 and tuple(a.shape) == tuple(e.shape):
            continue
        if SIGN_AMBIGUOUS_COLUMNS.get(op.name) == i and isinstance(a, ampgrad.Tensor) and isinstance(e, torch.Tensor) \
                and tuple(a.shape) == tuple(e.shape) and a.dim() >= 2:
            dots = (torch_numpy(e).astype(np.float64) * ag_numpy(a).astype(np.float64)).sum(-2, keepdims=True)
            a = a * ampgrad.tensor(np.where(dots < 0, -1.0, 1.0)).to(a.dtype)
        msg = compare(e, a, dname, f"output {i}", VALUE_TOL)
        if msg and dname == "bfloat16" and _bf16_opmath_agrees(op, sample, act_flat):
            break
        if msg:
            return msg
    if undefined_values:
        return None
    if not (check_grad and t_leaves):
        return None
    t_out = flatten(sample.output_process_fn_grad(expected), [])
    try:
        a_out = flatten(sample.output_process_fn_grad(actual), [])
    except Exception as e:  # noqa: BLE001
        return f"output_process_fn_grad on ampgrad's output raises {type(e).__name__}: {e}"
    pairs = [(t, a) for t, a in zip(t_out, a_out)
             if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]
    if not pairs:
        return None
    gen = torch.Generator().manual_seed(1234)
    cots = [torch.randn(t.shape, generator=gen, dtype=torch.float64).to(t.dtype) for t, _ in pairs]
    for i, (t, a) in enumerate(pairs):
        if not isinstance(a, ampgrad.Tensor) or not a.requires_grad:
            return f"grad output {i}: ampgrad's output does not require grad (torch's grad_fn {t.grad_fn.name()})"
    try:
        t_grads = torch.autograd.grad([t for t, _ in pairs], t_leaves, cots, allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return None if "does not require grad" in str(e) else None
    try:
        a_grads = ampgrad.autograd.grad([a for _, a in pairs], ag_leaves, [to_ag(c, {}) for c in cots],
                                        allow_unused=True)
    except Exception as e:  # noqa: BLE001
        return f"ampgrad.autograd.grad raises {type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
    for i, (tg, ag) in enumerate(zip(t_grads, a_grads)):
        if tg is None and ag is None:
            continue
        if tg is None:
            tg = torch.zeros_like(t_leaves[i])
        if ag is None:
            ag = ampgrad.zeros(tuple(tg.shape), dtype=ag_dtype(tg.dtype))
        msg = compare(tg, ag, dname, f"grad of input {i}", GRAD_TOL)
        if msg:
            return msg
    return None


def run_op_dtype(op, dname, fn=None, undefined_values=False):
    """(status, message): status in pass / fail / skip. Fails on the first sample that differs."""
    if fn is None:
        fn = ag_callable(op, resolve(op))
    tdtype = getattr(torch, dname)
    check_grad = op.supports_autograd and dname in GRAD_DTYPES
    try:
        samples = samples_for(op, tdtype, requires_grad=check_grad)
    except SampleSkip as e:
        return "skip", str(e)
    ran, skipped = 0, []
    for k, s in enumerate(samples):
        try:
            msg = run_sample(op, fn, s, dname, check_grad, undefined_values)
        except SampleSkip as e:
            skipped.append(str(e))
            continue
        except Exception as e:  # noqa: BLE001 - conversion trouble is a harness failure, say so
            return "fail", f"sample {k}: harness error {type(e).__name__}: {e}"
        if msg:
            return "fail", f"sample {k} ({_describe(s)}): {msg}"
        ran += 1
    if ran == 0:
        return "skip", "no sample runs: " + (", ".join(sorted(set(skipped))) or "no samples")
    return "pass", f"{ran} samples"


def _describe(s):
    def d(o):
        if isinstance(o, torch.Tensor):
            return f"T{list(o.shape)}"
        if isinstance(o, (list, tuple)):
            return "[" + ",".join(d(x) for x in o) + "]"
        return repr(o)[:40]
    parts = [d(s.input)] + [d(a) for a in s.args] + [f"{k}={d(v)}" for k, v in s.kwargs.items()]
    return ", ".join(parts)


def op_dtypes(op):
    """The dtypes the harness runs for an OpInfo: those of DTYPE_NAMES torch supports on CPU."""
    try:
        sup = op.supported_dtypes("cpu")
    except Exception:  # noqa: BLE001
        sup = op.dtypes
    return [n for n in DTYPE_NAMES if getattr(torch, n) in sup]


# ------------------------------------------------------------------------------ whole-database view
def expected_failure(skips, oid, dname):
    """The skip-list reason for this OpInfo and dtype, or None."""
    entry = skips.XFAIL.get(oid)
    if not entry:
        return None
    return entry.get(dname) or entry.get("*")


def classify(results, skips, oid):
    """An OpInfo's status from its per-dtype (status, message) results: 'passing' (every dtype
    passes or has no runnable sample, one at least passes), 'skipped' (a skip-list entry applies),
    'failing', or 'no samples'."""
    if any(st == "fail" for st, _ in results.values()):
        return "failing"
    if any(st == "xfail" for st, _ in results.values()):
        return "skipped"
    if any(st == "pass" for st, _ in results.values()):
        return "passing"
    return "no samples"


def run_opinfo_dtype(op, dname, skips):
    """(status, message) with the skip list applied: pass / fail / skip / xfail / xpass."""
    oid = op_id(op)
    st, msg = run_op_dtype(op, dname, undefined_values=oid in skips.UNDEFINED_VALUES)
    reason = expected_failure(skips, oid, dname)
    if reason is not None:
        return ("xfail", reason) if st == "fail" else ("xpass", f"skip-list entry no longer needed: {reason}")
    return st, msg


def summary_line(counts, total):
    return (f"OpInfo coverage: {counts.get('resolvable', 0)} of {total} resolve in ampgrad; "
            f"{counts.get('passing', 0)} pass, {counts.get('skipped', 0)} skipped (tests/opinfo_skips.py), "
            f"{counts.get('failing', 0)} fail, {counts.get('no samples', 0)} without runnable samples; "
            f"{counts.get('missing', 0)} missing")
