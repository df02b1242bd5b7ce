"""Zero-safe products for derivative rules: a zero cotangent contributes zero.

A reverse rule multiplies the incoming cotangent ``g`` by a local derivative. Where that
derivative is infinite (``sqrt`` and ``log`` at 0, a division by 0, ``x ** 0.5`` at 0) or nan,
``g * derivative`` is nan even when ``g`` is 0, e.g. in the branch a ``np.where`` did not
select, and the nan then poisons the whole gradient. A vector-Jacobian product is linear in
``g``, so a zero ``g`` must give zero:

    mul_nz(g, d) = 0 if g == 0 else g * d
    div_nz(g, d) = 0 if g == 0 else g / d

Both are numba ufuncs, so numba fuses them with the surrounding array expression into one
loop (no extra pass, no temporary), they work on scalars and arrays alike, and a division by
zero gives inf as in numpy (never a ``ZeroDivisionError``). The plain-Python backend calls the
same ufuncs. Built on first use (``helpers.__getattr__``), so importing adcompile does not
import numba.
"""
from numba import vectorize

from . import helper_cache

helper_cache.install_locator()  # before cache=True below: the files go to adcompile's cache

_SIGNATURES = ["float32(float32, float32)", "float64(float64, float64)"]  # numpy picks the first loop that fits


@vectorize(_SIGNATURES, cache=True)
def mul_nz(g, d):
    if g == 0:
        return g * 0
    return g * d


@vectorize(_SIGNATURES, cache=True)
def div_nz(g, d):
    if g == 0:
        return g * 0
    return g / d
