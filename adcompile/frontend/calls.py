"""Calls and attributes: numpy/math/builtin functions and array methods lowered to primitives.

This module dispatches a call to its handler and holds what handlers share (the ``HANDLERS``
registry, argument taking, the table of accepted arguments, array attributes). The handlers
register themselves when their modules are imported (once, by ``frontend/__init__.py``); they
live by family in
``numpy_elementwise.py`` (ufuncs, math, builtins), ``numpy_reductions.py``,
``numpy_linalg.py`` and ``numpy_arrays.py`` (shapes, creation). Each takes the translator,
the positional and keyword argument values and the AST node, and returns a frontend value.
Sugar is lowered there (``np.square(x)`` -> ``x * x``, ``x.var(axis=0)`` -> mean of squared
deviations, ``keepdims=True`` -> ``expand_axis``).
"""
from ..errors import TypeMismatchError, UnsupportedFunctionError, UnsupportedSyntaxError
from ..ir.builder import const
from ..ir.nodes import Const, Var
from ..ir.primitives import PRIMITIVES
from ..ir.types import Type
from .inline import inline_call
from .parse_tables import ATTRIBUTES_INSTEAD, RANDOM_INSTEAD
from .resolve import DTypeRef, FuncRef, UserFunction
from .values import (MethodRef, TupleValue)

HANDLERS = {}



def _direct_names(arity):
    """``{"np.sin": "sin", "math.asin": "arcsin", ...}``: the numpy/math functions of ``arity``
    arguments that are exactly one primitive, as the primitive table declares them."""
    return {prefix + name: spec.name for spec in PRIMITIVES.values() if spec.arity == arity
            for prefix, names in (("np.", spec.numpy_names), ("math.", spec.math_names)) for name in names}


# handlers in numpy_elementwise.py
DIRECT_UNARY = _direct_names(1)
DIRECT_BINARY = _direct_names(2)


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
        hint = f"; {RANDOM_INSTEAD}" if func.name.startswith("np.random.") else ""
        raise tr.error(f"'{func.name.split('.', 1)[1]}' is not supported by adcompile{hint}", node,
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
    hint = f"; {ATTRIBUTES_INSTEAD[attr]}" if attr in ATTRIBUTES_INSTEAD else ""
    what = "arrays" if x.type.ndim else "numbers"
    raise tr.error(f"{what} have no supported attribute '{attr}'{hint}", node, UnsupportedFunctionError)


# ------------------------------------------------------------------ argument checks
# What each function accepts in compiled code: the most positional arguments (methods count
# the array itself) and the keyword names. Anything else (``out=``, ``endpoint=``, a third
# positional of ``np.sum``, ...) is an error: ignoring it would silently compute something
# else. ``None`` means any number. Handlers not listed check their own arguments.
_UFUNC1 = (1, ())
_UFUNC2 = (2, ())
_REDUCTION = (2, ("a", "axis", "keepdims"))
_ACCEPTS = {
    **{n: _UFUNC1 for n in DIRECT_UNARY}, **{n: _UFUNC2 for n in DIRECT_BINARY},
    "np.round": (2, ("decimals",)), "np.around": (2, ("decimals",)), "np.rint": _UFUNC1,
    "math.floor": _UFUNC1, "math.ceil": _UFUNC1,
    "np.square": _UFUNC1, "np.reciprocal": _UFUNC1, "np.exp2": _UFUNC1,
    "np.cbrt": _UFUNC1, "np.deg2rad": _UFUNC1,
    "np.rad2deg": _UFUNC1, "np.where": (3, ()),
    "np.clip": (3, ("a", "a_min", "a_max", "min", "max")), "method.clip": (3, ("a_min", "a_max", "min", "max")),
    "builtin.abs": (1, ()), "builtin.min": (None, ()), "builtin.max": (None, ()), "builtin.float": (1, ()),
    "builtin.int": (1, ()), "builtin.bool": (1, ()), "builtin.len": (1, ()), "builtin.range": (3, ()),
    "builtin.enumerate": (1, ()), "builtin.zip": (None, ()), "builtin.reversed": (1, ()),
    "builtin.round": (2, ("ndigits",)), "builtin.sum": (1, ()),
    **{p + n: _REDUCTION for p in ("np.", "method.") for n in ("sum", "mean", "prod", "max", "min")},
    **{p + n: (2, ("a", "axis", "keepdims", "where")) for p in ("np.", "method.") for n in ("sum", "mean")},
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
    "np.arange": (3, ("dtype",)), "np.linspace": (4, ("start", "stop", "num", "endpoint")), "np.eye": _UFUNC1,
    "np.identity": _UFUNC1,
    "np.concatenate": (2, ("arrays", "axis")), "np.stack": (2, ("arrays", "axis")),
    "np.hstack": _UFUNC1, "np.vstack": _UFUNC1, "np.array": (2, ("object", "dtype")),
    "np.asarray": (2, ("a", "dtype")),
}


def accept(table):
    """Declare what the handlers of a family module accept: ``{name: (most positional
    arguments, keyword names)}``, as in ``_ACCEPTS``."""
    _ACCEPTS.update(table)


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

