"""Common-subexpression elimination within straight-line blocks.

When two values are computed by the same pure primitive from the same arguments, and
nothing those arguments name is reassigned or mutated in between (also through a view or
alias of their memory), the second (a temporary) is replaced by the first:

    _t_7 = _t_6 * r            _t_7 = _t_6 * r
    br += _t_7                 br += _t_7
    _t_9 = _t_6 * r     ->     br += _t_7
    br += _t_9

The first may be a variable the user named (``w = np.linalg.eigvalsh(A)``, recomputed by the
derivative rules of the decomposition) when it is assigned once and nothing ever writes into
its memory; a user-named repeat is kept, as the user wrote it.
Primitives of kind NEVER_MERGED (allocations, whose results may be written to) are never merged;
the arguments of a COMMUTATIVE one (``add``, ``mul``) match in either order.
"""
from ..ir.memory import memory_roots, sharing
from ..ir.nodes import Assign, Const, SetItem, Var
from ..ir.primitives import Kind, has_kind
from .uses import Uses, substitute_everywhere


def _key(stmt):
    args = tuple(("c", type(a.value).__name__, a.value) if isinstance(a, Const) else ("v", a.uid) for a in stmt.args)
    if has_kind(stmt.prim, Kind.COMMUTATIVE) and not stmt.params:  # ``0.5 * x`` and ``x * 0.5`` are one value
        args = tuple(sorted(args, key=repr))
    return stmt.prim, args, repr(sorted(stmt.params.items(), key=lambda kv: kv[0]))


def _written(stmt, roots):
    """The variables whose values ``stmt`` changes: those it assigns, and for a write into an
    array, every array sharing its memory."""
    written = set(stmt.writes())
    if isinstance(stmt, SetItem) or (isinstance(stmt, Assign) and stmt.inplace):
        written = sharing(written, roots)
    return written


class _Holders:
    """Which assigned variables may stand for a later repeat of their computation."""

    def __init__(self, uses, roots):
        self.uses = uses
        self.written_memory = set()
        for var in uses.mutated:
            self.written_memory |= roots.get(var, {var})
        self.roots = roots

    def can_hold(self, var):
        if not self.uses.single_def(var):
            return False
        return var.is_temp or not (self.roots.get(var, {var}) & self.written_memory)


class _Available:
    """The computations available in a block so far: key -> the variable holding it, indexed by
    the variables each reads, so that a write forgets the computations reading what it wrote
    without scanning them all (a scan per statement made long blocks quadratic)."""

    def __init__(self):
        self.holders = {}   # key -> (holding variable, registration number)
        self.readers = {}   # variable read -> [(key, registration number)]
        self.registered = 0

    def get(self, key):
        entry = self.holders.get(key)
        return None if entry is None else entry[0]

    def add(self, key, holder, reads):
        self.registered += 1
        self.holders[key] = (holder, self.registered)
        for var in reads:
            self.readers.setdefault(var, []).append((key, self.registered))

    def forget_reading(self, written):
        for var in written:
            for key, number in self.readers.pop(var, ()):
                entry = self.holders.get(key)
                if entry is not None and entry[1] == number:
                    del self.holders[key]


def _block(block, holders, replacements, roots):
    available = _Available()
    for stmt in block:
        if isinstance(stmt, Assign) and not stmt.inplace and not has_kind(stmt.prim, Kind.NEVER_MERGED):
            args = [replacements.get(a, a) if isinstance(a, Var) else a for a in stmt.args]
            stmt.args = args
            key = _key(stmt)
            holder = available.get(key)
            if holder is not None and stmt.target.is_temp and holders.uses.single_def(stmt.target):
                replacements[stmt.target] = holder
                continue
            if holder is None and holders.can_hold(stmt.target):
                available.add(key, stmt.target, sharing({a for a in args if isinstance(a, Var)}, roots))
        written = _written(stmt, roots)
        if written:
            available.forget_reading(written)
        for inner in stmt.blocks():
            _block(inner, holders, replacements, roots)
        if stmt.blocks():
            available = _Available()


def eliminate_common_subexpressions(fn):
    """Merge repeated pure computations in ``fn`` in place; returns True if anything merged."""
    replacements = {}
    roots = memory_roots(fn.body, fn.params)
    _block(fn.body, _Holders(Uses(fn), roots), replacements, roots)
    substitute_everywhere(fn, replacements)
    return bool(replacements)
