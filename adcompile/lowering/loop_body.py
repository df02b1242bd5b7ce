"""The body of a fused loop (``loops.py``): every array value of the group becomes a scalar at the
loop's point, an operand from memory an indexed read (``x[i + 1]``), a fill a constant, and an
accumulation into a slice ``bx[i] += value``. A mixin of the group writer."""
from ..ir.indexing import index_params
from ..ir.nodes import AccumItem, Assign, Comment, Const, Var, const
from ..ir.types import I8, Type
from .domains import Access, is_array_var
from ..ir.primitives import primitive


class LoopBody:
    """Writing each member of the group into the loop body, as scalars."""

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

    def write_accumulate(self, stmt, role):
        (value_atom, value_access), (array, access) = role.reads
        value = self.read(value_atom, value_access)
        index = [("int", a) for a in self.index_atoms(access)]
        self.body.append(AccumItem(array, value, index, stmt.loc))


def _is_one(atom):
    return isinstance(atom, Const) and not isinstance(atom.value, bool) and atom.value == 1
