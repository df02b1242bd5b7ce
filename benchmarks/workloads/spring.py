"""A damped spring integrated for 1000 explicit steps: gradient of the final position with
respect to stiffness and damping. A scalar loop, taped by adcompile; the hand-written
reference is a numba reverse loop (and the same loop uncompiled, in plain Python).
"""
import numba
import numpy as np

from harness import Implementation
from workloads import two_parameter_loop
from workloads.peer_calls import jax_implementation

NAME = "spring"
TITLE = "Damped spring, scalar loop"
SIZES = {"tiny": {"steps": 50}, "full": {"steps": 1000}}
NOTE = "forward: final position; gradient: with respect to (k, c). JAX runs the loop as `lax.fori_loop`."
DT = 0.01
WRT = two_parameter_loop.WRT


def build_spring(xp, steps):
    """The spring as a function of (k, c); it needs no function of ``xp``."""
    def spring(k, c):
        x, v = 1.0, 0.0
        for _ in range(steps):
            a = -k * x - c * v
            v = v + DT * a
            x = x + DT * v
        return x
    return spring


def make_inputs(size):
    return 2.0, 0.3, SIZES[size]["steps"]


def adcompile_version(data):
    return two_parameter_loop.adcompile_version(build_spring, data)


@numba.njit
def spring_gradient_numba(k, c, steps):
    xs, vs = np.empty(steps), np.empty(steps)
    x, v = 1.0, 0.0
    for i in range(steps):
        xs[i], vs[i] = x, v
        a = -k * x - c * v
        v = v + DT * a
        x = x + DT * v
    bx, bv, bk, bc = 1.0, 0.0, 0.0, 0.0
    for i in range(steps - 1, -1, -1):
        x, v = xs[i], vs[i]
        bv = bv + DT * bx  # x_new = x + DT * v_new
        ba = DT * bv  # v_new = v + DT * a
        bk -= ba * x
        bc -= ba * v
        bx = bx - ba * k
        bv = bv - ba * c
    return bk, bc


def numpy_version(data):
    k, c, steps = data
    spring = build_spring(np, steps)
    gradient = getattr(spring_gradient_numba, "py_func", spring_gradient_numba)  # NUMBA_DISABLE_JIT: plain
    return Implementation("numpy", "Python by hand (the numba loops, uncompiled)",
                          lambda: spring(k, c), lambda: gradient(*data))


def numba_version(data):
    k, c, steps = data
    spring = numba.njit(build_spring(np, steps))
    return Implementation("numba", "numba by hand (reverse loop)", lambda: spring(k, c),
                          lambda: spring_gradient_numba(*data))


def jax_version(data, jax):
    k, c, steps = data

    def spring(k, c):
        def step(_, state):
            x, v = state
            v = v + DT * (-k * x - c * v)
            return x + DT * v, v
        start = (jax.numpy.float64(1.0), jax.numpy.float64(0.0))
        return jax.lax.fori_loop(0, steps, step, start)[0]
    return jax_implementation(jax, spring, (np.float64(k), np.float64(c)), wrt=WRT)


def torch_version(data, torch):
    return two_parameter_loop.torch_version(build_spring, data, torch)


def autograd_version(data, autograd):
    return two_parameter_loop.autograd_version(build_spring, data, autograd)
