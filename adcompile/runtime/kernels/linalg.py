"""Linear algebra, as plain numpy.

The kernels: matmul (with numba's BLAS for float matrices), its shape check, diag_adjoint, and
the helpers of the decompositions: singular_values, square_qr_factor, tril_half_diagonal.

Generated code calls these as ``rt.<name>`` (``runtime/helpers.py`` gathers them); run as Python
it calls these, compiled by numba the overloads of ``linalg_numba.py`` beside this file. Each
docstring is the contract both follow. This module does not import numba.
"""
import numpy as np


def matmul(a, b):
    """``a @ b`` for 1-D/2-D arrays of any layout; 1-D @ 1-D gives a scalar.

    A 3-D operand (a stack of matrices) against a 2-D or 3-D one gives the 3-D stack of
    products, the stack axis broadcast as numpy does (length 1 against n).

    Mixed float32/float64 inputs give float64 (numpy promotion).
    """
    return a @ b


def check_matmul_shapes(a, b):
    """Raise as ``a @ b`` would when the contracted axes differ in length; else True.

    Stands in for a product that dead-code elimination removed after a rewrite relied on it
    having checked these lengths (``ir/dim_equalities.py``).
    """
    contracted = b.shape[max(b.ndim - 2, 0)]
    if a.shape[a.ndim - 1] != contracted:
        raise ValueError("matmul: shapes not aligned (the contracted axes differ in length)")
    return True


def diag_adjoint(g, x):
    """Adjoint of ``y = np.diag(x)``.

    * ``x`` 1-D (``y`` a square matrix): returns ``g``'s diagonal, a new 1-D
      array of length ``len(x)``.
    * ``x`` 2-D (``y`` the diagonal of ``x``): returns a new zero matrix of
      ``x``'s shape with ``g`` on its diagonal.

    dtype: ``g``'s dtype.
    """
    g = np.asarray(g)
    if np.ndim(x) == 1:
        n = np.shape(x)[0]
        return np.diagonal(g)[:n].copy()
    out = np.zeros(np.shape(x), dtype=g.dtype)
    k = min(out.shape)
    i = np.arange(k)
    out[i, i] = g
    return out


def singular_values(a):
    """``np.linalg.svd(a, compute_uv=False)`` for a 2-D float array: a new 1-D array, descending."""
    return np.linalg.svd(a, compute_uv=False)


def square_qr_factor(r):
    """``r`` itself, the R factor of ``np.linalg.qr(a)``, once checked to be square: the
    derivative rules of qr need ``a`` with at least as many rows as columns."""
    if r.shape[0] != r.shape[1]:
        raise ValueError(f"the derivative of np.linalg.qr needs a matrix with at least as many rows as columns, "
                         f"not one of shape ({r.shape[0]}, {r.shape[1]}) (use the qr of its transpose)")
    return r


def tril_half_diagonal(x):
    """The lower triangle of square ``x`` with its diagonal halved, a new array (the ``phi``
    of the cholesky rules): ``np.tril(x) - np.diag(np.diag(x)) / 2``."""
    out = np.tril(x)
    k = np.arange(out.shape[0])
    out[k, k] *= 0.5
    return out


__all__ = ["matmul", "check_matmul_shapes", "diag_adjoint", "singular_values", "square_qr_factor",
           "tril_half_diagonal"]
