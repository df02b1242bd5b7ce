"""Static symbolic shapes of the values of an IR function.

adcompile specialises on the number of dimensions of each argument, not on its lengths, but
most lengths in numeric code follow from the arguments' lengths: ``x[1:] - x[:-1] ** 2`` has
``x.shape[0] - 1`` elements, ``A @ x`` has ``A.shape[0]``. ``infer_shapes`` finds them, so that
the passes can prove two arrays have the same shape (a broadcast's adjoint is then nothing,
and a value read only for its shape can be replaced by another of the same shape) and the
lowering can fuse loops over one iteration domain.

Shapes are flow-insensitive: a variable assigned in several places (loops, branches) has the
shape common to all its assignments, or dims that equal only themselves when they differ. Such
dims, and the unknown lengths a statement inside a loop gives, may be different lengths at
different times, so no two shapes holding them are called the same.
Integer scalars that hold lengths (``n = x.shape[0]``, ``n - 1``) are tracked too, so shapes
built from them (``np.zeros(n)``) are known.

This module is the generic machinery (the fixed point over the function, joins, broadcasting,
the lengths integers hold); the shape of each primitive's result is the shape rule its
declaration gives (``define(..., shape=...)``, or the one its kinds imply: ir/primitives/
shape_rules.py).

    shapes = infer_shapes(fn)
    shapes.of(atom)       -> tuple of Dim, one per axis (() for scalars)
    shapes.same(a, b)     -> bool: provably equal shapes for every input, whenever both are read
    shapes.source(dim)    -> Python text computing the dim from the parameters, or None
    shapes.stable(var)    -> bool: every assignment of ``var`` gives it the same shape
    shapes.same_at(a, b, stmt) -> None, or the products (``dim_equalities.py``) that make the
                             shapes equal where ``stmt`` runs (() when ``same`` holds)
    shapes.clipped(dim, k) -> the Dim ``min(k, dim)`` (for the shape rules)
    shapes.varies(dim)    -> bool: ``dim`` may stand for different lengths at different times
    shapes.given(stmt)    -> the shape ``stmt``'s own rule gives its target from its operands'
                             shapes (None if unknown): for a widened target, not ``of(target)``
"""
from .dim_equalities import ProductEqualities
from .dims import add, constant, difference, format_dim, multiply, symbol
from .nodes import Assign, Const, For, Pop, Push, Var, While, walk
from .primitives import primitive
from .primitives.shape_rules import product

_MAX_ROUNDS = 50


class ShapeMap:
    """The inferred shapes of one function (see the module docstring)."""

    def __init__(self, fn):
        self.fn = fn
        self._shapes = {}  # Var -> tuple of Dim
        self._lengths = {}  # integer scalar Var -> Dim it holds
        self._sources = {}  # symbol -> its Python text
        self._opaque = {}  # key -> opaque Dim, stable across rounds
        self._tapes = {}  # tape Var -> shape of the values pushed on it
        self._broadcast_members = {}  # Dim standing for a broadcast -> the lengths broadcast
        self._clipped = {}  # symbol standing for min(bound, dim) -> dim (see clipped)
        self._widened = set()  # variables whose assignments give different shapes
        self._varying = set()  # symbols that may stand for different lengths at different times
        self._in_loops = {id(s) for loop in walk(fn.body) if isinstance(loop, (For, While))
                          for block in loop.blocks() for s in walk(block)}
        self._infer()
        self._products = None

    # -- queries ---------------------------------------------------------------

    def of(self, atom):
        if not isinstance(atom, Var) or atom.type.ndim == 0:
            return ()
        shape = self._shapes.get(atom)
        return shape if shape is not None else self._unknown(("unassigned", atom.uid), atom.type.ndim)

    def same(self, a, b):
        if (isinstance(a, Var) and a.type.ndim) != (isinstance(b, Var) and b.type.ndim):
            return False
        return self.of(a) == self.of(b) and self._invariant(self.of(a))

    def same_at(self, a, b, at):
        """The matrix products whose contracted lengths, equal once they have run, make the
        shapes of ``a`` and ``b`` equal where the statement ``at`` runs: () if ``same`` holds,
        None if they are not provably equal there."""
        if self.same(a, b):
            return ()
        if (isinstance(a, Var) and a.type.ndim) != (isinstance(b, Var) and b.type.ndim) \
                or not (self._invariant(self.of(a)) and self._invariant(self.of(b))):
            return None
        if self._products is None:
            self._products = ProductEqualities(self)
        return self._products.proof(self.of(a), self.of(b), at)

    def stable(self, var):
        """Whether every assignment of ``var`` (and its value on entry, for a parameter) gives
        it the same shape, so that reading its shape at any point reads that shape."""
        return var in self._shapes and var not in self._widened and self._invariant(self._shapes[var])

    def varies(self, dim):
        """Whether ``dim`` may stand for different lengths at different times (a join of a
        variable's differing assignments, a length a statement in a loop gives): it means the
        length of a value as it is where that value is read, nothing more."""
        return bool(dim.symbols & self._varying)

    def given(self, stmt):
        """The shape the Assign ``stmt`` gives its target by its own rule, from its operands'
        shapes (None when no rule knows it). For a target assigned several shapes (``t = x``,
        then ``t = t[:-1]`` in a loop) it is not ``of(target)``, the dims standing for them all."""
        if not isinstance(stmt, Assign) or not stmt.target.type.ndim or stmt.prim == "placeholder":
            return None
        shape = self._rule(stmt)
        return shape if shape is not None and len(shape) == stmt.target.type.ndim else None

    def _invariant(self, shape):
        """Whether every dim of ``shape`` has one value for the whole call (not a length that
        a statement in a loop may give differently in each iteration)."""
        return not any(dim.symbols & self._varying for dim in shape)

    def length(self, atom):
        """The Dim an integer scalar holds, or None."""
        if isinstance(atom, Const) and isinstance(atom.value, int) and not isinstance(atom.value, bool):
            return constant(atom.value) if atom.value >= 0 else None
        return self._lengths.get(atom) if isinstance(atom, Var) else None

    def source(self, dim, clamp=False):
        """Python text of ``dim`` from the parameters (``max(..., 0)`` around a form that might
        be negative when ``clamp``), or None."""
        text = format_dim(dim, self._sources.get)
        if text is not None and clamp and not dim.is_nonnegative:
            text = f"max({text}, 0)"
        return text

    # -- inference ---------------------------------------------------------------

    def _unknown(self, key, ndim, varying=True):
        """Dims equal only to themselves, one per axis, the same for the same ``key``;
        ``varying``: they may stand for a different length each time they are computed."""
        dims = []
        for axis in range(ndim):
            dim = self._opaque.get((key, axis))
            if dim is None:
                name = f"?{len(self._opaque)}"
                dim = self._opaque[(key, axis)] = symbol(name)
                if varying:
                    self._varying.add(name)
            dims.append(dim)
        return tuple(dims)

    def _infer(self):
        assigned = {var for stmt in walk(self.fn.body) for var in stmt.writes()}
        for param in self.fn.params:
            rebound = param in assigned
            if param.type.ndim:
                dims = []
                for axis in range(param.type.ndim):
                    name = f"{param.name}.{axis}"
                    if not rebound:
                        self._sources[name] = f"{param.name}.shape[{axis}]"
                    dims.append(symbol(name))
                self._shapes[param] = tuple(dims)
            elif param.type.dtype == "i8":
                self._sources[param.name] = None if rebound else param.name
                self._lengths[param] = symbol(param.name)
        for _ in range(_MAX_ROUNDS):
            self._changed = False
            for stmt in walk(self.fn.body):
                self._visit(stmt)
            for name, dim in self._clipped.items():  # a clipped length varies with its length
                if dim.symbols & self._varying and name not in self._varying:
                    self._varying.add(name)
                    self._changed = True
            if not self._changed:
                return
        raise AssertionError("shape inference did not converge")  # joins widen at most twice per value

    def _fixed_view(self, stmt):
        """Whether ``stmt`` is basic indexing with constant items (``v[0:3]``, ``m[1, :2]``) of
        an array whose shape is the same at every time: its result has one shape too, even
        where no rule gives it (``min(3, len(v))``), also inside a loop."""
        if stmt.prim != "getitem" or not isinstance(stmt.args[0], Var):
            return False
        if any(item[0] == "array" for item in stmt.params["items"]):
            return False
        source = stmt.args[0]
        return (all(isinstance(a, Const) for a in stmt.args[1:]) and source in self._shapes
                and source not in self._widened and self._invariant(self._shapes[source]))

    def _join(self, table, var, value, ndim=None):
        """Record ``value`` for ``var``: kept if it is the first or the same, widened to opaque
        dims (or no length) if it differs from what another assignment gave."""
        old = table.get(var, _BOTTOM)
        if old is _BOTTOM:
            new = value
        elif old == value:
            return
        elif ndim is None:  # a length: differing values leave none
            new = None
            if old is None:
                return
        else:
            new = self._unknown(("join", var.uid), ndim)
            self._widened.add(var)
            if old == new:
                return
        table[var] = new
        self._changed = True

    def _ready(self, atoms):
        """Whether every variable among ``atoms`` has been given a shape (or length) yet;
        a statement is visited again in the next round otherwise."""
        for atom in atoms:
            if isinstance(atom, Var) and atom.type.ndim and atom not in self._shapes:
                return False
            if isinstance(atom, Var) and atom.type.dtype == "i8" and not atom.type.ndim \
                    and atom not in self._lengths:
                return False
        return True

    def _visit(self, stmt):
        if isinstance(stmt, Assign):
            if stmt.prim == "placeholder":  # gives the variable its type only; never read as such
                return
            if not self._ready(stmt.args):
                return
            target = stmt.target
            if target.type.ndim:
                shape = self._rule(stmt)
                if shape is None or len(shape) != target.type.ndim:
                    varying = id(stmt) in self._in_loops and not self._fixed_view(stmt)
                    shape = self._unknown(("result", id(stmt)), target.type.ndim, varying)
                    late = {name for dim in shape for name in dim.symbols} - self._varying if varying else ()
                    if late:  # its operand's shape was found to vary after the dims were made
                        self._varying |= late
                        self._changed = True
                self._join(self._shapes, target, shape, target.type.ndim)
            elif target.type.dtype == "i8":
                self._join(self._lengths, target, self._length_rule(stmt))
        elif isinstance(stmt, Push) and isinstance(stmt.value, Var) and stmt.value.type.ndim:
            if self._ready([stmt.value]):
                self._join(self._tapes, stmt.tape, self.of(stmt.value), stmt.value.type.ndim)
        elif isinstance(stmt, Pop) and stmt.target.type.ndim:
            shape = self._tapes.get(stmt.tape)
            if shape is not None:
                self._join(self._shapes, stmt.target, shape, stmt.target.type.ndim)
        elif isinstance(stmt, Pop) and stmt.target.type.dtype == "i8":
            self._join(self._lengths, stmt.target, None)
        elif isinstance(stmt, For):
            self._join(self._lengths, stmt.index, None)

    def _length_rule(self, stmt):
        prim, args = stmt.prim, stmt.args
        if prim == "dim":
            shape = self.of(args[0])
            axis = stmt.params["axis"]
            return shape[axis] if -len(shape) <= axis < len(shape) else None
        if prim == "size":
            return product(self.of(args[0]))
        if prim == "alias" or prim == "copy":
            return self.length(args[0])
        lengths = [self.length(a) for a in args]
        if any(n is None for n in lengths):
            return None
        if prim == "add" and len(args) == 2:
            return add(*lengths)
        if prim == "sub" and len(args) == 2:
            return difference(*lengths)
        if prim == "mul" and len(args) == 2:
            return multiply(*lengths)
        return None

    def lengths_of(self, atoms):
        """The Dims the integer ``atoms`` hold, or None if one is unknown (for the shape rules)."""
        dims = tuple(self.length(a) for a in atoms)
        return None if any(d is None for d in dims) else dims

    def _rule(self, stmt):
        """The shape the primitive's declared rule (``shape_rules.py``) gives, or None."""
        rule = primitive(stmt.prim).shape
        return None if rule is None else rule(self, stmt.args, stmt.params)

    def clipped(self, dim, bound):
        """The length ``min(bound, dim)`` (the stop of ``x[:3]`` on an axis of length ``dim``; the
        Dim forms have no ``min``): a symbol, the same for the same ``dim`` and ``bound`` (so the
        slices ``v[0:3]`` of equal lengths have equal lengths), computed from the parameters
        where ``dim`` is, and varying where ``dim`` varies (``_infer`` keeps that true)."""
        name = f"min({bound}, {dim!r})"
        if name not in self._clipped:
            self._clipped[name] = dim
            text = self.source(dim)
            if text is not None:
                self._sources[name] = f"min({bound}, {text})"
            if dim.symbols & self._varying:
                self._varying.add(name)
        return symbol(name)

    def broadcast(self, shapes):
        """numpy's broadcasting of ``shapes`` (for the shape rules)."""
        ndim = max(len(s) for s in shapes)
        result = []
        for axis in range(ndim):
            dims = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0}
            if len(dims) > 1:
                dims.discard(constant(1))  # a length 1 stretches to the other
            result.append(dims.pop() if len(dims) == 1 else self._broadcast_dim(dims))
        return tuple(result)

    def _broadcast_dim(self, dims):
        """The length that broadcasting ``dims`` against each other gives, when they are not
        provably equal (one may be 1 at run time): a symbol standing for their maximum, the
        same for the same set of lengths, so that values broadcast alike have equal shapes."""
        members = set()
        for dim in dims:
            members |= self._broadcast_members.get(dim, {dim})
        name = "max(" + ", ".join(sorted(map(repr, members))) + ")"
        dim = symbol(name)
        if any(member.symbols & self._varying for member in members):
            self._varying.add(name)
        if dim not in self._broadcast_members:
            self._broadcast_members[dim] = frozenset(members)
            sources = [self.source(m) for m in members]
            if None not in sources:
                self._sources[name] = "max(" + ", ".join(sorted(sources)) + ")"
        return dim


_BOTTOM = object()


def infer_shapes(fn):
    """The ``ShapeMap`` of ``fn`` (see the module docstring)."""
    return ShapeMap(fn)
