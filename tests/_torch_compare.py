"""Shared by the reliability tests that run one call under torch and under ampgrad: the outcome of a call
(its value, or its exception's type, optionally with the message), results as comparable plain data, and
the comparison itself."""
import warnings

import numpy as np


def outcome(f, L, *, message=False):
    """("ok", f(L)) or ("raise", exception type name [, message without the library's name])."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", f(L)
        except Exception as e:  # noqa: BLE001
            if message:
                return "raise", (type(e).__name__, str(e).replace("torch.", "").replace("ampgrad.", ""))
            return "raise", type(e).__name__


def to_np(r):
    """Tensors (nested in lists / tuples) as (dtype name, shape, values); anything else as it is."""
    if isinstance(r, (tuple, list)):
        return [to_np(x) for x in r]
    if hasattr(r, "detach"):
        v = r.detach()
        return (str(r.dtype).split(".")[-1], tuple(r.shape), (v.float() if v.is_floating_point() else v).numpy().tolist())
    return r


def same(a, t):
    """ampgrad's to_np result `a` equals torch's `t`: dtype and shape exactly, values to 1e-5 relative."""
    if isinstance(a, list):
        assert isinstance(t, list) and len(a) == len(t)
        for x, y in zip(a, t):
            same(x, y)
    elif isinstance(a, tuple):
        assert a[:2] == t[:2]
        np.testing.assert_allclose(np.array(a[2], dtype=float), np.array(t[2], dtype=float), rtol=1e-5)
    else:
        assert a == t


def check(f, ampgrad, torch, *, message=False):
    """f(ampgrad) and f(torch) both raise the same exception type (and message), or give the same values."""
    ka, ra = outcome(f, ampgrad, message=message)
    kt, rt = outcome(f, torch, message=message)
    assert ka == kt, (ra, rt)
    if ka == "raise":
        assert ra == rt
        return
    same(to_np(ra), to_np(rt))
