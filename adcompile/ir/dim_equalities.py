"""Lengths that a matrix product proves equal, from the point where it has run.

numpy raises unless the contracted axes of ``a @ b`` have one length, so once
``h = x @ w.T`` has run, ``x.shape[1] == w.shape[1]``, and the gradient's contribution
``g.T @ x`` has ``w``'s shape (``first_contribution.py`` may then assign it). The symbolic
shapes (``shapes.py``) cannot see this: they hold for the whole call, also before the product.

A statement of the function's top-level block runs before every statement after it (no
branch or loop may skip it), so only products there count, and only for the statements after
them. A length a broadcast gives (``max(b.0, w.0)`` for ``h + b``) may be one of the lengths
proven equal: it then stands for its class, and a broadcast of it with an equal length is it.

    equalities = ProductEqualities(shape_map)
    equalities.proof(shape_a, shape_b, at) -> None, or the products whose equalities make the
                                              shapes equal where the statement ``at`` runs

If a product the proof rests on is later found dead, ``shape_check_for`` gives the statement
that must stay in its place: a check of the same lengths, raising numpy's kind of error.
"""
from .dims import renamed, symbol, symbol_name
from .nodes import Assign, Var, walk
from .types import Type

CHECK_MARK = "leaves_shape_check"  # a product's params key: keep a check in its place if it dies


class ProductEqualities:
    def __init__(self, shapes):
        self.shapes = shapes
        self.position = {}  # id of a statement -> index of the top-level statement holding it
        self.established = []  # (top-level index, matmul Assign, name, name)
        for index, top in enumerate(shapes.fn.body):
            for stmt in walk([top]):
                self.position[id(stmt)] = index
            names = self._contracted(top)
            if names is not None:
                self.established.append((index, top) + names)

    def _contracted(self, stmt):
        """The names of the two lengths ``stmt`` (a product) contracts, when they are symbols
        with one value for the whole call and not already the same."""
        if not (isinstance(stmt, Assign) and stmt.prim == "matmul"):
            return None
        a, b = (self.shapes.of(arg) for arg in stmt.args)
        if not a or not b:
            return None
        dims = (a[-1], b[-2] if len(b) >= 2 else b[0])
        names = tuple(symbol_name(d) for d in dims)
        if None in names or names[0] == names[1] or not self.shapes._invariant(dims):
            return None
        return names

    def proof(self, first, second, at):
        """The products whose equalities make the shapes ``first`` and ``second`` (tuples of
        Dims) equal where ``at`` runs: () if they are equal anyway, None if not provable."""
        if first == second:
            return ()
        position = self.position.get(id(at))
        if position is None or len(first) != len(second):
            return None
        members = self._members()
        active = _bearing_on(first + second, [e for e in self.established if e[0] < position], members)
        if not active or not _equal(first, second, active, members):
            return None
        needed = list(active)
        for equality in active:
            fewer = [e for e in needed if e is not equality]
            if _equal(first, second, fewer, members):
                needed = fewer
        return tuple(e[1] for e in needed)

    def _members(self):
        """Symbol name of a broadcast's length -> the lengths broadcast (the shape map may
        learn more broadcasts as it answers queries: recomputed when it has)."""
        broadcasts = self.shapes._broadcast_members
        if getattr(self, "_members_of", (None, -1))[1] != len(broadcasts):
            self._members_of = ({symbol_name(d): m for d, m in broadcasts.items()}, len(broadcasts))
        return self._members_of[0]


def _bearing_on(dims, equalities, members):
    """The equalities that can bear on lengths of ``dims``: those joining names in the classes of
    the names the dims mention (through the lengths a broadcast's length stands for, too). The
    others leave those classes as they are, with or without them, so dropping them up front gives
    the minimal proof ``proof`` finds, in time linear in the products instead of quadratic (a deep
    network proves a shape per layer from a product per layer)."""
    linked = {}
    for equality in equalities:
        a, b = equality[2:]
        linked.setdefault(a, []).append(b)
        linked.setdefault(b, []).append(a)
    names, todo = set(), [name for dim in dims for name in dim.symbols]
    while todo:
        name = todo.pop()
        if name in names:
            continue
        names.add(name)
        todo.extend(linked.get(name, ()))
        todo.extend(s for member in members.get(name, ()) for s in member.symbols)
    return [e for e in equalities if e[2] in names or e[3] in names]


def _equal(first, second, equalities, members):
    canonical = _Canonical([e[2:] for e in equalities], members)
    return all(canonical.dim(a) == canonical.dim(b) for a, b in zip(first, second))


class _Canonical:
    """One representative per class of lengths proven equal (union-find over symbol names);
    a broadcast's length is its class's representative, so lengths broadcast with it fold in."""

    def __init__(self, pairs, members):
        self.members = members  # symbol name of a broadcast's length -> the lengths broadcast
        self.parent = {}
        for a, b in pairs:
            ra, rb = self.find(a), self.find(b)
            if ra != rb:
                keep, drop = sorted((ra, rb), key=lambda name: (name not in self.members, name))
                self.parent[drop] = keep

    def find(self, name):
        while self.parent.get(name, name) != name:
            name = self.parent[name]
        return name

    def dim(self, dim, expanding=frozenset()):
        lengths = self._lengths(dim, expanding)
        if len(lengths) == 1:
            return next(iter(lengths))
        return symbol("max(" + ", ".join(sorted(map(repr, lengths))) + ")")

    def _lengths(self, dim, expanding):
        """The lengths (no broadcasts among them) whose maximum ``dim`` is."""
        name = symbol_name(dim)
        if name is None:
            names = {s: symbol_name(self.dim(symbol(s), expanding)) for s in dim.symbols}
            return {renamed(dim, {s: n for s, n in names.items() if n is not None})}
        root = self.find(name)
        if root in expanding:
            return {dim}
        if root not in self.members:
            return {symbol(root)}
        lengths = set()
        for member in self.members[root]:
            lengths |= self._lengths(member, expanding | {root})
        return lengths


def shape_check_for(stmt):
    """The check to leave in place of the dead product ``stmt``, if a proof rested on it."""
    if not (isinstance(stmt, Assign) and stmt.params.get(CHECK_MARK)):
        return None
    return Assign(Var("_shapes_checked", Type("b1")), "check_matmul_shapes", list(stmt.args), loc=stmt.loc)
