"""Which values of a loop body reverse mode recomputes in the backward sweep instead of saving.

The invariant that makes recomputing legal (stated here once; ``taping.py`` and ``sweep.py``
rely on it): when the backward sweep undoes a statement of a loop's iteration, every primal
variable it reads holds the value that variable had at that point of the forward sweep's
iteration, and every array the same contents. Overwritten values are put back (saved and
restored, or recomputed), and so are elements written in place. In particular, at the start
of a backward iteration the state is the one the forward iteration ended with. So a statement
of the body whose operands are
- constants, or the loop's index (the backward loop binds it to the same values),
- values recomputed before it in the same iteration,
- variables that nothing from the statement to the end of the body rebinds (the same in
  every iteration if the loop never rebinds them): their value at the end of the iteration
  is the one the statement read; for an array, nothing in the body may write into it either
  (an argument read for its shape only excepted), and one the body rebinds is read only by
  an array target (``_settled_before`` says why),
computes at the start of the backward iteration exactly the value it computed in the forward
one: recomputing it there is restoring it. For the same reason a nested loop whose body does
not rebind its bounds has its trip count computed again by its backward, not saved at every
entry (``bounds_kept_by_body``).

A recomputed statement must also be cheap and have no effect but its target:
- a scalar of a primitive declared ``RECOMPUTABLE`` (arithmetic, ``x[i]``, ``-k``, a shape),
  or a branch whose arms only assign such scalars (``c if c < k else c + 1``), its condition
  an operand as above;
- an array view (``rows[k]``, ``v[0:3]``, an alias): the saved view and the recomputed one
  are the same memory, since the base variable is the same array in both sweeps, so their
  contents agree whatever was written into that memory; recomputing allocates nothing;
- an array result of cheap elementwise arithmetic (``RECOMPUTABLE`` and ``OWNED_RESULT``: a new
  array of the same shape): no dearer than the forward's own operation, and cheaper than
  keeping every iteration's array alive on a tape (a reference pushed onto a list, freed only
  by the backward sweep), which costs more than the arithmetic for the small arrays of a loop
  body. Nothing in the body may write into it (the recomputed array would lack those writes
  where the backward of later statements reads it). A scalar is not recomputed from such an
  array: saving the scalar is a cheap store, where recomputing it would allocate the array
  again in every backward iteration only to read an element, unless the backward of the body
  reads that array anyway (``x = a / t`` reads ``x``): then the backward iteration recomputes it
  whatever the scalars do, and reading an element of it is cheaper than saving and restoring one.
Its target is assigned once in the function: a temporary of the compiler, or a user's variable
local to one iteration (every read of it follows its assignment in the same iteration, and it
is not a result), so no read anywhere expects a value of another iteration.
"""
from ...ir.memory import is_view
from ...ir.nodes import Assign, Const, For, If, SetItem, Var, walk
from ...ir.primitives import Kind, has_kind, primitive


def _is_cheap(stmt):
    if not (isinstance(stmt, Assign) and has_kind(stmt.prim, Kind.RECOMPUTABLE) and not stmt.inplace):
        return False
    return stmt.target.type.ndim == 0 or is_view(stmt) or has_kind(stmt.prim, Kind.OWNED_RESULT)


def _local_to_iteration(var, body, position, function):
    """Whether every read of ``var`` in ``function`` is in ``body`` after ``body[position]``."""
    if any(var is result for result in function.results):
        return False
    later = {id(s) for s in walk(body[position + 1:])}
    return all(id(s) in later for s in walk(function.body) if var in s.reads())


def _settled_before(var, body, position, written_into, shares_memory, array_target):
    """Whether ``var``'s value at the end of an iteration is the one ``body[position]`` reads:
    nothing from ``body[position]`` on (nested blocks included) rebinds it, and, if an array,
    nothing in ``body`` writes into it (``written_into``). An array that the body rebinds is
    read back only for an array target (``array_target``): the backward then keeps that array
    instead of the target, no dearer; a scalar target's own save is a cheap store, which
    keeping an array per iteration instead would not repay."""
    if any(var in s.writes() for s in walk(body[position:])):
        return False
    if not var.type.ndim:
        return True
    if shares_memory(var) & written_into:
        return False
    return array_target or not any(var in s.writes() for s in walk(body))


def _written_into(statements):
    """The arrays ``statements`` write elements of (``x[i] = v``, ``x += y`` in place)."""
    return ({s.array for s in statements if isinstance(s, SetItem)}
            | {s.target for s in statements if isinstance(s, Assign) and s.inplace})


def recomputable_statements(loop, function, scopes, shares_memory, read_by_backward=lambda var: False):
    """The statements of ``loop``'s body (directly in it, in order) whose targets the
    backward sweep recomputes at the start of each backward iteration (see the invariant
    above) instead of saving them in the forward sweep: assignments, and branches choosing
    between such assignments of scalars (``c if c < k else c + 1``). ``shares_memory(var)``:
    the variables that may share memory with the array ``var``; ``read_by_backward(var)``:
    whether the backward of a statement of the body reads ``var``'s value (not counting
    recomputations)."""
    body = loop.body
    written_into = _written_into(list(walk(body)))
    index = loop.index if isinstance(loop, For) else None
    chosen, targets = [], set()

    allocated = set()  # array targets recomputed by allocating: scalars are not recomputed from them

    def ready(stmt, position, args, shape_only=()):  # args of the Assign stmt (or of its branch)
        return all(isinstance(a, Const) or a is index
                   or (a in targets and (a not in allocated or stmt.target.type.ndim > 0 or read_by_backward(a)))
                   or (a.type.dtype != "none"
                       and _settled_before(a, body, position, set() if k in shape_only else written_into,
                                           shares_memory, stmt.target.type.ndim > 0))
                   for k, a in enumerate(args))

    def own_target(stmt, position, defs_inside):
        info = scopes.info.get(stmt.target)
        if info is None or {id(d) for d, _, _ in info.defs} - defs_inside:
            return False
        return stmt.target.is_temp or _local_to_iteration(stmt.target, body, position, function)

    for position, stmt in enumerate(body):
        if isinstance(stmt, If):
            arms = [s for s in walk([stmt]) if s is not stmt]
            inside = {id(s) for s in arms}
            arm_targets = {s.target for s in arms if isinstance(s, Assign)}
            if arms and all(_is_cheap(s) and s.target.type.ndim == 0 for s in arms) and ready(
                    arms[0], position, [stmt.cond]) and all(
                    own_target(s, position, inside) and ready(s, position, [a for a in s.args if a not in arm_targets])
                    for s in arms):
                chosen.append(stmt)
                targets.update(arm_targets)
            continue
        if not _is_cheap(stmt) or not own_target(stmt, position, {id(stmt)}):
            continue
        if stmt.target.type.ndim and not is_view(stmt) and shares_memory(stmt.target) & written_into:
            continue  # written into after it is made: recomputing would lose those writes
        if ready(stmt, position, stmt.args, primitive(stmt.prim).shape_only):
            chosen.append(stmt)
            targets.add(stmt.target)
            if stmt.target.type.ndim and not is_view(stmt):
                allocated.add(stmt.target)
    return chosen


def recomputed_targets(stmt):
    """The variables a statement ``recomputable_statements`` chose assigns."""
    return [s.target for s in walk([stmt]) if isinstance(s, Assign)]


def copy_statement(stmt):
    """A copy of a chosen statement for the backward sweep (a branch copied with its arms)."""
    if isinstance(stmt, If):
        return If(stmt.cond, [copy_statement(s) for s in stmt.body], [copy_statement(s) for s in stmt.orelse],
                  stmt.loc)
    return Assign(stmt.target, stmt.prim, list(stmt.args), dict(stmt.params), stmt.loc)


def bounds_kept_by_body(loop):
    """Whether ``loop``'s body rebinds none of its bounds (``range(start, stop, step)``): after
    the loop they hold the values the loop started with, so its backward, seeing the state
    the forward left after the loop, can compute its trip count from them again."""
    written = {v for s in walk(loop.body) for v in s.writes()}
    return not any(isinstance(a, Var) and a in written for a in (loop.start, loop.stop, loop.step))
