"""Logistic regression with L2 regularisation on scikit-learn-free synthetic data, trained by a
compiled gradient-descent loop, then checked against finite differences."""
import numpy as np

import adcompile


def loss(w, b, X, y, lam):
    z = X @ w + b
    # log(1 + exp(-z)) and log(1 + exp(z)) written stably with logaddexp
    nll = y * np.logaddexp(0.0, -z) + (1.0 - y) * np.logaddexp(0.0, z)
    return np.mean(nll) + 0.5 * lam * np.sum(w * w)


@adcompile.compile
def train(w, b, X, y, lam, lr, epochs):
    for _ in range(epochs):
        gw, gb = adcompile.grad(loss, wrt=(0, 1))(w, b, X, y, lam)
        w = w - lr * gw
        b = b - lr * gb
    return w, b


def main():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 4))
    true_w = np.array([2.0, -1.0, 0.5, 0.0])
    y = (X @ true_w + 0.3 + 0.5 * rng.standard_normal(500) > 0).astype(np.float64)
    w, b = train(np.zeros(4), 0.0, X, y, 1e-3, 0.5, 500)
    accuracy = np.mean(((X @ w + b) > 0) == (y > 0.5))
    print("weights", np.round(w, 3), "bias", round(b, 3), "training accuracy", accuracy)
    print("gradcheck:", adcompile.gradcheck(loss, (w, b, X, y, 1e-3), wrt=(0, 1)))
    return accuracy


if __name__ == "__main__":
    main()
