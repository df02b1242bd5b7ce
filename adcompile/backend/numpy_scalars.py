"""Generated code run as Python sees its scalar arguments as numpy scalars, as numba does.

numba compiles generated code with numpy's error model (see ``loader.py``): a float division by
zero gives inf or nan, an integer one 0, as numpy's arrays and scalars do, never a
``ZeroDivisionError``. Run as Python, the same code would raise on a Python ``float`` or ``int``
argument (``1.0 / 0.0``) and give inf on a numpy one (``np.float64(1.0) / 0.0``, with numpy's
``RuntimeWarning``). Passing Python numbers in as numpy scalars makes both backends, and the
Python and numba tiers of one function, compute the same values. ``bool`` stays ``bool``.
"""
import functools

import numpy as np

_NUMPY_SCALAR = {float: np.float64, int: np.int64, complex: np.complex128}


def as_numpy_scalar(value):
    """``value`` as numpy's scalar if it is a Python float, int or complex, else itself."""
    convert = _NUMPY_SCALAR.get(type(value))
    return value if convert is None else convert(value)


def with_numpy_scalar_arguments(fn):
    """``fn``, called with its Python-number arguments converted by :func:`as_numpy_scalar`.
    Like a numba dispatcher, the result names the generated function as ``py_func`` (error
    reports and inspection read the generated file's name from it)."""
    @functools.wraps(fn)
    def called_with_numpy_scalars(*args):
        return fn(*map(as_numpy_scalar, args))
    called_with_numpy_scalars.py_func = fn
    return called_with_numpy_scalars
