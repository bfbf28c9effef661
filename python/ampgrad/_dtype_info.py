"""Machine limits of dtypes: finfo and iinfo (torch.finfo / torch.iinfo).

A leaf of the package's import layering: it imports only _C (and NumPy)."""
import builtins

import numpy as np

from . import _C


class finfo:
    """Machine limits of a floating dtype (torch.finfo)."""

    _BF16 = dict(bits=16, eps=0.0078125, max=3.3895313892515355e+38, min=-3.3895313892515355e+38,
                 tiny=1.1754943508222875e-38, smallest_normal=1.1754943508222875e-38, resolution=0.01)

    def __init__(self, type=None):
        type = type or _C.get_default_dtype()
        if not type.is_floating_point:
            raise TypeError("finfo() requires a floating point input type. Use iinfo to handle 'torch.finfo'")
        self.dtype = repr(type).split(".")[-1]
        if type == _C.bfloat16:
            info = self._BF16
        else:
            f = np.finfo({"float16": np.float16, "float32": np.float32, "float64": np.float64}[self.dtype])
            info = dict(bits=f.bits, eps=builtins.float(f.eps), max=builtins.float(f.max), min=builtins.float(f.min),
                        tiny=builtins.float(f.tiny), smallest_normal=builtins.float(f.smallest_normal),
                        resolution=builtins.float(f.resolution))
        self.__dict__.update(info)

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Machine limits of an integer dtype (torch.iinfo)."""

    def __init__(self, type):
        if type.is_floating_point:
            raise TypeError("iinfo() requires an integer input type. Use finfo to handle 'torch.iinfo'")
        self.dtype = repr(type).split(".")[-1]
        if self.dtype == "bool":
            self.bits, self.min, self.max = 8, 0, 1
        else:
            i = np.iinfo(self.dtype)
            self.bits, self.min, self.max = i.bits, int(i.min), int(i.max)

    def __repr__(self):
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"


class layout:
    """torch.layout: how a tensor's elements are stored (strided, or sparse COO: Note [Sparse COO])."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return "ampgrad." + self._name

    def __reduce__(self):
        return self._name


strided = layout("strided")
sparse_coo = layout("sparse_coo")


def _check_layout(value):
    """The factories' layout=: strided (or None) makes a dense tensor; sparse COO tensors come from
    sparse_coo_tensor / Tensor.to_sparse, anything else is torch's TypeError."""
    if value is strided:
        return
    if not isinstance(value, layout):
        raise TypeError(f"argument 'layout' must be torch.layout, not {type(value).__name__}")
    raise NotImplementedError(f"layout={value!r} is not supported by this factory in ampgrad; make sparse COO "
                              "tensors with ampgrad.sparse_coo_tensor(...) or Tensor.to_sparse()")
