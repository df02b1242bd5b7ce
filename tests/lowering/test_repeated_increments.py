"""Repeated updates of one array element in a loop body read it once and write it once
(``adcompile/lowering/repeated_increments.py``).

Every result is compared bitwise with the same function lowered with the step off
(``ADCOMPILE_MERGE_INCREMENTS=0``: the generated source differs, so it compiles and caches on
its own), and gradients with central differences. The negative cases (a read of the array
between the updates, a view of it, integer-array indices, other indices, an argument array,
control flow, an index assigned between) are user programs and IR functions written by hand.
"""
import numpy as np
import pytest

import adcompile
from adcompile.backend.loader import load
from adcompile.codegen.python import generate
from adcompile.ir.clone import copy_function
from adcompile.ir.nodes import AccumItem, Assign, For, Function, If, Pop, Push, SetItem, Var, const, walk
from adcompile.ir.types import B1, F4, F8, I8, Type
from adcompile.lowering.repeated_increments import find_runs, merge_repeated_increments
from oracles import gradient_by_differences, hessian_by_differences
from randprog.loading import load_module, unload_module

OFF = "ADCOMPILE_MERGE_INCREMENTS"


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def both_settings(monkeypatch, compute):
    """[``compute()`` with the step on, ``compute()`` with it off]."""
    out = []
    for setting in ("1", "0"):
        monkeypatch.setenv(OFF, setting)
        out.append(compute())
    monkeypatch.delenv(OFF)
    return out


def run_both(monkeypatch, make, args, backend="numba"):
    """[(lowered source, result) with the step on, the same with it off]; ``make(backend)``
    gives the function to call."""
    def compute():
        f = make(backend)
        return adcompile.source(f, *args, stage="lowered"), f(*args)

    return both_settings(monkeypatch, compute)


def compiled(f, backend):
    return adcompile.compile(f, backend=backend)


def body_updates(source, element):
    """(reads, writes) of ``element`` (``bx[i]``) in ``source``: ``bx[i] += v`` is both."""
    lines = [line.strip() for line in source.splitlines()]
    increments = sum(line.startswith(f"{element} +=") for line in lines)
    writes = sum(line.startswith(f"{element} =") for line in lines) + increments
    reads = sum(line.count(element) for line in lines) - writes + increments
    return reads, writes


# ---------------------------------------------------------------------------- Rosenbrock

def test_rosenbrock_gradient_reads_and_writes_its_element_once(monkeypatch, backend):
    x = np.random.default_rng(0).standard_normal(50)
    (merged, gradient), (unmerged, unmerged_gradient) = run_both(
        monkeypatch, lambda b: adcompile.grad(compiled(rosenbrock, b)), (x,), backend)
    assert body_updates(unmerged, "bx[i]") == (2, 2)
    assert body_updates(merged, "bx[i]") == (1, 1), merged
    assert "bx_i = bx[i] + -bt_7" in merged and "bx[i] = bx_i + bt_1" in merged
    assert "bx[i + 1] += bt_3" in merged  # another element: its own update
    gradient = gradient[0] if isinstance(gradient, tuple) else gradient
    unmerged_gradient = unmerged_gradient[0] if isinstance(unmerged_gradient, tuple) else unmerged_gradient
    assert same_bits(gradient, unmerged_gradient)
    np.testing.assert_allclose(gradient, gradient_by_differences(rosenbrock, (x,)), rtol=1e-6, atol=1e-6)


def test_rosenbrock_lowered_ir_has_one_read_and_one_write_of_the_element(monkeypatch):
    monkeypatch.delenv(OFF, raising=False)
    g = adcompile.grad(adcompile.compile(rosenbrock))
    x = np.linspace(-1.0, 1.0, 9)
    code = g.lowered_ir(g.signature((x,)))
    loop = next(stmt for stmt in walk(code.body) if isinstance(stmt, For))
    i = loop.index
    bx = code.results[0]
    reads = [s for s in loop.body if isinstance(s, Assign) and s.prim == "getitem" and s.args[:2] == [bx, i]]
    writes = [s for s in loop.body if isinstance(s, SetItem) and s.array is bx and s.items == [("int", i)]]
    assert len(reads) == 1 and len(writes) == 1 and type(writes[0]) is SetItem, code


def test_float32_rosenbrock(monkeypatch):
    x = np.random.default_rng(1).standard_normal(40).astype(np.float32)
    (merged, gradient), (_, unmerged_gradient) = run_both(
        monkeypatch, lambda b: adcompile.grad(compiled(rosenbrock, b)), (x,))
    gradient, unmerged_gradient = np.asarray(gradient).reshape(-1), np.asarray(unmerged_gradient).reshape(-1)
    assert "np.float32(bx_i" in merged or "bx_i = np.float32(" in merged, merged
    assert gradient.dtype == np.float32 and same_bits(gradient, unmerged_gradient)
    expected = gradient_by_differences(rosenbrock, (x.astype(np.float64),))
    np.testing.assert_allclose(gradient, expected, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_loops_of_no_or_one_iteration(monkeypatch, n):
    x = np.linspace(0.3, 0.9, n)
    (merged, gradient), (_, unmerged_gradient) = run_both(
        monkeypatch, lambda b: adcompile.grad(compiled(rosenbrock, b)), (x,))
    gradient = np.asarray(gradient).reshape(-1)
    assert same_bits(gradient, np.asarray(unmerged_gradient).reshape(-1))
    np.testing.assert_allclose(gradient, gradient_by_differences(rosenbrock, (x,)).reshape(-1), atol=1e-6)


def test_hessian_of_rosenbrock(monkeypatch):
    x = np.random.default_rng(2).standard_normal(7)
    (merged, hessian), (_, unmerged_hessian) = run_both(
        monkeypatch, lambda b: adcompile.hessian(compiled(rosenbrock, b)), (x,))
    assert "dbx_i_j = dbx[i, j] +" in merged, merged
    assert same_bits(hessian, unmerged_hessian)
    gradient = adcompile.grad(adcompile.compile(rosenbrock))
    expected = hessian_by_differences(lambda v: np.asarray(gradient(v)).reshape(-1), (x,))
    np.testing.assert_allclose(hessian, expected, rtol=1e-5, atol=1e-5)


def cubes_and_cosines(x):
    return np.sum(x[:-1] ** 3) + np.sum(np.cos(x[:-1]) * 2.0)


def test_parallel_loop(monkeypatch):
    """A ``numba.prange`` loop: the scalar is private to its iteration."""
    x = np.random.default_rng(3).standard_normal(64)
    (merged, gradient), (_, unmerged_gradient) = run_both(
        monkeypatch, lambda b: adcompile.grad(adcompile.compile(cubes_and_cosines, parallel=True)), (x,))
    assert "numba.prange" in merged and body_updates(merged, "bx[i]") == (1, 1), merged
    assert same_bits(gradient, unmerged_gradient)
    np.testing.assert_allclose(np.asarray(gradient).reshape(-1), gradient_by_differences(cubes_and_cosines, (x,)),
                               rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------- user loops

def updates_in_turn(x, a, b):
    g = np.zeros_like(x)
    for i in range(x.shape[0]):
        g[i] += a[i]
        g[i] += b[i] * 2.0
        g[i] += 0.1
    return g


def read_between(x, a, b):
    g = np.zeros_like(x)
    for i in range(x.shape[0]):
        g[i] += a[i]
        t = g[i]
        g[i] += b[i] * t
    return g


def through_a_view(x, a, b):
    g = np.zeros_like(x)
    v = g[:]
    for i in range(x.shape[0]):
        g[i] += a[i]
        v[i] += b[i]
        g[i] += x[i]
    return g


def neighbours(x, a, b):
    g = np.zeros_like(x)
    for i in range(x.shape[0] - 1):
        g[i] += a[i]
        g[i + 1] += b[i]
        g[i] += x[i]
    return g


def into_an_argument(x, a, b):
    for i in range(x.shape[0]):
        x[i] += a[i]
        x[i] += b[i]
    return x


def branch_between(x, a, b):
    g = np.zeros_like(x)
    for i in range(x.shape[0]):
        g[i] += a[i]
        if a[i] > 0.5:
            b[i] = 1.0
        g[i] += b[i]
    return g


@pytest.mark.parametrize("f, merges", [(updates_in_turn, True), (read_between, False), (through_a_view, False),
                                       (neighbours, False), (into_an_argument, False), (branch_between, False)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_user_loops(monkeypatch, backend, f, merges, dtype):
    rng = np.random.default_rng(4)
    x, a, b = (rng.uniform(0.1, 1.0, 6).astype(dtype) for _ in range(3))
    def compute():
        g = compiled(f, backend)
        arguments = [x.copy(), a.copy(), b.copy()]
        return adcompile.source(g, *arguments, stage="lowered"), g(*arguments)

    results = both_settings(monkeypatch, compute)
    (merged, result), (unmerged, unmerged_result) = results
    assert ("g_i = " in merged) == merges and (merged == unmerged) != merges, merged
    assert same_bits(result, unmerged_result)
    np.testing.assert_allclose(result, f(x.copy(), a.copy(), b.copy()), rtol=1e-6)


# ---------------------------------------------------------------------------- IR by hand

X, BX, N, I, J = Var("x", Type("f8", 1)), Var("bx", Type("f8", 1)), Var("n", I8), Var("i", I8), Var("j", I8)
A, B, C = Var("a", F8), Var("b", F8), Var("c", F8)


def loop_function(body, before=(), array=BX, params=(X,)):
    """``bx = zeros_like(x); for i in range(n): body`` returning ``bx``; the scalars a, b, c
    read from ``x[0]``."""
    setup = [Assign(array, "zeros_like", [X]), Assign(N, "dim", [X], {"axis": 0})]
    setup += [Assign(v, "getitem", [X, const(0)], {"items": (("int", 1),), "result_ndim": 0, "text": "_1"})
              for v in (A, B, C)]
    return Function("f", list(params), setup + list(before) + [For(I, const(0), N, const(1), list(body))], [array], True)


def inc(value, *index, array=BX):
    return AccumItem(array, value, [("int", atom) for atom in index])


def element_read(target, array, *index):
    return Assign(target, "getitem", [array, *index], {"items": tuple(("int", k + 1) for k in range(len(index))),
                                                       "result_ndim": 0, "text": "_1"})


def merged_runs(fn):
    return sum(len(runs) for _, runs in find_runs(fn))


def test_two_increments_merge_and_a_third_joins():
    assert merged_runs(loop_function([inc(A, I), Assign(C, "mul", [A, B]), inc(B, I), inc(C, I)])) == 1
    fn = loop_function([inc(A, I), inc(B, I), inc(C, I)])
    merge_repeated_increments(fn)
    kinds = [type(s).__name__ for s in fn.body[-1].body]
    assert kinds.count("AccumItem") == 0 and kinds.count("SetItem") == 1, fn


@pytest.mark.parametrize("between", [
    element_read(C, BX, I),  # a read of the array
    element_read(C, BX, J),  # another element
    inc(C, J),  # an update of another element
    SetItem(BX, C, [("int", J)]),
    Assign(J, "add", [I, const(1)]),  # harmless itself: an index it does not use
    Push(Var("tape", Type("f8", 1)), BX),  # the array kept by a tape
    If(Var("flag", B1), [], []),  # control flow
])
def test_statements_between_that_stop_the_merge(between):
    fn = loop_function([inc(A, I), between, inc(B, I)], before=[Assign(J, "alias", [const(0)])])
    expected = 1 if isinstance(between, Assign) and between.target is J else 0
    assert merged_runs(fn) == expected, fn


def test_an_index_assigned_between_stops_the_merge():
    k = Var("k", I8)
    fn = loop_function([Assign(k, "alias", [I]), inc(A, k), Assign(k, "add", [I, const(1)]), inc(B, k)])
    assert merged_runs(fn) == 0


def test_a_view_read_between_stops_the_merge():
    view = Var("v", Type("f8", 1))
    take = Assign(view, "getitem", [BX, const(1)],
                  {"items": (("slice", 1, None, None),), "result_ndim": 1, "text": "1:"})
    assert merged_runs(loop_function([inc(A, I), element_read(C, view, I), inc(B, I)], before=[take])) == 0
    assert merged_runs(loop_function([inc(A, I), element_read(C, X, I), inc(B, I)], before=[take])) == 1


def test_array_of_unknown_memory_between_stops_the_merge():
    popped, tape = Var("p", Type("f8", 1)), Var("tape", Type("f8", 1))
    fn = loop_function([inc(A, I), element_read(C, popped, I), inc(B, I)], before=[Pop(popped, tape)])
    assert merged_runs(fn) == 0
    assert merged_runs(loop_function([inc(A, I), inc(B, I)], before=[Pop(popped, tape)])) == 1


def test_integer_array_indices_never_merge():
    index = Var("idx", Type("i8", 1))
    scatter = [AccumItem(BX, A, [("array", index)]), AccumItem(BX, B, [("array", index)])]
    assert merged_runs(loop_function(scatter, params=(X, index))) == 0


def test_different_or_constant_indices():
    assert merged_runs(loop_function([inc(A, I), inc(B, J)], before=[Assign(J, "alias", [const(0)])])) == 0
    assert merged_runs(loop_function([inc(A, const(2)), inc(B, const(2))])) == 1
    assert merged_runs(loop_function([inc(A, const(2)), inc(B, const(3))])) == 0


def test_arguments_and_top_level_code_are_left():
    fn = loop_function([inc(A, I), inc(B, I)])
    argument = Function("f", [X, BX], [For(I, const(0), N, const(1), [inc(A, I, array=X), inc(B, I, array=X)])],
                        [X], True)
    assert merged_runs(argument) == 0
    top = Function("f", [X], fn.body[:-1] + [inc(A, const(0)), inc(B, const(0))], [BX], True)
    assert merged_runs(top) == 0


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_float32_element_with_numbers_and_float64_values(backend):
    """A float32 element plus a float64 literal or value: numba adds in float64 and the store
    rounds; the scalar is rounded after every addition as the store did."""
    x, bx, d = Var("x", Type("f4", 1)), Var("bx", Type("f4", 1)), Var("d", F8)
    setup = [Assign(bx, "zeros_like", [x]), Assign(N, "dim", [x], {"axis": 0}), Assign(d, "alias", [const(0.1)])]
    xi = Var("xi", F4)
    body = [element_read(xi, x, I)]
    body += [AccumItem(bx, const(0.1), [("int", I)]), AccumItem(bx, xi, [("int", I)]),
             AccumItem(bx, d, [("int", I)]), AccumItem(bx, const(1.0 / 3.0), [("int", I)])]
    fn = Function("f32", [x], setup + [For(I, const(0), N, const(1), body)], [bx], True)
    merged = copy_function(fn)
    assert merge_repeated_increments(merged) == 1
    source, unmerged_source = generate(merged), generate(fn)
    assert "bx_i = np.float32(" in source, source
    values = np.random.default_rng(5).standard_normal(200).astype(np.float32) * 1e3
    result = load(source, "f32", backend)(values)[0]
    expected = load(unmerged_source, "f32", backend)(values)[0]
    assert same_bits(result, expected)


# ---------------------------------------------------------------------------- random programs

def random_update_program(rng):
    """(source, arguments): a loop whose body is a random straight-line sequence of updates
    and reads of 1-3 fresh arrays at a few index expressions, of float32 or float64; the
    function returns a sum over the arrays; its gradient is taken too (reverse mode's ``+=``)
    unless a view of an array is written (reverse mode rejects that)."""
    arrays = [f"g{k}" for k in range(int(rng.integers(1, 4)))]
    indices = ["i", "i + 1", "i + 2", "1"]  # a view ``v = g0[1:]`` is one shorter: not at i + 2
    lines = ["def prog(x, w):"] + [f"    {name} = np.zeros_like(x)" for name in arrays]
    if rng.random() < 0.3:
        lines.append(f"    v = {arrays[0]}[1:]")
    lines += ["    s = 0.0", "    for i in range(x.shape[0] - 2):"]
    for _ in range(int(rng.integers(2, 9))):
        name = arrays[rng.integers(len(arrays))]
        index = indices[rng.integers(len(indices))] if rng.random() < 0.6 else "i"
        value = ["x[i]", "x[i + 1] * w", "0.1", "np.sin(x[i + 2])", "x[i] * x[i + 1]"][rng.integers(5)]
        roll = rng.random()
        if roll < 0.6:
            lines.append(f"        {name}[{index}] += {value}")
        elif roll < 0.75 and "    v = g0[1:]" in lines:
            lines.append(f"        v[{index.replace('i + 2', 'i')}] += {value}")
        elif roll < 0.9:
            lines.append(f"        s = s + {name}[{index}] * {value}")
        else:
            lines.append(f"        s = s + x[{index}] * x[i] * {value}")
    total = " + ".join(f"np.sum({name} * x)" for name in arrays)
    lines.append(f"    return s + {total}")
    dtype = np.float32 if rng.random() < 0.3 else np.float64
    x = rng.uniform(-1.0, 1.0, int(rng.integers(3, 9))).astype(dtype)
    w = float(rng.uniform(0.5, 1.5))
    return "import numpy as np\n\n\n" + "\n".join(lines) + "\n", (x, w)


FUZZ_SEEDS = range(20)  # two programs each: about 30 s of numba compiles on one core


def random_programs(seed):
    """The two programs of ``seed``: (source, arguments, module), the module unloaded after."""
    rng = np.random.default_rng(seed)
    for _ in range(2):
        source, args = random_update_program(rng)
        module = load_module(source, stem="increments")
        try:
            yield source, args, module
        finally:
            unload_module(module)


@pytest.mark.parametrize("seed", FUZZ_SEEDS)
def test_random_update_programs_bitwise_equal_with_the_step_off(monkeypatch, seed):
    for source, args, module in random_programs(seed):
        def outputs():
            f = adcompile.compile(module.prog)
            # reverse mode does not follow writes through a view: the primal only then
            return f(*args), None if "v = " in source else adcompile.grad(f)(*args)

        (value, gradient), (unmerged_value, unmerged_gradient) = both_settings(monkeypatch, outputs)
        assert same_bits(value, unmerged_value), source
        assert same_bits(gradient, unmerged_gradient), source
        np.testing.assert_allclose(value, module.prog(*args), rtol=1e-4, atol=1e-4, err_msg=source)


def test_most_random_update_programs_merge(monkeypatch):
    """The random programs above exercise the merge: most of them merge something (lowered as
    for numba, run by nothing: only the sources are compared)."""
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    merging = 0
    for seed in FUZZ_SEEDS:
        for source, args, module in random_programs(seed):
            def lowered():
                f = adcompile.compile(module.prog, backend="python")
                derived = [f] if "v = " in source else [f, adcompile.grad(f)]
                return [adcompile.source(g, *args, stage="lowered") for g in derived]

            merged, unmerged = both_settings(monkeypatch, lowered)
            merging += merged != unmerged
    assert merging >= len(FUZZ_SEEDS), merging
