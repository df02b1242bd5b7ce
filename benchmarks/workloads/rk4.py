"""A damped pendulum integrated with classic RK4 for 10,000 steps: gradient of the final angle
with respect to the gravity term ``a`` and the damping ``c``. The hand-written numba gradient
integrates the tangents (forward sensitivities) for each parameter alongside the state.
"""
from types import SimpleNamespace

import numba
import numpy as np

from harness import Implementation
from workloads import two_parameter_loop
from workloads.peer_calls import jax_implementation

NAME = "rk4"
TITLE = "RK4 pendulum ODE integration"
SIZES = {"tiny": {"steps": 40}, "full": {"steps": 10_000}}
NOTE = ("forward: final angle after the steps (h = 0.001); gradient: with respect to (a, c); "
        "numba by hand: two tangent (forward-sensitivity) integrations; JAX: `lax.fori_loop`.")
H = 0.001
WRT = two_parameter_loop.WRT


def build_rk4_step(xp):
    """One RK4 step of theta'' = -a sin(theta) - c theta' written with ``xp.sin``."""
    def rk4_step(theta, omega, a, c):
        k1t, k1o = omega, -a * xp.sin(theta) - c * omega
        k2t, k2o = omega + 0.5 * H * k1o, -a * xp.sin(theta + 0.5 * H * k1t) - c * (omega + 0.5 * H * k1o)
        k3t, k3o = omega + 0.5 * H * k2o, -a * xp.sin(theta + 0.5 * H * k2t) - c * (omega + 0.5 * H * k2o)
        k4t, k4o = omega + H * k3o, -a * xp.sin(theta + H * k3t) - c * (omega + H * k3o)
        theta = theta + H / 6.0 * (k1t + 2.0 * k2t + 2.0 * k3t + k4t)
        omega = omega + H / 6.0 * (k1o + 2.0 * k2o + 2.0 * k3o + k4o)
        return theta, omega
    return rk4_step


def build_pendulum(xp, steps):
    rk4_step = build_rk4_step(xp)

    def pendulum(a, c):
        theta, omega = 1.0, 0.0
        for _ in range(steps):
            theta, omega = rk4_step(theta, omega, a, c)
        return theta
    return pendulum


def make_inputs(size):
    return 9.81, 0.5, SIZES[size]["steps"]


def adcompile_version(data):
    return two_parameter_loop.adcompile_version(build_pendulum, data)


@numba.njit
def rate_with_tangent(theta, omega, d_theta, d_omega, a, c, d_a, d_c):
    """(theta', omega') and their tangents for tangents (d_theta, d_omega) of the state and
    (d_a, d_c) of the parameters."""
    s = np.sin(theta)
    return (omega, -a * s - c * omega, d_omega,
            -d_a * s - a * np.cos(theta) * d_theta - d_c * omega - c * d_omega)


@numba.njit
def pendulum_tangent_numba(a, c, d_a, d_c, steps):
    """Final (theta, d_theta) along the parameter direction (d_a, d_c)."""
    theta, omega, d_theta, d_omega = 1.0, 0.0, 0.0, 0.0
    for _ in range(steps):
        k1 = rate_with_tangent(theta, omega, d_theta, d_omega, a, c, d_a, d_c)
        k2 = rate_with_tangent(theta + 0.5 * H * k1[0], omega + 0.5 * H * k1[1],
                               d_theta + 0.5 * H * k1[2], d_omega + 0.5 * H * k1[3], a, c, d_a, d_c)
        k3 = rate_with_tangent(theta + 0.5 * H * k2[0], omega + 0.5 * H * k2[1],
                               d_theta + 0.5 * H * k2[2], d_omega + 0.5 * H * k2[3], a, c, d_a, d_c)
        k4 = rate_with_tangent(theta + H * k3[0], omega + H * k3[1],
                               d_theta + H * k3[2], d_omega + H * k3[3], a, c, d_a, d_c)
        theta += H / 6.0 * (k1[0] + 2.0 * k2[0] + 2.0 * k3[0] + k4[0])
        omega += H / 6.0 * (k1[1] + 2.0 * k2[1] + 2.0 * k3[1] + k4[1])
        d_theta += H / 6.0 * (k1[2] + 2.0 * k2[2] + 2.0 * k3[2] + k4[2])
        d_omega += H / 6.0 * (k1[3] + 2.0 * k2[3] + 2.0 * k3[3] + k4[3])
    return theta, d_theta


@numba.njit
def pendulum_numba(a, c, steps):
    return pendulum_tangent_numba(a, c, 0.0, 0.0, steps)[0]


@numba.njit
def pendulum_gradient_numba(a, c, steps):
    return pendulum_tangent_numba(a, c, 1.0, 0.0, steps)[1], pendulum_tangent_numba(a, c, 0.0, 1.0, steps)[1]


def numba_version(data):
    return Implementation("numba", "numba by hand (tangent integration)", lambda: pendulum_numba(*data),
                          lambda: pendulum_gradient_numba(*data))


def jax_version(data, jax):
    a, c, steps = data
    rk4_step = build_rk4_step(jax.numpy)

    def pendulum(a, c):
        start = (jax.numpy.float64(1.0), jax.numpy.float64(0.0))
        return jax.lax.fori_loop(0, steps, lambda _, state: rk4_step(*state, a, c), start)[0]
    return jax_implementation(jax, pendulum, (np.float64(a), np.float64(c)), wrt=WRT)


def torch_version(data, torch):
    # torch.sin takes tensors only, and the starting angle is a Python float
    tensor_sin = SimpleNamespace(sin=lambda t: torch.sin(torch.as_tensor(t, dtype=torch.float64)))
    return two_parameter_loop.torch_version(build_pendulum, data, torch, xp=tensor_sin)


def autograd_version(data, autograd):
    return two_parameter_loop.autograd_version(build_pendulum, data, autograd)
