"""Writing one fused group (``fusion.py``) as an IR loop nest.

Inside the loop every array value of the group becomes a scalar with the array's name, an
operand from memory becomes an indexed read (``x[i + 1]``), a reduction adds into a scalar
and an accumulation into a slice becomes ``bx[i] += value``. A value used after the loop is
materialised: allocated before the loop and written at each point (into a fresh buffer when
the loop still reads the value it replaces). Before the loop: the loop bounds, the statements
the group moved there, allocations and accumulator starts; after it: means divided by their
count, float32 sums cast back, and replaced buffers renamed.

The body is written by ``loop_body.py``, reductions by ``loop_reductions.py`` and the run-time
check the loop runs behind by ``loop_guards.py``; this module holds the loop nest itself.
"""
from ..ir.dims import constant
from ..ir.nodes import Assign, Const, For, SetItem, Var, const
from ..ir.types import I8
from .domains import Access, Extents, is_array_var
from .loop_body import LoopBody
from .loop_guards import CannotWrite, LoopGuards
from .loop_reductions import LoopReductions, accumulator_of

_INDEX_NAMES = "ijklmn"


class ParallelFor(For):
    """A ``For`` whose iterations are independent: written with ``numba.prange``."""
    parallel = True


def write_group(group):
    """The statements replacing ``group``: its loop nest (behind the run-time check of the
    dims it assumes equal, if any), or None when it cannot be written."""
    try:
        writer = _GroupWriter(group)
        fused = writer.statements()
        check = writer.assumption_check()
    except CannotWrite:
        return None
    return group.guarded(check, fused)


class _GroupWriter(LoopBody, LoopReductions, LoopGuards):
    """The loop nest of one group: its indices, the values live after it, the statements around it."""

    def __init__(self, group):
        self.group, self.ctx = group, group.ctx
        ctx = self.ctx
        moved_targets = {s.target for s in group.moved if isinstance(s, Assign)}
        available = [a for a in group.external_reads if a not in moved_targets] + list(ctx.fn.params)
        self.extents = Extents(ctx.shapes, ctx.fn.params, available, ctx.new_var)
        # an axis of length 1 gets no loop: its index is 0
        self.index = [const(0) if dim.constant == 1 else index
                      for dim, index in zip(group.domain, self._index_vars(len(group.domain)))]
        self.env, self.scalars = {}, {}
        self.zeros = set()  # atoms standing for a fill with zero (x + zero is x)
        self.body, self.before, self.after = [], [], []
        self.live_out = self._live_out()
        self.accumulators = set()
        # numpy raises on a max / min along an empty axis: such a loop runs behind a length check
        self.nonempty = [[group.domain[a] for a in range(len(group.domain)) if a not in role.result.axes]
                         for stmt, role in group.members
                         if role is not None and role.result is not None and accumulator_of(stmt.prim).step]

    # ------------------------------------------------------------------ analysis
    def _index_vars(self, depth):
        while len(self.ctx.index_vars) < depth:
            base = _INDEX_NAMES[len(self.ctx.index_vars) % len(_INDEX_NAMES)]
            self.ctx.index_vars.append(self.ctx.new_var(base, I8))
        return self.ctx.index_vars[:depth]

    def _live_out(self):
        """Arrays of the group read after the loop (or by its start: loop-carried values)."""
        group, ctx = self.group, self.ctx
        inside = {}
        for stmt, _ in group.members:
            for atom in stmt.reads():
                if isinstance(atom, Var):
                    inside[atom] = inside.get(atom, 0) + 1
        for stmt in group.moved:
            if isinstance(stmt, Assign) and stmt.prim in ("dim", "size") and stmt.args[0] in group.assigned:
                inside[stmt.args[0]] = inside.get(stmt.args[0], 0) + 1
        return {var for var in group.assigned
                if ctx.reads.get(var, 0) > inside.get(var, 0) or var in ctx.results or var in group.external_reads}

    def _assigned_here(self, var):
        return sum(1 for stmt, role in self.group.members
                   if role is not None and role.kind not in ("accumulate", "reduce") and stmt.target is var)

    # ------------------------------------------------------------------ around the loop
    def _extent_bound(self, dim):
        bound = self.extents.bound(dim)
        if bound is None:
            bound = self._bound_from_a_view(dim)
        if bound is None:
            raise CannotWrite
        return bound

    def _bound_from_a_view(self, dim):
        """The length ``dim`` of a slice of memory the group takes, where no expression of the
        parameters and no array in memory gives it (``a = r[0:3]`` of a row ``r``: its length
        is the row's clipped at 3): the slice is taken again before the loop, into a name of its
        own, and the loop runs over its length there. Legal because a view does no work and
        its source is the same array at the loop's start as at the slice: the group assigns it
        nowhere (``_views_of_memory``), and no statement the group moves before the loop
        assigns it (those run after the extents' statements)."""
        moved = {s.target for s in self.group.moved if isinstance(s, Assign)}
        for target, view in self._views_of_memory().items():
            if view.prim != "getitem" or view.args[0] in moved or any(a in moved for a in view.args[1:]):
                continue
            for axis, have in enumerate(self.ctx.shapes.of(target)):
                if have == dim:
                    early = self.ctx.new_var(target.name, target.type, is_temp=True)
                    return self.extents.provide(dim, Assign(early, "getitem", list(view.args), dict(view.params)), axis)
        return None

    def _extent_count(self, dim):
        self._extent_bound(dim)
        return self.extents.count(dim)

    def materialise(self):
        """Write each value used after the loop into its array, at the end of the body; a
        view used after the loop is taken after it instead (it must stay a view)."""
        views = self._views_of_memory()
        for var in sorted(self.live_out, key=lambda v: (v.name, v.uid)):  # a set: sorted, ties by creation
            if var in views:  # after the loop, which may still read the value it replaces
                self.after.append(views[var])
                continue
            value = self.env[var]
            if var in self.group.external_reads and self._updates_in_place(var):
                self.body.append(SetItem(var, value, [("int", i) for i in self.index]))
                continue
            if var in self.group.external_reads:  # the loop reads the value this one replaces
                buffer = self.ctx.new_var(var.name, var.type)
                self.after.append(Assign(var, "alias", [buffer]))
            else:
                buffer = var
            counts = [self._extent_count(d) for d in self.group.domain]
            params = {"ndim": var.type.ndim, "dtype": var.type.dtype}
            self.before.append(Assign(buffer, "empty", counts, params))
            self.body.append(SetItem(buffer, value, [("int", i) for i in self.index]))

    def _updates_in_place(self, var):
        """Whether the loop may write ``var``'s new value into its old buffer: every
        assignment may overwrite it (``inplace``, as codegen's ``+=``) and the loop reads the
        old value only at the point it writes, and through no other array."""
        assignments = [stmt for stmt, role in self.group.members
                       if role is not None and role.kind not in ("accumulate", "reduce") and stmt.target is var]
        if not all(stmt.inplace for stmt in assignments):
            return False
        if self.group.read_accesses.get(var, set()) != {Access.identity(var.type.ndim)}:
            return False
        others = [a for a in self.group.external_reads if a is not var]
        return not self.group.sharing_any(var, others)

    def _views_of_memory(self):
        """The slices and aliases of arrays in memory the group takes, by target (each
        assigned once in the group)."""
        views = {}
        for stmt, role in self.group.members:
            if role is None or role.kind not in ("slice", "pass") or stmt.prim not in ("getitem", "alias"):
                continue
            source = stmt.args[0]
            if self._assigned_here(stmt.target) == 1 and is_array_var(source) and source not in self.group.assigned:
                views[stmt.target] = stmt
        return views

    def statements(self):
        for stmt, role in self.group.members:
            self.member(stmt, role)
        self.materialise()
        body = _without_dead_scalars(self.body, self.accumulators)
        bounds = [self._extent_bound(d) for d in self.group.domain]
        moved = [self._shape_query(s) for s in self.group.moved]  # before reading extents.stmts
        loop = body
        for depth in reversed(range(len(bounds))):
            if isinstance(self.index[depth], Const):
                continue
            parallel = depth == 0 and self.ctx.parallel and self._independent()
            loop = [(ParallelFor if parallel else For)(self.index[depth], const(0), bounds[depth], const(1), loop)]
        return self.extents.stmts + moved + self.before + loop + self.after

    def _shape_query(self, stmt):
        """A moved ``dim``/``size`` of an array the loop computes or reduces into: from the
        loop bounds."""
        if not (isinstance(stmt, Assign) and stmt.prim in ("dim", "size")):
            return stmt
        array = stmt.args[0]
        if array in self.group.assigned:
            dims = self.group.domain  # the shape of every array the loop computes
        elif array in self.group.reduced and array.type.ndim > 0:
            result = next(role.result for member, role in self.group.members
                          if role is not None and role.kind == "reduce" and member.target is array)
            dims = [constant(1) if axis is None else self.group.domain[axis] for axis in result.axes]
        else:
            return stmt
        if stmt.prim == "dim":
            return Assign(stmt.target, "alias", [self._extent_count(dims[stmt.params["axis"]])], loc=stmt.loc)
        return Assign(stmt.target, "alias", [self._count(dims)], loc=stmt.loc)

    def _independent(self):
        """Whether the outer loop's iterations touch disjoint elements: every accumulation
        into an array at one access that follows the outer index (a reduction along axes
        keeps the outer one); reductions of everything are sums."""
        accesses = {}
        for stmt, role in self.group.members:
            if role is None:
                continue
            if role.kind == "reduce" and role.result is not None:
                accesses.setdefault(stmt.target, set()).add(role.result)
            elif role.kind == "reduce" and accumulator_of(stmt.prim).step:
                return False
            if role.kind == "accumulate":
                array, access = role.reads[1]
                accesses.setdefault(array, set()).add(access)
        return all(len(a) == 1 and next(iter(a)).axes[:1] == (0,) for a in accesses.values())



def _without_dead_scalars(body, accumulators):
    """``body`` without assignments whose value nothing in the loop (nor after it) reads."""
    live, kept = set(accumulators), []
    for stmt in reversed(body):
        if isinstance(stmt, Assign) and stmt.target not in live:
            continue
        if isinstance(stmt, Assign):
            live.discard(stmt.target)
        live |= {a for a in stmt.reads() if isinstance(a, Var)}
        kept.append(stmt)
    return kept[::-1]
