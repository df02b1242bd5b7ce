"""Derivatives called inside compiled code, and derivatives of such code (any nesting)."""
import numpy as np
import pytest

import adcompile
from oracles import directional_difference

RNG = np.random.default_rng(5)
X = RNG.standard_normal((12, 3))
Y = X @ np.array([0.5, -1.0, 2.0]) + 0.1 * RNG.standard_normal(12)


def mse(w, X, y):
    r = X @ w - y
    return np.mean(r * r)


@adcompile.compile
def train(w, X, y, lr, steps):
    for _ in range(steps):
        w = w - lr * adcompile.grad(mse)(w, X, y)
    return w


def test_compiled_training_loop_calls_grad():
    w = train(np.zeros(3), X, Y, 0.1, 300)
    np.testing.assert_allclose(w, np.linalg.lstsq(X, Y, rcond=None)[0], rtol=1e-6)
    assert "def train(" in adcompile.source(train)
    assert "# inlined grad(mse)" in adcompile.source(train)


def test_value_and_grad_inside_compiled_code():
    @adcompile.compile(backend="python")
    def step(w, X, y):
        value, g = adcompile.value_and_grad(mse)(w, X, y)
        return value + np.sum(g)
    w = RNG.standard_normal(3)
    expected = mse(w, X, Y) + np.sum(adcompile.grad(mse)(w, X, Y))
    assert np.isclose(step(w, X, Y), expected)
    assert adcompile.gradcheck(step, (w, X, Y), wrt=0)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_gradient_penalty_grad_of_a_function_calling_grad(backend):
    @adcompile.compile(backend=backend)
    def penalized(w, X, y):
        g = adcompile.grad(mse)(w, X, y)
        return mse(w, X, y) + 0.1 * np.sum(g * g)
    assert adcompile.gradcheck(penalized, (RNG.standard_normal(3), X, Y), wrt=(0, 1))


def test_meta_learning_gradient_through_an_inner_training_loop():
    @adcompile.compile(backend="python")
    def validation_loss(lr, w0, X, y):
        w = w0
        for _ in range(6):
            w = w - lr * adcompile.grad(mse)(w, X, y)
        return mse(w, X, y)
    assert adcompile.gradcheck(validation_loss, (0.05, RNG.standard_normal(3), X, Y), wrt=(0, 1))


def saddle_objective(x, y):
    return (x - 1.0) ** 2 + x * y - 0.5 * y * y + 0.1 * np.sin(x * y)


def dfdy_reverse(x, y):
    return adcompile.grad(saddle_objective, wrt=1)(x, y)


def dfdy_forward(x, y):
    _, slope = adcompile.jvp(saddle_objective, (x, y), (0.0, 1.0))
    return slope


def make_saddle_solver(inner_mode, outer_mode, outer_steps, backend):
    inner = dfdy_reverse if inner_mode == "rev" else dfdy_forward

    def best_response_value(x):   # max over y, by gradient ascent
        y = 0.0
        for _ in range(60):
            y = y + 0.3 * inner(x, y)
        return saddle_objective(x, y)

    def dvalue_reverse(x):
        return adcompile.grad(best_response_value)(x)

    def dvalue_forward(x):
        _, slope = adcompile.jvp(best_response_value, (x,), (1.0,))
        return slope

    outer = dvalue_reverse if outer_mode == "rev" else dvalue_forward

    def solve(x0):               # min over x, by gradient descent
        x = x0
        for _ in range(outer_steps):
            x = x - 0.1 * outer(x)
        return x
    return adcompile.compile(solve, backend=backend), adcompile.compile(best_response_value, backend="python")


@pytest.mark.parametrize("inner_mode", ["rev", "fwd"])
@pytest.mark.parametrize("outer_mode", ["rev", "fwd"])
def test_saddle_point_in_all_four_mode_combinations(inner_mode, outer_mode):
    solve, value = make_saddle_solver(inner_mode, outer_mode, 150, "python")
    x = solve(0.0)
    assert abs(directional_difference(value, (x,), {0: 1.0}, eps=1e-5)) < 1e-6   # a stationary point of max_y f(x, y)
    # Differentiate through the whole nested optimisation (third order inside).
    short, _ = make_saddle_solver(inner_mode, outer_mode, 4, "python")
    assert np.isclose(adcompile.grad(short)(0.3), directional_difference(short, (0.3,), {0: 1.0}, eps=1e-5), rtol=1e-5)


def test_saddle_point_compiled_with_numba():
    solve, value = make_saddle_solver("rev", "fwd", 150, "numba")
    x = solve(0.0)
    assert abs(directional_difference(value, (x,), {0: 1.0}, eps=1e-5)) < 1e-6


def trajectory_landing(angle, speed):
    """A projectile with drag integrated with a while loop until it crosses y = 0."""
    x, y = 0.0, 0.0
    vx, vy = speed * np.cos(angle), speed * np.sin(angle)
    dt, drag, g = 0.01, 0.1, 9.81
    x_prev, y_prev = x, y
    while y >= 0.0:
        x_prev, y_prev = x, y
        v = np.sqrt(vx * vx + vy * vy)
        vx = vx - dt * drag * v * vx
        vy = vy - dt * (g + drag * v * vy)
        x = x + dt * vx
        y = y + dt * vy
    return x_prev + (x - x_prev) * y_prev / (y_prev - y)   # interpolate the crossing


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_particle_trajectory_with_while_loop_differentiated_wrt_control(backend):
    f = adcompile.compile(trajectory_landing, backend=backend)
    assert np.isclose(f(0.6, 12.0), trajectory_landing(0.6, 12.0))
    angle_gradient = adcompile.grad(f)(0.6, 12.0)
    numeric = directional_difference(trajectory_landing, (0.6, 12.0), {0: 1.0}, eps=1e-7)
    assert np.isclose(angle_gradient, numeric, rtol=1e-4)
    assert adcompile.gradcheck(f, (0.6, 12.0), eps=1e-7, rtol=1e-4)
    # Forward mode and second order through the same while loop.
    _, slope = adcompile.jvp(f, (0.6, 12.0), (1.0, None))
    assert np.isclose(slope, angle_gradient, rtol=1e-10)
    first = adcompile.grad(f)
    second = adcompile.grad(adcompile.grad(f))(0.6, 12.0)
    assert np.isclose(second, directional_difference(first, (0.6, 12.0), {0: 1.0}, eps=1e-6), rtol=1e-3)
