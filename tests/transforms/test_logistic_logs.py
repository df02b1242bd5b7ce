"""Logarithms of the logistic function, differentiated as one function
(``adcompile/transforms/reverse/logistic_logs.py``).

Binary cross-entropy written the natural way gets a backward pass without divisions; whatever
the pass decides, the gradient must match central differences, on both backends, in every
operand order, in float32, in scalar loops and under second order. The pass's invariant (the
logarithm reads the values the exp and the division computed from one exponent) is tested on
programs that break it: a loop that reads the previous iteration's probability, a probability
written in place, an exponent reassigned in between.
"""
import numpy as np
import pytest

import adcompile
from adcompile.frontend.parse import translate
from adcompile.ir.nodes import Assign, walk
from adcompile.ir.types import Type
from adcompile.transforms.reverse.logistic_logs import see_through_logistic_logs
from oracles import gradient_by_differences, hessian_by_differences

BACKENDS = ["numba", "python"]


def cross_entropy(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def cross_entropy_swapped(w, X, y):
    z = X @ w
    p = 1 / (np.exp(-z) + 1)
    return -np.sum(np.log(1.0 - p) * (1.0 - y) + np.log(p) * y) / y.shape[0]


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def cross_entropy_helper(w, X, y):
    p = sigmoid(X @ w)
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def cross_entropy_loop(w, X, y):
    total = 0.0
    for i in range(X.shape[0]):
        p = 1.0 / (1.0 + np.exp(-np.dot(X[i], w)))
        total += y[i] * np.log(p) + (1 - y[i]) * np.log(1 - p)
    return -total / X.shape[0]


def positive_exponent(w, X, y):
    q = 1.0 / (1.0 + np.exp(X @ w))   # the logistic of -z
    return -np.mean(y * np.log(1.0 - q) + (1.0 - y) * np.log(q)) + np.sum(q * q)


def data(n=40, d=5, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(dtype)
    y = (rng.random(n) > 0.5).astype(dtype)
    w = (0.5 * rng.standard_normal(d)).astype(dtype)
    return w, X, y


def ir_of(fn, *types):
    return translate(fn, list(types))


def rewritten(fn, *types):
    return sorted(s.prim for s in walk(see_through_logistic_logs(ir_of(fn, *types)).body)
                  if isinstance(s, Assign) and s.prim.startswith("log"))


VECTOR_TYPES = (Type("f8", 1), Type("f8", 2), Type("f8", 1))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("loss", [cross_entropy, cross_entropy_swapped, cross_entropy_helper, cross_entropy_loop,
                                  positive_exponent])
def test_cross_entropy_gradient_matches_differences(loss, backend):
    w, X, y = data()
    gradient = adcompile.grad(adcompile.compile(loss, backend=backend))(w, X, y)
    np.testing.assert_allclose(gradient, gradient_by_differences(loss, (w, X, y)), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("loss", [cross_entropy, cross_entropy_swapped, cross_entropy_helper, cross_entropy_loop,
                                  positive_exponent])
def test_every_form_is_rewritten(loss):
    assert rewritten(loss, *VECTOR_TYPES) == ["log_of_logistic", "log_of_logistic_complement"]


def test_the_backward_pass_divides_nowhere():
    source = adcompile.source(adcompile.grad(adcompile.compile(cross_entropy, backend="python")), *data())
    backward = [line for line in source[source.index("# backward"):].splitlines() if "#" not in line]
    assert backward and not any("div_nz" in line or "/" in line.replace("/ float(", "") for line in backward), backward


def test_float32_gradient_matches_differences():
    w, X, y = data(dtype=np.float32)
    gradient = adcompile.grad(adcompile.compile(cross_entropy))(w, X, y)
    assert gradient.dtype == np.float32
    expected = gradient_by_differences(cross_entropy, tuple(a.astype(np.float64) for a in (w, X, y)))
    np.testing.assert_allclose(gradient, expected, rtol=2e-4, atol=1e-6)


def test_saturated_logits_keep_a_finite_exact_gradient():
    """Logits of +-30: 1 - p rounds to 0 near p = 1 but the rule never forms it, so the
    gradient is y - p exactly as written by hand, where the chained rules divide by 1 - p."""
    X = np.array([[30.0], [-30.0], [30.0], [-30.0]])
    y = np.array([1.0, 0.0, 0.0, 1.0])
    w = np.array([1.0])
    gradient = adcompile.grad(adcompile.compile(cross_entropy))(w, X, y)
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    np.testing.assert_allclose(gradient, X.T @ (p - y) / 4, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_matches_differences_of_the_gradient(backend):
    w, X, y = data(n=30, d=4)
    hessian = adcompile.hessian(adcompile.compile(cross_entropy, backend=backend))(w, X, y)
    gradient = adcompile.grad(adcompile.compile(cross_entropy, backend="python"))
    np.testing.assert_allclose(hessian, hessian_by_differences(gradient, (w, X, y)), rtol=1e-5, atol=1e-8)


# ------------------------------------------------------------ programs that break the invariant
def previous_probability(x, n):
    p = 0.5
    total = 0.0
    for i in range(n):
        total = total + np.log(p)        # the previous iteration's p: not a function of this x[i]
        u = -x[i]
        e = np.exp(u)
        p = 1.0 / (1.0 + e)
    return total + np.log(p)


def exponent_updated_in_loop(x, n):
    u = -x[0]
    total = 0.0
    for i in range(n):
        e = np.exp(u)
        p = 1.0 / (1.0 + e)
        u = u * 0.5 - x[i]               # the exponent changes between the exp and the logarithm
        total = total + np.log(p) * u
    return total


def written_in_place(x):
    e = np.exp(-x)
    p = 1.0 / (1.0 + e)
    p[0] = 0.25
    return np.sum(np.log(p))


def shifted_one(x):
    e = np.exp(-x)
    p = 2.0 / (1.0 + e)                  # not a logistic function
    return np.sum(np.log(p) + np.log(1.0 - 0.5 * p))


def clipped(x):
    p = 1.0 / (1.0 + np.exp(-x))
    return np.sum(np.log(p + 1e-9) + np.log(1.0 - p + 1e-9))


@pytest.mark.parametrize("fn, types, logarithms", [
    (previous_probability, (Type("f8", 1), Type("i8", 0)), 2),
    (exponent_updated_in_loop, (Type("f8", 1), Type("i8", 0)), 1),
    (written_in_place, (Type("f8", 1),), 1),
    (shifted_one, (Type("f8", 1),), 2),
    (clipped, (Type("f8", 1),), 2),
])
def test_logarithms_breaking_the_invariant_are_kept(fn, types, logarithms):
    assert rewritten(fn, *types) == ["log"] * logarithms


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, extra", [(previous_probability, (6,)), (exponent_updated_in_loop, (6,)),
                                       (written_in_place, ()), (shifted_one, ()), (clipped, ())])
def test_programs_breaking_the_invariant_keep_right_gradients(fn, extra, backend):
    x = np.random.default_rng(3).uniform(-1.0, 1.0, 6)
    args = (x,) + extra
    gradient = adcompile.grad(adcompile.compile(fn, backend=backend))(*args)
    np.testing.assert_allclose(gradient, gradient_by_differences(fn, args), rtol=1e-6, atol=1e-9)

