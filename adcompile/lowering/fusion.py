"""Loop fusion: runs of statements over one iteration domain become one explicit loop nest.

The pass walks each block in order and grows a group while statements have a role
(``roles.py``) over the group's domain and respect the data dependences of running them
point by point in one loop:

- a reduction's result is only available after the loop: a statement reading it ends the group;
- an array written in the loop (``bx[:-1] += e``) may not be read in it, nor written after an
  earlier statement of the group read it (nor anything sharing its memory);
- a statement with no role over the domain (a scalar computation, an allocation, a shape
  query, an array computation over another domain) is moved before the loop when it reads
  nothing the loop computes or writes and the loop does not read what it assigns, and the
  group computes something already (a group of names, ``dt = A``, is left for it to start its
  own); otherwise it ends the group.

A group is written as a loop nest by ``loops.py``; one with a single array operation is left
as it is (numba already runs one numpy expression in one pass), unless it makes an array in a
loop's body: the loop's buffer is then kept across iterations (``iteration_buffers.py``). A
group may start on lengths it assumes equal, as a statement may join on them. Views with
inserted or broadcast axes (``views.py``) are read through their sources, so they move before
the loop like allocations; those nothing reads afterwards are dropped, and those only the
unfused branch of a length check reads move into it. Before grouping, shape-only reads go to arrays in memory anyway
(``shape_reads.py``).

Extents: a loop's extents are the lengths of the values it reads as they are where it runs.
Dims that stand for one length in the whole call (``ir/shapes.py``) are that; a dim that may
vary over a loop (a view rebound in it) is checked per joining statement by
``varying_lengths.length_reads`` (``Group.accepts``), the one place that decides it.
"""
from ..ir.builder import Namer
from ..ir.clone import copy_function
from ..ir.memory import memory_roots, sharing
from ..ir.nodes import AccumItem, Assign, Comment, For, If, SetItem, Var, While, walk
from ..ir.primitives import Kind, has_kind
from .loops import write_group
from .assumptions import DimAssumptions
from .roles import role_of
from .shape_reads import read_shapes_from_arrays_in_memory
from .varying_lengths import length_reads
from .views import drop_unread_views, find_views, sink_views_into_fallbacks


class FusionContext:
    """What every group of one function needs: shapes, names, uses, the memory map."""

    def __init__(self, fn, shapes, parallel):
        self.fn, self.shapes, self.parallel = fn, shapes, parallel
        self.namer = Namer()
        self.reads, self.assigns = {}, {}
        for param in fn.params:
            self.namer.reserve(param.name)
            self.assigns[param] = 1
        for stmt in walk(fn.body):
            for atom in stmt.reads():
                if isinstance(atom, Var):
                    self.reads[atom] = self.reads.get(atom, 0) + 1
            for var in stmt.writes():
                self.namer.reserve(var.name)
                if isinstance(stmt, Assign):
                    self.assigns[var] = self.assigns.get(var, 0) + 1
        self.results = {atom for atom in fn.results if isinstance(atom, Var)}
        self.roots = memory_roots(fn.body, fn.params)
        written = {v for stmt in walk(fn.body) for v in stmt.writes()
                   if isinstance(stmt, (SetItem, AccumItem)) or (isinstance(stmt, Assign) and stmt.inplace)}
        written_roots = sharing(written, self.roots)
        self.written_memory = written | {v for v, roots in self.roots.items() if roots & written_roots}
        self.index_vars = []
        self.fused_loops = 0
        self.views = find_views(fn, shapes, self.assigns, self.written_memory)  # read through their sources
        self.fallbacks = set()  # ids of the Ifs running a loop behind its length check
        self.loop_depth = 0  # loops around the block being fused

    def new_var(self, base, type_, is_temp=False):
        return Var(self.namer.fresh(base), type_, is_temp=is_temp)

    def starting_role(self, stmt):
        """(role, dim assumptions) of ``stmt`` starting a group: with provably equal dims, else
        assuming a broadcast's length equal to those it broadcasts (``x[:, None, :] - m[None]``
        over three parameters' lengths), checked at run time like a joining statement's."""
        assumptions = DimAssumptions(self.shapes)
        role = role_of(stmt, self.shapes, views=self.views)
        if role is None:
            trial = assumptions.trial()
            role = role_of(stmt, self.shapes, lambda a, b: trial.same(a, b, across_parameters=False), self.views)
            assumptions = trial
        return role, assumptions

    def names_written_memory(self, stmt):
        """Whether ``stmt`` gives another name to memory that is written in place (``t = w``
        or ``t = w[1:]`` with ``w *= x`` somewhere): the name must stay bound to that memory,
        so the statement is left as it is, outside any loop, and ends the group before it."""
        return (isinstance(stmt, Assign) and stmt.prim in ("alias", "getitem") and stmt.target.type.ndim > 0
                and stmt.target in self.written_memory)


class Group:
    """Statements being fused over one domain, in program order, and what they touch."""

    def __init__(self, domain, ctx):
        self.domain, self.ctx = domain, ctx
        self.assumptions = DimAssumptions(ctx.shapes)
        self.original = []  # every statement taken, in program order (to undo the group)
        self.members = []  # (stmt, role) run in the loop
        self.moved = []  # statements moved before the loop
        self.trailing_comments = []
        self.assigned = set()  # arrays the loop computes point by point
        self.reduced = set()  # scalars the loop accumulates
        self.read_vars = set()  # everything the loop's statements read
        self.external_reads = {}  # arrays read from memory in the loop, in reading order (a dict, not a set)
        self.read_accesses = {}  # array read from memory -> the accesses reading it
        self.read_roots, self.written_roots = set(), set()
        self.length_checks = []  # (array, axis) read whose varying length must be the extent's

    def _roots(self, var):
        return sharing({var}, self.ctx.roots)

    def sharing_any(self, var, others):
        """Whether ``var`` may share memory with one of ``others``."""
        return any(self._roots(var) & self._roots(other) for other in others)

    def role_of(self, stmt):
        """``stmt``'s role in this group, with the dim assumptions it needs (or None)."""
        trial = self.assumptions.trial()
        role = role_of(stmt, self.ctx.shapes, trial.same, self.ctx.views)
        if role is None or not trial.same_domain(role.domain, self.domain):
            return None, None
        return role, trial

    def accepts(self, stmt, role):
        """Whether ``stmt`` (of ``role`` over this group's domain) may join the loop."""
        if length_reads(stmt, role, self) is None:
            return False
        if any(isinstance(a, Var) and a in self.reduced for a in stmt.reads()):
            return False
        if any(atom in self.reduced for atom, _ in role.reads):  # through a view
            return False
        reads = role.reads[:1] if role.kind == "accumulate" else role.reads
        for atom, access in reads:
            if atom in self.assigned:
                if not access.is_identity:
                    return False
            elif self._roots(atom) & self.written_roots:
                return False
        if role.kind == "accumulate":
            array = stmt.array
            # accumulations commute with each other, not with reads
            return (array not in self.assigned and array not in self.reduced
                    and not self._roots(array) & self.read_roots)
        target = stmt.target
        if target in self.reduced or target in {s.target for s in self.moved if isinstance(s, Assign)}:
            return False
        if self._roots(target) & self.written_roots:
            return False
        if role.kind == "reduce" and target in self.read_vars:
            return False
        return True

    def add(self, stmt, role):
        self.original.extend(self.trailing_comments)
        self.members.extend((c, None) for c in self.trailing_comments)
        self.trailing_comments = []
        self.original.append(stmt)
        self.members.append((stmt, role))
        self.length_checks += [read for read in length_reads(stmt, role, self) if read not in self.length_checks]
        self.read_vars |= {a for a in stmt.reads() if isinstance(a, Var)}
        reads = role.reads[:1] if role.kind == "accumulate" else role.reads
        for atom, access in reads:
            if atom not in self.assigned:
                self.external_reads[atom] = None
                self.read_accesses.setdefault(atom, set()).add(access)
                self.read_roots |= self._roots(atom)
        if role.kind == "accumulate":
            self.written_roots |= self._roots(stmt.array)
        elif role.kind == "reduce":
            self.reduced.add(stmt.target)
        else:
            self.assigned.add(stmt.target)

    def can_move(self, stmt):
        """Whether ``stmt`` may run before the loop instead of at its place after some of it."""
        if not isinstance(stmt, Assign):
            return False
        target = stmt.target
        if target in self.read_vars or target in self.assigned or target in self.reduced:
            return False
        if self._roots(target) & (self.read_roots | self.written_roots):
            return False
        if has_kind(stmt.prim, Kind.SHAPE_QUERY):
            return True
        args = [a for a in stmt.args if isinstance(a, Var)]
        if any(a in self.assigned or a in self.reduced for a in args):  # not computed before the loop
            return False
        value_args = args
        if has_kind(stmt.prim, Kind.NEW_FROM_SHAPE):  # its arguments are lengths (and a fill value)
            value_args = args[-1:] if stmt.prim == "full" else []
        elif target in self.ctx.views:  # no work of its own: the loop reads its source
            value_args = args
        elif self.ctx.names_written_memory(stmt):
            return False  # a name for memory written in place stays where it is
        # an array computation on values the loop does not touch runs before it, so that the
        # loop may go on past it (``dx * 0.5`` between two runs over ``A.shape[0]``)
        return not any(self._roots(a) & self.written_roots for a in value_args)

    def computes(self):
        """Whether the group computes anything yet: a group of names for arrays only
        (``dt = A``) does not move statements of another domain before itself, so that they
        can form a loop of their own (the Hessian's coefficient over ``A.shape[0]`` after
        ``dt = A`` over ``A``'s shape)."""
        return any(role is not None and not (role.kind == "pass" and stmt.prim == "alias")
                   for stmt, role in self.members)

    def move(self, stmt):
        self.original.extend(self.trailing_comments)
        self.moved.extend(self.trailing_comments)
        self.trailing_comments = []
        self.original.append(stmt)
        self.moved.append(stmt)

    def finish(self):
        """The statements replacing the group: the loop nest, or the original statements."""
        array_ops = sum(1 for _, role in self.members if role is not None and role.kind != "pass"
                        and role.kind != "fill")
        lowered = write_group(self) if array_ops >= 2 or self._makes_an_array_in_a_loop() else None
        if lowered is None:
            return self.original + self.trailing_comments
        self.ctx.fused_loops += 1
        return lowered + self.trailing_comments

    def _makes_an_array_in_a_loop(self):
        """Whether the group, inside a loop, makes a new named array by an elementwise operation:
        as a loop nest it writes a buffer that the next iteration may reuse
        (``iteration_buffers.py``) where the numpy expression allocates in every iteration. (A
        temporary read once is left to the expression reading it, which numba computes in the
        same pass: ``x - lr * v``.)"""
        return self.ctx.loop_depth > 0 and any(
            role is not None and role.kind == "map" and stmt.target.type.ndim > 0
            and (not stmt.target.is_temp or self.ctx.reads.get(stmt.target, 0) > 1)
            for stmt, role in self.members)

    def guarded(self, check, fused):
        """The fused statements behind the run-time check of the group's assumptions."""
        if not check:
            return fused
        fallback = If(check[-1].target, fused, self.original, unfused_fallback=True)
        self.ctx.fallbacks.add(id(fallback))
        return check + [fallback]


def _leads_a_larger_loop(role, group):
    """Whether the statement of starting ``role`` would start a loop nest deeper than
    ``group``'s: then it ends the group rather than running before it as a numpy statement,
    so that the statements after it can join its own loop (the GMM's 3-d ``x[:, None, :] -
    means`` after a 2-d loop); a statement over a smaller domain (the Hessian's ``dx * 0.5``
    over n between loops over A's rows) runs before the group, which goes on past it."""
    return role is not None and bool(role.domain) and len(role.domain) > len(group.domain)


def _fuse_block(block, ctx):
    out, group = [], None
    for stmt in block:
        is_loop = isinstance(stmt, (For, While))
        ctx.loop_depth += is_loop
        for inner in stmt.blocks():
            inner[:] = _fuse_block(inner, ctx)
        ctx.loop_depth -= is_loop
        if isinstance(stmt, Comment) and group is not None:
            group.trailing_comments.append(stmt)
            continue
        if ctx.names_written_memory(stmt):
            if group is not None:
                out.extend(group.finish())
                group = None
            out.append(stmt)
            continue
        role, assumed = ctx.starting_role(stmt)
        if group is not None:
            joining, assumptions = group.role_of(stmt)
            if joining is not None and group.accepts(stmt, joining):
                group.assumptions.adopt(assumptions)
                group.add(stmt, joining)
                continue
            if joining is None and group.computes() and not _leads_a_larger_loop(role, group) \
                    and group.can_move(stmt):
                group.move(stmt)
                continue
            out.extend(group.finish())
            group = None
        if role is not None and role.domain and all(d is not None for d in role.domain):
            group = Group(role.domain, ctx)
            group.assumptions.adopt(assumed)
            if group.accepts(stmt, role):
                group.add(stmt, role)
                continue
            group = None
        out.append(stmt)
    if group is not None:
        out.extend(group.finish())
    return out


def fuse_loops(fn, infer_shapes, parallel=False):
    """A copy of ``fn`` with its fusable statement runs written as loop nests, and the number
    of loops written. ``infer_shapes(fn)`` gives the symbolic shapes (``ir/shapes.py``);
    ``parallel``: outer loops without a loop-carried dependence use ``prange``."""
    fn = copy_function(fn)
    shapes = infer_shapes(fn)
    read_shapes_from_arrays_in_memory(fn, shapes)
    ctx = FusionContext(fn, shapes, parallel)
    fn.body = drop_unread_views(_fuse_block(fn.body, ctx), ctx.views, ctx.results)
    sink_views_into_fallbacks(fn.body, ctx.views, ctx.fallbacks, ctx.results)
    return fn, ctx.fused_loops

