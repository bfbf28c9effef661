"""Issue 10, exception types: a wrong-typed argument to an op that ampgrad composes in Python raises torch's
TypeError (python/ampgrad/_argparse.py checks the failed call against torch's signatures, _signatures.py),
with torch's message; an op's own error for well-typed arguments keeps its class. Each case is compared with
torch where it is installed."""
import os
import sys

import pytest

import ampgrad
from ampgrad import _argparse

# (expression, fragment of the message both raise). `torch` is bound to the module under test.
TYPE_ERRORS = [
    ("torch.put(torch.ones(2, 2), 'a', torch.ones(2))", "put(): argument 'index' (position 2) must be Tensor, not str"),
    ("torch.put(torch.ones(2, 2), index='a', source=torch.ones(2))", "put(): argument 'index' must be Tensor, not str"),
    ("torch.kron(torch.ones(2, 2), 2)", "kron(): argument 'other' (position 2) must be Tensor, not int"),
    ("torch.ones(2).kron('abc')", "kron(): argument 'other' (position 1) must be Tensor, not str"),
    ("torch.ones(2).type_as(3)", "type_as(): argument 'other' (position 1) must be Tensor, not int"),
    ("torch.pairwise_distance('abc', torch.ones(2))", "pairwise_distance(): argument 'x1' (position 1) must be Tensor"),
    ("torch.tensor(False).masked_scatter('abc', 'abc')", "masked_scatter(): argument 'mask' (position 1)"),
    ("torch.alias_copy('abc')", "alias_copy(): argument 'input' (position 1) must be Tensor, not str"),
    ("torch.matrix_power(torch.ones(2, 2), 'abc')", "matrix_power(): argument 'n'"),
    ("torch.rot90(float('inf'), 2)", "rot90(): argument 'input' (position 1) must be Tensor, not float"),
    ("torch.prelu('abc', 'abc')", "prelu(): argument 'input' (position 1) must be Tensor, not str"),
    ("torch.nn.functional.bilinear('abc', 'abc', 'abc', 'abc')", "bilinear(): argument 'input1' (position 1)"),
    ("torch.put(torch.ones(2), torch.tensor([0]))", 'put() missing 1 required positional argument'),
    ("torch.put(torch.ones(2), torch.tensor([0]), torch.ones(1), foo=1)", "put() got an unexpected keyword argument 'foo'"),
    ("torch.std_mean(torch.ones(3), correction='abc')", "std_mean() received an invalid combination of arguments"),
    ("torch.max_pool1d(torch.ones(1, 1, 4), 'abc')", "max_pool1d(): argument 'kernel_size' (position 2) must be tuple of ints"),
]

# single ops whose own checks raised another class than torch's (fuzz groups of issue 10), and the einsum
# sublist format they uncovered; compared with torch: same class (or the same value), message fragment
OP_CASES = [
    ("torch.einsum('abc')", "must specify the equation string and at least one operand"),       # ValueError
    ("torch.einsum(2, 2)", "einsum(): argument 'equation' (position 1) must be str, not int"),   # TypeError
    ("torch.einsum('ij,jk', torch.ones(2, 3), 3)", "expected Tensor as element 1 in argument 1, but got int"),
    ("torch.einsum(torch.ones(2, 3), [0, 60])", "not within the valid range [0, 52)"),
    ("torch.einsum(torch.ones(2, 3), [0, 1], torch.ones(3, 4), [1, 2], [0, 2])", None),
    ("torch.einsum(torch.ones(2, 3), [0, Ellipsis], [Ellipsis])", None),
    ("torch.einsum(torch.arange(4.), [0])", None),
    ("torch.dropout(torch.ones(2), 2.0, True)", "dropout probability has to be between 0 and 1, but got 2"),
    ("torch.dropout(torch.ones(2), float('nan'), False)", "but got nan"),
    ("torch.dropout(torch.ones(2), 1, False)", None),
    ("torch.ones(1).unfold(5, 2, 5)", "Dimension out of range (expected to be in range of [-1, 0], but got 5)"),
    ("torch.tensor(1.).unfold(-2, 1, 5)", "Dimension out of range"),
    ("torch.tensor(1.).unfold(-1, 1, 5)", None),
    ("torch.unfold_copy(torch.ones(3), 5, 4, 5)", "Dimension out of range"),
    ("torch.ones(3).new_tensor(torch.ones(2), -2)", "positional argument"),
    ("torch.ones(3).new_full((2,), 1.5, torch.int64)", "positional argument"),
]

# well-typed calls whose failure is the op's own: the class must stay torch's (not become a TypeError)
OWN_ERRORS = [
    "torch.var_mean(torch.tensor([-1]).expand(2))",             # var_mean calls Tensor.var with its own spelling
    "torch.std_mean(torch.tensor([[3, 4], [4, 0]], dtype=torch.uint8), [-1, 0], True, True)",
    "torch.kron(torch.ones(2, 3), torch.ones(3))[5]",
    "torch.put(torch.ones(2), torch.tensor([5]), torch.ones(1))",
    "torch.ones(2).aminmax(dim=2**31)",
]


def _raise(mod, expr):
    try:
        eval(expr, {"torch": mod})
    except Exception as e:  # noqa: BLE001 - the class and message are what is compared
        return e
    return None


@pytest.mark.parametrize("expr,fragment", TYPE_ERRORS)
def test_wrong_typed_argument_raises_torchs_type_error(expr, fragment):
    got = _raise(ampgrad, expr)
    assert type(got) is TypeError, f"{expr}: {type(got).__name__}: {got}"
    assert fragment in str(got)
    assert got.__cause__ is None and got.__suppress_context__ is False and got.__context__ is None


@pytest.mark.parametrize("expr,fragment", TYPE_ERRORS)
def test_wrong_typed_argument_like_torch(torch, expr, fragment):
    ref, got = _raise(torch, expr), _raise(ampgrad, expr)
    assert type(ref) is TypeError and fragment in str(ref), f"torch: {type(ref).__name__}: {ref}"
    assert type(got) is type(ref)


@pytest.mark.parametrize("expr", OWN_ERRORS)
def test_op_errors_keep_their_class(torch, expr):
    ref, got = _raise(torch, expr), _raise(ampgrad, expr)
    assert ref is not None and got is not None
    assert type(got) is type(ref), f"{expr}\n torch: {type(ref).__name__}: {ref}\n ampgrad: {type(got).__name__}: {got}"


def _outcome(mod, expr):
    try:
        r = eval(expr, {"torch": mod})
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return "value", r.tolist()


@pytest.mark.parametrize("expr,fragment", OP_CASES)
def test_op_checks_like_torch(torch, expr, fragment):
    ref, got = _outcome(torch, expr), _outcome(ampgrad, expr)
    assert got[0] is ref[0], f"{expr}\n torch: {ref}\n ampgrad: {got}"
    if fragment is None:
        assert ref[0] == "value" and got[1] == ref[1]   # small exact sums
    else:
        assert fragment in ref[1] and fragment in got[1]


def test_matching_is_lenient_where_torch_accepts():
    te = _argparse.type_error
    x = ampgrad.ones(2, 2)
    assert te("fn", "put", (x, ampgrad.tensor([0]), x), {}) is None
    assert te("fn", "put", (x, ampgrad.tensor([0]), x, True), {"out": None}) is None     # torch's extra kwargs
    assert te("method", "repeat", (2, 3), {}) is None                                     # varargs int list
    assert te("method", "repeat", ((2, 3),), {}) is None
    assert te("method", "repeat", (ampgrad.tensor(2),), {}) is None                      # a tensor for an int
    assert te("method", "repeat", (2.5,), {}) is not None
    assert te("fn", "permute_copy", (x, (1, 0)), {}) is None
    assert "must be tuple of ints, not int" in te("fn", "permute_copy", (x, 0), {})          # int[]: no single int
    assert te("fn", "amax", (x, 0), {}) is None                                           # int[1]: one int is fine
    assert te("fn", "dropout", (x, True, True), {}) is None                              # bool is a float
    assert "must be bool, not int" in te("fn", "dropout", (x, 0.5, 1), {})
    assert te("fn", "no_such_op", ("abc",), {}) is None                                   # no signature: no opinion


def test_successful_calls_are_untouched():
    x = ampgrad.arange(4.)
    assert ampgrad.put(x, ampgrad.tensor([0]), ampgrad.tensor([9.])).tolist() == [9., 1., 2., 3.]
    assert ampgrad.put.__wrapped__ is not None and ampgrad.put.__name__ == "put"


def test_signature_table_is_current(torch):
    """python/ampgrad/_signatures.py is what tools/gen_signatures.py generates from the installed torch."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools"))
    try:
        import gen_signatures
    finally:
        sys.path.pop(0)
    from ampgrad._signatures import SIGS
    fresh = gen_signatures.build_table()
    for kind in ("fn", "method", "F"):
        stale = sorted(set(SIGS[kind].items()) ^ set(fresh[kind].items()))
        assert not stale, f"rerun tools/gen_signatures.py ({kind}: {[s[0] for s in stale][:10]})"
