"""Stop 24's fixes against torch (issue 10): each case must raise torch's exception type (and message where
marked), or give torch's values, gradients and grad_fn."""
import pytest

import ampgrad

torch = pytest.importorskip("torch")
from _torch_compare import check  # noqa: E402

BIG, NEG_BIG = 2 ** 64, -2 ** 63 - 1

# Note [Int64 arguments]: an int beyond int64 for an int parameter of a C++-bound op is torch's ValueError
# "Overflow when unpacking long long", not pybind11's "incompatible function arguments" TypeError
OVERFLOW = {
    "polygamma n": lambda L: L.polygamma(BIG, L.ones(2)),
    "unbind dim": lambda L: L.unbind(L.ones(2, 2), NEG_BIG),
    "gather dim": lambda L: L.ones(2).gather(BIG, L.zeros(1, dtype=L.int64)),
    "pixel_unshuffle factor": lambda L: L.nn.functional.pixel_unshuffle(L.ones(1, 1, 2, 2), BIG),
    "sum dim": lambda L: L.ones(3).sum(2 ** 70),
    "as_strided offset": lambda L: L.ones(4).as_strided([2], [1], NEG_BIG),
    "swapdims": lambda L: L.swapdims(L.ones(2, 2), BIG, 0),
    "in range still works": lambda L: L.unbind(L.arange(4.).reshape(2, 2), -1),
    "Scalar overload still takes a big int": lambda L: L.ones(2) + 2 ** 63,
}

CASES = {
    "permute(input, int)": lambda L: L.permute(L.zeros(2, 2), 0),
    "permute(input, str)": lambda L: L.permute(L.zeros(2), "a"),
    "method permute(bool)": lambda L: L.zeros(2).permute(True),
    "method permute(int) is varargs": lambda L: L.arange(3.).permute(0),
    "repeat(bool)": lambda L: L.zeros(2).repeat(True),
    "repeat(float)": lambda L: L.zeros(2).repeat(2.0),
    "repeat(repeats=bool)": lambda L: L.zeros(2).repeat(repeats=True),
    "repeat(int)": lambda L: L.arange(2.).repeat(2),
    "as_strided size int": lambda L: L.as_strided(L.zeros(4), 2, (1,)),
    "as_strided stride int": lambda L: L.as_strided(L.zeros(4), (2,), 1),
    "method as_strided size int": lambda L: L.zeros(4).as_strided(2, 1),
    "method as_strided": lambda L: L.arange(4.).as_strided((2,), (2,), 1),
    "narrow_copy dim past the end": lambda L: L.narrow_copy(L.zeros(2, 2), 2 ** 31, 0, 1),
    "narrow_copy dim below": lambda L: L.narrow_copy(L.zeros(2, 2), -3, 0, 1),
    "narrow_copy": lambda L: L.narrow_copy(L.arange(4.).reshape(2, 2), 1, 1, 1),
    "scatter_ bad reduce, bad src dims": lambda L: L.zeros(3, 1).scatter_(
        -2, L.zeros(1, 1, dtype=L.int64), L.ones(1), reduce="amin"),
    "scatter bad reduce, bad dim": lambda L: L.zeros(3, 1).scatter(5, L.zeros(1, 1, dtype=L.int64), L.ones(1, 1),
                                                                    reduce="amin"),
    "scatter_ bad reduce": lambda L: L.zeros(3, 1).scatter_(0, L.zeros(1, 1, dtype=L.int64), L.ones(1, 1),
                                                            reduce="amin"),
    "result_type negative overflow": lambda L: L.result_type(NEG_BIG, 2),
    "result_type overflow": lambda L: L.result_type(BIG, 2),
    "result_type two numbers": lambda L: str(L.result_type(2, 3.5)).split(".")[-1],
    "unflatten method empty sizes first": lambda L: L.zeros((1, 2, 3, 0)).unflatten(None, 0),
    "unflatten method dim None": lambda L: L.zeros(3).unflatten(None, (3,)),
    "unflatten method int sizes": lambda L: L.zeros(3).unflatten(-1, 3),
    "unflatten function int sizes": lambda L: L.unflatten(L.zeros(3), -1, 0),
    "unflatten": lambda L: L.arange(6.).unflatten(0, (2, -1)),
    "block_diag of a dtype": lambda L: L.block_diag(L.int64),
    "block_diag of an int": lambda L: L.block_diag(L.ones(2), 3),
    "tensordot list of ints": lambda L: L.tensordot(L.zeros(2, 2), L.zeros(2, 2), [-2, -1]),
    "tensordot second int": lambda L: L.tensordot(L.zeros(2, 2), L.zeros(2, 2), ([0], 1)),
    "tensordot lists": lambda L: L.tensordot(L.arange(4.).reshape(2, 2), L.arange(4.).reshape(2, 2), [[0], [1]]),
    "index_add_ leaf first": lambda L: L.tensor([1., 2], requires_grad=True).index_add_(
        0, L.zeros((2, 0, 0), dtype=L.int64), L.ones(2)),
    "index_add_ index before overlap": lambda L: L.tensor([1]).expand(3).index_add_(
        0, L.zeros((2, 0, 0), dtype=L.int64), L.ones(2)),
    "index_add_ overlap": lambda L: L.tensor([1.]).expand(3).index_add_(0, L.zeros(1, dtype=L.int64), L.ones(1)),
    "index_add_ alpha": lambda L: L.zeros(3).index_add_(0, L.tensor([0, 2]), L.tensor([1.5, -2.0]), alpha=2),
    "log_normal_ overlap before dtype": lambda L: L.tensor([1], dtype=L.uint8).expand(3).log_normal_(1, 0.5),
    "log_normal_ dtype": lambda L: L.tensor([1], dtype=L.uint8).log_normal_(1, 0.5),
    # elu at +-0 is x * scale, also when alpha is inf or nan (x < 0 takes the exponential branch)
    "elu alpha inf at 0": lambda L: L.nn.functional.elu(L.tensor([3.0, 0.0, -0.0, -2.0]), float("inf")),
    "elu alpha inf at 0, in place": lambda L: L.nn.functional.elu(L.tensor([0.0, -2.0]), float("inf"), True),
    "celu alpha nan at 0": lambda L: L.nn.functional.celu(L.tensor([3.0, 0.0, -2.0]), float("nan")),
    "elu at 0 in float64": lambda L: L.nn.functional.elu(L.tensor([0.0, -0.0, -1.0], dtype=L.float64), 2.0),
}


def _clamp_grad(L, **kw):
    x = L.tensor([1.5, -0.5, 0.25])
    lo = L.tensor([0.0, 0.0, 0.5], requires_grad=True)
    hi = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
    args = {"min": lo, "max": hi}
    y = x.clamp_(**{k: args[k] for k in kw["use"]})
    name = type(y.grad_fn).__name__
    (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
    return name, lo.grad, hi.grad if "max" in kw["use"] else None


GRADS = {
    # clamp_ with a tensor bound that requires grad records ClampBackward0 (it used to return no history)
    "clamp_ min": lambda L: _clamp_grad(L, use=("min",)),
    "clamp_ min max": lambda L: _clamp_grad(L, use=("min", "max")),
    "clamp_ 0-d min": lambda L: L.tensor(1.5).clamp_(L.tensor(0.0, requires_grad=True)).requires_grad,
    "clamp_ of a non-leaf, tensor min": lambda L: _clamp_self_grad(L),
}


def _clamp_self_grad(L):
    x = L.tensor([1.5, -0.5, 0.25], requires_grad=True)
    y = x * 1
    y.clamp_(min=L.tensor([0.0, 0.0, 0.5]), max=L.tensor([1.0, 2.0, 3.0]))
    (y * L.tensor([1.0, 2.0, 3.0])).sum().backward()
    return y, x.grad


@pytest.mark.parametrize("name", list(OVERFLOW))
def test_int64_overflow_stop24(name):
    check(OVERFLOW[name], ampgrad, torch, message=True)


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_stop24(name):
    check(CASES[name], ampgrad, torch)


@pytest.mark.parametrize("name", list(GRADS))
def test_grads_match_torch_stop24(name):
    check(GRADS[name], ampgrad, torch)


def test_elu_gradient_at_zero():
    # torch's elu backward takes the exponential branch at x <= 0: alpha * scale at 0
    for L in (ampgrad, torch):
        x = L.tensor([0.0, -0.0, 1.0], requires_grad=True)
        L.nn.functional.elu(x, 2.0).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0, 1.0], L.__name__


MORE = {
    # ints beyond int64 inside an int list: torch's TypeError ("failed to unpack the object at pos N")
    "max_unpool1d huge kernel": lambda L: L.nn.functional.max_unpool1d(
        L.zeros((1, 2, 4), dtype=L.int8), L.zeros((0, 1, 1), dtype=L.int64), kernel_size=[2 ** 63 - 1], stride=None),
    "unfold huge padding": lambda L: L.nn.functional.unfold(L.ones(1, 1, 3, 3), [1, 1], padding=2 ** 64, stride=[1]),
    "sum dims with a huge int": lambda L: L.ones(3).sum((0, 2 ** 64)),
    # tensor() of Python ints beyond int64: torch's ValueError (2**63 used to wrap to -2**63)
    "tensor(2**63)": lambda L: L.tensor(2 ** 63),
    "tensor(-2**63 - 1)": lambda L: L.tensor(NEG_BIG),
    "tensor([1, 2**64])": lambda L: L.tensor([1, BIG]),
    "tensor(2**63, dtype=int32)": lambda L: L.tensor(2 ** 63, dtype=L.int32),
    "tensor(2**63, dtype=float32)": lambda L: L.tensor(2 ** 63, dtype=L.float32),
    "tensor([2**63, 1.5])": lambda L: L.tensor([2 ** 63, 1.5]),
    "tensor(int64 limits)": lambda L: L.tensor([2 ** 63 - 1, -2 ** 63]),
    "lu_solve pivots dtype before dtype support": lambda L: L.linalg.lu_solve(
        L.ones(2, 2, dtype=L.bfloat16), L.ones(2), L.ones(2, 1, dtype=L.bfloat16)),
    "torch.lu_solve pivots dtype": lambda L: L.lu_solve(L.ones(2, 1), L.ones(2, 2), L.ones(2)),
    # sparse_coo_tensor's hand-written binding: object indices and values, and the size-only overload
    "sparse_coo_tensor huge int values": lambda L: L.sparse_coo_tensor(L.zeros((1, 0), dtype=L.int8), NEG_BIG),
    "sparse_coo_tensor huge int size": lambda L: L.sparse_coo_tensor(L.zeros((1, 0), dtype=L.int64), L.zeros(0), BIG),
    "sparse_coo_tensor bool indices": lambda L: L.sparse_coo_tensor(True, L.tensor([-5], dtype=L.int32)),
    "sparse_coo_tensor(size)": lambda L: L.sparse_coo_tensor((2, 3)).to_dense(),
    "sparse_coo_tensor(int)": lambda L: L.sparse_coo_tensor(3, dtype=L.float64).to_dense(),
    "sparse_coo_tensor(size) nnz": lambda L: L.sparse_coo_tensor(L.Size([2, 3]))._nnz(),
    "sparse_coo_tensor lists": lambda L: L.sparse_coo_tensor([[0, 1]], [3, 4], (3,)).to_dense(),
    "sparse_coo_tensor int size": lambda L: L.sparse_coo_tensor([[0, 1]], [3, 4], 3, dtype=L.uint8).to_dense(),
    "sparse_coo_tensor varargs size": lambda L: L.sparse_coo_tensor(2, 0, 2, dtype=L.uint8).to_dense(),
    "sparse_coo_tensor two ints": lambda L: L.sparse_coo_tensor(3, 2, dtype=L.int16),
    "sparse_coo_tensor huge size int": lambda L: L.sparse_coo_tensor(NEG_BIG, dtype=L.float32),
    "sparse_coo_tensor numel overflow": lambda L: L.sparse_coo_tensor([2 ** 62, 2], dtype=L.uint8),
    "sparse_coo_tensor dtype=()": lambda L: L.sparse_coo_tensor(2 ** 40, dtype=()),
}


@pytest.mark.parametrize("name", list(MORE))
def test_more_matches_torch_stop24(name):
    check(MORE[name], ampgrad, torch)


@pytest.mark.parametrize("method", ["view", "reshape", "repeat", "permute", "tile", "flip"])
def test_shape_methods_need_their_argument(method):
    check(lambda L: getattr(L.zeros(2), method)(), ampgrad, torch)


@pytest.mark.parametrize("dims", [[], (2,), (2, 1), 2, True])
def test_tile_function_dims(dims):
    check(lambda L: L.tile(L.arange(2.), dims), ampgrad, torch)


@pytest.mark.parametrize("op,k", [("tril_", 0), ("triu_", 0), ("tril_", -1), ("triu_", 1), ("tril_", 1)])
def test_triangle_in_place_through_an_expanded_tensor(op, k):
    # torch's kernels write only the zeroed triangle, so an expanded self gets the same values whatever the
    # write order; ampgrad used to copy every element back and the last row's copy won
    def f(L):
        base = L.tensor([[1.0, 2.0, 3.0]])
        a = base.expand(3, 3)
        getattr(a, op)(k)
        return base
    check(f, ampgrad, torch)
