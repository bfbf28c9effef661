"""Interop with other array libraries, as torch's: the DLPack protocol (Tensor.__dlpack__,
__dlpack_device__, from_dlpack; the capsules are made and read in csrc/bindings/dlpack.cpp) and
NumPy's array protocols (__array__, __array_interface__, __cuda_array_interface__)."""
from __future__ import annotations

import enum
from typing import Any

from . import _C
from ._C import Tensor

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]


class DLDeviceType(enum.IntEnum):
    # Enums as in the DLPack specification (csrc/bindings/dlpack.h)
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


def _dl_device_of(device) -> tuple[DLDeviceType, int]:
    if device.type == "cuda":
        return DLDeviceType.kDLCUDA, device.index if device.index is not None else _C._cuda_current_device()
    return DLDeviceType.kDLCPU, 0


def _dlpack_device(self) -> tuple[enum.IntEnum, int]:
    return _dl_device_of(self.device)


def _dlpack(self, *, stream: Any | None = -1, max_version: tuple[int, int] | None = None,
            dl_device: tuple[enum.IntEnum, int] | None = None, copy: bool | None = None):
    """A DLPack capsule sharing this tensor's memory (a copy with copy=True), for another library's
    from_dlpack. max_version >= (1, 0) gives a versioned ("dltensor_versioned") capsule, as torch's."""
    if self.requires_grad:
        raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
    if stream is not None and type(stream) is not int:
        raise TypeError("stream must be ``int`` or ``none``")
    if self.device.type == "cuda":
        if stream == 2:
            raise BufferError("per-thread default stream is not supported.")
        if stream != -1:
            # ampgrad queues its work on the device's default stream: the consumer's stream sees it
            # once that work is done.
            _C._cuda_synchronize(self.device.index if self.device.index is not None else _C._cuda_current_device())
    elif stream is not None and stream != -1:
        raise AssertionError("stream should be None on cpu.")
    t = self
    copied = False
    if dl_device is not None:
        want = (int(dl_device[0]), int(dl_device[1]))
        if want != tuple(int(x) for x in _dlpack_device(self)):
            if copy is False:
                raise BufferError(f"cannot export a {self.device} tensor to DLPack device {want} without a copy")
            if want[0] == DLDeviceType.kDLCPU:
                t = self.cpu()
            elif want[0] == DLDeviceType.kDLCUDA:
                t = self.to(f"cuda:{want[1]}")
            else:
                raise BufferError(f"Unsupported DLPack device {want} for an ampgrad tensor")
            copied = True
    if copy and not copied:
        t = t.clone()
        copied = True
    versioned = max_version is not None and max_version[0] >= 1
    return _C._to_dlpack(t.detach(), versioned, copied)


def from_dlpack(ext_tensor: Any, *, device=None, copy: bool | None = None) -> Tensor:
    """A tensor sharing the memory of `ext_tensor` (any object with __dlpack__, such as a NumPy array
    or a torch tensor, or a DLPack capsule), as torch.from_dlpack. Writes show through both ways."""
    if hasattr(ext_tensor, "__dlpack__"):
        kwargs: dict[str, Any] = {"max_version": (1, 0)}
        if copy is not None:
            kwargs["copy"] = copy
        ext_device = ext_tensor.__dlpack_device__()
        cross_device = False
        producer_copies = True
        if device is not None:
            device = device if isinstance(device, _C.device) else _C.device(device)
            target = _dl_device_of(device)
            cross_device = (int(ext_device[0]), int(ext_device[1])) != (int(target[0]), int(target[1]))
            if not cross_device:
                kwargs["dl_device"] = target
            elif copy is False:
                raise ValueError(f"cannot move DLPack tensor from device {ext_device} to {target} without copying. "
                                 "Set copy=None or copy=True.")
        if int(ext_device[0]) in (DLDeviceType.kDLCUDA, DLDeviceType.kDLROCM):
            kwargs["stream"] = 1  # the legacy default stream, ampgrad's stream
        capsule = None
        for drop in (None, "max_version", "copy", "dl_device"):  # older producers know fewer keywords
            if drop is not None:
                if drop == "copy" and "copy" in kwargs:
                    producer_copies = False
                kwargs.pop(drop, None)
            try:
                capsule = ext_tensor.__dlpack__(**kwargs)
                break
            except TypeError:
                if drop == "dl_device":
                    raise
        t = _C._from_dlpack(capsule)
        if copy and not producer_copies and not cross_device:
            t = t.clone()
        if cross_device:
            t = t.to(device)
        return t
    if device is not None or copy is not None:
        raise AssertionError("device and copy kwargs not supported when ext_tensor is already a DLPack capsule.")
    return _C._from_dlpack(ext_tensor)


def to_dlpack(tensor: Tensor):
    """An unversioned DLPack capsule ("dltensor") sharing the tensor's memory (torch.utils.dlpack.to_dlpack)."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"to_dlpack(): argument 'tensor' (position 1) must be Tensor, not {type(tensor).__name__}")
    return _C._to_dlpack(tensor.detach(), False, False)


# ---- NumPy's array protocols
def _array(self, dtype=None, copy=None):
    a = self.numpy()  # torch's: RuntimeError for requires_grad, TypeError for bf16 and CUDA tensors
    if copy is True:
        a = a.copy()
    return a if dtype is None else a.astype(dtype, copy=False)


_TYPESTR = {"bool": "|b1", "uint8": "|u1", "int8": "|i1", "int16": "<i2", "int32": "<i4", "int64": "<i8",
            "float16": "<f2", "float32": "<f4", "float64": "<f8"}


def _interface(t, what):
    name = repr(t.dtype).split(".")[-1]
    if name not in _TYPESTR:
        # NumPy has no bfloat16: no interface, so numpy falls back to __array__ (and its error).
        raise AttributeError(f"Can't get {what} on a tensor of dtype {t.dtype}: NumPy has no such type")
    if t.requires_grad:
        if what == "__array_interface__":  # np.asarray(t) reaches here first: torch's numpy() error
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        raise RuntimeError(f"Can't get {what} on Variable that requires grad. "
                           "If gradients aren't required, use var.detach() to get Variable that doesn't require grad.")
    itemsize = t.element_size()
    strides = None if t.is_contiguous() else tuple(s * itemsize for s in t.stride())
    return dict(typestr=_TYPESTR[name], shape=tuple(t.shape), strides=strides,
                data=(t.data_ptr() if t.numel() > 0 else 0, False), version=3 if what == "__array_interface__" else 2)


def _array_interface(self):
    """NumPy's array interface (version 3) for CPU tensors: np.asarray(t) shares t's memory. torch has
    none (its np.asarray goes through __array__); this one keeps __array__'s errors."""
    if self.device.type != "cpu":
        raise AttributeError(f"Can't get __array_interface__ on non-CPU tensor type: {self.type()} "
                             "Use Tensor.cpu() to copy the tensor to host memory first.")
    return _interface(self, "__array_interface__")


def _cuda_array_interface(self):
    """Array view description for CUDA tensors (numba's __cuda_array_interface__, version 2), as torch's."""
    if not self.is_cuda:
        raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: {self.type()} "
                             "If CUDA data is required use tensor.cuda() to copy tensor to device memory.")
    return _interface(self, "__cuda_array_interface__")


Tensor.__dlpack__ = _dlpack
Tensor.__dlpack_device__ = _dlpack_device
Tensor.__array__ = _array
Tensor.__array_interface__ = property(_array_interface)
Tensor.__cuda_array_interface__ = property(_cuda_array_interface)
