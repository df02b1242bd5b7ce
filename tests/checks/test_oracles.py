"""The tests' own oracles (``tests/oracles.py``) against derivatives known in closed form, and
their identities failing on a wrong answer. Nothing here runs adcompile."""
import numpy as np
import pytest

from oracles import (assert_close_through, assert_symmetric, assert_transpose_identity, directional_difference,
                     gradient_by_differences, hessian_by_differences, hessian_by_second_differences,
                     jacobian_by_differences)

RNG = np.random.default_rng(5)
X = RNG.normal(size=4)
A = RNG.normal(size=(3, 4))


def cubic(x):
    return np.sum(x ** 3) + x[0] * x[1]


def cubic_gradient(x):
    gradient = 3 * x ** 2
    gradient[0] += x[1]
    gradient[1] += x[0]
    return gradient


def cubic_hessian(x):
    hessian = np.diag(6 * x)
    hessian[0, 1] = hessian[1, 0] = 1.0
    return hessian


def test_gradient_jacobian_and_hessians_match_closed_forms():
    np.testing.assert_allclose(gradient_by_differences(cubic, (X,)), cubic_gradient(X), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(jacobian_by_differences(lambda x: A @ x ** 2, (X,)), A * 2 * X, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(hessian_by_differences(cubic_gradient, (X,)), cubic_hessian(X), rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(hessian_by_second_differences(cubic, (X,)), cubic_hessian(X), rtol=1e-4, atol=1e-4)


def test_an_argument_other_than_the_first_and_matrix_shapes():
    W = RNG.normal(size=(2, 3))
    gradient = gradient_by_differences(lambda a, w: np.sum(np.tanh(w) * a), (2.0, W), 1)
    np.testing.assert_allclose(gradient, 2.0 / np.cosh(W) ** 2, rtol=1e-7, atol=1e-8)
    assert jacobian_by_differences(lambda w: w.T, (W,)).shape == (3, 2, 2, 3)


def test_directions_move_several_arguments_together_and_python_floats_stay_floats():
    def f(a, x):
        assert isinstance(a, float)
        return a * np.sum(x ** 2)
    u = RNG.normal(size=4)
    together = directional_difference(f, (1.5, X), {0: 0.5, 1: u})
    expected = 0.5 * np.sum(X ** 2) + 1.5 * np.sum(2 * X * u)
    np.testing.assert_allclose(together, expected, rtol=1e-7)


def test_a_function_writing_into_its_argument_changes_neither_the_caller_nor_the_next_evaluation():
    def scales_in_place(a, x):
        x *= a  # were x shared, the second evaluation would scale the first one's result
        return np.sum(x)
    x = X.copy()
    np.testing.assert_allclose(gradient_by_differences(scales_in_place, (1.5, x), 0), np.sum(X), rtol=1e-7)
    np.testing.assert_array_equal(x, X)


def test_tuple_outputs_get_one_difference_per_part():
    u = RNG.normal(size=4)
    first, second = directional_difference(lambda x: (np.sum(x), x * 3.0), (X,), {0: u})
    np.testing.assert_allclose(first, np.sum(u), rtol=1e-7)
    np.testing.assert_allclose(second, 3.0 * u, rtol=1e-7)


def test_the_transpose_identity_holds_for_a_matrix_and_fails_for_a_wrong_vjp():
    u, v = RNG.normal(size=4), RNG.normal(size=3)
    j_u = directional_difference(lambda x: A @ x, (X,), {0: u})
    assert_transpose_identity(v, j_u, A.T @ v, u, rtol=1e-7, atol=1e-9, what="A")
    with pytest.raises(AssertionError, match="finite differences"):
        assert_transpose_identity(v, j_u, 1.001 * (A.T @ v), u, rtol=1e-7, atol=1e-9, what="A")


def test_comparison_through_a_cotangent_fails_on_a_wrong_derivative():
    v = RNG.normal(size=(3, 4))
    assert_close_through(v, A * 2.0, A * 2.0 + 1e-12, rtol=1e-9, atol=1e-9, what="close")
    with pytest.raises(AssertionError, match="wrong"):
        assert_close_through(v, A * 2.0, A * 2.01, rtol=1e-9, atol=1e-9, what="wrong")


def test_symmetry_fails_for_a_matrix_that_is_not_symmetric():
    assert_symmetric(cubic_hessian(X).reshape(4, 4), rtol=0, atol=0)
    broken = cubic_hessian(X)
    broken[0, 1] += 1e-3
    with pytest.raises(AssertionError, match="not symmetric"):
        assert_symmetric(broken, rtol=1e-9, atol=1e-9)
