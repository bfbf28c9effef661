"""Nested and re-entered autocast regions and the cast cache, against torch (or, where torch's own
cache is wrong, against hand casts made by torch outside autocast).

Regions of different dtypes nest (fp16 inside bf16 and the reverse), enabled=False inside
enabled, cache_enabled=False inside cached; after each inner exit the outer region's dtype,
enabled flag and cache flag are back. Cache hits and misses are made visible the way torch's
cache shows them: a leaf changed in place (under no_grad) inside a region keeps its stale cast
until the outermost region exits; non-leaves, no_grad casts and disabled caches are never reused.
Backward after the region gives the fp32 leaves fp32 gradients equal to torch's."""
import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")


def _data(seed, *shape):
    return np.random.RandomState(seed).uniform(-1, 1, size=shape).astype(np.float32)


def _pair(seed, *shape, requires_grad=False):
    a = _data(seed, *shape)
    return (ag.tensor(a, requires_grad=requires_grad), torch.tensor(a, requires_grad=requires_grad))


def _same(a, t, exact=True, what=""):
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], f"{what}: {a.dtype} vs torch {t.dtype}"
    av = np.asarray(a.detach().float().numpy(), dtype=np.float64)
    tv = t.detach().float().numpy().astype(np.float64)
    if exact and str(t.dtype) == "torch.float32":
        # float32 results (exp, and the fp32 mm outside autocast) may round differently from torch's by
        # a few ulps of the terms: torch's SLEEF exp is 1 ulp off for some inputs on some CPUs, and a
        # 4-term dot product summed in another order (or fused) differs relative to a cancelling result.
        # A stale or wrongly cast operand would differ by bf16/fp16 rounding, 1e-3 and more.
        np.testing.assert_allclose(av, tv, rtol=1e-6, atol=1e-6, err_msg=what)
    elif exact:
        np.testing.assert_array_equal(av, tv, err_msg=what)
    else:
        np.testing.assert_allclose(av, tv, rtol=2e-2, atol=2e-2, err_msg=what)


def _np(t):
    return np.asarray(t.detach().float().numpy(), dtype=np.float64)


def _state(m):
    return (m.is_autocast_enabled("cpu"), str(m.get_autocast_dtype("cpu")).split(".")[-1], m.is_autocast_cache_enabled())


LOW = ["bfloat16", "float16"]


@pytest.mark.parametrize("outer", LOW)
@pytest.mark.parametrize("inner", LOW + ["disabled", "nocache"])
def test_nested_regions_restore_state_and_dtypes(outer, inner):
    """Each op's result dtype and value, and the autocast state, at every point of an outer region
    with an inner region of another kind, before, inside, after, and on re-entering."""
    (xa, xt), (wa, wt) = _pair(0, 3, 4), _pair(1, 4, 5)
    trace = {}
    for m, x, w in ((ag, xa, wa), (torch, xt, wt)):
        od = getattr(m, outer)
        kw = ({"enabled": False} if inner == "disabled" else {"cache_enabled": False} if inner == "nocache"
              else {"dtype": getattr(m, inner)})
        out = []
        out.append(("before", _state(m)))
        with m.autocast("cpu", dtype=od):
            out.append(("outer", _state(m), m.mm(x, w), (x + 1).exp()))
            with m.autocast("cpu", **kw):
                out.append(("inner", _state(m), m.mm(x, w), m.mm(x, w).sum()))
                with m.autocast("cpu", dtype=od):  # re-enter the outer kind inside the inner one
                    out.append(("innermost", _state(m), m.mm(x, w)))
                out.append(("inner again", _state(m), m.mm(x, w)))
            out.append(("outer again", _state(m), m.mm(x, w)))
        out.append(("after", _state(m), m.mm(x, w)))
        with m.autocast("cpu", dtype=od):
            out.append(("re-entered", _state(m), m.mm(x, w)))
        out.append(("after again", _state(m)))
        trace[m.__name__] = out
    for a, t in zip(trace["ampgrad"], trace["torch"]):
        assert a[0] == t[0] and a[1] == t[1], f"{a[0]}: state {a[1]} != torch's {t[1]}"
        for k, (ra, rt) in enumerate(zip(a[2:], t[2:])):
            _same(ra, rt, what=f"{outer}/{inner} {a[0]} result {k}")


@pytest.mark.parametrize("outer,inner", [("bfloat16", "float16"), ("float16", "bfloat16")])
def test_nested_dtypes_use_their_own_casts(outer, inner):
    """A weight cast in the outer region and used again in an inner region of another dtype must be
    cast to the inner dtype. (torch's cache hands back the outer region's cast here and mm then
    fails on mixed dtypes, so the reference is torch's hand cast outside autocast.)"""
    xa, xt = _pair(2, 3, 4)
    wa, wt = _pair(3, 4, 5, requires_grad=True)
    od_a, id_a, od_t, id_t = getattr(ag, outer), getattr(ag, inner), getattr(torch, outer), getattr(torch, inner)
    with ag.autocast("cpu", dtype=od_a):
        y0 = ag.mm(xa, wa)
        with ag.autocast("cpu", dtype=id_a):
            y1 = ag.mm(xa, wa)
            y1b = ag.mm(xa, wa)
        y2 = ag.mm(xa, wa)
    ref_o = torch.mm(xt.to(od_t), wt.detach().to(od_t))
    ref_i = torch.mm(xt.to(id_t), wt.detach().to(id_t))
    _same(y0, ref_o, what="outer")
    _same(y1, ref_i, what="inner")
    _same(y1b, ref_i, what="inner, second use")
    _same(y2, ref_o, what="outer after the inner region")
    # backward through all three: every path reaches the fp32 leaf with an fp32 gradient
    (y0.float().sum() + y1.float().sum() * 2 + y2.float().sum() * 3).backward()
    g_ref = (xt.to(od_t).float().sum(0)[:, None] * 4 + xt.to(id_t).float().sum(0)[:, None] * 2).expand(4, 5)
    assert wa.grad.dtype == ag.float32
    np.testing.assert_allclose(wa.grad.numpy(), g_ref.numpy(), rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("dtype", LOW)
def test_cast_cache_hits_until_outermost_exit(dtype):
    """torch's cache, made visible: a leaf changed in place inside the region keeps its stale cast
    (a hit) in the region and in nested ones; a re-entered region, and autocast(enabled=False),
    see the new value (the cache was cleared at the outermost exit / is not consulted)."""
    res = {}
    for m in (ag, torch):
        x = m.tensor(_data(4, 3, 4))
        w = m.tensor(_data(5, 4, 5), requires_grad=True)
        d = getattr(m, dtype)
        out = []
        with m.autocast("cpu", dtype=d):
            out.append(m.mm(x, w))
            with m.no_grad():
                w.add_(0.5)
            out.append(m.mm(x, w))  # stale: cache hit
            with m.autocast("cpu", dtype=d):
                out.append(m.mm(x, w))  # stale: nested region, same cache
            out.append(m.mm(x, w))  # stale: the inner exit did not clear
            with m.autocast("cpu", enabled=False):
                out.append(m.mm(x, w))  # fp32, current value
        with m.autocast("cpu", dtype=d):
            out.append(m.mm(x, w))  # fresh after the outermost exit
            with m.no_grad():
                w.add_(0.25)
            with m.autocast("cpu", dtype=d, cache_enabled=False):
                out.append(m.mm(x, w))  # cache off: current value
            out.append(m.mm(x, w))  # cache on again: the cached (stale) cast
        res[m.__name__] = out
    for k, (a, t) in enumerate(zip(res["ampgrad"], res["torch"])):
        _same(a, t, what=f"step {k}")
    assert not np.array_equal(_np(res["ampgrad"][0]), _np(res["ampgrad"][5]))


@pytest.mark.parametrize("dtype", LOW)
def test_cast_cache_misses(dtype):
    """No reuse for non-leaves and for tensors that do not require grad: each sees in-place changes
    at once, as in torch."""
    res = {}
    for m in (ag, torch):
        x = m.tensor(_data(6, 3, 4))
        w = m.tensor(_data(7, 4, 5), requires_grad=True)
        c = m.tensor(_data(8, 4, 5))  # a constant: no grad, never cached
        d = getattr(m, dtype)
        out = []
        with m.autocast("cpu", dtype=d):
            v = w * 1.0  # a non-leaf
            out.append(m.mm(x, v))
            out.append(m.mm(x, c))
            with m.no_grad():
                v.add_(0.5)
                c.add_(0.5)
            out.append(m.mm(x, v))
            out.append(m.mm(x, c))
        res[m.__name__] = out
    for k, (a, t) in enumerate(zip(res["ampgrad"], res["torch"])):
        _same(a, t, what=f"step {k}")


@pytest.mark.parametrize("dtype", LOW)
def test_cast_under_no_grad_is_not_reused(dtype):
    """A cast made under no_grad is not cached: the next (recorded) use casts the current value and
    its gradient reaches the leaf. (torch 2.13 reuses the no_grad cast, #158232, so the reference
    is torch's hand cast of the current weight.)"""
    xn, wn = _data(6, 3, 4), _data(7, 4, 5)
    x, w = ag.tensor(xn), ag.tensor(wn, requires_grad=True)
    d = getattr(ag, dtype)
    with ag.autocast("cpu", dtype=d):
        with ag.no_grad():
            ag.mm(x, w)
            w.add_(0.5)
        y = ag.mm(x, w)
    y.float().sum().backward()
    td = getattr(torch, dtype)
    wd = torch.tensor(wn + np.float32(0.5)).to(td).requires_grad_()
    ref = torch.mm(torch.tensor(xn).to(td), wd)
    ref.float().sum().backward()
    _same(y, ref, what="value")
    _same(w.grad, wd.grad.float(), what="grad")


def test_backward_after_nested_regions_matches_torch():
    """A small network run across nested regions (bf16 outer, fp16 inner with a disabled part),
    backward after all regions exited: loss and every gradient (dtype and value) as torch's."""
    def run(m):
        x = m.tensor(_data(9, 8, 6))
        w1 = m.tensor(_data(10, 6, 5), requires_grad=True)
        w2 = m.tensor(_data(11, 5, 4), requires_grad=True)
        b = m.tensor(_data(12, 4), requires_grad=True)
        with m.autocast("cpu", dtype=m.bfloat16):
            h = m.mm(x, w1).relu()
            with m.autocast("cpu", enabled=False):
                h2 = h.float() * 2 + 1
            with m.autocast("cpu", dtype=m.bfloat16):
                y = m.mm(h2, w2) + b
            z = m.mm(h, w2)  # w2's cached cast, reused
        loss = (y.float() ** 2).mean() + z.float().mean()
        loss.backward()
        return [loss, y, z, w1.grad, w2.grad, b.grad]
    for k, (a, t) in enumerate(zip(run(ag), run(torch))):
        _same(a, t, exact=False, what=f"output {k}")
