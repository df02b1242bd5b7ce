"""Arithmetic primitives: the Python operators and the zero-safe products of derivative rules.

``mul_nz(a, d)`` and ``div_nz(a, d)`` are ``a * d`` and ``a / d``, but 0 wherever ``a`` is 0
(runtime/nonfinite.py): rules apply derivatives that are infinite at a point through them,
so that a zero cotangent contributes zero (see reverse_helpers.py).
"""
import operator

from ...nodes import Const, const
from ..declare import (ADDITIVE, BROADCASTING_FUNCTION, CHEAP_AND_SAFE, COMMUTATIVE, ELEMENTWISE, INLINE_ARITHMETIC,
                      INTEGER_DIVISION, NON_DIFFERENTIABLE, OWNED_RESULT, RECOMPUTABLE, RULE_ONLY, SCALING, define)
from ..reverse_helpers import is_nonzero_constant
from ..type_rules import elementwise, same_as_first


def _add_vjp(b, g, out, args, params, active):
    return [g, g]


def _sub_vjp(b, g, out, args, params, active):
    return [g, b.neg(g) if active[1] else None]


def _mul_vjp(b, g, out, args, params, active):
    x, y = args
    if x is y and all(active):  # x * x, as `x ** 2` is parsed: one cotangent 2 * x * g
        return [b.mul(b.mul(const(2.0), x), g), None]
    return [b.mul(g, y) if active[0] else None, b.mul(g, x) if active[1] else None]


def _div_by(b, g, denominator):
    """g / denominator, zero where g is zero (plain division by a non-zero constant)."""
    return b.div(g, denominator) if is_nonzero_constant(denominator) else b.call("div_nz", g, denominator)


def _div_vjp(b, g, out, args, params, active):
    # d(x/y)/dy = -(x/y) / y, applied as -(g / y) * out: zero for a zero g even where y == 0
    x, y = args
    g_over_y = _div_by(b, g, y)
    gx = g_over_y if active[0] else None
    if active[1]:
        gy = b.neg(b.mul(g_over_y, out) if is_nonzero_constant(y) else b.call("mul_nz", g_over_y, out))
    else:
        gy = None
    return [gx, gy]


def _finite_power_derivative(exponent):
    """Whether d/dx x**exponent = exponent * x**(exponent - 1) is finite for every finite x."""
    return isinstance(exponent, Const) and isinstance(exponent.value, (int, float)) and \
        (exponent.value >= 1 or exponent.value == 0)


def _pow_vjp(b, g, out, args, params, active):
    x, y = args
    gx = gy = None
    if active[0] and _finite_power_derivative(y):
        gx = b.mul(g, b.mul(y, b.call("pow", x, b.sub(y, const(1.0)))))
    elif active[0]:
        # y * x**(y - 1) is infinite at x == 0 for y < 1: apply it as (g * y) / x**(1 - y)
        gx = b.call("div_nz", b.mul(g, y), b.call("pow", x, b.sub(const(1.0), y)))
    if active[1]:
        # x**y * log(x): log(0) = -inf, where x**y = 0 for y > 0
        gy = b.call("mul_nz", b.mul(g, out), b.call("log", x))
    return [gx, gy]


def _mod_vjp(b, g, out, args, params, active):
    x, y = args
    gy = b.neg(b.mul(g, b.call("floor", b.div(x, y)))) if active[1] else None
    return [g, gy]


def _neg_vjp(b, g, out, args, params, active):
    return [b.neg(g)]


def _mul_nz_vjp(b, g, out, args, params, active):
    # mul_nz(a, d) is a * d, and 0 along d where a == 0: its adjoints are zero-safe too
    a, d = args
    return [b.call("mul_nz", g, d) if active[0] else None, b.mul(g, a) if active[1] else None]


def _div_nz_vjp(b, g, out, args, params, active):
    a, d = args
    g_over_d = b.call("div_nz", g, d)
    return [g_over_d if active[0] else None,
            b.neg(b.call("mul_nz", g_over_d, out)) if active[1] else None]


_CHEAP = {CHEAP_AND_SAFE, RECOMPUTABLE}
# an operator's array result is a new array (OWNED_RESULT); ``fold``: its value on constants
_OPERATOR = BROADCASTING_FUNCTION | {OWNED_RESULT}
_INLINE_OPERATOR = _OPERATOR | {INLINE_ARITHMETIC}
# IEEE + and * are exactly commutative (and broadcasting is symmetric)
define("add", elementwise(), "_0 + _1", kinds=_INLINE_OPERATOR | _CHEAP | {COMMUTATIVE, ADDITIVE}, vjp=_add_vjp,
       arity=2, numpy=("add",), fold=operator.add)
define("sub", elementwise(), "_0 - _1", kinds=_INLINE_OPERATOR | _CHEAP | {ADDITIVE}, vjp=_sub_vjp,
       arity=2, numpy=("subtract",), fold=operator.sub)
define("mul", elementwise(), "_0 * _1", kinds=_INLINE_OPERATOR | _CHEAP | {COMMUTATIVE, SCALING}, vjp=_mul_vjp,
       arity=2, numpy=("multiply",), fold=operator.mul)
# not CHEAP_AND_SAFE: a scalar division by zero raises in Python
define("div", elementwise(float_result=True), "_0 / _1", kinds=_INLINE_OPERATOR | {RECOMPUTABLE, SCALING},
       vjp=_div_vjp, arity=2, numpy=("divide", "true_divide"), fold=operator.truediv)
define("pow", elementwise(), "_0 ** _1", kinds=_OPERATOR, vjp=_pow_vjp,
       arity=2, numpy=("power",), math=("pow",))
# integer // and % by zero raise in a scalar loop where numpy gives 0 with a warning: INTEGER_DIVISION
define("floordiv", elementwise(), "_0 // _1", kinds=BROADCASTING_FUNCTION | {NON_DIFFERENTIABLE, INTEGER_DIVISION})
define("mod", elementwise(), "_0 % _1", kinds=BROADCASTING_FUNCTION | {INTEGER_DIVISION}, vjp=_mod_vjp,
       arity=2, numpy=("mod", "remainder"))
define("neg", same_as_first, "-_0", kinds={ELEMENTWISE, OWNED_RESULT, INLINE_ARITHMETIC} | _CHEAP, vjp=_neg_vjp,
       arity=1, numpy=("negative",))
define("mul_nz", elementwise(float_result=True), "rt.mul_nz(_0, _1)",
       kinds=BROADCASTING_FUNCTION | {RULE_ONLY, SCALING, INLINE_ARITHMETIC}, vjp=_mul_nz_vjp)
define("div_nz", elementwise(float_result=True), "rt.div_nz(_0, _1)",
       kinds=BROADCASTING_FUNCTION | {RULE_ONLY, SCALING, INLINE_ARITHMETIC}, vjp=_div_nz_vjp)
