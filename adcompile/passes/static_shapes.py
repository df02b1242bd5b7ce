"""Rewrites that symbolic shapes (``ir/shapes.py``) prove safe.

Reverse mode differentiates each broadcasting operation without knowing shapes, so the
gradient sums every cotangent back to its argument's shape at run time and keeps values
alive only to ask for their shape. Where the shapes are provably equal none of that is
needed:

    _t_11 = rt.broadcast_to_shape(1.0, _t_5 + _t_8)      # the adjoint of np.sum(...)
    _t_16 = rt.unbroadcast(rt.unbroadcast(_t_11, _t_8) * _t_7, _t_7)

becomes ``_t_16 = 1.0 * _t_7`` (which ``simplify`` makes ``_t_7``), and ``_t_5 + _t_8`` is
dead. The rewrites:

- ``unbroadcast(g, x)`` is ``g`` when both have one shape, ``np.sum(g)`` for a scalar ``x``,
  and ``np.sum(g, axis=0)`` when ``g`` has one leading axis more;
- an operand ``broadcast_to_shape(s, v)`` (``s`` a scalar) of an elementwise operation is
  ``s`` itself when the other operands already give the result its shape, and an
  elementwise operation of such a fill and scalars is the fill of the scalar result
  (``fill(s, v) * 100.0`` -> ``fill(s * 100.0, v)``), if ``v`` has the same shape where the
  operation runs (``_shape_kept``: the rewrite moves the read of ``v``'s shape there);
- an argument read only for its shape (``zeros_like(v)``, the second argument of
  ``unbroadcast``, ``dim(v)``) is replaced by a parameter, or a value computed anyway, of the
  same shape and dtype that is defined at that point, so that ``v`` may become dead.
"""
from ..ir.nodes import Assign, Var, walk
from ..ir.primitives import Kind, has_kind, primitive
from ..ir.shapes import infer_shapes
from .uses import Uses, namer_for


def _positions(block, prefix=()):
    """(statement, its path of (block id, index) from the function body) in program order."""
    for index, stmt in enumerate(block):
        path = prefix + ((id(block), index),)
        yield stmt, path
        for inner in stmt.blocks():
            yield from _positions(inner, path)


def _defined_before(def_path, use_path):
    """Whether a statement at ``def_path`` runs before, and in a block enclosing, ``use_path``."""
    if len(def_path) > len(use_path) or def_path[:-1] != use_path[:len(def_path) - 1]:
        return False
    (def_block, def_index), (use_block, use_index) = def_path[-1], use_path[len(def_path) - 1]
    return def_block == use_block and def_index < use_index


class _ShapeRewriter:
    def __init__(self, fn):
        self.fn = fn
        self.shapes = infer_shapes(fn)
        self.uses = Uses(fn)
        self.positions = list(_positions(fn.body))
        self.definitions = {}  # single-definition Var -> (Assign, path)
        for stmt, path in self.positions:
            if isinstance(stmt, Assign) and self.uses.single_def(stmt.target):
                self.definitions[stmt.target] = (stmt, path)
        self.value_reads = self._value_reads()
        self.placeheld = {stmt.target for stmt, _ in self.positions
                          if isinstance(stmt, Assign) and stmt.prim == "placeholder"}
        self.inserted = {}  # id of a statement -> statements to put before it
        self.namer = namer_for(fn)
        self.changed = False

    def _value_reads(self):
        reads = {a for a in self.fn.results if isinstance(a, Var)}
        for stmt, _ in self.positions:
            shape_only = primitive(stmt.prim).shape_only if isinstance(stmt, Assign) else ()
            args = stmt.args if isinstance(stmt, Assign) else stmt.reads()
            reads.update(a for k, a in enumerate(args) if isinstance(a, Var) and k not in shape_only)
        return reads

    def run(self):
        for stmt, path in self.positions:
            if isinstance(stmt, Assign) and not stmt.inplace:
                self._rewrite(stmt, path)
        if self.inserted:
            _insert(self.fn.body, self.inserted)
        return self.changed

    def _set(self, stmt, prim, args, params=None):
        stmt.prim, stmt.args, stmt.params = prim, list(args), params or {}
        self.changed = True

    def _rewrite(self, stmt, path):
        if stmt.prim == "unbroadcast":
            self._unbroadcast(stmt)
        elif has_kind(stmt.prim, Kind.ELEMENTWISE) and stmt.target.type.ndim:
            self._scalar_operands(stmt)
            self._fill_of_scalars(stmt, path)
        if stmt.prim in ("unbroadcast", "broadcast_to_shape", "zeros_like", "ones_like", "dim", "size"):
            self._cheaper_shape_reads(stmt, path)

    def _unbroadcast(self, stmt):
        g, x = stmt.args
        if not isinstance(g, Var) or g.type.dtype != stmt.target.type.dtype:
            return
        if self.shapes.same(g, x):
            self._set(stmt, "alias", [g])
        elif not stmt.target.type.ndim and g.type.ndim:
            self._set(stmt, "sum", [g])
        elif (g.type.ndim == stmt.target.type.ndim + 1 and self.shapes.of(g)[1:] == self.shapes.of(x)
              and self.shapes.stable(g)):
            self._set(stmt, "sum", [g], {"axis": 0})

    def _scalar_operands(self, stmt):
        """``op(broadcast_to_shape(s, v), w)`` -> ``op(s, w)`` when ``w`` alone gives the
        result its shape and dtype."""
        target = stmt.target
        for k, arg in enumerate(stmt.args):
            filled = self.definitions.get(arg)
            if filled is None or filled[0].prim != "broadcast_to_shape":
                continue
            scalar = filled[0].args[0]
            if scalar.type.ndim or (isinstance(scalar, Var) and scalar.type.dtype != arg.type.dtype):
                continue
            if any(j != k and isinstance(a, Var) and a.type == target.type and self.shapes.same(a, target)
                   for j, a in enumerate(stmt.args)):
                stmt.args[k] = scalar
                self.changed = True

    def _fill(self, atom, use_path):
        """(scalar, shape source) if ``atom`` is ``broadcast_to_shape(scalar, v)`` and ``v``
        still has that shape at ``use_path``, else None."""
        definition = self.definitions.get(atom)
        if definition is None or definition[0].prim != "broadcast_to_shape":
            return None
        scalar, like = definition[0].args
        if scalar.type.ndim or not self._shape_kept(like, definition[1], use_path):
            return None
        return scalar, like

    def _shape_kept(self, var, def_path, use_path):
        """Whether ``var`` has the same shape at ``use_path`` as at ``def_path`` (where it is
        read), so that a read of its shape may move there: every assignment of ``var`` gives
        one shape (and it never holds a placeholder, whose shape is none of them), or no
        statement between the two, in one block, assigns it. (Reverse mode puts saved values
        back, so a variable read at one point of the backward sweep may be an earlier
        iteration's value, of another shape, or the placeholder, a few statements later.)"""
        if not isinstance(var, Var) or (var in self.uses.params and var not in self.uses.defs):
            return True
        if self.shapes.stable(var) and var not in self.placeheld:
            return True
        if def_path[:-1] != use_path[:-1] or def_path[-1][1] >= use_path[-1][1]:
            return False
        block, first, last = def_path[-1][0], def_path[-1][1], use_path[-1][1]
        return not any(var in inner.writes()
                       for stmt, path in self.positions
                       if path[:-1] == def_path[:-1] and path[-1][0] == block and first < path[-1][1] < last
                       for inner in walk([stmt]))

    def _fill_of_scalars(self, stmt, path):
        """``op(broadcast_to_shape(s, v), c)`` with scalars ``c`` -> ``broadcast_to_shape(op(s, c), v)``."""
        arrays = [(k, a) for k, a in enumerate(stmt.args) if isinstance(a, Var) and a.type.ndim]
        if len(arrays) != 1 or stmt.prim in ("where", "clip"):
            return
        k, array = arrays[0]
        fill = self._fill(array, path)
        if fill is None or array.type != stmt.target.type:
            return
        scalar, like = fill
        value = Var(self.namer.fresh(stmt.target.name.lstrip("_") or "t"), stmt.target.type.with_ndim(0), is_temp=True)
        args = list(stmt.args)
        args[k] = scalar
        self.inserted.setdefault(id(stmt), []).append(Assign(value, stmt.prim, args, dict(stmt.params), stmt.loc))
        self._set(stmt, "broadcast_to_shape", [value, like])

    def _cheaper_shape_reads(self, stmt, path):
        for k in primitive(stmt.prim).shape_only:
            arg = stmt.args[k]
            if not isinstance(arg, Var) or arg in self.uses.params or arg in self.value_reads:
                continue
            better = self._computed_anyway(arg, path)
            if better is not None:
                stmt.args[k] = better
                self.changed = True

    def _computed_anyway(self, var, use_path):
        """A parameter never rebound, else the earliest value read for its value, with
        ``var``'s type and shape, defined before ``use_path`` (not a copy of a variable that
        may hold its placeholder: shapes are inferred from assignments, not placeholders)."""
        for param in self.fn.params:
            if param.type == var.type and param not in self.uses.defs and self.shapes.same(param, var):
                return param
        for candidate, (stmt, path) in self.definitions.items():
            if stmt.prim == "alias" and isinstance(stmt.args[0], Var) and stmt.args[0] in self.placeheld:
                continue  # a saved value that may be the placeholder (a loop that never ran)
            if (candidate is not var and candidate.type == var.type and candidate in self.value_reads
                    and self.shapes.same(candidate, var) and _defined_before(path, use_path)):
                return candidate
        return None


def _insert(block, inserted):
    """Put ``inserted[id(stmt)]`` before each such statement, in every nested block."""
    rebuilt = []
    for stmt in block:
        rebuilt.extend(inserted.get(id(stmt), ()))
        for inner in stmt.blocks():
            _insert(inner, inserted)
        rebuilt.append(stmt)
    block[:] = rebuilt


def use_static_shapes(fn):
    """Apply the rewrites to ``fn`` in place; returns True if anything changed."""
    return _ShapeRewriter(fn).run()
