"""Handlers for statistics: median, percentile/quantile, average, ptp, cov, corrcoef (see
``calls.py``).

Order statistics are gathers: the array (as a vector, or as a matrix whose rows are its
lines along ``axis``) is sorted by a permutation that carries no derivative (``argsort``,
``argsort_rows``), and the elements at the wanted ranks are read through it. The gathers
give the gradient to the selected elements, as numpy's value is made of them: the quantile
at fraction q is numpy's default linear interpolation ``a + gamma * (b - a)`` between the
order statistics at ranks ``floor(q * (n - 1))`` and the next, so ``1 - gamma`` and ``gamma``
go to them; the median of an even count is the mean of the middle two, half to each.
A NaN sorts last, so a line holding one has a NaN largest element: the result is that NaN,
as numpy's (``propagating``).
The rest are sums and products of moments.
"""
from ...errors import TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ...ir.nodes import Const
from ..calls import accept, array_arg, atom, cast, handler, _take
from .building import axis_index, given, permute
from .reductions import _reduce
from ..static_values import StaticStr
from ..values import TupleValue
from ...ir.indexing import FULL_SLICE


accept({
    "np.median": (2, ("a", "axis", "overwrite_input", "keepdims")),
    "np.percentile": (3, ("a", "q", "axis", "overwrite_input", "method", "keepdims")),
    "np.quantile": (3, ("a", "q", "axis", "overwrite_input", "method", "keepdims")),
    "np.average": (3, ("a", "axis", "weights", "returned", "keepdims")),
    "np.ptp": (2, ("a", "axis", "keepdims")),
    "np.cov": (2, ("m", "y", "rowvar", "bias", "ddof")),
    "np.corrcoef": (2, ("x", "y", "rowvar")),
})


def _flag(tr, value, default, node, what):
    if value is None:
        return default
    if isinstance(value, Const) and isinstance(value.value, (bool, int)):
        return bool(value.value)
    raise tr.error(f"{what} must be a constant True or False", node, TypeMismatchError)


def _number(tr, value, like, node):
    """A constant in ``like``'s float dtype: numba makes ``float32 * 0.5`` a float64."""
    if like.type.dtype == "f4":
        return tr.emit("as_dtype", [const(value)], node, dtype="f4")
    return const(value)


# ------------------------------------------------------------------ order statistics
class _Ordered:
    """``x`` arranged for reading order statistics along ``axis`` (None: of all elements)."""

    def __init__(self, tr, x, axis, keepdims, node):
        self.tr, self.node, self.ndim, self.keepdims = tr, node, x.type.ndim, keepdims
        self.axis = None if axis is None or x.type.ndim == 1 else axis
        if self.axis is None:
            self.values = x if x.type.ndim == 1 else tr.emit("ravel", [x], node)
            self.order = tr.emit("argsort", [self.values], node)
        else:
            kept = [k for k in range(x.type.ndim) if k != self.axis]
            lines = permute(tr, x, kept + [self.axis], node)
            if x.type.ndim > 2:  # one row per line along the axis
                self.kept_dims = [tr.emit("dim", [x], node, axis=k) for k in kept]
                rows = self.kept_dims[0]
                for length in self.kept_dims[1:]:
                    rows = tr.emit("mul", [rows, length], node)
                lines = tr.emit("reshape", [lines, rows, tr.emit("dim", [x], node, axis=self.axis)], node)
            self.values = lines
            self.order = tr.emit("argsort_rows", [lines], node)
            self.rows = tr.emit("arange", [tr.emit("dim", [lines], node, axis=0)], node)
        self.count = tr.emit("dim", [self.values], node, axis=self.values.type.ndim - 1)
        self.last = tr.emit("sub", [self.count, const(1)], node)  # the largest rank

    def at(self, rank):
        """The elements of rank ``rank`` (an int atom): a scalar, or one per line."""
        tr, node = self.tr, self.node
        if self.axis is None:
            position = tr.getitem(self.order, [("int", rank)], node)
            return tr.getitem(self.values, [("int", position)], node)
        positions = tr.getitem(self.order, [FULL_SLICE, ("int", rank)], node)
        return tr.getitem(self.values, [("array", self.rows), ("array", positions)], node)

    def finish(self, result):
        """A result per line, in the shape numpy gives it (``keepdims`` included), NaN for a
        line holding a NaN."""
        tr, node = self.tr, self.node
        largest = self.at(self.last)
        result = tr.emit("where", [tr.emit("ne", [largest, largest], node), largest, result], node)
        if self.axis is not None and self.ndim > 2:
            result = tr.emit("reshape", [result] + self.kept_dims, node)
        if self.keepdims:
            for k in range(self.ndim) if self.axis is None else [self.axis]:
                result = tr.emit("expand_axis", [result], node, axis=k)
        return result

    def quantile(self, fraction):
        """numpy's linear interpolation between the order statistics around ``fraction * (n - 1)``."""
        tr, node = self.tr, self.node
        virtual = tr.emit("mul", [const(fraction), tr.emit("to_float", [self.last], node)], node)
        below = tr.emit("to_int", [tr.emit("floor", [virtual], node)], node)
        above = tr.emit("minimum", [tr.emit("add", [below, const(1)], node), self.last], node)
        weight = tr.emit("sub", [virtual, tr.emit("to_float", [below], node)], node)
        if self.values.type.dtype == "f4":
            weight = tr.emit("as_dtype", [weight], node, dtype="f4")
        low, high = self.at(below), self.at(above)
        return self.finish(tr.emit("add", [low, tr.emit("mul", [weight, tr.emit("sub", [high, low], node)],
                                                           node)], node))

    def median(self):
        tr, node = self.tr, self.node
        lower = tr.emit("floordiv", [self.last, const(2)], node)
        upper = tr.emit("floordiv", [self.count, const(2)], node)
        total = tr.emit("add", [self.at(lower), self.at(upper)], node)
        return self.finish(tr.emit("mul", [total, _number(tr, 0.5, self.values, node)], node))


def _ordered(tr, a, axis, keepdims, node):
    x = array_arg(tr, a, node)
    if isinstance(axis, TupleValue):
        raise tr.error("order statistics along several axes at once are not supported (one axis or None)",
                       node, UnsupportedFunctionError)
    k = axis_index(tr, axis, x.type.ndim, node) if given(axis) else None
    return _Ordered(tr, x, k, _flag(tr, keepdims, False, node, "keepdims"), node)


@handler("np.median")
def _median(tr, args, kwargs, node):
    a, axis, _, keepdims = _take(args, kwargs, ["a", "axis", "overwrite_input", "keepdims"])
    return _ordered(tr, a, axis, keepdims, node).median()


def _quantile_handler(name, scale):
    def fn(tr, args, kwargs, node):
        a, q, axis, _, method, keepdims = _take(args, kwargs, ["a", "q", "axis", "overwrite_input", "method",
                                                               "keepdims"])
        if method is not None and not (isinstance(method, StaticStr) and method.value == "linear"):
            raise tr.error(f"np.{name} supports method='linear' (numpy's default) only", node,
                           UnsupportedFunctionError)
        fractions = _fractions(tr, q, scale, name, node)
        ordered = _ordered(tr, a, axis, keepdims, node)
        if not isinstance(q, TupleValue):
            return ordered.quantile(fractions[0])
        results = [ordered.quantile(f) for f in fractions]
        if results[0].type.ndim == 0:
            return tr.emit("concatenate", [tr.emit("expand_axis", [r], node, axis=0) for r in results], node, axis=0)
        return tr.emit("stack", results, node, axis=0)
    return fn


def _fractions(tr, q, scale, name, node):
    items = q.items if isinstance(q, TupleValue) else [q]
    if not items or not all(isinstance(v, Const) and isinstance(v.value, (int, float)) for v in items):
        raise tr.error(f"np.{name}'s q must be a constant number or a list of constant numbers", node,
                       UnsupportedFunctionError)
    fractions = [v.value / scale for v in items]
    if not all(0.0 <= f <= 1.0 for f in fractions):
        raise tr.error(f"np.{name}'s q must be in [0, {scale:g}]", node, TypeMismatchError)
    return fractions


handler("np.percentile")(_quantile_handler("percentile", 100.0))
handler("np.quantile")(_quantile_handler("quantile", 1.0))


# ------------------------------------------------------------------ averages and ranges
@handler("np.average")
def _average(tr, args, kwargs, node):
    a, axis, weights, returned, keepdims = _take(args, kwargs, ["a", "axis", "weights", "returned", "keepdims"])
    x = atom(tr, a, node)
    keep = _flag(tr, keepdims, False, node, "keepdims")
    if given(weights):
        w = _weights_along(tr, x, atom(tr, weights, node), axis, node)
        scale = _reduce(tr, "sum", w, axis, keep, node)
        total = tr.emit("div", [_reduce(tr, "sum", tr.emit("mul", [x, w], node), axis, keep, node), scale], node)
    else:
        total = _reduce(tr, "mean", x, axis, keep, node)
    if not _flag(tr, returned, False, node, "returned"):
        return total
    if not given(weights):  # the counts of the averaged elements
        scale = _reduce(tr, "sum", tr.emit("ones_like", [x], node), axis, keep, node)
    # numpy returns the sum of the weights in the shape of the average
    scale = cast(tr, scale, total.type.dtype, node)
    if total.type.ndim:
        scale = tr.emit("add", [tr.emit("zeros_like", [total], node), scale], node)
    return TupleValue([total, scale])


def _weights_along(tr, x, w, axis, node):
    """Weights of x's shape, or 1-d weights along an int axis made to broadcast along it."""
    if w.type.ndim == x.type.ndim:
        return w
    if not (w.type.ndim == 1 and given(axis) and not isinstance(axis, TupleValue)):
        raise tr.error("np.average's weights must have the shape of a, or be 1-d along an int axis", node,
                       TypeMismatchError)
    k = axis_index(tr, axis, x.type.ndim, node)
    for j in range(x.type.ndim):
        if j != k:
            w = tr.emit("expand_axis", [w], node, axis=j)
    return w


@handler("np.ptp")
def _ptp(tr, args, kwargs, node):
    a, axis, keepdims = _take(args, kwargs, ["a", "axis", "keepdims"])
    x = atom(tr, a, node)
    keep = _flag(tr, keepdims, False, node, "keepdims")
    return tr.emit("sub", [_reduce(tr, "max", x, axis, keep, node), _reduce(tr, "min", x, axis, keep, node)], node)


# ------------------------------------------------------------------ covariance
def _variables(tr, value, rowvar, node):
    """The observations of ``value`` as rows of variables, in float64 (numpy's cov dtype)."""
    x = cast(tr, array_arg(tr, value, node), "f8", node)
    if x.type.ndim > 2:
        raise tr.error("np.cov takes 1-d or 2-d arrays", node, TypeMismatchError)
    if x.type.ndim == 1:
        return tr.emit("expand_axis", [x], node, axis=0)
    return x if rowvar else tr.emit("transpose", [x], node)


def _covariance(tr, m, y, rowvar, ddof, node):
    """The covariance matrix, or a scalar when there is a single variable (numpy squeezes)."""
    rows = [_variables(tr, m, rowvar, node)]
    if given(y):
        rows.append(_variables(tr, y, rowvar, node))
    x = rows[0] if len(rows) == 1 else tr.emit("concatenate", rows, node, axis=0)
    centred = tr.emit("sub", [x, tr.emit("expand_axis", [tr.emit("mean", [x], node, axis=1)], node, axis=1)], node)
    observations = tr.emit("dim", [x], node, axis=1)
    divisor = tr.emit("to_float", [tr.emit("sub", [observations, ddof], node)], node)
    products = tr.emit("matmul", [centred, tr.emit("transpose", [centred], node)], node)
    c = tr.emit("div", [products, divisor], node)
    if len(rows) == 1 and atom(tr, m, node).type.ndim == 1:
        return tr.getitem(c, [("int", const(0)), ("int", const(0))], node)
    return c


def _ddof(tr, bias, ddof, node):
    if given(ddof):
        value = atom(tr, ddof, node)
        if value.type.dtype != "i8" or value.type.ndim:
            raise tr.error("np.cov's ddof must be an integer", node, TypeMismatchError)
        return value
    return const(0 if _flag(tr, bias, False, node, "bias") else 1)


@handler("np.cov")
def _cov(tr, args, kwargs, node):
    m, y, rowvar, bias, ddof = _take(args, kwargs, ["m", "y", "rowvar", "bias", "ddof"])
    return _covariance(tr, m, y, _flag(tr, rowvar, True, node, "rowvar"), _ddof(tr, bias, ddof, node), node)


@handler("np.corrcoef")
def _corrcoef(tr, args, kwargs, node):
    x, y, rowvar = _take(args, kwargs, ["x", "y", "rowvar"])
    c = _covariance(tr, x, y, _flag(tr, rowvar, True, node, "rowvar"), const(1), node)
    if c.type.ndim == 0:
        return tr.emit("div", [c, c], node)  # numpy's value: 1, or nan for a constant variable
    deviations = tr.emit("sqrt", [tr.emit("diag", [c], node)], node)
    c = tr.emit("div", [c, tr.emit("expand_axis", [deviations], node, axis=1)], node)
    c = tr.emit("div", [c, tr.emit("expand_axis", [deviations], node, axis=0)], node)
    return tr.emit("clip", [c, const(-1.0), const(1.0)], node)  # as numpy: rounding kept within [-1, 1]
