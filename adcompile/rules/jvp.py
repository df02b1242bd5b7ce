"""Forward-mode rules: the tangent of a primitive's output from its inputs' tangents.

``jvp_rule(b, tangents, out, args, params) -> tangent atom`` where ``tangents[i]`` is the
tangent of ``args[i]`` or None (inactive). Most rules come from structure rather than being
written one by one:

* elementwise primitives have a diagonal Jacobian, so the reverse rule applied to a
  tangent gives the forward rule (``sin``: g * cos(x) with g = dx);
* linear primitives (transpose, sum, getitem, ...) apply themselves to the tangent;
* bilinear ones (matmul, outer) use the product rule;
* reductions with non-linear weights (prod, max, min, norm) contract the reverse rule's
  weights with the tangent.

Because elementwise forward rules are the reverse rules applied to a tangent, they inherit
the zero-safe products (``div_nz``, ``mul_nz``): a zero tangent through sqrt or log at 0 gives
a zero output tangent, not 0 * inf = nan, and the zero-safe primitives are elementwise too.
"""
from ..ir.builder import const
from .vjp import BROADCASTING, NON_DIFFERENTIABLE, VJP_RULES

UNARY_ELEMENTWISE = {"neg", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh",
                     "exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "abs"}
ELEMENTWISE = UNARY_ELEMENTWISE | BROADCASTING

# Linear in the argument positions listed; other positions (shapes, indices) are kept as is.
LINEAR = {"alias": (0,), "copy": (0,), "to_float": (0,), "transpose": (0,), "ravel": (0,),
          "diag": (0,), "trace": (0,), "cumsum": (0,), "cumsum_adjoint": (0,), "sum": (0,),
          "mean": (0,), "expand_axis": (0,), "reshape": (0,), "broadcast_to_shape": (0,),
          "unbroadcast": (0,), "cast_like": (0,), "diag_adjoint": (0,), "as_dtype": (0,),
          "getitem": (0,), "full": (-1,)}
BILINEAR = {"matmul", "outer"}
WEIGHTED_REDUCTIONS = {"prod", "max", "min", "norm"}


def _sum_contributions(b, parts, out):
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    total = parts[0]
    for part in parts[1:]:
        total = b.add(total, part)
    if total.type.ndim < out.type.ndim:
        total = b.call("broadcast_to_shape", total, out)
    return total


def _elementwise(b, tangents, out, args, params, prim):
    rule = VJP_RULES[prim]
    parts = []
    for k, tangent in enumerate(tangents):
        if tangent is None:
            continue
        active = [j == k for j in range(len(args))]
        parts.append(rule(b, tangent, out, args, params, active)[k])
    return _sum_contributions(b, parts, out)


def _linear(b, tangents, out, args, params, prim):
    positions = [p % len(args) for p in LINEAR[prim]]
    if all(tangents[p] is None for p in positions):
        return None
    new_args = list(args)
    for p in positions:
        new_args[p] = tangents[p] if tangents[p] is not None else b.call("zeros_like", args[p])
    return b.emit(prim, new_args, **params)


def _stacking(b, tangents, out, args, params, prim):
    new_args = [t if t is not None else b.call("zeros_like", a) for t, a in zip(tangents, args)]
    return b.emit(prim, new_args, **params)


def _bilinear(b, tangents, out, args, params, prim):
    parts = []
    for k, tangent in enumerate(tangents):
        if tangent is not None:
            new_args = list(args)
            new_args[k] = tangent
            parts.append(b.emit(prim, new_args, **params))
    return _sum_contributions(b, parts, out)


def _weighted_reduction(b, tangents, out, args, params, prim):
    dx = tangents[0]
    ones = b.call("ones_like", out) if out.type.ndim else const(1.0)
    weights = VJP_RULES[prim](b, ones, out, args, params, [True])[0]
    product = b.mul(weights, dx)
    axis = params.get("axis")
    return b.call("sum", product) if axis is None else b.call("sum", product, axis=axis)


def jvp_rule(prim):
    """The forward rule of ``prim``, or None if it has no derivative."""
    if prim in NON_DIFFERENTIABLE:
        return None
    if prim in ELEMENTWISE:
        return lambda b, t, out, args, params: _elementwise(b, t, out, args, params, prim)
    if prim in LINEAR:
        return lambda b, t, out, args, params: _linear(b, t, out, args, params, prim)
    if prim in ("concatenate", "stack"):
        return lambda b, t, out, args, params: _stacking(b, t, out, args, params, prim)
    if prim in BILINEAR:
        return lambda b, t, out, args, params: _bilinear(b, t, out, args, params, prim)
    if prim in WEIGHTED_REDUCTIONS:
        return lambda b, t, out, args, params: _weighted_reduction(b, t, out, args, params, prim)
    return None
