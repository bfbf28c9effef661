"""The spatial ops of nn.functional (pad, interpolate and the upsample aliases, pixel_(un)shuffle,
channel_shuffle, unfold / fold, max_unpool, lp_pool): torch's Python argument handling over the engine
ops of csrc/ops/spatial.cpp. The pad and max_unpool rows carry torch's CPU autocast policy (fp32)."""
import builtins
import math
import numbers
import operator
import warnings

from .. import _C
from .._creation import linspace as _linspace, ones as _ones, zeros as _zeros
from .._argparse import _compile, ntuple_as_given, type_error
from .._op_gate import engine_op

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
           "channel_shuffle", "native_channel_shuffle", "unfold", "fold", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "affine_grid"]


# ---------------------------------------------------------------- pad
def _pad_raw(input, pad, mode, value):
    return _C._pad(input, pad, mode, value)


# torch's autocast casts at reflection_pad1d/2d and replication_pad1d/2d/3d (not reflection_pad3d, circular, constant).
_PAD_ROWS = {("reflect", 1): "reflection_pad1d", ("reflect", 2): "reflection_pad2d", ("replicate", 1): "replication_pad1d",
             ("replicate", 2): "replication_pad2d", ("replicate", 3): "replication_pad3d"}
_PAD_GATED = {k: engine_op(row)(_pad_raw) for k, row in _PAD_ROWS.items()}


def pad(input, pad, mode="constant", value=None):
    if not isinstance(input, _C.Tensor):
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    pad = [operator.index(p) for p in pad]
    if value is not None:
        value = float(value)
    nd = len(pad) // 2
    fn = _PAD_GATED.get((mode, nd)) if len(pad) % 2 == 0 and input.dim() in (nd + 1, nd + 2) else None
    return (fn or _pad_raw)(input, pad, mode, value)


# ---------------------------------------------------------------- interpolate
def _is_integer(x):
    return isinstance(x, numbers.Integral) or (isinstance(x, _C.Tensor) and not x.is_floating_point() and x.dim() == 0)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, recompute_scale_factor=None,
                antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    elif size is not None:
        scale_factors = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError("Input and output must have the same number of spatial dimensions, but got "
                                 f"input with spatial dimensions of {list(input.shape[2:])} and output size of {size}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(x) for x in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")
            output_size = [int(s) for s in size]
        else:
            output_size = [int(size) for _ in range(dim)]
    elif scale_factor is not None:
        output_size = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError("Input and scale_factor must have the same number of spatial dimensions, but "
                                 f"got input with spatial dimensions of {list(input.shape[2:])} and "
                                 f"scale_factor of shape {scale_factor}. "
                                 "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                                 "scale_factor in (s1, s2, ...,sK) format.")
            scale_factors = [float(s) for s in scale_factor]
        else:
            scale_factors = [float(scale_factor) for _ in range(dim)]
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor is not None and recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor is not None and recompute_scale_factor:
        output_size = [math.floor(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a 4-D tensor as input")
    if output_size is None:  # torch's upsample::compute_output_size: the product, truncated
        output_size = [int(float(input.size(i + 2)) * scale_factors[i]) for i in range(dim)]
    if 1 <= dim <= 3:
        if mode in ("nearest", "nearest-exact"):
            return _C._upsample(input, mode, output_size, scale_factors or [], False)
        if mode == "area":  # torch: adaptive_avg_pool{1,2,3}d
            if dim == 1:
                return _C._adaptive_avg_pool(input.unsqueeze(-2), [1] + output_size).squeeze(-2)
            return (_C._adaptive_avg_pool if dim == 2 else _area3d)(input, output_size)
        if (dim, mode) in ((1, "linear"), (2, "bilinear"), (3, "trilinear")):
            return _C._upsample(input, "bilinear-aa" if antialias else "linear", output_size, scale_factors or [],
                                builtins.bool(align_corners))
        if dim == 2 and mode == "bicubic":
            return _C._upsample(input, "bicubic-aa" if antialias else "bicubic", output_size, scale_factors or [],
                                builtins.bool(align_corners))
    if dim == 2 and mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        raise ValueError("Lanczos mode requires antialias=True")
    need = {"linear": 3, "bilinear": 4, "trilinear": 5}
    if mode in need and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need[mode]}D input")
    raise NotImplementedError("Input Error: Only 3D, 4D and 5D input Tensors supported"
                              f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
                              f" (got {mode})")


@engine_op("adaptive_avg_pool3d")  # torch's CPU autocast runs it in float32
def _area3d(input, output_size):
    return _C._adaptive_avg_pool(input, output_size)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---------------------------------------------------------------- shuffles
pixel_shuffle = _C.pixel_shuffle
pixel_unshuffle = _C.pixel_unshuffle
channel_shuffle = _C.channel_shuffle
native_channel_shuffle = _C.channel_shuffle


# ---------------------------------------------------------------- unfold / fold
def _ntuple(x, n):
    if isinstance(x, (list, tuple)):
        return [int(v) for v in x]
    return [int(x)] * n


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    return _C._im2col(input, _ntuple(kernel_size, 2), _ntuple(dilation, 2), _ntuple(padding, 2), _ntuple(stride, 2))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    return _C._col2im(input, _ntuple(output_size, 2), _ntuple(kernel_size, 2), _ntuple(dilation, 2), _ntuple(padding, 2),
                      _ntuple(stride, 2))


# ---------------------------------------------------------------- max_unpool
# torch's Python body, step by step: its _ntuple keeps the values as given (a float kernel makes a float default
# size), _unpool_output_size reads input.size() first, and the op's parser then rejects a non-int output size.
def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    input_size = input.size()
    default_size = []
    for d in range(len(kernel_size)):
        default_size.append((input_size[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d])
    if output_size is None:
        return _nonnegative_unpool_size(default_size, len(kernel_size))
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError(f"output_size should be a sequence containing {len(kernel_size)} or {len(kernel_size) + 2} elements, "
                         f"but it has a length of '{len(output_size)}'")
    for d in range(len(kernel_size)):
        min_size = default_size[d] - stride[d]
        max_size = default_size[d] + stride[d]
        if not (min_size < output_size[d] < max_size):
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {min_size} and {max_size})')
    return _nonnegative_unpool_size(output_size, len(kernel_size))


def _nonnegative_unpool_size(output_size, n):
    for d in range(n):
        if output_size[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={output_size[d]}")
    return output_size


def _unpool(op, input, indices, output_size):
    try:
        return (_max_unpool2d if op == "max_unpool2d" else _max_unpool3d)(input, indices, output_size)
    except TypeError:
        msg = type_error("fn", op, (input, indices, output_size), {}, _UNPOOL_SIG)   # torch's parser's message
        if msg is None:
            raise
    raise TypeError(msg)


_UNPOOL_SIG = [_compile("Tensor input, Tensor indices, int[] output_size")]


@engine_op("max_unpool2d")
def _max_unpool2d(input, indices, output_size):
    return _C._max_unpool(input, indices, output_size)


@engine_op("max_unpool3d")
def _max_unpool3d(input, indices, output_size):
    return _C._max_unpool(input, indices, output_size)


def _unpool_args(n, kernel_size, stride, padding):
    k = ntuple_as_given(kernel_size, n)
    s = ntuple_as_given(stride, n) if stride is not None else k
    return k, s, ntuple_as_given(padding, n)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k, s, p = _unpool_args(1, kernel_size, stride, padding)
    out = list(_unpool_output_size(input, k, s, p, output_size)) + [1]
    return _unpool("max_unpool2d", input.unsqueeze(-1), indices.unsqueeze(-1), out).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k, s, p = _unpool_args(2, kernel_size, stride, padding)
    return _unpool("max_unpool2d", input, indices, _unpool_output_size(input, k, s, p, output_size))


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k, s, p = _unpool_args(3, kernel_size, stride, padding)
    return _unpool("max_unpool3d", input, indices, _unpool_output_size(input, k, s, p, output_size))


# ---------------------------------------------------------------- affine_grid
def _linspace_from_neg_one(theta, num_steps, align_corners):
    if num_steps <= 1:
        return _zeros(1, dtype=theta.dtype, device=theta.device)
    r = _linspace(-1, 1, num_steps, dtype=theta.dtype, device=theta.device)
    return r if align_corners else r * ((num_steps - 1) / num_steps)


def affine_grid(theta, size, align_corners=None):
    """torch's affine_grid: base grid (x, y[, z], 1) @ theta^T (a composition of engine ops; torch records
    one AffineGridGeneratorBackward0 node, ampgrad the bmm / view nodes with the same gradients)."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                      "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                      "grid_sample for details.", stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size_in, size = size, [int(s) for s in size]
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size_in}. Got {theta.shape}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size_in}. Got {theta.shape}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. "
                                  f"Got size {size_in}.")
    if align_corners and min(spatial_size) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. "
                      "This is not an issue for standard usage.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size_in}")
    N = size[0]
    sp = spatial_size[::-1]  # (W, H[, D])
    axes = [_linspace_from_neg_one(theta, n, align_corners) for n in sp]
    k = len(sp)
    shape = spatial_size
    cols = []
    for d, ax in enumerate(axes):  # column d varies along spatial dim k - 1 - d
        view = [1] * k
        view[k - 1 - d] = sp[d]
        cols.append(ax.reshape(view).expand(shape))
    cols.append(_ones(shape, dtype=theta.dtype, device=theta.device))
    base = _C.stack(cols, -1).reshape(1, -1, k + 1).expand(N, -1, k + 1)
    return base.bmm(theta.transpose(1, 2)).reshape([N] + list(shape) + [k])
