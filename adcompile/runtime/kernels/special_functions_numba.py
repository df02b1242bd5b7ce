"""numba versions of the special functions of ``special_functions.py``.

numba has no ``scipy.special``. Each function here is a scalar kernel (``math.erf``,
``math.lgamma``, ... where numba has one; series for the polygamma functions) turned into a
numba ufunc when generated code first uses it, so that it applies elementwise to scalars and
arrays of any shape, broadcasts (``xlogy``) and fuses into the surrounding array expression. An
``overload`` of each plain function of ``special_functions.py`` calls the ufunc, so generated
code (``rt.erf(x)``) compiles under ``numba.njit``. Imported by ``runtime/numba_impls.py``.
"""
import functools
import math

import numpy as np
from numba import njit, types, vectorize
from numba.extending import overload

from .. import helper_cache
from . import special_functions as special

helper_cache.install_locator()  # before cache=True below: the files go to adcompile's cache

_UNARY = ["float32(float32)", "float64(float64)"]
_BINARY = ["float32(float32, float32)", "float64(float64, float64)"]
_ORDER = ["float32(float32, int64)", "float64(float64, int64)"]

# Bernoulli numbers B_2, B_4, ..., B_20 of the asymptotic series of the polygamma functions.
_BERNOULLI = np.array([1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
                       -174611 / 330])


@njit(cache=True, error_model="numpy")
def _digamma(x):
    if math.isnan(x) or x == -math.inf:
        return math.nan
    if x <= 0.0 and x == math.floor(x):
        return -math.inf if x == 0.0 else math.nan  # the poles, as scipy.special.digamma
    result = 0.0
    if x < 0.0:  # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
        result = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 10.0:  # recurrence psi(x) = psi(x + 1) - 1 / x, up to where the series is accurate
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)
    series = 0.0
    for k in range(7, -1, -1):  # sum of B_2k / (2k x^2k), k = 1..8
        series = series * f + _BERNOULLI[k] / (2 * (k + 1))
    return result + math.log(x) - 0.5 / x - series * f


@njit(cache=True, error_model="numpy")
def _polygamma(x, order):
    """psi^(n)(x) for n >= 1: the recurrence psi^(n)(x) = psi^(n)(x + 1) + (-1)^(n+1) n! / x^(n+1)
    moves x above 15 + n, where the asymptotic series (-1)^(n+1) [(n-1)! / x^n + n! / (2 x^(n+1))
    + sum_k B_2k (2k+n-1)! / ((2k)! x^(2k+n))] is accurate to double precision."""
    if order == 0:
        return _digamma(x)
    if math.isnan(x):
        return math.nan
    if x <= 0.0 and x == math.floor(x):
        return math.inf if order % 2 == 1 else -math.inf  # as scipy.special.polygamma
    n = order
    factorial = math.gamma(n + 1.0)
    sign = 1.0 if n % 2 == 1 else -1.0
    result = 0.0
    while x < 15.0 + n:
        result += factorial / x ** (n + 1)
        x += 1.0
    inverse = 1.0 / x
    series = math.gamma(float(n)) * inverse ** n + 0.5 * factorial * inverse ** (n + 1)
    coefficient = factorial * (n + 1) / 2.0  # (2k+n-1)! / (2k)! at k = 1
    power = inverse ** (n + 2)
    for k in range(1, 11):
        series += _BERNOULLI[k - 1] * coefficient * power
        coefficient *= (2 * k + n) * (2 * k + n + 1) / ((2 * k + 1) * (2 * k + 2))
        power *= inverse * inverse
    return sign * (result + series)


@njit(cache=True, error_model="numpy")
def _gamma(x):
    if x <= 0.0 and x == math.floor(x):
        return math.nan if x < 0.0 else math.copysign(math.inf, x)
    if x > 171.7:
        return math.inf
    return math.gamma(x)


@njit(cache=True, error_model="numpy")
def _gammaln(x):
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


def erf_kernel(x):
    return math.erf(x)


def erfc_kernel(x):
    return math.erfc(x)


def erfcx_kernel(x):
    y = np.float64(x)  # exp(y * y) in float32 would overflow from |x| = 9.4
    if y < 12.0:
        return math.exp(y * y) * math.erfc(y)
    # the asymptotic series 1 / (y sqrt(pi)) * sum_k (-1)^k (2k - 1)!! / (2 y^2)^k, exact to double
    # precision from y = 12 with 12 terms (and 0 at y = inf)
    t = 1.0 / (2.0 * y * y)
    term, total = 1.0, 1.0
    for k in range(1, 13):
        term *= -(2 * k - 1) * t
        total += term
    return total / (y * math.sqrt(math.pi))


def gammaln_kernel(x):
    return _gammaln(x)


def gamma_kernel(x):
    return _gamma(x)


def polygamma_kernel(x, order):
    return _polygamma(x, order)


def expit_kernel(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def xlogy_kernel(x, y):
    if x == 0 and not math.isnan(y):
        return 0.0
    return x * math.log(y) if y > 0 else (x * -math.inf if y == 0 else math.nan)


def _is_float32_scalar(t):
    return isinstance(t, types.Float) and t.bitwidth == 32


@functools.lru_cache(maxsize=None)
def _ufunc(kernel, signatures):
    """The numba ufunc of scalar ``kernel``, built (or loaded from the disk cache) the first time
    generated code uses it: building all of them when numba code first runs cost every process
    about a second, special functions or not."""
    return vectorize(list(signatures), cache=True)(kernel)


# numba applies a ufunc to a scalar in float64: a float32 scalar is cast back (arrays keep their dtype).
def _overload_unary(function, kernel):
    @overload(function)
    def implementation(x):
        ufunc = _ufunc(kernel, tuple(_UNARY))
        if _is_float32_scalar(x):
            return lambda x: np.float32(ufunc(x))
        return lambda x: ufunc(x)


def _overload_binary(function, kernel, signatures, float_positions):
    @overload(function)
    def implementation(x, y):
        ufunc = _ufunc(kernel, tuple(signatures))
        if all(_is_float32_scalar((x, y)[k]) for k in float_positions):
            return lambda x, y: np.float32(ufunc(x, y))
        return lambda x, y: ufunc(x, y)


for _function, _kernel in ((special.erf, erf_kernel), (special.erfc, erfc_kernel), (special.erfcx, erfcx_kernel),
                           (special.gammaln, gammaln_kernel), (special.gamma, gamma_kernel),
                           (special.expit, expit_kernel)):
    _overload_unary(_function, _kernel)
_overload_binary(special.xlogy, xlogy_kernel, _BINARY, (0, 1))
_overload_binary(special.polygamma, polygamma_kernel, _ORDER, (0,))
