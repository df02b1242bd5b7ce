"""Reverse mode takes every shape from the iteration that needs it.

Regression tests for three ways the backward sweep read a shape from the wrong value: an
adjoint allocated with the shape the last iteration left (``np.zeros_like(t)`` at the start of
each backward iteration, ``t = x[k:] * 2.0`` shorter every iteration); a read of a value's
shape that the static-shapes pass moved past the statement putting back the value an earlier
iteration had (``broadcast_to_shape(s, v)`` after ``v = tape.pop()``, the placeholder of the
first iteration); and the adjoint of a variable assigned only in a while loop numba proves
dead (``be = np.zeros_like(e)``, which numba cannot type without an assignment of ``e``);
and a value saved on entry to a region (a Hessian called inside the function) before the
region first assigns it, whose placeholder gave the region's rule its shape.

Every program runs on both backends (numba with the lowering, the default, and plain Python):
its value against numpy, ``grad`` against central finite differences; a few ``hessian``s
against finite differences of the gradient.
"""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences, hessian_by_differences

X5 = np.linspace(0.1, 1.0, 5)
RNG = np.random.default_rng(20)
A34 = RNG.uniform(-0.8, 0.8, (3, 4))
A32 = np.arange(6.0).reshape(3, 2) * 0.1


# ---------------------------------------------------------------------- loop-variant shapes
def tail_slices(x):
    s = 0.0
    for k in range(3):
        t = x[k:] * 2.0
        s = s + np.sum(np.tanh(t))
    return s


def head_slices_growing(x):
    s = 0.0
    for k in range(4):
        t = np.sin(x[:k + 1])
        s = s + np.sum(t * t)
    return s


def nested_window_slices(x):
    s = 0.0
    for j in range(3):
        for k in range(j + 1):
            t = x[k:j + 2] * x[j]
            s = s + np.sum(np.cos(t))
    return s


def column_blocks(A):
    s = 0.0
    for j in range(3):
        t = np.cos(A[:, :j + 1])
        s = s + np.sum(t * t)
    return s


def row_blocks_rebound(A):
    s = 0.0
    for i in range(3):
        B = A[i:, 1:] * A[i:, :-1]
        s = s + np.sum(np.tanh(B))
    return s


def tail_writes(x):
    w = x.copy()
    for i in range(3):
        w[i:] = np.sin(w[i:]) * 1.5
    return np.sum(w * w)


def tail_writes_through_temporary(x):
    w = x.copy()
    for i in range(3):
        t = w[i:] * 0.5
        w[i:] = t * t + 0.1
    return np.sum(w)


def slices_read_after_loops(x):
    s = 0.0
    for j in range(2):
        for k in range(3):
            t = x[k + j:] * 2.0
            s = s + np.sum(np.tanh(t))
        s = s + np.sum(t * x[j + 2:])
    return s + np.sum(np.sin(t))


def tail_writes_while(x):
    w = x.copy()
    i = 0
    while i < 3:
        w[i:] = np.cos(w[i:]) * w[i:]
        i += 1
    return np.sum(w * x)


def tail_slices_while(x):
    s = 0.0
    k = 0
    while k < 3:
        t = x[k:] * 2.0
        s = s + np.sum(np.tanh(t))
        k += 1
    return s


def tail_slices_counted(x, n):
    s = np.sum(x)
    for k in range(n):
        t = x[k:] * 2.0
        s = s + np.sum(np.tanh(t))
    return s


# ---------------------------------------------------------------------- shapes of restored values
def reversed_difference(x):
    s = 0.0
    for i in range(3):
        s = s + np.sin(np.sum(x - 2.0 * x[::-1]))
    return s


def reversed_mean_update(x):
    w = x.copy()
    for i in range(3):
        w[i] += np.sum(w[::-1] * np.mean(w[::-1]))
    return np.sum(w * w)


def reversed_scaled_fill(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.exp(x[::-1] * 0.5 - x) * 3.0)
    return s


# ---------------------------------------------------------------------- loops that never run
def dead_while_over_rows(A):
    s = 0.0
    k = 0
    while k < 3 and (-0.2 > 0.5):
        for e in A:
            s = s + np.sin(e[1])
        k += 1
    return s + np.sum(A)


def dead_while_over_slices(x):
    s = 0.0
    k = 0
    while k < 2 and (0.1 > 0.5):
        t = x[k:] * 2.0
        s = s + np.sum(np.tanh(t))
        k += 1
    return s + np.sum(x * x)


def zero_trip_while_over_rows(A, n):
    s = np.sum(A)
    k = 0
    while k < n:
        for e in A:
            s = s + np.sin(e[1])
        k += 1
    return s


CASES = [
    (tail_slices, (X5,)), (head_slices_growing, (X5,)), (nested_window_slices, (X5,)),
    (column_blocks, (A34,)), (row_blocks_rebound, (A34,)), (tail_writes, (X5,)),
    (tail_writes_through_temporary, (X5,)), (slices_read_after_loops, (np.linspace(0.1, 1.0, 6),)),
    (tail_writes_while, (X5,)), (tail_slices_while, (X5,)),
    (tail_slices_counted, (X5, 3)), (tail_slices_counted, (X5, 0)),
    (reversed_difference, (X5,)), (reversed_mean_update, (X5,)), (reversed_scaled_fill, (X5,)),
    (dead_while_over_rows, (A32,)), (dead_while_over_slices, (X5,)),
    (zero_trip_while_over_rows, (A32, 0)), (zero_trip_while_over_rows, (A32, 2)),
]
IDS = [f"{fn.__name__}-{k}" for k, (fn, _) in enumerate(CASES)]


def _fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("fn, args", CASES, ids=IDS)
def test_value_and_gradient(fn, args, backend):
    compiled = adcompile.compile(fn, backend=backend)
    np.testing.assert_allclose(compiled(*_fresh(args)), fn(*_fresh(args)), rtol=1e-12, atol=1e-14)
    kept = _fresh(args)
    gradient = adcompile.grad(compiled)(*kept)
    for a, b in zip(kept, args):
        np.testing.assert_array_equal(a, b, err_msg="grad changed its argument")
    np.testing.assert_allclose(gradient, gradient_by_differences(fn, args), rtol=1e-5, atol=1e-7)


HESSIAN_CASES = [(tail_slices, (X5,)), (column_blocks, (A34[:, :3],)), (reversed_difference, (X5,)),
                 (tail_writes, (X5,))]


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("fn, args", HESSIAN_CASES, ids=[fn.__name__ for fn, _ in HESSIAN_CASES])
def test_hessian_against_differences_of_the_gradient(fn, args, backend):
    compiled = adcompile.compile(fn, backend=backend)
    gradient = adcompile.grad(adcompile.compile(fn, backend="python"))
    hessian = np.asarray(adcompile.hessian(compiled)(*_fresh(args)))
    numeric = hessian_by_differences(gradient, args, eps=1e-5)
    for index in np.ndindex(np.shape(args[0])):
        np.testing.assert_allclose(hessian[(...,) + index], numeric[(...,) + index], rtol=1e-4, atol=1e-6,
                                   err_msg=f"Hessian column {index}")


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("fn, x", [(tail_slices, X5), (reversed_difference, X5), (column_blocks, A34)],
                         ids=lambda case: getattr(case, "__name__", ""))
def test_float32(fn, x, backend):
    compiled = adcompile.compile(fn, backend=backend)
    gradient = adcompile.grad(compiled)(x.astype(np.float32))
    assert gradient.dtype == np.float32
    np.testing.assert_allclose(gradient, gradient_by_differences(fn, (x,)), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------- a region's first values
def shifted_products(x):
    return np.sum(x[1:] * x[:-1] ** 2)


def hessian_norm(x):
    return np.sum(adcompile.hessian(shifted_products)(x) ** 2)


def hessian_norm_reference(x):
    n = x.shape[0]
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 2.0 * x[i + 1]
        H[i, i + 1] += 2.0 * x[i]
        H[i + 1, i] += 2.0 * x[i]
    return np.sum(H ** 2)


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_third_order_through_slices(backend):
    """The gradient of a function of a Hessian: the Hessian's call is a region whose outputs
    have no value before it, so nothing is saved on its entry (a saved placeholder gave its
    rule the shape (0, 0))."""
    compiled = adcompile.compile(hessian_norm, backend=backend)
    assert compiled(X5.copy()) == pytest.approx(hessian_norm_reference(X5), rel=1e-12)
    np.testing.assert_allclose(adcompile.grad(compiled)(X5.copy()),
                               gradient_by_differences(hessian_norm_reference, (X5,)), rtol=1e-6, atol=1e-8)
