"""ampgrad.save / ampgrad.load in torch's zip checkpoint format, so a checkpoint written by one
library loads in the other: a zip with <name>/data.pkl (pickle protocol 2; each tensor is
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())`
with its storage a persistent id ('storage', torch.<T>Storage, key, 'cpu', numel)), the storages
as raw little-endian records <name>/data/<key>, and <name>/version, byteorder, .format_version.

Views of one tensor share one storage record, as in torch (a view whose base is not a plain
contiguous tensor is written as its own contiguous copy). Tensors load on the CPU; map_location
may be None, "cpu", a CPU device, a dict or a callable (storage, location) -> storage.
"""
import importlib
import io
import os
import pickle
import sys
import zipfile

import numpy as np

from . import _C
from ._tensor import Size
from .nn.parameter import Parameter

_STORAGE_OF = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
               "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
               "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage"}
_DTYPE_OF = {v: k for k, v in _STORAGE_OF.items()}
_NP = {"float32": np.float32, "float64": np.float64, "float16": np.float16, "bfloat16": np.int16,
       "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8, "uint8": np.uint8, "bool": np.bool_}

__all__ = ["save", "load"]


def _dtype_name(dt):
    return str(dt).split(".")[-1]


class _Global:
    """A reference written as pickle's GLOBAL opcode (torch's names, whatever process writes them)."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce asks that a reduce function be callable
        raise TypeError(f"{self.module}.{self.name} is a pickle reference")


_REBUILD = _Global("torch._utils", "_rebuild_tensor_v2")
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
    fh, close = _open_for(f, "wb")
    try:
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as z:
            z.writestr(f"{name}/data.pkl", buf.getvalue())
            z.writestr(f"{name}/.format_version", b"1")
            z.writestr(f"{name}/.storage_alignment", b"64")
            if not _disable_byteorder_record:
                z.writestr(f"{name}/byteorder", b"little")
            for key, t in sorted(w.storages.values(), key=lambda kv: int(kv[0])):
                z.writestr(f"{name}/data/{key}", _storage_bytes(t))
            z.writestr(f"{name}/version", b"3\n")
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


class _Reader(pickle.Unpickler):
    def __init__(self, file, records, map_location):
        super().__init__(file)
        self.records, self.map_location, self.loaded = records, map_location, {}

    def find_class(self, module, name):
        if module == "torch._utils":
            if name == "_rebuild_tensor_v2":
                return _rebuild_tensor_v2
            if name == "_rebuild_parameter":
                return _rebuild_parameter
            if name == "_rebuild_parameter_with_state":
                return _rebuild_parameter_with_state
        if module == "torch":
            if name in _DTYPE_OF:
                return _Storage(_DTYPE_OF[name])
            if name == "Size":
                return Size
            if name == "device" or isinstance(getattr(_C, name, None), _C.dtype):
                return getattr(_C, name)
            return getattr(sys.modules["ampgrad"], name)
        if module.startswith("torch."):
            return getattr(importlib.import_module("ampgrad" + module[len("torch"):]), name)
        return super().find_class(module, name)

    def persistent_load(self, pid):
        kind, storage_type, key, location, numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"Unknown persistent id {kind!r}")
        if key not in self.loaded:
            dt = storage_type.dtype_name if isinstance(storage_type, _Storage) else "uint8"
            arr = np.frombuffer(self.records(f"data/{key}"), dtype=np.dtype(_NP[dt]).newbyteorder("<"))
            t = _C.from_numpy(arr.astype(_NP[dt]).copy())
            if dt == "bfloat16":
                t = t.view(_C.bfloat16)
            ml = self.map_location
            if callable(ml):
                r = ml(t, location)
                t = t if r is None else r
            self.loaded[key] = t
        return self.loaded[key]


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Reads a checkpoint written by ampgrad.save or torch.save (zip format) onto the CPU."""
    if isinstance(map_location, dict):
        bad = [v for v in map_location.values() if not str(v).startswith("cpu")]
        map_location = None if not bad else map_location
    if map_location is not None and not callable(map_location) and not str(map_location).startswith("cpu"):
        dev = _C.device(map_location) if isinstance(map_location, str) else map_location
        map_location = (lambda s, loc, _d=dev: s.to(_d))
    fh, close = _open_for(f, "rb")
    try:
        data = fh.read()
    finally:
        if close:
            fh.close()
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise pickle.UnpicklingError("ampgrad.load reads torch's zip checkpoint format (torch.save since 1.6); "
                                     "this file is not a zip archive (torch's legacy format is not supported)")
    z = zipfile.ZipFile(io.BytesIO(data))
    names = z.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
    if not pkl:
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    prefix = pkl[0][: -len("data.pkl")]
    reader = _Reader(io.BytesIO(z.read(pkl[0])), lambda rec: z.read(prefix + rec), map_location)
    return reader.load()

