"""Quickstart: compile a loss, print its generated gradient source, compute the gradient."""
import numpy as np

import adcompile


@adcompile.compile
def loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def main():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(np.float64)
    w = np.zeros(3)

    g = adcompile.grad(loss)
    print("generated gradient source:\n")
    print(adcompile.source(g, w, X, y))
    print("loss     :", loss(w, X, y))
    print("gradient :", g(w, X, y))
    print("gradcheck:", adcompile.gradcheck(loss, (w, X, y), wrt=0))

    for _ in range(200):
        w = w - 0.5 * g(w, X, y)
    print("after 200 steps of gradient descent, loss =", loss(w, X, y))


if __name__ == "__main__":
    main()
