"""What the numba kernels of this folder share: the cache options and the type tests of overloads.

The overloads and kernels are compiled with ``cache=True``: their files go to adcompile's cache
folder (``runtime/helper_cache.py``). Caching: with ``numba.njit(cache=True)`` the generated
module must be a real file *and* registered in ``sys.modules`` under its ``__name__`` (in every
process that compiles it or loads it from the cache); otherwise numba records the module as
``'<dynamic>'`` and loading the cache in a fresh process fails.

Each overload dispatches at compile time on the numba types of its arguments (scalar vs array,
ndim, dtype, layout) and is type-stable: the return type depends on argument types only, never
on run-time shapes. The heavy lifting is done by small ``njit`` kernels with explicit loops.
Semantics (including dtypes and aliasing) are documented on the plain-numpy kernels.
"""

import numpy as np
from numba import njit, types
from numba.core import errors
from numba.extending import overload
from numba.np.numpy_support import as_dtype

from .. import helper_cache

helper_cache.install_locator()  # before the first cache=True below: the files go to adcompile's cache

# Options for the overload implementations and for the kernels (the numpy error
# model makes float division by zero give inf/nan, as in numpy). The overloads
# are cached on disk like the kernels (see helper_cache.py): numba keys each
# compiled implementation by its signature and the values of its closure, so a
# closure must hold only values that pickle the same in every process (numbers,
# dtypes, types), never a numba function (a dispatcher pickles with a
# per-process id, which would make every process miss and add an entry).
OPTS = {"cache": True}
kernel = njit(cache=True, nogil=True, error_model="numpy")
# Summation kernels may reassociate additions so that LLVM can vectorise them
# (numpy's own pairwise summation does not add up sequentially either).
sum_kernel = njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})


# --------------------------------------------------------- compile-time utils


def is_scalar(t):
    return isinstance(t, (types.Number, types.Boolean))


def is_array(t):
    return isinstance(t, types.Array)


def np_dtype(t):
    """numpy dtype of a numba scalar type or of an array type's elements."""
    if is_array(t):
        t = t.dtype
    return as_dtype(types.unliteral(t))


def grad_dtype(t):
    """Gradient dtype for a value of numba type ``t`` (see helpers docstring)."""
    dt = np_dtype(t)
    return dt if dt.kind in "fc" else np.dtype(np.float64)


def fail(name, *args):
    raise errors.TypingError(f"rt.{name}: unsupported argument types {args}")


def as_index_array(i):
    """Internal: an int gives a length-1 int64 array, a 1-D int array itself."""
    raise NotImplementedError  # only used from numba


@overload(as_index_array, jit_options=OPTS)
def _ol_as_index_array(i):
    if isinstance(i, types.Integer):
        return lambda i: np.full(1, i, np.int64)
    if is_array(i) and i.ndim == 1 and isinstance(i.dtype, types.Integer):
        return lambda i: i
    return None
