"""One SGD training step of a 784-256-10 MLP (ReLU, softmax cross entropy), batch 128:
``adcompile.train_step`` (forward, backward and update in one compiled call) against the same
step written by hand in numpy and numba, JAX (one jitted step), PyTorch (``optim.SGD``) and
autograd. Every implementation starts from the same parameters; the step updates them.
"""
from importlib.metadata import version

import numba
import numpy as np

import adcompile
import adcompile.nn.functional as F
from adcompile import nn
from harness import Implementation, compile_with_adcompile

NAME = "mlp"
TITLE = "MLP training step (SGD)"
SIZES = {"tiny": {"batch": 8, "layers": (12, 6, 3)}, "full": {"batch": 128, "layers": (784, 256, 10)}}
NOTE = ("forward: the loss; gradient: one training step (forward, backward, SGD update of the "
        "parameters in place, learning rate 0.01).")
LEARNING_RATE = 0.01
PARAMETER_NAMES = ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")


class MLP(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.fc1 = nn.Linear(layers[0], layers[1])
        self.fc2 = nn.Linear(layers[1], layers[2])

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def make_inputs(size):
    batch, (inputs, hidden, classes) = SIZES[size].values()
    rng = np.random.default_rng(4)
    parameters = [rng.uniform(-1, 1, shape) / np.sqrt(shape[-1])
                  for shape in ((hidden, inputs), (hidden,), (classes, hidden), (classes,))]
    parameters[1] /= np.sqrt(inputs)
    parameters[3] /= np.sqrt(hidden)
    return rng.normal(size=(batch, inputs)), rng.integers(0, classes, size=batch), parameters


def adcompile_version(data):
    x, y, parameters = data
    model = MLP([parameters[0].shape[1], parameters[0].shape[0], parameters[2].shape[0]])
    model.load_state_dict(dict(zip(PARAMETER_NAMES, (p.copy() for p in parameters))))
    forward = compile_with_adcompile(loss_fn)
    step = adcompile.train_step(forward, model, adcompile.optim.SGD(model.parameters(), lr=LEARNING_RATE))
    return Implementation("adcompile", "adcompile (train_step)", lambda: forward(model, x, y), lambda: step(x, y),
                          result=lambda _: [p.data for p in model.parameters()])


def numpy_step(params, x, y):
    """The step by hand in numpy: ``params`` = [w1, b1, w2, b2] updated in place; returns the loss."""
    w1, b1, w2, b2 = params
    h_pre = x @ w1.T + b1
    h = np.maximum(h_pre, 0.0)
    logits = h @ w2.T + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    probs /= probs.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.mean(np.log(probs[np.arange(n), y]))
    d_logits = probs
    d_logits[np.arange(n), y] -= 1.0
    d_logits /= n
    d_h = d_logits @ w2
    d_h[h_pre <= 0] = 0.0
    w2 -= LEARNING_RATE * (d_logits.T @ h)
    b2 -= LEARNING_RATE * d_logits.sum(axis=0)
    w1 -= LEARNING_RATE * (d_h.T @ x)
    b1 -= LEARNING_RATE * d_h.sum(axis=0)
    return loss


def numpy_loss(params, x, y):
    w1, b1, w2, b2 = params
    logits = np.maximum(x @ w1.T + b1, 0.0) @ w2.T + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(x.shape[0]), y])


def numpy_version(data):
    x, y, parameters = data
    params = [p.copy() for p in parameters]
    return Implementation("numpy", "numpy by hand", lambda: numpy_loss(params, x, y),
                          lambda: numpy_step(params, x, y), result=lambda _: params)


@numba.njit
def softmax_cross_entropy_numba(logits, y):
    """(loss, d_logits) of the mean softmax cross entropy, row by row."""
    n, classes = logits.shape
    d_logits = np.empty_like(logits)
    loss = 0.0
    for i in range(n):
        m = logits[i].max()
        total = 0.0
        for c in range(classes):
            d_logits[i, c] = np.exp(logits[i, c] - m)
            total += d_logits[i, c]
        loss -= logits[i, y[i]] - m - np.log(total)
        for c in range(classes):
            d_logits[i, c] /= total * n
        d_logits[i, y[i]] -= 1.0 / n
    return loss / n, d_logits


@numba.njit
def numba_loss(w1, b1, w2, b2, x, y):
    logits = np.maximum(x @ w1.T + b1, 0.0) @ w2.T + b2
    return softmax_cross_entropy_numba(logits, y)[0]


@numba.njit
def numba_step(w1, b1, w2, b2, x, y):
    h_pre = x @ w1.T + b1
    h = np.maximum(h_pre, 0.0)
    loss, d_logits = softmax_cross_entropy_numba(h @ w2.T + b2, y)
    d_h = d_logits @ w2
    for i in range(d_h.shape[0]):
        for j in range(d_h.shape[1]):
            if h_pre[i, j] <= 0.0:
                d_h[i, j] = 0.0
    w2 -= LEARNING_RATE * (d_logits.T @ h)
    b2 -= LEARNING_RATE * d_logits.sum(axis=0)
    w1 -= LEARNING_RATE * (d_h.T @ x)
    b1 -= LEARNING_RATE * d_h.sum(axis=0)
    return loss


def numba_version(data):
    x, y, parameters = data
    params = [p.copy() for p in parameters]
    return Implementation("numba", "numba by hand", lambda: numba_loss(*params, x, y),
                          lambda: numba_step(*params, x, y), result=lambda _: params)


def build_functional_loss(xp):
    """The loss of parameters [w1, b1, w2, b2] written with ``xp`` (jax.numpy, autograd.numpy)."""
    def mlp_loss(params, x, y):
        w1, b1, w2, b2 = params
        logits = xp.maximum(x @ w1.T + b1, 0.0) @ w2.T + b2
        shifted = logits - xp.max(logits, axis=1, keepdims=True)
        log_probs = shifted - xp.log(xp.sum(xp.exp(shifted), axis=1, keepdims=True))
        return -xp.mean(log_probs[xp.arange(x.shape[0]), y])
    return mlp_loss


def sgd_step_of(loss_gradient):
    """The functional SGD step: new parameters from ``loss_gradient(params, x, y)``."""
    def sgd_step(params, x, y):
        return [p - LEARNING_RATE * g for p, g in zip(params, loss_gradient(params, x, y))]
    return sgd_step


class FunctionalTrainer:
    """Keeps the parameters of a functional (JAX, autograd) step: ``step()`` replaces them."""

    def __init__(self, params, step):
        self.params, self._step = params, step

    def step(self, x, y):
        self.params = self._step(self.params, x, y)
        return self.params


def jax_version(data, jax):
    x, y, parameters = data
    loss = build_functional_loss(jax.numpy)
    trainer = FunctionalTrainer([jax.numpy.asarray(p) for p in parameters], jax.jit(sgd_step_of(jax.grad(loss))))
    jitted_loss, device_x, device_y = jax.jit(loss), jax.numpy.asarray(x), jax.numpy.asarray(y)
    return Implementation("jax", f"JAX {jax.__version__} (jit step)",
                          lambda: jax.block_until_ready(jitted_loss(trainer.params, device_x, device_y)),
                          lambda: jax.block_until_ready(trainer.step(device_x, device_y)))


def torch_version(data, torch):
    x, y, parameters = data
    net = torch.nn.Sequential(torch.nn.Linear(*parameters[0].shape[::-1]), torch.nn.ReLU(),
                              torch.nn.Linear(*parameters[2].shape[::-1])).double()
    with torch.no_grad():
        for tensor, value in zip(net.parameters(), parameters):
            tensor.copy_(torch.tensor(value))
    optimizer = torch.optim.SGD(net.parameters(), lr=LEARNING_RATE)
    tx, ty = torch.tensor(x), torch.tensor(y)

    def forward():
        with torch.no_grad():
            return torch.nn.functional.cross_entropy(net(tx), ty)

    def step():
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(tx), ty)
        loss.backward()
        optimizer.step()
        return loss
    return Implementation("torch", f"PyTorch {torch.__version__.split('+')[0]} (optim.SGD)", forward, step,
                          result=lambda _: list(net.parameters()))


def autograd_version(data, autograd):
    x, y, parameters = data
    loss = build_functional_loss(autograd.numpy)
    trainer = FunctionalTrainer([p.copy() for p in parameters], sgd_step_of(autograd.grad(loss)))
    return Implementation("autograd", f"autograd {version('autograd')} (HIPS)",
                          lambda: loss(trainer.params, x, y), lambda: trainer.step(x, y))
