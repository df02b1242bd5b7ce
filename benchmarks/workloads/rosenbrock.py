"""Rosenbrock function of n variables (n = 1e6 at full size): forward and gradient.

The hand-written numba gradient is the single fused loop the issue's target compares to.
"""
import numba
import numpy as np

import adcompile
from harness import Implementation, compile_with_adcompile
from workloads.peer_calls import autograd_implementation, jax_implementation, torch_implementation

NAME = "rosenbrock"
TITLE = "Rosenbrock"
SIZES = {"tiny": {"n": 1_000}, "full": {"n": 1_000_000}}
NOTE = "forward: the function value; gradient: the full gradient."


def build_rosenbrock(xp):
    def rosenbrock(x):
        return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    return rosenbrock


def make_inputs(size):
    return (np.random.default_rng(0).standard_normal(SIZES[size]["n"]),)


def adcompile_version(data):
    forward = compile_with_adcompile(build_rosenbrock(np))
    gradient = adcompile.grad(forward)
    return Implementation("adcompile", "adcompile", lambda: forward(*data), lambda: gradient(*data))


def rosenbrock_gradient_numpy(x):
    g = np.zeros_like(x)
    t = x[1:] - x[:-1] ** 2
    g[:-1] = -400.0 * t * x[:-1] - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * t
    return g


def numpy_version(data):
    forward = build_rosenbrock(np)
    return Implementation("numpy", "numpy by hand", lambda: forward(*data),
                          lambda: rosenbrock_gradient_numpy(*data))


@numba.njit
def rosenbrock_numba(x):
    total = 0.0
    for i in range(x.shape[0] - 1):
        t = x[i + 1] - x[i] * x[i]
        total += 100.0 * t * t + (1.0 - x[i]) ** 2
    return total


@numba.njit
def rosenbrock_gradient_numba(x):
    g = np.zeros_like(x)
    for i in range(x.shape[0] - 1):
        t = x[i + 1] - x[i] * x[i]
        g[i] += -400.0 * t * x[i] - 2.0 * (1.0 - x[i])
        g[i + 1] += 200.0 * t
    return g


def numba_version(data):
    return Implementation("numba", "numba by hand (fused loops)", lambda: rosenbrock_numba(*data),
                          lambda: rosenbrock_gradient_numba(*data))


def jax_version(data, jax):
    return jax_implementation(jax, build_rosenbrock(jax.numpy), data)


def torch_version(data, torch):
    return torch_implementation(torch, build_rosenbrock(torch), data)


def autograd_version(data, autograd):
    return autograd_implementation(autograd, build_rosenbrock(autograd.numpy), data)
