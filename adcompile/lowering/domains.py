"""Iteration domains of fusable statements, and how each operand is indexed inside a loop nest.

A domain is the shape (a tuple of symbolic dims from ``ir/shapes.py``) that a loop nest runs
over, one loop index per axis. An operand is read at a point of the domain through an access:
per axis of the operand, the loop axis it follows plus a constant offset (``x[1:]`` read at
``i`` is ``x[i + 1]``), or the constant index 0 for a length-1 axis that broadcasts. Extents
are the loop bounds as IR atoms, built from the dims' source expressions
(``x.shape[0] - 1``) or from the shape of an array that exists before the loop.
"""
import ast
from dataclasses import dataclass

from ..ir.nodes import Assign, Const, Var, const
from ..ir.types import I8


@dataclass(frozen=True)
class Access:
    """How an operand is read at a domain point: ``axes[k]`` is the loop axis operand axis k
    follows (None: constant index 0), ``offsets[k]`` the constant added to that index."""
    axes: tuple
    offsets: tuple

    @classmethod
    def identity(cls, ndim):
        return cls(tuple(range(ndim)), (0,) * ndim)

    @property
    def is_identity(self):
        return all(o == 0 for o in self.offsets) and self.axes == tuple(range(len(self.axes)))


def broadcast_access(shapes, atom, domain, same_dim=lambda a, b: a == b):
    """The access reading ``atom`` (whose shape broadcasts against ``domain``, aligned at the
    trailing axes as numpy aligns them), or None when the shapes do not provably broadcast:
    a dim that might be 1 at run time while the domain's is not must not be fused."""
    dims = shapes.of(atom)
    if len(dims) > len(domain):
        return None
    lead = len(domain) - len(dims)
    axes = []
    for k, dim in enumerate(dims):
        if same_dim(dim, domain[lead + k]):
            axes.append(lead + k)
        elif dim.constant == 1:
            axes.append(None)
        else:
            return None
    return Access(tuple(axes), (0,) * len(dims))


def slice_starts(items, atom_of):
    """Per-axis constant starts of an index made of plain slices (``x[1:]``, ``x[:-1, 2:]``)
    with constant non-negative starts and unit steps, or None for any other index. ``atom_of``
    turns an item's part into its atom."""
    starts = []
    for item in items:
        if item[0] != "slice":
            return None
        start, step = atom_of(item[1]), atom_of(item[3])
        if step is not None and not (isinstance(step, Const) and step.value == 1):
            return None
        if start is None:
            starts.append(0)
        elif isinstance(start, Const) and isinstance(start.value, int) and not isinstance(start.value, bool) \
                and start.value >= 0:
            starts.append(start.value)
        else:
            return None
    return tuple(starts)


class Extents:
    """Loop bounds of one domain as atoms, with the statements computing them (run before the
    loop nest). ``bound(axis)`` is the range bound (a negative count runs no iteration);
    ``count(axis)`` is clamped at zero, for allocations and means."""

    def __init__(self, shapes, params, available, builder):
        self.shapes, self.builder = shapes, builder
        self.params = {p.name: p for p in params}
        self.available = available  # arrays that exist before the loop, to ask for their shape
        self.stmts = []
        self._bounds, self._counts = {}, {}

    def bound(self, dim):
        if dim not in self._bounds:
            self._bounds[dim] = self._from_source(dim) or self._from_array(dim)
        return self._bounds[dim]

    def count(self, dim):
        bound = self.bound(dim)
        if bound is None or isinstance(bound, Const) or dim.is_nonnegative:
            return bound
        if dim not in self._counts:
            self._counts[dim] = self._emit("maximum", [bound, const(0)], "n")
        return self._counts[dim]

    def provide(self, dim, view, axis):
        """``dim`` is the length of ``axis`` of the array ``view`` (a statement taking it, run
        with the bounds before the loop): the bound, recorded for every later ``bound(dim)``."""
        self.stmts.append(view)
        self._bounds[dim] = self._emit("dim", [view.target], axis=axis)
        return self._bounds[dim]

    def _emit(self, prim, args, name="_n", **params):
        target = self.builder(name, I8, is_temp=True)
        self.stmts.append(Assign(target, prim, args, params))
        return target

    def array_axis(self, dim):
        """The (array, axis) of the first available array whose length is ``dim``, or None:
        where ``bound`` reads a dim that no expression of the parameters computes."""
        for array in self.available:
            for axis, have in enumerate(self.shapes.of(array)):
                if have == dim:
                    return array, axis
        return None

    def _from_array(self, dim):
        found = self.array_axis(dim)
        return None if found is None else self._emit("dim", [found[0]], axis=found[1])

    def _from_source(self, dim):
        if dim.constant is not None:
            return const(dim.constant)
        text = self.shapes.source(dim)
        if text is None:
            return None
        emitted = len(self.stmts)
        try:
            return self._expression(ast.parse(text, mode="eval").body)
        except (SyntaxError, _Unsupported):
            del self.stmts[emitted:]
            return None

    def _expression(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return const(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return self._emit(_BINARY[type(node.op)], [self._expression(node.left), self._expression(node.right)])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return self._emit("neg", [self._expression(node.operand)])
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("max", "min") \
                and len(node.args) >= 2:
            result = self._expression(node.args[0])
            for arg in node.args[1:]:
                result = self._emit("maximum" if node.func.id == "max" else "minimum", [result, self._expression(arg)])
            return result
        if isinstance(node, ast.Name) and node.id in self.params and self.params[node.id].type == I8:
            return self.params[node.id]
        if (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape"
                and isinstance(node.value.value, ast.Name) and node.value.value.id in self.params
                and isinstance(node.slice, ast.Constant)):
            return self._emit("dim", [self.params[node.value.value.id]], axis=node.slice.value)
        raise _Unsupported


class _Unsupported(Exception):
    """A dim's source expression this module cannot turn into IR."""


_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.FloorDiv: "floordiv"}


def is_array_var(atom):
    return isinstance(atom, Var) and atom.type.ndim > 0
