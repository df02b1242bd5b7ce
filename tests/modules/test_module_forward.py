"""Compiled ``forward``: attribute reads through ``self``, submodules, containers, custom
Functions, control flow and in-place writes inside forward, compile-time attributes,
gradients as dicts (checked against finite differences), ``backward``, ``hvp`` with a Module
argument, and the errors for what compiled forward code cannot read."""
import numpy as np
import pytest

import adcompile
from adcompile import Module, Parameter, nn
from adcompile.errors import CallError, TypeMismatchError
from example_files import load_example
from module_helpers import check_grad_fd, check_hvp_fd


LinearFunction = load_example("custom_function", "example_custom_function_for_modules").LinearFunction


# The seed tutorial's Linear module, ported by changing only the tensor calls.
class Linear(Module):
    def __init__(self, input_features, output_features, bias=True):
        super(Linear, self).__init__()
        self.input_features = input_features
        self.output_features = output_features
        self.weight = Parameter(np.empty((output_features, input_features)))
        if bias:
            self.bias = Parameter(np.empty(output_features))
        else:
            self.register_parameter('bias', None)
        rng = np.random.default_rng(0)
        self.weight.data[...] = rng.uniform(-0.1, 0.1, self.weight.shape)
        if self.bias is not None:
            self.bias.data[...] = rng.uniform(-0.1, 0.1, self.bias.shape)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return 'in_features={}, out_features={}, bias={}'.format(
            self.input_features, self.output_features, self.bias is not None)


def mse(model, x, target):
    return np.mean((model(x) - target) ** 2)


X = np.random.default_rng(1).normal(size=(6, 3))
T = np.random.default_rng(2).normal(size=(6, 2))


@pytest.mark.parametrize("bias", [True, False])
def test_tutorial_linear_gradients_match_finite_differences(bias):
    layer = Linear(3, 2, bias=bias).compile("python")
    assert repr(layer) == f"Linear(in_features=3, out_features=2, bias={bias})"
    expected = X @ layer.weight.data.T + (layer.bias.data if bias else 0)
    np.testing.assert_allclose(layer(X), expected)
    grads = check_grad_fd(mse, layer, X, T)
    assert list(grads) == (["weight", "bias"] if bias else ["weight"])
    residual = 2 * (expected - T) / T.size
    np.testing.assert_allclose(grads["weight"], residual.T @ X)


class Net(Module):
    """Control flow, in-place writes, a loop over a ModuleList, a method and constants."""

    def __init__(self, width=4, activation="tanh"):
        super().__init__()
        self.width = width
        self.activation = activation
        self.blocks = nn.ModuleList([nn.Linear(3, width), nn.Linear(width, width)])
        self.head = nn.Sequential(nn.Linear(width, 2), nn.Sequential(nn.Tanh(), nn.Identity()))
        self.register_buffer("offset", np.full(width, 0.5))

    def act(self, h):
        if self.activation == "tanh":
            return np.tanh(h)
        return np.maximum(h, 0.0)

    def forward(self, x):
        h = x
        for k, block in enumerate(self.blocks):
            h = self.act(block(h))
            if k == len(self.blocks) - 1:
                h = h + self.offset
        out = np.zeros((x.shape[0], self.width))
        for i in range(x.shape[0]):
            if np.sum(h[i]) > 0:
                out[i, :] = h[i] * 2.0
            else:
                out[i, :] = h[i]
        total = 0.0
        j = 0
        while j < self.width:
            total = total + out[0, j]
            j += 1
        return self.head(out) + total * 0.01


def numpy_net(net, x):
    h = x
    for block in net.blocks:
        h = h @ block.weight.data.T + block.bias.data
        h = np.tanh(h) if net.activation == "tanh" else np.maximum(h, 0.0)
    h = h + net.offset
    out = np.where(h.sum(axis=1, keepdims=True) > 0, 2 * h, h)
    total = out[0].sum()
    head = net.head[0]
    return np.tanh(out @ head.weight.data.T + head.bias.data) + total * 0.01


def test_forward_with_control_flow_containers_and_methods():
    adcompile.modules.init.manual_seed(3)
    net = Net().compile("python")
    np.testing.assert_allclose(net(X), numpy_net(net, X))
    check_grad_fd(mse, net, X, T)
    net.activation = "relu"  # a plain attribute is a compile-time constant: this recompiles
    np.testing.assert_allclose(net(X), numpy_net(net, X))
    check_grad_fd(mse, net, X, T)


def test_changing_a_size_attribute_recompiles():
    class Scaled(Module):
        def __init__(self):
            super().__init__()
            self.w = Parameter(np.ones(3))
            self.power = 2

        def forward(self, x):
            return np.sum(self.w * x ** self.power)

    m = Scaled().compile("python")
    x = np.array([1.0, 2.0, 3.0])
    assert m(x) == 14.0
    m.power = 3
    assert m(x) == 36.0


def test_grad_wrt_module_and_input_and_frozen_parameters():
    adcompile.modules.init.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).compile("python")
    loss = adcompile.compile(mse, backend="python")
    value, (g_model, g_x) = adcompile.value_and_grad(loss, wrt=(0, 1))(model, X, T)
    assert np.isclose(value, loss(model, X, T))
    assert list(g_model) == ["0.weight", "0.bias", "2.weight", "2.bias"] and g_x.shape == X.shape
    model[0].weight.requires_grad_(False)
    grads = check_grad_fd(mse, model, X, T)
    assert "0.weight" not in grads
    np.testing.assert_allclose(grads["2.bias"], g_model["2.bias"])


def test_hvp_with_a_module_argument_matches_finite_differences():
    adcompile.modules.init.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    hv = check_hvp_fd(mse, model, X, T)
    assert list(hv) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_backward_accumulates_until_zero_grad():
    adcompile.modules.init.manual_seed(2)
    model = nn.Sequential(nn.Linear(3, 2)).compile("python")
    loss = adcompile.backward(mse, model, X, T)
    assert np.isclose(loss, adcompile.compile(mse, backend="python")(model, X, T))
    first = {n: p.grad.copy() for n, p in model.named_parameters()}
    adcompile.backward(mse, model, X, T)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.grad, 2 * first[name])
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_backward_of_a_non_scalar_loss_is_an_error_and_changes_nothing():
    model = nn.Linear(3, 2).compile("python")

    def outputs(model, x):
        return model(x)

    with pytest.raises(CallError, match="must return one float scalar"):
        adcompile.backward(outputs, model, X)
    assert all(p.grad is None for p in model.parameters())


class HoldsDict(Module):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.ones(2))
        self.table = {"a": 1}

    def forward(self, x):
        return x * self.w * self.table


def test_unreadable_attribute_names_it_and_why_at_the_users_line():
    with pytest.raises(TypeMismatchError) as info:
        HoldsDict().compile("python")(np.ones(2))
    message = str(info.value)
    assert "self.table" in message and "dict" in message and "return x * self.w * self.table" in message


def test_missing_attribute_is_named():
    class Typo(Module):
        def __init__(self):
            super().__init__()
            self.weight = Parameter(np.ones(2))

        def forward(self, x):
            return x * self.wieght

    with pytest.raises(adcompile.AdCompileError, match="has no attribute 'wieght'"):
        Typo().compile("python")(np.ones(2))


def test_a_global_module_is_read_as_constants():
    frozen = nn.Linear(3, 2)

    def loss(w):
        return np.sum(frozen(w))

    value, g = adcompile.value_and_grad(adcompile.compile(loss, backend="python"))(X)
    np.testing.assert_allclose(value, np.sum(X @ frozen.weight.data.T + frozen.bias.data))
    np.testing.assert_allclose(g, np.tile(frozen.weight.data.sum(axis=0), (6, 1)))


def test_numba_forward_matches_python():
    adcompile.modules.init.manual_seed(5)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    out = model(X)
    expected = np.maximum(X @ model[0].weight.data.T + model[0].bias.data, 0) @ model[2].weight.data.T \
        + model[2].bias.data
    np.testing.assert_allclose(out, expected)
