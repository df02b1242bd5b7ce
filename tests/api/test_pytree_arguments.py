"""Pytree arguments and results of compiled and derived functions: dicts, lists, tuples and
namedtuples of arrays and floats are flattened to their leaves at the call, read in the code
with constant keys, unpacking, unrolled loops and ``len``, and gradients come back in the
argument's structure -- checked against central differences on both backends."""
import collections

import numpy as np
import pytest

import adcompile
from adcompile import tree
from adcompile.errors import AdCompileError, CallError
from oracles import (assert_trees_close, gradient_by_differences, tree_gradient_by_differences,
                     tree_jacobian_by_differences)

BACKENDS = ["python", "numba"]
RNG = np.random.default_rng(7)
X = RNG.normal(size=(6, 3))
Y = RNG.normal(size=6)
PARAMS = {"W1": RNG.normal(size=(3, 4)), "b1": RNG.normal(size=4), "W2": RNG.normal(size=4), "b2": 0.3}
LAYERS = [(RNG.normal(size=(3, 3)), RNG.normal(size=3)), (RNG.normal(size=(3, 2)), RNG.normal(size=2))]
Point = collections.namedtuple("Point", "scale shift")


def mlp_loss(params, X, y):
    h = np.tanh(X @ params["W1"] + params["b1"])
    p = h @ params["W2"] + params["b2"]
    return np.mean((p - y) ** 2)


def stacked_loss(layers, x):
    for W, b in layers:
        x = np.tanh(x @ W + b)
    return np.sum(x ** 2) / len(layers)


def dict_layers_loss(layers, x):
    for layer in layers:
        x = np.sin(x @ layer["W"]) * layer["gain"]
    return np.sum(x)


def point_loss(p, x):
    return np.sum((p.scale * x + p.shift) ** 2)


def iterate_items(params, x):
    total = 0.0
    for name, value in params.items():
        if name == "W1":
            total = total + np.sum(np.cos(x @ value))
        else:
            total = total + np.sum(value ** 2)
    return total


def structured_result(params, x):
    h = x @ params["W1"]
    return {"hidden": h, "total": np.sum(h)}, [h + 1.0, params["b2"]]


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_a_dict_is_a_dict_like_it(backend):
    loss = adcompile.compile(mlp_loss, backend=backend)
    assert loss(PARAMS, X, Y) == pytest.approx(mlp_loss(PARAMS, X, Y))
    grads = adcompile.grad(loss)(PARAMS, X, Y)
    assert list(grads) == sorted(PARAMS) and grads["W1"].shape == (3, 4)
    expected = tree_gradient_by_differences(mlp_loss, [PARAMS, X, Y])
    assert_trees_close(grads, expected, 1e-6, 1e-8, "grad of dict")
    value, same = adcompile.value_and_grad(loss)(PARAMS, X, Y)
    assert value == pytest.approx(mlp_loss(PARAMS, X, Y))
    assert_trees_close(same, expected, 1e-6, 1e-8, "value_and_grad of dict")


@pytest.mark.parametrize("backend", BACKENDS)
def test_list_of_tuples_unpacked_in_an_unrolled_loop(backend):
    x = X[:2]
    grads = adcompile.grad(adcompile.compile(stacked_loss, backend=backend))(LAYERS, x)
    assert isinstance(grads, list) and isinstance(grads[0], tuple)
    assert_trees_close(grads, tree_gradient_by_differences(stacked_loss, [LAYERS, x]), 1e-6, 1e-8, "layers")
    both = adcompile.grad(adcompile.compile(stacked_loss, backend=backend), wrt=(0, 1))(LAYERS, x)
    np.testing.assert_allclose(both[1], tree_gradient_by_differences(stacked_loss, [LAYERS, x], 1), rtol=1e-6)


def test_list_of_dicts_and_float32_leaves():
    layers = [{"W": RNG.normal(size=(3, 3)).astype(np.float32), "gain": 1.5},
              {"W": RNG.normal(size=(3, 2)).astype(np.float32), "gain": -0.5}]
    x = X[:3].astype(np.float32)
    grads = adcompile.grad(adcompile.compile(dict_layers_loss, backend="python"))(layers, x)
    assert grads[0]["W"].dtype == np.float32
    expected = tree_gradient_by_differences(dict_layers_loss, [layers, x], eps=1e-3)
    assert_trees_close(grads, expected, 2e-2, 2e-2, "float32 leaves")


@pytest.mark.parametrize("backend", BACKENDS)
def test_namedtuple_fields_and_dict_items(backend):
    point = Point(RNG.normal(size=3), 0.25)
    x = X[0]
    grads = adcompile.grad(adcompile.compile(point_loss, backend=backend))(point, x)
    assert isinstance(grads, Point)
    assert_trees_close(grads, tree_gradient_by_differences(point_loss, [point, x]), 1e-6, 1e-8, "namedtuple")
    small = {"W1": PARAMS["W1"], "b1": PARAMS["b1"]}
    got = adcompile.grad(adcompile.compile(iterate_items, backend=backend))(small, X)
    assert_trees_close(got, tree_gradient_by_differences(iterate_items, [small, X]), 1e-6, 1e-8, "items()")


@pytest.mark.parametrize("backend", BACKENDS)
def test_returning_a_dict_and_a_list(backend):
    out, pair = adcompile.compile(structured_result, backend=backend)(PARAMS, X)
    expected_out, expected_pair = structured_result(PARAMS, X)
    assert isinstance(out, dict) and isinstance(pair, list)
    assert_trees_close((out, pair), (expected_out, expected_pair), 1e-12, 1e-12, "results")


def test_generated_code_names_leaves_after_their_path():
    loss = adcompile.compile(stacked_loss, backend="python")
    text = adcompile.source(adcompile.grad(loss), LAYERS, X[:2])
    assert "def stacked_loss_grad(layers_0_0, layers_0_1, layers_1_0, layers_1_1, x)" in text
    text = adcompile.source(adcompile.compile(mlp_loss, backend="python"), PARAMS, X, Y)
    assert "def mlp_loss(params_W1, params_W2, params_b1, params_b2, X, y)" in text


def test_another_structure_is_another_specialisation():
    loss = adcompile.compile(stacked_loss, backend="python")
    three = LAYERS + [(np.eye(2), np.zeros(2))]
    assert loss(three, X[:2]) == pytest.approx(stacked_loss(three, X[:2]))
    assert loss(LAYERS, X[:2]) == pytest.approx(stacked_loss(LAYERS, X[:2]))
    grads = adcompile.grad(loss)(three, X[:2])
    assert len(grads) == 3
    assert_trees_close(grads, tree_gradient_by_differences(stacked_loss, [three, X[:2]]), 1e-6, 1e-8, "3 layers")


def test_training_loop_with_tree_map_lowers_the_loss():
    params = tree.map(lambda p: p * 0.5, PARAMS)
    value_and_grad = adcompile.value_and_grad(adcompile.compile(mlp_loss, backend="python"))
    first, _ = value_and_grad(params, X, Y)
    for _ in range(30):
        value, grads = value_and_grad(params, X, Y)
        params = tree.map(lambda p, g: p - 0.05 * g, params, grads)
    assert value < first and set(params) == set(PARAMS)


def missing_key(params, x):
    return np.sum(params["W3"] * x)


def test_a_missing_key_is_a_located_error():
    with pytest.raises(AdCompileError) as info:
        adcompile.compile(missing_key, backend="python")(PARAMS, X)
    message = str(info.value)
    assert "'W3'" in message and "'W1'" in message and __file__ in message and "params[\"W3\"]" in message


def test_a_non_string_key_and_an_unsupported_leaf_are_clear_errors():
    loss = adcompile.compile(mlp_loss, backend="python")
    with pytest.raises(CallError, match=r"params is a dict with the key 1; .* string keys"):
        loss({1: np.ones(3)}, X, Y)
    with pytest.raises(CallError, match=r"params\['W1'\] is a str.*static"):
        loss({**PARAMS, "W1": "weights"}, X, Y)


def test_gradient_needs_float_leaves():
    with pytest.raises(CallError, match="params_b2.*int"):
        adcompile.grad(adcompile.compile(mlp_loss, backend="python"))({**PARAMS, "b2": 1}, X, Y)


def test_a_bad_leaf_after_calls_with_that_structure_is_still_told_by_its_path():
    loss = adcompile.compile(mlp_loss, backend="python")
    gradient = adcompile.grad(loss)
    loss(PARAMS, X, Y), gradient(PARAMS, X, Y)  # the structure's plans exist
    for fn in (loss, gradient):
        with pytest.raises(CallError, match=r"params\['b2'\] is a str"):
            fn({**PARAMS, "b2": "bias"}, X, Y)


def test_modules_inside_a_list_are_arguments_like_a_module_argument():
    adcompile.init.manual_seed(5)
    models = [adcompile.nn.Linear(3, 3), adcompile.nn.Linear(3, 1)]
    weight, bias = models[0].weight.data.copy(), models[0].bias.data.copy()

    def in_python(weight, bias):
        hidden = np.tanh(X @ weight.T + bias)
        return np.sum((hidden @ models[1].weight.data.T + models[1].bias.data) ** 2)

    f = adcompile.compile(chained_models, backend="python")
    np.testing.assert_allclose(f(models, X), in_python(weight, bias), rtol=1e-12)
    grads = adcompile.grad(f)(models, X)
    assert isinstance(grads, list) and [list(g) for g in grads] == [["weight", "bias"]] * 2
    np.testing.assert_allclose(grads[0]["weight"], gradient_by_differences(in_python, [weight, bias], 0),
                               rtol=1e-6, atol=1e-8)


def chained_models(models, x):
    first, second = models
    return np.sum(second(np.tanh(first(x))) ** 2)


def optional_scale(p, x):
    if p["scale"] is None:
        return np.sum(np.sin(x * p["w"]))
    return np.sum(np.sin(x * p["w"])) * p["scale"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_none_entry_is_none_in_the_code_and_in_the_gradient(backend):
    loss = adcompile.compile(optional_scale, backend=backend)
    x = X[0]
    for params in ({"w": X[1], "scale": None}, {"w": X[1], "scale": 2.5}):
        assert loss(params, x) == pytest.approx(optional_scale(params, x))
        grads = adcompile.grad(loss)(params, x)
        assert_trees_close(grads, tree_gradient_by_differences(optional_scale, [params, x]), 1e-6, 1e-8,
                           f"scale={params['scale']}")
    assert adcompile.grad(loss)({"w": X[1], "scale": None}, x)["scale"] is None


def scaled_stack(layers, x):
    total = np.sum(x ** 2)
    for layer in layers:
        x = np.tanh(x @ layer["W"])
        total = total + np.sum(x ** 2)
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_list_unrolls_no_iteration_and_views_are_leaves(backend):
    loss = adcompile.compile(scaled_stack, backend=backend)
    x = X[:2]
    assert loss([], x) == pytest.approx(scaled_stack([], x))
    grads, grad_x = adcompile.grad(loss, wrt=(0, 1))([], x)
    assert grads == []
    np.testing.assert_allclose(grad_x, 2 * x, rtol=1e-12)
    base = RNG.normal(size=(3, 6))
    layers = [{"W": base[:, ::2]}, {"W": base[:, 1::2].T}]  # strided and transposed views
    grads = adcompile.grad(loss)(layers, x)
    expected = tree_gradient_by_differences(scaled_stack, [[{"W": layer["W"].copy()} for layer in layers], x])
    assert_trees_close(grads, expected, 1e-6, 1e-8, "views")


class Gate(adcompile.Module):
    """A Module whose forward takes a dict and returns one."""

    def __init__(self):
        super().__init__()
        self.lin = adcompile.nn.Linear(3, 2)

    def forward(self, inputs):
        return {"out": np.tanh(self.lin(inputs["x"])) * inputs["scale"], "raw": self.lin(inputs["x"])}


def gate_loss(model, batch):
    return np.sum(model(batch)["out"] ** 2)


def test_a_module_takes_and_returns_dicts_and_a_dict_next_to_it_has_a_gradient():
    adcompile.init.manual_seed(0)
    gate = Gate().compile("python")
    batch = {"x": X[:2], "scale": 2.0}
    result = gate(batch)
    assert set(result) == {"out", "raw"}
    np.testing.assert_allclose(result["out"], np.tanh(result["raw"]) * 2.0, rtol=1e-12)
    grads = adcompile.grad(gate_loss, wrt=1)(gate, batch)
    assert_trees_close(grads, tree_gradient_by_differences(gate_loss, [gate, batch], 1), 1e-6, 1e-8, "batch")
    assert list(adcompile.grad(gate_loss)(gate, batch)) == ["lin.weight", "lin.bias"]


def test_a_derivative_of_a_pytree_gradient_is_in_jax_structure():
    loss = adcompile.compile(mlp_loss, backend="python")
    mixed = adcompile.jacobian(adcompile.grad(loss), wrt=1)(PARAMS, X, Y)  # d grad / d X, per entry of params
    assert set(mixed) == set(PARAMS) and mixed["W1"].shape == (3, 4) + X.shape and mixed["b2"].shape == X.shape

    def gradient(params, X, y):
        return tree_gradient_by_differences(mlp_loss, (params, X, y), eps=1e-5)
    assert_trees_close(mixed, tree_jacobian_by_differences(gradient, (PARAMS, X, Y), 1, eps=1e-4), 1e-4, 1e-6,
                       "d grad / d X")
