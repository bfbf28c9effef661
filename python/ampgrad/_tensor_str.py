"""Tensor repr/str formatting that reproduces torch 2.x's ``torch._tensor_str``.

Works on numpy copies of the values; dtypes print as ``ampgrad.<name>``.
"""

import contextlib
import dataclasses
import math

import numpy as np

from . import _C


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Set printing options; same semantics and defaults as torch.set_printoptions."""
    if profile is not None and profile in _PROFILES:
        for key, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, key, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    # Like torch, sci_mode is always overwritten (None restores auto mode).
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """Current options as a dict that can be passed back to set_printoptions()."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses a common width/notation for all elements, like torch's _Formatter."""

    def __init__(self, values, floating):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)

        if not floating:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return

        abs_vals = np.abs(nonzero_finite)
        nz_min = float(abs_vals.min())
        nz_max = float(abs_vals.max())
        self.int_mode = bool(np.all(nonzero_finite == np.ceil(nonzero_finite)))
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = nz_max / nz_min > 1000.0 or nz_max > 1.0e8 or nz_min < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode

        precision = PRINT_OPTS.precision
        # Only nonzero finite values set the width; nan/inf/0 may end up unpadded.
        for value in nonzero_finite.tolist():
            if self.sci_mode:
                width = len(f"{value:.{precision}e}")
            elif self.int_mode:
                width = len(f"{value:.0f}") + 1  # room for the trailing "."
            else:
                width = len(f"{value:.{precision}f}")
            self.max_width = max(self.max_width, width)

    def width(self):
        return self.max_width

    def format(self, value):
        if self.floating_dtype:
            precision = PRINT_OPTS.precision
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{precision}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _vector_str(values, indent, summarize, formatter):
    # Each element takes its width plus ", ".
    element_length = formatter.width() + 2
    elements_per_line = max(
        1, math.floor((PRINT_OPTS.linewidth - indent) / element_length)
    )
    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        data = (
            [formatter.format(v) for v in values[:edge].tolist()]
            + [" ..."]
            + [formatter.format(v) for v in values[-edge:].tolist()]
        )
    else:
        data = [formatter.format(v) for v in values.tolist()]

    lines = [
        ", ".join(data[i : i + elements_per_line])
        for i in range(0, len(data), elements_per_line)
    ]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(values, indent, summarize, formatter):
    dim = values.ndim
    if dim == 0:
        return formatter.format(values.item())
    if dim == 1:
        return _vector_str(values, indent, summarize, formatter)

    edge = PRINT_OPTS.edgeitems
    n = values.shape[0]
    if summarize and n > 2 * edge:
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        rows = list(range(n))
    slices = [
        "..."
        if i is None
        else _tensor_str_with_formatter(values[i], indent + 1, summarize, formatter)
        for i in rows
    ]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized_data(values):
    """The elements that will actually be printed, so only they set the format."""
    dim = values.ndim
    edge = PRINT_OPTS.edgeitems
    if dim == 0:
        return values
    if dim == 1:
        # With edge == 0 torch's values[-0:] is the whole row; kept on purpose.
        if values.shape[0] > 2 * edge:
            return np.concatenate((values[:edge], values[-edge:]))
        return values
    if not edge:
        return np.empty([0] * dim, dtype=values.dtype)
    n = values.shape[0]
    if n > 2 * edge:
        rows = list(range(edge)) + list(range(n - edge, n))
    else:
        rows = range(n)
    return np.stack([_summarized_data(values[i]) for i in rows])


def _tensor_str(values, indent, floating):
    """Body of the repr (the bracketed values) for a numpy array."""
    if values.size == 0:
        return "[]"
    summarize = values.size > PRINT_OPTS.threshold
    formatter = _Formatter(
        _summarized_data(values) if summarize else values, floating
    )
    return _tensor_str_with_formatter(values, indent, summarize, formatter)


_DTYPE_PREFIX = "dtype=ampgrad."
# "ampgrad." is longer than "torch."; measure as torch would so lines break alike.
_DTYPE_PREFIX_EXTRA = len("ampgrad.") - len("torch.")


def _torch_len(suffix):
    if suffix.startswith((_DTYPE_PREFIX, "layout=ampgrad.")):
        return len(suffix) - _DTYPE_PREFIX_EXTRA
    return len(suffix)


def _add_suffixes(tensor_str, suffixes, indent, force_newline):
    parts = [tensor_str]
    # Mirrors torch's arithmetic exactly (including its off-by-two when no "\n").
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = _torch_len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += suffix_len + 2
    parts.append(")")
    return "".join(parts)


def format_values(
    values,
    dtype_name,
    floating,
    *,
    device="cpu",
    requires_grad=False,
    grad_fn_name=None,
    default_dtype="float32",
    prefix="tensor(",
    tangent=None,
):
    """Full repr string for a numpy array carrying a tensor's values.

    ``dtype_name`` is the bare name ("float16"); ``device`` is e.g. "cuda:0".
    """
    values = np.asarray(values)
    if floating:
        values = values.astype(np.float64, copy=False)
    elif dtype_name == "bool":
        values = values.astype(np.bool_, copy=False)
    indent = len(prefix)
    suffixes = []

    if not str(device).startswith("cpu"):
        suffixes.append("device='" + str(device) + "'")

    default_complex = "complex128" if default_dtype == "float64" else "complex64"
    has_default_dtype = dtype_name in (default_dtype, default_complex, "int64", "bool")
    dtype_suffix = _DTYPE_PREFIX + dtype_name
    if values.size == 0:
        # torch prints the shape unless it is (0,), and always prints a
        # non-default-float dtype since nothing else hints at it.
        if values.ndim != 1:
            suffixes.append("size=" + str(tuple(values.shape)))
        if dtype_name != default_dtype:
            suffixes.append(dtype_suffix)
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append("size=" + str(tuple(values.shape)))
        if not has_default_dtype:
            suffixes.append(dtype_suffix)
        tensor_str = _tensor_str(values, indent, floating)

    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:  # the repr of a dual tensor's tangent (forward AD)
        suffixes.append("tangent=" + tangent)

    return _add_suffixes(prefix + tensor_str, suffixes, indent, force_newline=False)


def _grad_fn_name(grad_fn):
    name = getattr(grad_fn, "name", None)
    if callable(name):
        return name().rsplit("::", 1)[-1]
    return type(grad_fn).__name__


def tensor_repr(t, to_numpy, *, default_dtype="float32"):
    """repr(t) in torch's format; ``to_numpy(t)`` supplies the values."""
    dtype_name = str(t.dtype).rsplit(".", 1)[-1]
    values = np.asarray(to_numpy(t)).reshape(tuple(t.shape))
    grad_fn = t.grad_fn
    tangent = _C._fw_grad(t) if isinstance(t, _C.Tensor) else None
    device = t.device
    device_str = str(device) if getattr(device, "type", "cpu") != "cpu" else "cpu"
    return format_values(
        values,
        dtype_name,
        bool(t.dtype.is_floating_point),
        device=device_str,
        requires_grad=bool(t.requires_grad),
        grad_fn_name=None if grad_fn is None else _grad_fn_name(grad_fn),
        default_dtype=default_dtype,
        tangent=None if tangent is None else tensor_repr(tangent, to_numpy, default_dtype=default_dtype),
    )


def tensor_str(t, to_numpy, *, default_dtype="float32"):
    """str(t); identical to repr(t), as in torch."""
    return tensor_repr(t, to_numpy, default_dtype=default_dtype)


def sparse_repr(s, to_numpy, *, default_dtype="float32"):
    """repr of a sparse COO tensor (Note [Sparse COO]) in torch's format: indices, values, then size, nnz,
    dtype, layout and autograd suffixes, the first suffix on a new line."""
    prefix = "tensor("
    indent = len(prefix)
    suffixes = []
    device = s.device
    if getattr(device, "type", "cpu") != "cpu":
        suffixes.append("device='" + str(device) + "'")
    suffixes.append("size=" + str(tuple(s.shape)))
    suffixes.append("nnz=" + str(s._nnz()))
    dtype_name = str(s.dtype).rsplit(".", 1)[-1]
    default_complex = "complex128" if default_dtype == "float64" else "complex64"
    if dtype_name not in (default_dtype, default_complex, "int64", "bool"):
        suffixes.append(_DTYPE_PREFIX + dtype_name)
    parts = []
    for name, t in (("indices=tensor(", s._indices()), ("values=tensor(", s._values())):
        values = np.asarray(to_numpy(t.detach())).reshape(tuple(t.shape))
        floating = bool(t.dtype.is_floating_point)
        if floating:
            values = values.astype(np.float64, copy=False)
        body = _tensor_str(values, indent + len(name), floating)
        if values.size == 0:
            body += ", size=" + str(tuple(values.shape))
        parts.append(name + body + ")")
    suffixes.append("layout=" + str(s.layout))
    grad_fn = s.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{_grad_fn_name(grad_fn)}>")
    elif s.requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(prefix + parts[0] + ",\n" + " " * indent + parts[1], suffixes, indent, force_newline=True)
