"""Handlers for np.linalg's solves and determinants: solve, inv, det, slogdet, cholesky, lstsq.

Each is one primitive of ``ir/primitives/linalg/solve.py`` on float operands of one dtype
(numba's LAPACK wrappers take no mixed or integer dtypes), except ``slogdet`` (the pair of
``slogdet_sign`` and ``logabsdet``) and ``lstsq`` (lowered to the normal equations).
Stacks of matrices (more than 2-d operands, all but lstsq) become a loop over the matrices
(``stacks.py``): numba's wrappers take single matrices.
"""
from ....errors import TypeMismatchError, UnsupportedFunctionError
from ....ir.types import promote_dtypes, to_float
from ...calls import atom, cast, handler
from .stacks import map_over_stack, trailing_dim
from ...values import NONE, TupleValue


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


def _matrices(tr, name, values, node, ndims, stacks=True):
    """The operands as float atoms of one dtype, each of an ndim in ``ndims`` (or, with
    ``stacks``, a stack of those of 2 dimensions)."""
    atoms = [atom(tr, v, node) for v in values]
    for x, allowed in zip(atoms, ndims):
        if x.type.ndim not in allowed and not (stacks and x.type.ndim > 2):
            shown = " or ".join(f"{n}-d" for n in allowed)
            also = " (or a stack of matrices)" if stacks else " (stacks of matrices are not supported)"
            raise tr.error(f"np.linalg.{name} takes a {shown} array{also} here, not {x.type.ndim}-d", node,
                           TypeMismatchError)
    dtype = to_float(promote_dtypes(*[x.type.dtype for x in atoms]))
    return [cast(tr, x, dtype, node) for x in atoms]


def _one_matrix(tr, name, args, kwargs, node):
    values = _take_arguments(tr, name, args, kwargs, node, ["a"])
    return _matrices(tr, name, [values["a"]], node, [(2,)])[0]


def _square_dims(tr, operands, node):
    n = trailing_dim(tr, operands[0], 1, node)
    return [n, n]


def _per_matrix(tr, a, prims, dims, node, what):
    """``prims`` of the matrix ``a``, or of each matrix of the stack ``a``."""
    return map_over_stack(tr, [a], [2], lambda pieces: [tr.emit(p, pieces, node) for p in prims],
                          lambda operands: [dims(tr, operands, node)] * len(prims), node, what)


@handler("np.linalg.solve")
def _solve(tr, args, kwargs, node):
    values = _take_arguments(tr, "solve", args, kwargs, node, ["a", "b"])
    a, b = _matrices(tr, "solve", [values["a"], values["b"]], node, [(2,), (1, 2)])
    core = 1 if b.type.ndim == 1 else 2  # numpy 2: b is a vector only when it is 1-d

    def solution_dims(operands):
        return [[trailing_dim(tr, operands[1], k, node) for k in range(core, 0, -1)]]
    return map_over_stack(tr, [a, b], [2, core], lambda pieces: [tr.emit("solve", pieces, node)], solution_dims,
                          node, "np.linalg.solve")[0]


@handler("np.linalg.inv")
def _inv(tr, args, kwargs, node):
    return _per_matrix(tr, _one_matrix(tr, "inv", args, kwargs, node), ["inv"], _square_dims, node,
                       "np.linalg.inv")[0]


def _no_dims(tr, operands, node):
    return []


@handler("np.linalg.det")
def _det(tr, args, kwargs, node):
    return _per_matrix(tr, _one_matrix(tr, "det", args, kwargs, node), ["det"], _no_dims, node,
                       "np.linalg.det")[0]


@handler("np.linalg.slogdet")
def _slogdet(tr, args, kwargs, node):
    a = _one_matrix(tr, "slogdet", args, kwargs, node)
    return TupleValue(_per_matrix(tr, a, ["slogdet_sign", "logabsdet"], _no_dims, node, "np.linalg.slogdet"))


@handler("np.linalg.cholesky")
def _cholesky(tr, args, kwargs, node):
    values = _take_arguments(tr, "cholesky", args, kwargs, node, ["a"], optional=["upper"])
    upper = values.get("upper")
    if upper is not None and not (getattr(upper, "value", None) is False):
        raise tr.error("np.linalg.cholesky(upper=True) is not supported (take the transpose of the lower factor)",
                       node, UnsupportedFunctionError)
    a = _matrices(tr, "cholesky", [values["a"]], node, [(2,)])[0]
    return _per_matrix(tr, a, ["cholesky"], _square_dims, node, "np.linalg.cholesky")[0]


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
    a, b = _matrices(tr, "lstsq", [values["a"], values["b"]], node, [(2,), (1, 2)], stacks=False)
    a_t = tr.emit("transpose", [a], node)
    gram = tr.emit("matmul", [a_t, a], node)
    x = tr.emit("solve", [gram, tr.emit("matmul", [a_t, b], node)], node)
    residual = tr.emit("sub", [b, tr.emit("matmul", [a, x], node)], node)
    x = tr.emit("add", [x, tr.emit("solve", [gram, tr.emit("matmul", [a_t, residual], node)], node)], node)
    return TupleValue([x, NotComputedResult(), NotComputedResult(), NotComputedResult()])
