"""Default and keyword arguments of the differentiated function work as in Python (issue 14),
for ``compile`` and every derived function, under both backends: each row of the table calls
a compiled or derived function with some arguments left to their defaults or given by
keyword, and compares with the same call spelled out positionally in full (checked in turn
against the plain Python function or central differences), so a default that is ignored or a
keyword bound to the wrong parameter changes the numbers.
"""
import numpy as np
import pytest

import adcompile
from adcompile.errors import CallError


def focal(logits, y, gamma=2.0, alpha=0.25):
    p = 1.0 / (1.0 + np.exp(-logits))
    pt = y * p + (1 - y) * (1 - p)
    weight = y * alpha + (1 - y) * (1 - alpha)
    return -np.sum(weight * (1 - pt) ** gamma * np.log(pt))


def vector_focal(logits, y, gamma=2.0, alpha=0.25):
    p = 1.0 / (1.0 + np.exp(-logits))
    return alpha * (1 - p) ** gamma * y + p * gamma


def gamma_sensitivity(logits, y, gamma=2.0):
    return adcompile.grad(focal, wrt="gamma")(logits, y, gamma=gamma) * np.sum(logits * logits)


def gamma_sensitivity_in_full(logits, y, gamma):
    return adcompile.grad(focal, wrt=2)(logits, y, gamma, 0.25) * np.sum(logits * logits)


X = np.array([0.3, -1.2, 2.0, 0.7])
Y = np.array([1.0, 0.0, 1.0, 0.0])
T = np.array([0.5, -1.0, 0.25, 2.0])


def _grad(f, **options):
    return adcompile.grad(f, **options)


# (name, call with defaults/keywords, the same call written out in full)
CALLS = [
    ("compile, defaults", lambda f: f(X, Y), lambda f: f(X, Y, 2.0, 0.25)),
    ("compile, keyword", lambda f: f(X, Y, gamma=3.0), lambda f: f(X, Y, 3.0, 0.25)),
    ("compile, all keywords", lambda f: f(y=Y, logits=X, alpha=0.5), lambda f: f(X, Y, 2.0, 0.5)),
    ("grad, defaults", lambda f: adcompile.grad(f)(X, Y), lambda f: adcompile.grad(f)(X, Y, 2.0, 0.25)),
    ("grad, keyword", lambda f: adcompile.grad(f)(X, Y, gamma=3.0), lambda f: adcompile.grad(f)(X, Y, 3.0, 0.25)),
    ("grad, keyword out of order", lambda f: adcompile.grad(f)(X, alpha=0.4, y=Y),
     lambda f: adcompile.grad(f)(X, Y, 2.0, 0.4)),
    ("grad wrt a defaulted parameter", lambda f: adcompile.grad(f, wrt="gamma")(X, Y),
     lambda f: adcompile.grad(f, wrt=2)(X, Y, 2.0, 0.25)),
    ("grad wrt defaulted parameters, keyword", lambda f: adcompile.grad(f, wrt=("gamma", "alpha"))(X, Y, alpha=0.3),
     lambda f: adcompile.grad(f, wrt=(2, 3))(X, Y, 2.0, 0.3)),
    ("value_and_grad, keyword", lambda f: adcompile.value_and_grad(f)(X, Y, gamma=1.5),
     lambda f: adcompile.value_and_grad(f)(X, Y, 1.5, 0.25)),
    ("value_and_grad wrt a default", lambda f: adcompile.value_and_grad(f, wrt=(0, "alpha"))(X, Y),
     lambda f: adcompile.value_and_grad(f, wrt=(0, 3))(X, Y, 2.0, 0.25)),
    ("vjp, defaults", lambda f: adcompile.vjp(f, X, Y)[1](1.0), lambda f: adcompile.vjp(f, X, Y, 2.0, 0.25)[1](1.0)),
    ("vjp, keyword", lambda f: adcompile.vjp(f, X, Y, gamma=3.0)[1](1.0),
     lambda f: adcompile.vjp(f, X, Y, 3.0, 0.25)[1](1.0)),
    ("vjp wrt a default", lambda f: adcompile.vjp(f, X, Y, wrt="alpha", gamma=3.0)[1](1.0),
     lambda f: adcompile.vjp(f, X, Y, 3.0, 0.25, wrt=3)[1](1.0)),
    ("jvp, defaults", lambda f: adcompile.jvp(f, (X, Y), (T, None)),
     lambda f: adcompile.jvp(f, (X, Y, 2.0, 0.25), (T, None, None, None))),
    ("jvp, tangent of a default given", lambda f: adcompile.jvp(f, (X, Y, 2.0), (T, None, 1.0)),
     lambda f: adcompile.jvp(f, (X, Y, 2.0, 0.25), (T, None, 1.0, None))),
    ("hvp, defaults", lambda f: adcompile.hvp(f, (X, Y), (T, None)),
     lambda f: adcompile.hvp(f, (X, Y, 2.0, 0.25), (T, None, None, None))),
    ("hessian, defaults", lambda f: adcompile.hessian(f)(X, Y), lambda f: adcompile.hessian(f)(X, Y, 2.0, 0.25)),
    ("hessian, keyword", lambda f: adcompile.hessian(f)(X, Y, gamma=3.0),
     lambda f: adcompile.hessian(f)(X, Y, 3.0, 0.25)),
    ("hessian wrt a default", lambda f: adcompile.hessian(f, wrt="gamma")(X, Y, alpha=0.5),
     lambda f: adcompile.hessian(f, wrt=2)(X, Y, 2.0, 0.5)),
    ("grad of a function calling grad with defaults", lambda f: adcompile.grad(gamma_sensitivity)(X, Y),
     lambda f: adcompile.grad(gamma_sensitivity_in_full)(X, Y, 2.0)),
]

VECTOR_CALLS = [
    ("jacobian, defaults", lambda f: adcompile.jacobian(f)(X, Y), lambda f: adcompile.jacobian(f)(X, Y, 2.0, 0.25)),
    ("jacobian, keyword", lambda f: adcompile.jacobian(f)(X, Y, alpha=0.5),
     lambda f: adcompile.jacobian(f)(X, Y, 2.0, 0.5)),
    ("jacobian fwd wrt a default", lambda f: adcompile.jacobian(f, wrt="gamma", mode="fwd")(X, Y, gamma=3.0),
     lambda f: adcompile.jacobian(f, wrt=2, mode="fwd")(X, Y, 3.0, 0.25)),
    ("vjp of a vector, keyword", lambda f: adcompile.vjp(f, X, Y, alpha=0.5)[1](T),
     lambda f: adcompile.vjp(f, X, Y, 2.0, 0.5)[1](T)),
]


def _assert_same(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif a is None or b is None:
        assert a is None and b is None
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _table(rows, fn):
    return [pytest.param(fn, short, full, id=name) for name, short, full in rows]


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("fn, short, full", _table(CALLS, focal) + _table(VECTOR_CALLS, vector_focal))
def test_defaults_and_keywords_bind_as_in_python(fn, short, full, backend):
    compiled = adcompile.compile(fn, backend=backend)
    _assert_same(short(compiled), full(compiled))


def test_the_full_calls_are_right():
    """The reference calls of the table agree with Python and central differences, so a
    wrong default cannot hide in both sides."""
    compiled = adcompile.compile(focal, backend="python")
    assert np.isclose(compiled(X, Y, 3.0, 0.5), focal(X, Y, 3.0, 0.5), rtol=1e-12)
    assert adcompile.gradcheck(compiled, (X, Y, 2.0, 0.25), wrt=(0, 2, 3))
    h = 1e-6
    numeric = (focal(X, Y, 2.0 + h, 0.25) - focal(X, Y, 2.0 - h, 0.25)) / (2 * h)
    assert np.isclose(adcompile.grad(compiled, wrt="gamma")(X, Y), numeric, rtol=1e-6)


def test_plain_python_function_with_defaults():
    assert np.allclose(adcompile.grad(focal)(X, Y), adcompile.grad(focal)(X, Y, 2.0, 0.25))
    assert np.allclose(adcompile.grad(focal)(X, Y, gamma=3.0), adcompile.grad(focal)(X, Y, 3.0))


def test_defaults_inside_compiled_code():
    """A derived function called in compiled code with its defaults left out or keywords."""
    @adcompile.compile(backend="python")
    def step(w, y):
        return w - 0.1 * adcompile.grad(focal)(w, y, alpha=0.5) - adcompile.grad(focal)(w, y)

    expected = X - 0.1 * adcompile.grad(focal)(X, Y, 2.0, 0.5) - adcompile.grad(focal)(X, Y, 2.0, 0.25)
    np.testing.assert_allclose(step(X, Y), expected, rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda f: f(X), "missing a required argument: 'y'"),
    (lambda f: adcompile.grad(f)(X, Y, beta=1.0), "unexpected keyword argument 'beta'"),
    (lambda f: adcompile.grad(f)(X, Y, 2.0, gamma=3.0), "multiple values for argument 'gamma'"),
    (lambda f: adcompile.hessian(f)(X, Y, 2.0, 0.25, 1.0), "too many positional arguments"),
    (lambda f: adcompile.value_and_grad(f)(X, logits=X), "multiple values for argument 'logits'"),
])
def test_wrong_calls_are_told_as_python_tells_them(call, message):
    compiled = adcompile.compile(focal, backend="python")
    with pytest.raises(CallError, match=message):
        call(compiled)
