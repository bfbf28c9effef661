"""Stop 23's argument checks against torch (issue 10): each case must raise torch's exception type and
message, or give torch's values."""
import pytest

import ampgrad

torch = pytest.importorskip("torch")
from _torch_compare import check  # noqa: E402

CASES = {
    "result_type other=": lambda L: str(L.result_type(L.ones(3), other=2)).split(".")[-1],
    "result_type tensor=": lambda L: str(L.result_type(tensor=L.ones(3, dtype=L.int32), other=2.5)).split(".")[-1],
    "real of a str": lambda L: L.real("abc"),
    "real of a tensor": lambda L: L.real(L.tensor([1.5, -2.0])),
    "isclose equal_nan dtype": lambda L: L.ones(3).isclose(L.ones(3), equal_nan=L.float32),
    "isclose equal_nan int": lambda L: L.isclose(L.ones(3), L.ones(3), equal_nan=1),
    "glu of int64": lambda L: L.nn.functional.glu(L.ones(4, dtype=L.long)),
    "glu of int64, odd size": lambda L: L.nn.functional.glu(L.zeros((0, 3), dtype=L.int64), -1),
    "glu of bool": lambda L: L.nn.functional.glu(L.ones(4, dtype=L.bool)),
    "glu of float": lambda L: L.nn.functional.glu(L.tensor([1.0, -2.0, 3.0, 0.5])),
    "flip int dims": lambda L: L.flip(L.ones(2, 3), 1),
    "flip bool dims": lambda L: L.flip(L.ones(2, 3), True),
    "method flip dims= int": lambda L: L.ones(2, 3).flip(dims=1),
    "method flip varargs": lambda L: L.arange(6.).reshape(2, 3).flip(1),
    "flip tuple": lambda L: L.flip(L.arange(6.).reshape(2, 3), (0, 1)),
    "+ on bool": lambda L: +L.ones(2, dtype=L.bool),
    "+ on int": lambda L: +L.tensor([1, -2]),
    "trapezoid dim -4": lambda L: L.trapezoid(L.ones(2, 3), dim=-4),
    "trapezoid dim 2": lambda L: L.trapezoid(L.ones(2, 3), dim=2),
    "trapezoid dim -2": lambda L: L.trapezoid(L.tensor([[1.0, 2.0, 4.0], [0.5, 0.0, 1.0]]), dim=-2),
    "std_mean bool unbiased": lambda L: L.std_mean(L.tensor([1.0, 2.0, 4.0]), 0, True),
    "var_mean bool first": lambda L: L.var_mean(L.tensor([1.0, 2.0, 4.0]), False),
}


# torch's parser TypeError, whose overload list ampgrad prints in another order: the type only
TYPE_ONLY = {
    "var_mean int unbiased": lambda L: L.var_mean(L.ones(3), 0, 1, correction=None),
    "std_mean int unbiased": lambda L: L.std_mean(L.ones(3), 0, 0),
    "flip dims= int": lambda L: L.flip(L.ones(2, 3), dims=1),  # ampgrad's message says "(position 2)" here too
    "var_mean int unbiased keepdim": lambda L: L.var_mean(L.ones(3), 0, 2, True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch_stop23(name):
    check(CASES[name], ampgrad, torch, message=True)


@pytest.mark.parametrize("name", list(TYPE_ONLY))
def test_matches_torch_stop23_type(name):
    check(TYPE_ONLY[name], ampgrad, torch)
