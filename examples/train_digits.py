"""An MLP on scikit-learn's bundled digits (8x8 images, 10 classes; no download), trained
with ``adcompile.fit``: shuffling, minibatches, forward, backward and the Adam update run as
one compiled call per epoch.

    python examples/train_digits.py            # fit
    python examples/train_digits.py --loop     # the PyTorch-style loop: same parameters

Prints the loss per epoch and the test accuracy, and saves the loss curve as
``train_digits.png`` (skipped with a message if matplotlib is missing). Needs scikit-learn:
``pip install 'adcompile[examples]'``.
"""
import sys
import time
from pathlib import Path

import numpy as np

import adcompile
from adcompile import nn
import adcompile.nn.functional as F

EPOCHS, BATCH_SIZE, SEED = 20, 32, 0
BACKEND = "numba"  # "python" runs the generated Python instead (debugging)


class MLP(nn.Module):
    def __init__(self, sizes=(64, 128, 10)):
        super().__init__()
        self.hidden = nn.Linear(sizes[0], sizes[1])
        self.out = nn.Linear(sizes[1], sizes[2])

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


def loss_fn(model, images, labels):
    return F.cross_entropy(model(images), labels)


def load_digits_split():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    digits = load_digits()
    X = digits.data / 16.0
    return train_test_split(X, digits.target.astype(np.int64), test_size=0.25, random_state=SEED,
                            stratify=digits.target)


def train_with_fit(model, optimizer, X, y):
    def report(epoch, loss):
        print(f"epoch {epoch + 1:2d}: loss {loss:.4f}")
    return adcompile.fit(loss_fn, model, optimizer, X, y, epochs=EPOCHS, batch_size=BATCH_SIZE, seed=SEED,
                         callbacks=[report])


def train_with_loop(model, optimizer, X, y):
    """The PyTorch loop, over the batches fit visits: the same parameters come out."""
    history = []
    for epoch in range(EPOCHS):
        order = adcompile.batch_order(len(X), epoch, SEED)
        losses = []
        for start in range(0, len(X), BATCH_SIZE):
            batch = order[start:start + BATCH_SIZE]
            optimizer.zero_grad()
            losses.append(adcompile.backward(loss_fn, model, X[batch], y[batch]))
            optimizer.step()
        history.append(float(np.mean(losses)))
        print(f"epoch {epoch + 1:2d}: loss {history[-1]:.4f}")
    return history


def save_plot(path, history, title="MLP on the digits data set"):
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: plot skipped (pip install 'adcompile[examples]')")
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure, axes = plt.subplots(figsize=(6, 4))
    axes.plot(np.arange(1, len(history) + 1), history, marker="o")
    axes.set(xlabel="epoch", ylabel="cross entropy (mean over minibatches)", yscale="log",
             title=title)
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    print(f"saved plot to {path}")
    return path


def main(*args):
    loop = "--loop" in args
    folders = [a for a in args if not a.startswith("--")]
    X_train, X_test, y_train, y_test = load_digits_split()
    adcompile.modules.init.manual_seed(SEED)
    model = MLP().compile(BACKEND)
    optimizer = adcompile.optim.Adam(model.parameters(), lr=1e-2)
    optimizer.backend = BACKEND
    start = time.perf_counter()
    history = (train_with_loop if loop else train_with_fit)(model, optimizer, X_train, y_train)
    seconds = time.perf_counter() - start
    accuracy = float(np.mean(np.argmax(model(X_test), axis=1) == y_test))
    print(f"test accuracy {accuracy:.4f} after {EPOCHS} epochs in {seconds:.1f} s "
          f"({'PyTorch-style loop' if loop else 'fit'}, compilation included)")
    plot = save_plot(Path(folders[0] if folders else ".") / "train_digits.png", history)
    return model, history, accuracy, plot


if __name__ == "__main__":
    main(*sys.argv[1:])
