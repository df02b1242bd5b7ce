"""The function forms ``hvp``, ``jvp``, ``vjp``, ``gradcheck`` reuse the derived function they build.

Each test counts the specialisations built (the calls of ``generate``, which turns a
specialisation's IR into source) rather than timing anything, and checks the values against
finite differences or exact derivatives, so a cache that returned a wrong or stale derivative
fails. Plain Python functions are compiled with the Python
backend here (``as_compiled`` patched) to keep the tests fast.
"""
import numpy as np
import pytest

import adcompile
from adcompile.api import derived_cache
from adcompile.api import specialised
from adcompile.errors import CallError
from oracles import directional_difference


@pytest.fixture
def ir_builds(monkeypatch):
    """A list that grows by the name of each function specialised (its source generated)."""
    built = []
    original = specialised.generate

    def counting_generate(fn_ir, **options):
        built.append(fn_ir.name)
        return original(fn_ir, **options)
    monkeypatch.setattr(specialised, "generate", counting_generate)
    monkeypatch.setattr(derived_cache, "as_compiled", lambda f: adcompile.compile(f, backend="python"))
    return built


def _objective(x, A):
    return np.sum(np.log(1.0 + np.exp(A @ x))) + 0.5 * x @ x


def test_repeated_hvp_builds_once_and_agrees_with_differences(ir_builds):
    f = adcompile.compile(_objective, backend="python")
    rng = np.random.default_rng(0)
    A, x = rng.standard_normal((7, 4)), rng.standard_normal(4)
    gradient = adcompile.grad(f)
    for _ in range(3):
        v = rng.standard_normal(4)
        product = adcompile.hvp(f, (x, A), (v, None))
        np.testing.assert_allclose(product, directional_difference(gradient, (x, A), {0: v}), rtol=1e-6, atol=1e-7)
    assert len([name for name in ir_builds if name.endswith("grad_jvp")]) == 1


def test_repeated_jvp_and_vjp_build_once(ir_builds):
    @adcompile.compile(backend="python")
    def f(x, c):
        return c * np.sin(x)
    x = np.array([0.3, -1.2, 2.0])
    for c in (2.0, 3.0):
        out, tangent = adcompile.jvp(f, (x, c), (np.ones(3), None))
        np.testing.assert_allclose(tangent, c * np.cos(x))
        out, pullback = adcompile.vjp(f, x, c)
        dx, dc = pullback(np.ones(3))
        np.testing.assert_allclose(dx, c * np.cos(x))
        np.testing.assert_allclose(dc, np.sum(np.sin(x)))
    assert len(ir_builds) == len(set(ir_builds)), ir_builds


def test_repeated_gradcheck_builds_once(ir_builds):
    @adcompile.compile(backend="python")
    def f(x, k):
        return np.sum(np.tanh(k * x))
    built_by_the_first = None
    for _ in range(3):
        assert adcompile.gradcheck(f, (np.array([0.1, -0.4, 0.7]), 1.5))
        assert adcompile.gradgradcheck(f, (np.array([0.1, -0.4, 0.7]), 1.5), wrt=0)
        built_by_the_first = built_by_the_first or list(ir_builds)
    assert ir_builds == built_by_the_first


def test_a_plain_function_compiles_once(ir_builds):
    def f(x):
        return np.sum(x ** 3)
    x = np.array([1.0, 2.0])
    for _ in range(3):
        np.testing.assert_allclose(adcompile.hvp(f, (x,), (np.array([1.0, 1.0]),)), 6 * x)
    assert derived_cache.compiled_function(f) is derived_cache.compiled_function(f)
    assert len(ir_builds) == 1, ir_builds  # the Hessian-vector product


def test_a_redefined_function_gets_a_new_derivative(ir_builds):
    x, v = np.array([1.0, 2.0]), np.array([1.0, 1.0])

    def f(x):
        return np.sum(x ** 3)
    np.testing.assert_allclose(adcompile.hvp(f, (x,), (v,)), 6 * x)

    def f(x):  # noqa: F811  (redefined, as in a notebook cell run again)
        return np.sum(x ** 4)
    np.testing.assert_allclose(adcompile.hvp(f, (x,), (v,)), 12 * x ** 2)


def test_new_code_defaults_and_closure_values_are_seen(ir_builds):
    x, v = np.array([1.0, 2.0]), np.array([1.0, 1.0])

    def f(x, k=1.0):
        return k * np.sum(x ** 3)
    np.testing.assert_allclose(adcompile.hvp(f, (x,), (v,)), 6 * x)
    f.__defaults__ = (2.0,)
    np.testing.assert_allclose(adcompile.hvp(f, (x,), (v,)), 12 * x)

    def quartic(x, k=1.0):
        return k * np.sum(x ** 4)
    f.__code__ = quartic.__code__
    np.testing.assert_allclose(adcompile.hvp(f, (x,), (v,)), 24 * x ** 2)

    scale = 1.0

    def g(x):
        return scale * np.sum(x ** 3)
    np.testing.assert_allclose(adcompile.jvp(g, (x,), (v,))[1], 3 * x ** 2 @ v)
    scale = 3.0
    np.testing.assert_allclose(adcompile.jvp(g, (x,), (v,))[1], 9 * x ** 2 @ v)


SCALE = 1.0


def _scaled_cube(x):
    return SCALE * np.sum(x ** 3)


def test_a_rebound_global_is_seen(ir_builds, monkeypatch):
    x = np.array([1.0, -2.0])
    _, pullback = adcompile.vjp(_scaled_cube, x)
    np.testing.assert_allclose(pullback(1.0)[0], 3 * x ** 2)
    monkeypatch.setattr(f"{__name__}.SCALE", 2.0)
    _, pullback = adcompile.vjp(_scaled_cube, x)
    np.testing.assert_allclose(pullback(1.0)[0], 6 * x ** 2)


HELPER_MODULE = """
import numpy as np
K = 2.0

def helper(x):
    return K * np.sin(x)

def scale():
    return K
"""


def test_a_global_a_helper_reads_in_another_module_is_seen(ir_builds, monkeypatch, tmp_path):
    (tmp_path / "stale_helpers.py").write_text(HELPER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import stale_helpers

    def through_helper(x):
        return np.sum(stale_helpers.helper(x) ** 2)

    x, v = np.array([0.1, 0.4, -0.3]), np.array([1.0, -0.5, 2.0])
    for k in (2.0, 7.0):
        monkeypatch.setattr(stale_helpers, "K", k)
        _, tangent = adcompile.jvp(through_helper, (x,), (v,))
        np.testing.assert_allclose(tangent, np.sum(2 * k ** 2 * np.sin(x) * np.cos(x) * v))
    builds = len(ir_builds)
    adcompile.jvp(through_helper, (x,), (v,))
    assert len(ir_builds) == builds  # unchanged reads: the cached derivative


def test_errors_stay_clear_on_the_cached_path(ir_builds):
    @adcompile.compile(backend="python")
    def f(x):
        return np.sum(x ** 3)
    x = np.array([1.0, 2.0])
    adcompile.hvp(f, (x,), (np.ones(2),))
    with pytest.raises(CallError, match="tangent for 'x' has shape"):
        adcompile.hvp(f, (x,), (np.ones(3),))
    with pytest.raises(CallError, match="1 primals but 2 tangents"):
        adcompile.hvp(f, (x,), (np.ones(2), None))
