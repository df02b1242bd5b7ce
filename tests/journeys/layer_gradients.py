"""Every ``nn`` layer's gradient on the default backend (numba, lowering on) against the Python
backend and central differences, as a user's script computes them: a fresh process, one small
model per layer, the loss defined inside ``main``. Prints one JSON line per layer:
``{"layer": ..., "backend_difference": ..., "fd_difference": ..., "scale": ...}``."""
import json
import sys

import numpy as np

import adcompile
from adcompile import nn
from adcompile.nn import functional as F


def cases(rng):
    """(name, model, data) for each layer: data is the input (the loss reads the output through
    fixed random weights, so a wrong permutation of the outputs shows), or (input, target,
    criterion) for a loss module."""
    image = rng.normal(size=(2, 2, 6, 6))
    signal = rng.normal(size=(2, 2, 9))
    rows = rng.normal(size=(4, 5))
    labels = np.array([0, 2, 1, 2])
    yield "Linear", nn.Linear(5, 3), rows
    yield "Conv1d", nn.Conv1d(2, 3, 3, padding=1), signal
    yield "Conv2d", nn.Conv2d(2, 3, 3, stride=2, padding=1), image
    yield "MaxPool1d", nn.Sequential(nn.Conv1d(2, 2, 1), nn.MaxPool1d(2)), signal
    yield "AvgPool1d", nn.Sequential(nn.Conv1d(2, 2, 1), nn.AvgPool1d(3, stride=2)), signal
    yield "MaxPool2d", nn.Sequential(nn.Conv2d(2, 2, 1), nn.MaxPool2d(2)), image
    yield "AvgPool2d", nn.Sequential(nn.Conv2d(2, 2, 1), nn.AvgPool2d(2, padding=1)), image
    yield "LayerNorm", nn.Sequential(nn.Linear(5, 4), nn.LayerNorm(4)), rows
    yield "activations", nn.Sequential(nn.Linear(5, 6), nn.GELU(), nn.Linear(6, 6), nn.Sigmoid(),
                                            nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 6), nn.ReLU(),
                                            nn.Linear(6, 3), nn.Softmax(dim=1)), rows
    yield "Flatten+LogSoftmax", nn.Sequential(nn.Conv2d(2, 1, 3), nn.Flatten(), nn.Linear(16, 3),
                                                   nn.LogSoftmax(dim=1)), image
    yield "Embedding", nn.Embedding(6, 3), np.array([[0, 2, 5], [5, 2, 2]])
    yield "RNNCell", nn.RNNCell(5, 3), rows
    yield "GRUCell", nn.GRUCell(5, 3), rows
    yield "CrossEntropyLoss", nn.Linear(5, 3), (rows, labels, nn.CrossEntropyLoss())
    yield "NLLLoss", nn.Sequential(nn.Linear(5, 3), nn.LogSoftmax(dim=1)), (rows, labels, nn.NLLLoss())
    yield "MSELoss", nn.Linear(5, 3), (rows, np.ones((4, 3)), nn.MSELoss())
    yield "L1Loss", nn.Linear(5, 3), (rows, np.ones((4, 3)), nn.L1Loss())
    yield "BCEWithLogitsLoss", nn.Linear(5, 3), (rows, (rows[:, :3] > 0).astype(float), nn.BCEWithLogitsLoss())
    yield "BCELoss", nn.Sequential(nn.Linear(5, 3), nn.Sigmoid()), \
        (rows, (rows[:, :3] > 0).astype(float), nn.BCELoss())


def main():
    rng = np.random.default_rng(0)

    def weighted_loss(model, x, weights):
        return np.sum(model(x) * weights)

    def criterion_loss(model, x, target, criterion):
        return criterion(model(x), target)

    for name, model, data in cases(rng):
        if isinstance(data, tuple):
            x, target, criterion = data
            loss_fn, extra = criterion_loss, (target, criterion)
        else:
            x = data
            out = model.compile("python")(x)
            model.compile("numba")
            loss_fn, extra = weighted_loss, (rng.normal(size=np.shape(out)),)
        grads = adcompile.grad(loss_fn)(model, x, *extra)
        python_model = model.compile("python")
        python_grads = adcompile.grad(loss_fn)(python_model, x, *extra)
        backend_difference = max(float(np.max(np.abs(grads[k] - python_grads[k]))) for k in grads)
        scale = max(float(np.max(np.abs(g))) for g in grads.values())
        # central differences of the plain loss along one random direction in every parameter
        direction = {k: rng.normal(size=np.shape(g)) for k, g in grads.items()}
        params = dict(python_model.named_parameters())
        saved = {k: np.array(params[k].data, copy=True) for k in grads}
        values = []
        for sign in (1.0, -1.0):
            for k in grads:
                params[k].data[...] = saved[k] + sign * 1e-6 * direction[k]
            values.append(float(loss_fn(python_model, x, *extra)))
        for k in grads:
            params[k].data[...] = saved[k]
        finite = (values[0] - values[1]) / 2e-6
        analytic = sum(float(np.sum(grads[k] * direction[k])) for k in grads)
        print(json.dumps({"layer": name, "backend_difference": backend_difference,
                          "fd_difference": abs(finite - analytic), "scale": max(scale, abs(analytic), 1.0)}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
