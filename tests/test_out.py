"""torch's out= keyword (Note [out= overloads], python/ampgrad/_out.py), against torch: values, the returned
object, dtype casts, resizing, aliasing, autograd refusal and torch's errors; every function whose torch
binding takes out= takes it here too."""
import warnings

import numpy as np
import pytest

import ampgrad
from ampgrad import _out
from ampgrad._out_ops import OUT_OPS

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((3, 4)).astype(np.float32)
M = RNG.standard_normal((4, 5)).astype(np.float32)
P = np.abs(A) + 0.5


def _both(f):
    return f(ampgrad), f(torch)


CASES = [  # (name, lambda lib -> (fn, args, kwargs, out))
    ("add", lambda L: (L.add, (L.tensor(A), L.tensor(B)), {"alpha": 2}, L.empty(3, 4))),
    ("sub_scalar", lambda L: (L.sub, (L.tensor(A), 1.5), {}, L.empty(3, 4))),
    ("mul", lambda L: (L.mul, (L.tensor(A), L.tensor(B)), {}, L.empty(0))),
    ("div_floor", lambda L: (L.div, (L.tensor(A), L.tensor(P)), {"rounding_mode": "floor"}, L.empty(3, 4))),
    ("exp", lambda L: (L.exp, (L.tensor(A),), {}, L.empty(3, 4))),
    ("sqrt_f64_out", lambda L: (L.sqrt, (L.tensor(P),), {}, L.empty(3, 4, dtype=L.float64))),
    ("sum_dim", lambda L: (L.sum, (L.tensor(A), 1), {"keepdim": True}, L.empty(3, 1))),
    ("mean", lambda L: (L.mean, (L.tensor(A), 0), {}, L.empty(4))),
    ("cat", lambda L: (L.cat, ([L.tensor(A), L.tensor(B)],), {"dim": 1}, L.empty(0))),
    ("stack", lambda L: (L.stack, ([L.tensor(A), L.tensor(B)],), {}, L.empty(2, 3, 4))),
    ("matmul", lambda L: (L.matmul, (L.tensor(A), L.tensor(M)), {}, L.empty(3, 5))),
    ("mm", lambda L: (L.mm, (L.tensor(A), L.tensor(M)), {}, L.empty(3, 5))),
    ("bmm", lambda L: (L.bmm, (L.tensor(A)[None], L.tensor(M)[None]), {}, L.empty(1, 3, 5))),
    ("addmm", lambda L: (L.addmm, (L.tensor(A[:, :1]), L.tensor(A), L.tensor(M)), {"beta": 0.5}, L.empty(3, 5))),
    ("clamp", lambda L: (L.clamp, (L.tensor(A),), {"min": -0.5, "max": 0.5}, L.empty(3, 4))),
    ("where", lambda L: (L.where, (L.tensor(A) > 0, L.tensor(A), L.tensor(B)), {}, L.empty(3, 4))),
    ("eq_into_float", lambda L: (L.eq, (L.tensor(A), L.tensor(A)), {}, L.empty(3, 4))),
    ("cumsum", lambda L: (L.cumsum, (L.tensor(A), 1), {}, L.empty(3, 4))),
    ("argmax", lambda L: (L.argmax, (L.tensor(A), 1), {}, L.empty(3, dtype=L.int64))),
    ("pow", lambda L: (L.pow, (L.tensor(P), 2.5), {}, L.empty(3, 4))),
    ("maximum", lambda L: (L.maximum, (L.tensor(A), L.tensor(B)), {}, L.empty(3, 4))),
    ("lerp", lambda L: (L.lerp, (L.tensor(A), L.tensor(B), 0.25), {}, L.empty(3, 4))),
    ("addcmul", lambda L: (L.addcmul, (L.tensor(A), L.tensor(B), L.tensor(P)), {"value": 0.5}, L.empty(3, 4))),
    ("abs_int", lambda L: (L.abs, (L.tensor([-3, 2, -1]),), {}, L.empty(3, dtype=L.int64))),
    ("linalg_norm", lambda L: (L.linalg.vector_norm, (L.tensor(A),), {"ord": 3}, L.empty(()))),
    ("F_normalize", lambda L: (L.nn.functional.normalize, (L.tensor(A),), {"dim": 0}, L.empty(3, 4))),
    ("linalg_inv", lambda L: (L.linalg.inv, (L.tensor(A[:, :3] + 3 * np.eye(3, dtype=np.float32)),), {},
                              L.empty(3, 3))),
    ("special_expit", lambda L: (L.special.expit, (L.tensor(A),), {}, L.empty(3, 4))),
    ("max_dim", lambda L: (L.max, (L.tensor(A), 1), {}, (L.empty(3), L.empty(3, dtype=L.int64)))),
    ("sort", lambda L: (L.sort, (L.tensor(A),), {"dim": 0}, (L.empty(3, 4), L.empty(3, 4, dtype=L.int64)))),
    ("topk", lambda L: (L.topk, (L.tensor(A), 2), {}, (L.empty(0), L.empty(0, dtype=L.int64)))),
]


def _np(t):
    return t.detach().numpy() if hasattr(t, "numpy") else np.asarray(t)


@pytest.mark.parametrize("name,make", CASES, ids=[c[0] for c in CASES])
def test_out_matches_torch(name, make):
    (fa, aa, ka, oa), (ft, at, kt, ot) = make(ampgrad), make(torch)
    ra, rt = fa(*aa, out=oa, **ka), ft(*at, out=ot, **kt)
    if isinstance(oa, tuple):
        assert type(ra).__name__ == type(rt).__name__ and len(ra) == len(rt)
        for x, y, o in zip(ra, rt, oa):
            assert x is o
            assert str(x.dtype).split(".")[-1] == str(y.dtype).split(".")[-1]
            np.testing.assert_allclose(_np(x), _np(y), rtol=1e-6, atol=1e-7)
    else:
        assert ra is oa
        assert str(ra.dtype).split(".")[-1] == str(rt.dtype).split(".")[-1]
        assert tuple(ra.shape) == tuple(rt.shape)
        np.testing.assert_allclose(_np(ra), _np(rt), rtol=1e-6, atol=1e-7)
        # the same as the call without out=, cast to out's dtype
        ref = fa(*aa, **ka)
        np.testing.assert_allclose(_np(ra), _np(ref.to(ra.dtype)), rtol=0, atol=0)


def test_out_aliasing_an_input():
    for L in (ampgrad, torch):
        a, b = L.tensor(A), L.tensor(B)
        r = L.mul(a, b, out=a)
        assert r is a
        np.testing.assert_allclose(_np(a), A * B, rtol=1e-6)
    # out is an input of a GEMM: ampgrad computes first, then writes (torch 2.13 returns zeros here, as its
    # out= GEMM zero-fills out before reading it)
    m = ampgrad.tensor(A[:, :3].copy())
    ampgrad.matmul(m, m.T, out=m)
    np.testing.assert_allclose(_np(m), A[:, :3] @ A[:, :3].T, rtol=1e-5)


def test_out_errors_and_failed_calls_leave_out_alone():
    for name, f in [("add", lambda L, o: L.add(L.tensor(A), L.tensor(B), out=o))]:
        msgs = []
        for L in (ampgrad, torch):
            o = L.full((3, 4), 7, dtype=L.int64)
            with pytest.raises(RuntimeError) as e:
                f(L, o)
            msgs.append(str(e.value))
            assert (_np(o) == 7).all()
        assert msgs[0] == msgs[1] == "result type Float can't be cast to the desired output type Long"
    # autograd refuses out= when an input requires grad (and allows it under no_grad)
    msgs = []
    for L in (ampgrad, torch):
        x = L.tensor(A, requires_grad=True)
        o = L.zeros(3, 4)
        with pytest.raises(RuntimeError) as e:
            L.exp(x, out=o)
        msgs.append(str(e.value))
        assert (_np(o) == 0).all()
        with L.no_grad():
            L.exp(x, out=o)
        np.testing.assert_allclose(_np(o), np.exp(A), rtol=1e-6)
    assert msgs[0] == msgs[1]
    # a leaf that requires grad as out
    for L in (ampgrad, torch):
        o = L.zeros(3, 4, requires_grad=True)
        with pytest.raises(RuntimeError, match="functions with out=... arguments don't support automatic"):
            L.exp(L.tensor(A), out=o)
    # wrong out types: TypeError (torch takes out=3 as a 0-d Long tensor, then fails the cast)
    with pytest.raises(TypeError, match="argument 'out' must be Tensor, not int"):
        ampgrad.add(ampgrad.tensor(A), ampgrad.tensor(B), out=3)
    for L in (ampgrad, torch):
        with pytest.raises(TypeError):
            L.sort(L.tensor(A), out=L.empty(3, 4))


def test_out_resize_warns_as_torch():
    got = []
    for L in (ampgrad, torch):
        o = L.empty(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            L.add(L.tensor(A), 1, out=o)
        got.append([str(x.message).split(" (Triggered internally")[0] for x in w if issubclass(x.category, UserWarning)])
        assert tuple(o.shape) == (3, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            L.add(L.tensor(A), 1, out=L.empty(0))  # zero elements: resized silently
    assert got[0] == got[1] and len(got[0]) == 1


def test_every_out_function_takes_out():
    """Each function of torch's namespaces whose torch binding takes out= takes it in ampgrad."""
    missing = []
    for key, names in OUT_OPS.items():
        mod = {"torch": ampgrad, "linalg": ampgrad.linalg, "special": ampgrad.special,
               "F": ampgrad.nn.functional}.get(key)
        mod = mod if mod is not None else getattr(ampgrad, key, None)
        if mod is None:
            continue
        for n in names:
            fn = getattr(mod, n, None)
            if fn is not None and callable(fn) and not _out._takes_out(fn):
                missing.append(f"{key}.{n}")
    assert missing == []


def test_calls_without_out_are_unchanged():
    a = ampgrad.tensor(A)
    assert ampgrad.add(a, 1).shape == (3, 4)
    assert type(ampgrad.add).__name__ == "builtin_function_or_method"  # no Python wrapper on the hot path
    with pytest.raises(TypeError):
        ampgrad.add(a, "x")
    with pytest.raises(TypeError):
        ampgrad.add(a, "x", out=ampgrad.empty(0))
