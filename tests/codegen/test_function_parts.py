"""Long generated functions cut into parts (``adcompile/codegen/function_parts.py``).

The split is checked as a program transformation: for small hand-written sources cut into
parts of a few lines, the split code computes what the original does, for inputs that take
every path (loops that run no iteration, branches that bind a name on one side only). Then a
real gradient, split into parts of a few lines and compiled by numba, is compared with central
differences; and the split is a pure function of the source.
"""
import functools

import numpy as np
import pytest

import adcompile
import adcompile.api.specialised as specialised
from adcompile.codegen.function_parts import PART_MARK, split_long_function
from oracles import gradient_by_differences, hessian_by_differences

STRAIGHT = '''
def f(x, n):
    a = x * 2.0
    b = a + 1.0
    # a comment between statements
    c = b * a
    d = c - x
    e = d * d
    g = e + a
    return g + b
'''

LOOPS_AND_BRANCHES = '''
def f(x, n):
    s = 0.0
    t = x * 0.0
    t += 1.0
    for i in range(n):
        s = s + x[i]
        last = x[i]
    if n > 1:
        u = s * 2.0
    else:
        u = -s
    for j in range(n):
        t = t + u
    v = t * 2.0
    w = v + s
    if s > 0.0:
        w = w * 3.0
    k = 0
    while k < n:
        w = w + k
        k = k + 1
    return w + t, s, u
'''


def run(source, name, *args):
    namespace = {"np": np}
    exec(compile(source, "<generated>", "exec"), namespace)  # noqa: S102  (a test's own text)
    return namespace[name](*args)


@pytest.mark.parametrize("source", [STRAIGHT, LOOPS_AND_BRANCHES], ids=["straight", "loops-and-branches"])
@pytest.mark.parametrize("part_lines", [1, 2, 3, 5])
def test_split_code_computes_what_the_function_computes(source, part_lines):
    split = split_long_function(source, "f", part_lines=part_lines)
    assert (PART_MARK in split) == (len(source.strip().splitlines()) > 2 * part_lines)
    for n in (0, 1, 2, 4):  # zero-trip loops, each side of the branches
        x = np.linspace(-1.0, 1.0, 4)
        expected, got = run(source, "f", x.copy(), n), run(split, "f", x.copy(), n)
        for e, g in zip(np.atleast_1d(expected) if not isinstance(expected, tuple) else expected,
                        np.atleast_1d(got) if not isinstance(got, tuple) else got):
            np.testing.assert_array_equal(e, g)


def test_a_short_function_is_not_split_and_the_split_is_deterministic():
    assert split_long_function(STRAIGHT, "f", part_lines=100) == STRAIGHT
    once = split_long_function(LOOPS_AND_BRANCHES, "f", part_lines=2)
    assert once == split_long_function(LOOPS_AND_BRANCHES, "f", part_lines=2)
    assert "# a comment between statements" in split_long_function(STRAIGHT, "f", part_lines=2)


def layers(x, W):
    """A deep-enough network whose gradient is many lines long."""
    h = x
    for k in range(W.shape[0]):
        h = np.tanh(h @ W[k]) + 0.1 * h
    h2 = np.sin(h) * h
    h3 = np.exp(-h2 * h2) + h
    return np.sum(h3 ** 2) + np.sum(np.tanh(h3) * h)


def test_a_split_gradient_compiled_by_numba_equals_finite_differences(monkeypatch):
    monkeypatch.setattr(specialised, "split_long_function", functools.partial(split_long_function, part_lines=4))
    x = np.linspace(-0.5, 0.5, 6).reshape(2, 3)
    W = np.linspace(-0.4, 0.4, 27).reshape(3, 3, 3)
    gradient = adcompile.grad(layers, wrt=(0, 1))
    source = adcompile.source(gradient, x, W, stage="lowered")
    assert PART_MARK in source
    gx, gW = gradient(x, W)
    np.testing.assert_allclose(gx, gradient_by_differences(layers, (x, W), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gW, gradient_by_differences(layers, (x, W), 1), rtol=1e-6, atol=1e-8)


def recurrent(x, W):
    """A loop carrying an array: its Hessian pushes onto tapes and pops them."""
    h = x
    for k in range(W.shape[0]):
        h = np.tanh(W[k] @ h) * h + 0.1 * h
    return np.sum(np.sin(h) * h)


def test_a_split_hessian_with_tapes_compiled_by_numba_equals_finite_differences(monkeypatch):
    """Forward over reverse, its tapes pushed in one part and popped in another, the parts
    compiled inside the function that calls them (``backend/subroutines.py``)."""
    monkeypatch.setattr(specialised, "split_long_function", functools.partial(split_long_function, part_lines=6))
    x = np.linspace(-0.5, 0.5, 3)
    W = np.linspace(-0.4, 0.4, 18).reshape(2, 3, 3)
    hessian = adcompile.hessian(recurrent, wrt=0)
    source = adcompile.source(hessian, x, W, stage="lowered")
    assert source.count(PART_MARK) > 4 and "rt.push" in source
    gradient = adcompile.grad(adcompile.compile(recurrent, backend="python"), wrt=0)
    np.testing.assert_allclose(hessian(x, W), hessian_by_differences(gradient, (x, W), 0), rtol=1e-6, atol=1e-8)
