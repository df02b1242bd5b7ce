"""A loop of the backward sweep is skipped when every cotangent it receives is zero.

A running minimum, a branch that picks one value of many, a loop whose result is masked: in
the backward sweep most iterations of the loop around such code receive a zero cotangent, and
the inner loop they run computes zero contributions with the full cost of the forward's work
(k-means' cost: of the ten centres, one per point gets a nonzero cotangent). A vector-Jacobian
product is linear in the cotangent, so a loop of the backward sweep whose incoming cotangents
are all zero adds nothing, and is run only when one of them is not:

    if bdistance != 0.0:                          # cotangents_nonzero(bdistance)
        # (skipped when the cotangents it receives are zero: it would add only zeros)
        for d in range(n_d - 1, -1, -1):
            difference = points[i, d] - centres[j, d]
            bdifference = 2.0 * difference * bdistance
            bcentres[j, d] += -bdifference
            bpoints[i, d] += bdifference

The invariant that makes the skip legal, checked here only (``_SkipCheck.guard``): when the
loop's incoming cotangents are zero, running the loop changes nothing that is read after it.
Its incoming values are the variables it may read before writing them (``_entry_values``);
the cotangents among them are the ones the sweep made (not variables of the primal function:
adjoints, handed-on cotangents, rule temporaries), and the guard tests all of those. It holds
when

- the loop's statements are assignments of primitives (computations, never run-time checks),
  element writes, loops and branches: no tape push or pop, no custom Function call, nothing
  that restores a saved value;
- each incoming value the sweep made is a float scalar (in the guard), an integer or bool
  (trip counts and recorded conditions: cotangents are floats), or an array the loop only
  accumulates into (``bx[i] += v``, ``bx += v``): an array cotangent read for its values is
  not tested by a scalar guard, and such a loop is never skipped;
- each variable the loop writes that is live after it (read before being assigned again,
  in the rest of the sweep, a later iteration of a loop around it, or the results) is an
  adjoint array it only accumulates into, or an adjoint scalar in the guard: with zero
  cotangents the first receives zeros, and the second, linear in the cotangents, ends at the
  zero it started from; every other variable it writes (recomputed primal values, local
  cotangents, the loop's index) is dead after the loop;
- a plain element write goes into an array the loop makes itself, in the same iteration;
- the guard reads only variables assigned on every path to the loop.

Values differ from running the loop only where a skipped iteration would multiply a zero
cotangent by an infinite or NaN primal value (0 * inf): the skip gives the 0 that linearity
asks for (as the zero-safe products of ``docs/language.md``), and signed zeros may differ.

The guard is a fact about values, not about derivatives: a derivative of a function with
guards (``hessian``, ``jvp`` of a gradient, ``grad`` of a gradient, ``vmap``) needs the loop's
tangents and cotangents also where the cotangent is zero at the point (d/dx of ``x * g(y)``'s
cotangent of ``g`` at x = 0 is not 0). Every transform therefore starts from
``without_zero_skips(fn)``, which runs each guarded loop unconditionally again.
"""
from ..ir.clone import copy_function
from ..ir.nodes import AccumItem, Assign, Comment, CustomCall, For, If, SetItem, Var, While, const, walk
from ..ir.primitives import Kind, primitive
from ..ir.types import BOOL, FLOAT32, FLOAT64, Type

GUARD = "cotangents_nonzero"  # the primitive of the guard's condition
SKIP_COMMENT = "(skipped when the cotangents it receives are zero: it would add only zeros)"
_PLAIN_STATEMENTS = (Assign, SetItem, AccumItem, If, For, While, Comment)


def guard_zero_cotangent_loops(before, backward, after, results, primal_vars, adjoints, namer):
    """Put each loop of ``backward`` (the sweep's statements, rewritten in place) that may be
    skipped behind a test of its incoming cotangents. ``before``: the statements ahead of the
    sweep (prologue and forward sweep), ``after``: those after it (the gradients), ``results``:
    the function's results; ``primal_vars``: the primal function's variables; ``adjoints``:
    the adjoint variables of the sweep. Returns the number of loops guarded."""
    live_after = {}
    _live_in(backward + after, {a for a in results if isinstance(a, Var)}, live_after)
    assigned = {}
    _assigned_before(before + backward, set(), assigned)
    check = _SkipCheck(primal_vars, set(adjoints))
    guards = [(block, loop, guard) for block, loop in _loops_in(backward)
              for guard in [check.guard(loop, live_after[id(loop)], assigned[id(loop)])] if guard]
    for block, loop, guard in guards:
        condition = Var(namer.fresh("_nonzero"), Type(BOOL, 0), is_temp=True)
        at = next(k for k, stmt in enumerate(block) if stmt is loop)
        block[at:at + 1] = [Assign(condition, GUARD, guard, loc=loop.loc),
                            If(condition, [Comment(SKIP_COMMENT), loop], [], loop.loc)]
    return len(guards)


def without_zero_skips(fn):
    """``fn`` with every guarded loop run unconditionally (a copy; ``fn`` itself if it has no
    guard): what a transform differentiating ``fn`` starts from (see the module docstring)."""
    if not any(isinstance(s, Assign) and s.prim == GUARD for s in walk(fn.body)):
        return fn
    copy = copy_function(fn)
    conditions = set()
    for stmt in walk(copy.body):
        if isinstance(stmt, Assign) and stmt.prim == GUARD:
            conditions.add(stmt.target)
            stmt.prim, stmt.args, stmt.params = "copy", [const(True)], {}
    _unwrap(copy.body, conditions)
    return copy


def _unwrap(block, conditions):
    """Replace, in place, each ``if <guard>: loop`` in ``block`` and below by the loop."""
    k = 0
    while k < len(block):
        stmt = block[k]
        for nested in stmt.blocks():
            _unwrap(nested, conditions)
        if isinstance(stmt, If) and stmt.cond in conditions and not stmt.orelse:
            block[k:k + 1] = stmt.body
            k += len(stmt.body)
        else:
            k += 1


def _loops_in(block):
    """(block, loop) for each ``for`` loop in ``block`` and below (custom calls excluded)."""
    for stmt in block:
        if isinstance(stmt, For):
            yield block, stmt
        if not isinstance(stmt, CustomCall):
            for nested in stmt.blocks():
                yield from _loops_in(nested)


class _SkipCheck:
    """Whether a backward loop may be skipped on zero cotangents, and its guard."""

    def __init__(self, primal_vars, adjoints):
        self.primal_vars, self.adjoints = primal_vars, adjoints

    def guard(self, loop, live_after, assigned_before):
        """The variables the guard tests (sorted by name), or None if the loop must run."""
        statements = list(walk(loop.body))
        if not all(isinstance(s, _PLAIN_STATEMENTS) for s in statements):
            return None
        if any(isinstance(s, Assign) and primitive(s.prim).has(Kind.CHECK) for s in statements):
            return None
        accumulated = {v for v in _written(statements) if _only_accumulated(v, statements)}
        guard = set()
        for var in _entry_values(loop):
            if var in self.primal_vars or var in accumulated:
                continue
            if var.type.ndim:
                return None
            if var.type.dtype not in (FLOAT64, FLOAT32):
                continue  # a trip count or a recorded condition: bookkeeping, never a cotangent
            if var not in assigned_before:
                return None
            guard.add(var)
        for var in _written(statements) | {loop.index}:
            if var in live_after and not (var in self.adjoints and (var in accumulated or var in guard)):
                return None
        if accumulated & self.primal_vars or not self._element_writes_are_local(loop, statements):
            return None
        return sorted(guard, key=lambda v: (v.name, v.uid)) or None

    @staticmethod
    def _element_writes_are_local(loop, statements):
        """Whether each plain element write goes into an array the loop's body made (every
        plain assignment of it there is a fresh array) and does not read on entry."""
        entry = _entry_values(loop)
        for s in statements:
            if isinstance(s, SetItem) and not isinstance(s, AccumItem):
                makers = [t for t in statements if isinstance(t, Assign) and t.target is s.array]
                if (s.array in entry or not makers
                        or not all(not t.inplace and primitive(t.prim).has(Kind.FRESH) for t in makers)):
                    return False
        return True


def _written(statements):
    """The variables the statements assign or write into (element writes included)."""
    return {w for s in statements for w in s.writes() if isinstance(w, Var)}


def _only_accumulated(var, statements):
    """Whether the statements touch the array ``var`` only to add into it: as the array of an
    ``AccumItem`` or the target of an in-place addition ``var += v``."""
    if not var.type.ndim:
        return False
    touched = False
    for s in statements:
        if isinstance(s, AccumItem) and s.array is var:
            touched = True
            if var is s.value or var in s.index_args:
                return False
        elif isinstance(s, Assign) and s.target is var:
            if not (s.inplace and s.prim == "add" and s.args[0] is var and var not in s.args[1:]):
                return False
            touched = True
        elif var in s.reads():
            return False
    return touched


def _entry_values(loop):
    """The variables whose values on entry ``loop`` may read: read in its body before being
    assigned in the same iteration, or assigned only in later statements of the body (then
    the first iteration reads the value from before the loop)."""
    head = set()
    while True:
        new = _live_in(loop.body, head, {}) - {loop.index}
        if new <= head:
            return head
        head |= new


# -- liveness and definite assignment over structured IR ------------------------------------

def _reads(stmt):
    return {a for a in stmt.reads() if isinstance(a, Var)}


def _live_in(block, live, live_after):
    """The variables live before ``block`` given those live after it; records, for each ``for``
    loop inside, the variables live after it (``live_after[id(loop)]``)."""
    live = set(live)
    for stmt in reversed(block):
        live = _live_before(stmt, live, live_after)
    return live


def _live_before(stmt, live, live_after):
    if isinstance(stmt, For):
        live_after[id(stmt)] = live_after.get(id(stmt), frozenset()) | live
        head = set(live)  # live at the loop's test: leave, or run the body and test again
        while True:
            new = live | (_live_in(stmt.body, head, live_after) - {stmt.index})
            if new <= head:
                return head | _reads(stmt)
            head |= new
    if isinstance(stmt, While):  # while True: cond_body; if not cond: break; body
        head = set()
        while True:
            new = _live_in(stmt.cond_body, live | {stmt.cond} | _live_in(stmt.body, head, live_after), live_after)
            if new <= head:
                return head
            head |= new
    if isinstance(stmt, If):
        return (_live_in(stmt.body, live, live_after) | _live_in(stmt.orelse, live, live_after)
                | _reads(stmt))
    if isinstance(stmt, CustomCall):
        return live | {a for s in [stmt, *walk(stmt.forward)] for a in _reads(s)}
    if isinstance(stmt, Assign) and not stmt.inplace:
        return (live - {stmt.target}) | _reads(stmt)
    if isinstance(stmt, (Assign, SetItem)):  # in place: the old value is read
        return live | _reads(stmt) | set(stmt.writes())
    return (live - set(stmt.writes())) | _reads(stmt)  # Pop, Push, Comment


def _assigned_before(block, assigned, at):
    """The variables assigned on every path through ``block`` after ``assigned``; records, for
    each ``for`` loop inside, those assigned on every path to it (``at[id(loop)]``)."""
    assigned = set(assigned)
    for stmt in block:
        if isinstance(stmt, For):
            at[id(stmt)] = frozenset(assigned)
            _assigned_before(stmt.body, assigned | {stmt.index}, at)
        elif isinstance(stmt, While):
            assigned = _assigned_before(stmt.cond_body, assigned, at)
            _assigned_before(stmt.body, assigned, at)
        elif isinstance(stmt, If):
            assigned |= _assigned_before(stmt.body, assigned, at) & _assigned_before(stmt.orelse, assigned, at)
        elif isinstance(stmt, CustomCall):
            assigned |= set(stmt.outputs)
        else:
            assigned |= {w for w in stmt.writes() if isinstance(w, Var)}
    return assigned
