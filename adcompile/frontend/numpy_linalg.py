"""Handlers for linear algebra: matmul/dot/outer/cross, transpose, trace, diag (see ``calls.py``)."""
from ..errors import TypeMismatchError, UnsupportedFunctionError
from ..ir.builder import const
from .calls import (array_arg, atom, handler, static_int)
from .values import (TupleValue)


# ------------------------------------------------------------------ linear algebra
def matmul(tr, a, b, node):
    if a.type.ndim == 0 or b.type.ndim == 0:
        raise tr.error("matmul operands must be arrays (use * for scalars)", node, TypeMismatchError)
    every = ("slice", None, None, None)
    if a.type.ndim == 1 and b.type.ndim == 3:  # a row against each matrix of the stack
        product = tr.emit("matmul", [tr.emit("expand_axis", [a], node, axis=0), b], node)
        return tr.getitem(product, [every, ("int", const(0)), every], node)
    if a.type.ndim == 3 and b.type.ndim == 1:
        product = tr.emit("matmul", [a, tr.emit("expand_axis", [b], node, axis=1)], node)
        return tr.getitem(product, [every, every, ("int", const(0))], node)
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
        return tr.getitem(x, [("slice", None, None, None)] * (x.type.ndim - 1) + [("int", const(k))], node)

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
