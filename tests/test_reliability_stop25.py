"""Stop 25's reliability fixes (issue 10), each against torch 2.13: as_strided's storage-size arithmetic
(a stride of 2**63 - 1 wrapped around the bounds check and as_strided_ then read outside the storage: a
segfault found by the fuzz), randint's per-dtype bounds and torch's 2**28 threshold for 64-bit draws."""
import pytest

import ampgrad

torch = pytest.importorskip("torch")


def _outcome(fn, lib):
    try:
        r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception class and message are compared
        return type(e).__name__, str(e)
    return "value", tuple(r.shape), tuple(r.stride()), r.storage_offset(), r.tolist()


AS_STRIDED = {
    "stride 2**63-1": lambda L: L.tensor([[4], [4], [4]], dtype=L.uint8).as_strided([3], [2 ** 63 - 1], 3),
    "stride 2**62 fp32": lambda L: L.ones(3).as_strided([2], [2 ** 62]),
    "offset 2**63-1": lambda L: L.ones(3).as_strided([2], [1], 2 ** 63 - 1),
    "offset 2**61": lambda L: L.ones(3).as_strided([2], [1], 2 ** 61),
    "empty, huge stride": lambda L: L.ones(3).as_strided([0], [2 ** 62], 5),
    "in bounds": lambda L: L.arange(6.).as_strided([2, 2], [2, 1], 1),
    "one past": lambda L: L.ones(3).as_strided([2], [2], 1),
    "last element": lambda L: L.arange(3.).as_strided([1], [1], 2),
}


@pytest.mark.parametrize("case", list(AS_STRIDED))
def test_as_strided_size_arithmetic_like_torch(case):
    assert _outcome(AS_STRIDED[case], ampgrad) == _outcome(AS_STRIDED[case], torch)


def test_as_strided_inplace_refuses_what_it_cannot_read():
    # torch's as_strided_ skips these checks and returns a tensor reading outside its storage; ampgrad
    # raises as_strided's error and leaves the tensor as it was
    t = ampgrad.tensor([[4], [4], [4]], dtype=ampgrad.uint8)
    with pytest.raises(RuntimeError, match="Storage size calculation overflowed"):
        t.as_strided_([3], [2 ** 63 - 1], 3)
    assert t.shape == (3, 1) and t.stride() == (1, 1) and t.tolist() == [[4], [4], [4]] and t._version == 0
    with pytest.raises(RuntimeError, match="out of bounds for storage"):
        t.as_strided_([2], [2], 2)
    assert t.as_strided_([2], [2], 0).tolist() == [4, 4]


@pytest.mark.parametrize("dt,lo,hi", [("uint8", 0, 256), ("uint8", 0, 257), ("int8", -129, 0), ("bool", 0, 3),
                                      ("bool", 0, 2), ("int16", -5, 40000), ("int32", 0, 2 ** 31),
                                      ("int32", 0, 2 ** 31 + 1), ("uint32", 0, 2 ** 32 + 1), ("uint16", -1, 5)])
def test_randint_bounds_per_dtype(dt, lo, hi):
    def run(L):
        L.manual_seed(3)
        return L.randint(lo, hi, (4,), dtype=getattr(L, dt))
    mine, theirs = _outcome(run, ampgrad), _outcome(run, torch)
    assert mine[0] == theirs[0] and (mine == theirs if mine[0] != "value" else mine[1:] == theirs[1:])
    if mine[0] == "value":
        assert mine[-1] == theirs[-1]  # the same draws for the same seed


@pytest.mark.parametrize("dt", ["int64", "int32", "float64", "uint32", "uint64"])
@pytest.mark.parametrize("hi", [2 ** 16, 2 ** 28 - 1, 2 ** 28, 2 ** 31 - 1, 2 ** 31, 2 ** 32])
def test_randint_64_bit_draws_from_2_28(dt, hi):
    """torch's public wheels draw 64 bits per value from a range of 2**28 on, for every dtype."""
    if dt == "int32" and hi > 2 ** 31:
        pytest.skip("out of int32's bounds")
    out = []
    for L in (ampgrad, torch):
        L.manual_seed(11)
        out.append(L.randint(0, hi, (50,), dtype=getattr(L, dt)).tolist())
    assert out[0] == out[1]


def test_random_bounds_per_dtype():
    for L in (ampgrad, torch):
        with pytest.raises(RuntimeError, match="to - 1 is out of bounds for unsigned char"):
            L.zeros(2, dtype=L.uint8).random_(0, 300)
        with pytest.raises(RuntimeError, match="from is out of bounds for signed char"):
            L.zeros(2, dtype=L.int8).random_(-200, 0)


def test_numpy_of_a_huge_stride_that_is_never_stepped():
    """UBSan: Tensor.numpy() multiplied a stride of 2**62 by the itemsize (signed overflow) for a size-1 dim."""
    for L in (ampgrad, torch):
        a = L.ones(3).as_strided([1], [2 ** 62], 1)
        assert a.numpy().tolist() == [1.0] and a.tolist() == [1.0]
        assert L.ones(3).as_strided([0, 2], [2 ** 62, 1], 5).numpy().shape == (0, 2)


@pytest.mark.parametrize("case", ["train", "eval_weight", "eval_weight_bias", "empty_weight"])
def test_batch_norm_of_an_empty_batch_keeps_the_affine_graph(case):
    """torch's empty-input batch_norm: a clone, times weight[0], plus bias[0] (MulBackward0 / AddBackward0)."""
    def run(L):
        F = L.nn.functional
        w, b = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        try:
            r = {"train": lambda: F.batch_norm(L.zeros((2, 0, 3), requires_grad=True), None, None, training=True),
                 "eval_weight": lambda: F.batch_norm(L.zeros((0, 2, 3)), L.zeros(2), L.ones(2), weight=w),
                 "eval_weight_bias": lambda: F.batch_norm(L.zeros((0, 2, 3)), L.zeros(2), L.ones(2), weight=w, bias=b),
                 "empty_weight": lambda: F.batch_norm(L.zeros((2, 0, 3)), None, None,
                                                      weight=L.ones(0, requires_grad=True), training=True)}[case]()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__
        r.sum().backward()
        return (r.requires_grad, type(r.grad_fn).__name__, tuple(r.shape),
                None if w.grad is None else w.grad.tolist(), None if b.grad is None else b.grad.tolist())
    assert run(ampgrad) == run(torch)
