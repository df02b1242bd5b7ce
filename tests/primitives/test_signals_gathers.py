"""Issue 14, shifts, padding, signals, gathers and scatters: what the rule table
(tests/primitives/test_rules.py) does not check. Integer results (searchsorted, bincount counts,
triangle indices) equal numpy's and carry no derivative; np.add.at accumulates repeated
indices where ``x[idx] += v`` keeps the last write; the functions work in compiled loops and
under numba; unsupported argument forms are located errors."""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences


# ------------------------------------------------------------------ integer results
def integer_results(grid, x, idx):
    return np.searchsorted(grid, x), np.searchsorted(grid, x, side="right"), np.bincount(idx, minlength=6), \
        np.triu_indices(4, 1)[0], np.tril_indices(3)[1]


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_integer_results_equal_numpy(backend):
    grid, x, idx = np.array([-1.0, 0.0, 0.5, 2.0]), np.array([0.0, -3.0, 0.7, 2.0, 9.0]), np.array([3, 0, 3, 1])
    got = adcompile.compile(integer_results, backend=backend)(grid, x, idx)
    for value, expected in zip(got, integer_results(grid, x, idx)):
        np.testing.assert_array_equal(value, expected)
        assert value.dtype.kind == "i"


def weighted_by_position(x, grid):
    return np.sum(x * x * np.searchsorted(grid, x) + x * np.bincount(np.searchsorted(grid, x), minlength=5)[:4])


def test_integer_results_carry_no_derivative():
    x, grid = np.array([-0.7, 0.2, 0.9, 1.6]), np.array([-1.0, 0.0, 0.5, 1.0])
    dx, dgrid = adcompile.grad(adcompile.compile(weighted_by_position, backend="python"), wrt=(0, 1))(x, grid)
    np.testing.assert_allclose(dx, gradient_by_differences(weighted_by_position, (x, grid), 0), rtol=1e-7)
    np.testing.assert_array_equal(dgrid, np.zeros(4))  # the positions are piecewise constant in the grid


# ------------------------------------------------------------------ np.add.at and x[idx] += v
def accumulate_and_assign(x, v, idx):
    accumulated = x * 1.0
    np.add.at(accumulated, idx, v)
    assigned = x * 1.0
    assigned[idx] += v
    return np.sum(accumulated * accumulated) + np.sum(np.sin(assigned))


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_add_at_accumulates_repeated_indices_and_indexed_add_does_not(backend):
    x, v, idx = np.array([0.3, -1.0, 2.0, 0.5]), np.array([1.0, 2.0, 3.0]), np.array([1, 1, 3])
    fn = adcompile.compile(accumulate_and_assign, backend=backend)
    np.testing.assert_allclose(fn(x, v, idx), accumulate_and_assign(x, v, idx), rtol=1e-12)
    dx, dv = adcompile.grad(fn, wrt=(0, 1))(x, v, idx)
    np.testing.assert_allclose(dx, gradient_by_differences(accumulate_and_assign, (x, v, idx), 0), rtol=1e-7)
    np.testing.assert_allclose(dv, gradient_by_differences(accumulate_and_assign, (x, v, idx), 1), rtol=1e-7)


# ------------------------------------------------------------------ in loops, under numba
def filtered_in_a_loop(taps, signal, steps):
    total = 0.0
    y = signal
    counts = np.zeros(signal.shape[0])
    for _ in range(steps):
        y = np.convolve(np.pad(y, (1, 1), mode="reflect"), taps, mode="valid")
        y = np.roll(y, 1) + 0.5 * np.interp(y, np.linspace(-2.0, 2.0, 5), taps[:1] * np.arange(5.0))
        np.add.at(counts, np.array([0, 2, 2]), y[:3])
        total += np.sum(y[y > 0.0] ** 2) + np.sum(np.take(y, [0, 3]))
    return total + np.sum(counts * counts)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_signal_functions_in_a_compiled_loop(backend):
    args = (np.array([0.25, 0.5, 0.2]), np.sin(np.linspace(0.0, 3.0, 9)), 3)
    fn = adcompile.compile(filtered_in_a_loop, backend=backend)
    np.testing.assert_allclose(fn(*args), filtered_in_a_loop(*args), rtol=1e-12)
    assert adcompile.gradcheck(fn, args, wrt=(0, 1))


# ------------------------------------------------------------------ rejected forms
def pad_wrap(x):
    return np.sum(np.pad(x, 2, mode="wrap"))


def pad_two_constants(x):
    return np.sum(np.pad(x, 2, constant_values=(0.0, 1.0)))


def roll_tuple(x):
    return np.sum(np.roll(x, (1, 2), axis=(0, 1)))


def interp_left(x):
    return np.sum(np.interp(x, np.arange(3.0), x[:3], left=0.0))


def polyfit_weights(x):
    return np.sum(np.polyfit(x, x * x, 2, w=x))


def convolve_2d(x):
    return np.sum(np.convolve(x, x))


def correlate_mode(x):
    return np.sum(np.correlate(x[0], x[1], "circular"))


def add_at_pairs(x):
    y = np.zeros((3, 3))
    np.add.at(y, (np.array([0, 1]), np.array([1, 1])), 1.0)
    return np.sum(y * x)


def mask_and_index(x):
    return np.sum(x[x[:, 0] > 0, 1])


def take_along_no_axis(x):
    return np.sum(np.take_along_axis(x, np.array([[0]]), None))


@pytest.mark.parametrize("fn, needle", [
    (pad_wrap, "the mode of np.pad must be one of"), (pad_two_constants, "constant_values must be one scalar"),
    (roll_tuple, "tuple of shifts"), (interp_left, "keyword argument 'left' of interp()"),
    (polyfit_weights, "keyword argument 'w' of polyfit()"), (convolve_2d, "must be a 1-d array"),
    (correlate_mode, "the mode of np.correlate must be one of"), (add_at_pairs, "a tuple of index arrays"),
    (mask_and_index, "boolean mask must be the only index"), (take_along_no_axis, "needs an axis"),
])
def test_unsupported_forms_are_located_errors(fn, needle):
    x = np.ones((3, 3))
    with pytest.raises(adcompile.AdCompileError) as info:
        adcompile.grad(adcompile.compile(fn, backend="python"))(x)
    assert needle in str(info.value)
    assert "test_signals_gathers.py" in str(info.value)
