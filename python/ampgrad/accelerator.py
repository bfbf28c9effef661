"""ampgrad.accelerator: torch.accelerator's device-agnostic API. The only accelerator ampgrad knows
is CUDA; on a CPU-only machine (or a build without CUDA) there is none, and the functions that need
one raise torch's RuntimeError."""
from . import cuda as _cuda
from ._C import device as _device

__all__ = ["current_accelerator", "current_device_idx", "current_device_index", "device_count", "is_available",
           "set_device_idx", "set_device_index", "synchronize", "device_index"]

_NONE = "Cannot access accelerator device when none is available."


def device_count():
    """The number of accelerator devices (0 when there is none)."""
    return _cuda.device_count() if _cuda.is_available() else 0


def is_available():
    return device_count() > 0


def current_accelerator(check_available=False):
    """device('cuda') when CUDA is available, else None (torch.accelerator.current_accelerator)."""
    if _cuda.is_available():
        return _device("cuda")
    return None


def _require():
    if not is_available():
        raise RuntimeError(_NONE)


def current_device_index():
    _require()
    return _cuda.current_device()


current_device_idx = current_device_index


def _index(device):
    if device is None:
        return None
    if isinstance(device, int):
        return device
    d = _device(device) if isinstance(device, str) else device
    if d.type != "cuda":
        raise ValueError(f"{d.type} doesn't match the current accelerator cuda.")
    return d.index


def set_device_index(device, /):
    _require()
    idx = _index(device)
    if idx is not None:
        _cuda.set_device(idx)


set_device_idx = set_device_index


def synchronize(device=None, /):
    _require()
    _cuda.synchronize(_index(device))


class device_index:
    """Context manager that sets the current accelerator device index (None: a no-op)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            self.prev_idx = current_device_index()
            set_device_index(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None:
            set_device_index(self.prev_idx)


def _delegate(name, cuda_name=None, takes_device=True):
    def fn(device=None, /):
        _require()
        f = getattr(_cuda, cuda_name or name)
        return f(_index(device)) if takes_device else f()
    fn.__name__ = name
    fn.__doc__ = f"torch.accelerator.{name}: the CUDA device's (RuntimeError when there is no accelerator)."
    return fn


empty_cache = _delegate("empty_cache", takes_device=False)
memory_allocated = _delegate("memory_allocated")
max_memory_allocated = _delegate("max_memory_allocated")
memory_reserved = _delegate("memory_reserved")
max_memory_reserved = _delegate("max_memory_reserved")
memory_stats = _delegate("memory_stats")
reset_peak_memory_stats = _delegate("reset_peak_memory_stats")
get_memory_info = _delegate("get_memory_info", "mem_get_info")
current_stream = _delegate("current_stream")


def get_device_capability(device=None, /):
    """{'major': ..., 'minor': ...} of the CUDA device (torch.accelerator's form)."""
    _require()
    major, minor = _cuda.get_device_capability(_index(device))
    return {"major": major, "minor": minor}


__all__ += ["empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
            "memory_stats", "reset_peak_memory_stats", "get_memory_info", "current_stream", "get_device_capability"]
