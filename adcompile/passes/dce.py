"""Dead-code elimination: drop assignments whose value nothing reads.

Runs on every generated function. A statement is removed when it is an ``Assign`` (all
primitives are pure) whose target is never read — by any statement, nested block or the
function's results — repeated until nothing changes.

    _t_13 = -np.mean(_t_11)     # the loss value, unused by a gradient-only function
    return bw                   # -> the first line is removed
"""
from ..ir.nodes import Assign, Var, walk


def _read_counts(fn):
    counts = {}
    for stmt in walk(fn.body):
        for atom in stmt.reads():
            if isinstance(atom, Var):
                counts[atom] = counts.get(atom, 0) + 1
    for atom in fn.results:
        if isinstance(atom, Var):
            counts[atom] = counts.get(atom, 0) + 1
    return counts


def _sweep(block, counts):
    changed = False
    kept = []
    for stmt in block:
        if isinstance(stmt, Assign) and counts.get(stmt.target, 0) == 0:
            for atom in stmt.args:
                if isinstance(atom, Var):
                    counts[atom] -= 1
            changed = True
            continue
        for inner in stmt.blocks():
            if _sweep(inner, counts):
                changed = True
        kept.append(stmt)
    block[:] = kept
    return changed


def eliminate_dead_code(fn):
    """Remove dead assignments from ``fn`` in place; returns True if anything was removed."""
    counts = _read_counts(fn)
    removed = False
    while _sweep(fn.body, counts):
        removed = True
    return removed
