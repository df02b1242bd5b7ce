"""Whether a value read at one point of a block has the shape another had at an earlier point.

The symbolic shapes (``ir/shapes.py``) are flow-insensitive: they prove shapes equal for the
whole call. Inside one block more holds: between two statements of a block, a variable that is
not rebound keeps its shape, and a value computed in between by operations that keep a shape
(an elementwise operation of same-shaped arrays and scalars, ``zeros_like(v)``,
``unbroadcast(c, v)`` and the other primitives declaring ``shape_of``, copies) has the shape of
its arguments, also in a loop body, where one variable may have a different shape in each
iteration:

    bt = np.zeros_like(t)                # t's shape here
    c = 2.0 * t * g                      # computed from t (and a scalar): t's shape
    bt += c                              # so bt = c is the same
"""
import bisect

from ..ir.nodes import Assign, SetItem, Var, walk
from ..ir.primitives import Kind, primitive


def _source_arguments(stmt):
    """The arguments whose common shape the Assign ``stmt``'s result surely has; None if the
    result's shape may be another one."""
    spec = primitive(stmt.prim)
    if stmt.inplace:
        return [stmt.target]
    if spec.shape_of is not None:
        return [stmt.args[spec.shape_of]]
    if spec.has(Kind.ELEMENTWISE) and not spec.has(Kind.VIEW):
        arrays = [a for a in stmt.args if a.type.ndim]
        if arrays and all(isinstance(a, Var) and a.type.ndim == stmt.target.type.ndim for a in arrays):
            return arrays
    return None


def rebound(stmt):
    """The variables ``stmt`` (or a statement nested in it) may give a new array."""
    return {var for inner in walk([stmt]) if not (isinstance(inner, SetItem) or getattr(inner, "inplace", False))
            for var in inner.writes()}


class Rebindings:
    """For one block: variable -> the positions of the statements that may give it a new array,
    so that "is it rebound between two statements" is a look-up, not a scan of the statements
    between (a scan per query made a long straight-line gradient quadratic)."""

    def __init__(self, block):
        self.positions = {}
        for k, stmt in enumerate(block):
            for var in rebound(stmt):
                self.positions.setdefault(var, []).append(k)

    def between(self, var, start, end):
        """The positions strictly between ``start`` and ``end`` rebinding ``var``."""
        positions = self.positions.get(var, [])
        return positions[bisect.bisect_right(positions, start):bisect.bisect_left(positions, end)]

    def changed(self, k, before, after):
        """The statement at ``k`` rebinds the variables ``after`` now, ``before`` until now."""
        for var in before - after:
            self.positions[var].remove(k)
        for var in after - before:
            bisect.insort(self.positions.setdefault(var, []), k)


def same_in_block(shapes, rebindings, block, start, end, atom, like):
    """Whether ``atom``, read at ``block[end]``, surely has the shape ``like`` had at
    ``block[start]``: by the symbolic ``shapes``, or because ``like`` keeps its binding in between and
    ``atom`` is ``like`` or is computed in between from values of that shape (flow-sensitive,
    so it also holds in loops, where whole-call shapes prove little). ``rebindings`` is the
    block's ``Rebindings``."""
    if shapes.same(atom, like):
        return True
    if not isinstance(atom, Var) or atom.type.ndim != like.type.ndim or rebindings.between(like, start, end):
        return False
    if atom is like:
        return True
    bound_at = rebindings.between(atom, start, end)
    if len(bound_at) != 1 or not isinstance(block[bound_at[0]], Assign) or block[bound_at[0]].target is not atom:
        return False
    sources = _source_arguments(block[bound_at[0]])
    return sources is not None and all(
        same_in_block(shapes, rebindings, block, start, bound_at[0], source, like) for source in sources)
