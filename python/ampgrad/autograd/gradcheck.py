"""gradcheck / gradgradcheck (mirror torch.autograd.gradcheck): compare finite-difference Jacobians with
the ones autograd computes (reverse mode, and forward mode with check_forward_ad). Real dtypes only
(ampgrad has no complex); batched (vmap) gradient checks raise NotImplementedError until the engine
has them."""
import itertools
import warnings

import numpy as np

from .. import _C
from .. import _creation
from .. import _functions
from . import _backward
from . import forward_ad
from .function import Function

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_analytical_jacobian", "get_numerical_jacobian_wrt_specific_input"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


_NO_BATCHED = ("batched gradients (vmap) are not yet supported by ampgrad, so {} cannot be checked; "
               "pass {}=False")

_FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations, this failure might be expected:
call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument.
"""

_FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode! Call gradcheck/gradgradcheck with `fast_mode=False`.
""".strip()


# ----------------------------------------------------------------------------------------------
# small helpers

def _is_tensor(x):
    return isinstance(x, _C.Tensor)


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float_tensor(x):
    return _is_tensor(x) and x.is_floating_point()


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _diff_inputs(tupled_inputs):
    """(indices, tensors) of the inputs that require grad."""
    pairs = [(i, t) for i, t in enumerate(tupled_inputs) if _is_tensor(t) and t.requires_grad]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _allclose_with_type_promotion(a, b, rtol, atol):
    dt = _C.promote_types(a.dtype, b.dtype)
    return _functions.allclose(a.to(dtype=dt), b.to(dtype=dt), rtol, atol)


def _max_abs_diff(a, b):
    return float((a - b).abs().max()) if a.numel() else 0.0


# ----------------------------------------------------------------------------------------------
# input / output checks

def _check_inputs(tupled_inputs):
    any_input_requiring_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp.dtype != _C.float64:
                warnings.warn(
                    f"Input #{idx} requires gradient and "
                    "is not a double precision floating point or complex. "
                    "This check will likely fail if all the inputs are "
                    "not of double precision floating point or complex. ",
                    stacklevel=4)  # point at the caller of gradcheck
            # Perturbing one element of an input with overlapping memory moves several entries.
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only "
                    "supports inputs that are non-overlapping to be able to "
                    "compute the numerical gradients correctly. You should call "
                    ".contiguous on the input before passing it to gradcheck.")
            any_input_requiring_grad = True
    if not any_input_requiring_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")
    return True


def _check_outputs_same_dtype_and_shape(output1, output2, eps, idx=None):
    on_index = f"on index {idx} " if idx is not None else ""
    if output1.shape != output2.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape"
                             f" when inputs are perturbed {on_index}by {eps}, but got:"
                             f" shapes {output1.shape} and {output2.shape}.")
    if output1.dtype != output2.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype"
                             f" when inputs are perturbed {on_index}by {eps}, but got:"
                             f" dtypes {output1.dtype} and {output2.dtype}.")


# ----------------------------------------------------------------------------------------------
# numerical side: central differences, perturbing the input in place

def _run_cloned(fn, inputs):
    # Clone so that an output aliasing an input is not changed by the next perturbation.
    return tuple(o.clone() if _is_tensor(o) else o for o in _as_tuple(fn(*inputs)))


def _central_difference(fn, inputs, entry, delta, eps, idx=None):
    """(f(x + delta) - f(x - delta)) / (2 eps), flattened per output; `entry` is perturbed in place
    (a view of the input's .data, so no version bump and no graph) and restored exactly."""
    orig = entry.clone()
    entry.copy_(orig - delta)
    outa = _run_cloned(fn, inputs)
    entry.copy_(orig + delta)
    outb = _run_cloned(fn, inputs)
    entry.copy_(orig)
    res = []
    for a, b in zip(outa, outb):
        if not _is_float_tensor(a):
            res.append(None)
            continue
        _check_outputs_same_dtype_and_shape(a, b, eps, idx)
        res.append(((b - a) / (2 * eps)).detach().reshape(-1))
    return res


def _numerical_jacobian_wrt_input(fn, inputs, input_idx, func_out, eps):
    """One (input.numel(), output.numel()) Jacobian per output of fn (None for non-float outputs)."""
    inp = inputs[input_idx]
    x = inp.data
    # Output dtype, as torch: the analytical side has the input's.
    jacs = [o.new_zeros((inp.numel(), o.numel())) if _is_float_tensor(o) else None for o in func_out]
    for d_idx, x_idx in enumerate(itertools.product(*[range(m) for m in x.size()])):
        cols = _central_difference(fn, inputs, x[x_idx], eps, eps, idx=x_idx)
        for jac, col in zip(jacs, cols):
            if jac is not None:
                jac[d_idx] = col
    return jacs


def _numerical_jacobian(fn, inputs, func_out, eps):
    """jac[i][j]: Jacobian of output j with respect to the i-th input that requires grad."""
    idxs, _ = _diff_inputs(inputs)
    return [_numerical_jacobian_wrt_input(fn, inputs, i, func_out, eps) for i in idxs]


def _numerical_jvp_wrt_input(fn, inputs, input_idx, u, eps):
    """J u for every output of fn, by one central difference along u (fast mode)."""
    inp = inputs[input_idx]
    x = inp.data
    return _central_difference(fn, inputs, x, u.reshape(x.shape) * eps, eps)


# ----------------------------------------------------------------------------------------------
# analytical side: vector-Jacobian products through autograd.grad

def _vjp_fn(output, diff_inputs):
    def vjp(grad_output):
        return _backward.grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)
    return vjp


def _analytical_jacobian_rows(vjp, output):
    """rows[i][j]: gradient for input i of the j-th output element (one autograd.grad per row)."""
    base = _creation.zeros(tuple(output.shape), dtype=output.dtype, device=output.device)
    flat = base.view(-1)
    rows = None
    for j in range(flat.numel()):
        flat.zero_()
        flat[j] = 1.0
        grads = vjp(base)
        if rows is None:
            rows = [[] for _ in grads]
        for i, g in enumerate(grads):
            rows[i].append(g.clone() if _is_tensor(g) else None)
    return rows or []


def _stack_and_check(rows, diff_inputs, numel_output):
    """Stack per-row gradients into (input.numel(), numel_output) Jacobians; report sizes/dtypes ok."""
    jacs = []
    sizes_ok = types_ok = True
    for i, inp in enumerate(diff_inputs):
        jac = inp.new_zeros((inp.numel(), numel_output))
        for j, g in enumerate(rows[i] if i < len(rows) else []):
            if g is None:
                continue
            if g.size() != inp.size():
                sizes_ok = False
                continue
            if g.dtype != inp.dtype:
                types_ok = False
            jac[:, j] = g.reshape(-1).to(dtype=inp.dtype)
        jacs.append(jac)
    return jacs, sizes_ok, types_ok


def _jacobians_equal(j1, j2, atol):
    # "not >" as torch: NaN Jacobians count as reentrant (the value check reports them instead).
    return all(a.numel() == 0 or not _max_abs_diff(a, b) > atol for a, b in zip(j1, j2))


def _check_analytical_jacobian_attributes(tupled_inputs, output, nondet_tol, check_grad_dtypes,
                                          fast_mode=False, v=None):
    """Analytical Jacobians of `output` (or v^T J in fast mode), computed twice to check reentrancy."""
    _, diff_inputs = _diff_inputs(tupled_inputs)
    vjp = _vjp_fn(output, diff_inputs)
    if fast_mode:
        def compute():
            return [[g.clone() if _is_tensor(g) else None] for g in vjp(v.reshape(output.shape))]
        numel = 1
    else:
        def compute():
            return _analytical_jacobian_rows(vjp, output)
        numel = output.numel()
    jac1, sizes_ok, types_ok = _stack_and_check(compute(), diff_inputs, numel)
    jac2, _, _ = _stack_and_check(compute(), diff_inputs, numel)
    reentrant = _jacobians_equal(jac1, jac2, nondet_tol)
    # torch unpacks (sizes_ok, types_ok) swapped here and so reports a dtype mismatch as a size error;
    # ampgrad reports each under its own name.
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with "
            "same input and grad_output multiple times gives different values, "
            "although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + _FAILED_NONDET_MSG)
    return jac1


def _get_notallclose_msg(analytical, numerical, output_idx, input_idx, is_forward_ad=False):
    mode = "computed with forward mode " if is_forward_ad else ""
    return (f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


# ----------------------------------------------------------------------------------------------
# slow mode: full Jacobians

def _check_no_differentiable_outputs(func, inputs, func_out, eps):
    # Without differentiable outputs the numerical gradient must vanish.
    for jacs in _numerical_jacobian(func, inputs, func_out, eps):
        for jac in jacs:
            if jac is not None and bool(_C.ne(jac, 0).any()):
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def _slow_gradcheck(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                    nondet_tol, masked=None):
    func_out = _as_tuple(func_out)
    if not outputs:
        return _check_no_differentiable_outputs(func, tupled_inputs, func_out, eps)
    numerical = _numerical_jacobian(func, tupled_inputs, func_out, eps)
    # Keep the columns of the outputs that require grad, indexed like `outputs`.
    diff_out_pos = [k for k, o in enumerate(func_out) if _is_tensor(o) and o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _check_analytical_jacobian_attributes(tupled_inputs, o, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][diff_out_pos[i]]
            if not _allclose_with_type_promotion(a, n.to(device=a.device), rtol, atol):
                raise GradcheckError(_get_notallclose_msg(a, n, i, j))
    return True


# ----------------------------------------------------------------------------------------------
# forward mode: Jacobians column by column, one unit tangent per input element (torch's recipe)

def _analytical_jacobian_forward_ad(fn, inputs, outputs):
    """jac[i][j]: (numel of the i-th input that requires grad, numel of float output j) Jacobian."""
    fwAD = forward_ad
    diff = [k for k, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    float_outs = [o for o in outputs if _is_float_tensor(o)]
    jacs = [[o.new_zeros((inputs[k].numel(), o.numel())) for o in float_outs] for k in diff]
    with fwAD.dual_level():
        dual_inputs, fw_grads = list(inputs), []
        for k in diff:
            dual_inputs[k] = fwAD.make_dual(inputs[k].detach(), _creation.zeros_like(inputs[k]))
            fw_grads.append(fwAD.unpack_dual(dual_inputs[k]).tangent)  # the tangent the dual really holds
        for i, fw_grad in enumerate(fw_grads):
            for lin_idx, grad_idx in enumerate(itertools.product(*[range(m) for m in fw_grad.size()])):
                fw_grad[grad_idx] = 1.0
                outs = [o for o in _as_tuple(fn(*dual_inputs)) if _is_float_tensor(o)]
                for j, o in enumerate(outs):
                    tangent = fwAD.unpack_dual(o).tangent
                    if tangent is not None:
                        jacs[i][j][lin_idx] = tangent.reshape(-1)
                fw_grad[grad_idx] = 0.0
    return jacs


def _forward_ad_gradcheck(func, func_out, tupled_inputs, outputs, eps, rtol, atol):
    """Full Jacobians in fast mode too: exact, only slower than torch's random projections."""
    func_out = _as_tuple(func_out)
    if not outputs:
        return _check_no_differentiable_outputs(func, tupled_inputs, func_out, eps)
    numerical = _numerical_jacobian(func, tupled_inputs, func_out, eps)
    analytical = _analytical_jacobian_forward_ad(func, tupled_inputs, func_out)
    float_pos = [k for k, o in enumerate(func_out) if _is_float_tensor(o)]
    diff_out_pos = [k for k, o in enumerate(func_out) if _is_tensor(o) and o.requires_grad]
    for i, k in enumerate(diff_out_pos):
        for j in range(len(numerical)):
            a, n = analytical[j][float_pos.index(k)], numerical[j][k]
            if not _allclose_with_type_promotion(a, n.to(device=a.device), rtol, atol):
                raise GradcheckError(_get_notallclose_msg(a, n, i, j, is_forward_ad=True))
    return True


# ----------------------------------------------------------------------------------------------
# fast mode: compare v^T J u (torch's random projections, https://github.com/pytorch/pytorch/issues/53876)

def _random_unit_vector(numel, dtype, device, rng):
    # numpy's own generator: the user's ampgrad RNG stream is left untouched (ampgrad's rand has no
    # per-call generator), so the vectors differ from torch's but serve the same purpose.
    vec = rng.random(numel)
    norm = np.linalg.norm(vec)
    if norm > 0:
        vec = vec / norm
    return _creation.tensor(vec, dtype=dtype, device=device)


def _adjusted_atol(atol, u, v):
    # |v^T (A - B) u| may reach atol * sum(u) * sum(v) when each entry differs by atol.
    sum_v = 1.0 if v is None else float(v.sum())
    return atol * float(u.sum()) * sum_v


def _run_slow_mode_and_get_error(func, tupled_inputs, func_out, outputs, input_idx, output_idx, rtol, atol,
                                 eps):
    idxs, _ = _diff_inputs(tupled_inputs)
    func_out = _as_tuple(func_out)
    out_pos = [k for k, o in enumerate(func_out) if _is_tensor(o) and o.requires_grad][output_idx]
    slow_numerical = _numerical_jacobian_wrt_input(func, tupled_inputs, idxs[input_idx], func_out, eps)[out_pos]
    slow_analytical = _check_analytical_jacobian_attributes(
        tupled_inputs, outputs[output_idx], nondet_tol=float("inf"), check_grad_dtypes=False)[input_idx]
    slow_max_diff = _max_abs_diff(slow_numerical, slow_analytical)
    slow_allclose = _allclose_with_type_promotion(slow_analytical, slow_numerical, rtol, atol)
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
           "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
           "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {slow_numerical}\n"
           f"Analytical:\n{slow_analytical}\n\n"
           f"The max per-element difference (slow mode) is: {slow_max_diff}.\n")
    if slow_allclose:
        msg += _FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_gradcheck(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol,
                    masked=None):
    func_out = _as_tuple(func_out)
    inp_idxs, inp_tensors = _diff_inputs(tupled_inputs)
    rng = np.random.default_rng(0)
    all_u = [_random_unit_vector(t.numel(), t.dtype, t.device, rng) for t in inp_tensors]
    all_v = [_random_unit_vector(o.numel(), o.dtype, o.device, rng) for o in outputs]

    # numerical[i][j] = v_j . (J_ji u_i), with J u by one central difference per input
    diff_out_pos = [k for k, o in enumerate(func_out) if _is_tensor(o) and o.requires_grad]
    numerical = []
    for inp_idx, u in zip(inp_idxs, all_u):
        jvps = _numerical_jvp_wrt_input(func, tupled_inputs, inp_idx, u, eps)
        if not outputs:
            for jvp in jvps:
                if jvp is not None and jvp.numel() and float(jvp.abs().max()) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
            continue
        numerical.append([(v * jvps[k]).sum() for v, k in zip(all_v, diff_out_pos)])
    if not outputs:
        return True

    # analytical[j][i] = (v_j^T J_ji) . u_i
    analytical = []
    for o, v in zip(outputs, all_v):
        vJs = _check_analytical_jacobian_attributes(tupled_inputs, o, nondet_tol, check_grad_dtypes,
                                                    fast_mode=True, v=v)
        analytical.append([vJ.reshape(-1).dot(u.to(dtype=vJ.dtype)) for vJ, u in zip(vJs, all_u)])

    for i, per_input in enumerate(numerical):
        for j, n in enumerate(per_input):
            a = analytical[j][i]
            updated_atol = _adjusted_atol(atol, all_u[i], all_v[j])
            if not _allclose_with_type_promotion(a, n.to(device=a.device), rtol, updated_atol):
                slow = _run_slow_mode_and_get_error(func, tupled_inputs, func_out, outputs, i, j, rtol, atol, eps)
                raise GradcheckError(_get_notallclose_msg(a, n, j, i) + slow)
    return True


# ----------------------------------------------------------------------------------------------
# backward-mode sanity checks

class _UndefinedGrad(Function):
    """Identity whose backward sends an undefined (None) gradient upstream, like torch's UndefinedGrad."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return None


def _test_backward_mul_by_grad_output(outputs, inputs, masked):
    _, diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads_input = _backward.grad(
        outputs, diff_inputs, [_creation.zeros(tuple(o.shape), dtype=o.dtype, device=o.device) for o in outputs],
        allow_unused=True)
    for gi, di in zip(grads_input, diff_inputs):
        if gi is None:
            continue
        if masked:
            if not _functions.allclose(gi, _creation.zeros_like(gi)):
                raise GradcheckError("backward not multiplied by grad_output")
        elif not bool(gi.eq(0).all()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")
    return True


def _test_undefined_backward_mode(func, outputs, inputs):
    """Backward must cope with undefined (None) output gradients. ampgrad's engine drops an undefined
    gradient instead of passing it on, so this mostly checks that backward runs and stays zero."""
    _, diff_inputs = _diff_inputs(inputs)
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    undefined = _UndefinedGrad.apply

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking "
                      "feature is enabled by default, but it may break existing callers "
                      "of this function. If this is true for you, you can call this "
                      'function with "check_undefined_grad=False" to disable the feature', stacklevel=2)

    def check_undefined_grad_support(output_to_check):
        grads_output = [_creation.zeros(tuple(o.shape), dtype=o.dtype, device=o.device) for o in output_to_check]
        try:
            grads_input = _backward.grad(output_to_check, diff_inputs, grads_output, allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError("Expected backward function to handle undefined output grads. "
                                 'Please look at "Notes about undefined output gradients" in '
                                 '"tools/autograd/derivatives.yaml"') from e
        for gi in grads_input:
            if gi is not None and not bool(gi.eq(0).all()):
                warn_bc_breaking()
                raise GradcheckError("Expected all input grads to be undefined or zero when all output grads "
                                     'are undefined or zero. Please look at "Notes about undefined output '
                                     'gradients" in "tools/autograd/derivatives.yaml"')
        return True

    # All outputs undefined at once, then (with several outputs) one at a time.
    outputs_to_check = [[undefined(o) for o in _differentiable_outputs(func(*inputs)) if _is_tensor(o)]]
    if len(outputs_to_check[0]) > 1:
        for undef_idx in range(len(outputs)):
            outs = _differentiable_outputs(func(*inputs))
            outputs_to_check.append([undefined(o) if k == undef_idx else o for k, o in enumerate(outs)])
    return all(check_undefined_grad_support(o) for o in outputs_to_check)


# ----------------------------------------------------------------------------------------------
# public API

def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True,
              fast_mode=False, masked=None):
    """Checks finite-difference gradients of `func` against autograd's for the inputs that require
    grad (use float64 inputs). Returns True, or raises GradcheckError (False if raise_exception=False).
    fast_mode compares random projections v^T J u instead of full Jacobians."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if check_batched_grad:
        raise NotImplementedError(_NO_BATCHED.format("gradcheck(check_batched_grad=True)", "check_batched_grad"))
    if check_batched_forward_grad:
        raise NotImplementedError(_NO_BATCHED.format("gradcheck(check_batched_forward_grad=True)",
                                                     "check_batched_forward_grad"))
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                                 check_grad_dtypes, fast_mode, masked, check_forward_ad, check_backward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                      fast_mode, masked, check_forward_ad=False, check_backward_ad=True):
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    if check_backward_ad:
        check = _fast_gradcheck if fast_mode else _slow_gradcheck
        check(func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, masked=masked)
    if check_forward_ad:
        _forward_ad_gradcheck(func, func_out, tupled_inputs, outputs, eps, rtol, atol)
    if check_backward_ad:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs, masked)
        if check_undefined_grad:
            _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def _make_grad_output(x, noncontiguous):
    """Like torch.testing.make_tensor(low=-1, high=1, requires_grad=True): uniform in [-1, 1)."""
    dtype = x.dtype if x.is_floating_point() else _C.float64
    shape = tuple(x.shape)
    if noncontiguous and x.numel() > 1:
        # Every other element of a twice-as-wide buffer (torch's recipe).
        wide = _creation.rand(shape[:-1] + (2 * shape[-1],), dtype=dtype, device=x.device) * 2 - 1
        t = wide[..., ::2]
    else:
        t = _creation.rand(shape, dtype=dtype, device=x.device) * 2 - 1
    return t.detach().requires_grad_(True)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Checks second derivatives: gradcheck of (inputs, grad_outputs) -> autograd.grad(func(inputs),
    inputs, grad_outputs, create_graph=True). Random grad_outputs in [-1, 1) when not given."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad:
        raise NotImplementedError(_NO_BATCHED.format("gradgradcheck(check_batched_grad=True)",
                                                     "check_batched_grad"))
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_make_grad_output(x, gen_non_contig_grad_outputs) for x in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)

    # Which inputs / grad_outputs are differentiable, decided once up front (as torch does).
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs) if _is_tensor(x) and x.requires_grad}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_args_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                             for i, x in enumerate(args[-num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_args_indices)
        grad_inputs = _backward.grad(outputs, diff_input_args, grad_outputs, create_graph=True,
                                       allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)


# ----------------------------------------------------------------------------------------------
# torch's old semi-public helpers (deprecated there; kept for scripts that still call them)

def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """Deprecated in torch: numerical Jacobians of fn(inputs) (fn takes the tuple) w.r.t. `inputs`."""
    warnings.warn("`get_numerical_jacobian` was part of PyTorch's private API and not meant to be exposed.",
                  FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    if target is not None:
        raise NotImplementedError("get_numerical_jacobian: `target` is not supported by ampgrad")
    tupled = _as_tuple(inputs)
    def fn_pack(*inp):
        return fn(inp)
    func_out = _as_tuple(fn_pack(*tupled))
    return tuple(jacs[0] for jacs in _numerical_jacobian(fn_pack, tupled, func_out, eps))


def get_numerical_jacobian_wrt_specific_input(fn, input_idx, inputs, outputs, eps, input=None,
                                              is_forward_ad=False):
    """Numerical Jacobians of every output of fn(*inputs) w.r.t. inputs[input_idx]."""
    if not inputs[input_idx].requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    return tuple(_numerical_jacobian_wrt_input(fn, _as_tuple(inputs), input_idx, _as_tuple(outputs), eps))


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    """Deprecated in torch: (jacobians, reentrant, sizes_ok, types_ok) of `output` w.r.t. `inputs`."""
    warnings.warn("`get_analytical_jacobian` was part of PyTorch's private API and not meant to be exposed.",
                  FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    tupled = _as_tuple(inputs)
    _, diff_inputs = _diff_inputs(tupled)
    vjp = _vjp_fn(output, diff_inputs)
    jac1, sizes_ok, types_ok = _stack_and_check(_analytical_jacobian_rows(vjp, output), diff_inputs,
                                                output.numel())
    jac2, _, _ = _stack_and_check(_analytical_jacobian_rows(vjp, output), diff_inputs, output.numel())
    return tuple(jac1), _jacobians_equal(jac1, jac2, nondet_tol), sizes_ok, types_ok
