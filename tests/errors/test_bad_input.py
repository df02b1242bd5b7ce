"""Bad input gets a clear error and harms nothing (issue 8).

``BAD_CASES`` is a table of bad or unsupported programs and calls. Each row names the exact
error class (an ``adcompile.AdCompileError`` subclass: never a ``KeyError``, a numba
``TypingError`` or a bare ``TypeError`` from inside adcompile), words the message must contain,
words it must not contain (numba's type names such as "i8", the translator's temporaries such
as "_select"), and, where the error is about a
line of this file, the text of that line: the message must name this file and that line.

``GOOD_CASES`` are unusual but valid inputs (NaN, inf, empty arrays, zero-trip loops, keyword
arguments, redefinitions) that must run and give numpy's answer. Most cases use the plain
Python backend; the rows marked numba test what only the numba path does (errors raised by
compiled code, numba rejecting generated code).
"""
import importlib.util
import inspect
import math
import os
import re
import sys
import textwrap

import numpy as np
import pytest

import adcompile
import adcompile.api.specialised
from adcompile.errors import (AdCompileError, CallError, GeneratedCodeError, ShapeError,
                              SourceUnavailableError, TypeMismatchError, UnsupportedFunctionError,
                              UnsupportedSyntaxError)

THIS_FILE = os.path.abspath(__file__)
X3 = np.array([0.5, -1.0, 2.0])
NUMBA_TYPE_NAMES = re.compile(r"\b(f8|f4|i8|b1)\b|\[:")
INTERNAL_NAMES = re.compile(r"'_[a-z]\w*'|\b_t_\d+\b|\b_select\b")  # the translator's temporaries


def py(fn):
    return adcompile.compile(fn, backend="python")


def nb(fn):
    return adcompile.compile(fn)


# ----------------------------------------------------------------- programs
COUNTER = 0


def writes_a_parameter_later_widened(x, flag):
    x[2] = 0.25
    if flag:
        x = np.ones((3, 3)) @ x.astype(np.float64)
    return np.sum(x)


def _rebinds_its_parameter_to_a_scalar(p0, p1):
    if np.sum(p1) > 0.0:
        p1, u = (p1[1], np.tanh(p0 @ p1))
        p0 = p0 * u
    return np.sum(p0)


def calls_a_helper_rebinding_its_parameter(x):
    return _rebinds_its_parameter_to_a_scalar(x, x[::-1])


def scalar_becomes_an_array_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + x
    return np.sum(s)


def writes_a_conditional_expression_of_two_dtypes(x, c):
    w = x if c > 0.0 else np.ones(3)
    w[1] = 0.5
    return np.sum(w) + np.sum(x)


def _flips_and_writes(p0):
    v = np.flip(p0[:, 0])
    v[1] = 0.5
    return np.sum(p0[:2, :])


def writes_through_a_view_of_a_temporary_argument(x):
    return _flips_and_writes(np.outer(x, x))


def uses_global(x):
    global COUNTER
    return np.sum(x)


def uses_yield(x):
    yield np.sum(x)


def uses_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return np.sum(y)


def uses_with(x):
    with open(os.devnull) as handle:
        y = x
    return np.sum(y)


def uses_class(x):
    class Box:
        pass
    return np.sum(x)


def uses_star_args(*xs):
    return np.sum(xs[0])


def uses_nonlocal(x):
    total = 0.0

    def bump():
        nonlocal total
        total = 1.0
    bump()
    return total


def uses_dict(x):
    parts = {0: x}
    return np.sum(parts[0])


def uses_comprehension(x):
    return np.sum([v * 2.0 for v in x])


def uses_raise(x):
    raise ValueError("no")


def uses_print(x):
    print(x)
    return np.sum(x)


def reads_mask(x):
    return np.sum(x[x > 0, None])


async def is_async(x):
    return np.sum(x)


def unknown_name(x):
    return np.sum(x * undefined_thing)  # noqa: F821


def unknown_numpy_name(x):
    return np.sum(np.no_such_function(x))


def unknown_attribute(x):
    return np.sum(x.no_such_attribute)


def string_constant(x):
    label = "abc"
    return np.sum(x)


def uses_eig(x):
    a = np.outer(x, x) + np.eye(3)
    return np.sum(np.linalg.eig(a)[0])


def uses_einsum_two_ellipses(x):
    return np.einsum("......i->i", x)


def qr_of_wide(a):
    q, r = np.linalg.qr(a)  # a wide matrix: the derivative needs rows >= columns
    return np.sum(r * r) + np.sum(q)


def uses_unwrap(x):
    return np.sum(np.unwrap(x))


def recursive(x, n):
    if n == 0:
        return np.sum(x)
    return recursive(x, n - 1)


def ping(x, n):
    return pong(x, n)


def pong(x, n):
    return ping(x, n - 1)


def matmul_4d(x):
    return np.sum(np.ones((2, 2, 2, 2)) @ x)


def float_index(x):
    return x[1.5]


def vector_valued(x):
    return x * 2.0


def tuple_valued(x):
    return np.sum(x), x


def integer_valued(x):
    return x.shape[0]


def scaled(x, k):
    return np.sum(x) * k


def flagged(x, flag):
    return np.sum(x) if flag else 0.0


def plus(x, y):
    z = x + y
    return np.sum(z * z)


def matvec(a, x):
    y = a @ x
    return np.sum(y)


def square_sum(x):
    return np.sum(x * x)


def uses_argument_as_array(x):
    """Given a list, dict or tuple: a pytree, not an array."""
    return np.sum(x * 2.0)


def exec_defined(name, code):
    namespace = {"np": np}
    exec(textwrap.dedent(code), namespace)
    return namespace[name]


def broken_generate(monkeypatch, old, new):
    """Make code generation emit ``new`` instead of ``old`` (a statement numba cannot type)."""
    real = adcompile.api.specialised.generate

    def generate(fn_ir, **kwargs):
        return real(fn_ir, **kwargs).replace(old, new)
    monkeypatch.setattr(adcompile.api.specialised, "generate", generate)


# ----------------------------------------------------------------- the table
# (id, call, error class, words the message contains, text of the line it names or None)
BAD_CASES = [
    # syntax we reject
    ("global", lambda: py(uses_global)(X3), UnsupportedSyntaxError, ["global"], "global COUNTER"),
    ("yield", lambda: py(uses_yield)(X3), UnsupportedSyntaxError, ["yield"], "yield np.sum(x)"),
    ("try", lambda: py(uses_try)(X3), UnsupportedSyntaxError, ["try"], "try:"),
    ("with", lambda: py(uses_with)(X3), UnsupportedSyntaxError, ["with"], "with open(os.devnull) as handle:"),
    ("class", lambda: py(uses_class)(X3), UnsupportedSyntaxError, ["class"], "class Box:"),
    ("star-args", lambda: py(uses_star_args)(X3), UnsupportedSyntaxError, ["*"], "def uses_star_args(*xs):"),
    ("nonlocal", lambda: py(uses_nonlocal)(X3), UnsupportedSyntaxError, ["nonlocal"], "nonlocal total"),
    ("dict-literal", lambda: py(uses_dict)(X3), UnsupportedSyntaxError, ["dict", "constant string keys"],
     "parts = {0: x}"),
    ("comprehension", lambda: py(uses_comprehension)(X3), UnsupportedSyntaxError, ["comprehension"],
     "return np.sum([v * 2.0 for v in x])"),
    ("raise", lambda: py(uses_raise)(X3), UnsupportedSyntaxError, ["raise"], 'raise ValueError("no")'),
    ("print", lambda: py(uses_print)(X3), UnsupportedSyntaxError, ["print"], "print(x)"),
    ("mask-read", lambda: adcompile.grad(py(reads_mask))(X3), UnsupportedSyntaxError, ["boolean mask", "only index"],
     "return np.sum(x[x > 0, None])"),
    ("async-def", lambda: py(is_async), UnsupportedSyntaxError, ["async"], "async def is_async(x):"),
    ("string-constant", lambda: py(string_constant)(X3), TypeMismatchError, ["str"], 'label = "abc"'),
    # names we cannot resolve
    ("unknown-name", lambda: py(unknown_name)(X3), AdCompileError, ["undefined_thing", "not defined"],
     "return np.sum(x * undefined_thing)  # noqa: F821"),
    ("unknown-numpy-name", lambda: py(unknown_numpy_name)(X3), AdCompileError, ["no_such_function"],
     "return np.sum(np.no_such_function(x))"),
    ("unknown-attribute", lambda: py(unknown_attribute)(X3), UnsupportedFunctionError, ["no_such_attribute"],
     "return np.sum(x.no_such_attribute)"),
    # numpy functions without a derivative rule
    ("linalg-eig", lambda: adcompile.grad(py(uses_eig))(X3), UnsupportedFunctionError, ["linalg.eig"],
     "return np.sum(np.linalg.eig(a)[0])"),
    ("einsum-two-ellipses", lambda: adcompile.grad(py(uses_einsum_two_ellipses))(X3), UnsupportedFunctionError,
     ["einsum", "one ellipsis"], 'return np.einsum("......i->i", x)'),
    ("unwrap", lambda: adcompile.grad(py(uses_unwrap))(X3), UnsupportedFunctionError, ["unwrap"],
     "return np.sum(np.unwrap(x))"),
    ("matmul-4d", lambda: py(matmul_4d)(X3), TypeMismatchError, ["4-d"], "return np.sum(np.ones((2, 2, 2, 2)) @ x)"),
    # numpy writes into the caller's float32 array; a widened copy would take the write instead
    ("write-to-widened-parameter", lambda: py(writes_a_parameter_later_widened)(X3.astype(np.float32), 0),
     TypeMismatchError, ["written in place", "float32 array passed in"], "x[2] = 0.25"),
    # one type per variable: the message names the variable (never an internal name)
    ("variable-changes-ndim", lambda: py(calls_a_helper_rebinding_its_parameter)(X3), TypeMismatchError,
     ["'p1' is a 1-d array and is given a scalar here", "give the scalar a new name"],
     "p1, u = (p1[1], np.tanh(p0 @ p1))"),
    ("scalar-becomes-array", lambda: py(scalar_becomes_an_array_in_a_loop)(X3), TypeMismatchError,
     ["'s' is a scalar and is given a 1-d array here", "np.zeros"], "s = s + x"),
    ("conditional-expression-written", lambda: py(writes_a_conditional_expression_of_two_dtypes)(
        X3.astype(np.float32), 1.0), TypeMismatchError,
     ["'w' is given a float32 array by one branch of the conditional expression", "this write into 'w'"],
     "w[1] = 0.5"),
    # a helper's parameter given a temporary (np.outer(x, x)) is named by the parameter
    ("write-into-view-of-temporary-argument", lambda: adcompile.grad(py(writes_through_a_view_of_a_temporary_argument))(X3),
     AdCompileError, ["the in-place write into 'v': it may share memory with 'p0'", "Make 'v' or 'p0' a copy"],
     "v[1] = 0.5"),
    ("float-index", lambda: py(float_index)(X3), TypeMismatchError, ["integers"], "return x[1.5]"),
    # recursion
    ("recursion", lambda: adcompile.grad(py(recursive))(X3, 2), UnsupportedSyntaxError,
     ["recursive call (recursive -> recursive)"], "return recursive(x, n - 1)"),
    ("mutual-recursion", lambda: py(ping)(X3, 2), UnsupportedSyntaxError, ["ping -> pong -> ping"],
     "return ping(x, n - 1)"),
    # grad of a non-scalar
    ("grad-of-vector", lambda: adcompile.grad(py(vector_valued))(X3), CallError,
     ["returns a 1-d float64 array", "vjp"], None),
    ("grad-of-tuple", lambda: adcompile.grad(py(tuple_valued))(X3), CallError, ["tuple"], None),
    ("grad-of-integer", lambda: adcompile.grad(py(integer_valued))(X3), CallError,
     ["an integer (int64)"], None),
    # wrong argument counts
    ("too-few-arguments", lambda: py(scaled)(X3), CallError, ["takes 2 arguments", "'k'"], None),
    ("too-many-arguments", lambda: py(scaled)(X3, 1.0, 2.0), CallError, ["takes 2 arguments"], None),
    ("unknown-keyword", lambda: adcompile.grad(py(scaled))(X3, k=1.0, q=2.0), CallError, ["'q'"], None),
    ("keyword-twice", lambda: adcompile.grad(py(scaled))(X3, 1.0, k=1.0), CallError, ["multiple values"], None),
    # wrong argument types
    ("string-argument", lambda: py(square_sum)("abc"), CallError, ["str"], None),
    # a list, dict or tuple argument is a pytree of arguments: used as one array, told where
    ("list-argument", lambda: adcompile.grad(py(uses_argument_as_array))([1.0, 2.0]), TypeMismatchError,
     ["a list cannot be used as a number or array", "np.asarray"], "return np.sum(x * 2.0)"),
    ("dict-argument", lambda: py(uses_argument_as_array)({"a": 1.0}), TypeMismatchError, ["a dict cannot be used"],
     "return np.sum(x * 2.0)"),
    ("tuple-argument", lambda: py(uses_argument_as_array)((1.0, 2.0)), TypeMismatchError, ["a tuple cannot be used"],
     "return np.sum(x * 2.0)"),
    ("dict-int-key", lambda: py(square_sum)({1: 1.0}), CallError, ["x is a dict with the key 1", "string keys"], None),
    ("complex-array", lambda: adcompile.grad(py(square_sum))(np.array([1j, 2.0])), CallError, ["complex128"], None),
    ("float16-array", lambda: nb(square_sum)(np.ones(2, dtype=np.float16)), CallError, ["float16"], None),
    ("object-array", lambda: py(square_sum)(np.array([1.0, "a"], dtype=object)), CallError, ["object"], None),
    # integer or boolean arguments in wrt
    ("wrt-integer", lambda: adcompile.grad(nb(scaled), wrt=1)(X3, 2), CallError,
     ["'k'", "an integer (int64)"], None),
    ("wrt-integer-by-name", lambda: adcompile.value_and_grad(py(scaled), wrt="k")(X3, 2), CallError,
     ["an integer (int64)"], None),
    ("wrt-bool", lambda: adcompile.grad(py(flagged), wrt=1)(X3, True), CallError, ["'flag'", "a bool"], None),
    ("wrt-integer-array", lambda: adcompile.grad(py(square_sum))(np.arange(3)), CallError,
     ["a 1-d int64 array"], None),
    ("wrt-bool-array", lambda: adcompile.grad(py(square_sum))(np.ones((2, 2), dtype=bool)), CallError,
     ["a 2-d bool array"], None),
    ("hessian-wrt-integer", lambda: adcompile.hessian(py(scaled), wrt=1)(X3, 2), CallError,
     ["an integer (int64)"], None),
    ("jvp-tangent-for-integer", lambda: adcompile.jvp(py(scaled), (X3, 2), (X3, 1.0)), CallError,
     ["an integer (int64)"], None),
    # wrt out of range or naming no argument
    ("wrt-out-of-range", lambda: adcompile.grad(py(scaled), wrt=2)(X3, 1.0), CallError, ["wrt=2", "out of range"], None),
    ("wrt-negative-out-of-range", lambda: adcompile.grad(py(scaled), wrt=-3)(X3, 1.0), CallError, ["out of range"], None),
    ("wrt-no-such-name", lambda: adcompile.grad(py(scaled), wrt="z")(X3, 1.0), CallError, ["no argument named 'z'"], None),
    ("wrt-float", lambda: adcompile.grad(py(scaled), wrt=0.5)(X3, 1.0), CallError, ["wrt must be"], None),
    # shape mismatches at run time
    ("broadcast-mismatch", lambda: py(plus)(np.ones(3), np.ones(4)), ShapeError, ["broadcast", "(3,)", "(4,)"],
     "z = x + y"),
    ("broadcast-mismatch-numba-grad", lambda: adcompile.grad(nb(plus))(np.ones(3), np.ones(4)), ShapeError,
     ["broadcast"], "z = x + y"),
    ("qr-wide-derivative", lambda: adcompile.grad(py(qr_of_wide))(np.ones((2, 3))), ShapeError,
     ["np.linalg.qr", "at least as many rows as columns", "(2, 3)"],
     "q, r = np.linalg.qr(a)  # a wide matrix: the derivative needs rows >= columns"),
    ("matmul-mismatch", lambda: adcompile.grad(py(matvec))(np.ones((2, 3)), np.ones(4)), ShapeError,
     ["matmul"], "y = a @ x"),
    ("tangent-shape", lambda: adcompile.jvp(py(square_sum), (X3,), (np.ones(4),)), CallError, ["shape (4,)"], None),
    # source not retrievable
    ("exec-defined-function", lambda: adcompile.grad(exec_defined("hidden", """
        def hidden(x):
            return np.sum(x * x)
     """))(X3), SourceUnavailableError, ["hidden", "source"], None),
    ("exec-defined-lambda", lambda: adcompile.grad(exec_defined("f", "f = lambda x: np.sum(x * x)"))(X3),
     SourceUnavailableError, ["source"], None),
    ("builtin-np-sin", lambda: adcompile.grad(np.sin)(1.0), SourceUnavailableError, ["np.sin", "def f(x)"], None),
    ("builtin-math-exp", lambda: adcompile.grad(math.exp)(1.0), SourceUnavailableError, ["exp", "no Python source"], None),
    ("numpy-python-function", lambda: adcompile.grad(np.sum)(X3), SourceUnavailableError, ["np.sum"], None),
    ("not-callable", lambda: adcompile.grad(3.0)(X3), CallError, ["float"], None),
]


def line_of(text):
    """The number of the line of this file whose stripped text is ``text`` (unique)."""
    with open(THIS_FILE) as handle:
        numbers = [k + 1 for k, line in enumerate(handle) if line.strip() == text]
    assert len(numbers) == 1, (text, numbers)
    return numbers[0]


def test_the_table_is_large_enough():
    assert len(BAD_CASES) >= 40


@pytest.mark.parametrize("call, error_class, words, line_text", [c[1:] for c in BAD_CASES],
                         ids=[c[0] for c in BAD_CASES])
def test_bad_input_raises_a_clear_error(call, error_class, words, line_text):
    with pytest.raises(AdCompileError) as info:
        call()
    error = info.value
    assert type(error) is error_class, f"{type(error).__name__}: {error}"
    message = str(error)
    for word in words:
        assert word in message, f"{word!r} not in:\n{message}"
    assert not NUMBA_TYPE_NAMES.search(message), f"numba type name in:\n{message}"
    told = message.split("in generated code:")[0]  # (a run-time error quotes the generated line after it)
    assert not INTERNAL_NAMES.search(told), f"internal name in:\n{message}"
    if line_text is not None:
        assert THIS_FILE in message, message
        assert re.search(rf"line {line_of(line_text)}\b", message), f"line of {line_text!r} not named:\n{message}"
        assert line_text in message, message


# ----------------------------------------------------------------- numba rejects generated code
def weighted(x, y):  # cumsum: a statement that fusion and folding leave as it is
    z = np.sin(x) + y
    w = np.cumsum(z)
    return np.sum(w * w)  # w's value is read by the gradient too, so both sources compute it


@pytest.mark.parametrize("kind", ["compile", "grad"])
def test_numba_rejecting_generated_code_is_a_located_adcompile_bug(monkeypatch, kind):
    broken_generate(monkeypatch, "w = np.cumsum(z)", "w = np.cumsum(z) * 'text'")
    f = nb(weighted)
    target = f if kind == "compile" else adcompile.grad(f)
    with pytest.raises(GeneratedCodeError) as info:
        target(X3, X3 + 1.0)
    message = str(info.value)
    assert "bug in adcompile" in message and "report" in message
    assert THIS_FILE in message and re.search(rf"line {line_of('w = np.cumsum(z)')}\b", message), message
    assert "w = np.cumsum(z) * 'text'" in message  # the generated statement too
    assert "numba" in message and "Function(<built-in function mul>)" in message
    assert "During: " not in message  # numba's internals stay in the chained cause
    assert type(info.value.__cause__).__name__ == "TypingError"


# ----------------------------------------------------------------- harms nothing
def write_then_fail(x, y):
    x[0] = 10.0
    return np.sum(x + y)


def test_arrays_are_untouched_and_the_function_still_works_after_a_shape_error():
    g = adcompile.grad(nb(plus))
    x, y = np.ones(3), np.ones(4)
    with pytest.raises(ShapeError, match="broadcast") as info:
        g(x, y)
    assert isinstance(info.value, ValueError)  # code catching numpy's ValueError still works
    assert list(x) == [1.0, 1.0, 1.0] and list(y) == [1.0] * 4
    assert list(g(np.ones(4), np.ones(4))) == [4.0] * 4


def test_failing_compiled_function_mutates_its_argument_as_python_does():
    x = np.ones(3)
    with pytest.raises(ShapeError):
        nb(write_then_fail)(x, np.ones(4))
    assert list(x) == [10.0, 1.0, 1.0]


def test_failing_gradient_leaves_its_argument_unchanged():
    x = np.ones(3)
    with pytest.raises(ShapeError):
        adcompile.grad(nb(write_then_fail))(x, np.ones(4))
    assert list(x) == [1.0, 1.0, 1.0]


def zero_trip_loop(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] ** 2
    return s + np.sum(x)


def with_default(x, scale=3.0):
    return np.sum(x * x) * scale


GOOD_CASES = [
    ("nan-input", lambda: adcompile.grad(nb(square_sum))(np.array([np.nan, 1.0])), [np.nan, 2.0]),
    ("inf-input", lambda: adcompile.grad(py(square_sum))(np.array([np.inf, 1.0])), [np.inf, 2.0]),
    ("nan-forward", lambda: nb(square_sum)(np.array([np.nan, 1.0])), np.nan),
    ("empty-array", lambda: adcompile.grad(nb(square_sum))(np.zeros(0)), np.zeros(0)),
    ("empty-2d-array", lambda: adcompile.grad(py(square_sum))(np.zeros((0, 3))), np.zeros((0, 3))),
    ("empty-forward", lambda: nb(square_sum)(np.zeros(0)), 0.0),
    ("zero-trip-loop", lambda: adcompile.grad(nb(zero_trip_loop))(X3, 0), [1.0, 1.0, 1.0]),
    ("zero-trip-loop-negative-count", lambda: adcompile.grad(py(zero_trip_loop))(X3, -2), [1.0, 1.0, 1.0]),
    ("keyword-arguments", lambda: adcompile.grad(py(scaled))(k=2.0, x=X3), [2.0, 2.0, 2.0]),
    ("keyword-arguments-compiled", lambda: nb(scaled)(X3, k=2.0), 3.0),
    ("default-argument", lambda: adcompile.grad(py(with_default))(X3), 6.0 * X3),
    ("value-and-grad-keywords", lambda: adcompile.value_and_grad(py(scaled), wrt="k")(X3, k=2.0)[1], 1.5),
]


@pytest.mark.parametrize("call, expected", [c[1:] for c in GOOD_CASES], ids=[c[0] for c in GOOD_CASES])
def test_unusual_but_valid_input_follows_numpy(call, expected):
    result = call()
    np.testing.assert_array_equal(result, expected)
    assert np.shape(result) == np.shape(expected)


def _import_from(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_function_redefined_after_compilation_uses_the_new_definition(tmp_path):
    path = tmp_path / "redefined_module.py"
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(x * x)\n")
    first = _import_from(path, "redefined_module_a")
    assert list(adcompile.grad(first.f)(X3)) == list(2.0 * X3)
    path.write_text("import numpy as np\n\ndef f(x):\n    return np.sum(x * x * x)\n")
    second = _import_from(path, "redefined_module_b")
    assert np.allclose(adcompile.grad(second.f)(X3), 3.0 * X3 ** 2)
    # (The old function object ``first.f`` now reads the new text too: source comes from the file.)


def test_helper_redefined_before_a_new_compile_is_used(monkeypatch):
    def outer(x):
        return helper_for_redefinition(x)

    assert list(adcompile.grad(py(outer))(X3)) == [1.0, 1.0, 1.0]
    monkeypatch.setattr(sys.modules[__name__], "helper_for_redefinition", other_helper)
    assert list(adcompile.grad(py(outer))(X3)) == list(2.0 * X3)


def helper_for_redefinition(x):
    return np.sum(x)


def other_helper(x):
    return np.sum(x * x)


def test_every_error_class_is_an_adcompile_error():
    from adcompile import errors
    for _, cls in inspect.getmembers(errors, inspect.isclass):
        if issubclass(cls, Exception):
            assert issubclass(cls, AdCompileError), cls
