"""Calls from compiled code to other functions (inlined): plain helpers, @adcompile.compile
functions, helpers from another module, keyword and default arguments, tuples returned, call
chains, helpers with loops and early returns, helpers writing into their arguments; and the
errors for recursion and for in-place writes through shared memory."""
import numpy as np
import pytest

import adcompile
import cf_helpers
from cf_helpers import (affine_pair, check_against_python, clipped, compiled_norm2, first_above,
                        level2, softplus, weighted_sum, write_square)
from adcompile.errors import AdCompileError

RNG = np.random.default_rng(7)
X4 = RNG.uniform(0.2, 1.0, 4)
W4 = RNG.uniform(-1.0, 1.0, 4)
M23 = RNG.uniform(-1.0, 1.0, (2, 3))


# ---------------------------------------------------------------------- local helpers
def square(x):
    return x * x


def poly(x, a=1.0, b=0.5, c=-0.25):
    return a * x * x + b * x + c


def sum_and_diff(a, b):
    return a + b, a - b


def level_c(x):
    return np.sin(x) * 2.0


def level_b(x, scale=1.0):
    return level_c(x) * scale + x


def level_a(x, y):
    return level_b(x, scale=y) * level_b(y)


def cumulative(x):
    out = np.zeros(x.shape[0])
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        out[i] = s
    return out


def relu_or_scale(v, k):
    if v > 0:
        return v * k
    return 0.01 * v


def rebinds_parameter(x):
    x = x * 2.0
    x = x + 1.0
    return x


def loop_until(v, limit):
    while v < limit:
        v = v * 1.5
        if v > 3.0 * limit:
            break
    return v


def scale_in_place(out, k):
    for i in range(out.shape[0]):
        out[i] = out[i] * k


# ---------------------------------------------------------------------- callers
def call_plain(x):
    return square(x) + square(np.sin(x))


def call_defaults(x):
    return poly(x) + poly(x, 2.0) + poly(x, c=1.0) + poly(x, b=-1.0, a=0.5)


def call_keywords_out_of_order(x, y):
    return poly(c=y, x=x, a=y * y)


def call_tuple_return(a, b):
    s, d = sum_and_diff(a * a, b)
    return s * d


def call_tuple_indexed(a, b):
    pair = sum_and_diff(a, np.cos(b))
    return pair[0] * pair[1] + pair[0]


def call_chain(x, y):
    return np.sum(level_a(x, y))


def call_array_helper(x):
    c = cumulative(x)
    return np.sum(c * c)


def call_in_loop(x, k):
    s = 0.0
    for i in range(x.shape[0]):
        s += relu_or_scale(x[i] - 0.5, k)
    return s


def call_rebinding_helper(x):
    y = rebinds_parameter(x)
    return y * x


def call_helper_with_break(a):
    return loop_until(a, 2.0) + loop_until(a * 0.5, 1.0)


def call_helper_writing_argument(x, k):
    out = x * 1.0
    scale_in_place(out, k)
    return np.sum(out * out)


def call_module_helpers(x, k):
    return softplus(x) * k + cf_helpers.scaled_square(x) + cf_helpers.scaled_square(x, scale=k)


def call_module_tuple(x, a):
    p, q = affine_pair(x, a)
    r, s = affine_pair(x, a, b=a * a)
    return p * q + r * s


def call_module_branching(x):
    return clipped(x, -0.5, 0.5) * x + clipped(x * 3.0, -0.5, 0.5)


def call_module_loop(x, w):
    return weighted_sum(x, w) * weighted_sum(w, w)


def call_module_chain(x, k):
    return level2(x, k) + level2(k, x)


def call_module_early_return(x):
    n = first_above(x, 0.6)
    s = 0.0
    for i in range(n):
        s += x[i] * x[i]
    return s


def call_compiled(x):
    return compiled_norm2(x) + compiled_norm2(np.sin(x))


def call_module_writer(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        write_square(out, i, x[i] + 1.0)
    return np.sum(out * x)


def call_same_helper_two_types(x, a):
    return np.sum(square(x)) + square(a)


def first_match(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            return x[i] * t, i
    return t, -1


def call_in_loop_with_jumps(X, t):
    s = 0.0
    for r in range(X.shape[0]):
        v, k = first_match(X[r], t)
        if k < 0:
            continue
        s += v * k
        if s > 3.0:
            break
    return s


def put_square_if_positive(out, i, v):
    if v < 0:
        return
    out[i] = v * v


def call_procedure_with_bare_return(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        put_square_if_positive(out, i, x[i])
    return np.sum(out * x)


def fill_until_negative(out, x):
    for i in range(x.shape[0]):
        if x[i] < 0:
            break
        out[i] = x[i] * x[i]


def call_procedure_with_break(x):
    out = np.zeros(x.shape[0])
    fill_until_negative(out, x)
    return np.sum(out * x)


CASES = [
    (call_procedure_with_break, (np.array([0.3, 0.5, -0.8, 0.4]),)),
    (call_procedure_with_bare_return, (np.array([0.3, -0.5, 0.8]),)),
    (call_in_loop_with_jumps, (RNG.uniform(-1.0, 1.0, (5, 4)), 0.5)),
    (call_in_loop_with_jumps, (RNG.uniform(0.0, 2.0, (5, 4)), 0.5)),
    (call_plain, (0.7,)), (call_defaults, (0.6,)), (call_keywords_out_of_order, (0.4, 1.3)),
    (call_tuple_return, (0.8, 0.3)), (call_tuple_indexed, (0.8, 0.3)),
    (call_chain, (X4, 0.7)), (call_array_helper, (W4,)), (call_in_loop, (X4, 1.5)),
    (call_rebinding_helper, (0.9,)), (call_helper_with_break, (0.7,)), (call_helper_with_break, (1.9,)),
    (call_helper_writing_argument, (W4, 1.3)),
    (call_module_helpers, (0.3, 1.2)), (call_module_tuple, (0.4, 1.1)),
    (call_module_branching, (0.3,)), (call_module_branching, (-0.9,)), (call_module_branching, (0.8,)),
    (call_module_loop, (X4, W4)), (call_module_chain, (0.5, 0.8)),
    (call_module_early_return, (np.array([0.1, 0.4, 0.9, 0.2]),)),
    (call_compiled, (W4,)), (call_module_writer, (W4,)), (call_same_helper_two_types, (W4, 0.5)),
]


@pytest.mark.parametrize("fn,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_python_backend(fn, args):
    check_against_python(fn, args)


NUMBA_CASES = [call_chain, call_module_early_return, call_helper_writing_argument]


@pytest.mark.parametrize("fn,args", [c for c in CASES if c[0] in NUMBA_CASES],
                         ids=[c[0].__name__ for c in CASES if c[0] in NUMBA_CASES])
def test_numba_backend(fn, args):
    check_against_python(fn, args, backend="numba")


def test_rebinding_helper_leaves_the_callers_variable_alone():
    compiled = adcompile.compile(call_rebinding_helper, backend="python")
    assert compiled(0.9) == pytest.approx(call_rebinding_helper(0.9))


# ---------------------------------------------------------------------- errors
def factorial(n):
    return 1.0 if n <= 1 else n * factorial(n - 1)


def is_even(n):
    return True if n == 0 else is_odd(n - 1)


def is_odd(n):
    return False if n == 0 else is_even(n - 1)


def calls_factorial(x):
    return x * factorial(3.0)


def calls_mutual(x):
    return x if is_even(4) else -x


def test_direct_recursion_is_an_error():
    with pytest.raises(AdCompileError, match=r"recursive call \(factorial -> factorial\)"):
        adcompile.compile(calls_factorial, backend="python")(2.0)


def test_mutual_recursion_is_an_error():
    with pytest.raises(AdCompileError, match=r"recursive call \(is_even -> is_odd -> is_even\)"):
        adcompile.compile(calls_mutual, backend="python")(2.0)


def alias_then_write(x):
    y = x
    y[0] = 2.0 * y[1]
    return np.sum(y * x)


def view_then_write(x):
    y = x[1:]
    y[0] = 5.0
    return np.sum(x * x)


def row_write(X):
    for row in X:
        row[0] = 2.0 * row[1]
    return np.sum(X * X)


def base_written_view_used(x):
    v = x[1:]
    x[1] = 3.0
    return np.sum(v * v)


def helper_writes_view(x):
    scale_in_place(x[1:], 2.0)
    return np.sum(x * x)


@pytest.mark.parametrize("fn,args,match", [
    (alias_then_write, (X4,), r"write into 'y': it may share memory with 'x'"),
    (view_then_write, (X4,), r"write into 'y': it may share memory with 'x'"),
    (row_write, (M23,), r"write into 'row': it may share memory with 'X'"),
    (base_written_view_used, (X4,), r"write into 'x': 'v', which shares its memory, is used after"),
    (helper_writes_view, (X4,), r"may share memory with 'x'"),
])
def test_writes_through_shared_memory_are_rejected(fn, args, match):
    compiled = adcompile.compile(fn, backend="python")
    compiled(*[a.copy() for a in args])  # the forward function runs with Python's semantics
    with pytest.raises(AdCompileError, match=match) as info:
        adcompile.grad(compiled)(*[a.copy() for a in args])
    assert "copy" in str(info.value) and "line" in str(info.value)


def test_copy_then_write_is_differentiated():
    check_against_python(_copy_then_write, (X4,))


def _copy_then_write(x):
    y = x.copy()
    y[0] = 2.0 * y[1]
    return np.sum(y * x)
