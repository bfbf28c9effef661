"""multinomial and exponential_ (csrc/ops/factory.cpp, kernels/cpu/random.cpp): the same draws as torch
under the same manual_seed (both consume torch's CPU stream in torch's order), the empirical
distribution, and torch's errors."""
import numpy as np
import pytest

import ampgrad as ag

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("n,replacement", [(1, False), (3, False), (1, True), (5, True), (40, True)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_draws_equal_torch(n, replacement, dtype):
    p = torch.rand(4, 6, dtype=getattr(torch, dtype))
    p[1, 2] = 0
    for shape in ((4, 6), (6,)):
        q = p if len(shape) == 2 else p[0]
        ag.manual_seed(21)
        torch.manual_seed(21)
        a = ag.multinomial(ag.tensor(q.numpy()), n, replacement)
        t = torch.multinomial(q, n, replacement)
        assert a.dtype == ag.int64 and a.tolist() == t.tolist()


def test_large_vocab_sampling_equals_torch_and_method_form():
    p = torch.softmax(torch.randn(2, 50304), -1)
    ag.manual_seed(3)
    torch.manual_seed(3)
    assert ag.tensor(p.numpy()).multinomial(1).tolist() == p.multinomial(1).tolist()


def test_empirical_frequencies():
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    ag.manual_seed(0)
    with_r = ag.multinomial(ag.tensor(probs), 40000, True).numpy()
    freq = np.bincount(with_r, minlength=4) / with_r.size
    np.testing.assert_allclose(freq, probs, atol=0.01)
    firsts = np.array([ag.multinomial(ag.tensor(probs), 1).item() for _ in range(4000)])
    np.testing.assert_allclose(np.bincount(firsts, minlength=4) / 4000, probs, atol=0.03)
    without = ag.multinomial(ag.tensor(probs), 4).tolist()
    assert sorted(without) == [0, 1, 2, 3]


def test_exponential_matches_torch():
    for dt in ("float32", "float64", "bfloat16"):
        ag.manual_seed(5)
        torch.manual_seed(5)
        a = ag.empty(100, dtype=getattr(ag, dt)).exponential_(2.5)
        t = torch.empty(100, dtype=getattr(torch, dt)).exponential_(2.5)
        np.testing.assert_array_equal(a.float().numpy(), t.float().numpy())


@pytest.mark.parametrize("f", [
    lambda m: m.multinomial(m.tensor([0.5, -0.1]), 1), lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1),
    lambda m: m.multinomial(m.tensor([0.5, float("nan")]), 2, True), lambda m: m.multinomial(m.tensor([0.5, 0.5]), 3),
    lambda m: m.multinomial(m.tensor([0.5, 0.5]), 0), lambda m: m.multinomial(m.tensor([1, 2]), 1),
    lambda m: m.multinomial(m.ones(2, 2, 2), 1), lambda m: m.multinomial(m.tensor([0.5, -0.1]), 2, True),
    lambda m: m.multinomial(m.tensor([0.0, 0.0]), 2, True), lambda m: m.empty(3).exponential_(0.0),
    lambda m: m.empty(3, dtype=m.long).exponential_(),
])
def test_errors_match_torch(f):
    def err(m):
        try:
            f(m)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e).splitlines()[0]
        return None
    t, a = err(torch), err(ag)
    assert t is not None and a is not None and a[0] == t[0], (a, t)
