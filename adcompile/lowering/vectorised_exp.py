"""Exponentials in loops LLVM vectorises call adcompile's exp (``rt.exp``); others, numba's.

numba compiles ``np.exp`` of a float to a call of the C library's ``exp``, which keeps a loop
scalar. ``rt.exp`` (``runtime/kernels/elementary_numba.py``) is the same function in plain
arithmetic, which LLVM inlines and vectorises: in a loop that vectorises it costs a quarter of
the C library's call (the fused loop of a logistic regression's gradient: 42 -> 11 us for
10,000 elements). In a loop that stays scalar it costs more than the call (its arithmetic is
longer than the C library's table lookup: about 10 ns against 4 per element), so it is used
only where the loop is expected to vectorise, and on arrays (a ufunc whose loop vectorises).
Code run as Python keeps ``np.exp`` everywhere (this pass runs on code for numba only).

A loop is expected to vectorise (``_vectorises``, the one place that decides) when it is
innermost and its body is straight-line code of

* primitives numba lowers to inline arithmetic (kind ``INLINE_ARITHMETIC``; ``exp`` is, as
  ``rt.exp``), no other call,
* loads and element writes whose indices are the loop's index or do not change in the loop,
  the loop's index last (consecutive elements of a C-ordered array) and among a write's
  indices (no two iterations write one element),

and no value is carried from one iteration to the next (a scalar accumulator, a reduction,
keeps a loop scalar unless its additions may be reassociated, which numba does not allow
here). The choice changes speed only: both are the exponential to within 0.7 units in the
last place (the C library's to 0.51, ``rt.exp`` to 0.69).
"""
from ..ir.clone import copy_function
from ..ir.nodes import Assign, Comment, For, SetItem, Var, walk
from ..ir.primitives import Kind, has_kind


def use_vectorised_exponentials(fn):
    """``fn``, or a copy of it, whose ``exp`` statements of arrays, and of scalars in loops that
    vectorise, are marked ``vectorised`` (the template of ``exp`` then emits ``rt.exp``)."""
    in_loops = {id(stmt) for loop in walk(fn.body) if isinstance(loop, For) and _vectorises(loop) for stmt in loop.body}
    marks = {id(stmt) for stmt in walk(fn.body) if isinstance(stmt, Assign) and stmt.prim == "exp"
             and (stmt.target.type.ndim or id(stmt) in in_loops)}
    if not marks:
        return fn
    copy = copy_function(fn)
    for original, copied in zip(walk(fn.body), walk(copy.body)):
        if id(original) in marks:
            copied.params = {**copied.params, "vectorised": True}
    return copy


def _vectorises(loop):
    """Whether ``loop`` is expected to vectorise (see the module docstring). A guess about
    speed only: either answer computes the same exponentials."""
    scalars = {stmt.target for stmt in loop.body if isinstance(stmt, Assign)}
    index = loop.index

    def fixed_or_index(atom):
        return not isinstance(atom, Var) or atom is index or atom not in scalars

    def contiguous(indices):  # the loop's index, if there, is the last: consecutive elements
        return all(map(fixed_or_index, indices)) and (index not in indices or indices[-1] is index)

    assigned = set()
    for stmt in loop.body:
        if isinstance(stmt, Comment):
            continue
        if isinstance(stmt, Assign):
            if stmt.inplace or stmt.target.type.ndim:
                return False
            if stmt.prim == "getitem":
                if any(item[0] != "int" for item in stmt.params["items"]) or not contiguous(stmt.args[1:]):
                    return False
            elif not has_kind(stmt.prim, Kind.INLINE_ARITHMETIC):
                return False
            reads = stmt.args
        elif isinstance(stmt, SetItem):  # and AccumItem
            if any(item[0] != "int" for item in stmt.items) or index not in stmt.index_args \
                    or not contiguous(stmt.index_args):
                return False
            reads = [stmt.value]
        else:
            return False  # a nested loop or branch, a tape push, a custom call
        if any(isinstance(a, Var) and a in scalars and a not in assigned for a in reads):
            return False  # read before this iteration assigns it: carried from the previous one
        if isinstance(stmt, Assign):
            assigned.add(stmt.target)
    return True
