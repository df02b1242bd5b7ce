"""Conditional expressions whose branches have different dtypes (``np.zeros(2) if c else x32``).

The result has the wider dtype, as the variable of an if/else statement assigning the same
values has: the branch of the narrower dtype is converted (numba cannot unify a variable's
float32 and float64 arrays, and once failed to compile such code inside loops). Each program
runs on numba (the default, lowering on) and as Python, with the condition true and false:
its value against the plain Python function, its gradient against central differences of
the function run in float64, with float32 tolerances.
"""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences


def zeros_or_argument_in_loop(x32, a):
    s = 0.0
    for i in range(3):
        t = np.zeros(2) if a > 5.0 else x32
        s = s + np.sum(t * x32)
    return s


def loop_carried_conditional(x32, a):
    t = x32
    for i in range(3):
        t = np.ones(2) if a > 5.0 else t * x32
    return np.sum(t)


def conditional_as_reduction_argument(x32, a):
    s = 0.0
    for i in range(3):
        s = s + np.sum((x32 * a) if a > 5.0 else x32)
    return s


def nested_conditionals(x32, a):
    t = np.zeros(2) if a > 5.0 else (x32 if a > 0.0 else x32 * 2)
    return np.sum(t * x32)


def same_as_statement(x32, a):
    if a > 5.0:
        t = np.zeros(2)
    else:
        t = x32
    return np.sum(t * x32)


def same_as_expression(x32, a):
    t = np.zeros(2) if a > 5.0 else x32
    return np.sum(t * x32)


PROGRAMS = [zeros_or_argument_in_loop, loop_carried_conditional, conditional_as_reduction_argument,
            nested_conditionals]
X32 = np.array([1.5, -0.7], dtype=np.float32)


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_value_and_gradient(fn, backend):
    compiled = adcompile.compile(fn, backend=backend)
    gradient = adcompile.grad(compiled)
    for a in (1.0, 6.0, -1.0):  # each branch taken
        np.testing.assert_allclose(compiled(X32, a), fn(X32, a), rtol=1e-6)
        g = gradient(X32, a)
        assert g.dtype == np.float32 and g.shape == X32.shape
        np.testing.assert_allclose(g, gradient_by_differences(fn, (X32, a)), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_expression_has_the_dtype_of_the_statement(backend):
    """``t = b if c else d`` and the if/else statement assigning ``t`` give ``t`` one dtype."""
    for a in (1.0, 6.0):
        statement = adcompile.compile(same_as_statement, backend=backend)(X32, a)
        expression = adcompile.compile(same_as_expression, backend=backend)(X32, a)
        assert np.asarray(expression).dtype == np.asarray(statement).dtype
        assert expression == statement
