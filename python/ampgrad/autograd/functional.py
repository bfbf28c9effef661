"""Higher-level functional autograd API (mirrors torch.autograd.functional): vjp, jvp, jacobian, hessian,
vhp, hvp, built on autograd.grad, and on forward_ad for the "forward-mode" jacobian / hessian strategy.
Functions take only Tensors and return only Tensors; capture anything else with a lambda. jvp uses the
double-backward trick, as torch's does."""
from .. import _C
from .. import _creation
from . import _backward
from . import forward_ad
from . import grad_mode

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

# ----------------------------------------------------------------------------------------------
# helpers (same contracts as torch's private ones)

def _as_tuple_nocheck(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _as_tuple(inp, arg_name=None, fn_name=None):
    """(was_tuple, tuple of Tensors); raises torch's TypeError for anything that is not a Tensor."""
    if arg_name is None and fn_name is None:
        return _as_tuple_nocheck(inp)
    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, _C.Tensor):
            if is_inp_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but"
                                f" the value at index {i} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the"
                            f" given {arg_name} has type {type(el)}.")
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    """Undo _as_tuple: to_unpack is one flag, or (outer, inner) flags for nested results."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    # Always a new Tensor object, so that the inputs given here can be told apart from the same tensors
    # captured by the user function (torch issue 32576).
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))  # differentiable shallow copy
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    # Do not hand back tensors with history unless create_graph asked for it.
    if isinstance(inputs[0], _C.Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    """strict mode: every output / gradient must require grad (i.e. depend on the inputs)."""
    if not strict:
        return
    if input_type not in ["outputs", "grad_inputs", "jacobian", "hessian"]:
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}."
                               " This is not allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect to input {i}"
                                   " is independent of the input. This is not allowed in strict mode."
                                   " You should ensure that your function is thrice differentiable and that"
                                   " the hessian depends on the inputs.")
            if input_type == "jacobian":
                raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided"
                                   f" function with respect to input {i} is independent of the input. This is not"
                                   " allowed in strict mode. You should ensure that your function is twice"
                                   " differentiable and that the jacobian depends on the inputs (this would be"
                                   " violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the"
                                   " user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients."
                               " The outputs must be computed in a differentiable manner from the input"
                               " when running in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad that skips outputs which are None or do not require grad (None for every input if
    nothing is differentiable)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grad_outputs = (), ()
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs += (out,)
            new_grad_outputs += (grad_out,)
    if len(new_outputs) == 0:
        return (None,) * len(inputs)
    return _backward.grad(new_outputs, inputs, new_grad_outputs, allow_unused=True, create_graph=create_graph,
                            retain_graph=retain_graph)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Replace None gradients by zeros like refs, or raise in strict mode (message depends on stage)."""
    if stage not in ["back", "back_trick", "double_back", "double_back_trick"]:
        raise RuntimeError(f"Invalid stage argument '{stage}' to _fill_in_zeros")
    res = ()
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                if stage == "back":
                    raise RuntimeError("The output of the user-provided function is independent of "
                                       f"input {i}. This is not allowed in strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(f"The gradient with respect to the input is independent of entry {i}"
                                       " in the grad_outputs when using the double backward trick to compute"
                                       " forward mode gradients. This is not allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError("The jacobian of the user-provided function is independent of "
                                       f"input {i}. This is not allowed in strict mode.")
                raise RuntimeError("The hessian of the user-provided function is independent of "
                                   f"entry {i} in the grad_jacobian. This is not allowed in strict "
                                   "mode as it prevents from using the double backward trick to "
                                   "replace forward mode AD.")
            grads_i = _creation.zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            if "double" not in stage:
                raise RuntimeError("The jacobian of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode when create_graph=True.")
            raise RuntimeError("The hessian of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when create_graph=True.")
        res += (grads_i,)
    return res


# ----------------------------------------------------------------------------------------------
# public API

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Returns (func(*inputs), v^T J): the vector-Jacobian product, shaped like the inputs. v may be
    omitted when func returns a single one-element Tensor."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns "
                               "a single Tensor with a single element.")

    enable_grad = True if create_graph else _C.is_grad_enabled()
    with grad_mode.set_grad_enabled(enable_grad):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")

    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Returns (func(*inputs), J v): the Jacobian-vector product, shaped like the outputs, by the
    double-backward trick (differentiate v^T J with respect to a dummy v). v may be omitted when the
    input is a single one-element Tensor."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to "
                               "the user-provided function is a single Tensor "
                               "with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        # The backward is linear in grad_outputs, so their value does not matter (zeros: no inf/nan).
        grad_outputs = tuple(_creation.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)

    with grad_mode.set_grad_enabled(True if create_graph else _C.is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")

    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_outputs_tuple)


def _jacfwd(func, inputs, strict=False, vectorize=False):
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` "
                           'and `strategy="forward-mode"` are not supported together (yet). '
                           "Please either set `strict=False` or "
                           '`strategy="reverse-mode"`.')
    if not vectorize:
        # torch's message, missing space included
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    # One forward per input element with a unit tangent (torch vmaps the same computation).
    cols = [[] for _ in inputs]  # cols[j][k]: the output tangents for unit tangent k of input j
    is_outputs_tuple, outputs = False, None
    for j, inp in enumerate(inputs):
        for k in range(inp.numel()):
            is_outputs_tuple, outputs, jv = _jvp_unit(func, inputs, j, k)
            cols[j].append(jv)
    if outputs is None:  # no input has an element: one plain call for the output shapes
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs")
    result = [[_stack_cols([c[i] for c in cols[j]], out, inp).reshape(tuple(out.shape) + tuple(inp.shape))
               for j, inp in enumerate(inputs)] for i, out in enumerate(outputs)]
    return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _jvp_unit(func, inputs, j, k):
    """func's outputs and their tangents (zeros where absent) for the unit tangent at element k of input j."""
    with forward_ad.dual_level():
        e = _creation.zeros(inputs[j].numel(), dtype=inputs[j].dtype, device=inputs[j].device)
        e[k] = 1
        duals = tuple(forward_ad.make_dual(x, e.view_as(x)) if i == j else x for i, x in enumerate(inputs))
        is_outputs_tuple, dual_outputs = _as_tuple(func(*duals), "outputs")
        outputs, jv = [], []
        for d in dual_outputs:
            primal, tangent = forward_ad.unpack_dual(d)
            outputs.append(primal)
            jv.append(tangent if tangent is not None else _creation.zeros_like(primal))
    return is_outputs_tuple, outputs, jv


def _stack_cols(cols, out, inp):
    if not cols:
        return _creation.zeros(tuple(out.shape) + (0,), dtype=out.dtype, device=out.device)
    return _C.stack(cols, dim=-1)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """Jacobian of func at inputs: a Tensor of shape out.shape + in.shape for one input and one output,
    a tuple over the tupled side(s) otherwise (jac[i][j]: output i, input j), each with the input's dtype.

    vectorize=True gives the same result through the per-row loop: ampgrad has no vmap / batched grad
    yet. strategy="forward-mode" (which needs vectorize=True, as in torch) runs one forward-AD pass
    per input element."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      'and `strategy="forward-mode"` are not supported together (yet). '
                                      "Please either set `create_graph=False` or "
                                      '`strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` "
                               "and `vectorized=True` are not supported together. "
                               "Please either set `strict=False` or "
                               "`vectorize=False`.")

        # One autograd.grad call per output element (row of the Jacobian).
        result = ()
        for i, out in enumerate(outputs):
            jac_i = tuple([] for _ in range(len(inputs)))
            flat_out = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _autograd_grad((flat_out[j],), inputs, retain_graph=True, create_graph=create_graph)
                for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            # torch names the output index here; kept as is.
                            raise RuntimeError("The jacobian of the user-provided function is "
                                               f"independent of input {i}. This is not allowed in "
                                               "strict mode when create_graph=True.")
                        jac_i_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {el_idx}. This is not allowed in "
                                               "strict mode.")
                        jac_i_el.append(_creation.zeros_like(inp_el))
            result += (tuple(_stack_rows(jac_i_el, inputs[el_idx]).view(tuple(out.size()) + tuple(inputs[el_idx].size()))
                             for el_idx, jac_i_el in enumerate(jac_i)),)

        result = _grad_postprocess(result, create_graph)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _stack_rows(rows, inp):
    # torch.stack of an empty list fails; an output with no elements has an empty Jacobian.
    if not rows:
        return _creation.zeros((0,) + tuple(inp.shape), dtype=inp.dtype, device=inp.device)
    return _C.stack(rows, dim=0)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """Hessian of a scalar func: a Tensor of shape in.shape + in.shape for one input, else a tuple of
    tuples (hess[i][j]: inputs i and j). vectorize as in jacobian (falls back to the loop)."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, _C.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_func_setup(func, inputs, v, create_graph, strict, name):
    """Shared front half of vhp/hvp: checked inputs, v, the single-element output and its gradient."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function "
                           "is a single Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], _C.Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Returns (func(*inputs), v^T H) for a scalar func, shaped like the inputs."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_func_setup(
            func, inputs, v, create_graph, strict, "vhp")

    with grad_mode.set_grad_enabled(True if create_graph else _C.is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")

    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Returns (func(*inputs), H v) for a scalar func, shaped like the inputs, by the double-backward
    trick (slower than vhp; equal to it for twice continuously differentiable func)."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_func_setup(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(_creation.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)

    with grad_mode.set_grad_enabled(True if create_graph else _C.is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")

    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)
