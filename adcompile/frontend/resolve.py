"""Name resolution: what a global or closure name of the user's function refers to.

numpy may be imported under any name (``np``, ``numpy``, ``from numpy import exp``): we
look at the object a name is bound to, not at its spelling, and find numpy functions by
identity in a table.
"""
import builtins
import math
import types

import numpy as np

from ..ir.primitives import PRIMITIVES
from .handler_table import HANDLERS
from .numpy.scipy_special import scipy_special_name


class ModuleRef:
    def __init__(self, module):
        self.module = module


class FuncRef:
    """A known function: ``name`` keys the handler table in ``frontend/calls.py``."""

    def __init__(self, name):
        self.name = name


class UserFunction:
    """A Python function (or compiled adcompile function) to inline at the call site."""

    def __init__(self, pyfunc):
        self.pyfunc = pyfunc


class DTypeRef:
    def __init__(self, dtype):
        self.dtype = dtype


# numpy's dtypes, found as functions are: ``np.float64(x)`` converts, ``dtype=np.float64`` names one
_DTYPES = {"float64": "f8", "float32": "f4", "int64": "i8"}
# the builtins the frontend handles (as "builtin.<name>"; they share some names with primitives
# but are looked up by the identity of Python's builtin functions)
_BUILTIN_NAMES = ["abs", "min", "max", "float", "int", "len", "range", "enumerate", "zip", "sum",
                  "bool", "reversed", "round"]

_BY_ID = None


def _handled_names(prefix):
    """The functions ``<prefix>.<name>`` that have a handler of their own (calls.py's family
    modules), then those that are exactly one primitive (``numpy_names``/``math_names`` of the
    declarations in ir/primitives/)."""
    handled = [name[len(prefix) + 1:] for name in HANDLERS if name.startswith(prefix + ".")]
    declared = [n for spec in PRIMITIVES.values() for n in (spec.numpy_names if prefix == "np" else spec.math_names)]
    return [name for name in handled + declared if "." not in name]


def _table():
    global _BY_ID
    if _BY_ID is None:
        table = {}
        for name in list(_DTYPES) + _handled_names("np"):
            if hasattr(np, name):
                table[id(getattr(np, name))] = "np." + name
        table[id(np.linalg.norm)] = "np.linalg.norm"
        for name in _handled_names("math"):
            table[id(getattr(math, name))] = "math." + name
        for name in _BUILTIN_NAMES:
            table[id(getattr(builtins, name))] = "builtin." + name
        _BY_ID = table
    return _BY_ID


def classify(value):
    """A frontend value for a Python object found in globals, closures or as an attribute."""
    if isinstance(value, types.ModuleType):
        return ModuleRef(value)
    known = _table().get(id(value))
    if known is not None:
        if known.startswith("np.") and known[3:] in _DTYPES:
            return DTypeRef(_DTYPES[known[3:]])
        return FuncRef(known)
    if value is float:
        return FuncRef("builtin.float")
    scipy_name = scipy_special_name(value)
    if scipy_name is not None:
        return FuncRef(scipy_name)
    return _other_library_function(value)


def _other_library_function(value):
    """A numpy or math function adcompile does not know, e.g. ``from numpy import sort``.

    It becomes a FuncRef without a handler, so calling it is an error naming it."""
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__name__", None)
    if not callable(value) or not name or module.split(".")[0] not in ("numpy", "math"):
        return None
    if module.startswith("numpy"):
        prefix = "np" + "".join("." + part for part in module.split(".")[1:] if not part.startswith("_"))
    else:
        prefix = "math"
    return FuncRef(f"{prefix}.{name}")


def module_constant(module, attr):
    """Constants such as ``np.pi`` and ``math.e``; None if ``attr`` is not one."""
    if module in (np, math) and attr in ("pi", "e", "inf", "nan", "tau"):
        return float(getattr(module, attr))
    return None
