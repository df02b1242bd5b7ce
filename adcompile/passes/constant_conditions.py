"""Branches on compile-time constants, resolved before differentiation.

A layer's options reach its code as constants (``ph = 0`` from ``padding=0``), and the code
branches on them (``if ph != 0 or pw != 0: x = pad(x)``). Kept, such a branch costs a taped
flag per iteration and, worse, leaves arrays that exist on one path only, which numba cannot
type in the backward sweep. Before:

    ph = 0
    _t = ne(ph, 0)
    if _t:
        padded = ...
        x = padded

after: ``ph = 0`` alone (the branch never runs). Rewrites, to a fixpoint:

    c1 < c2, c1 == c2, not c, c1 and c2, c1 or c2, ...  -> the folded bool
    if <constant>: A else: B                            -> A or B, in place of the ``if``

where an operand is constant if it is a scalar constant or a variable assigned a constant
exactly once and never written in place (a single assignment is the only value any read
can see). Only scalar predicates are folded, so array comparisons keep numpy's semantics: the
predicates that declare how they fold (``fold=`` in ir/primitives/numeric/logic.py).
"""
from ..ir.nodes import Assign, Const, If, Var, const, walk
from ..ir.primitives import primitive
from .uses import Uses


def _constants(fn):
    """Scalar variables assigned one constant once: variable -> its Python value."""
    uses = Uses(fn)
    found = {}
    for stmt in walk(fn.body):
        if (isinstance(stmt, Assign) and stmt.prim == "alias" and not stmt.inplace and stmt.target.type.ndim == 0
                and uses.single_def(stmt.target) and isinstance(stmt.args[0], Const)
                and isinstance(stmt.args[0].value, (bool, int, float))):
            found[stmt.target] = stmt.args[0].value
    return found


def _value(atom, constants):
    if isinstance(atom, Var):
        return constants.get(atom)
    if isinstance(atom, Const) and isinstance(atom.value, (bool, int, float)):
        return atom.value
    return None


def _fold_predicates(fn, constants):
    changed = False
    for stmt in walk(fn.body):
        spec = primitive(stmt.prim) if isinstance(stmt, Assign) else None
        if spec is not None and spec.is_predicate and spec.fold is not None and stmt.target.type.ndim == 0 \
                and not stmt.inplace:
            values = [_value(a, constants) for a in stmt.args]
            if all(v is not None for v in values):
                stmt.prim, stmt.args, stmt.params = "alias", [const(bool(spec.fold(*values)))], {}
                changed = True
    return changed


def _take_constant_branches(block, constants):
    """Replace, in ``block`` and the blocks inside it, each ``if`` on a constant by the branch it
    takes; returns whether anything changed."""
    changed = False
    k = 0
    while k < len(block):
        stmt = block[k]
        condition = _value(stmt.cond, constants) if isinstance(stmt, If) else None
        if condition is not None:
            block[k:k + 1] = stmt.body if condition else stmt.orelse
            changed = True
            continue
        for inner in stmt.blocks():
            changed |= _take_constant_branches(inner, constants)
        k += 1
    return changed


def resolve_constant_conditions(fn):
    """Fold constant predicates and take constant branches in ``fn``, in place; returns whether
    anything changed."""
    changed = False
    while True:
        constants = _constants(fn)
        step = _fold_predicates(fn, constants)
        step |= _take_constant_branches(fn.body, _constants(fn) if step else constants)
        if not step:
            return changed
        changed = True
