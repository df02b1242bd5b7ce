"""Handlers for gathers and scatters: np.take, np.take_along_axis, np.add.at, np.bincount,
np.triu_indices/np.tril_indices, and the reads ``x[mask]`` (see ``calls.py``)."""
from ...errors import TypeMismatchError, UnsupportedFunctionError, UnsupportedSyntaxError
from ...ir.builder import const
from ...ir.nodes import Const, Var
from ..calls import _take, array_arg, atom, cast, handler
from .arrays import _array_of_sequence
from ..values import NONE, NoneValue, TupleValue
from ...ir.indexing import FULL_SLICE


def gather_along(tr, x, axis, idx, node):
    """``np.take(x, idx, axis)`` for an int array (or int) ``idx``: a gather of the leading axis
    (whose adjoint scatter-add the code generator handles), the axis moved there and back."""
    if idx.type.ndim > 1:  # gathered through the flat index, the result given the index's shape
        flat = gather_along(tr, x, axis, tr.emit("ravel", [idx], node), node)
        shape = [tr.emit("dim", [flat], node, axis=k) for k in range(axis)] + \
            [tr.emit("dim", [idx], node, axis=k) for k in range(idx.type.ndim)] + \
            [tr.emit("dim", [flat], node, axis=k) for k in range(axis + 1, flat.type.ndim)]
        return tr.emit("reshape", [flat] + shape, node)
    kind = "array" if idx.type.ndim else "int"
    if axis == 0:
        return tr.getitem(x, [(kind, idx)], node)
    order = (axis,) + tuple(k for k in range(x.type.ndim) if k != axis)
    gathered = tr.getitem(_transposed(tr, x, order, node), [(kind, idx)], node)
    if kind == "int":
        return gathered
    count = idx.type.ndim  # the gathered axes come first: put the leading axes of x before them
    moved = tuple(range(count, count + axis)) + tuple(range(count)) + tuple(range(count + axis, gathered.type.ndim))
    return _transposed(tr, gathered, moved, node)


def _transposed(tr, x, order, node):
    if order == tuple(range(x.type.ndim)):
        return x
    if x.type.ndim == 2:
        return tr.emit("transpose", [x], node)
    return tr.emit("transpose", [x], node, axes=order)


def check_keywords(tr, name, kwargs, allowed, node):
    for keyword in kwargs:
        if keyword not in allowed:
            raise tr.error(f"keyword argument '{keyword}' of {name}() is not supported by adcompile", node,
                           UnsupportedFunctionError)


def index_array(tr, value, node, what="an index"):
    """An int atom (scalar or array) from an index value; a list literal is an int array."""
    if isinstance(value, TupleValue):
        value = _array_of_sequence(tr, value, node)
    value = atom(tr, value, node)
    if value.type.dtype != "i8":
        raise tr.error(f"{what} must be an integer or an integer array", node, TypeMismatchError)
    return value


def static_axis(tr, value, ndim, node):
    if not (hasattr(value, "value") and isinstance(value.value, int) and not isinstance(value.value, bool)):
        raise tr.error("axis must be a constant integer", node, TypeMismatchError)
    if not -ndim <= value.value < ndim:
        raise tr.error(f"axis {value.value} is out of bounds for a {ndim}-d array", node, TypeMismatchError)
    return value.value % ndim


# ------------------------------------------------------------------ take, take_along_axis
@handler("np.take", "method.take")
def _np_take(tr, args, kwargs, node):
    check_keywords(tr, "take", kwargs, ("a", "indices", "axis"), node)
    x, idx, axis = _take(args, kwargs, ["a", "indices", "axis"])
    x, idx = array_arg(tr, x, node, "array"), index_array(tr, idx, node, "the indices of np.take")
    if axis is None or isinstance(axis, NoneValue):
        flat = x if x.type.ndim == 1 else tr.emit("ravel", [x], node)
        return gather_along(tr, flat, 0, idx, node)
    return gather_along(tr, x, static_axis(tr, axis, x.type.ndim, node), idx, node)


@handler("np.take_along_axis")
def _take_along_axis(tr, args, kwargs, node):
    """x at the flat positions sum_k coordinate_k * stride_k, where the coordinate along
    ``axis`` is the index array and along the other axes the position itself."""
    check_keywords(tr, "take_along_axis", kwargs, ("arr", "indices", "axis"), node)
    x, idx, axis = _take(args, kwargs, ["arr", "indices", "axis"])
    x, idx = array_arg(tr, x, node, "array"), index_array(tr, idx, node, "the indices of np.take_along_axis")
    if axis is None or isinstance(axis, NoneValue):
        raise tr.error("np.take_along_axis needs an axis in compiled code", node, UnsupportedFunctionError)
    if idx.type.ndim != x.type.ndim:
        raise tr.error("np.take_along_axis: the indices must have as many dimensions as the array", node,
                       TypeMismatchError)
    axis = static_axis(tr, axis, x.type.ndim, node)
    if x.type.ndim == 1:
        return gather_along(tr, x, 0, idx, node)
    b, ndim = tr.builder, x.type.ndim
    dims = [tr.emit("dim", [x], node, axis=k) for k in range(ndim)]
    negative = tr.emit("lt", [idx, const(0)], node)
    linear, stride = None, const(1)
    for k in reversed(range(ndim)):
        if k == axis:
            coordinate = tr.emit("where", [negative, b.add(idx, dims[k]), idx], node)
        else:
            coordinate = tr.emit("arange", [dims[k]], node)
            for _ in range(ndim - 1 - k):
                coordinate = tr.emit("expand_axis", [coordinate], node, axis=1)
        term = b.mul(coordinate, stride)
        linear = term if linear is None else b.add(term, linear)
        stride = b.mul(stride, dims[k])
    return gather_along(tr, tr.emit("ravel", [x], node), 0, linear, node)


# ------------------------------------------------------------------ np.add.at, bincount
@handler("np.add.at")
def _add_at(tr, args, kwargs, node):
    """``np.add.at(x, idx, v)``: x's memory gets x + v at the rows idx, repeated indices
    accumulating (where ``x[idx] += v`` keeps the last write of each, as numpy)."""
    if kwargs or len(args) != 3:
        raise tr.error("np.add.at takes three positional arguments (array, indices, values)", node,
                       UnsupportedFunctionError)
    x = args[0]
    if not (isinstance(x, Var) and x.type.ndim):
        raise tr.error("the first argument of np.add.at must be an array variable (it is written to)", node,
                       TypeMismatchError)
    if isinstance(args[1], TupleValue) and not all(isinstance(i, Const) for i in args[1].items):
        raise tr.error("np.add.at with a tuple of index arrays is not supported; index the leading axis "
                       "(rows) with one integer array", node, UnsupportedFunctionError)
    idx = index_array(tr, args[1], node, "the indices of np.add.at")
    if idx.type.ndim > 1:
        raise tr.error("np.add.at: the indices must be an integer or a 1-d integer array", node,
                       UnsupportedFunctionError)
    if x.type.ndim > 3:
        raise tr.error("np.add.at supports arrays of up to 3 dimensions", node, UnsupportedFunctionError)
    values = atom(tr, args[2], node)
    if x.type.is_float and values.type.dtype != x.type.dtype:  # numpy adds in x's dtype
        values = cast(tr, values, x.type.dtype, node)
    tr.update_in_place(x, tr.emit("index_add", [x, idx, values], node), node)
    return NONE


@handler("np.bincount")
def _bincount(tr, args, kwargs, node):
    """Counts (integers), or sums of the weights (differentiable in them), per value of a 1-d
    non-negative int array: a scatter-add into max(max(x) + 1, minlength) bins."""
    check_keywords(tr, "bincount", kwargs, ("x", "weights", "minlength"), node)
    x, weights, minlength = _take(args, kwargs, ["x", "weights", "minlength"], {"minlength": const(0)})
    x = index_array(tr, x, node, "the argument of np.bincount")
    if x.type.ndim != 1:
        raise tr.error("np.bincount needs a 1-d integer array", node, TypeMismatchError)
    minlength = index_array(tr, minlength, node, "minlength")
    length = tr.emit("maximum", [tr.builder.add(tr.emit("max", [x], node), const(1)), minlength], node)
    if weights is None or isinstance(weights, NoneValue):
        zeros = tr.emit("zeros", [length], node, ndim=1, dtype="i8")
        return tr.emit("index_add", [zeros, x, const(1)], node)
    weights = atom(tr, weights, node)
    if weights.type.ndim != 1:
        raise tr.error("the weights of np.bincount must be a 1-d array", node, TypeMismatchError)
    dtype = "f4" if weights.type.dtype == "f4" else "f8"
    return tr.emit("index_add", [tr.emit("zeros", [length], node, ndim=1, dtype=dtype), x, weights], node)


# ------------------------------------------------------------------ triangles, masks, list indices
def _triangle(part):
    def fn(tr, args, kwargs, node):
        check_keywords(tr, f"{part}_indices", kwargs, ("n", "k"), node)
        if len(args) > 2:
            raise tr.error(f"np.{part}_indices(n, k) with a square matrix only (no m)", node,
                           UnsupportedFunctionError)
        n, k = _take(args, kwargs, ["n", "k"], {"k": const(0)})
        n, k = index_array(tr, n, node, "n"), index_array(tr, k, node, "k")
        return TupleValue([tr.emit("triangle_indices", [n, k], node, part=part, axis=axis) for axis in (0, 1)])
    return fn


handler("np.triu_indices")(_triangle("triu"))
handler("np.tril_indices")(_triangle("tril"))


def sequence_index_items(tr, value, node, is_list):
    """Index items of a list literal (``x[[0, 2]]``: one int array) or of a tuple of index
    arrays (``A[np.triu_indices(n)]``: one item per array)."""
    if is_list:
        return [("array", index_array(tr, value, node))]
    items = []
    for item in value.items:
        item = index_array(tr, item, node)
        items.append(("array", item) if item.type.ndim else ("int", item))
    return items


def masked_read(tr, x, items, node):
    """``x[mask]``: the elements (or, for a 1-d mask of a 2-d x, the rows) where the mask is
    true, gathered at the positions np.flatnonzero finds (the length is a run-time value)."""
    masks = [item for item in items if item[0] == "mask"]
    if len(items) != 1 or len(masks) != 1:
        raise tr.error("a boolean mask must be the only index (x[mask]) in compiled code; index its "
                       "result in a second step", node, UnsupportedSyntaxError)
    mask = masks[0][1]
    positions = tr.emit("flatnonzero", [mask], node)
    if mask.type.ndim == x.type.ndim:
        return gather_along(tr, x if x.type.ndim == 1 else tr.emit("ravel", [x], node), 0, positions, node)
    if mask.type.ndim == 1:
        return gather_along(tr, x, 0, positions, node)
    raise tr.error(f"a {mask.type.ndim}-d mask of a {x.type.ndim}-d array is not supported (use a mask of "
                   "x's shape, or a 1-d mask of its rows)", node, UnsupportedSyntaxError)


def gather_of_inner_axis(tr, x, items, node):
    """``x[idx, :]`` as ``x[idx]``; ``x[a:b, idx, ...]`` with one index array after slices only, as the slicing, then a
    gather of that axis (brought to the front, whose adjoint scatter the code generator
    handles), then the rest of the index; None for other index forms."""
    arrays = [k for k, item in enumerate(items) if item[0] == "array"]
    if arrays and len(items) > 1 and items[-1] == FULL_SLICE:  # x[idx, :] is x[idx]
        return tr.getitem(x, items[:-1], node)
    if len(arrays) != 1 or arrays[0] == 0 or any(item[0] != "slice" for item in items[:arrays[0]]):
        return None
    k = arrays[0]
    sliced = x if all(item == FULL_SLICE for item in items[:k]) else tr.getitem(x, items[:k], node)
    gathered = gather_along(tr, sliced, k, items[k][1], node)
    rest = items[k + 1:]
    if not rest:
        return gathered
    return tr.getitem(gathered, [FULL_SLICE] * (k + items[k][1].type.ndim) + rest, node)
