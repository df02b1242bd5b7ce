"""Static types of IR values: a dtype and a number of dimensions.

adcompile specialises every function on its argument signature (dtype and ndim of each
argument, as numba does), so every IR value has a ``Type`` known at compile time. Shapes are
not part of a type: they are run-time values.
"""
from dataclasses import dataclass

import numpy as np

FLOAT64, FLOAT32, INT64, BOOL, NONE = "f8", "f4", "i8", "b1", "none"
_RANK = {BOOL: 0, INT64: 1, FLOAT32: 2, FLOAT64: 3}
NUMPY_DTYPE_NAME = {FLOAT64: "np.float64", FLOAT32: "np.float32", INT64: "np.int64", BOOL: "np.bool_"}
# The names users know (numpy's), for error messages: the codes above are internal.
NUMPY_NAME = {FLOAT64: "float64", FLOAT32: "float32", INT64: "int64", BOOL: "bool"}
_SCALAR_DESCRIPTION = {FLOAT64: "a float64 scalar", FLOAT32: "a float32 scalar",
                       INT64: "an integer (int64)", BOOL: "a bool"}


@dataclass(frozen=True)
class Type:
    dtype: str
    ndim: int = 0

    @property
    def is_float(self):
        return self.dtype in (FLOAT64, FLOAT32)

    @property
    def is_array(self):
        return self.ndim > 0

    @property
    def is_scalar(self):
        return self.ndim == 0

    def with_ndim(self, ndim):
        return Type(self.dtype, ndim)

    def with_dtype(self, dtype):
        return Type(dtype, self.ndim)

    def __str__(self):
        """The compact internal spelling (``f8[:,:]``), for IR dumps; never in a user message."""
        return self.dtype if self.ndim == 0 else f"{self.dtype}[{','.join(':' * self.ndim)}]"

    def describe(self):
        """How a user message names this type, in numpy's words: "an integer (int64)",
        "a float64 scalar", "a 2-d float64 array"."""
        if self.dtype == NONE:
            return "None"
        if self.ndim == 0:
            return _SCALAR_DESCRIPTION[self.dtype]
        return f"a {self.ndim}-d {NUMPY_NAME[self.dtype]} array"


F8, F4, I8, B1, NONE_T = Type(FLOAT64), Type(FLOAT32), Type(INT64), Type(BOOL), Type(NONE)


def promote_dtypes(*dtypes):
    """The numpy result dtype of mixing ``dtypes`` (bool < int < float32 < float64)."""
    return max(dtypes, key=lambda d: _RANK[d])


def array_dtype(*dtypes):
    """The dtype numpy gives an array made of values of ``dtypes`` (``np.array([...])``): every
    value counts with its full type, so int64 with float32 is float64 (in arithmetic a Python
    int next to a float32 array is weak and gives float32: :func:`promote_dtypes`)."""
    dtype = promote_dtypes(*dtypes)
    return FLOAT64 if dtype == FLOAT32 and INT64 in dtypes else dtype


def to_float(dtype):
    return dtype if dtype in (FLOAT64, FLOAT32) else FLOAT64


def type_of_value(value):
    """The IR type of a run-time Python/numpy value, or None if it is not a supported one.
    (Called on every argument of every call: the common cases come first.)"""
    if isinstance(value, np.ndarray):
        kind = value.dtype.kind
        if kind == "f":
            if value.dtype == np.float64:
                return Type(FLOAT64, value.ndim)
            return Type(FLOAT32, value.ndim) if value.dtype == np.float32 else None
        if kind in "iu":
            return Type(INT64, value.ndim)
        if kind == "b":
            return Type(BOOL, value.ndim)
        return None
    if isinstance(value, float):  # includes np.float64
        return F8
    if isinstance(value, (bool, np.bool_)):
        return B1
    if isinstance(value, (int, np.integer)):
        return I8
    if isinstance(value, np.floating):
        return F4 if isinstance(value, np.float32) else F8
    if value is None:
        return NONE_T
    return None


def describe_value(value):
    """A run-time value's type as a user message names it: "str", "list", "ndarray of dtype
    complex128 (1-d)"."""
    if isinstance(value, np.ndarray):
        return f"ndarray of dtype {value.dtype} ({value.ndim}-d)"
    return type(value).__name__


def numpy_dtype(dtype):
    return {FLOAT64: np.float64, FLOAT32: np.float32, INT64: np.int64, BOOL: np.bool_}[dtype]
