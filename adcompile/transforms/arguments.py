"""Derived functions treat their array arguments as values: an argument that the function
writes into in place is copied on entry, so the caller's array is left as it was, also when
the derived function fails partway (the primal function keeps Python's semantics and writes
into the caller's array).

The exception is a function's *state parameters* (``state_params(fn)``): arrays whose in-place
writes are an effect every function derived from it keeps, in the caller's array (a module's
running statistics, updated by the gradient that a training step computes). They are not
copied, and dead-code elimination keeps the writes into them. A transform building a derived
Function passes them on with ``inherit_state_params``."""
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


def state_params(fn):
    """The parameters of ``fn`` whose in-place writes the caller sees in derived functions too."""
    return getattr(fn, "state_params", ())


def inherit_state_params(derived, fn):
    """Give the Function ``derived`` (made from ``fn``, with the same parameter Vars) the state
    parameters of ``fn``; returns ``derived``."""
    kept = [param for param in state_params(fn) if param in derived.params]
    if kept:
        derived.state_params = kept
    return derived


def copy_written_arguments(fn, b):
    """Emit with builder ``b`` a copy of each parameter of ``fn`` written in place (unless
    ``fn`` already starts by copying it, or it is a state parameter)."""
    copied = {s.target for s in fn.body
              if isinstance(s, Assign) and s.prim == "copy" and s.args == [s.target]}
    copied |= set(state_params(fn))
    for param in written_arguments(fn):
        if param not in copied:
            b.emit("copy", [param], target=param)
