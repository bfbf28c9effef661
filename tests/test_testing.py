"""ampgrad.testing (issue 16): assert_close and make_tensor against torch.testing's, message for message
(torch's reprs say torch.Size / torch.float32 where ampgrad's say ampgrad.*: compared after that rename)."""
import math
import warnings

import numpy as np
import pytest

import ampgrad
from ampgrad.testing import assert_close, make_tensor

torch = pytest.importorskip("torch")


def _to_torch(x):
    if isinstance(x, ampgrad.Tensor):
        return torch.from_dlpack(x.detach()).clone().requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(v) for v in x)
    if isinstance(x, dict):
        return {k: _to_torch(v) for k, v in x.items()}
    return x


def _outcome(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return type(e), str(e).replace("torch.", "ampgrad.").replace("ampgrad._C.Tensor", "ampgrad.Tensor")
    return None


def _check(actual, expected, **kwargs):
    """assert_close's outcome (pass, or exception type and message) is torch's."""
    got = _outcome(assert_close, actual, expected, **kwargs)
    want = _outcome(torch.testing.assert_close, _to_torch(actual), _to_torch(expected), **kwargs)
    assert got == want
    return got


T = ampgrad.tensor

_CASES = {
    "equal": (T([1.0, 2.0, 3.0]), T([1.0, 2.0, 3.0]), {}),
    "within_default_tol": (T([1.0, 2.0]), T([1.0, 2.0 + 1e-6]), {}),
    "values": (T([1.0, 2.0, 3.0, 4.0]), T([1.0, 2.5, 3.0, -4.0]), {}),
    "values_2d": (T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 2.0], [3.0, 4.1]]), {}),
    "rel_at_zero": (T([0.0, 1.0]), T([1e-3, 0.0]), {}),
    "explicit_tol_pass": (T([1.0, 2.0]), T([1.1, 2.1]), dict(rtol=0.1, atol=0.0)),
    "explicit_tol_fail": (T([1.0, 2.0]), T([1.3, 2.1]), dict(rtol=0.1, atol=0.0)),
    "equality": (T([1.0, 2.0]), T([1.0, 2.0000001]), dict(rtol=0.0, atol=0.0)),
    "float64": (T([1.0, 2.0], dtype=ampgrad.float64), T([1.0, 2.0 + 1e-6], dtype=ampgrad.float64), {}),
    "float16": (T([1.0, 2.0], dtype=ampgrad.float16), T([1.0, 2.01], dtype=ampgrad.float16), {}),
    "bfloat16_pass": (T([1.0, 2.0], dtype=ampgrad.bfloat16), T([1.0, 2.015625], dtype=ampgrad.bfloat16), {}),
    "bfloat16_fail": (T([1.0, 2.0], dtype=ampgrad.bfloat16), T([1.0, 2.5], dtype=ampgrad.bfloat16), {}),
    "int": (T([1, 2, 3]), T([1, 2, 4]), {}),
    "uint8": (T([1, 200], dtype=ampgrad.uint8), T([3, 0], dtype=ampgrad.uint8), {}),
    "bool": (T([True, False]), T([True, True]), {}),
    "nan": (T([1.0, math.nan]), T([1.0, math.nan]), {}),
    "nan_equal": (T([1.0, math.nan]), T([1.0, math.nan]), dict(equal_nan=True)),
    "inf": (T([math.inf, 1.0]), T([math.inf, 1.0]), {}),
    "inf_vs_big": (T([math.inf]), T([1e38]), {}),
    "neg_inf": (T([-math.inf, 1.0]), T([math.inf, 1.0]), {}),
    "0d": (T(1.0), T(1.5), {}),
    "0d_int": (T(1), T(2), {}),
    "shape": (T([1.0, 2.0]), T([1.0, 2.0, 3.0]), {}),
    "dtype": (T([1.0, 2.0]), T([1.0, 2.0], dtype=ampgrad.float64), {}),
    "dtype_unchecked": (T([1.0, 2.0]), T([1.0, 2.0], dtype=ampgrad.float64), dict(check_dtype=False)),
    "dtype_unchecked_fail": (T([1, 2]), T([1.0, 2.5]), dict(check_dtype=False)),
    "stride": (ampgrad.ones(2, 3).t(), ampgrad.ones(3, 2), dict(check_stride=True)),
    "stride_unchecked": (ampgrad.ones(2, 3).t(), ampgrad.ones(3, 2), {}),
    "only_rtol": (T([1.0]), T([1.0]), dict(rtol=1e-3)),
    "only_atol": (T([1.0]), T([1.0]), dict(atol=1e-3)),
    "msg_str": (T([1.0]), T([2.0]), dict(msg="custom")),
    "msg_callable": (T([1.0, 2.0]), T([2.0, 2.0]), dict(msg=lambda m: "Header\n\n" + m + "\n\nFooter")),
    "requires_grad": (T([1.0, 2.0], requires_grad=True), T([1.0, 2.5]), {}),
    "scalars_float": (1.0, 1.1, {}),
    "scalars_float_pass": (1.0, 1.0 + 1e-8, {}),
    "scalars_int": (1, 2, {}),
    "scalars_mixed": (1, 1.0, {}),
    "scalars_mixed_dtype": (1, 1.0, dict(check_dtype=True)),
    "scalars_nan": (math.nan, math.nan, {}),
    "scalars_nan_equal": (math.nan, math.nan, dict(equal_nan=True)),
    "np_scalar": (np.float32(1.0), np.float32(1.5), {}),
    "bools": (True, False, {}),
    "np_bool": (np.bool_(True), True, {}),
    "none": (None, None, {}),
    "none_vs_tensor": (None, T([1.0]), {}),
    "seq": ([T([1.0]), T([2.0])], [T([1.0]), T([2.5])], {}),
    "seq_len": ([T([1.0])], [T([1.0]), T([2.0])], {}),
    "nested": ({"a": [T([1.0]), 2.0], "b": T([3.0])}, {"a": [T([1.0]), 2.5], "b": T([3.0])}, {}),
    "mapping_keys": ({"a": T([1.0]), "c": 1}, {"a": T([1.0]), "b": 1}, {}),
    "tuple_of_lists": ((T([1.0]), [1, 2]), (T([1.0]), [1, 3]), {}),
    "tensor_vs_number": (T(1.0), 1.0, {}),
    "str": ("a", "b", {}),
    "large": (ampgrad.arange(1000.0), ampgrad.arange(1000.0) * (1 + 1e-3), {}),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_assert_close_as_torch(name):
    actual, expected, kwargs = _CASES[name]
    _check(actual, expected, **kwargs)


def test_assert_close_numpy_arrays():
    a, b = np.array([1.0, 2.0]), np.array([1.0, 2.5])
    got = _outcome(assert_close, a, b)
    want = _outcome(torch.testing.assert_close, a, b)
    assert got == want and got is not None


def test_assert_close_reports_greatest_difference_and_index():
    with pytest.raises(AssertionError) as e:
        assert_close(ampgrad.zeros(2, 3), T([[0.0, 0.0, 0.0], [0.0, 5.0, 0.0]]))
    msg = str(e.value)
    assert "Mismatched elements: 1 / 6 (16.7%)" in msg
    assert "Greatest absolute difference: 5.0 at index (1, 1) (up to 1e-05 allowed)" in msg
    assert "Greatest relative difference: 1.0 at index (1, 1) (up to 1.3e-06 allowed)" in msg


def test_assert_close_passes_silently():
    assert assert_close(ampgrad.ones(3), ampgrad.ones(3)) is None


def test_assert_allclose_deprecated():
    with pytest.warns(FutureWarning, match="assert_allclose"):
        ampgrad.testing.assert_allclose(T([1.0, 2.0]), [1.0, 2.0 + 1e-5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _outcome(ampgrad.testing.assert_allclose, T([1.0, 2.0]), [1.0, 2.1])
        want = _outcome(torch.testing.assert_allclose, torch.tensor([1.0, 2.0]), [1.0, 2.1])
    assert got == want and got is not None


# ---- make_tensor
_MT_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]


@pytest.mark.parametrize("dtype", _MT_DTYPES)
def test_make_tensor_defaults(dtype):
    dt = getattr(ampgrad, dtype)
    t = make_tensor((40, 50), dtype=dt, device="cpu")
    assert t.shape == (40, 50) and t.dtype == dt and t.device == ampgrad.device("cpu") and t.is_contiguous()
    v = t.double() if dtype != "bool" else t.long()
    lo, hi = {"bool": (0, 1), "uint8": (0, 9), "float16": (-9, 9), "bfloat16": (-9, 9), "float32": (-9, 9),
              "float64": (-9, 9)}.get(dtype, (-9, 9))
    assert float(v.min()) >= lo and float(v.max()) <= hi
    assert len(set(v.flatten().tolist())) > 1  # random, not constant


def test_make_tensor_options():
    t = make_tensor(3, 4, dtype=ampgrad.float32, device="cpu", low=-1, high=1)
    assert t.shape == (3, 4) and float(t.min()) >= -1 and float(t.max()) < 1
    t = make_tensor([5], dtype=ampgrad.float32, device="cpu", noncontiguous=True)
    assert t.shape == (5,) and not t.is_contiguous() and t.stride() == (2,)
    t = make_tensor((), dtype=ampgrad.float32, device="cpu", noncontiguous=True)
    assert t.shape == ()
    t = make_tensor(1000, dtype=ampgrad.int64, device="cpu", low=-1, high=1, exclude_zero=True)
    assert int((t == 0).sum()) == 0 and set(t.tolist()) <= {-1, 1}
    t = make_tensor(1000, dtype=ampgrad.float32, device="cpu", low=0, high=1e-30, exclude_zero=True)
    assert int((t == 0).sum()) == 0
    t = make_tensor(2, dtype=ampgrad.float64, device="cpu", requires_grad=True)
    assert t.requires_grad and t.is_leaf
    t = make_tensor(10, dtype=ampgrad.float16, device="cpu", low=-1e10, high=1e10)  # clamped to the dtype's range
    assert bool(t.isfinite().all())
    t = make_tensor(100, dtype=ampgrad.uint8, device="cpu", low=-5, high=3)
    assert int(t.min()) >= 0 and int(t.max()) < 3


@pytest.mark.parametrize("kwargs", [
    dict(dtype="int64", requires_grad=True),
    dict(dtype="bool", requires_grad=True),
    dict(dtype="float32", low=2, high=1),
    dict(dtype="int32", low=2, high=2),
    dict(dtype="float32", low=math.nan),
    dict(dtype="uint8", low=300, high=400),
    dict(dtype="float32", noncontiguous=True, memory_format="x"),
])
def test_make_tensor_errors_as_torch(kwargs):
    kw = dict(kwargs)
    name = kw.pop("dtype")
    got = _outcome(make_tensor, (2, 3), dtype=getattr(ampgrad, name), device="cpu", **kw)
    want = _outcome(torch.testing.make_tensor, (2, 3), dtype=getattr(torch, name), device="cpu", **kw)
    assert got == want and got is not None


def test_make_tensor_low_equals_high_float_warns():
    with pytest.warns(FutureWarning, match="low==high"):
        t = make_tensor(3, dtype=ampgrad.float32, device="cpu", low=1, high=1)
    assert t.tolist() == [1.0, 1.0, 1.0]
