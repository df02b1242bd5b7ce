"""Fused loops over slices with constant stops of rows (``camera[0:3]``, ``camera[3:6]``) and
the small vectors they meet, behind a run-time check of the lengths they assume equal.

A slice ``r[0:3]`` of a row of length ``n`` has ``min(3, n)`` elements (``ir/shapes.clipped``);
broadcast with a 3-vector built by ``np.array`` the lowering assumes the lengths equal and
checks it before the loop (``lowering/assumptions.py``). The per-observation code of bundle
adjustment is the model. The values and gradients must be numpy's and central differences'
on both sides of every check: rows of 7 and of 6 (the checks hold), points of one coordinate
(broadcast against the 3-vectors: a check fails and the call reruns with the unfused code).
"""
import re

import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences

LOWERED_FALLBACK = "raise rt.UnfusedCodeNeeded("


def rotated_rows(cameras, points, index):
    """A rotation by an axis-angle 3-vector and a shift, per observation (bundle adjustment's
    shape: slices of a camera's row, a point's row, a cross product built with ``np.array``)."""
    total = 0.0
    for i in range(index.shape[0]):
        camera = cameras[index[i]]
        rotation = camera[0:3]
        point = points[i] - camera[3:6]
        theta = np.sqrt(np.sum(rotation * rotation))
        axis = rotation / theta
        cross = np.array([axis[1] * point[2] - axis[2] * point[1],
                          axis[2] * point[0] - axis[0] * point[2],
                          axis[0] * point[1] - axis[1] * point[0]])
        moved = point * np.cos(theta) + cross * np.sin(theta) + axis * np.sum(axis * point)
        total += np.sum(moved * moved) + camera[-1] * moved[2]
    return total


def data(columns=7, coordinates=3):
    rng = np.random.default_rng(11)
    cameras = rng.standard_normal((3, columns)) * 0.5
    cameras[:, 0:3] += 0.7  # no zero rotation
    return cameras, rng.standard_normal((5, coordinates)), np.array([0, 2, 1, 1, 0])


def test_the_per_observation_vectors_fuse_behind_length_checks():
    gradient = adcompile.grad(adcompile.compile(rotated_rows, backend="numba"), wrt=(0, 1))
    source = gradient.source(*data(), stage="lowered")
    assert len(re.findall(r"for i\d+ in range\(", source)) >= 3, source
    assert "np.minimum(3, cameras.shape[1])" in source, source  # the slice's length, from the parameter
    assert LOWERED_FALLBACK in source
    # the 3-vector built of scalars is read element by element in a loop, not multiplied whole
    assert re.search(r"cross\[i\d+\] \* ", source) and "= cross * " not in source, source


@pytest.mark.parametrize("shapes", [(7, 3), (6, 3), (7, 1)], ids=["rows_of_7", "rows_of_6", "points_of_1"])
def test_values_and_gradients_on_both_sides_of_the_checks(backend, shapes):
    cameras, points, index = data(*shapes)
    f = adcompile.compile(rotated_rows, backend=backend, tiered=False)
    assert f(cameras, points, index) == pytest.approx(rotated_rows(cameras, points, index), rel=1e-12)
    got = adcompile.grad(f, wrt=(0, 1))(cameras, points, index)
    for k, g in enumerate(got):
        expected = gradient_by_differences(rotated_rows, [cameras, points, index], k)
        assert g.shape == expected.shape
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-7)


def test_the_hessian_through_the_fused_loops(monkeypatch):
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    cameras, points, index = data()
    f = adcompile.compile(rotated_rows, backend="python")
    H = adcompile.hessian(f, wrt=1)(cameras, points, index)
    g = adcompile.grad(f, wrt=1)
    n = points.size
    columns = [gradient_by_differences(lambda p: np.ravel(g(cameras, p.reshape(points.shape), index)) @ e,
                                       [points]).ravel() for e in np.eye(n)]
    np.testing.assert_allclose(H.reshape(n, n), np.array(columns), rtol=1e-5, atol=1e-6)
