"""torch.nn.utils.skip_init: a module constructed without running its initialisation (its parameters are
allocated and left as they are)."""
import inspect

from .. import init as _init

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    # A Module class, recognised by its interface: nn.utils sits below nn.modules in the layers.
    if not (isinstance(module_cls, type) and callable(getattr(module_cls, "named_parameters", None))):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    # Construct with the nn.init fills turned into no-ops: the storage is allocated, not initialised.
    names = [n for n in dir(_init) if n.endswith("_") and not n.startswith("_") and callable(getattr(_init, n))]
    saved = {n: getattr(_init, n) for n in names}
    try:
        for n in names:
            setattr(_init, n, lambda tensor, *a, **k: tensor)
        return module_cls(*args, **kwargs)
    finally:
        for n, f in saved.items():
            setattr(_init, n, f)
