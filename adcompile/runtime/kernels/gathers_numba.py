"""numba versions of the kernels of ``gathers.py`` (scatter-adds).

Importing this module registers, with ``numba.extending.overload``, a nopython implementation of
each function of ``gathers.py``, so that generated code calling ``rt.<name>`` compiles under
``numba.njit``; the loops are small ``njit`` kernels, cached on disk (``numba_support.py``).
"""
import numpy as np
from numba import types
from numba.extending import overload

from . import gathers
from .numba_support import OPTS, as_index_array, fail, is_array, is_scalar, kernel, np_dtype


# -------------------------------------------------------------------- scatter


@kernel
def _wrap_index(i, n):
    j = i + n if i < 0 else i
    if j < 0 or j >= n:
        raise IndexError("scatter_add: index out of bounds")
    return j


def _is_index(t):
    """An int, or a 1-D int array."""
    return isinstance(t, types.Integer) or (
        is_array(t) and t.ndim == 1 and isinstance(t.dtype, types.Integer)
    )


def _is_index_block(t):
    """An int array of two or more dimensions (``weight[tokens]`` of an embedding)."""
    return is_array(t) and t.ndim > 1 and isinstance(t.dtype, types.Integer)


@overload(gathers.scatter_add, jit_options=OPTS)
def _ol_scatter_add(target, idx, values):
    if is_array(target) and 1 <= target.ndim <= 3 and _is_index_block(idx):

        def impl_block(target, idx, values):  # the indices in row-major order, each with its row of values
            m = idx.size
            rows = np.ascontiguousarray(np.broadcast_to(values, idx.shape + target.shape[1:]))
            gathers.scatter_add(target, np.ascontiguousarray(idx).reshape(m), rows.reshape((m,) + target.shape[1:]))

        return impl_block
    # np.broadcast_to gives a zero-stride view (no copy), also for scalars.
    if not (is_array(target) and 1 <= target.ndim <= 3 and _is_index(idx)):
        return fail("scatter_add", target, idx, values)
    if not (is_scalar(values) or is_array(values)):
        return fail("scatter_add", target, idx, values)
    nd = target.ndim

    if nd == 1:

        def impl1(target, idx, values):
            ia = as_index_array(idx)
            m = ia.shape[0]
            n = target.shape[0]
            v = np.broadcast_to(values, (m,))
            for k in range(m):
                target[_wrap_index(ia[k], n)] += v[k]

        return impl1

    if nd == 2:

        def impl2(target, idx, values):
            ia = as_index_array(idx)
            m = ia.shape[0]
            n, c = target.shape
            v = np.broadcast_to(values, (m, c))
            for k in range(m):
                r = _wrap_index(ia[k], n)
                for j in range(c):
                    target[r, j] += v[k, j]

        return impl2

    def impl3(target, idx, values):
        ia = as_index_array(idx)
        m = ia.shape[0]
        n, c1, c2 = target.shape
        v = np.broadcast_to(values, (m, c1, c2))
        for k in range(m):
            r = _wrap_index(ia[k], n)
            for j in range(c1):
                for l in range(c2):
                    target[r, j, l] += v[k, j, l]

    return impl3


@overload(gathers.scatter_add2, jit_options=OPTS)
def _ol_scatter_add2(target, i0, i1, values):
    if not (is_array(target) and target.ndim == 2 and _is_index(i0) and _is_index(i1)):
        return fail("scatter_add2", target, i0, i1, values)
    if not (is_scalar(values) or (is_array(values) and values.ndim <= 1)):
        return fail("scatter_add2", target, i0, i1, values)

    def impl(target, i0, i1, values):
        a0 = as_index_array(i0)
        a1 = as_index_array(i1)
        m = a1.shape[0] if a0.shape[0] == 1 else a0.shape[0]
        b0 = np.broadcast_to(a0, (m,))
        b1 = np.broadcast_to(a1, (m,))
        v = np.broadcast_to(values, (m,))
        n0, n1 = target.shape
        for k in range(m):
            target[_wrap_index(b0[k], n0), _wrap_index(b1[k], n1)] += v[k]

    return impl


@overload(gathers.index_add, jit_options=OPTS)
def _ol_index_add(target, idx, values):
    if not (is_array(target) and 1 <= target.ndim <= 3 and _is_index(idx)):
        return fail("index_add", target, idx, values)
    dt = np.result_type(np_dtype(target), np_dtype(values))

    def impl(target, idx, values):
        out = target.astype(dt)
        gathers.scatter_add(out, idx, values)
        return out

    return impl
