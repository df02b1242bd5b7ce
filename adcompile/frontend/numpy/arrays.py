"""Handlers for shapes and array creation: reshape, ravel, zeros/ones/full/arange, concatenate,
stack, np.array of lists, astype (see ``calls.py``)."""
from ...errors import TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ...ir.nodes import Const
from ...ir.types import FLOAT64, array_dtype
from ..calls import (HANDLERS, array_arg, atom, cast, handler, static_int, _take)
from ..resolve import DTypeRef, FuncRef
from ..values import (NoneValue, TupleValue)
from ...ir.indexing import FULL_SLICE


# ------------------------------------------------------------------ shapes
def shape_atoms(tr, value, node):
    """Integer atoms of a shape given as an int, a tuple of ints or ``x.shape``."""
    items = value.items if isinstance(value, TupleValue) else [value]
    out = []
    for item in items:
        item = atom(tr, item, node)
        if item.type.dtype != "i8" or item.type.ndim:
            raise tr.error("shapes must be integers", node, TypeMismatchError)
        out.append(item)
    return out


@handler("np.reshape", "method.reshape")
def _reshape(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    shape_args = args[1:] if len(args) > 1 else [kwargs.get("newshape", kwargs.get("shape"))]
    if len(shape_args) == 1:
        shape = shape_atoms(tr, shape_args[0], node)
    else:
        shape = shape_atoms(tr, TupleValue(shape_args), node)
    if x.type.ndim == 0:
        x = tr.emit("expand_axis", [x], node, axis=0)
    return tr.emit("reshape", [x] + shape, node)


@handler("np.ravel", "method.ravel", "method.flatten")
def _ravel(tr, args, kwargs, node):
    return tr.emit("ravel", [array_arg(tr, args[0], node)], node)


@handler("np.expand_dims")
def _expand_dims(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    axis = static_int(tr, args[1] if len(args) > 1 else kwargs["axis"], node, "axis")
    return tr.emit("expand_axis", [x], node, axis=axis % (x.type.ndim + 1))


@handler("np.squeeze", "method.squeeze")
def _squeeze(tr, args, kwargs, node):
    x = array_arg(tr, args[0], node)
    axis = args[1] if len(args) > 1 else kwargs.get("axis")
    if axis is None or isinstance(axis, NoneValue):
        raise tr.error("squeeze needs an explicit axis in compiled code (shapes are run-time values)",
                       node, UnsupportedFunctionError)
    k = static_int(tr, axis, node, "axis") % x.type.ndim
    return tr.getitem(x, [FULL_SLICE] * k + [("int", const(0))], node)


@handler("np.atleast_1d")
def _atleast_1d(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    return x if x.type.ndim else tr.emit("expand_axis", [x], node, axis=0)


def _dtype_of(tr, value, node, default=FLOAT64):
    if value is None or isinstance(value, NoneValue):
        return default
    if isinstance(value, DTypeRef):
        return value.dtype
    if isinstance(value, FuncRef) and value.name == "builtin.float":
        return "f8"
    if isinstance(value, FuncRef) and value.name == "builtin.int":
        return "i8"
    raise tr.error("dtype must be np.float64, np.float32, np.int64, float or int", node, TypeMismatchError)


def _as_dtype(tr, value, dtype, node):
    """``value`` cast to the ``dtype=`` argument, or as it is when none was given."""
    if dtype is None or isinstance(dtype, NoneValue):
        return value
    return cast(tr, value, _dtype_of(tr, dtype, node), node)


def _creator(prim):
    def fn(tr, args, kwargs, node):
        shape, dtype = _take(args, kwargs, ["shape", "dtype"])
        shape = shape_atoms(tr, shape, node)
        return tr.emit(prim, shape, node, ndim=len(shape), dtype=_dtype_of(tr, dtype, node))
    return fn


HANDLERS["np.zeros"] = _creator("zeros")
HANDLERS["np.ones"] = _creator("ones")
HANDLERS["np.empty"] = _creator("empty")


@handler("np.full")
def _full(tr, args, kwargs, node):
    shape, value, dtype = _take(args, kwargs, ["shape", "fill_value", "dtype"])
    value = atom(tr, value, node)
    value = _as_dtype(tr, value, dtype, node)
    if value.type.ndim:
        raise tr.error("np.full needs a scalar fill value", node, TypeMismatchError)
    return tr.emit("full", shape_atoms(tr, shape, node) + [value], node)


def _like(prim):
    def fn(tr, args, kwargs, node):
        x, dtype = _take(args, kwargs, ["a", "dtype"])
        x = atom(tr, x, node)
        x = _as_dtype(tr, x, dtype, node)
        if x.type.ndim == 0:
            return const(0.0) if prim == "zeros_like" else const(1.0)
        return tr.emit(prim, [x], node)
    return fn


HANDLERS["np.zeros_like"] = _like("zeros_like")
HANDLERS["np.empty_like"] = _like("zeros_like")
HANDLERS["np.ones_like"] = _like("ones_like")


@handler("np.full_like")
def _full_like(tr, args, kwargs, node):
    x, value = atom(tr, args[0], node), atom(tr, args[1], node)
    return tr.emit("add", [tr.emit("zeros_like", [x], node), value], node)


@handler("np.copy", "method.copy")
def _copy(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    return tr.emit("copy", [x], node) if x.type.ndim else x


@handler("method.astype")
def _astype(tr, args, kwargs, node):
    return cast(tr, atom(tr, args[0], node), _dtype_of(tr, args[1], node), node)


@handler("np.arange")
def _arange(tr, args, kwargs, node):
    values = [atom(tr, a, node) for a in args]
    if not 1 <= len(values) <= 3:
        raise tr.error("np.arange takes one to three arguments", node, TypeMismatchError)
    dtype = kwargs.get("dtype")
    values = [_as_dtype(tr, v, dtype, node) for v in values]
    return tr.emit("arange", values, node)


@handler("np.linspace")
def _linspace(tr, args, kwargs, node):
    """The ``linspace`` primitive between constant ends; ends that are values are differentiable:
    ``start + (stop - start) * t``, t the same grid on [0, 1] (float32 ends give float32)."""
    start, stop, num, endpoint = _take(args, kwargs, ["start", "stop", "num", "endpoint"],
                                       {"num": const(50), "endpoint": const(True)})
    if not (isinstance(endpoint, Const) and isinstance(endpoint.value, bool)):
        raise tr.error("np.linspace's endpoint must be True or False", node, TypeMismatchError)
    start, stop, num = (atom(tr, v, node) for v in (start, stop, num))
    if start.type.ndim or stop.type.ndim or num.type.dtype != "i8" or num.type.ndim:
        raise tr.error("np.linspace needs scalar ends and an integer number of points", node,
                       UnsupportedFunctionError)
    if isinstance(start, Const) and isinstance(stop, Const):
        return tr.emit("linspace", [start, stop, num], node, endpoint=endpoint.value)
    unit = tr.emit("linspace", [const(0.0), const(1.0), num], node, endpoint=endpoint.value)
    if all(end.type.dtype == "f4" for end in (start, stop) if not isinstance(end, Const)):
        # float32, as in numpy (a constant end is weakly typed); the constant is converted
        # explicitly, since numba makes float32 - 2.0 a float64
        start, stop = (tr.emit("as_dtype", [end], node, dtype="f4") if isinstance(end, Const) else end
                       for end in (start, stop))
        unit = cast(tr, unit, "f4", node)
    return tr.emit("add", [start, tr.emit("mul", [tr.emit("sub", [stop, start], node), unit], node)], node)


@handler("np.eye", "np.identity")
def _eye(tr, args, kwargs, node):
    if len(args) > 1:
        raise tr.error("np.eye(N) with one argument only", node, UnsupportedFunctionError)
    return tr.emit("eye", [atom(tr, args[0], node)], node)


def _sequence(tr, value, node):
    if not isinstance(value, TupleValue):
        raise tr.error("expected a tuple or list of arrays", node, TypeMismatchError)
    # an item written as a list (np.concatenate([x, [1.0, y]])) is an array, as in numpy
    return [_array_of_sequence(tr, v, node) if isinstance(v, TupleValue) else atom(tr, v, node)
            for v in value.items]


@handler("np.concatenate")
def _concatenate(tr, args, kwargs, node):
    arrays, axis = _take(args, kwargs, ["arrays", "axis"], {"axis": const(0)})
    arrays = _sequence(tr, arrays, node)
    k = static_int(tr, axis, node, "axis") % arrays[0].type.ndim
    return tr.emit("concatenate", arrays, node, axis=k)


@handler("np.stack")
def _stack(tr, args, kwargs, node):
    arrays, axis = _take(args, kwargs, ["arrays", "axis"], {"axis": const(0)})
    arrays = _sequence(tr, arrays, node)
    k = static_int(tr, axis, node, "axis") % (arrays[0].type.ndim + 1)
    return tr.emit("stack", arrays, node, axis=k)


@handler("np.hstack")
def _hstack(tr, args, kwargs, node):
    arrays = _sequence(tr, args[0], node)
    return tr.emit("concatenate", arrays, node, axis=0 if arrays[0].type.ndim == 1 else 1)


@handler("np.vstack")
def _vstack(tr, args, kwargs, node):
    arrays = [a if a.type.ndim == 2 else tr.emit("expand_axis", [a], node, axis=0)
              for a in _sequence(tr, args[0], node)]
    return tr.emit("concatenate", arrays, node, axis=0)


@handler("np.array", "np.asarray")
def _array(tr, args, kwargs, node):
    value, dtype = _take(args, kwargs, ["object", "dtype"])
    if isinstance(value, TupleValue):
        result = _array_of_sequence(tr, value, node)
    else:
        result = atom(tr, value, node)
        result = tr.emit("copy", [result], node) if result.type.ndim else result
    return _as_dtype(tr, result, dtype, node)


def _array_of_sequence(tr, value, node):
    """``np.array([...])`` of scalars, arrays or nested lists (``[[c, -s], [s, c]]``)."""
    items = [_array_of_sequence(tr, v, node) if isinstance(v, TupleValue) else atom(tr, v, node)
             for v in value.items]
    dtype = array_dtype(*[i.type.dtype for i in items])
    items = [cast(tr, i, dtype, node) for i in items]
    if all(i.type.ndim == 0 for i in items):
        return tr.emit("vector", items, node)  # one allocation, a store per element
    return tr.emit("stack", items, node, axis=0)
