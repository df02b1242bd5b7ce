"""Arrays that only place another array's elements along more axes, read through that array
inside a fused loop.

``x[:, None, :]``, ``expand_axis(v, 1)`` (a ``keepdims`` result) and
``broadcast_to_shape(v, like)`` (an axis reduction's adjoint; the primitives of Kind.AXIS_VIEW)
hold no element of their own:
a loop reading such a view at a point reads its source at the point's indices on the source's
axes (``x[i, k]``, and index 0 on a length-1 axis that broadcasts). ``find_views`` lists them;
a fused statement reads the source directly, ``drop_unread_views`` removes the views nothing
reads after fusion (``broadcast_to_shape`` would otherwise still fill a new array), and
``sink_views_into_fallbacks`` moves a view that only the unfused statements behind a loop's
length check read into that branch.

A view is read through its source only when neither is assigned twice nor written in place:
then the source still holds the view's elements wherever the view is read.
"""
from dataclasses import dataclass

from ..ir.nodes import Assign, If, Var, walk
from ..ir.primitives import Kind, has_kind
from .domains import Access, is_array_var

@dataclass(frozen=True)
class View:
    """``source`` seen with more axes: ``axes[k]`` is the view axis that source axis k is,
    or None where a length-1 source axis broadcasts along the view axis."""
    source: Var
    axes: tuple


def find_views(fn, shapes, assigns, written_memory):
    """Var -> View for every view in ``fn`` that may be read through its source.
    ``assigns``: assignments per variable (parameters count one)."""
    views = {}
    for stmt in walk(fn.body):
        if not (isinstance(stmt, Assign) and has_kind(stmt.prim, Kind.AXIS_VIEW) and is_array_var(stmt.target)):
            continue
        source, target = stmt.args[0], stmt.target
        if not is_array_var(source) or source.type.dtype != target.type.dtype:
            continue
        if any(assigns.get(v, 0) != 1 or v in written_memory for v in (source, target)):
            continue
        axes = _view_axes(stmt, shapes)
        if axes is not None and axes != tuple(range(target.type.ndim)):
            views[target] = View(source, axes)
    return views


def _view_axes(stmt, shapes):
    source = stmt.args[0]
    if stmt.prim == "expand_axis":
        axis = stmt.params["axis"] % stmt.target.type.ndim
        return tuple(k if k < axis else k + 1 for k in range(source.type.ndim))
    if stmt.prim == "getitem":
        return _inserted_axes(stmt.params["items"], source.type.ndim)
    like = stmt.args[1]
    if not is_array_var(like):
        return None
    dims, into = shapes.of(source), shapes.of(like)
    lead = len(into) - len(dims)
    if lead < 0:
        return None
    axes = []
    for k, dim in enumerate(dims):
        if dim == into[lead + k]:
            axes.append(lead + k)
        elif dim.constant == 1:
            axes.append(None)
        else:
            return None
    return tuple(axes)


def _inserted_axes(items, source_ndim):
    """Per source axis, its axis in ``x[items]`` when ``items`` are whole slices and ``None``s
    only, else None."""
    axes, view_axis = [], 0
    for item in items:
        if item[0] == "none":
            view_axis += 1
        elif item[0] == "slice" and all(part is None for part in item[1:]):
            axes.append(view_axis)
            view_axis += 1
        else:
            return None
    if len(axes) > source_ndim:
        return None
    return tuple(axes) + tuple(range(view_axis, view_axis + source_ndim - len(axes)))


def read_through(views, atom, access):
    """(array, access) reading the element that ``access`` reads of ``atom``, through views."""
    while atom in views:
        view = views[atom]
        atom = view.source
        access = Access(tuple(None if v is None else access.axes[v] for v in view.axes),
                        tuple(0 if v is None else access.offsets[v] for v in view.axes))
    return atom, access


def drop_unread_views(body, views, results):
    """``body`` without the assignments of views that nothing reads (repeated, as views chain)."""
    while True:
        reads = _read_counts(body)
        unread = {v for v in views if not reads.get(v) and v not in results}
        if not _remove_assignments(body, unread):
            return body


def sink_views_into_fallbacks(block, views, fallbacks, results=()):
    """Move each view read only in the unfused branch (``orelse``) of one later ``If`` of
    ``fallbacks`` (ids of the length checks fusion wrote) of its block to that branch's start,
    in every block of ``block``. A view among the function's ``results`` (a residual a split
    vjp returns) is read after the block, so it stays where it is."""
    reads = _read_counts(block)
    for atom in results:
        reads[atom] = reads.get(atom, 0) + 1
    _sink(block, views, fallbacks, reads)
    return block


def _sink(block, views, fallbacks, reads):
    for stmt in block:
        for inner in stmt.blocks():
            _sink(inner, views, fallbacks, reads)
    for position in reversed(range(len(block))):
        stmt = block[position]
        if not (isinstance(stmt, Assign) and stmt.target in views):
            continue
        for later in block[position + 1:]:
            if isinstance(later, If) and id(later) in fallbacks:
                if _read_counts(later.orelse).get(stmt.target, 0) == reads.get(stmt.target, 0) > 0:
                    del block[position]
                    later.orelse.insert(0, stmt)
                    break


def _read_counts(block):
    reads = {}
    for stmt in walk(block):
        for atom in stmt.reads():
            if isinstance(atom, Var):
                reads[atom] = reads.get(atom, 0) + 1
    return reads


def _remove_assignments(block, targets):
    removed = False
    kept = []
    for stmt in block:
        if isinstance(stmt, Assign) and stmt.target in targets:
            removed = True
            continue
        for inner in stmt.blocks():
            removed |= _remove_assignments(inner, targets)
        kept.append(stmt)
    block[:] = kept
    return removed
