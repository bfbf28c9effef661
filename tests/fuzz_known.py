"""Known differences between ampgrad and torch that tests/test_fuzz.py tolerates (and reports).

Every entry names the ops it covers (exact names or globs: 'torch.sum', 'Tensor.*_', 'F.relu'), the category
(see fuzz_harness.category: crash, hang, mismatch, input_modified, accepted, rejected, exc_type), the outcome
pair it covers (torch's outcome -> ampgrad's: an exception class, 'value', 'crash', 'hang', 'mismatch'), an
optional condition on the call (`when`), and why. Keep entries narrow; delete an entry when the engine fix lands
(the test reports entries that no longer match anything in a long run: fuzz_run.py --stale).

A crash or a hang is tolerated only through an entry with a `when` that pins the exact case; the campaign runs
such a case at most twice per run (then skips it), so each listed crash still costs a worker restart.

Exception-type differences (category exc_type: both raise, different classes) are listed compactly in EXC_TYPE
below, one line per (torch class -> ampgrad class) with the ops; they are counted and reported."""
import fnmatch
import math
from dataclasses import dataclass
from typing import Callable, Optional

from fuzz_harness import EXC_CLASSES, INTS, Tn, tensors_in


# ----------------------------------------------------------------------------------- conditions on a call
def _ints(v):
    if isinstance(v, bool):
        return
    if isinstance(v, int):
        yield v
    elif isinstance(v, (list, tuple)):
        for x in v:
            yield from _ints(x)
    elif isinstance(v, dict):
        for x in v.values():
            yield from _ints(x)


def huge_int(c):
    """Some int argument (sizes, dims, scalars) is at least 2**31 in magnitude."""
    return any(abs(i) >= 2**31 for i in _ints((c.args, c.kwargs)))


def self_0d(c):
    return bool(c.args) and isinstance(c.args[0], Tn) and c.args[0].shape == ()


def nonfinite(c):
    """Some tensor or float argument holds inf / nan."""
    import numpy as np
    for t in tensors_in((c.args, c.kwargs)):
        if t.dtype not in ("bool",) and t.data.dtype.kind == "f" and not np.isfinite(t.data).all():
            return True

    def floats(v):
        if isinstance(v, float):
            yield v
        elif isinstance(v, (list, tuple)):
            for x in v:
                yield from floats(x)
    return any(not math.isfinite(f) for f in floats((c.args, list(c.kwargs.values()))))


def has_dtype(*names):
    return lambda c: any(t.dtype in names for t in tensors_in((c.args, c.kwargs)))


def no_tensor(c):
    return not any(True for _ in tensors_in((c.args, c.kwargs)))


def int_min_by_minus_one(c):
    """An integer tensor holding its dtype's minimum, divided by -1 (INT_MIN / -1 overflows: SIGFPE)."""
    import numpy as np
    ts = list(tensors_in((c.args, c.kwargs)))
    has_min = any(t.dtype in ("int8", "int16", "int32", "int64") and (t.data == np.iinfo(t.dtype).min).any() for t in ts)
    return has_min and any((t.data == -1).any() for t in ts if t.dtype != "bool") or has_min and -1 in list(_ints(c.args[1:]))


def has_int_min(c):
    """An integer tensor holding its dtype's minimum."""
    import numpy as np
    return any(t.dtype in ("int8", "int16", "int32", "int64") and (t.data == np.iinfo(t.dtype).min).any()
               for t in tensors_in((c.args, c.kwargs)))


def huge_p(c):
    """A float argument beyond 1e6 (a norm order)."""
    return any(isinstance(v, float) and abs(v) > 1e6 for v in list(c.args) + list(c.kwargs.values()))


def operand_or_self_requires_grad(c):
    return any(t.requires_grad for t in tensors_in((c.args, c.kwargs)))


def int_self_grad_operand(c):
    """A non-float self written in place with an operand that requires grad."""
    return (bool(c.args) and isinstance(c.args[0], Tn) and c.args[0].dtype not in ("float16", "bfloat16", "float32",
                                                                                  "float64")
            and any(t.requires_grad for t in tensors_in((c.args[1:], c.kwargs))))


def self_expanded(c):
    return bool(c.args) and isinstance(c.args[0], Tn) and any(v[0] == "e" for v in c.args[0].views)


def zero_size(c):
    return any(t.data.size == 0 or 0 in t.shape for t in tensors_in((c.args, c.kwargs)))


def bool_index(c):
    return c.kind == "index" and any(isinstance(i, bool) for i in (c.args[1] if isinstance(c.args[1], tuple) else (c.args[1],)))


def float_arg(c):
    return any(isinstance(v, float) for v in list(c.args) + list(c.kwargs.values()))


def wrong_arg(c):
    """An argument was replaced by a value of a wrong type (a string, None, a list, a float for an int, ...)."""
    return bool(c.wrong)


def any_of(*conds):
    return lambda c: any(f(c) for f in conds)


@dataclass
class K:
    ops: str
    cat: str
    torch: str = "*"
    ampgrad: str = "*"
    when: Optional[Callable] = None
    reason: str = ""

    def covers(self, call, cat, t, a):
        return (cat == self.cat and fnmatch.fnmatchcase(t, self.torch) and fnmatch.fnmatchcase(a, self.ampgrad)
                and any(fnmatch.fnmatchcase(call.op, p) for p in self.ops.split())
                and (self.when is None or bool(self.when(call))))


# ----------------------------------------------------------------------------------- the table
KNOWN = [
    # ---- crashes and hangs: none known. The size-overflow segfaults, the eye / arange "hangs" on huge sizes
    # and the INT_MIN % -1 SIGFPE found by this fuzz are fixed (tests/test_reliability.py); a crash or hang
    # entry here needs a `when` that pins the exact case.

    # ---- exception classes, by condition rather than by op (the tail of op x argument combinations is long):
    # argument validation differs between torch's argument parser and pybind11 / ampgrad's Python layer
    K("*", "exc_type", when=wrong_arg, reason="a wrong-typed argument: torch and ampgrad reject it with different classes"),
    K("Tensor.bitwise_left_shift_ Tensor.bitwise_right_shift_ Tensor.__ilshift__ Tensor.__irshift__ Tensor.gcd_ "
      "Tensor.lcm_", "exc_type",
      "RuntimeError", "NotImplementedError",
      reason="an integer self with a float operand: torch refuses the cast to self's dtype first, ampgrad's kernel "
             "refuses the float dtype first"),
    K("*", "exc_type", "OverflowError", "*", when=huge_int,
      reason="an int beyond int64: torch raises OverflowError, ampgrad RuntimeError ('Overflow when unpacking long')"),

    # ---- wrong values (silent); each is a bug to fix unless the reason says otherwise
    K("torch.mode Tensor.mode", "mismatch", when=nonfinite,
      reason="NaN in mode's input: torch's CPU kernel std::sorts with NaN (no strict weak order), so its answer depends "
             "on where the NaN sits ([nan, 1] -> nan, [1, nan] -> 1); ampgrad counts each NaN as its own value"),
    K("*", "mismatch", when=huge_int,
      reason="Python scalar outside the tensor dtype's range: torch casts it to the dtype (wraps / becomes inf) before "
             "computing, ampgrad keeps its value (or saturates)"),
    K("torch.add torch.sub torch.mul torch.div torch.true_divide torch.floor_divide torch.subtract torch.multiply "
      "torch.divide torch.pow torch.remainder torch.fmod torch.atan2 torch.maximum torch.minimum", "mismatch",
      when=no_tensor, reason="two Python numbers: torch makes a default-dtype (float32) tensor, ampgrad float64"),
    K("F.celu F.elu F.selu F.celu_ F.elu_ F.selu_ F.gelu", "mismatch", when=nonfinite,
      reason="inf / nan alpha or input: nan vs -0.0 / inf (gelu(inf) in bfloat16 is nan in ampgrad)"),
    K("F.dropout1d F.dropout2d F.dropout3d F.dropout F.alpha_dropout", "mismatch", when=has_dtype("bool"),
      reason="dropout of a bool tensor: torch keeps bool, ampgrad returns float32"),
    K("Tensor.stride", "mismatch", when=zero_size, reason="strides of a 0-size tensor differ"),
    K("torch.kthvalue Tensor.kthvalue", "mismatch",
      reason="tied values: the index of which tie is returned differs (torch's is its quickselect's); values equal"),
    K("torch.dist Tensor.dist", "mismatch", when=huge_p,
      reason="the same huge p in dist: torch's float32/float16 result is 1.0 (1/p rounds to 0 in float32), "
             "its float64 result and ampgrad's inf; the norm should be max|x - y| (left to fix, with renorm's)"),
    K("Tensor.renorm torch.renorm", "mismatch", when=huge_p,
      reason="a p so large that |x|**p overflows float64: the norm should be max|x|; torch's is 1.0 (1/p rounds to 0 "
             "in float32), ampgrad's inf (renorm then scales to 0); both wrong, left to fix"),
    K("Tensor.histogram torch.histogram", "mismatch", when=operand_or_self_requires_grad,
      reason="requires_grad of a result: torch records a NotImplemented node on histogram's outputs (its backward "
             "raises); ampgrad records none, so backward through them raises earlier, as 'does not require grad'"),
] + [
    K("torch.cov", cat,
      reason="torch's bug: cov with one observation and one kind of weights zeroes the caller's input in place "
         "(ATen's Correlation.cpp; on a leaf that requires grad that zero_ raises); ampgrad returns the same result "
         "and leaves the input alone") for cat in ("input_modified", "accepted")] + [
    K("Tensor.logical_and_ Tensor.logical_or_ Tensor.logical_xor_", "rejected", "value", "RuntimeError",
      reason="better than torch on purpose: torch's logical_*_ are not recorded, so they write a leaf that requires "
             "grad and let the old gradient through the overwritten values; ampgrad raises torch's leaf error and "
             "gives overwritten values zero gradient (test_inplace_nondifferentiable_overwrite_gets_zero_grad)"),
    K("torch.signbit Tensor.signbit", "mismatch", when=nonfinite,
      reason="the sign of a NaN: torch's float32 -> bfloat16 conversion makes every NaN negative (0xFFC0), so "
             "signbit(nan) is True there; ampgrad keeps the NaN's sign"),
    K("Tensor.eq_ Tensor.ne_ Tensor.lt_ Tensor.le_ Tensor.gt_ Tensor.ge_ Tensor.greater_ Tensor.greater_equal_ "
      "Tensor.less_ Tensor.less_equal_ Tensor.not_equal_", "mismatch", when=int_self_grad_operand,
      reason="an in-place comparison into an integer self with an operand that requires grad: torch records "
             "GeBackward1 & co. on the integer tensor (requires_grad=True on an int8 tensor); ampgrad records none, "
             "as integer tensors cannot require grad"),
    K("Tensor.*_", "mismatch", when=self_expanded,
      reason="in-place write into an expanded (overlapping) tensor: result depends on the write order"),
    K("torch.i0 Tensor.i0 torch.special.i0", "mismatch", when=nonfinite,
      reason="i0(+-inf): torch's CPU kernel returns nan (its Chebyshev series multiplies inf by 0); I0 grows without "
             "bound, so ampgrad returns inf (as scipy.special.i0)"),
    K("torch.gcd Tensor.gcd Tensor.gcd_ torch.lcm Tensor.lcm Tensor.lcm_", "mismatch", when=has_int_min,
      reason="gcd with the dtype's minimum (-32768 in int16): torch's abs overflows and it returns -1 for "
             "gcd(-32768, -5); ampgrad returns 1"),
    K("torch.median Tensor.median torch.nanmedian Tensor.nanmedian", "mismatch", when=self_expanded,
      reason="median along a dim of an expanded (stride-0) input: torch's CPU kernel returns wrong values "
             "(tensor([4, 2]).expand(3, 2).median(0) gives values [2, 0]); ampgrad gives [4, 2]"),
    K("torch.polygamma Tensor.polygamma", "mismatch", when=has_dtype("int64"),
      reason="at a pole (a non-positive integer) both give a huge value: torch's comes from sin(pi x) rounded in "
             "float32, ampgrad's from float64"),
    K("Tensor.__getitem__", "mismatch", when=bool_index,
      reason="a bool in an index tuple combined with advanced indices: wrong result shape"),
    K("torch.var_mean torch.std_mean", "mismatch", when=nonfinite,
      reason="an inf input: torch's Welford pass gives a nan mean, ampgrad the mean itself (inf); ampgrad is right"),
    K("torch.arange torch.range", "mismatch", when=float_arg,
      reason="float start / end with an integer dtype: torch computes in double then casts, ampgrad differs"),
    K("torch.histc Tensor.histc", "rejected", when=nonfinite,
      reason="histc with equal data-derived edges (min == max == +-inf over equal huge data): torch's result depends on "
             "its degenerate linspace, ampgrad raises torch's 'max must be larger than min' (as torch does for bins=1)"),
    K("torch.histc Tensor.histc", "exc_type", "RuntimeError", "NotImplementedError", when=huge_int,
      reason="histc on an integer input with an absurd bin count: torch fails allocating the bin edges first"),
    K("Tensor.logsumexp torch.logsumexp", "mismatch", when=has_dtype("bfloat16", "float16"),
      reason="low-precision logsumexp: torch accumulates in the low-precision dtype, ampgrad in float32"),
]

# Thin wrappers and torch.* spellings added for torch's OpInfo database (issue 13; python/ampgrad/_shape_extra.py,
# _nn_ops.py): their values match torch on the OpInfo samples (tests/test_opinfo.py), but their argument
# validation does not yet copy torch's on invalid input (exception classes, inputs torch rejects).
_OPINFO_WRAPPERS = ("torch.atleast_1d torch.atleast_2d torch.atleast_3d *.ravel *.fliplr *.flipud *.tensor_split "
                    "*.hsplit *.vsplit *.dsplit *.split_with_sizes *.unsafe_chunk *.unsafe_split *.positive "
                    "*.resolve_conj *.resolve_neg *.conj *.conj_physical torch.real *.isreal *.isposinf *.isneginf "
                    "torch.fill *.rot90 torch.column_stack *.take *.take_along_dim torch.rsub *.sgn torch.meshgrid "
                    "torch.cartesian_prod torch.empty_strided torch.empty_permuted *.argwhere *.nanmean "
                    "torch.tril_indices torch.triu_indices torch.unravel_index *.diff torch.trapezoid torch.trapz "
                    "torch.cumulative_trapezoid *.repeat_interleave *.diag_embed *.diag *.diagflat *.index_fill "
                    "torch.select_scatter torch.slice_scatter torch.diagonal_scatter *.masked_scatter *.put "
                    "*.aminmax torch.*_copy Tensor.unfold Tensor.new_empty_strided Tensor.sum_to_size Tensor.H "
                    "Tensor.mH torch.kl_div torch.margin_ranking_loss torch.binary_cross_entropy_with_logits "
                    "torch.hinge_embedding_loss torch.cosine_embedding_loss torch.poisson_nll_loss "
                    "torch.triplet_margin_loss torch.selu torch.celu torch.alpha_dropout torch.feature_dropout "
                    "torch.batch_norm torch.vdot torch.convolution torch.conv_tbc torch.constant_pad_nd torch.zero_ "
                    "torch.conv3d torch.conv_transpose3d torch.max_pool1d torch.max_pool2d torch.max_pool3d "
                    "torch.avg_pool1d torch.adaptive_avg_pool1d torch.adaptive_max_pool1d")
KNOWN += [K(_OPINFO_WRAPPERS, cat, reason="issue 13 OpInfo wrapper: torch's argument validation not yet copied")
          for cat in ("exc_type", "accepted", "rejected")]
KNOWN += [K("torch.hinge_embedding_loss", "mismatch", when=nonfinite,
            reason="as F.hinge_embedding_loss (the torch.* spelling calls it): inf / nan margin or input"),
          K("torch.hinge_embedding_loss", "mismatch", when=has_dtype("int32", "int64", "int16", "int8", "uint8"),
            reason="integer input to the torch.* spelling: torch keeps the integer dtype, ampgrad gives float32 (bug)")]

# Differences in the outcome class, one line per (category, torch outcome -> ampgrad outcome) with the ops
# ('#' starts a comment; REASONS below says what each kind of line means):
#   exc_type  both raise, with different exception classes
#   accepted  torch raises, ampgrad returns a value (invalid input accepted)
#   rejected  torch returns a value, ampgrad raises (a supported call or argument spelling ampgrad lacks)
LINES = """
accepted IndexError -> value: Tensor.renorm
accepted NotImplementedError -> value: F.binary_cross_entropy_with_logits F.celu F.elu F.elu_ F.glu F.hardsigmoid F.hardswish F.huber_loss F.leaky_relu
accepted NotImplementedError -> value: F.leaky_relu_ F.logsigmoid F.mse_loss F.pdist F.prelu F.selu F.smooth_l1_loss Tensor.bernoulli_ torch.bernoulli
accepted NotImplementedError -> value: torch.pdist torch.prelu torch.trace
accepted OverflowError -> value: Tensor.renorm torch.arange torch.dist torch.linspace torch.range
accepted RuntimeError -> value: F.binary_cross_entropy F.celu F.cosine_similarity F.dropout F.dropout1d F.dropout2d F.hardtanh F.hardtanh_
accepted RuntimeError -> value: F.dropout3d F.alpha_dropout
accepted RuntimeError -> value: F.hinge_embedding_loss F.kl_div F.leaky_relu F.prelu F.relu6 F.soft_margin_loss Tensor.__ipow__ Tensor.__pos__
accepted RuntimeError -> value: Tensor.__setitem__ Tensor.addcdiv_ Tensor.addcmul Tensor.addcmul_ Tensor.allclose Tensor.bernoulli_
accepted RuntimeError -> value: Tensor.clamp_ Tensor.clamp_max_ Tensor.clamp_min_ Tensor.clip_ Tensor.cumprod Tensor.expand Tensor.index_copy_
accepted RuntimeError -> value: Tensor.isclose Tensor.nansum Tensor.new_empty Tensor.new_ones Tensor.new_zeros Tensor.norm Tensor.pow_
accepted RuntimeError -> value: Tensor.prod Tensor.renorm Tensor.repeat Tensor.round_ Tensor.square_ Tensor.sum Tensor.unflatten Tensor.uniform_
accepted RuntimeError -> value: Tensor.where torch.addcmul torch.addmv torch.addr torch.allclose torch.as_strided torch.as_tensor
accepted RuntimeError -> value: torch.bernoulli torch.cumsum torch.embedding torch.empty torch.full torch.isclose torch.linspace torch.logspace
accepted RuntimeError -> value: torch.narrow torch.norm torch.ones torch.pdist torch.prelu torch.prod torch.rand torch.randint_like
accepted RuntimeError -> value: torch.randperm torch.range torch.renorm torch.tensor torch.tile torch.zeros
accepted TypeError -> value: F.dropout F.dropout2d F.kl_div F.log_softmax F.pairwise_distance F.poisson_nll_loss F.soft_margin_loss F.softmax
accepted TypeError -> value: F.softmin Tensor.all Tensor.allclose Tensor.amin Tensor.bfloat16 Tensor.bool Tensor.byte Tensor.char
accepted TypeError -> value: Tensor.chunk Tensor.cumprod Tensor.double Tensor.float Tensor.half Tensor.int Tensor.isclose
accepted TypeError -> value: Tensor.logical_and_ Tensor.logical_or_ Tensor.logical_xor_ Tensor.logsumexp Tensor.long Tensor.max Tensor.min
accepted TypeError -> value: Tensor.new_empty Tensor.new_tensor Tensor.prod Tensor.reshape Tensor.short Tensor.std Tensor.sum Tensor.tile
accepted TypeError -> value: Tensor.type Tensor.unflatten Tensor.view torch.allclose torch.argmax torch.argmin torch.as_strided
accepted TypeError -> value: torch.bernoulli torch.embedding torch.empty torch.eye torch.flip torch.isclose torch.mean torch.norm torch.ones
accepted TypeError -> value: torch.permute torch.pow torch.rand torch.randn torch.range torch.remainder torch.reshape torch.scatter_add
accepted TypeError -> value: torch.softmax torch.sum torch.unbind torch.unflatten torch.var_mean torch.zeros
exc_type AttributeError -> TypeError: F.binary_cross_entropy F.binary_cross_entropy_with_logits F.group_norm F.huber_loss F.l1_loss
exc_type AttributeError -> TypeError: F.margin_ranking_loss F.mse_loss F.normalize F.sigmoid F.smooth_l1_loss F.softmax F.softmin F.tanh F.tanhshrink
exc_type AttributeError -> TypeError: torch.split torch.tensordot
exc_type IndexError -> AssertionError: torch.embedding
exc_type IndexError -> NotImplementedError: Tensor.log_softmax Tensor.softmax torch.embedding torch.log_softmax torch.softmax
exc_type IndexError -> RuntimeError: F.scaled_dot_product_attention Tensor.addbmm Tensor.amax Tensor.baddbmm Tensor.index_add
exc_type IndexError -> RuntimeError: Tensor.scatter torch.addbmm torch.baddbmm torch.group_norm torch.index_copy
exc_type IndexError -> TypeError: Tensor.index_copy_ Tensor.swapaxes torch.swapaxes
exc_type IndexError -> ValueError: F.bilinear torch.bilinear
exc_type NotImplementedError -> IndexError: Tensor.inner
exc_type NotImplementedError -> RuntimeError: F.binary_cross_entropy F.layer_norm F.mse_loss F.multi_margin_loss F.pad torch.arange
exc_type NotImplementedError -> ValueError: F.glu
exc_type OverflowError -> NotImplementedError: F.softplus torch.linspace
exc_type OverflowError -> RuntimeError: F.leaky_relu_ Tensor.__eq__ Tensor.__gt__ Tensor.__iadd__ Tensor.__ifloordiv__ Tensor.__imul__ Tensor.__ior__
exc_type OverflowError -> RuntimeError: Tensor.__ipow__ Tensor.__isub__ Tensor.__itruediv__ Tensor.__ixor__ Tensor.__le__ Tensor.__mod__ Tensor.__mul__
exc_type OverflowError -> RuntimeError: Tensor.__ne__ Tensor.__pow__ Tensor.__radd__ Tensor.__ror__ Tensor.__rxor__ Tensor.__truediv__ Tensor.__xor__
exc_type OverflowError -> RuntimeError: Tensor.add Tensor.add_ Tensor.addbmm Tensor.addcdiv_ Tensor.addcmul Tensor.addcmul_ Tensor.addmm Tensor.addmv
exc_type OverflowError -> RuntimeError: Tensor.baddbmm Tensor.bitwise_and Tensor.bitwise_or_ Tensor.bitwise_xor_ Tensor.clamp Tensor.clamp_max_
exc_type OverflowError -> RuntimeError: Tensor.clamp_min Tensor.clamp_min_ Tensor.clip Tensor.dist Tensor.div Tensor.div_ Tensor.divide Tensor.divide_
exc_type OverflowError -> RuntimeError: Tensor.eq Tensor.fmod Tensor.ge Tensor.ge_ Tensor.gt_ Tensor.index_add Tensor.le_ Tensor.lerp Tensor.lerp_
exc_type OverflowError -> RuntimeError: Tensor.lt_ Tensor.masked_fill Tensor.mul Tensor.multiply Tensor.ne_ Tensor.pow Tensor.pow_ Tensor.remainder
exc_type OverflowError -> RuntimeError: Tensor.renorm Tensor.scatter Tensor.scatter_ Tensor.sub Tensor.subtract_ Tensor.true_divide Tensor.true_divide_
exc_type OverflowError -> RuntimeError: torch.add torch.addbmm torch.addcdiv torch.addmv torch.addr torch.bitwise_and torch.bitwise_xor
exc_type OverflowError -> RuntimeError: torch.clamp torch.clamp_max torch.clamp_min torch.dist torch.divide torch.full torch.full_like
exc_type OverflowError -> RuntimeError: torch.greater_equal torch.less torch.less_equal torch.linspace torch.mul torch.ne torch.not_equal
exc_type OverflowError -> RuntimeError: torch.range torch.renorm torch.scatter torch.sub torch.subtract torch.true_divide torch.var torch.var_mean
exc_type OverflowError -> RuntimeError: torch.where
exc_type OverflowError -> TypeError: Tensor.add_ Tensor.scatter_ Tensor.sub_ Tensor.subtract torch.scatter torch.sub
exc_type OverflowError -> ValueError: F.hardtanh_
exc_type RuntimeError -> AssertionError: torch.embedding
exc_type RuntimeError -> IndexError: F.embedding Tensor.__setitem__ Tensor.index_add_ Tensor.index_copy_
exc_type RuntimeError -> IndexError: Tensor.inner Tensor.mH torch.embedding torch.hstack
exc_type RuntimeError -> IndexError: torch.inner torch.narrow
exc_type RuntimeError -> NotImplementedError: F.cross_entropy Tensor.addmv Tensor.lerp_ Tensor.norm Tensor.view torch.embedding torch.linspace
exc_type RuntimeError -> NotImplementedError: torch.multinomial torch.norm torch.normal torch.rand
exc_type RuntimeError -> OverflowError: torch.range
exc_type RuntimeError -> TypeError: F.group_norm F.l1_loss F.multilabel_margin_loss F.rms_norm Tensor.add_ Tensor.copy_ Tensor.expand
exc_type RuntimeError -> TypeError: Tensor.expand_as Tensor.fill_ Tensor.index_copy_ Tensor.masked_fill_ Tensor.new_empty Tensor.new_zeros
exc_type RuntimeError -> TypeError: Tensor.repeat Tensor.reshape Tensor.scatter Tensor.scatter_ Tensor.scatter_add_ Tensor.sub Tensor.subtract_
exc_type RuntimeError -> TypeError: Tensor.tile Tensor.unflatten torch.broadcast_shapes torch.subtract torch.tensordot
exc_type RuntimeError -> ValueError: F.bilinear F.hardtanh_ F.normalize Tensor.__setitem__ Tensor.norm torch.norm torch.range
exc_type RuntimeError -> ValueError: torch.vstack
exc_type RuntimeError -> ZeroDivisionError: F.scaled_dot_product_attention torch.group_norm torch.range
exc_type TypeError -> AssertionError: Tensor.type torch.as_tensor torch.tensor
exc_type TypeError -> AttributeError: F.celu F.cosine_embedding_loss F.elu F.hardsigmoid F.hardswish
exc_type TypeError -> AttributeError: F.logsigmoid F.multi_margin_loss F.multilabel_margin_loss F.nll_loss F.pad
exc_type TypeError -> AttributeError: F.poisson_nll_loss F.relu F.relu6 F.rms_norm F.scaled_dot_product_attention F.silu
exc_type TypeError -> AttributeError: F.soft_margin_loss F.triplet_margin_loss torch.allclose torch.bernoulli
exc_type TypeError -> AttributeError: torch.broadcast_tensors
exc_type TypeError -> AttributeError: torch.empty_like
exc_type TypeError -> AttributeError: torch.isclose torch.layer_norm
exc_type TypeError -> AttributeError: torch.ones_like
exc_type TypeError -> AttributeError: torch.rand_like torch.randn_like
exc_type TypeError -> AttributeError: torch.zeros_like
exc_type TypeError -> IndexError: F.embedding F.normalize F.scaled_dot_product_attention Tensor.all Tensor.min
exc_type TypeError -> IndexError: Tensor.sum torch.std torch.swapdims
exc_type TypeError -> KeyError: Tensor.type
exc_type TypeError -> NotImplementedError: F.pad F.softmax Tensor.norm torch.multinomial torch.normal torch.pow torch.rand
exc_type TypeError -> NotImplementedError: torch.softmax
exc_type TypeError -> OverflowError: F.leaky_relu torch.range
exc_type TypeError -> RuntimeError: F.conv_transpose3d F.cosine_embedding_loss
exc_type TypeError -> RuntimeError: F.cosine_similarity F.group_norm F.layer_norm F.multi_margin_loss F.nll_loss F.poisson_nll_loss
exc_type TypeError -> RuntimeError: F.rms_norm F.scaled_dot_product_attention Tensor.addcmul_ Tensor.all Tensor.as_strided Tensor.chunk Tensor.clip_
exc_type TypeError -> RuntimeError: Tensor.expand Tensor.isclose Tensor.logical_and_
exc_type TypeError -> RuntimeError: Tensor.logical_xor_ Tensor.moveaxis Tensor.narrow Tensor.norm
exc_type TypeError -> RuntimeError: Tensor.permute Tensor.repeat Tensor.stride Tensor.unflatten Tensor.view torch.as_strided torch.as_tensor
exc_type TypeError -> RuntimeError: torch.bitwise_or torch.cross torch.div
exc_type TypeError -> RuntimeError: torch.flip torch.full torch.layer_norm torch.linspace
exc_type TypeError -> RuntimeError: torch.logspace torch.narrow torch.norm torch.normal torch.pairwise_distance
exc_type TypeError -> RuntimeError: torch.permute torch.pow torch.randn torch.remainder torch.reshape torch.scatter torch.scatter_add
exc_type TypeError -> RuntimeError: torch.subtract torch.tensordot torch.unflatten torch.var_mean
exc_type TypeError -> ValueError: F.layer_norm F.normalize F.pad F.poisson_nll_loss F.rms_norm F.triplet_margin_loss Tensor.all
exc_type TypeError -> ValueError: Tensor.amax Tensor.any Tensor.count_nonzero Tensor.logsumexp Tensor.norm
exc_type TypeError -> ValueError: torch.amax torch.amin torch.cosine_similarity torch.count_nonzero torch.isclose
exc_type TypeError -> ValueError: torch.linspace torch.mean torch.norm torch.range torch.std
exc_type TypeError -> ValueError: torch.tensor torch.var torch.var_mean
exc_type ValueError -> AttributeError: F.cosine_embedding_loss torch.cdist
exc_type ValueError -> IndexError: torch.moveaxis torch.movedim
exc_type ValueError -> KeyError: Tensor.type
exc_type ValueError -> RuntimeError: F.conv2d F.conv_transpose2d F.cosine_embedding_loss F.cross_entropy F.hinge_embedding_loss F.multi_margin_loss
exc_type ValueError -> RuntimeError: F.rms_norm F.soft_margin_loss F.triplet_margin_loss Tensor.all Tensor.logsumexp Tensor.split
exc_type ValueError -> RuntimeError: torch.amax torch.amin torch.broadcast_shapes torch.cdist torch.conv2d torch.mean
exc_type ValueError -> TypeError: F.binary_cross_entropy F.binary_cross_entropy_with_logits F.cosine_embedding_loss F.cross_entropy F.grid_sample
exc_type ValueError -> TypeError: F.hinge_embedding_loss F.kl_div F.multi_margin_loss F.multilabel_margin_loss F.nll_loss F.poisson_nll_loss
exc_type ValueError -> TypeError: F.soft_margin_loss F.softmax F.triplet_margin_loss Tensor.chunk Tensor.diagonal Tensor.triu Tensor.triu_
exc_type ValueError -> TypeError: torch.cdist torch.cumsum torch.gather torch.index_add torch.index_select torch.logspace torch.max torch.scatter
exc_type ValueError -> TypeError: torch.tensordot
rejected value -> AssertionError: torch.embedding
rejected value -> IndexError: Tensor.inner torch.inner torch.std_mean
rejected value -> NotImplementedError: F.embedding Tensor.normal_ Tensor.view torch.cumsum torch.embedding torch.randn torch.randn_like
rejected value -> RuntimeError: F.cosine_similarity F.cross_entropy F.dropout2d F.margin_ranking_loss F.scaled_dot_product_attention
rejected value -> RuntimeError: Tensor.logical_and_ Tensor.logical_or_ Tensor.logical_xor_ Tensor.masked_fill Tensor.new_empty Tensor.split
rejected value -> RuntimeError: Tensor.tile torch.cosine_similarity torch.split
rejected value -> TypeError: F.elu_ Tensor.add Tensor.add_ Tensor.copy_ Tensor.expand Tensor.fill_ Tensor.index_copy_ Tensor.masked_fill_
rejected value -> TypeError: Tensor.new_empty Tensor.new_ones Tensor.new_zeros Tensor.repeat Tensor.reshape_as Tensor.scatter
rejected value -> TypeError: Tensor.scatter_add_ Tensor.sub Tensor.sub_ Tensor.subtract Tensor.subtract_ Tensor.swapaxes Tensor.tile
rejected value -> TypeError: Tensor.to Tensor.view torch.add torch.broadcast_shapes torch.floor_divide torch.result_type torch.split
rejected value -> TypeError: torch.subtract torch.swapaxes
rejected value -> ValueError: F.glu F.hardtanh_ F.scaled_dot_product_attention
accepted NotImplementedError -> value: torch.range torch.round
accepted RuntimeError -> value: torch.cumprod
accepted TypeError -> value: Tensor.flip torch.bitwise_or torch.concatenate
exc_type IndexError -> RuntimeError: Tensor.amin Tensor.renorm
exc_type NotImplementedError -> MemoryError: F.pad
exc_type NotImplementedError -> RuntimeError: F.multilabel_margin_loss torch.layer_norm torch.matmul
exc_type OverflowError -> TypeError: torch.split
exc_type RuntimeError -> IndexError: Tensor.narrow
exc_type RuntimeError -> TypeError: Tensor.new_ones Tensor.permute Tensor.reshape_as
exc_type RuntimeError -> ValueError: torch.bilinear
rejected value -> NotImplementedError: torch.normal
rejected value -> RuntimeError: Tensor.__mod__
rejected value -> TypeError: Tensor.pow_ torch.scatter
accepted IndexError -> value: F.softmin
accepted NotImplementedError -> value: F.binary_cross_entropy Tensor.round
accepted OverflowError -> value: Tensor.dist
accepted RuntimeError -> value: F.cross_entropy F.embedding F.leaky_relu_ F.rms_norm Tensor.__isub__ Tensor.masked_fill Tensor.masked_fill_ Tensor.sub_ Tensor.subtract_ torch.addcdiv torch.arange torch.cosine_similarity torch.dropout torch.nansum torch.normal torch.randn
accepted TypeError -> value: F.dropout1d Tensor.amax Tensor.clip Tensor.log_softmax Tensor.split Tensor.transpose Tensor.tril_ Tensor.var torch.asarray torch.min torch.square torch.swapdims torch.var
accepted ValueError -> value: F.triplet_margin_loss
exc_type IndexError -> RuntimeError: torch.amax torch.amin
exc_type IndexError -> TypeError: Tensor.scatter
exc_type NotImplementedError -> RuntimeError: Tensor.uniform_
exc_type RuntimeError -> TypeError: Tensor.pow_ Tensor.sub_ Tensor.view Tensor.view_as torch.randint
exc_type TypeError -> NotImplementedError: F.log_softmax F.softmin torch.tensordot
exc_type TypeError -> RuntimeError: F.softmin Tensor.var
exc_type ValueError -> RuntimeError: F.l1_loss
rejected value -> RuntimeError: Tensor.__ifloordiv__ Tensor.__setitem__ Tensor.bernoulli_ Tensor.remainder Tensor.subtract torch.inner torch.subtract torch.tensordot
rejected value -> TypeError: Tensor.expand_as Tensor.flip Tensor.floor_divide Tensor.scatter_ torch.sub
rejected value -> RuntimeError: torch.scalar_tensor
accepted TypeError -> value: torch.std_mean
accepted TypeError -> value: torch.flatten
rejected value -> ValueError: torch.as_tensor
exc_type RuntimeError -> TypeError: Tensor.add
accepted TypeError -> value: Tensor.new_zeros
exc_type NotImplementedError -> ValueError: torch.range
accepted TypeError -> value: Tensor.new_ones
accepted TypeError -> value: Tensor.any
accepted RuntimeError -> value: torch.sum
accepted RuntimeError -> value: Tensor.logsumexp
rejected value -> IndexError: Tensor.index_put
exc_type ValueError -> RuntimeError: F.linear_cross_entropy  # F.cross_entropy's differences (listed above) reached through F.linear_cross_entropy
exc_type ValueError -> TypeError: F.linear_cross_entropy  # F.cross_entropy's, as above
exc_type RuntimeError -> NotImplementedError: F.linear_cross_entropy  # F.cross_entropy's, as above
rejected value -> RuntimeError: Tensor.as_strided_scatter torch.as_strided_scatter  # a strided view as input: torch's as_strided reaches storage beyond the input's elements (unspecified values); ampgrad scatters into a dense copy and bounds-checks
accepted RuntimeError -> value: torch.resize_as_ Tensor.resize_ Tensor.resize_as_  # the fuzz builds torch's inputs with from_numpy, whose storage cannot grow ("Trying to resize storage that is not resizable"); torch's own tensors grow like ampgrad's
exc_type TypeError -> RuntimeError: F.linear_cross_entropy  # F.cross_entropy checks label_smoothing before torch's parser rejects a wrong-typed weight
rejected value -> RuntimeError: Tensor.as_strided_  # torch's as_strided_ skips the storage-size checks of as_strided (a stride of 2**63 - 1 gives a tensor that reads outside its storage); ampgrad runs them, torch's as_strided errors
"""


_WHAT = {"exc_type": "torch raises {t}, ampgrad raises {a}",
         "accepted": "invalid input accepted: torch raises {t}, ampgrad returns a value",
         "rejected": "torch returns a value, ampgrad raises {a} (unsupported argument spelling, dtype or case)"}
REASONS = {(c, t, a): _WHAT[c].format(t=t, a=a) for c in _WHAT for t in EXC_CLASSES + ("value",)
           for a in EXC_CLASSES + ("value",)}


class Known:
    def __init__(self, entries=None, lines=None):
        self.entries = list(KNOWN if entries is None else entries)
        for line in (LINES if lines is None else lines).strip().splitlines():
            line, _, reason = line.partition("#")
            if not line.strip():
                continue
            pair, _, ops = line.partition(":")
            cat, t, _, a = pair.split()
            self.entries.append(K(ops.strip(), cat, t, a, None, reason.strip() or REASONS.get((cat, t, a), "")))
        self.crashes = [e for e in self.entries if e.cat in ("crash", "hang")]

    def match(self, call, cat, res):
        for e in self.entries:
            if e.covers(call, cat, res["torch"], res["ampgrad"]):
                return e
        return None

    def crash_entry(self, call):
        """The known crash / hang entry this call matches before running it (None: run it)."""
        for e in self.crashes:
            if any(fnmatch.fnmatchcase(call.op, p) for p in e.ops.split()) and (e.when is None or e.when(call)):
                return e
        return None
