"""Tests for adcompile.runtime: plain-numpy helpers vs numba overloads.

Every helper is checked against a reference written with ordinary numpy
expressions (np.add.at, np.sum with keepdims, ...), both as the plain-numpy
helper and compiled by numba through small ``njit`` wrappers.  The number of
wrappers and type signatures is kept small because each numba specialisation
costs compile time (about half a second each).
"""

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core.errors import NumbaPerformanceWarning

import adcompile.runtime.numba_impls  # noqa: F401  (registers the overloads)
from adcompile.runtime import helpers as rt

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RNG = np.random.default_rng(0)


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def assert_same(got, want, rtol=1e-12, atol=1e-12):
    """Same values, same array-ness, same dtype (for arrays and numpy scalars)."""
    assert np.ndim(got) == np.ndim(want), (np.shape(got), np.shape(want))
    assert isinstance(got, np.ndarray) == isinstance(want, np.ndarray)
    if isinstance(want, np.ndarray):
        assert got.shape == want.shape
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        if want.dtype == np.float32:
            rtol, atol = max(rtol, 1e-5), max(atol, 1e-5)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


# ------------------------------------------------------------ njit wrappers


@numba.njit
def nb_unbroadcast(g, x):
    return rt.unbroadcast(g, x)


@numba.njit
def nb_reductions(x, axis):
    return (
        rt.sum_axis(x, axis),
        rt.mean_axis(x, axis),
        rt.max_axis(x, axis),
        rt.min_axis(x, axis),
        rt.prod_axis(x, axis),
    )


@numba.njit
def nb_sum_mean_max(x, axis):
    return rt.sum_axis(x, axis), rt.mean_axis(x, axis), rt.max_axis(x, axis)


@numba.njit
def nb_expand_axis(x, axis):
    return rt.expand_axis(x, axis)


@numba.njit
def nb_broadcast_to_shape(g, x):
    return rt.broadcast_to_shape(g, x)


@numba.njit
def nb_scatter_add(target, idx, values):
    rt.scatter_add(target, idx, values)


@numba.njit
def nb_scatter_add2(target, i0, i1, values):
    rt.scatter_add2(target, i0, i1, values)


@numba.njit
def nb_matmul(a, b):
    return rt.matmul(a, b)


@numba.njit
def nb_matmul4(a, b, v, w):
    return rt.matmul(a, b), rt.matmul(a, v), rt.matmul(w, b), rt.matmul(v, w)


@numba.njit
def nb_range_len(start, stop, step):
    return rt.range_len(start, stop, step)


@numba.njit
def nb_misc(f64, f32, i64, a64, a32, ai64):
    zeros = (
        rt.zeros_like_any(f64),
        rt.zeros_like_any(f32),
        rt.zeros_like_any(i64),
        rt.zeros_like_any(a64),
        rt.zeros_like_any(a32),
        rt.zeros_like_any(ai64),
    )
    casts = (
        rt.cast_like(f64, f32),
        rt.cast_like(a64, f32),
        rt.cast_like(a64, a32),
        rt.cast_like(f32, a64),
        rt.cast_like(a32, i64),
        rt.cast_like(a64, a64),
    )
    return zeros, casts


@numba.njit
def nb_diag_adjoint(g, x):
    return rt.diag_adjoint(g, x)


@numba.njit
def nb_cumsum_adjoint(g):
    return rt.cumsum_adjoint(g)


@numba.njit
def nb_tape_roundtrip(m):
    """Push/pop floats, bools, ints and (sliced) 1-D/2-D arrays."""
    tf = rt.new_tape(1.0)
    tb = rt.new_tape(True)
    ti = rt.new_tape(1)
    t1 = rt.new_tape(m[0])
    t2 = rt.new_tape(m)
    for k in range(m.shape[0]):
        rt.push(tf, m[k, 0])
        rt.push(tb, m[k, 0] > 0.0)
        rt.push(ti, k)
        rt.push(t1, m[:, k])  # a column: non-contiguous
        rt.push(t1, m[k])  # a row: contiguous
        rt.push(t2, m[k:, ::2])  # non-contiguous 2-D
        rt.push(t2, m)
    total = 0.0
    while len(tf) > 0:
        f = tf.pop()
        b = tb.pop()
        i = ti.pop()
        row = t1.pop()
        col = t1.pop()
        full = t2.pop()
        sub = t2.pop()
        total += f + (1.0 if b else 0.0) + i + row.sum() + 2.0 * col.sum()
        total += full.sum() + 3.0 * sub.sum()
    return total


def py_tape_roundtrip(m):
    """Same as nb_tape_roundtrip, written with plain numpy."""
    total = 0.0
    for k in range(m.shape[0]):
        total += m[k, 0] + (1.0 if m[k, 0] > 0 else 0.0) + k
        total += m[k].sum() + 2.0 * m[:, k].sum() + m.sum() + 3.0 * m[k:, ::2].sum()
    return total


# ---------------------------------------------------------------- unbroadcast


def unbroadcast_reference(g, xshape):
    g = np.asarray(g)
    lead = g.ndim - len(xshape)
    g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(xshape) if n == 1)
    return g.sum(axis=axes, keepdims=True)


UNBROADCAST_CASES = [
    ((4, 3), (1, 3), np.float64),
    ((4, 3), (4, 3), np.float64),
    ((4, 3), (4, 1), np.float64),
    ((4, 3), (1, 1), np.float64),
    ((2, 4, 3), (3,), np.float64),
    ((2, 4, 3), (4, 3), np.float64),
    ((2, 4, 3), (1, 3), np.float64),
    ((4, 3), (1, 3), np.float32),
    ((4, 3), (4, 3), np.float32),
    ((0, 3), (1, 3), np.float64),
]


@pytest.mark.parametrize("gshape,xshape,dtype", UNBROADCAST_CASES)
def test_unbroadcast_arrays(gshape, xshape, dtype):
    g = rand(*gshape, dtype=dtype)
    x = np.ones(xshape, dtype=dtype)
    want = unbroadcast_reference(g, xshape).astype(dtype)
    assert_same(rt.unbroadcast(g, x), want)
    assert_same(nb_unbroadcast(g, x), want)


def test_unbroadcast_noncontiguous_g():
    big = rand(4, 6)
    g = big[:, ::2]
    for xshape in [(1, 3), (4, 3), (4, 1)]:
        x = np.ones(xshape)
        want = unbroadcast_reference(g, xshape)
        assert_same(nb_unbroadcast(g, x), want)
        assert_same(rt.unbroadcast(g, x), want)


def test_unbroadcast_scalars():
    g = rand(2, 3)
    assert np.isclose(nb_unbroadcast(g, 2.0), g.sum())
    assert np.isclose(rt.unbroadcast(g, 2.0), g.sum())
    assert nb_unbroadcast(1.5, 2.0) == 1.5
    assert rt.unbroadcast(1.5, 2.0) == 1.5
    x = np.ones((2, 3))
    assert_same(nb_unbroadcast(1.5, x), np.full((2, 3), 1.5))
    assert_same(rt.unbroadcast(1.5, x), np.full((2, 3), 1.5))
    g32 = rand(2, 3, dtype=np.float32)
    assert rt.unbroadcast(g32, 1.0).dtype == np.float32


def test_unbroadcast_incompatible_raises():
    with pytest.raises(ValueError):
        rt.unbroadcast(rand(4, 3), np.ones((2, 3)))
    with pytest.raises(ValueError):
        nb_unbroadcast(rand(4, 3), np.ones((2, 3)))


# ----------------------------------------------------------------- reductions


REDUCTIONS = (np.sum, np.mean, np.max, np.min, np.prod)
PLAIN_REDUCTIONS = (rt.sum_axis, rt.mean_axis, rt.max_axis, rt.min_axis, rt.prod_axis)


def _check_reductions(x, axis, nb_fn, count):
    """``nb_fn(x, axis)`` gives the first ``count`` of REDUCTIONS."""
    got = nb_fn(x, axis)
    for ref, plain, n in zip(REDUCTIONS[:count], PLAIN_REDUCTIONS[:count], got):
        want = ref(x, axis=axis)
        assert_same(plain(x, axis), want)
        if x.ndim == 1:
            assert np.ndim(n) == 0
            np.testing.assert_allclose(n, want, rtol=1e-12)
        else:
            assert_same(n, want)


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4)])
def test_reductions_all_axes(shape):
    x = rand(*shape)
    for axis in range(len(shape)):
        _check_reductions(x, axis, nb_reductions, 5)
    _check_reductions(x, -1, nb_reductions, 5)


def test_reductions_nan_propagates():
    x = rand(2, 3, 4)
    x[1, 2, 0] = np.nan
    x[0, 0, 3] = np.nan
    for axis in range(3):
        _, _, mx, mn, _ = nb_reductions(x, axis)
        np.testing.assert_array_equal(mx, np.max(x, axis=axis))
        np.testing.assert_array_equal(mn, np.min(x, axis=axis))


@pytest.mark.parametrize(
    "x",
    [rand(3, 4, dtype=np.float32), RNG.integers(-5, 6, size=(3, 4)), rand(4, 6)[:, ::2]],
    ids=["float32", "int64", "noncontiguous"],
)
def test_reductions_dtypes_and_layouts(x):
    # sum/mean/max only, to keep the number of compiled specialisations down;
    # mean of ints gives float64, float32 stays float32.
    for axis in (0, 1):
        _check_reductions(x, axis, nb_sum_mean_max, 3)


# ------------------------------------------------- expand_axis / broadcast_to


def test_expand_axis():
    assert_same(nb_expand_axis(2.5, 0), np.array([2.5]))
    assert_same(rt.expand_axis(2.5, 0), np.array([2.5]))
    v = rand(4)
    for axis in (0, 1, -1):
        assert_same(nb_expand_axis(v, axis), np.expand_dims(v, axis))
        assert_same(rt.expand_axis(v, axis), np.expand_dims(v, axis))
    m = rand(3, 8)[:, ::2]
    for axis in (0, 1, 2):
        assert_same(nb_expand_axis(m, axis), np.expand_dims(m, axis))
        assert_same(rt.expand_axis(m, axis), np.expand_dims(m, axis))


@pytest.mark.parametrize(
    "gshape,xshape,dtype",
    [
        ((3,), (4, 3), np.float64),
        ((1, 3), (4, 3), np.float64),
        ((4, 1), (4, 3), np.float64),
        ((4, 3), (4, 3), np.float64),
        ((3,), (2, 4, 3), np.float64),
        ((1, 3), (4, 3), np.float32),
    ],
)
def test_broadcast_to_shape(gshape, xshape, dtype):
    g = rand(*gshape, dtype=dtype)
    x = np.zeros(xshape)
    want = np.ascontiguousarray(np.broadcast_to(g, xshape))
    for fn in (rt.broadcast_to_shape, nb_broadcast_to_shape):
        got = fn(g, x)
        assert_same(got, want)
        assert got.flags.c_contiguous
        assert not np.shares_memory(got, g)


def test_broadcast_to_shape_scalar_g():
    x64 = np.zeros((2, 3))
    x32 = np.zeros((2, 3), dtype=np.float32)
    for fn in (rt.broadcast_to_shape, nb_broadcast_to_shape):
        assert_same(fn(1.5, x64), np.full((2, 3), 1.5))
        assert_same(fn(1.5, x32), np.full((2, 3), 1.5, dtype=np.float32))


# -------------------------------------------------------------------- scatter


@pytest.mark.parametrize(
    "tshape,vshape",
    [
        ((5,), (6,)),
        ((5,), ()),
        ((5, 3), (6, 3)),
        ((5, 3), (3,)),
        ((5, 3), ()),
        ((5, 2, 3), (6, 2, 3)),
    ],
)
def test_scatter_add(tshape, vshape):
    check_scatter_add(np.array([0, 2, 2, -1, 4, 0]), tshape, vshape)


def check_scatter_add(idx, tshape, vshape):
    """Both versions of ``rt.scatter_add`` equal ``np.add.at`` (a scalar value when ``vshape`` is ())."""
    values = rand(*vshape) if vshape else 1.25
    base = rand(*tshape)
    want = base.copy()
    np.add.at(want, idx, values)
    for fn in (rt.scatter_add, nb_scatter_add):
        t = base.copy()
        assert fn(t, idx, values) is None
        assert_same(t, want)


@pytest.mark.parametrize("tshape,vshape", [((5, 3), (2, 3, 3)), ((5,), (2, 3)), ((5, 3), ())])
def test_scatter_add_with_a_block_of_indices(tshape, vshape):
    """``idx`` of two dimensions (an embedding's tokens): each index adds its row of values."""
    check_scatter_add(np.array([[0, 2, 4], [4, -1, 2]]), tshape, vshape)


def test_scatter_add_int_index_and_float32():
    base = rand(4, 3, dtype=np.float32)
    want = base.copy()
    np.add.at(want, 2, np.ones(3, dtype=np.float32))
    for fn in (rt.scatter_add, nb_scatter_add):
        t = base.copy()
        fn(t, 2, np.ones(3, dtype=np.float32))
        assert_same(t, want)
    with pytest.raises(IndexError):
        nb_scatter_add(np.zeros(3), np.array([3]), 1.0)


def test_scatter_add2():
    i0 = np.array([0, 1, 1, -1, 0])
    i1 = np.array([2, 0, 0, 1, 2])
    values = rand(5)
    want = np.zeros((3, 4))
    np.add.at(want, (i0, i1), values)
    want2 = np.zeros((3, 4))
    np.add.at(want2, (i0, 3), 0.5)
    for fn in (rt.scatter_add2, nb_scatter_add2):
        t = np.zeros((3, 4))
        assert fn(t, i0, i1, values) is None
        assert_same(t, want)
        t2 = np.zeros((3, 4))
        fn(t2, i0, 3, 0.5)
        assert_same(t2, want2)


# --------------------------------------------------------------------- matmul


def _check_matmul(a, b, v, w):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaPerformanceWarning)
        got = nb_matmul4(a, b, v, w)
    wants = (a @ b, a @ v, w @ b, v @ w)
    for n, p, want in zip(got, (rt.matmul(a, b), rt.matmul(a, v), rt.matmul(w, b), rt.matmul(v, w)), wants):
        tol = 1e-5 if want.dtype == np.float32 else 1e-12
        assert np.ndim(n) == np.ndim(want)
        np.testing.assert_allclose(n, want, rtol=tol, atol=tol)
        np.testing.assert_allclose(p, want, rtol=tol, atol=tol)
        if np.ndim(want):
            assert n.dtype == want.dtype


def test_matmul_contiguous():
    _check_matmul(rand(3, 4), rand(4, 5), rand(4), rand(4))


def test_matmul_noncontiguous():
    # All operands non-contiguous (numba layout 'A'), including a transpose;
    # the second call has other run-time strides but the same specialisation.
    a = rand(4, 6)[:, ::2].T
    b = rand(8, 10)[::2, ::2]
    _check_matmul(a, b, rand(8)[::2], rand(8)[::2])
    _check_matmul(rand(6, 4)[::2], rand(4, 10)[:, ::2], rand(12)[::3], rand(12)[::3])


def test_matmul_dtypes():
    # float32 stays float32; int uses explicit loops; mixed promotes (2-D @ 2-D
    # only, to keep the number of compiled specialisations down).
    a = RNG.integers(-3, 4, size=(3, 4))
    b = RNG.integers(-3, 4, size=(4, 2))
    f32, f64 = np.float32, np.float64
    for x, y in [(a.astype(f32), b.astype(f32)), (a, b), (a.astype(f32), b.astype(f64))]:
        got = nb_matmul(x, y)
        want = x @ y
        assert_same(got, want)
        assert_same(rt.matmul(x, y), want)


# ----------------------------------------------------------------------- misc


@pytest.mark.parametrize(
    "args",
    [(0, 10, 1), (0, 10, 3), (10, 0, -3), (5, 5, 1), (5, 0, 1), (0, 5, -1), (-7, 8, 4), (3, -9, -5)],
)
def test_range_len(args):
    assert nb_range_len(*args) == len(range(*args))
    assert rt.range_len(*args) == len(range(*args))


def test_range_len_zero_step():
    with pytest.raises(ValueError):
        rt.range_len(0, 5, 0)
    with pytest.raises(ValueError):
        nb_range_len(0, 5, 0)


def test_tape_roundtrip():
    m = rand(4, 4)
    assert np.isclose(nb_tape_roundtrip(m), py_tape_roundtrip(m))
    t = rt.new_tape(1.0)
    assert t == []
    rt.push(t, 2.0)
    rt.push(t, 3.0)
    assert t.pop() == 3.0 and t.pop() == 2.0 and t == []


def test_zeros_like_any_and_cast_like():
    f64, f32, i64 = 1.5, np.float32(2.5), 3
    a64, a32, ai64 = rand(2, 3), rand(2, 3, dtype=np.float32), np.arange(6).reshape(2, 3)
    want_zeros = (
        (0.0, np.float64),
        (0.0, np.float32),
        (0.0, np.float64),
        (np.zeros((2, 3)), np.float64),
        (np.zeros((2, 3)), np.float32),
        (np.zeros((2, 3)), np.int64),
    )
    want_casts = (
        (np.float32(f64), np.float32),
        (a64.astype(np.float32), np.float32),
        (a64.astype(np.float32), np.float32),
        (np.float64(f32), np.float64),
        (a32.astype(np.float64), np.float64),
        (a64, np.float64),
    )
    nb_zeros, nb_casts = nb_misc(f64, f32, i64, a64, a32, ai64)
    py_zeros = tuple(rt.zeros_like_any(v) for v in (f64, f32, i64, a64, a32, ai64))
    py_casts = (
        rt.cast_like(f64, f32),
        rt.cast_like(a64, f32),
        rt.cast_like(a64, a32),
        rt.cast_like(f32, a64),
        rt.cast_like(a32, i64),
        rt.cast_like(a64, a64),
    )
    for got_nb, got_py, (want, dt) in zip(nb_zeros + nb_casts, py_zeros + py_casts, want_zeros + want_casts):
        for got in (got_nb, got_py):
            assert np.ndim(got) == np.ndim(want)
            np.testing.assert_allclose(got, want, rtol=1e-6)
            if isinstance(got, np.ndarray) or isinstance(got, np.generic):
                assert got.dtype == dt
    assert isinstance(py_zeros[1], np.float32)
    assert isinstance(py_casts[0], np.float32)


def test_diag_adjoint():
    x1 = rand(4)
    g2 = rand(4, 4)
    for fn in (rt.diag_adjoint, nb_diag_adjoint):
        assert_same(fn(g2, x1), np.diag(g2).copy())
    for shape in [(3, 3), (3, 5), (5, 2)]:
        x2 = rand(*shape)
        g1 = rand(min(shape))
        want = np.zeros(shape)
        want[np.arange(min(shape)), np.arange(min(shape))] = g1
        for fn in (rt.diag_adjoint, nb_diag_adjoint):
            assert_same(fn(g1, x2), want)


def test_cumsum_adjoint():
    for g in (rand(7), rand(14)[::2], rand(5, dtype=np.float32), np.zeros(0)):
        want = np.ascontiguousarray(g[::-1].cumsum()[::-1])
        for fn in (rt.cumsum_adjoint, nb_cumsum_adjoint):
            got = fn(g)
            assert_same(got, want)
            assert got.flags.c_contiguous


# ------------------------------------------------------------- scans along an axis, singular values
# (issue 14: eigh, svd, qr, scans along axes, nan-reductions)
@numba.njit
def nb_scans(x, axis):
    order = rt.argsort_axis(x, axis)
    return rt.cumsum_axis(x, axis), rt.cumsum_axis_adjoint(x, axis), order, rt.permute_along(x, order, axis)


@numba.njit
def nb_singular_values(a):
    return rt.singular_values(a)


@pytest.mark.parametrize("x", [rand(3, 4), rand(2, 3, 4), rand(6, 5)[::2, 1:], rand(3, 0, 2),
                               rand(3, 4, dtype=np.float32)], ids=["2d", "3d", "strided", "empty", "f32"])
def test_scans_along_an_axis(x):
    for axis in range(x.ndim):
        want_sum = np.cumsum(x, axis=axis)
        want_adjoint = np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis)
        want_order = np.argsort(x, axis=axis)
        for fn in (lambda x, k: (rt.cumsum_axis(x, k), rt.cumsum_axis_adjoint(x, k), rt.argsort_axis(x, k),
                                 rt.permute_along(x, rt.argsort_axis(x, k), k)), nb_scans):
            got_sum, got_adjoint, got_order, got_sorted = fn(x, axis)
            assert_same(got_sum, want_sum)
            assert_same(got_adjoint, want_adjoint)
            np.testing.assert_array_equal(got_order, want_order)
            assert got_order.dtype == np.int64
            assert_same(got_sorted, np.sort(x, axis=axis))


def test_singular_values():
    for a in (rand(4, 3), rand(3, 5), rand(3, 3, dtype=np.float32)):
        for fn in (rt.singular_values, nb_singular_values):
            assert_same(fn(a), np.linalg.svd(a, compute_uv=False), rtol=1e-10)


# ------------------------------------------------------------- import / cache


def test_helpers_do_not_import_numba():
    """helpers.py is the plain-Python backend: it must not import numba."""
    tree = ast.parse(Path(rt.__file__).read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    assert "numba" not in imported


GENERATED_MODULE = '''
import numpy as np
from adcompile.runtime import helpers as rt


def f_and_grad(w, x, b):
    """A tiny hand-written 'generated' forward + backward pass."""
    h = rt.matmul(x, w) + b                     # (n, k) + (k,)
    y = rt.sum_axis(h * h, 1)                   # (n,)
    tape = rt.new_tape(h)
    rt.push(tape, h[:, ::2])
    loss = rt.mean_axis(y, 0) + rt.max_axis(h, 0).sum()
    g_y = rt.broadcast_to_shape(1.0 / rt.range_len(0, y.shape[0], 1), y)
    g_h = rt.expand_axis(g_y, 1) * 2.0 * h
    g_b = rt.unbroadcast(g_h, b)
    g_w = rt.matmul(x.T, g_h)
    g_x = rt.zeros_like_any(x)
    rt.scatter_add(g_x, np.arange(x.shape[0]), rt.matmul(g_h, w.T))
    popped = tape.pop()
    return loss, rt.cast_like(g_w, w), g_b, g_x, popped.sum()
'''

RUN_GENERATED = """
import importlib.util, sys
import numba, numpy as np
import adcompile.runtime.numba_impls
spec = importlib.util.spec_from_file_location("gen_cached_mod", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
sys.modules["gen_cached_mod"] = mod  # numba's cache needs an importable module
spec.loader.exec_module(mod)
f = numba.njit(cache=True)(mod.f_and_grad)
rng = np.random.default_rng(1)
w, x, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 3)), rng.standard_normal(4)
got = f(w, x, b)
want = mod.f_and_grad(w, x, b)
ok = all(np.allclose(g, v) for g, v in zip(got, want))
print(ok, sum(f.stats.cache_hits.values()))
"""


def test_generated_module_cache_true(tmp_path, monkeypatch):
    """Generated code in a real file compiles with cache=True and reloads.

    The module must be registered in ``sys.modules`` under its name (in every
    process that compiles or loads it): numba pickles a reference to the
    module's globals by name, and loading the cache fails with
    "No module named '<dynamic>'" if the module was not registered.
    """
    path = tmp_path / "gen_cached_mod.py"
    path.write_text(textwrap.dedent(GENERATED_MODULE))
    spec = importlib.util.spec_from_file_location("gen_cached_mod", path)
    mod = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "gen_cached_mod", mod)
    spec.loader.exec_module(mod)

    f = numba.njit(cache=True)(mod.f_and_grad)
    rng = np.random.default_rng(1)
    w, x, b = rng.standard_normal((3, 4)), rng.standard_normal((5, 3)), rng.standard_normal(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumbaPerformanceWarning)  # x.T is F-ordered
        got = f(w, x, b)
    want = mod.f_and_grad(w, x, b)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-12)
    assert any(p.suffix == ".nbi" for p in (tmp_path / "__pycache__").iterdir())

    # A fresh process loads the compiled code from the cache.
    script = tmp_path / "run_generated.py"
    script.write_text(RUN_GENERATED)
    pythonpath = os.pathsep.join(p for p in (REPO_ROOT, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=pythonpath)
    out = subprocess.run(
        [sys.executable, str(script), str(path)], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    ok, hits = out.stdout.split()
    assert ok == "True"
    assert int(hits) >= 1
