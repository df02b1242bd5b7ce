"""Batched tangents: ``hessian`` and ``jacobian(mode="fwd")`` as one jvp with a batch of
tangents (``transforms/batching.py``), and the column loop they fall back to.

Every matrix is checked against central differences of the level below (the gradient, or
the function) and against the column loop (the batched path refused), on the generated
Python; one case runs numba.
"""
import numpy as np
import pytest

import adcompile
import adcompile.transforms.matrix_ir as matrix_ir
from adcompile.ir.builder import Namer
from adcompile.transforms.batching import Unbatchable, batch
from oracles import jacobian_by_differences

RNG = np.random.default_rng(11)
A = RNG.standard_normal((6, 4)) / 2.0
B = RNG.standard_normal((4, 3)) / 2.0


def softplus_objective(x):
    return np.sum(np.log(1 + np.exp(A @ x))) + 0.5 * x @ x


def elementwise_chain(x):
    return np.sum(np.sin(x) * np.cos(x) ** 2 / (2.0 + np.tanh(x))) + np.prod(x[:3])


def slices(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2) + x[::-1][0] * x[2]


def matrix_argument(X):
    return np.sum(np.tanh(X.T @ X)) + np.sum(np.mean(X, axis=0) ** 3) + np.sum(np.max(X, axis=1) ** 2)


def reductions_with_axis(X):
    return np.sum(np.sum(X * X, axis=1) ** 2) + np.sum(np.exp(np.mean(X, axis=0))) + np.linalg.norm(X @ B)


def loop_carried(x):
    t = x
    for i in range(3):
        t = np.sin(A.T @ np.tanh(A @ t)) + 0.1 * t
    return np.sum(t * t)


def scalar_loop(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + (1.0 - x[i]) ** 2 + 10.0 * (x[i + 1] - x[i] ** 2) ** 2
    return s


def while_loop(x):
    k = 0
    s = 0.0
    while k < 3:
        s = s + np.sum(np.sin(x * (k + 1.0)))
        k += 1
    return s * np.dot(x, x)


def in_place_writes(x):
    y = np.zeros(x.shape[0])
    y[1:] = x[:-1] * x[1:]
    y[0] = x[0] ** 3
    y[2:] += np.exp(x[2:])
    return np.sum(y * y)


def where_and_clip(x):
    return np.sum(np.where(x > 0.0, x ** 3, np.exp(x))) + np.sum(np.clip(x, -0.5, 0.5) ** 2 * x)


def branch_on_values(x):
    if np.sum(x) > 0.0:
        return np.sum(x ** 4) + x[0] * x[1]
    return np.sum(np.exp(x))


def joins_and_outer(x):
    y = np.concatenate((x, x[:2] * x[1:3]))
    z = np.stack((x, np.cos(x)))
    return np.sum(y ** 3) + np.sum(z.T @ z) + np.sum(np.outer(x, np.sin(x)))


C = 3.0 * np.eye(4) + RNG.standard_normal((4, 4)) / 4.0


def linear_algebra(x):
    M = np.triu(np.diag(np.sin(x)) + np.outer(x, x))
    return np.sum(np.linalg.solve(C, np.cumsum(x) * x)) + np.sum(M ** 2)


HESSIAN_CASES = {
    "softplus objective (matmul)": (softplus_objective, RNG.standard_normal(4)),
    "elementwise chain": (elementwise_chain, RNG.standard_normal(5)),
    "slices": (slices, RNG.standard_normal(5)),
    "2-d argument, matmul of two batched values": (matrix_argument, RNG.standard_normal((3, 4))),
    "reductions with axis, norm": (reductions_with_axis, RNG.standard_normal((2, 4))),
    "loop-carried array": (loop_carried, RNG.standard_normal(4)),
    "scalar loop (tapes)": (scalar_loop, RNG.standard_normal(5)),
    "while loop": (while_loop, RNG.standard_normal(4)),
    "in-place writes": (in_place_writes, RNG.standard_normal(5)),
    "where and clip": (where_and_clip, np.array([-1.2, -0.3, 0.2, 0.7, 1.1])),
    "branch on unbatched values": (branch_on_values, RNG.standard_normal(4)),
    "concatenate, stack, outer": (joins_and_outer, RNG.standard_normal(4)),
    "solve, cumsum, diag, triu": (linear_algebra, RNG.standard_normal(4)),
    "float32": (softplus_objective, RNG.standard_normal(4).astype(np.float32)),
}


def column_loop(make_matrix, monkeypatch):
    """The matrix computed by the column loop: the batched path refused."""
    def refuse(*args, **kwargs):
        raise Unbatchable("refused by the test")
    with monkeypatch.context() as patch:
        patch.setattr(matrix_ir, "_batched_columns_ir", refuse)
        return make_matrix()


def is_batched(derived, *args):
    """Whether the generated code computes the matrix in one pass (no loop over unit vectors)."""
    return "unit" not in adcompile.source(derived, *args)


@pytest.mark.parametrize("name", HESSIAN_CASES)
def test_hessian_is_one_batched_pass(name, monkeypatch):
    fn, x = HESSIAN_CASES[name]
    compiled = adcompile.compile(fn, backend="python")
    hessian = adcompile.hessian(compiled)
    H = hessian(x)
    assert is_batched(hessian, x)
    assert H.shape == x.shape + x.shape and H.dtype == x.dtype
    loop = column_loop(lambda: adcompile.hessian(adcompile.compile(fn, backend="python"))(x), monkeypatch)
    tight = 1e-4 if x.dtype == np.float32 else 1e-10
    np.testing.assert_allclose(H, loop, rtol=tight, atol=tight)
    gradient = adcompile.grad(adcompile.compile(fn, backend="python"))
    reference = jacobian_by_differences(gradient, (x,), eps=1e-6)
    np.testing.assert_allclose(H, reference, rtol=1e-3 if x.dtype == np.float32 else 1e-5, atol=1e-3)


def vector_field(x):
    return np.tanh(A.T @ (A @ x)) * np.sum(x ** 2) + np.concatenate((x[1:] * x[:-1], np.cos(x[:1])))


def scan_like(x):
    y = np.zeros(x.shape[0])
    acc = 0.0
    for i in range(x.shape[0]):
        acc = acc * 0.5 + np.sin(x[i])
        y[i] = acc
    return y


def matrix_valued(X):
    return np.exp(X) @ B + np.sum(X * X, axis=1)[:, None] + X[:, :3] * X[:, 1:]


JACOBIAN_CASES = {
    "vector field": (vector_field, RNG.standard_normal(4)),
    "scan with in-place writes": (scan_like, RNG.standard_normal(4)),
    "matrix-valued of a matrix": (matrix_valued, RNG.standard_normal((2, 4))),
}


@pytest.mark.parametrize("name", JACOBIAN_CASES)
def test_forward_jacobian_is_one_batched_pass(name, monkeypatch):
    fn, x = JACOBIAN_CASES[name]
    jacobian = adcompile.jacobian(adcompile.compile(fn, backend="python"), mode="fwd")
    J = jacobian(x)
    assert is_batched(jacobian, x)
    loop = column_loop(lambda: adcompile.jacobian(adcompile.compile(fn, backend="python"), mode="fwd")(x),
                       monkeypatch)
    np.testing.assert_allclose(J, loop, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(J, jacobian_by_differences(fn, (x,), eps=1e-6), rtol=1e-5, atol=1e-7)


def convolved(x):
    return np.sum(np.convolve(x, np.sin(x)) ** 2)


def test_a_primitive_without_batch_rule_falls_back_to_the_column_loop():
    x = RNG.standard_normal(4)
    hessian = adcompile.hessian(adcompile.compile(convolved, backend="python"))
    assert not is_batched(hessian, x)
    gradient = adcompile.grad(adcompile.compile(convolved, backend="python"))
    np.testing.assert_allclose(hessian(x), jacobian_by_differences(gradient, (x,), eps=1e-6), rtol=1e-5, atol=1e-7)


def branch_on_argument(x):
    if x[0] > 0.0:
        return np.sin(x)
    return np.cos(x)


def test_a_branch_on_a_batched_value_is_unbatchable():
    compiled = adcompile.compile(branch_on_argument, backend="python")
    x = np.array([0.5, -0.2])
    primal = compiled.ir(compiled.signature((x,)))
    with pytest.raises(Unbatchable, match="branch condition"):
        batch(primal, [0], Namer())


@pytest.mark.slow
def test_hessian_batched_in_numba():
    fn, x = HESSIAN_CASES["scalar loop (tapes)"]
    hessian = adcompile.hessian(adcompile.compile(fn))
    gradient = adcompile.grad(adcompile.compile(fn, backend="python"))
    assert is_batched(hessian, x)
    np.testing.assert_allclose(hessian(x), jacobian_by_differences(gradient, (x,), eps=1e-6), rtol=1e-5, atol=1e-6)


# ----------------------------------------------------------------- vmap
def layer(x, W):
    return np.tanh(W @ x) * np.sum(x ** 2)


def squared_errors(w, X, y):
    s = 0.0
    for i in range(X.shape[0]):
        s = s + (np.dot(w, X[i]) - y[i]) ** 2
    return s


def test_vmap_maps_over_the_leading_axis():
    compiled = adcompile.compile(layer, backend="python")
    xs, W = RNG.standard_normal((5, 4)), RNG.standard_normal((3, 4))
    mapped = adcompile.vmap(compiled, in_axes=(0, None))
    np.testing.assert_allclose(mapped(xs, W), np.stack([compiled(x, W) for x in xs]), rtol=1e-12)
    assert "for " not in adcompile.source(mapped, xs, W)
    Ws = RNG.standard_normal((5, 3, 4))
    np.testing.assert_allclose(adcompile.vmap(compiled)(xs, Ws), np.stack([compiled(x, w) for x, w in zip(xs, Ws)]),
                               rtol=1e-12)


def test_vmap_of_a_gradient_with_a_loop_and_its_gradient():
    compiled = adcompile.compile(squared_errors, backend="python")
    X, y, ws = RNG.standard_normal((4, 3)), RNG.standard_normal(4), RNG.standard_normal((6, 3))
    per_member = adcompile.vmap(adcompile.grad(compiled), in_axes=(0, None, None))
    np.testing.assert_allclose(per_member(ws, X, y), np.stack([adcompile.grad(compiled)(w, X, y) for w in ws]),
                               rtol=1e-12)
    losses = adcompile.vmap(compiled, in_axes=(0, None, None))
    np.testing.assert_allclose(losses(ws, X, y), [compiled(w, X, y) for w in ws], rtol=1e-12)
    # differentiated again: the Jacobian of the batch of losses with respect to the whole batch
    jacobian = adcompile.jacobian(losses, wrt=0)(ws, X, y)
    numeric = jacobian_by_differences(lambda v: losses(v, X, y), (ws,), eps=1e-6)
    np.testing.assert_allclose(jacobian, numeric, rtol=1e-6, atol=1e-7)


def test_vmap_errors_name_the_cause():
    compiled = adcompile.compile(branch_on_argument, backend="python")
    with pytest.raises(adcompile.AdCompileError, match="branch condition depends on a batched value"):
        adcompile.vmap(compiled)(np.ones((3, 2)))
    mapped = adcompile.vmap(adcompile.compile(layer, backend="python"))
    with pytest.raises(adcompile.AdCompileError, match="different leading lengths"):
        mapped(np.ones((3, 4)), np.ones((2, 3, 4)))
    with pytest.raises(adcompile.AdCompileError, match="in_axes"):
        adcompile.vmap(layer, in_axes=(1, None))


# ----------------------------------------------------------------- every rule of the table
@pytest.mark.slow
def test_batched_hessians_of_every_rule_equal_the_column_loop(monkeypatch):
    """For each entry of the rule table, the Hessian of its scalar loss with respect to its
    first float array argument: where it is batched, the column loop's numbers exactly."""
    from test_rules import CASES, _float_positions, compiled
    batched = 0
    for entry in CASES:
        args = entry.args()
        arrays = [k for k in _float_positions(args) if isinstance(args[k], np.ndarray)]
        if not arrays:
            continue
        _, fn = compiled(entry.name, "python", True)
        hessian = adcompile.hessian(fn, wrt=arrays[0])
        if not is_batched(hessian, *args):
            continue
        batched += 1
        loop = column_loop(lambda: adcompile.hessian(adcompile.compile(fn.pyfunc, backend="python"),
                                                     wrt=arrays[0])(*args), monkeypatch)
        np.testing.assert_allclose(hessian(*args), loop, rtol=1e-9, atol=1e-9, err_msg=entry.name)
    assert batched > 150


def test_the_vjp_of_a_batched_hessian_with_tapes_is_batched_too():
    """Reverse mode does not take the Hessian of a loop (its IR pops tapes): its vjp comes from
    the jvps of all input elements, computed in one batched pass."""
    fn, x = HESSIAN_CASES["scalar loop (tapes)"]
    hessian = adcompile.hessian(adcompile.compile(fn, backend="python"))
    weights = RNG.standard_normal(x.shape + x.shape)
    _, pullback = adcompile.vjp(hessian, x)
    weighted = jacobian_by_differences(lambda v: np.sum(hessian(v) * weights), (x,), eps=1e-6)
    np.testing.assert_allclose(pullback(weights)[0], weighted, rtol=1e-5, atol=1e-6)
    assert "unit" not in adcompile.source(pullback)


def test_the_product_with_the_identity_tangents_is_skipped():
    """``A @ dx`` with ``dx`` the identity is ``A``: the Hessian of the softplus objective keeps
    two matrix products, ``A @ x`` and the one of the backward sweep."""
    fn, x = HESSIAN_CASES["softplus objective (matmul)"]
    hessian = adcompile.hessian(adcompile.compile(fn, backend="python"))
    assert adcompile.source(hessian, x).count("rt.matmul(") == 2


def test_the_softplus_hessian_scales_its_tangent_once():
    """The tangent chain ``dt * c1 / c2 * c3 ...`` of the Hessian is one product of ``dt`` and a
    coefficient computed on the (m, 1) arrays (``transforms/batched_scaling.py``)."""
    f = adcompile.compile(softplus_objective, backend="python")
    x = RNG.standard_normal(4)
    text = adcompile.source(adcompile.hessian(f), x)
    assert text.count("rt.mul_nz(dt, ") == 1 and "_scale = " in text, text
    s = 1 / (1 + np.exp(-(A @ x)))
    np.testing.assert_allclose(adcompile.hessian(f)(x), A.T @ ((s * (1 - s))[:, None] * A) + np.eye(4), rtol=1e-12)


def test_a_zero_tangent_member_stays_zero_where_a_coefficient_is_infinite():
    """sqrt at 0 has an infinite derivative. f is a sum over elements, so its Hessian is
    diagonal: the columns whose tangent is zero on that element get exactly zero from it
    (``mul_nz``; the column-by-column hvp meets ``0 * inf`` there), the others agree with
    the hvp."""
    def root_objective(x):
        return np.sum(np.sqrt(x * x + x))
    f = adcompile.compile(root_objective, backend="python")
    x = np.array([0.0, 1.0, 2.0])
    with np.errstate(invalid="ignore", divide="ignore"):
        hessian = adcompile.hessian(f)(x)
        columns = np.array([adcompile.hvp(f, (x,), (e,)) for e in np.eye(3)])
    np.testing.assert_array_equal(hessian[~np.eye(3, dtype=bool)], 0.0)
    assert not np.isfinite(hessian[0, 0])
    np.testing.assert_allclose(np.diag(hessian)[1:], np.diag(columns)[1:], rtol=1e-12)
