"""Batch rules: each primitive applied to values that carry an extra trailing batch axis.

A batch rule is ``rule(b, args, batched, params, size) -> atom``: ``args`` are the
arguments, ``batched[i]`` tells whether argument i carries the batch axis (as its last
axis, of length ``size``, an IR atom), and the rule emits with Builder ``b`` the IR of
the result with the batch axis last. It returns None where it does not apply, and the
batching transform (``transforms/batching.py``) then gives up on the function.

The batch axis is the trailing one, so most rules are short: elementwise primitives only
give their unbatched array arguments a length-1 last axis (``p[..., None]``); indexing,
``axis=k`` reductions and axis insertions keep their parameters (they count from the
front); a matrix product with an unbatched matrix is a matrix-matrix product,
``A @ T`` with ``T`` of shape (n, size). ``declare.define`` gives every ELEMENTWISE and
every differentiable REDUCTION primitive its rule from its kinds; the other primitives declare
theirs (``define(..., batch=...)``) in their family module. This module holds the machinery
and the rules several primitives share.
"""
from ..nodes import const
from .record import Kind
from .reverse_helpers import getitem
from ..indexing import FULL_SLICE



def logical_ndim(atom, is_batched):
    return atom.type.ndim - 1 if is_batched else atom.type.ndim


def with_unit_batch_axis(b, x):
    """Unbatched ``x`` with a length-1 last axis (``x[..., None]``), so that it broadcasts
    against batched values; a scalar broadcasts already."""
    if not x.type.ndim:
        return x
    return getitem(b, x, [FULL_SLICE] * x.type.ndim + [("none",)])


def unbatched_view(b, x):
    """The first member of batched ``x`` (``x[..., 0]``): a value of the unbatched shape,
    for primitives that read only its shape."""
    return getitem(b, x, [FULL_SLICE] * (x.type.ndim - 1) + [("int", const(0))])


def batched_shape_view(b, x, size):
    """A read-only view of unbatched ``x`` broadcast to ``x.shape + (size,)``: a value of the
    batched shape, for primitives that read only its shape."""
    dims = [b.call("dim", x, axis=k) for k in range(x.type.ndim)]
    return b.emit("broadcast_to", [with_unit_batch_axis(b, x)] + dims + [size])


def batched_copy(b, x, size):
    """A new array holding ``size`` copies of unbatched ``x`` along a last axis."""
    if not x.type.ndim:
        return b.emit("full", [size, x])
    return b.call("broadcast_to_shape", with_unit_batch_axis(b, x), batched_shape_view(b, x, size))


def aligned(b, args, batched):
    return [a if is_batched else with_unit_batch_axis(b, a) for a, is_batched in zip(args, batched)]


def elementwise_batch(name):
    """The rule of an elementwise primitive: unbatched arrays get a length-1 last axis."""
    def rule(b, args, batched, params, size):
        return b.emit(name, aligned(b, args, batched), **params)
    return rule


def reduction_batch(name):
    """The rule of a reduction over everything or along ``axis``: everything is the leading
    axes one after the other; ``axis`` counts from the front, so it stays."""
    def rule(b, args, batched, params, size):
        x, axis = args[0], params.get("axis")
        if axis is not None:
            return b.emit(name, [x], **params)
        if x.type.ndim == 1:  # a batch of scalars: each is its own reduction
            return b.call("copy", x) if name != "mean" else b.call("as_dtype", x, dtype=_float(x))
        for _ in range(x.type.ndim - 1):
            x = b.emit(name, [x], **{**params, "axis": 0})
        return x
    return rule


def default_batch_rule(name, kinds):
    """The batch rule a primitive's kinds imply, or None."""
    if Kind.ELEMENTWISE in kinds:
        return elementwise_batch(name)
    if Kind.REDUCTION in kinds and Kind.NON_DIFFERENTIABLE not in kinds:
        return reduction_batch(name)
    return None


def _float(x):
    return x.type.dtype if x.type.is_float else "f8"


def same_call(name):
    """The rule of a primitive that acts on each element (or only reads the others' dtype): the
    same call on the batched values."""
    return lambda b, args, batched, params, size: b.emit(name, args, **params)


def shaped_like_second(name):
    """``broadcast_to_shape``/``unbroadcast(x, like)``: ``like`` gives the result's shape, so it
    is given the batched shape."""
    def rule(b, args, batched, params, size):
        x, like = args
        if not batched[0]:
            x = with_unit_batch_axis(b, x)
        return b.emit(name, [x, like if batched[1] else batched_shape_view(b, like, size)], **params)
    return rule


__all__ = ["FULL_SLICE", "aligned", "batched_copy", "batched_shape_view", "default_batch_rule", "elementwise_batch",
           "logical_ndim", "reduction_batch", "same_call", "shaped_like_second", "unbatched_view",
           "with_unit_batch_axis"]
