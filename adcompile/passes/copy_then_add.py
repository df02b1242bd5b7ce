"""A copy that the next statement adds to is one sum:

    dbx = dt_5.copy()                    dbx = dt_5 + dt_8
    dbx += dt_8                  ->

(one pass over memory and one new array instead of two passes; ``a`` added to its own copy
is ``a * 2.0``). The first contribution of an
accumulator is copied when the value is not the accumulator's own (``first_contribution.py``),
and the next contribution often follows at once (``0.5 * x @ x`` contributes ``0.5 * x``
twice). The sum is a new array owned by the accumulator, as the copy was. It needs the added
value to have the copy's type and, by the symbolic shapes, its shape (``y += b`` may
broadcast ``b``; ``y = a + b`` would broadcast ``a`` as well).
"""
from ..ir.nodes import Assign, Comment, Var, const, walk
from ..ir.shapes import infer_shapes


def _candidates(block):
    """(index of the copy, index of the add) pairs in ``block``, comments between allowed."""
    pairs = []
    for k, stmt in enumerate(block):
        if not (isinstance(stmt, Assign) and stmt.prim == "copy" and not stmt.inplace):
            continue
        j = k + 1
        while j < len(block) and isinstance(block[j], Comment):
            j += 1
        if j == len(block):
            continue
        added = block[j]
        if (isinstance(added, Assign) and added.inplace and added.prim == "add" and added.target is stmt.target
                and added.args[0] is stmt.target and isinstance(added.args[1], Var)
                and added.args[1] is not stmt.target and added.args[1].type == stmt.target.type
                and stmt.args[0].type == stmt.target.type):
            pairs.append((k, j))
    return pairs


def _fold_block(block, shapes):
    changed = False
    for stmt in block:
        for inner in stmt.blocks():
            changed |= _fold_block(inner, shapes)
    for k, j in reversed(_candidates(block)):
        copy, added = block[k], block[j]
        if shapes().same(copy.args[0], added.args[1]):
            value, other = copy.args[0], added.args[1]
            # a + a is exactly 2 * a, which simplification can fold into a scaling that made a
            block[k] = (Assign(copy.target, "mul", [value, const(2.0)], loc=copy.loc) if value is other
                        else Assign(copy.target, "add", [value, other], loc=copy.loc))
            del block[j]
            changed = True
    return changed


def fold_copies_then_adds(fn):
    """Rewrite ``fn`` in place; True if anything changed."""
    if not any(_candidates(stmt_block) for stmt_block in _blocks(fn.body)):
        return False
    inferred = []

    def shapes():  # inferred once, only when a candidate is there
        if not inferred:
            inferred.append(infer_shapes(fn))
        return inferred[0]
    return _fold_block(fn.body, shapes)


def _blocks(body):
    yield body
    for stmt in walk(body):
        yield from stmt.blocks()
