"""numba versions of the kernels of ``broadcasting.py`` (broadcasting and its adjoint).

Importing this module registers, with ``numba.extending.overload``, a nopython implementation of
each function of ``broadcasting.py``, so that generated code calling ``rt.<name>`` compiles under
``numba.njit``; the loops are small ``njit`` kernels, cached on disk (``numba_support.py``).
"""
import numpy as np
from numba import njit, types
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

from . import broadcasting
from .numba_support import OPTS, fail, grad_dtype, is_array, is_scalar, kernel, np_dtype, sum_kernel


# --------------------------------------------------------- broadcast kernels


@kernel
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


@kernel
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


@sum_kernel
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


@kernel
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


@overload(broadcasting.unbroadcast, jit_options=OPTS)
def _ol_unbroadcast(g, x):
    x_is_scalar = is_scalar(x) or (is_array(x) and x.ndim == 0)
    if x_is_scalar and is_scalar(g):
        return lambda g, x: g
    if x_is_scalar and is_array(g):
        return lambda g, x: g.sum()
    if not is_array(x):
        return fail("unbroadcast", g, x)
    if is_scalar(g):
        dt = np_dtype(g)
        return lambda g, x: np.full(x.shape, g, dt)
    if not is_array(g) or g.ndim < x.ndim:
        return fail("unbroadcast", g, x)
    dt = np_dtype(g)
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


@overload(_unbroadcast_general, jit_options=OPTS)
def _ol_unbroadcast_general(g, x):
    dt = np_dtype(g)

    def impl(g, x):
        big, small = _aligned_shapes(g.shape, x.shape)
        out = np.zeros(x.size, dt)
        gc = np.ascontiguousarray(g)
        _sum_into(gc.reshape(gc.size), big, small, out)
        return out.reshape(x.shape)

    return impl


# --------------------------------------------------------- broadcast_to_shape


@overload(broadcasting.broadcast_to_shape, jit_options=OPTS)
def _ol_broadcast_to_shape(g, x):
    if not is_array(x):
        return fail("broadcast_to_shape", g, x)
    if is_scalar(g):
        dt = grad_dtype(x)
        return lambda g, x: np.full(x.shape, g, dt)
    if not is_array(g) or g.ndim > x.ndim:
        return fail("broadcast_to_shape", g, x)
    dt = np_dtype(g)

    def impl(g, x):
        big, small = _aligned_shapes(x.shape, g.shape)
        out = np.empty(x.size, dt)
        gc = np.ascontiguousarray(g)
        _broadcast_into(gc.reshape(gc.size), big, small, out)
        return out.reshape(x.shape)

    return impl


# ---------------------------------------------------------------- expand_axis


@overload(broadcasting.expand_axis, jit_options=OPTS)
def _ol_expand_axis(x, axis):
    if not isinstance(axis, types.Integer):
        return fail("expand_axis", x, axis)
    if is_scalar(x):
        dt = np_dtype(x)

        def impl_scalar(x, axis):
            if axis != 0 and axis != -1:
                raise ValueError("expand_axis: axis out of range")
            return np.full(1, x, dt)

        return impl_scalar
    if not is_array(x):
        return fail("expand_axis", x, axis)
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
