"""Batch rules: each primitive applied to values that carry an extra trailing batch axis.

A batch rule is ``rule(b, args, batched, params, size) -> atom``: ``args`` are the
arguments, ``batched[i]`` tells whether argument i carries the batch axis (as its last
axis, of length ``size``, an IR atom), and the rule emits with Builder ``b`` the IR of
the result with the batch axis last. It returns None where it does not apply, and the
batching transform (``transforms/batching.py``) then gives up on the function.

The batch axis is the trailing one, so most rules are short: elementwise primitives only
give their unbatched array arguments a length-1 last axis (``p[..., None]``); indexing,
``axis=k`` reductions and axis insertions keep their parameters (they count from the
front); a matrix product with an unbatched matrix is a matrix-matrix product,
``A @ T`` with ``T`` of shape (n, size). ``declare.define`` gives every ELEMENTWISE and
every differentiable REDUCTION primitive its rule from its kinds; the rules of the other
primitives are below, installed on the table by ``install_batch_rules``.
"""
import dataclasses

from ..nodes import const
from .record import PRIMITIVES, Kind
from .reverse_helpers import getitem
from ..indexing import FULL_SLICE



def logical_ndim(atom, is_batched):
    return atom.type.ndim - 1 if is_batched else atom.type.ndim


def with_unit_batch_axis(b, x):
    """Unbatched ``x`` with a length-1 last axis (``x[..., None]``), so that it broadcasts
    against batched values; a scalar broadcasts already."""
    if not x.type.ndim:
        return x
    return getitem(b, x, [FULL_SLICE] * x.type.ndim + [("none",)])


def unbatched_view(b, x):
    """The first member of batched ``x`` (``x[..., 0]``): a value of the unbatched shape,
    for primitives that read only its shape."""
    return getitem(b, x, [FULL_SLICE] * (x.type.ndim - 1) + [("int", const(0))])


def batched_shape_view(b, x, size):
    """A read-only view of unbatched ``x`` broadcast to ``x.shape + (size,)``: a value of the
    batched shape, for primitives that read only its shape."""
    dims = [b.call("dim", x, axis=k) for k in range(x.type.ndim)]
    return b.emit("broadcast_to", [with_unit_batch_axis(b, x)] + dims + [size])


def batched_copy(b, x, size):
    """A new array holding ``size`` copies of unbatched ``x`` along a last axis."""
    if not x.type.ndim:
        return b.emit("full", [size, x])
    return b.call("broadcast_to_shape", with_unit_batch_axis(b, x), batched_shape_view(b, x, size))


def _aligned(b, args, batched):
    return [a if is_batched else with_unit_batch_axis(b, a) for a, is_batched in zip(args, batched)]


def elementwise_batch(name):
    """The rule of an elementwise primitive: unbatched arrays get a length-1 last axis."""
    def rule(b, args, batched, params, size):
        return b.emit(name, _aligned(b, args, batched), **params)
    return rule


def reduction_batch(name):
    """The rule of a reduction over everything or along ``axis``: everything is the leading
    axes one after the other; ``axis`` counts from the front, so it stays."""
    def rule(b, args, batched, params, size):
        x, axis = args[0], params.get("axis")
        if axis is not None:
            return b.emit(name, [x], **params)
        if x.type.ndim == 1:  # a batch of scalars: each is its own reduction
            return b.call("copy", x) if name != "mean" else b.call("as_dtype", x, dtype=_float(x))
        for _ in range(x.type.ndim - 1):
            x = b.emit(name, [x], **{**params, "axis": 0})
        return x
    return rule


def default_batch_rule(name, kinds):
    """The batch rule a primitive's kinds imply, or None."""
    if Kind.ELEMENTWISE in kinds:
        return elementwise_batch(name)
    if Kind.REDUCTION in kinds and Kind.NON_DIFFERENTIABLE not in kinds:
        return reduction_batch(name)
    return None


def _float(x):
    return x.type.dtype if x.type.is_float else "f8"


def _same_batched(name):
    """Primitives that act on each element (or only read the others' dtype): same call."""
    return lambda b, args, batched, params, size: b.emit(name, args, **params)


def _to_float(b, args, batched, params, size):
    return b.call("as_dtype", args[0], dtype="f8")


def _norm(b, args, batched, params, size):
    x = args[0]
    if x.type.ndim == 1:
        return b.call("abs", x)
    return b.call("sqrt", reduction_batch("sum")(b, [b.mul(x, x)], batched, {}, size))


def _clip(b, args, batched, params, size):
    x = args[0] if batched[0] else batched_copy(b, args[0], size)
    return b.emit("clip", _aligned(b, [x] + args[1:], [True] + batched[1:]))


def _transpose(b, args, batched, params, size):
    x = args[0]
    axes = params.get("axes")
    axes = tuple(reversed(range(x.type.ndim - 1))) if axes is None else tuple(axes)
    return b.call("transpose", x, axes=axes + (x.type.ndim - 1,))


def _reshape(b, args, batched, params, size):
    if any(batched[1:]):
        return None
    return b.emit("reshape", args + [size])


def _ravel(b, args, batched, params, size):
    return b.emit("reshape", [args[0], b.call("size", unbatched_view(b, args[0])), size])


def _expand_axis(b, args, batched, params, size):
    axis = params["axis"]
    return b.call("expand_axis", args[0], axis=axis if axis >= 0 else axis - 1)


def _broadcast_to(b, args, batched, params, size):
    if any(batched[1:]):
        return None
    return b.emit("broadcast_to", args + [size])


def _shaped_like_second(name):
    """``broadcast_to_shape``/``unbroadcast(x, like)``: ``like`` gives the result's shape, so it
    is given the batched shape."""
    def rule(b, args, batched, params, size):
        x, like = args
        if not batched[0]:
            x = with_unit_batch_axis(b, x)
        return b.emit(name, [x, like if batched[1] else batched_shape_view(b, like, size)], **params)
    return rule


def _getitem(b, args, batched, params, size):
    if any(batched[1:]):
        return None  # an index that differs between members: a gather per member
    member = b.emit("getitem", args, **{**params, "result_ndim": params["result_ndim"] + 1})
    # an element was a value, but a row of the batched array is a view of it: the array may be
    # written afterwards
    return b.call("copy", member) if params["result_ndim"] == 0 else member


def _joined(name):
    """``concatenate``/``stack`` along ``axis`` (from the front): every part batched."""
    def rule(b, args, batched, params, size):
        parts = [a if is_batched else batched_copy(b, a, size) for a, is_batched in zip(args, batched)]
        return b.emit(name, parts, **params)
    return rule


def _outer(b, args, batched, params, size):
    a, c = args
    column = getitem(b, a, [FULL_SLICE, ("none",)] + ([] if batched[0] else [("none",)]))
    row = getitem(b, c, [("none",), FULL_SLICE] + ([] if batched[1] else [("none",)]))
    return b.mul(column, row)


def _matmul(b, args, batched, params, size):
    a, c = args
    kind = (logical_ndim(a, batched[0]), logical_ndim(c, batched[1]))
    if 3 in kind:
        return None
    if batched[0] and batched[1]:
        return _matmul_both_batched(b, a, c, kind)
    if batched[1]:
        return _matmul_batched_right(b, a, c, kind)
    return _matmul_batched_left(b, a, c, kind)


def _matmul_batched_right(b, a, c, kind):
    """``a @ C``: one matrix-matrix product with the members as columns."""
    if kind[1] == 1:  # C is (n, size)
        return b.call("matmul", a, c)
    n, p, size = (b.call("dim", c, axis=k) for k in range(3))  # C is (n, p, size)
    flat = b.call("matmul", a, b.call("reshape", c, n, b.mul(p, size)))
    return b.emit("reshape", [flat] + ([b.call("dim", a, axis=0)] if kind[0] == 2 else []) + [p, size])


def _matmul_batched_left(b, a, c, kind):
    """``A @ c``: the transposed product ``c.T @ A`` for a vector A, else one product of the
    members stacked as rows."""
    if kind[0] == 1:  # A is (n, size)
        return b.call("matmul", c if kind[1] == 1 else b.call("transpose", c), a)
    m, n, size = (b.call("dim", a, axis=k) for k in range(3))  # A is (m, n, size)
    rows = b.call("reshape", b.call("transpose", a, axes=(0, 2, 1)), b.mul(m, size), n)
    product = b.call("matmul", rows, c)
    if kind[1] == 1:
        return b.call("reshape", product, m, size)
    p = b.call("dim", c, axis=1)
    return b.call("transpose", b.call("reshape", product, m, size, p), axes=(0, 2, 1))


def _matmul_both_batched(b, a, c, kind):
    """Each member its own product: broadcast multiply, then sum over the shared axis."""
    if kind == (1, 1):
        return b.call("sum", b.mul(a, c), axis=0)
    if kind == (2, 1):
        return b.call("sum", b.mul(a, c), axis=1)
    if kind == (1, 2):
        return b.call("sum", b.mul(getitem(b, a, [FULL_SLICE, ("none",)]), c), axis=0)
    return b.call("sum", b.mul(getitem(b, a, [FULL_SLICE, FULL_SLICE, ("none",)]), c), axis=1)


def _flat_cumsum(b, args, batched, params, size):
    """``np.cumsum`` flattens: the members' elements in rows, summed down the rows."""
    x = args[0]
    if x.type.ndim > 2:
        x = b.call("reshape", x, b.call("size", unbatched_view(b, x)), size)
    return b.call("cumsum_axis", x, axis=0)


def _flat_cumsum_adjoint(b, args, batched, params, size):
    return b.call("cumsum_axis_adjoint", args[0], axis=0)


def _solve(b, args, batched, params, size):
    """``solve(a, B)``: the members are right-hand sides, solved together."""
    a, rhs = args
    if batched[0]:
        return None
    if rhs.type.ndim == 2:
        return b.call("solve", a, rhs)
    n, p = b.call("dim", rhs, axis=0), b.call("dim", rhs, axis=1)
    solved = b.call("solve", a, b.call("reshape", rhs, n, b.mul(p, size)))
    return b.call("reshape", solved, n, p, size)


def _identity_like(b, x, axis):
    """The identity matrix of ``x``'s length along ``axis``, in ``x``'s dtype, with a
    length-1 last axis."""
    identity = b.call("eye", b.call("dim", x, axis=axis))
    if identity.type.dtype != x.type.dtype:
        identity = b.call("as_dtype", identity, dtype=x.type.dtype)
    return with_unit_batch_axis(b, identity)


def _diag(b, args, batched, params, size):
    x = args[0]
    if x.type.ndim == 2:  # vectors (n, size) -> diagonal matrices (n, n, size)
        return b.mul(getitem(b, x, [FULL_SLICE, ("none",)]), _identity_like(b, x, 0))
    return b.call("sum", b.mul(x, _identity_like(b, x, 0)), axis=1)  # the diagonals, (n, size)


def _diag_adjoint(b, args, batched, params, size):
    """The adjoint of ``diag`` of a vector is the diagonal (of a matrix: a matrix of x's shape)."""
    if logical_ndim(args[1], batched[1]) != 1:
        return None
    return _diag(b, args[:1], batched[:1], params, size)


def _trace(b, args, batched, params, size):
    return b.call("sum", _diag(b, args, batched, params, size), axis=0)


def _triangle(name):
    def rule(b, args, batched, params, size):
        x = args[0]
        ones = b.emit("ones", [b.call("dim", x, axis=0), b.call("dim", x, axis=1)], ndim=2, dtype=x.type.dtype)
        return b.mul(x, with_unit_batch_axis(b, b.call(name, ones, **params)))
    return rule


def _assertion(b, args, batched, params, size):
    """``assert test`` of every member at once: the test holds for all of them (the result,
    which nothing reads, is given the batch axis the transform expects)."""
    holds = b.call("eq", b.call("sum", b.call("not", args[0])), const(0))
    return b.emit("full", [size, b.emit("check_assertion", [holds], **params)])


_RULES = {
    "alias": _same_batched("alias"), "copy": _same_batched("copy"), "as_dtype": _same_batched("as_dtype"),
    "cast_like": _same_batched("cast_like"), "to_float": _to_float, "norm": _norm, "clip": _clip,
    "transpose": _transpose, "reshape": _reshape, "ravel": _ravel, "expand_axis": _expand_axis,
    "broadcast_to": _broadcast_to, "broadcast_to_shape": _shaped_like_second("broadcast_to_shape"),
    "unbroadcast": _shaped_like_second("unbroadcast"), "getitem": _getitem,
    "concatenate": _joined("concatenate"), "stack": _joined("stack"), "matmul": _matmul, "outer": _outer,
    "cumsum": _flat_cumsum, "cumsum_adjoint": _flat_cumsum_adjoint, "cumsum_axis": _same_batched("cumsum_axis"),
    "cumsum_axis_adjoint": _same_batched("cumsum_axis_adjoint"), "solve": _solve, "diag": _diag, "diag_adjoint": _diag_adjoint,
    "trace": _trace,
    "triu": _triangle("triu"), "tril": _triangle("tril"), "check_assertion": _assertion,
}


def install_batch_rules():
    """Give the primitives above their batch rules (called once the families are declared)."""
    for name, rule in _RULES.items():
        PRIMITIVES[name] = dataclasses.replace(PRIMITIVES[name], batch=rule)


__all__ = ["batched_copy", "batched_shape_view", "default_batch_rule", "install_batch_rules", "unbatched_view",
           "with_unit_batch_axis"]
