"""Pytrees at the boundary of every transform: derivatives taken inside compiled code with
pytree arguments (a compiled training step calling ``grad(loss)(params, X, y)``), second
derivatives with respect to a pytree, pytree results of ``jvp``/``vjp``/``jacobian``, and
``has_aux`` on Jacobians -- each checked against central differences."""
import numpy as np
import pytest

import adcompile
from oracles import assert_trees_close, gradient_by_differences, jacobian_by_differences, tree_gradient_by_differences

RNG = np.random.default_rng(11)
PARAMS = {"W": RNG.normal(size=(3, 2)), "b": RNG.normal(size=2)}
X = RNG.normal(size=(5, 3))
Y = RNG.normal(size=(5, 2))


def loss(p, X, y):
    return np.sum((np.tanh(X @ p["W"] + p["b"]) - y) ** 2)


def cubes(p):
    return np.sum(p["W"] ** 3) + np.sum(np.sin(p["b"]) * p["b"])


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_compiled_training_step_calls_grad_with_a_dict(backend):
    compiled_loss = adcompile.compile(loss, backend=backend)

    @adcompile.compile(backend=backend)
    def step(p, X, y):
        g = adcompile.grad(compiled_loss)(p, X, y)
        return {"W": p["W"] - 0.1 * g["W"], "b": p["b"] - 0.1 * g["b"]}

    expected_grad = tree_gradient_by_differences(loss, (PARAMS, X, Y))
    expected = {name: PARAMS[name] - 0.1 * expected_grad[name] for name in PARAMS}
    assert_trees_close(step(PARAMS, X, Y), expected, 1e-6, 1e-7, "step")


def test_value_and_grad_with_a_dict_inside_compiled_code():
    @adcompile.compile(backend="python")
    def step(p, X, y):
        value, g = adcompile.value_and_grad(loss)(p, X, y)
        return value, g["b"]

    value, gb = step(PARAMS, X, Y)
    np.testing.assert_allclose(value, loss(PARAMS, X, Y))
    np.testing.assert_allclose(gb, tree_gradient_by_differences(loss, (PARAMS, X, Y))["b"], rtol=1e-6, atol=1e-7)


def test_grad_of_grad_with_respect_to_a_dict():
    def gradient_total(p):  # sum of the entries of the gradient of cubes: a scalar of p
        g = adcompile.grad(cubes)(p)
        return np.sum(g["W"]) + np.sum(g["b"] * g["b"])

    def gradient_total_in_python(p):
        g = tree_gradient_by_differences(cubes, (p,), eps=1e-5)
        return np.sum(g["W"]) + np.sum(g["b"] * g["b"])

    second = adcompile.grad(adcompile.compile(gradient_total, backend="python"))(PARAMS)
    exact = {"W": 6 * PARAMS["W"],  # d/dW sum(3 W^2) and d/db sum((sin b + b cos b)^2)
             "b": 2 * (np.sin(PARAMS["b"]) + PARAMS["b"] * np.cos(PARAMS["b"]))
             * (2 * np.cos(PARAMS["b"]) - PARAMS["b"] * np.sin(PARAMS["b"]))}
    assert_trees_close(second, exact, 1e-7, 1e-8, "grad(grad)")
    by_differences = tree_gradient_by_differences(gradient_total_in_python, (PARAMS,), eps=1e-3)
    assert_trees_close(second, by_differences, 1e-4, 1e-5, "grad(grad) against differences")


def test_a_tuple_of_arrays_passed_to_grad_inside_compiled_code():
    def pair_loss(pair, x):
        w, b = pair
        return np.sum((x @ w + b) ** 2)

    @adcompile.compile(backend="python")
    def gradient_norm(pair, x):
        gw, gb = adcompile.grad(pair_loss)(pair, x)
        return np.sum(gw ** 2) + np.sum(gb ** 2)

    def gradient_norm_in_python(pair, x):
        gw, gb = tree_gradient_by_differences(pair_loss, (pair, x), eps=1e-5)
        return np.sum(gw ** 2) + np.sum(gb ** 2)

    pair = (RNG.normal(size=(3, 2)), RNG.normal(size=2))
    np.testing.assert_allclose(gradient_norm(pair, X), gradient_norm_in_python(pair, X), rtol=1e-6)
    second = adcompile.grad(gradient_norm)(pair, X)
    assert isinstance(second, tuple)
    assert_trees_close(second, tree_gradient_by_differences(gradient_norm_in_python, (pair, X), eps=1e-3),
                       1e-4, 1e-4, "grad(grad) of a tuple")


def with_aux(x):
    out = np.sin(x) * x[0]
    return out, {"norm": np.sum(x ** 2), "first": x[0]}


def scalar_with_aux(x):
    return np.sum(np.cos(x) * x), [x * 2.0, np.sum(x)]


@pytest.mark.parametrize("jacobian", [adcompile.jacobian, adcompile.jacrev, adcompile.jacfwd])
def test_jacobian_has_aux_returns_the_matrix_and_the_aux(jacobian):
    x = RNG.normal(size=3)
    matrix, aux = jacobian(adcompile.compile(with_aux, backend="python"), has_aux=True)(x)
    np.testing.assert_allclose(matrix, jacobian_by_differences(lambda x: with_aux(x)[0], [x]), rtol=1e-6, atol=1e-8)
    assert_trees_close(aux, with_aux(x)[1], 1e-12, 0, "aux")


def test_hessian_has_aux_returns_the_matrix_and_the_aux():
    x = RNG.normal(size=4)
    matrix, aux = adcompile.hessian(adcompile.compile(scalar_with_aux, backend="python"), has_aux=True)(x)
    gradient = adcompile.grad(lambda x: np.sum(np.cos(x) * x))
    np.testing.assert_allclose(matrix, jacobian_by_differences(gradient, [x]), rtol=1e-6, atol=1e-7)
    assert_trees_close(aux, scalar_with_aux(x)[1], 1e-12, 0, "aux")


def test_has_aux_on_an_already_derived_function_is_refused_clearly():
    with pytest.raises(adcompile.AdCompileError, match="has_aux=True takes a compiled or plain Python function"):
        adcompile.jacobian(adcompile.grad(scalar_with_aux, has_aux=True), has_aux=True)(RNG.normal(size=2))


def dict_output(x, c):
    return {"sin": np.sin(x) * c, "square": x ** 2 + c}


def test_jvp_and_vjp_of_a_function_returning_a_dict():
    f = adcompile.compile(dict_output, backend="python")
    x, c, v = RNG.normal(size=3), 1.7, RNG.normal(size=3)
    out, tangent = adcompile.jvp(f, (x, c), (v, 1.0))
    assert_trees_close(out, dict_output(x, c), 1e-12, 0, "out")
    for key in ("sin", "square"):
        expected = jacobian_by_differences(lambda x: dict_output(x, c)[key], [x]) @ v \
            + jacobian_by_differences(lambda c: dict_output(x, c)[key], [c])
        np.testing.assert_allclose(tangent[key], expected, rtol=1e-6, atol=1e-8)
    out, pullback = adcompile.vjp(f, x, c)
    cotangent = {"sin": RNG.normal(size=3), "square": RNG.normal(size=3)}
    dx, dc = pullback(cotangent)

    def projected(x, c):
        result = dict_output(x, c)
        return np.sum(result["sin"] * cotangent["sin"]) + np.sum(result["square"] * cotangent["square"])
    np.testing.assert_allclose(dx, gradient_by_differences(projected, [x, c], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dc, gradient_by_differences(projected, [x, c], 1), rtol=1e-6, atol=1e-8)
    with pytest.raises(adcompile.AdCompileError, match="structure of the output"):
        pullback({"sin": cotangent["sin"]})


class Scaled(adcompile.nn.Module):
    """A Linear layer and a buffer: the buffer is a flat argument too, not differentiated."""

    def __init__(self):
        super().__init__()
        self.fc = adcompile.nn.Linear(3, 2)
        self.register_buffer("offset", np.array([0.5, -0.25]))

    def forward(self, x):
        return np.tanh(self.fc(x)) + self.offset


def module_in_dict_loss(state, X):
    return np.sum(state["net"](X) ** 2) * state["scale"]


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_module_inside_a_dict_is_called_and_differentiated(backend):
    adcompile.modules.init.manual_seed(3)
    net = Scaled()
    state = {"net": net, "scale": 1.5}
    f = adcompile.compile(module_in_dict_loss, backend=backend)

    def in_python(weight, bias, scale):
        hidden = np.tanh(X @ weight.T + bias) + net.offset
        return np.sum(hidden ** 2) * scale

    weight, bias = net.fc.weight.data.copy(), net.fc.bias.data.copy()
    np.testing.assert_allclose(f(state, X), in_python(weight, bias, 1.5), rtol=1e-12)
    grads = adcompile.grad(f)(state, X)
    assert list(grads) == ["net", "scale"] and list(grads["net"]) == ["fc.weight", "fc.bias"]
    np.testing.assert_allclose(grads["net"]["fc.weight"],
                               gradient_by_differences(in_python, [weight, bias, 1.5], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grads["net"]["fc.bias"],
                               gradient_by_differences(in_python, [weight, bias, 1.5], 1), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grads["scale"], in_python(weight, bias, 1.0), rtol=1e-12)
    net.fc.bias.requires_grad = False  # a frozen parameter: no entry, and the code is compiled again
    assert list(adcompile.grad(f)(state, X)["net"]) == ["fc.weight"]


def test_the_source_names_a_module_leaf_by_its_path():
    adcompile.modules.init.manual_seed(3)
    state = {"net": Scaled(), "scale": 1.5}
    f = adcompile.compile(module_in_dict_loss, backend="python")
    f(state, X)
    text = adcompile.source(f, state, X)
    assert "state_net_fc_weight" in text and "state_net_offset" in text and "state_scale" in text


class Stack(adcompile.nn.Module):
    """Submodules in a ModuleList: their leaves' paths hold positions."""

    def __init__(self):
        super().__init__()
        self.layers = adcompile.nn.ModuleList([adcompile.nn.Linear(3, 3), Scaled()])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def stack_loss(model, X):
    return np.sum(model(X) ** 2)


def test_a_module_arguments_leaves_are_named_after_the_argument_and_their_path():
    adcompile.modules.init.manual_seed(3)
    f = adcompile.compile(stack_loss, backend="python")
    text = adcompile.source(adcompile.grad(f), Stack(), X)
    names = ("model_layers_0_weight, model_layers_0_bias, model_layers_1_fc_weight, model_layers_1_fc_bias, "
             "model_layers_1_offset, X")
    assert f"def stack_loss_grad({names})" in " ".join(text.split())
    assert adcompile.source(adcompile.grad(f), Stack(), X) == text  # another model of that structure: the same
    model = Stack().compile("python")
    model(X)
    forward = model._adcompile_plan.flat.source()  # ``model(x)``: forward's self is the argument
    assert "def Stack_forward(self_layers_0_weight, self_layers_0_bias, self_layers_1_fc_weight" in forward


def test_the_last_structures_plan_is_left_when_the_structure_changes():
    def total(p, x):
        result = np.sum(x * p["a"])
        for name, value in p.items():
            result = result + np.sum(value ** 2)
        return result

    f = adcompile.grad(adcompile.compile(total, backend="python"))
    x = RNG.normal(size=2)
    two = {"a": RNG.normal(size=2), "b": RNG.normal(size=2)}
    three = {"a": RNG.normal(size=2), "b": RNG.normal(size=2), "c": RNG.normal(size=2)}
    renamed = {"a": RNG.normal(size=2), "z": RNG.normal(size=2)}
    for p in (two, two, three, renamed, two, {"a": 1.5, "b": 2.0}, three, two):
        assert_trees_close(f(p, x), tree_gradient_by_differences(total, (p, x)), 1e-6, 1e-8, f"{p}")


def loss_and_prediction(w, x):
    prediction = np.tanh(x @ w)
    return np.sum(prediction ** 2), {"prediction": prediction, "scale": np.sum(w)}


def test_has_aux_inside_compiled_code_and_its_derivative():
    w, x = RNG.normal(size=3), RNG.normal(size=(4, 3))

    def step(w, x):  # value, gradient and aux from one call, all used
        (value, aux), g = adcompile.value_and_grad(loss_and_prediction, has_aux=True)(w, x)
        return value + np.sum(g * g) + np.sum(aux["prediction"]) * aux["scale"]

    def step_in_python(w, x):
        value, aux = loss_and_prediction(w, x)
        g = gradient_by_differences(lambda w: loss_and_prediction(w, x)[0], [w], 0, eps=1e-5)
        return value + np.sum(g * g) + np.sum(aux["prediction"]) * aux["scale"]

    compiled = adcompile.compile(step, backend="python")
    np.testing.assert_allclose(compiled(w, x), step_in_python(w, x), rtol=1e-7)
    np.testing.assert_allclose(adcompile.grad(compiled)(w, x),
                               gradient_by_differences(step_in_python, [w, x], 0, eps=1e-3), rtol=1e-4, atol=1e-6)

    @adcompile.compile(backend="python")
    def gradient_and_aux(params, x):
        g, aux = adcompile.grad(dict_loss_with_aux, has_aux=True)(params, x)
        return g["w"], aux

    params = {"w": w, "bias": 0.3}
    gw, aux = gradient_and_aux(params, x)
    np.testing.assert_allclose(gw, tree_gradient_by_differences(lambda p, x: dict_loss_with_aux(p, x)[0],
                                                                (params, x))["w"], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(aux, dict_loss_with_aux(params, x)[1], rtol=1e-12)


def dict_loss_with_aux(params, x):
    out = x @ params["w"] + params["bias"]
    return np.sum(out ** 2), out


def test_jacobian_has_aux_inside_compiled_code():
    x = RNG.normal(size=3)

    @adcompile.compile(backend="python")
    def matrix_and_aux(x):
        matrix, aux = adcompile.jacobian(with_aux, has_aux=True)(x)
        return matrix, aux["norm"]

    matrix, norm = matrix_and_aux(x)
    np.testing.assert_allclose(matrix, jacobian_by_differences(lambda x: with_aux(x)[0], [x]), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(norm, np.sum(x ** 2), rtol=1e-12)
