"""Bad input raises torch's exception type with the gist of torch's message, and never crashes.

Each case is (id, fn(m), pattern): fn is called with m = torch and m = ampgrad; both must raise,
the builtin exception classes must agree, and `pattern` (a regex) must be found in both messages
(checking it against torch too keeps the patterns honest)."""
import re

import numpy as np
import pytest

import ampgrad

_EXC = (NotImplementedError, IndexError, TypeError, ValueError, RuntimeError)


def _builtin(e):
    return next((c for c in _EXC if isinstance(e, c)), type(e))


def _x(m, *shape, dtype=None):
    n = 1
    for s in shape:
        n *= s
    t = m.arange(n, dtype=m.float32).reshape(*shape) if shape else m.tensor(1.0)
    return t if dtype is None else t.to(getattr(m, dtype))


def _backward_twice(m):
    x = _x(m, 3).requires_grad_()
    y = (x * x).sum()
    y.backward()
    y.backward()


def _leaf_inplace(m):
    x = m.ones(3, requires_grad=True)
    x.add_(1)


def _view_of_leaf_inplace(m):
    x = m.ones(3, 2, requires_grad=True)
    x[0].mul_(2)


def _modified_saved(m):
    a = _x(m, 3).requires_grad_()
    b = a * 2
    c = b.sin()
    b.add_(1)
    c.sum().backward()


def _nonscalar_backward(m):
    x = _x(m, 3).requires_grad_()
    (x * 2).backward()


def _grad_of_const(m):
    x = _x(m, 3)
    m.autograd.grad(x.sum(), [x])


def _nonleaf_requires_grad_false(m):
    x = _x(m, 3).requires_grad_()
    (x * 2).requires_grad_(False)


def _iadd_int_float(m):
    x = _x(m, 3, dtype="int64")
    x += 1.5


CASES = [
    # shapes and dims
    ("add shape mismatch", lambda m: _x(m, 2, 3) + _x(m, 4), r"size of tensor a \(3\) must match the size of tensor b \(4\)"),
    ("mul broadcast mismatch", lambda m: m.mul(_x(m, 2, 3), _x(m, 3, 2)), r"must match the size of tensor b"),
    ("sum bad dim", lambda m: _x(m, 2, 3).sum(dim=2), r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    ("mean bad dim tuple", lambda m: _x(m, 2, 3).mean(dim=(0, -3)), r"Dimension out of range"),
    ("softmax bad dim", lambda m: m.softmax(_x(m, 2, 3), 5), r"Dimension out of range"),
    ("transpose bad dim", lambda m: _x(m, 2, 3).transpose(0, 2), r"Dimension out of range"),
    ("squeeze bad dim", lambda m: _x(m, 2, 3).squeeze(3), r"Dimension out of range"),
    ("unsqueeze bad dim", lambda m: _x(m, 2, 3).unsqueeze(4), r"Dimension out of range"),
    ("cumsum bad dim", lambda m: m.cumsum(_x(m, 2, 3), -3), r"Dimension out of range"),
    ("dim repeated", lambda m: _x(m, 2, 3).sum(dim=(1, 1)), r"dim 1 appears multiple times in the list of dims"),
    ("cat size mismatch", lambda m: m.cat([_x(m, 2, 3), _x(m, 2, 4)]), r"Sizes of tensors must match except in dimension 0"),
    ("cat dim mismatch", lambda m: m.cat([_x(m, 2, 3), _x(m, 2)]), r"Tensors must have same number of dimensions"),
    ("cat 0-dim", lambda m: m.cat([_x(m), _x(m)]), r"zero-dimensional tensor \(at position 0\) cannot be concatenated"),
    ("stack unequal", lambda m: m.stack([_x(m, 2, 3), _x(m, 3, 2)]), r"stack expects each tensor to be equal size"),
    ("expand bad", lambda m: _x(m, 2, 3).expand(4, 3), r"The expanded size of the tensor \(4\) must match the existing size \(2\)"),
    ("expand fewer dims", lambda m: _x(m, 2, 3).expand(3), r"the number of sizes provided \(1\) must be greater or equal"),
    ("permute wrong length", lambda m: _x(m, 2, 3).permute(0), r"number of dimensions in the tensor input does not match"),
    ("permute repeated", lambda m: _x(m, 2, 3).permute(0, 0), r"duplicate dims are not allowed"),
    ("view incompatible", lambda m: _x(m, 2, 3).t().view(-1), r"view size is not compatible with input tensor's size and stride"),
    ("view bad numel", lambda m: _x(m, 2, 3).view(5), r"shape '\[5\]' is invalid for input of size 6"),
    ("reshape two -1", lambda m: _x(m, 2, 3).reshape(-1, -1), r"only one dimension can be inferred"),
    ("repeat fewer dims", lambda m: _x(m, 2, 3).repeat(2), r"Number of dimensions of repeat dims can not be smaller"),
    ("narrow too long", lambda m: _x(m, 4).narrow(0, 2, 3), r"start \(2\) \+ length \(3\) exceeds dimension size \(4\)"),
    ("split_with_sizes bad sum", lambda m: _x(m, 5).split([2, 2]), r"split_with_sizes expects split_sizes to sum exactly to 5"),
    ("flatten start after end", lambda m: _x(m, 2, 3, 4).flatten(2, 1), r"flatten\(\) has invalid args: start_dim cannot come after end_dim"),
    ("as_strided out of bounds", lambda m: m.as_strided(_x(m, 2, 3), (3, 3), (3, 1)), r"out of bounds for storage of size 24"),
    ("empty negative dim", lambda m: m.empty(2, -1), r"negative dimension -1"),
    ("tril 1-d", lambda m: m.tril(_x(m, 3)), r"tril: input tensor must have at least 2 dimensions"),
    # linear algebra
    ("mm shape mismatch", lambda m: m.mm(_x(m, 2, 3), _x(m, 4, 5)), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    ("mm mixed dtypes", lambda m: m.mm(_x(m, 2, 3), _x(m, 3, 2, dtype="float64")), r"same dtype"),
    ("mm 1-d", lambda m: m.mm(_x(m, 3), _x(m, 3, 2)), r"self must be a matrix"),
    ("bmm 2-d", lambda m: m.bmm(_x(m, 2, 3), _x(m, 3, 2)), r"batch1 must be a 3D tensor"),
    ("bmm batch mismatch", lambda m: m.bmm(_x(m, 2, 2, 3), _x(m, 3, 3, 2)), r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but got: \[3, 3\]"),
    ("matmul 0-d", lambda m: m.matmul(_x(m), _x(m, 3)), r"both arguments to matmul need to be at least 1D"),
    ("matmul mismatch", lambda m: _x(m, 2, 3) @ _x(m, 4, 2), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x2\)"),
    ("matmul batched mismatch", lambda m: _x(m, 2, 2, 3) @ _x(m, 2, 4, 2), r"Expected size for first two dimensions of batch2 tensor"),
    ("mv mismatch", lambda m: m.mv(_x(m, 2, 3), _x(m, 4)), r"size mismatch"),
    ("dot mismatch", lambda m: m.dot(_x(m, 3), _x(m, 4)), r"inconsistent tensor size"),
    ("dot mixed dtypes", lambda m: m.dot(_x(m, 3), _x(m, 3, dtype="float64")), r"dot : expected both vectors to have same dtype"),
    ("linear mismatch", lambda m: m.nn.functional.linear(_x(m, 2, 3), _x(m, 4, 5)), r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 5x4\)"),
    ("addmm bias mismatch", lambda m: m.addmm(_x(m, 3, 3), _x(m, 2, 3), _x(m, 3, 4)), r"The expanded size of the tensor"),
    # indexing
    ("index int out of range", lambda m: _x(m, 3, 2)[5], r"index 5 is out of bounds for dimension 0 with size 3"),
    ("index negative out of range", lambda m: _x(m, 3, 2)[:, -3], r"index -3 is out of bounds for dimension 1 with size 2"),
    ("index list out of range", lambda m: _x(m, 3, 2)[[0, 7]], r"index 7 is out of bounds for dimension 0 with size 3"),
    ("index tensor out of range", lambda m: _x(m, 3, 2)[m.tensor([1, -4])], r"index -4 is out of bounds for dimension 0 with size 3"),
    ("too many indices", lambda m: _x(m, 3, 2)[0, 1, 0], r"too many indices for tensor of dimension 2"),
    ("float index", lambda m: _x(m, 3, 2)[1.5], r"only integers, slices \(`:`\), ellipsis \(`...`\), None and long or byte Variables are valid indices"),
    ("float tensor index", lambda m: _x(m, 3, 2)[m.tensor([0.0, 1.0])], r"tensors used as indices must be long, int, byte or bool tensors"),
    ("mask shape mismatch", lambda m: _x(m, 3, 2)[m.tensor([True, False])], r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor \[3, 2\] at index 0"),
    ("negative step", lambda m: _x(m, 4)[::-1], r"step must be greater than zero"),
    ("setitem out of range", lambda m: _x(m, 3).__setitem__(3, 1.0), r"index 3 is out of bounds for dimension 0 with size 3"),
    ("setitem shape mismatch", lambda m: _x(m, 3, 2).__setitem__(0, _x(m, 3)), r"The expanded size of the tensor \(2\) must match the existing size \(3\)"),
    ("select out of range", lambda m: _x(m, 3, 2).select(0, 3), r"select\(\): index 3 out of range for tensor of size \[3, 2\] at dimension 0"),
    ("gather index out of range", lambda m: m.gather(_x(m, 2, 3), 1, m.tensor([[0, 3]])), r"index 3 is out of bounds for dimension 1 with size 3"),
    ("gather float index", lambda m: m.gather(_x(m, 2, 3), 1, m.tensor([[0.0, 1.0]])), r"gather\(\): Expected dtype int32/int64 for index"),
    ("gather negative index", lambda m: m.gather(_x(m, 2, 3), 1, m.tensor([[0, -1]])), r"index -1 is out of bounds for dimension 1 with size 3"),
    ("gather dims mismatch", lambda m: m.gather(_x(m, 2, 3), 1, m.tensor([0, 1])), r"Index tensor must have the same number of dimensions as input tensor"),
    ("scatter index out of range", lambda m: m.scatter(_x(m, 2, 3), 1, m.tensor([[0, 5]]), _x(m, 1, 2)), r"index 5 is out of bounds for dimension 1 with size 3"),
    ("index_select out of range", lambda m: m.index_select(_x(m, 2, 3), 0, m.tensor([0, 2])), r"index out of range in self"),
    ("index_select negative", lambda m: m.index_select(_x(m, 2, 3), 0, m.tensor([-1])), r"index out of range in self"),
    ("index_select 2-d index", lambda m: m.index_select(_x(m, 2, 3), 0, m.tensor([[0]])), r"Index is supposed to be a vector"),
    ("index_add size mismatch", lambda m: m.index_add(_x(m, 3, 4), 0, m.tensor([0, 1]), _x(m, 3, 4)), r"index_add_\(\): Number of indices \(2\) should be equal to source.size\(dim\): \(3\), for dim: 0"),
    ("index_add slice mismatch", lambda m: m.index_add(_x(m, 3, 4), 0, m.tensor([0, 1]), _x(m, 2, 5)), r"source tensor shape must match self tensor shape, excluding the specified dimension"),
    ("index_add out of range", lambda m: m.index_add(_x(m, 3, 4), 0, m.tensor([0, 3]), _x(m, 2, 4)), r"index 3 is out of bounds for dimension 0 with size 3"),
    ("index_add dtype mismatch", lambda m: m.index_add(_x(m, 3, 4), 0, m.tensor([0, 1]), _x(m, 2, 4, dtype="float64")), r"index_add_\(\): self \(Float\) and source \(Double\) must have the same scalar type"),
    ("index_copy out of range", lambda m: m.index_copy(_x(m, 3, 4), 0, m.tensor([0, -1]), _x(m, 2, 4)), r"index_copy_\(\): index -1 is out of bounds for dimension 0 with size 3"),
    ("index_copy int32 index", lambda m: m.index_copy(_x(m, 3, 4), 0, m.tensor([0, 1], dtype=m.int32), _x(m, 2, 4)), r"index_copy_\(\): Expected a long tensor for index, but got Int"),
    ("index_copy size mismatch", lambda m: m.index_copy(_x(m, 3, 4), 0, m.tensor([0, 1]), _x(m, 3, 4)), r"index_copy_\(\): Number of indices \(2\) should be equal to source.size\(dim\) \(3\)"),
    ("masked_fill float mask", lambda m: m.masked_fill(_x(m, 3), _x(m, 3), 0.0), r"masked_fill_ only supports boolean masks"),
    ("masked_fill value dims", lambda m: m.masked_fill(_x(m, 3), m.tensor([True, False, True]), _x(m, 3)), r"only supports a 0-dimensional value tensor"),
    ("where float condition", lambda m: m.where(_x(m, 3), _x(m, 3), _x(m, 3)), r"where expected condition to be a boolean tensor"),
    # dtypes
    ("requires_grad int", lambda m: _x(m, 3, dtype="int64").requires_grad_(), r"[Oo]nly Tensors of floating point (and complex )?dtype can require gradients"),
    ("requires_grad int factory", lambda m: m.zeros(3, dtype=m.int64, requires_grad=True), r"[Oo]nly Tensors of floating point"),
    ("requires_grad int tensor()", lambda m: m.tensor([1, 2], requires_grad=True), r"[Oo]nly Tensors of floating point"),
    ("requires_grad int attribute", lambda m: setattr(_x(m, 3, dtype="int32"), "requires_grad", True), r"[Oo]nly Tensors of floating point"),
    ("sub bool", lambda m: _x(m, 3, dtype="bool") - _x(m, 3, dtype="bool"), r"Subtraction, the `-` operator, with two bool tensors is not supported"),
    ("sub bool and int", lambda m: _x(m, 3, dtype="bool") - _x(m, 3, dtype="int64"), r"Subtraction, the `-` operator, with a bool tensor is not supported"),
    ("neg bool", lambda m: -_x(m, 3, dtype="bool"), r"Negation, the `-` operator, on a bool tensor is not supported"),
    ("int floor division by zero", lambda m: m.floor_divide(_x(m, 3, dtype="int64"), m.tensor([1, 0, 2])), r"ZeroDivisionError"),
    ("int remainder by zero", lambda m: _x(m, 3, dtype="int64") % 0, r"ZeroDivisionError"),
    ("int negative power", lambda m: _x(m, 3, dtype="int64") ** -1, r"Integers to negative integer powers are not allowed"),
    ("mean of int", lambda m: _x(m, 3, dtype="int64").mean(), r"mean\(\): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: Long"),
    ("var of int", lambda m: _x(m, 3, dtype="int64").var(), r"std and var only support floating point and complex dtypes"),
    ("iadd float into int", _iadd_int_float, r"result type Float can't be cast to the desired output type Long"),
    ("bitwise float", lambda m: _x(m, 3) & _x(m, 3), r"\"bitwise_and_cpu\" not implemented for 'Float'"),
    ("invert float", lambda m: ~_x(m, 3), r"~ \(operator.invert\) is only implemented on integer and Boolean-type tensors"),
    ("bitwise_not float", lambda m: m.bitwise_not(_x(m, 3)), r"\"bitwise_not_cpu\" not implemented for 'Float'"),
    ("gelu int", lambda m: m.nn.functional.gelu(_x(m, 3, dtype="int64")), r"\"GeluKernelImpl\" not implemented for 'Long'"),
    ("frac int", lambda m: m.frac(_x(m, 3, dtype="int64")), r"not implemented for 'Long'"),
    ("argmax bool", lambda m: m.argmax(_x(m, 3, dtype="bool")), r"argmax\(\): does not support bool input"),
    ("add bool alpha to int", lambda m: m.add(_x(m, 3, dtype="int64"), _x(m, 3, dtype="int64"), alpha=True), r"Boolean alpha only supported for Boolean results"),
    ("add float alpha to int", lambda m: m.add(_x(m, 3, dtype="int64"), _x(m, 3, dtype="int64"), alpha=0.5), r"For integral input tensors, argument alpha must not be a floating point number"),
    ("sub float alpha to int", lambda m: m.sub(_x(m, 3, dtype="int64"), _x(m, 3, dtype="int64"), alpha=0.5), r"argument alpha must not be a floating point number"),
    ("addcdiv ints", lambda m: m.addcdiv(_x(m, 3, dtype="int64"), _x(m, 3, dtype="int64"), _x(m, 3, dtype="int64")), r"Integer division with addcdiv is no longer supported"),
    ("atan2 scalar", lambda m: m.atan2(_x(m, 3), 2), r"atan2\(\): argument 'other' \(position 2\) must be Tensor, not int"),
    ("maximum scalar", lambda m: m.maximum(_x(m, 3), 2.0), r"maximum\(\): argument 'other' \(position 2\) must be Tensor, not float"),
    ("logical_and scalar", lambda m: _x(m, 3).logical_and(1), r"logical_and\(\): argument 'other' \(position 1\) must be Tensor, not int"),
    ("div bad rounding mode", lambda m: m.div(_x(m, 3), 2, rounding_mode="round"), r"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"),
    ("clamp no bounds", lambda m: m.clamp(_x(m, 3)), r"At least one of 'min' or 'max' must not be None"),
    ("softmax int", lambda m: m.softmax(_x(m, 3, dtype="int64"), 0), r"\"softmax_lastdim_kernel_impl\" not implemented for 'Long'"),
    ("uniform_ int", lambda m: _x(m, 3, dtype="int64").uniform_(), r"\"check_uniform_bounds\" not implemented for 'Long'"),
    # reductions of empty tensors
    ("max of empty", lambda m: m.max(m.zeros(0)), r"Expected reduction dim to be specified for input.numel\(\) == 0"),
    ("argmax of empty", lambda m: m.argmax(m.zeros(0)), r"Expected reduction dim to be specified for input.numel\(\) == 0"),
    ("amax over empty dim", lambda m: m.amax(m.zeros(2, 0), dim=1), r"Expected reduction dim 1 to have non-zero size"),
    # autograd
    ("backward twice", _backward_twice, r"Trying to backward through the graph a second time"),
    ("leaf in-place", _leaf_inplace, r"a leaf Variable that requires grad is being used in an in-place operation"),
    ("leaf view in-place", lambda m: m.arange(3.0).reshape(3).requires_grad_().add_(1),
     r"a view of a leaf Variable that requires grad is being used in an in-place operation"),
    ("view of leaf in-place", _view_of_leaf_inplace, r"a view of a leaf Variable that requires grad is being used in an in-place operation"),
    ("saved tensor modified", _modified_saved, r"one of the variables needed for gradient computation has been modified by an inplace operation"),
    ("non-scalar backward", _nonscalar_backward, r"grad can be implicitly created only for scalar outputs"),
    ("grad of constant", _grad_of_const, r"element 0 of tensors does not require grad and does not have a grad_fn"),
    ("requires_grad_(False) on non-leaf", _nonleaf_requires_grad_false, r"you can only change requires_grad flags of leaf variables"),
    ("numpy of requires_grad", lambda m: _x(m, 3).requires_grad_().numpy(), r"Can't call numpy\(\) on Tensor that requires grad"),
    # conversions
    ("item of many", lambda m: _x(m, 2, 3).item(), r"a Tensor with 6 elements cannot be converted to Scalar"),
    ("bool of many", lambda m: bool(_x(m, 2, 3)), r"Boolean value of Tensor with more than one value is ambiguous"),
    ("len of 0-d", lambda m: len(_x(m)), r"len\(\) of a 0-d tensor"),
    ("iterate 0-d", lambda m: iter(_x(m)), r"iteration over a 0-d tensor"),
    ("ragged tensor()", lambda m: m.tensor([[1, 2], [3]]), r"expected sequence of length 2 at dim 1 \(got 1\)|ragged"),
    ("float index()", lambda m: [1, 2, 3][_x(m)], r"only integer tensors of a single element can be converted to an index"),
    ("item of empty", lambda m: m.zeros(0).item(), r"a Tensor with 0 elements cannot be converted to Scalar"),
    ("tensor() of strings", lambda m: m.tensor(["a", "b"]), r"new\(\): invalid data type 'str'|too many dimensions 'str'"),
    ("to cuda without cuda", lambda m: _x(m, 3).to("cuda"), r"Torch not compiled with CUDA enabled"),
    ("grad assigned wrong shape", lambda m: setattr(m.ones(3, requires_grad=True), "grad", m.ones(4)), r"attempting to assign a gradient of size '\[4\]' to a tensor of size '\[3\]'"),
    ("grad assigned wrong dtype", lambda m: setattr(m.ones(3, requires_grad=True), "grad", m.ones(3, dtype=m.float64)),
     r"attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'"),
    ("backward grad wrong shape", lambda m: (m.ones(3, requires_grad=True) * 2).backward(m.ones(2)), r"Mismatch in shape: grad_output\[0\] has a shape of"),
    # more shape / argument checks
    ("norm of int", lambda m: _x(m, 3, dtype="int64").norm(), r"linalg.vector_norm: Expected a floating point or complex tensor as input. Got Long"),
    ("unflatten bad sizes", lambda m: _x(m, 2, 5).unflatten(1, (2, 2)), r"unflatten: Provided sizes \[2, 2\] don't multiply up to the size of dim 1 \(5\) in the input tensor"),
    ("chunk zero", lambda m: _x(m, 4).chunk(0), r"chunk expects `chunks` to be greater than 0, got: 0"),
    ("split negative", lambda m: _x(m, 4).split(-1), r"split expects split_size be non-negative, but got split_size=-1"),
    ("narrow start out of range", lambda m: _x(m, 4).narrow(0, 5, 0), r"start out of range \(expected to be in range of \[-4, 4\], but got 5\)"),
    ("diagonal same dims", lambda m: _x(m, 3, 3).diagonal(0, 1, 1), r"diagonal dimensions cannot be identical 1, 1"),
    ("stack empty", lambda m: m.stack([]), r"stack expects a non-empty TensorList"),
    ("cat empty", lambda m: m.cat([]), r"expected a non-empty list of Tensors"),
    ("masked_select float mask", lambda m: m.masked_select(_x(m, 3), _x(m, 3)), r"masked_select: expected BoolTensor for mask"),
    ("where shape mismatch", lambda m: m.where(m.tensor([True, False]), _x(m, 3), 0.0), r"The size of tensor a \(2\) must match the size of tensor b \(3\)"),
    ("roll shifts dims mismatch", lambda m: m.roll(_x(m, 2, 3), (1, 1), 0), r"shifts and dimensions must align. shifts: 2, dims:1"),
    ("flip duplicate dims", lambda m: m.flip(_x(m, 2, 3), (0, 0)), r"dim 0 appears multiple times in the list of dims"),
    ("gather index too big", lambda m: m.gather(_x(m, 2, 3), 1, m.tensor([[0], [1], [0]])), r"Size does not match at dimension 0 expected index \[3, 1\] to be no larger than self \[2, 3\] apart from dimension 1"),
    ("expand -1 in new dim", lambda m: _x(m, 3).expand(-1, 3), r"The expanded size of the tensor \(-1\) isn't allowed in a leading, non-existing dimension 0"),
    ("mm int and float", lambda m: m.mm(_x(m, 2, 2, dtype="int64"), _x(m, 2, 2)), r"same dtype"),
    ("bmm mixed dtypes", lambda m: m.bmm(_x(m, 1, 2, 2), _x(m, 1, 2, 2, dtype="float64")), r"expected scalar type Float but found Double"),
    ("matmul mixed dtypes", lambda m: _x(m, 2, 2) @ _x(m, 2, 2, dtype="float64"), r"same dtype"),
    ("arange bad step sign", lambda m: m.arange(0, 5, -1), r"upper bound and lower bound inconsistent with step sign|upper bound and larger bound inconsistent with step sign"),
    ("linspace negative steps", lambda m: m.linspace(0, 1, -1), r"number of steps must be non-negative"),
    ("randint empty range", lambda m: m.randint(5, 5, (2,)), r"random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
    ("repeat negative", lambda m: _x(m, 2).repeat(-1), r"Trying to create tensor with negative dimension -2: \[-2\]"),
    ("view -1 with zero numel", lambda m: m.zeros(0, 3).view(-1, 0), r"cannot reshape tensor of 0 elements into shape \[-1, 0\] because the unspecified dimension size -1 can be any value and is ambiguous"),
    ("sum bad dtype kwarg", lambda m: _x(m, 3).sum(dtype="float"), r"dtype"),
    ("permute dim out of range", lambda m: _x(m, 2, 3).permute(0, 2), r"Dimension out of range"),
    ("squeeze 0-dim bad dim", lambda m: _x(m).squeeze(1), r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)"),
    ("select 0-dim", lambda m: _x(m).select(0, 0), r"select\(\) cannot be applied to a 0-dim tensor"),
    ("clamp tensor bounds mismatch", lambda m: m.clamp(_x(m, 3), _x(m, 2)), r"The size of tensor a \(3\) must match the size of tensor b \(2\)"),
    ("scatter src dtype mismatch", lambda m: m.scatter(_x(m, 2, 3), 1, m.tensor([[0]]), _x(m, 1, 1, dtype="float64")), r"scatter\(\): Expected self.dtype to be equal to src.dtype"),
    ("clamp bound overflows half", lambda m: _x(m, 3, dtype="float16").clamp(max=1e6), r"value cannot be converted to type c10::Half without overflow"),
    ("clamp bound overflows int8", lambda m: _x(m, 3, dtype="int8").clamp(max=300), r"value cannot be converted to type int8_t without overflow"),
    ("fill_ overflows int8", lambda m: _x(m, 3, dtype="int8").fill_(300), r"value cannot be converted to type int8_t without overflow"),
    ("full overflows half", lambda m: m.full((2,), 1e6, dtype=m.float16), r"value cannot be converted to type c10::Half without overflow"),
    ("masked_fill overflows half", lambda m: m.masked_fill(_x(m, 3, dtype="float16"), m.tensor([True, False, True]), 1e6), r"without overflow"),
    ("add alpha overflows half", lambda m: m.add(_x(m, 3, dtype="float16"), _x(m, 3, dtype="float16"), alpha=1e6), r"without overflow"),
    ("scatter value overflows bfloat16", lambda m: m.scatter(_x(m, 3, dtype="bfloat16"), 0, m.tensor([0]), 1e39), r"value cannot be converted to type c10::BFloat16 without overflow"),
    ("index_select empty dim", lambda m: m.index_select(m.zeros(0, 2), 0, m.tensor([0])), r"index_select\(\): self indexing axis dim should be positive"),
    ("index_put values dtype", lambda m: m.zeros(3).index_put_((m.tensor([0]),), m.ones(1, dtype=m.float64)), r"Index put requires the source and destination dtypes match"),
]


@pytest.mark.parametrize("fn,pattern", [pytest.param(f, p, id=i) for i, f, p in CASES])
def test_error(fn, pattern):
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as th:
        fn(torch)
    assert re.search(pattern, str(th.value)), f"pattern does not match torch's message: {th.value}"
    exc = _builtin(th.value)
    with pytest.raises(Exception) as ag:
        fn(ampgrad)
    assert _builtin(ag.value) is exc, f"ampgrad raised {type(ag.value).__name__}: {ag.value}; torch raises {exc.__name__}: {th.value}"
    assert re.search(pattern, str(ag.value)), f"ampgrad's message lacks the gist of torch's: {ag.value!r} vs torch's {th.value!r}"


# Note [Fast methods]: the operators and unary methods bypass pybind11; errors must not change.
def test_fast_methods_keep_errors_and_notimplemented():
    import ampgrad as ag
    a = ag.randn(4)
    with pytest.raises(RuntimeError, match="must match the size"):
        a + ag.randn(3)
    with pytest.raises(TypeError, match="unsupported operand"):
        a + "x"
    with pytest.raises(TypeError):
        ag.Tensor.exp(3.0)
    with pytest.raises(RuntimeError, match="bool tensor"):
        -ag.tensor([True])
    x = a.numpy()
    assert ((2 - a).numpy() == np.float32(2) - x).all() and ((2 * a).numpy() == np.float32(2) * x).all()
    assert a.exp().grad_fn is None and a.requires_grad_().exp().grad_fn.name() == "ExpBackward0"
