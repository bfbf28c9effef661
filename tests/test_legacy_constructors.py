"""torch's legacy constructors (ampgrad/_legacy.py): Tensor(...) and FloatTensor/LongTensor/..., each
against torch: dtype, shape, values, aliasing, isinstance, errors."""
import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")

CASES = [
    lambda m: m.Tensor([-4.0]), lambda m: m.Tensor([[1, 2], [3, 4]]), lambda m: m.Tensor([True, False]),
    lambda m: m.Tensor((2, 3)), lambda m: m.Tensor(), lambda m: m.Tensor(np.array([1, 2])),
    lambda m: m.Tensor([1.0], device="cpu"), lambda m: m.Tensor(m.tensor([1, 2])), lambda m: m.LongTensor([1.7, 2]),
    lambda m: m.BoolTensor([1, 0]), lambda m: m.DoubleTensor([1]), lambda m: m.HalfTensor([1.5]), lambda m: m.BFloat16Tensor([1.5]),
    lambda m: m.ByteTensor([3]), lambda m: m.CharTensor([-3]), lambda m: m.ShortTensor([3]), lambda m: m.IntTensor([3]),
    lambda m: m.FloatTensor([[0.5]]),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_data_forms_match_torch(i):
    a, t = CASES[i](ag), CASES[i](torch)
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(a.shape) == tuple(t.shape)
    np.testing.assert_array_equal(a.float().numpy(), t.float().numpy())


@pytest.mark.parametrize("f", [lambda m: m.Tensor(2, 3), lambda m: m.Tensor(3), lambda m: m.Tensor(m.Size([2, 3])),
                               lambda m: m.FloatTensor(2, 2), lambda m: m.Tensor(size=(2,)), lambda m: m.LongTensor(4)])
def test_size_forms_match_torch(f):
    a, t = f(ag), f(torch)
    assert tuple(a.shape) == tuple(t.shape) and str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]


def test_tensor_of_tensor_aliases_and_typed_checks():
    x = ag.randn(3)
    y = ag.Tensor(x)
    y[0] = 7.0
    assert x[0].item() == 7.0 and isinstance(y, ag.Tensor)
    assert isinstance(ag.zeros(2), ag.FloatTensor) and not isinstance(ag.zeros(2, dtype=ag.long), ag.FloatTensor)
    assert isinstance(ag.zeros(2, dtype=ag.long), ag.LongTensor)
    assert ag.FloatTensor.dtype == ag.float32 and ag.zeros(1).type() == "torch.FloatTensor"
    p = ag.nn.Parameter(ag.randn(2))  # the data/requires_grad form stays Parameter's
    assert p.requires_grad and type(p).__name__ == "Parameter"


def test_default_dtype_follows_set_default_dtype():
    old = ag.get_default_dtype()
    try:
        ag.set_default_dtype(ag.float64)
        assert ag.Tensor([1]).dtype == ag.float64 and ag.Tensor(2).dtype == ag.float64
    finally:
        ag.set_default_dtype(old)


@pytest.mark.parametrize("f", [lambda m: m.Tensor(3.5), lambda m: m.Tensor(2, "a"), lambda m: m.Tensor(-1),
                               lambda m: m.LongTensor(m.tensor([1.0])), lambda m: m.Tensor(True)])
def test_errors_match_torch_types(f):
    with pytest.raises(Exception) as et:
        f(torch)
    with pytest.raises(et.type):
        f(ag)
