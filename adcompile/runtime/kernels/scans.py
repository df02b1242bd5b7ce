"""Scans and permutations, as plain numpy.

The kernels: cumsum_adjoint, cumsum_axis and its adjoint, argsort_axis, permute_along,
argsort_rows.

Generated code calls these as ``rt.<name>`` (``runtime/helpers.py`` gathers them); run as Python
it calls these, compiled by numba the overloads of ``scans_numba.py`` beside this file. Each
docstring is the contract both follow. This module does not import numba.
"""
import numpy as np


def cumsum_adjoint(g):
    """Adjoint of flat ``np.cumsum(x)``: reverse cumulative sum of 1-D ``g``.

    Equals ``g[::-1].cumsum()[::-1]`` as a new C-contiguous array of
    ``g``'s dtype.
    """
    out = np.empty(g.shape, dtype=g.dtype)
    np.cumsum(g[::-1], out=out[::-1])
    return out


# ---------------------------------------------------------------- scans along an axis


def cumsum_axis(x, axis):
    """``np.cumsum(x, axis=axis)`` for an array ``x``; ``axis`` a non-negative int."""
    return np.cumsum(x, axis=axis)


def cumsum_axis_adjoint(g, axis):
    """Adjoint of :func:`cumsum_axis`: the reverse cumulative sum of ``g`` along ``axis``
    (a new C-contiguous array of ``g``'s dtype)."""
    return np.ascontiguousarray(np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis))


def argsort_axis(x, axis):
    """``np.argsort(x, axis=axis)`` (int64) for an array ``x``; ``axis`` a non-negative int."""
    return np.argsort(x, axis=axis).astype(np.int64)


def permute_along(x, perm, axis):
    """``np.take_along_axis(x, perm, axis)`` where ``perm`` (of ``x``'s shape) holds a
    permutation of ``range(x.shape[axis])`` along ``axis`` in every line: a new array."""
    return np.take_along_axis(x, perm, axis)


def argsort_rows(x):
    """The permutation sorting each row of the 2-D array ``x``: a new int64 array of its
    shape; ties keep their order (a stable sort)."""
    return np.argsort(x, axis=1, kind="stable")


__all__ = ["cumsum_adjoint", "cumsum_axis", "cumsum_axis_adjoint", "argsort_axis", "permute_along",
           "argsort_rows"]
