"""The tape of a long loop holds what the loop overwrites, not copies of its arrays.

Issue 11's memory target: a 100,000-step loop's tape stays O(values overwritten). The peak
memory numpy allocates during one gradient call of the generated Python code is measured
with tracemalloc (numpy reports its allocations to it), against the size of the data.
"""
import tracemalloc

import numpy as np

import adcompile

STEPS = 100_000
FLOAT = 8  # bytes


def _peak_bytes(gradient, args):
    gradient(*args)  # compiled and warm: the measured call allocates only what it computes
    tracemalloc.start()
    try:
        gradient(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def damped_walk(x, rate):
    state = 0.0
    for i in range(x.shape[0]):
        state = state * rate + np.sin(x[i])  # one scalar overwritten per step
    return state


def scaled_sum(x, steps):
    total = 0.0
    for _ in range(steps):
        total = total + np.sum(x * x) * 1e-6  # x is never written: nothing of it is saved
    return total


def running_update(x, steps):
    for _ in range(steps):
        x = x * 0.99 + 0.01 * np.tanh(x)  # x overwritten: one array per step must be kept
    return np.sum(x)


def unit_dots(v, p):
    total = 0.0
    for i in range(v.shape[0]):
        axis = v[i] / np.sqrt(v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        # the backward recomputes axis for its own rule: these elements are read from it again
        total += axis[0] * p[i, 0] + axis[1] * p[i, 1] + axis[2] * p[i, 2]
    return total


def test_a_scalar_loop_keeps_one_float_per_step():
    x = np.random.default_rng(0).standard_normal(STEPS)
    gradient = adcompile.grad(adcompile.compile(damped_walk, backend="python"), wrt=(0, 1))
    # x's gradient (one array), the tape of states (one float per step), a little slack
    assert _peak_bytes(gradient, (x, 0.999)) < 3 * STEPS * FLOAT


def test_a_loop_over_an_unchanged_array_keeps_no_copies_of_it():
    x = np.linspace(0.0, 1.0, 10_000)
    gradient = adcompile.grad(adcompile.compile(scaled_sum, backend="python"), wrt=0)
    assert _peak_bytes(gradient, (x, 200)) < 6 * x.nbytes  # 200 copies would be 200 x.nbytes


def test_a_loop_overwriting_an_array_keeps_one_copy_per_step():
    x = np.linspace(0.0, 1.0, 1_000)
    gradient = adcompile.grad(adcompile.compile(running_update, backend="python"), wrt=0)
    peak = _peak_bytes(gradient, (x, 100))
    assert 100 * x.nbytes <= peak < 110 * x.nbytes


def test_elements_of_an_array_the_backward_recomputes_are_not_saved():
    v, p = np.random.default_rng(2).standard_normal((2, STEPS, 3))
    gradient = adcompile.grad(adcompile.compile(unit_dots, backend="python"), wrt=(0, 1))
    # both gradients (6 floats per step) and the tape of norms (1): saving axis[0], axis[1] and
    # axis[2] as well would make it 10
    assert _peak_bytes(gradient, (v, p)) < 8 * STEPS * FLOAT


def test_the_gradients_of_the_measured_loops_are_right():
    x = np.random.default_rng(1).standard_normal(50)
    assert adcompile.gradcheck(adcompile.compile(damped_walk, backend="python"), (x, 0.9), wrt=(0, 1))
    assert adcompile.gradcheck(adcompile.compile(scaled_sum, backend="python"), (x, 3), wrt=0)
    assert adcompile.gradcheck(adcompile.compile(running_update, backend="python"), (x, 4), wrt=0)
    v, p = np.random.default_rng(3).standard_normal((2, 7, 3))
    for backend in ("python", "numba"):
        assert adcompile.gradcheck(adcompile.compile(unit_dots, backend=backend), (v, p), wrt=(0, 1))
