"""Builder: appends typed ``Assign`` statements to a block and names their results.

The frontend, the derivative rules and the transforms all construct IR through a Builder,
so every value gets its type from the primitive table in one place.
"""
from .nodes import Assign, Const, Var, const, walk
from .primitives import Kind, has_kind, result_type
from .types import promote_dtypes, to_float


class Namer:
    """Hands out readable, unique variable names within one generated function."""

    def __init__(self):
        self.taken = set()

    @property
    def taken(self):
        return self._taken

    @taken.setter
    def taken(self, names):
        """Replacing the set (a transform going back to a snapshot) gives names back."""
        self._taken = names
        self.last_suffix = {}  # base -> the suffix last handed out: every one below is taken

    def reserve(self, name):
        self.taken.add(name)

    def fresh(self, base):
        base = base or "t"
        if base not in self.taken:
            self.taken.add(base)
            return base
        i = self.last_suffix.get(base, 0) + 1
        while f"{base}_{i}" in self.taken:
            i += 1
        self.last_suffix[base] = i
        name = f"{base}_{i}"
        self.taken.add(name)
        return name


def namer_for(fn):
    """A ``Namer`` handing out no name ``fn`` already uses: its parameters' and every name its
    statements assign (a pass adding statements to a finished function names them with it)."""
    namer = Namer()
    for var in list(fn.params) + [w for stmt in walk(fn.body) for w in stmt.writes()]:
        namer.reserve(var.name)
    return namer


class Builder:
    def __init__(self, namer, block=None, loc=None):
        self.namer = namer
        self.block = [] if block is None else block
        self.loc = loc

    def new_var(self, base, type_, is_temp=False):
        return Var(self.namer.fresh(base), type_, is_temp=is_temp)

    def temp(self, type_):
        return self.new_var("_t", type_, is_temp=True)

    def emit(self, prim, args, target=None, **params):
        """Append ``target = prim(*args)`` and return target (a new temp if not given)."""
        args = [a if isinstance(a, (Var, Const)) else const(a) for a in args]
        if has_kind(prim, Kind.ONE_DTYPE_OPERANDS):
            args = self._one_float_dtype(args)
        type_ = result_type(prim, [a.type for a in args], params,
                                       [isinstance(a, Const) for a in args])
        if target is None:
            target = self.temp(type_)
        self.block.append(Assign(target, prim, args, params, self.loc))
        return target

    def _one_float_dtype(self, args):
        """``args`` cast to their common float dtype where they differ (a derivative rule's
        tangent or cotangent may have another dtype than the operand it goes with)."""
        dtype = to_float(promote_dtypes(*[a.type.dtype for a in args]))
        return [a if a.type.dtype == dtype else self.emit("as_dtype", [a], dtype=dtype) for a in args]

    def append(self, stmt):
        if stmt.loc is None:
            stmt.loc = self.loc
        self.block.append(stmt)
        return stmt

    def fold(self, op, a, b):
        """Fold arithmetic on two numeric constants; None if not both constants."""
        if isinstance(a, Const) and isinstance(b, Const) and not isinstance(a.value, bool) \
                and not isinstance(b.value, bool):
            return const(op(a.value, b.value))
        return None

    # Shorthands used by derivative rules; they fold the trivial cases (x * 1, x + 0).
    def add(self, a, b):
        folded = self.fold(lambda p, q: p + q, a, b)
        if folded is not None:
            return folded
        if _is_zero(a):
            return b
        if _is_zero(b):
            return a
        return self.emit("add", [a, b])

    def sub(self, a, b):
        folded = self.fold(lambda p, q: p - q, a, b)
        if folded is not None:
            return folded
        if _is_zero(b):
            return a
        return self.emit("sub", [a, b])

    def mul(self, a, b):
        folded = self.fold(lambda p, q: p * q, a, b)
        if folded is not None:
            return folded
        if _is_one(a):
            return b
        if _is_one(b):
            return a
        return self.emit("mul", [a, b])

    def div(self, a, b):
        if _is_one(b):
            return a
        return self.emit("div", [a, b])

    def neg(self, a):
        if isinstance(a, Const) and not isinstance(a.value, bool):
            return const(-a.value, a.type)
        return self.emit("neg", [a])

    def call(self, prim, *args, **params):
        return self.emit(prim, list(args), **params)


def _is_zero(atom):
    return isinstance(atom, Const) and not isinstance(atom.value, bool) and atom.value == 0


def _is_one(atom):
    return isinstance(atom, Const) and not isinstance(atom.value, bool) and atom.value == 1
