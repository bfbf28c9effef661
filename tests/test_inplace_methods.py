"""torch's in-place Tensor methods that ampgrad composes or aliases (python/ampgrad/_inplace_methods.py): values,
the written tensor's identity, gradients through the write, and torch's errors, all against torch."""
import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")
from _torch_compare import check  # noqa: E402


def _t(L, a, **kw):
    return L.tensor(np.asarray(a, dtype=np.float32), **kw)


M = [[1.5, -2.0, 0.5], [0.25, 3.0, -1.0]]
V2, V3 = [0.5, -1.5], [2.0, 1.0, -0.5]

CASES = {
    "addmm_": lambda L: _t(L, M).addmm_(_t(L, [[1.0, 2.0], [0.5, -1.0]]), _t(L, M), beta=0.5, alpha=2.0),
    "addmv_": lambda L: _t(L, V2).addmv_(_t(L, M), _t(L, V3), alpha=-1.0),
    "addr_": lambda L: _t(L, M).addr_(_t(L, V2), _t(L, V3)),
    "baddbmm_": lambda L: _t(L, [M]).baddbmm_(_t(L, [[[1.0], [2.0]]]), _t(L, [[V3]]), beta=2.0),
    "addbmm_": lambda L: _t(L, M).addbmm_(_t(L, [[[1.0], [2.0]], [[0.5], [-1.0]]]), _t(L, [[V3], [V3]])),
    "cumsum_": lambda L: _t(L, M).cumsum_(1),
    "cumprod_": lambda L: _t(L, M).cumprod_(0),
    "cumsum_ another dtype": lambda L: _t(L, M).cumsum_(1, dtype=L.float64),
    "cumsum_ into int64 from float": lambda L: _t(L, M).cumsum_(1, dtype=L.int64),
    "cumprod_ bad dim before dtype": lambda L: L.tensor([1, 2]).cumprod_(5, dtype=L.float64),
    "cumsum_ of bool": lambda L: L.tensor([True, False]).cumsum_(0),
    "cumsum_ of an empty bool": lambda L: L.zeros((0,), dtype=L.bool).cumsum_(0, dtype=L.bool),
    "cumsum_ of an empty bool, no dtype": lambda L: L.zeros((1, 2, 0), dtype=L.bool).transpose(0, 1).cumsum_(1),
    "cumsum_ leaf check before dim": lambda L: _t(L, M, requires_grad=True).cumsum_(dim=4),
    "cumsum_ of int8": lambda L: L.tensor([100, 100], dtype=L.int8).cumsum_(0),
    "cumprod_ same dtype": lambda L: _t(L, M).cumprod_(1, dtype=L.float32),
    "index_fill_": lambda L: _t(L, M).index_fill_(1, L.tensor([0, 2]), -7.0),
    "masked_scatter_": lambda L: _t(L, M).masked_scatter_(L.tensor([[True, False, True], [False, True, False]]),
                                                        _t(L, [9.0, 8.0, 7.0, 6.0, 5.0, 4.0])),
    "put_": lambda L: _t(L, M).put_(L.tensor([0, 5, 5]), _t(L, [1.0, 2.0, 3.0]), accumulate=True),
    "renorm_": lambda L: _t(L, M).renorm_(2, 0, 1.0),
    "floor_divide_": lambda L: _t(L, M).floor_divide_(0.75),
    "arccos_": lambda L: _t(L, [0.5, -0.25]).arccos_(),
    "negative_": lambda L: _t(L, M).negative_(),
    "fix_": lambda L: _t(L, M).fix_(),
    "greater_": lambda L: _t(L, M).greater_(0.5),
    "not_equal_": lambda L: _t(L, M).not_equal_(3.0),
    "arctan2_": lambda L: _t(L, M).arctan2_(_t(L, M[::-1])),
    "fill_diagonal_ square": lambda L: L.zeros(3, 3).fill_diagonal_(2.0),
    "fill_diagonal_ tall": lambda L: L.zeros(5, 3).fill_diagonal_(2.0),
    "fill_diagonal_ tall wrap": lambda L: L.zeros(7, 3).fill_diagonal_(1.0, wrap=True),
    "fill_diagonal_ wide": lambda L: L.zeros(3, 5).fill_diagonal_(2.0, wrap=True),
    "fill_diagonal_ cube": lambda L: L.zeros(2, 2, 2).fill_diagonal_(3.0),
    "fill_diagonal_ unequal dims": lambda L: L.zeros(2, 3, 2).fill_diagonal_(1.0),
    "fill_diagonal_ 1-D": lambda L: L.zeros(2).fill_diagonal_(1.0),
    "fill_diagonal_ of an expanded tensor": lambda L: (lambda b: (b.expand(3, 3).fill_diagonal_(2, wrap=True), b)[1])(
        L.tensor([2.5, 2.5, 1.0], dtype=L.float64)),
    "fill_diagonal_ wrap int": lambda L: L.zeros((6, 0), dtype=L.uint8)[::2].fill_diagonal_(5, 1),
    "fill_diagonal_ of a transposed view": lambda L: L.arange(12.).reshape(4, 3).t().fill_diagonal_(-1.0),
    "fill_diagonal_ empty": lambda L: L.zeros(0, 3).fill_diagonal_(1.0),
    "apply_": lambda L: L.tensor([1, 2, 3]).apply_(lambda v: v * 2.7),
    "apply_ 0-d": lambda L: L.tensor(3.0).apply_(lambda v: v + 1),
    "apply_ requires grad": lambda L: _t(L, V2, requires_grad=True).apply_(lambda v: v),
    "map_": lambda L: _t(L, [[1.0, 2.0]]).map_(_t(L, [3.0]), lambda a, b: a * b),
    "map_ other requires grad": lambda L: L.zeros((0, 1)).map_(L.zeros((0, 1), requires_grad=True), lambda a, b: a),
    "cumsum_ dtype of another type": lambda L: L.zeros((0, 3), dtype=L.uint8).cumsum_(-1, dtype=[None]),
    "map2_": lambda L: _t(L, V2).map2_(_t(L, [3.0, 4.0]), _t(L, [5.0, 6.0]), lambda a, b, c: a + b * c),
    # torch's in-place errors
    "cumsum_ float into int": lambda L: L.tensor([1, 2]).cumsum_(0, dtype=L.float32),
    "addmm_ shape grows": lambda L: _t(L, [[1.0]]).addmm_(_t(L, M), _t(L, [V3] * 3)),
    "addmm_ into an expanded self": lambda L: _t(L, [[1.0, 2.0]]).expand(2, 2).addmm_(_t(L, [[1.0], [2.0]]),
                                                                                      _t(L, [[1.0, 2.0]])),
    "addmm_ of a leaf that requires grad": lambda L: _t(L, [[1.0]], requires_grad=True).addmm_(_t(L, [[1.0]]),
                                                                                              _t(L, [[1.0]])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_inplace_method_matches_torch(name):
    check(CASES[name], ampgrad, torch)


def _grads(L, method, *args):
    x = _t(L, M, requires_grad=True)
    y = x * 1.5
    ops = [_t(L, a, requires_grad=True) for a in args]
    r = getattr(y, method)(*ops)
    assert r is y
    (r * _t(L, [[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])).sum().backward()
    return [x.grad] + [o.grad for o in ops]


GRADS = {
    "cumprod_ (saves self)": lambda L: _cumprod_grad(L),
    "addmm_": lambda L: _grads(L, "addmm_", [[1.0, 2.0], [0.5, -1.0]], M),
    "addr_": lambda L: _grads(L, "addr_", V2, V3),
    "masked_scatter_ source": lambda L: _masked_scatter_grad(L),
    "fill_diagonal_ of a non-leaf": lambda L: _fill_diagonal_grad(L),
}


def _cumprod_grad(L):
    x = _t(L, M, requires_grad=True)
    y = x * 1.5
    y.cumprod_(1)
    (y * _t(L, [[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])).sum().backward()
    return x.grad


def _fill_diagonal_grad(L):
    x = _t(L, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    y = x * 2
    y.fill_diagonal_(0.5)
    (y * _t(L, [[1.0, -2.0], [0.5, 3.0], [0.25, -1.0]])).sum().backward()
    return y, x.grad


def _masked_scatter_grad(L):
    src = _t(L, [9.0, 8.0, 7.0, 6.0, 5.0, 4.0], requires_grad=True)
    x = _t(L, M, requires_grad=True)
    y = x * 1
    y.masked_scatter_(L.tensor([[True, False, True], [False, True, False]]), src)
    (y * _t(L, [[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]])).sum().backward()
    return x.grad, src.grad


@pytest.mark.parametrize("name", list(GRADS))
def test_inplace_method_gradients_match_torch(name):
    check(GRADS[name], ampgrad, torch)


def test_every_inplace_method_torch_has():
    have = {n for n in dir(ampgrad.Tensor)}
    # set_ (rebinding a tensor to another storage) and sparse resizing are not implemented
    missing = sorted(n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("_") and n not in have)
    assert missing == ["resize_as_sparse_", "set_", "sparse_resize_", "sparse_resize_and_clear_"]


# ---- Note [In-place view ops]: the geometry of self changes in place; node names, strides, version,
# view-ness and gradients as torch's
VIEW_OPS = ["t_()", "transpose_(0,1)", "swapaxes_(0,1)", "swapdims_(1,0)", "unsqueeze_(0)", "unsqueeze_(-1)",
            "squeeze_()", "squeeze_(0)", "squeeze_((0,1))", "as_strided_((2,2),(1,1))", "as_strided_((2,),(2,),1)",
            "t_().unsqueeze_(1).squeeze_(1)"]
MAKERS = {"plain": lambda t: t.reshape(2, 3), "view": lambda t: t.view(2, 3)[:, 1:], "row": lambda t: t.view(1, 6)}


def _inplace_view(lib, op, make):
    x = lib.arange(6., requires_grad=True)
    y = make(x * 1)
    v0 = y._version
    r = eval("y." + op)
    w = lib.arange(float(r.numel())).reshape(r.shape)
    (r * w).sum().backward()
    return (r is y, tuple(r.shape), tuple(r.stride()), r.storage_offset(), type(r.grad_fn).__name__,
            r._version - v0, r._base is not None, x.grad.tolist())


@pytest.mark.parametrize("make", list(MAKERS))
@pytest.mark.parametrize("op", VIEW_OPS)
def test_inplace_view_ops_match_torch(op, make):
    assert _inplace_view(ampgrad, op, MAKERS[make]) == _inplace_view(torch, op, MAKERS[make])


@pytest.mark.parametrize("call", ["t_()", "unsqueeze_(0)", "squeeze_()", "transpose_(0, 1)", "squeeze_(5)",
                                  "unsqueeze_(4)", "transpose_(0, 3)", "as_strided_((9,), (1,))",
                                  "as_strided_((2,), (-1,))"])
@pytest.mark.parametrize("who", ["leaf", "leaf_view", "no_grad_leaf", "plain3d", "int"])
def test_inplace_view_ops_errors_and_unchanged_on_failure(call, who):
    def run(lib):
        base = lib.ones(2, 3, requires_grad=True)
        t = {"leaf": lambda: base, "leaf_view": lambda: base[0:1], "no_grad_leaf": lambda: lib.ones(2, 3),
             "plain3d": lambda: lib.ones(2, 1, 3) * 1, "int": lambda: lib.ones(2, 3, dtype=lib.int64)}[who]()
        before = (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t._version)
        try:
            r = eval("t." + call)
        except Exception as e:  # noqa: BLE001
            assert (tuple(t.shape), tuple(t.stride()), t.storage_offset(), t._version) == before
            return type(e).__name__
        return (r is t, tuple(t.shape), tuple(t.stride()), t._version - before[3])
    assert run(ampgrad) == run(torch)


def test_inplace_view_ops_tangent_and_saved_tensor_check():
    import ampgrad.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        p = fwAD.make_dual(ampgrad.ones(2, 3), ampgrad.arange(6.).reshape(2, 3))
        q = p * 1
        q.t_()
        assert fwAD.unpack_dual(q).tangent.tolist() == [[0., 3.], [1., 4.], [2., 5.]]
    # the version bump: a tensor saved before the geometry change refuses to unpack, as in torch
    for lib in (ampgrad, torch):
        x = lib.ones(2, 3, requires_grad=True)
        y = x * 1
        z = y.sin()
        y.t_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            z.sum().backward()
