"""Anomaly detection: nodes made in anomaly mode remember the forward traceback that made them; a
backward error first warns with it, and with check_nan a NaN produced by backward raises."""
import functools
import warnings

from .. import _C

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled", "is_anomaly_check_nan_enabled"]

is_anomaly_enabled = _C.is_anomaly_enabled
is_anomaly_check_nan_enabled = _C.is_anomaly_check_nan_enabled
set_anomaly_enabled = _C._set_anomaly_enabled


class detect_anomaly:
    """Context manager (or decorator) enabling anomaly detection. Warns that it is on, as torch does."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Sets anomaly detection on or off now (function form); as a context manager it also restores
    the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
