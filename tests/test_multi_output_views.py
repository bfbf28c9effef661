"""Note [Multi-output views] (csrc/ops/shape.cpp): split / split_with_sizes / chunk / unbind share one backward
node with torch's name, write each piece's gradient once, and forbid in-place changes of their outputs as torch
does (same exception class and message)."""
import numpy as np
import pytest
import torch

import ampgrad as ag


def _both(fn):
    out = []
    for m in (ag, torch):
        try:
            out.append(("value", fn(m)))
        except Exception as e:  # noqa: BLE001 - compared with torch's
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("name,call", [
    ("SplitBackward0", lambda t: t.split(2, 1)), ("SplitWithSizesBackward0", lambda t: t.split([1, 4, 1], 1)),
    ("SplitBackward0", lambda t: t.chunk(3, 1)), ("UnbindBackward0", lambda t: t.unbind(1)),
    ("SplitBackward0", lambda t: t.split(4, -1)),
])
def test_node_name_and_gradients(name, call):
    xn = np.random.default_rng(0).standard_normal((3, 6))
    res = []
    for m in (ag, torch):
        x = m.tensor(xn, requires_grad=True)
        parts = call(x * 1.0)
        assert parts[0].grad_fn.name() == name
        assert all(p.grad_fn is parts[0].grad_fn for p in parts)
        assert [p.grad_fn is not None and p._is_view() for p in parts] == [True] * len(parts)
        # some pieces without a gradient (zeros there), one used twice
        loss = (parts[0] * m.tensor(np.arange(parts[0].numel()).reshape(parts[0].shape) + 1.0)).sum() + parts[-1].sum() * 3
        if len(parts) > 2:
            loss = loss + (parts[1] ** 2).sum()
        loss.backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12, atol=0)


def test_double_backward_and_forward_ad():
    xn = np.random.default_rng(1).standard_normal((4, 5))
    res = []
    for m in (ag, torch):
        x = m.tensor(xn, requires_grad=True)
        a, b = x.split([2, 3], 1)
        y = (a ** 3).sum() + (b.sin()).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad((g * g).sum(), x)
        res.append((g.detach().numpy(), gg.numpy()))
    for u, v in zip(*res):
        np.testing.assert_allclose(u, v, rtol=1e-12)
    import ampgrad.autograd.forward_ad as fwa
    t = np.random.default_rng(2).standard_normal((4, 5))
    with fwa.dual_level():
        d = fwa.make_dual(ag.tensor(xn), ag.tensor(t))
        parts = d.unbind(0)
        np.testing.assert_allclose(fwa.unpack_dual(parts[2]).tangent.numpy(), t[2])


@pytest.mark.parametrize("case", ["direct", "indirect", "chunk_direct", "unbind_direct", "view_of_piece", "no_grad_base",
                                  "no_grad_mode", "base_without_grad_mul"])
def test_inplace_on_pieces_matches_torch(case):
    def run(m):
        x = m.ones(6, requires_grad=True) * 1.0
        if case == "direct":
            x.split(2)[1].mul_(2)
        elif case == "indirect":
            a, b = x.split(3)
            x.add_(1)
            return a.grad_fn.name()
        elif case == "chunk_direct":
            x.chunk(2)[0].zero_()
        elif case == "unbind_direct":
            x.unbind(0)[4].add_(1)
        elif case == "view_of_piece":
            x.split(3)[0][1:].mul_(3)
        elif case == "no_grad_base":
            y = m.ones(6)
            y.split(3)[0].copy_(m.ones(3, requires_grad=True))
        elif case == "no_grad_mode":
            with m.no_grad():
                p = x.split(3)[0]
            p.mul_(2)
        elif case == "base_without_grad_mul":
            y = m.ones(6)
            p = y.split(3)[1]
            p.mul_(2)
            return y.tolist()
        return "ok"
    a, t = _both(run)
    assert a == t


def test_split_errors_match_torch():
    for fn in (lambda m: m.ones(4).split([1, -1, 4]), lambda m: m.ones(4).split([1, 2]), lambda m: m.tensor(1.0).unbind(),
               lambda m: m.ones(4).split(-1), lambda m: m.ones(2, 3).unbind(2)):
        a, t = _both(fn)
        assert a[0] == t[0], (a, t)
