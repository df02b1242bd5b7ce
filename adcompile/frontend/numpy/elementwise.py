"""Handlers for elementwise numpy/math functions and Python builtins (see ``calls.py``).

A function that is exactly one primitive (``np.sin``, ``math.atan2``, ``np.hypot``) needs no
code here: the primitive declares its names (``ir/primitives/``) and the loops below emit it.
"""
import math

from ...errors import AdCompileError, TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ...ir.nodes import Const
from ...ir.primitives import Kind, has_kind
from ..calls import (DIRECT_BINARY, DIRECT_UNARY, HANDLERS, array_arg, atom, handler, static_int, _check_kwargs,
                    _take)
from .reductions import _reduce
from ..values import (EnumerateValue, NoneValue, RangeValue, ReversedValue,
                     TupleValue, ZipValue)


# ------------------------------------------------------------------ elementwise
for _name, _prim in DIRECT_UNARY.items():
    def _unary(tr, args, kwargs, node, _prim=_prim):
        x = atom(tr, args[0], node)
        if isinstance(x, Const) and has_kind(_prim, Kind.CONSTANT_FOLDED):
            try:
                return const(getattr(math, _prim)(x.value))
            except (ValueError, OverflowError):
                pass  # outside math's domain (log(0), ...): numpy's inf/nan at run time
        return tr.emit(_prim, [x], node)
    HANDLERS[_name] = _unary

for _name, _prim in DIRECT_BINARY.items():
    def _binary(tr, args, kwargs, node, _prim=_prim):
        _check_kwargs(tr, kwargs, (), node)
        return tr.binop(_prim, args[0], args[1], node)
    HANDLERS[_name] = _binary


@handler("np.round", "np.around", "np.rint")
def _round(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    if x.type.dtype == "i8":
        return x  # numpy rounds integers to themselves, keeping the int dtype
    if len(args) > 1 or "decimals" in kwargs:
        decimals = static_int(tr, args[1] if len(args) > 1 else kwargs["decimals"], node, "decimals")
        return tr.emit("round", [x], node, decimals=decimals) if decimals else tr.emit("round", [x], node)
    return tr.emit("round", [x], node)


def _math_to_int(prim):
    def fn(tr, args, kwargs, node):  # math.floor/ceil return Python ints
        x = atom(tr, args[0], node)
        return x if x.type.dtype == "i8" else tr.emit("to_int", [tr.emit(prim, [x], node)], node)
    return fn


HANDLERS["math.floor"] = _math_to_int("floor")
HANDLERS["math.ceil"] = _math_to_int("ceil")


@handler("np.square")
def _square(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    return tr.emit("mul", [x, x], node)


@handler("np.reciprocal")
def _reciprocal(tr, args, kwargs, node):
    return tr.emit("div", [const(1.0), atom(tr, args[0], node)], node)


@handler("np.exp2")
def _exp2(tr, args, kwargs, node):
    return tr.emit("pow", [const(2.0), atom(tr, args[0], node)], node)


@handler("np.cbrt")
def _cbrt(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    magnitude = tr.emit("pow", [tr.emit("abs", [x], node), const(1.0 / 3.0)], node)
    return tr.emit("mul", [tr.emit("sign", [x], node), magnitude], node)


@handler("np.deg2rad")
def _deg2rad(tr, args, kwargs, node):
    return tr.emit("mul", [atom(tr, args[0], node), const(math.pi / 180.0)], node)


@handler("np.rad2deg")
def _rad2deg(tr, args, kwargs, node):
    return tr.emit("mul", [atom(tr, args[0], node), const(180.0 / math.pi)], node)


@handler("np.where")
def _where(tr, args, kwargs, node):
    if len(args) != 3:
        raise tr.error("np.where needs three arguments (condition, x, y) in compiled code", node,
                       UnsupportedFunctionError)
    c, a, b = (atom(tr, v, node) for v in args)
    return tr.emit("where", [c, a, b], node)


@handler("np.clip", "method.clip")
def _clip(tr, args, kwargs, node):
    x, lo, hi = _take(args, kwargs, ["a", "a_min", "a_max"])
    if lo is None and hi is None:
        lo, hi = kwargs.get("min"), kwargs.get("max")
    x = atom(tr, x, node)
    lo = const(-float("inf")) if lo is None or isinstance(lo, NoneValue) else atom(tr, lo, node)
    hi = const(float("inf")) if hi is None or isinstance(hi, NoneValue) else atom(tr, hi, node)
    return tr.emit("clip", [x, lo, hi], node)


@handler("np.isnan", "np.isinf", "np.isfinite", "math.isnan", "math.isinf", "math.isfinite")
def _isnan(tr, args, kwargs, node):
    raise tr.error("isnan/isinf/isfinite are not supported in compiled code yet", node, UnsupportedFunctionError)


# ------------------------------------------------------------------ builtins
@handler("builtin.abs")
def _abs(tr, args, kwargs, node):
    return tr.emit("abs", [atom(tr, args[0], node)], node)


def _builtin_extremum(prim, reduction):
    def fn(tr, args, kwargs, node):
        if len(args) == 1:
            return _reduce(tr, reduction, atom(tr, args[0], node), None, False, node)
        result = atom(tr, args[0], node)
        for other in args[1:]:
            result = tr.emit(prim, [result, atom(tr, other, node)], node)
        return result
    return fn


def _arg_extremum(prim):
    def fn(tr, args, kwargs, node):
        x, axis = _take(args, kwargs, ["a", "axis"])
        x = array_arg(tr, x, node)
        if axis is None or isinstance(axis, NoneValue) or x.type.ndim == 1:
            return tr.emit(prim, [x], node)  # numpy: a flat index when no axis is given
        return tr.emit(prim, [x], node, axis=static_int(tr, axis, node, "axis") % x.type.ndim)
    return fn


for _name in ("argmax", "argmin"):
    HANDLERS["np." + _name] = HANDLERS["method." + _name] = _arg_extremum(_name)


HANDLERS["builtin.min"] = _builtin_extremum("minimum", "min")
HANDLERS["builtin.max"] = _builtin_extremum("maximum", "max")


@handler("builtin.float")
def _float(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    if isinstance(x, Const):
        return const(float(x.value))
    if x.type.ndim:
        raise tr.error("float() of an array", node, TypeMismatchError)
    return x if x.type.dtype == "f8" else tr.emit("to_float", [x], node)


@handler("builtin.int")
def _int(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    if isinstance(x, Const):
        return const(int(x.value))
    return x if x.type.dtype == "i8" else tr.emit("to_int", [x], node)


@handler("builtin.bool")
def _bool(tr, args, kwargs, node):
    return tr.emit("ne", [atom(tr, args[0], node), const(0)], node)


@handler("builtin.len")
def _len(tr, args, kwargs, node):
    value = args[0]
    if isinstance(value, TupleValue):
        return const(len(value.items))
    return tr.emit("dim", [array_arg(tr, value, node)], node, axis=0)


@handler("builtin.range")
def _range(tr, args, kwargs, node):
    ints = [atom(tr, a, node) for a in args]
    for value in ints:
        if value.type.dtype != "i8" or value.type.ndim:
            raise tr.error("range() arguments must be integers", node, TypeMismatchError)
    if len(ints) == 1:
        return RangeValue(const(0), ints[0], const(1))
    if len(ints) == 2:
        return RangeValue(ints[0], ints[1], const(1))
    if len(ints) == 3:
        if isinstance(ints[2], Const) and ints[2].value == 0:
            raise tr.error("range() step must not be zero", node, AdCompileError)
        return RangeValue(*ints)
    raise tr.error("range() takes one to three arguments", node, TypeMismatchError)


@handler("builtin.enumerate")
def _enumerate(tr, args, kwargs, node):
    return EnumerateValue(args[0])


@handler("builtin.zip")
def _zip(tr, args, kwargs, node):
    return ZipValue(args)


@handler("builtin.reversed")
def _reversed(tr, args, kwargs, node):
    return ReversedValue(args[0])


@handler("builtin.round")
def _round(tr, args, kwargs, node):
    x = atom(tr, args[0], node)
    digits = args[1] if len(args) > 1 else kwargs.get("ndigits")
    if digits is not None and not isinstance(digits, NoneValue):
        return tr.emit("round", [x], node, decimals=static_int(tr, digits, node, "ndigits"))
    if x.type.ndim:
        raise tr.error("round() of an array; use np.round", node, TypeMismatchError)
    return x if x.type.dtype == "i8" else tr.emit("to_int", [tr.emit("round", [x], node)], node)


@handler("builtin.sum")
def _builtin_sum(tr, args, kwargs, node):
    value = args[0]
    if isinstance(value, TupleValue):
        total = const(0)
        for item in value.items:
            total = tr.binop("add", total, item, node)
        return total
    return _reduce(tr, "sum", array_arg(tr, value, node), None, False, node)
