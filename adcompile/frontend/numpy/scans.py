"""Handlers for scans and axis variants: cumsum/cumprod (flat or along an axis), sort/argsort
along an axis, ``np.maximum.accumulate``/``np.minimum.accumulate``, ``sum``/``mean`` with
``where=``, nansum and nanmean (see ``calls.py``).

Scans that are products or running extrema are inlined loops along the leading axis
(``python_impls.py``), the scanned axis moved to the front: their derivative is the loop's,
exact at zeros and at ties. ``sort`` is a gather by the sorting permutation, so its gradient
goes to the selected elements; ``where=`` and the nan-reductions replace the masked-out
elements by zero (their gradient is zero there).
"""
from ...errors import TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ...ir.nodes import Const
from . import python_impls
from ..calls import HANDLERS, array_arg, atom, handler, static_int, _check_kwargs, _take
from ..translator.inline import inline_call
from .reductions import _axes, _reduce
from ..values import NoneValue


def _is_none(value):
    return value is None or isinstance(value, NoneValue)


def _keepdims(value):
    return value is not None and isinstance(value, Const) and bool(value.value)


def _one_axis(tr, axis, x, node):
    k = static_int(tr, axis, node, "axis")
    if not -x.type.ndim <= k < x.type.ndim:
        raise tr.error(f"axis {k} is out of bounds for a {x.type.ndim}-d array", node, TypeMismatchError)
    return k % x.type.ndim


def _flat(tr, x, node):
    return x if x.type.ndim == 1 else tr.emit("ravel", [x], node)


def _along_leading_axis(tr, impl, x, k, node):
    """``impl`` (a scan along axis 0, from python_impls) applied along axis ``k`` of ``x``."""
    if k == 0:
        return inline_call(tr, impl, [x], {}, node)
    order = (k,) + tuple(d for d in range(x.type.ndim) if d != k)
    inverse = tuple(sorted(range(len(order)), key=lambda d: order[d]))
    moved = tr.emit("transpose", [x], node, axes=order)
    return tr.emit("transpose", [inline_call(tr, impl, [moved], {}, node)], node, axes=inverse)


# ------------------------------------------------------------------ cumulative sums and products
@handler("np.cumsum", "method.cumsum")
def _cumsum(tr, args, kwargs, node):
    x, axis = _take(args, kwargs, ["a", "axis"])
    x = array_arg(tr, x, node)
    if _is_none(axis) or x.type.ndim == 1:
        if not _is_none(axis):
            _one_axis(tr, axis, x, node)
        return tr.emit("cumsum", [_flat(tr, x, node)], node)
    return tr.emit("cumsum_axis", [x], node, axis=_one_axis(tr, axis, x, node))


@handler("np.cumprod", "method.cumprod")
def _cumprod(tr, args, kwargs, node):
    x, axis = _take(args, kwargs, ["a", "axis"])
    x = array_arg(tr, x, node)
    if _is_none(axis):
        return inline_call(tr, python_impls.cumprod, [x], {}, node)
    return _along_leading_axis(tr, python_impls.cumprod_leading, x, _one_axis(tr, axis, x, node), node)


def _accumulate(impl, name):
    def fn(tr, args, kwargs, node):
        _check_kwargs(tr, kwargs, ("array", "axis"), node)
        if len(args) > 2:
            raise tr.error(f"np.{name}.accumulate takes at most 2 positional arguments in compiled code",
                           node, UnsupportedFunctionError)
        x, axis = _take(args, kwargs, ["array", "axis"], {"axis": const(0)})
        x = array_arg(tr, x, node)
        if _is_none(axis):
            raise tr.error(f"np.{name}.accumulate needs an integer axis", node, TypeMismatchError)
        return _along_leading_axis(tr, impl, x, _one_axis(tr, axis, x, node), node)
    return fn


HANDLERS["np.maximum.accumulate"] = _accumulate(python_impls.maximum_accumulate_leading, "maximum")
HANDLERS["np.minimum.accumulate"] = _accumulate(python_impls.minimum_accumulate_leading, "minimum")


# ------------------------------------------------------------------ sorting
def _sorting_permutation(tr, args, kwargs, node):
    """The array to sort (flattened for axis=None), its sorting permutation and the axis
    (None for a 1-d array: then the permutation is a 1-d index array)."""
    x, axis = _take(args, kwargs, ["a", "axis"], {"axis": const(-1)})
    x = array_arg(tr, x, node)
    if _is_none(axis) or x.type.ndim == 1:
        if not _is_none(axis):
            _one_axis(tr, axis, x, node)
        x = _flat(tr, x, node)
        return x, tr.emit("argsort", [x], node), None
    k = _one_axis(tr, axis, x, node)
    return x, tr.emit("argsort_axis", [x], node, axis=k), k


@handler("np.argsort")
def _argsort(tr, args, kwargs, node):
    return _sorting_permutation(tr, args, kwargs, node)[1]


@handler("np.sort")
def _sort(tr, args, kwargs, node):
    x, order, k = _sorting_permutation(tr, args, kwargs, node)
    if k is None:
        return tr.getitem(x, [("array", order)], node)  # differentiable: a gather
    return tr.emit("permute_along", [x, order], node, axis=k)


# ------------------------------------------------------------------ masked and nan-reductions
def _masked(tr, x, mask, node):
    """``x`` where ``mask`` holds, 0 elsewhere (the gradient there is 0), and 1/0 counts of the
    kept elements, both of x's shape."""
    zeros = tr.emit("zeros_like", [x], node)
    kept = tr.emit("where", [mask, x, zeros], node)
    ones = tr.emit("ones_like", [tr.emit("to_float", [x], node) if x.type.dtype in ("i8", "b1") else x], node)
    counts = tr.emit("where", [mask, ones, tr.emit("zeros_like", [ones], node)], node)
    return kept, counts


def _masked_reduction(tr, x, mask, axis, keepdims, mean, node):
    if x.type.ndim == 0:
        raise tr.error("a masked or nan-reduction needs an array", node, TypeMismatchError)
    kept, counts = _masked(tr, x, mask, node)
    total = _reduce(tr, "sum", kept, axis, keepdims, node)
    if not mean:
        return total
    return tr.emit("div", [total, _reduce(tr, "sum", counts, axis, keepdims, node)], node)


def _where_reduction(plain, mean):
    def fn(tr, args, kwargs, node):
        if "where" not in kwargs:
            return plain(tr, args, kwargs, node)
        _check_kwargs(tr, kwargs, ("a", "axis", "keepdims", "where"), node)
        x, axis, keepdims = _take(args, kwargs, ["a", "axis", "keepdims"])
        x = array_arg(tr, x, node)
        mask = atom(tr, kwargs["where"], node)
        if mask.type.dtype != "b1" or mask.type.ndim > x.type.ndim:
            raise tr.error("where= must be a bool array that broadcasts to the reduced array", node,
                           TypeMismatchError)
        return _masked_reduction(tr, x, mask, axis, _keepdims(keepdims), mean, node)
    return fn


for _prefix in ("np.", "method."):
    HANDLERS[_prefix + "sum"] = _where_reduction(HANDLERS[_prefix + "sum"], mean=False)
    HANDLERS[_prefix + "mean"] = _where_reduction(HANDLERS[_prefix + "mean"], mean=True)


def _nan_reduction(mean):
    def fn(tr, args, kwargs, node):
        _check_kwargs(tr, kwargs, ("a", "axis", "keepdims"), node)
        x, axis, keepdims = _take(args, kwargs, ["a", "axis", "keepdims"])
        x = array_arg(tr, x, node)
        _axes(tr, axis, x.type.ndim, node)
        not_nan = tr.emit("eq", [x, x], node)  # NaN is the only value unequal to itself
        return _masked_reduction(tr, x, not_nan, axis, _keepdims(keepdims), mean, node)
    return fn


HANDLERS["np.nansum"] = _nan_reduction(mean=False)
HANDLERS["np.nanmean"] = _nan_reduction(mean=True)
