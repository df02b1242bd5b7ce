"""Argument positions through which a primitive reads only a shape or a dtype, not values.

``unbroadcast(g, x)`` sums ``g`` to the shape of ``x``: no derivative flows from ``x`` and
the reverse sweep does not need ``x``'s value, only a value of the same shape.
"""
SHAPE_ONLY = {"zeros_like": (0,), "ones_like": (0,), "unbroadcast": (1,), "broadcast_to_shape": (1,),
              "dim": (0,), "size": (0,), "cast_like": (1,), "diag_adjoint": (1,)}


def value_args(stmt):
    """The arguments of an Assign whose values (not just shapes) it reads."""
    skip = SHAPE_ONLY.get(stmt.prim, ())
    return [a for k, a in enumerate(stmt.args) if k not in skip]
