"""Interop (issue 16): DLPack both ways with NumPy and torch (zero-copy: writes show through), strides,
0-d, every dtype, the consumed-capsule error, versioned DLPack 1.x capsules; NumPy's array protocols
(__array__, __array_interface__, __array_priority__) against torch's behaviour."""
import ctypes
import gc

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")

_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
_NP_DTYPES = [d for d in _DTYPES if d != "bfloat16"]


def _values(dtype, shape=(3, 4)):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) - 5
    return a > 0 if dtype == "bool" else np.abs(a) if dtype == "uint8" else a


def _ag(dtype, shape=(3, 4)):
    return ampgrad.tensor(_values(dtype, shape).tolist(), dtype=getattr(ampgrad, dtype))


def _th(dtype, shape=(3, 4)):
    return torch.tensor(_values(dtype, shape).tolist(), dtype=getattr(torch, dtype))


def _same(a, t):
    """ampgrad tensor a equals torch tensor t: shape, dtype name, values."""
    assert tuple(a.shape) == tuple(t.shape)
    assert repr(a.dtype).split(".")[-1] == repr(t.dtype).split(".")[-1]
    np.testing.assert_array_equal(a.float().numpy() if a.dtype == ampgrad.bfloat16 else a.numpy(),
                                  t.float().numpy() if t.dtype == torch.bfloat16 else t.numpy())


# ---- torch <-> ampgrad
@pytest.mark.parametrize("dtype", _DTYPES)
def test_torch_to_ampgrad_shares_memory(dtype):
    t = _th(dtype)
    a = ampgrad.from_dlpack(t)
    _same(a, t)
    assert a.data_ptr() == t.data_ptr()
    a[1, 2] = 1  # write through: ampgrad -> torch
    assert bool(t[1, 2] == 1)
    t[0, 0] = 0  # and torch -> ampgrad
    assert not bool(a[0, 0])


@pytest.mark.parametrize("dtype", _DTYPES)
def test_ampgrad_to_torch_shares_memory(dtype):
    a = _ag(dtype)
    t = torch.from_dlpack(a)
    _same(a, t)
    assert a.data_ptr() == t.data_ptr()
    t[2, 3] = 0
    assert not bool(a[2, 3])


@pytest.mark.parametrize("make", [lambda x: x.t(), lambda x: x[:, ::2], lambda x: x[1:, 1:], lambda x: x[1],
                                  lambda x: x.unsqueeze(1).expand(3, 2, 4), lambda x: x[0, 0]],
                         ids=["t", "step", "offset", "row", "expand", "0d"])
def test_strides_and_offsets(make):
    a = make(_ag("float32"))
    t = torch.from_dlpack(a)
    assert t.stride() == a.stride() and tuple(t.shape) == tuple(a.shape) and t.data_ptr() == a.data_ptr()
    _same(a, t)
    base = _th("float32")
    tv = make(base)
    av = ampgrad.from_dlpack(tv)
    assert av.stride() == tv.stride() and av.data_ptr() == tv.data_ptr()
    _same(av, tv)


def test_zero_size_and_0d():
    for shape in [(0,), (3, 0), ()]:
        a = ampgrad.zeros(shape)
        t = torch.from_dlpack(a)
        assert tuple(t.shape) == shape
        b = ampgrad.from_dlpack(torch.zeros(shape))
        assert tuple(b.shape) == shape
    assert ampgrad.from_dlpack(torch.tensor(3.5)).item() == 3.5


def test_lifetime_producer_deleted_first():
    t = torch.arange(1000.0)
    a = ampgrad.from_dlpack(t)
    del t
    gc.collect()
    assert float(a.sum()) == float(np.arange(1000.0).sum())
    b = ampgrad.arange(1000.0)
    tb = torch.from_dlpack(b)
    del b
    gc.collect()
    assert float(tb.sum()) == float(np.arange(1000.0).sum())


def test_round_trip_ampgrad_ampgrad():
    a = _ag("float32")
    b = ampgrad.from_dlpack(a)
    assert b.data_ptr() == a.data_ptr() and b is not a
    b[0, 0] = 42
    assert float(a[0, 0]) == 42


# ---- NumPy <-> ampgrad
@pytest.mark.parametrize("dtype", _NP_DTYPES)
def test_numpy_both_ways(dtype):
    a = _ag(dtype)
    n = np.from_dlpack(a)
    assert n.dtype == np.dtype(dtype) and n.shape == (3, 4)
    np.testing.assert_array_equal(n, _values(dtype).astype(dtype))
    assert n.ctypes.data == a.data_ptr()
    n[0, 1] = 1
    assert bool(a[0, 1] == 1)
    arr = _values(dtype).astype(dtype)
    b = ampgrad.from_dlpack(arr)
    assert b.data_ptr() == arr.ctypes.data
    b[2, 2] = 0
    assert not arr[2, 2]


def test_numpy_strided_and_0d():
    arr = np.arange(24.0).reshape(4, 6)[1:, ::2]
    b = ampgrad.from_dlpack(arr)
    assert b.stride() == (6, 2) and b.data_ptr() == arr.ctypes.data
    np.testing.assert_array_equal(b.numpy(), arr)
    n = np.from_dlpack(ampgrad.arange(12.0).reshape(3, 4).t())
    assert n.strides == (4, 16)
    assert np.from_dlpack(ampgrad.tensor(2.5)).shape == ()
    assert ampgrad.from_dlpack(np.array(True)).item() is True


def test_numpy_negative_strides_raise():
    # torch aborts the process on this input (its storage-size check overflows); ampgrad raises.
    with pytest.raises(ValueError, match="negative stride"):
        ampgrad.from_dlpack(np.arange(3.0)[::-1])


def test_numpy_bf16_error_as_torch():
    with pytest.raises(Exception) as et:
        np.from_dlpack(torch.ones(2, dtype=torch.bfloat16))
    with pytest.raises(Exception) as ea:
        np.from_dlpack(ampgrad.ones(2, dtype=ampgrad.bfloat16))
    assert type(ea.value) is type(et.value) and str(ea.value) == str(et.value)


def test_unsupported_numpy_dtype():
    with pytest.raises(BufferError, match="kDLComplex bits 64"):
        ampgrad.from_dlpack(np.ones(2, dtype=np.complex64))


# ---- the capsule protocol
def test_consumed_capsule_error():
    cap = ampgrad.utils.dlpack.to_dlpack(ampgrad.ones(3))
    assert "dltensor" in repr(cap)
    ampgrad.from_dlpack(cap)
    with pytest.raises(RuntimeError) as ea:
        ampgrad.from_dlpack(cap)
    cap_t = torch.utils.dlpack.to_dlpack(torch.ones(3))
    torch.from_dlpack(cap_t)
    with pytest.raises(RuntimeError) as et:
        torch.from_dlpack(cap_t)
    assert str(ea.value) == str(et.value)
    with pytest.raises(RuntimeError, match="invalid capsule"):
        ampgrad.from_dlpack(3)


def test_unconsumed_capsule_frees_without_leak():
    x = ampgrad.ones(3)
    for _ in range(3):
        x.__dlpack__()
        x.__dlpack__(max_version=(1, 0))
    gc.collect()
    assert float(x.sum()) == 3.0


def test_versioned_capsules():
    a = _ag("float32")
    assert "dltensor_versioned" in repr(a.__dlpack__(max_version=(1, 0)))
    assert "dltensor_versioned" in repr(a.__dlpack__(max_version=(1, 3)))
    assert '"dltensor"' in repr(a.__dlpack__(max_version=(0, 8)))
    assert '"dltensor"' in repr(a.__dlpack__())
    t = torch.from_dlpack(a.__dlpack__(max_version=(1, 0)))
    assert t.data_ptr() == a.data_ptr()
    # torch's versioned capsule into ampgrad
    b = ampgrad.from_dlpack(_th("int32").__dlpack__(max_version=(1, 0)))
    assert b.dtype == ampgrad.int32 and b.shape == (3, 4)
    # header: version 1.x, IS_COPIED flag only for copies
    pythonapi = ctypes.pythonapi
    pythonapi.PyCapsule_GetPointer.restype = ctypes.c_void_p
    pythonapi.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    for copy, flag in [(None, 0), (True, 2)]:
        cap = a.__dlpack__(max_version=(1, 0), copy=copy)
        p = pythonapi.PyCapsule_GetPointer(cap, b"dltensor_versioned")
        major, minor = ctypes.cast(p, ctypes.POINTER(ctypes.c_uint32))[0:2]
        flags = ctypes.cast(p + 24, ctypes.POINTER(ctypes.c_uint64))[0]
        assert major == 1 and flags == flag
        assert (ampgrad.from_dlpack(cap).data_ptr() == a.data_ptr()) == (copy is None)


def test_dlpack_device_and_kwargs():
    a = _ag("float32")
    assert a.__dlpack_device__() == torch.ones(1).__dlpack_device__() == (1, 0)
    assert ampgrad.from_dlpack(a, copy=True).data_ptr() != a.data_ptr()
    assert ampgrad.from_dlpack(a, copy=False).data_ptr() == a.data_ptr()
    assert ampgrad.from_dlpack(torch.ones(2), device="cpu").device == ampgrad.device("cpu")
    assert a.__dlpack__(dl_device=(1, 0)) is not None
    with pytest.raises(AssertionError, match="stream should be None on cpu"):
        a.__dlpack__(stream=3)
    with pytest.raises(TypeError, match="stream must be"):
        a.__dlpack__(stream="x")
    with pytest.raises(AssertionError, match="device and copy kwargs"):
        ampgrad.from_dlpack(a.__dlpack__(), copy=True)


def test_requires_grad_export_refused_as_torch():
    with pytest.raises(BufferError) as et:
        torch.ones(2, requires_grad=True).__dlpack__()
    with pytest.raises(BufferError) as ea:
        ampgrad.ones(2, requires_grad=True).__dlpack__()
    assert str(ea.value) == str(et.value)
    t = torch.from_dlpack(ampgrad.ones(2, requires_grad=True).detach())
    assert not t.requires_grad


def test_utils_dlpack_module():
    from ampgrad.utils import dlpack
    assert dlpack.DLDeviceType.kDLCUDA == torch.utils.dlpack.DLDeviceType.kDLCUDA == 2
    t = torch.from_dlpack(dlpack.to_dlpack(ampgrad.arange(4)))
    assert t.tolist() == [0, 1, 2, 3]
    assert dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(3))).tolist() == [0, 1, 2]


# ---- NumPy's array protocols
def test_array_copies_as_torch():
    a = _ag("float32")
    n = np.asarray(a)
    assert n.ctypes.data == a.data_ptr()  # np.asarray shares, as with torch
    assert np.array(a).ctypes.data != a.data_ptr()
    assert np.asarray(a, dtype=np.float64).dtype == np.float64
    for make_t, make_a in [(lambda: torch.ones(2, requires_grad=True), lambda: ampgrad.ones(2, requires_grad=True)),
                           (lambda: torch.ones(2, dtype=torch.bfloat16), lambda: ampgrad.ones(2, dtype=ampgrad.bfloat16))]:
        with pytest.raises(Exception) as et:
            np.asarray(make_t())
        with pytest.raises(Exception) as ea:
            np.asarray(make_a())
        assert type(ea.value) is type(et.value) and str(ea.value) == str(et.value)


def test_array_interface():
    a = _ag("int16").t()
    ai = a.__array_interface__
    assert ai["typestr"] == "<i2" and ai["shape"] == (4, 3) and ai["strides"] == (2, 8) and ai["version"] == 3
    n = np.asarray(a)
    assert n.ctypes.data == a.data_ptr() and n.strides == (2, 8)
    np.testing.assert_array_equal(n, _values("int16").T)
    assert not hasattr(ampgrad.ones(2, dtype=ampgrad.bfloat16), "__array_interface__")
    assert not hasattr(ampgrad.ones(2), "__cuda_array_interface__")
    with pytest.raises(AttributeError) as ea:
        ampgrad.ones(2).__cuda_array_interface__
    with pytest.raises(AttributeError) as et:
        torch.ones(2).__cuda_array_interface__
    assert str(ea.value) == str(et.value)


@pytest.mark.parametrize("scalar", [np.float64(2.0), np.float32(2.0), np.int64(2)])
def test_numpy_scalar_on_the_left_returns_tensor(scalar):
    t = ampgrad.tensor([1.0, 2.0])
    for r in (scalar * t, scalar + t, scalar - t):
        assert isinstance(r, ampgrad.Tensor)
    assert (scalar * t).tolist() == (scalar * torch.tensor([1.0, 2.0])).tolist()
    assert (scalar * t).dtype == ampgrad.float32
