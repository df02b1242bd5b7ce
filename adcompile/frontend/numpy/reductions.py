"""Handlers for reductions and norms: sum/mean/max... with ``axis``/``keepdims``, var/std,
diff, polyval, linalg.norm (see ``calls.py``; the scans are in ``numpy_scans.py``)."""
from ...errors import TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ...ir.nodes import Const
from ...ir.primitives import PRIMITIVES
from ..calls import (HANDLERS, array_arg, atom, handler, static_int, _check_kwargs,
                    _take)
from . import python_impls
from ..translator.inline import inline_call
from ..values import (NONE, NoneValue, TupleValue)
from ...ir.indexing import FULL_SLICE


# ------------------------------------------------------------------ reductions
def _axes(tr, axis, ndim, node):
    if axis is None or isinstance(axis, NoneValue):
        return None
    values = axis.items if isinstance(axis, TupleValue) else [axis]
    axes = []
    for value in values:
        k = static_int(tr, value, node, "axis")
        if not -ndim <= k < ndim:
            raise tr.error(f"axis {k} is out of bounds for a {ndim}-d array", node, TypeMismatchError)
        axes.append(k % ndim)
    return sorted(set(axes))


def _reduce(tr, prim, x, axis, keepdims, node):
    if x.type.ndim == 0:
        return x
    axes = _axes(tr, axis, x.type.ndim, node)
    if axes is None or len(axes) == x.type.ndim:
        result = tr.emit(prim, [x], node)
        if keepdims:
            for k in range(x.type.ndim):
                result = tr.emit("expand_axis", [result], node, axis=k)
        return result
    result = x
    for k in reversed(axes):
        result = tr.emit(prim, [result], node, axis=k)
    if keepdims:
        for k in axes:
            result = tr.emit("expand_axis", [result], node, axis=k)
    return result


def _reduction_handler(prim):
    def fn(tr, args, kwargs, node):
        _check_kwargs(tr, kwargs, ("axis", "keepdims", "a"), node)
        x, axis, keepdims = _take(args, kwargs, ["a", "axis", "keepdims"])
        keep = keepdims is not None and isinstance(keepdims, Const) and bool(keepdims.value)
        return _reduce(tr, prim, atom(tr, x, node), axis, keep, node)
    return fn


# np.sum(x, axis), x.max(axis, keepdims=True), ...: the reductions each primitive declares (``reduces=``)
for _spec in list(PRIMITIVES.values()):
    for _name in _spec.reduction_names:
        HANDLERS["np." + _name] = _reduction_handler(_spec.name)
        HANDLERS["method." + _name] = _reduction_handler(_spec.name)


def _moments(take_sqrt):
    def fn(tr, args, kwargs, node):
        _check_kwargs(tr, kwargs, ("axis", "keepdims", "ddof"), node)
        x, axis, keepdims, ddof = _take(args, kwargs, ["a", "axis", "keepdims", "ddof"])
        x = array_arg(tr, x, node)
        keep = keepdims is not None and isinstance(keepdims, Const) and bool(keepdims.value)
        centred = tr.emit("sub", [x, _reduce(tr, "mean", x, axis, True, node)], node)
        squares = tr.emit("mul", [centred, centred], node)
        result = _reduce(tr, "mean", squares, axis, keep, node)
        if ddof is not None and not (isinstance(ddof, Const) and ddof.value == 0):
            axes = _axes(tr, axis, x.type.ndim, node)
            n = tr.emit("size", [x], node) if axes is None else _count_axes(tr, x, axes, node)
            n = tr.emit("to_float", [n], node)
            result = tr.emit("mul", [result, tr.emit("div", [n, tr.emit("sub", [n, atom(tr, ddof, node)], node)], node)], node)
        return tr.emit("sqrt", [result], node) if take_sqrt else result
    return fn


def _count_axes(tr, x, axes, node):
    n = const(1)
    for k in axes:
        n = tr.emit("mul", [n, tr.emit("dim", [x], node, axis=k)], node)
    return n


HANDLERS["np.var"] = HANDLERS["method.var"] = _moments(False)
HANDLERS["np.std"] = HANDLERS["method.std"] = _moments(True)


@handler("np.diff")
def _diff(tr, args, kwargs, node):
    """First differences along an axis: ``x[1:] - x[:-1]`` there."""
    x, n, axis = _take(args, kwargs, ["a", "n", "axis"], {"n": const(1), "axis": const(-1)})
    x = array_arg(tr, x, node)
    order = static_int(tr, n, node, "n")
    k = static_int(tr, axis, node, "axis") % x.type.ndim
    whole = [FULL_SLICE] * x.type.ndim
    for _ in range(order):
        upper, lower = list(whole), list(whole)
        upper[k], lower[k] = ("slice", const(1), None, None), ("slice", None, const(-1), None)
        x = tr.emit("sub", [tr.getitem(x, upper, node), tr.getitem(x, lower, node)], node)
    return x


@handler("np.polyval")
def _polyval(tr, args, kwargs, node):
    p, x = _take(args, kwargs, ["p", "x"])
    return inline_call(tr, python_impls.polyval, [array_arg(tr, p, node, "coefficient argument"),
                                                  atom(tr, x, node)], {}, node)


@handler("np.linalg.norm")
def _norm(tr, args, kwargs, node):
    x, ord_, axis, keepdims = _take(args, kwargs, ["x", "ord", "axis", "keepdims"])
    x = atom(tr, x, node)
    keep = keepdims is not None and isinstance(keepdims, Const) and bool(keepdims.value)
    if ord_ is not None and not isinstance(ord_, NoneValue):
        p = ord_.value if isinstance(ord_, Const) else None
        vectors = x.type.ndim == 1 or (isinstance(axis, Const) and not isinstance(axis, TupleValue))
        if not vectors or p not in (1, 2, float("inf"), -float("inf")):
            raise tr.error("np.linalg.norm supports ord=1, 2, inf, -inf of vectors (a 1-d array or "
                           "an int axis), ord=2, -2, 'nuc', 'fro', 1, -1, inf, -inf of a matrix (no axis) "
                           "and the default 2-norm / Frobenius norm", node,
                           UnsupportedFunctionError)
        if p != 2:  # sum, largest or smallest of the absolute values
            reduction = "sum" if p == 1 else ("max" if p > 0 else "min")
            return _reduce(tr, reduction, tr.emit("abs", [x], node), axis if vectors and x.type.ndim > 1
                           else None, keep, node)
    if x.type.ndim == 0:
        return tr.emit("abs", [x], node)
    if axis is not None and not isinstance(axis, NoneValue):
        # 2-norms along axes: sqrt of a sum of squares (not 'norm', a whole-array primitive)
        if isinstance(axis, TupleValue) and len(axis.items) == 2 and x.type.ndim == 2:
            axis = NONE
        squares = tr.emit("mul", [x, x], node)
        return tr.emit("sqrt", [_reduce(tr, "sum", squares, axis, keep, node)], node)
    if keep:
        result = tr.emit("norm", [x], node)
        for k in range(x.type.ndim):
            result = tr.emit("expand_axis", [result], node, axis=k)
        return result
    return tr.emit("norm", [x], node)
