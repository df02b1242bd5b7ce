"""The frontend keeps Python's and numpy's semantics (issue 8, items 4, 6 and 7).

Each program here once computed a different forward value than Python, crashed plain
``compile``, or was rejected though valid. Every accepted program is compared with running
it as Python (value, and the arguments it mutates) and its gradient with central finite
differences; every rejection must be a located ``AdCompileError`` with the words that say why.

- in-place augmented assignment of arrays (``w *= x`` writes into w's memory, so aliases and
  views see it, and so does the caller's array for a parameter);
- a for loop evaluates its iterable and its range arguments once, on entry;
- chained index writes (``w[1][0] = v``) write into the array at the root of the chain;
- inlined helpers and multiple targets keep every temporary they share defined;
- early returns inside while loops; tuple unpacking makes fresh arrays; a view rebound
  before it is read again does not block a write into its base.
"""
import inspect
import os
import re

import numpy as np
import pytest

import adcompile
from adcompile.errors import TypeMismatchError, UnsupportedSyntaxError
from cf_helpers import check_against_python

THIS_FILE = os.path.basename(__file__)
X3 = np.array([1.0, 2.0, 3.0])
X_SPREAD = np.array([1.0, 10.0, 100.0])
Y3 = np.array([0.5, -0.2, 0.3])
SMALL = np.array([0.3, 0.7, 1.1])
A43 = np.arange(12.0).reshape(4, 3) * 0.1
M23 = np.array([[0.2, -0.4, 0.9], [1.1, 0.3, -0.6]])


def _fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def assert_rejected(fn, args, text, words, cls=adcompile.AdCompileError, derivative=True, where=None):
    """``fn`` (its gradient if ``derivative``) raises ``cls`` located at the line ``text`` of
    this file (in the function ``where``, by default ``fn``), with every word of ``words`` in
    the message."""
    compiled = adcompile.compile(fn, backend="python")
    with pytest.raises(cls) as info:
        if derivative:
            adcompile.grad(compiled)(*_fresh(args))
        else:
            compiled(*_fresh(args))
    message = str(info.value)
    lines, first = inspect.getsourcelines(where or fn)
    numbers = [first + k for k, line in enumerate(lines) if line.strip() == text]
    assert numbers, f"{text!r} not in {(where or fn).__name__}"
    assert THIS_FILE in message and re.search(rf"line {numbers[0]}\b", message), message
    assert text in message, message
    for word in words:
        assert word in message, f"{word!r} not in:\n{message}"


# ---------------------------------------------------------------------- item 4a: in-place ops
def inplace_seen_by_alias(x):
    w = x * 2.0
    t = w
    w *= x
    return np.sum(t)


def inplace_seen_by_view(x):
    w = x * 2.0
    v = w[1:]
    w += 1.0
    return np.sum(v * v)


def inplace_no_alias(x):
    w = x * 2.0
    w *= x
    w -= np.max(w)
    w /= x + 1.0
    return np.sum(w * w)


def inplace_operand_first(x):
    w = 3.0 - x
    w **= 2.0
    w *= w
    return np.sum(w)


def inplace_accumulate_in_loop(x):
    h = np.zeros(3)
    for i in range(3):
        h += x * x[i]
        h *= 0.5
    return np.sum(h * h)


def inplace_on_parameter(x):
    x *= 2.0
    return np.sum(x * x)


def inplace_row_of_copy(A):
    S = A.copy()
    for i in range(S.shape[0]):
        S[i] *= A[i, 0]
    return np.sum(S * S)


def inplace_float32_into_float32(x):
    w = x * np.float32(2.0)
    w *= x
    return np.sum(w)


def _normalize(v):
    v /= np.sum(v)
    return v


def inplace_in_helper_on_temporary(x):
    p = _normalize(np.exp(x))
    return np.sum(p * x)


def _make(x):
    w = np.exp(x)
    w[0] = 1.0
    return w


def inplace_on_helper_result(x):
    y = _make(x)
    y *= x
    y[1] = 2.0
    return np.sum(y)


def inplace_in_helper_on_caller_array(x):
    q = np.exp(x)
    p = _normalize(q)
    return np.sum(p * x) + np.sum(q)


def inplace_broadcast_grows_shape(x):
    w = x * 2.0
    M = np.ones((2, 3))
    w += M
    return np.sum(w)


def inplace_float_into_int(x):
    k = np.arange(3)
    k += x
    return np.sum(k)


INPLACE_CASES = [inplace_no_alias, inplace_operand_first, inplace_accumulate_in_loop, inplace_on_parameter,
                 inplace_in_helper_on_temporary, inplace_on_helper_result]


@pytest.mark.parametrize("fn", INPLACE_CASES, ids=lambda f: f.__name__)
def test_inplace_update_matches_python(fn):
    check_against_python(fn, [SMALL])


def test_inplace_update_of_rows():
    check_against_python(inplace_row_of_copy, [A43 + 0.5])


def test_inplace_update_float32():
    x = SMALL.astype(np.float32)
    compiled = check_against_python(inplace_float32_into_float32, [x])
    assert compiled(x.copy()).dtype == np.float32


@pytest.mark.parametrize("fn, x, expected", [(inplace_seen_by_alias, X3, 28.0),
                                             (inplace_seen_by_view, X3, 74.0)],
                         ids=["alias", "view"])
def test_inplace_update_is_seen_through_shared_memory(fn, x, expected):
    """The forward value is Python's (numpy writes in place); the gradient, which would need
    to follow the write through shared memory, is a located rejection."""
    assert fn(x.copy()) == expected
    assert adcompile.compile(fn, backend="python")(x.copy()) == expected
    text = "w *= x" if fn is inplace_seen_by_alias else "w += 1.0"
    assert_rejected(fn, [x], text, ["in-place write into 'w'", "shares its memory"])


def test_inplace_update_of_parameter_writes_into_callers_array():
    for backend in ("python", "numba"):
        x, expected_x = SMALL.copy(), SMALL.copy()
        expected = inplace_on_parameter(expected_x)
        assert adcompile.compile(inplace_on_parameter, backend=backend)(x) == expected
        np.testing.assert_array_equal(x, expected_x)


def test_inplace_update_in_helper_reaches_callers_array():
    compiled = adcompile.compile(inplace_in_helper_on_caller_array, backend="python")
    assert compiled(SMALL.copy()) == inplace_in_helper_on_caller_array(SMALL.copy())
    assert_rejected(inplace_in_helper_on_caller_array, [SMALL], "v /= np.sum(v)", ["may share memory", "'q'"],
                    where=_normalize)


def test_inplace_update_rejects_what_numpy_rejects():
    assert_rejected(inplace_broadcast_grows_shape, [X3], "w += M", ["2-d result", "1-d array"],
                    TypeMismatchError, derivative=False)
    assert_rejected(inplace_float_into_int, [X3], "k += x", ["float64", "int64", "same_kind"],
                    TypeMismatchError, derivative=False)


def test_scalar_augmented_assignment_stays_a_rebinding():
    def f(x):
        s = x[0]
        t = s
        s += 1.0
        return s * t
    check_against_python(f, [X3])


# ---------------------------------------------------------------------- item 4b: loop entry
def iterate_rebound_array(x):
    s = 0.0
    for e in x:
        s = s + e
        x = 2.0 * x
    return s


def enumerate_rebound_array(x):
    s = 0.0
    for i, e in enumerate(x):
        s = s + e * i
        x = x * 2.0
    return s


def zip_rebound_arrays(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s = s + a * b
        y = y + x
        x = np.sin(x)
    return s


def rows_of_rebound_matrix(X):
    s = 0.0
    for row in X:
        s = s + np.sum(row * row)
        X = X * 0.5
    return s


def range_of_len_rebound(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i]
        x = x[::-1] * 1.5
    return s


def range_stop_rebound(x):
    n = 3
    s = 0.0
    for i in range(n):
        s = s + x[i] * n
        n = n - 1
    return s


def range_stop_rebound_with_break(x):
    n = 3
    start = 0
    s = 0.0
    for i in range(start, n):
        if s > 1000.0:
            break
        s = s + x[i] * n
        n = n - 1
        start = start + 5
    return s


def rebound_in_inner_loop(x):
    s = 0.0
    for k in range(2):
        for e in x:
            s = s + e * x[0]
            x = x * 1.5
    return s


LOOP_ENTRY_CASES = [(iterate_rebound_array, [X_SPREAD]), (enumerate_rebound_array, [X_SPREAD]),
                    (zip_rebound_arrays, [SMALL, Y3]), (rows_of_rebound_matrix, [A43]),
                    (range_of_len_rebound, [X_SPREAD]), (range_stop_rebound, [SMALL]),
                    (range_stop_rebound_with_break, [SMALL]), (rebound_in_inner_loop, [SMALL])]


@pytest.mark.parametrize("fn, args", LOOP_ENTRY_CASES, ids=[c[0].__name__ for c in LOOP_ENTRY_CASES])
def test_loop_evaluates_iterable_once(fn, args):
    check_against_python(fn, args)


def test_issue_example_iterates_the_original_array():
    assert adcompile.compile(iterate_rebound_array, backend="python")(X_SPREAD.copy()) == 111.0


# ---------------------------------------------------------------------- item 6a: chained writes
def _grid(x):
    return x[0] * np.arange(12.0).reshape(3, 4)


def chained_element_write(x):
    w = _grid(x)
    w[1][0] = x[1]
    return np.sum(w * w)


def chained_column_then_slice(x):
    w = _grid(x)
    w[:, 2][1:] = np.sin(x[:2])
    return np.sum(w * w)


def chained_rows_then_column(x):
    w = _grid(x)
    w[1:3][:, 0] = x[:2] * 2.0
    return np.sum(w * w)


def chained_augmented_write(x):
    w = _grid(x)
    w[2][-1] += x[1] * x[0]
    return np.sum(w * w)


def chained_write_with_ellipsis(x):
    w = _grid(x)
    w[...][1][2] = x[2]
    return np.sum(w * w)


def chained_write_in_loop(x):
    w = _grid(x)
    for i in range(3):
        w[i][i] = x[i] * x[i]
    return np.sum(w * w)


def chained_after_integer_array(x):
    w = _grid(x)
    idx = np.array([0, 2])
    w[idx][0] = x[1]
    return np.sum(w * w)


def chained_after_bounded_slice(x):
    w = _grid(x)
    w[1:][0] = x[1]
    return np.sum(w * w)


def write_into_transposed_view(x):
    w = _grid(x)
    w.T[0] = x
    return np.sum(w * w)


CHAINED_CASES = [chained_element_write, chained_column_then_slice, chained_rows_then_column,
                 chained_augmented_write, chained_write_with_ellipsis, chained_write_in_loop]


@pytest.mark.parametrize("fn", CHAINED_CASES, ids=lambda f: f.__name__)
def test_chained_index_write_goes_into_the_root_array(fn):
    check_against_python(fn, [SMALL])


def test_chained_index_write_that_cannot_be_merged_is_rejected():
    assert_rejected(chained_after_integer_array, [SMALL], "w[idx][0] = x[1]",
                    ["chained index", "integer array", "copy"], UnsupportedSyntaxError, derivative=False)
    assert_rejected(chained_after_bounded_slice, [SMALL], "w[1:][0] = x[1]",
                    ["chained index", "w[i, j]"], UnsupportedSyntaxError, derivative=False)


def test_write_into_a_view_expression_follows_numpy():
    compiled = adcompile.compile(write_into_transposed_view, backend="python")
    assert compiled(SMALL.copy()) == write_into_transposed_view(SMALL.copy())
    assert_rejected(write_into_transposed_view, [SMALL], "w.T[0] = x", ["in-place write into 'w_T'", "'w'"])


# ---------------------------------------------------------------------- item 6b: shared temporaries
def _keep(u):
    t = u
    return u


def helper_rebinds_its_argument(x):
    return _keep(np.sin(x[1])) * x[0]


def helper_array_argument(x):
    return np.sum(_keep(np.sin(x)) * x)


def multiple_targets(x):
    a = b = np.sin(x)
    return np.sum(a * b * x)


def tuple_item_named(x):
    p = (np.sin(x), 2.0)
    a = p[0]
    return np.sum(a * p[0]) * p[1]


SHARED_TEMPORARY_CASES = [helper_rebinds_its_argument, helper_array_argument, multiple_targets,
                          tuple_item_named]


@pytest.mark.parametrize("fn", SHARED_TEMPORARY_CASES, ids=lambda f: f.__name__)
def test_shared_temporaries_stay_defined(fn):
    check_against_python(fn, [SMALL])


def test_multiple_targets_share_memory_as_in_numpy():
    def f(x):
        a = b = np.sin(x)
        a[0] = 2.0
        return np.sum(b)
    assert adcompile.compile(f, backend="python")(SMALL.copy()) == f(SMALL.copy())


# ---------------------------------------------------------------------- item 6c: early returns
def return_inside_while(a):
    s = 0.0
    while s < 0.45:
        if s > 0.1:
            return s * a
        s += 0.1
    return a * 2.0


def return_inside_while_from_array(x):
    s = 0.0
    while s < 0.45:
        if s > x[1]:
            return s * x[0]
        s += 0.1
    return x[0] * 2.0


def return_array_inside_while(x):
    s = 0.0
    while s < 0.45:
        if s > np.sum(x):
            return s * x
        s += 0.1
    return x * 2.0


def test_early_return_inside_while():
    check_against_python(return_inside_while, [1.3])
    check_against_python(return_inside_while_from_array, [np.array([1.3, 0.15], dtype=np.float32)])
    check_against_python(return_inside_while_from_array, [np.array([1.3, 0.55])])
    compiled = adcompile.compile(return_array_inside_while, backend="python")
    for x in (SMALL * 0.01, SMALL):
        np.testing.assert_allclose(compiled(x.copy()), return_array_inside_while(x.copy()))


# ---------------------------------------------------------------------- item 7a: tuple unpacking
def unpacked_fresh_arrays(x):
    u, v = np.sin(x), np.cos(x)
    v[0] = 0.5
    return np.sum(u * v)


def unpacked_in_loop(x):
    s = 0.0
    for i in range(3):
        u, v = np.sin(x * i), np.cos(x) * s
        u[i] = v[i] * 2.0
        s = s + np.sum(u * v)
    return s


def unpacked_from_helper(x):
    p, q = _pair(x)
    q[1] = p[0]
    return np.sum(p * q)


def _pair(x):
    return np.exp(x), x * x


def unpacked_alias_of_argument(x):
    u, v = x, np.cos(x)
    u[0] = 0.5
    return np.sum(u * v)


@pytest.mark.parametrize("fn", [unpacked_fresh_arrays, unpacked_in_loop, unpacked_from_helper],
                         ids=lambda f: f.__name__)
def test_unpacked_arrays_are_fresh(fn):
    check_against_python(fn, [SMALL])


def test_write_through_unpacked_alias_of_argument():
    """u is x: the write changes the argument (the compiled forward writes into the caller's
    array, as Python does; derived functions work on a copy), and nothing reads x afterwards,
    so the gradient follows."""
    check_against_python(unpacked_alias_of_argument, [SMALL], check_args_unchanged=True)


def unpacked_alias_read_after_write(x):
    u, v = x, np.cos(x)
    u[0] = 0.5
    return np.sum(u * v) + np.sum(x)


def test_unpacked_alias_read_after_the_write_is_rejected():
    assert_rejected(unpacked_alias_read_after_write, [SMALL], "u[0] = 0.5", ["in-place write into 'u'", "'x'"])


# ---------------------------------------------------------------------- item 7b: rebound views
def view_rebound_each_iteration(A):
    S = A.copy()
    x = S[0]
    for i in range(3):
        x = S[i] * 2.0
        S[i] = x
        x = S[0]
    return np.sum(S) + np.sum(x)


def view_rebound_before_read(A):
    S = A.copy()
    x = S[0]
    s = 0.0
    for i in range(3):
        x = S[i + 1] * 1.5
        S[i] = np.sin(x)
        s = s + np.sum(x * x)
        x = S[i]
    return s + np.sum(S * S)


def view_rebound_after_write(A):
    S = A.copy()
    v = S[0]
    S[0] = S[1] * 2.0
    v = S[2] * 3.0
    return np.sum(v) + np.sum(S * S)


def view_read_after_write(A):
    S = A.copy()
    x = S[0]
    s = 0.0
    for i in range(3):
        S[i] = S[i] * 2.0
        s = s + np.sum(x)
    return s


def view_rebound_in_branch_only(A):
    S = A.copy()
    x = S[0]
    s = 0.0
    for i in range(3):
        if A[i, 0] > 100.0:
            x = S[i] * 2.0
        S[i] = S[i] * 2.0
        s = s + np.sum(x)
    return s


@pytest.mark.parametrize("fn", [view_rebound_each_iteration, view_rebound_before_read, view_rebound_after_write],
                         ids=lambda f: f.__name__)
def test_view_rebound_before_it_is_read_is_accepted(fn):
    check_against_python(fn, [A43])


@pytest.mark.parametrize("fn", [view_read_after_write, view_rebound_in_branch_only], ids=lambda f: f.__name__)
def test_view_read_after_write_is_rejected(fn):
    assert_rejected(fn, [A43], "S[i] = S[i] * 2.0", ["in-place write into 'S'", "'x'", "used after the write"])


# ---------------------------------------------------------------------- numba sample
NUMBA_CASES = [(inplace_accumulate_in_loop, [SMALL]), (iterate_rebound_array, [X_SPREAD]),
               (chained_element_write, [SMALL]), (helper_rebinds_its_argument, [SMALL]),
               (return_inside_while, [1.3]), (unpacked_fresh_arrays, [SMALL])]


@pytest.mark.parametrize("fn, args", NUMBA_CASES, ids=[c[0].__name__ for c in NUMBA_CASES])
def test_numba_backend(fn, args):
    check_against_python(fn, args, backend="numba")


def test_numba_forward_follows_shared_memory():
    compiled = adcompile.compile(inplace_seen_by_alias, backend="numba")
    assert compiled(X3.copy()) == 28.0
