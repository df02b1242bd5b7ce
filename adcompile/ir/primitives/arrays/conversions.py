"""Copies, aliases and dtype conversions."""
from ...types import F8, I8, Type
from ..declare import (C_ORDERED_RESULT, CHEAP_AND_SAFE, FRESH, INLINE_ARITHMETIC, NEVER_MERGED, NON_DIFFERENTIABLE,
                       PASSES_VALUES, RECOMPUTABLE, RULE_ONLY, VIEW, define)
from ..batching_rules import same_call
from ..reverse_helpers import identity_vjp
from ..shape_rules import same_as_argument
from ..type_rules import fixed, same_as_first

# ``y = x``: an alias (a view of the same memory), never merged since its target may be rebound
define("alias", same_as_first, "_0",
       kinds={VIEW, NEVER_MERGED, CHEAP_AND_SAFE, RECOMPUTABLE, PASSES_VALUES, INLINE_ARITHMETIC},
       vjp=identity_vjp, linear_in=(0,), shape_of=0, batch=same_call("alias"))
define("copy", same_as_first, lambda t, p: "_0.copy()" if t[0].ndim else "_0",
       kinds={NEVER_MERGED, FRESH, PASSES_VALUES, C_ORDERED_RESULT, INLINE_ARITHMETIC}, vjp=identity_vjp,
       linear_in=(0,), shape_of=0, batch=same_call("copy"))
# ``adcompile.stop_gradient(x)``: x's value (a copy, as ``copy``) through which no derivative flows, in any
# mode or order: NON_DIFFERENTIABLE makes its result inactive, so it has neither rule nor tangent
define("stop_gradient", same_as_first, lambda t, p: "_0.copy()" if t[0].ndim else "_0",
       kinds={NON_DIFFERENTIABLE, NEVER_MERGED, FRESH, PASSES_VALUES, C_ORDERED_RESULT}, shape_of=0,
       batch=same_call("stop_gradient"))
define("to_float", lambda t, p, c=None: F8, "float(_0)", kinds={RECOMPUTABLE, INLINE_ARITHMETIC},
       vjp=identity_vjp, linear_in=(0,),
       batch=lambda b, args, batched, params, size: b.call("as_dtype", args[0], dtype="f8"))
define("to_int", fixed(I8), "int(_0)", kinds={NON_DIFFERENTIABLE})


def _as_dtype_vjp(b, g, out, args, params, active):
    return [b.call("cast_like", g, args[0])]


def _cast_like_vjp(b, g, out, args, params, active):
    return [b.call("cast_like", g, args[0]), None]


define("as_dtype", lambda t, p, c=None: Type(p["dtype"], t[0].ndim),
       lambda t, p: "np.{dtype_name}(_0)" if t[0].ndim == 0 else "_0.astype(np.{dtype_name})",
       vjp=_as_dtype_vjp, linear_in=(0,), shape=same_as_argument(0), batch=same_call("as_dtype"))
# cast_like(g, x): g with x's dtype (the cotangent of a dtype conversion)
define("cast_like", lambda t, p, c=None: Type(t[1].dtype, t[0].ndim), "rt.cast_like(_0, _1)", kinds={RULE_ONLY},
       vjp=_cast_like_vjp, linear_in=(0,), shape_only=(1,), shape_of=0, batch=same_call("cast_like"))
