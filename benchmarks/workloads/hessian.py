"""Full Hessian (50 x 50) of f(x) = sum(log(1 + exp(A @ x))) + 0.5 * x @ x, A of 200 x 50.

adcompile: ``adcompile.hessian``; JAX: ``jit(jax.hessian(f))``; torch:
``torch.autograd.functional.hessian``; autograd: ``autograd.hessian``.
"""
import numpy as np

import adcompile
from harness import Implementation, compile_with_adcompile
from workloads import softplus_objective as objective
from workloads.peer_calls import autograd_implementation, jax_implementation, torch_implementation

NAME = "hessian"
TITLE = "Hessian of sum(log(1+exp(A@x))) + x@x/2"
SIZES = objective.SIZES
NOTE = "forward: f(x); gradient: the full Hessian with respect to x."
make_inputs = objective.make_inputs


def adcompile_version(data):
    A, x, _ = data
    forward = compile_with_adcompile(objective.build_objective(np, A))
    hessian = adcompile.hessian(forward)
    return Implementation("adcompile", "adcompile", lambda: forward(x), lambda: hessian(x))


def numpy_version(data):
    A, x, _ = data
    forward = objective.build_objective(np, A)
    return Implementation("numpy", "numpy by hand", lambda: forward(x), lambda: objective.hessian_numpy(A, x))


def numba_version(data):
    A, x, _ = data
    return Implementation("numba", "numba by hand", lambda: objective.objective_numba(A, x),
                          lambda: objective.hessian_numba(A, x))


def jax_version(data, jax):
    A, x, _ = data
    function = objective.build_objective(jax.numpy, jax.numpy.asarray(A))
    return jax_implementation(jax, function, (x,), gradient=jax.hessian(function))


def torch_version(data, torch):
    A, x, _ = data
    function = objective.build_objective(torch, torch.tensor(A))
    return torch_implementation(torch, function, (x,), wrt=(),
                                gradient=lambda x: torch.autograd.functional.hessian(function, x))


def autograd_version(data, autograd):
    A, x, _ = data
    function = objective.build_objective(autograd.numpy, A)
    return autograd_implementation(autograd, function, (x,), gradient=autograd.hessian(function))
