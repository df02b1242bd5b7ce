"""Errors for code the compiler cannot take, and for bad calls (issue 2).

* Unsupported syntax and unknown functions raise ``AdCompileError`` subclasses when the
  function is specialised; the message names this file, the line and column, quotes the
  offending line and puts a caret under the offending construct.
* Bad calls (argument count, ``wrt``, grad of a non-scalar) raise ``CallError`` at call time,
  before any code is generated or compiled (checked by making the backend loader raise).
"""
import inspect
import math
import os
import re
import textwrap

import numpy as np
import pytest
from numpy.linalg import eig

import adcompile
import adcompile.api.specialised
from adcompile.errors import (CallError, SourceUnavailableError, UnsupportedFunctionError,
                              UnsupportedSyntaxError)

THIS_FILE = os.path.abspath(__file__)
X = np.linspace(-1.0, 1.0, 6)


# ----------------------------------------------------------------- unsupported syntax
def uses_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return np.sum(y)


def uses_with(x):
    with open("f") as handle:
        y = x
    return np.sum(y)


def uses_yield(x):
    yield np.sum(x)


COUNTER = 0


def uses_global(x):
    global COUNTER
    return np.sum(x)


def uses_nonlocal_like_class(x):
    class Box:
        pass
    return np.sum(x)


def uses_nested_def(x):  # a plain nested def is inlined (test_realistic_programs); a decorated one is not
    @staticmethod
    def helper(v):
        return v * 2.0
    return np.sum(helper(x))


def uses_star_args(*xs):
    return np.sum(xs[0])


def uses_star_call(x):
    parts = (x, x)
    return np.sum(np.maximum(*parts))


def uses_kwargs_param(x, **options):
    return np.sum(x)


def uses_list_comprehension(x):
    return np.sum([v * 2.0 for v in x])


def uses_fstring(x):
    name = f"{x}"
    return np.sum(x)


def uses_del(x):
    y = x * 2.0
    del y
    return np.sum(x)


def uses_import(x):
    import math
    return np.sum(x) * math.pi


# (function, the offending line as written above, the construct the caret points at)
SYNTAX_CASES = [
    (uses_try, "try:", "try"),
    (uses_with, 'with open("f") as handle:', "with"),
    (uses_yield, "yield np.sum(x)", "yield"),
    (uses_global, "global COUNTER", "global"),
    (uses_nonlocal_like_class, "class Box:", "class"),
    (uses_nested_def, "def helper(v):", "def"),
    (uses_star_args, "def uses_star_args(*xs):", None),
    (uses_star_call, "return np.sum(np.maximum(*parts))", "*parts"),
    (uses_kwargs_param, "def uses_kwargs_param(x, **options):", None),
    (uses_list_comprehension, "return np.sum([v * 2.0 for v in x])", "[v * 2.0"),
    (uses_fstring, 'name = f"{x}"', 'f"'),
    (uses_del, "del y", "del"),
    (uses_import, "import math", "import"),
]


def line_number_of(fn, text):
    """The line number in this file of ``text`` inside ``fn``'s source."""
    lines, first = inspect.getsourcelines(fn)
    for k, line in enumerate(lines):
        if line.strip() == text:
            return first + k, line.rstrip("\n")
    raise AssertionError(f"{text!r} not found in {fn.__name__}")


def assert_located(message, lineno, line, construct):
    """The message names this file and the line, quotes it and puts a caret under ``construct``."""
    assert THIS_FILE in message or os.path.basename(THIS_FILE) in message, message
    assert re.search(rf"line {lineno}\b", message), message
    assert line.strip() in message, message
    quoted = [m for m in message.splitlines() if m.strip() == line.strip()]
    assert quoted, message
    lines = message.splitlines()
    k = lines.index(quoted[0])
    assert k + 1 < len(lines) and lines[k + 1].strip() == "^", f"no caret line under the quote:\n{message}"
    caret_col = lines[k + 1].index("^")
    quote = lines[k]
    if construct is not None:
        assert quote[caret_col:].startswith(construct), \
            f"caret at column {caret_col} does not point at {construct!r}:\n{message}"
    else:
        assert caret_col == len(quote) - len(quote.lstrip()), message


@pytest.mark.parametrize("fn, text, construct", SYNTAX_CASES, ids=[c[0].__name__ for c in SYNTAX_CASES])
def test_unsupported_syntax_is_located(fn, text, construct):
    f = adcompile.compile(fn, backend="python")
    with pytest.raises(adcompile.AdCompileError) as info:
        if fn is uses_kwargs_param:  # calling it with one argument is already a CallError
            adcompile.source(f, X)
        else:
            f(X)
    assert isinstance(info.value, UnsupportedSyntaxError), type(info.value)
    lineno, line = line_number_of(fn, text)
    assert_located(str(info.value), lineno, line, construct)


def test_unsupported_syntax_is_reported_by_grad_too():
    with pytest.raises(UnsupportedSyntaxError, match="yield"):
        adcompile.grad(uses_yield)(X)


# ----------------------------------------------------------------- unknown functions
def uses_fft(x):
    y = np.fft.fft(x)
    return np.sum(y)


def uses_svd(x):
    a = np.outer(x, x)
    u = np.linalg.svd(a)
    return np.sum(u)


def uses_gradient(x):  # np.sort and np.median are supported now; np.gradient is not
    return np.sum(np.gradient(x) * x)


def uses_unknown_method(x):
    return np.sum(x.argsort() * x)


def uses_imported_eig(x):
    return np.sum(eig(np.outer(x, x) + np.eye(6))[0])


def uses_math_cbrt(x):
    return np.sum(x) * math.cbrt(x[0])


@pytest.mark.parametrize("fn, text, name", [
    (uses_fft, "y = np.fft.fft(x)", "fft"),
    (uses_svd, "u = np.linalg.svd(a)", "svd"),
    (uses_gradient, "return np.sum(np.gradient(x) * x)", "gradient"),
    (uses_unknown_method, "return np.sum(x.argsort() * x)", "argsort"),
    (uses_imported_eig, "return np.sum(eig(np.outer(x, x) + np.eye(6))[0])", "linalg.eig"),
    (uses_math_cbrt, "return np.sum(x) * math.cbrt(x[0])", "cbrt"),
])
@pytest.mark.parametrize("entry", ["call", "grad"])
def test_unknown_function_is_named_never_a_zero(fn, text, name, entry):
    f = adcompile.compile(fn, backend="python")
    run = f if entry == "call" else adcompile.grad(f)
    with pytest.raises(UnsupportedFunctionError) as info:
        run(X)
    message = str(info.value)
    assert name in message.splitlines()[0], message
    lineno, line = line_number_of(fn, text)
    assert re.search(rf"line {lineno}\b", message) and line.strip() in message, message


def extra_positional(x):
    return np.sum(x, 0, np.float64)


def ignored_keyword(x):
    return np.sum(x * np.linspace(0.0, 1.0, 6, retstep=True))


def out_keyword(x):
    y = np.empty_like(x)
    return np.sum(np.exp(x, out=y))


def diag_offset(x):
    return np.sum(np.diag(x, 1))


@pytest.mark.parametrize("fn, text, pattern", [
    (extra_positional, "return np.sum(x, 0, np.float64)", r"sum\(\) takes at most 2 positional"),
    (ignored_keyword, "return np.sum(x * np.linspace(0.0, 1.0, 6, retstep=True))", r"'retstep' of linspace"),
    (out_keyword, "return np.sum(np.exp(x, out=y))", r"'out' of exp"),
    (diag_offset, "return np.sum(np.diag(x, 1))", r"diag\(\) takes at most 1"),
])
def test_arguments_that_would_be_ignored_are_errors(fn, text, pattern):
    with pytest.raises(UnsupportedFunctionError, match=pattern) as info:
        adcompile.compile(fn, backend="python")(X)
    lineno, line = line_number_of(fn, text)
    assert re.search(rf"line {lineno}\b", str(info.value)) and line.strip() in str(info.value)


def test_missing_rule_is_a_loud_named_error(monkeypatch):
    import dataclasses

    from adcompile.errors import NoDerivativeRuleError
    from adcompile.ir.primitives import PRIMITIVES

    def f(x):
        return np.sum(np.cosh(x))

    monkeypatch.setitem(PRIMITIVES, "cosh", dataclasses.replace(PRIMITIVES["cosh"], vjp=None))
    with pytest.raises(NoDerivativeRuleError) as info:
        adcompile.grad(adcompile.compile(f, backend="python"))(X)
    assert "cosh" in str(info.value) and "return np.sum(np.cosh(x))" in str(info.value)


# ----------------------------------------------------------------- bad calls
def loss(w, X, n):
    return np.sum(np.tanh(X @ w)) * n


def vector_valued(x):
    return x * 2.0


def tuple_valued(x):
    return np.sum(x), x


@pytest.fixture
def no_codegen(monkeypatch):
    """Make any attempt to load generated code fail: bad calls must be caught before."""
    def refuse(*args, **kwargs):
        raise AssertionError("code was generated/loaded for a bad call")
    monkeypatch.setattr(adcompile.api.specialised, "load", refuse)


ARGS = (np.ones(3), np.ones((2, 3)), 2)


@pytest.mark.parametrize("make_call, pattern", [
    (lambda f: f(np.ones(3), np.ones((2, 3))), r"takes 3 arguments"),
    (lambda f: f(*ARGS, 1.0), r"takes 3 arguments"),
    (lambda f: adcompile.grad(f)(np.ones(3)), r"takes 3 arguments"),
    (lambda f: adcompile.grad(f, wrt=3)(*ARGS), r"wrt=3.*out of range"),
    (lambda f: adcompile.grad(f, wrt=-4)(*ARGS), r"out of range"),
    (lambda f: adcompile.grad(f, wrt=(0, 5))(*ARGS), r"out of range"),
    (lambda f: adcompile.grad(f, wrt="v")(*ARGS), r"no argument named 'v'"),
    (lambda f: adcompile.grad(f, wrt=2)(*ARGS), r"'n'.*only float"),
    (lambda f: adcompile.grad(f, wrt="n")(*ARGS), r"'n'.*only float"),
    (lambda f: adcompile.grad(f, wrt=1.5)(*ARGS), r"wrt must be an int"),
    (lambda f: adcompile.value_and_grad(f, wrt=(0, "n"))(*ARGS), r"'n'.*only float"),
    (lambda f: f(np.ones(3), "text", 2), r"argument 1 has unsupported type str"),
], ids=["too-few", "too-many", "grad-too-few", "wrt-out-of-range", "wrt-negative-out-of-range",
        "wrt-tuple-out-of-range", "wrt-unknown-name", "wrt-int-argument", "wrt-int-argument-by-name",
        "wrt-float", "value-and-grad-int-argument", "bad-argument-type"])
def test_bad_calls_raise_call_error_before_codegen(make_call, pattern, no_codegen):
    f = adcompile.compile(loss)  # numba backend: the error must come before numba is involved
    with pytest.raises(CallError, match=pattern):
        make_call(f)


@pytest.mark.parametrize("fn, what", [(vector_valued, "1-d"), (tuple_valued, "tuple")])
def test_grad_of_non_scalar_output(fn, what, no_codegen):
    with pytest.raises(CallError, match="vjp") as info:
        adcompile.grad(adcompile.compile(fn))(np.ones(3))
    assert "scalar" in str(info.value)


def test_grad_of_integer_output(no_codegen):
    def count(x):
        return x.shape[0]

    with pytest.raises(CallError, match="float scalar"):
        adcompile.grad(adcompile.compile(count))(np.ones(3))


def test_vjp_with_wrong_cotangents():
    out, pullback = adcompile.vjp(adcompile.compile(vector_valued, backend="python"), np.ones(3))
    with pytest.raises(CallError):
        pullback(np.ones((2, 2)))
    with pytest.raises(CallError):
        pullback(np.ones(3), np.ones(3))


def test_compile_rejects_non_functions():
    with pytest.raises(adcompile.AdCompileError):
        adcompile.grad(3)


# ----------------------------------------------------------------- functions without source
def test_exec_defined_function_has_no_source():
    namespace = {"np": np}
    exec(textwrap.dedent("""
        def hidden(x):
            return np.sum(x * x)
    """), namespace)
    f = adcompile.compile(namespace["hidden"], backend="python")
    with pytest.raises(SourceUnavailableError, match="hidden") as info:
        f(X)
    assert "source" in str(info.value)
    with pytest.raises(SourceUnavailableError):
        adcompile.grad(namespace["hidden"])(X)


def test_a_lambda_is_compiled_not_rejected():
    square = lambda x: np.sum(x * x)  # noqa: E731
    np.testing.assert_allclose(adcompile.grad(square)(X), 2.0 * X)


def test_builtin_function_is_rejected():
    with pytest.raises(adcompile.AdCompileError):
        adcompile.grad(np.sum)(X)
