"""The runtime helpers generated code calls as ``rt.NAME(...)``: the kernels of every family.

Generated source does ``from adcompile.runtime import helpers as rt``.  The kernels live by
family in ``runtime/kernels/`` (``reductions.py``, ``linalg.py``, ...), each plain-numpy module
beside its numba version (``reductions_numba.py``).  Run as plain Python, the plain functions
gathered here are what gets called.  Compiled with ``numba.njit``, the overloads registered by
:mod:`adcompile.runtime.numba_impls` are used instead (import that module once before
compiling).  Both versions have the same semantics; the contract of each helper is in its
docstring.  A primitive names its kernel in its template (``"rt.sum_axis(_0, {axis})"``).

This module must not import numba: ``import adcompile`` has to stay fast and
the plain Python backend has to work without numba.

General conventions
-------------------
* "scalar" means a Python ``float``/``int``/``bool`` or a numpy scalar;
  "array" means an ``np.ndarray``.
* Results may alias an argument where noted ("may return ``g`` itself").
  Generated code must treat helper results as read-only unless the docstring
  says the result is a new array.
* "gradient dtype" of a value ``x``: ``x``'s dtype if it is a floating or
  complex dtype, otherwise ``float64`` (gradients of ints/bools are never
  truncated to ints).
"""

from .kernels import bookkeeping, broadcasting, elementary, gathers, linalg, reductions, scans, special_functions
from .kernels.bookkeeping import *  # noqa: F401,F403  (each family's __all__: the rt.<name> it defines)
from .kernels.broadcasting import *  # noqa: F401,F403
from .kernels.elementary import *  # noqa: F401,F403
from .kernels.gathers import *  # noqa: F401,F403
from .kernels.linalg import *  # noqa: F401,F403
from .kernels.reductions import *  # noqa: F401,F403
from .kernels.scans import *  # noqa: F401,F403
from .kernels.special_functions import *  # noqa: F401,F403

FAMILIES = (bookkeeping, broadcasting, elementary, gathers, linalg, reductions, scans, special_functions)
__all__ = [name for family in FAMILIES for name in family.__all__]

# built from numba ufuncs on first use (runtime/nonfinite.py); run as Python: zero_safe_numpy.py
_ZERO_SAFE = ("mul_nz", "div_nz")


def __getattr__(name):
    """The zero-safe products of :mod:`.nonfinite` (numba ufuncs), built on first use."""
    if name in _ZERO_SAFE:
        from . import nonfinite  # lazy: imports numba
        return getattr(nonfinite, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
