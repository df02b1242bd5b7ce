"""Second order by running the transforms on their own output: hessian, hvp, grad of grad,
jvp of grad, jacobian of grad; checked against finite differences of the gradient."""
import numpy as np
import pytest

import adcompile
from adcompile.derivatives import forward
from oracles import (assert_symmetric, directional_difference, gradient_by_differences, hessian_by_differences,
                     hessian_by_second_differences)

RNG = np.random.default_rng(11)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def loop_and_branch(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] * w > 0:
            s += np.exp(0.3 * x[i] * w)
        else:
            s -= np.sin(x[i]) * w * w
    return s * s


def overwriting(x):
    y = x.copy()
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * np.tanh(y[i]) + x[i] ** 2
    return np.sum(y * y)


def spring(k, c):
    x, v, dt = 1.0, 0.0, 0.01
    for _ in range(400):
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    return x


def fixed_point(a):
    x = 1.0
    err = 1.0
    while err > 1e-12:
        new = np.cos(a * x)
        err = abs(new - x)
        x = new
    return x * x


def log_sum_exp_loss(W, X):
    z = X @ W
    m = np.max(z, axis=1, keepdims=True)
    return np.sum(m[:, 0] + np.log(np.sum(np.exp(z - m), axis=1)))


HESSIAN_CASES = [
    (rosenbrock, lambda: (RNG.standard_normal(5),), 0),
    (loop_and_branch, lambda: (RNG.standard_normal(6), 0.8), 0),
    (loop_and_branch, lambda: (RNG.standard_normal(6), 0.8), 1),
    (overwriting, lambda: (0.5 * RNG.standard_normal(5),), 0),
    (log_sum_exp_loss, lambda: (RNG.standard_normal((3, 2)), RNG.standard_normal((4, 3))), 0),
]


@pytest.mark.parametrize("fn, make_args, k, backend",
                         [c + ("python",) for c in HESSIAN_CASES] + [HESSIAN_CASES[0] + ("numba",),
                                                                     HESSIAN_CASES[3] + ("numba",)],
                         ids=[f"{c[0].__name__}-{c[2]}" for c in HESSIAN_CASES] + ["rosenbrock-numba",
                                                                                 "overwriting-numba"])
def test_hessian_matches_finite_differences_of_gradient(fn, make_args, k, backend):
    f = adcompile.compile(fn, backend=backend)
    args = make_args()
    H = adcompile.hessian(f, wrt=k)(*args)
    x = args[k]
    assert np.shape(H) == np.shape(x) + np.shape(x)
    n = np.size(x)
    numeric = hessian_by_differences(adcompile.grad(f, wrt=k), args, k)
    np.testing.assert_allclose(np.reshape(H, (n, n)), np.reshape(numeric, (n, n)), rtol=1e-5, atol=1e-6)
    assert_symmetric(H, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("fn, make_args, k", HESSIAN_CASES[:4], ids=[c[0].__name__ for c in HESSIAN_CASES[:4]])
def test_hvp_equals_hessian_times_vector(fn, make_args, k):
    f = adcompile.compile(fn, backend="python")
    args = make_args()
    H = adcompile.hessian(f, wrt=k)(*args)
    v = RNG.standard_normal(np.shape(args[k])) if np.ndim(args[k]) else 0.7
    tangents = [None] * len(args)
    tangents[k] = v
    n = np.size(args[k])
    expected = np.reshape(H, (n, n)) @ np.ravel(v)
    np.testing.assert_allclose(np.ravel(adcompile.hvp(f, args, tangents)), expected, rtol=1e-9, atol=1e-9)


def test_scalar_hessian_and_grad_of_grad_through_a_long_loop():
    f = adcompile.compile(spring, backend="numba")
    k, c = 3.0, 0.2
    second = adcompile.grad(adcompile.grad(f))(k, c)
    first = adcompile.grad(f)
    eps = 1e-5
    numeric = (first(k + eps, c) - first(k - eps, c)) / (2 * eps)
    assert np.isclose(second, numeric, rtol=1e-6)
    assert np.isclose(adcompile.hessian(f)(k, c), second, rtol=1e-12)
    mixed = adcompile.grad(adcompile.grad(f, wrt=0), wrt=1)(k, c)
    numeric_mixed = (first(k, c + eps) - first(k, c - eps)) / (2 * eps)
    assert np.isclose(mixed, numeric_mixed, rtol=1e-6)


def nuclear_norm_of_rank_one_tall(x):
    return np.linalg.norm(x * np.ones((4, 3)), "nuc")  # 2 |x|: the matrix is rank 1 for every x


def nuclear_norm_of_rank_one_wide(x):
    return np.linalg.norm(x * np.ones((3, 4)), "nuc")  # sqrt(3) |x|


@pytest.mark.parametrize("fn, x, rows", [
    (nuclear_norm_of_rank_one_tall, np.array([0.2612507582897796, 0.9560172518871368, 0.7342699736525955]), 4),
    (nuclear_norm_of_rank_one_wide, np.array([0.26, 0.956, -0.734, 0.4]), 3)], ids=["tall", "wide"])
@pytest.mark.parametrize("backend", ["lowered", "numba"])
def test_hvp_through_the_svd_of_a_rank_deficient_matrix(fn, x, rows, backend, monkeypatch):
    """Random program 44004932: the singular values LAPACK gives a rank-deficient matrix beyond
    its rank are rounding noise (~1e-17); the svd rules read them as zeros (no division by
    them, nor by the gap between two of them), else the hvp came out ~1e15 for ~1. Against
    second differences of plain numpy's values."""
    if backend == "lowered":
        monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    f = adcompile.compile(fn, backend="python" if backend == "lowered" else "numba")
    v = np.linspace(-0.5, 0.7, x.size)
    expected = hessian_by_second_differences(fn, (x,)) @ v
    np.testing.assert_allclose(adcompile.hvp(f, (x,), (v,)), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(adcompile.grad(f)(x), np.sqrt(rows) * x / np.linalg.norm(x), rtol=1e-9)


def spectral_of_a_scaled_identity(x):
    """sum(w ** 2) + x1 w[-1] for w the eigenvalues of x0 * I + x1 * e e^T (e the last unit
    vector): exactly a double eigenvalue x0 at every x, the other x0 + x1."""
    a = x[0] * np.eye(3) + x[1] * np.outer(np.eye(3)[2], np.eye(3)[2])
    w = np.linalg.eigvalsh(a)
    return np.sum(w ** 2) + w[-1] * x[1]


@pytest.mark.parametrize("backend", ["lowered", "numba"])
def test_hessian_through_eigh_at_repeated_eigenvalues(backend, monkeypatch):
    """Random program 44006428: eigenvalues equal up to rounding gave 1 / (w_j - w_i) = inf
    times a zero tangent, NaN in the Hessian; the eigh rules read them as equal (0 there).
    The function is smooth (sum(w ** 2) is the squared Frobenius norm): against second
    differences of plain numpy's values."""
    if backend == "lowered":
        monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    f = adcompile.compile(spectral_of_a_scaled_identity, backend="python" if backend == "lowered" else "numba")
    x = np.array([0.7, 0.4])
    expected = hessian_by_second_differences(spectral_of_a_scaled_identity, (x,))
    np.testing.assert_allclose(adcompile.hessian(f)(x), expected, rtol=1e-6, atol=1e-6)


def test_second_derivative_through_a_while_loop():
    f = adcompile.compile(fixed_point, backend="python")
    a = 0.9
    first = adcompile.grad(f)
    eps = 1e-5
    assert np.isclose(adcompile.grad(adcompile.grad(f))(a), (first(a + eps) - first(a - eps)) / (2 * eps),
                      rtol=1e-5)


def test_jvp_of_grad_and_jacobian_of_grad():
    f = adcompile.compile(rosenbrock, backend="python")
    x = RNG.standard_normal(4)
    H = adcompile.hessian(f)(x)
    v = RNG.standard_normal(4)
    g, Hv = adcompile.jvp(adcompile.grad(f), (x,), (v,))
    np.testing.assert_allclose(g, adcompile.grad(f)(x), rtol=1e-12)
    np.testing.assert_allclose(Hv, H @ v, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(adcompile.jacobian(adcompile.grad(f))(x), H, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(adcompile.jacobian(adcompile.grad(f), mode="fwd")(x), H, rtol=1e-10, atol=1e-10)


def test_gradcheck_order_two_and_gradgradcheck():
    f = adcompile.compile(loop_and_branch, backend="python")
    args = (RNG.standard_normal(5), 0.6)
    assert adcompile.gradcheck(f, args, order=2)
    assert adcompile.gradgradcheck(f, args)


def test_gradgradcheck_raises_on_a_mismatch():
    # With a huge finite-difference step the numerical second derivative of sin is off by
    # O(eps^2): the check must notice instead of passing silently.
    def wavy(x):
        return np.sum(np.sin(3.0 * x))
    f = adcompile.compile(wavy, backend="python")
    x = RNG.standard_normal(3)
    assert adcompile.gradgradcheck(f, (x,))
    with pytest.raises(adcompile.checks.gradcheck.GradcheckError, match="second derivative"):
        adcompile.gradgradcheck(f, (x,), eps=0.5)


def test_source_of_a_hessian_is_readable_and_compact():
    f = adcompile.compile(rosenbrock, backend="python")
    h = adcompile.hessian(f)
    x = RNG.standard_normal(4)
    h(x)
    text = adcompile.source(h.derived, x)
    assert "def rosenbrock_grad_jvp(x, dx):" in text
    assert "# grad of: return np.sum(" in text
    assert "dbx" in text
    assert len([line for line in text.splitlines() if line.strip()]) < 80


def test_simplification_passes_shrink_the_generated_source():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import source_size
    rows = source_size.measure()
    assert all(after <= before for _, before, after in rows)
    assert sum(before - after for _, before, after in rows) > 0


def write_through_a_view_of_a_temporary(x, A):
    M2 = np.flip(np.sin(A), axis=1)  # a view of the temporary np.sin(A), which the next line writes
    M2[-3, 1:] = x - M2[-3, 1]
    return np.sum(M2)


def repeat_written_through_a_view(A):
    B = np.sin(A)
    C = np.sin(A)[::-1]  # a repeat of B's computation, whose memory the next line writes
    C[0] = 5.0
    return np.sum(B * B) + np.sum(C * C)


@pytest.fixture(params=["python", "lowered", "numba"])
def backend(request, monkeypatch):
    """The Python backend without and with the numba lowering (ADCOMPILE_FUSE=all), and numba."""
    if request.param == "lowered":
        monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    else:
        monkeypatch.delenv("ADCOMPILE_FUSE", raising=False)
    return "numba" if request.param == "numba" else "python"


def test_hvp_where_the_user_writes_through_a_view_of_a_temporary(backend):
    # random program 44004300: common subexpressions let the temporary np.sin(A), written through
    # its view M2, stand for the sin(A) of the derivative of cos(A) (hvp wrong in a few entries)
    f = adcompile.compile(write_through_a_view_of_a_temporary, backend=backend)
    rng = np.random.default_rng(44004300)
    args = (rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (3, 4)))
    direction = (rng.standard_normal(3), rng.standard_normal((3, 4)))
    hv = adcompile.hvp(f, args, direction)
    expected = directional_difference(adcompile.grad(f, wrt=(0, 1)), args, dict(enumerate(direction)))
    for got, want in zip(hv, expected):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_gradient_where_a_repeat_is_written_through_a_view(backend):
    # the other side of the same merge: the temporary np.sin(A) of C, written through C, may not
    # be replaced by B (the write went into B: its gradient entry was 2 sin(5) cos(A) off)
    f = adcompile.compile(repeat_written_through_a_view, backend=backend)
    A = np.random.default_rng(5).uniform(-1, 1, 4)
    np.testing.assert_allclose(adcompile.grad(f)(A), gradient_by_differences(repeat_written_through_a_view, (A,)),
                               rtol=1e-6, atol=1e-6)
    direction = np.random.default_rng(6).standard_normal(4)
    np.testing.assert_allclose(adcompile.hvp(f, (A,), (direction,)),
                               directional_difference(adcompile.grad(f), (A,), {0: direction}), rtol=1e-6, atol=1e-6)


def test_repeated_hvp_calls_take_the_quick_path_only_when_they_match(monkeypatch):
    """An optimiser's loop of ``hvp`` calls reuses the product and plan of the first call; a
    call of another dtype, rank or tangent shape goes the general way, with the right result."""
    def f(x):
        return np.sum(np.log(1.0 + np.exp(x))) + 0.5 * x @ x

    def expected(x, v):
        s = 1.0 / (1.0 + np.exp(-x))
        return (s * (1.0 - s) + 1.0) * v

    g = adcompile.compile(f)
    rng = np.random.default_rng(3)
    x, v = rng.standard_normal(6), rng.standard_normal(6)
    np.testing.assert_allclose(adcompile.hvp(g, (x,), (v,)), expected(x, v), rtol=1e-12)
    quick = g.__dict__["_hvp_quick"]
    general = []
    original_bind = forward._bind_primals
    monkeypatch.setattr(forward, "_bind_primals",
                        lambda *a: general.append(1) or original_bind(*a))
    for _ in range(3):
        x, v = rng.standard_normal(6), rng.standard_normal(6)
        np.testing.assert_allclose(adcompile.hvp(g, (x,), (v,)), expected(x, v), rtol=1e-12)
    assert general == [] and g.__dict__["_hvp_quick"] is quick
    x32, v32 = x.astype(np.float32), v.astype(np.float32)
    np.testing.assert_allclose(adcompile.hvp(g, (x32,), (v32,)), expected(x, v), rtol=1e-4)
    with pytest.raises(adcompile.AdCompileError):
        adcompile.hvp(g, (x,), (v[:3],))
    assert len(general) == 2
