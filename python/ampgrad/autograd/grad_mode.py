"""Grad-mode context managers: no_grad, enable_grad, set_grad_enabled, inference_mode. Each works
as a context manager and as a decorator; the state is thread-local (kept by the engine)."""
import functools
import inspect
import threading
import warnings

from .. import _C

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled"]

is_grad_enabled = _C.is_grad_enabled
is_inference_mode_enabled = _C.is_inference_mode_enabled


class _DecoratorContextManager:
    """A context manager that can also decorate a function (or generator) to run inside it."""

    def __call__(self, func):
        if inspect.isclass(func):  # torch: deprecated, still works by wrapping the constructor
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should only "
                          "decorate functions or methods. To preserve the current behavior of class decoration, you "
                          "can directly decorate the `__init__` method and nothing else.", FutureWarning, stacklevel=2)
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:  # the generator finished: return its value (PEP 479)
                    return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a decorator without parentheses: @no_grad."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disables gradient recording inside the block (ops produce tensors with requires_grad=False)."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False


class enable_grad(_NoParamDecoratorContextManager):
    """Enables gradient recording inside the block, even within no_grad."""

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False


class set_grad_enabled(_DecoratorContextManager):
    """set_grad_enabled(mode): sets grad mode now (function form) and restores it on exit when
    used as a context manager or decorator."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be bool, not {type(mode).__name__}")
        self.prev = _C.is_grad_enabled()
        self.mode = mode
        _C._set_grad_enabled(mode)

    def __call__(self, func):
        _C._set_grad_enabled(self.prev)
        return super().__call__(func)

    def __enter__(self):
        _C._set_grad_enabled(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev)
        return False

    def clone(self):
        return self.__class__(self.mode)

    def __repr__(self):
        return f"ampgrad.autograd.grad_mode.set_grad_enabled(mode={self.mode})"


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and stronger: nothing is recorded (not even under enable_grad), tensors made
    inside are inference tensors (Tensor.is_inference()) that autograd refuses to save or see
    updated in place outside the mode, and autocast does not cache casts. inference_mode(False)
    turns both off (grad mode on), as torch's does."""

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode_or_fn=True):
        if mode_or_fn is None or isinstance(mode_or_fn, bool):
            return super().__new__(cls)
        return cls()(mode_or_fn)

    def __enter__(self):
        self.prev_grad = _C.is_grad_enabled()
        self.prev_inf = _C.is_inference_mode_enabled()
        _C._set_grad_enabled(not self.mode)
        _C._set_inference_mode(self.mode)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.prev_grad)
        _C._set_inference_mode(self.prev_inf)
        return False

    def clone(self):
        return self.__class__(self.mode)


# Whether backward may use worker threads: thread-local, as torch's. ampgrad's engine always runs
# backward on the calling thread, so the setting is recorded and reported, nothing more.
_multithreading = threading.local()


def _is_multithreading_enabled():
    return getattr(_multithreading, "enabled", True)


def _set_multithreading_enabled(mode):
    _multithreading.enabled = bool(mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """Enables or disables multithreaded backward: sets the mode now (function form) and restores
    it on exit when used as a context manager or decorator."""

    def __init__(self, mode):
        self.prev = _is_multithreading_enabled()
        _set_multithreading_enabled(mode)
        self.mode = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _set_multithreading_enabled(self.prev)

    def clone(self):
        return self.__class__(self.mode)
