"""Special functions called by generated code as ``rt.erf(x)``, ``rt.polygamma(x, 1)``, ...

These are the plain-Python versions, run by the ``python`` backend: thin wrappers over
``scipy.special`` (imported on first call, so ``import adcompile`` stays fast). numba has no
``scipy.special``; ``special_functions_numba.py`` registers numba versions of these same functions
(scalar kernels from ``math`` plus series for the polygamma functions, applied elementwise by
numba ufuncs). All work on scalars and arrays of any shape and keep float32 as float32.
"""


def _scipy_special():
    import scipy.special  # lazy: scipy takes a while to import
    return scipy.special


def erf(x):
    return _scipy_special().erf(x)


def erfc(x):
    return _scipy_special().erfc(x)


def erfcx(x):
    """``exp(x**2) * erfc(x)``, without overflow for large ``x``."""
    return _scipy_special().erfcx(x)


def gammaln(x):
    """``log |gamma(x)|``, as ``math.lgamma`` and ``scipy.special.gammaln``."""
    return _scipy_special().gammaln(x)


def gamma(x):
    return _scipy_special().gamma(x)


def polygamma(x, order):
    """The ``order``-th derivative of digamma (``order`` 0: digamma itself, 1: trigamma)."""
    special = _scipy_special()
    if order == 0:
        return special.digamma(x)
    dtype = special.digamma(x).dtype  # scipy's polygamma computes float32 in float64, and 0-d arrays
    return special.polygamma(order, x).astype(dtype)[()]


def expit(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))``, without overflow for large ``|x|``."""
    return _scipy_special().expit(x)


def xlogy(x, y):
    """``x * log(y)``, and 0 where ``x == 0`` (even at ``y == 0``)."""
    return _scipy_special().xlogy(x, y)


__all__ = ["erf", "erfc", "erfcx", "gammaln", "gamma", "polygamma", "expit", "xlogy"]
