"""A division by zero gives what numpy gives, inf or nan (0 for integers), never an exception:
on both backends, in fused and unfused numba code, for numpy and Python scalars alike.

The reference is numpy applied to numpy scalars (what ``np.sum(...) / s`` does in the user's own
Python). numba compiles generated code with its numpy error model, and the Python backend gets
Python numbers as numpy scalars, so a function's value does not depend on the backend, on
fusion, or on which tier of a tiered function ran.
"""
import numpy as np
import pytest

import adcompile

CONFIGURATIONS = {
    "python": dict(backend="python"),
    "numba": dict(backend="numba", fuse=False),
    "numba, fused loops": dict(backend="numba", fuse=True),
}


def scaled_energy(x, s):
    return np.sum(x * x) / s  # a loop numba fuses, then a division of scalars outside it


def float_division(a, b):
    return a / b, a % b, a // b


def integer_division(i, j):
    return i / j, i % j, i // j


def numpy_reference(fn, *args):
    with np.errstate(all="ignore"):
        return fn(*(np.asarray(a)[()] for a in args))


def same(actual, expected):
    actual, expected = np.atleast_1d(*np.broadcast_arrays(actual)), np.atleast_1d(expected)
    return actual.shape == expected.shape and np.array_equal(actual, expected, equal_nan=True)


def call_quietly(fn, *args):
    with np.errstate(all="ignore"):  # the Python backend's numpy warns, as numpy does; numba does not
        return fn(*args)


@pytest.mark.parametrize("configuration", CONFIGURATIONS)
def test_a_scalar_division_by_zero_after_a_loop_gives_inf(configuration):
    x = np.array([1.0, -2.0, 3.0])
    compiled = adcompile.compile(scaled_energy, **CONFIGURATIONS[configuration])
    assert call_quietly(compiled, x, 0.0) == np.inf == numpy_reference(scaled_energy, x, 0.0)
    assert np.isnan(call_quietly(compiled, np.zeros(3), 0.0))
    gradient = call_quietly(adcompile.grad(compiled), x, 0.0)
    assert np.array_equal(gradient, [np.inf, -np.inf, np.inf])  # 2 x / s, as numpy computes it
    assert adcompile.gradcheck(compiled, (x, 2.0), wrt=0)
    if configuration == "numba, fused loops":
        assert "for " in adcompile.source(compiled, x, 0.0, stage="lowered"), "the test needs a fused loop"


@pytest.mark.parametrize("configuration", ["python", "numba"])
@pytest.mark.parametrize("fn, args", [(float_division, (1.0, 0.0)), (float_division, (-3.0, 0.0)),
                                      (float_division, (0.0, 0.0)), (integer_division, (7, 0))],
                         ids=["1/0", "-3/0", "0/0", "int 7/0"])
def test_python_numbers_divided_by_zero_follow_numpy(configuration, fn, args):
    compiled = adcompile.compile(fn, **CONFIGURATIONS[configuration])
    for value, expected in zip(call_quietly(compiled, *args), numpy_reference(fn, *args)):
        assert same(value, expected), (value, expected)


def test_the_python_backend_still_computes_exactly_with_python_numbers():
    compiled = adcompile.compile(float_division, backend="python")
    assert [float(v) for v in compiled(7.5, 2.0)] == [3.75, 1.5, 3.0]
    assert [int(v) for v in adcompile.compile(integer_division, backend="python")(-7, 2)[1:]] == [1, -4]
