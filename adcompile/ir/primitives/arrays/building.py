"""Arrays built from another by broadcasting or masking: ``broadcast_to`` a run-time shape,
the triangles ``triu``/``tril``, and the checked section length of ``np.split``.

``np.tile``, ``np.repeat`` and ``np.meshgrid`` are lowered in the frontend to ``expand_axis``,
``broadcast_to`` and ``reshape`` (frontend/numpy_building.py); all of these are linear, so their
derivatives of every order follow from their declarations.
"""
from ...types import I8, Type
from ..declare import NON_DIFFERENTIABLE, VIEW, define
from ..emission import shape_tuple
from ..batching_rules import with_unit_batch_axis
from ..shape_rules import lengths_from, same_as_argument
from ..type_rules import fixed, same_as_first


def _broadcast_to_vjp(b, g, out, args, params, active):
    return [b.call("unbroadcast", g, args[0])] + [None] * (len(args) - 1)


def _broadcast_to_batch(b, args, batched, params, size):
    if any(batched[1:]):
        return None
    return b.emit("broadcast_to", args + [size])


# broadcast_to(x, n, m, ...): x broadcast to the shape (n, m, ...), a read-only view as numpy's
define("broadcast_to", lambda t, p, c=None: Type(t[0].dtype, len(t) - 1),
       lambda t, p: f"np.broadcast_to(_0, {shape_tuple(t, 1)})",
       kinds={VIEW}, vjp=_broadcast_to_vjp, linear_in=(0,), shape=lengths_from(1), batch=_broadcast_to_batch)


def _triangle_vjp(name):
    return lambda b, g, out, args, params, active: [b.call(name, g, k=params["k"])]


def _triangle_batch(name):
    """Each member times the triangle of ones."""
    def rule(b, args, batched, params, size):
        x = args[0]
        ones = b.emit("ones", [b.call("dim", x, axis=0), b.call("dim", x, axis=1)], ndim=2, dtype=x.type.dtype)
        return b.mul(x, with_unit_batch_axis(b, b.call(name, ones, **params)))
    return rule


# Zeroing the other triangle is linear, and its own adjoint (a diagonal 0/1 mask).
for _name in ("triu", "tril"):
    define(_name, same_as_first, f"np.{_name}(_0, {{k}})", vjp=_triangle_vjp(_name), linear_in=(0,),
           shape=same_as_argument(0), batch=_triangle_batch(_name))

# The length of each of ``sections`` equal parts of ``n``; raises ValueError as numpy's
# np.split does when ``n`` is not divisible.
define("section_length", fixed(I8), "rt.section_length(_0, _1)", kinds={NON_DIFFERENTIABLE})
