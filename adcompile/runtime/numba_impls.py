"""Importing this module registers the numba version of every runtime helper.

The helpers generated code calls as ``rt.NAME(...)`` (``runtime/helpers.py``) are plain-numpy
kernels, grouped by family in ``runtime/kernels/``; beside each family module is its numba
version (``kernels/<family>_numba.py``), which registers with ``numba.extending.overload`` a
nopython implementation of each of the family's functions. Import this module once, before
compiling generated code with ``numba.njit``: then the very same generated source compiles in
nopython mode. It imports numba (the backend imports it lazily, at the first compile).
"""
from .kernels import bookkeeping_numba, broadcasting_numba, elementary_numba, gathers_numba, linalg_numba  # noqa: F401
from .kernels import reductions_numba, scans_numba, special_functions_numba  # noqa: F401
