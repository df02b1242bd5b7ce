"""Lambdas as compiled functions: ``adcompile.grad(lambda x: np.sum(np.sin(x) ** 2))``.

The lambda's expression is read from its file (``adcompile/frontend/lambdas.py``); several
lambdas on one line are told apart by the positions of their code. Every derivative is
compared with central differences, on both backends.
"""
import inspect
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adcompile
from adcompile.errors import SourceUnavailableError
from oracles import gradient_by_differences, hessian_by_second_differences, jacobian_by_differences

BACKENDS = ["python", "numba"]
SCALE = 0.5  # a global the lambdas read


def _x(dtype=np.float64):
    return np.array([0.3, -1.2, 2.0, 0.7], dtype=dtype)


def _line_of(text):
    """The line number of ``text`` in this file (for the generated names)."""
    lines = inspect.getsource(sys.modules[__name__]).splitlines()
    return next(k for k, line in enumerate(lines, start=1) if text in line and "_line_of" not in line)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_a_lambda_matches_differences(backend):
    f = adcompile.compile(lambda x: np.sum(np.sin(x) ** 2), backend=backend)
    x = _x()
    np.testing.assert_allclose(adcompile.grad(f)(x), gradient_by_differences(f, (x,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(adcompile.grad(f)(x), 2 * np.sin(x) * np.cos(x), rtol=1e-12)


def test_grad_of_a_plain_lambda_and_its_name():
    g = adcompile.grad(lambda x: np.sum(np.sin(x) ** 2))  # compiled with numba by grad
    x = _x()
    np.testing.assert_allclose(g(x), gradient_by_differences(lambda v: np.sum(np.sin(v) ** 2), (x,)),
                               rtol=1e-6, atol=1e-8)
    line = _line_of("g = adcompile.grad(lambda x: np.sum(np.sin(x) ** 2))")
    assert f"def lambda_{line}_grad(x):" in adcompile.source(g)


@pytest.mark.parametrize("backend", BACKENDS)
def test_compile_a_lambda_of_two_arguments(backend):
    f = adcompile.compile(lambda x, y: np.sum(x * y) + SCALE * np.sum(x ** 2), backend=backend)
    x, y = _x(), _x()[::-1].copy()
    assert np.isclose(f(x, y), np.sum(x * y) + SCALE * np.sum(x ** 2), rtol=1e-12)
    gx, gy = adcompile.grad(f, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, gradient_by_differences(f, (x, y), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, gradient_by_differences(f, (x, y), 1), rtol=1e-6, atol=1e-8)


def test_value_and_grad_hessian_and_jacobian_of_lambdas():
    f = adcompile.compile(lambda x: np.sum(np.exp(0.3 * x) * x ** 2), backend="python")
    x = _x()
    value, gradient = adcompile.value_and_grad(f)(x)
    assert np.isclose(value, np.sum(np.exp(0.3 * x) * x ** 2), rtol=1e-12)
    np.testing.assert_allclose(gradient, gradient_by_differences(f, (x,)), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(adcompile.hessian(f)(x), hessian_by_second_differences(f, (x,)),
                               rtol=1e-4, atol=1e-6)
    h = adcompile.compile(lambda x: np.tanh(x) * x[0], backend="python")
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(adcompile.jacobian(h, mode=mode)(x), jacobian_by_differences(h, (x,)),
                                   rtol=1e-6, atol=1e-8)


def test_a_lambda_assigned_to_a_name_is_named_after_it():
    loss = lambda w, y: np.sum((w * y - 1.0) ** 2)  # noqa: E731
    g = adcompile.grad(adcompile.compile(loss, backend="python"))
    x = _x()
    np.testing.assert_allclose(g(x, x), gradient_by_differences(loss, (x, x)), rtol=1e-6, atol=1e-8)
    source = adcompile.source(g)
    assert "def loss_grad(w, y):" in source
    assert "# grad of: loss = lambda w, y: np.sum((w * y - 1.0) ** 2)" in source


def _scaled_loss(scale, offset):
    return lambda x: scale * np.sum((x - offset) ** 2) * SCALE


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lambda_closing_over_constants_and_globals(backend):
    loss = _scaled_loss(3.0, np.array([1.0, 0.0, -1.0, 2.0]))
    f = adcompile.compile(loss, backend=backend)
    x = _x()
    assert np.isclose(f(x), loss(x), rtol=1e-12)
    np.testing.assert_allclose(adcompile.grad(f)(x), gradient_by_differences(loss, (x,)), rtol=1e-6, atol=1e-8)


@adcompile.compile(backend="python")
def _compiled_energy(x):
    return np.sum(x ** 4)


def _plain_helper(x):
    return np.cos(x) * x


def test_a_lambda_calling_compiled_and_plain_functions():
    f = adcompile.compile(lambda x: _compiled_energy(x) + np.sum(_plain_helper(x)), backend="python")
    x = _x()
    assert np.isclose(f(x), np.sum(x ** 4) + np.sum(np.cos(x) * x), rtol=1e-12)
    np.testing.assert_allclose(adcompile.grad(f)(x), gradient_by_differences(f, (x,)), rtol=1e-6, atol=1e-8)


def test_several_lambdas_on_one_line_are_told_apart_by_position():
    cube, square = (lambda x: np.sum(x ** 3)), (lambda x: np.sum(x ** 2))
    x = _x()
    np.testing.assert_allclose(adcompile.grad(adcompile.compile(cube, backend="python"))(x), 3 * x ** 2)
    np.testing.assert_allclose(adcompile.grad(adcompile.compile(square, backend="python"))(x), 2 * x)
    line = _line_of("cube, square = (lambda x")
    assert f"def lambda_{line}_2_grad(x)" in adcompile.source(adcompile.grad(adcompile.compile(square, backend="python")), x)


def test_a_lambda_inside_a_lambda():
    f = adcompile.compile(lambda x: np.sum((lambda v, k=2.0: v ** 3 * k)(x)), backend="python")
    x = _x()
    np.testing.assert_allclose(adcompile.grad(f)(x), 6.0 * x ** 2, rtol=1e-12)


def test_a_lambda_in_compiled_code_is_inlined():
    @adcompile.compile(backend="python")
    def f(x):
        square = lambda v: v * v  # noqa: E731
        return np.sum(square(np.sin(x)))
    x = _x()
    np.testing.assert_allclose(adcompile.grad(f)(x), gradient_by_differences(f, (x,)), rtol=1e-6, atol=1e-8)


def test_float32_lambda_keeps_its_dtype():
    g = adcompile.grad(adcompile.compile(lambda x: np.sum(x * x), backend="python"))
    x = _x(np.float32)
    result = g(x)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, 2 * x, rtol=1e-6)


def test_a_lambda_made_by_exec_is_a_clear_error():
    namespace = {"np": np}
    exec("f = lambda x: np.sum(x)", namespace)
    with pytest.raises(SourceUnavailableError, match=r"lambda defined at <string>, line 1.*exec\(\)"):
        adcompile.grad(namespace["f"])(_x())


def _run(code, *flags, tmp_path):
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, *flags, str(path)], capture_output=True, text=True, timeout=300)


SAME_LINE = """
    import numpy as np, adcompile
    f, g = (lambda x: np.sum(x ** 3)), (lambda x: np.sum(x ** 2))
    try:
        adcompile.grad(adcompile.compile(g, backend="python"))(np.ones(2))
        print("ok")
    except adcompile.AdCompileError as error:
        print(type(error).__name__, error)
"""


def test_without_positions_lambdas_with_the_same_parameters_on_one_line_are_an_error(tmp_path):
    done = _run(SAME_LINE, "-X", "no_debug_ranges", tmp_path=tmp_path)
    assert "SourceUnavailableError" in done.stdout, done.stdout + done.stderr
    assert "several lambdas with these parameters on this line" in done.stdout
    assert 'script.py", line 3' in done.stdout
    assert _run(SAME_LINE, tmp_path=tmp_path).stdout.strip() == "ok"  # with positions they are told apart


def test_a_lambda_typed_at_the_prompt_is_a_clear_error():
    code = "import numpy as np, adcompile\nadcompile.grad(lambda x: np.sum(x))(np.ones(2))\n"
    done = subprocess.run([sys.executable], input=code, capture_output=True, text=True, timeout=300)
    assert "SourceUnavailableError: cannot compile the lambda defined at <stdin>, line 2" in done.stderr
    assert "Traceback" in done.stderr and "adcompile/frontend" not in done.stderr  # no internal frames
