"""Symbolic shapes (ir/shapes.py) and the rewrites they allow (passes/static_shapes.py).

The inference is checked against the shapes numpy gives when the function runs; the rewrites
by the generated source (no run-time broadcasting left where shapes are provably equal, no
value computed only for its shape) and by gradients against central differences, including
the cases where a length is 1 or 0 at run time.
"""
import copy
import sys

import numpy as np
import pytest

import adcompile
from adcompile.codegen.python import generate
from adcompile.ir.nodes import Assign, walk
from adcompile.ir.shapes import infer_shapes


def _gradient_ir(f, *args):
    gradient = adcompile.grad(adcompile.compile(f, backend="python"))
    return gradient.specialization(gradient.signature(args))[0]


def _forward_ir(f, *args):
    compiled = adcompile.compile(f, backend="python")
    return compiled.primal_ir(compiled.signature(args))


def _evaluate_dims(shapes, dims, env):
    return tuple(max(eval(shapes.source(d), {"max": max, "min": min}, env), 0) for d in dims)


def _check_every_value(fn, args, trace):
    """Every assigned array whose inferred dims are all expressible evaluates to the shape the
    traced run gave it."""
    shapes = infer_shapes(fn)
    env = {p.name: a for p, a in zip(fn.params, args)}
    checked = 0
    for stmt in walk(fn.body):
        if isinstance(stmt, Assign) and stmt.target.type.ndim and stmt.target.name in trace:
            dims = shapes.of(stmt.target)
            if all(shapes.source(d) is not None for d in dims):
                assert _evaluate_dims(shapes, dims, env) == trace[stmt.target.name], stmt
                checked += 1
    return checked


def _traced_shapes(fn, args):
    """The shape of every array the generated Python code assigns, from running it (on a copy
    whose temporaries are not inlined, so that each has its own name)."""
    fn = copy.deepcopy(fn)
    for stmt in walk(fn.body):
        for var in stmt.writes():
            var.is_temp = False
    source = generate(fn)
    namespace = {}
    exec(compile(source, "<generated>", "exec"), namespace)
    seen = {}

    def tracer(frame, event, arg):
        if frame.f_code.co_name == fn.name:
            for name, value in frame.f_locals.items():
                if isinstance(value, np.ndarray):
                    seen[name] = value.shape
        return tracer
    sys.settrace(tracer)
    try:
        namespace[fn.name](*args)
    finally:
        sys.settrace(None)
    return seen


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def layers(W, x, b):
    h = np.tanh(W @ x + b)
    return np.sum(h[1:-1] * h[:-2]) + np.mean(W.T @ h)


def grid(A):
    inner = A[1:, :] - A[:-1, :]
    col = np.sum(A, axis=0)
    return np.sum(inner * inner) + np.sum(col[2:] * col[:-2]) + np.sum(A.T[0])


def row_slices(P, q):
    """Slices with constant stops of a row whose length is the parameter's: ``min(3, n)``."""
    total = 0.0
    for k in range(P.shape[0]):
        r = P[k]
        a, b, c = r[0:3], r[3:6], r[:2]
        total += np.sum(a * b + q) + np.sum(c * r[1:3])
    return total


CASES = [
    (rosenbrock, (np.linspace(-1, 1, 7),)),
    (row_slices, (np.random.default_rng(2).standard_normal((4, 7)), np.ones(3))),
    (row_slices, (np.random.default_rng(2).standard_normal((4, 8)), np.ones(1))),
    (layers, (np.random.default_rng(0).standard_normal((5, 4)), np.ones(4), np.ones(5))),
    (grid, (np.random.default_rng(1).standard_normal((6, 5)),)),
]


@pytest.mark.parametrize("f, args", CASES, ids=[f"{f.__name__}-{k}" for k, (f, _) in enumerate(CASES)])
def test_inferred_shapes_are_the_run_time_shapes(f, args):
    for fn in (_forward_ir(f, *args), _gradient_ir(f, *args)):
        assert _check_every_value(fn, args, _traced_shapes(fn, args)) >= 3


def test_slices_of_one_axis_have_one_length():
    fn = _forward_ir(rosenbrock, np.ones(5))
    shapes = infer_shapes(fn)
    slices = [s.target for s in walk(fn.body) if isinstance(s, Assign) and s.prim == "getitem"]
    assert len(slices) == 3 and shapes.same(slices[0], slices[1]) and shapes.same(slices[1], slices[2])
    assert shapes.source(shapes.of(slices[0])[0]) == "x.shape[0] - 1"
    assert shapes.source(shapes.of(slices[0])[0], clamp=True) == "max(x.shape[0] - 1, 0)"


def test_a_slice_with_a_constant_stop_has_the_length_min_of_stop_and_the_axis():
    fn = _forward_ir(row_slices, np.ones((4, 7)), np.ones(3))
    shapes = infer_shapes(fn)
    slices = [s for s in walk(fn.body) if isinstance(s, Assign) and s.prim == "getitem" and s.params["text"] != "_1"]
    sources = [shapes.source(shapes.of(s.target)[0]) for s in slices]
    assert sources[:3] == ["min(3, P.shape[1])", "min(6, P.shape[1]) - 3", "min(2, P.shape[1])"], sources
    assert not any(shapes.varies(shapes.of(s.target)[0]) for s in slices)


def test_the_same_slice_of_rows_of_one_length_has_one_length():
    def neighbours(P):
        s = 0.0
        for k in range(P.shape[0] - 1):
            s += np.sum(P[k][0:3] * P[k + 1][0:3])
        return s
    fn = _forward_ir(neighbours, np.ones((4, 5)))
    shapes = infer_shapes(fn)
    first, second = [s.target for s in walk(fn.body) if isinstance(s, Assign) and s.prim == "getitem"
                     and s.params["text"] == "_1:_2"]
    assert shapes.same(first, second)


def test_a_slice_of_a_view_rebound_in_a_loop_varies():
    def shrinking(x):
        t = x
        s = 0.0
        for k in range(3):
            t = t[1:]
            u = t[:2]
            s += np.sum(u * u)
        return s
    fn = _forward_ir(shrinking, np.ones(6))
    shapes = infer_shapes(fn)
    u = next(s.target for s in walk(fn.body) if isinstance(s, Assign) and s.target.name == "u")
    assert shapes.varies(shapes.of(u)[0])


def test_values_assigned_with_different_shapes_are_not_equal_to_either():
    def growing(x):
        y = x
        for _ in range(3):
            y = np.concatenate((y, x))
        return np.sum(y)
    fn = _forward_ir(growing, np.ones(3))
    shapes = infer_shapes(fn)
    y = next(s.target for s in walk(fn.body) if isinstance(s, Assign) and s.prim == "concatenate")
    x = fn.params[0]
    assert not shapes.same(y, x)
    assert shapes.source(shapes.of(y)[0]) is None


def test_arguments_that_may_broadcast_are_not_assumed_equal():
    def f(x, y):
        return np.sum(x * y)
    fn = _forward_ir(f, np.ones(3), np.ones(3))
    shapes = infer_shapes(fn)
    assert not shapes.same(*fn.params)  # y may have length 1
    product = next(s.target for s in walk(fn.body) if isinstance(s, Assign) and s.prim == "mul")
    assert shapes.source(shapes.of(product)[0]) == "max(x.shape[0], y.shape[0])"


def _source(f, *args):
    return adcompile.source(adcompile.grad(adcompile.compile(f, backend="python")), *args)


def test_rosenbrock_gradient_has_no_run_time_broadcasting():
    source = _source(rosenbrock, np.ones(6))
    assert "unbroadcast" not in source and "broadcast_to_shape" not in source
    assert "100.0 * (" not in source.split("# backward")[0]  # the squared terms are not computed


def test_values_read_only_for_their_shape_are_not_computed():
    def loss(w, X):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        return np.sum(np.log(p) * np.log(1 - p))
    source = _source(loss, np.zeros(3), np.ones((4, 3)))
    # each log once, where the backward needs it; their product (the summed value) nowhere
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))
    assert code.count("np.log") == 2 and "unbroadcast" not in code and ") * np.log" not in code


def _broadcasting(x, y):
    return np.sum(np.sin(x * y) + x[1:].sum() * y)


def _rows(A, b):
    return np.sum(np.exp(A - b) * b)


def _scalar_and_slices(x, s):
    d = x[2:] - x[:-2]
    return np.sum(d * d * s) + s * np.sum(x[1:])


def _float32_chain(x):
    return np.sum((x[1:] * x[:-1]) ** 2) * np.float32(0.5)


def _loop_of_slices(x, n):
    total = 0.0
    for _ in range(n):
        total = total + np.sum(x[1:] * x[:-1])
        x = x * 0.9
    return total


GRADIENT_CASES = [
    ("equal lengths", _broadcasting, (np.linspace(0.1, 1, 5), np.linspace(1, 2, 5))),
    ("length 1 at run time", _broadcasting, (np.linspace(0.1, 1, 5), np.array([0.7]))),
    ("rows", _rows, (np.random.default_rng(2).standard_normal((3, 4)), np.linspace(0, 1, 4))),
    ("a column", _rows, (np.random.default_rng(3).standard_normal((3, 4)), np.linspace(0, 1, 3)[:, None])),
    ("one element", _rows, (np.random.default_rng(4).standard_normal((3, 4)), np.array([[0.5]]))),
    ("slices and a scalar", _scalar_and_slices, (np.linspace(-1, 1, 6), 1.5)),
    ("length 2: empty middle", _scalar_and_slices, (np.array([0.3, 0.4]), 1.5)),
    ("float32", _float32_chain, (np.linspace(-1, 1, 6, dtype=np.float32),)),
    ("loop", _loop_of_slices, (np.linspace(-1, 1, 6), 3)),
    ("zero-trip loop", _loop_of_slices, (np.linspace(-1, 1, 6), 0)),
    ("rosenbrock, n = 1", rosenbrock, (np.array([0.5]),)),
    ("rosenbrock, n = 0", rosenbrock, (np.zeros(0),)),
]


@pytest.mark.parametrize("f, args", [(f, a) for _, f, a in GRADIENT_CASES], ids=[c[0] for c in GRADIENT_CASES])
@pytest.mark.parametrize("backend", ["python", "numba"])
def test_gradients_match_finite_differences(f, args, backend):
    if backend == "numba" and f is not _broadcasting:
        pytest.skip("numba: one sample (compiles take seconds)")
    compiled = adcompile.compile(f, backend=backend)
    order = 2 if backend == "python" and args[0].size else 1  # second order: the Hessian's source too
    assert adcompile.gradcheck(compiled, args, order=order)
