"""Handlers for np.linalg's solves and determinants: solve, inv, det, slogdet, cholesky, lstsq.

Each is one primitive of ``ir/primitives/linalg_solve.py`` on float operands of one dtype
(numba's LAPACK wrappers take no mixed or integer dtypes), except ``slogdet`` (the pair of
``slogdet_sign`` and ``logabsdet``) and ``lstsq`` (lowered to the normal equations).
Stacks of matrices (3-d operands) are rejected: numba's wrappers take single matrices.
"""
from ..errors import TypeMismatchError, UnsupportedFunctionError
from ..ir.types import promote_dtypes, to_float
from .calls import atom, cast, handler
from .values import NONE, TupleValue


class NotComputedResult:
    """The residuals, rank and singular values of ``lstsq``, which adcompile does not compute."""

    why_unusable = ("np.linalg.lstsq: only the solution (its result [0]) is computed by adcompile, "
                    "not the residuals, rank or singular values")


def _take_arguments(tr, name, args, kwargs, node, names, optional=()):
    """The arguments ``names`` (positional or keyword) and the optional ones, or a located error."""
    if len(args) > len(names) + len(optional):
        raise tr.error(f"np.linalg.{name}() takes at most {len(names) + len(optional)} arguments", node,
                       UnsupportedFunctionError)
    values = dict(zip(list(names) + list(optional), args))
    for key, value in kwargs.items():
        if key not in names and key not in optional:
            raise tr.error(f"keyword argument '{key}' of np.linalg.{name}() is not supported by adcompile", node,
                           UnsupportedFunctionError)
        values[key] = value
    missing = [n for n in names if n not in values]
    if missing:
        raise tr.error(f"np.linalg.{name}() needs the argument '{missing[0]}'", node, TypeMismatchError)
    return values


def _matrices(tr, name, values, node, ndims):
    """The operands as float atoms of one dtype, each of an ndim in ``ndims``."""
    atoms = [atom(tr, v, node) for v in values]
    for x, allowed in zip(atoms, ndims):
        if x.type.ndim not in allowed:
            shown = " or ".join(f"{n}-d" for n in allowed)
            raise tr.error(f"np.linalg.{name} takes a {shown} array here, not {x.type.ndim}-d "
                           f"(stacks of matrices are not supported)", node, TypeMismatchError)
    dtype = to_float(promote_dtypes(*[x.type.dtype for x in atoms]))
    return [cast(tr, x, dtype, node) for x in atoms]


def _one_matrix(tr, name, args, kwargs, node):
    values = _take_arguments(tr, name, args, kwargs, node, ["a"])
    return _matrices(tr, name, [values["a"]], node, [(2,)])[0]


@handler("np.linalg.solve")
def _solve(tr, args, kwargs, node):
    values = _take_arguments(tr, "solve", args, kwargs, node, ["a", "b"])
    a, b = _matrices(tr, "solve", [values["a"], values["b"]], node, [(2,), (1, 2)])
    return tr.emit("solve", [a, b], node)


@handler("np.linalg.inv")
def _inv(tr, args, kwargs, node):
    return tr.emit("inv", [_one_matrix(tr, "inv", args, kwargs, node)], node)


@handler("np.linalg.det")
def _det(tr, args, kwargs, node):
    return tr.emit("det", [_one_matrix(tr, "det", args, kwargs, node)], node)


@handler("np.linalg.slogdet")
def _slogdet(tr, args, kwargs, node):
    a = _one_matrix(tr, "slogdet", args, kwargs, node)
    return TupleValue([tr.emit("slogdet_sign", [a], node), tr.emit("logabsdet", [a], node)])


@handler("np.linalg.cholesky")
def _cholesky(tr, args, kwargs, node):
    values = _take_arguments(tr, "cholesky", args, kwargs, node, ["a"], optional=["upper"])
    upper = values.get("upper")
    if upper is not None and not (getattr(upper, "value", None) is False):
        raise tr.error("np.linalg.cholesky(upper=True) is not supported (take the transpose of the lower factor)",
                       node, UnsupportedFunctionError)
    return tr.emit("cholesky", _matrices(tr, "cholesky", [values["a"]], node, [(2,)]), node)


@handler("np.linalg.lstsq")
def _lstsq(tr, args, kwargs, node):
    """x of ``lstsq(a, b)`` for ``a`` of full column rank, through the normal equations
    ``(a.T a) x = a.T b`` and one step of iterative refinement with the residual ``b - a x``
    (the corrected semi-normal equations: accurate to about cond(a) * eps while cond(a)**2 * eps
    is well below 1, as for the mildly ill-conditioned problems of least-squares fits; not for
    nearly rank-deficient ones). The correction is zero in exact arithmetic, so the derivative
    is the normal equations' own."""
    values = _take_arguments(tr, "lstsq", args, kwargs, node, ["a", "b"], optional=["rcond"])
    if values.get("rcond", NONE) is not NONE:
        raise tr.error("np.linalg.lstsq is supported with rcond=None (the default) only", node,
                       UnsupportedFunctionError)
    a, b = _matrices(tr, "lstsq", [values["a"], values["b"]], node, [(2,), (1, 2)])
    a_t = tr.emit("transpose", [a], node)
    gram = tr.emit("matmul", [a_t, a], node)
    x = tr.emit("solve", [gram, tr.emit("matmul", [a_t, b], node)], node)
    residual = tr.emit("sub", [b, tr.emit("matmul", [a, x], node)], node)
    x = tr.emit("add", [x, tr.emit("solve", [gram, tr.emit("matmul", [a_t, residual], node)], node)], node)
    return TupleValue([x, NotComputedResult(), NotComputedResult(), NotComputedResult()])
