"""Scalar replacement of small vectors (passes/small_vectors.py): a vector built of scalars and
used only element by element becomes scalars in the generated gradient, and every use of
another kind keeps it an array. Each program's gradient is compared with central differences
on both backends, the Hessian of one with differences of the gradient."""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences, hessian_by_differences

BACKENDS = ["python", "numba"]


def projected_residuals(cams, pts, obs):
    """A per-observation vector and its element reads: the case the pass is for."""
    total = 0.0
    for i in range(obs.shape[0]):
        c = cams[i % cams.shape[0]]
        p = pts[i]
        u = p[0] / p[2]
        v = p[1] / p[2]
        predicted = np.array([u * c[0] + c[1], v * c[0] + c[2]])
        du = predicted[0] - obs[i, 0]
        dv = predicted[-1] - obs[i, 1]
        total += du * du + dv * dv
    return total


def written_by_element(x):
    """Element writes and in-place additions at constant indices, and a rotation reading its
    own elements back."""
    s = 0.0
    for i in range(x.shape[0] - 1):
        q = np.array([x[i], x[i + 1], 0.5])
        q[2] = q[0] * q[1]
        q[1] += np.sin(q[2])
        q = np.array([q[1], q[2], q[0]])
        s = s + q[0] * q[1] - q[2] ** 2
    return s


def _arrays(seed):
    rng = np.random.default_rng(seed)
    return (1.0 + 0.1 * rng.standard_normal((3, 3)), rng.standard_normal((6, 3)) + np.array([0.0, 0.0, 4.0]),
            rng.standard_normal((6, 2)))


def _check_gradient(f, args, wrt, backend):
    compiled = adcompile.compile(f, backend=backend)
    grads = adcompile.grad(compiled, wrt=wrt)(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for k, g in zip(wrt, grads):
        np.testing.assert_allclose(g, gradient_by_differences(f, args, k), rtol=1e-6, atol=1e-8)
    source = adcompile.source(adcompile.grad(compiled, wrt=wrt), *args)
    return "\n".join(line.split("#")[0] for line in source.splitlines())  # the code, not its comments


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_per_observation_vector_and_its_adjoint_become_scalars(backend):
    source = _check_gradient(projected_residuals, _arrays(0), (0, 1), backend)
    assert "np.array(" not in source and "predicted_0 = " in source and "bpredicted_1 = " in source, source


@pytest.mark.parametrize("backend", BACKENDS)
def test_element_writes_and_rotations_become_scalars(backend):
    x = np.linspace(0.2, 1.4, 6)
    source = _check_gradient(written_by_element, (x,), (0,), backend)
    assert "np.array(" not in source and "np.zeros_like(q)" not in source, source


def test_the_hessian_through_a_scalarised_vector():
    x = np.linspace(0.2, 1.4, 5)
    h = adcompile.hessian(adcompile.compile(written_by_element))(x)
    gradient = adcompile.grad(adcompile.compile(written_by_element, backend="python"))
    np.testing.assert_allclose(h, hessian_by_differences(gradient, (x,)), rtol=1e-5, atol=1e-7)


def summed(x):
    v = np.array([x[0] * x[1], x[2], 1.0])
    return np.sum(v * v) + v[1]


def returned_and_viewed(x):
    v = np.array([x[0], x[1] * x[2], x[2]])
    w = v[0:2]
    return np.sum(w) * v[2]


def written_at_a_variable_index(x):
    v = np.array([x[0], x[1], x[2]])
    for k in range(3):
        v[k] = v[k] * x[k]
    return v[0] + v[1] * v[2]


def kept_across_iterations(x):
    v = np.array([x[0], 0.0])
    for i in range(1, x.shape[0]):
        v = np.array([v[1] + x[i], np.sin(v[0])])
    return np.sum(v)


OTHER_USES = [summed, returned_and_viewed, written_at_a_variable_index,
              kept_across_iterations]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", OTHER_USES, ids=lambda f: f.__name__)
def test_a_vector_used_as_an_array_stays_one(f, backend):
    """A whole-array use (a sum, an elementwise product, a view, an index the compiler does
    not know) keeps the array; the gradient is right either way."""
    x = np.array([0.3, -0.8, 1.1, 0.6])
    source = _check_gradient(f, (x,), (0,), backend)
    if f is not kept_across_iterations:  # whose vectors are read whole by np.sum only after the loop
        assert "np.array(" in source, source


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_vectors_keep_their_dtype(backend):
    x = np.linspace(0.2, 1.4, 6).astype(np.float32)
    g = adcompile.grad(adcompile.compile(written_by_element, backend=backend))(x)
    assert g.dtype == np.float32
    expected = adcompile.grad(adcompile.compile(written_by_element, backend="python"))(x.astype(np.float64))
    np.testing.assert_allclose(g, expected, rtol=2e-4, atol=1e-5)


def out_of_range(x):
    v = np.array([x[0], x[1]])
    return v[0] * v[2]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_out_of_range_still_raises(backend):
    with pytest.raises(IndexError):
        adcompile.grad(adcompile.compile(out_of_range, backend=backend))(np.ones(3))
