"""Numba implementations of the runtime helpers in :mod:`adcompile.runtime.helpers`.

Importing this module registers, with ``numba.extending.overload``, a
nopython implementation for every public helper.  After that, generated code
that calls ``rt.NAME(...)`` (``rt`` being ``adcompile.runtime.helpers``)
compiles under ``numba.njit`` (``cache=True`` included).  Import it once,
before compiling generated code.

Caching: with ``numba.njit(cache=True)`` the generated module must be a real
file *and* registered in ``sys.modules`` under its ``__name__`` (in every
process that compiles it or loads it from the cache).  Otherwise numba records
the module as ``'<dynamic>'`` and loading the cache in a fresh process fails
with ``ModuleNotFoundError: No module named '<dynamic>'``.  The kernels below
are themselves compiled with ``cache=True``.

Each overload dispatches at compile time on the numba types of its arguments
(scalar vs array, ndim, dtype, layout) and is type-stable: the return type
depends on argument types only, never on run-time shapes.  The heavy lifting
is done by small ``njit`` kernels with explicit loops.  Semantics (including
dtypes and aliasing) are documented on the plain-numpy helpers.
"""

import numpy as np
from numba import njit, types
from numba.core import errors
from numba.extending import overload
from numba.np.numpy_support import as_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from . import helper_cache, helpers
from . import special_kernels  # noqa: F401  (registers the special functions' numba versions)

helper_cache.install_locator()  # before the first cache=True below: the files go to adcompile's cache

# Options for the overload implementations and for the kernels (the numpy error
# model makes float division by zero give inf/nan, as in numpy). The overloads
# are cached on disk like the kernels (see helper_cache.py): numba keys each
# compiled implementation by its signature and the values of its closure, so a
# closure must hold only values that pickle the same in every process (numbers,
# dtypes, types), never a numba function (a dispatcher pickles with a
# per-process id, which would make every process miss and add an entry).
_OPTS = {"cache": True}
_kernel = njit(cache=True, nogil=True, error_model="numpy")
# Summation kernels may reassociate additions so that LLVM can vectorise them
# (numpy's own pairwise summation does not add up sequentially either).
_sum_kernel = njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})


# --------------------------------------------------------- compile-time utils


def _is_scalar(t):
    return isinstance(t, (types.Number, types.Boolean))


def _is_array(t):
    return isinstance(t, types.Array)


def _np_dtype(t):
    """numpy dtype of a numba scalar type or of an array type's elements."""
    if _is_array(t):
        t = t.dtype
    return as_dtype(types.unliteral(t))


def _grad_dtype(t):
    """Gradient dtype for a value of numba type ``t`` (see helpers docstring)."""
    dt = _np_dtype(t)
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def _fail(name, *args):
    raise errors.TypingError(f"rt.{name}: unsupported argument types {args}")


def _as_index_array(i):
    """Internal: an int gives a length-1 int64 array, a 1-D int array itself."""
    raise NotImplementedError  # only used from numba


@overload(_as_index_array, jit_options=_OPTS)
def _ol_as_index_array(i):
    if isinstance(i, types.Integer):
        return lambda i: np.full(1, i, np.int64)
    if _is_array(i) and i.ndim == 1 and isinstance(i.dtype, types.Integer):
        return lambda i: i
    return None


# --------------------------------------------------------- broadcast kernels


@_kernel
def _small_strides(big, small):
    """Element strides into a C array of shape ``small`` (padded to
    ``len(big)``) when iterating ``big``; 0 on broadcast axes."""
    nd = big.shape[0]
    st = np.zeros(nd, np.int64)
    s = 1
    for d in range(nd - 1, -1, -1):
        if small[d] == big[d]:
            st[d] = s
        elif small[d] != 1:
            raise ValueError("shapes are not broadcast-compatible")
        s *= small[d]
    return st


@_kernel
def _next_row(idx, big, st, off):
    """Advance the odometer ``idx`` over all axes but the last; new offset."""
    d = big.shape[0] - 2
    while d >= 0:
        idx[d] += 1
        off += st[d]
        if idx[d] < big[d]:
            return off
        off -= st[d] * big[d]
        idx[d] = 0
        d -= 1
    return off


@_sum_kernel
def _sum_into(src, big, small, out):
    """``out`` (flat C array of shape ``small``) += ``src`` (flat C, ``big``)."""
    st = _small_strides(big, small)
    n = src.shape[0]
    nd = big.shape[0]
    if n == 0:
        return
    if nd == 0:
        out[0] += src[0]
        return
    inner = big[nd - 1]
    sin = st[nd - 1]
    idx = np.zeros(nd, np.int64)
    off = 0
    i = 0
    while i < n:
        if sin == 0:  # summing along the last axis
            acc = src[i]
            for j in range(1, inner):
                acc += src[i + j]
            out[off] += acc
        else:  # sin == 1: a contiguous row
            for j in range(inner):
                out[off + j] += src[i + j]
        i += inner
        off = _next_row(idx, big, st, off)


@_kernel
def _broadcast_into(src, big, small, out):
    """``out`` (flat C array of shape ``big``) = ``src`` (flat C, ``small``)."""
    st = _small_strides(big, small)
    n = out.shape[0]
    nd = big.shape[0]
    if n == 0:
        return
    if nd == 0:
        out[0] = src[0]
        return
    inner = big[nd - 1]
    sin = st[nd - 1]
    idx = np.zeros(nd, np.int64)
    off = 0
    i = 0
    while i < n:
        if sin == 0:
            v = src[off]
            for j in range(inner):
                out[i + j] = v
        else:
            for j in range(inner):
                out[i + j] = src[off + j]
        i += inner
        off = _next_row(idx, big, st, off)


# ---------------------------------------------------------------- unbroadcast


@overload(helpers.unbroadcast, jit_options=_OPTS)
def _ol_unbroadcast(g, x):
    x_is_scalar = _is_scalar(x) or (_is_array(x) and x.ndim == 0)
    if x_is_scalar and _is_scalar(g):
        return lambda g, x: g
    if x_is_scalar and _is_array(g):
        return lambda g, x: g.sum()
    if not _is_array(x):
        return _fail("unbroadcast", g, x)
    if _is_scalar(g):
        dt = _np_dtype(g)
        return lambda g, x: np.full(x.shape, g, dt)
    if not _is_array(g) or g.ndim < x.ndim:
        return _fail("unbroadcast", g, x)
    dt = _np_dtype(g)
    nd = g.ndim
    xnd = x.ndim
    lead = nd - xnd
    if lead == 0:

        def impl(g, x):
            if g.shape == x.shape:
                return np.ascontiguousarray(g)
            return _unbroadcast_general(g, x)

        return impl

    def impl(g, x):
        return _unbroadcast_general(g, x)

    return impl


@njit(cache=True)
def _aligned_shapes(big_shape, small_shape):
    """Both shapes as int arrays of the bigger one's length, the smaller padded with leading
    ones (numpy's broadcasting alignment)."""
    nd, lead = len(big_shape), len(big_shape) - len(small_shape)
    big = np.empty(nd, np.int64)
    small = np.ones(nd, np.int64)
    for d in range(nd):
        big[d] = big_shape[d]
    for d in range(nd - lead):
        small[lead + d] = small_shape[d]
    return big, small


def _unbroadcast_general(g, x):
    raise NotImplementedError  # only used from numba


@overload(_unbroadcast_general, jit_options=_OPTS)
def _ol_unbroadcast_general(g, x):
    dt = _np_dtype(g)

    def impl(g, x):
        big, small = _aligned_shapes(g.shape, x.shape)
        out = np.zeros(x.size, dt)
        gc = np.ascontiguousarray(g)
        _sum_into(gc.reshape(gc.size), big, small, out)
        return out.reshape(x.shape)

    return impl


# --------------------------------------------------------- broadcast_to_shape


@overload(helpers.broadcast_to_shape, jit_options=_OPTS)
def _ol_broadcast_to_shape(g, x):
    if not _is_array(x):
        return _fail("broadcast_to_shape", g, x)
    if _is_scalar(g):
        dt = _grad_dtype(x)
        return lambda g, x: np.full(x.shape, g, dt)
    if not _is_array(g) or g.ndim > x.ndim:
        return _fail("broadcast_to_shape", g, x)
    dt = _np_dtype(g)

    def impl(g, x):
        big, small = _aligned_shapes(x.shape, g.shape)
        out = np.empty(x.size, dt)
        gc = np.ascontiguousarray(g)
        _broadcast_into(gc.reshape(gc.size), big, small, out)
        return out.reshape(x.shape)

    return impl


# ---------------------------------------------------------------- expand_axis


@overload(helpers.expand_axis, jit_options=_OPTS)
def _ol_expand_axis(x, axis):
    if not isinstance(axis, types.Integer):
        return _fail("expand_axis", x, axis)
    if _is_scalar(x):
        dt = _np_dtype(x)

        def impl_scalar(x, axis):
            if axis != 0 and axis != -1:
                raise ValueError("expand_axis: axis out of range")
            return np.full(1, x, dt)

        return impl_scalar
    if not _is_array(x):
        return _fail("expand_axis", x, axis)
    nd = x.ndim
    ndp1 = nd + 1  # a plain constant: to_fixed_tuple needs a literal

    def impl(x, axis):
        a = axis + nd + 1 if axis < 0 else axis
        if a < 0 or a > nd:
            raise ValueError("expand_axis: axis out of range")
        shp = np.empty(nd + 1, np.int64)
        j = 0
        for d in range(nd + 1):
            if d == a:
                shp[d] = 1
            else:
                shp[d] = x.shape[j]
                j += 1
        return np.ascontiguousarray(x).reshape(to_fixed_tuple(shp, ndp1))

    return impl


# ----------------------------------------------------------------- reductions


# Kernels: ``xf`` is a flat C array viewed as (outer, n, inner); ``out`` is
# flat (outer, inner).  ``inner == 1`` (reducing the last axis) gets a scalar
# accumulator; otherwise whole contiguous rows are combined.


@_sum_kernel
def _red_sum(xf, outer, n, inner, out):
    if inner == 1:
        for o in range(outer):
            acc = out.dtype.type(0)
            for k in range(o * n, (o + 1) * n):
                acc += xf[k]
            out[o] = acc
        return
    out[:] = 0
    for o in range(outer):
        ob = o * inner
        for k in range(n):
            xb = (o * n + k) * inner
            for i in range(inner):
                out[ob + i] += xf[xb + i]


@_kernel
def _red_mean(xf, outer, n, inner, out):
    _red_sum(xf, outer, n, inner, out)
    for j in range(out.shape[0]):
        out[j] = out[j] / n


@_sum_kernel
def _red_prod(xf, outer, n, inner, out):
    if inner == 1:
        for o in range(outer):
            acc = out.dtype.type(1)
            for k in range(o * n, (o + 1) * n):
                acc *= xf[k]
            out[o] = acc
        return
    out[:] = 1
    for o in range(outer):
        ob = o * inner
        for k in range(n):
            xb = (o * n + k) * inner
            for i in range(inner):
                out[ob + i] *= xf[xb + i]


@_kernel
def _take_max(m, v):
    """max(m, v), NaN propagating (written branch-free for vectorisation)."""
    return v if (v > m or (v != v and m == m)) else m


@_kernel
def _take_min(m, v):
    """min(m, v), NaN propagating."""
    return v if (v < m or (v != v and m == m)) else m


@_kernel
def _red_max(xf, outer, n, inner, out):
    if n == 0 and outer * inner > 0:
        raise ValueError("zero-size array to reduction operation max_axis which has no identity")
    if inner == 1:
        for o in range(outer):
            m = xf[o * n]
            for k in range(o * n + 1, (o + 1) * n):
                m = _take_max(m, xf[k])
            out[o] = m
        return
    for o in range(outer):
        ob = o * inner
        out[ob : ob + inner] = xf[o * n * inner : (o * n + 1) * inner]
        for k in range(1, n):
            xb = (o * n + k) * inner
            for i in range(inner):
                out[ob + i] = _take_max(out[ob + i], xf[xb + i])


@_kernel
def _red_min(xf, outer, n, inner, out):
    if n == 0 and outer * inner > 0:
        raise ValueError("zero-size array to reduction operation min_axis which has no identity")
    if inner == 1:
        for o in range(outer):
            m = xf[o * n]
            for k in range(o * n + 1, (o + 1) * n):
                m = _take_min(m, xf[k])
            out[o] = m
        return
    for o in range(outer):
        ob = o * inner
        out[ob : ob + inner] = xf[o * n * inner : (o * n + 1) * inner]
        for k in range(1, n):
            xb = (o * n + k) * inner
            for i in range(inner):
                out[ob + i] = _take_min(out[ob + i], xf[xb + i])


_REDUCTION_KERNELS = (_red_sum, _red_mean, _red_prod, _red_max, _red_min)


def _reduce_flat(kind, xf, outer, n, inner, out):
    """Internal: ``_REDUCTION_KERNELS[kind](xf, outer, n, inner, out)``; ``kind`` a constant."""
    raise NotImplementedError  # only used from numba


@overload(_reduce_flat)
def _ol_reduce_flat(kind, xf, outer, n, inner, out):
    if not isinstance(kind, types.IntegerLiteral):
        raise errors.RequireLiteralValue(kind)  # numba retries with the literal
    kernel = _REDUCTION_KERNELS[kind.literal_value]
    return lambda kind, xf, outer, n, inner, out: kernel(xf, outer, n, inner, out)


def _register_reduction(pyfunc, np_reduce, kind, name):
    """Register the overload of an ``*_axis`` helper (``np_reduce`` fixes the
    result dtype, ``_REDUCTION_KERNELS[kind](xflat, outer, n, inner, out)`` does
    the work; the closure holds the number ``kind``, not the kernel: see _OPTS)."""

    @overload(pyfunc, jit_options=_OPTS)
    def _ol(x, axis):
        if not _is_array(x) or x.ndim == 0 or not isinstance(axis, types.Integer):
            return _fail(name, x, axis)
        nd = x.ndim
        ndm1 = nd - 1  # a plain constant: to_fixed_tuple needs a literal
        res_dt = np.asarray(np_reduce(np.ones((1,) * nd, _np_dtype(x)), axis=0)).dtype

        if nd == 1:

            def impl1(x, axis):
                if axis != 0 and axis != -1:
                    raise ValueError("axis out of range")
                xc = np.ascontiguousarray(x)
                out = np.empty(1, res_dt)
                _reduce_flat(kind, xc, 1, xc.shape[0], 1, out)
                return out[0]

            return impl1

        def impl(x, axis):
            a = axis + nd if axis < 0 else axis
            if a < 0 or a >= nd:
                raise ValueError("axis out of range")
            outer = 1
            inner = 1
            oshape = np.empty(nd - 1, np.int64)
            j = 0
            for d in range(nd):
                if d < a:
                    outer *= x.shape[d]
                elif d > a:
                    inner *= x.shape[d]
                if d != a:
                    oshape[j] = x.shape[d]
                    j += 1
            xc = np.ascontiguousarray(x)
            out = np.empty(outer * inner, res_dt)
            _reduce_flat(kind, xc.reshape(xc.size), outer, x.shape[a], inner, out)
            return out.reshape(to_fixed_tuple(oshape, ndm1))

        return impl


for _kind, (_helper, _np_reduce) in enumerate(((helpers.sum_axis, np.sum), (helpers.mean_axis, np.mean),
                                               (helpers.prod_axis, np.prod), (helpers.max_axis, np.max),
                                               (helpers.min_axis, np.min))):
    _register_reduction(_helper, _np_reduce, _kind, _helper.__name__)


# -------------------------------------------------------------------- scatter


@_kernel
def _wrap_index(i, n):
    j = i + n if i < 0 else i
    if j < 0 or j >= n:
        raise IndexError("scatter_add: index out of bounds")
    return j


def _is_index(t):
    """An int, or a 1-D int array."""
    return isinstance(t, types.Integer) or (
        _is_array(t) and t.ndim == 1 and isinstance(t.dtype, types.Integer)
    )


@overload(helpers.scatter_add, jit_options=_OPTS)
def _ol_scatter_add(target, idx, values):
    # np.broadcast_to gives a zero-stride view (no copy), also for scalars.
    if not (_is_array(target) and 1 <= target.ndim <= 3 and _is_index(idx)):
        return _fail("scatter_add", target, idx, values)
    if not (_is_scalar(values) or _is_array(values)):
        return _fail("scatter_add", target, idx, values)
    nd = target.ndim

    if nd == 1:

        def impl1(target, idx, values):
            ia = _as_index_array(idx)
            m = ia.shape[0]
            n = target.shape[0]
            v = np.broadcast_to(values, (m,))
            for k in range(m):
                target[_wrap_index(ia[k], n)] += v[k]

        return impl1

    if nd == 2:

        def impl2(target, idx, values):
            ia = _as_index_array(idx)
            m = ia.shape[0]
            n, c = target.shape
            v = np.broadcast_to(values, (m, c))
            for k in range(m):
                r = _wrap_index(ia[k], n)
                for j in range(c):
                    target[r, j] += v[k, j]

        return impl2

    def impl3(target, idx, values):
        ia = _as_index_array(idx)
        m = ia.shape[0]
        n, c1, c2 = target.shape
        v = np.broadcast_to(values, (m, c1, c2))
        for k in range(m):
            r = _wrap_index(ia[k], n)
            for j in range(c1):
                for l in range(c2):
                    target[r, j, l] += v[k, j, l]

    return impl3


@overload(helpers.scatter_add2, jit_options=_OPTS)
def _ol_scatter_add2(target, i0, i1, values):
    if not (_is_array(target) and target.ndim == 2 and _is_index(i0) and _is_index(i1)):
        return _fail("scatter_add2", target, i0, i1, values)
    if not (_is_scalar(values) or (_is_array(values) and values.ndim <= 1)):
        return _fail("scatter_add2", target, i0, i1, values)

    def impl(target, i0, i1, values):
        a0 = _as_index_array(i0)
        a1 = _as_index_array(i1)
        m = a1.shape[0] if a0.shape[0] == 1 else a0.shape[0]
        b0 = np.broadcast_to(a0, (m,))
        b1 = np.broadcast_to(a1, (m,))
        v = np.broadcast_to(values, (m,))
        n0, n1 = target.shape
        for k in range(m):
            target[_wrap_index(b0[k], n0), _wrap_index(b1[k], n1)] += v[k]

    return impl


# --------------------------------------------------------------------- matmul


@_kernel
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


@overload(_as_c, jit_options=_OPTS)
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


@overload(_batch_item, jit_options=_OPTS)
def _ol_batch_item(x, i):
    """Internal: matrix ``i`` of a stack (the only one of a stack of length 1), or ``x`` itself."""
    if x.ndim == 3:
        return lambda x, i: x[min(i, x.shape[0] - 1)]
    return lambda x, i: x


def _batched_matmul(a, b):
    dt = np.result_type(_np_dtype(a), _np_dtype(b))
    an, bn = a.ndim, b.ndim

    def impl(a, b):
        na = a.shape[0] if an == 3 else 1
        nb = b.shape[0] if bn == 3 else 1
        if na != nb and na != 1 and nb != 1:
            raise ValueError("matmul: the stacks of matrices do not broadcast")
        out = np.empty((max(na, nb), a.shape[an - 2], b.shape[bn - 1]), dt)
        for i in range(out.shape[0]):
            out[i] = helpers.matmul(_batch_item(a, i), _batch_item(b, i))
        return out

    return impl


@overload(helpers.check_matmul_shapes, jit_options=_OPTS)
def _ol_check_matmul_shapes(a, b):
    if not (_is_array(a) and _is_array(b)):
        return _fail("check_matmul_shapes", a, b)
    an, contracted_axis = a.ndim, max(b.ndim - 2, 0)

    def impl(a, b):
        if a.shape[an - 1] != b.shape[contracted_axis]:
            raise ValueError("matmul: shapes not aligned (the contracted axes differ in length)")
        return True

    return impl


@overload(helpers.check_assertion, jit_options=_OPTS, prefer_literal=True)
def _ol_check_assertion(condition, message):
    """The message is a string literal of the generated code (or None): raised as a constant."""
    if isinstance(message, types.NoneType) or message is None:
        def impl(condition, message):
            if not condition:
                raise AssertionError()
            return True
        return impl
    if not isinstance(message, types.StringLiteral):
        return _fail("check_assertion", condition, message)
    text = message.literal_value

    def impl(condition, message):
        if not condition:
            raise AssertionError(text)
        return True

    return impl


@_kernel
def _address_range(start, shape, strides, itemsize):
    """[low, high) of the bytes an array with this start address, shape and strides touches."""
    low, high = start, start + itemsize
    for axis in range(len(shape)):
        reach = (shape[axis] - 1) * strides[axis]
        if reach < 0:
            low += reach
        else:
            high += reach
    return low, high


@overload(helpers.may_share_memory, jit_options=_OPTS)
def _ol_may_share_memory(a, b):
    if not (_is_array(a) and _is_array(b)):
        return _fail("may_share_memory", a, b)

    def impl(a, b):
        if a.size == 0 or b.size == 0:
            return False
        a_low, a_high = _address_range(a.ctypes.data, a.shape, a.strides, a.itemsize)
        b_low, b_high = _address_range(b.ctypes.data, b.shape, b.strides, b.itemsize)
        return a_low < b_high and b_low < a_high

    return impl


@overload(helpers.matmul, jit_options=_OPTS)
def _ol_matmul(a, b):
    if _is_array(a) and _is_array(b) and 3 in (a.ndim, b.ndim) and min(a.ndim, b.ndim) >= 2:
        return _batched_matmul(a, b)
    if not (_is_array(a) and _is_array(b) and a.ndim in (1, 2) and b.ndim in (1, 2)):
        return _fail("matmul", a, b)
    dt = np.result_type(_np_dtype(a), _np_dtype(b))
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


@overload(_squeeze_matmul, jit_options=_OPTS)
def _ol_squeeze_matmul(out, a, b):
    """Internal: drop the axes of 2-D ``out`` that 1-D operands did not have."""
    if a.ndim == 1 and b.ndim == 1:
        return lambda out, a, b: out[0, 0]
    if a.ndim == 1:
        return lambda out, a, b: out[0]
    if b.ndim == 1:
        return lambda out, a, b: out.reshape(out.shape[0])
    return lambda out, a, b: out


# ----------------------------------------------------------------------- misc


@overload(helpers.range_len, jit_options=_OPTS)
def _ol_range_len(start, stop, step):
    if not all(isinstance(t, types.Integer) for t in (start, stop, step)):
        return _fail("range_len", start, stop, step)

    def impl(start, stop, step):
        lo = np.int64(start)
        hi = np.int64(stop)
        st = np.int64(step)
        if st == 0:
            raise ValueError("range() arg 3 must not be zero")
        if st > 0:
            n = (hi - lo + st - 1) // st
        else:
            n = (lo - hi - st - 1) // (-st)
        return n if n > 0 else np.int64(0)

    return impl


@overload(helpers.new_tape, jit_options=_OPTS)
def _ol_new_tape(like):
    if _is_array(like):
        dt = _np_dtype(like)
        shape0 = (0,) * like.ndim

        def impl_array(like):
            # any layout (a reversed slice step gives numba's 'A'), so that a view goes on
            # the tape as the view, as in Python: the backward sweep restores its base
            tape = [np.empty(shape0, dt)[::-1]]
            tape.pop()
            return tape

        return impl_array
    if _is_scalar(like):

        def impl_scalar(like):
            tape = [like]
            tape.pop()
            return tape

        return impl_scalar
    return _fail("new_tape", like)


@overload(helpers.push, jit_options=_OPTS)
def _ol_push(tape, v):
    def impl(tape, v):
        tape.append(v)

    return impl


@overload(helpers.zeros_like_any, jit_options=_OPTS)
def _ol_zeros_like_any(x):
    if _is_array(x):
        dt = _np_dtype(x)
        return lambda x: np.zeros(x.shape, dt)
    if isinstance(x, (types.Float, types.Complex)):
        zero = _np_dtype(x).type(0)
        return lambda x: zero
    if _is_scalar(x):
        return lambda x: 0.0
    return _fail("zeros_like_any", x)


@overload(helpers.cast_like, jit_options=_OPTS)
def _ol_cast_like(g, x):
    if not (_is_scalar(x) or _is_array(x)):
        return _fail("cast_like", g, x)
    dt = _grad_dtype(x)
    ctor = dt.type
    if _is_array(g):
        if _np_dtype(g) == dt:
            return lambda g, x: g
        return lambda g, x: g.astype(ctor)
    if _is_scalar(g):
        return lambda g, x: ctor(g)
    return _fail("cast_like", g, x)


@overload(helpers.diag_adjoint, jit_options=_OPTS)
def _ol_diag_adjoint(g, x):
    if not (_is_array(g) and _is_array(x)):
        return _fail("diag_adjoint", g, x)
    dt = _np_dtype(g)
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
    return _fail("diag_adjoint", g, x)


@overload(helpers.cumsum_adjoint, jit_options=_OPTS)
def _ol_cumsum_adjoint(g):
    if not (_is_array(g) and g.ndim == 1):
        return _fail("cumsum_adjoint", g)
    dt = _np_dtype(g)

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


# ------------------------------------------------------------ gathers


@overload(helpers.index_add, jit_options=_OPTS)
def _ol_index_add(target, idx, values):
    if not (_is_array(target) and 1 <= target.ndim <= 3 and _is_index(idx)):
        return _fail("index_add", target, idx, values)
    dt = np.result_type(_np_dtype(target), _np_dtype(values))

    def impl(target, idx, values):
        out = target.astype(dt)
        helpers.scatter_add(out, idx, values)
        return out

    return impl
# ------------------------------------------------------- scans along an axis
# An array of C layout seen as (outer, n, inner) lines: the element k of line (o, i) along the
# axis is at flat position (o * n + k) * inner + i.


@_kernel
def _line_counts(shape, axis):
    outer = 1
    inner = 1
    for d in range(len(shape)):
        if d < axis:
            outer *= shape[d]
        elif d > axis:
            inner *= shape[d]
    return outer, shape[axis], inner


@_kernel
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


@_kernel
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


@_kernel
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
    if not (_is_array(x) and x.ndim >= 1 and isinstance(axis, types.Integer)):
        _fail(name, x, axis)


@overload(helpers.cumsum_axis, jit_options=_OPTS)
def _ol_cumsum_axis(x, axis):
    _check_axis("cumsum_axis", x, axis)
    dt = _np_dtype(x) if _np_dtype(x).kind in "fc" else np.dtype(np.int64)

    def impl(x, axis):
        outer, n, inner = _line_counts(np.array(x.shape), axis)
        xc = np.ascontiguousarray(x).astype(dt)
        out = np.empty(x.size, dt)
        _cumsum_lines(xc.reshape(x.size), outer, n, inner, out, False)
        return out.reshape(x.shape)

    return impl


@overload(helpers.cumsum_axis_adjoint, jit_options=_OPTS)
def _ol_cumsum_axis_adjoint(g, axis):
    _check_axis("cumsum_axis_adjoint", g, axis)
    dt = _np_dtype(g)

    def impl(g, axis):
        outer, n, inner = _line_counts(np.array(g.shape), axis)
        gc = np.ascontiguousarray(g)
        out = np.empty(g.size, dt)
        _cumsum_lines(gc.reshape(g.size), outer, n, inner, out, True)
        return out.reshape(g.shape)

    return impl


@overload(helpers.argsort_axis, jit_options=_OPTS)
def _ol_argsort_axis(x, axis):
    _check_axis("argsort_axis", x, axis)

    def impl(x, axis):
        outer, n, inner = _line_counts(np.array(x.shape), axis)
        xc = np.ascontiguousarray(x)
        out = np.empty(x.size, np.int64)
        _argsort_lines(xc.reshape(x.size), outer, n, inner, out)
        return out.reshape(x.shape)

    return impl


@overload(helpers.permute_along, jit_options=_OPTS)
def _ol_permute_along(x, perm, axis):
    _check_axis("permute_along", x, axis)
    dt = _np_dtype(x)

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


# ------------------------------------------------------------- decompositions


@overload(helpers.singular_values, jit_options=_OPTS)
def _ol_singular_values(a):
    if not (_is_array(a) and a.ndim == 2):
        return _fail("singular_values", a)
    # numba's svd has no compute_uv: the vectors are computed and dropped
    return lambda a: np.linalg.svd(a, full_matrices=False)[1]


@overload(helpers.square_qr_factor, jit_options=_OPTS)
def _ol_square_qr_factor(r):
    if not (_is_array(r) and r.ndim == 2):
        return _fail("square_qr_factor", r)

    def impl(r):
        if r.shape[0] != r.shape[1]:
            raise ValueError("the derivative of np.linalg.qr needs a matrix with at least as many rows as columns, "
                             "not a wide one (its shape has more columns; use the qr of its transpose)")
        return r

    return impl


@overload(helpers.tril_half_diagonal, jit_options=_OPTS)
def _ol_tril_half_diagonal(x):
    if not (_is_array(x) and x.ndim == 2):
        return _fail("tril_half_diagonal", x)
    dt = _np_dtype(x)

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
# ------------------------------------------------------- splitting and sorting


@overload(helpers.section_length, jit_options=_OPTS)
def _ol_section_length(n, sections):
    def impl(n, sections):
        if sections <= 0 or n % sections:
            raise ValueError("array split does not result in an equal division")
        return n // sections

    return impl


@_kernel
def _argsort_rows(x):
    out = np.empty(x.shape, np.int64)
    for i in range(x.shape[0]):
        out[i] = np.argsort(x[i], kind="mergesort")
    return out


@overload(helpers.argsort_rows, jit_options=_OPTS)
def _ol_argsort_rows(x):
    if not (_is_array(x) and x.ndim == 2):
        return _fail("argsort_rows", x)
    return lambda x: _argsort_rows(x)
