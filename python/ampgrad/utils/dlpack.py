"""torch.utils.dlpack: DLPack capsules in and out (implementation: ampgrad/_dlpack.py, csrc/bindings/dlpack.cpp)."""
from .._dlpack import DLDeviceType, from_dlpack, to_dlpack

__all__ = ["DLDeviceType", "from_dlpack", "to_dlpack"]
