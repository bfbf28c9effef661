"""ampgrad.cuda: device queries. Without a CUDA build every query says there is no device."""
from .. import _C


def is_available():
    return _C._cuda_is_available()


def device_count():
    return 0 if not is_available() else _C._cuda_device_count()


def _no_cuda():
    raise AssertionError("Torch not compiled with CUDA enabled")


def current_device():
    if not is_available():
        _no_cuda()
    return _C._cuda_current_device()


def synchronize(device=None):
    if is_available():
        _C._cuda_synchronize()


def manual_seed(seed):
    if is_available():
        _C._cuda_manual_seed(int(seed))


def manual_seed_all(seed):
    manual_seed(seed)


def is_bf16_supported():
    return is_available()


from . import amp  # noqa: E402
