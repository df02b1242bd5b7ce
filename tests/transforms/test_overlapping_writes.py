"""An in-place write whose value is a view of the written memory, into a region of two or more
dimensions, is differentiated as numpy computes it: as if the value were copied first.

numpy makes a temporary copy of an overlapping value whenever the destination has more than
one dimension (``PyArray_AssignArray``), and into a 1-d region when the strides have opposite
signs (a reversed slice); into a 1-d region with another layout it copies element by element,
and such a write stays a located error (``test_reverse_reliability.py``). The first tests check
these premises against numpy itself on random pairs of views.
"""
import random

import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences


def _random_slice(draw, n):
    return slice(draw.randrange(-n, n), draw.randrange(-n, n + 1), draw.choice([1, 1, 2, -1, -2, 3]))


def test_numpy_copies_an_overlapping_value_into_a_2d_region():
    draw = random.Random(7)
    checked = 0
    while checked < 3000:
        shape = (draw.randrange(2, 6), draw.randrange(2, 6))
        base = np.arange(shape[0] * shape[1], dtype=float).reshape(shape)
        target = tuple(_random_slice(draw, n) for n in shape)
        source = tuple(_random_slice(draw, n) for n in shape)
        transpose = draw.random() < 0.3
        region, value = base[target], (base[source].T if transpose else base[source])
        if region.ndim != 2 or region.size == 0 or region.shape != value.shape:
            continue
        written = base.copy()
        view = written[source].T if transpose else written[source]
        written[target] = view
        expected = base.copy()
        expected[target] = value.copy()
        np.testing.assert_array_equal(written, expected)
        checked += 1


def test_numpy_copies_an_overlapping_reversed_slice_into_a_1d_region():
    """Strides of opposite signs: numpy copies through a temporary, also for an array that is
    itself a reversed view."""
    draw = random.Random(8)
    checked = 0
    while checked < 3000:
        n = draw.randrange(2, 12)
        steps = [draw.choice([1, 2, 3]), -draw.choice([1, 2, 3])]
        draw.shuffle(steps)
        target = slice(draw.randrange(-n, n), draw.randrange(-n, n + 1), steps[0])
        source = slice(draw.randrange(-n, n), draw.randrange(-n, n + 1), steps[1])
        array = np.arange(float(n)) if draw.random() < 0.5 else np.arange(float(n))[::-1]
        if array[target].shape != array[source].shape or array[target].size == 0:
            continue
        expected = array.copy()
        expected[target] = expected[source].copy()
        array[target] = array[source]
        np.testing.assert_array_equal(array, expected)
        checked += 1


def reversed_in_place(x):
    w = np.sin(x)
    w[:] = np.flip(w)
    w[1:] = w[-2::-1]
    return np.sum(w * x)


def column_reversed_into_itself(W):
    u = W * 1.0
    u[:, 2] = u[::-1, 2]
    return np.sum(u * u * W)


def rows_shifted_down(W):
    u = np.tanh(W)
    u[1:] = u[:3, 0:]  # rows 0..2 into rows 1..3: the same memory, spelled with another index
    return np.sum(u * W)


def reversed_columns(W):
    u = W * 1.5
    u[1:, :] = u[:-1, ::-1]
    return np.sum(np.sin(u) * W)


def transposed_block(W):
    u = W + 0.25
    u[1:3, 1:3] = u[0:2, 0:2].T
    return np.sum(u * u * W)


def shifted_in_a_loop(W):
    u = W.copy()
    total = 0.0
    for k in range(3):
        u[1:] = u[:-1, ::-1] * 0.9
        total = total + np.sum(np.cos(u) * W)
    return total


PROGRAMS = [rows_shifted_down, reversed_columns, transposed_block, shifted_in_a_loop]


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("program", PROGRAMS + [reversed_in_place, column_reversed_into_itself],
                         ids=[p.__name__ for p in PROGRAMS + [reversed_in_place, column_reversed_into_itself]])
def test_gradient_of_a_write_from_an_overlapping_view(program, backend):
    W = np.random.default_rng(2).standard_normal((4, 4)) * 0.7
    W = W[0] if program is reversed_in_place else W
    compiled = adcompile.compile(program, backend=backend)
    np.testing.assert_allclose(compiled(W.copy()), program(W.copy()), rtol=1e-12)
    np.testing.assert_allclose(adcompile.grad(compiled)(W.copy()), gradient_by_differences(program, (W,)),
                               rtol=1e-6, atol=1e-8)
