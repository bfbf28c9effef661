"""The op database: ONE table of op entries that drives tests/test_ops.py.

Each OpInfo names an op, how to call it (`fn(m, *args, **kwargs)` where `m` is the module,
ampgrad or torch, so one callable serves both; `ag_fn`/`torch_fn` override a side when the
spellings differ), its samples (input specs + keyword arguments), the dtypes it is tested in,
whether it is differentiable, and tolerances per dtype. Input specs (T, Idx, Perm, Mask, Const,
TList) are realized with a seeded NumPy generator, so both libraries see bit-identical inputs.
This module imports neither torch nor ampgrad; the tests pass the modules in.
"""
import math
import os
import re
import warnings
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

BOOL = ("bool",)
UINT = ("uint8",)
SINT = ("int8", "int16", "int32", "int64")
INTS = UINT + SINT
LOWP = ("float16", "bfloat16")
FLOATS = LOWP + ("float32", "float64")
ALL = BOOL + INTS + FLOATS
NUMERIC = INTS + FLOATS
GRAD_DTYPES = ("float32", "float64")

# Default tolerances (atol, rtol) per dtype: torch.testing's defaults for floats, exact for ints.
DEFAULT_TOL = {
    "float64": (1e-7, 1e-7),
    "float32": (1e-5, 1.3e-6),
    "float16": (1e-3, 1e-3),
    "bfloat16": (1e-5, 1.6e-2),
}
# Gradients go through more arithmetic than the forward (and torch fuses some formulas).
GRAD_TOL = {"float64": (1e-7, 1e-6), "float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}


# ---------------------------------------------------------------- input specs
@dataclass
class T:
    """A tensor of `shape` with values uniform in [low, high) (in the op's dtype unless `dtype`).
    sign=True draws the magnitude from [low, high) and a random sign (keeps values off zero);
    unique=True gives distinct values, exactly representable in every float dtype (no ties)."""
    shape: tuple
    low: float = -2.0
    high: float = 2.0
    dtype: Optional[str] = None
    sign: bool = False
    unique: bool = False
    grad: bool = True


@dataclass
class Idx:
    """int64 indices in [low, high)."""
    shape: tuple
    high: int
    low: int = 0
    dtype: str = "int64"


@dataclass
class Perm:
    """A random permutation of range(n)[:k] (int64): distinct indices."""
    n: int
    k: Optional[int] = None


@dataclass
class Mask:
    """A random bool tensor (about half True, never all False)."""
    shape: tuple


@dataclass
class Const:
    """Fixed data; dtype None means the op's dtype (then it is differentiable when floating)."""
    data: Any
    dtype: Optional[str] = None
    grad: bool = True


@dataclass
class TList:
    """A Python list of tensors (cat, stack, ...)."""
    items: list


@dataclass
class Sample:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    desc: str = ""
    grad: bool = True  # this sample is differentiable (when the op is)
    # Special points (near zero, signed zeros, infinities, nan): the sign bits of zero and infinite
    # results (and gradients) must match torch's, NaN-ness exactly; `tol` (dtype -> (atol, rtol))
    # replaces the op's tolerances (a relative tolerance near zero); `dtypes` limits the dtypes.
    # Such samples are left out of the finite-difference, gradgrad and non-contiguous checks.
    special: bool = False
    tol: Optional[dict] = None
    dtypes: Optional[tuple] = None


@dataclass
class OpInfo:
    name: str
    fn: Callable
    samples: list
    dtypes: tuple = FLOATS
    grad: bool = True
    tol: dict = field(default_factory=dict)
    grad_tol: dict = field(default_factory=dict)
    ag_fn: Optional[Callable] = None
    torch_fn: Optional[Callable] = None
    np_ref: Optional[Callable] = None  # NumPy reference (float64), used when torch is absent
    noncontig: bool = True  # also run with non-contiguous (strided / transposed) inputs
    fd: bool = True          # finite-difference check in float64
    # The in-place variant's gradient is compared with torch's (False where torch has no derivative for
    # it, e.g. asinh_: ampgrad's rebase gives one; the out-of-place gradient is still checked).
    inplace_grad: bool = True
    # Known failures: test kind ("forward", "grad", "gradgrad", "fd", "noncontig", "fwad", "autocast",
    # or "<kind>-<dtype or layout>") -> reason. They become xfail(strict=True) on the CPU (a fix
    # shows up as XPASS) and non-strict xfails on CUDA. `skip` (same keys): checks that do not
    # apply to the op, with the reason.
    xfail: dict = field(default_factory=dict)
    skip: dict = field(default_factory=dict)

    def call(self, m, is_torch, *args, **kwargs):
        f = (self.torch_fn if is_torch else self.ag_fn) or self.fn
        return f(m, *args, **kwargs)

    def tolerance(self, dtype):
        return self.tol.get(dtype, DEFAULT_TOL.get(dtype, (0, 0)))

    def grad_tolerance(self, dtype):
        return self.grad_tol.get(dtype, GRAD_TOL[dtype])


# ---------------------------------------------------------------- realization
def _round_bf16(a):
    """Rounds float values to bfloat16 (nearest even) and back, without torch."""
    f = np.asarray(a, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return u.view(np.float32).astype(np.float64)


def round_to(a, dtype):
    """float64 values rounded to `dtype` (so every library starts from the same numbers)."""
    a = np.asarray(a, dtype=np.float64)
    if dtype == "float16":
        return a.astype(np.float16).astype(np.float64)
    if dtype == "bfloat16":
        return _round_bf16(a)
    if dtype == "float32":
        return a.astype(np.float32).astype(np.float64)
    return a


NP_INT = {"uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64}


def rng_for(*keys):
    return np.random.RandomState(zlib.crc32("/".join(map(str, keys)).encode()))


def realize_array(spec, dtype, rng):
    """(numpy array, dtype name, differentiable) for one tensor spec."""
    if isinstance(spec, T):
        dt = spec.dtype or dtype
        n = int(np.prod(spec.shape)) if spec.shape else 1
        if dt == "bool":
            a = rng.rand(*spec.shape) < 0.5
            return np.asarray(a), dt, False
        if dt in NP_INT:
            lo, hi = math.ceil(spec.low), math.floor(spec.high)
            if spec.sign:
                lo = max(lo, 1)
            if dt == "uint8":
                lo = max(lo, 0)
                hi = max(hi, lo)
            if spec.unique:
                a = rng.permutation(n).reshape(spec.shape) + (lo if dt == "uint8" else -(n // 2))
            else:
                a = rng.randint(lo, hi + 1, size=spec.shape)
            if spec.sign and dt != "uint8":
                a = a * rng.choice([-1, 1], size=spec.shape)
            return np.asarray(a).astype(NP_INT[dt]), dt, False
        if spec.unique:
            a = (rng.permutation(n) - n // 2).reshape(spec.shape) * 0.25
            a = a + (spec.low + spec.high) / 2 if spec.low > -n * 0.125 else a
        else:
            a = rng.uniform(spec.low, spec.high, size=spec.shape)
        if spec.sign:
            a = a * rng.choice([-1.0, 1.0], size=spec.shape)
        return round_to(a, dt), dt, spec.grad
    if isinstance(spec, Idx):
        return rng.randint(spec.low, spec.high, size=spec.shape).astype(NP_INT[spec.dtype]), spec.dtype, False
    if isinstance(spec, Perm):
        p = rng.permutation(spec.n)[: spec.k if spec.k is not None else spec.n]
        return p.astype(np.int64), "int64", False
    if isinstance(spec, Mask):
        a = rng.rand(*spec.shape) < 0.5
        a.reshape(-1)[0] = True
        return a, "bool", False
    if isinstance(spec, Const):
        dt = spec.dtype or dtype
        if dt == "bool":
            return np.asarray(spec.data, dtype=np.bool_), dt, False
        if dt in NP_INT:
            with np.errstate(invalid="ignore"):  # nan/inf constants in an integer dtype
                return np.asarray(spec.data).astype(NP_INT[dt]), dt, False
        return round_to(spec.data, dt), dt, spec.grad and spec.dtype is None
    raise TypeError(f"not a tensor spec: {spec!r}")


def is_spec(x):
    return isinstance(x, (T, Idx, Perm, Mask, Const))


def make_tensor(m, arr, dt, layout="contig", device="cpu"):
    """A tensor of module `m` holding `arr` as `dt`, contiguous or as a strided/transposed view,
    on `device` (built on the CPU, then moved with its layout kept)."""
    dtype = getattr(m, dt)
    src_dt = m.float64 if arr.dtype == np.float64 else None

    def build(a):
        a = np.array(a, order="C")  # (np.ascontiguousarray turns 0-d into 1-d)
        t = m.tensor(a, dtype=src_dt) if src_dt is not None else m.tensor(a)
        return t.to(dtype).to(device) if device != "cpu" else t.to(dtype)

    if layout == "contig" or arr.ndim == 0 or arr.size == 0:
        return build(arr)
    if layout == "transposed" and arr.ndim >= 2:
        return build(np.swapaxes(arr, -1, -2)).transpose(-1, -2)
    # strided: every other element of a buffer twice as long in the last dim
    buf = np.zeros(arr.shape[:-1] + (2 * arr.shape[-1],), dtype=arr.dtype)
    buf[..., ::2] = arr
    return build(buf)[..., ::2]


def to_device_keep_strides(t, device):
    """t's values on `device` with t's strides (a non-contiguous input exercises the strided path)."""
    if t.is_contiguous():
        return t.to(device)
    if t.dim() >= 2 and t.stride(-2) == 1:  # transposed
        return t.transpose(-1, -2).contiguous().to(device).transpose(-1, -2)
    buf = t.new_zeros(tuple(t.shape[:-1]) + (2 * t.shape[-1],))
    buf[..., ::2] = t
    return buf.to(device)[..., ::2]


def realize(op, si, sample, dtype):
    """The sample's arguments as ("t", (array, dtype, differentiable)), ("list", [...]) or
    ("const", value): seeded by (op, sample, dtype), so every library and device sees the same."""
    rng = rng_for(op.name, si, dtype)
    out = []
    for a in sample.args:
        if isinstance(a, TList):
            out.append(("list", [realize_array(s, dtype, rng) for s in a.items]))
        elif is_spec(a):
            out.append(("t", realize_array(a, dtype, rng)))
        else:
            out.append(("const", a))
    return out


def instantiate(m, realized, layout="contig", requires_grad=False, override=None, device="cpu"):
    """Module-m arguments (on `device`) for realized specs; returns (args, leaves). `override` maps
    a leaf number to a replacement array (finite differences)."""
    args, leaves = [], []
    override = override or {}

    def one(v):
        arr, dt, diff = v
        leaf_no = len(leaves) if (requires_grad and diff and dt.startswith(("float", "bfloat"))) else None
        if leaf_no is not None and leaf_no in override:
            arr = override[leaf_no]
        t = make_tensor(m, arr, dt, layout, device)
        if leaf_no is not None:
            t = t.detach().requires_grad_(True)
            leaves.append(t)
        return t

    for kind, v in realized:
        if kind == "const":
            args.append(v)
        elif kind == "t":
            args.append(one(v))
        else:
            args.append([one(x) for x in v])
    return args, leaves


# ---------------------------------------------------------------- helpers for entries
# Special values: signed zeros, infinities, nan, tiny/huge magnitudes, halves (rounding ties).
INF, NAN = float("inf"), float("nan")
SPECIAL = [0.0, -0.0, INF, -INF, NAN, 1e-30, -1e-30, 1e30, -1e30, 0.5, -0.5, 1.5, -2.5, 3.0, -7.0, 100.0]
_SP_A, _SP_B = [a for a in SPECIAL for _ in SPECIAL], [b for _ in SPECIAL for b in SPECIAL]
# fmod/remainder: torch's vectorized float32 kernel returns nan for a quotient like 1e30 / 1e-30
# (its scalar path and ampgrad give the exact std::fmod result), so those pairs are left out.
_SPM = [x for x in SPECIAL if abs(x) != 1e-30]
_SPM_A, _SPM_B = [a for a in _SPM for _ in _SPM], [b for _ in _SPM for b in _SPM]
_FINITE_SPECIAL = [x for x in SPECIAL if not abs(x) >= 1e30]  # (1e30 is inf in float16)
INT_EDGE = [0, 1, -1, 127, -128, 255, 2, -2, 7, -7]
_IE_A, _IE_B = [a for a in INT_EDGE for _ in INT_EDGE], [b for _ in INT_EDGE for b in INT_EDGE]


def U(name, low=-2.0, high=2.0, dtypes=ALL, np_ref=None, shape=(3, 4), **kw):
    """A unary elementwise op called as m.<name>(x)."""
    return OpInfo(name, lambda m, x, _n=name: getattr(m, _n)(x),
                  [Sample((T(shape, low, high),)), Sample((T((), low, high),), desc="0-dim"),
                   Sample((T((2, 0, 3), low, high),), desc="empty", grad=False),
                   Sample((Const(SPECIAL),), desc="special values", grad=False),
                   Sample((Const(INT_EDGE),), desc="integer edges", grad=False)],
                  dtypes=dtypes, np_ref=np_ref, **kw)


def B(name, low=-2.0, high=2.0, blow=None, bhigh=None, bsign=False, dtypes=ALL, np_ref=None, kwargs=None,
      scalars=(2, -1.5), special=(_SP_A, _SP_B), **kw):
    """A binary elementwise op m.<name>(a, b): same shapes, broadcasting, 0-dim and Python scalars."""
    blow = low if blow is None else blow
    bhigh = high if bhigh is None else bhigh
    kwargs = kwargs or {}
    samples = [
        Sample((T((3, 4), low, high), T((3, 4), blow, bhigh, sign=bsign)), kwargs),
        Sample((T((3, 1), low, high), T((4,), blow, bhigh, sign=bsign)), kwargs, desc="broadcast"),
        Sample((T((2, 3), low, high), T((), blow, bhigh, sign=bsign)), kwargs, desc="0-dim b"),
        Sample((T((), low, high), T((2, 3), blow, bhigh, sign=bsign)), kwargs, desc="0-dim a"),
    ]
    for s in scalars:
        samples.append(Sample((T((2, 3), low, high), s), kwargs, desc=f"scalar {s!r}"))
    samples.append(Sample((Const(special[0]), Const(special[1])), kwargs, desc="special values", grad=False))
    samples.append(Sample((Const(_IE_A), Const(_IE_B)), kwargs, desc="integer edges", grad=False))
    return OpInfo(name, lambda m, a, b, _n=name, **k: getattr(m, _n)(a, b, **k), samples, dtypes=dtypes,
                  np_ref=np_ref, **kw)


# Near zero: magnitudes where an absolute tolerance hides everything (expm1 as exp(x) - 1 passes an
# atol of 1e-5 at 1e-8), float32 and float64 subnormals, and signed zeros. Compared with a relative
# tolerance (a few ulp; atol only covers the subnormal grid), float32 and float64 only.
NEAR_ZERO = [0.0, -0.0, 1e-45, -1e-45, 1e-40, -3e-39, 1.2e-38, 1e-30, -1e-30, 1e-20, -1e-20, 3e-12, -3e-12, 1e-8, -1e-8,
             2.5e-7, 1e-5, -1e-5, 3e-3, -3e-3, 0.0625, -0.0625, 5e-310, -5e-310, 1e-300, 2.2e-308]
NZ_A = [a for a in NEAR_ZERO[::2] for _ in NEAR_ZERO[1::3]]
NZ_B = [b for _ in NEAR_ZERO[::2] for b in NEAR_ZERO[1::3]]
# fmod/remainder: torch's vectorized float32 kernel returns nan for huge quotients (as _SPM below)
_NZM = [(a, b) for a, b in zip(NZ_A, NZ_B) if a == 0 or b == 0 or abs(a / b) < 1e20]
NZM_A, NZM_B = [a for a, _ in _NZM], [b for _, b in _NZM]
REL_TOL = {"float32": (3e-45, 2e-6), "float64": (1e-321, 1e-13)}
# Gradients at special points: 0, -0.0, +-inf, nan, tiny, and small integers (boundaries of relu,
# abs, clamp, pow's exponent 0); pairs of them for binary ops.
GRAD_SPECIAL = [0.0, -0.0, INF, -INF, NAN, 1.0, -1.0, 0.5, -2.0, 1e-30, -1e-30, 3.0, 1.5, 20.0]
_GSP = [0.0, -0.0, 1.0, -1.5, 2.0, INF, -INF, NAN]
GS_A = [a for a in _GSP for _ in _GSP]
GS_B = [b for _ in _GSP for b in _GSP]


def near_zero_sample(kwargs=None, n=1, desc="near zero", pairs=None):
    args = (Const(NEAR_ZERO),) if n == 1 else (Const((pairs or (NZ_A, NZ_B))[0]), Const((pairs or (NZ_A, NZ_B))[1]))
    return Sample(args, dict(kwargs or {}), desc, grad=False, special=True, tol=REL_TOL, dtypes=("float32", "float64"))


def special_grad_sample(kwargs=None, n=1, values=None, desc="special grad"):
    args = (Const(values or GRAD_SPECIAL),) if n == 1 else (Const(GS_A), Const(GS_B))
    return Sample(args, dict(kwargs or {}), desc, grad=True, special=True, dtypes=("float32", "float64"))


def _dims_samples(shape=(3, 4, 5), low=-2.0, high=2.0, extra=(), unique=False):
    x = lambda: T(shape, low, high, unique=unique)  # noqa: E731
    return [Sample((x(),), {}, "all"), Sample((x(),), {"dim": 1}, "dim=1"),
            Sample((x(),), {"dim": (0, 2)}, "dim=(0,2)"), Sample((x(),), {"dim": -1, "keepdim": True}, "dim=-1 keepdim"),
            Sample((x(),), {"dim": (2, 0), "keepdim": True}, "dim=(2,0) keepdim"),
            Sample((T((), low, high),), {}, "0-dim")] + [Sample((x(),), k, str(k)) for k in extra]


# ---------------------------------------------------------------- the table
OPS = [
    # ---- elementwise unary
    U("neg", np_ref=np.negative),
    U("exp", np_ref=np.exp),
    U("exp2", np_ref=np.exp2),
    U("expm1", np_ref=np.expm1),
    U("log", 0.1, 3.0, np_ref=np.log),
    U("log2", 0.1, 3.0, np_ref=np.log2),
    U("log10", 0.1, 3.0, np_ref=np.log10),
    U("log1p", -0.5, 2.0, np_ref=np.log1p),
    U("sqrt", 0.1, 3.0, np_ref=np.sqrt),
    U("rsqrt", 0.1, 3.0, np_ref=lambda x: 1 / np.sqrt(x)),
    OpInfo("reciprocal", lambda m, x: m.reciprocal(x), [Sample((T((3, 4), 0.5, 2.0, sign=True),)),
                                                        Sample((T((), 0.5, 2.0, sign=True),))],
           dtypes=ALL, np_ref=np.reciprocal),
    OpInfo("abs", lambda m, x: m.abs(x), [Sample((T((3, 4), 0.1, 2.0, sign=True),)), Sample((T((), 0.1, 2.0, sign=True),))],
           dtypes=ALL, np_ref=np.abs),
    U("sign", np_ref=lambda x: np.where(np.isnan(x), 0.0, np.sign(x))),  # torch: sign(nan) == 0
    U("sin", np_ref=np.sin),
    U("cos", np_ref=np.cos),
    U("tan", -1.2, 1.2, np_ref=np.tan),
    U("asin", -0.9, 0.9, np_ref=np.arcsin),
    U("acos", -0.9, 0.9, np_ref=np.arccos),
    U("atan", np_ref=np.arctan),
    U("sinh", np_ref=np.sinh),
    U("cosh", np_ref=np.cosh),
    U("asinh", np_ref=np.arcsinh, inplace_grad=False),  # torch: no derivative for asinh_
    U("acosh", low=1.1, high=4.0, np_ref=np.arccosh, inplace_grad=False),  # torch: no derivative for acosh_
    U("atanh", low=-0.9, high=0.9, np_ref=np.arctanh, inplace_grad=False),  # torch: no derivative for atanh_
    U("erfc"),
    U("sinc", np_ref=np.sinc),
    U("deg2rad", np_ref=np.deg2rad),
    U("rad2deg", np_ref=np.rad2deg),
    U("tanh", np_ref=np.tanh),
    U("sigmoid", np_ref=lambda x: 1 / (1 + np.exp(-x))),
    OpInfo("relu", lambda m, x: m.relu(x), [Sample((T((3, 4), 0.05, 2.0, sign=True),)), Sample((T((), 0.05, 2.0, sign=True),))],
           dtypes=ALL, np_ref=lambda x: np.maximum(x, 0)),
    OpInfo("nn.functional.relu", lambda m, x: m.nn.functional.relu(x), [Sample((T((3, 4), 0.05, 2.0, sign=True),))],
           dtypes=FLOATS + ("int64",)),
    OpInfo("gelu", lambda m, x, **k: m.nn.functional.gelu(x, **k),
           [Sample((T((3, 4), -3, 3),)), Sample((T((3, 4), -3, 3),), {"approximate": "tanh"}, "tanh"),
            Sample((T((), -3, 3),), {"approximate": "none"}, "0-dim"), Sample((T((0, 3)),), {}, "empty", grad=False),
            # +-inf left out: torch returns nan there (pytorch#185770), ampgrad the limits (test_gelu_infinities)
            Sample((Const(_FINITE_SPECIAL),), {}, "special values", grad=False),
            Sample((Const(_FINITE_SPECIAL),), {"approximate": "tanh"}, "special values tanh", grad=False)],
           dtypes=ALL),
    OpInfo("silu", lambda m, x: m.nn.functional.silu(x),
           [Sample((T((3, 4), -3, 3),)), Sample((T((), -3, 3),)), Sample((T((0, 3)),), {}, "empty", grad=False),
            Sample((Const(SPECIAL),), {}, "special values", grad=False)],
           dtypes=ALL),
    OpInfo("softplus", lambda m, x, **k: m.nn.functional.softplus(x, **k),
           [Sample((T((3, 4), -3, 3),)), Sample((T((3, 4), -3, 3),), {"beta": 2.0, "threshold": 1.5}, "beta"),
            Sample((T((3, 4), 15, 25),), {}, "over threshold"), Sample((T((0, 3)),), {}, "empty", grad=False),
            Sample((Const(SPECIAL),), {}, "special values", grad=False),
            Sample((Const(SPECIAL),), {"beta": 2.0, "threshold": 3.0}, "special values beta", grad=False)],
           dtypes=ALL),
    U("erf", np_ref=None),
    U("erfinv", -0.95, 0.95, tol={"float32": (1e-5, 1e-5)}),
    OpInfo("floor", lambda m, x: m.floor(x), [Sample((T((3, 4), -3, 3),)), Sample((T((), -3, 3),))], dtypes=ALL, np_ref=np.floor),
    OpInfo("ceil", lambda m, x: m.ceil(x), [Sample((T((3, 4), -3, 3),)), Sample((T((), -3, 3),))], dtypes=ALL, np_ref=np.ceil),
    OpInfo("trunc", lambda m, x: m.trunc(x), [Sample((T((3, 4), -3, 3),)), Sample((T((), -3, 3),))], dtypes=ALL, np_ref=np.trunc),
    OpInfo("round", lambda m, x, **k: m.round(x, **k),
           [Sample((T((3, 4), -3, 3),)), Sample((Const([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]),), {}, "half to even", grad=False),
            Sample((T((3, 4), -30, 30),), {"decimals": 1}, "decimals=1"),
            Sample((T((3, 4), -300, 300),), {"decimals": -1}, "decimals=-1"),
            Sample((T((), -3, 3),), {"decimals": 2}, "0-dim")],
           dtypes=ALL, tol={"float16": (1e-2, 1e-3), "bfloat16": (0.5, 1.6e-2)}),
    OpInfo("frac", lambda m, x: m.frac(x), [Sample((T((3, 4), -3, 3),)), Sample((T((), -3, 3),)), Sample((T((0, 3)),), {}, "empty", grad=False)],
           dtypes=ALL),
    OpInfo("clamp", lambda m, x, **k: m.clamp(x, **k),
           [Sample((T((3, 4), -3, 3),), {"min": -1, "max": 1}, "int bounds"),
            Sample((T((3, 4), -3, 3),), {"min": -0.5}, "min only"),
            Sample((T((3, 4), -3, 3),), {"max": 0.5}, "max only"),
            Sample((T((3, 4), -3, 3),), {"min": 1.5, "max": -1.0}, "min > max")],
           dtypes=NUMERIC),
    OpInfo("clamp_tensor", lambda m, x, lo, hi: m.clamp(x, lo, hi),
           [Sample((T((3, 4), -3, 3), T((3, 4), -2, -0.2), T((4,), 0.2, 2)), desc="tensor bounds")],
           dtypes=NUMERIC),
    OpInfo("clip", lambda m, x, **k: m.clip(x, **k), [Sample((T((3, 4), -3, 3),), {"min": -1.0, "max": 1.0})], dtypes=NUMERIC),
    OpInfo("Tensor.clamp_", lambda m, x, **k: x.clone().clamp_(**k), [Sample((T((3, 4), -3, 3),), {"min": -1, "max": 1})],
           dtypes=NUMERIC),
    OpInfo("nan_to_num", lambda m, x, **k: m.nan_to_num(x, **k),
           [Sample((Const([0.5, float("nan"), float("inf"), -float("inf"), -2.0]),), {}, "defaults"),
            Sample((Const([0.5, float("nan"), float("inf"), -float("inf"), -2.0]),), {"nan": 1.0, "posinf": 9.0, "neginf": -9.0}, "values"),
            Sample((T((3, 4)),), {}, "finite")],
           dtypes=FLOATS, fd=False),
    OpInfo("nan_to_num_int", lambda m, x: m.nan_to_num(x), [Sample((T((3, 4), -3, 3),))], dtypes=BOOL + INTS, grad=False),
    OpInfo("isnan", lambda m, x: m.isnan(x), [Sample((Const([0.5, float("nan"), float("inf"), -float("inf")]),)), Sample((T((3, 4)),))],
           dtypes=FLOATS, grad=False),
    OpInfo("isinf", lambda m, x: m.isinf(x), [Sample((Const([0.5, float("nan"), float("inf"), -float("inf")]),)), Sample((T((3, 4)),))],
           dtypes=FLOATS, grad=False),
    OpInfo("isfinite", lambda m, x: m.isfinite(x), [Sample((Const([0.5, float("nan"), float("inf"), -float("inf")]),)), Sample((T((3, 4)),))],
           dtypes=FLOATS, grad=False),
    OpInfo("isnan_int", lambda m, x: (m.isnan(x), m.isinf(x), m.isfinite(x)), [Sample((T((3, 4)),))], dtypes=BOOL + INTS, grad=False),
    U("logical_not", dtypes=ALL, grad=False),
    U("bitwise_not", dtypes=ALL, grad=False),

    # ---- elementwise binary
    OpInfo("add", lambda m, a, b, **k: m.add(a, b, **k),
           B("add").samples + [Sample((T((3, 4)), T((3, 4))), {"alpha": 2}, "alpha=2"),
                               Sample((T((3, 4)), T((4,))), {"alpha": -0.5}, "alpha=-0.5")],
           dtypes=ALL, np_ref=np.add),
    OpInfo("sub", lambda m, a, b, **k: m.sub(a, b, **k),
           B("sub").samples + [Sample((T((3, 4)), T((3, 4))), {"alpha": 2}, "alpha=2"),
                               Sample((T((3, 4)), T((4,))), {"alpha": -0.5}, "alpha=-0.5")],
           dtypes=ALL, np_ref=np.subtract),
    B("mul", np_ref=np.multiply),
    B("div", blow=0.5, bhigh=2.0, bsign=True, np_ref=np.divide, scalars=(2, -1.5, 0.5)),
    OpInfo("div_trunc", lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
           B("div", -5, 5, 0.5, 2.0, bsign=True).samples, dtypes=ALL, grad=True),
    OpInfo("div_floor", lambda m, a, b: m.div(a, b, rounding_mode="floor"),
           B("div", -5, 5, 0.5, 2.0, bsign=True).samples, dtypes=ALL, grad=True),
    # Quotients a hair off an integer: fp32/fp64 only, since torch's fp16/bf16 trunc division rounds
    # the quotient to 16 bits in its vectorized path but not in its scalar path (size-dependent).
    OpInfo("div_rounding_near_integers", lambda m, a, b: (m.div(a, b, rounding_mode="trunc"), m.div(a, b, rounding_mode="floor")),
           [Sample((Const([-2.0, 2.0, 3.0, -5.0, 7.0] * 4), Const([0.2002, 0.2002, 0.30004, 0.5005, 0.7001] * 4))),
            Sample((Const([-2.0, 2.0, 3.0, -5.0, 7.0]), Const(0.2002)), desc="0-dim divisor")],
           dtypes=("float32", "float64"), grad=False),
    OpInfo("floor_divide", lambda m, a, b: m.floor_divide(a, b),
           B("div", -5, 5, 0.5, 2.0, bsign=True).samples, dtypes=ALL, grad=False),
    OpInfo("Tensor.__floordiv__", lambda m, a, b: a // b, B("div", -5, 5, 0.5, 2.0, bsign=True).samples, dtypes=NUMERIC, grad=False),
    OpInfo("pow", lambda m, a, b: m.pow(a, b),
           [Sample((T((3, 4), 0.5, 2.0), T((3, 4), -2.0, 2.0))),
            Sample((T((3, 1), 0.5, 2.0), T((4,), 0.0, 3.0)), desc="broadcast"),
            Sample((T((2, 3), 0.5, 2.0), 2), desc="scalar exponent 2"),
            Sample((T((2, 3), 0.5, 2.0), 0.5), desc="scalar exponent 0.5"),
            Sample((T((2, 3), 0.5, 2.0), -1), desc="scalar exponent -1"),
            Sample((T((2, 3), -2.0, 2.0), 3), desc="negative base, int exponent"),
            Sample((T((2, 3), 0.5, 2.0), 0), desc="exponent 0"),
            Sample((2, T((2, 3), -2.0, 2.0)), desc="scalar base"),
            Sample((T((2, 3), 0.5, 2.0), T((), 0.0, 3.0)), desc="0-dim exponent")],
           dtypes=ALL, tol={"float32": (1e-5, 3e-6)}),
    OpInfo("Tensor.__pow__", lambda m, a, b: a ** b,
           [Sample((T((2, 3), 0.5, 2.0), 2)), Sample((2.5, T((2, 3), -2.0, 2.0)), desc="rpow")],
           dtypes=FLOATS + ("int64",)),
    B("atan2", np_ref=np.arctan2, dtypes=ALL, scalars=()),  # torch has no Scalar overload
    B("hypot", np_ref=np.hypot, dtypes=ALL, scalars=()),  # float kernels only, as torch's (ints raise)
    # NaN sign operands left out of the special values: torch's bfloat16 kernel gives copysign(x, +nan) a
    # negative sign (its bf16 round trip sets NaN's sign bit); ampgrad keeps the NaN's sign, as both do in
    # float16/32/64.
    B("copysign", np_ref=np.copysign, dtypes=ALL, scalars=(2, -1.5, -0.0),
      special=tuple(map(list, zip(*[(a, b) for a, b in zip(_SP_A, _SP_B) if b == b])))),
    B("logaddexp", np_ref=np.logaddexp, dtypes=ALL, scalars=()),
    B("logaddexp2", np_ref=np.logaddexp2, dtypes=ALL, scalars=()),
    B("fmax", np_ref=np.fmax, dtypes=ALL, scalars=()),
    B("fmin", np_ref=np.fmin, dtypes=ALL, scalars=()),
    B("xlogy", blow=0.1, bhigh=3.0),
    OpInfo("maximum", lambda m, a, b: m.maximum(a, b),
           [Sample((T((3, 4)), T((3, 4)))), Sample((T((3, 1)), T((4,))), desc="broadcast"),
            Sample((Const([1.0, 2.0, float("nan"), 3.0]), Const([1.0, 1.0, 0.0, float("nan")])), desc="ties and nan", grad=True)],
           dtypes=ALL, np_ref=np.maximum, fd=False),
    OpInfo("minimum", lambda m, a, b: m.minimum(a, b),
           [Sample((T((3, 4)), T((3, 4)))), Sample((T((3, 1)), T((4,))), desc="broadcast"),
            Sample((Const([1.0, 2.0, float("nan"), 3.0]), Const([1.0, 1.0, 0.0, float("nan")])), desc="ties and nan", grad=True)],
           dtypes=ALL, np_ref=np.minimum, fd=False),
    B("fmod", -5, 5, 0.5, 2.0, bsign=True, scalars=(2, -1.5), special=(_SPM_A, _SPM_B)),
    B("remainder", -5, 5, 0.5, 2.0, bsign=True, scalars=(2, -1.5), special=(_SPM_A, _SPM_B)),
    OpInfo("Tensor.__mod__", lambda m, a, b: a % b, B("x", -5, 5, 0.5, 2.0, bsign=True, special=(_SPM_A, _SPM_B)).samples, dtypes=NUMERIC),
    *[B(n, dtypes=ALL, grad=False, noncontig=True, scalars=(1, 0.5, True)) for n in ("eq", "ne", "lt", "le", "gt", "ge")],
    OpInfo("compare_ints_small", lambda m, a, b: (a == b, a < b, a >= b),
           [Sample((T((4, 5), -2, 2), T((4, 5), -2, 2)))], dtypes=ALL, grad=False),
    *[B(n, dtypes=ALL, grad=False, scalars=()) for n in ("logical_and", "logical_or", "logical_xor")],
    *[B(n, -20, 20, dtypes=ALL, grad=False, scalars=(3, True)) for n in ("bitwise_and", "bitwise_or", "bitwise_xor")],
    OpInfo("Tensor.__and__", lambda m, a, b: (a & b, a | b, a ^ b, ~a), [Sample((T((3, 4), -20, 20), T((3, 4), -20, 20)))],
           dtypes=BOOL + INTS, grad=False),
    OpInfo("Tensor.__rsub__", lambda m, a: (1.5 - a, 2 - a, 3 / a, 2 + a, 2 * a), [Sample((T((3, 4), 0.5, 2.0, sign=True),))],
           dtypes=NUMERIC),
    OpInfo("Tensor.add_", lambda m, a, b: a.clone().add_(b, alpha=2), [Sample((T((3, 4)), T((4,))))], dtypes=NUMERIC),
    OpInfo("Tensor.mul_", lambda m, a, b: a.clone().mul_(b), [Sample((T((3, 4)), T((3, 4)))), Sample((T((3, 4)), 3), desc="scalar")],
           dtypes=NUMERIC),
    OpInfo("Tensor.div_", lambda m, a, b: a.clone().div_(b), [Sample((T((3, 4)), T((4,), 0.5, 2.0, sign=True)))], dtypes=FLOATS),

    # ---- mixed dtypes: promotion in the forward, each gradient in its input's dtype
    *[OpInfo(f"mixed[{src}]", eval("lambda m, a, b, c: " + src),
             [Sample((T((3, 4), dtype="float32"), T((3, 4), dtype="float64"), T((3, 4), dtype="int64"))),
              Sample((T((3, 4), dtype="float32"), T((), dtype="float64"), T((), dtype="int32")), desc="0-dim others"),
              Sample((T((3, 4), dtype="float16"), T((3, 4), dtype="float32"), T((3, 4), dtype="bool")), desc="half/float"),
              Sample((T((3, 4), dtype="bfloat16"), T((3, 4), dtype="float16"), T((4,), dtype="uint8")), desc="bf16/half")],
             dtypes=("float32",), tol={"float32": (1e-3, 1e-3), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)},
             grad_tol={"float32": (1e-3, 1e-3)}, fd=False, noncontig=False)
      for src in ["a + b", "a * c", "b / a", "c - a", "m.maximum(a, b)", "m.where(a > 0, a, b)", "m.atan2(a, b)", "a ** b.abs()",
                  "b.abs() ** c", "m.cat([a, b])", "m.stack([a, c.to(a.dtype)])", "m.addcmul(a, b, a)", "m.lerp(a, b, 0.5)",
                  "a.clone().add_(b)", "b.clone().mul_(a)", "m.clamp(a, b.abs() * -1, b.abs())",
                  "m.masked_fill(a, c > 0, 2.5)", "a.masked_fill(c > 0, b.sum())", "m.matmul(a, b.t())", "m.dot(a[0], b[0])"]],

    # ---- ternary
    OpInfo("where", lambda m, c, a, b: m.where(c, a, b),
           [Sample((Mask((3, 4)), T((3, 4)), T((3, 4)))), Sample((Mask((3, 1)), T((4,)), T((3, 4))), desc="broadcast"),
            Sample((Mask((3, 4)), T((3, 4)), 0.0), desc="scalar other"),
            Sample((Mask((3, 4)), 1, T((3, 4))), desc="scalar input")],
           dtypes=ALL),
    OpInfo("Tensor.where", lambda m, c, a, b: a.where(c, b), [Sample((Mask((3, 4)), T((3, 4)), T((3, 4))))], dtypes=ALL),
    OpInfo("lerp", lambda m, a, b, w: m.lerp(a, b, w),
           [Sample((T((3, 4)), T((3, 4)), T((3, 4), 0, 1))), Sample((T((3, 4)), T((4,)), 0.3), desc="scalar weight"),
            Sample((T((3, 4)), T((3, 4)), 0.75), desc="weight >= 0.5"),
            Sample((T((3, 1)), T((4,)), T((3, 4), 0, 1)), desc="broadcast")],
           dtypes=FLOATS),
    OpInfo("addcmul", lambda m, s, a, b, **k: m.addcmul(s, a, b, **k),
           [Sample((T((3, 4)), T((3, 4)), T((3, 4)))), Sample((T((4,)), T((3, 1)), T((3, 4))), {"value": 0.5}, "value broadcast")],
           dtypes=NUMERIC),
    OpInfo("addcdiv", lambda m, s, a, b, **k: m.addcdiv(s, a, b, **k),
           [Sample((T((3, 4)), T((3, 4)), T((3, 4), 0.5, 2.0, sign=True))),
            Sample((T((4,)), T((3, 1)), T((3, 4), 0.5, 2.0, sign=True)), {"value": -2}, "value broadcast")],
           dtypes=NUMERIC, tol={"float32": (1e-5, 3e-6), "float16": (2e-3, 2e-3), "bfloat16": (1e-2, 2e-2)}),

    # ---- reductions
    OpInfo("sum", lambda m, x, **k: m.sum(x, **_dt(m, k)), _dims_samples(extra=({"dim": 1, "dtype": "float64"},)),
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 2e-2)}),
    OpInfo("Tensor.sum", lambda m, x, **k: x.sum(**k), [Sample((T((3, 4)),), {}), Sample((T((3, 4)),), {"dim": 0})], dtypes=ALL,
           tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 2e-2)}),
    OpInfo("mean", lambda m, x, **k: m.mean(x, **_dt(m, k)), _dims_samples(extra=({"dim": 1, "dtype": "float64"},)), dtypes=ALL,
           tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 2e-2)}),
    OpInfo("mean_dtype", lambda m, x, **k: m.mean(x, **_dt(m, k)), [Sample((T((3, 4)),), {"dtype": "float32"})], dtypes=ALL,
           grad=False),
    OpInfo("prod", lambda m, x, **k: m.prod(x, **_dt(m, k)),
           [Sample((T((3, 4), 0.5, 1.5, sign=True),), {}, "all"), Sample((T((3, 4), 0.5, 1.5, sign=True),), {"dim": 1}, "dim=1"),
            Sample((T((2, 3, 4), 0.5, 1.5, sign=True),), {"dim": -2, "keepdim": True}, "dim=-2 keepdim"),
            Sample((Const([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0]]),), {"dim": 1}, "zeros dim"),
            Sample((Const([[1.5, 0.0, 2.0], [0.5, 1.0, 3.0]]),), {}, "one zero all"),
            Sample((T((), 0.5, 1.5),), {}, "0-dim"),
            Sample((T((3, 4), 0.5, 1.5),), {"dim": 0, "dtype": "float64"}, "dtype")],
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("max", lambda m, x: m.max(x), [Sample((T((3, 4), unique=True),)), Sample((T((), -2, 2),), desc="0-dim")], dtypes=ALL),
    OpInfo("max_dim", lambda m, x, **k: tuple(m.max(x, **k)),
           [Sample((T((3, 4), unique=True),), {"dim": 1}), Sample((T((2, 3, 4), unique=True),), {"dim": -2, "keepdim": True}),
            Sample((T((2, 3, 4), unique=True),), {"dim": 0}), Sample((T((), -2, 2),), {"dim": 0}, "0-dim")],
           dtypes=ALL),
    OpInfo("max_binary", lambda m, a, b: m.max(a, b), [Sample((T((3, 4)), T((3, 4)))), Sample((T((3, 1)), T((4,))))], dtypes=ALL),
    OpInfo("min", lambda m, x: m.min(x), [Sample((T((3, 4), unique=True),)), Sample((T((), -2, 2),), desc="0-dim")], dtypes=ALL),
    OpInfo("min_dim", lambda m, x, **k: tuple(m.min(x, **k)),
           [Sample((T((3, 4), unique=True),), {"dim": 1}), Sample((T((2, 3, 4), unique=True),), {"dim": -2, "keepdim": True})],
           dtypes=ALL),
    OpInfo("min_binary", lambda m, a, b: m.min(a, b), [Sample((T((3, 4)), T((3, 4))))], dtypes=ALL),
    OpInfo("max_ties", lambda m, x: (m.max(x), m.min(x), m.max(x, 1)[0], m.max(x, 1)[1], m.argmax(x, 1), m.argmin(x)),
           [Sample((Const([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, -1.0]]),))], dtypes=ALL, fd=False),
    OpInfo("amax", lambda m, x, **k: m.amax(x, **k), _dims_samples(unique=True), dtypes=ALL),
    OpInfo("amin", lambda m, x, **k: m.amin(x, **k), _dims_samples(unique=True), dtypes=ALL),
    OpInfo("amax_ties", lambda m, x, **k: m.amax(x, **k),
           [Sample((Const([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, 2.0]]),), {"dim": 1}),
            Sample((Const([[1.0, 3.0, 3.0, 0.0], [2.0, 3.0, -1.0, 2.0]]),), {})], dtypes=FLOATS, fd=False),
    OpInfo("argmax", lambda m, x, **k: m.argmax(x, **k),
           [Sample((T((3, 4), unique=True),)), Sample((T((3, 4), unique=True),), {"dim": 1}),
            Sample((T((2, 3, 4), unique=True),), {"dim": 0, "keepdim": True}),
            Sample((T((2, 3, 4), unique=True),), {"keepdim": True}, "all keepdim")],
           dtypes=ALL, grad=False),
    OpInfo("argmin", lambda m, x, **k: m.argmin(x, **k),
           [Sample((T((3, 4), unique=True),)), Sample((T((3, 4), unique=True),), {"dim": -1}),
            Sample((T((2, 3, 4), unique=True),), {"dim": 1, "keepdim": True})],
           dtypes=ALL, grad=False),
    OpInfo("var", lambda m, x, **k: m.var(x, **k),
           _dims_samples(extra=({"dim": 1, "unbiased": False}, {"dim": 1, "correction": 0}, {"dim": (0, 1), "correction": 2},
                                {"correction": 0})),
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("std", lambda m, x, **k: m.std(x, **k),
           _dims_samples(extra=({"dim": 1, "unbiased": False}, {"dim": 2, "correction": 0}, {"dim": (0, 1), "correction": 2},
                                {"unbiased": True})),
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("var_positional_unbiased", lambda m, x: (m.var(x, 1, False), x.std(False), x.var(0, True, True)),
           [Sample((T((3, 4)),))], dtypes=FLOATS),
    OpInfo("norm", lambda m, x, **k: m.norm(x, **k),
           [Sample((T((3, 4)),), {}, "fro"), Sample((T((3, 4)),), {"p": 1}, "p=1"), Sample((T((3, 4)),), {"p": 2, "dim": 1}, "p=2 dim"),
            Sample((T((3, 4), unique=True),), {"p": float("inf")}, "inf"),
            Sample((T((3, 4), unique=True),), {"p": float("inf"), "dim": 0, "keepdim": True}, "inf dim"),
            Sample((T((3, 4)),), {"p": 3, "dim": 1}, "p=3 dim"), Sample((T((2, 3, 4)),), {"p": 3}, "p=3"),
            Sample((T((2, 3, 4)),), {"p": 2, "dim": (0, 2), "keepdim": True}, "tuple dim"),
            Sample((Const([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]]),), {"p": 0, "dim": 1}, "p=0", grad=False),
            Sample((T((3, 4), unique=True),), {"p": float("-inf"), "dim": 1}, "-inf"),
            Sample((T((3, 4), 0.5, 2, sign=True),), {"p": 0.5}, "p=0.5"), Sample((T(()),), {}, "0-dim"),
            Sample((T((0, 3)),), {"dim": 0}, "empty", grad=False)],
           dtypes=FLOATS, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("Tensor.norm", lambda m, x, *a: (x.norm(), x.norm(1), x.norm(2, 1), x.norm(dim=0)), [Sample((T((3, 4)),))], dtypes=FLOATS,
           tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("logsumexp", lambda m, x, **k: m.logsumexp(x, **k),
           [Sample((T((3, 4)),), {"dim": 1}), Sample((T((2, 3, 4)),), {"dim": (0, 2)}), Sample((T((3, 4)),), {"dim": -1, "keepdim": True}),
            Sample((Const([[0.0, -float("inf")], [-float("inf"), -float("inf")]]),), {"dim": 1}, "-inf", grad=False)],
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("cumsum", lambda m, x, **k: m.cumsum(x, **_dt(m, k)),
           [Sample((T((3, 4)),), {"dim": 0}), Sample((T((3, 4)),), {"dim": -1}), Sample((T((2, 3, 4)),), {"dim": 1}),
            Sample((T((3, 4)),), {"dim": 1, "dtype": "float64"}, "dtype"), Sample((T((), -2, 2),), {"dim": 0}, "0-dim")],
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("cumprod", lambda m, x, **k: m.cumprod(x, **_dt(m, k)),
           [Sample((T((3, 4), 0.5, 1.5, sign=True),), {"dim": 0}), Sample((T((3, 4), 0.5, 1.5, sign=True),), {"dim": -1}),
            Sample((T((2, 3, 4), 0.5, 1.5, sign=True),), {"dim": 1}),
            Sample((Const([[1.5, 0.0, 2.0, 3.0], [0.5, 2.0, 0.0, 0.0]]),), {"dim": 1}, "zeros"),
            Sample((T((3, 4), 0.5, 1.5),), {"dim": 1, "dtype": "float64"}, "dtype")],
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    # scans of ops/scan_index.cpp (tests/test_scan_index.py has their ties, NaN, index and binning cases)
    OpInfo("logcumsumexp", lambda m, x, **k: m.logcumsumexp(x, **k),
           [Sample((T((3, 4)),), {"dim": 0}), Sample((T((2, 3, 4)),), {"dim": -1}), Sample((T(()),), {"dim": 0}, "0-dim"),
            Sample((Const([[0.0, -float("inf"), 1.0], [-float("inf"), -float("inf"), 2.0]]),), {"dim": 1}, "-inf", grad=False)],
           dtypes=FLOATS, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("cummax", lambda m, x, **k: m.cummax(x, **k).values,
           [Sample((T((3, 4), unique=True),), {"dim": 0}), Sample((T((2, 3, 4), unique=True),), {"dim": -1}),
            Sample((T(()),), {"dim": 0}, "0-dim")], dtypes=FLOATS),
    OpInfo("cummin", lambda m, x, **k: m.cummin(x, **k).values,
           [Sample((T((3, 4), unique=True),), {"dim": 1}), Sample((T((2, 3, 4), unique=True),), {"dim": 0})], dtypes=FLOATS),
    OpInfo("all", lambda m, x, **k: m.all(x, **k),
           [Sample((T((3, 4), -1, 1),)), Sample((T((3, 4), -1, 1),), {"dim": 1}), Sample((T((3, 4), -1, 1),), {"dim": 0, "keepdim": True}),
            Sample((Const([[1, 1, 1], [1, 0, 1]]),), {"dim": 1}, "const")],
           dtypes=ALL, grad=False),
    OpInfo("any", lambda m, x, **k: m.any(x, **k),
           [Sample((T((3, 4), -1, 1),)), Sample((T((3, 4), -1, 1),), {"dim": 1}), Sample((T((3, 4), -1, 1),), {"dim": 0, "keepdim": True}),
            Sample((Const([[0, 0, 0], [1, 0, 0]]),), {"dim": 1}, "const")],
           dtypes=ALL, grad=False),
    OpInfo("softmax", lambda m, x, **k: m.softmax(x, **_dt(m, k)),
           [Sample((T((3, 4), -3, 3),), {"dim": 1}), Sample((T((3, 4), -3, 3),), {"dim": 0}),
            Sample((T((2, 3, 4), -3, 3),), {"dim": 1}), Sample((T((3, 4), -3, 3),), {"dim": -1, "dtype": "float64"}, "dtype")],
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (1e-2, 2e-2)}),
    OpInfo("log_softmax", lambda m, x, **k: m.log_softmax(x, **_dt(m, k)),
           [Sample((T((3, 4), -3, 3),), {"dim": 1}), Sample((T((3, 4), -3, 3),), {"dim": 0}),
            Sample((T((2, 3, 4), -3, 3),), {"dim": 1}), Sample((T((3, 4), -3, 3),), {"dim": -1, "dtype": "float64"}, "dtype")],
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (1e-2, 2e-2)}),
    OpInfo("nn.functional.softmax", lambda m, x, **k: (m.nn.functional.softmax(x, **_dt(m, k)), m.nn.functional.log_softmax(x, **_dt(m, k))),
           [Sample((T((2, 3, 4), -3, 3),), {"dim": -1}), Sample((T((3, 4), -3, 3),), {"dim": 1, "dtype": "float64"}, "dtype")], dtypes=FLOATS, tol={"float16": (2e-3, 2e-3), "bfloat16": (1e-2, 2e-2)}),

    # ---- linear algebra
    OpInfo("matmul", lambda m, a, b: m.matmul(a, b),
           [Sample((T((4,)), T((4,))), desc="1d@1d"), Sample((T((3, 4)), T((4,))), desc="2d@1d"),
            Sample((T((4,)), T((4, 5))), desc="1d@2d"), Sample((T((3, 4)), T((4, 5))), desc="2d@2d"),
            Sample((T((2, 3, 4)), T((2, 4, 5))), desc="3d@3d"), Sample((T((2, 3, 4)), T((4, 5))), desc="3d@2d"),
            Sample((T((3, 4)), T((2, 4, 5))), desc="2d@3d"), Sample((T((4,)), T((2, 4, 5))), desc="1d@3d"),
            Sample((T((2, 3, 4)), T((4,))), desc="3d@1d"), Sample((T((2, 1, 3, 4)), T((3, 4, 5))), desc="4d@3d broadcast"),
            Sample((T((1, 3, 4)), T((2, 1, 4, 2))), desc="3d@4d broadcast"), Sample((T((2, 3, 0)), T((0, 5))), desc="k=0", grad=False)],
           dtypes=FLOATS + ("int64",), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),
    OpInfo("Tensor.__matmul__", lambda m, a, b: a @ b, [Sample((T((2, 3, 4)), T((4, 2))))], dtypes=("float32", "float64")),
    OpInfo("mm", lambda m, a, b: m.mm(a, b), [Sample((T((3, 4)), T((4, 5)))), Sample((T((1, 4)), T((4, 1))), desc="1x1")],
           dtypes=FLOATS + ("int64", "int32"), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),
    OpInfo("bmm", lambda m, a, b: m.bmm(a, b), [Sample((T((2, 3, 4)), T((2, 4, 5))))],
           dtypes=FLOATS + ("int64",), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),
    OpInfo("mv", lambda m, a, b: m.mv(a, b), [Sample((T((3, 4)), T((4,))))],
           dtypes=FLOATS + ("int64",), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),
    OpInfo("dot", lambda m, a, b: m.dot(a, b), [Sample((T((5,)), T((5,))))],
           dtypes=FLOATS + ("int64",), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),
    OpInfo("outer", lambda m, a, b: m.outer(a, b), [Sample((T((3,)), T((4,))))], dtypes=NUMERIC),
    OpInfo("addmm", lambda m, s, a, b, **k: m.addmm(s, a, b, **k),
           [Sample((T((3, 5)), T((3, 4)), T((4, 5)))), Sample((T((5,)), T((3, 4)), T((4, 5))), {"beta": 0.5, "alpha": 2}, "1-d bias"),
            Sample((T((3, 1)), T((3, 4)), T((4, 5))), {"beta": 0}, "beta=0")],
           dtypes=FLOATS + ("int64",), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),
    OpInfo("addmv", lambda m, s, a, b, **k: m.addmv(s, a, b, **k),
           [Sample((T((3,)), T((3, 4)), T((4,)))), Sample((T(()), T((3, 4)), T((4,))), {"beta": 2, "alpha": -1}, "0-dim self")],
           dtypes=FLOATS + ("int64",), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),
    OpInfo("addr", lambda m, s, a, b, **k: m.addr(s, a, b, **k),
           [Sample((T((3, 4)), T((3,)), T((4,)))), Sample((T((4,)), T((3,)), T((4,))), {"beta": 0.5, "alpha": 3}, "broadcast self")],
           dtypes=FLOATS + ("int64",), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}),
    OpInfo("addbmm", lambda m, s, a, b, **k: m.addbmm(s, a, b, **k),
           [Sample((T((3, 5)), T((2, 3, 4)), T((2, 4, 5)))), Sample((T((5,)), T((2, 3, 4)), T((2, 4, 5))), {"beta": 0.5, "alpha": 2}, "bias")],
           dtypes=FLOATS + ("int64",), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),
    OpInfo("baddbmm", lambda m, s, a, b, **k: m.baddbmm(s, a, b, **k),
           [Sample((T((2, 3, 5)), T((2, 3, 4)), T((2, 4, 5)))), Sample((T((3, 5)), T((2, 3, 4)), T((2, 4, 5))), {"beta": 0.5, "alpha": 2}, "bias"),
            Sample((T((2, 3, 5)), T((2, 3, 4)), T((2, 4, 5))), {"beta": 0}, "beta=0")],
           dtypes=FLOATS + ("int64",), tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),
    OpInfo("nn.functional.linear", lambda m, x, w, *b: m.nn.functional.linear(x, w, *b),
           [Sample((T((3, 4)), T((5, 4)), T((5,))), desc="bias"), Sample((T((3, 4)), T((5, 4))), desc="no bias"),
            Sample((T((2, 3, 4)), T((5, 4)), T((5,))), desc="3-d input"), Sample((T((4,)), T((5, 4)), T((5,))), desc="1-d input"),
            Sample((T((3, 4)), T((4,))), desc="1-d weight")],
           dtypes=FLOATS, tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-5, 1e-5)}),

    # ---- shape and indexing (copies)
    OpInfo("cat", lambda m, ts, **k: m.cat(ts, **k),
           [Sample((TList([T((2, 3)), T((4, 3))]),), {}), Sample((TList([T((2, 3)), T((2, 1)), T((2, 2))]),), {"dim": 1}),
            Sample((TList([T((2, 3)), T((2, 3))]),), {"dim": -1}), Sample((TList([T((2, 3)), T((0,))]),), {}, "legacy empty")],
           dtypes=ALL),
    OpInfo("cat_mixed_dtypes", lambda m, a, b: m.cat([a, b]), [Sample((T((2, 3)), T((2, 3), dtype="int32")))], dtypes=ALL),
    OpInfo("stack", lambda m, ts, **k: m.stack(ts, **k),
           [Sample((TList([T((2, 3)), T((2, 3))]),), {}), Sample((TList([T((2, 3)), T((2, 3)), T((2, 3))]),), {"dim": 1}),
            Sample((TList([T((2, 3)), T((2, 3))]),), {"dim": -1}), Sample((TList([T(()), T(())]),), {}, "0-dim")],
           dtypes=ALL),
    OpInfo("hstack", lambda m, ts: m.hstack(ts),
           [Sample((TList([T((2, 3)), T((2, 1))]),)), Sample((TList([T((3,)), T((2,))]),), desc="1-d"),
            Sample((TList([T(()), T((2,))]),), desc="0-d")], dtypes=ALL),
    OpInfo("vstack", lambda m, ts: m.vstack(ts),
           [Sample((TList([T((2, 3)), T((1, 3))]),)), Sample((TList([T((3,)), T((3,))]),), desc="1-d"),
            Sample((TList([T(()), T(())]),), desc="0-d")], dtypes=ALL),
    OpInfo("gather", lambda m, x, i, **k: m.gather(x, k.pop("dim"), i),
           [Sample((T((3, 4)), Idx((3, 2), 4)), {"dim": 1}), Sample((T((3, 4)), Idx((2, 4), 3)), {"dim": 0}),
            Sample((T((3, 4)), Idx((2, 3), 4)), {"dim": -1}, "smaller index"), Sample((T((2, 3, 4)), Idx((2, 3, 5), 4)), {"dim": 2}, "3-d")],
           dtypes=ALL),
    OpInfo("scatter", lambda m, x, i, s, **k: m.scatter(x, k["dim"], i, s),
           [Sample((T((3, 4)), Const([[1, 0, 3, 2], [0, 2, 1, 3]], "int64"), T((2, 4))), {"dim": 1}),
            Sample((T((3, 4)), Const([[2, 0, 1, 1], [1, 2, 0, 2]], "int64"), T((3, 5))), {"dim": 0}, "bigger src", grad=False),
            Sample((T((3, 4)), Const([[1, 0], [2, 3]], "int64"), 1.5), {"dim": 1}, "scalar src")],
           dtypes=ALL),
    OpInfo("scatter_add", lambda m, x, i, s, **k: m.scatter_add(x, k["dim"], i, s),
           [Sample((T((3, 4)), Idx((2, 4), 4), T((2, 4))), {"dim": 1}), Sample((T((3, 4)), Idx((4, 4), 3), T((4, 4))), {"dim": 0}),
            Sample((T((3, 4)), Idx((2, 3), 3), T((2, 5))), {"dim": 0}, "bigger src", grad=False)],
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}),
    OpInfo("Tensor.scatter_", lambda m, x, i, s: x.clone().scatter_(1, i, s),
           [Sample((T((3, 4)), Const([[1, 0, 3, 2], [0, 2, 1, 3]], "int64"), T((2, 4))))], dtypes=FLOATS + ("int64",)),
    OpInfo("index_select", lambda m, x, i, **k: m.index_select(x, k["dim"], i),
           [Sample((T((3, 4)), Idx((5,), 3)), {"dim": 0}), Sample((T((3, 4)), Idx((2,), 4)), {"dim": 1}),
            Sample((T((2, 3, 4)), Idx((3,), 4)), {"dim": -1}), Sample((T((3, 4)), Idx((), 4)), {"dim": 1}, "0-dim index"),
            Sample((T((3, 4)), Idx((2,), 3, dtype="int32")), {"dim": 0}, "int32 index")],
           dtypes=ALL),
    OpInfo("index_add", lambda m, x, i, s, **k: m.index_add(x, k["dim"], i, s, **({"alpha": k["alpha"]} if "alpha" in k else {})),
           [Sample((T((3, 4)), Idx((5,), 3), T((5, 4))), {"dim": 0}), Sample((T((3, 4)), Idx((2,), 4), T((3, 2))), {"dim": 1, "alpha": 2}, "alpha")],
           dtypes=NUMERIC, tol={"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}),
    OpInfo("index_copy", lambda m, x, i, s, **k: m.index_copy(x, k["dim"], i, s),
           [Sample((T((4, 3)), Perm(4, 2), T((2, 3))), {"dim": 0}), Sample((T((3, 4)), Perm(4, 3), T((3, 3))), {"dim": 1})],
           dtypes=ALL),
    OpInfo("index_put", lambda m, x, i, v, **k: m.index_put(x, (i,), v, **k),
           [Sample((T((5, 3)), Perm(5, 3), T((3, 3)))), Sample((T((5, 3)), Idx((6,), 5), T((6, 3))), {"accumulate": True}, "accumulate"),
            Sample((T((5, 3)), Perm(5, 2), T((3,))), {}, "broadcast values"), Sample((T((5, 3)), Perm(5, 2), T(())), {"accumulate": True}, "0-dim")],
           dtypes=ALL, tol={"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}),
    OpInfo("Tensor.index_put_", lambda m, x, i, j, v: x.clone().index_put_((i, j), v, accumulate=True),
           [Sample((T((4, 3)), Idx((5,), 4), Idx((5,), 3), T((5,))))], dtypes=NUMERIC, tol={"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}),
    OpInfo("masked_fill", lambda m, x, mask, v: m.masked_fill(x, mask, v),
           [Sample((T((3, 4)), Mask((3, 4)), 0.5)), Sample((T((3, 4)), Mask((4,)), -1), desc="broadcast mask"),
            Sample((T((3, 4)), Mask((3, 4)), Const(2.5)), desc="0-dim tensor value")],
           dtypes=ALL),
    OpInfo("Tensor.masked_fill_", lambda m, x, mask: x.clone().masked_fill_(mask, 3), [Sample((T((3, 4)), Mask((3, 4))))], dtypes=ALL),
    OpInfo("masked_select", lambda m, x, mask: m.masked_select(x, mask),
           [Sample((T((3, 4)), Mask((3, 4)))), Sample((T((3, 4)), Mask((4,))), desc="broadcast mask"),
            Sample((T((4,)), Mask((3, 4))), desc="broadcast input")],
           dtypes=ALL),
    OpInfo("nonzero", lambda m, x, **k: m.nonzero(x, **k),
           [Sample((T((3, 4), -1, 1),)), Sample((T((2, 3, 2), -1, 1),), {"as_tuple": True}, "as_tuple"),
            Sample((Const([0.0, 0.0]),), {}, "none"), Sample((T((), 0.5, 1),), {}, "0-dim")],
           dtypes=ALL, grad=False),
    OpInfo("where_cond", lambda m, c: m.where(c), [Sample((Mask((3, 4)),))], dtypes=("bool",), grad=False),
    OpInfo("tril", lambda m, x, **k: m.tril(x, **k),
           [Sample((T((4, 5)),)), Sample((T((4, 5)),), {"diagonal": 1}), Sample((T((2, 3, 4)),), {"diagonal": -1})], dtypes=ALL),
    OpInfo("triu", lambda m, x, **k: m.triu(x, **k),
           [Sample((T((4, 5)),)), Sample((T((4, 5)),), {"diagonal": 2}), Sample((T((2, 3, 4)),), {"diagonal": -1})], dtypes=ALL),
    OpInfo("flip", lambda m, x, **k: m.flip(x, **k),
           [Sample((T((3, 4)),), {"dims": (0,)}), Sample((T((2, 3, 4)),), {"dims": (0, 2)}), Sample((T((3, 4)),), {"dims": (-1,)})],
           dtypes=ALL),
    OpInfo("roll", lambda m, x, **k: m.roll(x, **k),
           [Sample((T((3, 4)),), {"shifts": 1}), Sample((T((3, 4)),), {"shifts": (1, -2), "dims": (0, 1)}),
            Sample((T((3, 4)),), {"shifts": 5, "dims": 1}), Sample((T((3, 4)),), {"shifts": -7, "dims": 0})],
           dtypes=ALL),
    OpInfo("repeat", lambda m, x, *r: x.repeat(*r),
           [Sample((T((2, 3)), 2, 1)), Sample((T((2, 3)), 2, 1, 3), desc="more dims"), Sample((T((3,)), 2, 2), desc="1-d")], dtypes=ALL),
    OpInfo("tile", lambda m, x, d: m.tile(x, d),
           [Sample((T((2, 3)), (2,))), Sample((T((2, 3)), (2, 1, 2)))], dtypes=ALL),

    # ---- views
    OpInfo("view", lambda m, x, *s: x.view(*s), [Sample((T((3, 4)), 4, 3)), Sample((T((3, 4)), -1)), Sample((T((2, 3, 4)), 6, -1)),
                                                 Sample((T((3, 4)), (2, 2, 3)), desc="tuple")], dtypes=ALL),
    OpInfo("reshape", lambda m, x, s: m.reshape(x, s), [Sample((T((3, 4)), (4, 3))), Sample((T((3, 4)), (-1,))), Sample((T(()), (1, 1)))],
           dtypes=ALL),
    OpInfo("Tensor.reshape_noncontig", lambda m, x: x.t().reshape(-1), [Sample((T((3, 4)),))], dtypes=ALL),
    OpInfo("t", lambda m, x: (m.t(x), x.t()), [Sample((T((3, 4)),)), Sample((T((3,)),), desc="1-d")], dtypes=ALL),
    OpInfo("T", lambda m, x: x.T, [Sample((T((3, 4)),)), Sample((T((2, 3, 4)),))], dtypes=ALL),
    OpInfo("mT", lambda m, x: x.mT, [Sample((T((3, 4)),)), Sample((T((2, 3, 4)),))], dtypes=ALL),
    OpInfo("transpose", lambda m, x, a, b: m.transpose(x, a, b), [Sample((T((2, 3, 4)), 0, 2)), Sample((T((3, 4)), -1, 0))], dtypes=ALL),
    OpInfo("permute", lambda m, x, *d: x.permute(*d), [Sample((T((2, 3, 4)), 2, 0, 1)), Sample((T((2, 3, 4)), (1, 2, 0)), desc="tuple")],
           dtypes=ALL),
    OpInfo("expand", lambda m, x, *s: x.expand(*s), [Sample((T((3, 1)), 3, 4)), Sample((T((3, 1)), 2, -1, 4)), Sample((T(()), 2, 3))],
           dtypes=ALL),
    OpInfo("expand_as", lambda m, x, y: x.expand_as(y), [Sample((T((1, 4)), T((3, 4), grad=False)))], dtypes=ALL),
    OpInfo("squeeze", lambda m, x, *d: m.squeeze(x, *d),
           [Sample((T((3, 1, 4, 1)),)), Sample((T((3, 1, 4, 1)), 1)), Sample((T((3, 1, 4, 1)), (1, 3)), desc="tuple"),
            Sample((T((3, 4)), 0), desc="non-1 dim"), Sample((T(()), 0), desc="0-dim")], dtypes=ALL),
    OpInfo("unsqueeze", lambda m, x, d: m.unsqueeze(x, d), [Sample((T((3, 4)), 0)), Sample((T((3, 4)), -1)), Sample((T((3, 4)), 1)),
                                                             Sample((T(()), 0))], dtypes=ALL),
    OpInfo("flatten", lambda m, x, *a: m.flatten(x, *a), [Sample((T((2, 3, 4)),)), Sample((T((2, 3, 4)), 1)), Sample((T((2, 3, 4)), 0, 1)),
                                                          Sample((T(()),), desc="0-dim")], dtypes=ALL),
    OpInfo("unflatten", lambda m, x, d, s: m.unflatten(x, d, s), [Sample((T((2, 12)), 1, (3, 4))), Sample((T((2, 12)), -1, (2, -1, 3)))],
           dtypes=ALL),
    OpInfo("narrow", lambda m, x, d, s, n: m.narrow(x, d, s, n), [Sample((T((4, 5)), 0, 1, 2)), Sample((T((4, 5)), 1, -3, 2))], dtypes=ALL),
    OpInfo("select", lambda m, x, d, i: m.select(x, d, i), [Sample((T((4, 5)), 0, 1)), Sample((T((4, 5)), 1, -1))], dtypes=ALL),
    OpInfo("unbind", lambda m, x, *d: m.unbind(x, *d), [Sample((T((3, 4)),)), Sample((T((3, 4)), 1))], dtypes=ALL),
    OpInfo("split", lambda m, x, s, *d: m.split(x, s, *d),
           [Sample((T((5, 4)), 2)), Sample((T((5, 4)), [1, 3], 1), desc="sections"), Sample((T((5, 4)), 3, -1))], dtypes=ALL),
    OpInfo("chunk", lambda m, x, c, *d: m.chunk(x, c, *d),
           [Sample((T((5, 4)), 2)), Sample((T((5, 4)), 3, 1)), Sample((T((6, 4)), 4))], dtypes=ALL),
    OpInfo("as_strided", lambda m, x, *a: m.as_strided(x, *a),
           [Sample((T((3, 4)), (2, 2), (1, 2))), Sample((T((3, 4)), (3, 3), (4, 1), 1), desc="offset"),
            Sample((T((3, 4)), (2, 2), (0, 1)), desc="overlapping")], dtypes=ALL),
    OpInfo("contiguous", lambda m, x: x.t().contiguous(), [Sample((T((3, 4)),))], dtypes=ALL),
    OpInfo("diagonal", lambda m, x, **k: m.diagonal(x, **k), [Sample((T((3, 4)),)), Sample((T((3, 4)),), {"offset": 1}),
                                                              Sample((T((2, 3, 4)),), {"offset": -1, "dim1": 1, "dim2": 2})],
           dtypes=ALL),

    # ---- __getitem__ / __setitem__
    *[OpInfo(f"getitem[{d}]", (lambda m, x, *i, _f=f: _f(x, *i)), [Sample((T(shape),) + extra)], dtypes=("float32", "float64", "int64", "bool", "float16"))
      for d, shape, f, extra in [
          ("int", (3, 4), lambda x: x[1], ()),
          ("neg int", (3, 4), lambda x: x[-1, 2], ()),
          ("slice", (5, 4), lambda x: x[1:4], ()),
          ("slice step", (6, 5), lambda x: x[::2, 1::2], ()),
          ("slice neg", (6, 5), lambda x: x[-4:-1, :-2], ()),
          ("slice out of range", (4, 3), lambda x: x[2:10], ()),
          ("None", (3, 4), lambda x: x[:, None], ()),
          ("ellipsis", (2, 3, 4), lambda x: x[..., 1], ()),
          ("ellipsis None", (2, 3, 4), lambda x: x[None, ..., 0], ()),
          ("list", (4, 3), lambda x: x[[0, 2, 2]], ()),
          ("list neg", (4, 3), lambda x: x[[-1, 0]], ()),
          ("two lists", (4, 3), lambda x: x[[0, 2], [1, 0]], ()),
          ("slice list", (4, 3), lambda x: x[:, [2, 0]], ()),
          ("int list", (3, 4, 5), lambda x: x[1, [0, 2]], ()),
          ("non-adjacent", (3, 4, 5), lambda x: x[[0, 1], :, [1, 2]], ()),
          ("adjacent middle", (3, 4, 5), lambda x: x[:, [0, 1], [1, 2]], ()),
          ("tensor index", (4, 3), lambda x, i: x[i], (Idx((2, 2), 4),)),
          ("tensor index dim1", (4, 3), lambda x, i: x[:, i], (Idx((5,), 3),)),
          ("bool mask", (3, 4), lambda x, mk: x[mk], (Mask((3, 4)),)),
          ("bool mask rows", (3, 4), lambda x, mk: x[mk], (Mask((3,)),)),
          ("bool mask dim1", (3, 4), lambda x, mk: x[:, mk], (Mask((4,)),)),
          ("bool mask + int", (2, 3, 4), lambda x, mk: x[mk, 1], (Mask((2, 3)),)),
          ("python bool", (3, 4), lambda x: x[True], ()),
          ("0-dim int tensor", (3, 4), lambda x, i: x[i], (Idx((), 3),)),
          ("int32 tensor index", (4, 3), lambda x, i: x[i], (Idx((3,), 4, dtype="int32"),)),
          ("list of bools", (3, 4), lambda x: x[[True, False, True]], ()),
          ("list of floats", (3, 4), lambda x: x[[0.5, 2.0]], ()),
          ("nested list", (4, 3), lambda x: x[[[0, 1], [2, 0]]], ()),
          ("numpy index", (4, 3), lambda x: x[np.array([2, 0])], ()),
          ("slice + list", (4, 5), lambda x: x[1:3, [0, 4, 2]], ()),
          ("ellipsis None int", (2, 3, 4), lambda x: x[..., None, 1], ()),
          ("empty slice", (4, 3), lambda x: x[3:1], ()),
          ("empty list", (4, 3), lambda x: x[:, []], ()),
          ("negative slice start", (5, 3), lambda x: x[-2:], ()),
          ("broadcast index tensors", (4, 5), lambda x, i, j: x[i, j], (Idx((3, 1), 4), Idx((2,), 5))),
          ("mask and list", (3, 4), lambda x, mk: x[[0, 2]][:, mk], (Mask((4,)),)),
          ("0-dim bool tensor", (3, 4), lambda x: x[x.sum() > -100], ()),
      ]],
    *[OpInfo(f"setitem[{d}]", (lambda m, x, v, *i, _f=f: _f(x.clone(), v, *i)),
             [Sample((T(shape), vspec) + ((Mask(shape),) if "mask" in d else (Perm(4, 2),) if "tensor" in d else ()))],
             dtypes=("float32", "float64", "int64", "bool", "float16"))
      for d, shape, f, vspec in [
          ("int", (3, 4), lambda y, v: _set(y, 1, v), T((4,))),
          ("slice step", (6, 5), lambda y, v: _set(y, (slice(None, None, 2), slice(1, None, 2)), v), T((3, 2))),
          ("broadcast value", (3, 4), lambda y, v: _set(y, (slice(None), 1), v), T(())),
          ("ellipsis", (2, 3, 4), lambda y, v: _set(y, (Ellipsis, 0), v), T((2, 3))),
          ("list", (4, 3), lambda y, v: _set(y, [0, 2], v), T((2, 3))),
          ("two lists", (4, 3), lambda y, v: _set(y, ([0, 2], [1, 0]), v), T((2,))),
          ("bool mask", (3, 4), lambda y, v, mk: _set(y, mk, v), T(())),
          ("tensor index", (4, 3), lambda y, v, i: _set(y, i, v), T((3,))),
          ("augmented", (4, 3), lambda y, v: _iadd(y, (slice(1, 3),), v), T((3,))),
          ("augmented list", (4, 3), lambda y, v: _iadd(y, [0, 3], v), T((2, 3))),
          ("None and ellipsis", (2, 3), lambda y, v: _set(y, (None, Ellipsis, 1), v), T((1, 2))),
      ]],
    # ---- large inputs: past the kernels' parallel grain (32768 elements), incl. strided layouts
    *[OpInfo(f"{name}_large", fn, samples, dtypes=dts, tol={"float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (0.1, 5e-2)})
      for name, fn, samples, dts in [
          ("exp", lambda m, x: m.exp(x), [Sample((T((200, 180), -3, 3),))], FLOATS),
          ("sigmoid", lambda m, x: m.sigmoid(x), [Sample((T((200, 180), -3, 3),))], ("float32", "float16")),
          ("add", lambda m, a, b: m.add(a, b, alpha=2), [Sample((T((200, 180)), T((200, 1))))], ("float32", "float64", "int64")),
          ("where", lambda m, c, a, b: m.where(c, a, b), [Sample((Mask((200, 180)), T((200, 180)), T((180,))))], ("float32", "int32")),
          ("sum", lambda m, x, **k: m.sum(x, **k), [Sample((T((200, 180)),), {"dim": 0}), Sample((T((200, 180)),), {"dim": 1}),
                                                  Sample((T((4, 200, 50)),), {"dim": (0, 2)})], ("float32", "float64", "int64")),
          ("amax", lambda m, x, **k: m.amax(x, **k), [Sample((T((200, 180), unique=True),), {"dim": 0})], ("float32",)),
          ("max_dim", lambda m, x: tuple(m.max(x, 1)), [Sample((T((200, 180), unique=True),))], ("float32", "int64")),
          ("var", lambda m, x: m.var(x, 0), [Sample((T((200, 180)),))], ("float32", "float64")),
          ("softmax", lambda m, x, d: m.softmax(x, d), [Sample((T((200, 180), -3, 3), 0)), Sample((T((200, 180), -3, 3), 1))],
           ("float32", "float64")),
          ("cumsum", lambda m, x, d: m.cumsum(x, d), [Sample((T((200, 180)), 0)), Sample((T((200, 180)), 1))], ("float32", "int64")),
          ("matmul", lambda m, a, b: m.matmul(a, b), [Sample((T((3, 64, 96)), T((96, 80))))], ("float32", "float64")),
          ("gather", lambda m, x, i: m.gather(x, 1, i), [Sample((T((200, 180)), Idx((200, 180), 180)))], ("float32",)),
          ("getitem", lambda m, x, i: x[i], [Sample((T((300, 150)), Idx((250,), 300)))], ("float32",)),
      ]],
    # ---- in-place ops on views of a tensor with history (CopySlices)
    *[OpInfo(f"inplace_view[{d}]", (lambda m, x, v, _f=f: _f(m, x.clone() * 1, v)), [Sample((T(shape), vspec))],
             dtypes=("float32", "float64"), fd=True)
      for d, shape, f, vspec in [
          ("row fill_", (3, 4), lambda m, y, v: _ret(y, y[1].fill_(3.0)), T(())),
          ("column zero_", (3, 4), lambda m, y, v: _ret(y, y[:, 0].zero_()), T(())),
          ("transposed row mul_", (3, 4), lambda m, y, v: _ret(y, y.t()[1].mul_(v)), T((3,))),
          ("step slice add_", (6, 2), lambda m, y, v: _ret(y, y[::2].add_(v)), T((2,))),
          ("diagonal copy_", (3, 3), lambda m, y, v: _ret(y, y.diagonal().copy_(v)), T((3,))),
          ("view exp_ then use", (2, 3), lambda m, y, v: (y.view(6)[2:].exp_() * v, y), T(())),
          ("select masked_fill_", (3, 4), lambda m, y, v: _ret(y, y[2].masked_fill_(y[2] > 0, 0.5)), T(())),
          ("two views", (4, 4), lambda m, y, v: _ret(y, y[0].mul_(v), y[:, 1].add_(y[3])), T((4,))),
      ]],
    # ---- call signatures: positional / keyword spellings and method forms, as torch accepts them
    # (torch has no derivative for floor_divide or for remainder with a number as input; ampgrad's
    # zero / -floor(a/b) gradients are not compared)
    *[OpInfo(f"api[{src}]", f, [Sample((T((3, 4), -2, 2, unique=True), T((3, 4), 0.5, 2)))], dtypes=("float32", "float64"), fd=False,
             noncontig=False,
             grad=not ("//" in src or "floor_divide" in src or src.startswith(("-3 %", "m.remainder(-5"))))
      for src, f in [(s, eval("lambda m, x, y: " + s)) for s in [
          "m.sum(x, 1, True)", "x.sum(1, keepdim=True, dtype=m.float64)", "m.sum(x, dim=(0, 1))", "x.sum(dim=[1])",
          "m.mean(x, 1, True)", "x.mean(-1)", "m.prod(x, 1, True)", "x.prod(dim=0, keepdim=False)",
          "tuple(m.max(x, 1, True))", "tuple(x.max(dim=1))", "x.max(1).values", "x.max(1).indices", "m.max(x, y)", "x.max(y)",
          "tuple(m.min(x, dim=0, keepdim=True))", "x.min()", "m.min(x, y)",
          "m.amax(x, (0, 1))", "x.amax(-1, True)", "m.amin(x, dim=1, keepdim=True)", "m.argmax(x, dim=1, keepdim=True)",
          "x.argmax(1)", "x.argmin()", "m.argmin(x, 0)",
          "m.var(x, 1, True, True)", "x.var(1, unbiased=False)", "m.var(x, dim=1, correction=0)", "m.std(x, (0, 1))",
          "x.std(dim=0, keepdim=True)", "m.std(x, unbiased=False)", "x.var(correction=2)",
          "m.norm(x)", "m.norm(x, 2, 1)", "x.norm(p=1, dim=1, keepdim=True)", "m.norm(x, float('inf'))", "x.norm(3)",
          "m.norm(x, 'fro')", "m.norm(x, dim=1)",
          "m.logsumexp(x, 1)", "x.logsumexp(dim=(0, 1), keepdim=True)", "m.cumsum(x, dim=1)", "x.cumsum(0)",
          "x.cumsum(1, dtype=m.float64)", "m.cumprod(x, 1)", "x.cumprod(dim=0)",
          "m.softmax(x, -1)", "m.softmax(x, 1, m.float64)", "x.softmax(0)", "x.log_softmax(dim=1)", "m.log_softmax(x, 0, dtype=m.float64)",
          "m.nn.functional.softmax(x, dim=1)", "m.nn.functional.log_softmax(x, 1)", "m.nn.functional.softmax(x)",
          "m.all(x > 0, dim=1)", "(x > 0).any()", "(x > 0).all(0, True)", "m.any(x > 0, 1, keepdim=True)",
          "m.split(x, 2, dim=1)", "x.split(2, 1)", "x.split([1, 2], dim=0)", "m.chunk(x, 2, dim=1)", "x.chunk(3)",
          "m.unbind(x, dim=1)", "x.unbind()", "m.flatten(x, start_dim=1)", "x.flatten(0, -1)", "x.unflatten(1, (2, 2))",
          "m.transpose(x, 0, 1)", "x.transpose(-1, -2)", "x.permute([1, 0])", "m.permute(x, (1, 0))",
          "x.view((4, 3))", "x.reshape((2, 6))", "x.reshape(-1, 2)", "m.reshape(x, (12,))",
          "x.view_as(y)", "x.reshape_as(y.t())", "x[None].expand(2, 3, 4)", "x[:, :1].expand_as(y)", "x.repeat((2, 1))",
          "x.flip(0)", "x.flip(0, 1)", "m.flip(x, [0])", "m.roll(x, 1, 0)", "x.roll(shifts=(1, 1), dims=(0, 1))", "m.roll(x, -1)",
          "m.narrow(x, 0, 1, 2)", "x.narrow(1, 1, 2)", "x.select(1, -1)", "m.select(x, 0, 2)", "x.squeeze()", "x[:, None].squeeze(1)",
          "x[None, :, None].squeeze((0, 2))", "x.unsqueeze(dim=0)", "m.unsqueeze(x, -1)", "x.t()", "x.T", "x.mT", "x.contiguous()",
          "m.stack((x, y), dim=1)", "m.stack([x, y], -1)", "m.cat((x, y), dim=-1)", "m.cat([x, y])", "m.concat((x, y))",
          "m.hstack((x, y))", "m.vstack((x, y))", "m.tile(x, (2,))", "x.tile(2, 1)",
          "m.gather(x, 1, index=m.tensor([[0], [1], [2]]))", "x.gather(0, m.tensor([[0, 1, 2, 0]]))",
          "x.scatter(1, m.tensor([[0], [1], [2]]), y)", "x.scatter(1, m.tensor([[0], [1], [2]]), 2.5)",
          "m.scatter(x, 0, m.tensor([[2, 1, 0, 1]]), 1.5)",
          "x.scatter_add(0, m.tensor([[2, 1, 0, 1]]), y)", "x.index_select(1, m.tensor([0, 3]))",
          "x.index_add(0, m.tensor([0, 2]), y[:2], alpha=2)", "x.index_copy(1, m.tensor([3, 0]), y[:, :2])",
          "x.masked_fill(x > 0, 0.0)", "m.masked_fill(x, y > 1, -1.0)", "x.masked_select(x > 0)",
          "m.where(x > 0, x, 0.0)", "m.where(x > 0, 1.0, y)", "x.where(x > 0, y)", "m.where(x > 0)", "m.nonzero(x > 0)",
          "(x > 0).nonzero()", "m.nonzero(x > 0, as_tuple=True)", "m.tril(x, -1)", "x.triu(1)", "x.tril(diagonal=1)",
          "m.clamp(x, min=-0.5)", "x.clamp(-1, 1)", "x.clamp(max=0.5)", "m.clamp(x, y * -1, y)", "x.clamp(min=y * -1)",
          "m.clip(x, -1, 1)", "x.clip(max=1)", "x.clamp_min(0.3)", "x.clamp_max(-0.3)", "m.clamp_min(x, 0.1)",
          "m.round(x, decimals=1)", "x.round(decimals=2)", "x.round()", "m.nan_to_num(x / 0, nan=0.0, posinf=1.0)",
          "(x / 0).nan_to_num(0.0)", "m.nn.functional.gelu(x, approximate='tanh')", "m.nn.functional.silu(x)",
          "m.nn.functional.relu(x)", "m.nn.functional.softplus(x, beta=2)", "m.nn.functional.softplus(x, 2, 0.9)",
          "m.nn.functional.sigmoid(x)", "m.nn.functional.tanh(x)", "x.relu()", "x.sigmoid()", "x.exp()", "x.abs()",
          "x.add(y, alpha=2)", "m.add(x, 1.5)", "m.add(2, x)", "m.sub(x, y, alpha=0.5)", "x.sub(1)", "m.subtract(x, y)",
          "x.mul(2)", "m.multiply(x, y)", "x.div(y, rounding_mode='floor')", "m.div(x, 2, rounding_mode='trunc')",
          "m.true_divide(x, y)", "m.divide(x, y)", "x.floor_divide(y)", "x // 2", "2 // y", "x % y", "-3 % y", "x.fmod(1.5)",
          "m.remainder(x, 1.5)", "m.remainder(-5, y)", "x.pow(2)", "m.pow(x, y)", "m.pow(2, x)", "2 ** x", "x ** y",
          "x.atan2(y)", "m.arctan2(x, y)", "x.maximum(y)", "m.minimum(x, y)", "x.eq(y)", "x.ne(0)", "m.lt(x, 0.5)", "x.le(y)",
          "x.gt(0)", "m.ge(x, y)", "m.greater(x, y)", "m.less_equal(x, 0)", "m.not_equal(x, y)", "x.lerp(y, 0.5)",
          "m.lerp(x, y, x.sigmoid())", "m.addcmul(x, x, y, value=0.5)", "x.addcmul(x, y)", "m.addcdiv(x, x, y, value=2)",
          "x.addcdiv(x, y)", "x.matmul(y.t())", "x @ y.t()", "m.mm(x, y.t())", "x.mm(y.t())", "m.mv(x, y[0])", "x.mv(y[0])",
          "m.dot(x[0], y[0])", "x[0].dot(y[0])", "m.outer(x[0], y[0])", "m.ger(x[0], y[0])", "x[0].outer(y[:, 0])",
          "m.addmm(y[:, :3], x, y.t(), beta=0.5, alpha=2)", "y[:, :3].addmm(x, y.t())", "m.addmv(y[:, 0], x, y[0], alpha=2)",
          "m.addr(x, x[:, 0], y[0])", "m.bmm(x[None], y.t()[None])", "x[None].bmm(y.t()[None])",
          "m.addbmm(x[:, :3], x[None], y.t()[None])", "m.baddbmm(x[None, :, :3], x[None], y.t()[None], alpha=0.5)",
          "m.nn.functional.linear(x, y)", "m.nn.functional.linear(x, y, y[:, 0])", "m.inner(x, y)",
          "m.exp2(x)", "x.expm1()", "x.log1p()", "m.rsqrt(y)", "y.reciprocal()", "m.square(x)", "x.square()", "m.frac(x)",
          "m.trunc(x)", "m.fix(x)", "m.negative(x)", "m.absolute(x)", "m.arcsin(x / 3)", "m.logical_not(x > 0)",
          "m.logical_and(x > 0, y > 1)", "(x > 0).logical_or(y > 1)", "m.logical_xor(x > 0, y > 1)",
          "m.bitwise_and(x > 0, y > 1)", "(x > 0) & (y > 1)", "(x > 0) | (y > 1)", "(x > 0) ^ (y > 1)", "~(x > 0)",
          "x.isnan()", "m.isinf(x / 0)", "x.isfinite()", "m.isclose(x, y)", "m.allclose(x, x)", "x.equal(x)",
          "m.count_nonzero(x > 0)", "x.numel()", "x.dim()", "x.size(1)", "x.shape", "x.ndim", "x.is_contiguous()",
          "x.t().is_contiguous()", "x.t().stride()", "x[1:, ::2].stride()", "x[1:, ::2].storage_offset()", "x.element_size()",
          "x.dtype", "x.is_floating_point()", "(x > 0).dtype", "x.long().dtype", "x.int().float().dtype", "x.half().dtype",
          "x.bfloat16().dtype", "x.double().dtype", "x.bool().dtype", "x.to(m.float16)", "x.to(dtype=m.int32)", "x.to(y)",
          "x.type(m.float64)", "x.type_as(y.int())", "x.tolist()", "x[0, 0].item()", "x.sum().item()", "float(x[0, 1])",
          "int(x[0, 1])", "bool(x[0, 1] > 0)", "len(x)", "list(x.shape)", "x[0].numpy().shape",
          # result layouts follow the operands' memory order (strides, contiguity, view-ability)
          "(x.t() * 2).stride()", "(x.t() + y.t()).is_contiguous()", "(y + x.t()).stride()", "(x.t() + y).stride()",
          "x.t().clone().stride()", "x.t().contiguous().stride()", "x.t().double().stride()", "(x.t()[::2] * 1).stride()",
          "x.t()[::2].clone().stride()", "(x.t() > 0).stride()", "m.where(x.t() > 0, x.t(), 0.0).stride()",
          "m.exp(x.t()).stride()", "(x.t()[:, None] * m.ones(2, 1)).stride()", "x.t().reshape(-1).stride()",
          "(x.t() * 1).reshape(-1)", "m.cat([x.t(), y.t()]).stride()", "x.t().sum(0).stride()",
          "x[:1].repeat(2, 1).stride()", "x.repeat(1, 1).stride()", "x.t().flip(0).stride()", "x[:, :1].expand(3, 5).stride()",
          "type(x.split(2)).__name__", "type(m.chunk(x, 2)).__name__", "type(x.unbind()).__name__",
          "x.t().index_add(0, m.tensor([0, 1]), y.t()[:2]).stride()", "x.t().index_copy(0, m.tensor([1, 0]), y.t()[:2]).stride()",
          "x.t().index_put((m.tensor([0, 1]),), y.t()[:2]).stride()", "x.t().scatter(0, m.tensor([[0, 1, 2]]), y.t()[:1]).stride()",
          "x.t().scatter_add(0, m.tensor([[0, 1, 2]]), y.t()[:1]).stride()", "x.t().masked_fill(x.t() > 0, 0.0).stride()",
          "x.t().gather(0, m.tensor([[0, 1, 2]] * 4)).stride()",
          "x.movedim(0, 1)", "m.movedim(x[None], (0, 1), (2, 0))", "x[None].moveaxis(-1, 0)", "m.moveaxis(x, 1, 0).stride()",
          # results that must not alias their input (writing to them leaves x alone)
          "(x.repeat(1, 1).mul_(2), x)", "(x[:1].repeat(2, 1).add_(1), x)", "(m.tile(x, (1,)).zero_(), x)", "(x.flip(0).zero_(), x)",
          "(x.clone().zero_(), x)", "(x.contiguous().t().contiguous().zero_(), x)",
      ]]],
    OpInfo("setitem[python scalar]", lambda m, x: _set(x.clone(), (slice(None), 0), 2), [Sample((T((3, 4)),))],
           dtypes=("float32", "float64", "int64", "bool")),
]


def _ret(y, *_):
    return y


def _iadd(y, idx, v):
    y[idx] += v
    return y


def _set(y, idx, v):
    y[idx] = v
    return y


def _dt(m, k):
    """Maps a dtype name in kwargs to module m's dtype object."""
    if "dtype" in k and isinstance(k["dtype"], str):
        k = dict(k, dtype=getattr(m, k["dtype"]))
    return k


# Reductions over special values (nan wins in max/min/argmax, inf in sums, -inf rows in softmax).
RED_SPECIAL = [[1.0, NAN, 3.0, -2.0], [INF, -INF, 2.0, 0.5], [-0.0, 0.0, -1.0, -INF], [7.0, 7.0, -7.0, 1e30]]
for _name, _kws in [("max", [{}]), ("min", [{}]), ("max_dim", [{"dim": 0}, {"dim": 1}]), ("min_dim", [{"dim": 1}]),
                    ("amax", [{}, {"dim": 0}, {"dim": 1}]), ("amin", [{"dim": 1}]), ("argmax", [{}, {"dim": 0}, {"dim": 1}]),
                    ("argmin", [{}, {"dim": 1}]), ("sum", [{}, {"dim": 1}]), ("mean", [{"dim": 0}]), ("prod", [{"dim": 1}]),
                    ("cumsum", [{"dim": 1}]), ("cumprod", [{"dim": 0}]), ("softmax", [{"dim": 1}, {"dim": 0}]),
                    ("log_softmax", [{"dim": 1}]), ("logsumexp", [{"dim": 1}, {"dim": 0}]), ("norm", [{}, {"p": 1, "dim": 1},
                    {"p": float("inf"), "dim": 1}, {"p": 3, "dim": 0}]), ("var", [{"dim": 1}]), ("std", [{}]),
                    ("all", [{"dim": 1}]), ("any", [{"dim": 0}]), ("nan_to_num", [{}])]:
    _op = next(op for op in OPS if op.name == _name)
    for _kw in _kws:
        _op.samples.append(Sample((Const(RED_SPECIAL),), dict(_kw), "special values", grad=False))

# Empty and degenerate reductions: sum/prod of nothing, mean of nothing (nan), size-1 and 0-dim.
for _name, _smp in [("sum", [Sample((T((0, 3)),), {"dim": 0}, "empty dim", grad=False), Sample((T((0, 3)),), {}, "empty", grad=False)]),
                    ("mean", [Sample((T((0, 3)),), {"dim": 0}, "empty dim", grad=False)]),
                    ("prod", [Sample((T((0, 3)),), {"dim": 0}, "empty dim"), Sample((T((0, 3)),), {}, "empty")]),
                    ("var", [Sample((T((2, 3)),), {"dim": 1, "correction": 5}, "negative dof", grad=False),
                             Sample((T((3, 1)),), {"dim": 1}, "single element")]),
                    ("std", [Sample((T((3, 1)),), {"dim": 1, "correction": 0}, "single element")]),
                    ("softmax", [Sample((T(()),), {"dim": 0}, "0-dim"), Sample((T((3, 1)),), {"dim": 1}, "size-1 dim"),
                                 Sample((T((0, 3)),), {"dim": 1}, "empty", grad=False)]),
                    ("log_softmax", [Sample((T(()),), {"dim": 0}, "0-dim"), Sample((T((3, 1)),), {"dim": 1}, "size-1 dim")]),
                    ("logsumexp", [Sample((T(()),), {"dim": 0}, "0-dim"), Sample((T((0, 3)),), {"dim": 0}, "empty", grad=False),
                                   Sample((Const([[NAN], [-INF], [INF]]),), {"dim": 1}, "lone nan", grad=False),
                                   Sample((Const([[NAN, -INF], [-INF, NAN], [-INF, -INF]]),), {"dim": 1}, "nan and -inf", grad=False)]),
                    ("cumsum", [Sample((T((0, 3)),), {"dim": 0}, "empty", grad=False)]),
                    ("cumprod", [Sample((T((3, 1)),), {"dim": 1}, "size-1 dim"), Sample((T(()),), {"dim": 0}, "0-dim")]),
                    ("max_dim", [Sample((T((3, 1)),), {"dim": 1}, "size-1 dim")]),
                    ("amax", [Sample((T((0, 3)),), {"dim": 1}, "empty kept dim", grad=False)]),
                    ("argmax", [Sample((T((3, 1)),), {"dim": 1}, "size-1 dim")]),
                    ("all", [Sample((T((0, 3)),), {}, "empty"), Sample((T((0, 3)),), {"dim": 0}, "empty dim")]),
                    ("any", [Sample((T((0, 3)),), {}, "empty"), Sample((T((0, 3)),), {"dim": 1}, "empty rows")])]:
    next(op for op in OPS if op.name == _name).samples.extend(_smp)

# Near-zero values (relative tolerance, float32/float64) and gradients at special points for every
# elementwise op: each op with a flat "special values" sample (U, B, gelu, silu, softplus) gets both,
# with the same keyword arguments; the ops below without one get them explicitly.
def _flat_const(a):
    return isinstance(a, Const) and isinstance(a.data, list) and a.data and not isinstance(a.data[0], list)


for _op in OPS:
    _kws, _n, _finite, _pairs = [], 0, True, None
    for _s in list(_op.samples):
        if _s.desc.startswith("special values") and not _s.special and all(_flat_const(a) for a in _s.args):
            if _s.kwargs not in _kws:
                _kws.append(_s.kwargs)
            _n = len(_s.args)
            _pairs = (NZM_A, NZM_B) if _s.args[0].data is _SPM_A else None
            _finite = _finite and not any(math.isinf(v) for v in _s.args[0].data)
    if not _kws or not any(d in _op.dtypes for d in ("float32", "float64")):
        continue
    for _kw in _kws:
        _op.samples.append(near_zero_sample(_kw, _n, pairs=_pairs))
        if _op.grad:
            _vals = [v for v in GRAD_SPECIAL if not math.isinf(v)] if _finite else None
            _op.samples.append(special_grad_sample(_kw, _n, values=_vals if _n == 1 else None))

for _name, _kws in [("reciprocal", [{}]), ("abs", [{}]), ("relu", [{}]), ("nn.functional.relu", [{}]),
                    ("frac", [{}]), ("floor", [{}]), ("ceil", [{}]), ("trunc", [{}]), ("round", [{}, {"decimals": 1}]),
                    ("clamp", [{"min": -1, "max": 1}, {"min": -0.5}, {"max": 0.5}, {"min": 1.5, "max": -1.0}]),
                    ("clip", [{"min": -1.0, "max": 1.0}]), ("Tensor.clamp_", [{"min": -1, "max": 1}])]:
    _op = next(op for op in OPS if op.name == _name)
    for _kw in _kws:
        _op.samples.append(near_zero_sample(_kw))
        _op.samples.append(Sample((Const(SPECIAL),), dict(_kw), "special values", grad=False, special=True))
        if _op.grad:
            _op.samples.append(special_grad_sample(_kw, values=GRAD_SPECIAL + [-0.5, 1.5]))
for _name in ("maximum", "minimum", "max_binary", "min_binary", "pow", "lerp"):
    _op = next(op for op in OPS if op.name == _name)
    if _name == "lerp":  # weights 0, 0.5 (the formula switch), 1, and out of [0, 1]
        _op.samples += [Sample((Const(NZ_A[:40]), Const(NZ_B[:40]), 0.25), {}, "near zero", grad=False, special=True,
                               tol=REL_TOL, dtypes=("float32", "float64")),
                        Sample((Const(GS_A), Const(GS_B), Const([0.0, 0.5, 1.0, -1.0, 2.0, 0.25, 0.75, 0.0] * 8)), {},
                               "special grad", special=True, dtypes=("float32", "float64"))]
        continue
    _op.samples += [near_zero_sample(n=2), special_grad_sample(n=2)]
    if _name == "pow":  # Python-number exponents (PowBackward0), exponent 0 above all, and a number base
        _op.samples += [special_grad_sample(), near_zero_sample()]
        for _e in (0, 0.0, 0.5, 2, -1, 3, -0.5):
            _op.samples.append(Sample((Const(GRAD_SPECIAL), _e), {}, f"special grad exponent {_e!r}", special=True,
                                      dtypes=("float32", "float64")))
            _op.samples.append(Sample((Const(NEAR_ZERO), _e), {}, f"near zero exponent {_e!r}", grad=False, special=True,
                                      tol=REL_TOL, dtypes=("float32", "float64")))
        _op.samples.append(Sample((2, Const(GRAD_SPECIAL)), {}, "special grad base 2", special=True, dtypes=("float32", "float64")))
        _op.samples.append(Sample((0.0, Const(GRAD_SPECIAL)), {}, "special grad base 0", special=True, dtypes=("float32", "float64")))
for _op in OPS:  # pow(x, special values): the kernel itself at the special pairs
    if _op.name == "pow":
        _op.samples.append(Sample((Const(_SP_A), Const(_SP_B)), {}, "special values", grad=False, special=True))
for _name, _smp in [
        ("addcmul", [Sample((Const(NZ_A[:40]), Const(NZ_B[:40]), Const(NZ_A[40:80])), {"value": 0.5}, "near zero", grad=False,
                            special=True, tol=REL_TOL, dtypes=("float32", "float64"))]),
        ("addcdiv", [Sample((Const(GS_A), Const(GS_B), Const(GS_A[::-1])), {}, "special grad", special=True, dtypes=("float32", "float64"))]),
        # gradients at the points where the formulas divide by zero or meet ties
        ("norm", [Sample((Const([[0.0, 0.0, 0.0], [1.0, -2.0, 2.0], [0.0, -0.0, 0.0], [3.0, -3.0, 1.0]]),), {"p": _p, "dim": 1},
                         f"special grad zero rows p={_p}", special=True, dtypes=("float32", "float64"))
                  for _p in (2, 1, 3, 0.5, float("inf"), float("-inf"))] +
                 [Sample((Const([[0.0, 0.0], [-0.0, 0.0]]),), {}, "special grad zero matrix", special=True, dtypes=("float32", "float64"))]),
        ("std", [Sample((Const([[1.5, 1.5, 1.5], [1.0, 2.0, 4.0], [0.0, 0.0, 0.0]]),), {"dim": 1}, "special grad constant rows",
                        special=True, dtypes=("float32", "float64")),
                 Sample((Const([[2.0, 2.0], [2.0, 2.0]]),), {}, "special grad constant", special=True, dtypes=("float32", "float64"))]),
        ("var", [Sample((Const([[1.5, 1.5, 1.5], [1.0, 2.0, 4.0]]),), {"dim": 1}, "special grad constant rows",
                        special=True, dtypes=("float32", "float64"))]),
        ("amax", [Sample((Const([[1.0, 3.0, 3.0, 0.0], [-INF, -INF, -INF, -INF], [2.0, 2.0, 2.0, 2.0]]),), {"dim": 1},
                         "special grad ties", special=True, dtypes=("float32", "float64"))]),
        ("amin", [Sample((Const([[1.0, 0.0, -0.0, 3.0], [INF, INF, 5.0, INF]]),), {"dim": 1}, "special grad ties",
                         special=True, dtypes=("float32", "float64"))]),
        ("logsumexp", [Sample((Const([[0.0, -INF, 1.0], [2.0, 2.0, 2.0], [1e-30, -1e-30, 0.0]]),), {"dim": 1}, "special grad",
                              special=True, dtypes=("float32", "float64"))]),
        ("softmax", [Sample((Const([[0.0, -INF, 1.0], [3.0, 3.0, 3.0], [1e-30, -1e-30, 0.0]]),), {"dim": 1}, "special grad",
                            special=True, dtypes=("float32", "float64"))]),
        ("log_softmax", [Sample((Const([[0.0, -INF, 1.0], [3.0, 3.0, 3.0]]),), {"dim": 1}, "special grad", special=True,
                                dtypes=("float32", "float64"))]),
        ("prod", [Sample((Const([[0.0, 0.0, 2.0], [0.0, 3.0, -0.0], [1e-30, 1e-30, 4.0]]),), {"dim": 1}, "special grad zeros",
                         special=True, dtypes=("float32", "float64"))]),
        ("cumprod", [Sample((Const([[0.0, 2.0, 0.0, 3.0], [-0.0, 1.0, 1.0, 1.0]]),), {"dim": 1}, "special grad zeros",
                            special=True, dtypes=("float32", "float64"))]),
        # long rows: a float32 sum must be accurate to a few ulp (torch accumulates in double or
        # cascades), which an fp32 running sum is not
        *[(_n, [Sample((T((1 << 18,), 0.0, 1.0),), _kw, "long row", grad=False, special=True,
                       tol={"float32": (0, 2e-6), "float64": (0, 1e-12)}, dtypes=("float32", "float64")),
                Sample((T((64, 4096), 0.0, 1.0),), dict(_kw, dim=1), "long rows", grad=False, special=True,
                       tol={"float32": (0, 2e-6), "float64": (0, 1e-12)}, dtypes=("float32",)),
                Sample((T((4096, 64), 0.0, 1.0),), dict(_kw, dim=0), "long columns", grad=False, special=True,
                       tol={"float32": (0, 2e-6), "float64": (0, 1e-12)}, dtypes=("float32",))])
          for _n, _kw in [("sum", {}), ("mean", {}), ("var", {}), ("std", {}), ("norm", {}), ("logsumexp", {"dim": 0})]],
        ("cumsum", [Sample((T((1 << 18,), 0.0, 1.0),), {"dim": 0}, "long row", grad=False, special=True,
                           tol={"float32": (0, 2e-6), "float64": (0, 1e-12)}, dtypes=("float32", "float64"))]),
]:
    next(op for op in OPS if op.name == _name).samples.extend(_smp)

# In-place variants of the elementwise ops (x.clone().exp_(), a.clone().add_(b)): torch's cast rule
# (the result must fit self's dtype), broadcasting into self, and autograd through the rebase.
# The unary ones are the op table's plain unary rows (the GEN rows of csrc/ops/op_list.def, Note [Op
# table]; read from the table's text, as this module imports no ampgrad) that torch also has as a
# Tensor method (torch has no Tensor.silu_), plus the two written by hand.
_OP_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "csrc", "ops", "op_list.def")
_UNARY_INPLACE = [n for n in re.findall(r"^AG_UNARY\((\w+),.*, GEN\)", open(_OP_TABLE).read(), re.M)
                  if n != "silu"] + ["logical_not", "bitwise_not"]
assert len(_UNARY_INPLACE) >= 30, _UNARY_INPLACE
_BINARY_INPLACE = "add sub mul div fmod remainder atan2 eq lt bitwise_and logical_or pow".split()
for _op in list(OPS):
    if _op.name in _UNARY_INPLACE:
        OPS.append(OpInfo(f"inplace.{_op.name}_", lambda m, x, _n=_op.name: getattr(x.clone(), _n + "_")(),
                          [s for s in _op.samples if s.desc != "0-dim"] + [Sample((T(()),), desc="0-dim")],
                          dtypes=_op.dtypes, tol=_op.tol, noncontig=False, fd=False, grad=_op.inplace_grad))
    if _op.name in _BINARY_INPLACE:
        # torch's logical_*_ keep the old grad_fn (the gradient passes through values they replaced);
        # ampgrad gives those elements zero gradient, as comparisons' eq_ do in both: not compared.
        OPS.append(OpInfo(f"inplace.{_op.name}_", lambda m, a, b, _n=_op.name, **k: getattr(a.clone(), _n + "_")(b, **k),
                          _op.samples, dtypes=_op.dtypes, tol=_op.tol, noncontig=False, fd=False,
                          grad=(_op.grad or _op.name in ("eq", "lt")) and not _op.name.startswith("logical")))

# ---------------------------------------------------------------- nn.functional
# The per-function cases that lived in test_nn.py (FCASES, float32 / CPU / first order only): the
# same generic checks as every other entry (forward in each dtype, gradients vs torch, finite
# differences, gradgrad, forward AD, non-contiguous inputs, autocast, devices). Targets and class
# weights are non-differentiable specs; keyword tensors (mse_loss's weight, pos_weight) are passed
# positionally and mapped by the entry's fn.
NN_TOL = {"float32": (1e-5, 1e-5), "float16": (5e-3, 5e-3), "bfloat16": (5e-2, 5e-2)}
NN_GRAD_TOL = {"float32": (1e-4, 1e-4), "float16": (2e-2, 2e-2), "bfloat16": (1e-1, 1e-1)}
REDUCTIONS = ("mean", "sum", "none")
# Known ampgrad bugs and gaps (reasons shown by pytest; strict on the CPU, so a fix shows up as XPASS).
XF_LOWP = ("torch's CPU has no float16/bfloat16 kernel here and raises NotImplementedError; ampgrad computes one instead "
           "of refusing the same way")
_CE_T = [1, 4, 0, -100, 2, 3]
_CE_T2 = [[1, 0, 2], [4, -100, 1], [0, 0, 3], [2, 1, 1]]
_SGN = [[1.0, -1, 1, -1], [-1, 1, 1, -1], [1, 1, -1, -1]]
_MT = [[3, 0, -1, 1], [0, 1, 2, -1], [2, 2, -1, 0]]


def Lbl(data):
    """Class labels (int64, never differentiable)."""
    return Const(data, "int64")


def Pos(*shape, grad=True):
    """Positive values in (0.05, 1): probabilities, weights, targets of kl_div / bce."""
    return T(shape, 0.05, 1.0, grad=grad)


def NN(name, samples, fn=None, tol=None, grad_tol=None, **kw):
    """An nn.functional entry called as m.nn.functional.<name>(*args, **kwargs) unless fn is given."""
    f = fn or (lambda m, *a, _n=name, **k: getattr(m.nn.functional, _n)(*a, **k))
    return OpInfo(f"nn.functional.{name}", f, samples, dtypes=kw.pop("dtypes", FLOATS), tol=dict(NN_TOL, **(tol or {})),
                  grad_tol=dict(NN_GRAD_TOL, **(grad_tol or {})), **kw)


def _kl_div_warns(m, *a, **k):
    """kl_div with reduction="mean" warns (in torch and ampgrad): ampgrad's warning is expected
    (warnings from ampgrad are errors in the test suite otherwise), and must come."""
    if k.get("reduction", "mean") != "mean":
        return m.nn.functional.kl_div(*a, **k)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = m.nn.functional.kl_div(*a, **k)
    assert any(re.match("reduction: 'mean' divides the total loss", str(w.message)) for w in got), "kl_div: no 'mean' warning"
    return out


def _red(*args, desc="", **kw):
    return [Sample(args, dict(kw, reduction=r), f"{desc}{' ' if desc else ''}{r}".strip()) for r in REDUCTIONS]


NN_OPS = [
    NN("pad", [Sample((T((2, 3, 4, 5)),), {"pad": (1, 2, 2, 0), "mode": md}, md) for md in ("constant", "reflect", "replicate", "circular")]
       + [Sample((T((3, 4)),), {"pad": (-1, 2), "value": 2.5}, "negative pad, value")]),
    NN("cross_entropy",
       [s for ls in (0.0, 0.15) for s in
        _red(T((6, 5)), Lbl(_CE_T), label_smoothing=ls, desc=f"ls={ls}")
        + _red(T((4, 5, 3)), Lbl(_CE_T2), Pos(5, grad=False), label_smoothing=ls, desc=f"weight 3-d ls={ls}")
        + _red(T((4, 5)), Pos(4, 5), label_smoothing=ls, desc=f"probabilities ls={ls}")]
       + [Sample((T((5,)), Lbl(2)), {}, "unbatched")]),
    NN("nll_loss", _red(T((6, 5)), Lbl(_CE_T), Pos(5, grad=False), desc="weight")
       + _red(T((6, 5)), Lbl([abs(v) % 5 for v in _CE_T]), ignore_index=4, desc="ignore_index")),
    NN("mse_loss", _red(T((3, 4)), T((3, 4))) + _red(T((3, 4)), T((3, 4)), Pos(3, 4), desc="weight"),
       fn=lambda m, a, b, *w, **k: m.nn.functional.mse_loss(a, b, **k, **({"weight": w[0]} if w else {}))),
    NN("l1_loss", _red(T((3, 4)), T((3, 4)))),
    NN("smooth_l1_loss", _red(T((3, 4)), T((3, 4)), beta=0.6) + _red(T((3, 4)), T((3, 4)), desc="default beta")),
    NN("huber_loss", _red(T((3, 4)), T((3, 4)), delta=0.8) + _red(T((2, 3, 4)), T((2, 3, 4)), desc="default delta")),
    NN("kl_div", [s for lt in (False, True) for s in _red(T((3, 4)), Pos(3, 4), log_target=lt, desc=f"log_target={lt}")]
       + [Sample((T((3, 4)), Pos(3, 4)), {"reduction": "batchmean"}, "batchmean")], ag_fn=_kl_div_warns),
    NN("binary_cross_entropy", _red(T((3, 4), 0.02, 0.98), Pos(3, 4), Pos(4, grad=False), desc="weight")),
    NN("binary_cross_entropy_with_logits", _red(T((3, 4)), Pos(3, 4), Pos(4, grad=False), Pos(4, grad=False), desc="weight pos_weight"),
       fn=lambda m, a, b, w, pw, **k: m.nn.functional.binary_cross_entropy_with_logits(a, b, w, pos_weight=pw, **k)),
    NN("binary_cross_entropy_with_logits_plain", _red(T((3, 4), -6.0, 6.0), Pos(3, 4)),
       fn=lambda m, a, b, **k: m.nn.functional.binary_cross_entropy_with_logits(a, b, **k)),
    NN("binary_cross_entropy_plain", _red(T((2, 5), 0.02, 0.98), Pos(2, 5)),
       fn=lambda m, a, b, **k: m.nn.functional.binary_cross_entropy(a, b, **k)),
    NN("hinge_embedding_loss", _red(T((3, 4)), Const(_SGN, grad=False), 0.7)),
    NN("margin_ranking_loss", _red(T((3, 4)), T((3, 4)), Const(_SGN, grad=False), 0.3)),
    NN("soft_margin_loss", _red(T((3, 4)), Const(_SGN, grad=False))),
    NN("cosine_embedding_loss", _red(T((4, 5)), T((4, 5)), Const(_SGN[0], grad=False), 0.2)),
    NN("poisson_nll_loss", [s for li, full in ((True, False), (False, True)) for s in
                            _red(Pos(3, 4), T((3, 4), 0.15, 3.0, grad=False), log_input=li, full=full,
                                 desc=f"log_input={li} full={full}")]),
    NN("triplet_margin_loss", [s for swap, pn in ((False, 2), (True, 1)) for s in
                               _red(T((3, 4)), T((3, 4)), T((3, 4)), 0.5, pn, swap=swap, desc=f"swap={swap} p={pn}")]),
    NN("multi_margin_loss", [s for pm in (1, 2) for s in _red(T((3, 4)), Lbl([1, 0, 3]), pm, 0.8, Pos(4, grad=False), desc=f"p={pm}")]
       + [Sample((T((5,)), Lbl(2)), {}, "unbatched")], xfail={"forward-float16": XF_LOWP, "forward-bfloat16": XF_LOWP}),
    NN("multilabel_margin_loss", _red(T((3, 4)), Lbl(_MT)) + [Sample((T((3,)), Lbl([1, -1, 0])), {}, "unbatched")],
       xfail={"forward-float16": XF_LOWP, "forward-bfloat16": XF_LOWP}),
    OpInfo("trace", lambda m, x: m.trace(x), [Sample((T((3, 5)),)), Sample((T((4, 4)),), desc="square")], dtypes=FLOATS,
           tol=NN_TOL, grad_tol=NN_GRAD_TOL),
    NN("layer_norm", [Sample((T((3, 4)), (4,), T((4,)), T((4,)))), Sample((T((2, 3, 4)), (3, 4)), {}, "no affine"),
                      Sample((T((2, 3, 4)), (3, 4), T((3, 4))), {"eps": 1e-3}, "weight only, eps")]),
    NN("group_norm", [Sample((T((2, 6, 5)), 3, T((6,)), T((6,)), 1e-3)), Sample((T((2, 4, 3, 2)), 2), {}, "4-d no affine")]),
    NN("prelu", [Sample((T((2, 3, 4)), T((3,)))), Sample((T((2, 3, 4)), T((1,))), desc="shared weight")]),
    # (a wide sample reaches every piece: hardtanh's +-1, hardsigmoid / hardswish's +-3, relu6's 6)
    *[NN(n, [Sample((T((4, 6)),), dict(kw)), Sample((T((4, 6), -8, 8),), dict(kw), "wide")]) for n, kw in [
        ("leaky_relu", {}), ("elu", {}), ("celu", {}), ("selu", {}), ("hardtanh", {}), ("relu6", {}), ("hardsigmoid", {}),
        ("hardswish", {}), ("mish", {}), ("logsigmoid", {}), ("softsign", {}), ("tanhshrink", {}), ("glu", {}),
        ("softmin", {"dim": 1}), ("sigmoid", {}), ("tanh", {})]],
    NN("cosine_similarity", [Sample((T((4, 6)), T((1, 6)), 0), desc="broadcast"), Sample((T((4, 6)), T((4, 6))), desc="dim=1")],
       # the broadcast operand's gradient is a sum of nearly cancelling terms: float32 noise ~1e-5
       grad_tol={"float32": (2e-4, 2e-4)}),
    NN("normalize", [Sample((T((4, 6)), 1.5, 0)), Sample((T((4, 6)),), {}, "defaults")]),
    NN("pairwise_distance", [Sample((T((4, 6)), T((4, 6))), {"keepdim": True})]),
    NN("pdist", [Sample((T((5, 3)),)), Sample((T((5, 3)), 1), desc="p=1")],
       xfail={"forward-float16": XF_LOWP, "forward-bfloat16": XF_LOWP}),
    NN("bilinear", [Sample((T((2, 3, 4)), T((2, 3, 5)), T((6, 4, 5)), T((6,))))], tol={"bfloat16": (1e-1, 5e-2)}),
    NN("conv1d", [Sample((T((2, 3, 11)), T((2, 3, 4))), {"padding": "same", "dilation": 3}, "same dilation"),
                  Sample((T((2, 4, 9)), T((6, 2, 3)), T((6,))), {"stride": 2, "padding": 1, "groups": 2}, "stride groups bias"),
                  Sample((T((3, 7)), T((2, 3, 1))), {}, "1x1 unbatched")],
       tol={"bfloat16": (1e-1, 5e-2), "float16": (1e-2, 1e-2)}),
    NN("conv2d", [Sample((T((2, 3, 9, 8)), T((4, 3, 3, 3))), {"stride": 2, "padding": 2, "dilation": 2}, "stride dilation"),
                  Sample((T((2, 4, 5, 5)), T((6, 2, 2, 3)), T((6,))), {"padding": "valid", "groups": 2}, "valid groups"),
                  Sample((T((2, 6, 4, 5)), T((6, 1, 3, 3)), T((6,))), {"padding": "same", "groups": 6}, "depthwise same"),
                  Sample((T((2, 4, 5, 6)), T((3, 4, 1, 1)), T((3,))), {}, "1x1"),
                  Sample((T((3, 6, 7)), T((2, 3, 2, 3))), {"stride": (1, 2), "padding": (1, 0), "dilation": (2, 1)}, "unbatched")],
       tol={"bfloat16": (1e-1, 5e-2), "float16": (1e-2, 1e-2)}),
    NN("conv3d", [Sample((T((2, 2, 7, 6, 5)), T((6, 2, 3, 2, 2)), T((6,))), {"stride": (2, 1, 2), "padding": (1, 2, 0),
                                                                            "dilation": (2, 1, 1)}),
                  Sample((T((4, 5, 4, 5)), T((6, 2, 3, 3, 2))), {"groups": 2, "padding": 1}, "groups unbatched")],
       tol={"bfloat16": (1e-1, 5e-2), "float16": (1e-2, 1e-2)}),
    NN("conv_transpose1d", [Sample((T((2, 6, 4)), T((6, 1, 3))), {"groups": 3, "dilation": 2}),
                            Sample((T((4, 5)), T((4, 3, 3)), T((3,))), {"stride": 3, "padding": 1, "output_padding": 2}, "unbatched output_padding")],
       tol={"bfloat16": (1e-1, 5e-2), "float16": (1e-2, 1e-2)}),
    NN("conv_transpose2d", [Sample((T((2, 3, 4, 3)), T((3, 2, 3, 3)), T((2,))), {"stride": (2, 3), "padding": 1, "output_padding": (1, 2)}),
                            Sample((T((2, 4, 3, 3)), T((4, 1, 2, 2))), {"groups": 2, "dilation": 3, "output_padding": 2}, "groups dilation output_padding"),
                            Sample((T((2, 4, 3, 3)), T((4, 3, 1, 1))), {}, "1x1")],
       tol={"bfloat16": (1e-1, 5e-2), "float16": (1e-2, 1e-2)}),
    NN("conv_transpose3d", [Sample((T((2, 4, 3, 4, 3)), T((4, 3, 3, 2, 3)), T((3,)), (2, 1, 2), (1, 0, 1), (1, 0, 1), 1, (1, 2, 1))),
                            Sample((T((1, 4, 3, 3, 3)), T((4, 2, 2, 2, 2))), {"groups": 2, "stride": 3, "padding": 2}, "groups")],
       tol={"bfloat16": (1e-1, 5e-2), "float16": (1e-2, 1e-2)}),
    NN("max_pool1d", [Sample((T((2, 3, 9), unique=True), 3), {"stride": 2, "padding": 1}, "padding"),
                      Sample((T((3, 10), unique=True), 2), {"dilation": 2, "ceil_mode": True}, "unbatched dilation ceil")]),
    NN("max_pool2d", [Sample((T((2, 3, 7, 6), unique=True), 2), {}, "2x2"),
                      Sample((T((2, 2, 9, 8), unique=True), (3, 2)), {"stride": (2, 1), "padding": 1, "ceil_mode": True}, "padding ceil"),
                      Sample((T((3, 9, 8), unique=True), 2), {"stride": 1, "dilation": (2, 3), "padding": 1}, "unbatched dilation")]),
    NN("max_pool3d", [Sample((T((2, 2, 5, 6, 5), unique=True), 2), {"stride": (2, 1, 2), "padding": 1, "ceil_mode": True}),
                      Sample((T((2, 5, 5, 6), unique=True), (2, 3, 2)), {"dilation": 2}, "unbatched dilation")]),
    NN("max_pool2d_with_indices", [Sample((T((2, 3, 6, 7), unique=True), 3), {"stride": 2, "padding": 1})],
       fn=lambda m, x, *a, **k: m.nn.functional.max_pool2d(x, *a, return_indices=True, **k)),
    NN("avg_pool1d", [Sample((T((2, 3, 9)), 3), {"stride": 2, "padding": 1, "ceil_mode": True}, "padding ceil"),
                      Sample((T((3, 9)), 4), {"stride": 3, "padding": 2, "count_include_pad": False}, "unbatched exclude pad")]),
    NN("avg_pool2d", [Sample((T((2, 3, 7, 6)), 2), {}, "2x2"),
                      Sample((T((2, 2, 9, 8)), 3), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}, "ceil exclude pad"),
                      Sample((T((2, 2, 9, 8)), (3, 2)), {"stride": (2, 1), "padding": 1, "ceil_mode": True}, "ceil include pad"),
                      Sample((T((3, 7, 6)), 3), {"padding": 1, "divisor_override": 5}, "unbatched divisor_override")]),
    NN("avg_pool3d", [Sample((T((2, 2, 5, 6, 5)), 3), {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False}),
                      Sample((T((2, 5, 5, 6)), 2), {"divisor_override": 3}, "unbatched divisor_override")]),
    NN("adaptive_avg_pool1d", [Sample((T((2, 3, 9)), 4)), Sample((T((3, 5)), 7), desc="unbatched upsampling")]),
    NN("adaptive_avg_pool2d", [Sample((T((2, 3, 9, 8)), (4, 3))), Sample((T((3, 5, 7)), (7, None)), desc="unbatched None"),
                               Sample((T((2, 3, 5, 4)), 1), desc="global")]),
    NN("adaptive_avg_pool3d", [Sample((T((2, 2, 5, 6, 7)), (2, 4, 3))), Sample((T((2, 4, 4, 5)), 3), desc="unbatched")]),
    NN("adaptive_max_pool1d", [Sample((T((2, 3, 9), unique=True), 4))]),
    NN("adaptive_max_pool2d", [Sample((T((2, 3, 9, 8), unique=True), (4, 3))), Sample((T((3, 5, 7), unique=True), 3), desc="unbatched"),
                               Sample((T((2, 3, 5, 4), unique=True), (4, 3)), {"return_indices": True}, "indices")]),
    NN("adaptive_max_pool3d", [Sample((T((2, 2, 5, 6, 7), unique=True), (2, 4, 3)))]),
    # spatial ops (ops/spatial.cpp)
    NN("interpolate", [Sample((T((2, 3, 5, 6)),), {"scale_factor": 1.5, "mode": "bilinear"}, "bilinear"),
                       Sample((T((2, 3, 5, 6)),), {"size": (7, 4), "mode": "bicubic", "align_corners": True}, "bicubic"),
                       Sample((T((2, 3, 5)),), {"scale_factor": 2.5, "mode": "nearest"}, "nearest 1d"),
                       Sample((T((2, 3, 5, 4)),), {"scale_factor": 1.7, "mode": "nearest-exact"}, "nearest-exact"),
                       Sample((T((1, 2, 3, 4, 3)),), {"size": (4, 5, 6), "mode": "trilinear"}, "trilinear")],
       tol={"bfloat16": (5e-2, 5e-2), "float16": (1e-2, 1e-2)}),
    NN("pixel_shuffle", [Sample((T((2, 8, 3, 4)), 2))]),
    NN("pixel_unshuffle", [Sample((T((2, 2, 4, 6)), 2))]),
    NN("unfold", [Sample((T((2, 3, 5, 6)), 2), {"padding": 1, "stride": 2}), Sample((T((3, 5, 6)), (2, 3)), {"dilation": 2}, "unbatched")]),
    NN("fold", [Sample((T((2, 12, 12)), (4, 5), 2)), Sample((T((8, 9)), (4, 5), 2), {"stride": 2, "padding": 1}, "unbatched")]),
    NN("rms_norm", [Sample((T((4, 5)), (5,), T((5,)))), Sample((T((2, 3, 4)), (3, 4)), {"eps": 1e-3}, "no weight, eps")]),
    NN("scaled_dot_product_attention", [Sample((T((2, 3, 4)), T((2, 3, 4)), T((2, 3, 4))), {"is_causal": True}, "causal"),
                                        Sample((T((2, 3, 4)), T((2, 5, 4)), T((2, 5, 6)), Mask((3, 5))), {}, "bool mask"),
                                        # 4-d: torch's (and ampgrad's) fused flash path (ops/attention.cpp)
                                        Sample((T((2, 3, 5, 4)), T((2, 3, 7, 4)), T((2, 3, 7, 4))), {"is_causal": True}, "4-d causal L<S"),
                                        Sample((T((2, 2, 5, 4)), T((2, 2, 6, 4)), T((2, 2, 6, 4)), Mask((5, 6))), {}, "4-d bool mask"),
                                        Sample((T((2, 2, 5, 4)), T((2, 2, 6, 4)), T((2, 2, 6, 4)), T((1, 2, 5, 6), grad=False)),
                                               {"scale": 0.3}, "4-d float mask, scale"),
                                        Sample((T((1, 4, 5, 4)), T((1, 2, 6, 4)), T((1, 2, 6, 4))), {"enable_gqa": True}, "4-d gqa"),
                                        Sample((T((1, 2, 70, 8)), T((1, 2, 70, 8)), T((1, 2, 70, 8))), {"is_causal": True},
                                               "4-d causal, several blocks"),
                                        Sample((T((1, 1, 33, 4)), T((1, 1, 66, 4)), T((1, 1, 66, 4))), {}, "4-d block edges"),
                                        # more keys than one key block: the online softmax rescales
                                        Sample((T((1, 1, 5, 4)), T((1, 1, 150, 4)), T((1, 1, 150, 4)), Mask((5, 150))), {},
                                               "4-d several key blocks, mask"),
                                        Sample((T((1, 1, 140, 4)), T((1, 1, 140, 4)), T((1, 1, 140, 4))), {"is_causal": True},
                                               "4-d causal, several key blocks")],
       tol={"bfloat16": (1e-1, 5e-2), "float16": (1e-2, 1e-2)}),
    NN("embedding", [Sample((Const([[0, 2], [3, 0]], "int64"), T((4, 3)))),
                     # (padding_idx's row gets no gradient by design: special, so no finite differences)
                     Sample((Const([1, 2, 1], "int64"), T((4, 3))), {"padding_idx": 1}, "padding_idx", special=True),
                     Sample((Const([[1, 2, 1], [0, 1, 3]], "int32"), T((4, 3))), {"scale_grad_by_freq": True}, "int32, scale_grad_by_freq",
                            special=True),  # (a scaled gradient by design: no finite differences)
                     Sample((Const([3, 3, 0], "int64"), T((4, 3))), {"padding_idx": -1, "scale_grad_by_freq": True},
                            "padding_idx=-1, scale_grad_by_freq", special=True)]),
    OpInfo("cdist", lambda m, a, b, **k: m.cdist(a, b, **k), [Sample((T((3, 4)), T((2, 4)))), Sample((T((2, 3, 4)), T((2, 5, 4))), {"p": 1.0}, "p=1")],
           dtypes=FLOATS, tol=NN_TOL, grad_tol=NN_GRAD_TOL, xfail={"forward-float16": XF_LOWP, "forward-bfloat16": XF_LOWP}),
    NN("grid_sample", [Sample((T((2, 3, 5, 4)), T((2, 3, 6, 2), -1.3, 1.3), md, pm, ac), {}, f"{md} {pm} align_corners={ac}")
                       for md in ("bilinear", "nearest") for pm in ("zeros", "border", "reflection") for ac in (False, True)]
       + [Sample((T((2, 3, 5, 4)), T((2, 3, 6, 2), -1.3, 1.3), "bicubic", pm, ac), {}, f"bicubic {pm} align_corners={ac}")
          for pm in ("zeros", "border", "reflection") for ac in (False, True)]
       + [Sample((T((2, 2, 3, 5, 4)), T((2, 2, 3, 4, 3), -1.3, 1.3), md, pm, ac), {}, f"5-d {md} {pm} align_corners={ac}")
          for md in ("bilinear", "nearest") for pm in ("zeros", "border", "reflection") for ac in (False, True)],
       tol={"bfloat16": (5e-2, 5e-2), "float16": (1e-2, 1e-2)}),
]
# Fused norms and losses (csrc/ops/norm.cpp, csrc/ops/loss.cpp): the engine ops' layouts and modes.
_BN = lambda m, x, rm, rv, w, b, **k: m.nn.functional.batch_norm(x, rm, rv, w, b, **k)
NN_OPS += [
    NN("batch_norm", [Sample((T((4, 3, 5)), T((3,), grad=False), Pos(3, grad=False), T((3,)), T((3,))), {"training": True, "momentum": 0.3}, "train 3-d"),
                      Sample((T((6, 3)), T((3,), grad=False), Pos(3, grad=False), T((3,)), T((3,))), {"training": True}, "train 2-d"),
                      Sample((T((2, 3, 2, 3)), T((3,), grad=False), Pos(3, grad=False), T((3,)), T((3,))), {"training": False}, "eval 4-d"),
                      Sample((T((4, 2, 3)), None, None, None, None), {"training": True}, "train no stats no affine")], fn=_BN),
    NN("layer_norm_nd", [Sample((T((2, 3, 8)), (8,), T((8,)), T((8,)))), Sample((T((2, 3, 4, 5)), (4, 5), T((4, 5)), None), {}, "2 dims weight only"),
                         Sample((T((0, 4)), (4,), T((4,)), T((4,))), {}, "empty batch", special=True)],
       fn=lambda m, *a, **k: m.nn.functional.layer_norm(*a, **k)),
    NN("group_norm_nd", [Sample((T((2, 6, 2, 2, 2)), 2, T((6,)), T((6,)))), Sample((T((3, 4)), 2, T((4,)), None), {}, "2-d"),
                         Sample((T((2, 4, 3)), 1), {"eps": 1e-2}, "one group")],
       fn=lambda m, *a, **k: m.nn.functional.group_norm(*a, **k)),
    NN("rms_norm_nd", [Sample((T((3, 2, 6)), (6,))), Sample((T((2, 3, 4)), [3, 4], T((3, 4))), {"eps": 1e-6}, "2 dims")],
       fn=lambda m, *a, **k: m.nn.functional.rms_norm(*a, **k)),
    NN("nll_loss_2d", _red(T((2, 3, 2, 2)), Lbl([[[0, 2], [1, 1]], [[2, 0], [-100, 1]]]), desc="4-d")
       + _red(T((2, 3, 2, 1, 2)), Lbl([[[[0, 2]], [[1, 1]]], [[[2, 0]], [[1, 1]]]]), Pos(3, grad=False), desc="5-d weight"),
       fn=lambda m, *a, **k: m.nn.functional.nll_loss(*a, **k),
       skip={"noncontig-transposed": "torch's nll_loss2d backward raises 'grad_input must be contiguous' for a non-contiguous "
                                     "input (a torch bug); ampgrad computes it"}),
    NN("nll_loss_nd", _red(T((2, 4, 3)), Lbl([[0, 3, -100], [2, 1, 1]]), desc="3-d")
       + [Sample((T((5,)), Lbl(3)), {}, "unbatched"), Sample((T((5,)), Lbl(3)), {"reduction": "none"}, "unbatched none"),
          Sample((T((3, 4)), Lbl([-100, -100, -100])), {}, "all ignored mean", special=True),
          Sample((T((3, 4)), Lbl([1, 1, 2])), {"ignore_index": 1, "reduction": "sum"}, "ignore_index class")],
       fn=lambda m, *a, **k: m.nn.functional.nll_loss(*a, **k)),
    NN("cross_entropy_nd", _red(T((2, 4, 3, 2)), Lbl([[[0, 3], [1, -100], [2, 2]], [[3, 3], [0, 1], [1, 0]]]), Pos(4, grad=False), desc="4-d weight")
       + [Sample((T((0, 5)), Const([], "int64")), {}, "empty batch mean", special=True),
          Sample((T((0, 5)), Const([], "int64")), {"reduction": "sum"}, "empty batch sum", special=True),
          Sample((T((3, 5)), Lbl([-100, -100, -100])), {}, "all ignored mean", special=True),
          Sample((T((3, 65)), Lbl([64, 0, 17])), {"label_smoothing": 0.1}, "65 classes ls")],
       fn=lambda m, *a, **k: m.nn.functional.cross_entropy(*a, **k)),
]
OPS += NN_OPS
# nn activations hardshrink / softshrink / threshold / rrelu (eval; engine ops of ops/activation_more.cpp)
OPS += [NN(n, [Sample((T((4, 6), lo, hi),) + a, dict(kw), f"{lo},{hi} {kw}") for lo, hi in ((-3, 3), (-8, 8)) for a, kw in v])
        for n, v in [("hardshrink", [((), {}), ((), {"lambd": 1.5})]), ("softshrink", [((), {}), ((), {"lambd": 1.5})]),
                     ("threshold", [((0.3, -2.0), {})]), ("rrelu", [((), {"lower": 0.1, "upper": 0.4})])]]
_NN_EXTRA = {
    "nn.functional.relu": [Sample((T((4, 6)),), desc="normal")],
    "nn.functional.linear": [Sample((T((2, 3, 4)), T((5, 4))), desc="3-d no bias")],
}
for _name, _smp in _NN_EXTRA.items():
    next(op for op in OPS if op.name == _name).samples.extend(_smp)

# ---- special functions and integer elementwise families (csrc/ops/special.cpp; tests/test_special.py
# compares them over wide ranges and special points)
_SPF = ("float32", "float64", "bfloat16")
_INT_OPS = ("uint8", "int16", "int32", "int64")


def _sp(name, low=-2.0, high=2.0, dtypes=FLOATS + ("int64", "bool"), call=None, special_values=True, **kw):
    """A unary op of torch.special (or the top level: call)."""
    fn = call or (lambda m, x, _n=name.split(".")[-1]: getattr(m.special, _n)(x))
    samples = [Sample((T((3, 4), low, high),)), Sample((T((), low, high),), desc="0-dim"),
               Sample((T((2, 0, 3), low, high),), desc="empty", grad=False)]
    if special_values:
        samples.append(Sample((Const(SPECIAL),), desc="special values", grad=False))
    return OpInfo(name, fn, samples, dtypes=dtypes, **kw)


def _int_b(name, blow=-9, bhigh=9, dtypes=_INT_OPS, fn=None):
    return OpInfo(name, fn or (lambda m, a, b, _n=name: getattr(m, _n)(a, b)),
                  [Sample((T((3, 4), -20, 20), T((3, 4), blow, bhigh))), Sample((T((3, 1), -20, 20), T((4,), blow, bhigh)), desc="broadcast"),
                   Sample((Const(_IE_A), Const(_IE_B)), desc="integer edges")], dtypes=dtypes, grad=False)


_NOGRAD_BESSEL = {"skip": {}}
# Low precision only where torch has a kernel (tests/test_special.py compares the others' bf16 with torch's
# float32); torch's Bessel J / Y and Airy kernels are accurate to ~1e-7 (ampgrad's are checked against mpmath
# there), and torch gives NaN at +-inf where ampgrad gives the limit, so those rows leave out the special values.
SPECIAL_OPS = [
    _sp("digamma", 0.1, 4.0, call=lambda m, x: m.digamma(x)),
    _sp("special.psi", 0.1, 4.0, call=lambda m, x: m.special.psi(x)),
    _sp("lgamma", 0.1, 4.0, call=lambda m, x: m.lgamma(x)),
    _sp("special.gammaln", -3.7, 4.0, call=lambda m, x: m.special.gammaln(x)),
    OpInfo("polygamma", lambda m, x, n: m.polygamma(n, x),
           [Sample((T((3, 4), 0.5, 3.0), 1)), Sample((T((3, 4), 0.5, 3.0), 2), desc="n=2"),
            Sample((T((), 0.5, 3.0), 3), desc="n=3 0-dim"), Sample((T((3, 4), 0.5, 3.0), 0), desc="n=0")],
           dtypes=("float32", "float64", "int64"), tol={"float32": (1e-4, 1e-5)}),
    OpInfo("mvlgamma", lambda m, x, p: m.mvlgamma(x, p=p),
           [Sample((T((3, 4), 2.5, 5.0), 1), desc="p=1"), Sample((T((3, 4), 2.5, 5.0), 3), desc="p=3")],
           dtypes=("float32", "float64", "bfloat16")),
    _sp("special.erfcx", -2.0, 3.0, dtypes=("float32", "float64")),
    OpInfo("logit", lambda m, x, **k: m.logit(x, **k),
           [Sample((T((3, 4), 0.05, 0.95),)), Sample((T((3, 4), 0.05, 0.95),), {"eps": 0.2}, "eps=0.2"),
            Sample((Const([0.0, 1.0, 0.5, -0.5, 1.5, 1e-3]),), desc="edges", grad=False)],
           dtypes=FLOATS, tol={"bfloat16": (1e-2, 3e-2)}),
    # torch's i0(+-inf) is nan (ampgrad: inf): the special values are left out
    _sp("i0", -3.0, 3.0, call=lambda m, x: m.i0(x), special_values=False),
    _sp("special.i0e", -3.0, 3.0),
    _sp("special.i1", -3.0, 3.0, special_values=False),
    _sp("special.i1e", -3.0, 3.0),
    _sp("special.ndtr", -3.0, 3.0, dtypes=("float32", "float64")),
    _sp("special.ndtri", 0.02, 0.98, dtypes=("float32", "float64")),
    _sp("special.log_ndtr", -5.0, 3.0, dtypes=("float32", "float64")),
    _sp("special.entr", 0.05, 3.0, dtypes=FLOATS),
    _sp("sgn", call=lambda m, x: m.sgn(x), dtypes=ALL),
    # bfloat16 left out: torch's float -> bf16 conversion sets NaN's sign bit (signbit(nan) is True there)
    _sp("signbit", call=lambda m, x: m.signbit(x), dtypes=tuple(d for d in ALL if d != "bfloat16"), grad=False),
    OpInfo("frexp", lambda m, x: tuple(m.frexp(x)), [Sample((T((3, 4), -100.0, 100.0),)), Sample((Const(SPECIAL),), desc="special", grad=False)],
           dtypes=FLOATS, fd=False),
    _sp("special.bessel_j0", -30.0, 30.0, grad=False, dtypes=("float32", "float64"), special_values=False, tol={"float64": (2e-6, 1e-6), "float32": (1e-4, 1e-4)}),
    _sp("special.bessel_j1", -30.0, 30.0, grad=False, dtypes=("float32", "float64"), special_values=False, tol={"float64": (2e-6, 1e-6), "float32": (1e-4, 1e-4)}),
    _sp("special.bessel_y0", 0.1, 30.0, grad=False, dtypes=("float32", "float64"), special_values=False, tol={"float64": (2e-6, 1e-6), "float32": (1e-4, 1e-4)}),
    _sp("special.bessel_y1", 0.1, 30.0, grad=False, dtypes=("float32", "float64"), special_values=False, tol={"float64": (2e-6, 1e-6), "float32": (1e-4, 1e-4)}),
    _sp("special.modified_bessel_i0", -5.0, 5.0, grad=False, dtypes=("float32", "float64"), special_values=False),
    _sp("special.modified_bessel_i1", -5.0, 5.0, grad=False, dtypes=("float32", "float64"), special_values=False),
    _sp("special.modified_bessel_k0", 0.1, 5.0, grad=False, dtypes=("float32", "float64")),
    _sp("special.modified_bessel_k1", 0.1, 5.0, grad=False, dtypes=("float32", "float64")),
    _sp("special.scaled_modified_bessel_k0", 0.1, 5.0, grad=False, dtypes=("float32", "float64")),
    _sp("special.scaled_modified_bessel_k1", 0.1, 5.0, grad=False, dtypes=("float32", "float64")),
    _sp("special.spherical_bessel_j0", -10.0, 10.0, grad=False, dtypes=("float32", "float64")),
    _sp("special.airy_ai", -5.0, 3.0, grad=False, dtypes=("float32", "float64"), special_values=False, tol={"float64": (2e-6, 1e-6), "float32": (1e-4, 1e-4)}),
    OpInfo("special.xlog1py", lambda m, a, b: m.special.xlog1py(a, b),
           [Sample((T((3, 4)), T((3, 4), -0.5, 2.0))), Sample((T((3, 1)), T((4,), -0.5, 2.0)), desc="broadcast"),
            Sample((T((3, 4)), 0.5), desc="scalar other"), Sample((Const([0.0, 0.0, 1.0, 2.0]), Const([-1.0, NAN, -1.0, 0.0])), desc="zeros", grad=False)],
           dtypes=FLOATS + ("int64",)),
    OpInfo("special.zeta", lambda m, a, b: m.special.zeta(a, b),
           [Sample((T((3, 4), 1.5, 4.0, grad=False), T((3, 4), 0.5, 3.0))),
            Sample((Const([1.0, 2.0, 0.5, 3.0]), Const([1.0, -2.0, 1.0, -2.5])), desc="poles", grad=False)],
           dtypes=("float32", "float64")),
    OpInfo("igamma", lambda m, a, b: m.igamma(a, b),
           [Sample((T((3, 4), 0.5, 4.0, grad=False), T((3, 4), 0.1, 5.0))),
            Sample((T((3, 1), 0.5, 4.0, grad=False), T((4,), 0.1, 5.0)), desc="broadcast")], dtypes=("float32", "float64", "bfloat16")),
    OpInfo("igammac", lambda m, a, b: m.igammac(a, b),
           [Sample((T((3, 4), 0.5, 4.0, grad=False), T((3, 4), 0.1, 5.0)))], dtypes=("float32", "float64", "bfloat16")),
    OpInfo("special.gammainc", lambda m, a, b: m.special.gammainc(a, b),
           [Sample((T((3, 4), 0.5, 4.0, grad=False), T((3, 4), 0.1, 5.0)))], dtypes=("float32", "float64")),
    _int_b("gcd"), _int_b("lcm"),
    _int_b("bitwise_left_shift", 0, 7), _int_b("bitwise_right_shift", 0, 7),
    _int_b("Tensor.__lshift__", 0, 7, fn=lambda m, a, b: a << b), _int_b("Tensor.__rshift__", 0, 7, fn=lambda m, a, b: a >> b),
    OpInfo("nextafter", lambda m, a, b: m.nextafter(a, b),
           [Sample((T((3, 4)), T((3, 4)))), Sample((Const(_SP_A), Const(_SP_B)), desc="special values")],
           dtypes=("float32", "float64", "bfloat16"), grad=False),
    OpInfo("heaviside", lambda m, a, b: m.heaviside(a, b),
           [Sample((Const([-1.0, 0.0, 2.0, -0.0, NAN, 3.0]), Const([0.5, 0.25, 0.5, 7.0, 1.0, 2.0])))],
           dtypes=FLOATS + ("int64",), grad=False),
    OpInfo("float_power", lambda m, a, b: m.float_power(a, b),
           [Sample((T((3, 4), 0.5, 2.0), T((3, 4)))), Sample((T((3, 4), 0.5, 2.0), 2), desc="scalar exponent")],
           dtypes=("float32", "float64", "int64")),
    # Non-negative exponents: torch's LdexpBackward0 computes 2 ** other in the integer dtype, so its gradient is 0
    # for a negative integer exponent (ampgrad's is 2 ** other; tests/test_special.py checks the forward there).
    OpInfo("ldexp", lambda m, a, b: m.ldexp(a, b),
           [Sample((T((3, 4)), T((3, 4), 0, 4, dtype="int64")))], dtypes=("float32", "float64")),
    OpInfo("rsub", lambda m, a, b, **k: m.rsub(a, b, **k),
           [Sample((T((3, 4)), T((3, 4)))), Sample((T((3, 4)), T((4,))), {"alpha": 2}, "alpha=2"),
            Sample((T((3, 4)), 1.5), desc="scalar other")], dtypes=FLOATS + ("int64",)),
    OpInfo("isin", lambda m, a, b, **k: m.isin(a, b, **k),
           [Sample((T((3, 4), -5, 5, dtype="int64"), T((6,), -5, 5, dtype="int64"))),
            Sample((T((3, 4), -5, 5, dtype="int64"), T((6,), -5, 5, dtype="int64")), {"invert": True}, "invert"),
            Sample((Const([1.0, NAN, 2.0, -0.0]), Const([0.0, NAN, 2.0])), desc="nan and signed zero")],
           dtypes=("float32", "int64"), grad=False),
] + [OpInfo(f"special.{n}", lambda m, x, k, _n=n: getattr(m.special, _n)(x, k),
            [Sample((T((3, 4), -1.0, 1.0), 3)), Sample((T((3, 4), -1.0, 1.0), 12), desc="n=12"),
             Sample((Const([1.0, -1.0, 0.0, 0.5, 2.0]), Const([4.0, 5.0, 3.0, -1.0, 2.0])), desc="edges")],
            dtypes=("float32", "float64"), grad=False)
     for n in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w")]
OPS += SPECIAL_OPS

# ---- issue-13 compositions over engine ops (python/ampgrad/_misc_ops.py, masked/, signal/; tests/test_misc_ops.py,
# test_masked.py, test_windows.py compare them with torch in depth)
OPS += [
    OpInfo("quantile", lambda m, x, **k: m.quantile(x, 0.3, **k),
           [Sample((T((3, 5), unique=True),), {"dim": 1}), Sample((T((3, 5), unique=True),), {}, "flat"),
            Sample((T((3, 5), unique=True),), {"dim": 0, "keepdim": True, "interpolation": "midpoint"}, "midpoint")],
           dtypes=("float32", "float64")),
    OpInfo("nanquantile", lambda m, x, **k: m.nanquantile(x, 0.6, **k),
           [Sample((T((3, 5), unique=True),), {"dim": 1}),
            Sample((Const([[1.0, NAN, 3.0, 0.5], [NAN, NAN, 2.0, -1.0]]),), {"dim": 1}, "nan", grad=False)],
           dtypes=("float32", "float64")),
    OpInfo("mode", lambda m, x: m.mode(x, 1).values,
           [Sample((Const([[1.0, 2.0, 2.0, 3.0], [5.0, 5.0, 4.0, 4.0], [0.5, -1.0, 0.5, 2.0]]),))], dtypes=FLOATS,
           fd=False),  # the mode needs exact ties: a finite-difference step breaks them
    OpInfo("gradient", lambda m, x, **k: m.gradient(x, **k),
           [Sample((T((3, 4)),)), Sample((T((4, 5)),), {"edge_order": 2, "spacing": 2.0, "dim": 1}, "edge_order=2")],
           dtypes=FLOATS),
    OpInfo("combinations", lambda m, x, **k: m.combinations(x, **k),
           [Sample((T((5,)),)), Sample((T((4,)),), {"r": 3, "with_replacement": True}, "with_replacement")], dtypes=ALL),
    OpInfo("masked.sum", lambda m, x, mask: m.masked.sum(x, 1, mask=mask), [Sample((T((3, 4)), Mask((3, 4))))],
           dtypes=FLOATS),
    OpInfo("masked.softmax", lambda m, x, mask: m.masked.softmax(x, 1, mask=mask), [Sample((T((3, 4)), Mask((3, 4))))],
           dtypes=FLOATS, tol={"float16": (2e-3, 2e-3), "bfloat16": (3e-2, 3e-2)}),
    OpInfo("masked.var", lambda m, x, mask: m.masked.var(x, 1, mask=mask),
           [Sample((T((3, 4)), Const([[True, False, True, True], [True, True, False, False], [False, True, True, True]],
                                     dtype="bool")))],
           dtypes=("float32", "float64")),
]

OPS_BY_NAME = {op.name: op for op in OPS}
assert len(OPS_BY_NAME) == len(OPS), "duplicate op names in the op database"
