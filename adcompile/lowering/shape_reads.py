"""Shape-only reads moved onto arrays that exist anyway, so that fused loops need not write
an array only for its shape.

``broadcast_to_shape(g, like)``, ``unbroadcast(g, like)`` and ``zeros_like(like)`` read
``like`` for its shape only. ``passes/static_shapes.py`` already points such reads at a value
computed anyway when that makes ``like`` dead; here ``like`` has value reads too (the GMM's
``qx * qx`` is summed along an axis, then its shape is read by the adjoint). Once fused, those
value reads happen inside a loop and ``like`` would be written to memory only for the shape
read. So the read goes to a parameter of the same type and shape, or to an earlier value of
the same type and shape that a later statement reads for its value (it is an array in
memory there, fused or not).
"""
from ..ir.nodes import Assign, Var, walk
from ..ir.primitives import primitive


def read_shapes_from_arrays_in_memory(fn, shapes):
    """Rewrite ``fn``'s top-level shape-only reads in place (see the module docstring)."""
    body = fn.body
    assigned = {}
    for stmt in walk(body):
        for var in stmt.writes():
            assigned[var] = assigned.get(var, 0) + 1
    definitions = {stmt.target: index for index, stmt in enumerate(body)
                   if isinstance(stmt, Assign) and assigned.get(stmt.target) == 1}
    last_value_read = {}
    for index, stmt in enumerate(body):
        for inner in walk([stmt]):
            for atom in _value_reads(inner):
                last_value_read[atom] = index
    params = [p for p in fn.params if p.type.ndim and p not in assigned]
    for index, stmt in enumerate(body):
        if not isinstance(stmt, Assign):
            continue
        for position in primitive(stmt.prim).shape_only:
            like = stmt.args[position]
            if not isinstance(like, Var) or like in params or not shapes.same(like, like):
                continue
            donor = _donor(like, index, params, definitions, last_value_read, shapes)
            if donor is not None:
                stmt.args[position] = donor


def _donor(like, use, params, definitions, last_value_read, shapes):
    for param in params:
        if param.type == like.type and shapes.same(param, like):
            return param
    for var, defined in definitions.items():
        if (var is not like and defined < use and last_value_read.get(var, -1) > use
                and var.type == like.type and shapes.same(var, like)):
            return var
    return None


def _value_reads(stmt):
    shape_only = primitive(stmt.prim).shape_only if isinstance(stmt, Assign) else ()
    return [a for k, a in enumerate(stmt.reads()) if isinstance(a, Var) and k not in shape_only]
