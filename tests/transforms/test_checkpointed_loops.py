"""Checkpointed loops (``for t in adcompile.checkpointed(range(n), snapshots=s):``): the gradient
recomputed from snapshots by the binomial schedule equals the gradient of the same loop taped
(to rounding) and central differences, for scalar and array state, in-place writes, nested
loops, zero- and one-trip loops, snapshot counts from 1 to more than the trip count, float32,
both backends; forward over it (Hessian-vector products); the schedule itself against a brute
force search for the fewest recomputations; and the errors for what is not supported."""
from functools import lru_cache

import numpy as np
import pytest

import adcompile
from adcompile import checkpointed
from adcompile.runtime.checkpoint_schedule import recomputed_iterations, revolve_minimum
from adcompile.runtime.kernels.bookkeeping import checkpoint_snapshots, revolve_advance
from oracles import gradient_by_differences, hessian_by_differences

BACKENDS = ["python", "numba"]


# ---------------------------------------------------------------------- the programs
def spring(x0, v0, k, n, s):
    x = x0
    v = v0
    dt = 0.05
    for t in adcompile.checkpointed(range(n), snapshots=s):
        a = -k * x - 0.1 * v
        v = v + dt * a
        x = x + dt * v
    return x * x + 0.5 * v * v


def spring_taped(x0, v0, k, n, s):
    x = x0
    v = v0
    dt = 0.05
    for t in range(n):
        a = -k * x - 0.1 * v
        v = v + dt * a
        x = x + dt * v
    return x * x + 0.5 * v * v


def heat(u0, kappa, n, s):
    u = u0.copy()
    for t in checkpointed(range(n), snapshots=s):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + kappa * lap * (1.0 + 0.1 * u[1:-1])
    return np.sum(u * u * u)


def heat_taped(u0, kappa, n, s):
    u = u0.copy()
    for t in range(n):
        lap = u[:-2] - 2.0 * u[1:-1] + u[2:]
        u[1:-1] = u[1:-1] + kappa * lap * (1.0 + 0.1 * u[1:-1])
    return np.sum(u * u * u)


def recurrence(x0, r, n):
    x = x0
    total = 0.0
    for t in checkpointed(range(1, 2 * n + 1, 2), snapshots=3):
        x = r * x * (1.0 - x) + 0.001 * t
        total = total + x * x
    return total + x


def recurrence_taped(x0, r, n):
    x = x0
    total = 0.0
    for t in range(1, 2 * n + 1, 2):
        x = r * x * (1.0 - x) + 0.001 * t
        total = total + x * x
    return total + x


def nested(x, k, m):
    s = 0.0
    for j in range(3):
        y = x * (1.0 + 0.1 * j)
        for t in checkpointed(range(m), snapshots=2):
            y = np.sin(y) * k + y
        s = s + np.sum(y)
    return s


def nested_taped(x, k, m):
    s = 0.0
    for j in range(3):
        y = x * (1.0 + 0.1 * j)
        for t in range(m):
            y = np.sin(y) * k + y
        s = s + np.sum(y)
    return s


def pair(f, taped, backend):
    return (adcompile.compile(f, backend=backend), adcompile.compile(taped, backend=backend))


U0 = np.sin(np.linspace(0.0, 3.0, 9)) + 0.5


# ---------------------------------------------------------------------- gradients
@pytest.mark.parametrize("backend", BACKENDS)
def test_spring_equals_taped_for_every_snapshot_count(backend):
    f, taped = pair(spring, spring_taped, backend)
    grad, grad_taped = adcompile.grad(f, wrt=(0, 1, 2)), adcompile.grad(taped, wrt=(0, 1, 2))
    for n in (0, 1, 2, 13):
        expected = grad_taped(0.8, -0.3, 2.0, n, 1)
        for s in (1, 2, 3, 5, n, n + 4):
            np.testing.assert_allclose(grad(0.8, -0.3, 2.0, n, max(s, 1)), expected, rtol=1e-12, atol=1e-14,
                                       err_msg=f"n={n} snapshots={s}")
    n = 13
    for k in range(3):
        numeric = gradient_by_differences(lambda *a: spring_taped(*a), [0.8, -0.3, 2.0, n, 2], k)
        np.testing.assert_allclose(grad(0.8, -0.3, 2.0, n, 2)[k], numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_heat_equation_array_state_written_in_place(backend):
    f, taped = pair(heat, heat_taped, backend)
    grad, grad_taped = adcompile.grad(f, wrt=(0, 1)), adcompile.grad(taped, wrt=(0, 1))
    for n, s in ((0, 3), (1, 1), (7, 1), (7, 3), (20, 4), (20, 40)):
        got, expected = grad(U0, 0.2, n, s), grad_taped(U0, 0.2, n, s)
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12, atol=1e-13, err_msg=f"n={n} s={s}")
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-12, err_msg=f"n={n} s={s}")
    numeric = gradient_by_differences(heat_taped, [U0, 0.2, 20, 4], 0)
    np.testing.assert_allclose(grad(U0, 0.2, 20, 4)[0], numeric, rtol=1e-6, atol=1e-8)
    numeric_kappa = gradient_by_differences(heat_taped, [U0, 0.2, 20, 4], 1)
    np.testing.assert_allclose(grad(U0, 0.2, 20, 4)[1], numeric_kappa, rtol=1e-6)
    assert np.array_equal(U0, np.sin(np.linspace(0.0, 3.0, 9)) + 0.5)  # the argument is unchanged


@pytest.mark.parametrize("backend", BACKENDS)
def test_heat_equation_float32(backend):
    f, taped = pair(heat, heat_taped, backend)
    u32 = U0.astype(np.float32)
    got = adcompile.grad(f, wrt=(0, 1))(u32, np.float32(0.2), 12, 3)
    expected = adcompile.grad(taped, wrt=(0, 1))(u32, np.float32(0.2), 12, 3)
    assert got[0].dtype == np.float32
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-5)
    in_float64 = adcompile.grad(f, wrt=(0, 1))(U0, 0.2, 12, 3)
    np.testing.assert_allclose(got[0], in_float64[0], rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_recurrence_with_strided_range(backend):
    f, taped = pair(recurrence, recurrence_taped, backend)
    grad, grad_taped = adcompile.grad(f, wrt=(0, 1)), adcompile.grad(taped, wrt=(0, 1))
    for n in (0, 1, 4, 25):
        np.testing.assert_allclose(grad(0.3, 3.1, n), grad_taped(0.3, 3.1, n), rtol=1e-12, atol=1e-14)
    for k in range(2):
        numeric = gradient_by_differences(recurrence_taped, [0.3, 3.1, 25], k)
        np.testing.assert_allclose(grad(0.3, 3.1, 25)[k], numeric, rtol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_inside_another_loop(backend):
    f, taped = pair(nested, nested_taped, backend)
    x = np.linspace(0.1, 1.0, 4)
    grad, grad_taped = adcompile.grad(f, wrt=(0, 1)), adcompile.grad(taped, wrt=(0, 1))
    for m in (0, 1, 6):
        got, expected = grad(x, 0.3, m), grad_taped(x, 0.3, m)
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
        np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)
    np.testing.assert_allclose(grad(x, 0.3, 6)[0], gradient_by_differences(nested_taped, [x, 0.3, 6], 0), rtol=1e-6)


def twice(x, k, n, m):
    s = 0.0
    for i in checkpointed(range(n), snapshots=2):
        for j in checkpointed(range(m), snapshots=2):
            x = np.sin(x) * k + x
        s = s + np.sum(x * x)
    return s


def twice_taped(x, k, n, m):
    s = 0.0
    for i in range(n):
        for j in range(m):
            x = np.sin(x) * k + x
        s = s + np.sum(x * x)
    return s


def argument_written_in_place(u, kappa, n):
    for t in checkpointed(range(n), snapshots=2):
        u[1:-1] = u[1:-1] + kappa * (u[:-2] - 2.0 * u[1:-1] + u[2:]) * u[1:-1]
    return np.sum(u * u)


def argument_written_in_place_taped(u, kappa, n):
    for t in range(n):
        u[1:-1] = u[1:-1] + kappa * (u[:-2] - 2.0 * u[1:-1] + u[2:]) * u[1:-1]
    return np.sum(u * u)


@pytest.mark.parametrize("backend", BACKENDS)
def test_checkpointed_inside_checkpointed(backend):
    f, taped = pair(twice, twice_taped, backend)
    x = np.linspace(0.1, 1.0, 4)
    got, expected = adcompile.grad(f, wrt=(0, 1))(x, 0.3, 4, 3), adcompile.grad(taped, wrt=(0, 1))(x, 0.3, 4, 3)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_argument_written_in_place_is_left_unchanged(backend):
    f, taped = pair(argument_written_in_place, argument_written_in_place_taped, backend)
    u = np.linspace(0.1, 1.0, 7)
    before = u.copy()
    got = adcompile.grad(f, wrt=(0, 1))(u, 0.1, 9)
    assert np.array_equal(u, before)
    expected = adcompile.grad(taped, wrt=(0, 1))(u, 0.1, 9)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)
    numeric = gradient_by_differences(argument_written_in_place_taped, [u, 0.1, 9], 0)
    np.testing.assert_allclose(got[0], numeric, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_value_is_the_loops(backend):
    f = adcompile.compile(heat, backend=backend)
    value, _ = adcompile.value_and_grad(f)(U0, 0.2, 9, 2)
    assert value == pytest.approx(heat_taped(U0, 0.2, 9, 2), rel=1e-12)
    assert f(U0, 0.2, 9, 2) == pytest.approx(heat_taped(U0, 0.2, 9, 2), rel=1e-12)


# ---------------------------------------------------------------------- second order
@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_vector_product_through_the_schedule(backend):
    f, taped = pair(heat, heat_taped, backend)
    direction = np.cos(np.arange(9.0))
    tangents = (direction, None, None, None)
    got = adcompile.hvp(f, (U0, 0.2, 8, 3), tangents)
    expected = adcompile.hvp(taped, (U0, 0.2, 8, 3), tangents)
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    gradient = adcompile.grad(taped)
    numeric = hessian_by_differences(lambda u, *rest: gradient(u, *rest), [U0, 0.2, 8, 3], 0) @ direction
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_spring(backend):
    f, taped = pair(spring, spring_taped, backend)
    np.testing.assert_allclose(adcompile.hessian(f)(0.8, -0.3, 2.0, 11, 2),
                               adcompile.hessian(taped)(0.8, -0.3, 2.0, 11, 2), rtol=1e-10)


def oscillator(x0, k, n):
    x = x0
    v = 0.0
    for t in checkpointed(range(n), snapshots=3):
        v = v - 0.1 * k * x * x
        x = x + 0.1 * v
    return x * x + v


def oscillator_taped(x0, k, n):
    x = x0
    v = 0.0
    for t in range(n):
        v = v - 0.1 * k * x * x
        x = x + 0.1 * v
    return x * x + v


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_of_the_gradient(backend):
    f, taped = pair(oscillator, oscillator_taped, backend)
    starts = np.linspace(0.5, 1.5, 4)
    got = adcompile.vmap(adcompile.grad(f, wrt=(0, 1)), in_axes=(0, None, None))(starts, 2.0, 9)
    expected = adcompile.vmap(adcompile.grad(taped, wrt=(0, 1)), in_axes=(0, None, None))(starts, 2.0, 9)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    numeric = gradient_by_differences(oscillator_taped, [starts[2], 2.0, 9], 0)
    assert got[0][2] == pytest.approx(float(numeric), rel=1e-6)


def test_gradient_of_the_gradient():
    f, taped = pair(spring, spring_taped, "python")
    second = adcompile.grad(adcompile.grad(f, wrt=2), wrt=2)(0.8, -0.3, 2.0, 9, 2)
    assert second == pytest.approx(adcompile.grad(adcompile.grad(taped, wrt=2), wrt=2)(0.8, -0.3, 2.0, 9, 2),
                                   rel=1e-10)
    numeric = gradient_by_differences(adcompile.grad(taped, wrt=2), [0.8, -0.3, 2.0, 9, 2], 2, eps=1e-5)
    assert second == pytest.approx(float(numeric), rel=1e-5)


class Damped(adcompile.Module):
    """A damped oscillator with learnable stiffness and damping, simulated in ``forward``."""

    def __init__(self, checkpoint):
        super().__init__()
        self.k = adcompile.Parameter(np.array([2.0, 0.3]))
        self.checkpoint = checkpoint

    def forward(self, x0):
        x = x0
        v = 0.0 * x0
        if self.checkpoint:
            for t in checkpointed(range(20), snapshots=3):
                v = v - 0.1 * self.k[0] * x - 0.1 * self.k[1] * v
                x = x + 0.1 * v
        else:
            for t in range(20):
                v = v - 0.1 * self.k[0] * x - 0.1 * self.k[1] * v
                x = x + 0.1 * v
        return x


def squared_error(model, X, y):
    return np.mean((model(X) - y) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_module_gradient_and_fit(backend):
    X = np.linspace(0.5, 1.5, 8)
    y = np.cos(X)
    checkpointed_model, taped_model = Damped(True), Damped(False)
    if backend == "python":
        checkpointed_model.compile("python")
        taped_model.compile("python")
    got = adcompile.grad(squared_error)(checkpointed_model, X, y)["k"]
    np.testing.assert_allclose(got, adcompile.grad(squared_error)(taped_model, X, y)["k"], rtol=1e-12)
    if backend == "numba":
        return  # fit compiles a whole epoch: once, on the python backend, is enough here
    histories = []
    for model in (checkpointed_model, taped_model):
        opt = adcompile.optim.SGD(model.parameters(), lr=0.05)
        histories.append(adcompile.fit(squared_error, model, opt, X, y, epochs=3, batch_size=4, progress=False))
    np.testing.assert_allclose(list(histories[0]), list(histories[1]), rtol=1e-12)
    np.testing.assert_allclose(checkpointed_model.k, taped_model.k, rtol=1e-12)


# ---------------------------------------------------------------------- the schedule
@lru_cache(None)
def fewest_recomputations(d, s):
    """Brute force: the fewest iterations run untaped to reverse ``d`` of them from a snapshot
    with ``s`` snapshots (that one included)."""
    if d <= 1:
        return 0
    if s == 1:
        return d * (d - 1) // 2
    return min(m + fewest_recomputations(d - m, s - 1) + fewest_recomputations(m, s) for m in range(1, d))


def test_binomial_schedule_recomputes_the_fewest_iterations():
    for s in range(1, 7):
        for n in range(1, 90):
            assert recomputed_iterations(n, s) == fewest_recomputations(n, s), (n, s)
            assert revolve_minimum(n, s) == fewest_recomputations(n, s), (n, s)


def test_snapshot_count_rule():
    assert checkpoint_snapshots(1000, 10, 8000) == 10
    assert checkpoint_snapshots(5, 10, 8000) == 5
    assert checkpoint_snapshots(0, 10, 8000) == 1
    assert checkpoint_snapshots(10 ** 6, -1, 8000) == 64 * 2 ** 20 // 8000
    assert checkpoint_snapshots(10 ** 6, -1, 16) == 10 ** 6
    assert checkpoint_snapshots(10 ** 6, -1, 10 ** 9) == 2
    with pytest.raises(ValueError, match="at least 1"):
        checkpoint_snapshots(10, 0, 8)


def test_numba_kernels_match_python():
    import numba  # lazy: the numba versions of the kernels
    from adcompile.runtime import numba_impls  # noqa: F401  (registers the overloads)

    advance = numba.njit(lambda d, s: revolve_advance(d, s))
    count = numba.njit(lambda n, r, b: checkpoint_snapshots(n, r, b))
    for d in (2, 3, 10, 57, 1000, 10 ** 6):
        for s in (2, 3, 8, 100):
            assert advance(d, s) == revolve_advance(d, s)
    assert count(10 ** 6, -1, 8000) == checkpoint_snapshots(10 ** 6, -1, 8000)


# ---------------------------------------------------------------------- source and errors
def test_source_shows_the_schedule():
    text = adcompile.source(adcompile.grad(adcompile.compile(spring, backend="python")), 0.8, -0.3, 2.0, 5, 2)
    for part in ("# checkpointed loop: binomial (revolve) schedule, snapshots of v, x",
                 "# the snapshot store", "# the recompute loop", "# the reverse loop's step",
                 "rt.revolve_advance(", "rt.checkpoint_snapshots("):
        assert part in text, part
    plain = adcompile.source(adcompile.compile(spring, backend="python"), 0.8, -0.3, 2.0, 5, 2)
    assert "revolve" not in plain and "for t in range(n):" in plain


def test_outside_compiled_code_it_is_the_iterable():
    r = range(3)
    assert checkpointed(r, snapshots=2) is r
    assert spring(0.8, -0.3, 2.0, 4, 2) == spring_taped(0.8, -0.3, 2.0, 4, 2)


def breaks(x, n):
    for t in checkpointed(range(n)):
        if x > 10.0:
            break
        x = x * 1.1
    return x


def over_array(x):
    s = 0.0
    for e in checkpointed(x):
        s = s + e
    return s


def local_read_after(x, n):
    s = x
    for t in checkpointed(range(n)):
        y = s * 2.0
        s = y + 1.0
    return s + y


@pytest.mark.parametrize("fn, message", [
    (breaks, "a checkpointed loop cannot break or return"),
    (over_array, "supports a range only"),
])
def test_unsupported_loops_are_located_errors(fn, message):
    args = (np.ones(3),) if fn is over_array else (1.0, 3)
    with pytest.raises(adcompile.AdCompileError, match=message) as info:
        adcompile.grad(adcompile.compile(fn, backend="python"))(*args)
    assert "test_checkpointed_loops.py" in str(info.value)


def test_body_variable_read_after_the_loop_is_a_located_error():
    with pytest.raises(adcompile.AdCompileError, match="'y' is first assigned inside a checkpointed loop") as info:
        adcompile.grad(adcompile.compile(local_read_after, backend="python"))(1.0, 3)
    assert "test_checkpointed_loops.py" in str(info.value)
