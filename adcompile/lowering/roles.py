"""What a statement becomes inside a fused loop nest, and over which domain it iterates.

    map         target = elementwise/broadcasting op of operands   -> a scalar op per point
    slice       target = x[1:], x[:-1, 2:] (constant starts)        -> a read x[i + 1]
    pass        unbroadcast / broadcast_to_shape / alias / copy
                between provably equal shapes (Kind.PASSES_VALUES)  -> the operand itself
    fill        zeros_like / ones_like (declared ``fill``)          -> the constant
    reduce      sum / mean / max / min of everything, vector dot    -> a scalar accumulator
                (declared ``accumulator``)
                ... along an axis, unbroadcast to fewer or length-1
                axes (a broadcast's adjoint)                        -> an array accumulator s[i]
    accumulate  bx[:-1] += value (constant starts)                  -> bx[i] += value

An operand that is a view with inserted or broadcast axes (``views.py``: ``x[:, None]``,
``expand_axis``, ``broadcast_to_shape``) is read through its source. ``role_of`` answers None
for every other statement (the fusion pass then moves it before the loop when it can, or ends
the group).
"""
from dataclasses import dataclass

from ..ir.nodes import AccumItem, Assign, Const, Var
from ..ir.primitives import Kind, has_kind, primitive
from .domains import Access, broadcast_access, is_array_var, slice_starts
from .views import read_through



@dataclass
class Role:
    kind: str
    domain: tuple
    reads: list  # (array atom, Access) for every array operand read at each point
    # per argument of a map or reduce: the (array, Access) it reads, through views (or None)
    operands: list = None
    result: Access = None  # a reduction along axes: how its result is indexed at a point


def role_of(stmt, shapes, same_dim=None, views=None):
    """The statement's role, or None. ``same_dim(a, b)`` decides whether two dims count as
    equal (default: provably equal; a group may assume more, checked at run time); ``views``
    (``views.find_views``) are read through their sources."""
    same_dim = same_dim or _provably_equal
    views = views or {}
    if type(stmt) is AccumItem:
        return _accumulate_role(stmt, shapes, same_dim)
    if not isinstance(stmt, Assign):
        return None
    target, args = stmt.target, stmt.args
    if target.type.ndim == 0:
        return _reduce_role(stmt, shapes, same_dim, views)
    domain = shapes.of(target)
    if _fused_reduction(stmt.prim) or (stmt.prim == "unbroadcast" and is_array_var(args[0])
                                   and not _same_shape(shapes.of(args[0]), domain, same_dim)):
        return _axis_reduce_role(stmt, shapes, same_dim, views)
    if stmt.prim == "getitem":
        return _slice_role(stmt, domain)
    spec = primitive(stmt.prim)
    if spec.fill is not None:
        return Role("fill", domain, [])
    if spec.has(Kind.PASSES_VALUES):
        source = args[0]
        if not is_array_var(source):
            return Role("pass", domain, []) if stmt.prim in ("broadcast_to_shape", "unbroadcast") else None
        equal = _same_shape(shapes.of(source), domain, same_dim)
        return Role("pass", domain, [(source, Access.identity(len(domain)))]) if equal else None
    if not (has_kind(stmt.prim, Kind.ELEMENTWISE) or has_kind(stmt.prim, Kind.BROADCASTING)):
        return None
    if spec.has(Kind.INTEGER_DIVISION) and not target.type.is_float:
        return None
    operands = []
    for arg in args:
        if is_array_var(arg):
            access = broadcast_access(shapes, arg, domain, same_dim)
            if access is None:
                return None
            operands.append(read_through(views, arg, access))
        elif isinstance(arg, (Const, Var)):
            operands.append(None)
        else:
            return None
    return Role("map", domain, [read for read in operands if read is not None], operands)


def _fused_reduction(prim):
    """Whether a fused loop computes the reduction ``prim`` with an accumulator (sum, mean, max, min)."""
    spec = primitive(prim)
    return spec.has(Kind.REDUCTION) and spec.accumulator is not None


def _slice_role(stmt, domain):
    x, items = stmt.args[0], stmt.params["items"]
    if not is_array_var(x) or stmt.target.type.ndim != x.type.ndim:
        return None
    starts = slice_starts(items, lambda position: None if position is None else stmt.args[position])
    if starts is None:
        return None
    starts += (0,) * (x.type.ndim - len(starts))
    return Role("slice", domain, [(x, Access(tuple(range(len(starts))), starts))])


def _provably_equal(a, b):
    return a == b


def _same_shape(dims, other, same_dim):
    return len(dims) == len(other) and all(same_dim(a, b) for a, b in zip(dims, other))


def _reduce_role(stmt, shapes, same_dim, views):
    args = stmt.args
    if _fused_reduction(stmt.prim) and stmt.params.get("axis") is None and len(args) == 1:
        x = args[0]
        if is_array_var(x) and x.type.is_float:
            domain = shapes.of(x)
            read = read_through(views, x, Access.identity(len(domain)))
            return Role("reduce", domain, [read], [read])
    if stmt.prim == "matmul" and all(is_array_var(a) and a.type.ndim == 1 and a.type.is_float for a in args):
        if _same_shape(shapes.of(args[0]), shapes.of(args[1]), same_dim):
            domain = shapes.of(args[0])
            reads = [(a, Access.identity(1)) for a in args]
            return Role("reduce", domain, reads, reads)
    return None


def _axis_reduce_role(stmt, shapes, same_dim, views):
    """A sum / mean / max / min along one axis, or an unbroadcast summing the axes its result
    lacks or has of length 1, over the operand's domain; the result is indexed by the axes it
    keeps. Integer sums (a count of ``True``) add exactly; other integer reductions are left."""
    x, target = stmt.args[0], stmt.target
    if not is_array_var(x) or (not x.type.is_float and (stmt.prim != "sum" or target.type.is_float)):
        return None
    domain = shapes.of(x)
    if stmt.prim == "unbroadcast":  # the axes the result keeps: those it reads the domain at
        kept = broadcast_access(shapes, target, domain, same_dim)
        if kept is None:
            return None
        axes = list(kept.axes)
    else:
        axis = stmt.params.get("axis")
        if not isinstance(axis, int) or len(stmt.args) != 1:
            return None
        axes = [k for k in range(len(domain)) if k != axis]
    read = read_through(views, x, Access.identity(len(domain)))
    return Role("reduce", domain, [read], [read], Access(tuple(axes), (0,) * len(axes)))


def _accumulate_role(stmt, shapes, same_dim):
    array, value = stmt.array, stmt.value
    if not is_array_var(value) or value.type.ndim != array.type.ndim:
        return None
    starts = slice_starts(stmt.items, lambda part: part)
    if starts is None:
        return None
    starts += (0,) * (array.type.ndim - len(starts))
    domain = shapes.of(value)
    if any(dim.constant == 1 for dim in domain):  # a length-1 value might broadcast into the region
        return None
    identity = Access.identity(len(domain))
    return Role("accumulate", domain, [(value, identity), (array, Access(identity.axes, starts))])
