"""The zero-safe products of :mod:`.nonfinite` written with numpy, for generated code run as Python.

``nonfinite.py`` builds ``mul_nz`` and ``div_nz`` as numba ufuncs (numba fuses them into the
array expression around them). Generated code run as Python -- ``backend="python"``, and the
first tier of tiered execution, which must answer while numba compiles in another thread and
holds numba's compiler lock -- calls these instead, so it never imports or waits for numba.
They agree with the ufuncs: the same values (0 where ``g == 0``, however infinite or nan the
other operand), the same result dtype (the ufuncs' loops are float32 and float64, chosen by
numpy's safe casting, as ``promote_types(result_type(g, d), float32)`` chooses), a numpy
scalar from scalar operands, and inf (never an exception) from a division by zero.
"""
import types

import numpy as np

from . import helpers


def _loop_dtype(g, d):
    return np.promote_types(np.result_type(g, d), np.float32)


def _where_nonzero(g, value, dtype):
    result = np.where(np.equal(g, 0), np.multiply(g, 0, dtype=dtype), value)
    return result if result.ndim else dtype.type(result)


def mul_nz(g, d):
    """0 where ``g == 0``, else ``g * d``."""
    dtype = _loop_dtype(g, d)
    with np.errstate(all="ignore"):
        return _where_nonzero(g, np.multiply(g, d, dtype=dtype), dtype)


def div_nz(g, d):
    """0 where ``g == 0``, else ``g / d``."""
    dtype = _loop_dtype(g, d)
    with np.errstate(all="ignore"):
        return _where_nonzero(g, np.divide(g, d, dtype=dtype), dtype)


_python_helpers = None


def python_helpers():
    """The runtime helpers as generated code run as Python sees them (its ``rt``): the module
    ``helpers`` with these zero-safe products in place of numba's."""
    global _python_helpers
    if _python_helpers is None:
        namespace = types.ModuleType(helpers.__name__, helpers.__doc__)
        namespace.__dict__.update({name: value for name, value in vars(helpers).items() if name != "__getattr__"})
        namespace.mul_nz, namespace.div_nz = mul_nz, div_nz
        _python_helpers = namespace
    return _python_helpers
