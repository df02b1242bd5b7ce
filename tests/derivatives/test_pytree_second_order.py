"""Derivatives of derivatives with respect to pytree arguments, and Jacobians of functions
returning pytrees, in JAX's structure -- against central differences.

``jvp(grad(f), (params, x), (tangent, None))`` gives ``(gradient, H @ tangent)`` as dicts like
``params``; ``vjp(grad(f), params, x)`` takes a cotangent dict; ``hessian(f)(params, x)`` and
``jacobian(grad(f))`` are dicts of dicts, ``H[a][b]`` of shape ``a.shape + b.shape``; the
Jacobian of a function returning a dict is a dict (the output's keys) of the argument's
structure of blocks ``out.shape + argument.shape``."""
import numpy as np
import pytest

import adcompile
from adcompile import tree
from adcompile.errors import CallError
from oracles import (assert_trees_close, central_difference, gradient_by_differences, tree_gradient_by_differences,
                     tree_jacobian_by_differences)

BACKENDS = ["python", "numba"]
RNG = np.random.default_rng(11)
PARAMS = {"W": RNG.normal(size=(2, 3)), "b": RNG.normal(size=2), "s": 0.7}
X = RNG.normal(size=3)
TANGENT = {"W": RNG.normal(size=(2, 3)), "b": RNG.normal(size=2), "s": -0.4}


def loss(p, x):
    return np.sum(np.sin(p["W"] @ x + p["b"]) ** 2) * p["s"] + np.sum(p["b"] ** 3) + p["s"] ** 2 * np.sum(x ** 2)


def pair_loss(pair, x):
    w, b = pair
    return np.sum(np.tanh(w * x + b) ** 2) + np.sum(w ** 2 * b)


def outputs(p, x):
    return {"y": np.sin(p["W"] @ x) * p["s"], "z": np.sum(p["b"] ** 2 * p["s"]), "w": (p["b"] * x[:2],)}


def outputs_of_x(x):
    return {"y": np.sin(x) * x[0], "z": (np.sum(x ** 3), x[1:] ** 2)}


def gradient(p, x):
    return tree_gradient_by_differences(loss, (p, x), eps=1e-5)


def moved(t):
    return tree.map(lambda p, d: p + t * d, PARAMS, TANGENT)


def shapes_of_hessian(hessian, params):
    for a, row in hessian.items():
        for b, block in row.items():
            assert np.shape(block) == np.shape(params[a]) + np.shape(params[b]), (a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_of_a_gradient_with_respect_to_a_dict(backend):
    f = adcompile.compile(loss, backend=backend)
    g, hessian_times_tangent = adcompile.jvp(adcompile.grad(f), (PARAMS, X), (TANGENT, None))
    assert_trees_close(g, tree_gradient_by_differences(loss, (PARAMS, X)), 1e-6, 1e-8, "gradient")
    numeric = central_difference(lambda t: tuple(tree.leaves(gradient(moved(t), X))), eps=1e-4)
    assert_trees_close(hessian_times_tangent, tree.unflatten(tree.structure(PARAMS), list(numeric)), 1e-4, 1e-6,
                       "H @ tangent")
    product = adcompile.hvp(f, (PARAMS, X), (TANGENT, None))
    assert_trees_close(hessian_times_tangent, product, 1e-10, 1e-12, "jvp(grad) against hvp")


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_of_a_gradient_takes_a_cotangent_dict(backend):
    f = adcompile.compile(loss, backend=backend)
    g, pullback = adcompile.vjp(adcompile.grad(f), PARAMS, X)
    assert_trees_close(g, adcompile.grad(f)(PARAMS, X), 1e-12, 1e-12, "the output: the gradient")
    d_params, d_x = pullback(TANGENT)

    def along_cotangent(p, x):  # <gradient(p, x), cotangent>: its gradients are the vjp's
        return sum(np.sum(gi * ti) for gi, ti in zip(tree.leaves(adcompile.grad(f)(p, x)), tree.leaves(TANGENT)))
    assert_trees_close(d_params, tree_gradient_by_differences(along_cotangent, (PARAMS, X), eps=1e-5), 1e-5, 1e-7,
                       "d params")
    np.testing.assert_allclose(d_x, gradient_by_differences(along_cotangent, (PARAMS, X), 1, eps=1e-5),
                               rtol=1e-5, atol=1e-7)
    with pytest.raises(CallError, match="structure of the output"):
        pullback({"W": np.ones((2, 3))})


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_a_dict_is_a_dict_of_dicts_as_jacobian_of_the_gradient(backend):
    f = adcompile.compile(loss, backend=backend)
    hessian = adcompile.hessian(f)(PARAMS, X)
    shapes_of_hessian(hessian, PARAMS)
    numeric = tree_jacobian_by_differences(gradient, (PARAMS, X), eps=1e-4)
    assert_trees_close(hessian, numeric, 1e-4, 1e-6, "hessian")
    for jacobian in (adcompile.jacrev, adcompile.jacfwd):
        assert_trees_close(jacobian(adcompile.grad(f))(PARAMS, X), hessian, 1e-10, 1e-12, jacobian.__name__)
    mixed = adcompile.jacobian(adcompile.grad(f), wrt=1)(PARAMS, X)  # d gradient / d x: blocks p.shape + x.shape
    assert_trees_close(mixed, tree_jacobian_by_differences(gradient, (PARAMS, X), 1, eps=1e-4), 1e-4, 1e-6,
                       "d grad / d x")
    assert mixed["W"].shape == (2, 3, 3) and mixed["s"].shape == (3,)


def test_hessian_of_a_tuple_argument_is_a_tuple_of_tuples():
    pair = (RNG.normal(size=3), RNG.normal(size=3))
    f = adcompile.compile(pair_loss, backend="python")
    hessian = adcompile.hessian(f)(pair, X)
    assert isinstance(hessian, tuple) and all(isinstance(row, tuple) and len(row) == 2 for row in hessian)

    def pair_gradient(p, x):
        return tree_gradient_by_differences(pair_loss, (p, x), eps=1e-5)
    assert_trees_close(hessian, tree_jacobian_by_differences(pair_gradient, (pair, X), eps=1e-4), 1e-4, 1e-6,
                       "hessian of a tuple")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("jacobian", [adcompile.jacrev, adcompile.jacfwd])
def test_jacobian_of_a_function_returning_a_dict(backend, jacobian):
    f = adcompile.compile(outputs_of_x, backend=backend)
    result = jacobian(f)(X)
    assert set(result) == {"y", "z"} and result["y"].shape == (3, 3) and result["z"][1].shape == (2, 3)
    assert_trees_close(result, tree_jacobian_by_differences(outputs_of_x, (X,)), 1e-6, 1e-8, "d out / d x")
    g = adcompile.compile(outputs, backend=backend)
    by_dict = jacobian(g)(PARAMS, X)  # outer: the output's keys; inner: the argument's
    assert by_dict["y"]["W"].shape == (2, 2, 3) and by_dict["z"]["b"].shape == (2,)
    assert by_dict["w"][0]["s"].shape == (2,)
    assert_trees_close(by_dict, tree_jacobian_by_differences(outputs, (PARAMS, X)), 1e-6, 1e-8, "d out / d params")
    by_x = jacobian(g, wrt=1)(PARAMS, X)
    assert_trees_close(by_x, tree_jacobian_by_differences(outputs, (PARAMS, X), 1), 1e-6, 1e-8, "d out / d x")


def test_a_jacobian_assembled_from_rows_is_not_one_generated_function():
    f = adcompile.compile(outputs_of_x, backend="python")
    with pytest.raises(CallError, match="assembled"):
        adcompile.source(adcompile.jacobian(f), X)
    with pytest.raises(CallError, match="assembled.*cannot be differentiated again"):
        adcompile.grad(adcompile.hessian(adcompile.compile(loss, backend="python")), wrt=1)(PARAMS, X)
    g = adcompile.compile(outputs, backend="python")
    with pytest.raises(CallError, match="assembled.*called inside compiled code"):
        adcompile.compile(lambda p, x: adcompile.jacobian(g)(p, x)["z"]["b"], backend="python")(PARAMS, X)
    with pytest.raises(CallError, match="assembled.*shown by adcompile.source"):
        adcompile.source(adcompile.jacobian(g, wrt=1), PARAMS, X)
