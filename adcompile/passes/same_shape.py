"""Which array variables provably have the same shape whenever they are read.

A small, conservative stand-in for symbolic shapes: variables are put in one class when every
statement binding one of them gives it the shape of a member, through the operations that
keep a shape (an elementwise operation of same-shaped arrays and scalars, ``zeros_like(v)``,
``unbroadcast(c, v)`` and the other primitives declaring ``shape_of``, copies):

    _t_7 = 1 - _t_1                      # _t_7 ~ _t_1
    bt_7 = np.zeros_like(_t_7)           # bt_7 ~ _t_7
    _t_16 = rt.unbroadcast(g, _t_7)      # _t_16 ~ _t_7

A variable bound by anything else (a pop from a tape, a slice, a reduction) starts a class
of its own if it is bound once outside loops (its shape is then fixed for the call), and
is in no class otherwise, since its shape may change from one binding to the next. Scalars
all have the shape ``()``.
"""
from ..ir.nodes import Assign, For, SetItem, Var, While, walk
from ..ir.primitives import Kind, primitive

_SAME_SHAPE_AS_FIRST = {"alias", "copy"}


def _source_arguments(stmt):
    """The arguments whose common shape the Assign ``stmt``'s result surely has; None if the
    result's shape may be another one."""
    spec = primitive(stmt.prim)
    if stmt.inplace:
        return [stmt.target]
    if spec.shape_of is not None:
        return [stmt.args[spec.shape_of]]
    if stmt.prim in _SAME_SHAPE_AS_FIRST:
        return [stmt.args[0]]
    if spec.has(Kind.ELEMENTWISE) and not spec.has(Kind.VIEW):
        arrays = [a for a in stmt.args if a.type.ndim]
        if arrays and all(isinstance(a, Var) and a.type.ndim == stmt.target.type.ndim for a in arrays):
            return arrays
    return None


def _bindings(block, in_loop, out):
    """Var -> [(sources of one binding, whether it is inside a loop)] for the arrays of ``block``."""
    for stmt in block:
        for var in stmt.writes():
            if not var.type.ndim:
                continue
            if isinstance(stmt, Assign):
                sources = _source_arguments(stmt)
            elif isinstance(stmt, SetItem):  # AccumItem too: elements change, the shape does not
                sources = [var]
            else:
                sources = None
            out.setdefault(var, []).append((sources, in_loop))
        for inner in stmt.blocks():
            _bindings(inner, in_loop or isinstance(stmt, (For, While)), out)
    return out


class ShapeClasses:
    """Union-find over array variables of one function: ``same(a, b)``.

    Arrays whose shape is fixed for the whole call start a class each: parameters never
    rebound and variables bound once outside loops. A variable joins a class when the sources
    of all its bindings are in that class (or are the variable itself: ``s = s * 2``)."""

    def __init__(self, fn):
        self.parent = {}
        bindings = _bindings(fn.body, False, {})
        fixed = {p for p in fn.params if p.type.ndim and p not in bindings}
        fixed |= {v for v, binds in bindings.items() if len(binds) == 1 and not binds[0][1]}
        changed = True
        while changed:
            changed = False
            for var, binds in bindings.items():
                if var in fn.params or any(sources is None for sources, _ in binds):
                    continue
                outside = [a for sources, _ in binds for a in sources if a is not var]
                classes = {self.find(a) for a in outside}
                if outside and all(a in fixed for a in outside) and len(classes) == 1 \
                        and self.find(var) not in classes:
                    self.parent[self.find(var)] = classes.pop()
                    fixed.add(var)
                    changed = True
        self.fixed = fixed

    def find(self, var):
        while self.parent.get(var, var) is not var:
            var = self.parent[var]
        return var

    def same(self, a, b):
        """Whether the atoms ``a`` and ``b`` surely have the same shape whenever both are read."""
        if a.type.ndim == 0 or b.type.ndim == 0:
            return a.type.ndim == b.type.ndim
        return a.type.ndim == b.type.ndim and a in self.fixed and b in self.fixed \
            and self.find(a) is self.find(b)


def _rebinds(stmt, var):
    """Whether ``stmt`` (or a statement nested in it) may give ``var`` a new array."""
    for inner in walk([stmt]):
        if var in inner.writes() and not (isinstance(inner, SetItem) or getattr(inner, "inplace", False)):
            return True
    return False


def same_in_block(classes, block, start, end, atom, like):
    """Whether ``atom``, read at ``block[end]``, surely has the shape ``like`` had at
    ``block[start]``: by ``classes``, or because ``like`` keeps its binding in between and
    ``atom`` is ``like`` or is computed in between from values of that shape (flow-sensitive,
    so it also holds in loops, where ``classes`` prove little)."""
    if classes.same(atom, like):
        return True
    if not isinstance(atom, Var) or atom.type.ndim != like.type.ndim \
            or any(_rebinds(stmt, like) for stmt in block[start + 1:end]):
        return False
    if atom is like:
        return True
    bound_at = [k for k in range(start + 1, end) if _rebinds(block[k], atom)]
    if len(bound_at) != 1 or not isinstance(block[bound_at[0]], Assign) or block[bound_at[0]].target is not atom:
        return False
    sources = _source_arguments(block[bound_at[0]])
    return sources is not None and all(
        same_in_block(classes, block, start, bound_at[0], source, like) for source in sources)
