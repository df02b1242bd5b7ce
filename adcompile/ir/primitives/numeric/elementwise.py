"""Elementwise functions: numpy's unary float functions, abs/sign/rounding, and the binary and
ternary functions (maximum, arctan2, where, clip, ...). Each primitive's reverse rule is
written right above its declaration; its forward rule follows from its ELEMENTWISE kind."""
import math

from ...nodes import const
from ..declare import (BROADCASTING_FUNCTION, CONSTANT_FOLDED, INLINE_ARITHMETIC, PIECEWISE_CONSTANT, RECOMPUTABLE,
                      UNARY_FUNCTION, define)
from ..batching_rules import aligned, batched_copy
from ..reverse_helpers import unary_vjp, zero_safe_scale, zero_where
from ..type_rules import elementwise, float_of_first, same_as_first, where_type


def _unary_function(name, vjp, kinds=UNARY_FUNCTION, math_name=None, template=None):
    """A float function emitted as ``np.<name>(_0)`` (numba compiles it for scalars and arrays),
    or as ``template``."""
    define(name, float_of_first, template or f"np.{name}(_0)", kinds=kinds, vjp=unary_vjp(vjp), arity=1,
           numpy=(name,), math=(math_name or name,))


_FOLDED = UNARY_FUNCTION | {CONSTANT_FOLDED}
_unary_function("sin", lambda b, g, out, x: b.mul(g, b.call("cos", x)), _FOLDED)
_unary_function("cos", lambda b, g, out, x: b.neg(b.mul(g, b.call("sin", x))), _FOLDED)
_unary_function("tan", lambda b, g, out, x: b.mul(g, b.add(const(1.0), b.mul(out, out))))
_unary_function("arcsin", lambda b, g, out, x: b.call("div_nz", g, b.call("sqrt", b.sub(const(1.0), b.mul(x, x)))),
                math_name="asin")
_unary_function("arccos",
                lambda b, g, out, x: b.neg(b.call("div_nz", g, b.call("sqrt", b.sub(const(1.0), b.mul(x, x))))),
                math_name="acos")
_unary_function("arctan", lambda b, g, out, x: b.div(g, b.add(const(1.0), b.mul(x, x))), math_name="atan")
_unary_function("sinh", lambda b, g, out, x: b.mul(g, b.call("cosh", x)))
_unary_function("cosh", lambda b, g, out, x: b.mul(g, b.call("sinh", x)))
_unary_function("tanh", lambda b, g, out, x: b.mul(g, b.sub(const(1.0), b.mul(out, out))))
# exp: a plain product. out = inf is an overflow, not an infinite derivative, and the cotangent
# reaching it is often an underflowed 1 / inf (naive softplus log(1 + exp(800))); 0 * inf
# must stay nan there rather than become a silently wrong 0. In code for numba, arrays and
# scalars in loops that vectorise are marked ``vectorised`` (lowering/vectorised_exp.py) and call
# ``rt.exp``: np.exp, compiled to arithmetic LLVM vectorises (runtime/kernels/elementary_numba.py),
# hence INLINE_ARITHMETIC.
_unary_function("exp", lambda b, g, out, x: b.mul(g, out), _FOLDED | {INLINE_ARITHMETIC},
                template=lambda types, params: "rt.exp(_0)" if params.get("vectorised") else "np.exp(_0)")
_unary_function("expm1", lambda b, g, out, x: b.mul(g, b.add(out, const(1.0))))
_unary_function("log", lambda b, g, out, x: b.call("div_nz", g, x), _FOLDED)
_unary_function("log1p", lambda b, g, out, x: b.call("div_nz", g, b.add(const(1.0), x)))
_unary_function("log2", lambda b, g, out, x: b.call("div_nz", g, b.mul(x, const(math.log(2.0)))))
_unary_function("log10", lambda b, g, out, x: b.call("div_nz", g, b.mul(x, const(math.log(10.0)))))
# sqrt: the derivative is inf at 0, but 0 for a zero g
_unary_function("sqrt", lambda b, g, out, x: b.call("div_nz", g, b.mul(const(2.0), out)),
                _FOLDED | {INLINE_ARITHMETIC})

define("abs", same_as_first, "np.abs(_0)", kinds=UNARY_FUNCTION | {RECOMPUTABLE, INLINE_ARITHMETIC},
       vjp=unary_vjp(lambda b, g, out, x: b.mul(g, b.call("sign", x))),
       arity=1, numpy=("abs", "absolute", "fabs"), math=("fabs",))
define("sign", same_as_first, "np.sign(_0)", kinds=PIECEWISE_CONSTANT | {INLINE_ARITHMETIC}, arity=1, numpy=("sign",))
define("floor", float_of_first, "np.floor(_0)", kinds=PIECEWISE_CONSTANT, arity=1, numpy=("floor",))
define("ceil", float_of_first, "np.ceil(_0)", kinds=PIECEWISE_CONSTANT, arity=1, numpy=("ceil",))
# np.round/around/rint take ``decimals`` and keep ints: their handler is in frontend/numpy_elementwise.py
define("round", float_of_first, lambda t, p: "np.round(_0, {decimals})" if p.get("decimals") else "np.round(_0)",
       kinds=PIECEWISE_CONSTANT)


def _extremum_vjp(comparison):
    def vjp(b, g, out, args, params, active):
        x, y = args
        mask = b.call(comparison, x, y)
        return [zero_where(b, mask, g) if active[0] else None,
                zero_where(b, mask, g, keep_when_true=False) if active[1] else None]
    return vjp


define("maximum", elementwise(), "np.maximum(_0, _1)", kinds=BROADCASTING_FUNCTION | {RECOMPUTABLE, INLINE_ARITHMETIC},
       vjp=_extremum_vjp("ge"), arity=2, numpy=("maximum", "fmax"))
define("minimum", elementwise(), "np.minimum(_0, _1)", kinds=BROADCASTING_FUNCTION | {RECOMPUTABLE, INLINE_ARITHMETIC},
       vjp=_extremum_vjp("le"), arity=2, numpy=("minimum", "fmin"))


def _arctan2_vjp(b, g, out, args, params, active):
    y, x = args
    denom = b.add(b.mul(x, x), b.mul(y, y))
    return [b.call("div_nz", b.mul(g, x), denom) if active[0] else None,
            b.neg(b.call("div_nz", b.mul(g, y), denom)) if active[1] else None]


define("arctan2", elementwise(float_result=True), "np.arctan2(_0, _1)", kinds=BROADCASTING_FUNCTION,
       vjp=_arctan2_vjp, arity=2, numpy=("arctan2",), math=("atan2",))


def _logaddexp_vjp(b, g, out, args, params, active):
    # d/da log(e^a + e^b) = e^(a - out): a softmax weight, exact where a and b tie
    return [b.mul(g, b.call("exp", b.sub(a, out))) if is_active else None
            for a, is_active in zip(args, active)]


# A primitive of its own: written as max + log1p(exp(min - max)) its derivative would be wrong
# where the arguments tie (max and min would both send it to the same argument).
define("logaddexp", elementwise(float_result=True), "np.logaddexp(_0, _1)", kinds=BROADCASTING_FUNCTION,
       vjp=_logaddexp_vjp, arity=2, numpy=("logaddexp",))


def _hypot_vjp(b, g, out, args, params, active):
    # d hypot(x, y) / dx = x / hypot(x, y); at the origin the subgradient 0, as the norm rule
    scale = zero_safe_scale(b, g, out)
    return [b.mul(scale, a) if is_active else None for a, is_active in zip(args, active)]


# np.hypot, not sqrt(x*x + y*y): it does not overflow (hypot(1e200, 1e200) = 1.41e200)
define("hypot", elementwise(float_result=True), "np.hypot(_0, _1)", kinds=BROADCASTING_FUNCTION,
       vjp=_hypot_vjp, arity=2, numpy=("hypot",), math=("hypot",))


def _where_vjp(b, g, out, args, params, active):
    cond = args[0]
    return [None, zero_where(b, cond, g) if active[1] else None,
            zero_where(b, cond, g, keep_when_true=False) if active[2] else None]


define("where", where_type,
       lambda t, p: "(_1 if _0 else _2)" if max(x.ndim for x in t) == 0 else "np.where(_0, _1, _2)",
       kinds=BROADCASTING_FUNCTION | {INLINE_ARITHMETIC}, vjp=_where_vjp)


def _clip_vjp(b, g, out, args, params, active):
    x, lo, hi = args
    inside = b.call("and", b.call("ge", x, lo), b.call("le", x, hi))
    return [zero_where(b, inside, g) if active[0] else None,
            zero_where(b, b.call("lt", x, lo), g) if active[1] else None,
            zero_where(b, b.call("gt", x, hi), g) if active[2] else None]


def _clip_batch(b, args, batched, params, size):
    x = args[0] if batched[0] else batched_copy(b, args[0], size)
    return b.emit("clip", aligned(b, [x] + args[1:], [True] + batched[1:]))


define("clip", same_as_first, lambda t, p: "min(max(_0, _1), _2)" if t[0].ndim == 0 else "np.clip(_0, _1, _2)",
       kinds=BROADCASTING_FUNCTION | {INLINE_ARITHMETIC}, vjp=_clip_vjp, batch=_clip_batch)
