"""torch's top-level autocast state functions (both the device_type forms and the legacy ones)."""
from . import _C
from .amp.autocast_mode import _check_device_type

clear_autocast_cache = _C.clear_autocast_cache
is_autocast_cache_enabled = _C.is_autocast_cache_enabled
set_autocast_cache_enabled = _C.set_autocast_cache_enabled
autocast_increment_nesting = _C.autocast_increment_nesting
autocast_decrement_nesting = _C.autocast_decrement_nesting


def _device_type_arg(name, device_type):
    # torch's parser: `str device_type` (position 1), before the device string is read
    if not isinstance(device_type, str):
        raise TypeError(f"{name}(): argument 'device_type' (position 1) must be str, not {type(device_type).__name__}")
    _check_device_type(device_type)


def is_autocast_enabled(device_type=None):
    if device_type is None:
        return _C.is_autocast_enabled("cuda")
    _device_type_arg("is_autocast_enabled", device_type)
    return _C.is_autocast_enabled(device_type)


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # legacy set_autocast_enabled(enabled): CUDA
        device_type, enabled = "cuda", device_type
    _device_type_arg("set_autocast_enabled", device_type)
    _C._set_autocast_enabled(device_type, bool(enabled))


def get_autocast_dtype(device_type):
    _device_type_arg("get_autocast_dtype", device_type)
    return _C.get_autocast_dtype(device_type)


def set_autocast_dtype(device_type, dtype):
    _device_type_arg("set_autocast_dtype", device_type)
    _C._set_autocast_dtype(device_type, dtype)


def get_autocast_gpu_dtype():
    return _C.get_autocast_dtype("cuda")


def get_autocast_cpu_dtype():
    return _C.get_autocast_dtype("cpu")


def set_autocast_gpu_dtype(dtype):
    _C._set_autocast_dtype("cuda", dtype)


def set_autocast_cpu_dtype(dtype):
    _C._set_autocast_dtype("cpu", dtype)


def is_autocast_cpu_enabled():
    return _C.is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _C._set_autocast_enabled("cpu", bool(enabled))
