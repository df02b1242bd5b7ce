"""Every layer and loss: forward against its formula (and against torch where installed),
gradients against finite differences, and a Hessian-vector product against finite
differences of the gradient. Inputs are scaled by a trainable ``Probe`` parameter so that
layers without parameters are differentiated too."""
import numpy as np
import pytest

import adcompile
from adcompile import Module, Parameter, nn
import adcompile.nn.functional as F
from module_helpers import check_grad_fd, check_hvp_fd

RNG = np.random.default_rng(0)


class Probe(Module):
    """``layer(x * scale)`` with a trainable ``scale`` of the input's shape."""

    def __init__(self, layer, shape):
        super().__init__()
        self.layer = layer
        self.scale = Parameter(1.0 + 0.1 * np.random.default_rng(1).normal(size=shape))

    def forward(self, x):
        return self.layer(x * self.scale)


def weighted_sum(model, x, r):
    return np.sum(model(x) * r)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def make_layers():
    adcompile.modules.init.manual_seed(4)
    x2 = RNG.normal(size=(4, 6))
    x3 = RNG.normal(size=(2, 3, 9))
    x4 = RNG.normal(size=(2, 2, 6, 6))
    erf = np.vectorize(__import__("math").erf)
    cases = {
        "Linear": (nn.Linear(6, 3), x2, lambda m, x: x @ m.weight.data.T + m.bias.data),
        "Linear_vector": (nn.Linear(6, 3), x2[0], lambda m, x: m.weight.data @ x + m.bias.data),
        "ReLU": (nn.ReLU(), x2, lambda m, x: np.maximum(x, 0)),
        "Tanh": (nn.Tanh(), x2, lambda m, x: np.tanh(x)),
        "Sigmoid": (nn.Sigmoid(), x2, lambda m, x: sigmoid(x)),
        "GELU": (nn.GELU(), x2, lambda m, x: 0.5 * x * (1 + erf(x / np.sqrt(2)))),
        "GELU_tanh": (nn.GELU("tanh"), x2,
                      lambda m, x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
        "Softmax": (nn.Softmax(dim=1), x2, lambda m, x: np.exp(x) / np.exp(x).sum(1, keepdims=True)),
        "LogSoftmax": (nn.LogSoftmax(dim=-1), x2, lambda m, x: x - np.log(np.exp(x).sum(1, keepdims=True))),
        "LayerNorm": (nn.LayerNorm(6), x2,
                      lambda m, x: (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
                      * m.weight.data + m.bias.data),
        "Flatten": (nn.Flatten(), x3, lambda m, x: x.reshape(2, 27)),
        "Dropout_eval": (nn.Dropout(0.4).eval(), x2, lambda m, x: x),
        "Conv1d": (nn.Conv1d(3, 4, 3, stride=2, padding=1), x3, conv1d_reference),
        "Conv2d": (nn.Conv2d(2, 3, 3, stride=1, padding=1), x4, conv2d_reference),
        "MaxPool1d": (nn.MaxPool1d(3), x3, lambda m, x: x.reshape(2, 3, 3, 3).max(-1)),
        "AvgPool1d": (nn.AvgPool1d(3), x3, lambda m, x: x.reshape(2, 3, 3, 3).mean(-1)),
        "MaxPool2d": (nn.MaxPool2d(2), x4, lambda m, x: x.reshape(2, 2, 3, 2, 3, 2).max(axis=(3, 5))),
        "AvgPool2d": (nn.AvgPool2d(3), x4, lambda m, x: x.reshape(2, 2, 2, 3, 2, 3).mean(axis=(3, 5))),
        # PyTorch's argument forms: several trailing axes, tuple sizes/strides/paddings, "same"
        "LayerNorm_2axes": (nn.LayerNorm((3, 9)), x3,
                            lambda m, x: (x - x.mean((1, 2), keepdims=True)) / np.sqrt(x.var((1, 2), keepdims=True)
                                                                                       + 1e-5) * m.weight.data
                            + m.bias.data),
        "Conv2d_tuples": (nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=(1, 2)), x4,
                          lambda m, x: conv_reference(m, x, (2, 1), ((1, 1), (2, 2)))),
        "Conv2d_same": (nn.Conv2d(2, 3, (3, 2), padding="same"), x4,
                        lambda m, x: conv_reference(m, x, (1, 1), ((1, 1), (0, 1)))),
        "Conv1d_same_even": (nn.Conv1d(3, 4, 4, padding="same"), x3,
                             lambda m, x: conv_reference(m, x, (1,), ((1, 2),))),
        "Conv1d_tuples": (nn.Conv1d(3, 4, (3,), stride=(2,), padding=(2,)), x3,
                          lambda m, x: conv_reference(m, x, (2,), ((2, 2),))),
        "MaxPool2d_tuples": (nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 1)), x4,
                             lambda m, x: pool_reference(x, (3, 2), (2, 1), (1, 1), np.max)),
        "AvgPool2d_tuples": (nn.AvgPool2d((3, 2), stride=(2, 1), padding=(1, 1)), x4,
                             lambda m, x: pool_reference(x, (3, 2), (2, 1), (1, 1), np.mean)),
        "MaxPool1d_padded": (nn.MaxPool1d(3, stride=2, padding=1), x3,
                             lambda m, x: pool_reference(x, (3,), (2,), (1,), np.max)),
        "AvgPool1d_tuples": (nn.AvgPool1d((2,), padding=(1,)), x3,
                             lambda m, x: pool_reference(x, (2,), (2,), (1,), np.mean)),
    }
    return cases


def conv_reference(m, x, stride, pads):
    """Direct convolution: every output position is a sum over the kernel window."""
    w, b = m.weight.data, m.bias.data
    spatial = x.ndim - 2
    padded = np.pad(x, ((0, 0), (0, 0)) + tuple(pads))
    kernel = w.shape[2:]
    out_shape = tuple((padded.shape[2 + a] - kernel[a]) // stride[a] + 1 for a in range(spatial))
    out = np.zeros(x.shape[:1] + w.shape[:1] + out_shape)
    for pos in np.ndindex(*out_shape):
        window = padded[(slice(None), slice(None)) + tuple(slice(p * s, p * s + k)
                                                           for p, s, k in zip(pos, stride, kernel))]
        out[(slice(None), slice(None)) + pos] = np.tensordot(window, w, axes=(range(1, 2 + spatial),
                                                                            range(1, 2 + spatial))) + b
    return out


def pool_reference(x, kernel, stride, pad, reduce):
    """Pooling by windows: max pads with -inf, mean with zeros counted in the mean (PyTorch)."""
    spatial = x.ndim - 2
    fill = -np.inf if reduce is np.max else 0.0
    padded = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in pad), constant_values=fill)
    out_shape = tuple((padded.shape[2 + a] - kernel[a]) // stride[a] + 1 for a in range(spatial))
    out = np.zeros(x.shape[:2] + out_shape)
    for pos in np.ndindex(*out_shape):
        window = padded[(slice(None), slice(None)) + tuple(slice(p * s, p * s + k)
                                                           for p, s, k in zip(pos, stride, kernel))]
        out[(slice(None), slice(None)) + pos] = reduce(window, axis=tuple(range(2, 2 + spatial)))
    return out


def conv1d_reference(m, x):
    w, b = m.weight.data, m.bias.data
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1)))
    length = (padded.shape[2] - 3) // 2 + 1
    out = np.zeros((2, 4, length))
    for t in range(length):
        out[:, :, t] = np.einsum("nck,ock->no", padded[:, :, 2 * t:2 * t + 3], w) + b
    return out


def conv2d_reference(m, x):
    w, b = m.weight.data, m.bias.data
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((2, 3, 6, 6))
    for i in range(6):
        for j in range(6):
            out[:, :, i, j] = np.einsum("nckl,ockl->no", padded[:, :, i:i + 3, j:j + 3], w) + b
    return out


CASES = make_layers()


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_forward_gradient_and_hvp(name):
    layer, x, reference = CASES[name]
    expected = reference(layer, x)
    tolerance = 2e-7 if name == "GELU" else 1e-12  # GELU's erf: Abramowitz-Stegun, error < 1.5e-7
    np.testing.assert_allclose(layer.compile("python")(x), expected, rtol=tolerance, atol=tolerance)
    probe = Probe(layer, x.shape).compile("python")
    r = np.random.default_rng(2).normal(size=expected.shape)
    check_grad_fd(weighted_sum, probe, x, r)
    check_hvp_fd(weighted_sum, probe, x, r)


class Cell(Module):
    def __init__(self, cell, lstm=False):
        super().__init__()
        self.cell = cell
        self.lstm = lstm

    def forward(self, x):
        h = np.tanh(x[:, :3])
        if self.lstm:
            h_next, c_next = self.cell(x, h, h * 0.5)
            return h_next + 2.0 * c_next
        return self.cell(x, h)


def cell_reference(cell, x, kind):
    h = np.tanh(x[:, :3])
    gates = x @ cell.weight_ih.data.T + cell.bias_ih.data
    hidden = h @ cell.weight_hh.data.T + cell.bias_hh.data
    if kind == "RNNCell":
        return np.tanh(gates + hidden)
    if kind == "GRUCell":
        r = sigmoid(gates[:, :3] + hidden[:, :3])
        z = sigmoid(gates[:, 3:6] + hidden[:, 3:6])
        n = np.tanh(gates[:, 6:] + r * hidden[:, 6:])
        return (1 - z) * n + z * h
    total = gates + hidden
    i, f, g, o = sigmoid(total[:, :3]), sigmoid(total[:, 3:6]), np.tanh(total[:, 6:9]), sigmoid(total[:, 9:])
    c = f * (h * 0.5) + i * g
    return o * np.tanh(c) + 2.0 * c


@pytest.mark.parametrize("kind", ["RNNCell", "GRUCell", "LSTMCell"])
def test_recurrent_cells(kind):
    adcompile.modules.init.manual_seed(6)
    cell = getattr(nn, kind)(4, 3)
    model = Cell(cell, lstm=kind == "LSTMCell").compile("python")
    x = RNG.normal(size=(5, 4))
    np.testing.assert_allclose(model(x), cell_reference(cell, x, kind), rtol=1e-12)
    r = np.random.default_rng(3).normal(size=(5, 3))
    check_grad_fd(weighted_sum, model, x, r)
    check_hvp_fd(weighted_sum, model, x, r)


class EmbeddingProbe(Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 3)

    def forward(self, idx):
        return np.tanh(self.embed(idx))


def test_embedding_gathers_rows_and_accumulates_repeated_indices():
    adcompile.modules.init.manual_seed(7)
    model = EmbeddingProbe().compile("python")
    idx = np.array([1, 3, 1, 4])
    np.testing.assert_allclose(model(idx), np.tanh(model.embed.weight.data[idx]))
    r = np.random.default_rng(3).normal(size=(4, 3))
    grads = check_grad_fd(weighted_sum, model, idx, r)
    assert not grads["embed.weight"][0].any() and grads["embed.weight"][1].any()
    check_hvp_fd(weighted_sum, model, idx, r)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_embedding_of_a_batch_of_sequences(backend):
    """Indices (batch, length), as a language model's tokens: rows of shape (batch, length, dim)."""
    adcompile.modules.init.manual_seed(7)
    model = EmbeddingProbe().compile(backend)
    idx = np.array([[0, 2, 4], [4, 2, 2]])
    np.testing.assert_allclose(model(idx), np.tanh(model.embed.weight.data[idx]))
    r = np.random.default_rng(3).normal(size=(2, 3, 3))
    grads = check_grad_fd(weighted_sum, model, idx, r)
    assert not grads["embed.weight"][1].any() and grads["embed.weight"][2].any()


LOGITS = RNG.normal(size=(6, 4)) * 3
LABELS = np.array([0, 3, 1, 1, 2, 0])
PROBS = sigmoid(RNG.normal(size=(6, 4)))
TARGETS = RNG.uniform(size=(6, 4))


def _log_softmax(x):
    return x - np.log(np.exp(x).sum(1, keepdims=True))


LOSSES = {
    "mse_loss": (F.mse_loss, LOGITS, TARGETS, lambda x, t: (x - t) ** 2),
    "l1_loss": (F.l1_loss, LOGITS, TARGETS, lambda x, t: np.abs(x - t)),
    "cross_entropy": (F.cross_entropy, LOGITS, LABELS, lambda x, t: -_log_softmax(x)[np.arange(6), t]),
    "nll_loss": (F.nll_loss, _log_softmax(LOGITS), LABELS, lambda x, t: -x[np.arange(6), t]),
    "binary_cross_entropy": (F.binary_cross_entropy, PROBS, TARGETS,
                             lambda p, t: -(t * np.log(p) + (1 - t) * np.log(1 - p))),
    "binary_cross_entropy_with_logits": (F.binary_cross_entropy_with_logits, LOGITS, TARGETS,
                                         lambda x, t: -(t * np.log(sigmoid(x)) + (1 - t) * np.log(1 - sigmoid(x)))),
}


class LossProbe(Module):
    def __init__(self, loss, shape, reduction):
        super().__init__()
        self.loss = loss
        self.reduction = reduction
        self.scale = Parameter(1.0 + 0.05 * np.random.default_rng(1).normal(size=shape))

    def forward(self, x, target):
        return self.loss(x * self.scale, target, self.reduction)


def summed_loss(model, x, target):
    return np.sum(model(x, target))


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses(name, reduction):
    loss, x, target, elementwise = LOSSES[name]
    per_element = elementwise(x, target)
    expected = {"mean": per_element.mean(), "sum": per_element.sum(), "none": per_element}[reduction]
    np.testing.assert_allclose(loss(x, target, reduction), expected, rtol=1e-12)  # eager numpy
    model = LossProbe(loss, x.shape, reduction).compile("python")
    model.scale.data[...] = 1.0
    np.testing.assert_allclose(model(x, target), expected, rtol=1e-12)  # compiled
    model.scale.data[...] = 1.0 + 0.05 * np.random.default_rng(1).normal(size=x.shape)
    check_grad_fd(summed_loss, model, x, target)
    if reduction == "mean":
        check_hvp_fd(summed_loss, model, x, target)


def test_cross_entropy_is_stable_for_huge_logits():
    logits = np.array([[1000.0, 0.0], [0.0, -1000.0]])
    assert np.isclose(F.cross_entropy(logits, np.array([0, 0])), 0.0)
    assert np.isfinite(F.cross_entropy(logits, np.array([1, 1])))


def test_one_hot_and_functional_softmax():
    np.testing.assert_array_equal(F.one_hot(np.array([2, 0]), 3), [[0, 0, 1], [1, 0, 0]])
    np.testing.assert_allclose(F.softmax(LOGITS, 1).sum(1), 1.0)
    np.testing.assert_allclose(np.exp(F.log_softmax(LOGITS, 1)), F.softmax(LOGITS, 1))


TORCH_LAYERS = {
    "Linear": lambda t: t.nn.Linear(6, 3), "LayerNorm": lambda t: t.nn.LayerNorm(6), "GELU": lambda t: t.nn.GELU(),
    "GELU_tanh": lambda t: t.nn.GELU("tanh"), "LogSoftmax": lambda t: t.nn.LogSoftmax(-1),
    "Conv1d": lambda t: t.nn.Conv1d(3, 4, 3, stride=2, padding=1),
    "Conv2d": lambda t: t.nn.Conv2d(2, 3, 3, stride=1, padding=1),
    "MaxPool2d": lambda t: t.nn.MaxPool2d(2), "AvgPool1d": lambda t: t.nn.AvgPool1d(3),
    "LayerNorm_2axes": lambda t: t.nn.LayerNorm((3, 9)),
    "Conv2d_tuples": lambda t: t.nn.Conv2d(2, 3, (3, 2), stride=(2, 1), padding=(1, 2)),
    "Conv2d_same": lambda t: t.nn.Conv2d(2, 3, (3, 2), padding="same"),
    "Conv1d_same_even": lambda t: t.nn.Conv1d(3, 4, 4, padding="same"),
    "MaxPool2d_tuples": lambda t: t.nn.MaxPool2d((3, 2), stride=(2, 1), padding=(1, 1)),
    "AvgPool2d_tuples": lambda t: t.nn.AvgPool2d((3, 2), stride=(2, 1), padding=(1, 1)),
    "MaxPool1d_padded": lambda t: t.nn.MaxPool1d(3, stride=2, padding=1),
}


@pytest.mark.parametrize("name", sorted(TORCH_LAYERS))
def test_layers_match_torch_where_installed(name):
    torch = pytest.importorskip("torch")
    layer, x, _ = CASES[name]
    reference = TORCH_LAYERS[name](torch).double()
    with torch.no_grad():
        for (_, p), (_, q) in zip(layer.named_parameters(), reference.named_parameters()):
            q.copy_(torch.tensor(p.data))
        expected = reference(torch.tensor(x)).numpy()
    tolerance = 2e-7 if name == "GELU" else 1e-12
    np.testing.assert_allclose(layer.compile("python")(x), expected, rtol=tolerance, atol=tolerance)
    assert [n for n, _ in layer.named_parameters()] == [n for n, _ in reference.named_parameters()]


@pytest.mark.parametrize("make, message", [
    (lambda: nn.Conv2d(2, 3, 3, stride=2, padding="same"), "not supported for strided convolutions"),
    (lambda: nn.Conv2d(2, 3, (3, 2, 1)), "kernel_size must be an int or a tuple of 2 ints"),
    (lambda: nn.Conv1d(2, 3, 3, padding="full"), "'valid' or 'same'"),
    (lambda: nn.MaxPool2d(2, padding=2), "at most half of effective kernel size"),
    (lambda: nn.AvgPool1d((2, 2)), "kernel_size must be an int or a tuple of 1 ints"),
    (lambda: nn.LayerNorm(()), "normalized_shape"),
])
def test_bad_layer_arguments_fail_at_construction(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_sizes_computed_at_run_time_are_a_clear_compile_error():
    def pool(x, k):
        return F.max_pool1d(x, k)

    with pytest.raises(adcompile.AdCompileError, match="known when the function is compiled"):
        adcompile.compile(pool, backend="python")(np.ones((1, 1, 4)), 2)


def test_functional_layer_norm_takes_an_int_or_a_tuple():
    x = np.random.default_rng(8).normal(size=(2, 3, 4))

    def norms(x):
        return F.layer_norm(x, 4), F.layer_norm(x, (3, 4))

    last, both = adcompile.compile(norms, backend="python")(x)
    np.testing.assert_allclose(last, (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5),
                               rtol=1e-12)
    np.testing.assert_allclose(both, (x - x.mean((1, 2), keepdims=True))
                               / np.sqrt(x.var((1, 2), keepdims=True) + 1e-5), rtol=1e-12)
    np.testing.assert_allclose(F.layer_norm(x, 4), last, rtol=1e-15)  # eager numpy
