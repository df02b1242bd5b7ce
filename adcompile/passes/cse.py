"""Common-subexpression elimination within straight-line blocks.

When two values are computed by the same pure primitive from the same arguments, and
nothing those arguments name is reassigned or mutated in between (also through a view or
alias of their memory), the second (a temporary) is replaced by the first:

    _t_7 = _t_6 * r            _t_7 = _t_6 * r
    br += _t_7                 br += _t_7
    _t_9 = _t_6 * r     ->     br += _t_7
    br += _t_9

The first may be a variable the user named (``w = np.linalg.eigvalsh(A)``, recomputed by the
derivative rules of the decomposition); a user-named repeat is kept, as the user wrote it.
Both the first and the repeat must keep the value they were computed with: assigned once, and
nothing anywhere writes into their memory, also through a view. A temporary is no exception:
``M2 = np.flip(np.sin(A), axis=1)`` is a view of the temporary ``np.sin(A)`` that the user
may write into, so the temporary does not hold ``sin(A)`` for the derivative of ``cos(A)``,
nor may a repeat of ``sin(A)`` whose view is written be replaced by another ``sin(A)``.
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
    """Which assigned variables may stand for a later repeat of their computation, and which
    repeats may be replaced by them."""

    def __init__(self, uses, roots):
        self.uses = uses
        self.written_memory = set()
        for var in uses.mutated:
            self.written_memory |= roots.get(var, {var})
        self.roots = roots

    def keeps_its_value(self, var):
        """The invariant of a merge, for the holder and the repeat alike: ``var`` is assigned
        once and no statement writes into its memory (itself, or any view or alias of it), so
        that wherever it is read it has the value its statement computed. A temporary is held
        to it as a named variable is: the user may write through a view of a temporary."""
        return self.uses.single_def(var) and not (self.roots.get(var, {var}) & self.written_memory)

    def can_be_replaced(self, var):
        return var.is_temp and self.keeps_its_value(var)


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
            if holder is not None and holders.can_be_replaced(stmt.target):
                replacements[stmt.target] = holder
                continue
            if holder is None and holders.keeps_its_value(stmt.target):
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
