"""numba versions of the kernels of ``scans.py`` (scans and permutations).

Importing this module registers, with ``numba.extending.overload``, a nopython implementation of
each function of ``scans.py``, so that generated code calling ``rt.<name>`` compiles under
``numba.njit``; the loops are small ``njit`` kernels, cached on disk (``numba_support.py``).
"""
import numpy as np
from numba import types
from numba.extending import overload

from . import scans
from .numba_support import OPTS, fail, is_array, kernel, np_dtype


@overload(scans.cumsum_adjoint, jit_options=OPTS)
def _ol_cumsum_adjoint(g):
    if not (is_array(g) and g.ndim == 1):
        return fail("cumsum_adjoint", g)
    dt = np_dtype(g)

    def impl(g):
        n = g.shape[0]
        out = np.empty(n, dt)
        if n == 0:
            return out
        acc = g[n - 1]
        out[n - 1] = acc
        for i in range(n - 2, -1, -1):
            acc += g[i]
            out[i] = acc
        return out

    return impl


# ------------------------------------------------------- scans along an axis
# An array of C layout seen as (outer, n, inner) lines: the element k of line (o, i) along the
# axis is at flat position (o * n + k) * inner + i.


@kernel
def _line_counts(shape, axis):
    outer = 1
    inner = 1
    for d in range(len(shape)):
        if d < axis:
            outer *= shape[d]
        elif d > axis:
            inner *= shape[d]
    return outer, shape[axis], inner


@kernel
def _cumsum_lines(xf, outer, n, inner, out, reverse):
    for o in range(outer):
        for i in range(inner):
            base = o * n * inner + i
            if n == 0:
                continue
            k = n - 1 if reverse else 0
            acc = xf[base + k * inner]
            out[base + k * inner] = acc
            for step in range(1, n):
                k = n - 1 - step if reverse else step
                acc += xf[base + k * inner]
                out[base + k * inner] = acc


@kernel
def _argsort_lines(xf, outer, n, inner, out):
    line = np.empty(n, xf.dtype)
    for o in range(outer):
        for i in range(inner):
            base = o * n * inner + i
            for k in range(n):
                line[k] = xf[base + k * inner]
            order = np.argsort(line)
            for k in range(n):
                out[base + k * inner] = order[k]


@kernel
def _permute_lines(xf, pf, outer, n, inner, out):
    for o in range(outer):
        for i in range(inner):
            base = o * n * inner + i
            for k in range(n):
                j = pf[base + k * inner]
                if j < 0 or j >= n:
                    raise IndexError("permute_along: index out of bounds")
                out[base + k * inner] = xf[base + j * inner]


def _check_axis(name, x, axis):
    if not (is_array(x) and x.ndim >= 1 and isinstance(axis, types.Integer)):
        fail(name, x, axis)


@overload(scans.cumsum_axis, jit_options=OPTS)
def _ol_cumsum_axis(x, axis):
    _check_axis("cumsum_axis", x, axis)
    dt = np_dtype(x) if np_dtype(x).kind in "fc" else np.dtype(np.int64)

    def impl(x, axis):
        outer, n, inner = _line_counts(np.array(x.shape), axis)
        xc = np.ascontiguousarray(x).astype(dt)
        out = np.empty(x.size, dt)
        _cumsum_lines(xc.reshape(x.size), outer, n, inner, out, False)
        return out.reshape(x.shape)

    return impl


@overload(scans.cumsum_axis_adjoint, jit_options=OPTS)
def _ol_cumsum_axis_adjoint(g, axis):
    _check_axis("cumsum_axis_adjoint", g, axis)
    dt = np_dtype(g)

    def impl(g, axis):
        outer, n, inner = _line_counts(np.array(g.shape), axis)
        gc = np.ascontiguousarray(g)
        out = np.empty(g.size, dt)
        _cumsum_lines(gc.reshape(g.size), outer, n, inner, out, True)
        return out.reshape(g.shape)

    return impl


@overload(scans.argsort_axis, jit_options=OPTS)
def _ol_argsort_axis(x, axis):
    _check_axis("argsort_axis", x, axis)

    def impl(x, axis):
        outer, n, inner = _line_counts(np.array(x.shape), axis)
        xc = np.ascontiguousarray(x)
        out = np.empty(x.size, np.int64)
        _argsort_lines(xc.reshape(x.size), outer, n, inner, out)
        return out.reshape(x.shape)

    return impl


@overload(scans.permute_along, jit_options=OPTS)
def _ol_permute_along(x, perm, axis):
    _check_axis("permute_along", x, axis)
    dt = np_dtype(x)

    def impl(x, perm, axis):
        if perm.shape != x.shape:
            raise ValueError("permute_along: the permutation must have the array's shape")
        outer, n, inner = _line_counts(np.array(x.shape), axis)
        xc = np.ascontiguousarray(x)
        pc = np.ascontiguousarray(perm)
        out = np.empty(x.size, dt)
        _permute_lines(xc.reshape(x.size), pc.reshape(x.size), outer, n, inner, out)
        return out.reshape(x.shape)

    return impl


@kernel
def _argsort_rows(x):
    out = np.empty(x.shape, np.int64)
    for i in range(x.shape[0]):
        out[i] = np.argsort(x[i], kind="mergesort")
    return out


@overload(scans.argsort_rows, jit_options=OPTS)
def _ol_argsort_rows(x):
    if not (is_array(x) and x.ndim == 2):
        return fail("argsort_rows", x)
    return lambda x: _argsort_rows(x)
