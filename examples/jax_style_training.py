"""A JAX-style training loop: a dict of parameters, ``value_and_grad`` with ``has_aux``, and an
``adcompile.tree.map`` update -- a two-layer MLP classifying a small synthetic dataset (two
interleaved spirals). The loss is compiled with numba; the gradient comes back as a dict like
the parameters."""
import numpy as np

import adcompile


@adcompile.compile(static_argnames="activation")
def loss(params, X, y, activation):
    h = X @ params["W1"] + params["b1"]
    h = np.tanh(h) if activation == "tanh" else np.maximum(h, 0.0)
    logits = h @ params["W2"] + params["b2"]
    p = 1.0 / (1.0 + np.exp(-logits))
    eps = 1e-9
    nll = -np.mean(y * np.log(p + eps) + (1.0 - y) * np.log(1.0 - p + eps))
    penalty = 1e-4 * (np.sum(params["W1"] ** 2) + np.sum(params["W2"] ** 2))
    return nll + penalty, {"accuracy": np.mean((p > 0.5) == (y > 0.5))}


def spirals(n, rng):
    t = np.sqrt(rng.uniform(size=n)) * 3 * np.pi
    sign = np.where(rng.uniform(size=n) < 0.5, 1.0, -1.0)
    X = np.stack([sign * t * np.cos(t), sign * t * np.sin(t)], axis=1) / (3 * np.pi)
    X += 0.02 * rng.standard_normal(X.shape)
    return X, (sign > 0).astype(np.float64)


def init_params(rng, hidden=32):
    return {"W1": rng.standard_normal((2, hidden)) * 1.5, "b1": np.zeros(hidden),
            "W2": rng.standard_normal(hidden) / np.sqrt(hidden), "b2": 0.0}


def main(steps=1500, learning_rate=0.5):
    rng = np.random.default_rng(0)
    X, y = spirals(400, rng)
    params = init_params(rng)
    step = adcompile.value_and_grad(loss, has_aux=True)
    velocity = adcompile.tree.map(np.zeros_like, params)
    (first, metrics), _ = step(params, X, y, "tanh")
    print(f"step    0: loss {first:.4f}  accuracy {metrics['accuracy']:.3f}")
    for k in range(1, steps + 1):
        (value, metrics), grads = step(params, X, y, "tanh")
        velocity = adcompile.tree.map(lambda v, g: 0.9 * v + g, velocity, grads)
        params = adcompile.tree.map(lambda p, v: p - learning_rate * v, params, velocity)
        if k % 500 == 0:
            print(f"step {k:4d}: loss {value:.4f}  accuracy {metrics['accuracy']:.3f}")
    print("gradient keys:", sorted(grads))
    return {"first_loss": float(first), "loss": float(value), "accuracy": float(metrics["accuracy"])}


if __name__ == "__main__":
    main()
