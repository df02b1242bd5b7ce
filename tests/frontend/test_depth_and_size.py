"""Deep and long programs compile: a chain of 1,000 nested helper calls, a 5,000-term expression.

Python itself stops near a hundred nested helper calls' worth of adcompile's recursive
translation and at about 1,500 terms of one expression; adcompile translates long sums with a
loop, raises the recursion limit (bounded) for its recursive walks over the user's AST, and writes
long chains of temporaries as statements of bounded nesting (``codegen/python.py``). Each program's
value is compared with plain Python's and its gradient with central differences, on the Python
backend here and on numba in the slow tests. Past the bounded limit the error names the
user's function and says what to split.
"""
import importlib.util
import sys

import numpy as np
import pytest

import adcompile
from adcompile.errors import UnsupportedSyntaxError
from adcompile.frontend import deep_recursion

CHAIN = 1000
TERMS = 5000
X = np.array([0.3, -0.5, 0.7])


def _chain_source(n):
    """``f`` calls ``h{n-1}``, which calls ``h{n-2}``, ... down to ``h0``: n nested helpers."""
    lines = ["import numpy as np", "", "", "def h0(x):", "    return np.sin(x) * 1.0001", ""]
    for k in range(1, n):
        lines += [f"def h{k}(x):", f"    return h{k - 1}(x) * 0.9999 + 0.001 * np.cos(x)", ""]
    lines += ["def f(x):", f"    return np.sum(h{n - 1}(x) ** 2)", ""]
    return "\n".join(lines)


def _sum_source(n):
    """``f`` returns one expression of n terms (sines and products of x's items)."""
    terms = [f"np.sin(x[{k % 3}])" if k % 2 == 0 else f"{(k % 7) + 1}.0 * x[{k % 3}] * x[{(k + 1) % 3}]"
             for k in range(n)]
    return f"import numpy as np\n\n\ndef f(x):\n    return {' + '.join(terms)}\n"


def _with_recursion_limit(limit, run):
    """Plain Python needs a higher limit than its default to import or run these programs."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        return run()
    finally:
        sys.setrecursionlimit(previous)


def _module(tmp_path_factory, name, source):
    path = tmp_path_factory.mktemp(name) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    _with_recursion_limit(30_000, lambda: spec.loader.exec_module(module))
    return module


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    return _module(tmp_path_factory, "deep_helper_chain", _chain_source(CHAIN))


@pytest.fixture(scope="module")
def long_sum(tmp_path_factory):
    return _module(tmp_path_factory, "long_sum_expression", _sum_source(TERMS))


def _check_value_and_gradient(f, backend):
    compiled = adcompile.compile(f, backend=backend)
    expected = _with_recursion_limit(30_000, lambda: f(X))
    np.testing.assert_allclose(compiled(X), expected, rtol=1e-12)
    assert adcompile.gradcheck(compiled, (X,))


def test_a_chain_of_a_thousand_nested_helpers_compiles_on_the_python_backend(chain):
    _check_value_and_gradient(chain.f, "python")


def test_a_five_thousand_term_expression_compiles_on_the_python_backend(long_sum):
    _check_value_and_gradient(long_sum.f, "python")


@pytest.mark.slow
def test_a_chain_of_a_thousand_nested_helpers_compiles_on_numba(chain):
    _check_value_and_gradient(chain.f, "numba")


@pytest.mark.slow
def test_a_five_thousand_term_expression_compiles_on_numba(long_sum):
    _check_value_and_gradient(long_sum.f, "numba")


def test_generated_code_nests_a_bounded_number_of_folded_temporaries(chain):
    """Python's parser takes at most 200 nested parentheses: long chains become statements."""
    source = adcompile.source(adcompile.compile(chain.f, backend="python"), X)
    deepest = max(_parenthesis_depth(line) for line in source.splitlines())
    assert 0 < deepest < 100
    assert source.count("\n") > CHAIN // 24  # written out in bounded pieces


def _parenthesis_depth(line):
    depth = deepest = 0
    for ch in line:
        depth += ch == "("
        depth -= ch == ")"
        deepest = max(deepest, depth)
    return deepest


def test_past_the_raised_limit_the_error_names_the_function_and_what_to_split(tmp_path_factory, monkeypatch):
    module = _module(tmp_path_factory, "too_deep_chain", _chain_source(300))
    monkeypatch.setattr(deep_recursion, "DEEP_RECURSION_LIMIT", 1500)
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        with pytest.raises(UnsupportedSyntaxError) as caught:
            adcompile.compile(module.f, backend="python")(X)
    finally:
        sys.setrecursionlimit(previous)
    message = str(caught.value)
    assert "f nests too deeply" in message and "too_deep_chain.py" in message
    assert "Split the expression" in message and "one after another" in message
    assert sys.getrecursionlimit() == previous


def test_the_raised_limit_is_restored_after_compiling(chain):
    before = sys.getrecursionlimit()
    adcompile.compile(chain.f, backend="python")(X)
    assert sys.getrecursionlimit() == before
