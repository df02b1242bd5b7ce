"""Common-subexpression elimination within straight-line blocks.

When two temporaries are computed by the same pure primitive from the same arguments, and
nothing those arguments name is reassigned or mutated in between, the second is replaced
by the first:

    _t_7 = _t_6 * r            _t_7 = _t_6 * r
    br += _t_7                 br += _t_7
    _t_9 = _t_6 * r     ->     br += _t_7
    br += _t_9

Allocations (zeros, empty, copy, ...) are never merged: their results may be written to.
"""
from ..ir.nodes import Assign, Const, Var
from .uses import Uses, substitute_everywhere

_NEVER_MERGED = {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "copy", "arange",
                 "linspace", "eye", "placeholder", "new_tape", "broadcast_to_shape", "alias"}


def _key(stmt):
    args = tuple(("c", type(a.value).__name__, a.value) if isinstance(a, Const) else ("v", a.uid) for a in stmt.args)
    return stmt.prim, args, repr(sorted(stmt.params.items(), key=lambda kv: kv[0]))


def _block(block, uses, replacements):
    available = {}
    for stmt in block:
        if isinstance(stmt, Assign) and not stmt.inplace and stmt.prim not in _NEVER_MERGED \
                and stmt.target.is_temp and uses.single_def(stmt.target):
            args = [replacements.get(a, a) if isinstance(a, Var) else a for a in stmt.args]
            stmt.args = args
            key = _key(stmt)
            if key in available:
                replacements[stmt.target] = available[key]
                continue
            available[key] = stmt.target
        written = set(stmt.writes())
        if written:
            available = {k: v for k, v in available.items()
                         if not any(part[0] == "v" and part[1] in {w.uid for w in written} for part in k[1])}
        for inner in stmt.blocks():
            _block(inner, uses, replacements)
        if stmt.blocks():
            available = {}


def eliminate_common_subexpressions(fn):
    """Merge repeated pure computations in ``fn`` in place; returns True if anything merged."""
    replacements = {}
    _block(fn.body, Uses(fn), replacements)
    substitute_everywhere(fn, replacements)
    return bool(replacements)
