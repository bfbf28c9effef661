"""ampgrad.cuda: device queries, the caching allocator's statistics, events and streams, with
torch.cuda's names. Without a CUDA build (or without a driver / device) is_available() is False,
device_count() is 0 and the calls that need a device raise as torch's do.

The CUDA backend under this is compile-checked; see kernels/cuda for what has run on a GPU."""
import contextlib as _contextlib
import random as _random
import struct as _struct

from .. import _C
from .. import _creation
from . import amp

OutOfMemoryError = _C.OutOfMemoryError


def is_available():
    return _C._cuda_is_available()


def device_count():
    return 0 if not is_available() else _C._cuda_device_count()


def _no_cuda():
    raise AssertionError("Torch not compiled with CUDA enabled")


def _lazy_init():
    if not is_available():
        _no_cuda()


def is_initialized():
    return is_available()


def init():
    _lazy_init()


def _index(device, optional=True):
    """torch.cuda's _get_device_index: None -> current device, int, "cuda:N", device."""
    if device is None:
        return _C._cuda_current_device() if is_available() else 0
    if isinstance(device, str):
        device = _C.device(device)
    if isinstance(device, _C.device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        return device.index if device.index is not None else (_C._cuda_current_device() if is_available() else 0)
    if isinstance(device, int):
        return device
    raise ValueError(f"Expected a cuda device, but got: {device!r}")


def current_device():
    _lazy_init()
    return _C._cuda_current_device()


def set_device(device):
    d = _index(device)
    if d >= 0:
        _lazy_init()
        _C._cuda_set_device(d)


class device:  # noqa: N801  (torch.cuda.device is a lowercase context manager)
    def __init__(self, device):
        self.idx = _index(device) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = current_device()
            if self.prev_idx != self.idx:
                set_device(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


def synchronize(device=None):
    if is_available():
        _C._cuda_synchronize(_index(device))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return p.major, p.minor


class _CudaDeviceProperties:
    def __init__(self, d):
        self.__dict__.update(d)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    _lazy_init()
    return _CudaDeviceProperties(_C._cuda_get_device_properties(_index(device)))


def mem_get_info(device=None):
    _lazy_init()
    return tuple(_C._cuda_mem_get_info(_index(device)))


# ---- caching allocator
def memory_stats(device=None):
    if not is_available():
        return {}
    return dict(_C._cuda_memory_stats(_index(device)))


def memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device=None):
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device=None):
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def reset_peak_memory_stats(device=None):
    if is_available():
        _C._cuda_reset_peak_memory_stats(_index(device))


def reset_max_memory_allocated(device=None):
    reset_peak_memory_stats(device)


def empty_cache():
    if is_available():
        _C._cuda_empty_cache()


# ---- events and streams (one stream per device for now: the current stream)
class Event:
    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self._handle = 0
        _lazy_init()
        self.enable_timing = enable_timing
        self._handle = _C._cuda_event_create(bool(enable_timing))

    def record(self, stream=None):
        _C._cuda_event_record(self._handle)

    def synchronize(self):
        _C._cuda_event_synchronize(self._handle)

    def query(self):
        return _C._cuda_event_query(self._handle)

    def wait(self, stream=None):
        pass  # one stream per device: work recorded on it is already ordered

    def elapsed_time(self, end_event):
        return _C._cuda_event_elapsed_time(self._handle, end_event._handle)

    def __del__(self):
        if getattr(self, "_handle", 0):
            _C._cuda_event_destroy(self._handle)
            self._handle = 0


class Stream:
    """The device's current stream (ampgrad has no side streams yet)."""

    def __init__(self, device=None, priority=0, **kwargs):
        _lazy_init()
        self.device_index = _index(device)
        self.cuda_stream = _C._cuda_current_stream(self.device_index)

    def synchronize(self):
        _C._cuda_stream_synchronize(self.cuda_stream, self.device_index)

    def query(self):
        ev = Event()
        ev.record(self)
        return ev.query()

    def wait_event(self, event):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.cuda_stream, self.device_index) == (other.cuda_stream, other.device_index)

    def __hash__(self):
        return hash((self.cuda_stream, self.device_index))


def current_stream(device=None):
    _lazy_init()
    return Stream(device)


def default_stream(device=None):
    return current_stream(device)


@_contextlib.contextmanager
def stream(s):
    yield s


# ---- random: a Philox (seed, offset) generator per device (Note [Philox streams] in
# kernels/common/philox.h). Seeding before a device exists is a no-op here (torch queues it).
_U64 = 0xFFFF_FFFF_FFFF_FFFF


def manual_seed(seed):
    if is_available():
        _C._cuda_manual_seed(-1, int(seed) & _U64)


def manual_seed_all(seed):
    if is_available():
        _C._cuda_manual_seed_all(int(seed) & _U64)


def seed():
    """Seeds the current device with a non-deterministic number."""
    manual_seed(_random.SystemRandom().getrandbits(64))


def seed_all():
    manual_seed_all(_random.SystemRandom().getrandbits(64))


def initial_seed():
    _lazy_init()
    return _C._cuda_initial_seed(-1)


def get_rng_state(device="cuda"):
    """The device's generator state as a uint8 CPU tensor: seed and offset, 8 little-endian bytes each."""
    _lazy_init()
    seed_, offset = _C._cuda_get_rng_state(_index(device))
    return _creation.tensor(list(_struct.pack("<QQ", seed_, offset)), dtype=_C.uint8)


def set_rng_state(new_state, device="cuda"):
    _lazy_init()
    data = bytes(int(b) for b in new_state.tolist())
    if len(data) != 16:
        raise RuntimeError(f"Expected a CUDA generator state of 16 bytes, got {len(data)}")
    seed_, offset = _struct.unpack("<QQ", data)
    _C._cuda_set_rng_state(_index(device), seed_, offset)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def is_bf16_supported(including_emulation=True):
    if not is_available():
        return False
    return including_emulation or get_device_capability()[0] >= 8
