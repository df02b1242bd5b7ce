"""Lengths that vary over a loop: when a fused group may iterate over them, and what it checks.

Shapes are flow-insensitive (``ir/shapes.py``): a variable assigned values of different lengths
(``t = x`` before a loop, ``t = t[:-1]`` in it) has dims standing for all of them, and a
statement in a loop whose result length is unknown gives a new length in each iteration. Such
a dim (``ShapeMap.varies``) means the length of a value as it is where the value is read; the
same symbol on two values proves nothing about their lengths at one point (a name bound before
``t = t[:-1]`` keeps the old length). The invariant that makes a group over such dims legal:

    every extent of the loop is the length of a value as it is where the loop runs, and every
    value the loop reads or computes has, there, the extent the loop gives it.

``length_reads`` checks it for each statement joining a group, in one place:

- a statement giving a widened target a shape other than the one its own rule gives
  (``t = t[:-1]`` recorded as ``t``'s joined dims) does not join: the loop would write the old
  length's points;
- a statement reading a varying length for its shape only (``zeros_like(u)``, the stop of
  ``x[:m]`` with ``m`` a length held from before) does not join: nothing in the loop reads it;
- every array the loop reads from memory (through views) whose axis has a varying length must
  read that axis at the loop index, with no offset, over a dim of the domain: the loop reads
  its extent from one such array (``Extents``), and compares the others' lengths with it at
  run time before it runs (``loops.py``, with the group's other assumptions; the statements as
  they were run otherwise). An array the group moves before its loop cannot be compared there,
  and is not read.

A value the loop computes has, by the statement's rule, the lengths of its operands there; so
every dim of the domain is the length of an array the loop reads, as it is at the loop.
"""
from ..ir.nodes import Assign, Var
from .domains import Access
from .views import read_through


def length_reads(stmt, role, group):
    """The (array, axis) pairs whose run-time lengths the group must compare with its extent
    for ``stmt`` (of ``role``) to join it, or None when ``stmt`` may not join (see the module
    docstring). ``group``: the ``fusion.Group`` so far (before ``stmt``)."""
    shapes, views = group.ctx.shapes, group.ctx.views
    if isinstance(stmt, Assign) and stmt.target.type.ndim:
        recorded = shapes.of(stmt.target)
        if any(shapes.varies(dim) for dim in recorded) and shapes.given(stmt) != recorded:
            return None
    read = {atom for atom, _ in role.reads}
    for atom in stmt.reads():
        if not isinstance(atom, Var) or atom in group.assigned:
            continue
        if atom.type.ndim == 0:
            length = shapes.length(atom)
            if length is not None and shapes.varies(length):
                return None
        elif any(shapes.varies(dim) for dim in shapes.of(atom)) \
                and read_through(views, atom, Access.identity(atom.type.ndim))[0] not in read:
            return None  # read for its shape only
    moved = {s.target for s in group.moved if isinstance(s, Assign)}
    checks = []
    for atom, access in role.reads:
        if atom in group.assigned:
            continue
        for axis, dim in enumerate(shapes.of(atom)):
            if not shapes.varies(dim):
                continue
            follows = access.axes[axis]
            if atom in moved or follows is None or access.offsets[axis] != 0 or role.domain[follows] != dim:
                return None
            if (atom, axis) not in checks:
                checks.append((atom, axis))
    return checks
