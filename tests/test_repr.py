"""Compare ampgrad._tensor_str output against torch's repr on the same values."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ampgrad import _tensor_str as ts

FLOAT_NAMES = {"float16", "bfloat16", "float32", "float64"}


class FakeDtype:
    def __init__(self, name):
        self.name = name
        self.is_floating_point = name in FLOAT_NAMES

    def __repr__(self):
        return "ampgrad." + self.name

    __str__ = __repr__


class FakeDevice:
    def __init__(self, type_, index=None):
        self.type = type_
        self.index = index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeGradFn:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class FakeTensor:
    """Minimal stand-in exposing the attributes tensor_repr reads."""

    def __init__(self, values, dtype_name, device=None, requires_grad=False, grad_fn=None):
        self._values = np.asarray(values)
        self.shape = tuple(self._values.shape)
        self.dtype = FakeDtype(dtype_name)
        self.device = device or FakeDevice("cpu")
        self.requires_grad = requires_grad
        self.grad_fn = None if grad_fn is None else FakeGradFn(grad_fn)
        self.is_leaf = grad_fn is None


def to_numpy(t):
    return t._values


def fake_from_torch(tt):
    """Mirror a torch tensor the way ampgrad's to_numpy would expose it."""
    name = str(tt.dtype).split(".")[1]
    data = tt.detach()
    if tt.dtype.is_floating_point:
        values = data.double().numpy()
    elif tt.dtype == torch.bool:
        values = data.numpy()
    else:
        values = data.long().numpy()
    grad_fn = None if tt.grad_fn is None else type(tt.grad_fn).__name__
    return FakeTensor(values, name, requires_grad=tt.requires_grad, grad_fn=grad_fn)


def check(tt):
    expected = repr(tt).replace("torch.", "ampgrad.")
    fake = fake_from_torch(tt)
    assert ts.tensor_repr(fake, to_numpy) == expected
    assert ts.tensor_str(fake, to_numpy) == expected


@pytest.fixture(autouse=True)
def _reset_printoptions():
    yield
    torch.set_printoptions(profile="default", sci_mode=None)
    ts.set_printoptions(profile="default", sci_mode=None)


def both_set(**kwargs):
    torch.set_printoptions(**kwargs)
    ts.set_printoptions(**kwargs)


rng = np.random.default_rng(0)
nan, inf = math.nan, math.inf


def T(data, dtype=None):
    return torch.tensor(np.asarray(data), dtype=dtype)


CASES = {
    # integers and bools
    "int_1d": lambda: T([1, 2, 3]),
    "int_negative": lambda: T([-10, 2, -300]),
    "int_large": lambda: T([10**12, -5, 7]),
    "int32": lambda: T([1, -2, 3], torch.int32),
    "int16": lambda: T([100, -2], torch.int16),
    "int8": lambda: T([-128, 127], torch.int8),
    "uint8": lambda: T([0, 255, 7], torch.uint8),
    "int_2d_widths": lambda: T(rng.integers(-1000, 1000, size=(4, 5))),
    "bool_1d": lambda: T([True, False, True]),
    "bool_2d": lambda: T(rng.random((3, 3)) > 0.5),
    # float int_mode / fixed / sci
    "float_int_mode": lambda: T([1.0, 2.0, 3.0], torch.float32),
    "float_int_mode_negative": lambda: T([-1.0, 20.0, 300.0], torch.float32),
    "float_int_mode_big": lambda: T([12345678.0, 23456789.0], torch.float32),
    "float_fixed": lambda: T([1.5, 2.25, -3.125], torch.float32),
    "float_tenths": lambda: T([0.1, 0.2, 0.3], torch.float32),
    "float_rounding": lambda: T([1.23456789, 0.99999, 9.99995], torch.float32),
    "sci_small_min": lambda: T([1e-5, 1.0], torch.float32),
    "sci_big_max": lambda: T([1e9, 2e9], torch.float32),
    "sci_int_mode": lambda: T([1e10, 3.0], torch.float32),
    "sci_ratio": lambda: T([1.0, 5000.0], torch.float32),
    "no_sci_ratio_999": lambda: T([1.0, 999.0], torch.float32),
    "boundary_1e8": lambda: T([1e8, 1.0e8], torch.float64),
    "boundary_1e-4": lambda: T([1e-4, 0.0005], torch.float64),
    "magnitudes_logspace": lambda: T(np.logspace(-8, 8, 9), torch.float32),
    "mixed_signs_sci": lambda: T([-1e-7, 3e3, -2.5e-2], torch.float32),
    "huge_float64": lambda: T([1e300, -1e-300], torch.float64),
    # non-finite, zeros, negative zero
    "nan_inf": lambda: T([nan, inf, -inf, 1.0], torch.float32),
    "nan_fixed": lambda: T([nan, 1.5], torch.float32),
    "inf_sci": lambda: T([inf, 1e-6, 2.0], torch.float32),
    "all_nan": lambda: T([nan, nan], torch.float32),
    "all_zero": lambda: T([0.0, 0.0, 0.0], torch.float32),
    "negative_zero": lambda: T([-0.0, 0.0, 1.0], torch.float32),
    "negative_zero_fixed": lambda: T([-0.0, 0.5], torch.float32),
    # 0-d
    "scalar_int_mode": lambda: T(3.0, torch.float32),
    "scalar_fixed": lambda: T(3.14159, torch.float32),
    "scalar_sci": lambda: T(1e-10, torch.float32),
    "scalar_nan": lambda: T(nan, torch.float32),
    "scalar_neg_zero": lambda: T(-0.0, torch.float32),
    "scalar_int": lambda: T(42),
    "scalar_int32": lambda: T(-7, torch.int32),
    "scalar_bool": lambda: T(True),
    "scalar_float64": lambda: T(2.5, torch.float64),
    # empty
    "empty_float": lambda: torch.tensor([]),
    "empty_int64": lambda: torch.tensor([], dtype=torch.int64),
    "empty_bool": lambda: torch.tensor([], dtype=torch.bool),
    "empty_float64": lambda: torch.tensor([], dtype=torch.float64),
    "empty_0x3": lambda: torch.from_numpy(np.zeros((0, 3), np.float32)),
    "empty_2x0x3_int32": lambda: torch.from_numpy(np.zeros((2, 0, 3), np.int32)),
    # N-d and line wrapping
    "randn_2d": lambda: T(rng.standard_normal((3, 4)), torch.float32),
    "randn_3d": lambda: T(rng.standard_normal((2, 3, 4)), torch.float32),
    "randn_4d": lambda: T(rng.standard_normal((2, 2, 2, 3)), torch.float32),
    "sci_3d": lambda: T(rng.standard_normal((2, 2, 3)) * 1e6, torch.float32),
    "wrap_1d_int_mode": lambda: T(np.arange(100) * 3.0, torch.float32),
    "wrap_1d_randn": lambda: T(rng.standard_normal(200), torch.float32),
    "wrap_2d_rows": lambda: T(rng.standard_normal((3, 30)), torch.float32),
    "wrap_1d_int": lambda: T(np.arange(300)),
    # summarization
    "summ_1d_int": lambda: T(np.arange(2000)),
    "summ_1d_float": lambda: T(np.arange(2000) / 7.0, torch.float32),
    "summ_2d": lambda: T(rng.standard_normal((50, 50)), torch.float32),
    "summ_3d": lambda: T(rng.standard_normal((20, 20, 20)), torch.float32),
    "summ_wide_row": lambda: T(rng.standard_normal((1, 2000)), torch.float32),
    "summ_narrow_cols": lambda: T(rng.standard_normal((1001, 1)), torch.float32),
    # hidden middle values must not affect the format
    "summ_hidden_outlier": lambda: T(
        np.concatenate([np.ones(10), [1e-9], np.ones(1990)]), torch.float32
    ),
    "summ_bool": lambda: T(rng.random(1500) > 0.5),
    # reduced-precision and other float dtypes
    "float64": lambda: T([1.0 / 3.0, 2.0 / 3.0], torch.float64),
    "float64_2d": lambda: T(rng.standard_normal((2, 3)), torch.float64),
    "float16": lambda: T([0.1, 1000.5, 65504.0], torch.float16),
    "float16_sci": lambda: T([1e-5, 3.0, 6e4], torch.float16),
    "float16_int_mode": lambda: T([1.0, 2048.0], torch.float16),
    "float16_nan_inf": lambda: T([nan, inf, 0.333], torch.float16),
    "bfloat16_randn": lambda: T(rng.standard_normal(8), torch.bfloat16),
    "bfloat16_large": lambda: T([1e30, -3.0], torch.bfloat16),
    "bfloat16_scalar": lambda: T(0.1, torch.bfloat16),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    check(CASES[name]())


def test_requires_grad_leaf():
    check(T([1.0, 2.0], torch.float32).requires_grad_())


def test_requires_grad_float64_wraps():
    # Long enough that the suffixes wrap onto new lines.
    check(T(rng.standard_normal(10), torch.float64).requires_grad_())


def test_grad_fn_add():
    x = T([1.0, 2.0], torch.float32).requires_grad_()
    check(x + 1)


def test_grad_fn_mul_float64_2d():
    x = T(rng.standard_normal((3, 4)), torch.float64).requires_grad_()
    check(x * 2)


def test_grad_fn_scalar():
    x = T([1.0, 2.0, 3.5], torch.float32).requires_grad_()
    check(x.sum())


def test_grad_fn_float16():
    x = T([1.0, 2.0], torch.float32).requires_grad_()
    check(x.half())


@pytest.mark.parametrize("offset", [0, 10, 100])
def test_suffix_wrapping_boundary(offset):
    # Sweeps line lengths across linewidth; line breaks must follow torch's
    # measurement even though "ampgrad." is longer than "torch.".
    for n in range(1, 16):
        x = (torch.arange(n, dtype=torch.float32) + offset).requires_grad_()
        check(x.half())
        check(x.detach().double())


def test_device_suffix_order():
    cuda = FakeDevice("cuda", 0)
    t = FakeTensor(np.array([1.0, 2.0]), "float32", device=cuda)
    assert ts.tensor_repr(t, to_numpy) == "tensor([1., 2.], device='cuda:0')"
    t = FakeTensor(np.array([1.0, 2.0]), "float16", device=cuda, grad_fn="AddBackward0")
    # Fits in 80 columns when measured with torch's shorter "torch." prefix.
    assert ts.tensor_repr(t, to_numpy) == (
        "tensor([1., 2.], device='cuda:0', dtype=ampgrad.float16, grad_fn=<AddBackward0>)"
    )
    t = FakeTensor(np.zeros((0, 2)), "float32", device=cuda, requires_grad=True)
    assert ts.tensor_repr(t, to_numpy) == (
        "tensor([], device='cuda:0', size=(0, 2), requires_grad=True)"
    )


def test_grad_fn_cpp_name_is_trimmed():
    t = FakeTensor(np.array([1.0]), "float32", grad_fn="torch::autograd::CopySlices")
    assert ts.tensor_repr(t, to_numpy) == "tensor([1.], grad_fn=<CopySlices>)"


def test_default_printoptions_match_torch():
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
    assert ts.get_printoptions() == dict(
        precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None
    )


def test_printoptions_context_restores():
    with ts.printoptions(precision=2):
        assert ts.get_printoptions()["precision"] == 2
    assert ts.get_printoptions()["precision"] == 4


PRINTOPT_CASES = [
    (dict(precision=2), lambda: T([1.23456, 2.5], torch.float32)),
    (dict(precision=10), lambda: T([1.0 / 3.0, 1e-3], torch.float64)),
    (dict(precision=0), lambda: T([1.5, 2.25], torch.float32)),
    (dict(sci_mode=True), lambda: T([1.0, 2.5], torch.float32)),
    (dict(sci_mode=True), lambda: T([0.0, 0.0], torch.float32)),
    (dict(sci_mode=False), lambda: T([1e-7, 1e9], torch.float32)),
    (dict(linewidth=40), lambda: T(rng.standard_normal(20), torch.float32)),
    (dict(linewidth=10), lambda: T(rng.standard_normal((2, 3)), torch.float64)),
    (dict(threshold=5), lambda: T(np.arange(10))),
    (dict(threshold=5, edgeitems=1), lambda: T(rng.standard_normal((4, 4)), torch.float32)),
    (dict(threshold=5, edgeitems=0), lambda: T(np.arange(10) * 1.5, torch.float32)),
    (dict(threshold=5, edgeitems=0), lambda: T(rng.standard_normal((4, 4)), torch.float16)),
    (dict(threshold=5, edgeitems=0), lambda: T(np.arange(12).reshape(3, 4))),
    (dict(profile="short"), lambda: T(rng.standard_normal((10, 10)), torch.float32)),
    (dict(profile="short"), lambda: T(np.arange(1500))),
    (dict(profile="full"), lambda: T(np.arange(1200))),
]


@pytest.mark.parametrize("opts,make", PRINTOPT_CASES)
def test_printoptions_match_torch(opts, make):
    both_set(**opts)
    assert ts.get_printoptions() == torch._tensor_str.get_printoptions()
    check(make())


def test_random_fuzz_matches_torch():
    # Seeded sweep over shapes, dtypes, magnitudes, special values and options.
    fuzz = np.random.default_rng(123)
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16,
              torch.int64, torch.int32, torch.bool, torch.uint8]
    for _ in range(400):
        opts = dict(profile="default", sci_mode=None)
        if fuzz.random() < 0.3:
            opts = dict(
                precision=int(fuzz.integers(0, 8)),
                threshold=int(fuzz.integers(1, 200)),
                edgeitems=int(fuzz.integers(0, 4)),
                linewidth=int(fuzz.integers(5, 120)),
                sci_mode=[None, True, False][fuzz.integers(3)],
            )
        both_set(**opts)
        shape = tuple(int(fuzz.integers(0 if fuzz.random() < 0.05 else 1, 8))
                      for _ in range(int(fuzz.integers(0, 4))))
        dtype = dtypes[fuzz.integers(len(dtypes))]
        vals = fuzz.standard_normal(shape) * 10.0 ** fuzz.uniform(-12, 12)
        if fuzz.random() < 0.3:
            vals = np.round(vals)
        if fuzz.random() < 0.2 and vals.size:
            vals.reshape(-1)[fuzz.integers(vals.size)] = [nan, inf, -inf, 0.0, -0.0][fuzz.integers(5)]
        if dtype == torch.bool:
            vals = vals > 0
        elif not dtype.is_floating_point:
            vals = np.clip(np.nan_to_num(vals), -100, 100).astype(np.int64)
            if dtype == torch.uint8:
                vals = np.abs(vals)
        tt = torch.tensor(vals, dtype=dtype)
        if dtype.is_floating_point and fuzz.random() < 0.2:
            tt = tt.requires_grad_()
            if fuzz.random() < 0.5:
                tt = tt * 1
        check(tt)


@pytest.mark.parametrize("values, dtype", [([1.5, -2.25, 3.0], "float32"), ([[1, 2], [3, 4]], "int64"),
                                           ([True, False], "bool"), ([1e-5, 1e3], "float64"),
                                           ([0.1, 0.2], "float16"), ([0.1, 0.2], "bfloat16")])
def test_real_tensor_repr_matches_torch(values, dtype):
    import ampgrad as ag
    a = ag.tensor(values, dtype=getattr(ag, dtype))
    t = torch.tensor(values, dtype=getattr(torch, dtype))
    assert repr(a) == repr(t).replace("torch.", "ampgrad.")
    w = ag.tensor([1.0, 2.0], requires_grad=True)
    assert repr(w) == "tensor([1., 2.], requires_grad=True)"
    assert repr(w * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
