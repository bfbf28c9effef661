"""The special-function and integer elementwise ops torch has at the top level and as Tensor methods
(engine ops of csrc/ops/special.cpp; float_power, ldexp and isin's argument handling are thin
wrappers over engine ops), bound onto ampgrad and Tensor by ampgrad/__init__.py."""
import collections
import numbers

from . import _C
from . import _argparse
from ._C import Tensor

__all__ = ["digamma", "lgamma", "polygamma", "mvlgamma", "logit", "i0", "sgn", "signbit", "frexp", "igamma",
           "igammac", "gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift", "nextafter", "heaviside", "rsub",
           "isin", "float_power", "ldexp", "xlogy_"]

digamma, lgamma, polygamma, logit, i0, sgn, signbit = (
    _C.digamma, _C.lgamma, _C.polygamma, _C.logit, _C.i0, _C.sgn, _C.signbit)


def _check_p(input, p):
    # torch materializes p shifted copies of the input: a huge p fails its allocation (ampgrad would loop p times)
    if isinstance(p, int) and p > (1 << 20):
        raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                           f"{input.numel() * p * input.element_size()} bytes. Error code 12 (Cannot allocate memory)")


def mvlgamma(input, p):
    """torch.mvlgamma: the multivariate log-gamma of dimension p (an engine op, MvlgammaBackward0)."""
    _check_p(input, p)
    return _C.mvlgamma(input, p)


_mvlgamma_method, _mvlgamma_inplace = Tensor.mvlgamma, Tensor.mvlgamma_


def _tensor_mvlgamma(self, p):
    _check_p(self, p)
    return _mvlgamma_method(self, p)


def _tensor_mvlgamma_(self, p):
    _check_p(self, p)
    return _mvlgamma_inplace(self, p)
igamma, igammac, gcd, lcm = _C.igamma, _C.igammac, _C.gcd, _C.lcm
bitwise_left_shift, bitwise_right_shift, nextafter, heaviside = (
    _C.bitwise_left_shift, _C.bitwise_right_shift, _C.nextafter, _C.heaviside)


def rsub(input, other, alpha=1):
    """torch.rsub: other - alpha * input (RsubBackward0 / RsubBackward1 for a number `other`)."""
    return _C.rsub(input, other, alpha=alpha)

_frexp_t = collections.namedtuple("frexp", ["mantissa", "exponent"])
_frexp_t.__module__ = "ampgrad.return_types"


def frexp(input):
    """torch.frexp: (mantissa, exponent) with input = mantissa * 2 ** exponent, exponent int32."""
    return _frexp_t(*_C._frexp(input))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """torch.isin: whether each element of `elements` is in `test_elements` (either may be a number). The
    engine kernel binary-searches the test values, passed sorted and NaN-free (NaN is never found)."""
    if not (_argparse._is_bool(assume_unique) and _argparse._is_bool(invert)):   # the parser's bools: no int
        err = _argparse.parse_error("fn", "isin", (elements, test_elements),
                                    {"assume_unique": assume_unique, "invert": invert})
        if err is not None:
            raise err
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments: at least one of elements and "
                        "test_elements must be a Tensor")
    if not isinstance(test_elements, Tensor):
        return (elements != test_elements) if invert else (elements == test_elements)
    t = test_elements.detach().flatten()
    if t.is_floating_point():
        t = t[t == t]
    t = t.sort().values
    return _C._isin(elements, t, bool(invert))


def _as_double(x):
    if isinstance(x, Tensor):
        return x.to(_C.float64) if not x.is_complex() else x
    if isinstance(x, (bool, numbers.Integral, numbers.Real)) and not isinstance(x, complex):
        return float(x)
    return x


def float_power(input, exponent):
    """torch.float_power: pow computed in float64 (the result is float64 whatever the operands' dtypes)."""
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError("float_power() received an invalid combination of arguments")
    return _C.pow(_as_double(input), _as_double(exponent))


def _float_power_(self, exponent):
    if self.dtype != _C.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype_name(self.dtype)} but the operation's "
                           "result requires dtype Double")
    return self.pow_(_as_double(exponent))


def _dtype_name(dt):
    return {"torch.float32": "Float", "torch.float16": "Half", "torch.bfloat16": "BFloat16", "torch.int64": "Long",
            "torch.int32": "Int", "torch.int16": "Short", "torch.int8": "Char", "torch.uint8": "Byte",
            "torch.bool": "Bool", "ampgrad.float32": "Float", "ampgrad.float16": "Half", "ampgrad.bfloat16": "BFloat16",
            "ampgrad.int64": "Long", "ampgrad.int32": "Int", "ampgrad.bool": "Bool"}.get(str(dt), str(dt))


def ldexp(input, other):
    """torch.ldexp: input * 2 ** other (a floating result)."""
    for name, pos, v in (("input", 1, input), ("other", 2, other)):
        if not isinstance(v, Tensor):
            raise TypeError(f"ldexp(): argument '{name}' (position {pos}) must be Tensor, not {type(v).__name__}")
    return _C.mul(input, _C.pow(2.0, other))


def _ldexp_(self, other):
    return self.mul_(_C.pow(2.0, other))


def xlogy_(input, other):
    return input.xlogy_(other)


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    r = _C.nan_to_num(self.detach() if not self.requires_grad else self, nan, posinf, neginf)
    return self.copy_(r)


def _install_methods():
    Tensor.frexp = lambda self: frexp(self)
    Tensor.mvlgamma = _tensor_mvlgamma
    Tensor.mvlgamma_ = _tensor_mvlgamma_
    Tensor.float_power = lambda self, exponent: float_power(self, exponent)
    Tensor.float_power_ = _float_power_
    Tensor.ldexp = lambda self, other: ldexp(self, other)
    Tensor.ldexp_ = _ldexp_
    Tensor.true_divide_ = Tensor.div_
    if not hasattr(Tensor, "nan_to_num_"):
        Tensor.nan_to_num_ = _nan_to_num_


_install_methods()
