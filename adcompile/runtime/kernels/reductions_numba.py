"""numba versions of the kernels of ``reductions.py`` (reductions along one axis).

Importing this module registers, with ``numba.extending.overload``, a nopython implementation of
each function of ``reductions.py``, so that generated code calling ``rt.<name>`` compiles under
``numba.njit``; the loops are small ``njit`` kernels, cached on disk (``numba_support.py``).
"""
import numpy as np
from numba import types
from numba.core import errors
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

from . import reductions
from .numba_support import OPTS, fail, is_array, kernel, np_dtype, sum_kernel


# ----------------------------------------------------------------- reductions


# Kernels: ``xf`` is a flat C array viewed as (outer, n, inner); ``out`` is
# flat (outer, inner).  ``inner == 1`` (reducing the last axis) gets a scalar
# accumulator; otherwise whole contiguous rows are combined.


@sum_kernel
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


@kernel
def _red_mean(xf, outer, n, inner, out):
    _red_sum(xf, outer, n, inner, out)
    for j in range(out.shape[0]):
        out[j] = out[j] / n


@sum_kernel
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


@kernel
def _take_max(m, v):
    """max(m, v), NaN propagating (written branch-free for vectorisation)."""
    return v if (v > m or (v != v and m == m)) else m


@kernel
def _take_min(m, v):
    """min(m, v), NaN propagating."""
    return v if (v < m or (v != v and m == m)) else m


@kernel
def _red_extremum(xf, outer, n, inner, out, is_max):
    """max (``is_max``) or min along the middle axis of ``xf`` seen as (outer, n, inner)."""
    if n == 0 and outer * inner > 0:
        name = "max_axis" if is_max else "min_axis"
        raise ValueError("zero-size array to reduction operation " + name + " which has no identity")
    if inner == 1:
        for o in range(outer):
            m = xf[o * n]
            for k in range(o * n + 1, (o + 1) * n):
                m = _take_max(m, xf[k]) if is_max else _take_min(m, xf[k])
            out[o] = m
        return
    for o in range(outer):
        ob = o * inner
        out[ob : ob + inner] = xf[o * n * inner : (o * n + 1) * inner]
        for k in range(1, n):
            xb = (o * n + k) * inner
            for i in range(inner):
                v = xf[xb + i]
                out[ob + i] = _take_max(out[ob + i], v) if is_max else _take_min(out[ob + i], v)


@kernel
def _red_max(xf, outer, n, inner, out):
    _red_extremum(xf, outer, n, inner, out, True)


@kernel
def _red_min(xf, outer, n, inner, out):
    _red_extremum(xf, outer, n, inner, out, False)


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
    the work; the closure holds the number ``kind``, not the kernel: see OPTS)."""

    @overload(pyfunc, jit_options=OPTS)
    def _ol(x, axis):
        if not is_array(x) or x.ndim == 0 or not isinstance(axis, types.Integer):
            return fail(name, x, axis)
        nd = x.ndim
        ndm1 = nd - 1  # a plain constant: to_fixed_tuple needs a literal
        res_dt = np.asarray(np_reduce(np.ones((1,) * nd, np_dtype(x)), axis=0)).dtype

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


for _kind, (_helper, _np_reduce) in enumerate(((reductions.sum_axis, np.sum), (reductions.mean_axis, np.mean),
                                               (reductions.prod_axis, np.prod), (reductions.max_axis, np.max),
                                               (reductions.min_axis, np.min))):
    _register_reduction(_helper, _np_reduce, _kind, _helper.__name__)
