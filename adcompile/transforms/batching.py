"""Batching: an IR function -> the IR function applied to a batch of values at once (vmap).

Given the parameters that carry an extra batch axis, every variable that depends on them
carries it too, as its last axis, and each statement on such a variable is rewritten by
its primitive's batch rule (``ir/primitives/batching_rules.py``). Used on a jvp with the
identity matrix as the batch of tangents, it gives all columns of a Jacobian in one pass,
whose matrix-vector products have become matrix-matrix products:

    dt = rt.matmul(A, dx)        ->   dt = rt.matmul(A, dx)        # dx: (n, batch) now
    dy = dt * _t_1               ->   dy = dt * _t_1[:, None]

Which variables are batched is decided for the whole function (a variable is batched if
any of its assignments is), so loops and in-place writes keep their structure: a batched
variable first given an unbatched value (``dbx = np.zeros_like(x)``) gets it copied along
the batch axis. Control flow that depends on a batched value (a branch, a loop bound, an
index) differs between members: then ``Unbatchable`` is raised and the caller computes
the members one by one.
"""
from ..ir.builder import Builder
from ..ir.nodes import (AccumItem, Assign, Comment, CustomCall, For, Function, If, Pop, Push, SetItem, Var,
                        While, walk)
from ..ir.primitives import PRIMITIVES, Kind, has_kind
from ..ir.types import NONE
from ..ir.primitives.batching_rules import batched_copy, unbatched_view, with_unit_batch_axis
from .batched_scaling import factor_batched_scalings
from .zero_skips import without_zero_skips


class Unbatchable(Exception):
    """The function cannot be batched (a primitive without a batch rule, or control flow
    that depends on a batched value); the message says why, ``loc`` where (or None)."""

    def __init__(self, message, loc=None):
        super().__init__(message)
        self.loc = loc


def batched_variables(fn, params):
    """The variables of ``fn`` that depend on ``params`` (a set of parameters)."""
    batched = set(params)
    changed = True
    while changed:
        changed = False
        for stmt in walk(fn.body):
            for target in _batched_targets(stmt, batched):
                if target not in batched:
                    batched.add(target)
                    changed = True
    return batched


def _batched_targets(stmt, batched):
    if isinstance(stmt, Assign):
        spec = PRIMITIVES[stmt.prim]
        if any(isinstance(a, Var) and a in batched for a in spec.value_args(stmt.args)):
            return [stmt.target]
        if stmt.target in batched and spec.has(Kind.VIEW) and stmt.args and isinstance(stmt.args[0], Var):
            return [stmt.args[0]]  # writes through a view write the array it views
    elif isinstance(stmt, SetItem):  # AccumItem too
        if stmt.value in batched:
            return [stmt.array]
    elif isinstance(stmt, Push):
        if stmt.value in batched:
            return [stmt.tape]
    elif isinstance(stmt, Pop):
        if stmt.tape in batched:
            return [stmt.target]
    return []


class BatchingTransform:
    def __init__(self, fn, batched_params, namer):
        self.fn, self.namer = fn, namer
        for stmt in walk(fn.body):
            for var in stmt.writes():
                namer.reserve(var.name)
        for var in fn.params:
            namer.reserve(var.name)
        params = [fn.params[k] for k in batched_params]
        self.batched = batched_variables(fn, params)
        for param in fn.params:
            if param in self.batched and param not in params:
                raise Unbatchable(f"argument '{param.name}' is written with batched values")
        self.renamed = {v: Var(v.name, v.type.with_ndim(v.type.ndim + 1), v.is_temp) for v in self.batched
                        if v.type.dtype != NONE}  # a tape holds batched values as they come
        self.size = None

    def atom(self, atom):
        return self.renamed.get(atom, atom) if isinstance(atom, Var) else atom

    def is_batched(self, atom):
        return isinstance(atom, Var) and atom in self.batched

    def run(self):
        params = [self.atom(p) for p in self.fn.params]
        body = []
        b = Builder(self.namer, body)
        first = next(p for p in params if p.type.ndim and p in self.renamed.values())
        self.size = b.call("dim", first, axis=first.type.ndim - 1)
        self.size.name, self.size.is_temp = self.namer.fresh("batch_size"), False
        body += self.block(self.fn.body)
        results = [self.atom(r) if self.is_batched(r) else batched_copy(b, r, self.size) for r in self.fn.results]
        batched = Function(f"{self.fn.name}_batched", params, body, results, self.fn.returns_tuple,
                           self.fn.source_file)
        return factor_batched_scalings(batched, set(self.renamed.values()), self.namer)

    def block(self, block):
        out = []
        for stmt in block:
            try:
                self.rewrite(stmt, out)
            except Unbatchable as error:
                error.loc = error.loc or stmt.loc  # the innermost statement that has a location
                raise
        return out

    def rewrite(self, stmt, out):
        b = Builder(self.namer, out, stmt.loc)
        if isinstance(stmt, Assign):
            self.assign(stmt, b)
        elif isinstance(stmt, SetItem):  # AccumItem too
            self.set_item(stmt, b)
        elif isinstance(stmt, Push):
            value = self.atom(stmt.value)
            if self.is_batched(stmt.tape) and not self.is_batched(stmt.value):
                value = batched_copy(b, value, self.size)
            b.append(Push(self.atom(stmt.tape), value))
        elif isinstance(stmt, Pop):
            b.append(Pop(self.atom(stmt.target), self.atom(stmt.tape)))
        elif isinstance(stmt, If):
            self.require_unbatched([stmt.cond], "a branch condition")
            out.append(If(stmt.cond, self.block(stmt.body), self.block(stmt.orelse), stmt.loc))
        elif isinstance(stmt, For):
            self.require_unbatched([stmt.start, stmt.stop, stmt.step], "a loop range")
            out.append(For(stmt.index, stmt.start, stmt.stop, stmt.step, self.block(stmt.body), stmt.loc))
        elif isinstance(stmt, While):
            self.require_unbatched([stmt.cond], "a loop condition")
            out.append(While(self.block(stmt.cond_body), stmt.cond, self.block(stmt.body), stmt.loc))
        elif isinstance(stmt, CustomCall):  # its own derivative rule is not needed here
            out.extend(self.block(stmt.forward))
        elif isinstance(stmt, Comment):
            out.append(stmt)
        else:
            raise Unbatchable(f"unexpected statement {stmt!r}")

    def require_unbatched(self, atoms, what):
        if any(self.is_batched(a) for a in atoms):
            raise Unbatchable(f"{what} depends on a batched value")

    def set_item(self, stmt, b):
        self.require_unbatched(stmt.index_args, "an index")
        array, value = self.atom(stmt.array), self.atom(stmt.value)
        if self.is_batched(stmt.array) and not self.is_batched(stmt.value):
            value = with_unit_batch_axis(b, value)
        if isinstance(stmt, AccumItem) and self.is_batched(stmt.array):
            # the scatter-add helpers of numba take one index array into up to 3 dimensions
            arrays = [item for item in stmt.items if item[0] == "array"]
            if arrays and (len(stmt.items) > 1 or array.type.ndim > 3):
                raise Unbatchable("a scatter-add by an index array together with other indices into a batched array")
        b.append(type(stmt)(array, value, stmt.items))

    def assign(self, stmt, b):
        spec = PRIMITIVES[stmt.prim]
        value_positions = [k for k in range(len(stmt.args)) if k not in spec.shape_only]
        batched = [self.is_batched(a) for a in stmt.args]
        if not self.is_batched(stmt.target):
            args = [unbatched_view(b, self.atom(a)) if is_batched else a for a, is_batched in zip(stmt.args, batched)]
            b.append(Assign(stmt.target, stmt.prim, args, stmt.params, inplace=stmt.inplace))
            return
        target = self.atom(stmt.target)
        if stmt.prim == "new_tape":  # its argument gives the type of the values it will hold
            like = stmt.args[0]
            if not batched[0]:
                like = b.emit("placeholder", [], type=like.type.with_ndim(like.type.ndim + 1))
            b.append(Assign(target, stmt.prim, [self.atom(like)], stmt.params))
            return
        if not any(batched[k] for k in value_positions):
            self.assign_unbatched_value(stmt, target, b)
            return
        if spec.batch is None:
            raise Unbatchable(f"no batch rule for '{stmt.prim}'")
        before = len(b.block)
        result = spec.batch(b, [self.atom(a) for a in stmt.args], batched, stmt.params, self.size)
        if result is None:
            raise Unbatchable(f"the batch rule of '{stmt.prim}' does not apply here")
        if result.type.ndim != target.type.ndim:
            raise Unbatchable(f"the batch rule of '{stmt.prim}' gave {result.type}, not {target.type}")
        last = b.block[-1] if len(b.block) > before else None
        if isinstance(last, Assign) and last.target is result and result.is_temp:
            last.target = target
            # ``s += t`` on a scalar rebinds s; on its batched array it would write to a shared buffer
            last.inplace = (stmt.inplace and stmt.target.type.ndim > 0 and last.prim == stmt.prim
                            and last.args[0] is target)
        else:  # the rule returned an existing value: a copy, as the statement made a new one
            b.emit("alias" if stmt.prim == "alias" else "copy", [result], target=target)

    def assign_unbatched_value(self, stmt, target, b):
        """``target`` (batched) given a value that is the same for every member."""
        if stmt.prim == "placeholder" and stmt.target.type.ndim:
            b.emit("placeholder", [], target=target, type=target.type)
        elif stmt.prim == "placeholder":  # a scalar may be saved before it is assigned: a batch of them
            b.emit("zeros", [self.size], target=target, ndim=1, dtype=target.type.dtype)
        elif stmt.prim in ("zeros_like", "ones_like") and self.is_batched(stmt.args[0]):
            b.emit(stmt.prim, [self.atom(stmt.args[0])], target=target)
        elif stmt.prim in ("zeros_like", "ones_like") and stmt.args[0].type.ndim:
            x = stmt.args[0]
            dims = [b.call("dim", x, axis=k) for k in range(x.type.ndim)]
            b.emit(stmt.prim[:-len("_like")], dims + [self.size], target=target, ndim=target.type.ndim,
                   dtype=target.type.dtype)
        elif has_kind(stmt.prim, Kind.AXIS_LENGTHS):
            b.emit(stmt.prim, stmt.args + [self.size], target=target, **{**stmt.params, "ndim": target.type.ndim})
        else:
            args = [unbatched_view(b, self.atom(a)) if self.is_batched(a) else a for a in stmt.args]
            value = b.emit(stmt.prim, args, **stmt.params)
            copied = batched_copy(b, value, self.size)
            b.emit("alias", [copied], target=target)


def batch(fn, batched_params, namer):
    """``fn`` applied to a batch: the parameters at ``batched_params`` get a last axis (the
    same length for all), and so does every result. Raises ``Unbatchable``."""
    return BatchingTransform(without_zero_skips(fn), batched_params, namer).run()


__all__ = ["Unbatchable", "batch", "batched_variables"]
