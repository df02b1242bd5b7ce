"""Handlers that build and reshape arrays from others: tile, repeat, triu/tril, meshgrid,
flip/fliplr/flipud, column_stack, broadcast_to, swapaxes, moveaxis, append, split and
array_split (see ``calls.py``).

Each is lowered to linear primitives (views, reshapes, joins, broadcasting, masking), so
its derivatives of every order follow from theirs. ``tile`` and ``repeat`` insert a length-1
axis, broadcast it to the repeat count and merge it with its neighbour:
``np.repeat(x, 3)`` is ``broadcast_to(x[:, None], (n, 3)).reshape(3 * n)``.
"""
from ...errors import TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ...ir.nodes import Const
from ..calls import accept, array_arg, atom, handler, static_int, _take
from .arrays import _array_of_sequence, shape_atoms
from ..static_values import StaticStr
from ..values import NoneValue, TupleValue
from ...ir.indexing import FULL_SLICE


accept({
    "np.tile": (2, ("A", "reps")), "np.repeat": (3, ("a", "repeats", "axis")),
    "method.repeat": (3, ("repeats", "axis")), "np.triu": (2, ("m", "k")), "np.tril": (2, ("m", "k")),
    "np.meshgrid": (None, ("indexing",)), "np.flip": (2, ("m", "axis")), "np.fliplr": (1, ("m",)),
    "np.flipud": (1, ("m",)), "np.column_stack": (1, ("tup",)), "np.broadcast_to": (2, ("array", "shape")),
    "np.swapaxes": (3, ("a", "axis1", "axis2")), "method.swapaxes": (3, ("axis1", "axis2")),
    "np.moveaxis": (3, ("a", "source", "destination")), "np.append": (3, ("arr", "values", "axis")),
    "np.split": (3, ("ary", "indices_or_sections", "axis")),
    "np.array_split": (3, ("ary", "indices_or_sections", "axis")),
})


def given(value):
    return value is not None and not isinstance(value, NoneValue)


def axis_index(tr, value, ndim, node, what="axis"):
    k = static_int(tr, value, node, what)
    if not -ndim <= k < ndim:
        raise tr.error(f"{what} {k} is out of bounds for a {ndim}-d array", node, TypeMismatchError)
    return k % ndim


def _axes(tr, value, ndim, node, what="axis"):
    values = value.items if isinstance(value, TupleValue) else [value]
    return [axis_index(tr, v, ndim, node, what) for v in values]


def _int_atoms(tr, value, node, what):
    """An int, or a tuple/list of ints (constants or int scalars), as atoms."""
    items = value.items if isinstance(value, TupleValue) else [value]
    atoms = [atom(tr, item, node) for item in items]
    if not atoms or any(a.type.dtype != "i8" or a.type.ndim for a in atoms):
        raise tr.error(f"{what} must be an integer or a tuple of integers", node, TypeMismatchError)
    return atoms


def _dims(tr, x, node):
    return [tr.emit("dim", [x], node, axis=k) for k in range(x.type.ndim)]


def _times(tr, a, b, node):
    return b if _is_one(a) else a if _is_one(b) else tr.emit("mul", [a, b], node)


def _is_one(value):
    return isinstance(value, Const) and value.value == 1


def _at_least_1d(tr, x, node):
    return x if x.type.ndim else tr.emit("expand_axis", [x], node, axis=0)


def permute(tr, x, axes, node):
    if list(axes) == list(range(x.type.ndim)):
        return x
    if x.type.ndim == 2:
        return tr.emit("transpose", [x], node)
    return tr.emit("transpose", [x], node, axes=tuple(axes))


# ------------------------------------------------------------------ repeating
@handler("np.tile")
def _tile(tr, args, kwargs, node):
    x, reps = _take(args, kwargs, ["A", "reps"])
    x = atom(tr, x, node)
    reps = _int_atoms(tr, reps, node, "np.tile's reps")
    ndim = max(x.type.ndim, len(reps))
    while x.type.ndim < ndim:
        x = tr.emit("expand_axis", [x], node, axis=0)
    reps = [const(1)] * (ndim - len(reps)) + reps
    expanded, shape, merged = x, [], []
    for count, length in zip(reps, _dims(tr, x, node)):
        if _is_one(count):
            shape.append(length)
            merged.append(length)
        else:  # a new axis of length ``count`` in front of this one, merged with it
            expanded = tr.emit("expand_axis", [expanded], node, axis=len(shape))
            shape += [count, length]
            merged.append(_times(tr, count, length, node))
    if len(shape) == ndim:
        return tr.emit("copy", [x], node)
    return tr.emit("reshape", [tr.emit("broadcast_to", [expanded] + shape, node)] + merged, node)


@handler("np.repeat", "method.repeat")
def _repeat(tr, args, kwargs, node):
    x, repeats, axis = _take(args, kwargs, ["a", "repeats", "axis"])
    x = atom(tr, x, node)
    count = atom(tr, repeats, node)
    if count.type.dtype != "i8" or count.type.ndim:
        raise tr.error("np.repeat supports one integer repeat count (not an array of counts)", node,
                       UnsupportedFunctionError)
    if given(axis) and x.type.ndim:
        k = axis_index(tr, axis, x.type.ndim, node)
    else:
        x, k = _at_least_1d(tr, x, node), 0
        if x.type.ndim > 1:
            x = tr.emit("ravel", [x], node)
    dims = _dims(tr, x, node)
    expanded = tr.emit("expand_axis", [x], node, axis=k + 1)
    repeated = tr.emit("broadcast_to", [expanded] + dims[:k + 1] + [count] + dims[k + 1:], node)
    return tr.emit("reshape", [repeated] + dims[:k] + [_times(tr, dims[k], count, node)] + dims[k + 1:], node)


# ------------------------------------------------------------------ triangles, grids, broadcasting
def _triangle(prim):
    def fn(tr, args, kwargs, node):
        x, k = _take(args, kwargs, ["m", "k"], {"k": const(0)})
        x = atom(tr, x, node)
        if x.type.ndim != 2:
            raise tr.error(f"np.{prim} is supported for 2-d arrays (here {x.type.describe()})", node,
                           UnsupportedFunctionError)
        return tr.emit(prim, [x], node, k=static_int(tr, k, node, f"np.{prim}'s k"))
    return fn


handler("np.triu")(_triangle("triu"))
handler("np.tril")(_triangle("tril"))


@handler("np.meshgrid")
def _meshgrid(tr, args, kwargs, node):
    indexing = kwargs.get("indexing", StaticStr("xy"))
    if not isinstance(indexing, StaticStr) or indexing.value not in ("xy", "ij"):
        raise tr.error("np.meshgrid's indexing must be 'xy' or 'ij'", node, TypeMismatchError)
    vectors = []
    for value in args:
        v = _at_least_1d(tr, atom(tr, value, node), node)
        vectors.append(v if v.type.ndim == 1 else tr.emit("ravel", [v], node))
    if not vectors:
        raise tr.error("np.meshgrid needs arrays", node, TypeMismatchError)
    positions = list(range(len(vectors)))
    if indexing.value == "xy" and len(vectors) > 1:  # the first two axes swapped: x along columns
        positions[0], positions[1] = 1, 0
    shape = [None] * len(vectors)
    for v, p in zip(vectors, positions):
        shape[p] = tr.emit("dim", [v], node, axis=0)
    grids = []
    for v, p in zip(vectors, positions):
        for k in range(len(vectors)):
            if k != p:
                v = tr.emit("expand_axis", [v], node, axis=k)
        # numpy's grids are writable copies, not views
        grids.append(tr.emit("copy", [tr.emit("broadcast_to", [v] + shape, node)], node))
    return TupleValue(grids)


@handler("np.broadcast_to")
def _broadcast_to(tr, args, kwargs, node):
    x, shape = _take(args, kwargs, ["array", "shape"])
    x, shape = atom(tr, x, node), shape_atoms(tr, shape, node)
    if len(shape) < x.type.ndim:
        raise tr.error(f"cannot broadcast {x.type.describe()} to a {len(shape)}-d shape", node,
                       TypeMismatchError)
    if x.type.ndim == 0:
        return tr.emit("full", shape + [x], node)
    return tr.emit("broadcast_to", [x] + shape, node)


# ------------------------------------------------------------------ flips and axis orders
def _flipped(tr, x, axes, node):
    items = [FULL_SLICE] * x.type.ndim
    for k in axes:
        items[k] = ("slice", None, None, const(-1))
    return tr.getitem(x, items, node)


@handler("np.flip")
def _flip(tr, args, kwargs, node):
    x, axis = _take(args, kwargs, ["m", "axis"])
    x = atom(tr, x, node)
    if x.type.ndim == 0:
        return x
    axes = _axes(tr, axis, x.type.ndim, node) if given(axis) else range(x.type.ndim)
    return _flipped(tr, x, axes, node)


def _flip_axis(axis, name):
    def fn(tr, args, kwargs, node):
        x = atom(tr, args[0] if args else kwargs.get("m"), node)
        if x.type.ndim <= axis:
            raise tr.error(f"np.{name} needs an array of at least {axis + 1} dimension(s)", node, TypeMismatchError)
        return _flipped(tr, x, [axis], node)
    return fn


handler("np.flipud")(_flip_axis(0, "flipud"))
handler("np.fliplr")(_flip_axis(1, "fliplr"))


@handler("np.swapaxes", "method.swapaxes")
def _swapaxes(tr, args, kwargs, node):
    x, first, second = _take(args, kwargs, ["a", "axis1", "axis2"])
    x = array_arg(tr, x, node)
    i, j = axis_index(tr, first, x.type.ndim, node), axis_index(tr, second, x.type.ndim, node)
    axes = list(range(x.type.ndim))
    axes[i], axes[j] = axes[j], axes[i]
    return permute(tr, x, axes, node)


@handler("np.moveaxis")
def _moveaxis(tr, args, kwargs, node):
    x, source, destination = _take(args, kwargs, ["a", "source", "destination"])
    x = array_arg(tr, x, node)
    sources = _axes(tr, source, x.type.ndim, node, "source")
    destinations = _axes(tr, destination, x.type.ndim, node, "destination")
    if len(sources) != len(destinations) or len(set(sources)) != len(sources) \
            or len(set(destinations)) != len(destinations):
        raise tr.error("np.moveaxis needs as many distinct sources as distinct destinations", node,
                       TypeMismatchError)
    order = [k for k in range(x.type.ndim) if k not in sources]
    for dest, src in sorted(zip(destinations, sources)):  # numpy's own construction
        order.insert(dest, src)
    return permute(tr, x, order, node)


# ------------------------------------------------------------------ joining and splitting
def _array_value(tr, value, node):
    return _array_of_sequence(tr, value, node) if isinstance(value, TupleValue) else atom(tr, value, node)


@handler("np.column_stack")
def _column_stack(tr, args, kwargs, node):
    (arrays,) = _take(args, kwargs, ["tup"])
    if not isinstance(arrays, TupleValue):
        raise tr.error("np.column_stack takes a tuple or list of arrays", node, TypeMismatchError)
    columns = []
    for value in arrays.items:
        a = _array_value(tr, value, node)
        if a.type.ndim not in (1, 2):
            raise tr.error("np.column_stack joins 1-d and 2-d arrays", node, TypeMismatchError)
        columns.append(a if a.type.ndim == 2 else tr.emit("expand_axis", [a], node, axis=1))
    return tr.emit("concatenate", columns, node, axis=1)


@handler("np.append")
def _append(tr, args, kwargs, node):
    arr, values, axis = _take(args, kwargs, ["arr", "values", "axis"])
    arr, values = _array_value(tr, arr, node), _array_value(tr, values, node)
    if not given(axis):
        flat = [_at_least_1d(tr, a, node) for a in (arr, values)]
        flat = [a if a.type.ndim == 1 else tr.emit("ravel", [a], node) for a in flat]
        return tr.emit("concatenate", flat, node, axis=0)
    if arr.type.ndim == 0 or arr.type.ndim != values.type.ndim:
        raise tr.error("np.append with an axis needs arrays with the same number of dimensions", node,
                       TypeMismatchError)
    return tr.emit("concatenate", [arr, values], node, axis=axis_index(tr, axis, arr.type.ndim, node))


def _splitter(equal_parts):
    def fn(tr, args, kwargs, node):
        x, where, axis = _take(args, kwargs, ["ary", "indices_or_sections", "axis"], {"axis": const(0)})
        x = array_arg(tr, x, node)
        k = axis_index(tr, axis, x.type.ndim, node)
        if isinstance(where, TupleValue):  # split points
            bounds = [None] + _int_atoms(tr, where, node, "the split indices") + [None]
        else:
            bounds = _section_bounds(tr, x, k, static_int(tr, where, node, "the number of sections"),
                                     equal_parts, node)
        parts = []
        for start, stop in zip(bounds[:-1], bounds[1:]):
            items = [FULL_SLICE] * x.type.ndim
            items[k] = ("slice", start, stop, None)
            parts.append(tr.getitem(x, items, node))
        return TupleValue(parts)
    return fn


def _section_bounds(tr, x, axis, sections, equal_parts, node):
    """Where the ``sections`` parts start: equal parts for np.split (checked at run time), and
    for np.array_split the first ``n % sections`` parts one longer, as numpy does."""
    if sections <= 0:
        raise tr.error("the number of sections must be positive", node, TypeMismatchError)
    n = tr.emit("dim", [x], node, axis=axis)
    if equal_parts:
        length = tr.emit("section_length", [n, const(sections)], node)
        return [None] + [_times(tr, const(j), length, node) for j in range(1, sections)] + [None]
    length = tr.emit("floordiv", [n, const(sections)], node)
    longer = tr.emit("mod", [n, const(sections)], node)
    return [None] + [tr.emit("add", [_times(tr, const(j), length, node),
                                     tr.emit("minimum", [const(j), longer], node)], node)
                     for j in range(1, sections)] + [None]


handler("np.split")(_splitter(True))
handler("np.array_split")(_splitter(False))
