"""A user's small training script: a Module, an optimizer, ``fit`` for two epochs on random
data, then a plain gradient. Prints one JSON line: the results, and numba's disk-cache hits and
misses summed over every function the process compiled (``dispatcher.stats``).

``tests/codegen/test_deterministic_codegen.py`` runs it twice, in fresh processes sharing one
``ADCOMPILE_CACHE_DIR``: the second run must find every function in numba's disk cache (no
compilation, no new file), which it can only if both processes generate the same source.

    ADCOMPILE_CACHE_DIR=/tmp/c python tests/journeys/train_small_mlp.py
"""
import json

import numpy as np

import adcompile
import adcompile.nn.functional as F
from adcompile import nn
from adcompile.backend import loader


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


def loss_fn(model, images, labels):
    return F.cross_entropy(model(images), labels)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def cache_stats():
    """(hits, misses) of numba's disk cache over the functions this process loaded."""
    hits = misses = 0
    for fn in loader._loaded.values():
        stats = getattr(fn, "stats", None)
        if stats is not None:
            hits += sum(stats.cache_hits.values())
            misses += sum(stats.cache_misses.values())
    return hits, misses


def main():
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((48, 6)), rng.integers(0, 3, 48)
    adcompile.modules.init.manual_seed(0)
    model = MLP().compile("numba")
    optimizer = adcompile.optim.Adam(model.parameters(), lr=1e-2)
    history = adcompile.fit(loss_fn, model, optimizer, X, y, epochs=2, batch_size=16, seed=0, progress=False)
    gradient = adcompile.grad(rosenbrock)(np.linspace(-1.0, 1.0, 5))
    hits, misses = cache_stats()
    print(json.dumps({"history": history, "gradient": gradient.tolist(), "hits": hits, "misses": misses}))


if __name__ == "__main__":
    main()
