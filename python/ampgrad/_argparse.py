"""torch's argument-type errors for ampgrad's Python-level ops (issue 10: exception types).

torch binds most of its ops in C++ behind an argument parser (torch/csrc/utils/python_arg_parser.cpp) that
matches the call against the op's signatures before anything runs: a wrong-typed argument (a string for a
Tensor, a float for an int, a bool for an int list) is a TypeError naming the argument. Many of ampgrad's ops
are Python compositions that would instead trip over the bad value somewhere inside (AttributeError "'str'
object has no attribute 'dim'", ValueError, RuntimeError, IndexError).

`parsed(fn, kind, name)` wraps such an op: the call runs as before, and only when it raises something other
than TypeError are its arguments matched against torch's signatures of the op (_signatures.py, generated from
torch's schemas by tools/gen_signatures.py); when no signature accepts them, the call raises torch's TypeError
instead (same message format). A successful call pays one try block, nothing else. The matching is lenient
where torch's parser is subtle (any int for an int list; a Tensor for an int or float as torch's rule has it:
0-d, no grad, integral for an int; never for a bool): a doubtful case keeps the op's own exception rather than inventing a TypeError that torch would not raise.
`install(namespace, kind)` wraps the Python functions of a namespace that have signatures, every nn.functional
function and torch.functional's names. For those without a matching signature two more rules apply on failure: a
body that tripped over a non-Tensor argument ("'str' object has no attribute 'dim'") or took int() / float() of a
str argument raises torch's TypeError, except where torch's own Python body raises the AttributeError
(_TORCH_READS_ATTRS)."""
import collections.abc
import functools
import numbers
import sys

from ._C import Tensor, bool as _C_bool, dtype as _dtype
from ._signatures import SIGS

# keyword arguments torch's Python bindings add to (or accept beyond) the schema: never a reason to reject
_EXTRA_KWARGS = frozenset(("out", "requires_grad", "device", "layout", "pin_memory", "memory_format", "generator",
                           "names", "non_blocking", "copy", "check_invariants"))

_TYPE_NAMES = {"Tensor": "Tensor", "int": "int", "float": "float", "bool": "bool", "Scalar": "Number",
               "int[]": "tuple of ints", "float[]": "tuple of floats", "bool[]": "tuple of bools",
               "Tensor[]": "tuple of Tensors", "Tensor?[]": "tuple of Tensors", "Scalar[]": "tuple of Scalars",
               "str": "str", "str[]": "tuple of strs", "ScalarType": "torch.dtype", "Dimname": "name",
               "Dimname[]": "tuple of names", "Any": "object"}


def _is_bool(v):
    return isinstance(v, bool) or type(v).__name__ == "bool_"   # Python and NumPy bools


def _tensor_number(v, integral):
    """torch's parser takes a Tensor for an int (integral, not bool) or a float only when it is 0-d and needs no
    grad."""
    return (v.dim() == 0 and not v.requires_grad
            and (not integral or not (v.is_floating_point() or v.is_complex() or v.dtype == _C_bool)))


def _is_int(v):
    if isinstance(v, Tensor):
        return _tensor_number(v, True)
    if _is_bool(v):
        return False
    return isinstance(v, numbers.Integral) or (not isinstance(v, (float, str)) and hasattr(type(v), "__index__"))


def _is_number(v):
    return isinstance(v, (numbers.Number, Tensor)) or _is_bool(v)


def _seq(v):
    return isinstance(v, (list, tuple))


def _ok(t, v):
    """Whether torch's parser could accept value v for a parameter of type t (lenient: see the module note)."""
    if t.endswith("?") and not t.endswith("?[]"):
        if v is None:
            return True
        t = t[:-1]
    if t == "Any":
        return True
    if t == "Tensor":
        return isinstance(v, Tensor)
    if t == "int":
        return _is_int(v)
    if t == "float":
        return isinstance(v, numbers.Real) or _is_bool(v) or (isinstance(v, Tensor) and _tensor_number(v, False))
    if t == "bool":
        return _is_bool(v)   # never a Tensor, not even a 0-d bool one (torch: "must be bool, not Tensor")
    if t == "Scalar":
        return _is_number(v)
    if t in ("str", "Dimname"):
        return isinstance(v, str)
    if t == "ScalarType":
        return isinstance(v, (_dtype, type))
    if t.startswith("int["):
        # int[] takes a sequence (or a Tensor); a sized list (int[2] stride, int[1] dim) also one int
        return (isinstance(v, Tensor) or (_seq(v) and all(_is_int(x) for x in v))
                or (t != "int[]" and _is_int(v)))
    if t == "float[]":
        return _is_number(v) or (_seq(v) and all(_is_number(x) for x in v))
    if t == "bool[]":
        return _seq(v) and all(_is_bool(x) for x in v)
    if t == "Scalar[]":
        return _seq(v) and all(_is_number(x) for x in v)
    if t in ("Tensor[]", "Tensor?[]"):
        return _seq(v)   # its elements: _bad_tensor_element (torch's parser raises at the first non-Tensor)
    if t in ("str[]", "Dimname[]"):
        return _seq(v) and all(isinstance(x, str) for x in v)
    return True


def _tp_name(v):
    """The type name torch's parser prints for a value (its tp_name: torch's dtype is 'torch.dtype')."""
    return "torch.dtype" if isinstance(v, _dtype) else type(v).__name__


def _type_name(t):
    t = t.rstrip("?")
    return "tuple of ints" if t.startswith("int[") else _TYPE_NAMES.get(t, t)


class _Raw(str):
    """A _match message that is the whole TypeError (torch's parser raised it while matching), not a suffix."""


def _bad_tensor_element(t, v, argnum):
    """torch's parser checks a Tensor list's elements while matching and raises at the first non-Tensor (None
    included, for Tensor?[] too: the Python bindings take no None there): its message, or None."""
    if t in ("Tensor[]", "Tensor?[]") and _seq(v):
        for i, x in enumerate(v):
            if not isinstance(x, Tensor):
                return _Raw(f"expected Tensor as element {i} in argument {argnum}, but got {type(x).__name__}")
    return None


class _Param:
    __slots__ = ("type", "name", "default", "kwonly")

    def __init__(self, decl, kwonly):
        typ, name = decl.split(" ")
        self.type, self.name, self.default, self.kwonly = typ, name.rstrip("="), name.endswith("="), kwonly

    def text(self):
        return f"{_type_name(self.type)} {self.name}" + (" = None" if self.default else "")


def _compile(sig):
    params, kwonly = [], False
    for decl in sig.split(", ") if sig else ():
        if decl == "*":
            kwonly = True
        else:
            params.append(_Param(decl, kwonly))
    return params


def _match(params, args, kwargs, bound=None):
    """None when the overload accepts the call, else torch's message (without the op name) for the first problem.
    bound (a dict) receives the accepted call's values by parameter name."""
    pos = [p for p in params if not p.kwonly]
    if (len(pos) == 1 and pos[0].type.startswith("int[") and args and _is_int(args[0])
            and not isinstance(args[0], Tensor) and (len(args) > 1 or pos[0].type.rstrip("?") == "int[]")):
        # torch's varargs int list, for a signature whose only positional parameter is an int list: x.view(2, 3),
        # torch.zeros(2, 3), x.permute(1, 0) (one int for a sized list, x.sum(0), is that int; x.amin(1, True) is
        # dim and keepdim)
        if not all(_is_int(a) for a in args):
            bad = next(a for a in args if not _is_int(a))
            return (f"(): argument '{pos[0].name}' (position 1) must be tuple of ints, but found element of type "
                    f"{type(bad).__name__} at pos {args.index(bad)}")
        args = (tuple(args),)
    if len(args) > len(pos):
        n = len(pos)
        lo = sum(1 for p in pos if not p.default)
        takes = f"{n}" if lo == n else f"from {lo} to {n}"
        return f"() takes {takes} positional argument{'s' if n != 1 else ''} but {len(args)} were given"
    given = {}
    for i, (p, v) in enumerate(zip(pos, args)):
        given[p.name] = (v, i + 1)
    names = {p.name for p in params}
    for k, v in kwargs.items():
        if k in given:
            return f"() got multiple values for argument '{k}'"
        if k not in names:
            if k in _EXTRA_KWARGS:
                continue
            return f"() got an unexpected keyword argument '{k}'"
        given[k] = (v, None)
    missing = [p.name for p in params if not p.default and p.name not in given]
    if missing:
        return (f"() missing {len(missing)} required positional argument{'s' if len(missing) > 1 else ''}: "
                + ", ".join(f'"{m}"' for m in missing))
    for argnum, p in enumerate(params):
        if p.name in given:
            v, at = given[p.name]
            raw = _bad_tensor_element(p.type, v, argnum)
            if raw is not None:
                return raw
            if not _ok(p.type, v):
                where = f" (position {at})" if at is not None else ""
                if p.type.startswith("int[") and _seq(v):
                    i = next(i for i, x in enumerate(v) if not _is_int(x))
                    return (f"(): argument '{p.name}'{where} must be tuple of ints, but found element of type "
                            f"{type(v[i]).__name__} at pos {i}")
                return f"(): argument '{p.name}'{where} must be {_type_name(p.type)}, not {_tp_name(v)}"
    if bound is not None:
        bound.update((k, v) for k, (v, _) in given.items())
    return None


_COMPILED = {}
def _inside_parsed_op(frame):
    """Whether a parsed op's wrapper (frame's code: all wrappers share it) runs further up this thread's stack."""
    code, f = frame.f_code, frame.f_back
    while f is not None:
        if f.f_code is code:
            return True
        f = f.f_back
    return False


def overloads(kind, name):
    key = (kind, name)
    if key not in _COMPILED:
        _COMPILED[key] = [_compile(s) for s in SIGS.get(kind, {}).get(name, ())]
    return _COMPILED[key]


def _got(args, kwargs):
    parts = [_tp_name(a) for a in args] + [f"{k}={_tp_name(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def type_error(kind, name, args, kwargs, ovs=None):
    """torch's TypeError message for a call that no signature of the op accepts, or None when one does (or the op
    has no signatures). For methods, args exclude self. ovs: compiled overloads to use instead of kind/name's."""
    ovs = overloads(kind, name) if ovs is None else ovs
    if not ovs:
        return None
    problems = []
    for params in ovs:
        msg = _match(params, args, kwargs)
        if msg is None:
            return None
        if isinstance(msg, _Raw):
            return str(msg)
        problems.append(msg)
    if len(ovs) == 1:
        return name + problems[0]
    lines = [f"{name}() received an invalid combination of arguments - got ({_got(args, kwargs)}), but expected one of:"]
    for params in ovs:
        pos = [p.text() for p in params if not p.kwonly]
        kw = [p.text() for p in params if p.kwonly]
        lines.append(" * (" + ", ".join(pos + (["*"] + kw if kw else [])) + ")")
    return "\n".join(lines)


def ntuple_as_given(x, n):
    """torch.nn.modules.utils._ntuple: an iterable as a tuple of its values (not converted), else n copies of x."""
    return tuple(x) if isinstance(x, collections.abc.Iterable) else (x,) * n


_INT64 = (-2 ** 63, 2 ** 63 - 1)


def _plain_int(v):
    return type(v) is int or (isinstance(v, numbers.Integral) and not _is_bool(v) and not isinstance(v, Tensor))


def _unpack_error(params, name, args, kwargs):
    """The exception torch's parser raises unpacking the arguments of a call that overload `params` accepts, or
    None: a Python int beyond what the parameter's C type holds (an int: ValueError "Overflow when unpacking long
    long"; a Scalar, which takes int64 or uint64: OverflowError; a float: OverflowError beyond a double)."""
    pos = [p for p in params if not p.kwonly]
    if len(pos) == 1 and pos[0].type.rstrip("?") == "int[]" and args and _plain_int(args[0]):
        args = (tuple(args),)   # varargs int list (one int for a sized list, int[1] dim, is an int)
    given = dict(zip((p.name for p in pos), args))
    given.update(kwargs)
    for p in params:
        if p.name not in given:
            continue
        v, t = given[p.name], p.type.rstrip("?")
        if t in ("int", "SymInt") or (t.startswith("int[") and _plain_int(v)):
            if _plain_int(v) and not _INT64[0] <= v <= _INT64[1]:
                return ValueError("Overflow when unpacking long long")
        elif t.startswith("int[") and _seq(v):
            for i, x in enumerate(v):
                if _plain_int(x) and not _INT64[0] <= x <= _INT64[1]:
                    return TypeError(f"{name}(): argument '{p.name}' failed to unpack the object at pos {i + 1} "
                                     f'with error "Overflow when unpacking long long\n"')
        elif t == "Scalar" and _plain_int(v):
            if v < _INT64[0]:
                return OverflowError("can't convert negative int to unsigned")
            if v >= 2 ** 64:
                return OverflowError("int too big to convert")
        elif t == "float" and _plain_int(v) and abs(v) > sys.float_info.max:
            return OverflowError("int too large to convert to float")
    return None


def parse_error(kind, name, args, kwargs, ovs=None):
    """The exception torch's parser raises for this call of kind/name (or of the overloads ovs): a TypeError when no
    signature accepts the arguments, else an unpacking error of the first that does; None when there is none."""
    ovs = overloads(kind, name) if ovs is None else ovs
    msg = type_error(kind, name, args, kwargs, ovs)
    if msg is not None:
        return TypeError(msg)
    for params in ovs:
        if _match(params, args, kwargs) is None:
            return _unpack_error(params, name, args, kwargs)
    return None


def verify_batch_size(size):
    """torch.nn.functional._verify_batch_size (batch_norm in training mode; nn.functional uses this one)."""
    n = size[0]  # a 0-d input: IndexError, as torch's
    for s in size[2:]:
        n *= s
    if n == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def sig_parse_error(name, sig, args, kwargs=None):
    """parse_error for torch's C++-bound op `name` given its signature sig (SIGS[kind][op], or a tuple of overload
    strings in SIGS' format): for a Python composition whose torch body makes that call, on its failure path only
    (an except clause that re-raises the composition's own exception when this returns None)."""
    key = ("sig", sig)
    if key not in _COMPILED:
        _COMPILED[key] = [_compile(x) for x in sig]
    return parse_error(None, name, args, kwargs or {}, ovs=_COMPILED[key])


# nn.functional functions whose torch body ends in one parsed op: name -> (a function of the F call's arguments
# returning that op's name and (args, kwargs), or None where torch's body fails first in Python; the op's signature,
# or None for SIGS["fn"]'s). When the F function fails, that op's parser errors are torch's
# (F.poisson_nll_loss(x, torch.int64): "poisson_nll_loss(): argument 'target' (position 2) must be Tensor, not dtype").
def _inplace(op, inplace):
    return op + "_" if inplace else op


def _multi_margin_call(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    if (p != 1 and p != 2) or (weight is not None and weight.dim() != 1):
        return None   # torch's body's ValueErrors come first
    return "multi_margin_loss", (input, target, p, margin, weight, 1), {}


def _batch_norm_call(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                     eps=1e-5):
    if training:
        verify_batch_size(input.size())   # raising: torch's body fails first
    if eps < 0.0 or (training and eps <= 0.0):
        return None
    return "batch_norm", (input, weight, bias, running_mean, running_var, training, momentum, eps, True), {}


def _bce_logits_call(input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
    if target.size() != input.size():
        return None   # torch's body's ValueError (or AttributeError) comes first
    return "binary_cross_entropy_with_logits", (input, target, weight, pos_weight, 1), {}


_F_CALLS = {
    "poisson_nll_loss": (lambda input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                         reduction="mean": ("poisson_nll_loss", (input, target, log_input, full, eps, 1), {}), None),
    "cross_entropy": (lambda input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                      reduction="mean", label_smoothing=0.0:
                      ("cross_entropy_loss", (input, target, weight, 1, ignore_index, label_smoothing), {}),
                      "Tensor input, Tensor target, Tensor? weight=, int reduction=, int ignore_index=, "
                      "float label_smoothing="),
    "max_pool2d_with_indices": (lambda input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                                return_indices=False: ("max_pool2d_with_indices", (
                                    input, kernel_size, [] if stride is None else stride, padding, dilation,
                                    ceil_mode), {}),
                                "Tensor input, int[2] kernel_size, int[2] stride=, int[2] padding=, int[2] dilation=, "
                                "bool ceil_mode="),
    "batch_norm": (_batch_norm_call, None),
    "rrelu": (lambda input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False:
              (_inplace("rrelu", inplace), (input, lower, upper, training), {}), None),
    "rms_norm": (lambda input, normalized_shape, weight=None, eps=None:
                 ("rms_norm", (input, normalized_shape, weight, eps), {}),
                 "Tensor input, int[] normalized_shape, Tensor? weight=, float? eps="),
    "fold": (lambda input, output_size, kernel_size, dilation=1, padding=0, stride=1:
             ("col2im", (input,) + tuple(ntuple_as_given(v, 2) for v in (output_size, kernel_size, dilation, padding,
                                                                         stride)), {}),
             "Tensor input, int[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride"),
    "multi_margin_loss": (_multi_margin_call, "Tensor input, Tensor target, Scalar p=, Scalar margin=, "
                                              "Tensor? weight=, int reduction="),
    "mish": (lambda input, inplace=False: (_inplace("mish", inplace), (input,), {}), "Tensor input"),
    "relu": (lambda input, inplace=False: (_inplace("relu", inplace), (input,), {}), "Tensor input"),
    "binary_cross_entropy_with_logits": (_bce_logits_call, "Tensor input, Tensor target, Tensor? weight=, "
                                                           "Tensor? pos_weight=, int reduction="),
    "multilabel_margin_loss": (lambda input, target, size_average=None, reduce=None, reduction="mean":
                               ("multilabel_margin_loss", (input, target, 1), {}),
                               "Tensor input, Tensor target, int reduction="),
}


def _f_call_error(name, args, kwargs):
    """The parser error of the op that F.<name>'s torch body ends in (_F_CALLS), or None."""
    call, sig = _F_CALLS[name]
    try:
        mapped = call(*args, **kwargs)
    except Exception:  # noqa: BLE001 - a call the mapping cannot bind is left to the F function's own exception
        return None
    if mapped is None:
        return None
    op, a, kw = mapped
    return parse_error("fn", op, a, kw, ovs=[_compile(sig)] if sig is not None else None)


# torch.nn.functional / torch.functional functions whose torch body reads a Tensor attribute of an argument in Python
# (target.size(), input.dim(), input.softmax(...)) before torch's parser sees it: a non-Tensor there is torch's
# AttributeError too, so _attr_type_error leaves theirs alone.
_TORCH_READS_ATTRS = frozenset(["F." + n for n in (
    # found by calling torch 2.13's functions with non-Tensor arguments (any that raised AttributeError)
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "affine_grid", "batch_norm", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "dropout1d", "dropout2d", "dropout3d", "embedding", "embedding_bag",
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices", "glu", "group_norm", "huber_loss", "instance_norm", "interpolate", "l1_loss",
    "linear_cross_entropy", "local_response_norm", "log_softmax", "lp_pool1d", "lp_pool2d", "lp_pool3d",
    "margin_ranking_loss", "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "mse_loss",
    "normalize", "sigmoid", "smooth_l1_loss", "softmax", "softmin", "softsign", "tanh", "tanhshrink",
    "triplet_margin_with_distance_loss", "upsample", "upsample_bilinear", "upsample_nearest", "gumbel_softmax",
    "multi_head_attention_forward")]
    + ["fn." + n for n in ("norm", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot", "unravel_index")]
    + ["method.split"])

# torch's Python-level functions of torch.functional (ampgrad.<name>): torch's parser checks their arguments in the
# C++ op each one calls, so their wrong-typed arguments are TypeErrors like those of the C++-bound ops.
TORCH_FUNCTIONAL = frozenset((
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cartesian_prod", "block_diag",
    "cdist", "chain_matmul", "einsum", "istft", "lu", "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank",
    "tensordot", "unique", "unique_consecutive", "unravel_index"))

_NO_ATTR = "' object has no attribute '"


def _attr_type_error(kind, name, args, kwargs, exc):
    """torch's TypeError for a composition that tripped over a non-Tensor argument ("'str' object has no attribute
    'dim'"), or None when the culprit is not one of the call's own arguments or torch's body raises the
    AttributeError itself."""
    msg = str(exc)
    if not msg.startswith("'") or _NO_ATTR not in msg or f"{kind}.{name}" in _TORCH_READS_ATTRS:
        return None
    tp = msg[1:msg.index(_NO_ATTR)]
    if tp == "Tensor":
        return None
    for i, a in enumerate(args):
        if type(a).__name__ == tp:
            return f"{name}(): argument (position {i + 1}) must be Tensor, not {tp}"
    for k, v in kwargs.items():
        if type(v).__name__ == tp:
            return f"{name}(): argument '{k}' must be Tensor, not {tp}"
    return None


def _str_number_type_error(name, args, kwargs, exc):
    """torch's TypeError for a composition that took int() / float() of a str argument ("invalid literal for int()
    with base 10: 'abc'"), where torch's parser rejects the str by type; None for any other ValueError."""
    msg = str(exc)
    if not (msg.startswith("invalid literal for int()") or msg.startswith("could not convert string to float")):
        return None
    def has_str(v):
        return isinstance(v, str) or _seq(v) and any(isinstance(x, str) for x in v)
    for i, a in enumerate(args):
        if has_str(a):
            return f"{name}(): argument (position {i + 1}) must be a number or a tuple of numbers, not str"
    for k, v in kwargs.items():
        if has_str(v):
            return f"{name}(): argument '{k}' must be a number or a tuple of numbers, not str"
    return None


# nn.functional losses whose torch body computes _Reduction.get_enum(reduction) before anything can fail on the
# inputs (found by calling torch 2.13 with non-Tensor inputs and reduction='bad'): an invalid reduction is their
# first error, a ValueError.
_REDUCTION_FIRST = frozenset((
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "cross_entropy", "ctc_loss",
    "hinge_embedding_loss", "kl_div", "margin_ranking_loss", "multi_margin_loss", "multilabel_margin_loss", "nll_loss",
    "poisson_nll_loss", "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss"))


def _bad_reduction(fn, name, args, kwargs):
    """torch's ValueError message for an invalid `reduction` of a _REDUCTION_FIRST loss (None when it is valid, or the
    legacy size_average / reduce arguments decide it; a TypeError to raise for poisson_nll_loss's non-str one)."""
    import inspect
    try:
        given = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return None
    if given.get("size_average") is not None or given.get("reduce") is not None:
        return None
    r = given.get("reduction", "mean")
    if r in ("none", "mean", "sum") or (name == "kl_div" and r == "batchmean"):
        return None
    if name == "poisson_nll_loss":
        # torch's body builds its message as reduction + " is not ...": a non-str reduction is that TypeError
        try:
            return r + " is not a valid value for reduction"
        except TypeError as e:
            return e
    return f"{r} is not a valid value for reduction"


def parsed(fn, kind, name, always=False):
    """fn, raising torch's TypeError when it fails on arguments that none of torch's signatures of kind/name accept,
    or on a non-Tensor argument that its body took for a Tensor (always: wrap fn even without signatures)."""
    if not (always or overloads(kind, name)):
        return fn
    done = getattr(fn, "__ampgrad_parsed__", None)
    if done and (overloads(*done) or not overloads(kind, name)):
        return fn   # wrapped already (F.max_pool1d is also torch.max_pool1d: rewrapped only for torch's signatures)
    method = kind == "method"

    reduction_first = kind == "F" and name in _REDUCTION_FIRST

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            # only the user's call is torch's to parse: an op calling another (var_mean calling Tensor.var with
            # ampgrad's own argument spelling) keeps the inner op's exception for the outer one to judge. The
            # stack is searched only on this failure path, so a successful call costs one try block.
            if _inside_parsed_op(sys._getframe()):
                raise
            if reduction_first:
                bad = _bad_reduction(fn, name, args, kwargs)
                if bad is not None:
                    raise (bad if isinstance(bad, TypeError) else ValueError(bad)) from None
            rest = args[1:] if method else args
            err = parse_error(kind, name, rest, kwargs)   # pybind11's TypeError: an int beyond int64, say
            if (isinstance(err, TypeError) and isinstance(e, TypeError)
                    and "incompatible function arguments" not in str(e)):
                raise   # ampgrad's own TypeError (torch's text): only an unpacking error takes precedence
            if err is None and kind == "F" and name in _F_CALLS:
                err = _f_call_error(name, args, kwargs)
            if err is None:
                if isinstance(e, TypeError):
                    raise
                msg = None
                if isinstance(e, AttributeError):
                    msg = _attr_type_error(kind, name, rest, kwargs, e)
                if msg is None and isinstance(e, ValueError):
                    msg = _str_number_type_error(name, rest, kwargs, e)
                if msg is None:
                    raise
                err = TypeError(msg)
        raise err   # outside the except clause: torch's parser error has no context

    wrapper.__ampgrad_parsed__ = (kind, name)
    return wrapper


def _python_function(f):
    return type(f).__name__ == "function"


def install(namespace, kind):
    """Wraps the Python functions of `namespace` (a module's globals, or a class for kind 'method') that torch's
    parser covers."""
    if kind == "method":
        for name in SIGS["method"]:
            f = namespace.__dict__.get(name)
            if f is not None and _python_function(f):
                setattr(namespace, name, parsed(f, kind, name))
        return
    # nn.functional: torch's Python functions all end in a parsed C++ op; ampgrad.<name>: the signed ops and
    # torch.functional's
    names = ([n for n in namespace if not n.startswith("_")] if kind == "F"
             else list(SIGS[kind]) + [n for n in TORCH_FUNCTIONAL if n not in SIGS[kind]])
    for name in names:
        f = namespace.get(name)
        if (isinstance(f, functools.partial) and kind == "F" and _python_function(f.func)
                and not getattr(f.func, "__ampgrad_parsed__", False)):
            # F.max_pool1d_with_indices = partial(max_pool1d, return_indices=True): wrap under its own name
            namespace[name] = functools.partial(parsed(f.func, kind, name, always=True), *f.args, **f.keywords)
        elif f is not None and _python_function(f) and getattr(f, "__module__", "").startswith("ampgrad"):
            namespace[name] = parsed(f, kind, name, always=kind == "F" or name in TORCH_FUNCTIONAL)
