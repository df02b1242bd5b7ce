"""Reductions inside a fused loop (``loops.py``): a sum, mean, max or min of everything adds into a
scalar started before the loop, one along axes into an array with the kept axes; float32 and
means accumulate in float64 and are cast back or divided by their count after the loop. A mixin
of the group writer."""
from ..ir.indexing import index_params
from ..ir.nodes import AccumItem, Assign, Const, SetItem, const
from ..ir.primitives import Accumulator, primitive
from ..ir.types import F8, FLOAT32, FLOAT64, I8, Type

_SUMMED = Accumulator(0.0)  # an unbroadcast adds its elements up


def accumulator_of(prim):
    """How a fused loop reduces with ``prim`` (its declared accumulator; unbroadcast: a sum)."""
    return primitive(prim).accumulator or _SUMMED


class LoopReductions:
    """Writing the group's reductions: the accumulator, its start and what follows the loop."""

    def write_reduce(self, stmt, role):
        values = self.operand_values(stmt, role)[:2 if stmt.prim == "matmul" else 1]
        value = values[0] if len(values) == 1 else self.temp("mul", values, Type(values[0].type.dtype))
        if role.result is not None:
            self.write_axis_reduce(stmt, role, value)
            return
        target = stmt.target
        accumulator = target if target.type.dtype != FLOAT32 else self.ctx.new_var(f"{target.name}_total", F8)
        self.accumulators.add(accumulator)
        self.before.append(Assign(accumulator, "copy", [Const(accumulator_of(stmt.prim).start, F8)]))
        step = accumulator_of(stmt.prim).step
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
        start = Const(accumulator_of(stmt.prim).start, F8) if buffer.type.is_float else const(0)
        counts = [const(1) if axis is None else self._extent_count(domain[axis]) for axis in kept]
        self.before.append(Assign(buffer, "full", [*counts, start]))
        index = [("int", a) for a in self.index_atoms(role.result)]
        if not buffer.type.is_float and value.type.dtype != buffer.type.dtype:
            value = self.temp("as_dtype", [value], Type(buffer.type.dtype), dtype=buffer.type.dtype)
        step = accumulator_of(stmt.prim).step
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
