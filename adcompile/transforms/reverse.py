"""Reverse mode: a primal IR function -> an IR function computing its vector-Jacobian product.

The result has a forward sweep (the primal statements, plus saves of values that are about
to be overwritten and that the backward sweep reads) and a backward sweep (the statements in
reverse, each replaced by the rules of ``rules/vjp.py``, loops run backwards, branches
re-taken on the recorded condition, overwritten values restored). Example:

    def f(x):                         def f_grad(x):
        y = np.sin(x)                     y = np.sin(x)
        return y * y                      by = 2 * y ...         # grad of: return y * y
                                          bx = by * np.cos(x)    # grad of: y = np.sin(x)
                                          return bx

Saves: an assignment at loop depth 0 saves into a variable (``y_saved``), inside a loop onto
a stack (``rt.push(tape_y, y)``) that the backward sweep pops. A value is saved only if the
backward sweep reads it after undoing the assignment (in the backward of an earlier
statement, or of any statement of an enclosing loop); a first assignment has nothing to
save. Writes into arguments are always undone, so derived functions leave their arguments
unchanged; writes through memory shared by two variables are rejected (``scopes.py``). A
loop's trip count is recorded on entry (known at compile time for constant bounds), a while
loop's by counting; ``for`` loops with break/return arrive as counted while loops
(``frontend/lowering.py``), so a last, partly run iteration is replayed exactly.
"""
from ..errors import NoDerivativeRuleError, located
from ..ir.builder import Builder, const
from ..ir.memory import memory_roots
from ..ir.nodes import (AccumItem, Assign, Comment, Const, CustomCall, For, Function, If, Pop, Push,
                        SetItem, Var, While, walk)
from ..ir.types import NONE_T, Type
from ..passes.activity import active_vars
from ..rules.vjp import BROADCASTING, NON_DIFFERENTIABLE, VJP_RULES, ScatterInto, getitem
from .arguments import copy_written_arguments
from .scopes import Scopes, check_shared_memory_writes

from ..ir.indexing import index_params

# Scalar primitives cheap enough to recompute in the backward sweep instead of saving.
RECOMPUTABLE = {"getitem", "add", "sub", "mul", "div", "neg", "alias", "dim", "size", "to_float",
                "abs", "maximum", "minimum", "lt", "le", "gt", "ge", "eq", "ne"}
from ..rules.shape_only import SHAPE_ONLY


def check_rules(body, active):
    for stmt in walk(body, into_custom=False):
        if (isinstance(stmt, Assign) and stmt.target in active and stmt.prim not in VJP_RULES
                and stmt.prim not in NON_DIFFERENTIABLE):
            raise located(NoDerivativeRuleError,
                          f"no derivative rule for '{stmt.prim}'", stmt.loc)


def _no_cotangents(b, g, out, args, params, active):
    return [None] * len(args)


def value_reads(stmt, reshaped=(), write_targets=False):
    """The Vars whose values ``stmt`` itself reads (shape-only reads excluded, except of the
    arrays in ``reshaped``, whose shape may change from one assignment to the next).
    ``write_targets``: an array written into counts as read, for the backward sweep, whose
    writes put back overwritten elements and need the variable bound to the same array as
    in the forward sweep at that point."""
    atoms = list(stmt.reads())
    if isinstance(stmt, Assign) and stmt.prim in SHAPE_ONLY:
        skip = SHAPE_ONLY[stmt.prim]
        atoms = [a for k, a in enumerate(atoms) if k not in skip or a in reshaped]
    if isinstance(stmt, (SetItem, AccumItem)) and not write_targets:
        atoms = [a for a in atoms if a is not stmt.array]  # writing into it
    return [a for a in atoms if isinstance(a, Var)]


def primal_reads(block, primal_vars, reshaped=()):
    """Primal Vars whose values the backward ``block`` reads (see ``value_reads``)."""
    return {a for stmt in walk(block) for a in value_reads(stmt, reshaped, write_targets=True)
            if a in primal_vars}


def _exclusive(path_a, path_b):
    """Whether two block paths lie in different arms of one branch."""
    for a, b in zip(path_a, path_b):
        if a != b:
            return a[0] == b[0]
    return False


def _enclosing_loops(block, loops=(), out=None):
    """id(stmt) -> the set of ids of the loops around it."""
    out = {} if out is None else out
    for stmt in block:
        out[id(stmt)] = frozenset(loops)
        inner = loops + (id(stmt),) if isinstance(stmt, (For, While)) else loops
        for nested in stmt.blocks():
            _enclosing_loops(nested, inner, out)
    return out


def substitute(block, old, new):
    for stmt in walk(block):
        if isinstance(stmt, Assign):
            stmt.args = [new if a is old else a for a in stmt.args]
        elif isinstance(stmt, SetItem):
            if stmt.value is old:
                stmt.value = new
            stmt.items = [tuple(new if p is old else p for p in item) for item in stmt.items]


class ReverseTransform:
    def __init__(self, fn, wrt, namer, mode="grad"):
        self.fn = fn
        self.wrt = [fn.params[k] for k in wrt]
        self.namer = namer
        self.mode = mode
        self.want_values = mode != "grad"  # whether the primal results are returned too
        check_shared_memory_writes(fn)
        self.scopes = Scopes(fn)
        self.order = {id(stmt): k for k, stmt in enumerate(walk(fn.body))}
        self.loops = _enclosing_loops(fn.body)
        self.read_sites = {}     # primal Var -> ids of the statements whose backward reads it
        results = [a for a in fn.results if isinstance(a, Var)]
        self.active = active_vars(fn.body, self.wrt, results, NON_DIFFERENTIABLE)
        check_rules(fn.body, self.active)
        self.primal_vars = set(self.scopes.info) | set(fn.params)
        # A view (``w[1:]``, ``x.T``, ``y = x``) read by the backward sweep reads the memory of
        # the arrays it views: a later write into them must be undone before that read.
        self.memory = memory_roots(fn.body, fn.params)
        for var in self.primal_vars:
            namer.reserve(var.name)
        # arrays assigned more than once: their shapes may differ, so shape reads count too
        self.reshaped = {v for v in self.primal_vars if v.type.ndim and self.scopes.is_rebound(v, fn.params)}

    # ------------------------------------------------------------------ driver
    def run(self):
        snapshot = set(self.namer.taken)
        self.saves, self.needed = {}, None
        self.save_count = 0  # saves emitted so far (``saves`` keeps its keys from pass to pass)
        self.start_pass()
        self.backward_block(self.fn.body, (), 0)
        self.needed = self.backward_reads()
        # Restoring a saved value can make the backward sweep read more (the condition of the
        # branch it is restored in): repeat until the set of needed values is stable.
        for _ in range(20):
            self.namer.taken = set(snapshot)
            sites = self.site_count()
            self.start_pass()
            forward = self.forward_block(self.fn.body, 0)
            self.results = self.keep_results(forward)
            backward = self.backward_block(self.fn.body, (), 0)
            needed = self.backward_reads()
            if needed <= self.needed and self.site_count() == sites:
                break
            self.needed |= needed
        return self.assemble(forward, backward)

    def memory_shared(self, array):
        """The primal variables that may share memory with ``array``."""
        memory = self.memory.get(array, {array})
        shared = {var for var, roots in self.memory.items() if roots & memory and var in self.primal_vars}
        return shared | {array}

    def memory_read(self, var):
        """``var`` and the arrays whose memory it may view."""
        return {var} | {root for root in self.memory.get(var, ()) if root in self.primal_vars}

    def backward_reads(self):
        """The primal Vars whose values (or memory) the backward sweep reads."""
        reads = primal_reads(self.backward_statements, self.primal_vars, self.reshaped)
        return set().union(*map(self.memory_read, reads)) if reads else reads

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

    def start_pass(self):
        self.adjoints = {}       # primal Var -> adjoint Var
        self.adj_values = {}     # single-use temp -> the atom holding its whole cotangent
        self.backward_statements = []
        self.tapes = []
        self.counted_loop, self.counted_tapes = None, []
        self.recomputable, self.recomputed_ids = {}, set()
        self.placeholders = []
        self.loop_records = {}
        self.restored = set()    # Vars whose forward values the backward sweep puts back

    # ------------------------------------------------------------------ forward sweep
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
            path == () and not isinstance(d, For) and self.order.get(id(d), where) < where
            for d, _, path in info.defs)

    def first_definition(self, stmt, var, depth):
        """Whether ``stmt``, outside loops, is the first assignment of ``var``: there is no
        earlier value to save then."""
        info = self.scopes.info.get(var)
        return (depth == 0 and var not in self.fn.params and info is not None and bool(info.defs)
                and info.defs[0][0] is stmt)

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
        elif depth == 1 and value.type.ndim == 0 and self.counted_loop is not None:
            # One push per iteration at most, and the trip count is known on loop entry:
            # a preallocated array and a stack pointer instead of a growing list.
            tape = Var(self.namer.fresh("tape_" + base), Type(value.type.dtype, 1))
            top = Var(self.namer.fresh("top_" + base), Type("i8"))
            self.counted_tapes.append((tape, top))
            out.append(SetItem(tape, value, [("int", top)], loc=stmt.loc))
            out.append(Assign(top, "add", [top, const(1)], loc=stmt.loc))
            self.saves[key] = ("array", tape, top)
        else:
            tape = Var(self.namer.fresh("tape_" + base), NONE_T)
            self.tapes.append((tape, value.type))
            out.append(Push(tape, value, loc=stmt.loc))
            self.saves[key] = ("tape", tape, value.type)

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
        for var in self.region_vars(stmt):
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
                out.append(stmt)
                self.save_region(out, stmt, depth, "exit")
            elif isinstance(stmt, If):
                out.append(If(stmt.cond, self.forward_block(stmt.body, depth),
                              self.forward_block(stmt.orelse, depth), stmt.loc))
            elif isinstance(stmt, For):
                self.save_loop_index(out, stmt, depth)
                self.recomputed_ids.update(id(s) for s in self.recomputed(stmt))
                n_saves = self.save_count
                if depth == 0:
                    self.counted_loop, self.counted_tapes = stmt, []
                body = self.forward_block(stmt.body, depth + 1)
                if self.loop_has_backward(stmt, n_saves):
                    out += self.record_for(stmt, depth)
                if depth == 0:
                    out += self.allocate_counted_tapes(stmt)
                    self.counted_loop = None
                out.append(For(stmt.index, stmt.start, stmt.stop, stmt.step, body, stmt.loc))
            elif isinstance(stmt, While):
                self.recomputed_ids.update(id(s) for s in self.recomputed(stmt))
                n_saves = self.save_count
                if depth == 0:
                    self.counted_loop = None
                body = self.forward_block(stmt.body, depth + 1)
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

    def save_loop_index(self, out, loop, depth):
        """The backward of a ``for`` loop runs with the same index variable, so an index value
        that the backward of earlier statements reads (another loop's ``i``) is saved before
        the loop and put back after its backward."""
        index = loop.index
        if (index in self.needed and self.scopes.is_overwritten(index, self.fn.params)
                and not self.first_definition(loop, index, depth) and self.read_before(index, loop)):
            if not self.defined_before(index, loop) and index not in self.placeholders:
                self.placeholders.append(index)
            self.save(out, loop, index, depth, index.name)

    def recomputed(self, loop):
        """Scalar temporaries of ``loop``'s body that are cheaper to recompute at the start of
        each backward iteration than to save: defined once, directly in the body, by a cheap
        primitive of constants, the loop index, values the loop never writes, or other such
        temporaries (``x[i]``, ``-k``)."""
        key = id(loop)
        if key not in self.recomputable:
            written = {v for s in walk(loop.body) for v in s.writes()}
            index = loop.index if isinstance(loop, For) else None
            chosen, targets = [], set()
            for stmt in loop.body:
                if not (isinstance(stmt, Assign) and stmt.target.is_temp and stmt.target.type.ndim == 0
                        and stmt.prim in RECOMPUTABLE and not stmt.inplace):
                    continue
                info = self.scopes.info.get(stmt.target)
                if info is None or len(info.defs) != 1:
                    continue
                if all(isinstance(a, Const) or a is index or a in targets
                       or (a not in written and a.type.dtype != "none") for a in stmt.args):
                    chosen.append(stmt)
                    targets.add(stmt.target)
            self.recomputable[key] = chosen
        return self.recomputable[key]

    def recompute(self, loop, body):
        """The statements recomputing those of ``loop``'s recomputable temporaries (see
        ``recomputed``) that the backward ``body`` reads."""
        wanted = {a for s in walk(body) for a in s.reads() if isinstance(a, Var)}
        chosen = []
        for stmt in reversed(self.recomputed(loop)):
            if stmt.target in wanted:
                chosen.insert(0, stmt)
                wanted.update(a for a in stmt.args if isinstance(a, Var))
        statements = [Assign(s.target, s.prim, list(s.args), dict(s.params), s.loc) for s in chosen]
        for stmt in statements:
            for var in value_reads(stmt, self.reshaped):
                if var in self.primal_vars:
                    for read in self.memory_read(var):
                        self.read_sites.setdefault(read, set()).add(id(loop))
        return statements

    def allocate_counted_tapes(self, loop):
        out = []
        if self.counted_tapes:
            n = self.loop_records[id(loop)][0]
            for tape, top in self.counted_tapes:
                out.append(Assign(tape, "empty", [n], {"ndim": 1, "dtype": tape.type.dtype}, loop.loc))
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
        out = []
        b = Builder(self.namer, out, loop.loc)
        bounds = [loop.start, loop.stop, loop.step]
        if all(isinstance(a, Const) for a in bounds):  # known now: nothing to record
            n = const(len(range(*(a.value for a in bounds))))
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

    # ------------------------------------------------------------------ backward sweep
    def adjoint(self, var):
        if var not in self.adjoints:
            self.adjoints[var] = Var(self.namer.fresh("b" + var.name.lstrip("_")), var.type)
        return self.adjoints[var]

    def init_adjoints(self, b, path):
        for var in sorted(self.active, key=lambda v: v.uid):
            if var in self.seeded:
                continue
            if self.scopes.scope(var) == path and not self.scopes.single_local_use(var):
                b.emit("zeros_like", [var], target=self.adjoint(var))

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

    def accumulate(self, b, var, ct, stmt, position):
        if isinstance(ct, ScatterInto):
            if self.scopes.single_local_use(var):  # no zero-initialised adjoint exists yet
                b.emit("zeros_like", [var], target=self.adjoint(var))
                self.adj_values[var] = self.adjoint(var)
            b.append(AccumItem(self.adjoint(var), ct.value, ct.items))
            return
        if stmt is not None and stmt.prim in BROADCASTING:
            ct = self.sum_to(b, ct, var, stmt, position)
        if ct.type.ndim > var.type.ndim:
            ct = b.call("unbroadcast", ct, var)
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

    def site_count(self):
        return sum(len(sites) for sites in self.read_sites.values())

    def note_reads(self, stmt, chunk):
        """Record which primal statement's backward reads which primal values (the blocks of
        a branch or loop are recorded for the statements inside them)."""
        compound = isinstance(stmt, (If, For, While))
        for s in chunk:
            inner = [s] if compound and isinstance(s, (If, For, While)) else walk([s])
            for t in inner:
                for var in value_reads(t, self.reshaped, write_targets=True):
                    if var in self.primal_vars:
                        for read in self.memory_read(var):
                            self.read_sites.setdefault(read, set()).add(id(stmt))

    def read_before(self, var, stmt):
        """Whether the backward sweep reads ``var`` after undoing ``stmt``: in the backward of
        ``stmt`` or of a statement before it, or in a loop around ``stmt`` (earlier iterations).
        Otherwise the value ``stmt`` overwrites need not be saved."""
        here, loops = self.order[id(stmt)], self.loops[id(stmt)]
        return any(self.order[r] <= here or self.loops[r] & loops
                   for r in self.read_sites.get(var, ()))

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
            own_rule = getattr(stmt.info, "reverse_rule", None)
            if own_rule is not None:  # an inlined derivative (adcompile/nested.py)
                own_rule(self, stmt, b, path, depth)
            else:
                from .custom import backward_custom_call
                backward_custom_call(self, stmt, b, path, depth)
            self.restore_region(stmt, b, "entry")

    def backward_assign(self, stmt, b):
        target = stmt.target
        if target not in self.active:
            self.restore_var(stmt, b)
            return
        rule = VJP_RULES.get(stmt.prim, _no_cotangents)
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
        for position, (arg, ct) in enumerate(zip(stmt.args, cts)):
            if ct is not None and active[position] and position != skip:
                self.accumulate(b, arg, ct, stmt, position)

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

    def restore_var(self, stmt, b):
        saved = self.saves.get(id(stmt)) if self.needed is not None else None
        if saved is not None:
            self.pop_saved(saved, b, stmt.target)

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

    # ------------------------------------------------------------------ result
    def assemble(self, forward, backward):
        prologue = []
        b = Builder(self.namer, prologue)
        for var in self.placeholders:
            b.emit("placeholder", [], target=var, type=var.type)
        for tape, type_ in self.tapes:
            like = b.emit("placeholder", [], type=type_)
            b.emit("new_tape", [like], target=tape)
        copy_written_arguments(self.fn, b)
        epilogue = []
        b = Builder(self.namer, epilogue)
        grads = []
        for param in self.wrt:
            if param in self.active:
                adj = self.adjoint(param)
                grads.append(b.call("cast_like", adj, param) if param.type.dtype == "f4" else adj)
            else:
                grads.append(b.call("zeros_like", param))
        body = prologue + [Comment("forward")] + forward + [Comment("backward")] + backward + epilogue
        params = list(self.fn.params)
        if self.mode == "grad":
            results = grads
        else:
            params += self.cotangent_params
            results = list(self.results) + grads
        suffix = {"grad": "grad", "value_and_grad": "value_and_grad", "vjp": "vjp"}[self.mode]
        return Function(f"{self.fn.name}_{suffix}", params, body, results, True, self.fn.source_file)


def reverse(fn, wrt, namer, mode="grad"):
    """The IR function computing the gradient (``mode='grad'``: seed 1.0, returns grads;
    ``'value_and_grad'``: returns results then grads; ``'vjp'``: takes one cotangent per result
    after the primal parameters, returns results then grads)."""
    transform = ReverseTransform(fn, wrt, namer, "grad" if mode == "value_and_grad" else mode)
    transform.want_values = mode != "grad"
    result = transform.run()
    if mode == "value_and_grad":
        result.results = list(transform.results) + result.results
        result.name = f"{fn.name}_value_and_grad"
    return result
