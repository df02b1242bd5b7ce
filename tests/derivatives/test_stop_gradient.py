"""``adcompile.stop_gradient``: the value, with a zero derivative in every mode and at every order.

The oracle: ``f(x) = g(x, stop_gradient(x))`` has the derivatives of ``x -> g(x, c)`` with the
constant ``c = x`` held fixed, computed here by central differences of ``g`` with ``c`` frozen.
"""
import numpy as np
import pytest

import adcompile
from adcompile import stop_gradient
from oracles import gradient_by_differences, hessian_by_second_differences, jacobian_by_differences

BACKENDS = ["python", "numba"]


def g_arrays(x, c):
    return np.sum(np.sin(x) * c ** 2) + c[0] * x[1] ** 3


def stopped_arrays(x):
    return g_arrays(x, stop_gradient(x))


def g_loop(x, c):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] ** 2 * c[i] + np.exp(c[i] * 0.1) * x[i]
    return total


def stopped_in_a_loop(x):
    total = 0.0
    for i in range(x.shape[0]):
        c = stop_gradient(x[i])  # a scalar, stopped inside the loop
        total = total + x[i] ** 2 * c + np.exp(c * 0.1) * x[i]
    return total


def _x(dtype=np.float64):
    return np.array([0.4, -0.9, 1.3], dtype=dtype)


def _frozen(g, x):
    """``v -> g(v, x)``: the function whose derivatives the stopped one has at ``x``."""
    c = x.copy()
    return lambda v: g(v, c)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("stopped, g", [(stopped_arrays, g_arrays), (stopped_in_a_loop, g_loop)],
                         ids=["arrays", "loop"])
def test_gradient_is_that_of_the_frozen_function(backend, stopped, g):
    f = adcompile.compile(stopped, backend=backend)
    x = _x()
    assert np.isclose(f(x), g(x, x), rtol=1e-12)
    np.testing.assert_allclose(adcompile.grad(f)(x), gradient_by_differences(_frozen(g, x), (x,)),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_is_that_of_the_frozen_function(backend):
    f = adcompile.compile(stopped_arrays, backend=backend)
    x = _x()
    np.testing.assert_allclose(adcompile.hessian(f)(x), hessian_by_second_differences(_frozen(g_arrays, x), (x,)),
                               rtol=1e-4, atol=1e-6)


def test_forward_mode_and_jacobians():
    f = adcompile.compile(lambda x: np.tanh(x) * stop_gradient(x) ** 2, backend="python")
    x = _x()
    frozen = _frozen(lambda v, c: np.tanh(v) * c ** 2, x)
    u = np.array([0.3, -1.0, 2.0])
    _, tangent = adcompile.jvp(f, (x,), (u,))
    np.testing.assert_allclose(tangent, jacobian_by_differences(frozen, (x,)) @ u, rtol=1e-6, atol=1e-8)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(adcompile.jacobian(f, mode=mode)(x), jacobian_by_differences(frozen, (x,)),
                                   rtol=1e-6, atol=1e-8)


def test_a_stopped_value_has_no_derivative_at_second_order():
    # d/dx [x^2 * sg(x)] = 2 x sg(x) -> hvp: 2 sg(x) u, not 6 x u
    f = adcompile.compile(lambda x: np.sum(x ** 2 * stop_gradient(x)), backend="python")
    x, u = _x(), np.array([1.0, 2.0, -1.0])
    hv = adcompile.hvp(f, (x,), (u,))
    np.testing.assert_allclose(hv, 2 * x * u, rtol=1e-12)
    third = adcompile.grad(lambda x: np.sum(adcompile.hessian(f)(x)))  # grad of the Hessian's sum
    np.testing.assert_allclose(third(x), np.zeros(3), atol=0)   # d/dx of 2 sg(x) on the diagonal: zero


def test_stopping_a_gradient_inside_the_differentiated_function():
    # grad(f)(x) computed inside, then stopped: the outer gradient sees it as a constant
    inner = adcompile.compile(lambda x: np.sum(x ** 3), backend="python")

    def outer(x):
        return np.sum(stop_gradient(adcompile.grad(inner)(x)) * x)
    x = _x()
    np.testing.assert_allclose(adcompile.grad(adcompile.compile(outer, backend="python"))(x), 3 * x ** 2,
                               rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalars_tuples_and_vmap(backend):
    def f(a, x):
        pair = stop_gradient((a, x))
        return a * pair[0] + np.sum(x * pair[1])
    compiled = adcompile.compile(f, backend=backend)
    a, x = 1.5, _x()
    ga, gx = adcompile.grad(compiled, wrt=(0, 1))(a, x)
    assert np.isclose(ga, a) and np.allclose(gx, x)
    batch = np.stack([x, 2 * x])
    np.testing.assert_allclose(adcompile.vmap(compiled, in_axes=(None, 0))(a, batch),
                               [f(a, row) for row in batch], rtol=1e-12)


def test_float32_and_a_view():
    f = adcompile.compile(lambda x: np.sum(x[1:] * stop_gradient(x[:-1])), backend="python")
    x = _x(np.float32)
    g = adcompile.grad(f)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, [0.0, x[0], x[1]], rtol=1e-6)


def test_the_stopped_value_is_a_copy_in_compiled_code():
    @adcompile.compile(backend="python")
    def f(x):
        c = stop_gradient(x)
        c[0] = 10.0
        return np.sum(x * c)
    x = _x()
    assert np.isclose(f(x), 10.0 * x[0] + np.sum(x[1:] ** 2))


def test_eagerly_it_returns_its_argument():
    x = _x()
    assert stop_gradient(x) is x
    assert stop_gradient(2.5) == 2.5
