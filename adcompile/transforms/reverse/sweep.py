"""The adjoint sweep of reverse mode: the primal statements in reverse, each replaced by its rule.

Each assignment is replaced by its primitive's reverse rule (``ir/primitives/``), loops run
backwards over the recorded trip counts, branches are re-taken on the recorded condition, and the values the
taping plan saved are put back as the sweep passes the statements that overwrote them.
Cotangents are accumulated into one adjoint variable per primal variable (``bx``), except for
single-use temporaries, whose whole cotangent is handed on (``adj_values``). An argument in
several positions of one statement (``a @ a``) gets the sum of its cotangents, accumulated once.

A mixin of ``ReverseTransform`` (``transform.py``): it owns ``adjoints``, ``adj_values``,
``backward_statements``, ``cotangent_params`` and ``seeded``.
"""
from ...errors import NoDerivativeRuleError, located
from ...ir.builder import Builder, const
from ...ir.nodes import AccumItem, Assign, Comment, CustomCall, For, If, SetItem, Var, While, walk
from ...ir.types import Type
from ...ir.primitives import Kind, ScatterInto, getitem, has_kind, primitive
from .checkpoint_segments import is_checkpointed
from .checkpointing import reverse_checkpointed_loop


def check_rules(body, active):
    """Raise, located, at the first active assignment whose primitive has no reverse rule."""
    for stmt in walk(body, into_custom=False):
        if (isinstance(stmt, Assign) and stmt.target in active and primitive(stmt.prim).is_differentiable
                and primitive(stmt.prim).vjp is None):
            raise located(NoDerivativeRuleError,
                          f"no derivative rule for '{stmt.prim}'", stmt.loc)


def _no_cotangents(b, g, out, args, params, active):
    return [None] * len(args)


def _exclusive(path_a, path_b):
    """Whether two block paths lie in different arms of one branch."""
    for a, b in zip(path_a, path_b):
        if a != b:
            return a[0] == b[0]
    return False


def substitute(block, old, new):
    """Replace the atom ``old`` by ``new`` in the arguments and written values of ``block``."""
    for stmt in walk(block):
        if isinstance(stmt, Assign):
            stmt.args = [new if a is old else a for a in stmt.args]
        elif isinstance(stmt, SetItem):
            if stmt.value is old:
                stmt.value = new
            stmt.items = [tuple(new if p is old else p for p in item) for item in stmt.items]


class AdjointSweep:
    """The backward sweep: adjoints, the rules of each statement, loops and branches reversed."""

    def adjoint(self, var):
        """The variable accumulating ``var``'s cotangent (``bx`` for ``x``), made on first use."""
        if var not in self.adjoints:
            self.adjoints[var] = Var(self.namer.fresh("b" + var.name.lstrip("_")), var.type)
        return self.adjoints[var]

    def init_adjoints(self, b, path):
        """Zero the adjoint of each variable scoped to the block at ``path``, at the start of
        the block's backward sweep. ``zeros_like`` reads the variable as the block's forward
        sweep leaves it, which may have assigned it only in a branch or loop that did not run:
        ``place_unassigned_reads`` gives those a placeholder (``adjoint_inits``)."""
        for var in sorted(self.active, key=lambda v: v.uid):
            if var in self.seeded:
                continue
            if self.scopes.scope(var) == path and not self.scopes.single_local_use(var):
                b.emit("zeros_like", [var], target=self.adjoint(var))
                self.adjoint_inits.append((var, path))

    def seed_results(self, b):
        self.cotangent_params = []
        self.seeded = set()
        for k, atom in enumerate(self.fn.results):
            if self.mode == "grad":
                seed = const(1.0)
            else:
                seed = Var(self.namer.fresh("ct" if len(self.fn.results) == 1 else f"ct_{k}"), atom.type)
                self.cotangent_params.append(seed)
            if isinstance(atom, Var) and atom in self.active:
                if seed.type.ndim:
                    seed = b.call("copy", seed)
                if atom in self.seeded or self.scopes.single_local_use(atom):
                    self.accumulate(b, atom, seed, None, None)
                else:
                    b.emit("alias", [seed], target=self.adjoint(atom))
                    self.seeded.add(atom)

    def accumulate(self, b, var, ct, stmt, position):
        if isinstance(ct, ScatterInto):
            if self.scopes.single_local_use(var):  # no zero-initialised adjoint exists yet
                b.emit("zeros_like", [var], target=self.adjoint(var))
                self.adj_values[var] = self.adjoint(var)
            b.append(AccumItem(self.adjoint(var), ct.value, ct.items))
            return
        self.add_to_adjoint(b, var, self.shaped_like(b, var, ct, stmt, position))

    def accumulate_arguments(self, b, stmt, cts):
        """Accumulate each argument's cotangent; an argument in several positions (``x * y``
        with y being x, ``a @ a``) gets the sum of its cotangents in one accumulation."""
        positions = {}
        for position, (arg, ct) in enumerate(zip(stmt.args, cts)):
            if isinstance(ct, ScatterInto):
                self.accumulate(b, arg, ct, stmt, position)
            elif ct is not None:
                positions.setdefault(arg, []).append(position)
        for arg, where in positions.items():
            shaped = [self.shaped_like(b, arg, cts[k], stmt, k) for k in where]
            total = shaped[0]
            if len(shaped) > 1 and all(ct is total for ct in shaped):
                total = b.mul(const(float(len(shaped))), total)
            else:
                for ct in shaped[1:]:
                    total = b.add(total, ct)
            self.add_to_adjoint(b, arg, total)

    def shaped_like(self, b, var, ct, stmt, position):
        """The cotangent ``ct`` of ``stmt``'s argument ``var`` at ``position``, summed over
        the axes the statement broadcast ``var`` along."""
        if stmt is not None and has_kind(stmt.prim, Kind.BROADCASTING):
            ct = self.sum_to(b, ct, var, stmt, position)
        if ct.type.ndim > var.type.ndim:
            ct = b.call("unbroadcast", ct, var)
        return ct

    def add_to_adjoint(self, b, var, ct):
        if self.scopes.single_local_use(var):
            self.adj_values[var] = ct
            return
        adj = self.adjoint(var)
        b.append(Assign(adj, "add", [adj, ct], loc=b.loc, inplace=True))

    @staticmethod
    def sum_to(b, ct, var, stmt, position):
        others = [a for k, a in enumerate(stmt.args) if k != position]
        if var.type.ndim == 0:
            return b.call("sum", ct) if ct.type.ndim else ct
        if all(a.type.ndim == 0 for a in others):
            return ct
        return b.call("unbroadcast", ct, var)

    def backward_block(self, block, path, depth):
        out = []
        b = Builder(self.namer, out)
        if path == ():
            self.seed_results(b)
        self.init_adjoints(b, path)
        if out and block:
            # they read the values as the forward sweep leaves them at the block's end
            self.note_reads_at_end(block, out)
        last_loc = None
        for stmt in reversed(block):
            chunk = []
            self.backward_stmt(stmt, Builder(self.namer, chunk, stmt.loc), path, depth)
            if not chunk:
                continue
            if stmt.loc is not None and stmt.loc is not last_loc and not isinstance(stmt, (If, For, While)):
                out.append(Comment("grad of: " + stmt.loc.line.strip()))
                last_loc = stmt.loc
            out += chunk
            self.note_reads(stmt, chunk)
        self.backward_statements += out
        return out

    def backward_stmt(self, stmt, b, path, depth):
        if isinstance(stmt, Assign):
            self.backward_assign(stmt, b)
        elif isinstance(stmt, SetItem):
            self.backward_setitem(stmt, b)
        elif isinstance(stmt, If):
            k = id(stmt)
            then = self.backward_block(stmt.body, path + ((k, 0),), depth)
            orelse = self.backward_block(stmt.orelse, path + ((k, 1),), depth)
            if then or orelse:
                b.append(If(stmt.cond, then, orelse))
        elif isinstance(stmt, For):
            self.backward_for(stmt, b, path, depth)
        elif isinstance(stmt, While):
            self.backward_while(stmt, b, path, depth)
        elif isinstance(stmt, CustomCall):
            self.restore_region(stmt, b, "exit")
            if is_checkpointed(stmt):
                reverse_checkpointed_loop(self, stmt, b)
            else:
                stmt.info.reverse_rule(self.context, stmt, b)  # the region's own rule (context.py)
            self.restore_region(stmt, b, "entry")

    def backward_assign(self, stmt, b):
        target = stmt.target
        if target not in self.active:
            self.restore_var(stmt, b)
            return
        rule = primitive(stmt.prim).vjp or _no_cotangents
        if target in self.adj_values:
            g = self.adj_values.pop(target)
        elif self.scopes.single_local_use(target):
            return  # its only use was inactive
        else:
            g = self.adjoint(target)
        out_ref = Var("_" + target.name + "_out", target.type, is_temp=True)
        rule_block = []
        rb = Builder(self.namer, rule_block, stmt.loc)
        reset = self.overwrites(target) and self.adjoint_used_before(target, stmt)
        if reset:
            g_adjoint = g
            g_now = Var(self.namer.fresh("_g" + target.name.lstrip("_")), target.type)
            rb_pre = [Assign(g_now, "alias", [g])]
            g = g_now
        active = [isinstance(a, Var) and a in self.active for a in stmt.args]
        cts = rule(rb, g, out_ref, stmt.args, stmt.params, active)
        skip = None
        if reset and g_adjoint is self.adjoints.get(target):
            skip = self.passes_through(stmt, cts, g_now, active)
            if skip is not None:  # `x = x + ...`: x's adjoint carries over, no copy and reset
                reset = False
                substitute(rule_block, g_now, g_adjoint)
                # another argument's cotangent is the adjoint's value now, not the variable,
                # which the backward of this same expression may update (b = b + (w - b))
                snapshot = None
                for k, ct in enumerate(cts):
                    if ct is g_now and k != skip:
                        snapshot = snapshot or rb.emit("alias", [g_adjoint])
                        cts[k] = snapshot
                cts = [g_adjoint if ct is g_now else ct for ct in cts]
        uses_out = (any(a is out_ref for s in walk(rule_block) for a in s.reads())
                    or any(ct is out_ref for ct in cts))
        saved = self.saves.get(id(stmt)) if self.needed is not None else None
        if uses_out and saved is not None:
            b.emit("alias", [target], target=out_ref)
        else:
            substitute(rule_block, out_ref, target)
            cts = [target if ct is out_ref else ct for ct in cts]
        self.restore_var(stmt, b)
        if reset:
            b.block += rb_pre
            b.emit("zeros_like", [target], target=self.adjoint(target))
        b.block += rule_block
        self.accumulate_arguments(b, stmt, [ct if active[k] and k != skip else None for k, ct in enumerate(cts)])

    def adjoint_used_before(self, var, stmt):
        """Whether the backward sweep uses ``var``'s adjoint after handling ``stmt``: if
        ``var`` is a parameter, or is read or assigned before ``stmt`` (not in the other arm of
        a branch), or both are in a loop. If not, the adjoint needs no reset to zero."""
        if var in self.fn.params:
            return True
        info = self.scopes.info[var]
        # loops inside var's scope repeat stmt: its adjoint carries over to earlier iterations
        # (loops around the scope reset it at each iteration's start)
        loops = self.loops[id(stmt)] - {sid for sid, _ in self.scopes.scope(var)}
        if loops:
            return True
        here = self.order[id(stmt)]
        path = next(p for s, _, p in info.defs if s is stmt)
        for other, other_path in [(s, p) for s, _, p in info.defs] + info.reads:
            if other is stmt or other is None or id(other) not in self.order:
                continue
            if self.order[id(other)] < here and not _exclusive(path, other_path):
                return True
        return False

    @staticmethod
    def passes_through(stmt, cts, g, active):
        """The position of the target among the arguments of ``target = target + ...`` if the
        rule gives it the cotangent ``g`` unchanged (then its adjoint needs no update)."""
        positions = [k for k, a in enumerate(stmt.args) if a is stmt.target]
        if len(positions) != 1 or not active[positions[0]] or cts[positions[0]] is not g:
            return None
        # an array adjoint must not be shared with another argument's pending cotangent, as
        # it keeps being updated in place
        shared = any(ct is g for k, ct in enumerate(cts) if k != positions[0] and active[k])
        return None if shared and stmt.target.type.ndim else positions[0]

    def backward_setitem(self, stmt, b):
        self.restore_items(stmt, b)
        array, value = stmt.array, stmt.value
        if array not in self.active:
            return
        adj = self.adjoint(array)
        ct = None
        if isinstance(value, Var) and value in self.active:
            ct = getitem(b, adj, stmt.items)
            if ct.type.ndim and value.type.ndim:  # a view of adj, which is zeroed below
                ct = b.call("copy", ct)
            ct = self.last_writes_only(stmt, ct, b)
            if value.type.ndim == 0 and ct.type.ndim:
                ct = b.call("sum", ct)
            elif ct.type.ndim:
                ct = b.call("unbroadcast", ct, value)
        # zeroed before accumulating: the value written may be the array itself (w[:] = w)
        b.append(SetItem(adj, const(0.0), stmt.items))
        if ct is not None:
            self.accumulate(b, value, ct, None, None)

    def last_writes_only(self, stmt, ct, b):
        """``x[idx] = v`` with repeated indices keeps the last write of each element (numpy's
        rule, also for ``x[idx] += v``): the other elements of ``v`` get no cotangent. The
        positions that won are found as numpy does it: ``last[idx] = arange(len(idx))``.
        Handles one 1-d index array; other advanced indices keep the gathered cotangent."""
        arrays = [k for k, item in enumerate(stmt.items) if item[0] == "array"]
        if len(arrays) != 1 or stmt.items[arrays[0]][1].type.ndim != 1 or ct.type.ndim == 0:
            return ct
        k = arrays[0]
        idx = stmt.items[k][1]
        axis = sum(1 for item in stmt.items[:k] if item[0] != "none")
        order = b.call("arange", b.call("dim", idx, axis=0))
        last = b.call("full", b.call("dim", stmt.array, axis=axis), const(-1))
        b.append(SetItem(last, order, [("array", idx)]))
        mask = b.call("eq", getitem(b, last, [("array", idx)]), order)
        for _ in range(sum(1 for item in stmt.items[:k] if item[0] in ("slice", "none"))):
            mask = b.call("expand_axis", mask, axis=0)
        while mask.type.ndim < ct.type.ndim:
            mask = b.call("expand_axis", mask, axis=mask.type.ndim)
        return b.call("where", mask, ct, b.call("zeros_like", ct))

    def backward_for(self, loop, b, path, depth):
        body = self.backward_block(loop.body, path + ((id(loop), 0),), depth + 1)
        record = self.loop_records.get(id(loop))
        if body and record is not None:
            body = self.recompute(loop, body) + body
            n, start, step, records = record
            if n is None:  # not recorded: the bounds hold their values on entry (record_for)
                n = b.call("range_len", loop.start, loop.stop, loop.step)
            last = b.add(start, b.mul(b.sub(n, const(1)), step))
            b.append(For(loop.index, last, b.sub(start, step), b.neg(step), body, loop.loc))
            for assign in reversed(records):
                self.restore_var(assign, b)
        saved_index = self.saves.get(id(loop)) if self.needed is not None else None
        if saved_index is not None:
            self.pop_saved(saved_index, b, loop.index)

    def backward_while(self, loop, b, path, depth):
        body = self.backward_block(loop.body, path + ((id(loop), 1),), depth + 1)
        record = self.loop_records.get(id(loop))
        if not body or record is None:
            return
        counter, records = record
        body = self.recompute(loop, body) + body
        index = Var(self.namer.fresh("_iteration"), Type("i8"))
        b.append(For(index, const(0), counter, const(1), body, loop.loc))
        for assign in reversed(records):
            self.restore_var(assign, b)
