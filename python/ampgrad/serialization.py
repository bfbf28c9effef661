"""ampgrad.save / ampgrad.load in torch's zip checkpoint format, so a checkpoint written by one
library loads in the other: a zip with <name>/data.pkl (pickle protocol 2; each tensor is
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())`
with its storage a persistent id ('storage', torch.<T>Storage, key, 'cpu', numel)), the storages
as raw little-endian records <name>/data/<key>, and <name>/version, byteorder, .format_version.

Views of one tensor share one storage record, as in torch (a view whose base is not a plain
contiguous tensor is written as its own contiguous copy). Tensors load on the CPU; map_location
may be None, "cpu", a CPU device, a dict or a callable (storage, location) -> storage.
"""
import _compat_pickle
import importlib
import io
import os
import pickle
import sys
import zipfile
from zlib import error as zlib_error

import numpy as np

from . import _C
from ._tensor import Size
from .nn.parameter import Parameter

_STORAGE_OF = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
               "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
               "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage"}
_DTYPE_OF = {v: k for k, v in _STORAGE_OF.items()}
_NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": np.int16,
       "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_,
       "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}
# dtypes with no typed storage class (torch writes them as bytes: UntypedStorage and _rebuild_tensor_v3)
_UNTYPED = ("uint16", "uint32", "uint64")

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]


def _dtype_name(dt):
    return str(dt).split(".")[-1]


class _Global:
    """A reference written as pickle's GLOBAL opcode (torch's names, whatever process writes them)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce asks that a reduce function be callable
        raise TypeError(f"{self.module}.{self.name} is a pickle reference")


_REBUILD = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_V3 = _Global("torch._utils", "_rebuild_tensor_v3")
_REBUILD_PARAM = _Global("torch._utils", "_rebuild_parameter")
_ORDERED_DICT = _Global("collections", "OrderedDict")


class _StorageRef:
    def __init__(self, key, dtype, numel):
        self.key, self.dtype, self.numel = key, dtype, numel


class _Writer(pickle._Pickler):
    """Pure-Python pickler (it may write GLOBAL opcodes for names that are not importable here)."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}  # (storage ptr, dtype) -> (key, tensor whose bytes are the storage)
        self._keep = []  # objects whose id() keys memo entries must outlive the dump

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            if obj.dtype in _UNTYPED:  # bytes: numel is their count
                return ("storage", _Global("torch.storage", "UntypedStorage"), obj.key, "cpu",
                        obj.numel * getattr(_C, obj.dtype).itemsize)
            return ("storage", _Global("torch", _STORAGE_OF[obj.dtype]), obj.key, "cpu", obj.numel)
        return None

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, _Global):
            key = (obj.module, obj.name)
            memo_key = ("__global__",) + key
            if memo_key in self._globals_memo:
                self.write(self.get(self._globals_memo[memo_key]))
                return
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
            self._globals_memo[memo_key] = len(self.memo)
            self.memo[id(obj)] = (len(self.memo), obj)
            self.write(self.put(self._globals_memo[memo_key]))
            return
        if isinstance(obj, _C.Tensor):
            return self._save_reduce_of(obj, self._reduce_tensor(obj))
        if isinstance(obj, Size):
            return self._save_reduce_of(obj, (_Global("torch", "Size"), (tuple(obj),)))
        if isinstance(obj, _C.dtype):
            return self.save(_Global("torch", _dtype_name(obj)))
        if isinstance(obj, _C.device):
            return self._save_reduce_of(obj, (_Global("torch", "device"), (str(obj),)))
        return super().save(obj, save_persistent_id)

    def _save_reduce_of(self, obj, rv):
        x = self.memo.get(id(obj))
        if x is not None:
            self.write(self.get(x[0]))
            return
        self._keep.append(obj)
        self.save_reduce(obj=obj, *rv)

    def _storage_for(self, t):
        """(StorageRef, offset in elements) of tensor `t`; views of one plain base share it."""
        if t.device.type != "cpu":
            t = t.cpu()
        dt = _dtype_name(t.dtype)
        root = t._base if t._base is not None else t
        plain = root.is_contiguous() and root.storage_offset() == 0
        if plain:
            ptr = (root.untyped_storage_ptr(), dt)
            if ptr not in self.storages:
                self.storages[ptr] = (str(len(self.storages)), root.detach())
            key, base = self.storages[ptr]
            return _StorageRef(key, dt, base.numel()), t.storage_offset()
        key = str(len(self.storages))
        self.storages[("copy", key)] = (key, t.detach().contiguous())
        return _StorageRef(key, dt, t.numel()), None

    def _reduce_tensor(self, t):
        ref, offset = self._storage_for(t)
        if offset is None:  # written as its own contiguous copy
            offset, stride = 0, _contiguous_strides(t.shape)
        else:
            stride = tuple(t.stride())
        param = _is_parameter(t)
        args = (ref, offset, tuple(t.shape), stride, bool(t.requires_grad) and not param, (_ORDERED_DICT, ()))
        data = (_REBUILD, args)
        if ref.dtype in _UNTYPED:
            data = (_REBUILD_V3, args + (t.dtype,))
        if param:
            return (_REBUILD_PARAM, (_Reduced(data), bool(t.requires_grad), (_ORDERED_DICT, ())))
        return data

    def save_reduce(self, func, args, state=None, listitems=None, dictitems=None, state_setter=None, *, obj=None):
        args = tuple(_Reduced(a) if (isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], _Global)
                                     and isinstance(a[1], tuple)) else a for a in args)
        return super().save_reduce(func, args, state, listitems, dictitems, state_setter, obj=obj)


class _Reduced:
    """An argument written as `func(*args)` (a nested reduce with no object of its own)."""

    def __init__(self, rv):
        self.rv = rv

    def __reduce__(self):
        return self.rv


def _contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(tuple(shape)):
        strides.append(acc)
        acc *= max(int(s), 1)
    return tuple(reversed(strides))


def _is_parameter(t):
    return isinstance(t, Parameter)


def _storage_bytes(t):
    dt = _dtype_name(t.dtype)
    if dt == "bfloat16":
        t = t.view(_C.int16)
    return np.ascontiguousarray(t.reshape(-1).numpy()).astype(np.dtype(_NP[dt]).newbyteorder("<"), copy=False).tobytes()


def _open_for(f, mode):
    if isinstance(f, (str, os.PathLike)):
        return open(f, mode), True
    return f, False


def _write_aligned(z, name, payload, alignment=64):
    """A stored member whose data starts at a multiple of `alignment` in the archive, as torch writes
    storages (padding in an 'FB' extra field), so that load(mmap=True) maps aligned arrays."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    start = z.fp.tell() + 30 + len(name.encode("utf-8"))
    pad = (-start) % alignment
    if 0 < pad < 4:
        pad += alignment
    if pad:
        info.extra = b"FB" + (pad - 4).to_bytes(2, "little") + b"Z" * (pad - 4)
    z.writestr(info, payload)


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Writes `obj` to `f` (a path or a binary file object) in torch's zip checkpoint format."""
    buf = io.BytesIO()
    w = _Writer(buf, pickle_protocol)
    w._globals_memo = {}
    w.dump(obj)
    name = "archive"
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    out = io.BytesIO()  # the archive is assembled in memory (offsets known for alignment), then written
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr(f"{name}/data.pkl", buf.getvalue())
        z.writestr(f"{name}/.format_version", b"1")
        z.writestr(f"{name}/.storage_alignment", b"64")
        if not _disable_byteorder_record:
            z.writestr(f"{name}/byteorder", b"little")
        for key, t in sorted(w.storages.values(), key=lambda kv: int(kv[0])):
            _write_aligned(z, f"{name}/data/{key}", _storage_bytes(t))
        z.writestr(f"{name}/version", b"3\n")
    fh, close = _open_for(f, "wb")
    try:
        fh.write(out.getvalue())
    finally:
        if close:
            fh.close()


# ------------------------------------------------------------------------------------------- load

def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    t = storage.as_strided(tuple(size), tuple(stride), storage_offset)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks, dtype, metadata=None):
    """A tensor over an untyped (byte) storage, viewed as `dtype`."""
    if storage.dtype != dtype:
        storage = storage.view(dtype)
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    for k, v in (state or {}).items():
        setattr(p, k, v)
    return p


class _Storage:
    def __init__(self, dtype_name):
        self.dtype_name = dtype_name


# ------------------------------------------------------------------------- weights_only allow-list

def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: a tensor (subclass) rebuilt by `func`, then its __dict__."""
    ret = func(*args)
    if isinstance(state, tuple) and len(state) == 2:
        state = state[0] or {}
    for k, v in (state or {}).items():
        setattr(ret, k, v)
    return ret


def _get_layout(name):
    if name in ("torch.strided", "strided"):
        return getattr(sys.modules["ampgrad"], "strided", name)
    raise RuntimeError(f"Unsupported layout {name} (ampgrad tensors are strided)")


_WEIGHTS_ONLY_GLOBALS = {
    "collections.OrderedDict", "collections.Counter", "torch.nn.parameter.Parameter",
    "torch.serialization._get_layout", "torch.Size", "torch.Tensor", "torch.device", "_codecs.encode",
    "builtins.bytearray", "builtins.set", "builtins.complex", "torch._utils._rebuild_tensor_v2",
    "torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state", "torch._utils._rebuild_tensor_v3",
    "torch.storage.UntypedStorage",
    "torch._tensor._rebuild_from_type_v2",
} | {f"torch.{n}" for n in _DTYPE_OF} | {f"torch.{d}" for d in (
    "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
    "float", "double", "half", "long", "int", "short", "complex64", "complex128", "uint16", "uint32",
    "uint64", "float8_e4m3fn", "float8_e5m2")}

_safe_globals = []  # user additions: objects or (object, "module.name") pairs (torch's add_safe_globals)


def _global_path(g):
    if isinstance(g, tuple):
        return g[1]
    return f"{g.__module__}.{g.__qualname__}"


def add_safe_globals(safe_globals):
    """Marks globals as safe for `weights_only` loads (torch.serialization.add_safe_globals)."""
    _safe_globals.extend(safe_globals)


def get_safe_globals():
    return list(_safe_globals)


def clear_safe_globals():
    _safe_globals.clear()


class safe_globals:
    """Context manager adding safe globals for the duration of a block (torch.serialization.safe_globals)."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._n = len(_safe_globals)
        _safe_globals.extend(self.safe_globals)

    def __exit__(self, *exc):
        del _safe_globals[self._n:]
        return False


_WEIGHTS_ONLY_HINT = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, "
    "do those steps only if you trust the source of the checkpoint. \n\t(1) In PyTorch 2.6, we changed the "
    "default value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running "
    "`torch.load` with `weights_only` set to `False` will likely succeed, but it can result in arbitrary "
    "code execution. Do it only if you got the file from a trusted source.\n\t(2) Alternatively, to load "
    "with `weights_only=True` please check the recommended steps in the following error message.\n\t"
    "WeightsUnpickler error: ")


class _WeightsOnlyError(pickle.UnpicklingError):
    pass


# -------------------------------------------------------------------------------------- unpickler

class _Reader(pickle.Unpickler):
    def __init__(self, file, records, map_location, weights_only):
        super().__init__(file)
        self.records, self.map_location, self.loaded = records, map_location, {}
        self.weights_only = weights_only

    def find_class(self, module, name):
        if (module, name) in _compat_pickle.NAME_MAPPING:  # protocol-2 names (pickle's fix_imports)
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if self.weights_only and full not in _WEIGHTS_ONLY_GLOBALS:
            # a class torch pickled as torch.X is allowed by ampgrad's class at ampgrad.X (Note [torch's module paths])
            mine = "ampgrad" + full[len("torch"):] if full.startswith("torch.") else full
            for g in _safe_globals:
                if _global_path(g) in (full, mine):
                    return g[0] if isinstance(g, tuple) else g
            raise _WeightsOnlyError(
                f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
                f"`torch.serialization.add_safe_globals([{name}])` or the "
                f"`torch.serialization.safe_globals([{name}])` context manager to allowlist this global "
                "if you trust this class/function.")
        if module == "torch._utils":
            if name == "_rebuild_tensor_v2":
                return _rebuild_tensor_v2
            if name == "_rebuild_tensor_v3":
                return _rebuild_tensor_v3
            if name == "_rebuild_parameter":
                return _rebuild_parameter
            if name == "_rebuild_parameter_with_state":
                return _rebuild_parameter_with_state
        if full == "torch._tensor._rebuild_from_type_v2":
            return _rebuild_from_type_v2
        if full == "torch.serialization._get_layout":
            return _get_layout
        if full == "torch.Tensor":
            return _C.Tensor
        if full == "torch.storage.UntypedStorage":
            return _Storage("uint8")
        if full == "torch.nn.parameter.Parameter":
            return Parameter
        if module == "torch":
            if name in _DTYPE_OF:
                return _Storage(_DTYPE_OF[name])
            if name == "Size":
                return Size
            if name == "device" or isinstance(getattr(_C, name, None), _C.dtype):
                return getattr(_C, name)
            try:
                return getattr(sys.modules["ampgrad"], name)
            except AttributeError:
                raise pickle.UnpicklingError(f"Can't get attribute 'torch.{name}': ampgrad has no '{name}'") from None
        if module.startswith("torch."):
            try:
                return getattr(importlib.import_module("ampgrad" + module[len("torch"):]), name)
            except (ImportError, AttributeError):
                raise pickle.UnpicklingError(f"Can't get attribute '{full}': ampgrad has no such name") from None
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"Unknown persistent id {pid!r}" if not self.weights_only
                                         else "unsupported persistent id encountered")
        kind, storage_type, key, location, numel = pid
        if key not in self.loaded:
            dt = storage_type.dtype_name if isinstance(storage_type, _Storage) else "uint8"
            npdt = np.dtype(_NP[dt])
            arr = self.records(f"data/{key}", npdt)
            if not isinstance(numel, int) or arr.size < numel:
                raise RuntimeError(f"PytorchStreamReader failed reading file data/{key}: the record holds "
                                   f"{arr.size} elements of {dt}, the checkpoint says {numel}; "
                                   "the checkpoint file is corrupted")
            t = _C.from_numpy(arr)
            if dt == "bfloat16":
                t = t.view(_C.bfloat16)
            ml = self.map_location
            if callable(ml):
                r = ml(t, location)
                t = t if r is None else r
            self.loaded[key] = t
        return self.loaded[key]


def _corrupt(what):
    return RuntimeError(f"PytorchStreamReader failed reading zip archive: {what}. If you are seeing this "
                        "error, there is a high likelihood that your checkpoint file is corrupted.")


def _data_offset(raw, info):
    """Byte offset of a stored member's data in the archive (after its local header)."""
    h = info.header_offset
    head = bytes(raw[h:h + 30])
    if len(head) < 30 or head[:4] != b"PK\x03\x04":
        raise _corrupt("invalid local file header")
    n = int.from_bytes(head[26:28], "little")
    m = int.from_bytes(head[28:30], "little")
    return h + 30 + n + m


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Reads a checkpoint written by ampgrad.save or torch.save (zip format) onto the CPU.

    weights_only (default True, as torch >= 2.6) unpickles only tensors, containers, dtypes, devices,
    sizes and the globals added with add_safe_globals; mmap=True maps the file's storages copy-on-write
    (f must be a path) instead of reading them."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if isinstance(map_location, dict):
        bad = [v for v in map_location.values() if not str(v).startswith("cpu")]
        map_location = None if not bad else map_location
    if map_location is not None and not callable(map_location) and not str(map_location).startswith("cpu"):
        dev = _C.device(map_location) if isinstance(map_location, str) else map_location
        map_location = (lambda s, loc, _d=dev: s.to(_d))
    if mmap:
        if not isinstance(f, (str, os.PathLike)):
            raise ValueError("f must be a file path in order to use the mmap argument")
        raw = np.memmap(os.fspath(f), dtype=np.uint8, mode="c") if os.path.getsize(f) else np.zeros(0, np.uint8)
        data = raw
    else:
        fh, close = _open_for(f, "rb")
        try:
            data = fh.read()
        finally:
            if close:
                fh.close()
        raw = np.frombuffer(data, dtype=np.uint8)
    head = bytes(raw[:4])
    if head not in (b"PK\x03\x04", b"PK\x05\x06"):
        if len(raw) == 0 and not weights_only:
            raise EOFError("Ran out of input")
        if head[:2] == b"PK":
            raise _corrupt("not a ZIP archive")
        raise pickle.UnpicklingError(
            ("Weights only load failed. " if weights_only else "")
            + "ampgrad.load reads torch's zip checkpoint format (torch.save since 1.6); this file is not a "
              "zip archive (torch's legacy format is not supported)")
    try:
        z = zipfile.ZipFile(io.BytesIO(raw) if mmap else io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise _corrupt("failed finding central directory") from None
    names = z.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
    if not pkl:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    prefix = pkl[0][: -len("data.pkl")]

    def read(name):
        try:
            return z.read(name)
        except KeyError:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name[len(prefix):]}: "
                               "file not found") from None
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib_error) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name[len(prefix):]}: "
                               f"invalid header or archive is corrupted ({e})") from None

    def record(rec, npdt):
        name = prefix + rec
        if mmap:
            try:
                info = z.getinfo(name)
            except KeyError:
                raise RuntimeError(f"PytorchStreamReader failed locating file {rec}: file not found") from None
            if info.compress_type != zipfile.ZIP_STORED:
                return np.frombuffer(read(name), dtype=npdt.newbyteorder("<")).astype(npdt)
            off = _data_offset(raw, info)
            if off + info.file_size > raw.size:
                raise _corrupt(f"record {rec} runs past the end of the file")
            n = info.file_size // npdt.itemsize
            return raw[off:off + n * npdt.itemsize].view(npdt)  # copy-on-write map of the file
        return np.frombuffer(read(name), dtype=npdt.newbyteorder("<")).astype(npdt)  # a private copy

    reader = _Reader(io.BytesIO(read(pkl[0])), record, map_location, weights_only)
    try:
        return reader.load()
    except _WeightsOnlyError as e:
        raise pickle.UnpicklingError(_WEIGHTS_ONLY_HINT + str(e)) from None
    except (RuntimeError, pickle.UnpicklingError, MemoryError):
        raise
    except Exception as e:  # a corrupted data.pkl: torch raises UnpicklingError for it too
        raise pickle.UnpicklingError(
            ("Weights only load failed. " if weights_only else "") + f"corrupted data.pkl: {type(e).__name__}: {e}"
        ) from None
