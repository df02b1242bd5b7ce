"""A small stand-in for ``adcompile.ir.shapes.infer_shapes``, for the fusion tests.

It has the same methods (``of``, ``same``, ``source``) and understands just the programs the
tests fuse: parameters, elementwise and broadcasting ops, slices with constant bounds, full
reductions, allocations like another array, ``unbroadcast``/``broadcast_to_shape``, matrix
products and transposes. Anything else gets fresh dims, equal only to themselves, as the real
inference does with what it cannot prove; a variable assigned twice with different shapes too.
"""
import itertools
from dataclasses import dataclass

from adcompile.ir.nodes import Assign, Pop, Var, walk
from adcompile.ir.primitives import Kind, has_kind

_fresh = itertools.count()


@dataclass(frozen=True)
class Dim:
    base: tuple  # ("param", name, axis) or ("fresh", k)
    offset: int = 0

    @property
    def constant(self):
        return None


def fresh_dims(ndim):
    return tuple(Dim(("fresh", next(_fresh))) for _ in range(ndim))


class StandInShapes:
    def __init__(self, fn):
        self.shapes = {p: tuple(Dim(("param", p.name, k)) for k in range(p.type.ndim)) for p in fn.params}
        for _ in range(3):  # loops: a value assigned later in a body may be read earlier
            for stmt in walk(fn.body):
                if isinstance(stmt, Assign):
                    self._assign(stmt.target, self._infer(stmt))
                elif isinstance(stmt, Pop):
                    self._assign(stmt.target, fresh_dims(stmt.target.type.ndim))

    def _assign(self, var, dims):
        old = self.shapes.get(var)
        if old is not None and old != dims:
            dims = old if old[:1] and old[0].base[0] == "fresh" else fresh_dims(var.type.ndim)
        self.shapes[var] = dims

    def of(self, atom):
        if not isinstance(atom, Var) or atom.type.ndim == 0:
            return ()
        return self.shapes.setdefault(atom, fresh_dims(atom.type.ndim))

    def same(self, a, b):
        return self.of(a) == self.of(b)

    def source(self, dim):
        if dim.base[0] != "param":
            return None
        _, name, axis = dim.base
        text = f"{name}.shape[{axis}]"
        return text if dim.offset == 0 else f"{text} - {-dim.offset}"

    def _infer(self, stmt):
        args, ndim = stmt.args, stmt.target.type.ndim
        if ndim == 0:
            return ()
        arrays = [self.of(a) for a in args if isinstance(a, Var) and a.type.ndim == ndim]
        if stmt.prim == "getitem":
            return self._slice(args[0], stmt.params["items"], args, ndim)
        if stmt.prim in ("zeros_like", "ones_like", "alias", "copy", "neg"):
            return self.of(args[0])
        if stmt.prim in ("unbroadcast", "broadcast_to_shape"):
            return self.of(args[1])
        if stmt.prim == "transpose" and args[0].type.ndim == 2 and not stmt.params.get("axes"):
            return self.of(args[0])[::-1]
        if stmt.prim == "matmul":
            a, b = (self.of(x) for x in args)
            return (a[:-1] + b[1:]) if len(a) == 2 and len(b) == 2 else (a[:-1] if len(a) == 2 else b[1:])
        if has_kind(stmt.prim, Kind.ELEMENTWISE) and arrays and all(d == arrays[0] for d in arrays):
            return arrays[0]
        return fresh_dims(ndim)

    def _slice(self, x, items, args, ndim):
        dims = self.of(x)
        if len(items) != len(dims) or any(item[0] != "slice" or item[3] is not None for item in items):
            return fresh_dims(ndim)
        out = []
        for dim, (_, start, stop, _step) in zip(dims, items):
            start = 0 if start is None else getattr(args[start], "value", None)
            stop = 0 if stop is None else getattr(args[stop], "value", None)
            if not isinstance(start, int) or not isinstance(stop, int) or start < 0 or stop > 0:
                return fresh_dims(ndim)
            out.append(Dim(dim.base, dim.offset - start + stop))
        return tuple(out)


def infer_shapes(fn):
    return StandInShapes(fn)
