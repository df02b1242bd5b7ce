"""Dead-code elimination: drop computations whose results nothing needs.

Runs on every generated function. Liveness starts from the function's results and the
variables that control flow reads (branch conditions, loop bounds), and spreads backwards:
a statement is live when it writes a live variable, and then everything it reads is live.
Statements writing only dead variables are removed — assignments, in-place writes and
accumulations into arrays nobody reads, pushes onto tapes nobody pops — and so are loops
and branches left empty. Arrays bound to each other by plain assignment share one fate,
since writing through one name changes the other.

    _t_13 = -np.mean(_t_11)     # the loss value, unused by a gradient-only function
    bx[:-1] += -bt_7            # an adjoint only the discarded result would have read
"""
from ..ir.nodes import Assign, Comment, CustomCall, For, If, Pop, Push, SetItem, Var, While, walk


class _Aliases:
    """Union-find over array variables bound by ``alias`` (``y = x``)."""

    def __init__(self, fn):
        self.parent = {}
        for stmt in walk(fn.body):
            if isinstance(stmt, Assign) and stmt.prim == "alias" and stmt.target.type.ndim \
                    and isinstance(stmt.args[0], Var):
                self.union(stmt.target, stmt.args[0])

    def find(self, var):
        while self.parent.get(var, var) is not var:
            var = self.parent[var]
        return var

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb


def _control_reads(stmt):
    if isinstance(stmt, If):
        return [stmt.cond]
    if isinstance(stmt, For):
        return [stmt.start, stmt.stop, stmt.step]
    if isinstance(stmt, While):
        return [stmt.cond]
    return []


def _live_roots(fn, aliases):
    live = set()
    for atom in fn.results:
        if isinstance(atom, Var):
            live.add(aliases.find(atom))
    for stmt in walk(fn.body):
        for atom in _control_reads(stmt):
            if isinstance(atom, Var):
                live.add(aliases.find(atom))
    return live


def _is_live(stmt, live, aliases):
    if isinstance(stmt, (If, For, While, Comment)):
        return True
    if isinstance(stmt, CustomCall):
        return any(aliases.find(v) in live for inner in walk([stmt]) for v in inner.writes())
    return any(aliases.find(v) in live for v in stmt.writes())


def _mark(fn, aliases):
    live = _live_roots(fn, aliases)
    changed = True
    while changed:
        changed = False
        for stmt in walk(fn.body, into_custom=True):
            if not _is_live(stmt, live, aliases):
                continue
            for atom in stmt.reads():
                if isinstance(atom, Var):
                    root = aliases.find(atom)
                    if root not in live:
                        live.add(root)
                        changed = True
    return live


def _sweep(block, live, aliases):
    kept = []
    removed = False
    for stmt in block:
        if isinstance(stmt, (Assign, SetItem, Push, Pop, CustomCall)) and not _is_live(stmt, live, aliases):
            removed = True
            continue
        for inner in stmt.blocks():
            removed |= _sweep(inner, live, aliases)
        index_read = isinstance(stmt, For) and aliases.find(stmt.index) in live  # read after the loop
        if isinstance(stmt, (For, If)) and not any(_has_code(b) for b in stmt.blocks()) and not index_read:
            removed = True
            continue
        kept.append(stmt)
    block[:] = kept
    return removed


def _has_code(block):
    return any(not isinstance(s, Comment) for s in block)


def eliminate_dead_code(fn):
    """Remove dead statements from ``fn`` in place; returns True if anything was removed."""
    aliases = _Aliases(fn)
    live = _mark(fn, aliases)
    return _sweep(fn.body, live, aliases)
