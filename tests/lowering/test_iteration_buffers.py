"""Zeros made in every iteration of a loop reuse the previous iteration's array
(``adcompile/lowering/iteration_buffers.py``): which ones may, which must not, and that values
and gradients stay right.

Programs written the natural way run on numba (lowering on) and are compared with central
differences and with the Python backend; the adversarial cases are small IR functions written by
hand: the array pushed on a tape, read after the loop, viewed by a name read in the next
iteration, given its value twice.
"""
import re

import numpy as np
import pytest

import adcompile
from adcompile.backend.loader import load
from adcompile.codegen.python import generate
from adcompile.ir.nodes import Assign, For, Function, If, Push, SetItem, Var, const, walk
from adcompile.ir.types import F8, I8, NONE_T, Type
from adcompile.lowering.iteration_buffers import reuse_across_iterations
from adcompile.lowering.loops import ParallelFor

FILL = "[:] = 0.0"


def projected_sizes(cameras, points):
    """A per-observation loop reading elements of small arrays (as bundle adjustment does): each
    backward iteration zeroes the adjoints of ``camera`` and ``relative``."""
    total = 0.0
    for i in range(points.shape[0]):
        camera = cameras[i % cameras.shape[0]]
        relative = points[i] - camera[0:3]
        u, v = relative[0] / relative[2], relative[1] / relative[2]
        total += (u * camera[3]) ** 2 + (v * camera[3]) ** 2
    return total


def carried_copy(x):
    """``keep = z``: the array of one iteration is read in the next."""
    keep = np.zeros(3)
    total = 0.0
    for i in range(x.shape[0]):
        z = np.zeros_like(keep)
        z[i % 3] = x[i]
        total += np.sum(keep * z) + np.sum(np.sin(z))
        keep = z
    return total + np.sum(keep * keep)


def viewed_after_the_loop(x):
    total = 0.0
    v = x[0:2]
    for i in range(x.shape[0]):
        z = np.zeros_like(x)
        z[i] = x[i] * x[i]
        v = z[1:]
        total += np.sum(np.sin(v))
    return total + np.sum(v * v)


def changing_lengths(x):
    """``z``'s length grows with ``i``: the array is made again when it changes."""
    total = 0.0
    for i in range(x.shape[0]):
        z = np.zeros_like(x[:i + 1])
        z[i] = x[i]
        z += x[:i + 1] * 0.5
        total += np.sum(np.tanh(z) * z)
    return total


PROGRAMS = [(carried_copy, (np.linspace(-1.0, 1.3, 7),)), (viewed_after_the_loop, (np.linspace(0.2, 1.1, 5),)),
            (changing_lengths, (np.linspace(-0.7, 0.9, 6),)), (changing_lengths, (np.zeros(0),))]


def test_the_adjoints_of_a_per_observation_loop_are_zeroed_in_place_and_stay_right():
    rng = np.random.default_rng(0)
    args = (rng.standard_normal((3, 4)), rng.standard_normal((8, 3)) + np.array([0.0, 0.0, 6.0]))
    compiled = adcompile.compile(projected_sizes)
    gradient = adcompile.grad(compiled, wrt=(0, 1))
    lowered = adcompile.source(gradient, *args, stage="lowered")
    backward = lowered[lowered.index("# backward"):]
    assert backward.count(FILL) == 2 and "np.zeros_like(" not in backward.split("for i in")[1]
    assert adcompile.gradcheck(compiled, args, wrt=(0, 1))
    expected = adcompile.grad(adcompile.compile(projected_sizes, backend="python"), wrt=(0, 1))(*args)
    for got, want in zip(gradient(*args), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("f, args", PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_loops_making_zeros_keep_their_values_on_numba(f, args):
    compiled = adcompile.compile(f)
    assert compiled(*args) == pytest.approx(f(*args), rel=1e-12, abs=1e-12)
    if args[0].size:
        assert adcompile.gradcheck(compiled, args)
    np.testing.assert_allclose(adcompile.grad(compiled)(*args),
                               adcompile.grad(adcompile.compile(f, backend="python"))(*args), rtol=1e-12, atol=1e-12)


def test_float32_adjoints_reuse_their_arrays():
    args = (np.linspace(-1.0, 1.0, 6).astype(np.float32),)
    compiled = adcompile.compile(changing_lengths)
    g = adcompile.grad(compiled)(*args)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, adcompile.grad(adcompile.compile(changing_lengths, backend="python"))(*args),
                               rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------- hand-written IR
V1 = Type("f8", 1)


class Loop:
    """``total = 0; for k in range(n): z = zeros_like(x); z[k] = x[k]; <body>; total += sum(z)``,
    with statements before the loop, after it, and in the body after ``z[k] = x[k]``."""

    def __init__(self):
        self.x, self.n, self.k = Var("x", V1), Var("n", I8), Var("k", I8)
        self.z, self.total, self.s = Var("z", V1), Var("total", F8), Var("s", F8)

    def function(self, body=(), before=(), after=(), results=None):
        xk = Var("xk", F8)
        loop_body = [Assign(self.z, "zeros_like", [self.x]),
                     Assign(xk, "getitem", [self.x, self.k], {"items": (("int", 1),), "result_ndim": 0, "text": "_1"}),
                     SetItem(self.z, xk, [("int", self.k)]), *body,
                     Assign(self.s, "sum", [self.z]),
                     Assign(self.total, "add", [self.total, self.s])]
        head = [Assign(self.n, "dim", [self.x], {"axis": 0}), Assign(self.total, "alias", [const(0.0)])]
        return Function("program", [self.x], head + list(before) + [For(self.k, const(0), self.n, const(1), loop_body)]
                        + list(after), results or [self.total], False)


def run(fn, x):
    return load(generate(fn, origin="test_iteration_buffers"), fn.name, "python")(x)


def test_zeros_read_only_in_their_iteration_are_reused_and_values_stay():
    p = Loop()
    fn = p.function()
    assert reuse_across_iterations(fn) == 1
    loop = next(s for s in fn.body if isinstance(s, For))
    assert not any(isinstance(s, Assign) and s.prim == "zeros_like" for s in walk(loop.body))
    assert any(isinstance(s, If) for s in loop.body)
    x = np.linspace(0.5, 2.0, 4)
    assert run(fn, x) == pytest.approx(x.sum())
    assert run(p.function(), np.zeros(0)) == 0.0


def test_in_place_updates_and_views_in_the_same_iteration_are_reads():
    p = Loop()
    view, doubled = Var("v", V1), Var("w", V1)
    items = {"items": (("slice", None, None, None),), "result_ndim": 1, "text": ":"}
    body = [Assign(doubled, "add", [p.x, p.x]), Assign(p.z, "add", [p.z, doubled], inplace=True),
            Assign(view, "getitem", [p.z], items), SetItem(view, const(1.0), [("int", p.k)])]
    fn = p.function(body)
    assert reuse_across_iterations(fn) == 1
    x = np.linspace(0.5, 2.0, 4)
    expected = 0.0
    for k in range(x.size):
        z = np.zeros_like(x)
        z[k] = x[k]
        z += x + x
        z[:][k] = 1.0
        expected += z.sum()
    assert run(fn, x) == pytest.approx(expected)


def test_zeros_pushed_on_a_tape_are_kept():
    p = Loop()
    tape = Var("tape", NONE_T)
    fn = p.function([Push(tape, p.z)], before=[Assign(tape, "new_tape", [p.x])])
    assert reuse_across_iterations(fn) == 0


def test_zeros_returned_are_kept():
    p = Loop()
    assert reuse_across_iterations(p.function(results=[p.total, p.z])) == 0


def test_zeros_read_after_a_loop_in_no_other_loop_are_the_last_iterations():
    p = Loop()
    last = Var("last", F8)
    fn = p.function(after=[Assign(last, "sum", [p.z])], results=[p.total, last])
    fn.returns_tuple = True
    assert reuse_across_iterations(fn) == 1
    x = np.linspace(0.5, 2.0, 4)
    assert run(fn, x) == pytest.approx((x.sum(), x[-1]))


def test_zeros_read_after_an_inner_loop_that_ran_no_iteration_are_the_last_made():
    """The second outer iteration's inner loop runs no iteration: the read after it sees the
    first outer iteration's last array, as in numpy (an empty array made at each entry of the
    inner loop would give 0 there)."""
    p = Loop()
    inner = p.function().body[-1]
    j, m, stop, first, last = Var("j", I8), Var("m", I8), Var("stop", I8), Var("first", I8), Var("last", F8)
    inner.stop = stop  # n in the first outer iteration, 0 in the second
    outer = For(j, const(0), m, const(1), [Assign(first, "sub", [const(1), j]), Assign(stop, "mul", [p.n, first]),
                                           inner, Assign(last, "sum", [p.z]),
                                           Assign(p.total, "add", [p.total, last])])
    head = [Assign(p.n, "dim", [p.x], {"axis": 0}), Assign(m, "alias", [const(2)]),
            Assign(p.total, "alias", [const(0.0)])]
    fn = Function("program", [p.x], head + [outer], [p.total], False)
    assert reuse_across_iterations(fn) == 1
    assert not any(isinstance(s, Assign) and s.prim == "empty" for s in outer.body)  # made before the outer loop
    x = np.linspace(0.5, 2.0, 4)
    assert run(fn, x) == pytest.approx(x.sum() + 2 * x[-1])


def test_an_array_made_again_in_a_second_loop_is_reused_in_each():
    """Reverse mode recomputes a forward loop's array in the backward loop: one statement in
    each loop, every read after one of them in its iteration."""
    p = Loop()
    first = p.function()
    second = p.function().body[-1]
    first.body.append(second)
    assert reuse_across_iterations(first) == 2
    x = np.linspace(0.5, 2.0, 4)
    assert run(first, x) == pytest.approx(2 * x.sum())
    between = p.function()
    between.body += [Assign(p.s, "sum", [p.z]), p.function().body[-1]]  # reads the first loop's last array
    assert reuse_across_iterations(between) == 0


def test_a_view_read_in_the_next_iteration_is_live():
    p = Loop()
    view, early = Var("v", V1), Var("e", F8)
    items = {"items": (("slice", None, None, None),), "result_ndim": 1, "text": ":"}
    # e = sum(v) reads the previous iteration's view before this iteration makes v again
    fn = p.function([Assign(view, "getitem", [p.z], items)])
    loop = next(s for s in fn.body if isinstance(s, For))
    loop.body.insert(0, Assign(early, "sum", [view]))
    assert reuse_across_iterations(fn) == 0


def test_zeros_given_their_value_twice_are_kept():
    p = Loop()
    fn = p.function(before=[Assign(p.z, "zeros_like", [p.x])])
    assert reuse_across_iterations(fn) == 0
    alias = Var("a", V1)
    assert reuse_across_iterations(p.function([Assign(alias, "alias", [p.z])],
                                              after=[Assign(p.s, "sum", [alias])])) == 0


def test_a_parallel_loop_keeps_an_array_per_iteration():
    p = Loop()
    fn = p.function()
    loop = next(s for s in fn.body if isinstance(s, For))
    fn.body[fn.body.index(loop)] = ParallelFor(loop.index, loop.start, loop.stop, loop.step, loop.body, loop.loc)
    assert reuse_across_iterations(fn) == 0


# ---------------------------------------------------------------- the buffers of fused loops
def rotated_observations(cameras, points):
    """Slices of a camera's row and a point's, combined elementwise: fused loops behind their
    length checks, whose buffers are made in every iteration."""
    total = 0.0
    for i in range(points.shape[0]):
        camera = cameras[i % cameras.shape[0]]
        moved = (points[i] - camera[3:6]) * np.cos(camera[0]) + camera[0:3] * np.sin(camera[1])
        total += np.sum(moved * moved) * camera[6]
    return total


def carried_buffer(x, w):
    """``previous = r``: a fused loop's buffer of one iteration is read in the next."""
    previous = w * 0.0
    total = 0.0
    for i in range(x.shape[0]):
        r = x[i] * w + w * w
        total += np.sum(previous * r) + np.sum(np.sin(r))
        previous = r
    return total + np.sum(previous)


def test_the_buffers_of_fused_loops_in_a_loop_are_kept_across_iterations():
    rng = np.random.default_rng(4)
    args = (rng.standard_normal((3, 7)), rng.standard_normal((6, 3)))
    gradient = adcompile.grad(adcompile.compile(rotated_observations), wrt=(0, 1))
    backward = gradient.source(*args, stage="lowered").split("# backward")[1]
    kept = set(re.findall(r"if (\w+)\.shape\[0\] != _want", backward)) - set(re.findall(r"(\w+)\[:\] = 0\.0", backward))
    assert len(kept) >= 2, backward
    for name in kept:  # one empty array before the loop, a new one only when the lengths change
        assert backward.count(f"{name} = np.empty((0,)") == 1 and backward.count(f"{name} = np.empty((") == 2
    assert adcompile.gradcheck(adcompile.compile(rotated_observations), args, wrt=(0, 1))
    expected = adcompile.grad(adcompile.compile(rotated_observations, backend="python"), wrt=(0, 1))(*args)
    for got, want in zip(gradient(*args), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_fused_loops_buffer_read_in_the_next_iteration_is_made_anew():
    x, w = np.linspace(-1.0, 1.0, 5), np.array([0.3, -0.7, 1.1])
    compiled = adcompile.compile(carried_buffer)
    forward = compiled.source(x, w, stage="lowered")
    assert "r = np.empty((" in forward and "!= _want" not in forward, forward
    assert compiled(x, w) == pytest.approx(carried_buffer(x, w), rel=1e-12)
    assert adcompile.gradcheck(compiled, (x, w), wrt=(0, 1))


def rotation_axes(rotations, points):
    """Per observation: a named elementwise array (``axis``) and a vector of scalars
    (``cross``), each made in every iteration of the forward loop and again in the backward one."""
    total = 0.0
    for i in range(points.shape[0]):
        rotation = rotations[i % rotations.shape[0]]
        theta = np.sqrt(rotation[0] ** 2 + rotation[1] ** 2 + rotation[2] ** 2)
        axis = rotation / theta
        point = points[i]
        cross = np.array([axis[1] * point[2] - axis[2] * point[1],
                          axis[2] * point[0] - axis[0] * point[2],
                          axis[0] * point[1] - axis[1] * point[0]])
        total += np.sum(np.sin(cross) * axis) + axis[0] * cross[2]
    return total


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_named_arrays_and_vectors_made_in_a_loop_keep_one_buffer_per_loop(dtype):
    rng = np.random.default_rng(8)
    args = (rng.standard_normal((3, 3)).astype(dtype), rng.standard_normal((5, 3)).astype(dtype))
    gradient = adcompile.grad(adcompile.compile(rotation_axes), wrt=(0, 1))
    lowered = gradient.source(*args, stage="lowered")
    for name in ("axis", "cross"):  # an empty array before each of the two loops, no other
        assert len(re.findall(rf"\b{name} = np\.empty\(\(0,\)", lowered)) == 2, lowered
    code = "\n".join(line for line in lowered.splitlines() if not line.lstrip().startswith("#"))
    assert "np.array([" not in code and "axis = _t" not in code, lowered
    expected = adcompile.grad(adcompile.compile(rotation_axes, backend="python"), wrt=(0, 1))(*args)
    tolerance = 1e-12 if dtype == np.float64 else 1e-5
    for got, want in zip(gradient(*args), expected):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
    if dtype == np.float64:
        assert adcompile.gradcheck(adcompile.compile(rotation_axes), args, wrt=(0, 1))
