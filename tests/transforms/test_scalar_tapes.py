"""Scalars saved in loops go into arrays with a stack pointer, never numba lists.

Two forms (``transforms/reverse/taping.py``): a tape preallocated on entry to the outermost
loop when every loop around the save is a ``for`` loop whose bounds are fixed before it (the
product of the trip counts bounds the pushes), and otherwise a tape that doubles when full
(triangular loops, ``while`` loops, bounds computed inside the outer loop). Each program here
is checked against central differences, on numba and on the Python backend, with enough
pushes to make a growing tape grow several times, with loops that never run, and under
second order (the Hessian's forward mode carries the tapes' tangents, growth included).
"""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences, hessian_by_differences


def fixed_nest(x):
    """Loops of constant length inside the outer loop: preallocated tapes."""
    total = 0.0
    for i in range(x.shape[0]):
        state = x[i]
        for j in range(3):
            state = np.sin(state) * 1.1 + 0.1 * j
            for k in range(2):
                state = state * np.cos(state + k)
        total += state
    return total


def bound_before_the_loop(x, m):
    """An inner bound computed before the outer loop and never changed inside it."""
    total = 0.0
    inner = m + 1
    for i in range(x.shape[0]):
        acc = x[i]
        for j in range(1, inner):
            acc = np.tanh(acc * 1.3) + x[(i + j) % x.shape[0]]
        total += acc * acc
    return total


def rows_written_in_place(A):
    """The inner bound is ``B.shape[1]``, read again in every iteration of the outer loop, of an
    array the loop writes into (its shape stays): preallocated tapes."""
    B = A.copy()
    total = 0.0
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            total = np.sin(total + B[i, j])
            B[i, j] = total * 0.5
    return total + np.sum(B * B)


def bound_changed_after_its_first_use(x, m):
    """The inner bound has one value before the outer loop and is assigned ``x.shape[0]``
    inside it, after the inner loop: its first trip count is not the later ones."""
    total = 0.0
    steps = m
    for i in range(3):
        for j in range(steps):
            total = np.sin(total + x[j % x.shape[0]])
        steps = x.shape[0]
    return total


def triangular(x):
    """The inner bound is the outer index: growing tapes."""
    total = 0.0
    for i in range(x.shape[0]):
        acc = 0.0
        for j in range(i):
            acc = np.sin(acc + x[j] * x[i])
        total += acc
    return total


def bound_inside_the_loop(x):
    """The inner bound is computed in the outer loop's body."""
    total = 0.0
    for i in range(x.shape[0]):
        steps = i % 3 + 1
        acc = x[i]
        for j in range(steps):
            acc = acc * np.cos(acc) + 0.5
        total += acc
    return total


def halving(x):
    """A while loop around the saves: its trip count is not known on entry."""
    total = 0.0
    scale = 8.0
    while scale > 0.01:
        for i in range(x.shape[0]):
            total = np.sin(total + scale * x[i])
        scale = scale * 0.5
    return total


PROGRAMS = [
    (fixed_nest, lambda rng: (rng.standard_normal(40) * 0.5,)),
    (bound_before_the_loop, lambda rng: (rng.standard_normal(30) * 0.5, 4)),
    (rows_written_in_place, lambda rng: (rng.standard_normal((6, 5)) * 0.5,)),
    (bound_changed_after_its_first_use, lambda rng: (rng.standard_normal(3) * 0.5, 40)),
    (triangular, lambda rng: (rng.standard_normal(25) * 0.5,)),
    (bound_inside_the_loop, lambda rng: (rng.standard_normal(30) * 0.5,)),
    (halving, lambda rng: (rng.standard_normal(12) * 0.3,)),
]


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("program, make_args", PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_gradient_of_scalars_saved_in_nested_loops(program, make_args, backend):
    args = make_args(np.random.default_rng(3))
    gradient = adcompile.grad(adcompile.compile(program, backend=backend))
    expected = gradient_by_differences(program, args)
    np.testing.assert_allclose(gradient(*args), expected, rtol=1e-6, atol=1e-8)
    # a second call starts from empty tapes again
    np.testing.assert_allclose(gradient(*args), expected, rtol=1e-6, atol=1e-8)


ZERO_TRIP = [entry for entry in PROGRAMS if entry[0] is not bound_changed_after_its_first_use]


@pytest.mark.parametrize("program, make_args", ZERO_TRIP, ids=[p.__name__ for p, _ in ZERO_TRIP])
def test_loops_that_never_run(program, make_args):
    first = make_args(np.random.default_rng(0))[0]
    args = (np.zeros((0,) + first.shape[1:]),) + make_args(np.random.default_rng(0))[1:]
    gradient = adcompile.grad(adcompile.compile(program, backend="numba"))
    assert gradient(*args).shape == args[0].shape


SECOND_ORDER = [PROGRAMS[k] for k in (0, 1, 3, 4, 6)]


@pytest.mark.parametrize("program, make_args", SECOND_ORDER, ids=[p.__name__ for p, _ in SECOND_ORDER])
def test_hessian_through_the_tapes(program, make_args):
    args = make_args(np.random.default_rng(5))
    args = (args[0][:9],) + args[1:]  # few entries: the Hessian by differences of gradients
    f = adcompile.compile(program, backend="python")
    hessian = adcompile.hessian(f)(*args)
    expected = hessian_by_differences(adcompile.grad(f), args)
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-6)


def test_the_generated_code_uses_no_lists():
    """Preallocated where the trip counts allow it, growing elsewhere: no ``rt.new_tape``."""
    x = np.linspace(-0.5, 0.5, 8)
    for program in (fixed_nest, triangular, halving):
        text = adcompile.source(adcompile.grad(adcompile.compile(program, backend="numba")), x, stage="lowered")
        assert "new_tape" not in text and "rt.push" not in text
    for program, args in ((fixed_nest, (x,)), (rows_written_in_place, (x.reshape(2, 4),))):
        text = adcompile.source(adcompile.grad(adcompile.compile(program, backend="numba")), *args, stage="lowered")
        assert " * 2,)" not in text  # preallocated: never grown
    grown = adcompile.source(adcompile.grad(adcompile.compile(triangular, backend="numba")), x, stage="lowered")
    assert " * 2,)" in grown
