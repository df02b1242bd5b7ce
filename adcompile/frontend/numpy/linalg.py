"""Handlers for linear algebra: matmul/dot/outer/cross, transpose, trace, diag, and the
decompositions eigh/eigvalsh, svd, qr (see ``calls.py``)."""
from ...errors import TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ...ir.nodes import Const
from ..calls import (array_arg, atom, handler, static_int, _check_kwargs, _take)
from .linalg_stacks import map_over_stack, trailing_dim
from .reductions import _norm as _vector_and_frobenius_norm, _reduce
from ..static_values import StaticStr
from ..values import (NoneValue, TupleValue)
from ...ir.indexing import FULL_SLICE


# ------------------------------------------------------------------ linear algebra
def matmul(tr, a, b, node):
    if a.type.ndim == 0 or b.type.ndim == 0:
        raise tr.error("matmul operands must be arrays (use * for scalars)", node, TypeMismatchError)
    if a.type.ndim == 1 and b.type.ndim == 3:  # a row against each matrix of the stack
        product = tr.emit("matmul", [tr.emit("expand_axis", [a], node, axis=0), b], node)
        return tr.getitem(product, [FULL_SLICE, ("int", const(0)), FULL_SLICE], node)
    if a.type.ndim == 3 and b.type.ndim == 1:
        product = tr.emit("matmul", [a, tr.emit("expand_axis", [b], node, axis=1)], node)
        return tr.getitem(product, [FULL_SLICE, FULL_SLICE, ("int", const(0))], node)
    return tr.emit("matmul", [a, b], node)


@handler("np.matmul")
def _matmul(tr, args, kwargs, node):
    return matmul(tr, atom(tr, args[0], node), atom(tr, args[1], node), node)


@handler("np.dot", "method.dot", "np.inner", "np.vdot")
def _dot(tr, args, kwargs, node):
    a, b = atom(tr, args[0], node), atom(tr, args[1], node)
    if a.type.ndim == 0 or b.type.ndim == 0:
        return tr.emit("mul", [a, b], node)
    if a.type.ndim > 2 or b.type.ndim > 2:  # np.dot of stacks is not matmul: it pairs every matrix with every one
        raise tr.error("np.dot/np.inner/np.vdot of arrays of more than 2 dimensions is not supported "
                       "(use @ or np.matmul for stacks of matrices, np.einsum for other contractions)",
                       node, UnsupportedFunctionError)
    return matmul(tr, a, b, node)


@handler("np.outer")
def _outer(tr, args, kwargs, node):
    a, b = (atom(tr, v, node) for v in args[:2])
    flat = [tr.emit("ravel", [v], node) if v.type.ndim != 1 else v for v in (a, b)]
    return tr.emit("outer", flat, node)


@handler("np.cross")
def _cross(tr, args, kwargs, node):
    """Cross product of 3-vectors (or of rows of 3-vectors, broadcast), from their components."""
    a, b = (array_arg(tr, v, node) for v in args[:2])
    if a.type.ndim > 2 or b.type.ndim > 2:
        raise tr.error("np.cross is supported for 3-vectors and 2-d arrays of them", node,
                       UnsupportedFunctionError)

    def part(x, k):
        return tr.getitem(x, [FULL_SLICE] * (x.type.ndim - 1) + [("int", const(k))], node)

    def component(i, j):
        return tr.emit("sub", [tr.emit("mul", [part(a, i), part(b, j)], node),
                               tr.emit("mul", [part(a, j), part(b, i)], node)], node)

    parts = [component(1, 2), component(2, 0), component(0, 1)]
    if parts[0].type.ndim == 0:
        return tr.emit("concatenate", [tr.emit("expand_axis", [c], node, axis=0) for c in parts], node, axis=0)
    return tr.emit("stack", parts, node, axis=1)


@handler("np.transpose", "method.transpose")
def _transpose(tr, args, kwargs, node):
    x = array_arg(tr, args[0], node)
    axes = args[1:] if len(args) > 1 else ([kwargs["axes"]] if "axes" in kwargs else [])
    if len(axes) == 1 and isinstance(axes[0], TupleValue):
        axes = axes[0].items
    if not axes:
        if x.type.ndim <= 2:
            return tr.emit("transpose", [x], node) if x.type.ndim == 2 else x
        axes_static = tuple(reversed(range(x.type.ndim)))
    else:
        axes_static = tuple(static_int(tr, a, node, "axes") % x.type.ndim for a in axes)
    return tr.emit("transpose", [x], node, axes=axes_static)


@handler("np.trace", "method.trace")
def _trace(tr, args, kwargs, node):
    return tr.emit("trace", [array_arg(tr, args[0], node)], node)


@handler("np.diag")
def _diag(tr, args, kwargs, node):
    x = array_arg(tr, args[0], node)
    if x.type.ndim > 2:
        raise tr.error("np.diag takes a 1-d or 2-d array", node, TypeMismatchError)
    return tr.emit("diag", [x], node)


# ------------------------------------------------------------------ decompositions: eigh, svd, qr
# Each returned array is a primitive of its own (ir/primitives/linalg_decompositions.py); a
# stack of matrices is a loop over its matrices (linalg_stacks.py).
def _matrix(tr, value, node, what):
    a = atom(tr, value, node)
    if a.type.ndim < 2:
        raise tr.error(f"{what} takes a 2-d array or a stack of matrices", node, TypeMismatchError)
    return a


def _decomposed(tr, a, prims, dims, node, what):
    """The primitives ``prims`` of the matrix ``a`` or of each matrix of its stack; ``dims(m, n, k)``
    gives their core dims from the matrix's rows ``m``, columns ``n`` and ``k = min(m, n)``."""
    def result_dims(operands):
        m, n = trailing_dim(tr, operands[0], 2, node), trailing_dim(tr, operands[0], 1, node)
        return dims(m, n, tr.emit("minimum", [m, n], node))
    return map_over_stack(tr, [a], [2], lambda pieces: [tr.emit(p, pieces, node) for p in prims], result_dims,
                          node, what)


def _static_flag(tr, value, default, node, what):
    if value is None:
        return default
    if isinstance(value, Const) and isinstance(value.value, (bool, int)):
        return bool(value.value)
    raise tr.error(f"{what} must be a constant True or False", node, TypeMismatchError)


def _check_uplo(tr, uplo, node, what):
    if uplo is not None and not (isinstance(uplo, StaticStr) and uplo.value == "L"):
        raise tr.error(f"{what} supports UPLO='L' only (the default)", node, UnsupportedFunctionError)


def _symmetric_eigen(tr, args, kwargs, node, what, prims, result_dims):
    """The ``prims`` results of ``what`` (eigh or eigvalsh) of the matrix argument."""
    _check_kwargs(tr, kwargs, ("a", "UPLO"), node)
    a, uplo = _take(args, kwargs, ["a", "UPLO"])
    _check_uplo(tr, uplo, node, what)
    return _decomposed(tr, _matrix(tr, a, node, what), prims, result_dims, node, what)


@handler("np.linalg.eigh")
def _eigh(tr, args, kwargs, node):
    return TupleValue(_symmetric_eigen(tr, args, kwargs, node, "np.linalg.eigh", ["eigh_values", "eigh_vectors"],
                                       lambda m, n, k: [[n], [n, n]]))


@handler("np.linalg.eigvalsh")
def _eigvalsh(tr, args, kwargs, node):
    return _symmetric_eigen(tr, args, kwargs, node, "np.linalg.eigvalsh", ["eigh_values"],
                            lambda m, n, k: [[n]])[0]


@handler("np.linalg.svd")
def _svd(tr, args, kwargs, node):
    _check_kwargs(tr, kwargs, ("a", "full_matrices", "compute_uv", "hermitian"), node)
    a, full, compute_uv, hermitian = _take(args, kwargs, ["a", "full_matrices", "compute_uv", "hermitian"])
    a = _matrix(tr, a, node, "np.linalg.svd")
    if _static_flag(tr, hermitian, False, node, "hermitian"):
        raise tr.error("np.linalg.svd(hermitian=True) is not supported (use np.linalg.eigh)", node,
                       UnsupportedFunctionError)
    if not _static_flag(tr, compute_uv, True, node, "compute_uv"):
        return _decomposed(tr, a, ["svd_values"], lambda m, n, k: [[k]], node, "np.linalg.svd")[0]
    if _static_flag(tr, full, True, node, "full_matrices"):
        raise tr.error("np.linalg.svd needs full_matrices=False in compiled code: the full U or Vt of a "
                       "non-square matrix has no derivative (for a square matrix the results are the same)",
                       node, UnsupportedFunctionError)
    return TupleValue(_decomposed(tr, a, ["svd_u", "svd_values", "svd_vt"], lambda m, n, k: [[m, k], [k], [k, n]],
                                  node, "np.linalg.svd"))


@handler("np.linalg.qr")
def _qr(tr, args, kwargs, node):
    _check_kwargs(tr, kwargs, ("a", "mode"), node)
    a, mode = _take(args, kwargs, ["a", "mode"])
    if mode is not None and not (isinstance(mode, StaticStr) and mode.value == "reduced"):
        raise tr.error("np.linalg.qr supports mode='reduced' only (the default)", node, UnsupportedFunctionError)
    a = _matrix(tr, a, node, "np.linalg.qr")
    return TupleValue(_decomposed(tr, a, ["qr_q", "qr_r"], lambda m, n, k: [[m, k], [k, n]], node, "np.linalg.qr"))


# Matrix norms of a 2-d array (axis None) or of each matrix of a stack (axis naming the last two
# axes): from the singular values (ord 2, -2, "nuc"), from column/row sums of absolute values
# (ord 1, -1, inf, -inf), "fro". Other forms: numpy_reductions.py.
_ABSOLUTE_SUM_NORMS = {1: ("max", 0), -1: ("min", 0), float("inf"): ("max", 1), -float("inf"): ("min", 1)}


def _names_last_two_axes(axis, ndim):
    if axis is None or isinstance(axis, NoneValue):
        return ndim == 2
    if not (isinstance(axis, TupleValue) and len(axis.items) == 2 and ndim >= 2):
        return False
    if not all(isinstance(a, Const) and isinstance(a.value, int) for a in axis.items):
        return False
    return [a.value % ndim for a in axis.items] == [ndim - 2, ndim - 1]


@handler("np.linalg.norm")
def _matrix_norm(tr, args, kwargs, node):
    x, ord_, axis, keepdims = _take(args, kwargs, ["x", "ord", "axis", "keepdims"])
    x = atom(tr, x, node)
    p = ord_.value if isinstance(ord_, (Const, StaticStr)) else None
    keep = keepdims is not None and not (isinstance(keepdims, Const) and not keepdims.value)
    if not _names_last_two_axes(axis, x.type.ndim) or keep or p not in (2, -2, "nuc", "fro", *_ABSOLUTE_SUM_NORMS):
        return _vector_and_frobenius_norm(tr, args, kwargs, node)
    rows_axis = const(x.type.ndim - 2)  # the axis of the rows, and of a matrix's result once reduced
    if p in _ABSOLUTE_SUM_NORMS:
        extremum, summed = _ABSOLUTE_SUM_NORMS[p]
        sums = _reduce(tr, "sum", tr.emit("abs", [x], node), const(x.type.ndim - 2 + summed), False, node)
        return _reduce(tr, extremum, sums, rows_axis, False, node)
    if p == "fro":
        if x.type.ndim == 2:
            return tr.emit("norm", [x], node)
        columns = _reduce(tr, "sum", tr.emit("mul", [x, x], node), const(x.type.ndim - 1), False, node)
        return tr.emit("sqrt", [_reduce(tr, "sum", columns, rows_axis, False, node)], node)
    values = _decomposed(tr, x, ["svd_values"], lambda m, n, k: [[k]], node, "np.linalg.norm")[0]
    if p == "nuc":
        return _reduce(tr, "sum", values, rows_axis, False, node)
    return tr.getitem(values, [FULL_SLICE] * (x.type.ndim - 2) + [("int", const(0 if p == 2 else -1))], node)
