"""Calls and attributes: numpy/math/builtin functions and array methods lowered to primitives.

Each handler takes the translator, the positional and keyword argument values and the AST
node, and returns a frontend value. Sugar is lowered here (``np.square(x)`` -> ``x * x``,
``x.var(axis=0)`` -> mean of squared deviations, ``keepdims=True`` -> ``expand_axis``).
"""
from ..errors import AdCompileError, TypeMismatchError, UnsupportedFunctionError, UnsupportedSyntaxError
from ..ir.builder import const
from ..ir.nodes import Const, Var
from ..ir.types import FLOAT64, I8, Type
from .resolve import DTypeRef, FuncRef, ModuleRef, UserFunction
from .values import (NONE, EnumerateValue, MethodRef, NoneValue, RangeValue, ReversedValue,
                     TupleValue, ZipValue)

HANDLERS = {}


def handler(*names):
    def register(fn):
        for name in names:
            HANDLERS[name] = fn
        return fn
    return register


def check_supported(tr, func, node, keywords=()):
    """Report an unsupported library function or keyword before the arguments are translated
    (they may be constants, like einsum's subscripts string or sort's kind="stable", that would
    give a less useful error)."""
    if isinstance(func, FuncRef) and func.name not in HANDLERS:
        raise tr.error(f"'{func.name.split('.', 1)[1]}' is not supported by adcompile", node,
                       UnsupportedFunctionError)
    if isinstance(func, MethodRef) and "method." + func.name not in HANDLERS:
        raise tr.error(f"the array method '.{func.name}()' is not supported by adcompile", node,
                       UnsupportedFunctionError)
    if isinstance(func, (FuncRef, MethodRef)) and keywords:
        name = func.name if isinstance(func, FuncRef) else "method." + func.name
        check_arguments(tr, name, [], dict.fromkeys(keywords), node)


def call(tr, func, args, kwargs, node):
    check_supported(tr, func, node)
    if isinstance(func, FuncRef):
        fn = HANDLERS.get(func.name)
        check_arguments(tr, func.name, args, kwargs, node)
        return fn(tr, args, kwargs, node)
    if isinstance(func, MethodRef):
        fn = HANDLERS.get("method." + func.name)
        check_arguments(tr, "method." + func.name, [func.receiver] + args, kwargs, node)
        return fn(tr, [func.receiver] + args, kwargs, node)
    if isinstance(func, DTypeRef):
        return cast(tr, atom(tr, args[0], node), func.dtype, node)
    if isinstance(func, UserFunction):
        from .inline import inline_call
        return inline_call(tr, func.pyfunc, args, kwargs, node)
    if hasattr(func, "compile_call"):  # extension values and nested defs (inline.LocalFunction)
        return func.compile_call(tr, args, kwargs, node)
    raise tr.error("this object cannot be called in compiled code", node, UnsupportedFunctionError)


def atom(tr, value, node):
    return tr.as_atom(value, node)


def array_arg(tr, value, node, what="argument"):
    value = atom(tr, value, node)
    if value.type.ndim == 0:
        raise tr.error(f"this {what} must be an array", node, TypeMismatchError)
    return value


def static_int(tr, value, node, what):
    if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
        return value.value
    raise tr.error(f"{what} must be a constant integer", node, TypeMismatchError)


def cast(tr, value, dtype, node):
    if value.type.dtype == dtype:
        return value if value.type.ndim else tr.emit("alias", [value], node) if isinstance(value, Var) else value
    if isinstance(value, Const):
        return const(float(value.value) if dtype in ("f8", "f4") else int(value.value), Type(dtype))
    return tr.emit("as_dtype", [value], node, dtype=dtype)


def _take(args, kwargs, names, defaults=None):
    """Positional/keyword arguments by name; defaults for the missing ones."""
    defaults = defaults or {}
    values = {}
    for k, name in enumerate(names):
        if k < len(args):
            values[name] = args[k]
        elif name in kwargs:
            values[name] = kwargs[name]
        elif name in defaults:
            values[name] = defaults[name]
        else:
            values[name] = None
    return [values[n] for n in names]


def _check_kwargs(tr, kwargs, allowed, node):
    for name in kwargs:
        if name not in allowed:
            raise tr.error(f"keyword argument '{name}' is not supported here", node, UnsupportedSyntaxError)


# ------------------------------------------------------------------ elementwise
_UNARY = {"sin": "sin", "cos": "cos", "tan": "tan", "arcsin": "arcsin", "arccos": "arccos",
          "arctan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp",
          "expm1": "expm1", "log": "log", "log1p": "log1p", "log2": "log2", "log10": "log10",
          "sqrt": "sqrt", "abs": "abs", "absolute": "abs", "fabs": "abs", "sign": "sign",
          "floor": "floor", "ceil": "ceil", "round": "round", "around": "round", "rint": "round",
          "negative": "neg"}
for _np_name, _prim in _UNARY.items():
    def _unary(tr, args, kwargs, node, _prim=_prim):
        x = atom(tr, args[0], node)
        if _prim == "round" and x.type.dtype == "i8":
            return x  # numpy rounds integers to themselves, keeping the int dtype
        if _prim == "round" and (len(args) > 1 or "decimals" in kwargs):
            decimals = static_int(tr, args[1] if len(args) > 1 else kwargs["decimals"], node, "decimals")
            return tr.emit("round", [x], node, decimals=decimals) if decimals else tr.emit("round", [x], node)
        if isinstance(x, Const) and _prim in ("sqrt", "exp", "log", "sin", "cos"):
            import math
            try:
                return const(getattr(math, _prim)(x.value))
            except (ValueError, OverflowError):
                pass  # outside math's domain (log(0), ...): numpy's inf/nan at run time
        return tr.emit(_prim, [x], node)
    HANDLERS["np." + _np_name] = _unary
    HANDLERS["math." + _np_name] = _unary


def _math_to_int(prim):
    def fn(tr, args, kwargs, node):  # math.floor/ceil return Python ints
        x = atom(tr, args[0], node)
        return x if x.type.dtype == "i8" else tr.emit("to_int", [tr.emit(prim, [x], node)], node)
    return fn


HANDLERS["math.floor"] = _math_to_int("floor")
HANDLERS["math.ceil"] = _math_to_int("ceil")

_BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div",
           "power": "pow", "maximum": "maximum", "minimum": "minimum", "fmax": "maximum",
           "fmin": "minimum", "arctan2": "arctan2", "mod": "mod", "remainder": "mod",
           "greater": "gt", "less": "lt", "equal": "eq", "logical_and": "and", "logical_or": "or"}
for _np_name, _prim in _BINARY.items():
    def _binary(tr, args, kwargs, node, _prim=_prim):
        _check_kwargs(tr, kwargs, (), node)
        return tr.binop(_prim, args[0], args[1], node) if _prim in ("add", "sub", "mul", "div", "pow", "mod") \
            else tr.emit(_prim, [atom(tr, args[0], node), atom(tr, args[1], node)], node)
    HANDLERS["np." + _np_name] = _binary
HANDLERS["math.arctan2"] = HANDLERS["np.arctan2"]
HANDLERS["math.power"] = HANDLERS["np.power"]


@handler("np.logical_not")
def _logical_not(tr, args, kwargs, node):
    return tr.emit("not", [atom(tr, args[0], node)], node)


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


@handler("np.hypot", "math.hypot")
def _hypot(tr, args, kwargs, node):
    a, b = atom(tr, args[0], node), atom(tr, args[1], node)
    return tr.emit("sqrt", [tr.emit("add", [tr.emit("mul", [a, a], node), tr.emit("mul", [b, b], node)], node)], node)


@handler("np.logaddexp")
def _logaddexp(tr, args, kwargs, node):
    # A primitive of its own: written as max + log1p(exp(min - max)) its derivative would be
    # wrong where the arguments tie (max and min would both send it to the same argument).
    return tr.emit("logaddexp", [atom(tr, args[0], node), atom(tr, args[1], node)], node)


@handler("np.deg2rad")
def _deg2rad(tr, args, kwargs, node):
    import math
    return tr.emit("mul", [atom(tr, args[0], node), const(math.pi / 180.0)], node)


@handler("np.rad2deg")
def _rad2deg(tr, args, kwargs, node):
    import math
    return tr.emit("mul", [atom(tr, args[0], node), const(180.0 / math.pi)], node)


@handler("np.sinc")
def _sinc(tr, args, kwargs, node):
    raise tr.error("'np.sinc' is not supported by adcompile", node, UnsupportedFunctionError)


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


def _sort_permutation(tr, args, kwargs, node, what):
    x, axis = _take(args, kwargs, ["a", "axis"], {"axis": const(-1)})
    x = array_arg(tr, x, node)
    if not isinstance(axis, NoneValue) and x.type.ndim != 1:
        raise tr.error(f"{what} is supported for 1-d arrays (or axis=None) only", node,
                       UnsupportedFunctionError)
    if x.type.ndim != 1:
        x = tr.emit("ravel", [x], node)
    return x, tr.emit("argsort", [x], node)


@handler("np.argsort")
def _argsort(tr, args, kwargs, node):
    return _sort_permutation(tr, args, kwargs, node, "np.argsort")[1]


@handler("np.sort")
def _sort(tr, args, kwargs, node):
    x, order = _sort_permutation(tr, args, kwargs, node, "np.sort")
    return tr.getitem(x, [("array", order)], node)  # differentiable: a gather


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


for _name, _prim in {"sum": "sum", "mean": "mean", "prod": "prod", "max": "max", "min": "min",
                     "amax": "max", "amin": "min"}.items():
    HANDLERS["np." + _name] = _reduction_handler(_prim)
    HANDLERS["method." + _name] = _reduction_handler(_prim)


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
    whole = [("slice", None, None, None)] * x.type.ndim
    for _ in range(order):
        upper, lower = list(whole), list(whole)
        upper[k], lower[k] = ("slice", const(1), None, None), ("slice", None, const(-1), None)
        x = tr.emit("sub", [tr.getitem(x, upper, node), tr.getitem(x, lower, node)], node)
    return x


@handler("np.cumprod", "method.cumprod")
def _cumprod(tr, args, kwargs, node):
    from . import python_impls
    from .inline import inline_call
    x, axis = _take(args, kwargs, ["a", "axis"])
    if axis is not None and not isinstance(axis, NoneValue):
        raise tr.error("cumprod with an axis is not supported yet (flattened cumprod only)", node,
                       UnsupportedFunctionError)
    return inline_call(tr, python_impls.cumprod, [array_arg(tr, x, node)], {}, node)


@handler("np.polyval")
def _polyval(tr, args, kwargs, node):
    from . import python_impls
    from .inline import inline_call
    p, x = _take(args, kwargs, ["p", "x"])
    return inline_call(tr, python_impls.polyval, [array_arg(tr, p, node, "coefficient argument"),
                                                  atom(tr, x, node)], {}, node)


@handler("np.cumsum", "method.cumsum")
def _cumsum(tr, args, kwargs, node):
    x, axis = _take(args, kwargs, ["a", "axis"])
    if axis is not None and not isinstance(axis, NoneValue):
        raise tr.error("cumsum with an axis is not supported yet (flattened cumsum only)", node,
                       UnsupportedFunctionError)
    return tr.emit("cumsum", [array_arg(tr, x, node)], node)


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
                           "an int axis) and the default 2-norm / Frobenius norm", node,
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


# ------------------------------------------------------------------ linear algebra
def matmul(tr, a, b, node):
    if a.type.ndim == 0 or b.type.ndim == 0:
        raise tr.error("matmul operands must be arrays (use * for scalars)", node, TypeMismatchError)
    return tr.emit("matmul", [a, b], node)


@handler("np.matmul")
def _matmul(tr, args, kwargs, node):
    return matmul(tr, atom(tr, args[0], node), atom(tr, args[1], node), node)


@handler("np.dot", "method.dot", "np.inner", "np.vdot")
def _dot(tr, args, kwargs, node):
    a, b = atom(tr, args[0], node), atom(tr, args[1], node)
    if a.type.ndim == 0 or b.type.ndim == 0:
        return tr.emit("mul", [a, b], node)
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
    return tr.getitem(x, [("slice", None, None, None)] * k + [("int", const(0))], node)


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
    if dtype is not None and not isinstance(dtype, NoneValue):
        value = cast(tr, value, _dtype_of(tr, dtype, node), node)
    if value.type.ndim:
        raise tr.error("np.full needs a scalar fill value", node, TypeMismatchError)
    return tr.emit("full", shape_atoms(tr, shape, node) + [value], node)


def _like(prim):
    def fn(tr, args, kwargs, node):
        x, dtype = _take(args, kwargs, ["a", "dtype"])
        x = atom(tr, x, node)
        if dtype is not None and not isinstance(dtype, NoneValue):
            x = cast(tr, x, _dtype_of(tr, dtype, node), node)
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
    if dtype is not None and not isinstance(dtype, NoneValue):
        values = [cast(tr, v, _dtype_of(tr, dtype, node), node) for v in values]
    return tr.emit("arange", values, node)


@handler("np.linspace")
def _linspace(tr, args, kwargs, node):
    start, stop, num = _take(args, kwargs, ["start", "stop", "num"], {"num": const(50)})
    return tr.emit("linspace", [atom(tr, start, node), atom(tr, stop, node), atom(tr, num, node)], node)


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
    if dtype is not None and not isinstance(dtype, NoneValue):
        result = cast(tr, result, _dtype_of(tr, dtype, node), node)
    return result


def _array_of_sequence(tr, value, node):
    """``np.array([...])`` of scalars, arrays or nested lists (``[[c, -s], [s, c]]``)."""
    items = [_array_of_sequence(tr, v, node) if isinstance(v, TupleValue) else atom(tr, v, node)
             for v in value.items]
    if all(i.type.ndim == 0 for i in items):
        items = [tr.emit("expand_axis", [i], node, axis=0) for i in items]
        return tr.emit("concatenate", items, node, axis=0)
    return tr.emit("stack", items, node, axis=0)


# ------------------------------------------------------------------ attributes
def attribute(tr, x, attr, node):
    if attr == "shape":
        return TupleValue([tr.emit("dim", [x], node, axis=k) for k in range(x.type.ndim)])
    if attr == "ndim":
        return const(x.type.ndim)
    if attr == "size":
        return tr.emit("size", [x], node) if x.type.ndim else const(1)
    if attr == "T":
        return tr.emit("transpose", [x], node) if x.type.ndim == 2 else \
            (x if x.type.ndim < 2 else tr.emit("transpose", [x], node, axes=tuple(reversed(range(x.type.ndim)))))
    if attr == "real":
        return x
    if "method." + attr in HANDLERS:
        return MethodRef(x, attr)
    raise tr.error(f"arrays have no supported attribute '{attr}'", node, UnsupportedFunctionError)


# ------------------------------------------------------------------ argument checks
# What each function accepts in compiled code: the most positional arguments (methods count
# the array itself) and the keyword names. Anything else (``out=``, ``endpoint=``, a third
# positional of ``np.sum``, ...) is an error: ignoring it would silently compute something
# else. ``None`` means any number. Handlers not listed check their own arguments.
_UFUNC1 = (1, ())
_UFUNC2 = (2, ())
_REDUCTION = (2, ("a", "axis", "keepdims"))
_ACCEPTS = {
    **{"np." + n: _UFUNC1 for n in _UNARY}, **{"math." + n: _UFUNC1 for n in _UNARY},
    **{"np." + n: _UFUNC2 for n in _BINARY},
    "np.round": (2, ("decimals",)), "np.around": (2, ("decimals",)), "np.rint": _UFUNC1,
    "math.arctan2": _UFUNC2, "math.power": _UFUNC2, "math.hypot": _UFUNC2,
    "np.logical_not": _UFUNC1, "np.square": _UFUNC1, "np.reciprocal": _UFUNC1, "np.exp2": _UFUNC1,
    "np.cbrt": _UFUNC1, "np.hypot": _UFUNC2, "np.logaddexp": _UFUNC2, "np.deg2rad": _UFUNC1,
    "np.rad2deg": _UFUNC1, "np.where": (3, ()),
    "np.clip": (3, ("a", "a_min", "a_max", "min", "max")), "method.clip": (3, ("a_min", "a_max", "min", "max")),
    "builtin.abs": (1, ()), "builtin.min": (None, ()), "builtin.max": (None, ()), "builtin.float": (1, ()),
    "builtin.int": (1, ()), "builtin.bool": (1, ()), "builtin.len": (1, ()), "builtin.range": (3, ()),
    "builtin.enumerate": (1, ()), "builtin.zip": (None, ()), "builtin.reversed": (1, ()),
    "builtin.round": (2, ("ndigits",)), "builtin.sum": (1, ()),
    **{p + n: _REDUCTION for p in ("np.", "method.") for n in ("sum", "mean", "prod", "max", "min")},
    "np.amax": _REDUCTION, "np.amin": _REDUCTION,
    "np.argmax": (2, ("a", "axis")), "np.argmin": (2, ("a", "axis")),
    "method.argmax": (2, ("axis",)), "method.argmin": (2, ("axis",)),
    "np.argsort": (2, ("a", "axis")), "np.sort": (2, ("a", "axis")),
    **{p + n: (2, ("a", "axis", "keepdims", "ddof")) for p in ("np.", "method.") for n in ("var", "std")},
    "np.diff": (3, ("a", "n", "axis")), "np.cumsum": (2, ("a", "axis")), "method.cumsum": (2, ("axis",)),
    "np.cumprod": (2, ("a", "axis")), "method.cumprod": (2, ("axis",)), "np.polyval": (2, ("p", "x")),
    "np.linalg.norm": (4, ("x", "ord", "axis", "keepdims")),
    "np.matmul": _UFUNC2, "np.dot": _UFUNC2, "method.dot": _UFUNC2, "np.inner": _UFUNC2,
    "np.vdot": _UFUNC2, "np.outer": _UFUNC2, "np.cross": _UFUNC2,
    "np.transpose": (2, ("axes",)), "method.transpose": (None, ("axes",)),
    "np.trace": _UFUNC1, "method.trace": _UFUNC1, "np.diag": _UFUNC1,
    "np.reshape": (2, ("newshape", "shape")), "method.reshape": (None, ("shape",)),
    "np.ravel": _UFUNC1, "method.ravel": _UFUNC1, "method.flatten": _UFUNC1,
    "np.expand_dims": (2, ("axis",)), "np.squeeze": (2, ("axis",)), "method.squeeze": (2, ("axis",)),
    "np.atleast_1d": _UFUNC1,
    "np.zeros": (2, ("shape", "dtype")), "np.ones": (2, ("shape", "dtype")), "np.empty": (2, ("shape", "dtype")),
    "np.full": (3, ("shape", "fill_value", "dtype")),
    "np.zeros_like": (2, ("a", "dtype")), "np.ones_like": (2, ("a", "dtype")), "np.empty_like": (2, ("a", "dtype")),
    "np.full_like": _UFUNC2, "np.copy": _UFUNC1, "method.copy": _UFUNC1, "method.astype": (2, ()),
    "np.arange": (3, ("dtype",)), "np.linspace": (3, ("start", "stop", "num")), "np.eye": _UFUNC1,
    "np.identity": _UFUNC1,
    "np.concatenate": (2, ("arrays", "axis")), "np.stack": (2, ("arrays", "axis")),
    "np.hstack": _UFUNC1, "np.vstack": _UFUNC1, "np.array": (2, ("object", "dtype")),
    "np.asarray": (2, ("a", "dtype")),
}


def check_arguments(tr, name, args, kwargs, node):
    """Reject arguments the translation of ``name`` would otherwise ignore."""
    accepts = _ACCEPTS.get(name)
    if accepts is None:
        return
    most, keywords = accepts
    shown = name.split(".", 1)[1]
    shown = f".{shown}()" if name.startswith("method.") else f"{shown}()"
    if most is not None and len(args) > most:
        given = len(args) - name.startswith("method.")
        raise tr.error(f"{shown} takes at most {most - name.startswith('method.')} positional "
                       f"argument(s) in compiled code, {given} given", node, UnsupportedFunctionError)
    for keyword in kwargs:
        if keyword not in keywords:
            raise tr.error(f"keyword argument '{keyword}' of {shown} is not supported by adcompile", node,
                           UnsupportedFunctionError)
    if not args and not kwargs and most != 0 and name not in ("builtin.zip",):
        raise tr.error(f"{shown} needs arguments", node, UnsupportedFunctionError)


__all__ = ["call", "attribute", "matmul", "UnsupportedFunctionError", "ModuleRef", "I8", "Var", "NONE"]
