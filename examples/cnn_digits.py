"""A small CNN on scikit-learn's bundled digits (8x8 images, 10 classes; no download): Conv2d,
BatchNorm2d, ReLU, MaxPool2d and Linear, trained with ``adcompile.fit`` on numba. Each epoch
(shuffling, minibatches, forward, backward, the BatchNorm running statistics and the Adam
update) is one compiled call; the test accuracy is measured in evaluation mode, with the
running statistics.

    python examples/cnn_digits.py [FOLDER]            # the loss curve goes to FOLDER/cnn_digits.png
    python examples/cnn_digits.py --python [FOLDER]   # run the generated Python instead of numba

numba compiles the epoch (convolutions and their backward, tapes included) once, which takes
about three CPU-minutes; the epochs run as generated Python meanwhile (the same numbers at numpy
speed), so the script ends before numba does, and a background process it leaves finishes the
compile into numba's disk cache: a rerun after that process has ended takes seconds.

Needs scikit-learn (and matplotlib for the plot): ``pip install 'adcompile[examples]'``.
"""
import sys
import time
from pathlib import Path

import numpy as np

import adcompile
from adcompile import nn
import adcompile.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_digits import load_digits_split, save_plot  # noqa: E402 (the MLP example's data and plot)

EPOCHS, BATCH_SIZE, SEED = 12, 32, 0
BACKEND = "numba"  # "python" runs the generated Python instead (debugging)


class DigitsCNN(nn.Module):
    def __init__(self, channels=(16, 32)):
        super().__init__()
        first, second = channels
        self.features = nn.Sequential(
            nn.Conv2d(1, first, kernel_size=3, padding=1), nn.BatchNorm2d(first), nn.ReLU(),
            nn.MaxPool2d(2),  # 8x8 -> 4x4
            nn.Conv2d(first, second, kernel_size=3, padding=1), nn.BatchNorm2d(second), nn.ReLU(),
            nn.MaxPool2d(2),  # 4x4 -> 2x2
        )
        self.classifier = nn.Linear(second * 2 * 2, 10)

    def forward(self, images):
        return self.classifier(F.flatten(self.features(images)))


def loss_fn(model, images, labels):
    return F.cross_entropy(model(images), labels)


def load_image_split():
    """The MLP example's train/test split, each row as a (1, 8, 8) image."""
    X_train, X_test, y_train, y_test = load_digits_split()
    return X_train.reshape(-1, 1, 8, 8), X_test.reshape(-1, 1, 8, 8), y_train, y_test


def main(*args):
    folders = [a for a in args if not a.startswith("--")]
    X_train, X_test, y_train, y_test = load_image_split()
    adcompile.modules.init.manual_seed(SEED)
    backend = "python" if "--python" in args else BACKEND
    model = DigitsCNN().compile(backend)
    optimizer = adcompile.optim.Adam(model.parameters(), lr=5e-3)
    optimizer.backend = backend

    def report(epoch, loss):
        print(f"epoch {epoch + 1:2d}: loss {loss:.4f}")
    start = time.perf_counter()
    history = adcompile.fit(loss_fn, model, optimizer, X_train, y_train, epochs=EPOCHS, batch_size=BATCH_SIZE,
                            seed=SEED, callbacks=[report])
    seconds = time.perf_counter() - start
    model.eval()  # BatchNorm with its running statistics
    accuracy = float(np.mean(np.argmax(model(X_test), axis=1) == y_test))
    print(f"test accuracy {accuracy:.4f} after {EPOCHS} epochs in {seconds:.1f} s (fit on {backend}, "
          "compilation included)")
    plot = save_plot(Path(folders[0] if folders else ".") / "cnn_digits.png", history, "CNN on the digits data set")
    return model, history, accuracy, plot


if __name__ == "__main__":
    main(*sys.argv[1:])
