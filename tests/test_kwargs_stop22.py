"""torch's keyword names on the pybind11 bindings (tools/audit_kwargs.py lists the names torch takes
by keyword that a binding did not): each call passes the arguments by torch's names, in torch and in
ampgrad, and compares the results."""
import warnings

import pytest

import ampgrad

torch = pytest.importorskip("torch")


def _plain(r):
    if isinstance(r, (tuple, list)):
        return [_plain(x) for x in r]
    if isinstance(r, (torch.Tensor, ampgrad.Tensor)):
        return (str(r.dtype).split(".")[-1], list(r.shape), r.tolist())
    if isinstance(r, (torch.dtype, ampgrad.dtype)):
        return str(r).split(".")[-1]
    return r


# (id, call): call(T) runs with T = torch or ampgrad
CASES = [
    ("Tensor.fill_(value=number)", lambda T: T.zeros(3).fill_(value=2.5)),
    ("Tensor.fill_(value=tensor)", lambda T: T.zeros(3).fill_(value=T.tensor(1.5))),
    ("Tensor.heaviside(values=)", lambda T: T.tensor([-1.0, 0.0, 2.0]).heaviside(values=T.tensor([0.5]))),
    ("Tensor.heaviside_(values=)", lambda T: T.tensor([-1.0, 0.0, 2.0]).heaviside_(values=T.tensor([0.5]))),
    ("torch.heaviside(values=)", lambda T: T.heaviside(T.tensor([-1.0, 0.0, 2.0]), values=T.tensor([0.5]))),
    ("torch.heaviside(input=, values=)",
     lambda T: T.heaviside(input=T.tensor([-1.0, 0.0, 2.0]), values=T.tensor([0.5]))),
    ("Tensor.index_copy_(dim, index=, source=)",
     lambda T: T.zeros(5, 2).index_copy_(0, index=T.tensor([0, 4]), source=T.ones(2, 2))),
    ("Tensor.index_copy_(dim=, index=, source=)",
     lambda T: T.zeros(5, 2).index_copy_(dim=1, index=T.tensor([1]), source=T.ones(5, 1))),
    ("Tensor.scatter_add_(dim=, index=, src=)",
     lambda T: T.zeros(3, 3).scatter_add_(dim=0, index=T.tensor([[0, 1, 2], [0, 0, 0]]), src=T.ones(2, 3))),
    ("Tensor.scatter(dim, index=, value=)",
     lambda T: T.zeros(3, 3).scatter(0, index=T.tensor([[0, 1, 2]]), value=2.0)),
    ("Tensor.scatter(dim, index=, value=, reduce=)",
     lambda T: T.ones(3, 3).scatter(0, index=T.tensor([[0, 1, 2]]), value=3.0, reduce="multiply")),
    ("Tensor.scatter(dim=, index=, src=)",
     lambda T: T.zeros(3, 3).scatter(dim=1, index=T.tensor([[2], [1]]), src=T.ones(2, 1))),
    ("Tensor.scatter_(dim, index=, value=)",
     lambda T: T.zeros(3, 3).scatter_(0, index=T.tensor([[2, 1, 0]]), value=-1.0)),
    ("Tensor.scatter_(dim, index=, value=, reduce=)",
     lambda T: T.ones(3, 3).scatter_(0, index=T.tensor([[2, 1, 0]]), value=5.0, reduce="add")),
    ("torch.scatter(input, dim, index=, value=)",
     lambda T: T.scatter(T.zeros(2, 2), 1, index=T.tensor([[1], [0]]), value=7.0)),
    ("Tensor.permute(dims=)", lambda T: T.arange(6).view(2, 3).permute(dims=[1, 0])),
    ("Tensor.permute(dims=tuple)", lambda T: T.arange(24).view(2, 3, 4).permute(dims=(2, 0, 1))),
    ("Tensor.flip(dims=)", lambda T: T.arange(6).view(2, 3).flip(dims=[1])),
    ("Tensor.tile(dims=)", lambda T: T.arange(3).tile(dims=[2, 2])),
    ("Tensor.repeat(repeats=)", lambda T: T.arange(3).repeat(repeats=[2, 1])),
    ("Tensor.reshape(shape=)", lambda T: T.arange(6).reshape(shape=[3, 2])),
    ("Tensor.view(size=)", lambda T: T.arange(6).view(size=[2, 3])),
    ("Tensor.view(dtype=)", lambda T: T.tensor([1.0, -2.0]).view(dtype=T.int32)),
    ("Tensor.expand_as(other=)", lambda T: T.tensor([1.0, 2.0]).expand_as(other=T.zeros(3, 2))),
    ("Tensor.view_as(other=)", lambda T: T.arange(6).view_as(other=T.zeros(3, 2))),
    ("Tensor.reshape_as(other=)", lambda T: T.arange(6).reshape_as(other=T.zeros(2, 3))),
    ("Tensor.copy_(other=)", lambda T: T.zeros(3).copy_(other=T.tensor([1.0, 2.0, 3.0]))),
    ("Tensor.floor_divide(other=)", lambda T: T.tensor([7.0, -7.0]).floor_divide(other=T.tensor([2.0, 2.0]))),
    ("torch.floor_divide(input=, other=)", lambda T: T.floor_divide(input=T.tensor([7, -7]), other=2)),
    ("Tensor.swapaxes(axis0=, axis1=)", lambda T: T.arange(6).view(2, 3).swapaxes(axis0=0, axis1=1)),
    ("torch.swapaxes(input, axis0=, axis1=)", lambda T: T.swapaxes(T.arange(6).view(2, 3), axis0=1, axis1=0)),
    ("Tensor.split(split_size=)", lambda T: T.arange(5).split(split_size=2)),
    ("Tensor.split(split_size=list, dim=)", lambda T: T.arange(6).view(2, 3).split(split_size=[1, 2], dim=1)),
    ("torch.split(tensor=, split_size_or_sections=)",
     lambda T: T.split(tensor=T.arange(5), split_size_or_sections=[1, 4])),
    ("torch.promote_types(type1=, type2=)", lambda T: T.promote_types(type1=T.int32, type2=T.float32)),
]


@pytest.mark.parametrize("call", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_torch_keywords(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: scatter's reduce= is deprecated
        expected = _plain(call(torch))
        got = _plain(call(ampgrad))
    assert got == expected


def test_positional_calls_unchanged():
    # the keyword forms are additions: the positional / *args forms resolve as before
    x = ampgrad.arange(6).view(2, 3)
    assert x.permute(1, 0).tolist() == x.permute([1, 0]).tolist() == x.permute(dims=(1, 0)).tolist()
    assert x.view(3, 2).tolist() == x.view((3, 2)).tolist() == x.view(size=(3, 2)).tolist()
    assert ampgrad.zeros(2, 2).scatter(0, ampgrad.tensor([[1, 0]]), 4.0).tolist() == [[0.0, 4.0], [4.0, 0.0]]
    assert ampgrad.swapaxes(x, 0, 1).tolist() == ampgrad.transpose(x, 0, 1).tolist()


@pytest.mark.parametrize("call", [
    lambda x: x.permute(dims=[1, 0], bogus=1),
    lambda x: x.permute([1, 0], dims=[1, 0]),
    lambda x: x.reshape(6, shape=[6]),
], ids=["unexpected-keyword", "permute-twice", "reshape-twice"])
def test_keyword_errors(call):
    x = ampgrad.arange(6).view(2, 3)
    with pytest.raises(TypeError):
        call(x)
    with pytest.raises(TypeError):
        call(torch.arange(6).view(2, 3))
