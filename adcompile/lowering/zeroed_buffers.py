"""An iteration's array of zeros that the iteration leaves all zero needs no fill in the next.

Reverse mode reads each element of an array the forward loop filled and sets it back to zero:
the backward of ``result[r, c] = matrix[r + 1, c]`` over ``r, c`` is

    for r in range(n - 1, -1, -1):
        for c in range(n - 1, -1, -1):
            g = bresult[r, c]
            bresult[r, c] = 0.0          # the write killed the adjoint
            bmatrix[r + 1, c] += g

so when those loops run over every element of ``bresult``, the array is all zero when they end.
``bresult`` is an iteration's buffer (``iteration_buffers.py``), zeroed at the start of each
iteration (``bresult[:, :] = 0.0``); that fill then only writes zeros over zeros. A flag records
whether the last run of the loops covered the array, and the fill runs only when it did not:

    _zeroed = False                      # before the outermost loop, with the empty array
    ...
        if bresult.shape[0] != n0 or bresult.shape[1] != n1:
            bresult = np.zeros((n0, n1))
        elif not _zeroed:
            bresult[:, :] = 0.0
        ...
        _zeroed = start_r == bresult.shape[0] - 1          # before the loop over r
        for r in range(start_r, -1, -1):
            _zeroed = _zeroed and start_c == bresult.shape[1] - 1   # before each loop over c
            for c in range(start_c, -1, -1):
                ...  bresult[r, c] = 0.0 ...

The invariant that makes skipping the fill legal, checked here only (``zeroing_nest``): when the
fill's statement runs with the flag true, every element of the array is zero. It holds when

- the zeroing loops are a nest run once in each iteration of the buffer's loop, after the
  buffer's statement, one loop per axis, each loop's body holding the next loop (the innermost
  the write) directly; the write ``b[i0, i1, ...] = 0`` indexes axis ``k`` by the index of the
  ``k``-th loop alone and is a statement of the innermost body, run once per iteration of it;
- each loop runs over exactly the axis' positions: ``range(0, length)`` or
  ``range(length - 1, -1, -1)`` of the array's length on that axis, as the flag checks at run
  time with the bounds the loop is about to use (a loop with no iteration covers an axis of
  length 0); so when the flag is true every position was written 0.0, none twice by different
  means;
- nothing else writes the array's memory after the zeroing write, in the iteration or before
  the next fill: every statement writing the array or another name of its memory (an element
  write, an in-place update) in the whole function is a statement of the iteration between the
  buffer's statement and the nest, or the zeroing write itself; the array is given a value by
  the buffer's statement only (``iteration_buffers.py`` requires it), so when the fill runs it
  is the array the nest zeroed, with the same lengths (the fill runs only when they are those
  wanted);
- the flag is written by the nest's checks only, after a false value before the outermost loop.
"""
from ..ir.nodes import Assign, For, SetItem, Var, const, walk
from ..ir.types import BOOL, INT64, Type


class ZeroingNest:
    """The loops of a nest that writes 0.0 at every position of ``target`` (one loop per
    axis, outermost first); ``holder``: the list holding the outermost loop."""

    def __init__(self, target, loops, holder):
        self.target, self.loops, self.holder = target, loops, holder

    def insert_coverage_checks(self, flag, namer):
        """Before each loop of the nest, ``flag`` becomes whether every loop so far runs over
        exactly its axis' positions (ands with the outer loops' answer)."""
        for axis, loop in enumerate(self.loops):
            block = self.holder if axis == 0 else self.loops[axis - 1].body
            checks = self._covers_axis(axis, loop, namer)
            covered = checks[-1].target
            if axis == 0:
                checks.append(Assign(flag, "alias", [covered], loc=loop.loc))
            else:
                checks.append(Assign(flag, "and", [flag, covered], loc=loop.loc))
            at = next(k for k, stmt in enumerate(block) if stmt is loop)
            block[at:at] = checks

    def _covers_axis(self, axis, loop, namer):
        """Statements whose last assigns whether ``loop``, ascending from 0 or descending to
        -1, runs over exactly the positions of ``target``'s ``axis``."""
        length = Var(namer.fresh("_length"), Type(INT64, 0), is_temp=True)
        covered = Var(namer.fresh("_covers"), Type(BOOL, 0), is_temp=True)
        stmts = [Assign(length, "dim", [self.target], {"axis": axis}, loop.loc)]
        if loop.step.value == 1:
            stmts.append(Assign(covered, "eq", [loop.stop, length], loc=loop.loc))
        else:
            last = Var(namer.fresh("_last"), Type(INT64, 0), is_temp=True)
            stmts += [Assign(last, "sub", [length, const(1)], loc=loop.loc),
                      Assign(covered, "eq", [loop.start, last], loc=loop.loc)]
        return stmts


def zeroing_nest(fn, sequence, index, target, sharers):
    """The ``ZeroingNest`` leaving ``target`` all zero at the end of each iteration of a loop
    whose once-per-iteration statements are ``sequence`` (pairs of statement and holding
    list), ``sequence[index]`` giving ``target`` its value and ``sharers`` being the other names
    of its memory; None when the module docstring's conditions do not all hold. The one place
    that decides it."""
    names = {target} | set(sharers)
    for position in range(len(sequence) - 1, index, -1):
        stmt, holder = sequence[position]
        if not any(_writes_memory_of(s, names) for s in walk([stmt])):
            continue
        nest = _nest_zeroing(stmt, holder, target)
        if nest is None:
            return None
        between = {id(s) for s in walk([s for s, _ in sequence[index + 1:position]])}
        for s in walk(fn.body):
            if not _writes_memory_of(s, names) or id(s) in between:
                continue
            if not any(s is r for r in nest.loops[-1].body) or not _is_zeroing_write(s, target, nest.loops):
                return None  # (the one zeroing write of the innermost body)
        return nest
    return None


def _writes_memory_of(stmt, names):
    """Whether ``stmt`` writes the memory one of ``names`` holds (an element write or an
    in-place update; a plain assignment binds the name to other memory)."""
    if isinstance(stmt, SetItem):
        return stmt.array in names
    return isinstance(stmt, Assign) and stmt.inplace and stmt.target in names


def _nest_zeroing(stmt, holder, target):
    """The nest of ``stmt`` if it is loops over each axis of ``target``, each holding the next
    directly, the innermost body one write of 0.0 at their indices; else None."""
    loops = []
    block = [stmt]
    for _ in range(target.type.ndim):
        inner = [s for s in block if isinstance(s, For)]
        if len(inner) != 1 or not _steps_by_one(inner[0]):
            return None
        loops.append(inner[0])
        block = inner[0].body
    if sum(1 for s in block if _is_zeroing_write(s, target, loops)) != 1:
        return None
    indices = {loop.index for loop in loops}
    if any(index in s.writes() for s in walk([stmt]) if not isinstance(s, For) for index in indices):
        return None  # an index given another value in the body
    return ZeroingNest(target, loops, holder)


def _steps_by_one(loop):
    """``range(0, stop)`` or ``range(start, -1, -1)``: bounds the coverage check can compare."""
    step = loop.step
    if isinstance(step, Var) or step.value not in (1, -1):
        return False
    first_or_end = loop.start if step.value == 1 else loop.stop
    return not isinstance(first_or_end, Var) and first_or_end.value == (0 if step.value == 1 else -1)


def _is_zeroing_write(stmt, target, loops):
    """``target[i0, i1, ...] = 0``, indexed by the loops' indices in order."""
    if type(stmt) is not SetItem or stmt.array is not target or isinstance(stmt.value, Var):
        return False
    if stmt.value.value != 0 or len(stmt.items) != len(loops):
        return False
    return all(item[0] == "int" and item[1] is loop.index for item, loop in zip(stmt.items, loops))
