"""Jacobians and Hessians as IR: a loop over unit directions that writes one row or column
of the matrix per iteration.

The matrix function is ordinary IR built from a derived function's IR (a jvp for columns,
a vjp for rows), so the transforms differentiate it again, the passes simplify it, the code
generator prints it and numba compiles it like any other function:

    def f_jacobian(x):                         # mode "fwd": one jvp per input element
        out = <f's body>                       # only its shape is used
        jac = np.zeros((out.size, x.size))
        for k in range(x.size):
            unit = np.zeros(x.size); unit[k] = 1.0
            dout = <jvp of f's body, tangent unit.reshape(x.shape)>
            jac[:, k] = dout.ravel()
        return jac.reshape(out.shape + x.shape)

Mode "rev" is the same with rows (one vjp per output element). A scalar input (fwd) or a
scalar output (rev) needs a single jvp or vjp with the unit 1.0, and no loop.

Mode "fwd" first tries the jvp batched over its tangent (``transforms/batching.py``): all the
columns in one pass, the identity matrix as the batch of tangents, so that the jvp's
matrix-vector products become matrix-matrix products:

    def f_hessian(x):
        dx = np.eye(x.size).reshape(x.shape + (x.size,))
        columns = <the jvp of f's gradient, every tangent with a last axis of length x.size>
        return columns.reshape(x.shape + x.shape)

The loop above remains for jvps that cannot be batched (a primitive without a batch rule, a
branch on a tangent).
``pullback_by_columns`` builds a vjp the same way, from one jvp per input element (batched
too where it can be).
"""
from collections import Counter

from ..ir.builder import Builder, Namer, const
from ..ir.clone import inline_function
from ..ir.nodes import Assign, For, Function, SetItem, Var, walk
from ..ir.types import I8, Type, promote_dtypes
from ..ir.primitives import Kind, has_kind
from ..ir.primitives.batching_rules import with_unit_batch_axis
from .batching import Unbatchable, batch
from ..ir.indexing import FULL_SLICE



def matrix_ir(name, primal, index, mode, directional, shape_source=None):
    """The IR computing the Jacobian of ``primal`` (one result) with respect to parameter
    ``index``, shape ``out.shape + x.shape``.

    ``directional`` is the IR of a jvp (mode "fwd": ``primal``'s parameters then one tangent
    for ``x``) or of a vjp (mode "rev": then one cotangent for the result); its last result
    is the column or row. ``shape_source``, if given, is a parameter index whose argument has
    the output's shape (a gradient has its argument's shape), which saves evaluating
    ``primal`` for the shape."""
    namer = Namer()
    params = [Var(namer.fresh(p.name), p.type) for p in primal.params]
    body = []
    b = Builder(namer, body)
    x, out_type = params[index], primal.results[0].type
    looped_type = x.type if mode == "fwd" else out_type
    if not looped_type.ndim:  # one direction: the unit 1.0 (a variable: the body may assign it)
        unit = b.emit("alias", [const(1.0, Type(looped_type.dtype))])
        result = inline_function(directional, params + [unit], namer, body)[-1]
        return Function(name, params, body, [result], False, primal.source_file)
    if mode == "fwd":
        try:
            return _batched_columns_ir(name, primal, index, directional, shape_source)
        except Unbatchable:
            pass
    if shape_source is not None:
        out = params[shape_source]
    elif out_type.ndim:
        out = inline_function(primal, params, namer, body)[0]  # read for its shape only
    else:
        out = None
    dtype = promote_dtypes(out_type.dtype, x.type.dtype)
    looped = x if mode == "fwd" else out
    rows = _size(b, out) if out_type.ndim else const(1)
    cols = _size(b, x) if x.type.ndim else const(1)
    flat = b.emit("zeros", [rows, cols], ndim=2, dtype=dtype)
    flat.name, flat.is_temp = namer.fresh("jac"), False
    count = cols if mode == "fwd" else rows
    k = Var(namer.fresh("k"), I8)
    loop_body = []
    lb = Builder(namer, loop_body)
    unit = lb.emit("zeros", [count], ndim=1, dtype=looped.type.dtype)
    unit.name, unit.is_temp = namer.fresh("unit"), False
    loop_body.append(SetItem(unit, const(1.0), [("int", k)]))
    direction = _reshaped_like(lb, unit, looped)
    line = inline_function(directional, params + [direction], namer, loop_body)[-1]
    if line.type.ndim:
        line = lb.call("ravel", line) if line.type.ndim > 1 else line
        items = [FULL_SLICE, ("int", k)] if mode == "fwd" else [("int", k), FULL_SLICE]
    else:
        items = [("int", const(0)), ("int", k)] if mode == "fwd" else [("int", k), ("int", const(0))]
    loop_body.append(SetItem(flat, line, items))
    body.append(For(k, const(0), count, const(1), loop_body))
    dims = (_dims(b, out) if out is not None else []) + _dims(b, x)
    result = flat if _is_flat_already(out, x) else b.emit("reshape", [flat] + dims)
    return Function(name, params, body, [result], False, primal.source_file)


def _batched_columns_ir(name, primal, index, directional, shape_source):
    """The Jacobian of mode "fwd" as one batched jvp; raises ``Unbatchable``."""
    namer = Namer()
    params = [Var(namer.fresh(p.name), p.type) for p in primal.params]
    batched = batch(directional, [len(primal.params)], Namer())
    body = []
    b = Builder(namer, body)
    x = params[index]
    identity = _identity_tangents(b, x)
    columns = inline_function(batched, params + [identity], namer, body)[-1]
    _skip_products_with_identity(body, identity)
    if columns.type.ndim <= 2 and x.type.ndim == 1:  # already (out.size, x.size) or (x.size,)
        return Function(name, params, body, [columns], False, primal.source_file)
    out_dims = [b.call("dim", columns, axis=k) for k in range(columns.type.ndim - 1)]
    if shape_source is not None:
        out_dims = _dims(b, params[shape_source])
    matrix = b.emit("reshape", [columns] + out_dims + _dims(b, x))
    return Function(name, params, body, [matrix], False, primal.source_file)


def _skip_products_with_identity(body, identity):
    """``A @ I`` is ``A``: the jvp of ``A @ x`` applied to all unit tangents at once (``A``'s
    shape matches, or the function's own ``A @ x`` fails). Rewrites the top-level products
    with ``identity``, or a name of it that is never reassigned, into ``A`` itself (a copy
    where the tangent is written in place or viewed)."""
    assignments = Counter(var for stmt in walk(body) for var in stmt.writes())
    viewed = {stmt.args[0] for stmt in walk(body)
              if isinstance(stmt, Assign) and stmt.args and has_kind(stmt.prim, Kind.VIEW)}
    names = {identity}
    for stmt in body:
        if not isinstance(stmt, Assign) or assignments[identity] != 1:
            continue
        if stmt.prim == "alias" and stmt.args[0] in names and assignments[stmt.target] == 1:
            names.add(stmt.target)
        elif (stmt.prim == "matmul" and stmt.args[1] in names and stmt.args[0].type == stmt.target.type):
            shared = assignments[stmt.target] == 1 and stmt.target not in viewed
            stmt.prim, stmt.args = "alias" if shared else "copy", [stmt.args[0]]


def _identity_tangents(b, x):
    """All unit tangents of ``x`` as one batch: the identity matrix, shape ``x.shape + (x.size,)``."""
    n = _size(b, x)
    identity = b.call("eye", n)
    if x.type.dtype != identity.type.dtype:
        identity = b.call("as_dtype", identity, dtype=x.type.dtype)
    return identity if x.type.ndim == 1 else b.emit("reshape", [identity] + _dims(b, x) + [n])


def pullback_by_columns(primal, wrt, columns):
    """A vjp IR of ``primal`` built from jvps, for IR that reverse mode does not take: the
    cotangent of each element ``x[k]`` of a ``wrt`` parameter is ``sum(ct * jvp(e_k))``.
    ``columns[t]`` is the jvp IR of ``primal`` with respect to parameter ``wrt[t]``. Same
    calling convention as ``transforms.reverse`` with mode "vjp": parameters then one
    cotangent per result; results then one gradient per ``wrt`` parameter."""
    namer = Namer()
    params = [Var(namer.fresh(p.name), p.type) for p in primal.params]
    cotangents = [Var(namer.fresh("ct"), r.type) for r in primal.results]
    body = []
    b = Builder(namer, body)
    outputs = inline_function(primal, params, namer, body)
    grads = []
    for index, column in zip(wrt, columns):
        x = params[index]
        if not x.type.ndim:
            unit = b.emit("alias", [const(1.0, Type(x.type.dtype))])
            grads.append(_projected(b, cotangents, inline_function(column, params + [unit], namer, body)))
            continue
        try:
            batched = batch(column, [len(params)], Namer())
        except Unbatchable:
            batched = None
        if batched is not None:  # every element's jvp at once, then each projected on the cotangents
            tangents = inline_function(batched, params + [_identity_tangents(b, x)], namer, body)
            grads.append(_reshaped_like(b, _projected_columns(b, cotangents, tangents), x))
            continue
        flat = b.emit("zeros", [_size(b, x)], ndim=1, dtype=x.type.dtype)
        flat.name, flat.is_temp = namer.fresh("b" + x.name), False
        k = Var(namer.fresh("k"), I8)
        loop_body = []
        lb = Builder(namer, loop_body)
        unit = lb.emit("zeros", [_size(lb, x)], ndim=1, dtype=x.type.dtype)
        unit.name, unit.is_temp = namer.fresh("unit"), False
        loop_body.append(SetItem(unit, const(1.0), [("int", k)]))
        tangents = inline_function(column, params + [_reshaped_like(lb, unit, x)], namer, loop_body)
        loop_body.append(SetItem(flat, _projected(lb, cotangents, tangents), [("int", k)]))
        body.append(For(k, const(0), _size(b, x), const(1), loop_body))
        grads.append(_reshaped_like(b, flat, x))
    return Function(f"{primal.name}_vjp", params + cotangents, body, outputs + grads, True, primal.source_file)


def _projected_columns(b, cotangents, batched_results):
    """``_projected`` of every column at once: the columns are the last axis of the tangents."""
    total = None
    for ct, columns in zip(cotangents, batched_results[len(cotangents):]):
        term = b.mul(with_unit_batch_axis(b, ct), columns)
        for _ in range(term.type.ndim - 1):
            term = b.call("sum", term, axis=0)
        total = term if total is None else b.add(total, term)
    return total


def _projected(b, cotangents, column_results):
    """sum over the results of ``sum(ct * tangent)``: one element of a vjp."""
    total = None
    for ct, tangent in zip(cotangents, column_results[len(cotangents):]):
        term = b.mul(ct, tangent)
        term = b.call("sum", term) if term.type.ndim else term
        total = term if total is None else b.add(total, term)
    return total


def _size(b, var):
    return b.call("dim", var, axis=0) if var.type.ndim == 1 else b.call("size", var)


def _dims(b, var):
    return [b.call("dim", var, axis=axis) for axis in range(var.type.ndim)]


def _reshaped_like(b, flat, like):
    return flat if like.type.ndim == 1 else b.emit("reshape", [flat] + _dims(b, like))


def _is_flat_already(out, x):
    return out is not None and out.type.ndim == 1 and x.type.ndim == 1


__all__ = ["matrix_ir", "pullback_by_columns"]
