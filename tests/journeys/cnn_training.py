"""A user's CNN script: Conv2d, MaxPool2d, AvgPool2d and Linear trained on the default backend,
with ``fit`` and with PyTorch's loop (``backward`` + ``optimizer.step``), the loss defined
inside ``main`` as training scripts do. Prints one JSON line of what it measured."""
import json
import sys

import numpy as np

import adcompile
from adcompile import nn


EPOCHS = 30  # of 3 minibatches: the generated Python takes both losses below 0.25 from 1.1


class SmallCNN(adcompile.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 3, 3, padding=1)
        self.pool1 = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(3, 4, 3)
        self.pool2 = nn.AvgPool2d(2, padding=1)
        self.fc = nn.Linear(4 * 2 * 2, 3)

    def forward(self, x):
        h = self.pool1(nn.functional.relu(self.conv1(x)))
        h = self.pool2(np.tanh(self.conv2(h)))
        return self.fc(h.reshape(h.shape[0], -1))


def data(n=48, seed=0):
    """Three classes of 8x8 images: a bright row, a bright column, a bright diagonal."""
    rng = np.random.default_rng(seed)
    X = 0.1 * rng.normal(size=(n, 1, 8, 8))
    y = np.arange(n) % 3
    for k in range(n):
        where = rng.integers(1, 7)
        if y[k] == 0:
            X[k, 0, where, :] += 1.0
        elif y[k] == 1:
            X[k, 0, :, where] += 1.0
        else:
            X[k, 0] += np.eye(8)
    return X, y


def main():
    def loss_fn(model, X, y):
        return nn.functional.cross_entropy(model(X), y)

    X, y = data()
    report = {}
    adcompile.modules.init.manual_seed(0)  # as a reproducible script seeds its initialisation

    # the gradient of one batch on numba against the Python backend and central differences
    model = SmallCNN()
    grads = adcompile.grad(loss_fn)(model, X[:6], y[:6])
    python_model = SmallCNN().compile("python")
    python_model.load_state_dict(model.state_dict())
    python_grads = adcompile.grad(loss_fn)(python_model, X[:6], y[:6])
    report["max_backend_difference"] = max(float(np.max(np.abs(grads[name] - python_grads[name]))) for name in grads)
    weight = model.conv1.weight
    worst = 0.0
    for index in [(0, 0, 0, 0), (1, 0, 1, 2), (2, 0, 2, 1)]:
        saved = float(weight[index])
        weight[index] = saved + 1e-6
        up = loss_fn(model, X[:6], y[:6])
        weight[index] = saved - 1e-6
        down = loss_fn(model, X[:6], y[:6])
        weight[index] = saved
        worst = max(worst, abs((up - down) / 2e-6 - grads["conv1.weight"][index]))
    report["max_difference_to_central_differences"] = worst

    # fit
    optimizer = adcompile.optim.Adam(model.parameters(), lr=0.02)
    losses = adcompile.fit(loss_fn, model, optimizer, X, y, epochs=EPOCHS, batch_size=16, progress=False)
    report["fit_first_loss"], report["fit_last_loss"] = float(losses[0]), float(losses[-1])

    # PyTorch's loop
    model = SmallCNN()
    optimizer = adcompile.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    first = last = None
    for epoch in range(EPOCHS):
        for start in range(0, len(X), 16):
            optimizer.zero_grad()
            loss = adcompile.backward(loss_fn, model, X[start:start + 16], y[start:start + 16])
            optimizer.step()
            first = float(loss) if first is None else first
            last = float(loss)
    report["loop_first_loss"], report["loop_last_loss"] = first, last
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
