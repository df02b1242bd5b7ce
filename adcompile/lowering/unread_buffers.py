"""Buffers that fused loops write and nothing reads are not made.

A fused loop stores each value of its group that is read after it. Which values those are is
decided when the group is written, from the reads in the whole function; a later group may then
read the value's shape only, through its own loop (reverse mode's ``rt.unbroadcast(g, x)``
becomes ``g`` where the lengths are equal), and the unfused statements reading it leave the
function with its fallbacks (``deferred_fallbacks.py``). What is left is an ``np.empty`` and the
loop's element stores into it:

    _t_62 = np.empty((n,), dtype=np.float64)
    for i1 in range(n):
        _t_62_i = _t_8[i1] * cos_theta
        ...
        _t_62[i1] = _t_62_i          # read by nothing

The invariant that makes dropping them legal, checked here only: the array is given values by
``np.empty`` only, and every statement reading the variable is an element write into it (no
view, alias, shape read, tape, call or result sees it). Then no value stored in it can reach
anything the function computes or returns.
"""
from ..ir.nodes import AccumItem, Assign, SetItem, Var, walk


def drop_unread_buffers(fn):
    """Remove, in place, the buffers of ``fn`` that nothing reads (see the module docstring) and
    the element writes into them; the number of buffers removed."""
    unread = _unread_buffers(fn)
    if unread:
        _remove(fn.body, unread)
    return len(unread)


def _unread_buffers(fn):
    made_by_empty, disqualified = set(), set(fn.params)
    disqualified |= {atom for atom in fn.results if isinstance(atom, Var)}
    for stmt in walk(fn.body):
        for var in stmt.writes():
            if isinstance(stmt, Assign) and stmt.prim == "empty" and not stmt.inplace and var.type.ndim > 0:
                made_by_empty.add(var)
            elif not _writes_elements_of(stmt, var):
                disqualified.add(var)
        for atom in stmt.reads():
            if isinstance(atom, Var) and not _writes_elements_of(stmt, atom):
                disqualified.add(atom)
    return made_by_empty - disqualified


def _writes_elements_of(stmt, var):
    """Whether ``stmt`` writes elements of ``var`` and reads it for nothing else."""
    return (isinstance(stmt, SetItem) and not isinstance(stmt, AccumItem) and stmt.array is var
            and not any(atom is var for atom in [stmt.value] + stmt.index_args))


def _remove(block, unread):
    block[:] = [stmt for stmt in block if not _makes_or_writes(stmt, unread)]
    for stmt in block:
        for inner in stmt.blocks():
            _remove(inner, unread)


def _makes_or_writes(stmt, unread):
    if isinstance(stmt, SetItem):
        return stmt.array in unread
    return isinstance(stmt, Assign) and stmt.target in unread
