"""Forward (JVP) rules that follow from a primitive's structure rather than being written one
by one. Each is ``jvp(b, tangents, out, args, params, prim_name) -> tangent atom or None``,
with ``tangents[i]`` the tangent of ``args[i]`` or None (inactive):

* ``elementwise_jvp``: a diagonal Jacobian, so the reverse rule applied to a tangent gives
  the forward rule (``sin``: g * cos(x) with g = dx);
* ``linear_jvp``: the primitive applied to the tangents of its ``linear_in`` positions; other
  positions (shapes, indices) are kept as they are;
* ``bilinear_jvp``: the product rule (matmul, outer);
* ``weighted_reduction_jvp``: the reverse rule's weights (its cotangent for a cotangent of
  ones) contracted with the tangent (prod, max, min, norm).
"""
from ..nodes import const
from .record import ALL_ARGUMENTS, PRIMITIVES


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


def elementwise_jvp(b, tangents, out, args, params, prim):
    rule = PRIMITIVES[prim].vjp
    parts = []
    for k, tangent in enumerate(tangents):
        if tangent is None:
            continue
        active = [j == k for j in range(len(args))]
        parts.append(rule(b, tangent, out, args, params, active)[k])
    return _sum_contributions(b, parts, out)


def linear_jvp(b, tangents, out, args, params, prim):
    linear_in = PRIMITIVES[prim].linear_in
    if linear_in == ALL_ARGUMENTS:
        positions = range(len(args))
    else:
        positions = [p % len(args) for p in linear_in]
        if all(tangents[p] is None for p in positions):
            return None
    new_args = list(args)
    for p in positions:
        new_args[p] = tangents[p] if tangents[p] is not None else b.call("zeros_like", args[p])
    return b.emit(prim, new_args, **params)


def bilinear_jvp(b, tangents, out, args, params, prim):
    parts = []
    for k, tangent in enumerate(tangents):
        if tangent is not None:
            new_args = list(args)
            new_args[k] = tangent
            parts.append(b.emit(prim, new_args, **params))
    return _sum_contributions(b, parts, out)


def weighted_reduction_jvp(b, tangents, out, args, params, prim):
    dx = tangents[0]
    ones = b.call("ones_like", out) if out.type.ndim else const(1.0)
    weights = PRIMITIVES[prim].vjp(b, ones, out, args, params, [True])[0]
    product = b.mul(weights, dx)
    axis = params.get("axis")
    return b.call("sum", product) if axis is None else b.call("sum", product, axis=axis)
