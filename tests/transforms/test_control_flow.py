"""Reverse mode through control flow and in-place writes: branches, every loop form, break,
continue, early return, while loops with run-time trip counts, loop-carried values and
writes that overwrite values the gradient needs. Each function's compiled value is compared
with running it as Python, and its gradient with central finite differences."""
import re

import numpy as np
import pytest

import adcompile
from cf_helpers import check_against_python

RNG = np.random.default_rng(42)
X5 = RNG.uniform(0.1, 1.0, 5)
W5 = RNG.uniform(-1.0, 1.0, 5)
M34 = RNG.uniform(-1.0, 1.0, (3, 4))
SEQ = RNG.uniform(-0.5, 0.5, (6, 3))
W33 = RNG.uniform(-0.6, 0.6, (3, 3))
MIXED = np.array([0.7, -0.4, 1.3, -1.1, 0.2, 0.9])


# ---------------------------------------------------------------------- branches
def if_scalar(a, b):
    if a > b:
        y = a * b
    else:
        y = a - b
    return y * y


def if_elif_else(a):
    if a > 2.0:
        y = np.exp(a)
    elif a > 0.0:
        y = np.sin(a) * a
    else:
        y = -a * a * a
    return y


def if_on_sum(x):
    if np.sum(x) > 0:
        return np.sum(x * x)
    return np.sum(np.abs(x))


def if_on_item_in_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s += x[i] * x[i]
        else:
            s -= 0.5 * x[i]
    return s


def conditional_expression(x, a):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * a if x[i] > 0 else np.sin(x[i])
    return s


def and_or_not(x, a):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0 and not x[i] > 1.0 or a > 10.0:
            s += a * x[i]
        elif x[i] < -1.0 or x[i] > 1.0:
            s += x[i] * x[i]
    return s


def short_circuit_index(x, n):
    i = 0
    s = 0.0
    while i < n and x[i] > 0.05:
        s += np.log(x[i])
        i += 1
    return s


def tuple_from_branch(a, b):
    if a > b:
        t = (a * b, a)
    else:
        t = (b, a - b)
    return t[0] * t[1]


def branch_writes_array(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        if x[i] > 0:
            out[i] = x[i] * 2.0
    return np.sum(out * out)


# ---------------------------------------------------------------------- early return
def early_return_branch(a):
    if a > 1.0:
        return a * a
    elif a > 0.0:
        return np.sin(a)
    return -a


def early_return_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] ** 3
        if s > 1.0:
            return s * 2.0
    return s


def early_return_nested(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            s += X[i, j] * X[i, j]
            if s > 1.5:
                return s + X[i, 0]
    return -s


def early_return_while(x0):
    x = x0
    k = 0
    while True:
        x = x * 1.3
        k += 1
        if x > 10.0:
            return x + k
    return x


def early_return_array(x):
    if np.sum(x) > 100.0:
        return np.sum(x)
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i] = x[i] * (i + 1)
        if y[i] > 2.0:
            return np.sum(y * y)
    return np.sum(y)


def early_return_on_none(x, b):
    if b is None:
        return np.sum(x * x)
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            return x[i] * b
    return b


def while_else(x):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        if x[i] < 0:
            break
        s += x[i] ** 2
        i += 1
    else:
        s = s * 2.0
    return s


def return_tuple_from_loop(x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            return x[i], i
    return 0.0, -1


def uses_tuple_from_loop(x):
    a, k = return_tuple_from_loop(x)
    return a * k + a


# ---------------------------------------------------------------------- for loops
def range_one_arg(x, n):
    s = 0.0
    for i in range(n):
        s = s * 0.5 + x[i]
    return s


def range_two_args(x, lo):
    s = 0.0
    for i in range(lo, x.shape[0]):
        s += np.cos(x[i])
    return s


def range_three_args(x):
    s = 1.0
    for i in range(1, len(x), 2):
        s = s * x[i] + x[i - 1]
    return s


def range_negative_step(x):
    s = 0.0
    for i in range(x.shape[0] - 1, -1, -1):
        s = s * x[i] + 1.0
    return s


def range_runtime_step(x, step):
    s = 0.0
    for i in range(0, x.shape[0], step):
        s += x[i] * x[i]
    return s


def reversed_range_horner(c, t):
    y = 0.0
    for k in reversed(range(c.shape[0])):
        y = y * t + c[k]
    return y


def nested_loops(A, x):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j] * x[j] * (i + 1)
    return s


def triangular_loops(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(i):
            s += x[i] * x[j]
    return s


def for_row_in(X, w):
    s = 0.0
    for row in X:
        s += np.tanh(np.sum(row * w))
    return s


def for_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        s += v * v * (i + 1.0)
    return s


def for_zip(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += a * b - a
    return s


def loop_index_as_float(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sin(x[i] * float(i))
    return s


# ---------------------------------------------------------------------- break / continue
def break_for(x, n):
    s = 0.0
    for i in range(n):
        if x[i] < 0:
            break
        s += x[i] * x[i]
    return s


def continue_for(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] < 0.0:
            continue
        s += np.sin(x[i]) * s + x[i]
    return s


def break_inner_loop(X):
    s = 0.0
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            if X[i, j] > 0.8:
                break
            if X[i, j] < -0.5:
                continue
            s += X[i, j] * s + X[i, j]
    return s


def break_while(a):
    y = a
    k = 0
    while True:
        y = 0.5 * (y + 2.0 / y)
        k += 1
        if k >= 6:
            break
    return y


def continue_while(x):
    i = 0
    s = 0.0
    while i < x.shape[0]:
        i += 1
        if x[i - 1] < 0:
            continue
        s += x[i - 1] ** 2
    return s


def break_for_row(X):
    s = 0.0
    for row in X:
        if np.sum(row) > 1.0:
            break
        s += np.sum(row * row)
    return s


def break_enumerate(x):
    s = 0.0
    for i, v in enumerate(x):
        if v < 0:
            break
        s += v * i
    return s


def break_zip(x, y):
    s = 0.0
    for a, b in zip(x, y):
        if a * b > 0.5:
            break
        s += a * b
    return s


def reversed_continue_break(x):
    s = 0.0
    for i in reversed(range(x.shape[0])):
        if x[i] < 0:
            continue
        if s > 1.0:
            break
        s = s * 0.5 + x[i]
    return s


def for_else(x, limit):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        if s > limit:
            break
    else:
        s = s * 10.0
    return s


# ---------------------------------------------------------------------- while loops
def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def fixed_point(a, b):
    # x = a * cos(x) + b, a contraction for |a| < 1
    x = 0.0
    x_old = 1.0
    while abs(x - x_old) > 1e-13:
        x_old = x
        x = a * np.cos(x) + b
    return x


def while_in_for(x):
    s = 0.0
    for i in range(x.shape[0]):
        v = x[i]
        while v < 4.0:
            v = v * 1.7 + 0.1
        s += v
    return s


def while_array_state(x):
    y = x.copy()
    while np.sum(y * y) > 0.5:
        y = y * 0.9
    return np.sum(y)


# ---------------------------------------------------------------------- simulations
def damped_spring(k, c, x0):
    x = x0
    v = 0.0
    dt = 0.01
    for i in range(1000):
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    return x


def rk4(theta, y0):
    # y' = -theta[0] * y + theta[1] * sin(t)
    y = y0
    t = 0.0
    h = 0.05
    for step in range(40):
        k1 = -theta[0] * y + theta[1] * np.sin(t)
        k2 = -theta[0] * (y + 0.5 * h * k1) + theta[1] * np.sin(t + 0.5 * h)
        k3 = -theta[0] * (y + 0.5 * h * k2) + theta[1] * np.sin(t + 0.5 * h)
        k4 = -theta[0] * (y + h * k3) + theta[1] * np.sin(t + h)
        y = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t = t + h
    return y


def rnn(W, U, h0):
    h = h0
    for t in range(U.shape[0]):
        h = np.tanh(W @ h + U[t])
    return np.sum(h * h)


def rnn_all_states(W, U):
    n, d = U.shape
    H = np.zeros((n + 1, d))
    for t in range(n):
        H[t + 1] = np.tanh(W @ H[t] + U[t])
    return np.sum(H[1:] ** 2)


# ---------------------------------------------------------------------- loop-carried values
def swaps_fibonacci(a, b):
    for i in range(8):
        a, b = b, a + b * 0.5
    return a * b


def accumulator_dot(x, w):
    acc = 0.0
    for i in range(x.shape[0]):
        acc += x[i] * w[i]
    return acc * acc


def loop_carried_array(x, w):
    h = x.copy()
    for i in range(4):
        h = h * w + np.sin(h)
    return np.sum(h)


def shrinking_array(x):
    h = x * 1.0
    for i in range(3):
        h = h[1:] * 2.0 + h[:-1]   # a loop-carried array whose shape changes
    return np.sum(h * h)


def live_out_of_loop(x):
    y = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            y = x[i] * 2.0   # only the last assignment reaches the result
    return y * y


def product_accumulator(x):
    p = 1.0
    for i in range(x.shape[0]):
        p *= x[i] + 1.0
    return p


# ---------------------------------------------------------------------- in-place writes
def matrix_fill(x):
    n = x.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = x[i] * x[j] + np.sin(x[j])
    return np.sum(out * out)


def empty_then_fill(x):
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.exp(x[i]) * i
    return np.sum(out * x)


def slice_assign_prefix(x):
    n = x.shape[0]
    y = np.zeros(n + 3)
    y[:n] = x
    y[n:] = 2.0 * x[:3]
    return np.sum(y * y * np.arange(n + 3))


def slice_assign_column(A, v):
    B = A.copy()
    B[1:, 0] = v[1:] * 3.0
    return np.sum(B * B)


def accumulate_2d(A, x):
    out = np.zeros((A.shape[0], A.shape[1]))
    for k in range(3):
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                out[i, j] += A[i, j] * x[j] ** (k + 1)
    return np.sum(out * out)


def overwrite_needed(x):
    y = x.copy()
    s = 0.0
    for i in range(y.shape[0]):
        y[i] = np.sin(y[i]) * y[i]   # the old y[i] is needed by the gradient
        s += y[i] * y[i]
        y[i] = y[i] * 3.0
    return s + np.sum(y * y)


def recurrence_in_place(x):
    out = x.copy()
    for i in range(1, out.shape[0]):
        out[i] = out[i - 1] * out[i] + 0.1
    return np.sum(out)


def bubble_sort_sum(x):
    a = x.copy()
    n = a.shape[0]
    for i in range(n):
        for j in range(n - 1 - i):
            if a[j] > a[j + 1]:
                tmp = a[j]
                a[j] = a[j + 1]
                a[j + 1] = tmp
    w = np.arange(n) + 1.0
    return np.sum(a * w)


def row_write(X, w):
    Y = np.zeros((X.shape[0], X.shape[1]))
    for i in range(X.shape[0]):
        Y[i, :] = X[i] * w
        Y[i, :] += np.tanh(Y[i])
    return np.sum(Y * Y)


def mutate_argument(x):
    x[0] = 2.0 * x[1]
    x[2] += x[0] * x[3]
    return np.sum(x * x)


def prefix_sums(x):
    c = np.zeros(x.shape[0])
    c[0] = x[0]
    for i in range(1, x.shape[0]):
        c[i] = c[i - 1] + x[i]
    return np.sum(c * c)


# ---------------------------------------------------------------------- the table
CASES = [
    (if_scalar, (1.5, 0.5)), (if_scalar, (0.5, 1.5)),
    (if_elif_else, (2.5,)), (if_elif_else, (0.7,)), (if_elif_else, (-0.8,)),
    (if_on_sum, (W5,)), (if_on_sum, (-X5,)),
    (if_on_item_in_loop, (MIXED,)),
    (conditional_expression, (MIXED, 1.7)),
    (and_or_not, (MIXED * 1.2, 0.8)),
    (short_circuit_index, (np.array([0.5, 0.9, 0.3, 0.01, 0.7]), 5)),
    (short_circuit_index, (X5, 5)),
    (tuple_from_branch, (1.0, 2.0)), (tuple_from_branch, (3.0, 2.0)),
    (branch_writes_array, (MIXED,)),
    (early_return_branch, (2.0,)), (early_return_branch, (0.5,)), (early_return_branch, (-1.0,)),
    (early_return_loop, (X5,)), (early_return_loop, (X5 * 0.3,)),
    (early_return_nested, (M34,)), (early_return_nested, (M34 * 0.3,)),
    (early_return_while, (0.7,)),
    (early_return_array, (X5,)),
    (early_return_on_none, (X5, None)), (early_return_on_none, (X5, 2.0)),
    (early_return_on_none, (X5 * 0.1, 2.0)),
    (while_else, (MIXED,)), (while_else, (X5,)),
    (uses_tuple_from_loop, (MIXED,)), (uses_tuple_from_loop, (X5,)),
    (range_one_arg, (X5, 4)), (range_two_args, (X5, 2)), (range_three_args, (X5,)),
    (range_negative_step, (X5,)), (range_runtime_step, (X5, 2)), (reversed_range_horner, (W5, 0.7)),
    (nested_loops, (M34, W5[:4])), (triangular_loops, (W5,)),
    (for_row_in, (M34, W5[:4])), (for_enumerate, (W5,)), (for_zip, (X5, W5)),
    (loop_index_as_float, (X5,)),
    (break_for, (MIXED, 6)), (continue_for, (MIXED,)), (break_inner_loop, (M34,)),
    (break_while, (3.0,)), (continue_while, (MIXED,)), (break_for_row, (M34 * 0.8,)),
    (for_else, (X5, 1.5)), (for_else, (X5, 100.0)),
    (break_enumerate, (np.array([0.3, 0.5, -0.8, 0.4]),)),
    (break_zip, (np.array([0.3, 0.5, 0.8, 0.4]), np.array([0.3, 0.5, 0.9, 0.4]))),
    (reversed_continue_break, (np.array([0.3, 0.5, -0.8, 0.9, 0.7]),)),
    (newton_sqrt, (2.0,)), (fixed_point, (0.5, 0.3)), (while_in_for, (X5,)),
    (while_array_state, (W5,)),
    (damped_spring, (2.0, 0.5, 1.0)), (rk4, (np.array([0.8, 0.5]), 1.2)),
    (rnn, (W33, SEQ, np.array([0.1, -0.2, 0.3]))), (rnn_all_states, (W33, SEQ)),
    (swaps_fibonacci, (0.3, 0.7)), (accumulator_dot, (X5, W5)), (loop_carried_array, (W5, X5)),
    (product_accumulator, (W5,)), (shrinking_array, (W5,)),
    (live_out_of_loop, (np.array([0.7, 0.2, 0.9, 0.1]),)),
    (matrix_fill, (W5,)), (empty_then_fill, (W5,)), (slice_assign_prefix, (W5,)),
    (slice_assign_column, (M34, W5[:3])), (accumulate_2d, (M34, X5[:4])),
    (overwrite_needed, (W5,)), (recurrence_in_place, (X5,)), (bubble_sort_sum, (MIXED,)),
    (row_write, (M34, W5[:4])), (prefix_sums, (W5,)),
]


def _id(case):
    fn, args = case
    return fn.__name__


@pytest.mark.parametrize("fn,args", CASES, ids=[_id(c) for c in CASES])
def test_python_backend(fn, args):
    check_against_python(fn, args)


NUMBA_CASES = [if_elif_else, early_return_loop, break_inner_loop, continue_while, fixed_point,
               damped_spring, rk4, rnn, matrix_fill, slice_assign_column, overwrite_needed,
               bubble_sort_sum, for_else]


@pytest.mark.parametrize("fn,args", [c for c in CASES if c[0] in NUMBA_CASES],
                         ids=[_id(c) for c in CASES if c[0] in NUMBA_CASES])
def test_numba_backend(fn, args):
    check_against_python(fn, args, backend="numba")


def test_mutating_an_argument():
    x = W5.copy()
    compiled = adcompile.compile(mutate_argument, backend="python")
    expected_x = x.copy()
    mutate_argument(expected_x)
    compiled(x)
    np.testing.assert_array_equal(x, expected_x)  # the compiled function mutates, as Python does
    x = W5.copy()
    adcompile.grad(compiled)(x)
    np.testing.assert_array_equal(x, W5)          # its gradient leaves the argument unchanged
    adcompile.gradcheck(compiled, [W5.copy()])


def test_value_and_grad_returns_the_value_of_an_overwritten_result():
    compiled = adcompile.compile(damped_spring, backend="python")
    value, grads = adcompile.value_and_grad(compiled, wrt=(0, 1, 2))(2.0, 0.5, 1.0)
    assert value == pytest.approx(damped_spring(2.0, 0.5, 1.0), rel=1e-12)


def _array_result(x):
    out = np.zeros(3)
    out[0] = x[0]
    y = out * out
    out[1] = 3.0 * x[1]
    return y, out


def test_vjp_returns_arrays_written_after_use():
    compiled = adcompile.compile(_array_result, backend="python")
    x = X5[:3].copy()
    (y, out), pullback = adcompile.vjp(compiled, x)
    ey, eout = _array_result(x)
    np.testing.assert_allclose(y, ey)
    np.testing.assert_allclose(out, eout)
    (gx,) = pullback(np.ones(3), np.ones(3))
    total = adcompile.compile(_array_result_total, backend="python")
    adcompile.gradcheck(total, [x])
    np.testing.assert_allclose(gx, adcompile.grad(total)(x))


def _array_result_total(x):
    y, out = _array_result(x)
    return np.sum(y) + np.sum(out)


def inactive_loop(x, n):
    grid = np.zeros(n)
    c = 0.0
    for i in range(n):
        grid[i] = i * 2.0
        c = c + np.sqrt(grid[i])
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sin(x[i])
    return s * c + np.sum(grid)


def test_loops_over_inactive_values_are_not_taped():
    compiled = adcompile.compile(inactive_loop, backend="python")
    check_against_python(inactive_loop, (X5, 4), wrt=0)
    source = adcompile.source(adcompile.grad(compiled), X5, 4)
    backward = source.split("# backward")[1]
    assert "tape_c" not in source and "tape_grid" not in source
    assert "grid[i]" not in backward and "sqrt" not in backward
    assert backward.count("for i in range(") == 1   # only the active loop is reversed


def test_generated_loop_code_is_readable():
    source = adcompile.source(adcompile.grad(adcompile.compile(damped_spring, backend="python"),
                                             wrt=(0, 1, 2)), 2.0, 0.5, 1.0)
    forward = source.split("# forward")[1].split("# backward")[0]
    assert "for i in range(1000):" in forward        # the user's loop stays a loop
    assert "for i in range(999, -1, -1):" in source  # reversed with a known trip count
    assert "x_saved" not in source                   # nothing saved before a first assignment
    prologue = source.split("# forward")[0]
    assert not re.search(r"^\s+(x|v) = ", prologue, re.M)   # no placeholder for them


def test_for_with_break_stops_on_the_same_iteration():
    def first_negative_sum(x):
        s = 0.0
        for i in range(x.shape[0]):
            if x[i] < 0:
                break
            s += x[i]
        return s, i
    compiled = adcompile.compile(first_negative_sum, backend="python")
    assert compiled(MIXED) == first_negative_sum(MIXED)
    assert compiled(X5) == first_negative_sum(X5)


@pytest.mark.parametrize("fn,args", CASES, ids=[_id(c) for c in CASES])
def test_value_and_grad_agree_with_python_and_grad(fn, args):
    """The value returned with the gradient is the function's value (not one the backward
    sweep restored), and the gradient equals grad's."""
    compiled = adcompile.compile(fn, backend="python")
    wrt = tuple(k for k, a in enumerate(args) if isinstance(a, float)
                or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))
    fresh = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    value, grads = adcompile.value_and_grad(compiled, wrt=wrt)(*fresh)
    np.testing.assert_allclose(value, fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]),
                               rtol=1e-12)
    for g, h in zip(grads, adcompile.grad(compiled, wrt=wrt)(*fresh)):
        np.testing.assert_allclose(g, h, rtol=1e-12)


def _rescaled_in_a_loop(x, n):
    w = x.copy()
    for _ in range(n):
        w -= x / (1.0 + w[::-1] ** 2)
    return w


@pytest.mark.parametrize("n", [0, 2])
def test_numba_pullback_of_a_loop_that_may_not_run(n):
    """The forward half returns the loop's tapes; empty ones (no trip) go back into numba."""
    compiled = adcompile.compile(_rescaled_in_a_loop)  # numba
    x = X5[:4].copy()
    out, pullback = adcompile.vjp(compiled, x, n)
    np.testing.assert_allclose(out, _rescaled_in_a_loop(x, n))
    cotangent = np.array([1.0, -2.0, 0.5, 3.0])
    (gx, _) = pullback(cotangent)
    total = adcompile.compile(_weighted_rescaled, backend="python")
    adcompile.gradcheck(total, [x, n, cotangent], wrt=0)
    np.testing.assert_allclose(gx, adcompile.grad(total)(x, n, cotangent), rtol=1e-12)


def _weighted_rescaled(x, n, weights):
    return np.sum(_rescaled_in_a_loop(x, n) * weights)
