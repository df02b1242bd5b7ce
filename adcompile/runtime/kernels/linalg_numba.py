"""numba versions of the kernels of ``linalg.py`` (linear algebra).

Importing this module registers, with ``numba.extending.overload``, a nopython implementation of
each function of ``linalg.py``, so that generated code calling ``rt.<name>`` compiles under
``numba.njit``; the loops are small ``njit`` kernels, cached on disk (``numba_support.py``).
"""
import numpy as np
from numba import types
from numba.extending import overload

from . import linalg
from .numba_support import OPTS, fail, is_array, kernel, np_dtype


# --------------------------------------------------------------------- matmul


@kernel
def _matmul_loops(a, b, out):
    """``out = a @ b`` for 2-D C arrays (non-BLAS dtypes such as ints)."""
    m, k = a.shape
    n = b.shape[1]
    for i in range(m):
        for j in range(n):
            out[i, j] = 0
        for p in range(k):
            aip = a[i, p]
            for j in range(n):
                out[i, j] += aip * b[p, j]


def _as_c(a, dt):
    raise NotImplementedError  # only used from numba


@overload(_as_c, jit_options=OPTS)
def _ol_as_c(a, dt):
    """Internal: ``a`` as a C-contiguous array of the dtype class ``dt``."""
    target = dt.dtype if isinstance(dt, types.NumberClass) else dt
    if a.dtype == target:
        if a.layout in ("C", "F"):  # BLAS takes either order: no copy (x.T is F-ordered)
            return lambda a, dt: a
        return lambda a, dt: np.ascontiguousarray(a)
    return lambda a, dt: np.ascontiguousarray(a.astype(dt))


def _batch_item(x, i):
    raise NotImplementedError  # only used from numba


@overload(_batch_item, jit_options=OPTS)
def _ol_batch_item(x, i):
    """Internal: matrix ``i`` of a stack (the only one of a stack of length 1), or ``x`` itself."""
    if x.ndim == 3:
        return lambda x, i: x[min(i, x.shape[0] - 1)]
    return lambda x, i: x


def _batched_matmul(a, b):
    dt = np.result_type(np_dtype(a), np_dtype(b))
    an, bn = a.ndim, b.ndim

    def impl(a, b):
        na = a.shape[0] if an == 3 else 1
        nb = b.shape[0] if bn == 3 else 1
        if na != nb and na != 1 and nb != 1:
            raise ValueError("matmul: the stacks of matrices do not broadcast")
        out = np.empty((max(na, nb), a.shape[an - 2], b.shape[bn - 1]), dt)
        for i in range(out.shape[0]):
            out[i] = linalg.matmul(_batch_item(a, i), _batch_item(b, i))
        return out

    return impl


@overload(linalg.check_matmul_shapes, jit_options=OPTS)
def _ol_check_matmul_shapes(a, b):
    if not (is_array(a) and is_array(b)):
        return fail("check_matmul_shapes", a, b)
    an, contracted_axis = a.ndim, max(b.ndim - 2, 0)

    def impl(a, b):
        if a.shape[an - 1] != b.shape[contracted_axis]:
            raise ValueError("matmul: shapes not aligned (the contracted axes differ in length)")
        return True

    return impl


@overload(linalg.matmul, jit_options=OPTS)
def _ol_matmul(a, b):
    if is_array(a) and is_array(b) and 3 in (a.ndim, b.ndim) and min(a.ndim, b.ndim) >= 2:
        return _batched_matmul(a, b)
    if not (is_array(a) and is_array(b) and a.ndim in (1, 2) and b.ndim in (1, 2)):
        return fail("matmul", a, b)
    dt = np.result_type(np_dtype(a), np_dtype(b))
    ctor = dt.type
    an, bn = a.ndim, b.ndim
    if dt.kind in "fc":

        def impl_blas(a, b):
            if a.shape[an - 1] != b.shape[0]:
                raise ValueError("matmul: shapes not aligned")
            return np.dot(_as_c(a, ctor), _as_c(b, ctor))

        return impl_blas

    def impl_loops(a, b):
        if a.shape[an - 1] != b.shape[0]:
            raise ValueError("matmul: shapes not aligned")
        ac = _as_c(a, ctor)
        bc = _as_c(b, ctor)
        a2 = ac.reshape((1, ac.size)) if an == 1 else ac.reshape((ac.shape[0], ac.shape[an - 1]))
        b2 = bc.reshape((bc.size, 1)) if bn == 1 else bc.reshape((bc.shape[0], bc.shape[bn - 1]))
        out = np.empty((a2.shape[0], b2.shape[1]), dt)
        _matmul_loops(a2, b2, out)
        return _squeeze_matmul(out, a, b)

    return impl_loops


def _squeeze_matmul(out, a, b):
    raise NotImplementedError  # only used from numba


@overload(_squeeze_matmul, jit_options=OPTS)
def _ol_squeeze_matmul(out, a, b):
    """Internal: drop the axes of 2-D ``out`` that 1-D operands did not have."""
    if a.ndim == 1 and b.ndim == 1:
        return lambda out, a, b: out[0, 0]
    if a.ndim == 1:
        return lambda out, a, b: out[0]
    if b.ndim == 1:
        return lambda out, a, b: out.reshape(out.shape[0])
    return lambda out, a, b: out


@overload(linalg.diag_adjoint, jit_options=OPTS)
def _ol_diag_adjoint(g, x):
    if not (is_array(g) and is_array(x)):
        return fail("diag_adjoint", g, x)
    dt = np_dtype(g)
    if x.ndim == 1 and g.ndim == 2:

        def impl_vec(g, x):
            n = x.shape[0]
            if g.shape[0] < n or g.shape[1] < n:
                raise ValueError("diag_adjoint: g too small")
            out = np.empty(n, dt)
            for i in range(n):
                out[i] = g[i, i]
            return out

        return impl_vec
    if x.ndim == 2 and g.ndim == 1:

        def impl_mat(g, x):
            out = np.zeros(x.shape, dt)
            k = min(x.shape[0], x.shape[1])
            if g.shape[0] != k:
                raise ValueError("diag_adjoint: g has the wrong length")
            for i in range(k):
                out[i, i] = g[i]
            return out

        return impl_mat
    return fail("diag_adjoint", g, x)


# ------------------------------------------------------------- decompositions


@overload(linalg.singular_values, jit_options=OPTS)
def _ol_singular_values(a):
    if not (is_array(a) and a.ndim == 2):
        return fail("singular_values", a)
    # numba's svd has no compute_uv: the vectors are computed and dropped
    return lambda a: np.linalg.svd(a, full_matrices=False)[1]


@overload(linalg.square_qr_factor, jit_options=OPTS)
def _ol_square_qr_factor(r):
    if not (is_array(r) and r.ndim == 2):
        return fail("square_qr_factor", r)

    def impl(r):
        if r.shape[0] != r.shape[1]:
            raise ValueError("the derivative of np.linalg.qr needs a matrix with at least as many rows as columns, "
                             "not a wide one (its shape has more columns; use the qr of its transpose)")
        return r

    return impl


@overload(linalg.tril_half_diagonal, jit_options=OPTS)
def _ol_tril_half_diagonal(x):
    if not (is_array(x) and x.ndim == 2):
        return fail("tril_half_diagonal", x)
    dt = np_dtype(x)

    def impl(x):
        n, m = x.shape
        out = np.zeros((n, m), dt)
        for i in range(n):
            for j in range(min(i, m)):
                out[i, j] = x[i, j]
            if i < m:
                out[i, i] = 0.5 * x[i, i]
        return out

    return impl
