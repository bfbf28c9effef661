"""cauchy_ / log_normal_ / geometric_ (kernels/cpu/random.cpp): the same draws as torch's CPU generator
after the same seed, element for element, in every dtype torch fills; the stream continues
consistently with normal_ (the cached Box-Muller sample) and exponential_; torch's errors."""
import numpy as np
import pytest
import torch

import ampgrad as ag


def _np(x):
    return (x.double() if x.dtype in (torch.bfloat16, ag.bfloat16) else x).numpy().astype(np.float64)


CASES = [("cauchy_", (0.5, 2.0)), ("cauchy_", ()), ("log_normal_", (0.2, 0.7)), ("log_normal_", ()), ("geometric_", (0.3,)),
         ("geometric_", (0.9,))]


@pytest.mark.parametrize("name,args", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "int8"])
def test_same_draws_as_torch(name, args, dtype):
    if dtype.startswith("int") and name != "geometric_":
        pytest.skip("floating only")
    for shape in [(37,), (4, 5, 3), ()]:
        torch.manual_seed(11)
        ag.manual_seed(11)
        t = getattr(torch.empty(shape, dtype=getattr(torch, dtype)), name)(*args)
        a = getattr(ag.empty(shape, dtype=getattr(ag, dtype)), name)(*args)
        assert a.dtype == getattr(ag, dtype) and tuple(a.shape) == tuple(t.shape)
        np.testing.assert_array_equal(_np(a), _np(t))


def test_stream_interleaves_with_normal_and_exponential():
    torch.manual_seed(3)
    ag.manual_seed(3)
    seq_t = [torch.empty(3, dtype=torch.float64).normal_(), torch.empty(5, dtype=torch.float64).log_normal_(),
             torch.empty(4).exponential_(), torch.empty(6).cauchy_(), torch.empty(2, dtype=torch.float64).geometric_(0.5)]
    seq_a = [ag.empty(3, dtype=ag.float64).normal_(), ag.empty(5, dtype=ag.float64).log_normal_(),
             ag.empty(4).exponential_(), ag.empty(6).cauchy_(), ag.empty(2, dtype=ag.float64).geometric_(0.5)]
    for a, t in zip(seq_a, seq_t):
        np.testing.assert_array_equal(_np(a), _np(t))


def test_noncontiguous_fill_in_storage_order_and_generator():
    g_t = torch.Generator().manual_seed(9)
    g_a = ag.Generator().manual_seed(9)
    t = torch.zeros(6, 4).t().cauchy_(generator=g_t)
    a = ag.zeros(6, 4).t().cauchy_(generator=g_a)
    np.testing.assert_array_equal(_np(a), _np(t))


def test_statistics():
    ag.manual_seed(0)
    x = ag.empty(200_000, dtype=ag.float64).geometric_(0.25).numpy()
    assert x.min() >= 1 and abs(x.mean() - 4.0) < 0.05  # mean 1 / p
    y = np.log(ag.empty(200_000, dtype=ag.float64).log_normal_(0.5, 0.3).numpy())
    assert abs(y.mean() - 0.5) < 0.01 and abs(y.std() - 0.3) < 0.01
    z = ag.empty(200_001, dtype=ag.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(z) - 1.0) < 0.05 and abs(np.median(np.abs(z - 1.0)) - 2.0) < 0.05


def test_errors_as_torch():
    for f, exc in [(lambda m: m.empty(3).cauchy_(0.0, 0.0), RuntimeError), (lambda m: m.empty(3).log_normal_(0.0, -1.0), RuntimeError),
                   (lambda m: m.empty(3).geometric_(1.5), RuntimeError), (lambda m: m.empty(3).geometric_(0.0), RuntimeError),
                   (lambda m: m.empty(3, dtype=m.int8).cauchy_(), RuntimeError),
                   (lambda m: m.empty(0, dtype=m.int8).cauchy_(), RuntimeError),
                   (lambda m: m.empty(3, dtype=m.int64).log_normal_(), NotImplementedError),
                   (lambda m: m.empty(3, dtype=m.bool).geometric_(0.5), NotImplementedError)]:
        with pytest.raises(exc) as et:
            f(torch)
        with pytest.raises(exc) as ea:
            f(ag)
        assert type(ea.value) is type(et.value) and str(ea.value) == str(et.value)
    assert ag.empty(0, dtype=ag.int8).log_normal_().numel() == 0  # torch fills nothing and checks nothing
    x = ag.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError):
        x.cauchy_()  # a leaf that requires grad cannot be filled in place
    y = ag.ones(4, requires_grad=True) * 2
    y.geometric_(0.5)
    assert y.grad_fn.name() == "GeometricBackward0"


@pytest.mark.parametrize("name,args", [("uniform_", (-1.0, 2.0)), ("exponential_", (1.5,)), ("normal_", (0.0, 1.0)),
                                       ("cauchy_", ()), ("log_normal_", ()), ("geometric_", (0.4,))])
def test_permuted_views_filled_in_memory_order(name, args):
    # torch's TensorIterator walks a transposed / permuted tensor in memory order
    for make in [lambda m: m.zeros(5, 7).t(), lambda m: m.zeros(2, 3, 4).permute(2, 0, 1),
                 lambda m: m.zeros(4, 1, 6).transpose(0, 2), lambda m: m.zeros(6, 8)[:, ::2]]:
        torch.manual_seed(4)
        ag.manual_seed(4)
        t = getattr(make(torch), name)(*args)
        a = getattr(make(ag), name)(*args)
        np.testing.assert_array_equal(_np(a), _np(t))
