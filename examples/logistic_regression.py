"""Logistic regression trained by a compiled gradient-descent loop, compared with
scikit-learn's ``LogisticRegression`` on the breast cancer data set bundled with scikit-learn.

Both minimise the same objective: the mean log loss plus ``0.5 * lam * |w|^2`` is
scikit-learn's ``C * sum(log loss) + 0.5 * |w|^2`` divided by ``C * n`` with ``lam = 1 / (C n)``
(the bias is not penalised in either). The whole training loop (``epochs`` gradient steps) is
one numba function that calls ``adcompile.grad`` inside. Prints both accuracies on a held-out
test split, both training times and how far apart the two weight vectors are.

    python examples/logistic_regression.py          (needs scikit-learn: pip install 'adcompile[examples]')
"""
import time

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


def data():
    """The breast cancer data (569 x 30), standardised, split 80/20."""
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train.astype(float), y_test.astype(float)


def main(epochs=3000, C=1.0):
    from sklearn.linear_model import LogisticRegression
    X_train, X_test, y_train, y_test = data()
    n, d = X_train.shape
    lam = 1.0 / (C * n)

    train(np.zeros(d), 0.0, X_train, y_train, lam, 0.5, 1)  # compile once, outside the timing
    start = time.perf_counter()
    w, b = train(np.zeros(d), 0.0, X_train, y_train, lam, 0.5, epochs)
    ours_seconds = time.perf_counter() - start
    ours = float(np.mean(((X_test @ w + b) > 0) == (y_test > 0.5)))

    start = time.perf_counter()
    reference = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(X_train, y_train)
    sklearn_seconds = time.perf_counter() - start
    theirs = float(reference.score(X_test, y_test))

    print(f"data: breast cancer, {n} training and {len(y_test)} test rows, {d} features")
    print(f"adcompile   : test accuracy {ours:.4f}, {epochs} gradient steps in {ours_seconds * 1e3:.1f} ms "
          "(compiled loop, compilation excluded)")
    print(f"scikit-learn: test accuracy {theirs:.4f}, lbfgs in {sklearn_seconds * 1e3:.1f} ms")
    gap = float(np.max(np.abs(w - reference.coef_[0])))
    objective = loss(w, b, X_train, y_train, lam)
    best = loss(reference.coef_[0], float(reference.intercept_[0]), X_train, y_train, lam)
    print(f"objective: adcompile {objective:.6f}, scikit-learn {best:.6f}; largest weight difference {gap:.3f}")
    print("gradcheck:", adcompile.gradcheck(loss, (w, b, X_train, y_train, lam), wrt=(0, 1)))
    return ours, theirs, objective, best


if __name__ == "__main__":
    main()
