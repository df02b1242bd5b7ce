"""Which values of a loop body reverse mode recomputes in the backward sweep instead of saving.

The invariant that makes recomputing legal (stated here once; ``taping.py`` and ``sweep.py``
rely on it): when the backward sweep undoes a statement of a loop's iteration, every primal
variable it reads holds the value that variable had at that point of the forward sweep's
iteration. Overwritten values are put back (saved and restored, or recomputed), and a value
the loop never rebinds is the same in every iteration. So a statement of the body whose
operands are constants, the loop's index (which the backward loop binds to the same values),
variables the loop never rebinds, or values recomputed before it in the same iteration,
computes in the backward iteration exactly the value it computed in the forward one:
recomputing it at the start of each backward iteration is restoring it.

A recomputed statement must also be cheap and have no effect but its target:
- a scalar of a primitive declared ``RECOMPUTABLE`` (arithmetic, ``x[i]``, ``-k``, a shape);
- or an array view (``rows[k]``, ``v[0:3]``, an alias): the saved view and the recomputed one
  are the same memory, since the base variable is the same array in both sweeps, so their
  contents agree whatever was written into that memory; recomputing allocates nothing.
Its target is assigned once in the function: a temporary of the compiler, or a user's variable
local to one iteration (every read of it follows its assignment in the same iteration, and it
is not a result), so no read anywhere expects a value of another iteration.
"""
from ...ir.memory import is_view
from ...ir.nodes import Assign, Const, For, walk
from ...ir.primitives import Kind, has_kind


def _is_cheap(stmt):
    if not (isinstance(stmt, Assign) and has_kind(stmt.prim, Kind.RECOMPUTABLE) and not stmt.inplace):
        return False
    return stmt.target.type.ndim == 0 or is_view(stmt)


def _local_to_iteration(var, body, position, function):
    """Whether every read of ``var`` in ``function`` is in ``body`` after ``body[position]``."""
    if any(var is result for result in function.results):
        return False
    later = {id(s) for s in walk(body[position + 1:])}
    return all(id(s) in later for s in walk(function.body) if var in s.reads())


def recomputable_statements(loop, function, scopes):
    """The statements of ``loop``'s body (directly in it, in order) whose targets the
    backward sweep recomputes at the start of each backward iteration (see the invariant
    above) instead of saving them in the forward sweep."""
    written = {v for s in walk(loop.body) for v in s.writes()}
    index = loop.index if isinstance(loop, For) else None
    chosen, targets = [], set()
    for position, stmt in enumerate(loop.body):
        if not _is_cheap(stmt):
            continue
        info = scopes.info.get(stmt.target)
        if info is None or len(info.defs) != 1:
            continue
        if not (stmt.target.is_temp or _local_to_iteration(stmt.target, loop.body, position, function)):
            continue
        if all(isinstance(a, Const) or a is index or a in targets
               or (a not in written and a.type.dtype != "none") for a in stmt.args):
            chosen.append(stmt)
            targets.add(stmt.target)
    return chosen
