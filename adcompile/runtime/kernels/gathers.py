"""Scatter-adds, as plain numpy: scatter_add, scatter_add2 (the adjoints of gathers) and index_add (``np.add.at``).

Generated code calls these as ``rt.<name>`` (``runtime/helpers.py`` gathers them); run as Python
it calls these, compiled by numba the overloads of ``gathers_numba.py`` beside this file. Each
docstring is the contract both follow. This module does not import numba.
"""
import numpy as np


def scatter_add(target, idx, values):
    """In place ``np.add.at(target, idx, values)``; returns None.

    ``target`` is 1-D, 2-D or 3-D; ``idx`` an int array of any shape (or an int)
    indexing axis 0; ``values`` has shape ``idx.shape + target.shape[1:]`` or
    is broadcastable to it (a scalar included).  Repeated indices accumulate,
    negative indices wrap, out-of-range indices raise IndexError.
    """
    np.add.at(target, idx, values)


def scatter_add2(target, i0, i1, values):
    """In place ``np.add.at(target, (i0, i1), values)`` for a 2-D ``target``.

    ``i0``, ``i1``: 1-D int arrays of equal length, or either one an int;
    ``values``: 1-D of that length (or length 1) or a scalar.  Returns None.
    """
    np.add.at(target, (i0, i1), values)


def index_add(target, idx, values):
    """A new array: ``target`` with ``np.add.at(., idx, values)`` applied (``idx`` an int or a
    1-D int array indexing axis 0; repeated indices accumulate).  dtype: numpy's promotion of
    ``target`` and ``values``."""
    out = np.array(target, dtype=np.result_type(target, values))
    np.add.at(out, idx, values)
    return out


__all__ = ["scatter_add", "scatter_add2", "index_add"]
