"""Special functions and predicates (issue 14) beyond the rule table: values at the special
points (sinc at 0, xlogy at x == 0, nan_to_num's defaults), boolean results of np.all/np.any
that carry no derivative, derivatives of every order of gammaln through the polygamma
kernels, float32 under numba, and the errors for what is not supported.
"""
import math

import numpy as np
import pytest
import scipy.special as sp
from scipy import special
from scipy.special import xlogy

import adcompile
from adcompile.errors import UnsupportedFunctionError
from test_rules import CASES, check_gradient, check_transpose_identity

BACKENDS = ["python", "numba"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_sinc_at_zero_value_and_derivatives(backend):
    def f(x):
        return np.sum(np.sinc(x))

    x = np.array([0.0, 1e-12, -1e-9, 0.5])
    compiled = adcompile.compile(f, backend=backend)
    assert compiled(x) == pytest.approx(np.sum(np.sinc(x)), rel=1e-15)
    g = adcompile.grad(compiled)(x)
    exact = np.where(x == 0, 0.0, (np.cos(np.pi * x) - np.sinc(x)) / np.where(x == 0, 1.0, x))
    np.testing.assert_allclose(g[[0, 3]], exact[[0, 3]], atol=1e-15)
    assert abs(g[1]) < 1e-10 and abs(g[2]) < 1e-8  # -pi^2 x / 3 near 0
    hessian = adcompile.hessian(compiled)(x)
    np.testing.assert_allclose(np.diag(hessian)[:3], -np.pi ** 2 / 3, rtol=1e-9)  # sinc''(0) = -pi^2/3


@pytest.mark.parametrize("backend", BACKENDS)
def test_all_any_values_are_booleans_like_numpy(backend):
    def f(x, y):
        return (np.all(x > 0), np.any(x > 1.5), np.all(x > -2.0, axis=0), np.any(x > 1.0, axis=1),
                np.all(y, axis=1, keepdims=True), (x > 0).any(), x.all(), np.any(y), np.all(x[0, 0] > 0))

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    x[1, 2] = 0.0
    y = x > -0.5
    result = adcompile.compile(f, backend=backend)(x, y)
    for value, expected in zip(result, f(x, y)):
        assert np.asarray(value).dtype == np.bool_
        np.testing.assert_array_equal(value, expected)


def test_all_any_carry_no_derivative():
    def f(x):
        return np.sum(np.all(x > 0.0, axis=1) * 1.0) + np.any(x > 1.0) * 2.0 + np.sum(np.heaviside(x, 0.5))

    x = np.array([[0.5, 1.5], [-0.3, 0.7]])
    np.testing.assert_array_equal(adcompile.grad(f)(x), np.zeros_like(x))
    assert adcompile.compile(f)(x) == f(x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nan_to_num_defaults_and_derivative(backend, dtype):
    def f(x):
        return np.nan_to_num(x), np.nan_to_num(x, nan=-1.0, posinf=5.0)

    x = np.array([np.nan, np.inf, -np.inf, 2.5], dtype=dtype)
    for value, expected in zip(adcompile.compile(f, backend=backend)(x), f(x)):
        assert value.dtype == dtype
        np.testing.assert_array_equal(value, expected)
    def loss(x):
        return np.sum(np.nan_to_num(x) * 0.5 + np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0))

    gradient = adcompile.grad(adcompile.compile(loss, backend=backend))(x)
    np.testing.assert_array_equal(gradient, np.array([0.0, 0.0, 0.0, 1.5], dtype=dtype))


@pytest.mark.parametrize("backend", BACKENDS)
def test_xlogy_at_zero(backend):
    def f(x, y):
        return np.sum(xlogy(x, y))

    x, y = np.array([0.0, 0.0, 2.0]), np.array([0.5, 0.0, 3.0])
    compiled = adcompile.compile(f, backend=backend)
    assert compiled(x, y) == pytest.approx(2.0 * np.log(3.0))
    gx, gy = adcompile.grad(compiled, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, [np.log(0.5), -np.inf, np.log(3.0)])  # the derivative in x is log(y)
    np.testing.assert_allclose(gy, [0.0, 0.0, 2.0 / 3.0])  # x / y: 0 where x == 0, even at y == 0


def _math_lgamma(t):
    return math.lgamma(t)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gammaln_derivatives_of_every_order(backend):
    """d^k gammaln = polygamma(k - 1): third derivatives through the kernels' own rules."""
    def f(x):
        return special.gammaln(x)

    compiled = adcompile.compile(f, backend=backend)
    x = 2.7
    first = adcompile.grad(compiled)
    second = adcompile.grad(first)
    third = adcompile.grad(second)
    assert first(x) == pytest.approx(sp.digamma(x), rel=1e-13)
    assert second(x) == pytest.approx(sp.polygamma(1, x), rel=1e-13)
    assert third(x) == pytest.approx(sp.polygamma(2, x), rel=1e-12)
    assert adcompile.grad(_math_lgamma)(-0.5) == pytest.approx(sp.digamma(-0.5), rel=1e-13)


@pytest.mark.parametrize("name", ["sp_erf_erfc", "sp_gammaln_digamma_gamma", "sp_expit_logit", "sp_xlogy",
                                  "sp_logsumexp", "np_sinc", "np_nan_to_num"])
def test_numba_float32(name):
    entry = next(c for c in CASES if c.name == name)
    check_gradient(entry, backend="numba", dtype=np.float32)
    check_transpose_identity(entry, backend="numba", dtype=np.float32)


def test_expit_does_not_overflow():
    def f(x):
        return np.sum(np.log(sp.expit(x)))

    x = np.array([-700.0, -40.0, 0.0, 800.0])  # expit(-700) = 1e-304, no underflow
    assert adcompile.compile(f)(x) == pytest.approx(f(x))
    np.testing.assert_allclose(adcompile.grad(f)(x), 1.0 - sp.expit(x))


def _i0(x):
    return sp.i0(x)


def _logsumexp_b(x):
    return sp.logsumexp(x, b=x)


def _polygamma_variable(x, n):
    return sp.polygamma(n, x)


def _nan_to_num_in_place(x):
    return np.nan_to_num(x, copy=False)


@pytest.mark.parametrize("fn, args, message", [
    (_i0, (np.ones(2),), "'special.i0' is not supported"),
    (_logsumexp_b, (np.ones(2),), "keyword argument 'b' of scipy.special.logsumexp"),
    (_polygamma_variable, (np.ones(2), 1), "polygamma's order n must be a constant integer"),
    (_nan_to_num_in_place, (np.ones(2),), "copy=False"),
])
def test_unsupported_forms_are_located_errors(fn, args, message):
    with pytest.raises(UnsupportedFunctionError if "constant" not in message else adcompile.AdCompileError,
                       match=message) as info:
        adcompile.compile(fn, backend="python")(*args)
    assert "test_special_functions.py" in str(info.value)
