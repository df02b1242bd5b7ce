"""Loop fusion of reductions along an axis and of reads with inserted axes: a row-wise
logsumexp, ``keepdims`` results, ``x[:, None, :] - mu[None, :, :]`` and the adjoints of these
(broadcasts along the reduced axis, sums over broadcast axes).

As in ``test_fusion.py``, the fused IR is generated as Python and run (fast to load); its values
and gradients are compared with the unfused function and with central differences, where the
run-time length checks hold and where they fail (a length-1 axis broadcasting, empty axes).
"""
import re

import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences
from test_fusion import lowered


def logsumexp_rows(z):
    shifted = z - z.max(axis=1, keepdims=True)
    return np.sum(np.log(np.sum(np.exp(shifted), axis=1)) + z.max(axis=1))


def mixture(x, mu):
    d = x[:, None, :] - mu[None, :, :]
    return np.sum(np.log(np.sum(np.exp(-0.5 * np.sum(d * d, axis=2)), axis=1)))


def column_scales(A):
    return np.sum(np.mean(A * A, axis=0) * np.min(np.sin(A), axis=1, keepdims=True) + np.tanh(A[:, None]).sum(axis=1))


def softmax_cross_entropy(z, t):
    log_probs = z - z.max(axis=1, keepdims=True)
    log_probs = log_probs - np.log(np.sum(np.exp(log_probs), axis=1, keepdims=True))
    return -np.mean(np.sum(t * log_probs, axis=1))


RNG = np.random.default_rng(11)
T = np.eye(4)[RNG.integers(0, 4, 6)]
PROGRAMS = [
    (logsumexp_rows, (RNG.standard_normal((5, 4)),)),
    (mixture, (RNG.standard_normal((6, 3)), RNG.standard_normal((4, 3)))),
    (column_scales, (RNG.standard_normal((5, 3)),)),
    (softmax_cross_entropy, (RNG.standard_normal((6, 4)), T)),
]


def check_gradient(f, args, source_check=None):
    """The fused forward and gradient agree with the unfused ones, the gradient with central
    differences; returns the fused gradient's source."""
    compiled = adcompile.compile(f, backend="python")
    _, _, forward = lowered(compiled, *args)
    np.testing.assert_allclose(forward(*args), compiled(*args), rtol=1e-12)
    gradient = adcompile.grad(compiled)
    source, loops, fused_gradient = lowered(gradient, *args)
    g = fused_gradient(*args)[0]
    np.testing.assert_allclose(g, gradient(*args), rtol=1e-10, atol=1e-12)
    x, rest = args[0], args[1:]
    np.testing.assert_allclose(g, gradient_by_differences(lambda z: compiled(z, *rest), (x,)), rtol=1e-5, atol=1e-6)
    return source, loops


@pytest.mark.parametrize("f, args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_fused_values_and_gradients(f, args):
    _, loops = check_gradient(f, args)
    assert loops >= 1


def test_row_reductions_become_array_accumulators():
    z = RNG.standard_normal((5, 4))
    source, loops = check_gradient(logsumexp_rows, (z,))
    body = source[source.index("def "):]
    assert "[i] += " in body and "np.exp(shifted)" in body and "# grad of:" in body, source
    source, _ = check_gradient(column_scales, (RNG.standard_normal((5, 3)),))
    assert "[i] = np.minimum(" in source and "rt.min_axis" not in source.split("else:")[0], source


def test_inserted_axes_are_read_through_their_source():
    x, mu = RNG.standard_normal((6, 3)), RNG.standard_normal((4, 3))
    source, _ = check_gradient(mixture, (x, mu))
    fused = source[source.index("def "):].split("else:")[0]
    assert "x[i, k] - mu[j, k]" in fused, source
    assert "[i, 0, k] +=" in source, source  # x's adjoint: a sum over the means it broadcast along


def test_lengths_not_equal_at_run_time_run_the_unfused_statements():
    x, mu = RNG.standard_normal((6, 3)), RNG.standard_normal((4, 1))  # mu's column broadcasts
    compiled = adcompile.compile(mixture, backend="python")
    gradient = adcompile.grad(compiled, wrt=(0, 1))
    source, loops, fused = lowered(gradient, x, mu)
    assert loops >= 1 and "if " in source
    for got, want in zip(fused(x, mu), gradient(x, mu)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(fused(x, mu)[1], gradient_by_differences(lambda m: compiled(x, m), (mu,)), rtol=1e-5)


@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (3, 1), (1, 4)])
def test_empty_and_length_one_axes(shape):
    z = RNG.standard_normal(shape)
    compiled = adcompile.compile(logsumexp_rows, backend="python")
    _, _, fused = lowered(compiled, z)
    np.testing.assert_allclose(fused(z), compiled(z))
    gradient = adcompile.grad(compiled)
    _, _, fused = lowered(gradient, z)
    np.testing.assert_allclose(fused(z)[0], gradient(z))
    if z.size:
        check_gradient(logsumexp_rows, (z,))


def test_max_along_an_empty_axis_raises_as_numpy_does():
    z = np.zeros((3, 0))
    compiled = adcompile.compile(logsumexp_rows, backend="python")
    _, loops, fused = lowered(compiled, z)
    assert loops >= 1
    with pytest.raises(ValueError):
        fused(z)


def test_float32_reductions_accumulate_in_float64():
    z = RNG.standard_normal((6, 5)).astype(np.float32)
    compiled = adcompile.compile(logsumexp_rows, backend="python")
    gradient = adcompile.grad(compiled)
    source, _, fused = lowered(gradient, z)
    g = fused(z)[0]
    assert g.dtype == np.float32 and "_total" in source, source
    np.testing.assert_allclose(g, gradient(z), rtol=1e-5, atol=1e-6)
    z64 = z.astype(np.float64)
    np.testing.assert_allclose(g, gradient_by_differences(lambda v: logsumexp_rows(v), (z64,)), rtol=1e-4, atol=1e-4)
    compiled = adcompile.compile(column_scales, backend="python")  # a mean along an axis
    _, _, fused = lowered(compiled, z)
    np.testing.assert_allclose(fused(z), compiled(z), rtol=1e-5)
    _, _, fused = lowered(adcompile.grad(compiled), z)
    assert fused(z)[0].dtype == np.float32
    np.testing.assert_allclose(fused(z)[0], gradient_by_differences(column_scales, (z64,)), rtol=1e-3, atol=1e-3)


def test_second_order_through_row_reductions():
    z = RNG.standard_normal((3, 4))
    compiled = adcompile.compile(logsumexp_rows, backend="python")
    hessian = adcompile.hessian(compiled)
    _, loops, fused = lowered(hessian, z)
    h = fused(z)
    assert loops >= 1
    np.testing.assert_allclose(h, hessian(z), rtol=1e-10, atol=1e-12)
    g = adcompile.grad(compiled)
    column = gradient_by_differences(lambda v: g(v)[1, 2], (z,))
    np.testing.assert_allclose(h[1, 2], column, rtol=1e-5, atol=1e-6)


@pytest.mark.slow  # one numba compile, about 12 s cold
def test_numba_mixture_gradient():
    x, mu = RNG.standard_normal((7, 3)), RNG.standard_normal((4, 3))
    gradient = adcompile.grad(adcompile.compile(mixture), wrt=(0, 1))
    reference = adcompile.grad(adcompile.compile(mixture, backend="python"), wrt=(0, 1))
    assert "for k in range(" in adcompile.source(gradient, x, mu, stage="lowered")
    for got, want in zip(gradient(x, mu), reference(x, mu)):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    one = mu[:, :1].copy()  # the check fails: the unfused statements run in machine code too
    for got, want in zip(gradient(x, one), reference(x, one)):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_parallel_rows_but_not_a_sum_over_rows():
    z = RNG.standard_normal((5, 4))
    compiled = adcompile.compile(logsumexp_rows, backend="python")
    source, _, fused = lowered(compiled, z, parallel=True)
    assert "numba.prange(" in source  # each row accumulates into its own s[i]
    np.testing.assert_allclose(fused(z), compiled(z))
    x, mu = RNG.standard_normal((6, 3)), RNG.standard_normal((4, 3))
    gradient = adcompile.grad(adcompile.compile(mixture, backend="python"), wrt=1)
    source, _, fused = lowered(gradient, x, mu, parallel=True)
    row_sum = source[:source.index("[0, j, k] +=")]  # mu's adjoint sums over the rows i
    assert "prange" not in row_sum[row_sum.rindex("if "):], source
    np.testing.assert_allclose(fused(x, mu)[0], gradient(x, mu), rtol=1e-12)


def test_an_array_read_only_for_its_shape_after_the_loop_is_not_written():
    """``d * d`` is summed in the loop; the adjoint reads its shape, which ``d`` has too."""
    x, mu = RNG.standard_normal((6, 3)), RNG.standard_normal((4, 3))
    source, _ = check_gradient(mixture, (x, mu))
    first_loop = source[source.index("for i in range("):source.index("else:")]
    assert re.findall(r"(\w+)\[i, j, k\] = ", first_loop) == ["d"], source
