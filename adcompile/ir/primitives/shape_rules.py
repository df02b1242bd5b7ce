"""Shape rules: the symbolic shape of a primitive's result from its arguments' shapes.

A shape rule is ``rule(shapes, args, params) -> tuple of Dim`` (one per axis of the result),
or None where the lengths are not known; ``shapes`` is the ``ShapeMap`` being inferred
(``ir/shapes.py``), asked ``shapes.of(atom)`` for an array's dims and ``shapes.length(atom)``
for the length an integer holds. A primitive declares its rule with ``define(..., shape=...)``
next to its other rules; without one, ``define`` derives it from the declaration: the shape of
argument ``shape_of``, numpy's broadcasting for ELEMENTWISE and BROADCASTING primitives, the
argument's shape without ``axis`` for a REDUCTION. The rules shared by several primitives are
here; the ones particular to one primitive are in its family module.
"""
from ..dims import add, constant, multiply
from ..nodes import Const
from .record import Kind


def same_as_argument(position):
    """The rule of a result with the shape of argument ``position``."""
    def rule(shapes, args, params):
        return shapes.of(args[position])
    return rule


def lengths_from(first):
    """The rule of a result whose lengths are the int arguments from ``first`` on (``zeros(n, m)``,
    ``reshape(x, n, m)``)."""
    def rule(shapes, args, params):
        return shapes.lengths_of(args[first:])
    return rule


def flattened(shapes, args, params):
    """One axis holding every element of the first argument (``ravel``, flat ``cumsum``)."""
    size = product(shapes.of(args[0]))
    return None if size is None else (size,)


def broadcast(shapes, args, params):
    """numpy's broadcasting of the arguments' shapes."""
    return shapes.broadcast([shapes.of(a) for a in args])


def reduced(shapes, args, params):
    """The first argument's shape without axis ``axis`` (everything when ``axis`` is None)."""
    return drop_axis(shapes.of(args[0]), params.get("axis"))


def derived_shape_rule(kinds, shape_of):
    """The shape rule the declaration implies, or None."""
    if shape_of is not None:
        return same_as_argument(shape_of)
    if Kind.ELEMENTWISE in kinds or Kind.BROADCASTING in kinds:
        return broadcast
    if Kind.REDUCTION in kinds:
        return reduced
    return None


def _combined(combine, start, dims):
    """``combine`` applied from ``start`` over ``dims``, or None where it has no Dim form."""
    total = start
    for dim in dims:
        total = combine(total, dim)
        if total is None:
            return None
    return total


def product(shape):
    """The Dim of the number of elements of ``shape``, or None."""
    return _combined(multiply, constant(1), shape)


def drop_axis(shape, axis):
    if axis is None:
        return ()
    axis = axis + len(shape) if axis < 0 else axis
    return shape[:axis] + shape[axis + 1:]


def total_length(dims):
    """The Dim of the sum of ``dims``, or None."""
    return _combined(add, constant(0), dims)


def int_const(atom):
    if isinstance(atom, Const) and isinstance(atom.value, int) and not isinstance(atom.value, bool):
        return atom.value
    return None
