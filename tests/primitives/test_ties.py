"""Derivatives where arguments tie — common in practice because parameters start at zero."""
import numpy as np

import adcompile


def logistic_nll(w, X, y):
    z = X @ w
    return np.mean(y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z))


def test_logaddexp_at_a_tie_has_the_smooth_derivative():
    def f(a, b):
        return np.logaddexp(a, b)
    compiled = adcompile.compile(f, backend="python")
    ga, gb = adcompile.grad(compiled, wrt=(0, 1))(0.0, 0.0)
    assert np.isclose(ga, 0.5) and np.isclose(gb, 0.5)


def test_logistic_loss_gradient_at_zero_weights():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((20, 3)), (rng.random(20) > 0.5).astype(float)
    compiled = adcompile.compile(logistic_nll, backend="python")
    expected = X.T @ (0.5 - y) / 20   # sigmoid(0) = 1/2
    np.testing.assert_allclose(adcompile.grad(compiled)(np.zeros(3), X, y), expected, rtol=1e-12)
    assert adcompile.gradcheck(compiled, (np.zeros(3), X, y), wrt=0)
    assert adcompile.gradgradcheck(compiled, (np.zeros(3), X, y), wrt=0)


def test_max_reduction_splits_the_gradient_between_tied_entries():
    def f(x):
        return np.max(x)
    compiled = adcompile.compile(f, backend="python")
    np.testing.assert_allclose(adcompile.grad(compiled)(np.array([1.0, 3.0, 3.0])), [0.0, 0.5, 0.5])
