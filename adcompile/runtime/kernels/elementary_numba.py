"""numba version of ``elementary.py``: an exponential that LLVM vectorises.

numba compiles ``np.exp`` of a float to a call of the C library's ``exp``, which a loop cannot
vectorise: in the fused loop of a logistic regression's gradient that call is two thirds of the
time. ``_exp64`` is the same function in plain arithmetic, which LLVM inlines into the loop and
vectorises (no table: a loop whose loads are all affine keeps its run-time alias checks):

    exp(x) = 2**k * exp(r),   k = round(x / ln 2),   r = x - k ln 2,   |r| <= ln2 / 2

``k ln 2`` is subtracted in two parts, the first of 32 significant bits, so that ``x - k *
high`` is exact (``r = r_high + r_low``); exp(r) is ``1 + r_high`` summed exactly as a
double and its rounding error (Fast2Sum), plus ``r_low + r**2 (1/2! + r/3! + ... + r**11/13!)``
(the next term is below 5e-18 relative), so the only large rounding is the last addition. The
result is scaled by 2**k in two exact steps (2**(k//2) * 2**(k - k//2)), so that overflow
(x > 709.78: inf) and the subnormal range (x < -708.4) come out of the same arithmetic without
a branch. Products are contracted to fused multiply-adds where the CPU has them. Measured
against the exponential in extended precision on 5 million arguments over the whole range
(tests/runtime/test_elementary.py): within 0.69 units in the last place (0.72 without fused
multiply-adds; 0.77 in the subnormal range, rounded twice) and correctly rounded for 98.6% of
them; numpy's own ``np.exp``: 0.72 units, 95.9%; the C library's: 0.51 units, 99.9%.

nan gives nan, -inf gives 0 and +inf gives inf. float32 arguments are computed in float64 and
rounded once; integers and booleans give float64 as in numpy; complex values use numba's
``np.exp``. Arrays get a numba ufunc of the same kernel (a new array).
"""
import functools
import math
from decimal import Decimal, localcontext

import numpy as np
from numba import njit, types, vectorize
from numba.extending import intrinsic, overload

from .. import helper_cache
from . import elementary

helper_cache.install_locator()  # before cache=True below: the files go to adcompile's cache

_ROUNDING_SHIFT = 1.5 * 2.0 ** 52  # x + shift - shift rounds x to an integer, for |x| < 2**51
_LOWEST, _HIGHEST = -746.0, 710.0  # beyond these, exp is 0 and inf in double precision


def _two_parts(value, bits):
    """``value`` (a Decimal) as a double of ``bits`` significant bits plus a double rest."""
    mantissa, exponent = math.frexp(float(value))
    high = math.ldexp(math.floor(mantissa * 2.0 ** bits), exponent - bits)
    return high, float(value - Decimal(high))


with localcontext() as _context:
    _context.prec = 50
    _LN2 = Decimal(2).ln()
    _INVERSE_LN2 = float(1 / _LN2)
    _LN2_HIGH, _LN2_LOW = _two_parts(_LN2, 32)  # k * _LN2_HIGH is exact for |k| < 2**21
    _C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = (
        float(1 / Decimal(math.factorial(n))) for n in range(2, 14))


@intrinsic
def _double_of_bits(typingctx, bits):
    """The float64 whose IEEE bits are the int64 ``bits`` (a bitcast, no conversion)."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(types.float64))
    return types.float64(types.int64), codegen


# numba links a kernel into its callers as LLVM IR (loaded from the disk cache too), so LLVM
# inlines it into their loops (tests/runtime/test_elementary.py checks the vectorised loop).
@njit(error_model="numpy", fastmath={"contract"}, cache=True)
def _exp64(x):
    finite_or_inf = x if x == x else 0.0  # nan is given back at the end; no invalid conversion
    clamped = min(max(finite_or_inf, _LOWEST), _HIGHEST)
    k_float = (clamped * _INVERSE_LN2 + _ROUNDING_SHIFT) - _ROUNDING_SHIFT
    r_high = clamped - k_float * _LN2_HIGH
    r_low = -(k_float * _LN2_LOW)
    r = r_high + r_low
    r2 = r * r
    r4 = r2 * r2
    tail = (_C2 + r * _C3 + r2 * (_C4 + r * _C5) + r4 * ((_C6 + r * _C7) + r2 * (_C8 + r * _C9)
            + r4 * ((_C10 + r * _C11) + r2 * (_C12 + r * _C13))))
    one_plus_r = 1.0 + r_high
    rounding_error = (1.0 - one_plus_r) + r_high  # 1 + r_high == one_plus_r + this, exactly
    y = one_plus_r + (rounding_error + (r_low + r2 * tail))
    k = np.int64(k_float)
    half = k >> 1
    return (y * _double_of_bits((half + 1023) << 52) * _double_of_bits((k - half + 1023) << 52)
            if x == x else x)


def _exp_element(x):
    return _exp64(x)


@functools.lru_cache(maxsize=None)
def _exp_ufunc():
    """The numba ufunc of ``_exp64``, built (or loaded from the disk cache) the first time
    generated code applies ``rt.exp`` to an array, not at import (``NUMBA_DISABLE_JIT=1``
    imports this module too)."""
    return vectorize(["float32(float32)", "float64(float64)"], cache=True)(_exp_element)


# Not cached (no OPTS): the array case holds the ufunc, which pickles differently in every process.
@overload(elementary.exp)
def _ol_exp(x):
    if isinstance(x, types.Float) and x.bitwidth == 64:
        return lambda x: _exp64(x)
    if isinstance(x, types.Float):
        return lambda x: np.float32(_exp64(np.float64(x)))
    if isinstance(x, (types.Integer, types.Boolean)):
        return lambda x: _exp64(np.float64(x))
    if isinstance(x, types.Array) and isinstance(x.dtype, (types.Float, types.Integer, types.Boolean)):
        ufunc = _exp_ufunc()
        return lambda x: ufunc(x)
    return lambda x: np.exp(x)
