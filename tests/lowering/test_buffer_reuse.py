"""Buffer reuse after fusion (``adcompile/lowering/buffer_reuse.py``): which allocations take a
dead temporary's memory, which must not, and that gradients stay right.

Derived functions are lowered as for numba (``lower_for_backend``) and run as plain Python (fast
to load); their values are compared with central differences. The adversarial cases are small
IR functions written by hand: a donor read after the allocation through a view, in a later
iteration, in the same branch; returned; of another dtype or shape.
"""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences
from adcompile.backend.loader import load
from adcompile.codegen.python import generate
from adcompile.ir.nodes import Assign, Comment, For, Function, If, Push, SetItem, Var, const
from adcompile.ir.shapes import infer_shapes
from adcompile.ir.types import B1, F8, I8, Type
from adcompile.lowering.buffer_reuse import reuse_buffers
from adcompile.lowering.pipeline import lower_for_backend

REUSED = "reuses the memory of"


def lowered_python(derived, *args):
    """(source lowered as for numba, that source run as plain Python)."""
    fn, _ = lower_for_backend(derived.ir(derived.signature(args)), "numba")
    source = generate(fn, origin="test_buffer_reuse")
    return source, load(source, fn.name, "python")


def mixture_like(means, x):
    """As the GMM benchmark: a large broadcast temporary dies before the loop writing ``bqx``."""
    q = np.exp(means)
    qx = q[None, :, :] * (x[:, None, :] - means[None, :, :])
    return np.sum(np.log(np.sum(np.exp(-0.5 * np.sum(qx ** 2, axis=2)), axis=1)))


def test_gradient_takes_a_dead_temporary_and_stays_right():
    rng = np.random.default_rng(0)
    means, x = rng.standard_normal((3, 2)), rng.standard_normal((6, 2))
    source, gradient = lowered_python(adcompile.grad(mixture_like), means, x)
    assert REUSED in source
    expected = gradient_by_differences(lambda m: mixture_like(m, x), (means,))
    np.testing.assert_allclose(gradient(means, x)[0], expected, rtol=1e-6, atol=1e-8)


def tanh_layer(A, x):
    return np.sum(np.tanh(A @ x) ** 2)


def outer_sine(x):
    return np.sum(np.sin(np.outer(x, x)) ** 2)


@pytest.mark.parametrize("f, shapes", [(tanh_layer, [(5, 3), (3,)]), (outer_sine, [(4,)])])
def test_loop_reading_the_donor_point_by_point_writes_into_it(f, shapes):
    """The fused loop reads ``A @ x`` (``np.outer(x, x)``) at each point before writing its
    own result there: the result takes that memory."""
    rng = np.random.default_rng(3)
    args = [rng.standard_normal(shape) for shape in shapes]
    source, gradient = lowered_python(adcompile.grad(f, wrt=(0,)), *args)
    assert "which the loop below reads at each point before writing it there" in source
    expected = gradient_by_differences(lambda a: f(a, *args[1:]), (args[0],))
    np.testing.assert_allclose(np.asarray(gradient(*args)).reshape(expected.shape), expected, rtol=1e-6, atol=1e-8)


def logistic_loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def descend(w, X, y, epochs):
    for _ in range(epochs):
        w = w - 0.5 * adcompile.grad(logistic_loss)(w, X, y)
    return w


def test_gradient_inlined_in_a_compiled_loop(monkeypatch):
    """The logistic benchmark: ``X @ w``, made anew in each epoch inside the inlined gradient's
    region, gives its memory to the loop's result; the descent matches numpy's by hand."""
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 4))
    y = (X @ rng.standard_normal(4) > 0) * 1.0
    train = adcompile.compile(descend, backend="python")
    assert REUSED in adcompile.source(train, np.zeros(4), X, y, 3, stage="lowered")
    w = np.zeros(4)
    for _ in range(3):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        w = w - 0.5 * X.T @ (p - y) / len(y)
    np.testing.assert_allclose(train(np.zeros(4), X, y, 3), w, rtol=1e-10)


def test_reuse_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("ADCOMPILE_REUSE", "0")
    rng = np.random.default_rng(0)
    source, _ = lowered_python(adcompile.grad(mixture_like), rng.standard_normal((3, 2)), rng.standard_normal((6, 2)))
    assert REUSED not in source


def test_float32_gradient_with_reuse():
    rng = np.random.default_rng(1)
    means, x = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal((5, 2)).astype(np.float32)
    source, gradient = lowered_python(adcompile.grad(mixture_like), means, x)
    result = gradient(means, x)[0]
    assert result.dtype == np.float32
    expected = gradient_by_differences(lambda m: mixture_like(m, x.astype(np.float64)), (means.astype(np.float64),))
    np.testing.assert_allclose(result, expected, rtol=2e-3, atol=2e-3)


def test_numba_point_by_point_reuse():
    rng = np.random.default_rng(4)
    A, x = rng.standard_normal((6, 3)), rng.standard_normal(3)
    gradient = adcompile.grad(adcompile.compile(tanh_layer), wrt=(0,))
    assert REUSED in adcompile.source(gradient, A, x, stage="lowered")
    expected = gradient_by_differences(lambda a: tanh_layer(a, x), (A,))
    np.testing.assert_allclose(gradient(A, x)[0], expected, rtol=1e-6, atol=1e-8)


@pytest.mark.slow
def test_numba_gradient_with_reuse_matches_unfused():
    rng = np.random.default_rng(2)
    means, x = rng.standard_normal((4, 3)), rng.standard_normal((20, 3))
    fused = adcompile.grad(adcompile.compile(mixture_like))
    assert REUSED in adcompile.source(fused, means, x, stage="lowered")
    expected = adcompile.grad(adcompile.compile(mixture_like, backend="python"))(means, x)
    np.testing.assert_allclose(fused(means, x), expected, rtol=1e-10)


# ---------------------------------------------------------------------------- hand-written IR
V1 = Type("f8", 1)


class Program:
    """A small IR function of ``x`` (1-d float64): ``d = exp(x)`` (the donor), then statements,
    then ``r = empty(len(x))`` filled with ``fill(i)`` in a loop (the allocation)."""

    def __init__(self, dtype="f8"):
        self.x = Var("x", V1)
        self.n = Var("n", I8)
        self.d = Var("d", V1)
        self.r = Var("r", Type(dtype, 1))
        self.i = Var("i", I8)
        self.head = [Assign(self.n, "dim", [self.x], {"axis": 0}), Assign(self.d, "exp", [self.x])]

    def allocation(self, target=None):
        """``target = np.empty(n)`` (default ``r``); ``for i: target[i] = x[i]``."""
        target = target or self.r
        item = Var("xi", F8)
        body = [Assign(item, "getitem", [self.x, self.i], {"items": (("int", 1),), "result_ndim": 0, "text": "_1"}),
                SetItem(target, item, [("int", self.i)])]
        return [Assign(target, "empty", [self.n], {"ndim": 1, "dtype": target.type.dtype}),
                For(self.i, const(0), self.n, const(1), body)]

    def function(self, body, results):
        return Function("program", [self.x], self.head + body, results, True)


def reused(fn):
    return reuse_buffers(fn, infer_shapes(fn))


def run(fn, x):
    return load(generate(fn, origin="test_buffer_reuse"), fn.name, "python")(x)


def test_dead_donor_is_reused_and_values_stay():
    p = Program()
    total = Var("total", F8)
    fn = p.function([Assign(total, "sum", [p.d])] + p.allocation(), [p.r, total])
    assert reused(fn) == 1
    assert any(isinstance(s, Comment) and REUSED in s.text for s in fn.body)
    x = np.linspace(-1, 1, 5)
    r, total = run(fn, x)
    np.testing.assert_array_equal(r, x)
    assert total == pytest.approx(np.exp(x).sum())


def test_donor_read_after_the_allocation_is_kept():
    p = Program()
    total = Var("total", F8)
    fn = p.function(p.allocation() + [Assign(total, "sum", [p.d])], [p.r, total])
    assert reused(fn) == 0


def test_view_of_donor_read_after_the_allocation_is_kept():
    p = Program()
    view, total = Var("v", V1), Var("total", F8)
    items = {"items": (("slice", 1, None, None),), "result_ndim": 1, "text": "_1:"}
    fn = p.function([Assign(view, "getitem", [p.d, const(1)], items)] + p.allocation()
                    + [Assign(total, "sum", [view])], [p.r, total])
    assert reused(fn) == 0
    alias = Var("a", V1)
    fn = p.function([Assign(alias, "alias", [p.d])] + p.allocation() + [Assign(total, "sum", [alias])], [p.r, total])
    assert reused(fn) == 0


def test_returned_or_pushed_donor_is_kept():
    p = Program()
    assert reused(p.function(p.allocation(), [p.r, p.d])) == 0
    tape = Var("tape", Type("none"))
    p = Program()
    fn = p.function([Assign(tape, "new_tape", [const(0.0)]), Push(tape, p.d)] + p.allocation(), [p.r])
    assert reused(fn) == 0


def test_parameter_and_view_are_never_donors():
    p = Program()
    view = Var("v", V1)
    p.head[1] = Assign(p.d, "alias", [p.x])  # d is the caller's array
    assert reused(p.function(p.allocation(), [p.r])) == 0
    p = Program()
    p.head.append(Assign(view, "getitem", [p.d, const(0)],
                         {"items": (("slice", 1, None, None),), "result_ndim": 1, "text": "_1:"}))
    fn = p.function(p.allocation(), [p.r])
    assert reused(fn) == 1  # d is dead; v (a view, not owned) never donates


def test_donor_written_in_place_or_rebound():
    """``d += x`` keeps ``d``'s memory (it may donate after it); ``d`` rebound in place to a
    view of the caller's ``x`` (any other ``inplace`` form) may be that memory."""
    p = Program()
    fn = p.function([Assign(p.d, "add", [p.d, p.x], inplace=True)] + p.allocation(), [p.r])
    assert reused(fn) == 1
    p = Program()
    fn = p.function([Assign(p.d, "alias", [p.x], inplace=True)] + p.allocation(), [p.r])
    assert reused(fn) == 0
    p = Program()
    fn = p.function([Assign(p.d, "unbroadcast", [p.x, p.x], inplace=True)] + p.allocation(), [p.r])
    assert reused(fn) == 0


def test_result_that_may_be_the_donor_read_after_is_kept():
    """``rt.unbroadcast(d, x)`` returns ``d`` itself when the shapes agree (no view in the IR)."""
    p = Program()
    same, total = Var("same", V1), Var("total", F8)
    fn = p.function([Assign(same, "unbroadcast", [p.d, p.x])] + p.allocation() + [Assign(total, "sum", [same])],
                    [p.r, total])
    assert reused(fn) == 0


def test_allocation_used_before_its_loop_is_kept():
    p = Program()
    first = Var("first", F8)
    body = p.allocation()
    body.insert(1, Assign(first, "getitem", [p.r, const(0)], {"items": (("int", 1),), "result_ndim": 0, "text": "_1"}))
    assert reused(p.function(body, [p.r, first])) == 0


def test_other_dtype_or_shape_is_kept():
    p = Program(dtype="f4")
    assert reused(p.function(p.allocation(), [p.r])) == 0
    p = Program()
    p.head[1] = Assign(p.d, "exp", [Var("y", V1)])  # another length than x
    assert reused(p.function(p.allocation(), [p.r])) == 0


def test_allocation_in_a_loop_below_the_donor_is_kept():
    """One buffer for every iteration: the first iteration's ``r`` would be the second's."""
    p = Program()
    k = Var("k", I8)
    fn = p.function([For(k, const(0), const(3), const(1), p.allocation())], [p.r])
    assert reused(fn) == 0


def test_donor_and_allocation_in_one_loop_body():
    p = Program()
    k, total = Var("k", I8), Var("total", F8)
    inner = p.head[1:] + [Assign(total, "sum", [p.d])] + p.allocation()
    fn = Function("program", [p.x], p.head[:1] + [For(k, const(0), const(3), const(1), inner)], [p.r, total], True)
    assert reused(fn) == 1
    x = np.linspace(0, 1, 4)
    r, total = run(fn, x)
    np.testing.assert_array_equal(r, x)
    assert total == pytest.approx(np.exp(x).sum())


def test_donor_read_in_the_next_iteration_is_kept():
    """``total`` reads ``d`` at the top of the body: the previous iteration's ``d``, whose
    memory ``r`` would have taken."""
    p = Program()
    k, total = Var("k", I8), Var("total", F8)
    inner = [Assign(total, "sum", [p.d])] + p.head[1:] + p.allocation()
    fn = Function("program", [p.x], p.head[:1] + p.head[1:] + [For(k, const(0), const(3), const(1), inner)],
                  [p.r, total], True)
    assert reused(fn) == 0


def test_branches():
    """A read in the other branch never runs with the allocation; one after it in the same
    branch, or after the ``if``, does. Once ``r`` (returned) holds ``d``'s memory, ``d`` is
    kept everywhere: the memory map does not tell branches apart."""
    p = Program()
    flag, total, other = Var("flag", B1), Var("total", F8), Var("s", V1)

    def program(body, orelse, after=()):
        return p.function([Assign(flag, "gt", [p.n, const(2)])] + [If(flag, body, orelse)] + list(after),
                          [p.r, total])

    zero = Assign(total, "copy", [const(0.0)])
    reads_d = Assign(total, "sum", [p.d])
    assert reused(program(p.allocation(other) + [zero, Assign(p.r, "copy", [other])],
                          [reads_d] + p.allocation())) == 2
    assert reused(program(p.allocation() + [reads_d], [zero] + p.allocation())) == 1
    assert reused(program(p.allocation(), p.allocation(), [reads_d])) == 0
    fn = program([reads_d] + p.allocation(other) + [Assign(p.r, "copy", [other])],
                 [Assign(total, "prod", [p.d])] + p.allocation())
    assert reused(fn) == 2
    for x, expected in ((np.linspace(1, 2, 4), np.sum), (np.linspace(1, 2, 2), np.prod)):
        r, total = run(fn, x)
        np.testing.assert_array_equal(r, x)
        assert total == pytest.approx(expected(np.exp(x)))


def point_loop(p, reads):
    """``r = np.empty(n)``; ``for i in range(n - 1)``: the statements ``reads(i)`` gives
    (reading ``d``) then ``r[i] = 1.0``; for ``d`` dead after the loop."""
    body = reads(p.i) + [SetItem(p.r, const(1.0), [("int", p.i)])]
    last = Var("last", I8)
    return [Assign(p.r, "empty", [p.n], {"ndim": 1, "dtype": "f8"}), Assign(last, "sub", [p.n, const(1)]),
            For(p.i, const(0), last, const(1), body)]


def read_d(p, index, name="di"):
    return Assign(Var(name, F8), "getitem", [p.d, index], {"items": (("int", 1),), "result_ndim": 0, "text": "_1"})


def test_point_by_point_reads_only():
    p = Program()
    assert reused(p.function(point_loop(p, lambda i: [read_d(p, i)]), [p.r])) == 1
    p = Program()
    following = Var("following", I8)
    shifted = point_loop(p, lambda i: [Assign(following, "add", [i, const(1)]), read_d(p, following)])
    assert reused(p.function(shifted, [p.r])) == 0  # d at another point than the one written: kept
    p = Program()
    loop = point_loop(p, lambda i: [])
    loop[-1].body.append(read_d(p, p.i))  # read after the write at the same point
    assert reused(p.function(loop, [p.r])) == 0
    p = Program()
    total = Var("total", F8)
    fn = p.function(point_loop(p, lambda i: [read_d(p, i)]) + [Assign(total, "sum", [p.d])], [p.r, total])
    assert reused(fn) == 0  # d is read again after the loop
    p = Program()
    loop = point_loop(p, lambda i: [read_d(p, i)])
    loop.insert(1, SetItem(p.r, const(2.0), [("int", const(0))]))  # r written before the loop read d
    assert reused(p.function(loop, [p.r])) == 0


def test_a_taken_buffer_passes_on_once_both_names_are_dead():
    p = Program()
    s = Var("s", V1)
    first = p.allocation()
    p2 = Program()
    p2.x, p2.n, p2.d, p2.r, p2.i = p.x, p.n, p.r, s, Var("i2", I8)  # r donates to s
    fn = p.function(first + [Assign(Var("t", F8), "sum", [p.r])] + p2.allocation(), [s])
    assert reused(fn) == 2
    np.testing.assert_array_equal(run(fn, np.arange(3.0))[0], np.arange(3.0))


def test_donor_read_in_every_iteration_of_an_enclosing_loop_is_kept():
    """``d`` is made before the loop and read, point by point, by the loop writing ``r`` in
    each iteration: from the second iteration on it would read ``r``'s values."""
    p = Program()
    k = Var("k", I8)
    fn = p.function([For(k, const(0), const(3), const(1), point_loop(p, lambda i: [read_d(p, i)]))], [p.r])
    assert reused(fn) == 0


def test_name_carried_to_the_next_iteration_is_live_where_it_is_read():
    """``prev = d`` after the read of ``prev``: that read, in the next iteration, is of the
    previous ``d``, whose memory ``r`` would have taken. Bound before the read, it is dead."""
    p = Program()
    k, total, prev = Var("k", I8), Var("total", F8), Var("prev", V1)

    def program(before, body):
        return Function("program", [p.x], p.head[:1] + before + [For(k, const(0), const(3), const(1), body)],
                        [p.r, total], True)

    read_prev, bind_prev = Assign(total, "sum", [prev]), Assign(prev, "alias", [p.d])
    later = Var("later", B1)
    guarded_read = [Assign(later, "gt", [k, const(0)]), If(later, [read_prev], [Assign(total, "copy", [const(0.0)])])]
    fn = program([], p.head[1:] + guarded_read + [bind_prev] + p.allocation())
    assert reused(fn) == 0
    fn = program([], p.head[1:] + [bind_prev, read_prev] + p.allocation())
    assert reused(fn) == 1
    x = np.linspace(0, 1, 4)
    r, total = run(fn, x)
    np.testing.assert_array_equal(r, x)
    assert total == pytest.approx(np.exp(x).sum())


def test_independent_reuses_are_found_in_one_round(monkeypatch):
    """A long program with many dead temporaries is lowered in time linear in its reuses' chain
    depth, not in their number: the independent pairs are taken in one round of ``_Uses``
    (building it once per reuse made a 300-reuse program's lowering take minutes). The values
    stay right."""
    from adcompile.lowering import buffer_reuse
    builds = []
    real = buffer_reuse._Uses

    def counted(fn):
        builds.append(fn)
        return real(fn)

    monkeypatch.setattr(buffer_reuse, "_Uses", counted)
    p = Program()
    body, results = [], []
    for k in range(12):
        d, r, total = Var(f"d{k}", V1), Var(f"r{k}", V1), Var(f"total{k}", F8)
        p.d, p.r, p.i = d, r, Var(f"i{k}", I8)
        body += [Assign(d, "exp", [p.x]), Assign(total, "sum", [d])] + p.allocation()
        results += [r, total]
    fn = Function("program", [p.x], p.head[:1] + body, results, True)
    assert reused(fn) == 12
    assert len(builds) == 2  # the round taking all twelve, and the one finding none left
    x = np.linspace(-1, 1, 5)
    values = run(fn, x)
    for k in range(12):
        np.testing.assert_array_equal(values[2 * k], x)
        assert values[2 * k + 1] == pytest.approx(np.exp(x).sum())
