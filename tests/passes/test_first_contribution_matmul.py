"""A matrix product of the top-level block proves its contracted lengths equal for what runs
after it (``ir/dim_equalities.py``), so a weight's gradient ``g.T @ x`` is assigned, not added
into a zero-filled array; a product inside a branch proves nothing. Mismatched inputs still
raise a located shape error, also where the product a rewrite relied on is dead (a check stays).
An assigned adjoint that is only read names its contribution instead of copying it."""
import numpy as np
import pytest

import adcompile
from adcompile.codegen.python import generate
from adcompile.errors import ShapeError
from adcompile.ir.dim_equalities import CHECK_MARK
from adcompile.ir.nodes import Assign, Function, Var
from adcompile.ir.types import Type
from adcompile.passes.dce import eliminate_dead_code

RNG = np.random.default_rng(11)


def python(f):
    return adcompile.compile(f, backend="python")


def backward(f, *args):
    return adcompile.source(adcompile.grad(python(f)), *args).split("# backward", 1)[1]


def dense(w, x):
    h = x @ w.T
    return np.sum(h * h)


def two_layers(w1, w2, b1, x):
    h = np.maximum(x @ w1.T + b1, 0.0)
    return np.sum(np.tanh(h @ w2.T))


def linear_layer(w, b, x):
    out = (w @ x.T).T
    out = out + b
    return np.sum(np.tanh(out))


def dense_in_branch(w, x, flag):
    if flag > 0:
        h = x @ w.T
        return np.sum(h * h)
    return np.sum(w * w) + np.sum(x)


def test_a_weight_gradient_is_assigned_after_the_forward_product():
    w, x = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 4))
    assert "bw = " in backward(dense, w, x) and "zeros_like" not in backward(dense, w, x)
    assert adcompile.gradcheck(python(dense), (w, x))


def test_a_broadcast_length_joins_the_class_a_product_proves_equal():
    w1, w2, b1, x = (RNG.standard_normal(s) for s in ((6, 4), (3, 6), (6,), (5, 4)))
    text = backward(two_layers, w1, w2, b1, x)
    assert "zeros_like" not in text
    for wrt in range(4):
        assert adcompile.gradcheck(python(two_layers), (w1, w2, b1, x), wrt=wrt)


def test_an_adjoint_only_read_names_its_contribution_without_a_copy():
    w, b, x = (RNG.standard_normal(s) for s in ((6, 4), (6,), (5, 4)))
    text = adcompile.source(adcompile.grad(python(linear_layer), wrt=(0, 1)), w, b, x)
    assert "    bout = rt.unbroadcast(bout_1, out)\n" in text  # read by the product only: no copy
    assert "bb = rt.unbroadcast(bout_1, b).copy()" in text  # a result: its own array
    for wrt in (0, 1, 2):
        assert adcompile.gradcheck(python(linear_layer), (w, b, x), wrt=wrt)


def test_a_product_in_a_branch_proves_nothing_after_it():
    w, x = RNG.standard_normal((3, 4)), RNG.standard_normal((5, 4))
    assert "bw = np.zeros_like(w)" in backward(dense_in_branch, w, x, 1.0)
    for flag in (1.0, -1.0):
        assert adcompile.gradcheck(python(dense_in_branch), (w, x, flag), wrt=0)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_mismatched_inputs_raise_a_located_shape_error(backend):
    gradient = adcompile.grad(adcompile.compile(dense, backend=backend))
    with pytest.raises(ShapeError, match="h = x @ w.T"):
        gradient(np.ones((3, 4)), np.ones((5, 6)))


def test_a_dead_product_a_rewrite_relied_on_leaves_its_check():
    x, w = Var("x", Type("f8", 2)), Var("w", Type("f8", 2))
    h, total = Var("h", Type("f8", 2)), Var("total", Type("f8"))
    body = [Assign(h, "matmul", [x, w], {CHECK_MARK: True}), Assign(total, "sum", [x])]
    fn = Function("f", [x, w], body, [total], False)
    eliminate_dead_code(fn)
    assert [stmt.prim for stmt in fn.body] == ["check_matmul_shapes", "sum"]
    eliminate_dead_code(fn)  # and it stays
    assert [stmt.prim for stmt in fn.body] == ["check_matmul_shapes", "sum"]
    source = generate(fn)
    assert "\n    rt.check_matmul_shapes(x, w)\n" in source
    namespace = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    assert namespace["f"](np.ones((2, 3)), np.ones((3, 4))) == 6.0
    with pytest.raises(ValueError, match="shapes not aligned"):
        namespace["f"](np.ones((2, 3)), np.ones((4, 4)))


def test_the_check_runs_in_numba():
    numba = pytest.importorskip("numba")
    import adcompile.runtime.numba_impls  # noqa: F401  (registers the helpers' numba versions)
    from adcompile.runtime import helpers as rt

    check = numba.njit(lambda a, b: rt.check_matmul_shapes(a, b))
    assert check(np.ones((2, 3)), np.ones(3))
    with pytest.raises(ValueError, match="shapes not aligned"):
        check(np.ones((2, 3)), np.ones((4, 2)))
