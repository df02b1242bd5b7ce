"""PyTorch's layers: BatchNorm1d/2d, GroupNorm, the activations LeakyReLU, ELU, SiLU, Softplus,
Mish and Hardtanh, the sequence layers RNN, LSTM and GRU, and LSTMCell's PyTorch call.

Each forward is compared with PyTorch's formula written here in numpy (independently of the
implementation) and, where torch is installed, with torch itself number for number; each
gradient with central differences, on the generated Python and (a few small models) on
numba; BatchNorm's running statistics after several training steps with the formula."""
import numpy as np
import pytest

import adcompile
from adcompile import Module, nn
from adcompile.nn import functional as F
from module_helpers import check_grad_fd, directional_fd, random_direction

RNG = np.random.default_rng(2024)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def weighted_sum(model, x, r):
    return np.sum(model(x) * r)


# ------------------------------------------------------------------ activations
def softplus_reference(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.log1p(np.exp(np.minimum(beta * x, threshold))) / beta)


ACTIVATIONS = {  # name: (module, PyTorch's formula, torch's module name and arguments)
    "LeakyReLU": (lambda: nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x), ("LeakyReLU", (0.2,))),
    "LeakyReLU_default": (lambda: nn.LeakyReLU(), lambda x: np.where(x > 0, x, 0.01 * x), ("LeakyReLU", ())),
    "ELU": (lambda: nn.ELU(alpha=1.5), lambda x: np.where(x > 0, x, 1.5 * (np.exp(np.minimum(x, 0)) - 1.0)),
            ("ELU", (1.5,))),
    "SiLU": (lambda: nn.SiLU(), lambda x: x * sigmoid(x), ("SiLU", ())),
    "Softplus": (lambda: nn.Softplus(beta=2.0, threshold=5.0), lambda x: softplus_reference(x, 2.0, 5.0),
                 ("Softplus", (2.0, 5.0))),
    "Softplus_default": (lambda: nn.Softplus(), softplus_reference, ("Softplus", ())),
    "Mish": (lambda: nn.Mish(), lambda x: x * np.tanh(softplus_reference(x)), ("Mish", ())),
    "Hardtanh": (lambda: nn.Hardtanh(-0.5, 2.0), lambda x: np.minimum(np.maximum(x, -0.5), 2.0),
                 ("Hardtanh", (-0.5, 2.0))),
}


class Scaled(Module):
    """``layer(x * scale)``: a parameter before the layer, so gradients reach through it."""

    def __init__(self, layer, shape):
        super().__init__()
        self.scale = adcompile.Parameter(np.linspace(0.5, 1.5, int(np.prod(shape))).reshape(shape))
        self.layer = layer

    def forward(self, x):
        return self.layer(x * self.scale)


def activation_input():
    x = RNG.normal(scale=3.0, size=(4, 6))
    x[0, :3] = (30.0, -30.0, 12.0)  # far out on both sides: no overflow, no NaN gradient
    return x


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_matches_the_formula_and_finite_differences(name):
    make, formula, _ = ACTIVATIONS[name]
    x = activation_input()
    layer = make().compile("python")
    np.testing.assert_allclose(layer(x), formula(x), rtol=1e-13, atol=1e-15)
    model = Scaled(make(), x.shape).compile("python")
    r = RNG.normal(size=x.shape)
    grads = check_grad_fd(weighted_sum, model, x, r)
    assert np.all(np.isfinite(grads["scale"]))


def test_functional_activations_are_the_modules():
    x = activation_input()
    pairs = [(F.leaky_relu(x, 0.2), "LeakyReLU"), (F.elu(x, 1.5), "ELU"), (F.silu(x), "SiLU"),
             (F.softplus(x, 2.0, 5.0), "Softplus"), (F.mish(x), "Mish"), (F.hardtanh(x, -0.5, 2.0), "Hardtanh")]
    for value, name in pairs:
        np.testing.assert_allclose(value, ACTIVATIONS[name][1](x), rtol=1e-13, atol=1e-15, err_msg=name)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_matches_torch(name):
    torch = pytest.importorskip("torch")
    make, _, (torch_name, args) = ACTIVATIONS[name]
    x = activation_input()
    expected = getattr(torch.nn, torch_name)(*args)(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(make().compile("python")(x), expected, rtol=1e-12, atol=1e-14)


def test_hardtanh_rejects_an_empty_range():
    with pytest.raises(ValueError, match="max_val"):
        nn.Hardtanh(1.0, 1.0)


# ------------------------------------------------------------------ buffers written by compiled code
class Averaging(Module):
    """A custom module keeping an exponential average of its inputs in a buffer."""

    def __init__(self):
        super().__init__()
        self.weight = adcompile.Parameter(np.array([1.0, 2.0]))
        self.register_buffer("average", np.zeros(2))

    def forward(self, x):
        if self.training:
            self.average[:] = 0.5 * self.average + 0.5 * np.mean(x, axis=0)
        return x * self.weight


def test_a_buffer_written_in_forward_is_updated_by_derived_functions_too():
    model = Averaging().compile("python")
    x = np.array([[2.0, 4.0], [4.0, 8.0]])

    def loss(model, x):
        return np.sum(model(x) ** 2)
    grads = adcompile.grad(loss)(model, x)
    np.testing.assert_allclose(grads["weight"], 2 * np.sum(x * x, axis=0) * model.weight.data)
    np.testing.assert_allclose(model.average, [1.5, 3.0])  # the gradient's forward wrote it
    adcompile.jvp(loss, (model, x), ({"weight": np.ones(2)}, None))
    np.testing.assert_allclose(model.average, [2.25, 4.5])
    model.eval()
    adcompile.grad(loss)(model, x)
    np.testing.assert_allclose(model.average, [2.25, 4.5])


def test_arrays_written_by_a_plain_function_stay_values_in_its_derivatives():
    def f(x, buffer):
        buffer[:] = 2.0 * x
        return np.sum(x * x)
    x, buffer = np.array([1.0, 3.0]), np.zeros(2)
    np.testing.assert_allclose(adcompile.grad(adcompile.compile(f, backend="python"))(x, buffer), 2 * x)
    np.testing.assert_allclose(buffer, 0.0)  # not a module's buffer: the derivative copies it


# ------------------------------------------------------------------ batch and group normalisation
def batch_norm_reference(x, weight, bias, eps=1e-5):
    axes = (0,) + tuple(range(2, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean) / np.sqrt(var + eps) * weight.reshape(shape) + bias.reshape(shape)


def group_norm_reference(x, groups, weight, bias, eps=1e-5):
    n, c = x.shape[:2]
    rows = x.reshape(n, groups, -1)
    normed = (rows - rows.mean(axis=2, keepdims=True)) / np.sqrt(rows.var(axis=2, keepdims=True) + eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return normed.reshape(x.shape) * weight.reshape(shape) + bias.reshape(shape)


def randomised(layer):
    """``layer`` with random affine parameters (their defaults are ones and zeros)."""
    for param in layer.parameters():
        param.data[...] = RNG.normal(size=param.data.shape)
    return layer


@pytest.mark.parametrize("layer, shape", [("BatchNorm1d", (6, 3)), ("BatchNorm1d", (5, 3, 4)),
                                          ("BatchNorm2d", (4, 3, 3, 5))])
def test_batch_norm_training_forward_gradient_and_running_statistics(layer, shape):
    bn = randomised(getattr(nn, layer)(3, momentum=0.3)).compile("python")
    expected_mean, expected_var = np.zeros(3), np.ones(3)
    axes = (0,) + tuple(range(2, len(shape)))
    count = np.prod([shape[a] for a in axes])
    for step in range(3):
        x = RNG.normal(loc=step, scale=2.0, size=shape)
        np.testing.assert_allclose(bn(x), batch_norm_reference(x, bn.weight.data, bn.bias.data), rtol=1e-12)
        expected_mean = 0.7 * expected_mean + 0.3 * x.mean(axis=axes)
        expected_var = 0.7 * expected_var + 0.3 * x.var(axis=axes) * count / (count - 1)  # unbiased
    np.testing.assert_allclose(bn.running_mean, expected_mean, rtol=1e-12)
    np.testing.assert_allclose(bn.running_var, expected_var, rtol=1e-12)
    assert bn.num_batches_tracked.tolist() == [3]
    # the batch statistics are differentiated: the input's own gradient as well as the parameters'
    model = Scaled(bn, shape).compile("python")
    check_grad_fd(weighted_sum, model, x, RNG.normal(size=shape))


def test_batch_norm_eval_mode_uses_the_running_statistics_and_leaves_them():
    bn = randomised(nn.BatchNorm1d(3)).compile("python")
    bn.running_mean[...] = (0.5, -1.0, 2.0)
    bn.running_var[...] = (4.0, 0.25, 1.0)
    bn.eval()
    x = RNG.normal(size=(5, 3))
    expected = (x - bn.running_mean) / np.sqrt(bn.running_var + 1e-5) * bn.weight.data + bn.bias.data
    np.testing.assert_allclose(bn(x), expected, rtol=1e-12)
    np.testing.assert_allclose(bn.running_mean, (0.5, -1.0, 2.0))
    assert bn.num_batches_tracked.tolist() == [0]
    model = Scaled(bn, x.shape).compile("python")
    check_grad_fd(weighted_sum, model, x, RNG.normal(size=x.shape))


def test_batch_norm_cumulative_average_without_tracking_and_without_affine():
    cumulative = nn.BatchNorm1d(2, momentum=None).compile("python")
    batches = [RNG.normal(size=(4, 2)) for _ in range(3)]
    for x in batches:
        cumulative(x)
    np.testing.assert_allclose(cumulative.running_mean, np.mean([x.mean(axis=0) for x in batches], axis=0))
    np.testing.assert_allclose(cumulative.running_var, np.mean([x.var(axis=0, ddof=1) for x in batches], axis=0))
    untracked = nn.BatchNorm1d(2, affine=False, track_running_stats=False).compile("python")
    assert untracked.running_mean is None and not list(untracked.parameters())
    assert [name for name, _ in untracked.named_buffers()] == []
    untracked.eval()  # no running statistics: the batch's, also in eval mode
    x = batches[0]
    np.testing.assert_allclose(untracked(x), batch_norm_reference(x, np.ones(2), np.zeros(2)), rtol=1e-12)


def test_batch_norm_statistics_advance_in_backward_train_step_and_fit():
    def loss_fn(model, x, y):
        return np.mean((model(x)[:, 0] - y) ** 2)
    batches = [RNG.normal(size=(6, 2)) for _ in range(3)]
    expected_mean, expected_var = np.zeros(2), np.ones(2)
    for x in batches:
        expected_mean = 0.9 * expected_mean + 0.1 * x.mean(axis=0)
        expected_var = 0.9 * expected_var + 0.1 * x.var(axis=0, ddof=1)
    for how in ("backward", "train_step", "fit"):
        bn = nn.BatchNorm1d(2).compile("python")
        optimizer = adcompile.optim.SGD(bn.parameters(), lr=0.0)
        step = adcompile.train_step(loss_fn, bn, optimizer)
        for x in batches:
            y = np.zeros(len(x))
            if how == "backward":
                adcompile.backward(loss_fn, bn, x, y)
            elif how == "train_step":
                step(x, y)
            else:
                adcompile.fit(loss_fn, bn, optimizer, x, y, epochs=1, batch_size=len(x), shuffle=False,
                              progress=False)
        np.testing.assert_allclose(bn.running_mean, expected_mean, rtol=1e-12, err_msg=how)
        np.testing.assert_allclose(bn.running_var, expected_var, rtol=1e-12, err_msg=how)
        assert bn.num_batches_tracked.tolist() == [3], how


def test_batch_norm_rejects_input_of_the_wrong_rank():
    with pytest.raises(adcompile.AdCompileError, match="BatchNorm2d expects a 4-d input"):
        nn.BatchNorm2d(3).compile("python")(np.ones((2, 3)))
    with pytest.raises(ValueError, match="momentum"):
        nn.BatchNorm1d(3, momentum=2.0)
    with pytest.raises(AssertionError, match="more than 1 value per channel"):  # as PyTorch's ValueError
        nn.BatchNorm1d(3).compile("python")(np.ones((1, 3)))


@pytest.mark.parametrize("shape, groups", [((3, 6), 3), ((2, 6, 5), 2), ((2, 4, 3, 3), 4)])
def test_group_norm_forward_and_gradient(shape, groups):
    gn = randomised(nn.GroupNorm(groups, shape[1])).compile("python")
    x = RNG.normal(size=shape)
    np.testing.assert_allclose(gn(x), group_norm_reference(x, groups, gn.weight.data, gn.bias.data), rtol=1e-12)
    check_grad_fd(weighted_sum, Scaled(gn, shape).compile("python"), x, RNG.normal(size=shape))


def test_group_norm_rejects_indivisible_channels():
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(4, 6)


def torch_module_like(torch, ours, theirs):
    """``theirs`` (a torch module) with our module's parameters and buffers, in double precision."""
    theirs = theirs.double()
    state = {name: torch.from_numpy(np.array(value)) for name, value in ours.state_dict().items()}
    if "num_batches_tracked" in state:
        state["num_batches_tracked"] = state["num_batches_tracked"].reshape(())
    theirs.load_state_dict(state)
    return theirs


@pytest.mark.parametrize("layer, shape, kwargs", [("BatchNorm1d", (6, 3), {}), ("BatchNorm1d", (5, 3, 4), {}),
                                                  ("BatchNorm2d", (4, 3, 3, 5), {"momentum": None}),
                                                  ("BatchNorm2d", (4, 3, 2, 2), {"affine": False})])
def test_batch_norm_matches_torch_in_training_and_eval(layer, shape, kwargs):
    torch = pytest.importorskip("torch")
    ours = randomised(getattr(nn, layer)(3, **kwargs)).compile("python")
    theirs = torch_module_like(torch, ours, getattr(torch.nn, layer)(3, **kwargs))
    for step in range(3):
        x = RNG.normal(loc=step, size=shape)
        np.testing.assert_allclose(ours(x), theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(ours.running_mean, theirs.running_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours.running_var, theirs.running_var.numpy(), rtol=1e-12)
    assert int(ours.num_batches_tracked[0]) == int(theirs.num_batches_tracked)
    ours.eval(), theirs.eval()
    x = RNG.normal(size=shape)
    np.testing.assert_allclose(ours(x), theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-12, atol=1e-13)


def test_group_norm_matches_torch():
    torch = pytest.importorskip("torch")
    ours = randomised(nn.GroupNorm(2, 4)).compile("python")
    theirs = torch_module_like(torch, ours, torch.nn.GroupNorm(2, 4))
    x = RNG.normal(size=(3, 4, 5))
    np.testing.assert_allclose(ours(x), theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-12, atol=1e-13)


# ------------------------------------------------------------------ sequence layers
def cell_step(kind, x, h, c, w_ih, w_hh, b_ih, b_hh, nonlinearity="tanh"):
    """PyTorch's documented equations of one time step: (h', c')."""
    gi = x @ w_ih.T + (0.0 if b_ih is None else b_ih)
    gh = h @ w_hh.T + (0.0 if b_hh is None else b_hh)
    n = h.shape[1]
    if kind == "RNN":
        pre = gi + gh
        return (np.maximum(pre, 0.0) if nonlinearity == "relu" else np.tanh(pre)), c
    if kind == "GRU":
        r = sigmoid(gi[:, :n] + gh[:, :n])
        z = sigmoid(gi[:, n:2 * n] + gh[:, n:2 * n])
        candidate = np.tanh(gi[:, 2 * n:] + r * gh[:, 2 * n:])
        return (1 - z) * candidate + z * h, c
    gates = gi + gh
    i, f = sigmoid(gates[:, :n]), sigmoid(gates[:, n:2 * n])
    g, o = np.tanh(gates[:, 2 * n:3 * n]), sigmoid(gates[:, 3 * n:])
    c_next = f * c + i * g
    return o * np.tanh(c_next), c_next


def sequence_reference(kind, layer, x, h0, c0):
    """(output, h_n, c_n) of ``layer`` by PyTorch's equations, over input (L, N, H_in)."""
    directions = 2 if layer.bidirectional else 1
    h_n, c_n = np.zeros_like(h0), np.zeros_like(c0)
    params = dict(layer.named_parameters())
    layer_input = x
    for number in range(layer.num_layers):
        outputs = []
        for direction in range(directions):
            suffix = f"l{number}" + ("_reverse" if direction else "")
            weights = [params[f"{kind}_{suffix}"].data if f"{kind}_{suffix}" in params else None
                       for kind in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
            index = number * directions + direction
            h, c = h0[index], c0[index]
            out = np.zeros((len(x), x.shape[1], layer.hidden_size))
            times = range(len(x) - 1, -1, -1) if direction else range(len(x))
            for t in times:
                h, c = cell_step(kind_of(layer), layer_input[t], h, c, *weights,
                                 getattr(layer, "nonlinearity", "tanh"))
                out[t] = h
            h_n[index], c_n[index] = h, c
            outputs.append(out)
        layer_input = np.concatenate(outputs, axis=2)
    return layer_input, h_n, c_n


def kind_of(layer):
    return type(layer).__name__


SEQUENCES = {  # id: (class, keyword arguments)
    "RNN": (nn.RNN, {}),
    "RNN_relu_2layers": (nn.RNN, {"nonlinearity": "relu", "num_layers": 2}),
    "LSTM": (nn.LSTM, {}),
    "LSTM_bidirectional_2layers_batch_first": (nn.LSTM, {"num_layers": 2, "bidirectional": True,
                                                         "batch_first": True}),
    "GRU_bidirectional": (nn.GRU, {"bidirectional": True}),
    "GRU_no_bias": (nn.GRU, {"bias": False, "num_layers": 2}),
}


class SequenceProbe(Module):
    """A sequence layer with a given initial state, its outputs summed with weights."""

    def __init__(self, layer):
        super().__init__()
        self.layer = layer

    def forward(self, x, h0, c0, r_out, r_h, r_c):
        if self.layer._kind == "LSTM":
            out, (h_n, c_n) = self.layer(x, (h0, c0))
            return np.sum(out * r_out) + np.sum(h_n * r_h) + np.sum(c_n * r_c)
        out, h_n = self.layer(x, h0)
        return np.sum(out * r_out) + np.sum(h_n * r_h)


def sequence_case(name, seed=0, steps=4, batch=2, features=3, hidden=5):
    cls, kwargs = SEQUENCES[name]
    adcompile.modules.init.manual_seed(seed)
    layer = cls(features, hidden, **kwargs)
    rng = np.random.default_rng(seed)
    directions = 2 if layer.bidirectional else 1
    x = rng.normal(size=(batch, steps, features) if layer.batch_first else (steps, batch, features))
    h0 = rng.normal(size=(layer.num_layers * directions, batch, hidden))
    c0 = rng.normal(size=h0.shape)
    return layer, x, h0, c0


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_sequence_layer_matches_the_equations(name):
    layer, x, h0, c0 = sequence_case(name)
    layer.compile("python")
    time_major = np.swapaxes(x, 0, 1) if layer.batch_first else x
    expected_out, expected_h, expected_c = sequence_reference(kind_of(layer), layer, time_major, h0, c0)
    if kind_of(layer) == "LSTM":
        out, (h_n, c_n) = layer(x, (h0, c0))
        np.testing.assert_allclose(c_n, expected_c, rtol=1e-12, atol=1e-14)
    else:
        out, h_n = layer(x, h0)
    out = np.swapaxes(out, 0, 1) if layer.batch_first else out
    np.testing.assert_allclose(out, expected_out, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(h_n, expected_h, rtol=1e-12, atol=1e-14)
    # without an initial state: zeros
    zeros = np.zeros_like(h0)
    default = layer(x)[0]
    expected_default = sequence_reference(kind_of(layer), layer, time_major, zeros, zeros)[0]
    np.testing.assert_allclose(np.swapaxes(default, 0, 1) if layer.batch_first else default, expected_default,
                               rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", ["RNN_relu_2layers", "LSTM_bidirectional_2layers_batch_first",
                                  "GRU_bidirectional", "GRU_no_bias"])
def test_sequence_layer_gradients_match_finite_differences(name):
    layer, x, h0, c0 = sequence_case(name, seed=1)
    probe = SequenceProbe(layer).compile("python")
    rng = np.random.default_rng(5)
    directions = 2 if layer.bidirectional else 1
    out_shape = x.shape[:2] + (layer.hidden_size * directions,)
    args = (x, h0, c0, rng.normal(size=out_shape), rng.normal(size=h0.shape), rng.normal(size=h0.shape))

    def loss(model, x, h0, c0, r_out, r_h, r_c):
        return model(x, h0, c0, r_out, r_h, r_c)
    check_grad_fd(loss, probe, *args)
    # and with respect to the input and the initial state
    gx, gh = adcompile.grad(adcompile.compile(loss, backend="python"), wrt=(1, 2))(probe, *args)
    direction = rng.normal(size=x.shape)
    measured = (probe(x + 1e-6 * direction, *args[1:]) - probe(x - 1e-6 * direction, *args[1:])) / 2e-6
    assert np.isclose(np.sum(gx * direction), measured, rtol=1e-6)
    direction = rng.normal(size=h0.shape)
    rest = args[2:]
    measured = (probe(x, h0 + 1e-6 * direction, *rest) - probe(x, h0 - 1e-6 * direction, *rest)) / 2e-6
    assert np.isclose(np.sum(gh * direction), measured, rtol=1e-6)


def test_sequence_layers_have_pytorchs_parameter_names_shapes_and_initialisation():
    lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    names = [name for name, _ in lstm.named_parameters()]
    assert names[:8] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_ih_l0_reverse",
                         "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse"]
    assert lstm.weight_ih_l0.shape == (20, 3) and lstm.weight_ih_l1.shape == (20, 10)
    assert nn.GRU(3, 5).weight_hh_l0.shape == (15, 5)
    assert [name for name, _ in nn.RNN(3, 5, bias=False).named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    bound = 1 / np.sqrt(5)
    values = np.concatenate([p.data.ravel() for p in lstm.parameters()])
    assert values.min() >= -bound and values.max() <= bound and values.std() > bound / 3
    assert repr(lstm) == "LSTM(3, 5, num_layers=2, bidirectional=True)"


def test_replacing_a_sequence_parameter_reaches_the_compiled_forward():
    gru = nn.GRU(2, 3).compile("python")
    x = RNG.normal(size=(3, 1, 2))
    before = gru(x)[0]
    gru.weight_ih_l0 = adcompile.Parameter(np.zeros((9, 2)))
    after = gru(x)[0]
    expected = sequence_reference("GRU", gru, x, np.zeros((1, 1, 3)), np.zeros((1, 1, 3)))[0]
    np.testing.assert_allclose(after, expected, rtol=1e-12)
    assert not np.allclose(before, after)


def test_sequence_layer_bad_arguments_are_clear():
    with pytest.raises(ValueError, match="dropout=0.5 between layers is not supported"):
        nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(adcompile.AdCompileError, match="LSTM expects a 3-d input"):
        nn.LSTM(3, 4).compile("python")(np.ones((5, 3)))


def test_lstm_cell_takes_pytorchs_state_tuple_and_the_older_form():
    adcompile.modules.init.manual_seed(3)
    cell = nn.LSTMCell(3, 4).compile("python")
    x, h, c = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 4)), RNG.normal(size=(2, 4))
    expected = cell_step("LSTM", x, h, c, cell.weight_ih.data, cell.weight_hh.data, cell.bias_ih.data,
                         cell.bias_hh.data)
    for result in (cell(x, (h, c)), cell(x, h, c)):
        np.testing.assert_allclose(result[0], expected[0], rtol=1e-12)
        np.testing.assert_allclose(result[1], expected[1], rtol=1e-12)
    zero = cell_step("LSTM", x, 0 * h, 0 * c, cell.weight_ih.data, cell.weight_hh.data, cell.bias_ih.data,
                     cell.bias_hh.data)
    np.testing.assert_allclose(cell(x)[1], zero[1], rtol=1e-12)


@pytest.mark.parametrize("name", ["RNN_relu_2layers", "LSTM_bidirectional_2layers_batch_first",
                                  "GRU_bidirectional", "GRU_no_bias"])
def test_sequence_layer_matches_torch(name):
    torch = pytest.importorskip("torch")
    layer, x, h0, c0 = sequence_case(name, seed=2)
    cls, kwargs = SEQUENCES[name]
    layer.compile("python")
    theirs = torch_module_like(torch, layer, getattr(torch.nn, cls.__name__)(3, 5, **kwargs))
    tx, th, tc = (torch.from_numpy(a) for a in (x, h0, c0))
    if cls is nn.LSTM:
        out, (h_n, c_n) = layer(x, (h0, c0))
        t_out, (t_h, t_c) = theirs(tx, (th, tc))
        np.testing.assert_allclose(c_n, t_c.detach().numpy(), rtol=1e-11, atol=1e-13)
    else:
        out, h_n = layer(x, h0)
        t_out, t_h = theirs(tx, th)
    np.testing.assert_allclose(out, t_out.detach().numpy(), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(h_n, t_h.detach().numpy(), rtol=1e-11, atol=1e-13)


def test_lstm_cell_matches_torch():
    torch = pytest.importorskip("torch")
    cell = nn.LSTMCell(3, 4).compile("python")
    theirs = torch_module_like(torch, cell, torch.nn.LSTMCell(3, 4))
    x, h, c = RNG.normal(size=(2, 3)), RNG.normal(size=(2, 4)), RNG.normal(size=(2, 4))
    ours = cell(x, (h, c))
    expected = theirs(torch.from_numpy(x), (torch.from_numpy(h), torch.from_numpy(c)))
    for a, b in zip(ours, expected):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ on numba (few, small: each compile costs seconds)
class Mixed(Module):
    """Every new non-recurrent layer in one model, so numba compiles one gradient for all."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.gn = nn.GroupNorm(2, 4)
        self.acts = nn.ModuleList([nn.LeakyReLU(0.2), nn.ELU(), nn.SiLU(), nn.Softplus(), nn.Mish(),
                                   nn.Hardtanh(-2.0, 2.0)])
        self.bn2 = nn.BatchNorm2d(2)

    def forward(self, x):
        h = self.gn(self.bn(self.linear(x)))
        total = h
        for act in self.acts:
            total = total + act(h * 2.0)
        images = self.bn2(total.reshape(total.shape[0], 2, 2, 1))
        return images.reshape(total.shape[0], 4)


def test_new_layers_on_numba_gradient_and_running_statistics():
    adcompile.modules.init.manual_seed(11)
    model = Mixed().compile("numba")
    reference = Mixed()
    reference.load_state_dict(model.state_dict())
    x, r = RNG.normal(size=(6, 3)), RNG.normal(size=(6, 4))
    value = adcompile.compile(weighted_sum)(model, x, r)  # the function check_grad_fd compiles: once
    assert np.isclose(value, adcompile.compile(weighted_sum, backend="python")(reference, x, r), rtol=1e-12)
    np.testing.assert_allclose(model.bn2.running_var, reference.bn2.running_var, rtol=1e-14)
    check_grad_fd(weighted_sum, model, x, r, backend="numba")
    # two more calls for the finite differences, and the gradient's: it updates the statistics too
    assert model.bn.num_batches_tracked.tolist() == [4] and model.bn2.num_batches_tracked.tolist() == [4]


class Sequences(Module):
    """RNN, GRU and a bidirectional batch-first LSTM in one model: one numba compilation."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(2, 3, nonlinearity="relu")
        self.gru = nn.GRU(2, 3)
        self.lstm = nn.LSTM(2, 3, batch_first=True, bidirectional=True)

    def forward(self, x, r):
        out, h_n = self.rnn(x)
        total = np.sum(out * r) + np.sum(h_n)
        out, h_n = self.gru(x, h_n)
        total = total + np.sum(out * r) + np.sum(h_n * h_n)
        out, (h_n, c_n) = self.lstm(np.transpose(x, (1, 0, 2)))
        return total + np.sum(out[:, :, 0:3] * np.transpose(r, (1, 0, 2))) + np.sum(out[:, :, 3:6]) + np.sum(c_n)


@pytest.mark.slow  # numba compiles a 45 KB gradient for minutes; the Python backend's tests above run by default
def test_sequence_layers_on_numba():
    adcompile.modules.init.manual_seed(4)
    model = Sequences().compile("numba")
    x, r = RNG.normal(size=(3, 2, 2)), RNG.normal(size=(3, 2, 3))

    def loss(model, x, r):
        return model(x, r)
    reference = Sequences()
    reference.load_state_dict(model.state_dict())
    expected = adcompile.compile(loss, backend="python")(reference, x, r)
    assert np.isclose(adcompile.compile(loss)(model, x, r), expected, rtol=1e-12)
    check_grad_fd(loss, model, x, r, backend="numba")
