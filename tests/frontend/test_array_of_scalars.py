"""``np.array([...])`` of scalars: one allocation (the ``vector`` primitive), numpy's dtype, and
derivatives through it in loops, on both backends.

The per-observation 2- and 3-vectors of bundle adjustment and similar objectives are built this
way in every iteration; the backward recomputes such a vector rather than taping one per
iteration. Each gradient is compared with central differences, the Hessian with differences of
the gradient.
"""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences, hessian_by_differences

BACKENDS = ["python", "numba"]


def rows_as_vectors(A, w):
    """A 3-vector per row (products, a sine, a constant, a bool), rotated by reading its own
    elements back, carried to the next row."""
    acc = 0.0
    previous = w * 0.5
    for i in range(A.shape[0]):
        p = np.array([A[i, 0] * A[i, 1], np.sin(A[i, 2]), 0.5 + (A[i, 0] > 0.0)])
        q = p * w + np.array([-p[1], p[2], p[0]]) * 0.3
        acc += np.sum(q * q) + np.sum(previous * q)
        previous = q
    return acc


def rotation_applied(theta, v):
    """A nested list: the 2x2 rotation ``[[c, -s], [s, c]]`` (a stack of two vectors)."""
    total = 0.0
    for k in range(theta.shape[0]):
        c, s = np.cos(theta[k]), np.sin(theta[k])
        R = np.array([[c, -s], [s, c]])
        total += np.sum(np.tanh(R @ v) * np.array([1.0, k]))
    return total


def data(dtype=np.float64):
    rng = np.random.default_rng(3)
    return rng.normal(size=(5, 3)).astype(dtype), rng.normal(size=3).astype(dtype)


def rotation_data():
    return np.array([0.3, -1.2, 2.0]), np.array([0.7, -0.4])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, make", [(rows_as_vectors, data), (rotation_applied, rotation_data)],
                         ids=["vectors_in_a_loop", "nested_list"])
def test_values_and_gradients_match_numpy_and_differences(backend, f, make):
    args = make()
    compiled = adcompile.compile(f, backend=backend, tiered=False)
    assert compiled(*args) == pytest.approx(f(*args), rel=1e-13)
    for k, got in enumerate(adcompile.grad(compiled, wrt=(0, 1))(*args)):
        np.testing.assert_allclose(got, gradient_by_differences(f, list(args), k), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hessian_and_forward_mode_through_vectors(backend):
    A, w = data()
    f = adcompile.compile(rows_as_vectors, backend=backend, tiered=False)
    H = adcompile.hessian(f, wrt=1)(A, w)
    g = adcompile.grad(f, wrt=1)
    np.testing.assert_allclose(H, hessian_by_differences(g, [A, w], 1), rtol=1e-6, atol=1e-7)
    direction = np.array([0.2, -1.0, 0.5])
    _, tangent = adcompile.jvp(f, (A, w), (np.zeros_like(A), direction))
    assert tangent == pytest.approx(g(A, w) @ direction, rel=1e-12)


def test_the_dtype_is_numpys():
    def dtypes(x):
        return (np.array([x[0], 0.5]), np.array([x[0], 2]), np.array([x[0], True]),
                np.array([x[0], x[1] * 2]), np.array([1, True]), np.array([[x[0], 1], [2.5, x[1]]]))
    x = np.array([1.5, 2.0], dtype=np.float32)
    for backend in BACKENDS:
        got = adcompile.compile(dtypes, backend=backend, tiered=False)(x)
        for ours, numpys in zip(got, dtypes(x)):
            assert ours.dtype == numpys.dtype
            np.testing.assert_array_equal(ours, numpys)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_vectors_keep_float32_gradients(backend):
    A, w = data(np.float32)
    gw = adcompile.grad(adcompile.compile(rows_as_vectors, backend=backend, tiered=False), wrt=1)(A, w)
    assert gw.dtype == np.float32
    expected = gradient_by_differences(rows_as_vectors, [A.astype(np.float64), w.astype(np.float64)], 1)
    np.testing.assert_allclose(gw, expected, rtol=1e-3, atol=1e-3)


def test_one_allocation_per_vector_in_the_generated_code():
    A, w = data()
    source = adcompile.source(adcompile.grad(adcompile.compile(rows_as_vectors, backend="python"), wrt=(0, 1)), A, w)
    assert "np.concatenate" not in source
    assert source.count("np.array([") >= 2  # the forward's two vectors (recomputed in the backward)
