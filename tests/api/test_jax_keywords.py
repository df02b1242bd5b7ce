"""The keywords JAX users type, with JAX's call shapes: ``grad``/``value_and_grad`` with
``has_aux`` (``(g, aux)``, ``((v, aux), g)``) and ``argnums``; ``jacrev``/``jacfwd``;
``hessian`` of a dict argument (a dict of dicts); ``compile(static_argnums=...,
static_argnames=...)`` -- every derivative against central differences, on both backends."""
import numpy as np
import pytest

import adcompile
from adcompile.errors import CallError
from oracles import (assert_trees_close, gradient_by_differences, hessian_by_differences, jacobian_by_differences,
                     tree_gradient_by_differences)

BACKENDS = ["python", "numba"]
RNG = np.random.default_rng(11)
W = RNG.normal(size=3)
X = RNG.normal(size=(5, 3))
Y = RNG.normal(size=5)


def loss_with_aux(w, X, y):
    pred = X @ w
    acc = w * 1.0
    for _ in range(3):  # aux read after a loop that rebinds it: the backward sweep must not change it
        acc = acc * 0.5 + pred[0]
    return np.mean((pred - y) ** 2), {"pred": pred, "acc": acc, "first": pred[0]}


def plain_loss(w, X, y):
    return loss_with_aux(w, X, y)[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_has_aux_returns_gradient_and_aux_as_jax(backend):
    f = adcompile.compile(loss_with_aux, backend=backend)
    expected_aux = loss_with_aux(W, X, Y)[1]
    g, aux = adcompile.grad(f, has_aux=True)(W, X, Y)
    np.testing.assert_allclose(g, gradient_by_differences(plain_loss, [W, X, Y]), rtol=1e-6, atol=1e-8)
    assert_trees_close(aux, expected_aux, 1e-12, 1e-12, "aux")
    (value, aux), g2 = adcompile.value_and_grad(f, has_aux=True)(W, X, Y)
    assert value == pytest.approx(plain_loss(W, X, Y))
    assert_trees_close(aux, expected_aux, 1e-12, 1e-12, "aux of value_and_grad")
    np.testing.assert_allclose(g2, g, rtol=1e-12)
    (gw, gX), aux = adcompile.grad(f, argnums=(0, 1), has_aux=True)(W, X, Y)
    np.testing.assert_allclose(gX, gradient_by_differences(plain_loss, [W, X, Y], 1), rtol=1e-6, atol=1e-8)


def dict_loss_with_aux(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return np.sum(h ** 2), h


@pytest.mark.parametrize("backend", BACKENDS)
def test_has_aux_with_a_dict_argument(backend):
    params = {"W": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
    f = adcompile.compile(dict_loss_with_aux, backend=backend)
    (value, h), grads = adcompile.value_and_grad(f, has_aux=True)(params, X)
    np.testing.assert_allclose(h, dict_loss_with_aux(params, X)[1], rtol=1e-12)
    expected = tree_gradient_by_differences(lambda p, x: dict_loss_with_aux(p, x)[0], [params, X])
    assert_trees_close(grads, expected, 1e-6, 1e-8, "dict grads with aux")
    grads, h = adcompile.grad(f, has_aux=True)(params, X)
    assert_trees_close(grads, expected, 1e-6, 1e-8, "grad with aux")


def test_has_aux_needs_a_pair_and_argnums_excludes_wrt():
    with pytest.raises(CallError, match=r"has_aux=True needs a function returning a pair \(loss, aux\)"):
        adcompile.grad(adcompile.compile(plain_loss, backend="python"), has_aux=True)(W, X, Y)
    with pytest.raises(CallError, match="not both"):
        adcompile.grad(plain_loss, wrt=0, argnums=0)
    g = adcompile.grad(adcompile.compile(plain_loss, backend="python"), argnums="X")(W, X, Y)
    np.testing.assert_allclose(g, gradient_by_differences(plain_loss, [W, X, Y], 1), rtol=1e-6, atol=1e-8)


def squash(w, X):
    return np.tanh(X @ w) * w[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_jacrev_and_jacfwd_are_the_two_jacobians(backend):
    f = adcompile.compile(squash, backend=backend)
    expected = jacobian_by_differences(squash, [W, X])
    np.testing.assert_allclose(adcompile.jacrev(f)(W, X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(adcompile.jacfwd(f)(W, X), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(adcompile.jacfwd(f, argnums=1)(W, X), jacobian_by_differences(squash, [W, X], 1),
                               rtol=1e-6, atol=1e-8)


def coupled(params, x):
    return np.sum(np.sin(params["a"] * x) * params["b"]) + params["b"][0] ** 2 * np.sum(params["a"] ** 3)


def coupled_outputs(params, x):
    return np.sin(params["a"] * x) * params["b"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_and_jacobian_of_a_dict_argument_have_jax_layout(backend):
    params = {"a": np.array([1.0, 2.0]), "b": np.array([0.5, -0.3])}
    x = np.array([0.3, 0.7])
    H = adcompile.hessian(adcompile.compile(coupled, backend=backend))(params, x)
    grad = adcompile.grad(adcompile.compile(coupled, backend="python"))
    for a in ("a", "b"):
        for b in ("a", "b"):
            def gradient_part(value, b=b, a=a):  # d(grad[a]) / d(params[b])
                return grad({**params, b: value}, x)[a]
            expected = jacobian_by_differences(gradient_part, [params[b]], 0, eps=1e-5)
            np.testing.assert_allclose(H[a][b], expected, rtol=1e-5, atol=1e-7, err_msg=f"H[{a}][{b}]")
    np.testing.assert_allclose(H["a"]["b"], H["b"]["a"].T, rtol=1e-10)
    J = adcompile.jacrev(adcompile.compile(coupled_outputs, backend=backend))(params, x)
    J_fwd = adcompile.jacfwd(adcompile.compile(coupled_outputs, backend=backend))(params, x)
    for key in ("a", "b"):
        expected = jacobian_by_differences(lambda v, key=key: coupled_outputs({**params, key: v}, x), [params[key]])
        np.testing.assert_allclose(J[key], expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(J_fwd[key], expected, rtol=1e-6, atol=1e-8)
    # the Hessian of a plain argument, next to a dict argument
    hx = adcompile.hessian(adcompile.compile(coupled, backend=backend), argnums=1)(params, x)
    grad_x = adcompile.grad(adcompile.compile(coupled, backend="python"), wrt=1)
    np.testing.assert_allclose(hx, hessian_by_differences(lambda x: grad_x(params, x), [x], 0),
                               rtol=1e-5, atol=1e-7)


def network(x, activation, sizes):
    y = x
    for scale in sizes:
        y = y * scale
    if activation == "tanh":
        return np.sum(np.tanh(y))
    return np.sum(y ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_static_arguments_are_constants_with_a_specialisation_each(backend):
    f = adcompile.compile(network, backend=backend, static_argnames=("activation",), static_argnums=2)
    x = RNG.normal(size=3)
    for activation, sizes in (("tanh", (2, 3)), ("square", (2,)), ("tanh", (1,))):
        assert f(x, activation, sizes) == pytest.approx(network(x, activation, sizes))
        g = adcompile.grad(f)(x, activation, sizes=sizes)
        expected = gradient_by_differences(lambda x: network(x, activation, sizes), [x])
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-8)
    text = adcompile.source(adcompile.grad(f), x, "square", (2,))
    assert "def network_grad(x)" in text and "tanh" not in text


def test_static_argument_errors():
    f = adcompile.compile(network, backend="python", static_argnames=("activation", "sizes"))
    x = RNG.normal(size=3)
    with pytest.raises(CallError, match=r"static argument 'sizes' must be hashable.*not list.*pass a tuple"):
        f(x, "tanh", [2, 3])
    with pytest.raises(CallError, match="argument 1 is static"):
        adcompile.grad(f, wrt=1)(x, "tanh", (2,))
    with pytest.raises(CallError, match="static_argnames='width' names no argument"):
        adcompile.compile(network, static_argnames="width")
    with pytest.raises(CallError, match="static_argnums=5"):
        adcompile.compile(network, static_argnums=5)


def model_loss_with_aux(model, x, y):
    prediction = model(x)[:, 0]
    return np.mean((prediction - y) ** 2), prediction


def model_loss(model, x, y):
    return model_loss_with_aux(model, x, y)[0]


def test_has_aux_with_a_module_argument_matches_the_gradient_without_aux():
    adcompile.init.manual_seed(0)
    model = adcompile.nn.Sequential(adcompile.nn.Linear(3, 2), adcompile.nn.Tanh(),
                                    adcompile.nn.Linear(2, 1)).compile("python")
    with_aux = adcompile.compile(model_loss_with_aux, backend="python")
    (value, prediction), grads = adcompile.value_and_grad(with_aux, has_aux=True)(model, X, Y)
    expected = adcompile.grad(adcompile.compile(model_loss, backend="python"))(model, X, Y)
    assert list(grads) == list(expected)
    for name in expected:
        np.testing.assert_allclose(grads[name], expected[name], rtol=1e-12)
    np.testing.assert_allclose(prediction, model(X)[:, 0], rtol=1e-12)
    assert value == pytest.approx(model_loss(model, X, Y))


def cube_sum(x):
    return np.sum(x ** 3)


def square_with_aux(x):
    return np.sum(x ** 2), x


GRAD_WITH_AUX = adcompile.grad(square_with_aux, has_aux=True)


def calls_grad_with_aux(x):
    return np.sum(GRAD_WITH_AUX(x)[0])


def takes_grad_with_aux_inside(x):
    return np.sum(adcompile.grad(cube_sum, has_aux=True)(x))


def takes_grad_by_argnums_inside(x):
    return np.sum(adcompile.grad(cube_sum, argnums=0)(x))


def test_inside_compiled_code_argnums_and_has_aux_work():
    x = np.array([1.0, 2.0])
    assert adcompile.compile(takes_grad_by_argnums_inside, backend="python")(x) == pytest.approx(15.0)
    assert adcompile.compile(calls_grad_with_aux, backend="python")(x) == pytest.approx(6.0)  # sum(2 x)
    with pytest.raises(CallError, match=r"has_aux=True needs a function returning a pair \(loss, aux\)"):
        adcompile.compile(takes_grad_with_aux_inside, backend="python")(x)  # cube_sum returns the loss only
