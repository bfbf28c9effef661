"""The spatial nn ops (csrc/ops/spatial.cpp, kernels/cpu/spatial.cpp) against torch: F.pad (every mode,
negative pads, values), F.interpolate (every mode, size / scale_factor, align_corners,
recompute_scale_factor), pixel_(un)shuffle, channel_shuffle, unfold / fold, max_unpool, lp_pool: values
and gradients in float32 / float64 / bfloat16, non-contiguous, batch-less and empty-batch inputs,
backward node names, errors (type and message), gradcheck / gradgradcheck, autocast dtypes, modules."""
import warnings

import numpy as np
import pytest

import ampgrad
import ampgrad.nn.functional as AF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

TOL = {"float32": (2e-6, 2e-6), "float64": (1e-12, 1e-12), "bfloat16": (2e-2, 2e-2)}


def both(arr, dtype="float32", grad=True, noncontig=False):
    a = ampgrad.tensor(arr).to(getattr(ampgrad, dtype))
    t = torch.tensor(arr).to(getattr(torch, dtype))
    if noncontig:  # same values, transposed storage
        a = a.transpose(-1, -2).contiguous().transpose(-1, -2)
        t = t.transpose(-1, -2).contiguous().transpose(-1, -2)
        assert not a.is_contiguous()
    if grad:
        a.requires_grad_(True)
        t.requires_grad_(True)
    return a, t


def np_of(x):
    if isinstance(x, torch.Tensor):
        return x.detach().double().numpy()
    return x.detach().to(ampgrad.float64).numpy()


def close(a, t, dtype="float32", scale=1.0):
    rtol, atol = TOL[dtype]
    assert tuple(a.shape) == tuple(t.shape), (tuple(a.shape), tuple(t.shape))
    assert str(a.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(np_of(a), np_of(t), rtol=rtol * scale, atol=atol * scale)


def check(fa, ft, shape, dtype="float32", noncontig=False, seed=0, scale=1.0, names=True):
    """Runs fa / ft on the same input: values, the gradient for a fixed random cotangent, node names."""
    rng = np.random.RandomState(seed)
    arr = rng.randn(*shape).astype(np.float64)
    grad = dtype != "int64"
    a, t = both(arr, dtype, grad=grad, noncontig=noncontig)
    ya, yt = fa(a), ft(t)
    close(ya, yt, dtype, scale)
    if not grad:
        return
    if names:
        assert ya.grad_fn.name() == yt.grad_fn.name()
    v = rng.randn(*yt.shape)
    ya.backward(ampgrad.tensor(v).to(ya.dtype))
    yt.backward(torch.tensor(v).to(yt.dtype))
    close(a.grad, t.grad, dtype, scale * 4)


def err(fa, ft, match_message=True):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(type(et.value)) as ea:
        fa()
    if match_message:
        assert str(ea.value).split("\n")[0] == str(et.value).split("\n")[0]


# ---------------------------------------------------------------- pad
PADS = {
    1: [[1, 2], [0, 0], [-1, 2], [2, -1], [-1, -1]],
    2: [[1, 2, 0, 1], [-1, 1, 2, -1], [1, 1, 1, 1]],
    3: [[1, 0, 1, 2, 0, 1], [-1, 1, 1, 0, 1, -1]],
}


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_pad_values_and_grads(mode, nd, batched, dtype):
    shape = ((2,) if batched else ()) + (3,) + (4, 5, 3)[:nd]
    for p in PADS[nd]:
        for nc in (False, True):
            check(lambda x: AF.pad(x, p, mode=mode), lambda x: TF.pad(x, p, mode=mode), shape, dtype, noncontig=nc)


@pytest.mark.parametrize("value", [0.0, 2.5, -1])
def test_pad_constant_any_dims(value):
    check(lambda x: AF.pad(x, [1, 2, -1, 1, 0, 2, 1, 1], value=value), lambda x: TF.pad(x, [1, 2, -1, 1, 0, 2, 1, 1], value=value),
          (2, 3, 4, 5))
    check(lambda x: AF.pad(x, [2, 1], value=value), lambda x: TF.pad(x, [2, 1], value=value), (5,))


def test_pad_circular_negative_crops_from_the_right_side():
    # issue 13: circular with negative pads wrapped from the wrong side
    x = np.arange(12.0).reshape(1, 2, 6)
    for p in ([2, -1], [-1, 2], [-2, 3], [3, -2], [-1, -1]):
        a, t = both(x, grad=False)
        close(AF.pad(a, p, mode="circular"), TF.pad(t, p, mode="circular"))


def test_pad_integer_and_bool():
    x = np.arange(24).reshape(2, 3, 4)
    for mode in ("constant", "reflect", "replicate", "circular"):
        a, t = ampgrad.tensor(x), torch.tensor(x)
        np.testing.assert_array_equal(AF.pad(a, [1, 2], mode=mode).numpy(), TF.pad(t, [1, 2], mode=mode).numpy())
    a, t = ampgrad.tensor([True, False]), torch.tensor([True, False])
    np.testing.assert_array_equal(AF.pad(a, [1, 1], value=1).numpy(), TF.pad(t, [1, 1], value=1).numpy())
    np.testing.assert_array_equal(AF.pad(a.unsqueeze(0), [1, 1], mode="circular").numpy(),
                                  TF.pad(t.unsqueeze(0), [1, 1], mode="circular").numpy())


def test_pad_empty_batch():
    for mode in ("constant", "reflect", "replicate", "circular"):
        check(lambda x: AF.pad(x, [1, 1, 2, 0], mode=mode), lambda x: TF.pad(x, [1, 1, 2, 0], mode=mode), (0, 2, 3, 4), names=False)


@pytest.mark.parametrize("args", [
    ((1, 2, 3), [4, 4], "reflect"), ((1, 2, 3), [3, 0], "reflect"), ((1, 2, 3), [-4, 0], "reflect"),
    ((1, 2, 3, 3), [4, 4, 0, 0], "reflect"), ((1, 2, 3, 3), [0, 0, 3, 3], "reflect"), ((1, 2, 3, 3, 3), [0, 0, 0, 0, 3, 3], "reflect"),
    ((2, 0, 3), [1, 1], "reflect"), ((2, 3, 0), [1, 1], "replicate"), ((2, 0, 3, 3), [1, 1, 1, 1], "replicate"),
    ((2, 3, 2), [-2, -1], "replicate"), ((2, 3, 2), [-2, -1], "circular"), ((2, 3, 2), [3, 0], "circular"),
    ((3,), [1, 1], "reflect"), ((2, 2, 3, 3, 3, 3), [1, 1], "replicate"), ((2, 3, 4, 5), [1, 1], "reflect"),
    ((1, 2, 3), [1, 1, 1], "reflect"), ((1, 2, 3), [1, 1] * 4, "constant"), ((1, 2, 3), [1, 1], "foo"),
    ((1, 2, 3), [-5, 1], "constant"),
])
def test_pad_errors(args):
    shape, p, mode = args
    a, t = ampgrad.zeros(*shape), torch.zeros(*shape)
    err(lambda: AF.pad(a, p, mode=mode), lambda: TF.pad(t, p, mode=mode))


def test_pad_value_with_non_constant_mode():
    a, t = ampgrad.zeros(1, 2, 3), torch.zeros(1, 2, 3)
    err(lambda: AF.pad(a, [1, 1], mode="reflect", value=1), lambda: TF.pad(t, [1, 1], mode="reflect", value=1))
    close(AF.pad(a, [1, 1], mode="reflect", value=0), TF.pad(t, [1, 1], mode="reflect", value=0))


def test_pad_integer_dtype_errors():
    a, t = ampgrad.tensor([[True, False]]), torch.tensor([[True, False]])
    for mode in ("reflect", "replicate"):
        err(lambda: AF.pad(a, [1, 1], mode=mode), lambda: TF.pad(t, [1, 1], mode=mode))


# ---------------------------------------------------------------- interpolate
MODES = {1: ["nearest", "nearest-exact", "linear", "area"], 2: ["nearest", "nearest-exact", "bilinear", "bicubic", "area"],
         3: ["nearest", "nearest-exact", "trilinear", "area"]}
SIZES = {1: (7,), 2: (5, 6), 3: (4, 5, 3)}


def _interp_cases(nd):
    in_sp = SIZES[nd]
    return [
        {"scale_factor": 2},
        {"scale_factor": 0.5},
        {"scale_factor": 1.7},
        {"scale_factor": 1.7, "recompute_scale_factor": True},
        {"scale_factor": tuple([0.6, 2.3, 1.5][:nd])},
        {"size": tuple([3, 11, 4][:nd])},
        {"size": tuple(in_sp)},
        {"size": tuple(2 * s for s in in_sp)},
        {"size": 1},
    ]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_interpolate_values_and_grads(nd, dtype):
    shape = (2, 3) + SIZES[nd]
    for mode in MODES[nd]:
        for kw in _interp_cases(nd):
            aligns = [None] if mode in ("nearest", "nearest-exact", "area") else [False, True]
            for ac in aligns:
                kw2 = dict(kw, mode=mode, align_corners=ac)
                names = mode != "area"  # torch's area with output 1 is a mean (the pooling op's business)
                check(lambda x: AF.interpolate(x, **kw2), lambda x: TF.interpolate(x, **kw2), shape, dtype, names=names,
                      scale=5.0 if mode == "bicubic" else 1.0)


def test_interpolate_noncontiguous_and_empty_batch():
    for mode, kw in (("bilinear", {"align_corners": False}), ("bicubic", {"align_corners": True}), ("nearest", {})):
        check(lambda x: AF.interpolate(x, scale_factor=1.5, mode=mode, **kw),
              lambda x: TF.interpolate(x, scale_factor=1.5, mode=mode, **kw), (2, 3, 4, 5), noncontig=True, scale=5)
        check(lambda x: AF.interpolate(x, size=(3, 7), mode=mode, **kw),
              lambda x: TF.interpolate(x, size=(3, 7), mode=mode, **kw), (0, 3, 4, 5), names=False)


def test_interpolate_uint8_nearest():
    x = np.random.RandomState(0).randint(0, 255, (1, 2, 4, 5)).astype(np.uint8)
    for mode in ("nearest", "nearest-exact"):
        np.testing.assert_array_equal(AF.interpolate(ampgrad.tensor(x), scale_factor=1.5, mode=mode).numpy(),
                                      TF.interpolate(torch.tensor(x), scale_factor=1.5, mode=mode).numpy())


def test_interpolate_deprecated_aliases():
    rng = np.random.RandomState(0)
    a, t = both(rng.randn(1, 2, 3, 4), grad=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        close(AF.upsample(a, scale_factor=2, mode="bilinear"), TF.upsample(t, scale_factor=2, mode="bilinear"))
        close(AF.upsample_nearest(a, size=(5, 7)), TF.upsample_nearest(t, size=(5, 7)))
        close(AF.upsample_bilinear(a, scale_factor=2), TF.upsample_bilinear(t, scale_factor=2))
    with pytest.warns(UserWarning, match="deprecated"):
        AF.upsample_nearest(a, scale_factor=2)


@pytest.mark.parametrize("call", [
    lambda F, x: F.interpolate(x, size=(0, 3), mode="bilinear"),
    lambda F, x: F.interpolate(x[:, :0], size=(3, 3), mode="bilinear"),
    lambda F, x: F.interpolate(x, scale_factor=0.1, mode="nearest"),
    lambda F, x: F.interpolate(x, size=3, mode="linear"),
    lambda F, x: F.interpolate(x, size=3, mode="trilinear"),
    lambda F, x: F.interpolate(x, size=3, scale_factor=2),
    lambda F, x: F.interpolate(x),
    lambda F, x: F.interpolate(x, size=(3, 3, 3)),
    lambda F, x: F.interpolate(x, scale_factor=(2, 2, 2)),
    lambda F, x: F.interpolate(x, size=3, align_corners=True),
    lambda F, x: F.interpolate(x, size=3, recompute_scale_factor=True),
    lambda F, x: F.interpolate(x.long(), size=3, mode="bilinear"),
    lambda F, x: F.interpolate(x.bool(), size=3, mode="nearest"),
    lambda F, x: F.interpolate(x[0, 0], size=3),
    lambda F, x: F.interpolate(x, size=3, mode="linear", antialias=True),
    lambda F, x: F.interpolate(x, size=3, mode="nearest", antialias=True),
])
def test_interpolate_errors(call):
    a, t = ampgrad.zeros(1, 2, 4, 4), torch.zeros(1, 2, 4, 4)
    err(lambda: call(AF, a), lambda: call(TF, t), match_message=False)


# ---------------------------------------------------------------- shuffles
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_pixel_shuffle_unshuffle_channel_shuffle(dtype):
    for shape in ((2, 8, 3, 5), (8, 3, 5), (2, 1, 8, 2, 3)):
        check(lambda x: AF.pixel_shuffle(x, 2), lambda x: TF.pixel_shuffle(x, 2), shape, dtype)
        check(lambda x: ampgrad.pixel_shuffle(x, 2), lambda x: torch.pixel_shuffle(x, 2), shape, dtype, noncontig=True)
    for shape in ((2, 3, 4, 6), (3, 4, 6)):
        check(lambda x: AF.pixel_unshuffle(x, 2), lambda x: TF.pixel_unshuffle(x, 2), shape, dtype)
        check(lambda x: ampgrad.pixel_unshuffle(x, 2), lambda x: torch.pixel_unshuffle(x, 2), shape, dtype, noncontig=True)
    for shape in ((2, 6, 3, 4), (2, 6, 5)):
        check(lambda x: AF.channel_shuffle(x, 3), lambda x: TF.channel_shuffle(x, 3), shape, dtype)
        check(lambda x: ampgrad.nn.ChannelShuffle(2)(x), lambda x: torch.nn.ChannelShuffle(2)(x), shape, dtype)


@pytest.mark.parametrize("call", [
    lambda m, x: m.nn.functional.pixel_shuffle(x[:, :7], 2), lambda m, x: m.nn.functional.pixel_shuffle(x[0, 0], 2),
    lambda m, x: m.nn.functional.pixel_shuffle(x, 0), lambda m, x: m.nn.functional.pixel_unshuffle(x[:, :, :3], 2),
    lambda m, x: m.nn.functional.pixel_unshuffle(x[:, :, :, :3], 2), lambda m, x: m.nn.functional.pixel_unshuffle(x, 0),
    lambda m, x: m.nn.functional.pixel_unshuffle(x[0, 0], 2), lambda m, x: m.nn.functional.channel_shuffle(x, 3),
    lambda m, x: m.nn.functional.channel_shuffle(x, 0), lambda m, x: m.nn.functional.channel_shuffle(x[0, 0], 2),
])
def test_shuffle_errors(call):
    err(lambda: call(ampgrad, ampgrad.zeros(1, 8, 4, 4)), lambda: call(torch, torch.zeros(1, 8, 4, 4)))


# ---------------------------------------------------------------- unfold / fold
UNFOLD = [
    {"kernel_size": 3}, {"kernel_size": (2, 3), "stride": 2}, {"kernel_size": 2, "dilation": 2, "padding": 1},
    {"kernel_size": (3, 1), "dilation": (1, 2), "padding": (2, 0), "stride": (2, 3)},
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_unfold_fold(dtype):
    for kw in UNFOLD:
        for shape in ((2, 3, 7, 8), (3, 7, 8)):
            for nc in (False, True):
                check(lambda x: AF.unfold(x, **kw), lambda x: TF.unfold(x, **kw), shape, dtype, noncontig=nc)
            # fold takes unfold's output shape
            cols = TF.unfold(torch.zeros(*shape), **kw).shape
            check(lambda x: AF.fold(x, (7, 8), **kw), lambda x: TF.fold(x, (7, 8), **kw), tuple(cols), dtype)
    check(lambda x: AF.unfold(x, 2), lambda x: TF.unfold(x, 2), (0, 3, 4, 4), names=False)
    check(lambda x: AF.fold(x, (4, 4), 2), lambda x: TF.fold(x, (4, 4), 2), (0, 12, 9), names=False)
    check(lambda x: ampgrad.nn.Unfold(2, padding=1)(x), lambda x: torch.nn.Unfold(2, padding=1)(x), (1, 2, 3, 3))
    check(lambda x: ampgrad.nn.Fold((3, 3), 2, padding=1)(x), lambda x: torch.nn.Fold((3, 3), 2, padding=1)(x), (1, 8, 16))


@pytest.mark.parametrize("call", [
    lambda F, x: F.unfold(x, (5, 5)), lambda F, x: F.unfold(x, (0, 5)), lambda F, x: F.unfold(x, 2, dilation=0),
    lambda F, x: F.unfold(x, 2, padding=-1), lambda F, x: F.unfold(x, 2, stride=0), lambda F, x: F.unfold(x[0, 0], 2),
    lambda F, x: F.unfold(x[:, :0], 2), lambda F, x: F.unfold(x.long(), 2), lambda F, x: F.unfold(x, (2, 2, 2)),
    lambda F, x: F.fold(x.reshape(1, 7, 4), (4, 4), 2), lambda F, x: F.fold(x.reshape(1, 8, 4)[:, :, :3], (4, 4), 2),
    lambda F, x: F.fold(x.reshape(1, 8, 4, 1), (4, 4), 2), lambda F, x: F.fold(x.reshape(1, 8, 4), (4, 4), 0),
    lambda F, x: F.fold(x.reshape(1, 8, 4), (1, 1), 2), lambda F, x: F.fold(x.reshape(1, 8, 4), (4, 4, 4), 2),
])
def test_unfold_fold_errors(call):
    err(lambda: call(AF, ampgrad.zeros(1, 2, 4, 4)), lambda: call(TF, torch.zeros(1, 2, 4, 4)), match_message=False)


def test_unfold_fold_messages():
    a, t = ampgrad.zeros(1, 2, 4, 4), torch.zeros(1, 2, 4, 4)
    for call in (lambda F, x: F.unfold(x, (5, 5)), lambda F, x: F.unfold(x, (0, 5)), lambda F, x: F.unfold(x, 2, stride=0),
                 lambda F, x: F.fold(x.reshape(1, 7, 4), (4, 4), 2), lambda F, x: F.fold(x.reshape(1, 8, 4)[:, :, :3], (4, 4), 2)):
        err(lambda: call(AF, a), lambda: call(TF, t))


# ---------------------------------------------------------------- max_unpool / lp_pool
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_unpool(nd, dtype):
    shape = (2, 3) + (6, 4, 4)[:nd]
    rng = np.random.RandomState(0)
    arr = rng.randn(*shape)
    pool_t = getattr(TF, f"max_pool{nd}d")
    _, it = pool_t(torch.tensor(arr), 2, return_indices=True)
    ia = ampgrad.tensor(it.numpy())
    for out_size in (None, tuple(it.shape[2:]) if False else None):
        check(lambda x: getattr(AF, f"max_unpool{nd}d")(x, ia if x.dim() == ia.dim() else ia[0], 2, output_size=out_size),
              lambda x: getattr(TF, f"max_unpool{nd}d")(x, it if x.dim() == it.dim() else it[0], 2, output_size=out_size),
              tuple(it.shape), dtype, names=nd > 1)
    mod_a = getattr(ampgrad.nn, f"MaxUnpool{nd}d")(2)
    mod_t = getattr(torch.nn, f"MaxUnpool{nd}d")(2)
    x = rng.randn(*it.shape)
    close(mod_a(ampgrad.tensor(x), ia), mod_t(torch.tensor(x), it), "float64" if False else "float32")
    assert repr(mod_a) == repr(mod_t)


def test_max_unpool_errors():
    x, i = torch.randn(1, 2, 2, 2), torch.zeros(1, 2, 2, 2, dtype=torch.long)
    xa, ia = ampgrad.tensor(x.numpy()), ampgrad.tensor(i.numpy())
    err(lambda: AF.max_unpool2d(xa, ia + 99, 2), lambda: TF.max_unpool2d(x, i + 99, 2), match_message=False)
    err(lambda: AF.max_unpool2d(xa, ia.int(), 2), lambda: TF.max_unpool2d(x, i.int(), 2), match_message=False)
    err(lambda: AF.max_unpool2d(xa, ia, 2, output_size=(9, 9)), lambda: TF.max_unpool2d(x, i, 2, output_size=(9, 9)))
    err(lambda: AF.max_unpool2d(xa, ia[:, :1], 2), lambda: TF.max_unpool2d(x, i[:, :1], 2), match_message=False)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_lp_pool(nd):
    shape = (2, 3) + (6, 5, 4)[:nd]
    for p, k, s in ((2.0, 2, None), (3.0, 3, 1), (1.5, 2, 2)):
        check(lambda x: getattr(AF, f"lp_pool{nd}d")(x.abs() + 0.1, p, k, s), lambda x: getattr(TF, f"lp_pool{nd}d")(x.abs() + 0.1, p, k, s),
              shape, names=False, scale=4)
        mod_a, mod_t = getattr(ampgrad.nn, f"LPPool{nd}d")(p, k, s), getattr(torch.nn, f"LPPool{nd}d")(p, k, s)
        assert repr(mod_a) == repr(mod_t)


# ---------------------------------------------------------------- gradcheck, double backward, forward AD
@pytest.mark.parametrize("fn", [
    lambda F, x: F.pad(x, [1, 2, -1, 1], mode="constant", value=0.5),
    lambda F, x: F.pad(x, [1, 2, 0, 1], mode="reflect"),
    lambda F, x: F.pad(x, [2, 1, 1, 0], mode="replicate"),
    lambda F, x: F.pad(x, [2, -1, 1, 0], mode="circular"),
    lambda F, x: F.interpolate(x, scale_factor=1.5, mode="nearest"),
    lambda F, x: F.interpolate(x, scale_factor=1.5, mode="nearest-exact"),
    lambda F, x: F.interpolate(x, scale_factor=1.5, mode="bilinear"),
    lambda F, x: F.interpolate(x, size=(5, 4), mode="bicubic", align_corners=True),
    lambda F, x: F.pixel_unshuffle(x, 2),
    lambda F, x: F.unfold(x, 2, padding=1),
    lambda F, x: F.fold(x.reshape(2, 4, 4), (3, 3), 2),
])
def test_gradcheck_and_gradgradcheck(fn):
    x = ampgrad.randn(1, 2, 4, 4, dtype=ampgrad.float64, requires_grad=True)
    assert ampgrad.autograd.gradcheck(lambda t: fn(AF, t), (x,))
    assert ampgrad.autograd.gradgradcheck(lambda t: fn(AF, t), (x,))


def test_double_backward_node_names():
    rng = np.random.RandomState(0)
    for fa, ft in ((lambda F, x: F.pad(x, [1, 1, 1, 1], mode="reflect"), None),
                   (lambda F, x: F.pad(x, [1, 1, 1, 1], mode="replicate"), None),
                   (lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear"), None),
                   (lambda F, x: F.interpolate(x, scale_factor=2, mode="bicubic"), None),
                   (lambda F, x: F.interpolate(x, scale_factor=2, mode="nearest-exact"), None),
                   (lambda F, x: F.unfold(x, 2), None)):
        a, t = both(rng.randn(1, 2, 4, 4))
        ya, yt = fa(AF, a), fa(TF, t)
        va = ampgrad.tensor(rng.randn(*yt.shape)).requires_grad_(True)
        vt = torch.tensor(va.detach().numpy()).requires_grad_(True)
        ga = ampgrad.autograd.grad(ya, a, va, create_graph=True)[0]
        gt = torch.autograd.grad(yt, t, vt, create_graph=True)[0]
        assert ga.grad_fn.name() == gt.grad_fn.name()
        close(ga, gt)


def test_forward_ad():
    import ampgrad.autograd.forward_ad as fwAD
    rng = np.random.RandomState(0)
    x, tan = rng.randn(1, 2, 4, 4), rng.randn(1, 2, 4, 4)
    for f in (lambda F, x: F.pad(x, [1, 1, 1, 1], mode="reflect"), lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
              lambda F, x: F.unfold(x, 2), lambda F, x: F.pad(x, [1, -1], value=3.0), lambda F, x: F.pixel_unshuffle(x, 2)):
        with fwAD.dual_level():
            ya = f(AF, fwAD.make_dual(ampgrad.tensor(x), ampgrad.tensor(tan)))
            ja = fwAD.unpack_dual(ya).tangent
        import torch.autograd.forward_ad as tfw
        with tfw.dual_level():
            yt = f(TF, tfw.make_dual(torch.tensor(x), torch.tensor(tan)))
            jt = tfw.unpack_dual(yt).tangent
        close(ja, jt, "float64")


# ---------------------------------------------------------------- autocast
@pytest.mark.parametrize("call", [
    lambda F, x: F.pad(x[0], [1, 1], mode="reflect"), lambda F, x: F.pad(x, [1, 1, 1, 1], mode="reflect"),
    lambda F, x: F.pad(x.unsqueeze(0), [1, 1, 1, 1, 1, 1], mode="reflect"),
    lambda F, x: F.pad(x[0], [1, 1], mode="replicate"), lambda F, x: F.pad(x, [1, 1, 1, 1], mode="replicate"),
    lambda F, x: F.pad(x.unsqueeze(0), [1, 1, 1, 1, 1, 1], mode="replicate"),
    lambda F, x: F.pad(x[0], [1, 1], mode="circular"), lambda F, x: F.pad(x, [1, 1]),
    lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear"), lambda F, x: F.unfold(x, 2),
    lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True), 2, output_size=(4, 4)),
])
def test_autocast_output_dtype(call):
    x = np.random.RandomState(0).randn(1, 2, 4, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        yt = call(TF, torch.tensor(x, dtype=torch.float32).bfloat16())
    with ampgrad.autocast("cpu", dtype=ampgrad.bfloat16):
        ya = call(AF, ampgrad.tensor(x, dtype=ampgrad.float32).bfloat16())
    assert str(ya.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1]
    close(ya, yt, "bfloat16")


# ---------------------------------------------------------------- modules
def test_modules_match_torch():
    rng = np.random.RandomState(0)
    x = rng.randn(2, 3, 4, 5, 6)
    cases = [
        ("ConstantPad1d", (2, 1.5), 3), ("ConstantPad2d", ((1, 0, 2, 1), -1.0), 4), ("ConstantPad3d", (1, 0.0), 5),
        ("ZeroPad1d", (2,), 3), ("ZeroPad2d", ((1, 0, 2, 1),), 4), ("ZeroPad3d", (1,), 5),
        ("ReflectionPad1d", (2,), 3), ("ReflectionPad2d", ((1, 0, 2, 1),), 4), ("ReflectionPad3d", (1,), 5),
        ("ReplicationPad1d", (2,), 3), ("ReplicationPad2d", ((1, 0, 2, 1),), 4), ("ReplicationPad3d", (1,), 5),
        ("CircularPad1d", (2,), 3), ("CircularPad2d", ((1, 0, 2, 1),), 4), ("CircularPad3d", (1,), 5),
        ("Upsample", ((7, 9), None, "bilinear"), 4), ("Upsample", (None, 2.0, "nearest"), 5),
        ("Upsample", (None, (1.5, 2.0), "bicubic", True), 4), ("UpsamplingNearest2d", (None, 2), 4),
        ("UpsamplingBilinear2d", ((5, 3),), 4), ("PixelShuffle", (1,), 4), ("PixelUnshuffle", (2,), 4),
    ]
    for name, args, nd in cases:
        ma, mt = getattr(ampgrad.nn, name)(*args), getattr(torch.nn, name)(*args)
        assert repr(ma) == repr(mt)
        xs = x.reshape((2, 3) + x.shape[2:])[(0,) * (5 - nd)] if nd < 5 else x
        if name == "PixelUnshuffle":
            xs = x[0, :, :, :4, :4]
        a, t = both(xs)
        close(ma(a), mt(t))
    with pytest.raises(ValueError, match="expected 3D or 4D input"):
        ampgrad.nn.CircularPad2d(1)(ampgrad.zeros(2))


def test_module_names_exist():
    for name in ("ConstantPad1d", "ZeroPad2d", "ReflectionPad3d", "ReplicationPad2d", "CircularPad1d", "Upsample",
                 "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle", "Unfold",
                 "Fold", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "LPPool1d", "LPPool2d", "LPPool3d"):
        assert hasattr(ampgrad.nn, name), name
    for name in ("pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
                 "channel_shuffle", "unfold", "fold", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d",
                 "lp_pool3d"):
        assert hasattr(ampgrad.nn.functional, name), name
    for name in ("pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle"):
        assert hasattr(ampgrad, name), name


# ---------------------------------------------------------------- affine_grid, grid_sample bicubic / 5-D (issue 13)
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(align_corners):
    for theta_shape, size in (((2, 2, 3), (2, 3, 4, 5)), ((2, 3, 4), (2, 3, 4, 5, 3)), ((1, 2, 3), (1, 1, 6, 7))):
        check(lambda th: AF.affine_grid(th, size, align_corners=align_corners),
              lambda th: TF.affine_grid(th, size, align_corners=align_corners), theta_shape, "float64", names=False)
    err(lambda: AF.affine_grid(ampgrad.zeros(2, 3, 3), (2, 3, 4, 5), align_corners=False),
        lambda: TF.affine_grid(torch.zeros(2, 3, 3), (2, 3, 4, 5), align_corners=False), match_message=False)
    err(lambda: AF.affine_grid(ampgrad.zeros(2, 2, 3), (2, 3, 4), align_corners=False),
        lambda: TF.affine_grid(torch.zeros(2, 2, 3), (2, 3, 4), align_corners=False))


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_bicubic_and_5d(padding_mode, align_corners):
    rng = np.random.RandomState(0)
    for mode, shape, gshape in (("bicubic", (2, 3, 5, 4), (2, 3, 6, 2)), ("bilinear", (2, 2, 3, 5, 4), (2, 2, 3, 4, 3)),
                                ("nearest", (2, 2, 3, 5, 4), (2, 2, 3, 4, 3))):
        grid = rng.uniform(-1.3, 1.3, gshape)
        ga, gt = both(grid, "float64")
        check(lambda x: AF.grid_sample(x, ga, mode=mode, padding_mode=padding_mode, align_corners=align_corners),
              lambda x: TF.grid_sample(x, gt, mode=mode, padding_mode=padding_mode, align_corners=align_corners),
              shape, "float64", names=False)
        close(ga.grad, gt.grad, "float64", scale=1e4)
    err(lambda: AF.grid_sample(ampgrad.zeros(1, 2, 3, 4, 5), ampgrad.zeros(1, 2, 2, 2, 3), mode="bicubic", align_corners=False),
        lambda: TF.grid_sample(torch.zeros(1, 2, 3, 4, 5), torch.zeros(1, 2, 2, 2, 3), mode="bicubic", align_corners=False))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])  # torch's CPU antialias has no bfloat16
def test_interpolate_antialias(mode, dtype):
    for kw in ({"size": (3, 5)}, {"scale_factor": 0.3}, {"size": (13, 4)}, {"scale_factor": (2.5, 0.45)}, {"size": (16, 16)}):
        for ac in (False, True):
            kw2 = dict(kw, mode=mode, align_corners=ac, antialias=True)
            check(lambda x: AF.interpolate(x, **kw2), lambda x: TF.interpolate(x, **kw2), (2, 3, 8, 9), dtype, scale=5)
