"""Plain-numpy runtime helpers called by generated code as ``rt.NAME(...)``.

Generated source does ``from adcompile.runtime import helpers as rt``.  Run as
plain Python, these functions are what gets called.  Compiled with
``numba.njit``, the overloads registered in
:mod:`adcompile.runtime.numba_impls` are used instead (import that module once
before compiling).  Both versions have the same semantics; the contract of
each helper is in its docstring.

This module must not import numba: ``import adcompile`` has to stay fast and
the plain Python backend has to work without numba.

General conventions
-------------------
* "scalar" means a Python ``float``/``int``/``bool`` or a numpy scalar;
  "array" means an ``np.ndarray``.
* Results may alias an argument where noted ("may return ``g`` itself").
  Generated code must treat helper results as read-only unless the docstring
  says the result is a new array.
* "gradient dtype" of a value ``x``: ``x``'s dtype if it is a floating or
  complex dtype, otherwise ``float64`` (gradients of ints/bools are never
  truncated to ints).
"""

import operator

import numpy as np

from .special import erf, erfc, expit, gamma, gammaln, polygamma, xlogy  # noqa: F401  (rt.erf, ...)

__all__ = [
    "unbroadcast",
    "sum_axis",
    "mean_axis",
    "max_axis",
    "min_axis",
    "prod_axis",
    "expand_axis",
    "broadcast_to_shape",
    "scatter_add",
    "scatter_add2",
    "matmul",
    "check_matmul_shapes",
    "check_assertion",
    "may_share_memory",
    "range_len",
    "new_tape",
    "push",
    "zeros_like_any",
    "cast_like",
    "diag_adjoint",
    "cumsum_adjoint",
    "index_add",
    "cumsum_axis",
    "cumsum_axis_adjoint",
    "argsort_axis",
    "permute_along",
    "singular_values",
    "tril_half_diagonal",
    "square_qr_factor",
    "section_length",
    "argsort_rows",
]


def _grad_dtype(x):
    """The dtype a gradient w.r.t. ``x`` carries (see module docstring)."""
    dt = np.asarray(x).dtype
    return dt if dt.kind in "fc" else np.dtype(np.float64)


# ---------------------------------------------------------------- broadcasting


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
        out = np.empty(np.shape(x), dtype=_grad_dtype(x))
    out[...] = g
    return out


def expand_axis(x, axis):
    """Insert a length-1 axis at position ``axis`` (like ``np.expand_dims``).

    A scalar ``x`` gives a 1-D array of length 1 (``axis`` 0 or -1).  The
    result may be a view of ``x`` (numba: a view when ``x`` is contiguous,
    else a copy); treat it as read-only.
    """
    return np.expand_dims(x, axis)


# ----------------------------------------------------------------- reductions


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


# -------------------------------------------------------------------- scatter


def scatter_add(target, idx, values):
    """In place ``np.add.at(target, idx, values)``; returns None.

    ``target`` is 1-D, 2-D or 3-D; ``idx`` a 1-D int array (or an int)
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


# --------------------------------------------------------------------- linalg


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


def check_assertion(condition, message):
    """The user's ``assert condition, message``: raise ``AssertionError(message)`` (without
    arguments when ``message`` is None) if ``condition`` is false; else True."""
    if not condition:
        raise AssertionError() if message is None else AssertionError(message)
    return True


def may_share_memory(a, b):
    """Whether the memory of arrays ``a`` and ``b`` may overlap (their address ranges do).

    A loop that writes ``a`` element by element while reading ``b`` runs only when they
    cannot (``lowering/slice_writes.py``); numpy's ``may_share_memory``, which numba lacks.
    """
    return bool(np.may_share_memory(a, b))


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


# ---------------------------------------------------------------------- decompositions


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
# ------------------------------------------------------- splitting and sorting


def section_length(n, sections):
    """``n // sections``, the length of each part of ``np.split(x, sections)`` along an axis
    of length ``n``; ValueError when ``n`` is not divisible (as numpy's np.split)."""
    if sections <= 0 or n % sections:
        raise ValueError("array split does not result in an equal division")
    return n // sections


def argsort_rows(x):
    """The permutation sorting each row of the 2-D array ``x``: a new int64 array of its
    shape; ties keep their order (a stable sort)."""
    return np.argsort(x, axis=1, kind="stable")


# ----------------------------------------------------------------------- misc


def range_len(start, stop, step):
    """``len(range(start, stop, step))``; ValueError if ``step == 0``."""
    return len(range(operator.index(start), operator.index(stop), operator.index(step)))


def new_tape(like):
    """New empty tape (a list used as a stack) for values of ``like``'s type.

    ``like`` is a scalar (float, int, bool) or an array; only its type
    matters.  In numba the element type is: the scalar's type, or an array
    of ``like``'s dtype and ndim in any layout.  Push values with
    :func:`push`; pop with ``tape.pop()``.
    """
    return []


def push(tape, v):
    """Push ``v`` onto a tape made by :func:`new_tape`; returns None.

    Values go on the tape as they are, views included, on both backends: the
    reverse sweep relies on it (it restores a view's base before it reads
    the view).  This is not a snapshot: if ``v`` is mutated in place later
    and not restored, push a copy.
    """
    tape.append(v)


def zeros_like_any(x):
    """Zero gradient for ``x``.

    Array: new ``np.zeros(x.shape, x.dtype)`` (the same dtype, even for ints).
    Scalar: ``0`` of ``x``'s dtype when ``x`` is a float/complex (a numpy
    float32 scalar gives ``np.float32(0)``), otherwise ``0.0`` (float64).
    """
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=x.dtype)
    if isinstance(x, (np.floating, np.complexfloating)):
        return x.dtype.type(0)
    if isinstance(x, complex):
        return 0j
    return 0.0


def cast_like(g, x):
    """``g`` converted to the gradient dtype of ``x``.

    That is ``x``'s dtype when floating/complex (a float32 ``x`` keeps a
    float32 gradient), else float64.  A scalar ``g`` gives a numpy scalar, an
    array ``g`` an array (``g`` itself when its dtype already matches).
    """
    dt = _grad_dtype(x)
    if isinstance(g, np.ndarray):
        return g.astype(dt, copy=False)
    return dt.type(g)


_ZERO_SAFE = ("mul_nz", "div_nz")


def __getattr__(name):
    """The zero-safe products of :mod:`.nonfinite` (numba ufuncs), built on first use."""
    if name in _ZERO_SAFE:
        from . import nonfinite  # lazy: imports numba
        return getattr(nonfinite, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ------------------------------------------------------------ gathers


def index_add(target, idx, values):
    """A new array: ``target`` with ``np.add.at(., idx, values)`` applied (``idx`` an int or a
    1-D int array indexing axis 0; repeated indices accumulate).  dtype: numpy's promotion of
    ``target`` and ``values``."""
    out = np.array(target, dtype=np.result_type(target, values))
    np.add.at(out, idx, values)
    return out
