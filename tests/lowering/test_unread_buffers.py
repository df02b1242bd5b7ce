"""Buffers that fused loops write and nothing reads are dropped
(``adcompile/lowering/unread_buffers.py``): which ones, which must stay, and that values and
gradients stay right on numba.
"""
import re

import numpy as np
import pytest

import adcompile
from adcompile.backend.loader import load
from adcompile.codegen.python import generate
from adcompile.ir.nodes import AccumItem, Assign, For, Function, SetItem, Var, const, walk
from adcompile.ir.types import F8, I8, Type
from adcompile.lowering.unread_buffers import drop_unread_buffers

V1 = Type("f8", 1)
GETITEM = {"items": (("int", 1),), "result_ndim": 0, "text": "_1"}


def program(after_loop=lambda b: [], results=None, accumulate=False):
    """``n = len(x); b = np.empty(n); for i: xi = x[i]; b[i] = xi * 2 (or +=); total = sum(x)``
    and the statements ``after_loop(b)``."""
    x, n, i, b = Var("x", V1), Var("n", I8), Var("i", I8), Var("b", V1)
    xi, twice, total = Var("xi", F8), Var("twice", F8), Var("total", F8)
    write = AccumItem if accumulate else SetItem
    loop = For(i, const(0), n, const(1), [Assign(xi, "getitem", [x, i], GETITEM),
                                          Assign(twice, "mul", [xi, const(2.0)]),
                                          write(b, twice, [("int", i)])])
    body = [Assign(n, "dim", [x], {"axis": 0}), Assign(b, "empty", [n], {"ndim": 1, "dtype": "f8"}), loop,
            Assign(total, "sum", [x]), *after_loop(b)]
    return Function("program", [x], body, results or [total], False), b


def test_a_buffer_only_written_is_dropped_with_its_writes():
    fn, b = program()
    assert drop_unread_buffers(fn) == 1
    assert not any(b in s.writes() or b in s.reads() for s in walk(fn.body))
    x = np.linspace(0.5, 2.0, 4)
    assert load(generate(fn, origin="test_unread_buffers"), fn.name, "python")(x) == pytest.approx(x.sum())


def test_a_buffer_read_in_any_way_is_kept():
    fn, b = program()
    fn.results = [fn.results[0], b]  # returned
    assert drop_unread_buffers(fn) == 0
    length, view, element = Var("m", I8), Var("v", V1), Var("e", F8)
    assert drop_unread_buffers(program(lambda b: [Assign(length, "dim", [b], {"axis": 0})])[0]) == 0  # its shape
    assert drop_unread_buffers(program(lambda b: [Assign(view, "alias", [b])])[0]) == 0  # another name
    assert drop_unread_buffers(program(lambda b: [Assign(element, "getitem", [b, const(0)], GETITEM)])[0]) == 0
    assert drop_unread_buffers(program(accumulate=True)[0]) == 0  # b[i] += reads b's values


def per_observation(cameras, points):
    """Reverse mode reads the shapes of the forward loop's temporaries (``rt.unbroadcast``):
    once fused, their values are read by nothing."""
    total = 0.0
    for i in range(points.shape[0]):
        camera = cameras[i % cameras.shape[0]]
        moved = (points[i] - camera[3:6]) * np.cos(camera[0]) + camera[0:3] * np.sin(camera[1])
        total += moved[0] * moved[1] + moved[2] * camera[6]
    return total


def test_the_forward_loop_stores_no_temporary_that_nothing_reads():
    rng = np.random.default_rng(3)
    args = (rng.standard_normal((3, 7)), rng.standard_normal((6, 3)))
    gradient = adcompile.grad(adcompile.compile(per_observation), wrt=(0, 1))
    lowered = gradient.source(*args, stage="lowered")
    code = [line for line in lowered.splitlines() if not line.lstrip().startswith("#")]
    for name in set(re.findall(r"(\w+) = np\.empty\(\(", lowered)):
        reads = [line for line in code if re.search(rf"\b{name}\b", line)  # but its writes and reuse checks
                 and not re.match(rf"\s*({name}(\[[^\]]*\])? = |if {name}\.shape\[\d\] != _want)", line)]
        assert reads, f"{name} is written and never read:\n{lowered}"
    expected = adcompile.grad(adcompile.compile(per_observation, backend="python"), wrt=(0, 1))(*args)
    for got, want in zip(gradient(*args), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert adcompile.gradcheck(adcompile.compile(per_observation), args, wrt=(0, 1))
