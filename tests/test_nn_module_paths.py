"""Note [torch's module paths]: every torch.nn class ampgrad has lives, and names itself, at torch's path
(ampgrad.nn.modules.<file> for torch.nn.modules.<file>), so whole-module pickles and scripts that name classes
by path (torch.nn.modules.activation.MultiheadAttention) work across the two libraries."""
import importlib
import io

import numpy as np
import pytest

import ampgrad

# Outside torch.nn.modules in torch; ampgrad keeps them elsewhere (no pickled module names them).
_ELSEWHERE = {"DataParallel", "LinearCrossEntropyOptions"}


def test_every_nn_class_at_torchs_path(torch):
    checked = 0
    for name in dir(torch.nn):
        t = getattr(torch.nn, name)
        if not isinstance(t, type) or name in _ELSEWHERE or not hasattr(ampgrad.nn, name):
            continue
        a = getattr(ampgrad.nn, name)
        home = "ampgrad" + t.__module__[len("torch"):]
        assert a.__module__ == home, (name, t.__module__, a.__module__)
        assert getattr(importlib.import_module(home), name) is a, (name, home)
        checked += 1
    assert checked > 150


def test_torch_whole_model_pickle_loads(torch):
    """A torch model saved whole (classes from padding, upsampling, activation, sparse, pixelshuffle) loads in
    ampgrad, with weights_only=False and with safe_globals naming the classes by torch's paths."""
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.ReflectionPad2d(1), torch.nn.Conv2d(4, 8, 3), torch.nn.Upsample(scale_factor=2),
                            torch.nn.PixelShuffle(2), torch.nn.Softmax2d(), torch.nn.Flatten(),
                            torch.nn.Linear(2 * 32 * 32, 6))
    att = torch.nn.MultiheadAttention(6, 2, batch_first=True)
    bag = torch.nn.EmbeddingBag(10, 6, mode="mean")
    buf = io.BytesIO()
    torch.save({"net": m, "att": att, "bag": bag}, buf)
    x = np.random.default_rng(0).standard_normal((2, 4, 8, 8)).astype(np.float32)
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 9])
    off = np.array([0, 4])
    with torch.no_grad():
        y_t = m(torch.from_numpy(x))
        q = y_t.reshape(2, 1, 6)
        a_t = att(q, q, q)[0]
        b_t = bag(torch.from_numpy(idx), torch.from_numpy(off))

    safe = [ampgrad.nn.modules.padding.ReflectionPad2d, ampgrad.nn.modules.conv.Conv2d,
            ampgrad.nn.modules.upsampling.Upsample, ampgrad.nn.modules.pixelshuffle.PixelShuffle,
            ampgrad.nn.modules.activation.Softmax2d, ampgrad.nn.modules.flatten.Flatten,
            ampgrad.nn.modules.linear.Linear, ampgrad.nn.modules.container.Sequential,
            ampgrad.nn.modules.activation.MultiheadAttention, ampgrad.nn.modules.linear.NonDynamicallyQuantizableLinear,
            ampgrad.nn.modules.sparse.EmbeddingBag]
    for kwargs in ({"weights_only": False}, {}):
        buf.seek(0)
        if kwargs:
            d = ampgrad.load(buf, **kwargs)
        else:
            with ampgrad.serialization.safe_globals(safe):
                d = ampgrad.load(buf)
        assert type(d["att"]) is ampgrad.nn.MultiheadAttention and type(d["net"][0]) is ampgrad.nn.ReflectionPad2d
        with ampgrad.no_grad():
            y_a = d["net"](ampgrad.from_numpy(x))
            q = y_a.reshape(2, 1, 6)
            a_a = d["att"](q, q, q)[0]
            b_a = d["bag"](ampgrad.from_numpy(idx), ampgrad.from_numpy(off))
        np.testing.assert_allclose(y_a.numpy(), y_t.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a_a.numpy(), a_t.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(b_a.numpy(), b_t.numpy(), rtol=1e-6, atol=1e-7)
    # without the allow-list the weights-only default refuses, naming torch's path as torch does
    buf.seek(0)
    with pytest.raises(Exception, match="torch.nn.modules"):
        ampgrad.load(buf)
