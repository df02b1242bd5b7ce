"""Forward rules, as the transforms still import them: a view of the primitive table.

The rules are declared with their primitives (``ir/primitives/``; the structural ones in
``ir/primitives/structural_jvp.py``).
"""
from ..ir.primitives import PRIMITIVES


# kept for transforms/ until it asks the primitive
def jvp_rule(prim):
    """The forward rule of ``prim``, or None if it has no derivative."""
    spec = PRIMITIVES.get(prim)
    return spec.forward_rule if spec is not None else None
