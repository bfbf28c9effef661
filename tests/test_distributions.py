"""torch.distributions (Distribution, Categorical, Normal, constraints, utils) against torch: the same
samples after the same seed (Categorical through torch.multinomial's stream, Normal through normal),
log_prob / entropy / cdf values and gradients, shapes, validation errors; and torch.tensor of
non-list sequences (a deque: reinforcement_learning/reinforce.py builds its returns that way)."""
from collections import deque

import numpy as np
import pytest
import torch

import ampgrad as ag


def _pair(data, dtype="float32", requires_grad=False):
    arr = np.asarray(data, dtype=dtype)
    return (torch.tensor(arr, requires_grad=requires_grad), ag.tensor(arr, requires_grad=requires_grad))


@pytest.mark.parametrize("param", ["probs", "logits"])
@pytest.mark.parametrize("shape", [(3,), (4, 5), (2, 3, 2)])
def test_categorical(param, shape):
    rng = np.random.default_rng(0)
    data = rng.uniform(0.1, 2.0, size=shape) if param == "probs" else rng.normal(size=shape)
    t, a = _pair(data, requires_grad=True)
    dt, da = torch.distributions.Categorical(**{param: t}), ag.distributions.Categorical(**{param: a})
    assert tuple(da.batch_shape) == tuple(dt.batch_shape) and tuple(da.event_shape) == tuple(dt.event_shape)
    for sample_shape in [(), (7,), (2, 3)]:
        torch.manual_seed(5)
        ag.manual_seed(5)
        st, sa = dt.sample(sample_shape), da.sample(sample_shape)
        assert sa.dtype == ag.int64 and tuple(sa.shape) == tuple(st.shape)
        np.testing.assert_array_equal(sa.numpy(), st.numpy())
        lt, la = dt.log_prob(st), da.log_prob(sa)
        np.testing.assert_allclose(la.detach().numpy(), lt.detach().numpy(), rtol=1e-6, atol=1e-7)
    for name in ("probs", "logits"):
        np.testing.assert_allclose(getattr(da, name).detach().numpy(), getattr(dt, name).detach().numpy(),
                                   rtol=1e-6, atol=1e-7)
    et, ea = dt.entropy(), da.entropy()
    np.testing.assert_allclose(ea.detach().numpy(), et.detach().numpy(), rtol=1e-6)
    (et.sum() + dt.log_prob(torch.zeros(dt.batch_shape, dtype=torch.long)).sum()).backward()
    (ea.sum() + da.log_prob(ag.zeros(tuple(da.batch_shape), dtype=ag.long)).sum()).backward()
    np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(da.mode.numpy(), dt.mode.numpy())
    np.testing.assert_array_equal(da.enumerate_support().numpy(), dt.enumerate_support().numpy())
    assert np.isnan(da.mean.numpy()).all() and tuple(da.mean.shape) == tuple(dt.mean.shape)


def test_categorical_errors_and_validation():
    for lib in (torch, ag):
        with pytest.raises(ValueError, match="Either `probs` or `logits`"):
            lib.distributions.Categorical()
        with pytest.raises(ValueError, match="at least one-dimensional"):
            lib.distributions.Categorical(probs=lib.tensor(1.0))
        with pytest.raises(ValueError, match="to satisfy the constraint Simplex"):
            lib.distributions.Categorical(probs=lib.tensor([0.5, -0.1]))
        d = lib.distributions.Categorical(probs=lib.tensor([0.2, 0.8]))
        with pytest.raises(ValueError, match="within the support"):
            d.log_prob(lib.tensor(2))
        d = lib.distributions.Categorical(probs=lib.tensor([0.5, -0.1]), validate_args=False)  # not checked
    # (ampgrad's Size prints as ampgrad.Size, as its dtypes print as ampgrad.float32)
    assert repr(ag.distributions.Categorical(probs=ag.tensor([0.25, 0.75]))).replace("ampgrad.", "torch.") == \
        repr(torch.distributions.Categorical(probs=torch.tensor([0.25, 0.75])))
    e = ag.distributions.Categorical(logits=ag.zeros(3)).expand((2, 4))
    assert tuple(e.batch_shape) == (2, 4) and tuple(e.logits.shape) == (2, 4, 3)


def test_normal():
    lt, la = _pair([0.5, -1.0, 2.0], requires_grad=True)
    st, sa = _pair([1.0, 0.3, 2.5], requires_grad=True)
    dt, da = torch.distributions.Normal(lt, st), ag.distributions.Normal(la, sa)
    torch.manual_seed(3)
    ag.manual_seed(3)
    np.testing.assert_allclose(da.sample((4,)).numpy(), dt.sample((4,)).numpy(), rtol=1e-6, atol=1e-6)
    rt, ra = dt.rsample((2,)), da.rsample((2,))
    np.testing.assert_allclose(ra.detach().numpy(), rt.detach().numpy(), rtol=1e-6, atol=1e-6)
    vt, va = _pair([0.1, 0.2, 3.0])
    for name in ("log_prob", "cdf"):
        np.testing.assert_allclose(getattr(da, name)(va).detach().numpy(), getattr(dt, name)(vt).detach().numpy(),
                                   rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(da.icdf(ag.tensor([0.1, 0.5, 0.9])).detach().numpy(),
                               dt.icdf(torch.tensor([0.1, 0.5, 0.9])).detach().numpy(), rtol=1e-5)
    (dt.log_prob(vt).sum() + dt.entropy().sum() + rt.sum()).backward()
    (da.log_prob(va).sum() + da.entropy().sum() + ra.sum()).backward()
    np.testing.assert_allclose(la.grad.numpy(), lt.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(sa.grad.numpy(), st.grad.numpy(), rtol=1e-5)
    # numbers broadcast to a 0-d batch; a non-positive scale is rejected
    n = ag.distributions.Normal(0.0, 1.0)
    assert tuple(n.batch_shape) == () and n.loc.dtype == ag.float32
    for lib in (torch, ag):
        with pytest.raises(ValueError, match="GreaterThan"):
            lib.distributions.Normal(lib.tensor([0.0]), lib.tensor([0.0]))


def test_utils_and_constraints():
    p = np.array([0.0, 0.3, 1.0], dtype=np.float32)
    for name in ("clamp_probs", "probs_to_logits"):
        np.testing.assert_array_equal(getattr(ag.distributions.utils, name)(ag.tensor(p)).numpy(),
                                      getattr(torch.distributions.utils, name)(torch.tensor(p)).numpy())
    np.testing.assert_allclose(ag.distributions.utils.probs_to_logits(ag.tensor(p), is_binary=True).numpy(),
                               torch.distributions.utils.probs_to_logits(torch.tensor(p), is_binary=True).numpy(),
                               rtol=1e-6)
    x = np.array([[-1.0, 0.5], [0.25, 0.75]], dtype=np.float32)
    for name in ("real", "positive", "nonnegative", "unit_interval", "simplex", "real_vector", "boolean"):
        ct, ca = getattr(torch.distributions.constraints, name), getattr(ag.distributions.constraints, name)
        np.testing.assert_array_equal(ca.check(ag.tensor(x)).numpy(), ct.check(torch.tensor(x)).numpy())
        assert repr(ca) == repr(ct)
    assert ag.distributions.constraints.is_dependent(ag.distributions.Categorical.support)
    a, b = ag.distributions.utils.broadcast_all(ag.tensor([1.0, 2.0], dtype=ag.float64), 3)
    assert a.dtype == b.dtype == ag.float64 and b.tolist() == [3.0, 3.0]
    assert (ag.inf, ag.pi, ag.e) == (torch.inf, torch.pi, torch.e) and np.isnan(ag.nan) and ag.newaxis is None


def test_tensor_from_sequences():
    cases = [deque([1.5, 2.0]), deque([1, 2]), range(4), [deque([1, 2]), deque([3, 4])], deque([True, False])]
    for data in cases:
        t, a = torch.tensor(data), ag.tensor(data)
        assert str(a.dtype).split(".")[1] == str(t.dtype).split(".")[1], data
        assert a.tolist() == t.tolist()
    for bad in ({1: 2}, {1, 2}, object()):
        with pytest.raises(RuntimeError, match="Could not infer dtype of"):
            torch.tensor(bad)
        with pytest.raises(RuntimeError, match="Could not infer dtype of " + type(bad).__name__):
            ag.tensor(bad)
