"""Signal primitives: the full discrete convolution of two 1-d arrays and ``searchsorted``.

``np.convolve``/``np.correlate`` in every mode are slices of the full convolution (the
frontend lowers them, numpy_signals.py), so one bilinear primitive carries their derivatives.
"""
from ...nodes import const
from ...types import INT64, Type, promote_dtypes
from ..declare import BILINEAR, NON_DIFFERENTIABLE, define
from ..reverse_helpers import getitem

_REVERSED = ("slice", None, None, const(-1))


def valid_correlation(b, signal, kernel, length):
    """``np.correlate(signal, kernel, 'valid')`` of a ``signal`` at least as long as ``kernel``:
    the full convolution with the reversed kernel, from index len(kernel) - 1 on."""
    full = b.call("convolve", signal, getitem(b, kernel, [_REVERSED]))
    start = b.sub(b.call("dim", kernel, axis=0), const(1))
    return getitem(b, full, [("slice", start, b.add(start, length), None)])


def _convolve_vjp(b, g, out, args, params, active):
    # out[k] = sum_j a[j] v[k - j]: each cotangent is the valid correlation of g with the other
    a, v = args
    return [valid_correlation(b, g, v, b.call("dim", a, axis=0)) if active[0] else None,
            valid_correlation(b, g, a, b.call("dim", v, axis=0)) if active[1] else None]


define("convolve", lambda t, p, c=None: Type(promote_dtypes(t[0].dtype, t[1].dtype), 1), "np.convolve(_0, _1)",
       kinds={BILINEAR}, vjp=_convolve_vjp)

# The insertion positions of the values ``_1`` in the sorted 1-d array ``_0``: integers.
define("searchsorted", lambda t, p, c=None: Type(INT64, t[1].ndim), "np.searchsorted(_0, _1, side='{side}')",
       kinds={NON_DIFFERENTIABLE})
