"""Pieces shared by the reverse (VJP) rules of several primitive families.

A reverse rule is ``vjp(b, g, out, args, params, active) -> [cotangent or None per arg]``:
``b`` is an IR Builder appending to the backward sweep, ``g`` the cotangent of the output
``out``, and ``active[i]`` tells whether argument i needs a cotangent (rules skip the work
for the others). Rules build IR from ordinary primitives, so every derivative is itself
differentiable. For BROADCASTING primitives the transform sums each cotangent back to its
argument's shape; all other rules return cotangents of the argument's shape already.

Rules whose local derivative is genuinely infinite at a finite point (sqrt, log, a division,
``x ** 0.5``, arcsin, norm at 0) apply it with the zero-safe products ``div_nz``/``mul_nz``
(runtime/nonfinite.py): a zero cotangent then gives a zero contribution, as a linear map must,
instead of 0 * inf = nan. This is what makes ``np.where(d2 > 0, np.sqrt(d2), 0.0)``
differentiable at ``d2 == 0``: the branch that was not selected receives a zero cotangent, and
its infinite derivative stays out. Derivatives that are infinite only by overflow (exp at 800)
keep plain products: there the zero cotangent is usually an underflow, and nan is the honest
answer. Forward rules of elementwise primitives reuse these rules (structural_jvp.py), so a
zero tangent is safe in the same way.
"""
from ..indexing import index_params
from ..nodes import Const, const


class ScatterInto:
    """A cotangent that is a write into part of the argument's adjoint (``bx[i, 1:] += g``)
    rather than a whole array: returned by the indexing rule."""

    def __init__(self, items, value):
        self.items, self.value = items, value


def unary_vjp(fn):
    """A reverse rule from ``fn(b, g, out, x) -> cotangent of x`` for one-argument primitives."""
    return lambda b, g, out, args, params, active: [fn(b, g, out, args[0])]


def identity_vjp(b, g, out, args, params, active):
    return [g]


def zero_where(b, mask, g, keep_when_true=True):
    zero = const(0.0)
    return b.call("where", mask, g, zero) if keep_when_true else b.call("where", mask, zero, g)


def is_nonzero_constant(atom):
    return isinstance(atom, Const) and isinstance(atom.value, (int, float)) and atom.value != 0


def spread(b, g, x, axis):
    """``g`` (a reduction of x over ``axis``) broadcast back to x's shape."""
    if axis is not None:
        g = b.call("expand_axis", g, axis=axis)
    return b.call("broadcast_to_shape", g, x)


def zero_safe_scale(b, g, out):
    """g / out, and 0 where out == 0: the factor of ``x / |x|``-type rules (norm, hypot), whose
    subgradient at the origin is 0 (as PyTorch), not 0 * inf = nan."""
    return b.call("where", b.call("eq", out, const(0.0)), const(0.0), b.call("div_nz", g, out))


def getitem(b, x, items):
    """Emit ``x[items]``; items are ('int', a) ('slice', a|None, b|None, c|None) ('none',) ('array', a)."""
    params, index_args = index_params(x.type, items)
    return b.emit("getitem", [x] + index_args, **params)
