"""Liveness for reverse mode: which primal values the backward sweep reads, and where.

Saving a value before it is overwritten is needed only if the backward sweep reads it after
undoing the overwrite. Which values it reads depends on what is saved and restored (putting a
value back inside a branch reads the branch's condition), so the taping plan and the adjoint
sweep are run again until the set of values read, and the statements reading them, are
stable (``run_to_fixpoint``). ``MAX_ROUNDS`` bounds the rounds; not converging is an
adcompile bug, raised as an ``InternalError`` naming the function.

A mixin of ``ReverseTransform`` (``transform.py``): it reads ``fn``, ``memory``,
``primal_vars``, ``reshaped``, ``order``, ``loops`` and ``backward_statements``, and owns
``read_sites`` and ``needed``. A read site is a statement's id, or ``("end", id(block))``
for the reads at the start of a block's backward sweep (``note_reads_at_end``); both are keys
of ``order`` and ``loops``.
"""
from ...errors import InternalError
from ...ir.nodes import AccumItem, Assign, For, If, SetItem, Var, While, walk
from ...ir.primitives import primitive

# Rounds of (taping plan, adjoint sweep) before the set of needed values must be stable.
MAX_ROUNDS = 20


def value_reads(stmt, reshaped=(), write_targets=False):
    """The Vars whose values ``stmt`` itself reads (shape-only reads excluded, except of the
    arrays in ``reshaped``, whose shape may change from one assignment to the next).
    ``write_targets``: an array written into counts as read, for the backward sweep, whose
    writes put back overwritten elements and need the variable bound to the same array as
    in the forward sweep at that point."""
    atoms = list(stmt.reads())
    if isinstance(stmt, Assign) and primitive(stmt.prim).shape_only:
        skip = primitive(stmt.prim).shape_only
        atoms = [a for k, a in enumerate(atoms) if k not in skip or a in reshaped]
    if isinstance(stmt, (SetItem, AccumItem)) and not write_targets:
        atoms = [a for a in atoms if a is not stmt.array]  # writing into it
    return [a for a in atoms if isinstance(a, Var)]


def primal_reads(block, primal_vars, reshaped=()):
    """Primal Vars whose values the backward ``block`` reads (see ``value_reads``)."""
    return {a for stmt in walk(block) for a in value_reads(stmt, reshaped, write_targets=True)
            if a in primal_vars}


def enclosing_loops(block, loops=(), out=None):
    """id(stmt) -> the set of ids of the loops around it."""
    out = {} if out is None else out
    for stmt in block:
        out[id(stmt)] = frozenset(loops)
        inner = loops + (id(stmt),) if isinstance(stmt, (For, While)) else loops
        for nested in stmt.blocks():
            enclosing_loops(nested, inner, out)
    return out


class Liveness:
    """The fixpoint and the record of which backward statements read which primal values."""

    def run_to_fixpoint(self):
        """The forward and backward sweeps, once the set of needed values is stable."""
        snapshot = set(self.namer.taken)
        self.start_pass()
        self.backward_block(self.fn.body, (), 0)
        self.needed = self.backward_reads()
        # Restoring a saved value can make the backward sweep read more (the condition of the
        # branch it is restored in): repeat until the set of needed values is stable.
        for _ in range(MAX_ROUNDS):
            self.namer.taken = set(snapshot)
            sites = self.site_count()
            self.start_pass()
            forward = self.forward_block(self.fn.body, 0)
            self.results = self.keep_results(forward)
            backward = self.backward_block(self.fn.body, (), 0)
            needed = self.backward_reads()
            if needed <= self.needed and self.site_count() == sites:
                return forward, backward
            self.needed |= needed
        raise InternalError(f"reverse mode of {self.fn.name}: the set of values the backward sweep reads "
                            f"did not converge in {MAX_ROUNDS} rounds")

    def memory_shared(self, array):
        """The primal variables that may share memory with ``array``."""
        memory = self.memory.get(array, {array})
        shared = {var for var, roots in self.memory.items() if roots & memory and var in self.primal_vars}
        return shared | {array}

    def memory_read(self, var):
        """``var`` and the arrays whose memory it may view."""
        return {var} | {root for root in self.memory.get(var, ()) if root in self.primal_vars}

    def backward_reads(self):
        """The primal Vars whose values (or memory) the backward sweep reads."""
        reads = primal_reads(self.backward_statements, self.primal_vars, self.reshaped)
        return set().union(*map(self.memory_read, reads)) if reads else reads

    def site_count(self):
        return sum(len(sites) for sites in self.read_sites.values())

    def note_reads(self, stmt, chunk):
        """Record which primal statement's backward reads which primal values (the blocks of
        a branch or loop are recorded for the statements inside them)."""
        compound = isinstance(stmt, (If, For, While))
        for s in chunk:
            inner = [s] if compound and isinstance(s, (If, For, While)) else walk([s])
            for t in inner:
                for var in value_reads(t, self.reshaped, write_targets=True):
                    if var in self.primal_vars:
                        for read in self.memory_read(var):
                            self.read_sites.setdefault(read, set()).add(id(stmt))

    def note_reads_at_end(self, block, statements):
        """Record the primal values ``statements`` read at the start of ``block``'s backward
        (the adjoints' ``zeros_like``): the values the forward sweep leaves at the block's end,
        which a later iteration of a loop around the block may have overwritten."""
        site = ("end", id(block))
        if site not in self.order:
            self.order[site] = max(self.order[id(s)] for s in walk(block)) + 0.5
            self.loops[site] = self.loops[id(block[0])]
        for s in statements:
            for var in value_reads(s, self.reshaped, write_targets=True):
                if var in self.primal_vars:
                    for read in self.memory_read(var):
                        self.read_sites.setdefault(read, set()).add(site)

    def read_before(self, var, stmt, outside=None):
        """Whether the backward sweep reads ``var`` after undoing ``stmt``: in the backward of
        ``stmt`` or of a statement before it, or in a loop around ``stmt`` (earlier iterations).
        Otherwise the value ``stmt`` overwrites need not be saved. ``outside``: a ``for`` loop
        whose backward rebinds ``var`` as its index before any read in its body (the reads
        there, and its recomputed temporaries', are not of the value saved before it)."""
        here, loops = self.order[id(stmt)], self.loops[id(stmt)]
        inside = (lambda r: False) if outside is None else \
            (lambda r: r == id(outside) or id(outside) in self.loops[r])
        return any((self.order[r] <= here or self.loops[r] & loops) and not inside(r)
                   for r in self.read_sites.get(var, ()))
