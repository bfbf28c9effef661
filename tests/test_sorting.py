"""Sorting and order statistics (csrc/ops/sort.cpp, kernels/cpu/sort.cpp): sort, argsort, msort, topk,
kthvalue, median, nanmedian against torch: values, indices, NaN order, dtypes, 0-d and empty inputs,
return types, backward node names, gradients (gradcheck, gradgradcheck, forward AD) and errors."""
import numpy as np
import pytest

import ampgrad as ag
from ampgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _distinct(shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) - n / 2) / 7.0


def _with_nan_and_ties(shape, seed=1):
    rng = np.random.default_rng(seed)
    a = np.round(rng.standard_normal(shape) * 2) / 2  # many ties
    flat = a.reshape(-1)
    flat[rng.choice(flat.size, size=max(1, flat.size // 9), replace=False)] = np.nan
    return a


CASES = {
    "sort": lambda m, x: m.sort(x, 1),
    "sort_desc_last": lambda m, x: m.sort(x, -1, descending=True),
    "sort_stable_dim0": lambda m, x: m.sort(x, dim=0, stable=True),
    "argsort": lambda m, x: m.argsort(x, 2),
    "argsort_desc": lambda m, x: m.argsort(x, dim=1, descending=True, stable=True),
    "msort": lambda m, x: m.msort(x),
    "topk": lambda m, x: m.topk(x, 3, 1),
    "topk_smallest": lambda m, x: m.topk(x, 2, largest=False),
    "topk_k0": lambda m, x: m.topk(x, 0, 0),
    "kthvalue": lambda m, x: m.kthvalue(x, 3, 1),
    "kthvalue_keepdim": lambda m, x: m.kthvalue(x, 4, 0, keepdim=True),
    "median": lambda m, x: m.median(x),
    "median_dim": lambda m, x: m.median(x, 2),
    "median_keepdim": lambda m, x: m.median(x, 1, keepdim=True),
    "nanmedian": lambda m, x: m.nanmedian(x),
    "nanmedian_dim": lambda m, x: m.nanmedian(x, 1),
    "method_sort": lambda m, x: x.sort(dim=0, descending=True),
    "method_topk": lambda m, x: x.topk(2, dim=-1),
}
TIE_SAFE = {"sort", "sort_desc_last", "sort_stable_dim0", "argsort", "argsort_desc", "msort", "median", "nanmedian",
            "method_sort"}


def _tuple(r):
    return tuple(r) if isinstance(r, tuple) else (r,)


def _same(ra, rt):
    for x, y in zip(_tuple(ra), _tuple(rt)):
        assert x.dtype == getattr(ag, str(y.dtype).replace("torch.", ""))
        assert tuple(x.shape) == tuple(y.shape)
        np.testing.assert_array_equal(x.float().numpy() if x.dtype == ag.bfloat16 else x.numpy(),
                                      y.float().numpy() if y.dtype == torch.bfloat16 else y.numpy())


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "int64", "int16"])
def test_values_and_indices_match_torch(name, dtype):
    a = _distinct((5, 6, 4))
    if dtype.startswith("int"):
        a = a * 7
    rt = CASES[name](torch, torch.tensor(a).to(getattr(torch, dtype)))
    ra = CASES[name](ag, ag.tensor(a).to(getattr(ag, dtype)))
    assert type(ra).__name__ == type(rt).__name__
    if isinstance(rt, tuple):
        assert type(ra).__module__ == "ampgrad.return_types" and ra.values is ra[0] and ra.indices is ra[1]
    _same(ra, rt)


@pytest.mark.parametrize("name", sorted(TIE_SAFE | {"kthvalue", "median_dim", "nanmedian_dim"}))
def test_nan_and_ties_match_torch(name):
    a = _with_nan_and_ties((6, 7, 5))
    rt = CASES[name](torch, torch.tensor(a))
    ra = CASES[name](ag, ag.tensor(a))
    if name in TIE_SAFE:
        _same(ra, rt)
    else:  # which of several equal values is picked is unspecified: compare values, check the indices point at them
        np.testing.assert_array_equal(_tuple(ra)[0].numpy(), _tuple(rt)[0].numpy())
        d = 1 if name in ("kthvalue", "nanmedian_dim") else 2
        picked = np.take_along_axis(a, np.expand_dims(_tuple(ra)[1].numpy(), d), d).squeeze(d)
        np.testing.assert_array_equal(picked, _tuple(rt)[0].numpy())


def test_median_propagates_nan_and_nanmedian_skips_it():
    a = np.array([[1.0, np.nan, 3.0, 0.5], [4.0, 2.0, 3.0, 1.0], [np.nan, 7.0, np.nan, -1.0]])
    for f in (lambda m, x: m.median(x, 1), lambda m, x: m.nanmedian(x, 1), lambda m, x: m.median(x), lambda m, x: m.nanmedian(x)):
        _same(f(ag, ag.tensor(a)), f(torch, torch.tensor(a)))
    # an all-NaN row: NaN (which NaN's index torch reports depends on its nth_element; ours is the first)
    v, i = ag.nanmedian(ag.tensor([[np.nan] * 4, [1.0, np.nan, 2.0, np.nan]]), 1)
    assert np.isnan(v[0].item()) and i[0].item() == 0 and v[1].item() == 1.0 and i[1].item() == 0


def test_sort_bool_and_zero_dim_and_empty():
    for f in (lambda m: m.sort(m.tensor([True, False, True])), lambda m: m.sort(m.tensor(3.0)), lambda m: m.topk(m.tensor(3.0), 1),
              lambda m: m.kthvalue(m.tensor(2.5), 1), lambda m: m.sort(m.zeros(0, 3), 0), lambda m: m.topk(m.zeros(0, 3), 0),
              lambda m: m.median(m.zeros(0)), lambda m: m.argsort(m.tensor([3, 1, 2], dtype=m.uint8))):
        ra, rt = f(ag), f(torch)
        for x, y in zip(_tuple(ra), _tuple(rt)):
            assert tuple(x.shape) == tuple(y.shape)
            np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize("fn", [
    lambda m, x: m.topk(x, 6), lambda m, x: m.topk(x, -1), lambda m, x: m.kthvalue(x, 0), lambda m, x: m.kthvalue(x, 6),
    lambda m, x: m.sort(x, dim=2), lambda m, x: m.median(m.zeros(0, 3), 0), lambda m, x: m.topk(m.tensor(3.0), 2),
    lambda m, x: m.kthvalue(m.tensor([True, False]), 1), lambda m, x: m.argsort(x, dim=-3),
])
def test_errors_match_torch(fn):
    def err(m):
        try:
            fn(m, m.zeros(3, 5))
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e).splitlines()[0]
        return None
    t, a = err(torch), err(ag)
    assert t is not None and a == t, (a, t)


NODES = {"sort": ("SortBackward0", lambda m, x: m.sort(x, 1).values), "stable": ("SortBackward1", lambda m, x: m.sort(x, dim=1, stable=True).values),
         "topk": ("TopkBackward0", lambda m, x: m.topk(x, 2, 0).values), "kth": ("KthvalueBackward0", lambda m, x: m.kthvalue(x, 2, 1).values),
         "kth_keep": ("KthvalueBackward0", lambda m, x: m.kthvalue(x, 2, 0, keepdim=True).values),
         "median": ("MedianBackward0", lambda m, x: m.median(x)), "median_dim": ("MedianBackward1", lambda m, x: m.median(x, 1).values),
         "nanmedian": ("NanmedianBackward0", lambda m, x: m.nanmedian(x)),
         "nanmedian_dim": ("NanmedianBackward1", lambda m, x: m.nanmedian(x, 0, keepdim=True).values),
         "msort": ("SortBackward0", lambda m, x: m.msort(x))}


@pytest.mark.parametrize("key", list(NODES))
def test_gradients_match_torch_and_finite_differences(key):
    node, f = NODES[key]
    a = _distinct((4, 5), seed=3)
    xt = torch.tensor(a, requires_grad=True)
    xa = ag.tensor(a, requires_grad=True)
    yt, ya = f(torch, xt), f(ag, xa)
    assert ya.grad_fn.name() == yt.grad_fn.name() == node
    g = np.random.default_rng(4).standard_normal(tuple(yt.shape))
    yt.backward(torch.tensor(g))
    ya.backward(ag.tensor(g))
    np.testing.assert_array_equal(xa.grad.numpy(), xt.grad.numpy())
    assert gradcheck(lambda x: f(ag, x), (ag.tensor(a, requires_grad=True),))
    assert gradgradcheck(lambda x: f(ag, x), (ag.tensor(a, requires_grad=True),))


@pytest.mark.parametrize("key", list(NODES))
def test_forward_ad_gathers_the_tangent(key):
    import ampgrad.autograd.forward_ad as fwad
    _, f = NODES[key]
    a = _distinct((4, 5), seed=5)
    t = np.random.default_rng(6).standard_normal(a.shape)
    with fwad.dual_level():
        out = f(ag, fwad.make_dual(ag.tensor(a), ag.tensor(t)))
        tan = fwad.unpack_dual(out).tangent.numpy()
    import torch.autograd.forward_ad as tfw
    with tfw.dual_level():
        ref = tfw.unpack_dual(f(torch, tfw.make_dual(torch.tensor(a), torch.tensor(t)))).tangent.numpy()
    np.testing.assert_array_equal(tan, ref)


def test_stable_is_keyword_only_as_torch():
    for m in (torch, ag):
        with pytest.raises(TypeError):
            m.sort(m.zeros(3), 0, False, True)

def test_integer_outputs_do_not_require_grad():
    x = ag.tensor(_distinct((3, 4)), requires_grad=True)
    v, i = ag.sort(x)
    assert v.requires_grad and not i.requires_grad and i.dtype == ag.int64
    assert not ag.argsort(x).requires_grad


def test_large_threaded_sort_matches_numpy():
    a = np.random.default_rng(7).standard_normal((300, 2000)).astype(np.float32)
    v, i = ag.sort(ag.tensor(a), 1)
    np.testing.assert_array_equal(v.numpy(), np.sort(a, 1))
    np.testing.assert_array_equal(i.numpy(), np.argsort(a, 1, kind="stable"))
    tv, ti = ag.topk(ag.tensor(a), 5, 0)
    np.testing.assert_array_equal(tv.numpy(), -np.sort(-a, 0)[:5])
