"""The API surface that public programs needed (tests/test_programs.py), each piece against torch:
save/load in torch's checkpoint format, the distributed / nn.parallel stubs nanoGPT imports,
compile as the identity, CPU Generator objects, Tensor.add_ with a tensor alpha."""
import io
import os
import pickle

import numpy as np
import pytest

import ampgrad

torch = pytest.importorskip("torch")


def _np(t):
    if t.dtype in (ampgrad.bfloat16, torch.bfloat16):
        t = t.float()
    return t.detach().numpy()


def _state():
    l = ampgrad.nn.Linear(3, 2)
    return {"sd": l.state_dict(), "p": l.weight, "bf": ampgrad.arange(4.).to(ampgrad.bfloat16),
            "h": ampgrad.ones(2, dtype=ampgrad.float16), "i": ampgrad.arange(5), "b": ampgrad.tensor([True, False]),
            "scalar": ampgrad.tensor(2.5), "view": l.weight.detach()[1:], "tr": l.weight.detach().t(),
            "size": ampgrad.Size([2, 3]), "dtype": ampgrad.float16, "dev": ampgrad.device("cpu"),
            "meta": {"iter": 3, "name": "x", "lst": [1.5, None]}, "empty": ampgrad.zeros(0, 4)}


def _check_same(a, b):
    """a: ampgrad or torch objects, b: the other library's (or the same library's) load."""
    if isinstance(a, dict):
        assert list(a) == list(b)
        for k in a:
            _check_same(a[k], b[k])
    elif hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, np.ndarray):
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
        assert tuple(a.stride()) == tuple(b.stride())
        np.testing.assert_array_equal(_np(b), _np(a))
        assert a.requires_grad == b.requires_grad
    elif isinstance(a, (ampgrad.dtype, torch.dtype, ampgrad.device, torch.device)):
        assert str(a).split(".")[-1] == str(b).split(".")[-1]
    else:
        assert a == b


def test_save_load_roundtrip(tmp_path):
    obj = _state()
    path = str(tmp_path / "ck.pt")
    ampgrad.save(obj, path)
    back = ampgrad.load(path)
    _check_same(obj, back)
    assert isinstance(back["p"], ampgrad.nn.Parameter) and back["p"].requires_grad
    assert isinstance(back["size"], ampgrad.Size)
    # views of one tensor share one storage record, as in torch
    assert back["view"].untyped_storage_ptr() == back["tr"].untyped_storage_ptr()
    # file objects as well as paths
    buf = io.BytesIO()
    ampgrad.save(obj, buf)
    buf.seek(0)
    _check_same(obj, ampgrad.load(buf))


def test_ampgrad_checkpoint_loads_in_torch(tmp_path):
    obj = _state()
    path = str(tmp_path / "ck.pt")
    ampgrad.save(obj, path)
    t = torch.load(path)  # torch's default weights_only=True: only torch's allowed globals are used
    _check_same(obj, t)
    assert isinstance(t["p"], torch.nn.Parameter) and isinstance(t["size"], torch.Size)
    assert t["view"].untyped_storage().data_ptr() == t["tr"].untyped_storage().data_ptr()


def test_torch_checkpoint_loads_in_ampgrad(tmp_path):
    l = torch.nn.Linear(3, 2)
    obj = {"sd": l.state_dict(), "p": l.weight, "bf": torch.arange(4.).bfloat16(), "i": torch.arange(5),
           "tr": torch.arange(6.).reshape(2, 3).t(), "sl": torch.arange(10.)[2:8:2], "size": torch.Size([4]),
           "dtype": torch.int64, "opt": torch.optim.AdamW(l.parameters()).state_dict()}
    path = str(tmp_path / "t.pt")
    torch.save(obj, path)
    a = ampgrad.load(path, map_location="cpu")
    _check_same(obj, a)
    assert isinstance(a["p"], ampgrad.nn.Parameter)
    a2 = ampgrad.load(path, map_location=lambda storage, loc: storage)
    _check_same(obj["sd"], a2["sd"])


def test_optimizer_and_module_state_roundtrip_across_libraries(tmp_path):
    """A model + optimizer checkpoint written by ampgrad resumes in torch with the same next step."""
    torch.manual_seed(0)
    tm = torch.nn.Linear(4, 3)
    am = ampgrad.nn.Linear(4, 3)
    am.load_state_dict({k: ampgrad.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    aopt = ampgrad.optim.AdamW(am.parameters(), lr=0.1)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    am(ampgrad.tensor(x)).square().sum().backward()
    aopt.step()
    path = str(tmp_path / "c.pt")
    ampgrad.save({"model": am.state_dict(), "optimizer": aopt.state_dict()}, path)
    ck = torch.load(path)
    tm.load_state_dict(ck["model"])
    topt = torch.optim.AdamW(tm.parameters(), lr=0.1)
    topt.load_state_dict(ck["optimizer"])
    for m, opt, lib in ((am, aopt, ampgrad), (tm, topt, torch)):
        opt.zero_grad()
        m(lib.tensor(x)).square().sum().backward()
        opt.step()
    for k in tm.state_dict():
        np.testing.assert_allclose(am.state_dict()[k].numpy(), tm.state_dict()[k].detach().numpy(), rtol=1e-6)


def test_load_errors(tmp_path):
    p = tmp_path / "legacy.pt"
    with open(p, "wb") as f:
        pickle.dump({"a": 1}, f)
    with pytest.raises(pickle.UnpicklingError):  # torch's weights_only load raises this type too
        ampgrad.load(str(p))
    with pytest.raises(FileNotFoundError):
        ampgrad.load(str(tmp_path / "missing.pt"))


def test_distributed_stubs_match_torch_uninitialized(monkeypatch):
    import ampgrad.distributed as adist
    import torch.distributed as tdist
    from ampgrad.nn.parallel import DistributedDataParallel as ADDP, DataParallel as ADP
    assert adist.is_available() is adist._mpi.available() and adist.is_initialized() is tdist.is_initialized() is False
    for name in ("get_rank", "get_world_size", "barrier"):
        with pytest.raises(ValueError) as ea:
            getattr(adist, name)()
        with pytest.raises(ValueError) as et:
            getattr(tdist, name)()
        assert str(ea.value) == str(et.value)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        ADDP(ampgrad.nn.Linear(2, 2))
    with pytest.raises(AssertionError):
        adist.destroy_process_group()
    # "gloo" runs on the MPI backend (a one-time note); env:// without RANK raises torch's ValueError
    monkeypatch.delenv("RANK", raising=False)
    with pytest.warns(UserWarning, match="MPI backend"), pytest.raises(ValueError) as ea:
        adist.init_process_group(backend="gloo")
    with pytest.raises(ValueError) as et:
        tdist.init_process_group(backend="gloo")
    assert str(ea.value) == str(et.value)
    # DataParallel without GPUs runs the module itself and prefixes state_dict keys with "module."
    m = ampgrad.nn.Linear(2, 3)
    dp = ADP(m)
    tdp = torch.nn.DataParallel(torch.nn.Linear(2, 3))
    assert list(dp.state_dict()) == list(tdp.state_dict())
    x = ampgrad.ones(4, 2)
    np.testing.assert_array_equal(dp(x).detach().numpy(), m(x).detach().numpy())


def test_compile_is_identity():
    m = ampgrad.nn.Linear(2, 2)
    assert ampgrad.compile(m) is m
    f = lambda x: x * 2  # noqa: E731
    assert ampgrad.compile(f) is f
    deco = ampgrad.compile(mode="max-autotune")
    assert deco(f) is f
    with pytest.raises(RuntimeError):
        ampgrad.compile(m, mode="default", options={})


# ------------------------------------------------------------------------------- CPU Generator objects

def test_generator_streams_match_torch():
    ga, gt = ampgrad.Generator(), torch.Generator()
    assert ga.initial_seed() == gt.initial_seed() == 67280421310721
    ga.manual_seed(1234)
    gt.manual_seed(1234)
    assert ga.initial_seed() == gt.initial_seed() == 1234
    ampgrad.manual_seed(0)
    torch.manual_seed(0)
    draws = [
        lambda L, g: L.rand(5, generator=g),
        lambda L, g: L.randn(3, generator=g),  # Box-Muller with a cached second sample
        lambda L, g: L.randn(40, generator=g),  # torch's normal_fill
        lambda L, g: L.rand(4, dtype=L.float64, generator=g),
        lambda L, g: L.randint(0, 100, (7,), generator=g),
        lambda L, g: L.randint(-2 ** 40, 2 ** 40, (3,), generator=g),
        lambda L, g: L.randperm(20, generator=g),
        lambda L, g: L.normal(2.0, 3.0, (5,), generator=g),
        lambda L, g: L.normal(L.zeros(3), L.ones(3), generator=g),
        lambda L, g: L.multinomial(L.tensor([0.1, 0.5, 0.4]), 6, replacement=True, generator=g),
        lambda L, g: L.multinomial(L.tensor([0.1, 0.5, 0.2, 0.2]), 3, generator=g),
        lambda L, g: L.empty(6).uniform_(-2, 3, generator=g),
        lambda L, g: L.empty(6).normal_(1, 2, generator=g),
        lambda L, g: L.empty(6).exponential_(1.5, generator=g),
        lambda L, g: L.bernoulli(L.full((8,), 0.3), generator=g),
        lambda L, g: L.empty(4, dtype=L.int64).random_(generator=g),
        lambda L, g: L.empty(4).random_(generator=g),
        lambda L, g: L.empty(4, dtype=L.int32).random_(3, 9, generator=g),
        lambda L, g: L.empty(4).random_(10, generator=g),
        lambda L, g: L.nn.init.kaiming_uniform_(L.empty(3, 4), generator=g),
        lambda L, g: L.nn.init.trunc_normal_(L.empty(20), generator=g),
    ]
    for i, f in enumerate(draws):
        a, t = f(ampgrad, ga), f(torch, gt)
        if t.dtype.is_floating_point:  # torch's AVX2 normal_fill rounds log/cos/sin with SLEEF (1 ulp)
            np.testing.assert_allclose(_np(a), _np(t), rtol=1e-5, atol=1e-6, err_msg=str(i))
        else:
            np.testing.assert_array_equal(_np(a), _np(t), err_msg=str(i))
    # the default generator was not touched by any of these
    np.testing.assert_array_equal(ampgrad.rand(4).numpy(), torch.rand(4).numpy())
    # the state in torch's layout, byte for byte, and restored either way
    np.testing.assert_array_equal(ga.get_state().numpy(), gt.get_state().numpy())
    st = gt.get_state()
    ga2 = ampgrad.Generator().set_state(ampgrad.tensor(st.numpy()))
    np.testing.assert_array_equal(ampgrad.randn(5, generator=ga2).numpy(), torch.randn(5, generator=gt).numpy())


def test_bernoulli_scalar_p_uses_the_generator():
    # torch's CPU bernoulli_(float p) samples with MKL from a seed drawn from the generator (not
    # reproduced); ampgrad's draws come from the given generator: same seed, same mask
    a = ampgrad.empty(50).bernoulli_(0.6, generator=ampgrad.Generator().manual_seed(4))
    b = ampgrad.empty(50).bernoulli_(0.6, generator=ampgrad.Generator().manual_seed(4))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert 0 < a.sum().item() < 50


def test_generator_state_fresh_and_cached_normal():
    for seed in (0, 7, 2 ** 40 + 3):
        ga, gt = ampgrad.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
        np.testing.assert_array_equal(ga.get_state().numpy(), gt.get_state().numpy())
        ampgrad.randn(1, generator=ga)  # leaves a cached normal
        torch.randn(1, generator=gt)
        np.testing.assert_array_equal(ga.get_state().numpy(), gt.get_state().numpy())
        ampgrad.rand(624 * 2 - 1, generator=ga)
        torch.rand(624 * 2 - 1, generator=gt)
        np.testing.assert_array_equal(ga.get_state().numpy(), gt.get_state().numpy())
    # default generator and the module-level state functions
    ampgrad.manual_seed(5)
    torch.manual_seed(5)
    ampgrad.rand(3)
    torch.rand(3)
    np.testing.assert_array_equal(ampgrad.get_rng_state().numpy(), torch.get_rng_state().numpy())
    s = ampgrad.get_rng_state()
    x = ampgrad.randn(10)
    ampgrad.set_rng_state(s)
    np.testing.assert_array_equal(ampgrad.randn(10).numpy(), x.numpy())
    assert ampgrad.default_generator.initial_seed() == 5


def test_generator_errors_like_torch():
    g = ampgrad.Generator()
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056 but found the input RNG "
                                           "state size to be 10"):
        g.set_state(ampgrad.zeros(10, dtype=ampgrad.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        g.set_state(ampgrad.zeros(5056))
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        g.manual_seed(2 ** 64)
    with pytest.raises(TypeError):
        ampgrad.randn(2, generator=3)
    st = g.get_state()
    bad = st.clone()
    bad[12:16] = 0  # `seeded` = 0
    with pytest.raises(RuntimeError):
        g.set_state(bad)
    np.testing.assert_array_equal(g.get_state().numpy(), st.numpy())  # unchanged by the failed call


def test_dataloader_and_samplers_with_generator():
    data = list(range(23))
    for L in (ampgrad, torch):
        L.manual_seed(3)
    orders = []
    for L in (ampgrad, torch):
        U = L.utils.data
        g = L.Generator().manual_seed(11)
        a = list(U.RandomSampler(data, generator=g))
        b = list(U.RandomSampler(data, replacement=True, num_samples=40, generator=g))
        c = list(U.SubsetRandomSampler(list(range(5, 15)), generator=g))
        d = [x.tolist() for x in U.DataLoader(data, batch_size=5, shuffle=True, generator=g)]
        e = [len(s) for s in U.random_split(data, [0.5, 0.5], generator=L.Generator().manual_seed(2))]
        f = list(U.WeightedRandomSampler([0.1, 0.2, 0.7], 10, generator=g))
        orders.append((a, b, c, d, e, f, list(U.RandomSampler(data))))
    assert orders[0] == orders[1]


def test_generator_pickles():
    g = ampgrad.Generator().manual_seed(9)
    ampgrad.rand(3, generator=g)
    g2 = pickle.loads(pickle.dumps(g))
    np.testing.assert_array_equal(ampgrad.rand(4, generator=g).numpy(), ampgrad.rand(4, generator=g2).numpy())


# ------------------------------------------------------------- Scalar arguments given as 0-dim tensors

def test_scalar_arguments_take_0dim_tensors():
    """torch parses a Scalar argument from a 0-dim tensor that does not require grad (its item());
    a 1-element 1-dim tensor or one that requires grad is a TypeError."""
    res = []
    for L in (ampgrad, torch):
        x, y = L.tensor([1.0, 2.0, 3.0]), L.tensor([0.5, -1.0, 4.0])
        i = L.tensor([1, 2, 3])
        res.append([x.clone().add_(y, alpha=L.tensor(2.0)), L.add(x, y, alpha=L.tensor(3)),
                    x.sub(y, alpha=L.tensor(0.25)), i.clone().add_(i, alpha=L.tensor(2)),
                    x.clone().sub_(y, alpha=L.tensor(-1.5, dtype=L.float64))])
        for bad in (L.tensor([2.0]), L.tensor(2.0, requires_grad=True)):
            z = x.clone()
            with pytest.raises(TypeError):
                z.add_(y, alpha=bad)
            np.testing.assert_array_equal(_np(z), _np(x))  # unchanged by the failed call
    for a, t in zip(*res):
        assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(_np(a), _np(t))


def test_device_and_layout_queries():
    for L in (ampgrad, torch):
        x = L.ones(2)
        for name in ("is_xpu", "is_mps", "is_meta", "is_sparse", "is_quantized", "is_mkldnn", "is_nested",
                     "is_cuda"):
            assert getattr(x, name) is False, name
        assert x.is_cpu is True
