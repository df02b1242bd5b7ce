"""The adcompile, torch and autograd versions shared by the scalar-loop workloads (the spring
and the RK4 pendulum): a function of two float parameters that runs ``steps`` loop steps,
written once as ``build(xp, steps)`` with ``xp`` the numpy-like module, differentiated with
respect to both parameters. The workload's data is ``(first, second, steps)``.
"""
import numpy as np

import adcompile
from harness import Implementation, compile_with_adcompile
from workloads.peer_calls import autograd_implementation, torch_implementation

WRT = (0, 1)


def adcompile_version(build, data):
    first, second, steps = data
    forward = compile_with_adcompile(build(np, steps))
    gradient = adcompile.grad(forward, wrt=WRT)
    return Implementation("adcompile", "adcompile", lambda: forward(first, second), lambda: gradient(first, second))


def torch_version(build, data, torch, xp=None):
    first, second, steps = data
    return torch_implementation(torch, build(xp or torch, steps), (np.float64(first), np.float64(second)), wrt=WRT)


def autograd_version(build, data, autograd):
    first, second, steps = data
    function = build(autograd.numpy, steps)
    gradient_of_pair = autograd.grad(lambda parameters: function(*parameters))
    return autograd_implementation(autograd, function, (first, second),
                                   gradient=lambda first, second: gradient_of_pair((first, second)))
