"""Whole-array writes of an elementwise expression become one loop that writes each element.

An optimizer's update ``param -= lr * d_p`` reaches the IR as ``param[:, :] = param - lr * d_p``:
numpy (and numba) compute the right side into a temporary array and then copy it. When the
right side is a chain of elementwise operations computed for this write only, the lowering
writes instead

    if d_p.shape[0] == param.shape[0] and d_p.shape[1] == param.shape[1] \\
            and not rt.may_share_memory(param, d_p):
        for i in range(param.shape[0]):
            for j in range(param.shape[1]):
                param[i, j] = param[i, j] - lr * d_p[i, j]
    else:
        <the statements as they were>

numpy evaluates the whole right side before writing, so the loop is right only if each point
reads nothing the loop has already written: the written array itself only at the same element,
and no other operand overlapping it. Operands that may be the caller's arrays (parameters,
views of them) are checked at run time; a view of the written array itself is never looped.
The operands' shapes need not be known (an update's ``d_p`` is the gradient or a momentum
buffer): the check compares them with the written array's, and anything else (a broadcast, a
mismatch numpy would report) runs the statements as they were.

A write of an array into a region picked by integers, ``out[k] = v`` or ``bx[k, :] += bv`` (the
backward of a view ``x[k]`` in a loop), becomes a loop over the region the same way,

    if v.shape[0] == out.shape[1] and not rt.may_share_memory(out, v):
        for i in range(out.shape[1]):
            out[k, i] = v[i]

where numba would make a view of the region and run its array machinery on it (for a 4x4
region, several times the cost of the sixteen additions).
"""
from ..ir.builder import Namer
from ..ir.indexing import index_params
from ..ir.memory import memory_roots, sharing
from ..ir.nodes import Assign, For, If, SetItem, Var, const, walk
from ..ir.primitives import Kind, has_kind
from ..ir.types import B1, F8, I8, Type
from ..passes.uses import Uses
from ..ir.indexing import FULL_SLICE

_INDEX_NAMES = "ijklmn"


def write_slices_as_loops(fn, shapes):
    """Rewrite ``fn`` in place; returns the number of writes turned into loops.
    ``shapes``: its symbolic shapes (``ir/shapes.py``), which spare the checks they prove."""
    lowering = _SliceWrites(fn, shapes)
    lowering.block(fn.body)
    return lowering.count


class _SliceWrites:
    def __init__(self, fn, shapes):
        self.fn, self.shapes = fn, shapes
        self.roots = memory_roots(fn.body, fn.params)
        self.params = set(fn.params)
        self.uses = Uses(fn)
        self.namer = Namer()
        self.loop_indices = []  # the index of each depth, shared by the loops written here
        for var in list(fn.params) + [v for stmt in walk(fn.body) for v in stmt.writes()]:
            self.namer.reserve(var.name)
        self.count = 0

    def block(self, block):
        for stmt in block:
            for inner in stmt.blocks():
                self.block(inner)
        k = 0
        while k < len(block):
            chain = self.chain(block, k)
            if chain is None:
                if self.is_region_write(block[k]):
                    block[k:k + 1] = self.region_loop(block[k])
                    self.count += 1
                k += 1
                continue
            replacement = self.loop(block, k, chain)
            for position in sorted(chain, reverse=True):
                del block[position]
            k -= len(chain)
            block[k:k + 1] = replacement
            self.count += 1
            k += len(replacement)

    # ------------------------------------------------------------------ what may be looped
    def chain(self, block, k):
        """The positions of the statements computing the value ``block[k]`` writes, when it is
        a whole-array write of an elementwise chain computed for it alone; else None."""
        write = block[k]
        if type(write) is not SetItem or not _whole_array(write) or not _is_float64_array(write.array):
            return None
        value = write.value
        if not (isinstance(value, Var) and value.type.ndim == write.array.type.ndim):
            return None
        positions = {id(stmt): j for j, stmt in enumerate(block[:k])}
        chain, pending = set(), [value]
        while pending:
            var = pending.pop()
            definition = self.temporary_definition(var, block[:k])
            if definition is None:
                continue
            chain.add(positions[id(definition)])
            pending.extend(a for a in definition.args if isinstance(a, Var) and a.type.ndim)
        if not chain or self.temporary_definition(value, block[:k]) is None:
            return None
        if self.leaves(block, chain, write) is None:
            return None
        temporaries = {block[j].target for j in chain}
        operands = {a for j in chain for a in block[j].args if isinstance(a, Var)} - temporaries
        if not self.unchanged_until_write(block, chain, k, operands | {write.array}):
            return None
        return chain

    def temporary_definition(self, var, before):
        """The elementwise statement among ``before`` that computes ``var``, an array of the
        written array's rank read once, for the write; None if there is none."""
        if self.uses.defs.get(var, 0) != 1 or self.uses.reads.get(var, 0) != 1 or var in self.params \
                or not _is_float64_array(var):
            return None
        for stmt in before:
            if isinstance(stmt, Assign) and stmt.target is var:
                elementwise = has_kind(stmt.prim, Kind.ELEMENTWISE) and not has_kind(stmt.prim, Kind.VIEW)
                return stmt if elementwise and not stmt.inplace else None
        return None

    def leaves(self, block, chain, write):
        """The arrays the chain reads from memory, each of the written array's rank and not a
        view of the written array (which the loop would read where it has written); None if
        one is not."""
        temporaries = {block[j].target for j in chain}
        leaves = set()
        for j in chain:
            for atom in block[j].args:
                if isinstance(atom, Var) and atom.type.ndim and atom not in temporaries:
                    leaves.add(atom)
        array = write.array
        for leaf in leaves:
            if leaf.type.ndim != array.type.ndim:
                return None
            if leaf is not array and self._views(leaf, array):
                return None
        return leaves

    def unchanged_until_write(self, block, chain, k, operands):
        """Whether no statement between the chain's first and the write changes ``operands``
        (scalars, arrays or memory they share), so the chain may run at the write."""
        memory = set()
        for operand in operands:
            memory |= self._roots(operand)
        for stmt in block[min(chain):k]:
            if id(stmt) in {id(block[j]) for j in chain}:
                continue
            for inner in walk([stmt]):
                if any(self._roots(var) & memory for var in inner.writes()):
                    return False
        return True

    def _views(self, leaf, array):
        """Whether ``leaf`` is bound only to views of ``array``'s memory (then any check would
        fail); a variable that may also hold other arrays is checked at run time instead."""
        roots = self.roots.get(leaf)
        return roots is not None and roots <= self._roots(array)

    def _roots(self, var):
        return sharing({var}, self.roots)

    # ------------------------------------------------------------------ the loop
    def loop(self, block, k, chain):
        """The statements replacing the chain and the write ``block[k]``."""
        write = block[k]
        array = write.array
        original = [block[j] for j in sorted(chain)] + [write]
        before, bounds = [], []
        for axis in range(array.type.ndim):
            bound = Var(self.namer.fresh("n"), I8, is_temp=True)
            before.append(Assign(bound, "dim", [array], {"axis": axis}))
            bounds.append(bound)
        indices = [self.loop_index(depth) for depth in range(array.type.ndim)]
        body, scalars = [], {}
        for stmt in original[:-1]:
            args = [self.point_value(a, indices, scalars, body) for a in stmt.args]
            scalar = Var(self.namer.fresh(stmt.target.name.lstrip("_") or "t"), Type(stmt.target.type.dtype),
                         is_temp=True)
            body.append(Assign(scalar, stmt.prim, args, dict(stmt.params), stmt.loc))
            scalars[stmt.target] = scalar
        body.append(SetItem(array, scalars[write.value], [("int", i) for i in indices], write.loc))
        loop = body
        for depth in reversed(range(len(indices))):
            loop = [For(indices[depth], const(0), bounds[depth], const(1), loop)]
        checks = self.checks(array, original[:-1], bounds, before)
        if checks is None:
            return before + loop
        return before + [If(checks, loop, original, unfused_fallback=True)]

    def is_region_write(self, write):
        """``array[k, ...] = v`` or ``+= v``: integer items, then whole axes, and ``v`` an array
        of the region's shape, not a view of the written array (a loop would read where it
        writes)."""
        if not isinstance(write, SetItem) or not _is_float64_array(write.array):
            return False
        ints = [item for item in write.items if item[0] == "int"]
        if not ints or write.items[:len(ints)] != ints or any(item != FULL_SLICE for item in write.items[len(ints):]):
            return False
        value = write.value
        return (_is_float64_array(value) and value.type.ndim == write.array.type.ndim - len(ints)
                and not self._views(value, write.array))

    def region_loop(self, write):
        """The statements replacing the region write ``write``: a loop nest behind the check that
        the value has the region's shape and does not overlap the array."""
        array, value = write.array, write.value
        ints = [item for item in write.items if item[0] == "int"]
        before, bounds, conditions = [], [], []
        for axis, (_, position) in enumerate(ints):  # out of range: numpy's IndexError, also for an empty region
            length = self.emit(before, "n", I8, "dim", [array], axis=axis)
            if isinstance(position, Var) or position.value < 0:
                lowest = self.emit(before, "lowest", I8, "neg", [length])
                conditions.append(self.emit(before, "above", B1, "ge", [position, lowest]))
            if isinstance(position, Var) or position.value >= 0:
                conditions.append(self.emit(before, "below", B1, "lt", [position, length]))
        for axis in range(value.type.ndim):
            bound = self.emit(before, "n", I8, "dim", [array], axis=len(ints) + axis)
            length = self.emit(before, "n", I8, "dim", [value], axis=axis)
            conditions.append(self.emit(before, "same", B1, "eq", [length, bound]))
            bounds.append(bound)
        if self.may_alias_at_run_time(value, array):
            overlap = self.emit(before, "overlap", B1, "may_share_memory", [array, value])
            conditions.append(self.emit(before, "apart", B1, "not", [overlap]))
        indices = [self.loop_index(depth) for depth in range(value.type.ndim)]
        element = Var(self.namer.fresh(f"{value.name}_i"), Type(value.type.dtype), is_temp=True)
        params, index_args = index_params(value.type, [("int", i) for i in indices])
        loop = [Assign(element, "getitem", [value, *index_args], params, write.loc),
                type(write)(array, element, ints + [("int", i) for i in indices], write.loc)]
        for depth in reversed(range(len(indices))):
            loop = [For(indices[depth], const(0), bounds[depth], const(1), loop, write.loc)]
        condition = conditions[0]
        for other in conditions[1:]:
            condition = self.emit(before, "ok", B1, "and", [condition, other])
        return before + [If(condition, loop, [write], unfused_fallback=True)]

    def loop_index(self, depth):
        """A new name (a program's own ``i`` may be read after the write, in a loop of its own)."""
        while len(self.loop_indices) <= depth:
            name = _INDEX_NAMES[len(self.loop_indices) % len(_INDEX_NAMES)]
            self.loop_indices.append(Var(self.namer.fresh(name), I8))
        return self.loop_indices[depth]

    def point_value(self, atom, indices, scalars, body):
        """The scalar standing for ``atom`` at the loop's point."""
        if not (isinstance(atom, Var) and atom.type.ndim):
            return atom
        if atom in scalars:
            return scalars[atom]
        params, index_args = index_params(atom.type, [("int", i) for i in indices])
        scalar = Var(self.namer.fresh(f"{atom.name}_i"), Type(atom.type.dtype), is_temp=True)
        body.append(Assign(scalar, "getitem", [atom, *index_args], params))
        scalars[atom] = scalar
        return scalar

    def checks(self, array, chain, bounds, before):
        """The condition (a Var, its statements appended to ``before``) under which the loop
        is right: every operand has the written array's shape and may not overlap it; None
        when nothing needs checking."""
        temporaries = {stmt.target for stmt in chain}
        leaves = sorted({a for stmt in chain for a in stmt.args if isinstance(a, Var) and a.type.ndim
                         and a not in temporaries and a is not array}, key=lambda v: (v.name, v.uid))
        conditions = []
        for leaf in leaves:
            if not self.shapes.same(leaf, array):
                for axis, bound in enumerate(bounds):
                    length = self.emit(before, "n", I8, "dim", [leaf], axis=axis)
                    conditions.append(self.emit(before, "same", B1, "eq", [length, bound]))
            if self.may_alias_at_run_time(leaf, array):
                overlap = self.emit(before, "overlap", B1, "may_share_memory", [array, leaf])
                conditions.append(self.emit(before, "apart", B1, "not", [overlap]))
        if not conditions:
            return None
        condition = conditions[0]
        for other in conditions[1:]:
            condition = self.emit(before, "ok", B1, "and", [condition, other])
        return condition

    def may_alias_at_run_time(self, a, b):
        """Whether ``a`` and ``b`` may share memory: a variable of one may be bound to the
        other's memory, or both may reach memory the function did not allocate (the caller may
        pass one array twice)."""
        def outside(var):
            roots = self.roots.get(var)
            return roots is None or bool(roots & self.params)
        return bool(self._roots(a) & self._roots(b)) or (outside(a) and outside(b))

    def emit(self, before, name, type_, prim, args, **params):
        target = Var(self.namer.fresh(f"_{name}"), type_, is_temp=True)
        before.append(Assign(target, prim, args, params))
        return target


def _whole_array(write):
    items = write.items
    return len(items) <= write.array.type.ndim and all(item == FULL_SLICE for item in items)


def _is_float64_array(var):
    return isinstance(var, Var) and var.type.ndim > 0 and var.type.dtype == F8.dtype
