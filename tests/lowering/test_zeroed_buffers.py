"""An iteration's array of zeros that loops of the previous iteration left all zero is not filled
again (``adcompile/lowering/zeroed_buffers.py``): the fill is skipped only where the loops ran
over every element, as a run-time check of their bounds says.

Programs run on numba (lowering on) and on the Python backend, compared with central
differences; the adversarial ones have loops that look like a covering nest but leave part of
the array (by their run-time bounds, by a start that is not 0, by a second write).
"""
import numpy as np
import pytest

import adcompile

FLAG = "if not _zeroed"  # the fill, skipped where the last loops zeroed the array


def without(matrix, row):
    """``matrix`` without its ``row``-th row and its first column (expansion down a column)."""
    size = matrix.shape[0] - 1
    kept = np.empty((size, size))
    for i in range(size):
        for j in range(size):
            kept[i, j] = matrix[i if i < row else i + 1, j + 1]
    return kept


def cofactor2(m):
    return m[0, 0] * m[1, 1] - m[1, 0] * m[0, 1]


def det3(matrix):
    total = 0.0
    for row in range(3):
        sign = 1.0 if row % 2 == 0 else -1.0
        total += sign * matrix[row, 0] * cofactor2(without(matrix, row))
    return total


def sum_of_det3(matrices):
    total = 0.0
    for k in range(matrices.shape[0]):
        total += det3(matrices[k])
    return total


def loops_of_varying_length(x, rows):
    """The loops write the first ``1 + k % rows`` rows of ``m``: the adjoints of the other rows
    are not zeroed, and a later (in the backward, earlier) iteration that writes more rows
    reads them; the run-time check must see that the loops did not cover ``m``."""
    total = 0.0
    n = x.shape[1]
    for k in range(x.shape[0]):
        m = np.zeros((rows, n))
        for r in range(1 + k % rows):
            for c in range(n):
                m[r, c] = x[k, c] * (r + 1.0)
        for r in range(rows):
            total += m[r, 0] * x[k, 0] + m[r, n - 1] * x[k, 1]
    return total


def loops_from_one(x):
    """The loops start at 1: row 0 of ``m`` is not written by them."""
    total = 0.0
    n = x.shape[1]
    for k in range(x.shape[0]):
        m = np.zeros((n, n))
        m[0, :] += x[k]
        for r in range(1, n):
            for c in range(n):
                m[r, c] = x[k, c] * r
        total += np.sum(m * m * x[k, 1])
    return total


def written_again_after_the_loops(x):
    """A write after the zeroing loops (``+=`` of a row) adds to the adjoint after its zeroing in
    the backward order: the fill stays."""
    total = 0.0
    n = x.shape[1]
    for k in range(x.shape[0]):
        m = np.empty((n, n))
        for r in range(n):
            for c in range(n):
                m[r, c] = x[k, c] * (r + 2.0)
        m[0, :] += x[k] * x[k]
        total += np.sum(np.sin(m))
    return total


def lowered_source(f, args):
    compiled = adcompile.compile(f)
    return adcompile.source(adcompile.grad(compiled), *args, stage="lowered")


def check_gradient(f, args):
    compiled = adcompile.compile(f)
    assert adcompile.gradcheck(compiled, args, wrt=(0,))
    python = adcompile.compile(f, backend="python")
    np.testing.assert_allclose(adcompile.grad(compiled)(*args), adcompile.grad(python)(*args), rtol=1e-11, atol=1e-11)


def test_a_minor_copied_by_loops_is_not_filled_again_and_stays_right():
    args = (np.random.default_rng(3).standard_normal((5, 3, 3)),)
    assert lowered_source(sum_of_det3, args).count(FLAG) == 1  # the minor's adjoint
    check_gradient(sum_of_det3, args)


@pytest.mark.parametrize("rows", [1, 3, 4])
def test_rows_the_last_loops_did_not_reach_are_filled_again(rows):
    args = (np.random.default_rng(4).standard_normal((9, 3)) + 0.5, rows)
    assert FLAG in lowered_source(loops_of_varying_length, args)  # the run-time check decides
    check_gradient(loops_of_varying_length, args)


@pytest.mark.parametrize("f", [loops_from_one, written_again_after_the_loops])
def test_loops_that_leave_part_of_the_adjoint_keep_the_fill(f):
    args = (np.random.default_rng(5).standard_normal((4, 3)) + 0.5,)
    assert FLAG not in lowered_source(f, args)
    check_gradient(f, args)


def test_float32_and_an_empty_batch():
    matrices = np.random.default_rng(6).standard_normal((4, 3, 3)).astype(np.float32)
    compiled = adcompile.compile(sum_of_det3)
    g = adcompile.grad(compiled)(matrices)
    want = adcompile.grad(adcompile.compile(sum_of_det3, backend="python"))(matrices)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
    empty = np.zeros((0, 3, 3))
    assert np.array_equal(adcompile.grad(compiled)(empty), empty)
