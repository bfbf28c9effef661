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


def test_distributed_stubs_match_torch_uninitialized():
    import ampgrad.distributed as adist
    import torch.distributed as tdist
    from ampgrad.nn.parallel import DistributedDataParallel as ADDP, DataParallel as ADP
    assert adist.is_available() is True and adist.is_initialized() is tdist.is_initialized() is False
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
    with pytest.raises(RuntimeError):
        adist.init_process_group(backend="gloo")
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
