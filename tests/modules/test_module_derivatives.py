"""vjp, jvp, jacobian, hessian and grad-of-grad with a Module argument, against finite
differences: a Module's part of a result is a dict keyed like ``named_parameters()``
(``jacobian``: out.shape + parameter.shape; ``hessian``: a dict of dicts, ``H[a][b]`` of shape
a.shape + b.shape, as JAX's and torch.func's for a dict of parameters), and the compositions
that would need a derivative of a dict are clear errors naming what to use instead."""
import numpy as np
import pytest

import adcompile
from adcompile import nn
from adcompile.errors import CallError
from module_helpers import directional_fd, random_direction

X = np.random.default_rng(0).normal(size=(4, 3))
W = np.random.default_rng(1).normal(size=(4, 2))


def make_model():
    adcompile.modules.init.manual_seed(3)
    return nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 2)).compile("python")


MODEL = make_model()


def outputs(model, x):
    return np.tanh(model(x))


def loss(model, x):
    return np.sum(outputs(model, x) ** 2 * 0.5) + np.sum(x ** 3) * 0.1


def scaled_loss(model, t):
    return np.sum(np.sin(model(X * t)))


OUTPUTS = adcompile.compile(outputs, backend="python")
LOSS = adcompile.compile(loss, backend="python")
SCALED = adcompile.compile(scaled_loss, backend="python")


def entries(model):
    """(name, index) of every parameter entry."""
    return [(name, index) for name, p in model.named_parameters() for index in np.ndindex(p.data.shape)]


def entry_fd(f, model, name, index, h=1e-6):
    """Central difference of ``f()`` along one parameter entry."""
    direction = {n: np.zeros(p.data.shape) for n, p in model.named_parameters()}
    direction[name][index] = 1.0
    return directional_fd(f, model, direction, h)


def test_vjp_pullback_gives_a_dict_for_the_module_and_an_array_for_the_input():
    out, pullback = adcompile.vjp(OUTPUTS, MODEL, X)
    np.testing.assert_allclose(out, OUTPUTS(MODEL, X))
    g_model, g_x = pullback(W)
    assert list(g_model) == [n for n, _ in MODEL.named_parameters()]
    direction = random_direction(MODEL)
    measured = directional_fd(lambda: np.sum(OUTPUTS(MODEL, X) * W), MODEL, direction)
    predicted = sum(np.sum(g_model[n] * direction[n]) for n in direction)
    assert np.isclose(predicted, measured, rtol=1e-7, atol=1e-9)
    v = np.random.default_rng(5).normal(size=X.shape)
    h = 1e-6
    measured_x = (np.sum(OUTPUTS(MODEL, X + h * v) * W) - np.sum(OUTPUTS(MODEL, X - h * v) * W)) / (2 * h)
    assert np.isclose(np.sum(g_x * v), measured_x, rtol=1e-7, atol=1e-9)
    (only_model,) = adcompile.vjp(OUTPUTS, MODEL, X, wrt=0)[1](W)
    for name in only_model:
        np.testing.assert_allclose(only_model[name], g_model[name], rtol=1e-13)


def test_jvp_with_a_tangent_dict_matches_finite_differences():
    direction = random_direction(MODEL, seed=2)
    direction.pop("2.bias")  # a missing key: that parameter is not differentiated
    out, tangent = adcompile.jvp(OUTPUTS, (MODEL, X), (direction, None))
    np.testing.assert_allclose(out, OUTPUTS(MODEL, X))
    np.testing.assert_allclose(tangent, directional_fd(lambda: OUTPUTS(MODEL, X), MODEL, direction),
                               rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_wrt_a_module_is_a_dict_of_out_shape_plus_parameter_shape(mode):
    jac = adcompile.jacobian(OUTPUTS, wrt=0, mode=mode)(MODEL, X)
    assert list(jac) == [n for n, _ in MODEL.named_parameters()]
    params = dict(MODEL.named_parameters())
    for name, index in entries(MODEL):
        assert jac[name].shape == (4, 2) + params[name].shape
        measured = entry_fd(lambda: OUTPUTS(MODEL, X), MODEL, name, index)
        np.testing.assert_allclose(jac[name][(...,) + index], measured, rtol=1e-7, atol=1e-9,
                                   err_msg=f"{name}{index}")


def named_outputs(model, x):
    y = outputs(model, x)
    return {"y": y, "energy": np.sum(y ** 2)}


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_jacobian_of_a_dict_output_wrt_a_module_is_a_dict_of_parameter_dicts(backend):
    jac = adcompile.jacobian(adcompile.compile(named_outputs, backend=backend), wrt=0)(MODEL, X)
    params = dict(MODEL.named_parameters())
    assert set(jac) == {"y", "energy"} and all(list(row) == list(params) for row in jac.values())
    for name, index in entries(MODEL):
        assert jac["y"][name].shape == (4, 2) + params[name].shape
        assert jac["energy"][name].shape == params[name].shape
        for key in ("y", "energy"):
            measured = entry_fd(lambda: named_outputs(MODEL, X)[key], MODEL, name, index)
            np.testing.assert_allclose(jac[key][name][(...,) + index], measured, rtol=1e-6, atol=1e-8,
                                       err_msg=f"{key} {name}{index}")


def test_hessian_wrt_a_module_is_a_dict_of_dicts_matching_finite_differences_of_the_gradient():
    hess = adcompile.hessian(LOSS, wrt=0)(MODEL, X)
    names = [n for n, _ in MODEL.named_parameters()]
    params = dict(MODEL.named_parameters())
    assert list(hess) == names and all(list(row) == names for row in hess.values())
    gradient = adcompile.grad(LOSS)
    for a, index in entries(MODEL):
        for b in names:
            assert hess[a][b].shape == params[a].shape + params[b].shape
            measured = entry_fd(lambda: gradient(MODEL, X)[b], MODEL, a, index, h=1e-5)
            np.testing.assert_allclose(hess[a][b][index], measured, rtol=1e-6, atol=1e-8, err_msg=f"{a}{index}/{b}")
    # symmetric: H[a][b][i, j] == H[b][a][j, i]
    w, b = params["0.weight"].shape, params["2.bias"].shape
    flip = np.moveaxis(hess["2.bias"]["0.weight"].reshape(b + w), range(len(b)), range(len(w), len(w) + len(b)))
    np.testing.assert_allclose(hess["0.weight"]["2.bias"], flip, rtol=1e-12, atol=1e-14)


def test_hessian_and_jacobian_wrt_an_input_next_to_a_module():
    hess = adcompile.hessian(LOSS, wrt=1)(MODEL, X)
    assert hess.shape == X.shape + X.shape
    gradient = adcompile.grad(LOSS, wrt=1)
    v = np.random.default_rng(6).normal(size=X.shape)
    h = 1e-5
    measured = (gradient(MODEL, X + h * v) - gradient(MODEL, X - h * v)) / (2 * h)
    np.testing.assert_allclose(np.tensordot(hess, v, axes=2), measured, rtol=1e-6, atol=1e-8)
    jac = adcompile.jacobian(OUTPUTS, wrt=1)(MODEL, X)
    measured = (OUTPUTS(MODEL, X + h * v) - OUTPUTS(MODEL, X - h * v)) / (2 * h)
    np.testing.assert_allclose(np.tensordot(jac, v, axes=2), measured, rtol=1e-6, atol=1e-8)


def test_grad_of_grad_wrt_a_scalar_then_the_module():
    mixed = adcompile.grad(adcompile.grad(SCALED, wrt=1), wrt=0)
    result = mixed(MODEL, 0.7)
    assert list(result) == [n for n, _ in MODEL.named_parameters()]
    inner = adcompile.grad(SCALED, wrt=1)
    direction = random_direction(MODEL, seed=3)
    measured = directional_fd(lambda: inner(MODEL, 0.7), MODEL, direction, h=1e-5)
    predicted = sum(np.sum(result[n] * direction[n]) for n in direction)
    assert np.isclose(predicted, measured, rtol=1e-7, atol=1e-9)
    value, again = adcompile.value_and_grad(adcompile.grad(SCALED, wrt=1), wrt=0)(MODEL, 0.7)
    assert np.isclose(value, inner(MODEL, 0.7))
    np.testing.assert_allclose(again["0.weight"], result["0.weight"], rtol=1e-13)
    second = adcompile.grad(adcompile.grad(SCALED, wrt=1), wrt=1)(MODEL, 0.7)
    h = 1e-5
    assert np.isclose(second, (inner(MODEL, 0.7 + h) - inner(MODEL, 0.7 - h)) / (2 * h), rtol=1e-6)
    gradient, by_jvp = adcompile.jvp(inner, (MODEL, 0.7), (None, 1.0))
    assert np.isclose(gradient, inner(MODEL, 0.7)) and np.isclose(by_jvp, second, rtol=1e-12)
    _, along_the_model = adcompile.jvp(inner, (MODEL, 0.7), (direction, None))  # the tangent a dict
    assert np.isclose(along_the_model, measured, rtol=1e-7, atol=1e-9)


def test_derivatives_of_a_gradient_dict_are_dicts_keyed_like_named_parameters():
    gradient = adcompile.grad(SCALED, wrt=0)
    g, along_t = adcompile.jvp(gradient, (MODEL, 0.7), (None, 1.0))  # d/dt of the gradient dict
    names = [n for n, _ in MODEL.named_parameters()]
    assert list(g) == names and list(along_t) == names
    h = 1e-5
    for name in names:
        measured = (gradient(MODEL, 0.7 + h)[name] - gradient(MODEL, 0.7 - h)[name]) / (2 * h)
        np.testing.assert_allclose(along_t[name], measured, rtol=1e-6, atol=1e-8, err_msg=name)
    mixed = adcompile.jacobian(adcompile.grad(SCALED, wrt=1), wrt=0)(MODEL, 0.7)  # the same mixed derivative
    for name in names:
        np.testing.assert_allclose(mixed[name], along_t[name], rtol=1e-10, atol=1e-12, err_msg=name)
    direction = random_direction(MODEL, seed=4)
    _, product = adcompile.jvp(adcompile.grad(LOSS, wrt=0), (MODEL, X), (direction, None))
    by_hvp = adcompile.hvp(LOSS, (MODEL, X), (direction, None))
    for name in names:
        measured = directional_fd(lambda: adcompile.grad(LOSS)(MODEL, X)[name], MODEL, direction, h=1e-5)
        np.testing.assert_allclose(product[name], measured, rtol=1e-6, atol=1e-8, err_msg=name)
        np.testing.assert_allclose(product[name], by_hvp[name], rtol=1e-10, atol=1e-12, err_msg=name)


def test_vjp_of_a_gradient_dict_takes_a_plain_dict_cotangent():
    gradient = adcompile.grad(LOSS, wrt=0)
    g, pullback = adcompile.vjp(gradient, MODEL, X)
    direction = random_direction(MODEL, seed=5)
    cotangent = dict(sorted(direction.items()))  # a plain dict, its keys in another order than g's
    d_model, d_x = pullback(cotangent)
    assert list(d_model) == list(g)
    by_hvp = adcompile.hvp(LOSS, (MODEL, X), (direction, None))  # the Hessian is symmetric: H v both ways
    for name in g:
        np.testing.assert_allclose(d_model[name], by_hvp[name], rtol=1e-10, atol=1e-12, err_msg=name)
    v = np.random.default_rng(7).normal(size=X.shape)
    h = 1e-5

    def along(x):  # <gradient(x), cotangent>
        return sum(np.sum(gradient(MODEL, x)[n] * direction[n]) for n in direction)
    assert np.isclose(np.sum(d_x * v), (along(X + h * v) - along(X - h * v)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_compositions_that_are_not_derivatives_of_a_scalar_say_so():
    with pytest.raises(CallError, match=r"grad needs a function returning one float scalar"):
        adcompile.grad(adcompile.grad(SCALED, wrt=0), wrt=1)(MODEL, 0.7)
    with pytest.raises(CallError, match=r"must be a dict keyed like named_parameters"):
        adcompile.hvp(LOSS, (MODEL, X), (np.ones(3), None))
    with pytest.raises(CallError, match=r"not parameters with requires_grad"):
        adcompile.jvp(LOSS, (MODEL, X), ({"0.wieght": np.ones((2, 3))}, None))
    with pytest.raises(CallError, match=r"shape"):
        adcompile.jvp(LOSS, (MODEL, X), ({"0.weight": np.ones(3)}, None))


def test_frozen_parameters_are_left_out_of_every_dict():
    model = make_model()
    model[0].weight.requires_grad_(False)
    hess = adcompile.hessian(LOSS, wrt=0)(model, X)
    assert "0.weight" not in hess and all("0.weight" not in row for row in hess.values())
    assert "0.weight" not in adcompile.jacobian(OUTPUTS, wrt=0)(model, X)
    assert "0.weight" not in adcompile.vjp(OUTPUTS, model, X)[1](W)[0]
    model.requires_grad_(False)
    with pytest.raises(CallError, match="no parameter with requires_grad=True"):
        adcompile.hessian(LOSS, wrt=0)(model, X)
