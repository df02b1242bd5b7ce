"""Derived functions treat their array arguments as values: an argument that the function
writes into in place is copied on entry, so the caller's array is left as it was, also when
the derived function fails partway (the primal function keeps Python's semantics and writes
into the caller's array)."""
from ..ir.memory import memory_roots
from ..ir.nodes import Assign, SetItem, walk


def written_arguments(fn):
    """The parameters of ``fn`` that it writes into in place (directly or through a view)."""
    roots = memory_roots(fn.body, fn.params)
    written = set()
    for stmt in walk(fn.body, into_custom=False):
        if isinstance(stmt, SetItem):
            written |= roots.get(stmt.array, {stmt.array})
    return [param for param in fn.params if param in written]


def copy_written_arguments(fn, b):
    """Emit with builder ``b`` a copy of each parameter of ``fn`` written in place (unless
    ``fn`` already starts by copying it)."""
    copied = {s.target for s in fn.body
              if isinstance(s, Assign) and s.prim == "copy" and s.args == [s.target]}
    for param in written_arguments(fn):
        if param not in copied:
            b.emit("copy", [param], target=param)
