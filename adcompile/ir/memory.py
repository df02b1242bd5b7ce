"""Which variables may share memory: numpy views and aliases.

In the IR every variable holds a value, but the generated numpy code gives some results as
views of their argument (``w[1:]``, ``x.T``, ``y = x``, a reshape): a write into one array
changes every variable that views its memory. The analyses that move or keep values across
writes (reverse mode's saving, common subexpressions, the code generator's inlining) ask
``memory_roots`` which arrays a variable may view.

    w = x.copy()       # roots: {w}
    v = w[1:]          # roots: {w}
    t = v.T            # roots: {w}
"""
from .nodes import Assign, Var, walk
from .primitives import Kind, has_kind


def is_view(stmt):
    """Whether the Assign ``stmt``'s array result may be a view of its first argument."""
    if stmt.target.type.ndim == 0 or not stmt.args or not isinstance(stmt.args[0], Var):
        return False
    if stmt.prim == "getitem":
        return all(item[0] != "array" for item in stmt.params["items"])
    if stmt.prim == "diag":  # the diagonal of a matrix is a (read-only) view in numpy
        return stmt.args[0].type.ndim == 2
    return has_kind(stmt.prim, Kind.VIEW)


def memory_roots(body, params):
    """Var -> the set of Vars whose memory it may be (itself for a fresh array)."""
    roots = {p: {p} for p in params if p.type.ndim > 0}
    changed = True
    while changed:
        changed = False
        for stmt in walk(body):  # custom Function regions too: their saved inputs may be views
            if not isinstance(stmt, Assign) or stmt.target.type.ndim == 0:
                continue
            source = stmt.args[0] if is_view(stmt) else None
            new = roots.get(source, {source}) if source is not None else {stmt.target}
            have = roots.setdefault(stmt.target, set())
            if not new <= have:
                have |= new
                changed = True
    return roots


def sharing(variables, roots):
    """``variables`` and every array whose memory one of them may be."""
    out = set(variables)
    for var in variables:
        out |= roots.get(var, set())
    return out
