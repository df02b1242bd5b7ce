"""Logistic regression trained by 200 epochs of full-batch gradient descent, the whole loop
compiled as one function (adcompile: ``adcompile.grad`` called inside a compiled loop; JAX:
``lax.fori_loop`` under ``jit``; numpy, torch and autograd: a Python loop).
"""
import numba
import numpy as np

import adcompile
from harness import Implementation, compile_with_adcompile
from workloads.peer_calls import autograd_implementation, jax_implementation, torch_implementation

NAME = "logistic"
TITLE = "Logistic regression, gradient-descent loop"
SIZES = {"tiny": {"samples": 100, "features": 5, "epochs": 5},
         "full": {"samples": 10_000, "features": 20, "epochs": 200}}
NOTE = ("forward: the loss once; gradient: the whole training loop (`epochs` gradient steps, "
        "learning rate 0.5), so gradient / forward counts every epoch.")
LEARNING_RATE = 0.5


def build_loss(xp):
    def logistic_loss(w, X, y):
        p = 1.0 / (1.0 + xp.exp(-(X @ w)))
        return -xp.mean(y * xp.log(p) + (1 - y) * xp.log(1 - p))
    return logistic_loss


def make_inputs(size):
    samples, features, epochs = SIZES[size].values()
    rng = np.random.default_rng(1)
    X = rng.standard_normal((samples, features))
    y = (X @ rng.standard_normal(features) + rng.standard_normal(samples) > 0) * 1.0
    return np.zeros(features), X, y, epochs


def adcompile_version(data):
    loss = build_loss(np)

    def train(w, X, y, epochs):
        for _ in range(epochs):
            w = w - LEARNING_RATE * adcompile.grad(loss)(w, X, y)
        return w
    forward, trainer = compile_with_adcompile(loss), compile_with_adcompile(train)
    return Implementation("adcompile", "adcompile", lambda: forward(*data[:3]), lambda: trainer(*data))


def train_numpy(w, X, y, epochs):
    for _ in range(epochs):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        w = w - LEARNING_RATE * (X.T @ (p - y)) / X.shape[0]
    return w


def numpy_version(data):
    loss = build_loss(np)
    return Implementation("numpy", "numpy by hand", lambda: loss(*data[:3]), lambda: train_numpy(*data))


@numba.njit
def loss_numba(w, X, y):
    total = 0.0
    for i in range(X.shape[0]):
        p = 1.0 / (1.0 + np.exp(-np.dot(X[i], w)))
        total += y[i] * np.log(p) + (1 - y[i]) * np.log(1 - p)
    return -total / X.shape[0]


@numba.njit
def train_numba(w, X, y, epochs):
    n, d = X.shape
    w = w.copy()
    g = np.empty(d)
    for _ in range(epochs):
        g[:] = 0.0
        for i in range(n):
            z = 0.0
            for k in range(d):
                z += X[i, k] * w[k]
            residual = 1.0 / (1.0 + np.exp(-z)) - y[i]
            for k in range(d):
                g[k] += residual * X[i, k]
        for k in range(d):
            w[k] -= LEARNING_RATE * g[k] / n
    return w


def numba_version(data):
    return Implementation("numba", "numba by hand (fused loops)", lambda: loss_numba(*data[:3]),
                          lambda: train_numba(*data))


def jax_version(data, jax):
    loss = build_loss(jax.numpy)
    grad_loss = jax.grad(loss)
    epochs = data[3]

    def train(w, X, y):
        return jax.lax.fori_loop(0, epochs, lambda _, w: w - LEARNING_RATE * grad_loss(w, X, y), w)
    return jax_implementation(jax, loss, data[:3], gradient=train)


def python_loop_trainer(step_gradient, epochs):
    def train(w, X, y):
        for _ in range(epochs):
            w = w - LEARNING_RATE * step_gradient(w, X, y)
        return w
    return train


def torch_version(data, torch):
    loss = build_loss(torch)

    def step_gradient(w, X, y):
        w = w.detach().requires_grad_(True)
        return torch.autograd.grad(loss(w, X, y), w)[0]
    return torch_implementation(torch, loss, data[:3], wrt=(), gradient=python_loop_trainer(step_gradient, data[3]))


def autograd_version(data, autograd):
    loss = build_loss(autograd.numpy)
    return autograd_implementation(autograd, loss, data[:3],
                                   gradient=python_loop_trainer(autograd.grad(loss), data[3]))
