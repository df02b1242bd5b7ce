"""The time of the first call of a logistic-regression gradient in this process (the
figures in troubleshooting.md). Run it twice with the same, initially empty, cache folder:

    export ADCOMPILE_CACHE_DIR=$(mktemp -d)
    python docs/snippets/compile_time.py   # cold: adcompile generates, numba compiles
    python docs/snippets/compile_time.py   # warm: numba's machine code from the disk cache
"""
import time

import numpy as np

import adcompile


@adcompile.compile
def loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5))
    y = (X[:, 0] > 0).astype(float)
    w = np.zeros(5)
    start = time.perf_counter()
    adcompile.grad(loss)(w, X, y)
    print(f"first call of grad(loss): {time.perf_counter() - start:.2f} s")
