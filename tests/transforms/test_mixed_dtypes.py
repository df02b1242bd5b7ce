"""Derivatives of float32 programs that mix in float64 values: a tangent has its value's dtype
and a cotangent its output's, whatever dtype the caller passes (random programs 43000063,
43000091, 43000135 and 43000154 on numba: np.linalg.solve of a float64 matrix and a float32
tangent, and adjoints whose dtype changed between the iterations of a loop, failed numba's
typing). Checked on both backends against central differences."""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences

X32 = np.array([0.3, -0.2, 0.5], dtype=np.float32)


def solve_of_a_mixed_sum(x):
    v = 0.25 * np.arange(3) + x[np.array([1, 0, 1])]  # float64 from a float32 x
    return np.cos(np.sum(np.linalg.solve(np.eye(2) + 0.2 * np.tanh(0.5 * np.eye(2)), v[1:3])))


def rolled_in_a_loop(x, n):
    s = 0.0
    for i in range(n):
        x = x[i % 3] - np.tanh(x)
        s = s + np.sum(np.sin(x) * 0.5)
    return s, x


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_jvp_with_a_float32_tangent_through_a_float64_solve(backend):
    compiled = adcompile.compile(solve_of_a_mixed_sum, backend=backend, tiered=False)
    direction = np.array([1.0, -0.5, 2.0], dtype=np.float32)
    value, tangent = adcompile.jvp(compiled, (X32,), (direction,))
    assert value == pytest.approx(solve_of_a_mixed_sum(X32), rel=1e-6)
    expected = gradient_by_differences(solve_of_a_mixed_sum, (X32.astype(np.float64),)) @ direction
    assert tangent == pytest.approx(expected, rel=1e-4, abs=1e-6)


def float64_state_from_float32(x, n):
    v = np.zeros(3)
    for i in range(n):
        v = np.sin(x * (i + 1)) + 0.25 * np.arange(3)  # float64, its tangent from dx's float32
    return np.sum(v * v)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_jvp_of_a_float64_loop_state_made_from_a_float32_argument(backend):
    compiled = adcompile.compile(float64_state_from_float32, backend=backend, tiered=False)
    direction = np.array([0.5, 1.0, -1.5], dtype=np.float32)
    value, tangent = adcompile.jvp(compiled, (X32, 3), (direction, None))
    assert value == pytest.approx(float64_state_from_float32(X32, 3), rel=1e-6)
    expected = gradient_by_differences(lambda x: float64_state_from_float32(x, 3), (X32.astype(np.float64),))
    assert tangent == pytest.approx(expected @ direction, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("cotangent_dtype", [np.float64, np.float32])
def test_vjp_of_a_float32_output_with_a_cotangent_of_either_dtype(backend, cotangent_dtype):
    compiled = adcompile.compile(rolled_in_a_loop, backend=backend, tiered=False)
    (s, x_out), pullback = adcompile.vjp(compiled, X32, 3)
    assert x_out.dtype == np.float32
    cs, cx = 0.7, np.array([1.0, -2.0, 0.5], dtype=cotangent_dtype)
    gradient = pullback((cs, cx))[0]
    assert gradient.dtype == np.float32

    def projected(x):
        s, x_out = rolled_in_a_loop(x, 3)
        return cs * s + cx.astype(np.float64) @ x_out
    np.testing.assert_allclose(gradient, gradient_by_differences(projected, (X32.astype(np.float64),)),
                               rtol=1e-3, atol=1e-5)


def joined_then_updated_in_a_branch(x, A, n):
    w = x.copy()
    v = np.concatenate((np.log(1.0 + np.tanh(w[np.array([0])]) ** 2), -A[1, 1:]))
    for i in range(n):
        x = np.square(v[::-1]) - x
    if np.sum(x[::-1][:1]) != 0.0:
        w = w + np.cos(np.concatenate((A[0, 1:], v[1:2])))
    return -v @ v + 2.0 * np.sum(x[0:1] * np.tanh(w[1])) + w @ w


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("cotangent", [1.0, np.float64(1.0), np.array(1.0), np.float32(1.0)])
def test_vjp_of_a_float32_number_with_a_cotangent_of_either_dtype(backend, cotangent):
    # random program 74000080 on numba: a float64 cotangent of a float32 result reached the
    # adjoint of a joined array, which the branch updates in float32
    A = np.array([[-0.75, -0.86], [-0.65, -0.58]], dtype=np.float32)
    x = np.array([-0.91, 0.80], dtype=np.float32)
    compiled = adcompile.compile(joined_then_updated_in_a_branch, backend=backend, tiered=False)
    value, pullback = adcompile.vjp(compiled, x, A, 1)
    assert value.dtype == np.float32
    dx, dA, dn = pullback(cotangent)
    assert dx.dtype == dA.dtype == np.float32 and dn is None
    args64 = (x.astype(np.float64), A.astype(np.float64))

    def at_one(x, A):
        return joined_then_updated_in_a_branch(x, A, 1)
    np.testing.assert_allclose(dx, gradient_by_differences(at_one, args64, 0), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(dA, gradient_by_differences(at_one, args64, 1), rtol=1e-3, atol=1e-4)


def scaled_roll(x, c, n):
    for i in range(n):
        x = c * x[::-1] - np.tanh(x)
    return np.sum(x * x)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_jvp_of_a_float32_number_argument_takes_a_python_float_tangent(backend):
    compiled = adcompile.compile(scaled_roll, backend=backend, tiered=False)
    c = np.float32(0.5)
    value, tangent = adcompile.jvp(compiled, (X32, c, 3), (np.zeros(3, np.float32), 1.0, None))
    expected = gradient_by_differences(lambda x, c: scaled_roll(x, c, 3), (X32.astype(np.float64), 0.5), 1)
    assert np.asarray(tangent).dtype == np.float32  # as when the tangent is a float32
    assert tangent == pytest.approx(float(expected), rel=1e-3, abs=1e-5)
