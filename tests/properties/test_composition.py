"""The composition matrix: every transform applied to every other, checked against finite
differences of the level below (never against another adcompile derivative of the same
order).

Rows are (outer transform, inner function). Inner functions are functions of one array x:
the base functions, their derived functions (grad, hessian, jacobian rev/fwd) and compiled
functions that call a derivative inside (jvp, hvp as jvp of grad, value_and_grad, hessian
in a loop, grad_norm, jacobian). Outer transforms that need a scalar function (grad,
value_and_grad, hessian, hvp) apply to the scalar inner functions; the others to all. The
reference is computed from the inner function's numbers alone: central differences of it
(first order) or second differences of it (hessian, hvp). Three-deep compositions
(jacobian(hessian(f)), hessian(grad_norm), jacobian(jacobian(grad(f)))) are rows too, the
inner being itself a derivative. Most rows run the generated Python; a sample runs numba.
"""
import re

import numpy as np
import pytest

import adcompile
from oracles import hessian_by_second_differences, jacobian_by_differences

X = np.array([0.4, -0.7, 0.9])
V = np.array([0.3, -0.5, 0.8])
W = np.array([[0.2, -0.1, 0.4], [0.3, 0.5, -0.6], [-0.2, 0.1, 0.7]])


def f(x):
    return np.sum(np.sin(x) * x ** 2) + np.sum(x) ** 3 / 10.0 + np.exp(np.sum(x * V))


def F(x):
    return np.tanh(x) * np.sum(x ** 2) + np.cos(x * V)


def f_loop(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.sin(x * (i + 1.0)) * x)
    return s


def jvp_in_code(x):
    return adcompile.jvp(F, (x,), (V,))[1]


def hvp_in_code(x):
    return adcompile.jvp(adcompile.grad(f), (x,), (V,))[1]


def value_and_grad_in_code(x):
    value, gradient = adcompile.value_and_grad(f)(x)
    return value * gradient


def hessian_in_a_loop(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(adcompile.hessian(f)(x * (i + 1.0)) * W)
    return s


def grad_norm(x):
    return np.sum(adcompile.grad(f)(x) ** 2)


def jacobian_in_code(x):
    return np.sum(adcompile.jacobian(F)(x) * W)


def summed_jvp_in_code(x):
    return np.sum(adcompile.jvp(F, (x,), (V,))[1] * x)


def summed_hvp_in_code(x):
    return np.sum(adcompile.jvp(adcompile.grad(f), (x,), (V,))[1] * x)


def hvp_along_sin_in_code(x):  # the tangent depends on x (and f reads the global V)
    return np.sum(adcompile.jvp(adcompile.grad(f), (x,), (np.sin(x),))[1])


def summed_value_and_grad_in_code(x):
    value, gradient = adcompile.value_and_grad(f)(x)
    return value * np.sum(gradient ** 2)


def compiled(fn, backend):
    return adcompile.compile(fn, backend=backend)


# inner name -> (maker(backend) -> function of x, whether it returns a scalar)
INNER = {
    "f": (lambda b: compiled(f, b), True),
    "f_loop": (lambda b: compiled(f_loop, b), True),
    "F": (lambda b: compiled(F, b), False),
    "grad(f)": (lambda b: adcompile.grad(compiled(f, b)), False),
    "grad(f_loop)": (lambda b: adcompile.grad(compiled(f_loop, b)), False),
    "hessian(f)": (lambda b: adcompile.hessian(compiled(f, b)), False),
    "hessian(f_loop)": (lambda b: adcompile.hessian(compiled(f_loop, b)), False),
    "jacobian_rev(F)": (lambda b: adcompile.jacobian(compiled(F, b)), False),
    "jacobian_fwd(F)": (lambda b: adcompile.jacobian(compiled(F, b), mode="fwd"), False),
    "jacobian(grad(f))": (lambda b: adcompile.jacobian(adcompile.grad(compiled(f, b))), False),
    "jvp(F) in code": (lambda b: compiled(jvp_in_code, b), False),
    "hvp(f) in code": (lambda b: compiled(hvp_in_code, b), False),
    "value_and_grad(f) in code": (lambda b: compiled(value_and_grad_in_code, b), False),
    "hessian(f) in a compiled loop": (lambda b: compiled(hessian_in_a_loop, b), True),
    "grad_norm": (lambda b: compiled(grad_norm, b), True),
    "jacobian(F) in code": (lambda b: compiled(jacobian_in_code, b), True),
    "sum of jvp(F) in code": (lambda b: compiled(summed_jvp_in_code, b), True),
    "sum of hvp(f) in code": (lambda b: compiled(summed_hvp_in_code, b), True),
    "sum of value_and_grad(f) in code": (lambda b: compiled(summed_value_and_grad_in_code, b), True),
    "hvp(f) along sin(x) in code": (lambda b: compiled(hvp_along_sin_in_code, b), True),
}
# which transform each inner function applies (inside a compiled function for the "in code" ones)
INNER_TRANSFORM = {"grad(f)": "grad", "grad(f_loop)": "grad", "grad_norm": "grad", "hessian(f)": "hessian",
                   "hessian(f_loop)": "hessian", "hessian(f) in a compiled loop": "hessian",
                   "jacobian_rev(F)": "jacobian", "jacobian_fwd(F)": "jacobian", "jacobian(F) in code": "jacobian",
                   "jacobian(grad(f))": "jacobian", "jvp(F) in code": "jvp", "sum of jvp(F) in code": "jvp",
                   "hvp(f) in code": "hvp", "sum of hvp(f) in code": "hvp", "hvp(f) along sin(x) in code": "hvp",
                   "value_and_grad(f) in code": "value_and_grad", "sum of value_and_grad(f) in code": "value_and_grad"}


# ----------------------------------------------------------------- finite-difference oracles
def close(got, expected, rtol=1e-6, atol=1e-7):
    got, expected = np.asarray(got, dtype=float), np.asarray(expected, dtype=float)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    scale = max(1.0, float(np.max(np.abs(expected))) if expected.size else 1.0)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol * scale)


# ----------------------------------------------------------------- outer transforms
def outer_grad(h):
    close(adcompile.grad(h)(X), jacobian_by_differences(h, (X,), eps=1e-5))


def outer_value_and_grad(h):
    value, gradient = adcompile.value_and_grad(h)(X)
    close(value, h(X), rtol=1e-12, atol=1e-12)
    close(gradient, jacobian_by_differences(h, (X,), eps=1e-5))


def outer_vjp(h):
    out, pullback = adcompile.vjp(h, X)
    close(out, h(X), rtol=1e-12, atol=1e-12)
    u = np.random.default_rng(3).standard_normal(np.shape(out))
    u = u if np.ndim(out) else float(u)
    cotangents = pullback(u)
    assert len(cotangents) == 1  # one per primal
    close(cotangents[0], jacobian_by_differences(lambda x: np.sum(u * h(x)), (X,), eps=1e-5))


def outer_jvp(h):
    out, tangent = adcompile.jvp(h, (X,), (V,))
    close(out, h(X), rtol=1e-12, atol=1e-12)
    close(tangent, (np.asarray(h(X + 1e-5 * V)) - np.asarray(h(X - 1e-5 * V))) / 2e-5)


def outer_hessian(h):
    close(adcompile.hessian(h)(X), hessian_by_second_differences(h, (X,)), rtol=1e-5, atol=1e-6)


def outer_hvp(h):
    close(adcompile.hvp(h, (X,), (V,)), hessian_by_second_differences(h, (X,)) @ V, rtol=1e-5, atol=1e-6)


def outer_jacobian_rev(h):
    close(adcompile.jacobian(h)(X), jacobian_by_differences(h, (X,), eps=1e-5))


def outer_jacobian_fwd(h):
    close(adcompile.jacobian(h, mode="fwd")(X), jacobian_by_differences(h, (X,), eps=1e-5))


OUTER = {"grad": (outer_grad, True), "value_and_grad": (outer_value_and_grad, True),
         "vjp": (outer_vjp, False), "jvp": (outer_jvp, False), "hessian": (outer_hessian, True),
         "hvp": (outer_hvp, True), "jacobian_rev": (outer_jacobian_rev, False),
         "jacobian_fwd": (outer_jacobian_fwd, False)}

ROWS = [(outer, inner) for outer, (_, needs_scalar) in OUTER.items()
        for inner, (_, scalar) in INNER.items() if scalar or not needs_scalar]
NUMBA_ROWS = [("grad", "hessian(f) in a compiled loop"), ("jacobian_rev", "hessian(f)"),
              ("hessian", "grad_norm"), ("vjp", "grad(f_loop)"), ("jvp", "jacobian_fwd(F)")]


@pytest.mark.parametrize("outer, inner", ROWS, ids=[f"{o}-of-{i}" for o, i in ROWS])
def test_composition_matches_finite_differences_of_the_level_below(outer, inner):
    OUTER[outer][0](INNER[inner][0]("python"))


@pytest.mark.parametrize("outer, inner", NUMBA_ROWS, ids=[f"{o}-of-{i}" for o, i in NUMBA_ROWS])
def test_composition_compiled_by_numba(outer, inner):
    OUTER[outer][0](INNER[inner][0]("numba"))


def test_the_matrix_covers_every_pair_and_the_three_deep_ones():
    """vjp cannot be called inside compiled code (its pullback is a Python object), so it is
    an outer transform only; every other transform is an inner one under every outer one."""
    pairs = {(outer, INNER_TRANSFORM[inner]) for outer, inner in ROWS if inner in INNER_TRANSFORM}
    inner_transforms = {"grad", "value_and_grad", "jvp", "hvp", "hessian", "jacobian"}
    assert pairs == {(outer, inner) for outer in OUTER for inner in inner_transforms}
    three_deep = {("jacobian_rev", "hessian(f)"), ("jacobian_fwd", "hessian(f)"), ("hessian", "grad_norm"),
                  ("jacobian_rev", "jacobian(grad(f))"), ("grad", "hessian(f) in a compiled loop"),
                  ("vjp", "hessian(f_loop)")}
    assert three_deep <= set(ROWS)


def test_derived_functions_are_inspectable_and_compile_like_any_other():
    h = adcompile.hessian(compiled(f, "python"))
    text = adcompile.source(adcompile.jacobian(h), X)
    assert "def f_hessian_jacobian(x" in text and re.search(r"for k\w* in range\(", text)
    inner = adcompile.source(compiled(hessian_in_a_loop, "python"), X)
    assert "for i in range(2):" in inner


def test_reverse_over_a_reverse_sweep_with_tapes_takes_columns():
    """A Hessian of a loop holds the gradient's tapes, which reverse mode does not take: its
    vjp is built from one jvp per input element, and its Jacobian by columns."""
    hessian = adcompile.hessian(compiled(f_loop, "python"))
    close(adcompile.jacobian(hessian)(X), jacobian_by_differences(hessian, (X,), eps=1e-5))
    summed = compiled(sum_of_a_hessian_of_a_loop, "python")
    close(adcompile.grad(summed)(X), jacobian_by_differences(summed, (X,), eps=1e-5))


def sum_of_a_hessian_of_a_loop(x):
    return np.sum(adcompile.hessian(f_loop)(x) * W)


def sines(x):
    return np.sum(np.sin(x) * x)


def test_the_pullback_does_not_run_the_forward_pass_again():
    fn = compiled(sines, "python")
    out, pullback = adcompile.vjp(fn, X)
    half = pullback.forward_half
    runs = []
    original = half.run
    half.run = lambda *a, **k: runs.append(1) or original(*a, **k)
    first, second = pullback(1.0), pullback(2.0)
    assert runs == []
    close(second[0], 2 * first[0], rtol=1e-15, atol=0)
    close(first[0], jacobian_by_differences(fn, (X,), eps=1e-5))


def test_a_pullback_is_not_differentiated_but_its_function_is():
    fn = compiled(sines, "python")
    _, pullback = adcompile.vjp(fn, X)
    assert repr(pullback) == "<adcompile pullback of sines>"
    with pytest.raises(adcompile.AdCompileError, match="holds the values of one forward pass"):
        adcompile.grad(pullback)


HESSIAN_OF_F = adcompile.hessian(adcompile.compile(f, backend="python"))


def loop_over_a_module_level_hessian(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(HESSIAN_OF_F(x * (i + 1.0)) * W)
    return s


def test_a_hessian_made_outside_is_called_and_differentiated_inside_a_compiled_loop():
    fn = compiled(loop_over_a_module_level_hessian, "python")
    close(adcompile.grad(fn)(X), jacobian_by_differences(fn, (X,), eps=1e-5))
    expected = sum(np.sum(HESSIAN_OF_F(X * (i + 1.0)) * W) for i in range(3))
    close(fn(X), expected, rtol=1e-12, atol=1e-12)
