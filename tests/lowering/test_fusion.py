"""Loop fusion (``adcompile/lowering/``): the fused source and its values.

Most checks lower a derived function's IR with ``fuse_loops`` and run the generated source as
plain Python (fast to load), comparing with the unfused function and with central differences.
A few compile with numba through ``adcompile.compile`` (fusion is its default). Fusion sums
sequentially where numpy sums pairwise, so values agree to a tolerance, not bit for bit.
"""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences
from adcompile.backend.loader import load
from adcompile.codegen.python import generate
from adcompile.lowering import fuse_loops
from adcompile.ir.shapes import infer_shapes


def lowered(derived, *args, parallel=False, extra=0):
    """(fused source, the number of fused loops, the fused function run as Python); the last
    ``extra`` arguments are tangents (not part of the signature)."""
    fn = derived.ir(derived.signature(args[:len(args) - extra]))
    fused, loops = fuse_loops(fn, infer_shapes, parallel=parallel)
    source = generate(fused, origin="test_fusion")
    return source, loops, load(source, fused.name, "python")


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def softplus_objective(x, A):
    return np.sum(np.log(1 + np.exp(A @ x))) + 0.5 * x @ x


def logistic_loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def smooth_max(x):
    return np.max(np.tanh(x) * x) + np.min(np.sin(x) - x) + np.mean(x * x)


def dot_chain(x):
    y = np.exp(-x) * x
    return y @ y + np.sum(np.sqrt(1.0 + x * x))


def matrix_chain(A, B):
    return np.sum(A * B + np.sin(A) * np.cos(B)) + np.mean(A * A)


def clipped(x):
    return np.sum(np.where(x > 0, x, 0.1 * x) + np.clip(x, -0.5, 0.5) * np.maximum(x, 0.2))


def stencil(u):
    return np.sum((u[2:] - 2 * u[1:-1] + u[:-2]) ** 2) + np.sum(u[1:] * u[:-1])


def scaled(x, k):
    return k * np.sum((x - k) ** 2 / (1 + x * x))


def descent(x, steps):
    for _ in range(steps):
        x = x - 0.01 * adcompile.grad(rosenbrock)(x)
    return np.sum(x * x)


RNG = np.random.default_rng(7)
X = RNG.standard_normal((30, 4))
PROGRAMS = [
    (rosenbrock, (RNG.standard_normal(12),)),
    (softplus_objective, (RNG.standard_normal(5), RNG.standard_normal((8, 5)))),
    (logistic_loss, (0.1 * RNG.standard_normal(4), X, (RNG.standard_normal(30) > 0) * 1.0)),
    (smooth_max, (RNG.standard_normal(9),)),
    (dot_chain, (RNG.standard_normal(7),)),
    (matrix_chain, (RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4)))),
    (clipped, (RNG.standard_normal(10),)),
    (stencil, (RNG.standard_normal(11),)),
    (scaled, (RNG.standard_normal(6), 0.7)),
    (descent, (0.5 * RNG.standard_normal(6), 3)),
]


@pytest.mark.parametrize("f, args", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_fused_values_and_gradients(f, args):
    compiled = adcompile.compile(f, backend="python")
    _, _, forward = lowered(compiled, *args)
    assert np.allclose(forward(*args), compiled(*args), rtol=1e-12, atol=1e-12)
    gradient = adcompile.grad(compiled)
    _, _, fused_gradient = lowered(gradient, *args)
    g = fused_gradient(*args)[0]
    assert np.allclose(g, gradient(*args), rtol=1e-10, atol=1e-12)
    x, rest = args[0], args[1:]
    assert np.allclose(g, gradient_by_differences(lambda z: compiled(z, *rest), (x,)), rtol=1e-5, atol=1e-6)


def test_rosenbrock_gradient_is_one_loop():
    x = RNG.standard_normal(10)
    source, loops, _ = lowered(adcompile.grad(adcompile.compile(rosenbrock, backend="python")), x)
    body = source[source.index("def "):]
    assert loops == 1 and body.count("for ") == 1, source
    assert "x[i + 1]" in body and "bx[i + 1] +=" in body and "# grad of:" in body, source
    code = "\n".join(line for line in body.splitlines() if not line.lstrip().startswith("#"))
    assert "np.sum" not in code and "rt.unbroadcast" not in code, source
    forward_source, forward_loops, _ = lowered(adcompile.compile(rosenbrock, backend="python"), x)
    assert forward_loops == 1 and "+=" in forward_source


def test_second_order_sources_are_fused():
    x, v = RNG.standard_normal(8), RNG.standard_normal(8)
    compiled = adcompile.compile(rosenbrock, backend="python")
    hvp = adcompile.derivatives.forward.DerivedFunction(adcompile.grad(compiled), "jvp", 0, tangents_only=True)
    source, loops, fused_hvp = lowered(hvp, x, v, extra=1)
    assert loops >= 1 and "for i in range(" in source
    assert np.allclose(fused_hvp(x, v), hvp.run((x,), (v,)), rtol=1e-10)
    g = adcompile.grad(compiled)
    assert np.allclose(fused_hvp(x, v)[0], gradient_by_differences(lambda z: g(z) @ v, (x,)), rtol=1e-5, atol=1e-5)
    hessian = adcompile.hessian(compiled)
    source, loops, fused_hessian = lowered(hessian, x)
    assert loops >= 1 and np.allclose(fused_hessian(x), hessian(x), rtol=1e-10)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_zero_length_domains(n):
    x = RNG.standard_normal(n)
    compiled = adcompile.compile(rosenbrock, backend="python")
    for derived in (compiled, adcompile.grad(compiled)):
        _, loops, fused = lowered(derived, x)
        assert loops == 1
        assert np.allclose(np.asarray(fused(x), dtype=float), np.asarray(derived(x), dtype=float))


def test_strided_input():
    base = RNG.standard_normal(25)
    x = base[::2]
    compiled = adcompile.compile(stencil, backend="python")
    _, _, fused_gradient = lowered(adcompile.grad(compiled), x)
    assert np.allclose(fused_gradient(x)[0], adcompile.grad(compiled)(x), rtol=1e-12)


def test_float32_stays_float32():
    x = RNG.standard_normal(9).astype(np.float32)
    compiled = adcompile.compile(rosenbrock, backend="python")
    source, _, fused_gradient = lowered(adcompile.grad(compiled), x)
    g = fused_gradient(x)[0]
    assert g.dtype == np.float32 and "np.float32(1)" in source
    assert np.allclose(g, adcompile.grad(compiled)(x), rtol=1e-5, atol=1e-4)
    _, _, fused_forward = lowered(compiled, x)
    assert np.allclose(fused_forward(x), compiled(x), rtol=1e-5)


def shift_add(x):
    y = x * 1.0
    y[1:] += y[:-1]  # reads what the same statement run as a loop would have written
    return np.sum(y * y)


def test_accumulation_reading_its_own_array_is_not_fused_across():
    x = RNG.standard_normal(6)
    compiled = adcompile.compile(shift_add, backend="python")
    for derived in (compiled, adcompile.grad(compiled)):
        _, _, fused = lowered(derived, x)
        assert np.allclose(np.asarray(fused(x), dtype=float), np.asarray(derived(x), dtype=float))


def row_broadcast(A, b):
    return np.sum(np.tanh(A - b) * A)


def test_shapes_not_provably_equal_are_not_fused_together():
    A, b = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    compiled = adcompile.compile(row_broadcast, backend="python")
    gradient = adcompile.grad(compiled)
    _, _, fused = lowered(gradient, A, b)
    assert np.allclose(fused(A, b)[0], gradient(A, b))
    _, _, fused_one = lowered(gradient, A, b[:1])  # b of length 1 broadcast at run time
    assert np.allclose(fused_one(A, b[:1])[0], gradient(A, b[:1]))


def test_numba_rosenbrock_gradient_and_division_by_zero():
    x = RNG.standard_normal(50)
    fused = adcompile.grad(adcompile.compile(rosenbrock))
    unfused = adcompile.grad(adcompile.compile(rosenbrock, fuse=False))
    assert np.allclose(fused(x), unfused(x), rtol=1e-12)
    assert np.allclose(fused(x), gradient_by_differences(rosenbrock, (x,)), rtol=1e-5, atol=1e-5)

    def ratio(x):
        return np.sum(1.0 / x + x / (x * x))
    z = np.array([1.0, 0.0, 2.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        assert np.isnan(adcompile.compile(ratio)(z)) == np.isnan(ratio(z))


def test_parallel_loops_use_prange():
    x = RNG.standard_normal(20)
    compiled = adcompile.compile(rosenbrock, backend="python")
    source, _, fused = lowered(compiled, x, parallel=True)
    assert "numba.prange(" in source and np.allclose(fused(x), compiled(x))
    gradient_source, _, _ = lowered(adcompile.grad(compiled), x, parallel=True)
    assert "prange" not in gradient_source  # bx[i] and bx[i + 1]: neighbouring iterations write one element


def view_then_write(x, k):
    y = x * k
    v = y[1:]
    w = np.sin(v) * v + np.cos(v)
    y[1] = 5.0  # v is a view of y: it sees this write
    return np.sum(w) + np.sum(v * v)


def test_a_view_used_after_the_loop_stays_a_view():
    x = RNG.standard_normal(6)
    compiled = adcompile.compile(view_then_write, backend="python")
    source, loops, fused = lowered(compiled, x, 1.5)
    assert loops >= 1 and np.allclose(fused(x, 1.5), compiled(x, 1.5)), source
    assert np.isclose(compiled(x, 1.5), view_then_write(x.copy(), 1.5))


def doubled_in_place(A):
    W = A
    W += W
    return np.sum(np.sin(W))


def test_allocation_shaped_like_a_fused_value_is_not_moved_before_it():
    A, V = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    compiled = adcompile.compile(doubled_in_place, backend="python")
    hvp = adcompile.api.derived.DerivedFunction(adcompile.grad(compiled), "jvp", 0, tangents_only=True)
    _, loops, fused_hvp = lowered(hvp, A, V, extra=1)
    assert loops >= 1 and np.allclose(fused_hvp(A.copy(), V)[0], hvp.run((A.copy(),), (V,))[0])


def restored_in_branch(x, n):
    for _ in range(n):
        x = np.tanh(x + np.sum(np.cos(np.ones((4, 2))), axis=1))
    if x[-1] - x[-1]:
        pass
    else:
        x = np.tanh(x + (np.concatenate((x[-1:], x[1:4])) - x))
    return np.sum(x)


def test_a_view_rebound_in_the_loop_is_taken_after_it():
    """Reverse mode restores ``x = x_saved`` between reads of the output ``x``: the fused loop
    reads the output, so the restoring alias goes after the loop (random program, seed 72)."""
    x = np.array([0.68, -0.99, -0.54, -0.77])
    gradient = adcompile.grad(adcompile.compile(restored_in_branch, backend="python"))
    _, loops, fused = lowered(gradient, x, 2)
    assert loops >= 1 and np.allclose(fused(x, 2)[0], gradient(x, 2))
    assert np.allclose(gradient(x, 2), gradient_by_differences(lambda z: restored_in_branch(z, 2), (x,)), rtol=1e-5)


def test_lengths_of_different_arguments_are_assumed_equal_behind_a_check():
    w, X = 0.1 * RNG.standard_normal(4), RNG.standard_normal((30, 4))
    y = (RNG.standard_normal(30) > 0) * 1.0
    gradient = adcompile.grad(adcompile.compile(logistic_loss, backend="python"))
    source, loops, fused = lowered(gradient, w, X, y)
    body = source[source.index("def "):]
    assert loops == 1 and "if y.shape[0] == " in body and body.count("for i in range(") == 1, source
    assert np.allclose(fused(w, X, y)[0], gradient(w, X, y), rtol=1e-12)
    one = np.array([1.0])  # broadcast from length 1: the check fails, the unfused statements run
    assert np.allclose(fused(w, X, one)[0], gradient(w, X, one), rtol=1e-12)

