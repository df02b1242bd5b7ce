"""A backward loop whose incoming cotangents are all zero is skipped
(``adcompile/transforms/zero_skips.py``): where the guard goes, that gradients stay right on numba
with it, and that derivatives of gradients (which need the loop's tangents where its cotangent is
zero at the point) run the loop again.
"""
import numpy as np
import pytest

import adcompile
from adcompile.transforms.reverse import transform as reverse_transform
from tests.oracles import gradient_by_differences, hessian_by_differences
from tests.running_minimum import nearest_centre_cost

GUARD = "!= 0.0:"


def scaled_loop(v):
    """``v[0] * s(v[1:])``: at ``v[0] = 0`` the loop of ``s`` gets a zero cotangent, while the
    Hessian's ``d2f / dv0 dvi`` is ``s``'s derivative."""
    s = 0.0
    for i in range(1, v.shape[0]):
        s += v[i] * v[i] * v[i] - 0.5 * v[i]
    return v[0] * s


def scaled_loop_gradient(v):
    g = np.empty_like(v)
    g[0] = np.sum(v[1:] ** 3 - 0.5 * v[1:])
    g[1:] = v[0] * (3.0 * v[1:] ** 2 - 0.5)
    return g


def kmeans_inputs(rng, points=9, centres=4, dimensions=3):
    return rng.standard_normal((centres, dimensions)), rng.standard_normal((points, dimensions))


def without_skips(monkeypatch, f, **options):
    monkeypatch.setattr(reverse_transform, "ZERO_SKIPS", False)
    return adcompile.grad(adcompile.compile(f), **options)


def test_the_inner_loop_of_a_running_minimum_is_guarded_and_its_gradient_is_right(monkeypatch):
    args = kmeans_inputs(np.random.default_rng(0))
    compiled = adcompile.compile(nearest_centre_cost)
    gradient = adcompile.grad(compiled, wrt=(0, 1))
    backward = adcompile.source(gradient, *args, stage="lowered").split("# backward")[1]
    assert backward.count(GUARD) == 1 and "if bdistance != 0.0:" in backward
    got = gradient(*args)
    for k in (0, 1):
        np.testing.assert_allclose(got[k], gradient_by_differences(nearest_centre_cost, args, k), rtol=1e-6, atol=1e-7)
    unskipped = without_skips(monkeypatch, nearest_centre_cost, wrt=(0, 1))
    assert GUARD not in adcompile.source(unskipped, *args, stage="lowered").split("# backward")[1]
    for a, b in zip(got, unskipped(*args)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_skipped_loops_with_no_points_or_no_dimensions(dtype):
    rng = np.random.default_rng(1)
    gradient = adcompile.grad(adcompile.compile(nearest_centre_cost), wrt=(0, 1))
    for centres, points in [kmeans_inputs(rng, points=0), kmeans_inputs(rng, dimensions=0), kmeans_inputs(rng)]:
        centres, points = centres.astype(dtype), points.astype(dtype)
        got = gradient(centres, points)
        expected = adcompile.grad(adcompile.compile(nearest_centre_cost, backend="python"), wrt=(0, 1))(centres, points)
        for a, b in zip(got, expected):
            assert a.dtype == dtype
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_centre_at_infinity_gets_a_zero_gradient_not_nan(monkeypatch):
    """The documented difference: a skipped iteration does not multiply its zero cotangent by
    an infinite primal value."""
    centres, points = kmeans_inputs(np.random.default_rng(2))
    centres[1, 0] = np.inf
    got = adcompile.grad(adcompile.compile(nearest_centre_cost), wrt=(0, 1))(centres, points)
    assert np.all(got[0][1] == 0.0) and np.all(np.isfinite(got[0])) and np.all(np.isfinite(got[1]))
    unskipped = without_skips(monkeypatch, nearest_centre_cost, wrt=(0, 1))(centres, points)
    assert np.isnan(unskipped[0][1, 0])


def test_a_zero_cotangent_skips_the_loop_of_the_gradient():
    v = np.array([0.0, 0.3, -1.2, 0.8])
    gradient = adcompile.grad(adcompile.compile(scaled_loop))
    assert GUARD in adcompile.source(gradient, v, stage="lowered").split("# backward")[1]
    np.testing.assert_allclose(gradient(v), scaled_loop_gradient(v), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("v0", [0.0, 0.7])
def test_derivatives_of_the_gradient_run_the_skipped_loop(v0):
    """At ``v[0] = 0`` the gradient's loop is skipped, but its derivatives are not zero there:
    every transform of the gradient runs the loop unconditionally."""
    v = np.array([v0, 0.3, -1.2, 0.8])
    compiled = adcompile.compile(scaled_loop)
    expected = hessian_by_differences(scaled_loop_gradient, (v,))
    np.testing.assert_allclose(adcompile.hessian(compiled)(v), expected, rtol=1e-6, atol=1e-7)
    gradient = adcompile.grad(compiled)
    u = np.array([1.0, -0.5, 0.25, 2.0])
    np.testing.assert_allclose(adcompile.jvp(gradient, (v,), (u,))[1], expected @ u, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(adcompile.hvp(compiled, (v,), (u,)), expected @ u, rtol=1e-6, atol=1e-7)

    def projected(x):
        return np.sum(gradient(x) * u)
    np.testing.assert_allclose(adcompile.grad(adcompile.compile(projected))(v), expected @ u, rtol=1e-6, atol=1e-7)
    batch = np.stack([v, v + 0.1])
    rows = adcompile.vmap(adcompile.grad(compiled))(batch)
    np.testing.assert_allclose(rows, [scaled_loop_gradient(r) for r in batch], rtol=1e-12, atol=1e-12)
