"""Differential fuzzing of ampgrad against torch (issue 10, point 2): the harness.

Pieces, top to bottom:
  * specs: picklable descriptions of arguments (Tn = a tensor built from NumPy data + a chain of views,
    DT = a dtype object, plain Python values otherwise) and Call = one call (op, args, kwargs);
    `render(call)` writes it as a one-line torch expression (the repro; `import ampgrad as torch` runs it
    against ampgrad);
  * the worker: a persistent child process (`python fuzz_harness.py --worker`) that imports torch and ampgrad,
    builds the same inputs for both from the same NumPy data, makes the call with each, and compares the
    outcomes (value vs exception class; dtype / shape / numbers / requires_grad; inputs after the call);
    `Runner` drives it over a pipe with a per-call timeout and restarts it after a crash or a hang;
  * the catalogue: op names discovered as the intersection of torch's and ampgrad's public names
    (torch.*, Tensor.*, torch.nn.functional.*), each given argument generators from torch's own aten
    schemas (`torch._C._jit_get_schemas_for_operator`) or the Python signature, by argument type and name
    (`_ARG_RULES`), plus a few families that schemas do not describe (indexing, dunder operators);
  * the campaign: hypothesis draws calls; every outcome is classified and matched against
    tests/fuzz_known.py (the table of tolerated, known differences); `Report` counts and groups them.

The parent process imports torch and ampgrad only to discover names and schemas (no tensor is computed
there), so a crashing op can only take down the worker. tests/test_fuzz.py is the CI entry point,
tests/fuzz_run.py the long-run command."""
import collections
import datetime
import fnmatch
import inspect
import math
import os
import pickle
import select
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64")
FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")
HUGE = (2**40, 2**62, 2**63 - 1)
EXC_CLASSES = ("NotImplementedError", "IndexError", "ValueError", "TypeError", "OverflowError", "RuntimeError")
# torch.testing's default (atol, rtol) per dtype; integers and bool compare exactly.
TOL = {"float64": (1e-7, 1e-7), "float32": (1e-5, 1.3e-6), "float16": (1e-3, 1e-3), "bfloat16": (1e-5, 1.6e-2)}
PREFIX = {"fn": "torch.", "F": "F.", "method": "Tensor.", "attr": "Tensor.", "index": "Tensor."}


# ------------------------------------------------------------------------------------------- specs
@dataclass
class Tn:
    """A tensor: `data` (NumPy; float32 holds bfloat16 values) converted to `dtype`, optionally made a
    leaf that requires grad, then the views in `views` applied: ('t', d0, d1) transpose, ('s', dim, step)
    slice with a step, ('e', shape) expand."""
    dtype: str
    data: Any
    views: tuple = ()
    requires_grad: bool = False

    @property
    def shape(self):
        return _view_shape(self.data.shape, self.views)


@dataclass
class DT:
    """A dtype object (torch.<name> / ampgrad.<name>)."""
    name: str


@dataclass
class Call:
    kind: str          # 'fn' torch.name(*args) | 'F' torch.nn.functional.name | 'method' args[0].name(*args[1:])
    name: str          # | 'attr' args[0].name | 'index' args[0][args[1]] (name '__getitem__' or '__setitem__')
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    values: bool = True    # False: random / uninitialized results, compare outcome, dtype and shape only
    wrong: str = ""        # the argument replaced by a value of a wrong type, if any

    @property
    def op(self):
        return PREFIX[self.kind] + self.name


def _view_shape(shape, views):
    shape = list(shape)
    for v in views:
        if v[0] == "t":
            shape[v[1]], shape[v[2]] = shape[v[2]], shape[v[1]]
        elif v[0] == "s":
            shape[v[1]] = (shape[v[1]] + v[2] - 1) // v[2]
        elif v[0] == "e":
            shape = list(v[1])
    return tuple(shape)


def tensors_in(v):
    if isinstance(v, Tn):
        yield v
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from tensors_in(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from tensors_in(x)


# ------------------------------------------------------------------------------------------- repro text
def _lit(x):
    if isinstance(x, bool) or x is None:
        return repr(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return repr(x)
    if isinstance(x, list):
        return "[" + ", ".join(_lit(e) for e in x) + "]"
    return repr(x)


def render(v):
    """Python source for a spec (inf / nan spelled as names: the repro line defines them)."""
    if isinstance(v, Tn):
        rg = ", requires_grad=True" if v.requires_grad else ""
        if v.data.size == 0:
            s = f"torch.zeros({tuple(v.data.shape)}, dtype=torch.{v.dtype}{rg})"
        else:
            s = f"torch.tensor({_lit(v.data.tolist())}, dtype=torch.{v.dtype}{rg})"
        for w in v.views:
            if w[0] == "t":
                s += f".transpose({w[1]}, {w[2]})"
            elif w[0] == "s":
                s += "[" + ":, " * w[1] + f"::{w[2]}]"
            else:
                s += f".expand({tuple(w[1])})"
        return s
    if isinstance(v, DT):
        return f"torch.{v.name}"
    if isinstance(v, slice):
        return f"slice({v.start!r}, {v.stop!r}, {v.step!r})"
    if v is Ellipsis:
        return "..."
    if isinstance(v, list):
        return "[" + ", ".join(render(e) for e in v) + "]"
    if isinstance(v, tuple):
        return "(" + ", ".join(render(e) for e in v) + ("," if len(v) == 1 else "") + ")"
    return _lit(v)


def render_call(c):
    args = [render(a) for a in c.args]
    kw = [f"{k}={render(v)}" for k, v in c.kwargs.items()]
    if c.kind == "fn":
        return f"torch.{c.name}({', '.join(args + kw)})"
    if c.kind == "F":
        return f"torch.nn.functional.{c.name}({', '.join(args + kw)})"
    if c.kind == "attr":
        return f"{args[0]}.{c.name}"
    if c.kind == "index":
        if c.name == "__getitem__":
            return f"{args[0]}[{args[1]}]"
        return f"{args[0]}.__setitem__({', '.join(args[1:])})"
    return f"{args[0]}.{c.name}({', '.join(args[1:] + kw)})"


def repro(c):
    return "import torch; inf, nan = float('inf'), float('nan'); " + render_call(c)


# ------------------------------------------------------------------------------------------- the worker
def _exc_class(e):
    """torch's (or ampgrad's) exception mapped to the first builtin class it derives from."""
    for cls in type(e).__mro__:
        if cls.__name__ in EXC_CLASSES and cls.__module__ == "builtins":
            return cls.__name__
    return type(e).__name__


class _Worker:
    def __init__(self):
        import warnings
        warnings.simplefilter("ignore")
        import torch
        import ampgrad
        torch.set_num_threads(1)
        self.mods = {"torch": torch, "ampgrad": ampgrad}

    def build(self, v, m, made):
        if isinstance(v, Tn):
            a = np.ascontiguousarray(v.data)
            x = m.tensor(a)
            if v.dtype == "bfloat16" or str(x.dtype).split(".")[-1] != v.dtype:
                x = x.to(getattr(m, v.dtype))
            if v.requires_grad:
                x.requires_grad_()
            for w in v.views:
                if w[0] == "t":
                    x = x.transpose(w[1], w[2])
                elif w[0] == "s":
                    x = x[(slice(None),) * w[1] + (slice(None, None, w[2]),)]
                else:
                    x = x.expand(*w[1])
            made.append(x)
            return x
        if isinstance(v, DT):
            return getattr(m, v.name)
        if isinstance(v, list):
            return [self.build(e, m, made) for e in v]
        if isinstance(v, tuple):
            return tuple(self.build(e, m, made) for e in v)
        return v

    def call(self, c, m):
        made = []
        args = [self.build(a, m, made) for a in c.args]
        kwargs = {k: self.build(v, m, made) for k, v in c.kwargs.items()}
        before = [_to_np(x) for x in made]
        try:
            if c.kind == "fn":
                out = getattr(m, c.name)(*args, **kwargs)
            elif c.kind == "F":
                out = getattr(m.nn.functional, c.name)(*args, **kwargs)
            elif c.kind == "attr":
                out = getattr(args[0], c.name)
            elif c.kind == "index" and c.name == "__getitem__":
                out = args[0][args[1]]
            else:
                out = getattr(args[0], c.name)(*args[1:], **kwargs)
            return "value", out, made, before
        except Exception as e:  # noqa: BLE001 (the outcome class is what we compare)
            return _exc_class(e), str(e).split("\n")[0][:200], made, before

    def run(self, c, send):
        t_cls, t_out, t_made, _ = self.call(c, self.mods["torch"])
        t_summary = t_cls if t_cls != "value" else "value"
        send(("T", t_summary))
        a_cls, a_out, a_made, a_before = self.call(c, self.mods["ampgrad"])
        detail = ""
        if t_cls == "value" and a_cls == "value":
            detail = _compare(t_out, a_out, c.values)
            kind = "mismatch" if detail else "ok"
        elif t_cls == a_cls:
            kind = "ok"
        else:
            kind = "outcome"
            detail = a_out if a_cls != "value" else t_out
        # inputs after the call: where both agree, ampgrad's must match torch's (in-place ops); a failed
        # ampgrad call must have left them as they were
        if kind == "ok" or a_cls != "value":
            for i, (tx, ax) in enumerate(zip(t_made, a_made)):
                if a_cls != "value":
                    d = _compare_np(a_before[i], _to_np(ax), str(ax.dtype).split(".")[-1])
                else:
                    d = _compare(tx, ax, c.values, grad=False)
                if d:
                    kind, detail = "input_modified", f"input {i}: {d}"
                    break
        return {"kind": kind, "torch": t_cls, "ampgrad": a_cls, "detail": str(detail)[:300]}


def _to_np(x):
    if getattr(x, "is_sparse", False):  # a COO result (Note [Sparse COO]): its dense value
        x = x.to_dense()
    if x.dtype.__repr__().endswith("bfloat16"):
        x = x.float()
    x = x.detach()
    return x.numpy().copy()


def _is_tensor(x):
    return type(x).__name__ == "Tensor" or (hasattr(x, "dtype") and hasattr(x, "requires_grad") and hasattr(x, "shape"))


def _compare(t, a, values, grad=True):
    """'' when ampgrad's result `a` matches torch's `t`, else what differs."""
    if _is_tensor(t):
        if not _is_tensor(a):
            return f"type: tensor vs {type(a).__name__}"
        td, ad = str(t.dtype).split(".")[-1], str(a.dtype).split(".")[-1]
        if td != ad:
            return f"dtype: {td} vs {ad}"
        if tuple(t.shape) != tuple(a.shape):
            return f"shape: {tuple(t.shape)} vs {tuple(a.shape)}"
        if grad and bool(t.requires_grad) != bool(a.requires_grad):
            return f"requires_grad: {t.requires_grad} vs {a.requires_grad}"
        if not values or t.numel() == 0:
            return ""
        if bool(getattr(t, "is_sparse", False)) != bool(getattr(a, "is_sparse", False)):
            return f"layout: {t.layout} vs {a.layout}"
        if getattr(t, "is_sparse", False) and t.numel() > 1 << 24:   # a huge COO tensor: its stored entries
            tc, ac = t.coalesce(), a.coalesce()
            return (_compare(tc.indices(), ac.indices(), values, grad=False) or
                    _compare(tc.values(), ac.values(), values, grad=False))
        if t.numel() > 1 << 24 and not getattr(t, "is_sparse", False):  # a huge (expanded) view: compare a corner block, not terabytes
            corner = tuple(slice(0, 4) for _ in range(t.dim()))
            t, a = t[corner], a[corner]
        return _compare_np(_to_np(t), _to_np(a), td)
    if isinstance(t, (tuple, list)):   # also torch.Size and torch.return_types
        if not isinstance(a, (tuple, list)):
            return f"type: {type(t).__name__} vs {type(a).__name__}"
        if len(t) != len(a):
            return f"length: {len(t)} vs {len(a)}"
        for i, (x, y) in enumerate(zip(t, a)):
            d = _compare(x, y, values, grad)
            if d:
                return f"[{i}] {d}"
        return ""
    if isinstance(t, np.ndarray):
        if not isinstance(a, np.ndarray):
            return f"type: ndarray vs {type(a).__name__}"
        if t.dtype != a.dtype or t.shape != a.shape:
            return f"ndarray: {t.dtype}{t.shape} vs {a.dtype}{a.shape}"
        return _compare_np(t, a, str(t.dtype)) if values else ""
    if isinstance(t, (bool, int, float)):
        if type(t) is not type(a):
            return f"type: {type(t).__name__} vs {type(a).__name__}"
        if not values:
            return ""
        if isinstance(t, float):
            return _compare_np(np.array(t), np.array(a), "float64")
        return "" if t == a else f"value: {t!r} vs {a!r}"
    if t is None or isinstance(t, str):
        return "" if t == a else f"value: {t!r} vs {a!r}"
    if type(t).__name__ in ("dtype", "device"):
        return "" if str(t).split(".")[-1] == str(a).split(".")[-1] else f"value: {t} vs {a}"
    return ""   # something this harness does not compare (a Generator, a finfo, ...)


def _compare_np(t, a, dtype):
    if t.shape != a.shape:
        return f"shape: {t.shape} vs {a.shape}"
    if t.size == 0:
        return ""
    if dtype not in TOL:
        if np.array_equal(t, a):
            return ""
        i = np.flatnonzero(t.reshape(-1) != a.reshape(-1))[0]
        return f"values differ at flat {i}: {t.reshape(-1)[i]!r} vs {a.reshape(-1)[i]!r}"
    atol, rtol = TOL[dtype]
    t64, a64 = t.astype(np.float64).reshape(-1), a.astype(np.float64).reshape(-1)
    tn, an = np.isnan(t64), np.isnan(a64)
    with np.errstate(all="ignore"):
        finite = np.isfinite(t64)
        scale = np.max(np.abs(t64[finite])) if finite.any() else 0.0
        err = np.abs(t64 - a64)
        # torch.testing-style closeness, or (near zero, after cancellation) relative to the result's scale
        ok = (tn & an) | (t64 == a64) | (err <= atol + rtol * np.abs(t64)) | (err <= 4 * rtol * scale)
    if ok.all():
        return ""
    i = np.flatnonzero(~ok)[0]
    return f"values differ at flat {i}: {t64[i]!r} vs {a64[i]!r}"


def worker_main(fd_in, fd_out):
    import faulthandler
    faulthandler.enable()
    rd, wr = os.fdopen(fd_in, "rb"), os.fdopen(fd_out, "wb")

    def send(obj):
        b = pickle.dumps(obj)
        wr.write(struct.pack("<I", len(b)) + b)
        wr.flush()

    w = _Worker()
    send(("ready", None))
    while True:
        hdr = rd.read(4)
        if len(hdr) < 4:
            return
        c = pickle.loads(rd.read(struct.unpack("<I", hdr)[0]))
        try:
            res = w.run(c, send)
        except Exception as e:  # noqa: BLE001 (a harness error: report it, keep the worker)
            res = {"kind": "harness_error", "torch": "", "ampgrad": "", "detail": f"{type(e).__name__}: {e}"[:300]}
        send(("R", res))


class Runner:
    """The parent's end: one persistent worker, restarted after a crash or a hang."""

    def __init__(self, timeout=10.0, mem_gb=8):
        self.timeout, self.mem_gb = timeout, mem_gb
        self.proc = None
        self.restarts = 0

    def _start(self):
        p_in, c_out = os.pipe()    # parent reads what the child writes
        c_in, p_out = os.pipe()
        self.err = tempfile.TemporaryFile()
        env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                   PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        mem = self.mem_gb * 2**30
        # Under ASan (tools/sanitize.sh preloads it) an address-space limit stops the worker before it starts:
        # ASan reserves terabytes of shadow memory. Its allocator caps each allocation instead.
        asan = "libasan" in os.environ.get("LD_PRELOAD", "")
        if asan and self.mem_gb:
            env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + f":max_allocation_size_mb={self.mem_gb * 1024}"

        def limit():
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))

        boot = (f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
                f"import fuzz_harness; fuzz_harness.worker_main({c_in}, {c_out})")
        self.proc = subprocess.Popen([sys.executable, "-c", boot],
                                     pass_fds=(c_in, c_out), stdout=subprocess.DEVNULL, stderr=self.err, env=env,
                                     preexec_fn=limit if self.mem_gb and not asan else None)
        os.close(c_in)
        os.close(c_out)
        self.rd, self.wr = os.fdopen(p_in, "rb", buffering=0), os.fdopen(p_out, "wb")
        msg = self._recv(120)
        if not msg or msg[0] != "ready":
            raise RuntimeError("fuzz worker failed to start: " + self._stderr_tail())

    def _recv(self, timeout):
        end = time.monotonic() + timeout
        buf = b""
        need = 4
        hdr = None
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return "timeout"
            r, _, _ = select.select([self.rd], [], [], left)
            if not r:
                return "timeout"
            chunk = self.rd.read(need - len(buf))
            if not chunk:
                return None
            buf += chunk
            if len(buf) == need:
                if hdr is None:
                    hdr, need, buf = buf, struct.unpack("<I", buf)[0], b""
                    if need == 0:
                        return pickle.loads(b"")
                else:
                    return pickle.loads(buf)

    def _stderr_tail(self):
        try:
            self.err.seek(0)
            lines = [ln for ln in self.err.read().decode(errors="replace").splitlines() if ln.strip()]
            fatal = [ln for ln in lines if "Fatal Python error" in ln or "terminate" in ln or "Assertion" in ln]
            return " | ".join(fatal[:2] or lines[-2:])[:300]
        except Exception:  # noqa: BLE001
            return ""

    def kill(self):
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(10)
            except Exception:  # noqa: BLE001
                pass
            for f in (self.rd, self.wr):
                try:
                    f.close()
                except Exception:  # noqa: BLE001
                    pass
            self.proc = None

    def run(self, c):
        if self.proc is None:
            self._start()
        b = pickle.dumps(c)
        try:
            self.wr.write(struct.pack("<I", len(b)) + b)
            self.wr.flush()
        except BrokenPipeError:
            self.kill()
            self._start()
            return self.run(c)
        side = "torch"
        while True:
            msg = self._recv(self.timeout)
            if msg == "timeout" or msg is None:
                if msg is None:
                    self.proc.wait(10)
                    rc = self.proc.returncode
                how = "hang" if msg == "timeout" else "crash"
                self.kill()
                self.restarts += 1
                tail = "" if how == "hang" else f"exit {rc}: {self._stderr_tail()}"
                if side == "torch":
                    return {"kind": "torch_" + how, "torch": how, "ampgrad": "", "detail": tail}
                return {"kind": how, "torch": t_out, "ampgrad": how, "detail": tail}
            if msg[0] == "T":
                side, t_out = "ampgrad", msg[1]
            elif msg[0] == "R":
                return msg[1]

    def close(self):
        if self.proc is not None:
            try:
                self.wr.close()
                self.proc.wait(5)
            except Exception:  # noqa: BLE001
                pass
            self.kill()


# ------------------------------------------------------------------------------------------- the catalogue
# Names never called: global state (seeds, defaults, grad / autocast modes), I/O, devices, memory
# addresses, hooks, and helpers that take no tensors worth fuzzing.
_SKIP = set("""
fn: autocast compile load save manual_seed seed initial_seed no_grad enable_grad inference_mode set_grad_enabled
    Generator default_generator from_numpy get_rng_state set_rng_state is_anomaly_enabled set_anomaly_enabled
    set_autocast_enabled set_autocast_dtype set_autocast_gpu_dtype set_autocast_cpu_dtype set_autocast_cpu_enabled
    set_autocast_cache_enabled clear_autocast_cache autocast_increment_nesting autocast_decrement_nesting
    set_default_dtype set_float32_matmul_precision is_anomaly_check_nan_enabled
method: backward register_hook register_post_accumulate_grad_hook retain_grad cuda cpu pin_memory is_pinned
    share_memory_ storage untyped_storage data_ptr record_stream numpy_ _fix_weakref detach_ set_ to_sparse
    resize_ resize_as_ __reduce_ex__ __deepcopy__ __setstate__ __getstate__ __hash__ __repr__ __str__ __format__
    __dlpack__ __dlpack_device__ __array__ __array_wrap__ __array_priority__ __iter__ __reversed__
attr: grad_fn _base data grad is_cuda device _version output_nr __dict__ __doc__ __module__ __weakref__ itemsize
F:
""".replace("\n    ", " ").split("\n"))
_SKIP = {ln.split(":")[0]: set(ln.split(":")[1].split()) for ln in _SKIP if ":" in ln}

# Operator dunders called as methods (the rest of Tensor's dunders are object plumbing).
_DUNDERS = """__add__ __radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__ __truediv__ __rtruediv__
__itruediv__ __floordiv__ __rfloordiv__ __ifloordiv__ __mod__ __rmod__ __imod__ __pow__ __rpow__ __ipow__ __matmul__
__rmatmul__ __and__ __rand__ __iand__ __or__ __ror__ __ior__ __xor__ __rxor__ __ixor__ __lshift__ __rshift__
__invert__ __neg__ __pos__ __abs__ __eq__ __ne__ __lt__ __le__ __gt__ __ge__ __bool__ __int__ __float__ __index__
__len__ __contains__ __getitem__ __setitem__""".split()

# Results that are random or uninitialized: outcome, dtype and shape are compared, not the numbers.
_RANDOM = "rand rand_like randn randn_like randint randint_like randperm normal* bernoulli* *dropout* multinomial uniform_ exponential_ cauchy_ geometric_ log_normal_ " \
          "random_ empty* new_empty* rrelu* poisson *gumbel* alpha_dropout"

# Schema argument types -> generator keys ('omit': left out, an overload that requires one is not used).
_TYPES = {"Tensor": "T", "Optional[Tensor]": "T?", "List[Tensor]": "T[]", "List[Optional[Tensor]]": "T?[]",
          "int": "i", "Optional[int]": "i?", "List[int]": "i[]", "Optional[List[int]]": "i[]?", "bool": "b",
          "Optional[bool]": "b?", "float": "f", "Optional[float]": "f?", "number": "s", "Optional[number]": "s?",
          "str": "str", "Optional[str]": "str?", "List[bool]": "b[]", "List[float]": "f[]",
          "Optional[List[float]]": "f[]?", "Optional[Device]": "omit", "Optional[Generator]": "omit",
          "Device": "omit", "Generator": "omit"}
_OMIT_NAMES = {"layout", "memory_format", "device", "pin_memory", "generator", "names", "out", "requires_grad",
               "non_blocking", "copy", "_stacklevel", "stacklevel", "cuda", "sparse_grad"}
_TENSOR_NAMES = {"input", "self", "other", "tensor", "x", "x1", "x2", "weight", "bias", "target", "mat", "mat1", "mat2",
                 "vec", "vec1", "vec2", "tensor1", "tensor2", "exponent", "end", "mask", "index", "indices", "src",
                 "source", "condition", "A", "B", "a", "b", "input1", "input2", "anchor", "positive", "negative",
                 "elements", "test_elements", "boundaries", "sorted_sequence", "batch1", "batch2", "running_mean",
                 "running_var", "grad_output", "log_input", "label", "like"}
_DIM_NAMES = {"dim", "dim0", "dim1", "dim2", "start_dim", "end_dim", "axis", "axis0", "axis1", "source_dim",
              "destination"}
_MATMUL = {"mm", "bmm", "matmul", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv", "addr", "addbmm",
           "baddbmm", "chain_matmul", "tensordot", "linear", "bilinear", "__matmul__", "__rmatmul__", "cdist",
           "kron", "cross", "linalg_cross", "einsum", "multi_dot"}


@dataclass
class Arg:
    name: str
    gen: str
    kwarg_only: bool = False
    required: bool = True


@dataclass
class Op:
    kind: str
    name: str
    sigs: list
    values: bool = True

    @property
    def op(self):
        return PREFIX[self.kind] + self.name


def _schema_sigs(torch, aten_name, method):
    sigs = []
    for sc in torch._C._jit_get_schemas_for_operator("aten::" + aten_name):
        ov = sc.overload_name.lower()
        if "out" in ov.split("_") or "dimname" in ov or "names" in ov or ov.endswith("out"):
            continue
        args, ok = [], True
        for a in sc.arguments:
            gen = _TYPES.get(str(a.type))
            if a.name in _OMIT_NAMES:
                gen = "omit"
            elif a.name == "dtype" and gen in ("i?", "i"):
                gen = "dtype"
            elif gen == "i?" and a.name in ("layout", "memory_format"):
                gen = "omit"
            required = not a.has_default_value()
            if gen is None or (gen == "omit" and required):
                ok = False
                break
            args.append(Arg(a.name, gen, a.kwarg_only, required))
        if not ok:
            continue
        if (method and (not args or args[0].gen != "T")) or any(a.name == "self" and a.gen != "T" for a in args):
            continue
        sigs.append(args)
    return sigs


def _guess(name, default):
    if name in _DIM_NAMES:
        return "i?" if default is None else "i"
    if name in ("dtype",):
        return "dtype"
    if name in _TENSOR_NAMES:
        return "T?" if default is None else "T"
    if name in ("size", "shape", "sizes", "dims", "kernel_size", "stride", "padding", "dilation", "pad", "repeats",
                "normalized_shape", "output_size"):
        return "i[]?" if default is None else "i[]"
    if isinstance(default, bool):
        return "b"
    if isinstance(default, int):
        return "i"
    if isinstance(default, float):
        return "f"
    if isinstance(default, str):
        return "str"
    if default is inspect.Parameter.empty:
        return "any"
    return "omit"


def _py_sigs(fn):
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    args = []
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD or p.name in _OMIT_NAMES:
            continue
        if p.kind is p.VAR_POSITIONAL:
            args.append(Arg("*" + p.name, "*", False, False))
            continue
        d = p.default
        gen = _guess(p.name, None if d is p.empty else d) if d is not p.empty else _guess(p.name, d)
        args.append(Arg(p.name, gen, p.kind is p.KEYWORD_ONLY, d is p.empty))
    return [args]


def _aten_name(name):
    if name.startswith("__") and name.endswith("__"):
        core = name[2:-2]
        table = {"truediv": "div", "floordiv": "floor_divide", "mod": "remainder", "matmul": "matmul", "neg": "neg",
                 "abs": "abs", "invert": "bitwise_not", "pos": "positive", "pow": "pow", "and": "bitwise_and",
                 "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "__lshift__", "rshift": "__rshift__"}
        inplace = core.startswith("i") and core[1:] in table.keys() | {"add", "sub", "mul"}
        if core.startswith("r") and core[1:] in table.keys() | {"add", "sub", "mul"}:
            core = core[1:]
        if inplace:
            core = core[1:]
        return table.get(core, core) + ("_" if inplace else "")
    return name


def discover(torch, ampgrad):
    """The op catalogue: every public callable that both libraries have, with its argument signatures."""
    ops = []
    mods = (("fn", torch, ampgrad), ("method", torch.Tensor, ampgrad.Tensor),
            ("F", torch.nn.functional, ampgrad.nn.functional))
    for kind, tmod, amod in mods:
        for name in sorted(set(dir(tmod)) & set(dir(amod))):
            if name.startswith("_") and not (kind == "method" and name in _DUNDERS):
                continue
            tobj = getattr(tmod, name, None)
            k = kind
            if kind == "method" and not callable(tobj):
                k = "attr"
            if name in _SKIP.get(k, ()) or inspect.isclass(tobj) or inspect.ismodule(tobj):
                continue
            if k == "fn" and not callable(tobj):
                continue
            if name in ("__getitem__", "__setitem__"):
                ops.append(Op("index", name, [[Arg("self", "T")]]))
                continue
            if k == "attr":
                ops.append(Op("attr", name, [[Arg("self", "T")]]))
                continue
            if inspect.isfunction(tobj) or (kind == "F" and not _schema_sigs(torch, name, False)):
                sigs = _py_sigs(tobj)
                if k == "method" and sigs and sigs[0] and sigs[0][0].name == "self":
                    sigs[0][0].gen = "T"
            else:
                sigs = _schema_sigs(torch, _aten_name(name), k == "method")
            if name in _DUNDERS:    # operators: the receiver and at most one operand
                sigs = [s[:2] for s in sigs] or [[Arg("self", "T"), Arg("other", "Ts")]]
            if not sigs:   # no schema, no Python signature: a receiver (or input) and a few random arguments
                sigs = [[Arg("self", "T"), Arg("arg1", "any", required=False), Arg("arg2", "any", required=False)]]
            if k == "fn" or k == "F":
                for s in sigs:
                    if s and s[0].name == "self":
                        s[0] = Arg("input", s[0].gen, s[0].kwarg_only, s[0].required)
            rnd = any(fnmatch.fnmatchcase(name, p) for p in _RANDOM.split())
            ops.append(Op(k, name, sigs, values=not rnd))
    return ops


# ------------------------------------------------------------------------------------------- drawing calls
class Draw:
    """Choices drawn through hypothesis (`data` from st.data()); bulk tensor contents from a NumPy
    generator seeded by one of those choices."""

    def __init__(self, data, salt=()):
        from hypothesis import strategies as st
        self.data, self.st = data, st
        self.rng = np.random.default_rng([data.draw(st.integers(0, 2**32 - 1), label="seed"), *salt])

    def int(self, lo, hi):
        return self.data.draw(self.st.integers(lo, hi))

    def p(self, prob):
        return self.data.draw(self.st.integers(0, 999)) < prob * 1000

    def choice(self, seq):
        return self.data.draw(self.st.sampled_from(seq))


def _values(d, dtype, shape):
    rng = d.rng
    n = int(np.prod(shape)) if shape else 1
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INTS:
        info = np.iinfo(dtype)
        lo = 0 if dtype == "uint8" else -5
        a = rng.integers(lo, 6, size=shape).astype(dtype)
        if n and d.p(0.1):   # extremes
            a.reshape(-1)[rng.integers(0, n)] = rng.choice([info.min, info.max])
        return a
    a = rng.integers(-8, 9, size=shape) / 2.0
    if n and d.p(0.15):    # specials
        flat = a.reshape(-1)
        for _ in range(rng.integers(1, 3)):
            flat[rng.integers(0, n)] = rng.choice([np.inf, -np.inf, np.nan, -0.0, 1e4, 0.001, 3.3e38])
    with np.errstate(over="ignore"):
        return a.astype("float32" if dtype == "bfloat16" else dtype)


def _shape(d, max_ndim=4):
    ndim = d.choice((0, 1, 1, 2, 2, 2, 3, 3, 4)[: {0: 1, 1: 3, 2: 6, 3: 8}.get(max_ndim, 9)])
    return tuple(d.choice((0, 1, 1, 2, 2, 3, 3, 4)) for _ in range(ndim))


def draw_tensor(d, shape=None, dtype=None, grad_ok=True):
    """A tensor of `shape` (drawn if None), contiguous or a view: transposed, sliced with a step, expanded."""
    shape = _shape(d) if shape is None else tuple(shape)
    dtype = dtype or d.choice(DTYPES)
    kind = d.choice(("c", "c", "c", "t", "s", "e"))
    base, views = list(shape), ()
    nd = len(shape)
    if kind == "t" and nd >= 2:
        i, j = sorted((d.int(0, nd - 1), d.int(0, nd - 1)))
        if i != j:
            base[i], base[j] = base[j], base[i]
            views = (("t", i, j),)
    elif kind == "s" and nd >= 1:
        i, step = d.int(0, nd - 1), d.choice((2, 3))
        base[i] = max(0, shape[i] * step - d.int(0, step - 1)) if shape[i] else d.int(0, 1)
        views = (("s", i, step),)
    elif kind == "e" and nd >= 1:
        dims = [i for i in range(nd) if shape[i] != 1 and d.p(0.5)]
        lead = d.int(0, nd - 1) if d.p(0.3) else 0
        base = [1 if i in dims else s for i, s in enumerate(shape)][lead:]
        if dims or lead:
            views = (("e", tuple(shape)),)
        else:
            base = list(shape)
    data = _values(d, dtype, tuple(base))
    rg = grad_ok and dtype in FLOATS and d.p(0.2)
    return Tn(dtype, data, views, rg)


def _bshape(d, shape):
    """A shape that broadcasts with `shape` (mostly), or anything."""
    r = d.int(0, 9)
    if r < 5:
        return tuple(shape)
    if r < 8:
        s = list(shape)[d.int(0, len(shape)):] if shape else []
        return tuple(1 if d.p(0.3) else x for x in s)
    return _shape(d)


def _dim(d, ctx):
    nd = max(len(ctx.get("shape", ())), 1)
    if d.p(0.85):
        v = d.int(-nd, nd - 1)
    else:
        v = d.choice((nd, -nd - 1, 2**31, -2**63, 2**63 - 1))
    ctx["dim"] = v
    return v


def _small_int(d, name):
    if name in ("chunks", "sections", "split_size", "steps", "groups", "n", "m", "N", "num_classes", "size", "length"):
        return d.int(-1, 5) if d.p(0.95) else d.choice(HUGE)
    if d.p(0.97):
        return d.int(-3, 5)
    return d.choice(HUGE + (-2**63,))


def _size_list(d, ctx, name):
    shape = ctx.get("shape")
    if d.p(0.04):   # huge / negative sizes
        return [d.choice(HUGE + (-1, -2))] + ([2] if d.p(0.5) else [])
    if shape is not None and name in ("size", "shape", "sizes") and d.p(0.7):
        n = int(np.prod(shape)) if shape else 1
        r = d.int(0, 4)
        if r == 0:
            return list(shape)
        if r == 1:
            return [n]
        if r == 2:
            return [-1] + ([1] if d.p(0.5) else [])
        if r == 3 and len(shape) >= 1:
            return [n // shape[-1] if shape[-1] else 0, -1] if shape[-1] else [-1, 0]
        return [d.choice((1, 2, 3))] + list(shape)
    if name in ("dims", "dim", "axis", "axes"):
        nd = len(shape or ())
        if nd and d.p(0.5):
            perm = list(d.rng.permutation(nd))
            return [int(x) - (nd if d.p(0.3) else 0) for x in perm[: d.int(1, nd)]]
        return [d.int(-nd - 1, max(nd, 1)) for _ in range(d.int(0, 2))]
    return [d.choice((0, 1, 1, 2, 2, 3)) for _ in range(d.int(0, 3))]


_FLOATS_POOL = (0.0, 0.5, 1.0, -1.5, 2.0, 3.0, 1e-3, math.inf, -math.inf, math.nan, 1e300, -0.0)
_SCALARS = (0, 1, 2, -3, 5, 0.5, -1.5, 2.0, True, False, 2**63 - 1, 2**64, -2**63 - 1, 2**31, math.inf, -math.inf,
            math.nan, 1e300)
_STRS = {"rounding_mode": ("trunc", "floor", "bad"), "reduce": ("sum", "prod", "mean", "amax", "amin", "bad"),
         "reduction": ("mean", "sum", "none", "bad"), "approximate": ("none", "tanh", "bad"),
         "mode": ("constant", "reflect", "replicate", "circular", "nearest", "bilinear", "bad"),
         "padding_mode": ("zeros", "reflect"), "interpolation": ("linear", "lower", "higher", "nearest", "midpoint"),
         "side": ("left", "right"), "indexing": ("ij", "xy"), "p": ("fro", "nuc"), "ord": ("fro", "nuc"),
         "equation": ("ij->ji", "ii->i", "ij,jk->ik", "i,i->", "...->...", "ij", "bad"), "padding": ("same", "valid")}
_WRONG = ("abc", None, [1, 2], 1.5, 2**40, 2**62, 2**63 - 1, -2**63 - 1, 2**64, True, math.nan, math.inf, DT("int64"),
          [1.5], (), [None])


def _gen(d, a, ctx, opname):
    g, name = a.gen, a.name
    if g.endswith("?") and g != "T?[]":
        if d.p(0.3):
            return None
        g = g[:-1]
    shape = ctx.get("shape")
    if g == "T" or (g == "any" and d.p(0.5)) or (g == "Ts" and d.p(0.6)):
        if shape is None:
            t = draw_tensor(d, dtype="bool" if name in ("mask", "condition") and d.p(0.8) else None)
            ctx["shape"], ctx["dtype"] = t.shape, t.dtype
            return t
        if name in ("index", "indices"):
            n = ctx.get("dim")
            n = shape[n] if isinstance(n, int) and -len(shape) <= n < len(shape) else (int(np.prod(shape)) or 1)
            ish = tuple(min(s, d.int(0, 3)) for s in shape) if d.p(0.5) else _shape(d, 2)
            t = Tn(d.choice(("int64",) * 6 + ("int32", "float32")), d.rng.integers(-n if d.p(0.2) else 0,
                   max(n, 1) + (1 if d.p(0.1) else 0), size=ish))
            t.data = t.data.astype(t.dtype)
            return t
        if name in ("mask", "condition"):
            return draw_tensor(d, _bshape(d, shape), "bool" if d.p(0.9) else None, grad_ok=False)
        if opname in _MATMUL:
            return draw_tensor(d, _shape(d, 3), ctx["dtype"] if d.p(0.8) else None)
        return draw_tensor(d, _bshape(d, shape), ctx["dtype"] if d.p(0.65) else None)
    if g in ("T[]", "*") and (name in ("tensors", "*tensors", "*operands", "operands") or g == "T[]"):
        if shape is None:
            first = draw_tensor(d)
            shape = first.shape
        else:
            first = None
        k = d.int(0, 3) if first is None else d.int(0, 2)
        out = [] if first is None else [first]
        dt = out[0].dtype if out else ctx.get("dtype")
        for _ in range(k):
            s = list(shape)
            if s and d.p(0.3):
                s[d.int(0, len(s) - 1)] = d.int(0, 3)
            out.append(draw_tensor(d, s if d.p(0.85) else _shape(d), dt if d.p(0.8) else None))
        if name == "*operands" and opname == "einsum":
            return ["ij->ji"] + out
        return out
    if g == "*":    # *size and the like: ints
        return _size_list(d, ctx, name.lstrip("*"))
    if g == "T?[]":
        return [None if d.p(0.2) else _gen(d, Arg("index", "T"), ctx, opname) for _ in range(d.int(1, 2))]
    if g == "i" or (g in ("any", "Ts")):
        if name in _DIM_NAMES:
            return _dim(d, ctx)
        if g == "Ts" or (g == "any" and d.p(0.5)):
            return d.choice(_SCALARS)
        return _small_int(d, name)
    if g == "i[]":
        if name in ("split_size", "split_sizes", "sections", "split_size_or_sections"):
            return [d.int(0, 3) for _ in range(d.int(0, 3))]
        return _size_list(d, ctx, name)
    if g == "b":
        return d.p(0.5)
    if g == "f":
        if name == "p":
            return d.choice((0.0, 1.0, 2.0, 0.5, 3.0, math.inf, -math.inf, -1.0))
        return d.choice(_FLOATS_POOL)
    if g == "s":
        return d.choice(_SCALARS)
    if g == "str":
        if name == "p" and d.p(0.6):
            return d.choice((0, 1, 2, 0.5, 3.0, math.inf, -math.inf, -1))
        return d.choice(_STRS.get(name, ("abc", "")))
    if g == "dtype":
        return DT(d.choice(DTYPES))
    if g == "b[]":
        return [d.p(0.5) for _ in range(d.int(0, 3))]
    if g == "f[]":
        return [d.choice(_FLOATS_POOL) for _ in range(d.int(0, 3))]
    return None


_INDEX_ATOMS = ("int", "int", "slice", "slice", "None", "...", "bool", "tensor", "mask", "list")


def _index(d, shape):
    def atom(i):
        n = shape[i] if i < len(shape) else 1
        k = d.choice(_INDEX_ATOMS)
        if k == "int":
            return d.int(-n - 1, n) if d.p(0.95) else d.choice(HUGE)
        if k == "slice":
            return slice(d.choice((None, 0, 1, -1, -5, 5)), d.choice((None, 0, 2, -1, 10)), d.choice((None, 1, 2, 3, 0, -1)))
        if k == "None":
            return None
        if k == "...":
            return Ellipsis
        if k == "bool":
            return d.p(0.5)
        if k == "tensor":
            t = Tn("int64", d.rng.integers(-n, max(n, 1), size=d.choice(((), (1,), (2,), (2, 2)))))
            return t
        if k == "mask":
            return Tn("bool", d.rng.random(shape[i:i + 1]) < 0.5)
        return [int(x) for x in d.rng.integers(-n, max(n, 1), size=d.int(0, 3))]
    if d.p(0.4):
        return atom(0)
    return tuple(atom(i) for i in range(d.int(0, len(shape) + 1)))


def draw_call(d, catalogue):
    op = catalogue[int(d.rng.integers(len(catalogue)))]   # uniform (hypothesis favours early entries)
    sig = d.choice(op.sigs)
    ctx = {}
    if op.kind == "index":
        x = draw_tensor(d)
        args = (x, _index(d, x.shape))
        if op.name == "__setitem__":
            v = d.choice(_SCALARS) if d.p(0.5) else draw_tensor(d, _bshape(d, x.shape), x.dtype if d.p(0.7) else None)
            x.requires_grad = False
            args = args + (v,)
        return Call("index", op.name, args, values=op.values)
    args, kwargs, positional, wrong = [], {}, True, ""
    for i, a in enumerate(sig):
        if a.gen == "omit":
            positional = False
            continue
        if not a.required and not d.p(0.4):
            positional = positional and a.gen == "*"
            continue
        v = _gen(d, a, ctx, op.name)
        receiver = i == 0 and op.kind in ("method", "attr")
        if not receiver and d.p(0.04):
            v = d.choice(_WRONG)
            wrong = a.name
        if a.gen == "*":
            args.extend(v if isinstance(v, (list, tuple)) else [v])
        elif receiver or op.name in _DUNDERS or (positional and not a.kwarg_only and (i == 0 or d.p(0.85))):
            if (a.gen in ("i[]", "i[]?") and a.name in ("size", "shape", "dims", "sizes", "repeats")
                    and isinstance(v, list) and i == len(sig) - 1 or (i < len(sig) - 1 and sig[i + 1].kwarg_only)) \
                    and isinstance(v, list) and d.p(0.5):
                args.extend(v)      # torch.zeros(2, 3), x.view(2, 3), x.permute(1, 0)
            else:
                args.append(v)
        else:
            kwargs[a.name] = v
            positional = False
    if op.kind == "attr":
        args = args[:1]
        kwargs = {}
    return Call(op.kind, op.name, tuple(args), kwargs, values=op.values, wrong=wrong)


# ------------------------------------------------------------------------------------------- classification
# Categories of a result (the worker's 'kind' refined by the outcome pair):
#   ok             same value (within tolerance), or the same exception class
#   crash / hang   ampgrad killed the worker / ran past the timeout            (never tolerated unless listed)
#   mismatch       both returned values, which differ (dtype, shape, numbers, requires_grad)
#   input_modified the inputs differ afterwards (in-place result, or a failed call that wrote its inputs)
#   accepted       torch raised, ampgrad returned a value (invalid input accepted)
#   rejected       torch returned a value, ampgrad raised
#   exc_type       both raised, different exception classes
#   torch_crash / torch_hang: the oracle itself died (reported, not ampgrad's fault)
FAILING = ("crash", "hang", "mismatch", "input_modified", "accepted", "rejected", "exc_type", "harness_error")


def category(res):
    k = res["kind"]
    if k != "outcome":
        return k
    if res["torch"] == "value":
        return "rejected"
    if res["ampgrad"] == "value":
        return "accepted"
    return "exc_type"


class Report:
    def __init__(self):
        self.counts = collections.Counter()       # category -> calls
        self.groups = {}                          # (op, cat, torch, ampgrad) -> [count, repro, detail, known]
        self.calls = 0
        self.known_hits = collections.Counter()   # known entry index -> calls
        self.skipped = 0
        self.ops = collections.Counter()          # op -> calls

    def add(self, call, res, known):
        cat = category(res)
        self.calls += 1
        self.ops[call.op] += 1
        entry = known.match(call, cat, res) if cat in FAILING else None
        self.counts[cat] += 1
        if cat in FAILING or cat.startswith("torch_"):
            key = (call.op, cat, res["torch"], res["ampgrad"])
            g = self.groups.get(key)
            if g is None:
                g = self.groups[key] = [0, repro(call), res["detail"], entry]
            g[0] += 1
            if entry is not None:
                self.known_hits[id(entry)] += 1

    def new_failures(self):
        return {k: g for k, g in self.groups.items() if k[1] in FAILING and g[3] is None}

    def summary(self, top=40):
        lines = [f"calls: {self.calls} over {len(self.ops)} ops (known crashes skipped: {self.skipped})"]
        lines.append("by category: " + ", ".join(f"{c}={n}" for c, n in self.counts.most_common()))
        tol = collections.Counter()
        for k, g in self.groups.items():
            if g[3] is not None:
                tol[k[1]] += g[0]
        lines.append("tolerated (known): " + (", ".join(f"{c}={n}" for c, n in tol.most_common()) or "none"))
        new = self.new_failures()
        lines.append(f"distinct groups (op, category, torch outcome, ampgrad outcome): {len(self.groups)}, "
                     f"not in the known table: {len(new)}")
        for title, items in (("NEW (not in tests/fuzz_known.py)", new),
                             ("top groups", self.groups)):
            if not items:
                continue
            lines.append(f"-- {title}:")
            for (op, cat, t, a), g in sorted(items.items(), key=lambda kv: -kv[1][0])[:top]:
                lines.append(f"  {g[0]:5d} {cat:14s} {op} [{t} -> {a}] {g[2][:120]}")
                lines.append(f"        repro: {g[1]}")
        return "\n".join(lines)


def date_seed(day=None):
    """The rotating seed: the UTC date as YYYYMMDD (AMPGRAD_FUZZ_SEED overrides)."""
    return int((day or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y%m%d"))


def campaign(n, seed, runner, report, catalogue, known, time_budget=None, progress=None):
    """About `n` calls, spread evenly over the catalogue: for each op (in an order fixed by `seed`) one
    hypothesis run (seeded by `seed` and the op) draws ceil(n / ops) calls, each run in the worker and added
    to `report`. (One hypothesis run over all ops would visit only a few hundred of them: its choices repeat.)"""
    from hypothesis import HealthCheck, Phase, given, settings, strategies as st
    from hypothesis import seed as hseed
    end = None if time_budget is None else time.monotonic() + time_budget
    order = np.random.default_rng(seed).permutation(len(catalogue))
    per = max(1, -(-n // len(catalogue)))
    done = [0]

    def run_op(op, k):
        @hseed(seed * 1_000_003 + zlib_crc(op.op))
        @settings(max_examples=k, database=None, deadline=None, phases=[Phase.generate], derandomize=False,
                  suppress_health_check=list(HealthCheck), report_multiple_bugs=False)
        @given(st.data())
        def one(data):
            if (end is not None and time.monotonic() > end) or done[0] >= n:
                return
            call = draw_call(Draw(data), [op])
            done[0] += 1
            entry = known.crash_entry(call)
            if entry is not None and report.known_hits[id(entry)] >= 2:
                report.skipped += 1    # a known crash, already confirmed twice this run: skip the restart
                return
            res = runner.run(call)
            report.add(call, res, known)
            if progress and report.calls % progress == 0:
                print(f"  {report.calls} calls, {dict(report.counts)}", flush=True)
        one()

    for i in order:
        if done[0] >= n or (end is not None and time.monotonic() > end):
            break
        run_op(catalogue[i], min(per, n - done[0]))
    return report


def zlib_crc(s):
    import zlib
    return zlib.crc32(s.encode())
