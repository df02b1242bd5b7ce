"""Hessian-vector product of the Hessian workload's objective, one call at a time, as an
optimiser calls it in a loop: ``adcompile.hvp(f, (x,), (v,))``; JAX: ``jit`` of
``jvp(grad(f))``; torch: ``torch.autograd.functional.hvp``; autograd:
``autograd.hessian_vector_product``.
"""
import numpy as np

import adcompile
from harness import Implementation, compile_with_adcompile
from workloads import softplus_objective as objective
from workloads.peer_calls import autograd_implementation, jax_implementation, torch_implementation

NAME = "hvp"
TITLE = "Hessian-vector product, same f"
SIZES = objective.SIZES
NOTE = "forward: f(x); gradient: one Hessian-vector product H(x) @ v, called repeatedly."
make_inputs = objective.make_inputs


def adcompile_version(data):
    A, x, v = data
    forward = compile_with_adcompile(objective.build_objective(np, A))
    return Implementation("adcompile", "adcompile", lambda: forward(x), lambda: adcompile.hvp(forward, (x,), (v,)))


def numpy_version(data):
    A, x, v = data
    forward = objective.build_objective(np, A)
    return Implementation("numpy", "numpy by hand", lambda: forward(x), lambda: objective.hvp_numpy(A, x, v))


def numba_version(data):
    A, x, v = data
    return Implementation("numba", "numba by hand", lambda: objective.objective_numba(A, x),
                          lambda: objective.hvp_numba(A, x, v))


def jax_version(data, jax):
    A, x, v = data
    function = objective.build_objective(jax.numpy, jax.numpy.asarray(A))

    def hessian_vector_product(x, v):
        return jax.jvp(jax.grad(function), (x,), (v,))[1]
    implementation = jax_implementation(jax, function, (x,))
    jitted, device_x, device_v = jax.jit(hessian_vector_product), jax.numpy.asarray(x), jax.numpy.asarray(v)
    implementation.gradient = lambda: jax.block_until_ready(jitted(device_x, device_v))
    return implementation


def torch_version(data, torch):
    A, x, v = data
    function = objective.build_objective(torch, torch.tensor(A))
    tangent = torch.tensor(v)
    return torch_implementation(torch, function, (x,), wrt=(),
                                gradient=lambda x: torch.autograd.functional.hvp(function, x, tangent)[1])


def autograd_version(data, autograd):
    A, x, v = data
    function = objective.build_objective(autograd.numpy, A)
    product = autograd.hessian_vector_product(function)
    return autograd_implementation(autograd, function, (x,), gradient=lambda x: product(x, v))
