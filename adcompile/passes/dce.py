"""Dead-code elimination: drop computations whose results nothing needs.

Runs on every generated function. Liveness starts from the function's results, its state
parameters (``transforms/arguments.py``: arrays whose in-place writes the caller sees) and the
variables that control flow reads (branch conditions, loop bounds), and spreads backwards:
a statement is live when it writes a live variable, and then everything it reads is live.
Statements writing only dead variables are removed — assignments, in-place writes and
accumulations into arrays nobody reads, pushes onto tapes nobody pops — and so are loops
and branches left empty. Arrays bound to each other by plain assignment share one fate,
since writing through one name changes the other.

    _t_13 = -np.mean(_t_11)     # the loss value, unused by a gradient-only function
    bx[:-1] += -bt_7            # an adjoint only the discarded result would have read

A read of only a shape (``np.zeros_like(v)``, the second argument of ``unbroadcast``; see
``rules/shape_only.py``) needs the statements that give ``v`` its shape, not the in-place
updates of its elements, so accumulations into an adjoint read only for its shape go too:

    bx = np.zeros_like(x)
    bx += g * w                 # removed: bx is only read by the next line, for its shape
    dbx = np.zeros_like(bx)

And such a read is moved to an earlier value of the same shape where one is at hand
(``np.zeros_like(np.log(p))`` reads ``p``), which can leave the value itself dead.

A matrix product that a rewrite relied on for the equal lengths it checks
(``ir/dim_equalities.py``) leaves, when dead, ``rt.check_matmul_shapes(a, b)`` in its place;
such checks (primitives of kind CHECK) always stay, and so do the shapes of the operands of
a product that may leave one: its arguments are needed for their shapes whether it lives or not.
"""
from ..ir.dim_equalities import shape_check_for
from ..ir.nodes import AccumItem, Assign, Comment, CustomCall, For, If, Pop, Push, SetItem, Var, While, walk
from ..ir.primitives import Kind, primitive

class _Aliases:
    """Union-find over array variables bound by ``alias`` (``y = x``) when either is updated
    in place (otherwise each is dead or alive on its own)."""

    def __init__(self, fn):
        self.parent = {}
        updated = {v for stmt in walk(fn.body) if _updates_in_place(stmt) for v in stmt.writes()}
        for stmt in walk(fn.body):
            if isinstance(stmt, Assign) and stmt.prim == "alias" and stmt.target.type.ndim \
                    and isinstance(stmt.args[0], Var) and {stmt.target, stmt.args[0]} & updated:
                self.union(stmt.target, stmt.args[0])

    def find(self, var):
        while self.parent.get(var, var) is not var:
            var = self.parent[var]
        return var

    def union(self, a, b):
        ra, rb = self.find(a), self.find(b)
        if ra is not rb:
            self.parent[ra] = rb


def _control_reads(stmt):
    if isinstance(stmt, If):
        return [stmt.cond]
    if isinstance(stmt, For):
        return [stmt.start, stmt.stop, stmt.step]
    if isinstance(stmt, While):
        return [stmt.cond]
    return []


def _live_roots(fn, aliases):
    live = {aliases.find(param) for param in getattr(fn, "state_params", ())}  # writes the caller sees
    for atom in fn.results:
        if isinstance(atom, Var):
            live.add(aliases.find(atom))
    for stmt in walk(fn.body):
        for atom in _control_reads(stmt):
            if isinstance(atom, Var):
                live.add(aliases.find(atom))
    return live


def _is_live(stmt, live, aliases):
    if isinstance(stmt, (If, For, While, Comment)):
        return True
    if isinstance(stmt, Assign) and primitive(stmt.prim).has(Kind.CHECK):
        return True
    if isinstance(stmt, CustomCall):
        return any(aliases.find(v) in live for inner in walk([stmt]) for v in inner.writes())
    return any(aliases.find(v) in live for v in stmt.writes())


def _updates_in_place(stmt):
    """Whether ``stmt`` changes elements of an existing array without giving it a new shape."""
    return isinstance(stmt, (SetItem, AccumItem)) or (isinstance(stmt, Assign) and stmt.inplace)


def _reads_by_kind(stmt):
    """(atoms read for their values, atoms read only for their shapes) by ``stmt``."""
    if isinstance(stmt, Assign) and primitive(stmt.prim).shape_only:
        shape_positions = primitive(stmt.prim).shape_only
        values = [a for k, a in enumerate(stmt.args) if k not in shape_positions]
        return values, [a for k, a in enumerate(stmt.args) if k in shape_positions]
    return stmt.reads(), []


def _mark(fn, aliases):
    """(roots whose values are needed, roots of which only the shape is needed).

    A work list: a statement is visited once, when it is found live (or giving a needed
    shape), and marks what it reads; a root becoming needed queues the statements that write it.
    Linear in the program, where rescanning the whole program until nothing changes took a
    pass per statement of a long dependency chain."""
    live, shaped = _live_roots(fn, aliases), set()
    value_writers, shape_writers, queue = {}, {}, []
    for stmt in walk(fn.body, into_custom=True):
        if _is_live(stmt, set(), aliases):  # control flow, comments, checks
            queue.append(stmt)
        check = shape_check_for(stmt)
        if check is not None:  # the check ``_sweep`` leaves if ``stmt`` is dead reads its operands' shapes
            queue.append(check)
        for root in _written_roots(stmt, aliases):
            value_writers.setdefault(root, []).append(stmt)
        for root in _shape_roots(stmt, aliases):
            shape_writers.setdefault(root, []).append(stmt)
    for root in live:
        queue.extend(value_writers.get(root, ()))
    visited = set()
    while queue:
        stmt = queue.pop()
        if id(stmt) in visited:
            continue
        visited.add(id(stmt))
        values, shapes = _reads_by_kind(stmt)
        for atoms, needed, writers in ((values, live, value_writers), (shapes, shaped, shape_writers)):
            for atom in atoms:
                if isinstance(atom, Var) and aliases.find(atom) not in needed:
                    needed.add(aliases.find(atom))
                    queue.extend(writers.get(aliases.find(atom), ()))
    return live, shaped


def _written_roots(stmt, aliases):
    """The roots whose being live makes ``stmt`` live (see ``_is_live``)."""
    inner = walk([stmt]) if isinstance(stmt, CustomCall) else [stmt]
    return {aliases.find(v) for s in inner for v in s.writes()}


def _shape_roots(stmt, aliases):
    """The roots whose shape being needed makes ``stmt`` needed (see ``_gives_shape``)."""
    if isinstance(stmt, CustomCall):
        return {root for inner in walk(stmt.forward) for root in _shape_roots(inner, aliases)}
    if _updates_in_place(stmt) or isinstance(stmt, (If, For, While, Comment)):
        return set()
    return {aliases.find(v) for v in stmt.writes()}


def _gives_shape(stmt, shaped, aliases):
    """Whether ``stmt`` (re)defines a variable whose shape is needed: any assignment of it but
    an in-place update of its elements."""
    if isinstance(stmt, CustomCall):
        return any(_gives_shape(inner, shaped, aliases) for inner in walk(stmt.forward))
    if _updates_in_place(stmt) or isinstance(stmt, (If, For, While, Comment)):
        return False
    return any(aliases.find(v) in shaped for v in stmt.writes())


def _forward_shape_reads(fn):
    """Point shape-only reads of a value that nothing reads for its value at an earlier value
    of the same shape (the array argument of a one-array elementwise operation, the argument
    of ``zeros_like``), when both are bound once (or are parameters never rebound). Returns
    True if a read moved."""
    bindings = _bindings(fn)
    source = {}
    for stmt in walk(fn.body):
        if isinstance(stmt, Assign) and not stmt.inplace and stmt.target.type.ndim:
            origin = _same_shape_argument(stmt)
            if origin is not None and bindings.get(origin, 0) == 1:
                source[stmt.target] = origin

    value_reads = {a for stmt in walk(fn.body) for a in _reads_by_kind(stmt)[0] if isinstance(a, Var)}
    value_reads |= {a for a in fn.results if isinstance(a, Var)}

    def earliest(var):
        """The first value along the chain that is computed anyway (read for its value, or a
        parameter), else the chain's start; ``var`` itself if it is computed anyway."""
        seen = {var}
        while var not in value_reads and var in source and bindings.get(var, 0) == 1:
            var = source[var]
            if var in seen:
                break
            seen.add(var)
        return var
    moved = False
    for stmt in walk(fn.body):
        if isinstance(stmt, Assign) and primitive(stmt.prim).shape_only:
            for k in primitive(stmt.prim).shape_only:
                arg = stmt.args[k]
                if isinstance(arg, Var) and arg.type.ndim and earliest(arg) is not arg:
                    stmt.args[k] = earliest(arg)
                    moved = True
    return moved


def _same_shape_argument(stmt):
    """The argument whose shape ``stmt``'s array result has, if one surely does: the one its
    primitive declares (``shape_of``), or the only array argument of an elementwise primitive."""
    spec = primitive(stmt.prim)
    if spec.shape_of is not None:
        arg = stmt.args[spec.shape_of]
    elif spec.has(Kind.ELEMENTWISE):
        arrays = [a for a in stmt.args if isinstance(a, Var) and a.type.ndim]
        if len(arrays) != 1:
            return None
        arg = arrays[0]
    else:
        return None
    return arg if isinstance(arg, Var) and arg.type.ndim == stmt.target.type.ndim else None


def _bindings(fn):
    """Var -> how many statements bind it to a new value (in-place updates of its elements
    keep its shape and do not count; a parameter counts as bound once)."""
    counts = {p: 1 for p in fn.params}
    for stmt in walk(fn.body):
        if _updates_in_place(stmt):
            continue
        for var in stmt.writes():
            counts[var] = counts.get(var, 0) + 1
    return counts


def _sweep(block, live, shaped, aliases):
    kept = []
    removed = False
    for stmt in block:
        if isinstance(stmt, (Assign, SetItem, Push, Pop, CustomCall)) and not _is_live(stmt, live, aliases) \
                and not _gives_shape(stmt, shaped, aliases):
            kept.extend(filter(None, [shape_check_for(stmt)]))  # a product a rewrite relied on
            removed = True
            continue
        for inner in stmt.blocks():
            removed |= _sweep(inner, live, shaped, aliases)
        index_read = isinstance(stmt, For) and aliases.find(stmt.index) in live  # read after the loop
        if isinstance(stmt, (For, If)) and not any(_has_code(b) for b in stmt.blocks()) and not index_read:
            removed = True
            continue
        kept.append(stmt)
    block[:] = kept
    return removed


def _has_code(block):
    return any(not isinstance(s, Comment) for s in block)


def eliminate_dead_code(fn):
    """Remove dead statements from ``fn`` in place; returns True if anything was removed."""
    moved = _forward_shape_reads(fn)
    aliases = _Aliases(fn)
    live, shaped = _mark(fn, aliases)
    return _sweep(fn.body, live, shaped, aliases) or moved
