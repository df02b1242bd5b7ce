"""Oracles for the batched-tangent Jacobian and for compositions of three transforms.

``jacobian_fwd_check``: ``jacobian(f, wrt=k, mode="fwd")`` (every column's tangent at once)
contracted with the cotangent equals the reverse-mode gradient, which the oracles compared
with finite differences before.

``composition_checks`` runs one of ``THIRD_ORDER_FORMS`` on a scalar program ``f``:

- ``grad_of_hessian``: ``g = sum(tanh(hessian(f)(...)))`` written in the module, compiled
  (the Hessian inlined), its gradient against differences of ``g`` evaluated with the
  Hessian the harness checked (reverse over forward over reverse);
- ``jvp_of_grad_of_grad``: ``g = sum(sin(grad(f)(...)))`` likewise, then ``jvp(grad(g))``
  against differences of ``grad(g)`` along a direction;
- ``jvp_of_hessian``: ``jvp(hessian(f))`` against differences of the Hessian.

Each reference is built only from the level below, itself checked against differences, so a
wrong third derivative cannot agree with its reference. A kink near the point (the coarse and
fine differences disagree) skips the check, as it does for the Hessian.
"""
import numpy as np

import adcompile

from .numerics import (ATOL, EXACT_ATOL, EXACT_RTOL, FD_CHECK_STEP, FD_STEP, RTOL, as_list, central_gradient,
                       close, fresh, perturbed, random_direction, worst)

THIRD_ORDER_FORMS = ("grad_of_hessian", "jvp_of_grad_of_grad", "jvp_of_hessian")
WRAPPER = "g_third"
OUTER = {"grad_of_hessian": ("hessian", np.tanh, "np.tanh"),
         "jvp_of_grad_of_grad": ("grad", np.sin, "np.sin")}


def wrt_of(program):
    """The argument the inner transform differentiates: one float argument, by the seed."""
    indices = program.float_arg_indices
    return indices[program.seed % len(indices)]


def wrapper_source(program, form):
    """Module text defining ``g_third`` (calling the inner transform of ``f``), or ""."""
    if form not in OUTER:
        return ""
    inner, _, outer_text = OUTER[form]
    params = ", ".join(program.arg_names)
    return (f"\n\nimport adcompile\n\n\ndef {WRAPPER}({params}):\n"
            f"    inner = adcompile.{inner}(f, wrt={wrt_of(program)})({params})\n"
            f"    return np.sum({outer_text}(inner))\n")


def jacobian_fwd_check(check, compiled, grads):
    position = check.program.seed % len(check.indices)
    k = check.indices[position]
    jac = check.derived_call("jacobian-fwd", adcompile.jacobian(compiled, wrt=k, mode="fwd"), *check.args)
    jac = np.asarray(jac, dtype=float)
    if check.scalar:
        contracted = jac
    else:
        cot = np.asarray(check.cotangent[0], dtype=float)
        if jac.shape != cot.shape + np.shape(check.args[k]):
            check.wrong("jacobian-fwd-shape", f"shape {jac.shape} for output {cot.shape}, input {np.shape(check.args[k])}")
        contracted = np.tensordot(cot, jac, axes=cot.ndim) if cot.ndim else cot * jac
    expected = np.asarray(grads[position], dtype=float)
    rtol, atol = check.same() if check.single else (EXACT_RTOL * 1e3, EXACT_ATOL * 1e3 * check.scale)
    if not close(contracted, expected, rtol, atol):
        check.wrong("jacobian-fwd-vs-reverse", worst(contracted, expected))


def _differences(fn, args, indices):
    """Central differences of scalar ``fn``, or None where they are not self-consistent."""
    fine = central_gradient(fn, args, indices, FD_STEP)
    coarse = central_gradient(fn, args, indices, FD_CHECK_STEP)
    return fine if close(coarse, fine, RTOL, ATOL) else None


def flat(value):
    """A result (scalar, array or tuple of them) as one float vector."""
    return np.concatenate([np.ravel(v) for v in as_list(value)])


def _directional(fn, args, direction):
    """Central difference of ``fn`` (flattened) along ``direction``, or None at a kink."""
    def at(step):
        return flat(fn(*perturbed(fresh(args), direction, step)))
    fine = (at(FD_STEP) - at(-FD_STEP)) / (2 * FD_STEP)
    coarse = (at(FD_CHECK_STEP) - at(-FD_CHECK_STEP)) / (2 * FD_CHECK_STEP)
    return fine if close(coarse, fine, RTOL, ATOL) else None


def _scale(values):
    return max([1.0] + [float(np.max(np.abs(np.asarray(v, dtype=float)), initial=0.0)) for v in values])


def composition_checks(check, compiled, form):
    k = wrt_of(check.program)
    if form == "jvp_of_hessian":
        hessian = adcompile.hessian(compiled, wrt=k)
        direction = random_direction(check.rng, check.args, check.indices)
        _, tangent = check.derived_call("jvp-of-hessian", lambda *a: adcompile.jvp(hessian, a, direction), *check.args)
        expected = _directional(lambda *a: check.adcompile_call("hessian", hessian, *a), check.args, direction)
        if expected is not None and not close(flat(tangent), expected, RTOL, ATOL * _scale([expected])):
            check.wrong("jvp-of-hessian-vs-fd", worst(tangent, expected))
        return
    inner_kind, outer, _ = OUTER[form]
    inner = getattr(adcompile, inner_kind)(compiled, wrt=k)

    def reference(*a):
        return float(np.sum(outer(np.asarray(check.adcompile_call(inner_kind, inner, *a), dtype=float))))

    g = check.adcompile_call("compile-composition", lambda: adcompile.compile(
        getattr(check.module, WRAPPER), backend=check.backend, tiered=False))
    value = check.adcompile_call(form, g, *fresh(check.args))
    expected_value = reference(*fresh(check.args))
    scale = max(1.0, abs(expected_value))
    if not close(value, expected_value, EXACT_RTOL * 1e3, EXACT_ATOL * 1e3 * scale):
        check.wrong(form + "-forward", worst(value, expected_value))
    fd = _differences(reference, check.args, check.indices)
    if fd is None:
        return
    grad_g = adcompile.grad(g, wrt=check.indices)
    grads = check.derived_call(form + "-grad", grad_g, *check.args)
    if not close(list(grads), fd, RTOL, ATOL * _scale(fd) * scale):
        check.wrong(form + "-grad-vs-fd", worst(list(grads), fd))
    if form != "jvp_of_grad_of_grad":
        return
    direction = random_direction(check.rng, check.args, check.indices)
    _, tangent = check.derived_call(form, lambda *a: adcompile.jvp(grad_g, a, direction), *check.args)
    expected = _directional(lambda *a: check.adcompile_call("grad", grad_g, *a), check.args, direction)
    if expected is not None and not close(flat(tangent), expected, RTOL, ATOL * _scale([expected])):
        check.wrong(form + "-vs-fd", worst(flat(tangent), expected))
