"""Whole-array writes of elementwise expressions (``p -= lr * d``, an optimizer's update) are
lowered to one loop writing each element (``lowering/slice_writes.py``), behind a run-time check
that every operand has the written array's shape and does not overlap it; otherwise the
statements run as they were. Results are compared with numpy, also for the arrays that must
take the fallback: one array passed twice, overlapping views, a broadcast operand."""
import numpy as np
import pytest

import adcompile

RNG = np.random.default_rng(5)


@pytest.fixture
def fused(monkeypatch):
    """Lower for the Python backend too (loops run there as written), as numba would get it."""
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")


def sgd_like(p, d, lr):
    p -= lr * d
    return np.sum(p)


def momentum_like(p, buf, g, momentum, lr):
    buf[...] = momentum * buf + (1.0 - momentum) * g
    denom = np.sqrt(buf * buf) + 1.0
    p -= lr * buf / denom
    return 0.0


def reversed_copy(x):
    x[...] = 2.0 * x[::-1]
    return 0.0


def halve_in_a_loop(w, x):
    total = 0.0
    for i in range(x.shape[0]):
        w[:] = w * 0.5 + 1.0
        total += x[i]
    return total


def rebinds_a_scalar_before_the_write(p, d, lr):
    for _ in range(2):  # in a loop, the IR keeps one variable lr for both values
        step = lr * d
        lr = lr * 10.0
        p -= step * lr
    return 0.0


def numpy_sgd_like(p, d, lr):
    p -= lr * d
    return np.sum(p)


def test_an_update_is_one_loop_and_right(fused):
    compiled = adcompile.compile(sgd_like, backend="python")
    p, d = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    expected = p - 0.1 * d
    source = adcompile.source(compiled, p, d, 0.1, stage="lowered")
    assert "p[i, j] = p[i, j] - lr * d[i, j]" in source and "rt.may_share_memory(p, d)" in source
    assert compiled(p, d, 0.1) == pytest.approx(expected.sum())
    np.testing.assert_array_equal(p, expected)


@pytest.mark.parametrize("case", ["same array", "overlapping views", "broadcast operand", "transposed view"])
def test_operands_the_loop_could_misread_take_the_statements_as_written(fused, case):
    compiled = adcompile.compile(sgd_like, backend="python")
    buffer = RNG.standard_normal((5, 4))
    if case == "same array":
        p, d = buffer, buffer
    elif case == "overlapping views":
        p, d = buffer[1:], buffer[:-1]
    elif case == "broadcast operand":
        p, d = buffer, RNG.standard_normal((1, 4))
    else:
        p, d = buffer[:4], buffer[:4].T.copy().T  # same shape, own memory, not contiguous
    reference_buffer = buffer.copy()
    reference_d = reference_buffer if d is buffer else (
        reference_buffer[:-1] if case == "overlapping views" else d.copy())
    reference_p = reference_buffer if p is buffer else reference_buffer[1:] if case == "overlapping views" \
        else reference_buffer[:4]
    total = compiled(p, d, 0.5)
    assert total == pytest.approx(numpy_sgd_like(reference_p, reference_d, 0.5))
    np.testing.assert_array_equal(buffer, reference_buffer)


def test_a_chain_through_named_values_is_one_loop(fused):
    compiled = adcompile.compile(momentum_like, backend="python")
    p, buf, g = (RNG.standard_normal((3, 5)) for _ in range(3))
    expected_buf = 0.9 * buf + 0.1 * g
    expected_p = p - 0.01 * expected_buf / (np.sqrt(expected_buf * expected_buf) + 1.0)
    source = adcompile.source(compiled, p, buf, g, 0.9, 0.01, stage="lowered")
    assert "denom = " not in source.split("else:")[0]  # computed in the loop, not into an array
    compiled(p, buf, g, 0.9, 0.01)
    np.testing.assert_allclose(buf, expected_buf, rtol=1e-15)
    np.testing.assert_allclose(p, expected_p, rtol=1e-15)


def test_a_view_of_the_written_array_is_not_looped(fused):
    compiled = adcompile.compile(reversed_copy, backend="python")
    x = RNG.standard_normal((6, 2))
    expected = 2.0 * x[::-1]
    assert "for i in" not in adcompile.source(compiled, x, stage="lowered")
    compiled(x)
    np.testing.assert_array_equal(x, expected)


def test_the_loop_has_its_own_index_not_the_programs(fused):
    compiled = adcompile.compile(halve_in_a_loop, backend="python")
    w, x = RNG.standard_normal(2), RNG.standard_normal(5)
    expected_w = w.copy()
    for _ in range(5):
        expected_w = expected_w * 0.5 + 1.0
    assert "for i_1 in range(" in adcompile.source(compiled, w, x, stage="lowered")
    assert compiled(w, x) == pytest.approx(x.sum())
    np.testing.assert_allclose(w, expected_w, rtol=1e-15)


def test_a_chain_runs_where_it_was_written_when_an_operand_changes_before_the_write(fused):
    compiled = adcompile.compile(rebinds_a_scalar_before_the_write, backend="python")
    p, d = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))
    expected = p - (0.1 * d) * 1.0 - (1.0 * d) * 10.0
    compiled(p, d, 0.1)
    np.testing.assert_allclose(p, expected, rtol=1e-15)


def test_the_loop_and_its_checks_compile_with_numba():
    compiled = adcompile.compile(sgd_like, backend="numba")
    p, d = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    expected = p - 0.25 * d
    compiled(p, d, 0.25)
    np.testing.assert_array_equal(p, expected)
    same = RNG.standard_normal((4, 3))
    expected = same - 0.25 * same
    compiled(same, same, 0.25)
    np.testing.assert_array_equal(same, expected)


def write_rows(out, v, k):
    out[k] = v * 1.0
    out[k - 1] += v
    return 0.0


def write_row(out, v, k):
    out[k] = v * 1.0
    return 0.0


def numpy_write_rows(out, v, k):
    out[k] = v * 1.0
    out[k - 1] += v


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("k", [1, 3, -1, -2])
def test_a_row_written_from_an_array_is_a_loop_and_right(fused, backend, k):
    compiled = adcompile.compile(write_rows, backend=backend)
    out, v = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    source = adcompile.source(compiled, out, v, k, stage="lowered")
    assert "out[k, i] = " in source and "out[_t" in source  # both writes are loops
    expected = out.copy()
    numpy_write_rows(expected, v, k)
    compiled(out, v, k)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("case", ["index out of range", "empty rows out of range", "broadcast row", "overlapping row"])
def test_rows_the_loop_could_get_wrong_take_the_statements_as_written(fused, backend, case):
    compiled = adcompile.compile(write_rows, backend=backend)
    out = RNG.standard_normal((4, 3))
    v, k = RNG.standard_normal(3), 1
    if case == "index out of range":
        k = 4
    elif case == "empty rows out of range":
        out, v, k = np.zeros((4, 0)), np.zeros(0), 7
    elif case == "broadcast row":
        v = RNG.standard_normal(1)
    else:
        v = out[2]  # a view of the written array, passed by the caller
    expected = out.copy()
    if case.endswith("out of range"):  # numpy raises, also where the row has no element
        with pytest.raises(IndexError):
            write_row(expected, v, k)
        with pytest.raises(IndexError):
            adcompile.compile(write_row, backend=backend)(out, v, k)
        return
    numpy_write_rows(expected, expected[2] if case == "overlapping row" else v, k)
    compiled(out, v, k)
    np.testing.assert_array_equal(out, expected)


def accumulate_rows(x, w):
    """A view of a row per iteration: its adjoint goes back with ``bx[k] += bxk``."""
    total = 0.0
    for k in range(x.shape[0]):
        xk = x[k]
        total += np.sum(np.sin(xk * w[k % w.shape[0]]) * xk)
    return total


def test_the_gradient_of_a_row_view_in_a_loop_is_right_on_numba():
    args = (RNG.standard_normal((5, 3)), RNG.standard_normal((2, 3)))
    compiled = adcompile.compile(accumulate_rows)
    assert adcompile.gradcheck(compiled, args, wrt=(0, 1))
