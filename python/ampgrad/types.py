"""ampgrad.types: the type aliases torch.types gives to annotations (custom_op schema inference reads them)."""
from typing import Union

from ._C import Tensor, dtype as _dtype, device as _device

__all__ = ["Number", "Device", "_dtype", "_device", "_TensorOrTensors"]

Number = Union[int, float, bool]
Device = Union[_device, str, int, None]
_TensorOrTensors = Union[Tensor, tuple]
