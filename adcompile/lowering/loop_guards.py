"""The run-time check a fused loop runs behind (``loops.py``): the dims the group assumes equal, the
varying lengths that must equal the extent they are read over, and the axes its maxima and
minima reduce not being empty. A mixin of the group writer."""
from ..ir.nodes import Assign, const
from ..ir.types import I8, Type
from .domains import Extents


class CannotWrite(Exception):
    """The group cannot be written as a loop (a bound it cannot express)."""


class LoopGuards:
    """Whether the loop needs a check, and the statements computing it."""

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
                raise CannotWrite
            condition = self.ctx.new_var("_same", Type("b1"), is_temp=True)
            extents.stmts.append(Assign(condition, "eq", list(bounds)))
            conditions.append(condition)
        for array, axis in lengths:  # read where the loop runs: the extent's array's length
            source = self.extents.array_axis(self.ctx.shapes.of(array)[axis])
            if source is None:
                raise CannotWrite
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
                    raise CannotWrite
                condition = self.ctx.new_var("_nonempty", Type("b1"), is_temp=True)
                extents.stmts.append(Assign(condition, "gt", [bound, const(0)]))
                conditions.append(condition)
        check = conditions[0]
        for condition in conditions[1:]:
            both = self.ctx.new_var("_same", Type("b1"), is_temp=True)
            extents.stmts.append(Assign(both, "and", [check, condition]))
            check = both
        return extents.stmts
