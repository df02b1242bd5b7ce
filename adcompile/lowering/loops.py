"""Writing one fused group (``fusion.py``) as an IR loop nest.

Inside the loop every array value of the group becomes a scalar with the array's name, an
operand from memory becomes an indexed read (``x[i + 1]``), a reduction adds into a scalar
and an accumulation into a slice becomes ``bx[i] += value``. A value used after the loop is
materialised: allocated before the loop and written at each point (into a fresh buffer when
the loop still reads the value it replaces). Before the loop: the loop bounds, the statements
the group moved there, allocations and accumulator starts; after it: means divided by their
count, float32 sums cast back, and replaced buffers renamed.
"""
from ..ir.dims import constant
from ..ir.indexing import index_params
from ..ir.nodes import AccumItem, Assign, Comment, Const, For, SetItem, Var, const
from ..ir.primitives import Accumulator, primitive
from ..ir.types import F8, FLOAT32, FLOAT64, I8, Type
from .domains import Access, Extents, is_array_var

_INDEX_NAMES = "ijklmn"
_SUMMED = Accumulator(0.0)  # an unbroadcast adds its elements up


def _accumulator(prim):
    """How a fused loop reduces with ``prim`` (its declared accumulator; unbroadcast: a sum)."""
    return primitive(prim).accumulator or _SUMMED


class ParallelFor(For):
    """A ``For`` whose iterations are independent: written with ``numba.prange``."""
    parallel = True


class _CannotWrite(Exception):
    """The group cannot be written as a loop (a bound it cannot express)."""


def write_group(group):
    """The statements replacing ``group``: its loop nest (behind the run-time check of the
    dims it assumes equal, if any), or None when it cannot be written."""
    try:
        writer = _GroupWriter(group)
        fused = writer.statements()
        check = writer.assumption_check()
    except _CannotWrite:
        return None
    return group.guarded(check, fused)


class _GroupWriter:
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
                         if role is not None and role.result is not None and _accumulator(stmt.prim).step]

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

    # ------------------------------------------------------------------ the loop body
    def scalar_for(self, var):
        """The scalar holding ``var``'s value at a point: its own name when nothing else
        (outside the loop, or another alias in it) uses the name."""
        scalar = self.scalars.get(var)
        shared = scalar is not None and any(a is scalar for v, a in self.env.items() if v is not var)
        if scalar is None or shared:
            guarded = self._guarded()  # the unfused branch assigns the name
            owns_name = (not guarded and var not in self.live_out
                         and self.ctx.assigns.get(var, 0) == self._assigned_here(var)
                         and var not in self.ctx.fn.params and scalar is None)
            name = var.name if owns_name else f"{var.name}_i"
            scalar = Var(name, Type(var.type.dtype), is_temp=var.is_temp) if owns_name else \
                self.ctx.new_var(name, Type(var.type.dtype), is_temp=var.is_temp)
            self.scalars[var] = scalar
        return scalar

    def _guarded(self):
        """Whether the loop runs behind a run-time check (the statements as they were run
        otherwise)."""
        return bool(self.group.assumptions.pairs or self.nonempty or self._length_checks())

    def _length_checks(self):
        """The (array, axis) whose varying lengths must equal the extent they are read over
        (``varying_lengths.py``), without the one each extent is read from."""
        shapes = self.ctx.shapes
        return [(array, axis) for array, axis in self.group.length_checks
                if self.extents.array_axis(shapes.of(array)[axis]) != (array, axis)]

    def _assigned_here(self, var):
        return sum(1 for stmt, role in self.group.members
                   if role is not None and role.kind not in ("accumulate", "reduce") and stmt.target is var)

    def temp(self, prim, args, type_, **params):
        target = self.ctx.new_var("_t", type_, is_temp=True)
        self.body.append(Assign(target, prim, args, params))
        return target

    def index_atoms(self, access):
        atoms = []
        for axis, offset in zip(access.axes, access.offsets):
            index = const(0) if axis is None else self.index[axis]
            atoms.append(self.temp("add", [index, const(offset)], I8) if offset else index)
        return atoms

    def read_from_memory(self, array, access, target=None):
        params, index_args = index_params(array.type, [("int", a) for a in self.index_atoms(access)])
        scalar_type = Type(array.type.dtype)
        if target is None:
            target = self.ctx.new_var("_t", scalar_type, is_temp=True)
        self.body.append(Assign(target, "getitem", [array, *index_args], params))
        return target

    def read(self, atom, access=None):
        if not is_array_var(atom):
            return atom
        if atom in self.env:
            return self.env[atom]
        return self.read_from_memory(atom, access or Access.identity(atom.type.ndim))

    def member(self, stmt, role):
        if role is None:
            self.body.append(Comment(stmt.text))
            return
        getattr(self, f"write_{role.kind}")(stmt, role)

    def bind(self, var, atom):
        self.env[var] = atom

    def operand_values(self, stmt, role):
        """The scalar each argument of ``stmt`` has at the loop's point."""
        return [arg if read is None else self.read(*read) for arg, read in zip(stmt.args, role.operands)]

    def write_map(self, stmt, role):
        args = self.operand_values(stmt, role)
        kept = self._identity_operand(stmt.prim, args, stmt.target.type)
        if kept is not None:
            self.bind(stmt.target, kept)
            return
        scalar = self.scalar_for(stmt.target)
        self.body.append(Assign(scalar, stmt.prim, args, stmt.params, stmt.loc))
        self.bind(stmt.target, scalar)

    def _identity_operand(self, prim, args, type_):
        """``x`` for ``zero + x``, ``x + zero`` and ``1.0 * x`` (same dtype), else None."""
        if len(args) != 2 or not type_.is_float:
            return None
        a, b = args
        if prim == "add":
            other = b if a in self.zeros else a if b in self.zeros else None
        elif prim == "mul":
            other = b if _is_one(a) else a if _is_one(b) else None
        else:
            return None
        if isinstance(other, Var) and other.type.dtype == type_.dtype:
            return other
        if isinstance(other, Const) and isinstance(other.value, float):
            return Const(other.value, type_)
        return None

    def write_slice(self, stmt, role):
        array, access = role.reads[0]
        if array in self.env:
            self.bind(stmt.target, self.env[array])
            return
        self.bind(stmt.target, self.read_from_memory(array, access, self.scalar_for(stmt.target)))

    def write_pass(self, stmt, role):
        source = stmt.args[0]
        value = self.read(source) if is_array_var(source) else source
        if value.type.dtype != stmt.target.type.dtype and isinstance(value, Var):
            value = self.temp("as_dtype", [value], Type(stmt.target.type.dtype), dtype=stmt.target.type.dtype)
        elif isinstance(value, Const) and value.type.dtype != stmt.target.type.dtype and stmt.target.type.is_float:
            value = Const(float(value.value), Type(stmt.target.type.dtype))
        self.bind(stmt.target, value)

    def write_fill(self, stmt, role):
        dtype = stmt.target.type.dtype
        value = primitive(stmt.prim).fill
        atom = Const(float(value) if stmt.target.type.is_float else value, Type(dtype))
        if value == 0:
            self.zeros.add(atom)
        self.bind(stmt.target, atom)

    def write_reduce(self, stmt, role):
        values = self.operand_values(stmt, role)[:2 if stmt.prim == "matmul" else 1]
        value = values[0] if len(values) == 1 else self.temp("mul", values, Type(values[0].type.dtype))
        if role.result is not None:
            self.write_axis_reduce(stmt, role, value)
            return
        target = stmt.target
        accumulator = target if target.type.dtype != FLOAT32 else self.ctx.new_var(f"{target.name}_total", F8)
        self.accumulators.add(accumulator)
        self.before.append(Assign(accumulator, "copy", [Const(_accumulator(stmt.prim).start, F8)]))
        step = _accumulator(stmt.prim).step
        if step is None:
            self.body.append(Assign(accumulator, "add", [accumulator, value], inplace=True))
        else:
            self.body.append(Assign(accumulator, step, [accumulator, value]))
        result = accumulator
        if stmt.prim == "mean":
            count = self._count()
            result = self.ctx.new_var("_t", accumulator.type, is_temp=True) if accumulator is not target else target
            self.after.append(Assign(result, "div", [accumulator, count], loc=stmt.loc))
        if target.type.dtype == FLOAT32:
            self.after.append(Assign(target, "as_dtype", [result], {"dtype": FLOAT32}, stmt.loc))

    def write_axis_reduce(self, stmt, role, value):
        """``s[i] += value`` (or ``s[i] = max(s[i], value)``) into an array ``s`` with the kept
        axes, started before the loop; float32 and means accumulate in float64 and are
        converted or divided after it."""
        target, domain, kept = stmt.target, self.group.domain, role.result.axes
        exact = target.type.dtype == FLOAT64 and stmt.prim != "mean" or not target.type.is_float
        buffer = target if exact else self.ctx.new_var(f"{target.name}_total", Type(FLOAT64, target.type.ndim))
        start = Const(_accumulator(stmt.prim).start, F8) if buffer.type.is_float else const(0)
        counts = [const(1) if axis is None else self._extent_count(domain[axis]) for axis in kept]
        self.before.append(Assign(buffer, "full", [*counts, start]))
        index = [("int", a) for a in self.index_atoms(role.result)]
        if not buffer.type.is_float and value.type.dtype != buffer.type.dtype:
            value = self.temp("as_dtype", [value], Type(buffer.type.dtype), dtype=buffer.type.dtype)
        step = _accumulator(stmt.prim).step
        if step is None:
            self.body.append(AccumItem(buffer, value, index, stmt.loc))
        else:
            params, index_args = index_params(buffer.type, index)
            old = self.temp("getitem", [buffer, *index_args], Type(F8), **params)
            self.body.append(SetItem(buffer, self.temp(step, [old, value], Type(F8)), index, stmt.loc))
        result = buffer
        if stmt.prim == "mean":
            reduced = [domain[axis] for axis in range(len(domain)) if axis not in kept]
            result = target if target.type.dtype == FLOAT64 else self.ctx.new_var("_t", buffer.type, is_temp=True)
            self.after.append(Assign(result, "div", [buffer, self._count(reduced)], loc=stmt.loc))
        if result is not target:
            self.after.append(Assign(target, "as_dtype", [result], {"dtype": target.type.dtype}, stmt.loc))

    def _count(self, dims=None):
        """The number of points of ``dims`` (default: the domain), computed before the loop."""
        counts = [self._extent_count(d) for d in (self.group.domain if dims is None else dims)]
        total = counts[0]
        for count in counts[1:]:
            product = self.ctx.new_var("_t", I8, is_temp=True)
            self.extents.stmts.append(Assign(product, "mul", [total, count]))
            total = product
        return total

    def write_accumulate(self, stmt, role):
        (value_atom, value_access), (array, access) = role.reads
        value = self.read(value_atom, value_access)
        index = [("int", a) for a in self.index_atoms(access)]
        self.body.append(AccumItem(array, value, index, stmt.loc))

    # ------------------------------------------------------------------ around the loop
    def _extent_bound(self, dim):
        bound = self.extents.bound(dim)
        if bound is None:
            raise _CannotWrite
        return bound

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

    def assumption_check(self):
        """Statements computing whether the dims the group assumes equal are equal and the
        axes its maxima and minima reduce are not empty (the last one assigns the condition),
        or [] when it assumes nothing."""
        pairs = self.group.assumptions.pairs
        lengths = self._length_checks()
        if not pairs and not self.nonempty and not lengths:
            return []
        moved_targets = {s.target for s in self.group.moved if isinstance(s, Assign)}
        available = [a for a in self.group.external_reads if a not in moved_targets]
        extents = Extents(self.ctx.shapes, self.ctx.fn.params, available, self.ctx.new_var)
        conditions = []
        for a, b in pairs:
            bounds = extents.bound(a), extents.bound(b)
            if None in bounds:
                raise _CannotWrite
            condition = self.ctx.new_var("_same", Type("b1"), is_temp=True)
            extents.stmts.append(Assign(condition, "eq", list(bounds)))
            conditions.append(condition)
        for array, axis in lengths:  # read where the loop runs: the extent's array's length
            source = self.extents.array_axis(self.ctx.shapes.of(array)[axis])
            if source is None:
                raise _CannotWrite
            condition = self.ctx.new_var("_same", Type("b1"), is_temp=True)
            length = self.ctx.new_var("_n", I8, is_temp=True)
            extent = self.ctx.new_var("_n", I8, is_temp=True)
            extents.stmts += [Assign(length, "dim", [array], {"axis": axis}),
                              Assign(extent, "dim", [source[0]], {"axis": source[1]}),
                              Assign(condition, "eq", [length, extent])]
            conditions.append(condition)
        for dims in self.nonempty:
            for dim in dims:
                bound = extents.bound(dim)
                if bound is None:
                    raise _CannotWrite
                condition = self.ctx.new_var("_nonempty", Type("b1"), is_temp=True)
                extents.stmts.append(Assign(condition, "gt", [bound, const(0)]))
                conditions.append(condition)
        check = conditions[0]
        for condition in conditions[1:]:
            both = self.ctx.new_var("_same", Type("b1"), is_temp=True)
            extents.stmts.append(Assign(both, "and", [check, condition]))
            check = both
        return extents.stmts

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
            elif role.kind == "reduce" and _accumulator(stmt.prim).step:
                return False
            if role.kind == "accumulate":
                array, access = role.reads[1]
                accesses.setdefault(array, set()).add(access)
        return all(len(a) == 1 and next(iter(a)).axes[:1] == (0,) for a in accesses.values())


def _is_one(atom):
    return isinstance(atom, Const) and not isinstance(atom.value, bool) and atom.value == 1


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
