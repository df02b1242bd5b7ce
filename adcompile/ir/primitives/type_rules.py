"""Result-type rules of primitives: (argument types, static params[, constant flags]) -> Type.

``consts[i]`` tells whether argument i is a Python constant: a weakly typed float constant
does not make an int array float, as in numpy (``x_int * 2`` stays int, ``x_int * 0.5``
does not).
"""
from ...errors import TypeMismatchError
from ..types import BOOL, FLOAT64, INT64, Type, promote_dtypes, to_float


def _broadcast(types):
    ndim = max(t.ndim for t in types)
    return ndim


def elementwise(float_result=False):
    def rule(types, params, consts=None):
        consts = consts or [False] * len(types)
        strong = [t.dtype for t, c in zip(types, consts) if not c] or [t.dtype for t in types]
        weak = [t.dtype for t, c in zip(types, consts) if c]
        dtype = promote_dtypes(*strong)
        if any(w in ("f8", "f4") for w in weak) and dtype not in ("f8", "f4"):
            dtype = FLOAT64
        if float_result:
            dtype = to_float(dtype)
        return Type(dtype, _broadcast(types))
    return rule


def predicate(types, params, consts=None):
    return Type(BOOL, _broadcast(types))


def same_as_first(types, params, consts=None):
    return types[0]


def float_of_first(types, params, consts=None):
    return Type(to_float(types[0].dtype), types[0].ndim)


def reduction(types, params, consts=None):
    t = types[0]
    axis = params.get("axis")
    dtype = t.dtype if params.get("keep_dtype", True) else to_float(t.dtype)
    if t.dtype == BOOL:
        dtype = INT64
    return Type(dtype, 0 if axis is None else t.ndim - 1)


def float_reduction(types, params, consts=None):
    t = reduction(types, params)
    return Type(to_float(t.dtype), t.ndim)


def matmul_type(types, params, consts=None):
    a, b = types
    if a.ndim == 0 or b.ndim == 0:
        raise TypeMismatchError("matmul: operands must be arrays, not scalars")
    ndim = {(1, 1): 0, (2, 1): 1, (1, 2): 1, (2, 2): 2, (3, 2): 3, (2, 3): 3, (3, 3): 3}.get((a.ndim, b.ndim))
    if ndim is None:
        raise TypeMismatchError(f"matmul of {a.ndim}-d and {b.ndim}-d arrays is not supported "
                                f"(1-d, 2-d and stacks of matrices (3-d) only)")
    return Type(promote_dtypes(a.dtype, b.dtype), ndim)


def fixed(type_):
    return lambda types, params, consts=None: type_


def ndim_param(types, params, consts=None):
    return Type(params.get("dtype", FLOAT64), params["ndim"])


def getitem_type(types, params, consts=None):
    return Type(types[0].dtype, params["result_ndim"])


def where_type(types, params, consts=None):
    branches = elementwise()(types[1:], params, (consts or [False] * 3)[1:])
    return branches.with_ndim(max(t.ndim for t in types))


def promoted(ndim_of):
    """The promoted dtype of all arguments, with the ndim ``ndim_of(types)``."""
    return lambda types, params, consts=None: Type(promote_dtypes(*[t.dtype for t in types]), ndim_of(types))
