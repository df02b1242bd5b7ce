"""Shape-only argument positions, as the transforms still import them: a view of the table.

A primitive declares them as ``shape_only`` (``ir/primitives/``): ``unbroadcast(g, x)`` reads
only the shape of ``x``, so no derivative flows from ``x``.
"""
from ..ir.primitives import PRIMITIVES

# kept for transforms/ until it asks the primitive
SHAPE_ONLY = {name: spec.shape_only for name, spec in PRIMITIVES.items() if spec.shape_only}
