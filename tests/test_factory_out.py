"""Note [out= of factories]: torch.zeros / arange / rand / ... (out=t) write into t, as torch does
(out was silently ignored before), against torch."""
import warnings

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")


def _pair(dtype):
    return getattr(ampgrad, dtype), getattr(torch, dtype)


CASES = [
    ("zeros", lambda m, o: m.zeros(3, out=o), "int64", (3,)),
    ("ones", lambda m, o: m.ones(2, 2, out=o), "float64", (2, 2)),
    ("full", lambda m, o: m.full((2,), 1.5, out=o), "int64", (2,)),
    ("arange", lambda m, o: m.arange(1, 9, 2, out=o), "float32", (4,)),
    ("linspace", lambda m, o: m.linspace(0, 1, 3, out=o), "int32", (3,)),
    ("eye", lambda m, o: m.eye(2, 3, out=o), "float32", (2, 3)),
]


@pytest.mark.parametrize("name,f,dtype,shape", CASES, ids=[c[0] for c in CASES])
def test_written_into_out(name, f, dtype, shape):
    ad, td = _pair(dtype)
    ao, to = ampgrad.zeros(shape, dtype=ad), torch.zeros(shape, dtype=td)
    ar, tr = f(ampgrad, ao), f(torch, to)
    assert ar is ao and tr is to
    assert str(ao.dtype).split(".")[-1] == str(to.dtype).split(".")[-1]
    np.testing.assert_array_equal(ao.numpy(), to.numpy())


def test_out_view_writes_through_and_resize_warns():
    base = ampgrad.zeros(3, 4)
    ampgrad.arange(12, out=base.view(12))
    np.testing.assert_array_equal(base.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4))
    o = ampgrad.zeros(2)
    with pytest.warns(UserWarning, match="resized"):
        ampgrad.arange(5, out=o)
    assert o.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    e = ampgrad.zeros(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ampgrad.ones(2, 2, out=e)  # an empty out resizes silently
    assert e.tolist() == [[1.0, 1.0], [1.0, 1.0]]


def test_random_into_out_uses_outs_dtype_and_stream():
    ampgrad.manual_seed(3)
    ref = ampgrad.rand(5, dtype=ampgrad.float64)
    ampgrad.manual_seed(3)
    o = ampgrad.empty(5, dtype=ampgrad.float64)
    ampgrad.rand(5, out=o)
    assert o.tolist() == ref.tolist()
    torch.manual_seed(3)
    to = torch.empty(5, dtype=torch.float64)
    torch.rand(5, out=to)
    np.testing.assert_allclose(o.numpy(), to.numpy(), rtol=0, atol=0)


def test_out_errors_match_torch():
    with pytest.raises(RuntimeError, match=r"dtype Float does not match dtype of out parameter \(Long\)"):
        torch.ones(2, dtype=torch.float32, out=torch.zeros(2, dtype=torch.int64))
    o = ampgrad.zeros(2, dtype=ampgrad.int64)
    with pytest.raises(RuntimeError, match=r"dtype Float does not match dtype of out parameter \(Long\)"):
        ampgrad.ones(2, dtype=ampgrad.float32, out=o)
    assert o.tolist() == [0, 0]
    leaf = ampgrad.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ampgrad.randn(2, out=leaf)
    assert leaf.tolist() == [0.0, 0.0]
    with pytest.raises(TypeError, match="argument 'out' must be Tensor"):
        ampgrad.zeros(2, out=[0, 0])


@pytest.mark.parametrize("name", ["empty", "zeros", "ones", "rand", "randn"])
def test_size_keyword(name):
    """torch's factories take the size as the keyword `size` too (gat/main.py: torch.empty(size=(a, b)));
    rand/randn draw the same numbers as with a positional size; size twice is a TypeError."""
    for size in [(2, 3), [4], torch.Size([1, 2]), ()]:
        torch.manual_seed(0)
        ampgrad.manual_seed(0)
        t = getattr(torch, name)(size=size)
        a = getattr(ampgrad, name)(size=tuple(size) if isinstance(size, torch.Size) else size)
        assert tuple(a.shape) == tuple(t.shape) and a.dtype == ampgrad.float32
        if name != "empty":
            np.testing.assert_array_equal(a.numpy(), t.numpy())
    for lib in (torch, ampgrad):
        with pytest.raises(TypeError):
            getattr(lib, name)((2,), size=(2,))
