"""``jvp``, ``hvp`` and ``vjp`` with pytree arguments and outputs: tangents in the structure of
the argument, cotangents in the structure of the output, results in those structures --
against central differences (and the transpose identity) on both backends."""
import numpy as np
import pytest

import adcompile
from adcompile.errors import CallError
from oracles import assert_trees_close, central_difference, tree_gradient_by_differences

BACKENDS = ["python", "numba"]
RNG = np.random.default_rng(5)
PARAMS = {"a": RNG.normal(size=3), "b": RNG.normal(size=3)}
X = RNG.normal(size=3)
TANGENT = {"a": RNG.normal(size=3), "b": RNG.normal(size=3)}


def outputs(params, x):
    return {"y": np.sin(params["a"] * x) * params["b"], "z": np.sum(params["b"] ** 2 * x)}


def scalar(params, x):
    return np.sum(np.sin(params["a"] * x) * params["b"] ** 2)


def moved(t):
    return {k: PARAMS[k] + t * TANGENT[k] for k in PARAMS}


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_of_a_dict_argument_and_a_dict_output(backend):
    out, tangent_out = adcompile.jvp(adcompile.compile(outputs, backend=backend), (PARAMS, X), (TANGENT, None))
    assert_trees_close(out, outputs(PARAMS, X), 1e-12, 1e-12, "jvp value")
    numeric = central_difference(lambda t: (outputs(moved(t), X)["y"], outputs(moved(t), X)["z"]))
    assert_trees_close(tangent_out, {"y": numeric[0], "z": numeric[1]}, 1e-6, 1e-8, "jvp tangent")


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_takes_cotangents_in_the_structure_of_the_output(backend):
    f = adcompile.compile(outputs, backend=backend)
    out, pullback = adcompile.vjp(f, PARAMS, X)
    cotangent = {"y": RNG.normal(size=3), "z": 0.7}
    grads, grad_x = pullback(cotangent)

    def weighted(params, x):
        result = outputs(params, x)
        return np.sum(result["y"] * cotangent["y"]) + result["z"] * cotangent["z"]
    assert_trees_close(grads, tree_gradient_by_differences(weighted, [PARAMS, X]), 1e-6, 1e-8, "vjp")
    # the transpose identity <cotangent, J t> = <J^T cotangent, t>
    _, tangent_out = adcompile.jvp(f, (PARAMS, X), (TANGENT, None))
    left = np.sum(cotangent["y"] * tangent_out["y"]) + cotangent["z"] * tangent_out["z"]
    right = sum(np.sum(grads[k] * TANGENT[k]) for k in PARAMS)
    assert left == pytest.approx(right, rel=1e-10)
    with pytest.raises(CallError, match="structure of the output"):
        pullback({"y": np.ones(3)})


@pytest.mark.parametrize("backend", BACKENDS)
def test_hvp_of_a_dict_argument(backend):
    product = adcompile.hvp(adcompile.compile(scalar, backend=backend), (PARAMS, X), (TANGENT, None))
    gradient = adcompile.grad(adcompile.compile(scalar, backend="python"))
    numeric = central_difference(lambda t: tuple(gradient(moved(t), X)[k] for k in ("a", "b")), eps=1e-5)
    assert_trees_close(product, {"a": numeric[0], "b": numeric[1]}, 1e-6, 1e-8, "hvp")


def test_a_tangent_of_another_structure_is_refused():
    with pytest.raises(CallError, match="structure of the argument"):
        adcompile.jvp(adcompile.compile(outputs, backend="python"), (PARAMS, X), ({"a": X}, None))
