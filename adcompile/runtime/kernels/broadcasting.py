"""Broadcasting and its adjoint, as plain numpy.

The kernels: unbroadcast (a cotangent summed back to an argument's shape), broadcast_to_shape,
expand_axis.

Generated code calls these as ``rt.<name>`` (``runtime/helpers.py`` gathers them); run as Python
it calls these, compiled by numba the overloads of ``broadcasting_numba.py`` beside this file. Each
docstring is the contract both follow. This module does not import numba.
"""
import numpy as np


def grad_dtype(x):
    """The dtype a gradient w.r.t. ``x`` carries (see helpers.py)."""
    dt = np.asarray(x).dtype
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (adjoint of broadcasting).

    * ``x`` scalar (or 0-d array): returns a scalar, the sum of ``g``
      (``g`` itself if ``g`` is a scalar).
    * ``g`` scalar, ``x`` array: new array of ``x``'s shape filled with ``g``.
    * both arrays (``x.ndim <= g.ndim``): leading extra axes of ``g`` are
      summed away, axes where ``x`` has length 1 are summed with keepdims.

    The result has ``g``'s dtype.  When ``g`` already has ``x``'s shape the
    result may be ``g`` itself (numba: ``g`` if it is C-contiguous, else a
    C-contiguous copy); treat it as read-only.
    """
    xshape = np.shape(x)
    if len(xshape) == 0:
        return g.sum() if isinstance(g, np.ndarray) else g
    if not isinstance(g, np.ndarray) or g.ndim == 0:
        return np.full(xshape, g, dtype=np.asarray(g).dtype)
    if g.shape == xshape:
        return g
    lead = g.ndim - len(xshape)
    if lead < 0:
        raise ValueError(f"unbroadcast: g shape {g.shape} has fewer dims than {xshape}")
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = []
    for i, n in enumerate(xshape):
        if n == 1 and g.shape[i] != 1:
            axes.append(i)
        elif n != g.shape[i]:
            raise ValueError(f"unbroadcast: shape {g.shape} does not broadcast from {xshape}")
    if axes:
        g = g.sum(axis=tuple(axes), keepdims=True)
    return g


def broadcast_to_shape(g, x):
    """New C-contiguous array of ``x``'s shape holding ``g`` broadcast.

    ``x`` is an array; ``g`` is a scalar or an array broadcast-compatible with
    ``x``.  dtype: ``g``'s dtype for an array ``g``; for a scalar ``g`` the
    gradient dtype of ``x`` (``x.dtype`` if floating, else float64).  The
    result never aliases ``g``.
    """
    if isinstance(g, np.ndarray):
        out = np.empty(np.shape(x), dtype=g.dtype)
    else:
        out = np.empty(np.shape(x), dtype=grad_dtype(x))
    out[...] = g
    return out


def expand_axis(x, axis):
    """Insert a length-1 axis at position ``axis`` (like ``np.expand_dims``).

    A scalar ``x`` gives a 1-D array of length 1 (``axis`` 0 or -1).  The
    result may be a view of ``x`` (numba: a view when ``x`` is contiguous,
    else a copy); treat it as read-only.
    """
    return np.expand_dims(x, axis)


__all__ = ["unbroadcast", "broadcast_to_shape", "expand_axis"]
