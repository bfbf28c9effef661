"""Process-wide switches with torch's names that scripts set up front: deterministic algorithms,
float32 matmul precision, and torch.compile.

ampgrad.compile: ampgrad runs eagerly, op by op; there is no graph capture. compile(model, ...)
therefore returns `model` itself (a function, or an nn.Module, unchanged), so calling the result has
exactly the eager semantics, numbers and autograd of calling `model`. It takes torch's keyword
arguments (fullgraph, dynamic, backend, mode, options, disable, ...) and both decorator forms
(@compile and @compile(mode=...)), checks them as torch does (mode and options together is a
RuntimeError), and otherwise ignores them."""
import builtins as _builtins
import warnings as _warnings

from . import backends as _backends

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision", "get_float32_matmul_precision",
           "compile"]

_deterministic = False
_warn_only = False


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Records the flag (ampgrad's CPU kernels are deterministic already: reductions have a fixed order)."""
    global _deterministic, _warn_only
    if not isinstance(mode, _builtins.bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    if not isinstance(warn_only, _builtins.bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'warn_only' must be bool, not "
                        f"{type(warn_only).__name__}")
    _deterministic, _warn_only = mode, warn_only if mode else False


def are_deterministic_algorithms_enabled():
    return _deterministic


def is_deterministic_algorithms_warn_only_enabled():
    return _warn_only


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = modes[debug_mode]
    elif not isinstance(debug_mode, _builtins.int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")


def get_deterministic_debug_mode():
    if _deterministic:
        return 1 if _warn_only else 2
    return 0


_matmul_precision = "highest"


def set_float32_matmul_precision(precision):
    """"highest": fp32 GEMMs in fp32; "high" / "medium": TF32 allowed on CUDA (backends.cuda.matmul.allow_tf32).
    Another string warns and changes nothing, as torch's."""
    global _matmul_precision
    if precision not in ("highest", "high", "medium"):
        _warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                       "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _matmul_precision = precision
    _backends.cuda.matmul.allow_tf32 = precision != "highest"


def get_float32_matmul_precision():
    # allow_tf32 set directly moves the answer as in torch ("high" when on, "highest" when off)
    tf32 = _backends.cuda.matmul.allow_tf32
    if tf32 == (_matmul_precision != "highest"):
        return _matmul_precision
    return "high" if tf32 else "highest"


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            name=None, disable=False, **kwargs):
    """Returns `model` itself: ampgrad executes eagerly (see the module's docstring)."""
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified at the same time.")
    if model is None:
        def fn(model):
            if model is None:
                raise RuntimeError("Model can't be None")
            return compile(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, name=name, disable=disable, **kwargs)
        return fn
    return model
