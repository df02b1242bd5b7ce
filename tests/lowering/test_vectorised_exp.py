"""Which exponentials call ``rt.exp`` (``adcompile/lowering/vectorised_exp.py``).

Arrays and scalars in loops that vectorise use adcompile's exponential, which LLVM inlines and
vectorises; scalars in loops that stay scalar (a reduction, a call of ``np.log``, a branch) keep
numba's ``np.exp``, a C library call that is faster there. Either way the values are the
exponential: results are compared with numpy's, and gradients with central differences.
"""
import numpy as np
import pytest

import adcompile
from adcompile.ir.nodes import Assign, For, Function, SetItem, Var, const, walk
from adcompile.ir.types import Type
from adcompile.lowering.vectorised_exp import use_vectorised_exponentials
from oracles import gradient_by_differences


def mapped(x, y):
    return np.exp(-x) * y


def summed_map(x, y):
    return np.sum(mapped(x, y))


def sigmoid_of_product(w, X):
    return np.sum(1.0 / (1.0 + np.exp(-(X @ w))))


def summed_exp(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += np.exp(x[i])
    return total


def with_log(x):
    return np.sum(np.log(1.0 + np.exp(x)) * x)


def branchy(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            out[i] = np.exp(-x[i])
        else:
            out[i] = np.exp(x[i])
    return np.sum(out * x)


def numba_source(compiled, *args):
    compiled(*args)
    return open(adcompile.source_path(compiled)).read()


def lines_with(source, text):
    return [line.strip() for line in source.splitlines() if text in line and not line.strip().startswith("#")]


def test_a_map_loop_calls_rt_exp():
    x, y = np.linspace(-2.0, 2.0, 50), np.linspace(0.0, 1.0, 50)
    source = numba_source(adcompile.compile(mapped), x, y)
    assert lines_with(source, "rt.exp(") and not lines_with(source, "np.exp("), source


def test_a_reduction_loop_keeps_numbas_exp():
    source = numba_source(adcompile.compile(summed_exp), np.linspace(-2.0, 2.0, 50))
    assert lines_with(source, "np.exp(") and not lines_with(source, "rt.exp("), source


def test_a_loop_calling_log_keeps_numbas_exp():
    source = numba_source(adcompile.compile(with_log), np.linspace(-2.0, 2.0, 50))
    assert lines_with(source, "np.exp(") and not lines_with(source, "rt.exp("), source


def test_a_loop_with_a_branch_keeps_numbas_exp():
    source = numba_source(adcompile.compile(branchy), np.linspace(-2.0, 2.0, 50))
    assert lines_with(source, "np.exp(") and not lines_with(source, "rt.exp("), source


def test_the_gradient_of_a_sigmoid_uses_rt_exp_where_its_loop_is_a_map():
    w, X = np.linspace(-1.0, 1.0, 4), np.random.default_rng(0).standard_normal((30, 4))
    source = numba_source(adcompile.grad(adcompile.compile(sigmoid_of_product)), w, X)
    assert lines_with(source, "rt.exp("), source


def test_unfused_arrays_call_rt_exp():
    compiled = adcompile.compile(mapped, fuse=False)
    x, y = np.linspace(-2.0, 2.0, 50), np.linspace(0.0, 1.0, 50)
    compiled(x, y)
    assert lines_with(open(adcompile.source_path(compiled)).read(), "rt.exp(")


@pytest.mark.parametrize("fn, loss", [(mapped, summed_map), (summed_exp, summed_exp), (with_log, with_log),
                                      (branchy, branchy)])
def test_values_and_gradients_are_the_exponentials(fn, loss):
    x = np.linspace(-3.0, 2.5, 41)
    args = (x, np.cos(x)) if fn is mapped else (x,)
    np.testing.assert_allclose(adcompile.compile(fn)(*args), fn(*args), rtol=1e-13)
    gradient = adcompile.grad(adcompile.compile(loss))(*args)
    np.testing.assert_allclose(gradient, gradient_by_differences(loss, args), rtol=1e-6, atol=1e-9)


# ------------------------------------------------------------------ the decision on IR loops
def loop_nest(inner_reads, carried=False, call=None):
    """``for i: for j: out[i, j] = exp(X[<inner_reads>])`` (plus a scalar carried across
    iterations, or a call of another primitive), as the lowering writes a fused loop nest."""
    scalar, index = Type("f8", 0), Type("i8", 0)
    X, out = Var("X", Type("f8", 2)), Var("out", Type("f8", 2))
    i, j, n, total = Var("i", index), Var("j", index), Var("n", index), Var("total", scalar)
    x, e = Var("_x", scalar, is_temp=True), Var("_e", scalar, is_temp=True)
    positions = {"i": i, "j": j}
    body = [Assign(x, "getitem", [X] + [positions[name] for name in inner_reads],
                   {"items": (("int", 1), ("int", 2)), "result_ndim": 0}),
            Assign(e, "exp", [x])]
    if call:
        body.append(Assign(Var("_c", scalar, is_temp=True), call, [e]))
    if carried:
        body.append(Assign(total, "add", [total, e]))
    body.append(SetItem(out, e, [("int", i), ("int", j)]))
    inner = For(j, const(0), n, const(1), body)
    return Function("f", [X, out, n], [Assign(total, "alias", [const(0.0)]), For(i, const(0), n, const(1), [inner])],
                    [total], False)


def marked(fn):
    return [stmt.params.get("vectorised", False) for stmt in walk(use_vectorised_exponentials(fn).body)
            if isinstance(stmt, Assign) and stmt.prim == "exp"]


@pytest.mark.parametrize("reads, carried, call, vectorised", [
    ("ij", False, None, True),        # consecutive elements, a map
    ("ji", False, None, False),       # the loop's index first: a strided read
    ("ij", True, None, False),        # a scalar carried from one iteration to the next
    ("ij", False, "log", False),      # another C library call
    ("ij", False, "sqrt", True),      # sqrt is an instruction
])
def test_the_decision_follows_the_loop_body(reads, carried, call, vectorised):
    assert marked(loop_nest(reads, carried, call)) == [vectorised]
