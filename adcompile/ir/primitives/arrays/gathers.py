"""Scatter-adds and the integer index arrays of masks and triangles.

``index_add(x, idx, v)`` is ``np.add.at`` without the mutation: a copy of ``x`` with ``v``
added at the rows ``idx`` of axis 0, repeated indices accumulating. It is linear in ``x`` and
``v``; the cotangent of ``v`` gathers the rows ``g[idx]``.
"""
from ...types import INT64, Type, promote_dtypes
from ..declare import ALLOCATION, NON_DIFFERENTIABLE, define
from ..reverse_helpers import getitem


def _index_add_vjp(b, g, out, args, params, active):
    x, idx, v = args
    gathered = None
    if active[2]:
        gathered = getitem(b, g, [("array", idx)] if idx.type.ndim else [("int", idx)])
        gathered = b.call("unbroadcast", gathered, v) if v.type.ndim else b.call("sum", gathered)
    return [g if active[0] else None, None, gathered]


define("index_add", lambda t, p, c=None: Type(promote_dtypes(t[0].dtype, t[2].dtype), t[0].ndim),
       "rt.index_add(_0, _1, _2)", vjp=_index_add_vjp, linear_in=(0, 2), shape_of=0)

# Flat positions of the true elements of a boolean array (``x[mask]`` gathers them).
define("flatnonzero", lambda t, p, c=None: Type(INT64, 1), "np.flatnonzero(_0)", kinds={NON_DIFFERENTIABLE})


def _triangle_text(types, params):
    return f"np.{params['part']}_indices(_0, _1)[{params['axis']}]"


# np.triu_indices(n, k)[axis] / np.tril_indices(n, k)[axis]: row (axis 0) or column indices
define("triangle_indices", lambda t, p, c=None: Type(INT64, 1), _triangle_text, kinds=ALLOCATION)
