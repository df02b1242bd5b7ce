"""Reductions along one axis, as plain numpy.

The kernels: sum_axis, mean_axis, max_axis, min_axis, prod_axis (numba has no ``axis=`` for most
of them).

Generated code calls these as ``rt.<name>`` (``runtime/helpers.py`` gathers them); run as Python
it calls these, compiled by numba the overloads of ``reductions_numba.py`` beside this file. Each
docstring is the contract both follow. This module does not import numba.
"""
import numpy as np


def sum_axis(x, axis):
    """``np.sum(x, axis=axis)`` for an array ``x`` with ``ndim >= 1``.

    ``axis`` is an int (negative values count from the end).  The result has
    ``ndim - 1`` dims (a scalar for 1-D ``x``); dtype as numpy's.
    """
    return np.sum(x, axis=axis)


def mean_axis(x, axis):
    """``np.mean(x, axis=axis)`` (see :func:`sum_axis`); int input gives float64."""
    return np.mean(x, axis=axis)


def max_axis(x, axis):
    """``np.max(x, axis=axis)`` (see :func:`sum_axis`); NaN propagates."""
    return np.max(x, axis=axis)


def min_axis(x, axis):
    """``np.min(x, axis=axis)`` (see :func:`sum_axis`); NaN propagates."""
    return np.min(x, axis=axis)


def prod_axis(x, axis):
    """``np.prod(x, axis=axis)`` (see :func:`sum_axis`)."""
    return np.prod(x, axis=axis)


__all__ = ["sum_axis", "mean_axis", "max_axis", "min_axis", "prod_axis"]
