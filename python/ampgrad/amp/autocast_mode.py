"""ampgrad.autocast: a context manager / decorator that runs eligible ops in lower precision per the
op table's policies (csrc/ops/op_list.def), plus custom_fwd / custom_bwd for autograd Functions."""
import functools
import warnings

from .. import _C

__all__ = ["autocast", "custom_fwd", "custom_bwd", "is_autocast_available"]


def is_autocast_available(device_type):
    """True when autocast supports `device_type` ("cpu" and "cuda")."""
    return _C._is_autocast_available(device_type)


def _check_device_type(device_type):
    if device_type not in ("cpu", "cuda"):
        raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {device_type}")


class autocast:
    """autocast(device_type, dtype=None, enabled=True, cache_enabled=None)

    Inside the region, ops listed for `device_type` run in `dtype` (float16 on CUDA, bfloat16 on
    CPU by default), fp32-listed ops run in float32, and everything else follows normal type
    promotion. Usable as a context manager or a decorator; the state is thread-local and is
    restored on exit, also when the block raises."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        _check_device_type(device_type)
        self.device = device_type
        self.fast_dtype = _C.get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = _C.is_autocast_cache_enabled() if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                if not _C._cuda_is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in (_C.bfloat16, _C.float16):
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                              "CPU Autocast only supports dtypes of ampgrad.bfloat16, ampgrad.float16 currently.",
                              stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _C.is_autocast_cache_enabled()
        self.prev = _C.is_autocast_enabled(self.device)
        self.prev_fastdtype = _C.get_autocast_dtype(self.device)
        _C._set_autocast_enabled(self.device, self._enabled)
        _C._set_autocast_dtype(self.device, self.fast_dtype)
        _C.autocast_increment_nesting()
        _C.set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        # Drop the cast cache when leaving the outermost region.
        if _C.autocast_decrement_nesting() == 0:
            _C.clear_autocast_cache()
        _C._set_autocast_enabled(self.device, self.prev)
        _C._set_autocast_dtype(self.device, self.prev_fastdtype)
        _C.set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        decorate_autocast.__script_unsupported = "@autocast() decorator is not supported in script mode"
        return decorate_autocast


def _cast(value, device_type, dtype):
    """Casts floating tensors on `device_type` (not float64) inside nested containers to `dtype`."""
    if isinstance(value, _C.Tensor):
        ok = value.is_floating_point() and value.device.type == device_type and value.dtype != _C.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom Function's forward: records the autocast state for backward; with
    `cast_inputs`, runs forward with autocast off on inputs cast to that dtype (inside an
    autocast region only)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _C.get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _C.is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_autocast = _C.is_autocast_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if in_autocast:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom Function's backward: runs it with the autocast state its forward had."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
