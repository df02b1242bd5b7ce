"""The taping plan of reverse mode: what the forward sweep saves, and how the backward puts it back.

An assignment at loop depth 0 saves into a variable (``y_saved``), inside a loop onto a stack
(``rt.push(tape_y, y)``) that the backward sweep pops, or, for scalars in a loop whose trip
count is known on entry, into a preallocated array with a stack pointer; scalars in nested loops
into an array that doubles when full, with a stack pointer (``grow_if_full``). A value is saved
only if the backward sweep reads it after undoing the assignment (``Liveness.read_before``),
also for its shape only when that may differ between assignments (``reshaped``); a first
assignment has nothing to save (a placeholder is no value). A variable saved where it may
have no value yet, or read by the backward where numba may see no assignment of it
(``place_unassigned_reads``), is given a placeholder of its type at the start. A loop's trip count, start and step are recorded on
entry, a while loop's trips by counting. Cheap scalar temporaries of a loop body are
recomputed at the start of each backward iteration instead of being saved (``recompute.py``).

A mixin of ``ReverseTransform`` (``transform.py``): it owns ``saves``, ``save_count``,
``tapes``, ``counted_loop``, ``counted_tapes``, ``growing_tapes``, ``recomputable``, ``recomputed_ids``,
``placeholders``, ``loop_records`` and ``restored``.
"""
from ...ir.builder import Builder, const
from ...ir.indexing import index_params
from ...ir.nodes import AccumItem, Assign, Const, CustomCall, For, If, Pop, Push, SetItem, TapeArray, Var, While, walk
from ...ir.types import NONE_T, Type
from ...ir.primitives import getitem
from .checkpoint_segments import is_checkpointed
from .checkpointing import keep_entry_state
from .liveness import value_reads
from .recompute import bounds_kept_by_body, copy_statement, recomputable_statements, recomputed_targets



GROWING_TAPE_CAPACITY = 16  # a growing tape's first length; it doubles when full


def grow_if_full(namer, out, tape, top, loc):
    """Emit into ``out``: ``if top == len(tape): tape = a copy of tape twice as long``. Built of
    ordinary primitives, so that forward mode (a Hessian's tangents of the tapes) and batching
    carry it through like any other array code."""
    b = Builder(namer, out, loc)
    length = b.call("dim", tape, axis=0)
    full = b.call("eq", top, length)
    grown = []
    g = Builder(namer, grown, loc)
    bigger = g.emit("empty", [g.call("mul", length, const(2))], ndim=1, dtype=tape.type.dtype)
    grown.append(SetItem(bigger, tape, [("slice", None, length, None)], loc=loc))
    grown.append(Assign(tape, "alias", [bigger], loc=loc))
    out.append(If(full, grown, [], loc))


def _is_placeholder(stmt):
    return isinstance(stmt, Assign) and stmt.prim == "placeholder"


def _assigns(block, var):
    """Whether running ``block`` surely assigns ``var`` (a placeholder is no value)."""
    for stmt in block:
        if isinstance(stmt, If):
            if all(_assigns(arm, var) for arm in stmt.blocks()):
                return True
        elif not isinstance(stmt, (For, While)) and not _is_placeholder(stmt) and var in stmt.writes():
            return True
    return False


class TapingPlan:
    """The forward sweep with its saves, and the restoring of saved values."""

    def overwrites(self, var):
        return self.scopes.is_multiply_defined(var, self.fn.params)

    def defined_before(self, var, stmt):
        """Whether ``var`` surely has a value when ``stmt`` runs (a parameter, or assigned by
        an unconditional top-level statement before it, not a loop that may run zero times);
        if not, it gets a placeholder."""
        if var in self.fn.params:
            return True
        info = self.scopes.info.get(var)
        where = self.order.get(id(stmt))
        return info is not None and where is not None and any(
            path == () and not isinstance(d, For) and not _is_placeholder(d) and self.order.get(id(d), where) < where
            for d, _, path in info.defs)

    def typed_by_kept_assignment(self, var):
        """Whether numba sees an assignment of ``var`` that it cannot prune: a parameter, or
        an assignment outside the body of every while loop. numba drops the body of a loop
        whose entry test it evaluates at compile time (``while k < 3 and -0.2 > 0.5``); the
        backward of a branch is re-taken on the same test, and pruned with it, but the
        backward of a while loop runs over the recorded trip count, which numba cannot see."""
        if var in self.fn.params:
            return True
        info = self.scopes.info.get(var)
        return info is not None and any(
            not any(k == 1 and sid in self.while_loops for sid, k in path) for _, _, path in info.defs)

    def place_unassigned_reads(self):
        """A placeholder for each variable the backward sweep reads (also for its shape only)
        that numba might find no assignment of (``typed_by_kept_assignment``): it types every
        variable from its assignments, though the backward reads this one only after the
        forward assigned it."""
        read = {a for stmt in walk(self.backward_statements) for a in stmt.reads()
                if isinstance(a, Var) and a in self.primal_vars}
        unassigned = {var for var, path in self.adjoint_inits if not self.surely_assigned(var, path)}
        for var in sorted(read | unassigned, key=lambda v: v.uid):
            if (var.type.dtype != "none" and var not in self.placeholders
                    and (var in unassigned or not self.typed_by_kept_assignment(var))):
                self.placeholders.append(var)

    def surely_assigned(self, var, path):
        """Whether the forward sweep of the block at ``path`` surely leaves ``var`` a value: it
        is a parameter, or a statement of the block assigns it (or a branch of the block does in
        both arms). A loop may run zero times, so an assignment in its body does not count."""
        if var in self.fn.params:
            return True
        block = self.fn.body
        for sid, k in path:
            block = next(stmt for stmt in block if id(stmt) == sid).blocks()[k]
        return _assigns(block, var)

    def first_definition(self, stmt, var, depth):
        """Whether ``stmt``, outside loops, is the first assignment of ``var``: there is no
        earlier value to save then. (A placeholder, which a derived function called inside
        this one assigns to give a variable its type, is no value.)"""
        info = self.scopes.info.get(var)
        defs = [d for d, _, _ in info.defs if not _is_placeholder(d)] if info is not None else []
        return depth == 0 and var not in self.fn.params and bool(defs) and defs[0] is stmt

    def first_definition_in(self, ids, var, depth):
        """Whether the first assignment of ``var``, outside loops, is one of the statements
        ``ids`` (those of a custom call's region)."""
        info = self.scopes.info.get(var)
        defs = [d for d, _, _ in info.defs if not _is_placeholder(d)] if info is not None else []
        return depth == 0 and var not in self.fn.params and bool(defs) and id(defs[0]) in ids

    def save(self, out, stmt, value, depth, base, key=None, direct=False):
        """Emit into ``out`` the saving of ``value`` before ``stmt`` overwrites it (``direct``:
        ``value`` is a fresh variable that can be the slot itself)."""
        key = id(stmt) if key is None else key
        self.save_count += 1
        if depth == 0 and direct:
            self.saves[key] = ("slot", value)
        elif depth == 0:
            slot = Var(self.namer.fresh(base + "_saved"), value.type)
            out.append(Assign(slot, "alias", [value], loc=stmt.loc))
            self.saves[key] = ("slot", slot)
        elif value.type.ndim == 0 and self.counted_pushes() is not None:
            # At most one push per iteration of each enclosing loop, whose trip counts are all
            # known on entry to the outermost: a preallocated array and a stack pointer.
            tape = TapeArray(self.namer.fresh("tape_" + base), Type(value.type.dtype, 1))
            top = Var(self.namer.fresh("top_" + base), Type("i8"))
            self.counted_tapes.append((tape, top, self.counted_pushes()))
            out.append(SetItem(tape, value, [("int", top)], loc=stmt.loc))
            out.append(Assign(top, "add", [top, const(1)], loc=stmt.loc))
            self.saves[key] = ("array", tape, top)
        elif value.type.ndim == 0:
            # A scalar in nested loops, or in a loop whose trip count is not known on entry: an
            # array that doubles when full, and a stack pointer (a push is a store and an
            # increment; numba's list append and pop cost several times more).
            tape = TapeArray(self.namer.fresh("tape_" + base), Type(value.type.dtype, 1))
            top = Var(self.namer.fresh("top_" + base), Type("i8"))
            self.growing_tapes.append((tape, top))
            grow_if_full(self.namer, out, tape, top, stmt.loc)
            out.append(SetItem(tape, value, [("int", top)], loc=stmt.loc))
            out.append(Assign(top, "add", [top, const(1)], loc=stmt.loc))
            self.saves[key] = ("array", tape, top)
        else:
            tape = Var(self.namer.fresh("tape_" + base), NONE_T)
            self.tapes.append((tape, value.type))
            out.append(Push(tape, value, loc=stmt.loc))
            self.saves[key] = ("tape", tape, value.type)

    def counted_pushes(self):
        """The loops inside the outermost one enclosing the statement being saved, if a tape
        preallocated on entry to the outermost loop holds every push there: the outermost is a
        ``for`` loop at depth 0 (``counted_loop``), and each inner loop a ``for`` loop whose
        bounds are known before the outermost loop runs, with the value they have at every
        entry of the inner loop (``bound_before``); else None. A statement runs at most once
        per iteration of its innermost loop, so the tape needs at most the product of the trip
        counts."""
        outer = self.counted_loop
        if outer is None or not self.loop_stack or self.loop_stack[0] is not outer:
            return None
        inner = self.loop_stack[1:]
        if not all(isinstance(loop, For) for loop in inner):
            return None
        if any(self.bound_before(bound, outer) is None for loop in inner for bound in (loop.start, loop.stop, loop.step)):
            return None
        return tuple(inner)

    def bound_before(self, bound, outer):
        """How to compute ``bound`` (an inner loop's start, stop or step) before ``outer`` runs,
        to the value it has whenever the inner loop starts: the constant; the variable, if
        nothing in ``outer`` assigns it and it is defined before; or, for a variable whose only
        assignment in the function is ``dim(a)`` in ``outer``, of an array ``a`` that nothing in
        ``outer`` rebinds and that is defined before (``x.shape[1]`` read again in every
        iteration; writes into ``a`` do not change its shape): that statement. None otherwise."""
        if isinstance(bound, Const):
            return bound
        assigned, rebound = self.assignments_in(outer)
        if bound not in assigned:
            return bound if self.defined_before(bound, outer) else None
        info = self.scopes.info.get(bound)
        definitions = [d for d, _, _ in info.defs] if info is not None else []
        if (len(definitions) != 1 or bound in self.fn.params or not isinstance(definitions[0], Assign)
                or definitions[0].prim != "dim"):
            return None
        array = definitions[0].args[0]
        if array in rebound or not self.defined_before(array, outer):
            return None
        return definitions[0]

    def assignments_in(self, loop):
        """(the variables ``loop`` assigns or writes into, those it binds to a new value)."""
        key = id(loop)
        if key not in self.assigned_in_loop:
            statements = list(walk(loop.body))
            assigned = {loop.index} | {v for s in statements for v in s.writes()}
            rebound = {loop.index} | {v for s in statements if not isinstance(s, (SetItem, AccumItem, Push))
                                      for v in s.writes()}
            self.assigned_in_loop[key] = (assigned, rebound)
        return self.assigned_in_loop[key]

    def pop_saved(self, saved, b, target):
        """Emit the restoring of a saved value into ``target`` (the inverse of ``save``)."""
        if saved[0] == "slot":
            b.emit("alias", [saved[1]], target=target)
        elif saved[0] == "tape":
            b.append(Pop(target, saved[1]))
        else:
            _, tape, top = saved
            b.append(Assign(top, "sub", [top, const(1)], loc=b.loc))
            params, index_args = index_params(tape.type, [("int", top)])
            b.emit("getitem", [tape] + index_args, target=target, **params)

    def restore_var(self, stmt, b):
        saved = self.saves.get(id(stmt)) if self.needed is not None else None
        if saved is not None:
            self.pop_saved(saved, b, stmt.target)

    def restore_items(self, stmt, b):
        """Put back the values a SetItem overwrote."""
        saved = self.saves.get(id(stmt)) if self.needed is not None else None
        if saved is None:
            return
        if saved[0] == "slot":
            value = saved[1]
        else:
            type_ = saved[2] if saved[0] == "tape" else saved[1].type.with_ndim(0)
            value = Var(self.namer.fresh("_popped"), type_, is_temp=True)
            self.pop_saved(saved, b, value)
        b.append(SetItem(stmt.array, value, stmt.items))

    @staticmethod
    def region_vars(stmt):
        """Variables a custom call's region assigns: its outputs and its internal variables."""
        found = list(stmt.outputs)
        for inner in walk(stmt.forward):
            found += [v for v in inner.writes() if v not in found]
        return found

    def save_region(self, out, stmt, depth, when):
        """A custom call's region is atomic: the needed variables it assigns are saved as a
        whole on entry (for the statements before it) and on exit (for its own rule)."""
        inner = {id(s) for s in walk(stmt.forward)}
        for var in self.region_vars(stmt):
            if when == "entry" and self.first_definition_in(inner, var, depth):
                continue  # no value before the region to save
            if var in self.needed and var.type.dtype != "none" and self.scopes.is_overwritten(var, self.fn.params):
                if var not in self.fn.params and var not in self.placeholders:
                    self.placeholders.append(var)
                self.save(out, stmt, var, depth, var.name, key=(id(stmt), var, when))

    def restore_region(self, stmt, b, when):
        if self.needed is None:
            return
        for var in reversed(self.region_vars(stmt)):
            saved = self.saves.get((id(stmt), var, when))
            if saved is not None:
                self.pop_saved(saved, b, var)

    def forward_block(self, block, depth):
        out = []
        for stmt in block:
            if isinstance(stmt, Assign):
                target = stmt.target
                if (target in self.needed and self.scopes.is_overwritten(target, self.fn.params)
                        and not self.first_definition(stmt, target, depth)
                        and id(stmt) not in self.recomputed_ids
                        and self.read_before(target, stmt)):
                    if not self.defined_before(target, stmt) and target not in self.placeholders:
                        self.placeholders.append(target)
                    self.save(out, stmt, target, depth, target.name)
                    self.restored.add(target)
                out.append(stmt)
            elif isinstance(stmt, SetItem):
                # the write changes every array sharing the memory: undo it if the backward
                # reads any of them before (in program order) the write
                if any(var in self.needed and self.read_before(var, stmt)
                       for var in self.memory_shared(stmt.array)):
                    b = Builder(self.namer, out, stmt.loc)
                    old = getitem(b, stmt.array, stmt.items)
                    if old.type.ndim:
                        old = b.call("copy", old)
                    old.is_temp = depth > 0  # a slot must stay a variable
                    if depth == 0:
                        old.name = self.namer.fresh(stmt.array.name + "_overwritten")
                    self.save(out, stmt, old, depth, stmt.array.name, direct=True)
                    self.restored.add(stmt.array)
                out.append(stmt)
            elif isinstance(stmt, CustomCall):
                self.save_region(out, stmt, depth, "entry")
                if is_checkpointed(stmt):
                    keep_entry_state(self, out, stmt, depth)
                out.append(stmt)
                self.save_region(out, stmt, depth, "exit")
            elif isinstance(stmt, If):
                out.append(If(stmt.cond, self.forward_block(stmt.body, depth),
                              self.forward_block(stmt.orelse, depth), stmt.loc))
            elif isinstance(stmt, For):
                self.save_loop_index(out, stmt, depth)
                self.recomputed_ids.update(id(s) for s in walk(self.recomputed(stmt)))
                n_saves = self.save_count
                if depth == 0:
                    self.counted_loop, self.counted_tapes = stmt, []
                body = self.loop_body(stmt, depth)
                if self.loop_has_backward(stmt, n_saves):
                    out += self.record_for(stmt, depth)
                if depth == 0:
                    out += self.allocate_counted_tapes(stmt)
                    self.counted_loop = None
                out.append(For(stmt.index, stmt.start, stmt.stop, stmt.step, body, stmt.loc))
            elif isinstance(stmt, While):
                self.recomputed_ids.update(id(s) for s in walk(self.recomputed(stmt)))
                n_saves = self.save_count
                if depth == 0:
                    self.counted_loop = None
                body = self.loop_body(stmt, depth)
                if self.loop_has_backward(stmt, n_saves):
                    records = []
                    counter = self.record_var("trips", Type("i8"), const(0), stmt, depth, records)
                    out += records
                    body.append(Assign(counter, "add", [counter, const(1)], loc=stmt.loc))
                    self.loop_records[id(stmt)] = (counter, self.last_records(records))
                out.append(While(stmt.cond_body, stmt.cond, body, stmt.loc))
            else:
                out.append(stmt)
        return out

    def loop_body(self, loop, depth):
        """The forward sweep of ``loop``'s body; ``loop_stack`` holds the loops around a
        statement being saved."""
        self.loop_stack.append(loop)
        try:
            return self.forward_block(loop.body, depth + 1)
        finally:
            self.loop_stack.pop()

    def save_loop_index(self, out, loop, depth):
        """The backward of a ``for`` loop runs with the same index variable, so an index value
        that the backward of earlier statements reads (another loop's ``i``) is saved before
        the loop and put back after its backward. Reads inside the loop's own backward see
        the index it binds, not the saved value: they need no save (``read_before(outside=)``)."""
        index = loop.index
        if (index in self.needed and self.scopes.is_overwritten(index, self.fn.params)
                and not self.first_definition(loop, index, depth) and self.read_before(index, loop, outside=loop)):
            if not self.defined_before(index, loop) and index not in self.placeholders:
                self.placeholders.append(index)
            self.save(out, loop, index, depth, index.name)

    def recomputed(self, loop):
        """The statements of ``loop``'s body that the backward sweep recomputes at the start of
        each backward iteration rather than saving (``recompute.py`` says which, and why that
        is legal): cheap scalars and views of values the loop never writes (``x[i]``, ``-k``)."""
        key = id(loop)
        if key not in self.recomputable:
            body_statements = {id(s) for s in walk(loop.body)}

            def read_by_backward(var):  # the reads recorded so far: this pass's and earlier ones'
                return not self.read_sites.get(var, set()).isdisjoint(body_statements)

            self.recomputable[key] = recomputable_statements(loop, self.fn, self.scopes, self.memory_shared,
                                                             read_by_backward)
        return self.recomputable[key]

    def recompute(self, loop, body):
        """The statements recomputing those of ``loop``'s recomputable temporaries (see
        ``recomputed``) that the backward ``body`` reads."""
        # values read, not shapes (a shape that cannot change is read from any binding)
        wanted = {a for s in walk(body) for a in value_reads(s, self.reshaped, write_targets=True)}
        chosen = []
        for stmt in reversed(self.recomputed(loop)):
            if any(target in wanted for target in recomputed_targets(stmt)):
                chosen.insert(0, stmt)
                wanted.update(a for s in walk([stmt]) for a in value_reads(s, self.reshaped, write_targets=True))
        statements = [copy_statement(s) for s in chosen]
        for stmt in walk(statements):
            for var in value_reads(stmt, self.reshaped):
                if var in self.primal_vars:
                    for read in self.memory_read(var):
                        self.read_sites.setdefault(read, set()).add(id(loop))
        return statements

    def allocate_counted_tapes(self, loop):
        out = []
        if self.counted_tapes:
            b = Builder(self.namer, out, loop.loc)
            n = self.loop_records[id(loop)][0]
            capacities = {(): n}  # the pushes of the loops inside ``loop`` -> their count
            for tape, top, inner in self.counted_tapes:
                if inner not in capacities:
                    capacity = n
                    for inner_loop in inner:
                        bounds = [self.bound_before(a, loop) for a in (inner_loop.start, inner_loop.stop, inner_loop.step)]
                        bounds = [b.emit("dim", bound.args, **bound.params) if isinstance(bound, Assign) else bound
                                  for bound in bounds]
                        trips = (const(len(range(*(a.value for a in bounds)))) if all(isinstance(a, Const) for a in bounds)
                                 else b.call("range_len", *bounds))
                        capacity = b.call("mul", capacity, trips)
                    capacities[inner] = capacity
                out.append(Assign(tape, "empty", [capacities[inner]], {"ndim": 1, "dtype": tape.type.dtype}, loop.loc))
                out.append(Assign(top, "alias", [const(0)], loc=loop.loc))
        return out

    def loop_has_backward(self, loop, n_saves_before):
        if self.save_count > n_saves_before:
            return True
        return any(isinstance(s, (Assign, SetItem)) and (getattr(s, "target", None) in self.active
                                                         or getattr(s, "array", None) in self.active)
                   for s in walk(loop.body))

    def record_var(self, base, type_, value, stmt, depth, out):
        var = Var(self.namer.fresh(base), type_)
        assign = Assign(var, "alias", [value], loc=stmt.loc)
        if depth > 0:
            self.placeholders.append(var)
            self.save(out, assign, var, depth, base)
        out.append(assign)
        return var

    def record_for(self, loop, depth):
        """The trip count, start and step of ``loop``, for its backward: recorded on entry (in
        a nested loop, saved at every entry), or, in a nested loop whose bounds its body does
        not rebind, ``None``: the backward reads the bounds themselves, which hold the values
        they had on entry (``recompute.py``'s invariant), and computes the count again."""
        out = []
        b = Builder(self.namer, out, loop.loc)
        bounds = [loop.start, loop.stop, loop.step]
        if all(isinstance(a, Const) for a in bounds):  # known now: nothing to record
            n = const(len(range(*(a.value for a in bounds))))
        elif depth > 0 and bounds_kept_by_body(loop):
            self.loop_records[id(loop)] = (None, loop.start, loop.step, [])
            return out
        elif depth == 0:
            n = b.emit("range_len", bounds, target=Var(self.namer.fresh("n_" + loop.index.name), Type("i8")))
        else:
            trips = b.call("range_len", *bounds)
            trips.is_temp = False
            n = self.record_var("n_" + loop.index.name, trips.type, trips, loop, depth, out)
        start = loop.start if isinstance(loop.start, Const) else \
            self.record_var(loop.index.name + "_start", loop.start.type, loop.start, loop, depth, out)
        step = loop.step if isinstance(loop.step, Const) else \
            self.record_var(loop.index.name + "_step", loop.step.type, loop.step, loop, depth, out)
        self.loop_records[id(loop)] = (n, start, step, self.last_records(out))
        return out

    @staticmethod
    def last_records(out):
        return [s for s in out if isinstance(s, Assign) and s.prim == "alias"]

    def keep_results(self, forward):
        """The results as computed by the forward sweep: a result that the backward sweep
        restores to an earlier value is first copied."""
        results = []
        b = Builder(self.namer, forward)
        for atom in self.fn.results:
            if isinstance(atom, Var) and self.memory_read(atom) & self.restored and self.want_values:
                kept = b.call("copy", atom) if atom.type.ndim else b.emit("alias", [atom])
                kept.name, kept.is_temp = self.namer.fresh(atom.name + "_result"), False
                atom = kept
            results.append(atom)
        return results
